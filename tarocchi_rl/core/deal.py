"""Dealing: shuffling the deck into ``st.deck`` and handing out cards from it (hands by seat in blocks of
``P_HAND``, then the stock)."""

from numba import njit

from ..bits import bit, bounded, splitmix_next
from .state import HAND
from .tables import CARD_BIT, CARD_WORD, P_CARDS, P_HAND, P_PLAYERS


@njit(cache=True, inline="always")
def shuffle_deck(st, i, tb):
    """Fisher-Yates shuffle of the deck's dense ids into ``st.deck[i]`` with the game's own RNG (a family that
    deals again, such as one whose rules refuse a deal, calls it from its ``start_row``)."""
    d = st.deck[i]
    n = tb.params[P_CARDS]
    for k in range(n):
        d[k] = k
    r = st.rng[i]
    for k in range(n - 1, 0, -1):
        r, z = splitmix_next(r)
        j = bounded(z, k + 1)
        t = d[k]
        d[k] = d[j]
        d[j] = t
    st.rng[i] = r


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
