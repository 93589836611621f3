"""The Mineo observation: one flat float32 vector per game, from one player's point of view.

Seats in the observation are *relative*: r = (seat - viewer) mod 4, so r=0 is the viewer, r=1 the next to
play after him. Card planes are 63 wide, indexed by dense card id (:mod:`tarocchi_rl.cards`). Nothing hidden
from the viewer is encoded: other hands, the monte before it is shown, others' discards (only the trumps
among them, which are shown), and the partner's identity unless the viewer knows it.

| offset | size | feature                                                                    |
|--------|------|----------------------------------------------------------------------------|
| 0      | 63   | own hand                                                                   |
| 63     | 252  | cards played so far by relative seat r (4 planes, current trick included)   |
| 315    | 252  | the current trick: card played by relative seat r (4 planes)                |
| 567    | 63   | the monte, once shown                                                       |
| 630    | 63   | own discard (the declarer only)                                             |
| 693    | 63   | shown cards: trumps discarded by the declarer                               |
| 756    | 8    | early round: [pass, solo] per relative seat                                 |
| 764    | 12   | auction: [pass, solo, call] per relative seat                               |
| 776    | 4    | declarer, relative seat                                                     |
| 780    | 3    | contract: call, solo, forced solo                                           |
| 783    | 1    | stakes doubled (early solo)                                                 |
| 784    | 21   | the called trump, T0..T20                                                   |
| 805    | 1    | the viewer knows the partnership (partner, or called trump played, or solo)  |
| 806    | 4    | partner, relative seat (when known and there is one)                        |
| 810    | 1    | scommessa said                                                              |
| 811    | 4    | rivanto said, by relative seat                                              |
| 815    | 4    | card points (thirds / 327) in the tricks won by relative seat r             |
| 819    | 4    | tricks won by relative seat r (/ 15)                                        |
| 823    | 16   | tricks completed, one-hot 0..15                                             |
| 839    | 7    | phase, one-hot (early, auction, discard, scommessa, rivanto, play, done)    |
| 846    | 4    | leader of the current trick, relative seat                                  |
| 850    | 4    | the viewer's own seat (absolute, 0 speaks first, 3 deals)                   |
| 854    |      | total                                                                       |
"""

import numpy as np
from numba import njit, prange

from ..bits import U0, lowest_bit
from ..core.state import (
    BID,
    CALLED,
    COMMIT,
    CONTRACT,
    DECLARER,
    DISCARDED,
    EARLY_BID,
    HAND,
    MULT,
    PARTNER,
    PHASE,
    PLAYED,
    SHOWN,
    STOCK,
    STOCK_SHOWN,
    TRICK,
    TRICK_LEADER,
    TRICK_NUM,
    TRICKS_WON,
    WON,
)
from ..core.tables import CARD_BIT, CARD_WORD
from . import mineo as R

C = R.N_CARDS
OBS_HAND = 0
OBS_PLAYED = OBS_HAND + C
OBS_TRICK = OBS_PLAYED + 4 * C
OBS_MONTE = OBS_TRICK + 4 * C
OBS_DISCARD = OBS_MONTE + C
OBS_SHOWN = OBS_DISCARD + C
OBS_EARLY = OBS_SHOWN + C
OBS_AUCTION = OBS_EARLY + 8
OBS_DECLARER = OBS_AUCTION + 12
OBS_CONTRACT = OBS_DECLARER + 4
OBS_DOUBLED = OBS_CONTRACT + 3
OBS_CALLED = OBS_DOUBLED + 1
OBS_PARTNER_KNOWN = OBS_CALLED + 21
OBS_PARTNER = OBS_PARTNER_KNOWN + 1
OBS_SCOMMESSA = OBS_PARTNER + 4
OBS_RIVANTO = OBS_SCOMMESSA + 1
OBS_POINTS = OBS_RIVANTO + 4
OBS_TRICKS_WON = OBS_POINTS + 4
OBS_TRICK_NUM = OBS_TRICKS_WON + 4
OBS_PHASE = OBS_TRICK_NUM + 16
OBS_LEADER = OBS_PHASE + 7
OBS_SEAT = OBS_LEADER + 4
OBS_DIM = OBS_SEAT + 4
assert OBS_DIM == 854


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
def _partner_known(st, i, viewer, tb):
    m = st.meta[i]
    if m[CONTRACT] == R.SOLO or m[CONTRACT] == R.FORCED_SOLO:
        return True
    if m[CONTRACT] != R.CALL:
        return False
    if viewer == m[PARTNER]:
        return True
    c = m[CALLED]
    w = tb.card[c, CARD_WORD]
    mk = np.uint64(1) << np.uint64(tb.card[c, CARD_BIT])
    for s in range(4):
        if (st.cards[i, PLAYED + s, w] & mk) != U0:
            return True
    return False


