"""Handing out cards from the deal in ``st.deck`` (hands by seat in blocks of ``P_HAND``, then the stock)."""

from numba import njit

from ..bits import bit
from .state import HAND
from .tables import CARD_BIT, CARD_WORD, P_HAND, P_PLAYERS


@njit(cache=True, inline="always")
def give(st, i, row, card, tb):
    """Add dense ``card`` to card set ``row`` of game ``i``."""
    st.cards[i, row, tb.card[card, CARD_WORD]] |= bit(tb.card[card, CARD_BIT])


@njit(cache=True)
def deal_hands(st, i, tb, first, last):
    """Give every seat cards ``first .. last-1`` of its block of the deal."""
    h = tb.params[P_HAND]
    for s in range(tb.params[P_PLAYERS]):
        for k in range(first, last):
            give(st, i, HAND + s, st.deck[i, h * s + k], tb)
