"""Kernels of the family contract for the families that have no use for a hook: they do nothing, or say the
obvious. A family names them as its own (``sides_known = sides_always_known``)."""

from numba import njit


@njit(cache=True)
def sides_always_known(st, i, viewer, tb):
    """Every seat knows the sides from the start (no hidden partnership)."""
    return True
