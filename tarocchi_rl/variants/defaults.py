"""Kernels of the family contract for the families that have no use for a hook: they do nothing, or say the
obvious. A family names them as its own (``sides_known = sides_always_known``). Inlined: they cost nothing."""

from numba import njit


@njit(cache=True, inline="always")
def sides_always_known(st, i, viewer, tb):
    """Every seat knows the sides from the start (no hidden partnership)."""
    return True


@njit(cache=True, inline="always")
def trick_winner_unchanged(st, i, winner, last, tb):
    """The seat that wins the trick by its cards takes it; nothing else happens."""
    return winner


@njit(cache=True, inline="always")
def observe_nothing(st, i, viewer, tb, out):
    """The family has no observation sections of its own."""


@njit(cache=True, inline="always")
def play_rules_unchanged(st, i, l0, l1, tb):
    """The shared trick rules' legal cards are the family's."""
    return l0, l1
