"""Kernels of the family contract for the families that have no use for a hook: they do nothing, or say the
obvious. A family names them as its own (``sides_known = sides_always_known``). Inlined: they cost nothing."""

import numpy as np
from numba import njit

from ..bits import U0
from ..core.state import DECLARER, STOCK_SHOWN
from ..core.tables import P_HAND


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


@njit(cache=True, inline="always")
def no_play_exclusions(st, i, card, tb):
    """The family's play rules tell nothing beyond the shared rules' exclusions."""
    return U0, U0


# -- the determinizer's hooks (search/determinize.py) ----------------------------------------------------------


@njit(cache=True, inline="always")
def stock_taken_when_shown(st, i, tb):
    """The declarer takes the stock once it is shown (meta[STOCK_SHOWN] == 1); before, it is a pile of its own."""
    return st.meta[i, STOCK_SHOWN] == 1


@njit(cache=True, inline="always")
def no_stock_places_known(st, i, tb):
    """The stock's order in the deal tells nothing: a sample writes its stock cards in any order."""
    return 0


@njit(cache=True, inline="always")
def whole_hand_dealt(st, i, tb):
    """Every seat holds its whole hand from the deal's start (params[P_HAND] cards)."""
    return tb.params[P_HAND]


@njit(cache=True, inline="always")
def no_hand_cap(st, i, s, tb):
    """No count of a category of cards is known of a seat's hand."""
    return np.int64(-1), U0, U0


@njit(cache=True, inline="always")
def no_sample_fixes(st, i, p, tb):
    """A sample's cards imply nothing hidden beyond themselves."""
    return 0


@njit(cache=True, inline="always")
def sample_never_rejected(st, j, fixes, tb):
    """Every deal the constraints allow could have been dealt."""
    return False


@njit(cache=True, inline="always")
def sample_unchanged(st, j, p, fixes, tb, rng):
    """Nothing to fix in a sample; the RNG state is returned unchanged."""
    return rng


# -- the heuristic's hooks (policies/heuristic.py) ------------------------------------------------------------


@njit(cache=True, inline="always")
def special_lowest(st, i, tb, flags):
    """No rule of its own for the special actions: the lowest legal one (-1)."""
    return -1


@njit(cache=True, inline="always")
def reserve_nothing(st, i, tb, h0, out_tr, hand_n):
    """No trump is kept back for the last trick."""
    return U0


@njit(cache=True, inline="always")
def attack_declarer_side(st, i, p, allies, tb):
    """Seat p attacks (draws trumps) when it is the declarer or knows the declarer to be its ally."""
    d = st.meta[i, DECLARER]
    return d >= 0 and (d == p or ((allies >> d) & 1) != 0)


@njit(cache=True, inline="always")
def never_dump_ex(st, i, hand_n, tb):
    """EX is not thrown away when playing cheap (it is kept to save a valuable card)."""
    return False
