"""The observation kernel: writes any variant's flat float32 observation from the layout in its tables (the
shared sections here; a family's own sections by its ``observe_sections`` hook, where its tables set
``params[P_OBS_HOOK]``).

Section meanings and the per-variant layouts: :mod:`tarocchi_rl.core.obs_layout` and each variant module's
``OBS_ROWS`` (printed by ``python -m tarocchi_rl.engine.observation``). The privileged observation (the hidden
part of the deal, for the perfect-information critic of training only) has its own kernel,
:func:`privileged_batch`, and layout (:func:`~tarocchi_rl.core.obs_layout.build_privileged_layout`).
"""

import numpy as np
from numba import njit, prange

from ..bits import U0, bit, lowest_bit
from ..core.obs_layout import (
    PV_DISCARD,
    PV_HANDS,
    PV_STOCK,
    S_BIDS,
    S_CALLED,
    S_CONTRACT,
    S_DECLARER,
    S_DISCARD,
    S_HAND,
    S_LEADER,
    S_PHASE,
    S_PLAYED,
    S_POINTS,
    S_SEAT,
    S_SHOWN,
    S_SHOWN_BY,
    S_STOCK,
    S_TRICK,
    S_TRICK_NUM,
    S_TRICKS_WON,
    build_privileged_layout,
)
from ..core.parallel import game_index
from ..core.phases import DONE, PLAY
from ..core.points import card_points
from ..core.state import (
    BID_WORD,
    CALLED,
    CONTRACT,
    DECLARER,
    DISCARDED,
    HAND,
    PHASE,
    PLAYED,
    SHOWN,
    SHOWN_BY,
    STOCK,
    STOCK_SHOWN,
    TRICK,
    TRICK_LEADER,
    TRICK_NUM,
    TRICKS_WON,
    WON,
)
from ..core.tables import (
    CARD_BIT,
    CARD_WORD,
    P_BID_WORDS,
    P_CARDS,
    P_FIRST_CARD_PHASE,
    P_HAND,
    P_OBS_HOOK,
    P_PHASE_SLOT,
    P_PLAYERS,
    P_TOTAL_POINTS,
    P_TRICKS,
)
from ..variants import dispatch as family


@njit(cache=True)
def _plane(x0, x1, tb, out, base):
    """Set out[base + c] = 1 for every card c of the two-word set (x0, x1)."""
    while x0 != U0:
        out[base + tb.pos_to_card[lowest_bit(x0)]] = 1.0
        x0 &= x0 - np.uint64(1)
    while x1 != U0:
        out[base + tb.pos_to_card[64 + lowest_bit(x1)]] = 1.0
        x1 &= x1 - np.uint64(1)


@njit(cache=True)
def observe_row(st, i, viewer, tb, out):
    """Write game ``i`` seen by seat ``viewer`` into ``out`` (float32[obs_dim], cleared first)."""
    out[:] = 0.0
    m = st.meta[i]
    o = tb.obs
    n = tb.params[P_PLAYERS]
    c = tb.params[P_CARDS]
    _plane(st.cards[i, HAND + viewer, 0], st.cards[i, HAND + viewer, 1], tb, out, o[S_HAND])
    for s in range(n):
        r = (s - viewer) % n
        _plane(st.cards[i, PLAYED + s, 0], st.cards[i, PLAYED + s, 1], tb, out, o[S_PLAYED] + r * c)
        card = m[TRICK + s]
        if card >= 0:
            out[o[S_TRICK] + r * c + card] = 1.0
        if o[S_SHOWN_BY] >= 0:
            _plane(st.cards[i, SHOWN_BY + s, 0], st.cards[i, SHOWN_BY + s, 1], tb, out, o[S_SHOWN_BY] + r * c)
        if o[S_BIDS] >= 0 and m[BID_WORD + s] >= 0:
            out[o[S_BIDS] + tb.params[P_BID_WORDS] * r + m[BID_WORD + s]] = 1.0
        won = card_points(st.cards[i, WON + s, 0], st.cards[i, WON + s, 1], tb)
        out[o[S_POINTS] + r] = won / tb.params[P_TOTAL_POINTS]
        out[o[S_TRICKS_WON] + r] = m[TRICKS_WON + s] / tb.params[P_TRICKS]
    if o[S_STOCK] >= 0 and m[STOCK_SHOWN] == 1:
        _plane(st.cards[i, STOCK, 0], st.cards[i, STOCK, 1], tb, out, o[S_STOCK])
    if viewer == m[DECLARER]:
        _plane(st.cards[i, DISCARDED, 0], st.cards[i, DISCARDED, 1], tb, out, o[S_DISCARD])
    _plane(st.cards[i, SHOWN, 0], st.cards[i, SHOWN, 1], tb, out, o[S_SHOWN])
    if o[S_DECLARER] >= 0 and m[DECLARER] >= 0:
        out[o[S_DECLARER] + (m[DECLARER] - viewer) % n] = 1.0
    if o[S_CONTRACT] >= 0 and m[CONTRACT] > 0:
        out[o[S_CONTRACT] + m[CONTRACT] - 1] = 1.0
    if o[S_CALLED] >= 0 and m[CALLED] >= 0:  # by dense id (a section narrower than the deck: the first cards)
        out[o[S_CALLED] + m[CALLED]] = 1.0
    if tb.params[P_OBS_HOOK] == 1:  # the family's own sections (its calls and declarations)
        family.observe_sections(st, i, viewer, tb, out)
    out[o[S_TRICK_NUM] + m[TRICK_NUM]] = 1.0
    out[o[S_PHASE] + tb.params[P_PHASE_SLOT + m[PHASE]]] = 1.0
    if m[PHASE] == PLAY or m[PHASE] == tb.params[P_FIRST_CARD_PHASE]:  # a trick on the table
        out[o[S_LEADER] + (m[TRICK_LEADER] - viewer) % n] = 1.0
    out[o[S_SEAT] + viewer] = 1.0
    return m[PHASE] != DONE


