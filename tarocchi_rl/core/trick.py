"""The trick kernels shared by every variant: which cards may be played, and adding a card to the trick.

All rule differences come from the tables (``P_MUST_OVERTRUMP``, ``P_EX_LEAD_ANY``, the suit and trump
masks, the bit order of strengths); what happens to a completed trick's cards is the variant's business.
The two rules are pure functions of scalars (``legal_cards``, ``trick_update``) so that the fused rollout
loops can keep the trick in registers; ``play_legal`` / ``add_to_trick`` apply them to the batch state.
"""

import numpy as np
from numba import njit

from ..bits import U0, U1, bit
from ..cards import EX_BIT, FOOL, TRUMP
from .phases import PLAY
from .state import (
    BEST_BIT,
    BEST_SEAT,
    BEST_TRUMP,
    CUR,
    EX_PLAYER,
    EXCLUDED,
    HAND,
    LED_SUIT,
    PHASE,
    PLAYED,
    SIDE,
    TRICK,
    TRICK_COUNT,
    TRICK_LEADER,
    TRICKS_WON,
)
from .tables import (
    CARD_BIT,
    CARD_SUIT,
    CARD_WORD,
    EX_LAST_OTHER_SIDE,
    MK_SUIT,
    MK_TRUMPS,
    P_EX_LAST,
    P_EX_LEAD_ANY,
    P_MUST_OVERTRUMP,
    P_PLAYERS,
    P_TRICKS,
)

_EXB = np.uint64(1) << np.uint64(EX_BIT)


@njit(cache=True, inline="always")
def legal_cards(h0, h1, n_played, led, best_trump, best_bit, tb):
    """Cards of hand (h0, h1) that may be played to a trick.

    n_played : cards already in the trick; led : suit of the trick (0..3, 4 trump, -1 unset);
    best_trump, best_bit : whether the trick is won by a trump so far, and that card's bit.
    Returns the two-word legal set (uint64, uint64).
    """
    ex = h0 & _EXB
    trumps = h0 & tb.masks[MK_TRUMPS, 0]
    if n_played == 0:  # leading: EX only when allowed, or when it is all that is left
        if (trumps | h1) == U0:
            return ex, U0
        if tb.params[P_EX_LEAD_ANY] != 0:
            return trumps | ex, h1
        return trumps, h1
    if led < 0:  # only EX so far: this card sets the suit
        return h0, h1
    if led < 4:
        follow = h1 & tb.masks[MK_SUIT + led, 1]
        if follow != U0:
            return ex, follow
    if trumps != U0:
        if tb.params[P_MUST_OVERTRUMP] != 0 and best_trump != 0:
            higher = trumps & ~((bit(best_bit) << U1) - U1)
            if higher != U0:
                trumps = higher
        return trumps | ex, U0
    return h0, h1


@njit(cache=True, inline="always")
def trick_update(card, seat, led, best_seat, best_trump, best_bit, tb):
    """The trick after ``seat`` plays dense ``card``: returns (led, best_seat, best_trump, best_bit).

    The highest trump wins, else the highest card of the suit led; EX never wins and sets no suit (the next
    card does).
    """
    s = tb.card[card, CARD_SUIT]
    b = tb.card[card, CARD_BIT]
    if s == FOOL:
        return led, best_seat, best_trump, best_bit
    if led < 0:
        return s, seat, 1 if s == TRUMP else 0, b
    if s == TRUMP:
        if best_trump == 0 or b > best_bit:
            return led, seat, 1, b
    elif s == led and best_trump == 0 and b > best_bit:
        return led, seat, 0, b
    return led, best_seat, best_trump, best_bit


@njit(cache=True, inline="always")
def play_exclusions(card, n_played, led, best_trump, best_bit, tb):
    """Cards a seat provably lacks after playing dense ``card`` to the trick described (the arguments of
    ``legal_cards`` before the card): the led suit when not following, every trump when neither following
    nor trumping, the trumps above the best one when under-trumping where overtrumping is compulsory; EX and
    leads tell nothing. Returns the two-word set (uint64, uint64)."""
    s = tb.card[card, CARD_SUIT]
    if s == FOOL or n_played == 0 or led < 0:
        return U0, U0
    e1 = U0
    if led < 4:
        if s == led:
            return U0, U0
        e1 = tb.masks[MK_SUIT + led, 1]
    if s != TRUMP:
        return tb.masks[MK_TRUMPS, 0], e1
    if tb.params[P_MUST_OVERTRUMP] != 0 and best_trump != 0 and tb.card[card, CARD_BIT] < best_bit:
        return tb.masks[MK_TRUMPS, 0] & ~((bit(best_bit) << U1) - U1), e1
    return U0, e1