@njit(cache=True)
def observe_row(st, i, viewer, tb, out):
    """Write game ``i`` seen by seat ``viewer`` into ``out`` (float32[OBS_DIM], cleared first)."""
    out[:] = 0.0
    m = st.meta[i]
    _plane(st.cards[i, HAND + viewer, 0], st.cards[i, HAND + viewer, 1], tb, out, OBS_HAND)
    for s in range(4):
        r = (s - viewer) % 4
        _plane(st.cards[i, PLAYED + s, 0], st.cards[i, PLAYED + s, 1], tb, out, OBS_PLAYED + r * C)
        c = m[TRICK + s]
        if c >= 0:
            out[OBS_TRICK + r * C + c] = 1.0
        if m[EARLY_BID + s] >= 0:
            out[OBS_EARLY + 2 * r + m[EARLY_BID + s]] = 1.0
        if m[BID + s] >= 0:
            out[OBS_AUCTION + 3 * r + m[BID + s]] = 1.0
        out[OBS_POINTS + r] = R._card_thirds(st.cards[i, WON + s, 0], st.cards[i, WON + s, 1], tb) / 327.0
        out[OBS_TRICKS_WON + r] = m[TRICKS_WON + s] / 15.0
    if m[STOCK_SHOWN] != 0:
        _plane(st.cards[i, STOCK, 0], st.cards[i, STOCK, 1], tb, out, OBS_MONTE)
    if viewer == m[DECLARER]:
        _plane(st.cards[i, DISCARDED, 0], st.cards[i, DISCARDED, 1], tb, out, OBS_DISCARD)
    _plane(st.cards[i, SHOWN, 0], st.cards[i, SHOWN, 1], tb, out, OBS_SHOWN)
    if m[DECLARER] >= 0:
        out[OBS_DECLARER + (m[DECLARER] - viewer) % 4] = 1.0
    if m[CONTRACT] > 0:
        out[OBS_CONTRACT + m[CONTRACT] - 1] = 1.0
    if m[MULT] == 2:
        out[OBS_DOUBLED] = 1.0
    if m[CALLED] >= 0:
        out[OBS_CALLED + tb.card[m[CALLED], CARD_BIT]] = 1.0
    if _partner_known(st, i, viewer, tb):
        out[OBS_PARTNER_KNOWN] = 1.0
        if m[PARTNER] >= 0:
            out[OBS_PARTNER + (m[PARTNER] - viewer) % 4] = 1.0
    if m[COMMIT] == 1:
        out[OBS_SCOMMESSA] = 1.0
    if m[COMMIT + 1] >= 0:
        out[OBS_RIVANTO + (m[COMMIT + 1] - viewer) % 4] = 1.0
    out[OBS_TRICK_NUM + m[TRICK_NUM]] = 1.0
    out[OBS_PHASE + m[PHASE]] = 1.0
    if m[PHASE] == R.PLAY:
        out[OBS_LEADER + (m[TRICK_LEADER] - viewer) % 4] = 1.0
    out[OBS_SEAT + viewer] = 1.0


@njit(cache=True, parallel=True)
def observe_batch(st, tb, viewers, out):
    """out: float32[B, OBS_DIM], game i seen by seat viewers[i] (int array; viewer < 0 gives zeros)."""
    for i in prange(st.meta.shape[0]):
        if viewers[i] < 0:
            out[i, :] = 0.0
        else:
            observe_row(st, i, viewers[i], tb, out[i])
