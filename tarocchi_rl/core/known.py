"""What a seat can place, for the rule-based player (:mod:`tarocchi_rl.policies.heuristic`) and the families'
heuristic hooks (``heuristic_*`` of :data:`tarocchi_rl.variants.contract.KERNEL_HOOKS`): the cards it cannot
place (**outstanding**) and two bit helpers. Inlined kernels on the state's and the tables' arrays."""

import numpy as np
from numba import njit

from ..bits import U1, popcount
from ..cards import EX_BIT
from .state import DECLARER, DISCARDED, HAND, PLAYED, SHOWN
from .tables import MK_SUIT, MK_TRUMPS

_EXB = np.uint64(1) << np.uint64(EX_BIT)
_S1, _S2, _S4, _S8, _S16, _S32 = (np.uint64(k) for k in (1, 2, 4, 8, 16, 32))


@njit(cache=True, inline="always")
def hi_bit(x):
    """Index of the highest set bit of a non-zero uint64."""
    x |= x >> _S1
    x |= x >> _S2
    x |= x >> _S4
    x |= x >> _S8
    x |= x >> _S16
    x |= x >> _S32
    return popcount(x) - 1


@njit(cache=True, inline="always")
def above(b):
    """All bits strictly above bit ``b`` (b <= 62)."""
    return ~((U1 << np.uint64(b + 1)) - U1)


@njit(cache=True, inline="always")
def outstanding(meta, cards, masks, i, p, n):
    """Cards seat p cannot place (not in its hand, not played, not shown, not in its own discard) in game i:
    (word 0 with EX, word 1), uint64 each."""
    g0 = cards[i, HAND + p, 0] | cards[i, SHOWN, 0]
    g1 = cards[i, HAND + p, 1] | cards[i, SHOWN, 1]
    for s in range(n):
        g0 |= cards[i, PLAYED + s, 0]
        g1 |= cards[i, PLAYED + s, 1]
    if meta[i, DECLARER] == p:
        g0 |= cards[i, DISCARDED, 0]
        g1 |= cards[i, DISCARDED, 1]
    all1 = masks[MK_SUIT, 1] | masks[MK_SUIT + 1, 1] | masks[MK_SUIT + 2, 1] | masks[MK_SUIT + 3, 1]
    return (masks[MK_TRUMPS, 0] | _EXB) & ~g0, all1 & ~g1