@njit(cache=True, parallel=True)
def observe_batch(st, tb, viewers, out):
    """out: float32[B, obs_dim], game i seen by seat viewers[i] (int64; viewer < 0 gives zeros)."""
    for i_ in prange(st.meta.shape[0]):
        i = game_index(i_)
        if viewers[i] < 0:
            out[i, :] = 0.0
        else:
            observe_row(st, i, viewers[i], tb, out[i])


@njit(cache=True)
def observe_serial(st, tb, viewers, out):
    """observe_batch on the calling thread."""
    for i in range(st.meta.shape[0]):
        if viewers[i] < 0:
            out[i, :] = 0.0
        else:
            observe_row(st, i, viewers[i], tb, out[i])


@njit(cache=True)
def _privileged_row(st, i, viewer, tb, offsets, out):
    """Write the hidden part of game ``i`` seen from seat ``viewer`` into ``out`` (float32[H], cleared first): the
    privileged observation of :mod:`tarocchi_rl.core.obs_layout` (``offsets``: its int64[3] section offsets)."""
    out[:] = 0.0
    n = tb.params[P_PLAYERS]
    c = tb.params[P_CARDS]
    h = tb.params[P_HAND]
    given0 = st.cards[i, STOCK, 0] | st.cards[i, DISCARDED, 0]  # the cards handed out (or set aside) so far
    given1 = st.cards[i, STOCK, 1] | st.cards[i, DISCARDED, 1]
    for s in range(n):
        given0 |= st.cards[i, HAND + s, 0] | st.cards[i, PLAYED + s, 0]
        given1 |= st.cards[i, HAND + s, 1] | st.cards[i, PLAYED + s, 1]
    for s in range(n):
        base = offsets[PV_HANDS] + ((s - viewer) % n) * c
        _plane(st.cards[i, HAND + s, 0], st.cards[i, HAND + s, 1], tb, out, base)
        for k in range(h):  # its share of the deal not handed out yet (Mineo's early round)
            card = st.deck[i, h * s + k]
            word = tb.card[card, CARD_WORD]
            b = bit(tb.card[card, CARD_BIT])
            if ((given0 if word == 0 else given1) & b) == U0:
                out[base + card] = 1.0
    _plane(st.cards[i, STOCK, 0], st.cards[i, STOCK, 1], tb, out, offsets[PV_STOCK])
    _plane(st.cards[i, DISCARDED, 0], st.cards[i, DISCARDED, 1], tb, out, offsets[PV_DISCARD])


@njit(cache=True, parallel=True)
def privileged_batch(st, tb, offsets, viewers, out):
    """out: float32[B, H], the hidden part of game i seen from seat viewers[i] (int64; viewer < 0 gives zeros)."""
    for i_ in prange(st.meta.shape[0]):
        i = game_index(i_)
        if viewers[i] < 0:
            out[i, :] = 0.0
        else:
            _privileged_row(st, i, viewers[i], tb, offsets, out[i])


def privileged_layout(tb) -> tuple[np.ndarray, int]:
    """The privileged observation's (offsets int64[3], size H) for the variant of the rule tables ``tb``."""
    offsets, dim, _ = build_privileged_layout(int(tb.params[P_PLAYERS]), int(tb.params[P_CARDS]))
    return offsets, dim


def observe_privileged(st, tb, viewers: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """float32[B, H]: the hidden part of every game ``i`` of the batch state ``st`` seen from seat ``viewers[i]``
    (int64[B]; -1 gives a zero row). Training only: the perfect-information critic's extra input."""
    offsets, dim = privileged_layout(tb)
    viewers = np.asarray(viewers, np.int64)
    if viewers.shape != (st.meta.shape[0],):
        raise ValueError(f"viewers must have shape ({st.meta.shape[0]},), got {viewers.shape}")
    if out is None:
        out = np.empty((st.meta.shape[0], dim), np.float32)
    privileged_batch(st, tb, offsets, viewers, out)
    return out
