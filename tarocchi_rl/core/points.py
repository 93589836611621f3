"""Card points of a card set, exactly, in integer units: thirds (Italian triplet count) or half points."""

from numba import njit

from ..bits import popcount
from .tables import COUNT_TRIPLETS, MK_VALUE, P_COUNT, P_N_VALUES, P_VALUE


@njit(cache=True)
def card_points(s0, s1, tb):
    """Card points of the two-word set (s0, s1) in the variant's unit.

    COUNT_TRIPLETS (Italian games): 3*sum(special values) - 2*specials + scartine, in thirds.
    COUNT_DIRECT (French): the sum of the card values, in half points.
    """
    t = 0
    triplets = tb.params[P_COUNT] == COUNT_TRIPLETS
    for k in range(tb.params[P_N_VALUES]):
        n = popcount(s0 & tb.masks[MK_VALUE + k, 0]) + popcount(s1 & tb.masks[MK_VALUE + k, 1])
        v = tb.params[P_VALUE + k]
        if triplets:
            t += n * (3 * v - 2) if v > 0 else n
        else:
            t += n * v
    return t