@njit(cache=True, inline="always")
def add_excluded(st, i, seat, e0, e1):
    """Record that ``seat`` of game ``i`` lacks the two-word card set (e0, e1)."""
    st.cards[i, EXCLUDED + seat, 0] |= e0
    st.cards[i, EXCLUDED + seat, 1] |= e1


@njit(cache=True, inline="always")
def play_legal(st, i, tb):
    """Cards the seat to act in game ``i`` may play: the two-word set (uint64, uint64)."""
    m = st.meta[i]
    p = m[CUR]
    return legal_cards(
        st.cards[i, HAND + p, 0], st.cards[i, HAND + p, 1], m[TRICK_COUNT], m[LED_SUIT], m[BEST_TRUMP],
        m[BEST_BIT], tb,
    )


@njit(cache=True, inline="always")
def add_to_trick(st, i, card, tb, tells=True):
    """The seat to act in game ``i`` plays dense ``card`` (legality is the caller's check).

    Updates the hand, the played cards, the trick, its current winner and the seat's public exclusions: those of
    the shared trick rules, unless ``tells`` is False (a card the family's play_rules forced where the shared
    rules would not allow it tells nothing: the caller knows, has_play_rules).
    Returns True when the trick is complete (the caller resolves it); otherwise passes the turn to the next
    seat.
    """
    m = st.meta[i]
    p = m[CUR]
    w = tb.card[card, CARD_WORD]
    mk = bit(tb.card[card, CARD_BIT])
    if tells:
        e0, e1 = play_exclusions(card, m[TRICK_COUNT], m[LED_SUIT], m[BEST_TRUMP], m[BEST_BIT], tb)
        add_excluded(st, i, p, e0, e1)
    st.cards[i, HAND + p, w] &= ~mk
    st.cards[i, PLAYED + p, w] |= mk
    m[TRICK + p] = card
    m[TRICK_COUNT] += 1
    if tb.card[card, CARD_SUIT] == FOOL:
        m[EX_PLAYER] = p
    m[LED_SUIT], m[BEST_SEAT], m[BEST_TRUMP], m[BEST_BIT] = trick_update(
        card, p, m[LED_SUIT], m[BEST_SEAT], m[BEST_TRUMP], m[BEST_BIT], tb
    )
    n = tb.params[P_PLAYERS]
    if m[TRICK_COUNT] == n:
        return True
    m[CUR] = p + 1 if p + 1 < n else 0
    return False


@njit(cache=True)
def clear_trick(st, i, leader):
    """Start a new trick in game ``i`` led by ``leader``."""
    m = st.meta[i]
    for s in range(4):
        m[TRICK + s] = -1
    m[TRICK_COUNT] = 0
    m[LED_SUIT] = -1
    m[BEST_SEAT] = -1
    m[BEST_TRUMP] = 0
    m[BEST_BIT] = 0
    m[TRICK_LEADER] = leader
    m[CUR] = leader


@njit(cache=True)
def start_play(st, i, leader):
    """Trick play begins in game ``i``, ``leader`` to lead."""
    st.meta[i, PHASE] = PLAY
    clear_trick(st, i, leader)


@njit(cache=True, inline="always")
def card_mask(card, tb):
    """Two-word mask of one dense card id: returns (word0, word1)."""
    mk = bit(tb.card[card, CARD_BIT])
    if tb.card[card, CARD_WORD] == 0:
        return mk, U0
    return U0, mk


@njit(cache=True)
def excuse_last_trick_to(st, i, owner, winner, tb):
    """The seat whose won cards take EX, played to the last trick by ``owner`` and going to the trick (see
    P_EX_LAST), the trick won by ``winner`` (called before the trick is counted in TRICKS_WON): the winner, except
    under EX_LAST_OTHER_SIDE (French ``other_side``) when the winner is on the owner's side: then, unless that side
    won every other trick and the owner led EX (a chelem: the winner keeps it), the camp opposite the owner."""
    if tb.params[P_EX_LAST] != EX_LAST_OTHER_SIDE:
        return winner
    m = st.meta[i]
    n = tb.params[P_PLAYERS]
    side = m[SIDE + owner]
    if m[SIDE + winner] != side:
        return winner
    if m[TRICK_LEADER] == owner:
        won = 0
        for s in range(n):
            if m[SIDE + s] == side:
                won += m[TRICKS_WON + s]
        if won == tb.params[P_TRICKS] - 1:
            return winner
    for s in range(n):
        if m[SIDE + s] != side:
            return s
    return winner
