"""``heuristic``: a rule-based player for every decision of every variant, as batched Numba kernels.

``heuristic_actions(st, tb, idx, out)`` writes one action per game ``idx[k]`` (a prange loop calling the
non-inlined row function ``heuristic_row(st, i, tb)``, which dispatches on the phase and, through the family
dispatch, on ``params[P_FAMILY]``);
:class:`HeuristicAgent` wraps it in the agent protocol of :mod:`tarocchi_rl.policies.base` (``needs_obs = False``).

The player is **deterministic**: the same state gives the same action, with no RNG (ties go to the weakest
card: the lowest bit, trumps before suit cards). It allocates nothing per decision (bit operations on the
two-word card sets) and reads only what its seat may know: its own hand, the cards played (current trick
included), bids and commitments, the public shown cards (discarded trumps, poignee / accuso cards), its own
discard, and in Mineo whether it holds the called trump; the partnership is used only once this seat knows it.
Every action comes from the core's legal sets (``play_legal`` in trick play, as ``legal_sets`` gives them,
``legal_sets`` otherwise); should a rule ever pick an illegal one, the lowest legal action is played instead.
Finished games give -1. In trick play ``heuristic_row`` is the only call boundary: the helpers are inlined and take the
state's and tables' arrays (a call passing the NamedTuples or many arrays costs more than the rules).

Terms. **Outstanding** cards: those the seat cannot place (not in its hand, not played, not shown, not in its
own discard). **Master**: no outstanding card of its suit (trumps for a trump) beats it. **Honour trump**: a
trump with card points (Mineo T1, T16..T20; Piedmontese T1 and the 5-point honours; French T1, T21).
**Secure** (the card best in the trick stays best): no enemy still to play, or a master trump, or a master
suit card when no trump is outstanding or at least one card of the suit is outstanding per enemy still to
play. **Allies**: Mineo solo - the defenders; Mineo call - the partnership once the called trump has been
played, and for its holder from the start (before that nobody); piedmont3 none; piedmont4 the partner;
French - the defenders. Unknown seats count as enemies.

Bids, commitments and the family's own play rules: the family's heuristic hooks (``heuristic_special``,
``heuristic_reserved``, ``heuristic_attack``, ``heuristic_ex_dump`` of
:data:`tarocchi_rl.variants.contract.KERNEL_HOOKS`), each family's table beside them in its module (its hand
strength, bid thresholds calibrated by forced-bid heuristic self-play then duplicate tuning, commitments, the
attacking side, reserved cards, EX). This module names no family.

Discard (one card per action)
| case                  | rule                                                                                       |
|-----------------------|--------------------------------------------------------------------------------------------|
| only trumps legal     | the cheapest trump (no-value trumps, lowest first)                                         |
| suit cards legal      | void a suit when possible (no King, all its cards discardable, few enough: shortest first); |
|                       | else the shortest suit; within the suit the highest card (its points are banked)           |

Card play: leading (also after an Excuse lead)
| order | rule                                                                                              |
|-------|---------------------------------------------------------------------------------------------------|
| 0     | EX when 2 cards are left and it may be led (Piedmontese, French): it must not reach the last trick |
| 1     | a low honour trump (T1 / the Petit) that has become master                                        |
| 2     | cash the most valuable master suit card, if no trump is outstanding or >= 2 cards of the suit     |
|       | are outstanding per other player                                                                  |
| 3     | attacking side (the family's heuristic_attack) holding at least half                              |
|       | as many trumps as are outstanding: lead the master trump, if held                                 |
| 4     | the lowest card of the shortest suit (avoiding suits headed by a master and valuable low cards)   |
| 5     | only trumps left: the master trump, else the cheapest trump                                       |

Card play: following
| case                          | rule                                                                                |
|-------------------------------|-------------------------------------------------------------------------------------|
| EX held, 2 cards left         | play EX (4 cards left where it may be led only as the last card: P_EX_LEAD_ANY 0)  |
| ally winning, secure          | smear: a vulnerable honour trump first (T1 / Petit, an Aria that can be beaten),     |
|                               | else the most valuable suit card, else the lowest no-value trump                    |
| ally winning, not secure      | play cheap                                                                          |
| enemy winning, I play last    | win with the lowest winner (a vulnerable honour trump first: it is banked; master   |
|                               | trumps last)                                                                        |
| enemy winning, others to play | the cheapest secure winner if the trick holds points or it is not a master trump;   |
|                               | else the lowest no-value, non-master winner if the trick holds points or I trump;   |
|                               | else play cheap                                                                     |
| play cheap                    | EX where the family's heuristic_ex_dump says so (Mineo: second half). Otherwise     |
|                               | the cheapest card (lowest value, then rank; trumps: no-value ones, then masters,    |
|                               | honours last), or EX instead when that card is an honour trump or worth a Queen+    |

Reserved cards (kept back while anything else is legal): the family's heuristic_reserved.
"""

import numpy as np
from numba import njit, prange

from ..bits import U0, U1, lowest_bit, popcount
from ..cards import EX_BIT
from ..core.known import above, hi_bit, outstanding
from ..core.parallel import SERIAL_BELOW, game_index
from ..core.phases import (
    DISCARD,
    DONE,
    PLAY,
)
from ..core.state import (
    BEST_BIT,
    BEST_SEAT,
    BEST_TRUMP,
    CUR,
    DECLARER,
    DISCARDS_LEFT,
    HAND,
    LED_SUIT,
    PHASE,
    SIDE,
    TRICK,
    TRICK_COUNT,
)
from ..core.tables import (
    CARD_BIT,
    CARD_VALUE,
    CARD_WORD,
    COUNT_TRIPLETS,
    MK_KINGS,
    MK_SUIT,
    MK_TRUMPS,
    MK_VALUE,
    P_CARDS,
    P_COUNT,
    P_EX_LEAD_ANY,
    P_N_VALUES,
    P_PLAYERS,
    P_VALUE,
)
from ..engine import legal_sets
from ..variants import dispatch as family
from .base import Agent

_EXB = np.uint64(1) << np.uint64(EX_BIT)
_NOT_EXB = ~_EXB
_BIG = 1 << 40

# card scoring modes of _select (the lowest score is chosen)
_CHEAP, _WIN, _SMEAR = 0, 1, 2
_CHEAPEST = -2  # _lead's answer "the cheapest card" (chosen by _play's one _select)


# ----------------------------------------------------------------------------------------------------------
# bit and card helpers (the kernels pass the state's and the tables' arrays, not the NamedTuples: reading a
# NamedTuple field in a kernel costs far more than the bit work here)


@njit(cache=True, inline="always")
def _value(w, b, card, ptc):
    """Card-point value of the card at (word w, bit b)."""
    return np.int64(card[ptc[w * 64 + b], CARD_VALUE])


@njit(cache=True, inline="always")
def _valued0(masks, params):
    """Honour trumps: trumps worth more than a plain card."""
    x = U0
    for k in range(params[P_N_VALUES]):
        if params[P_VALUE + k] > params[P_VALUE]:  # params[P_VALUE] is the lowest value (a plain card)
            x |= masks[MK_VALUE + k, 0]
    return x & masks[MK_TRUMPS, 0]


@njit(cache=True, inline="always")
def _score(w, b, mode, out_tr, valued0, card, ptc):
    """Score of card (word w, bit b) for ``mode`` (lower = preferred); out_tr: outstanding trumps."""
    if w == 1:
        r = np.int64(b & 15)
        if mode == _WIN:
            return r
        v = _value(1, b, card, ptc) * 32 + r
        return v if mode == _CHEAP else -v  # _SMEAR: the most valuable first
    bb = np.int64(b)
    master = (out_tr & above(b)) == U0
    honour = (valued0 & (U1 << np.uint64(b))) != U0
    if mode == _CHEAP:
        if honour:  # (a master honour may still lose to a higher trump already in the trick)
            return 4000 + _value(0, b, card, ptc) * 32 + bb
        return (2000 if master else 1000) + bb
    if mode == _WIN:
        if honour and not master:
            return -100 + bb  # a vulnerable honour that wins is banked
        return (200 if master else 0) + bb
    if honour and not master:  # _SMEAR
        return -5000 + bb
    return (3000 if master else 1000) + bb


@njit(cache=True, inline="always")
def _select(x0, x1, mode, out_tr, valued0, card, ptc):
    """(dense card, score) of the lowest-scoring card of the set (x0, x1), EX excluded; (-1, big) if empty."""
    best = _BIG
    bc = -1
    x = x0 & _NOT_EXB
    while x != U0:
        b = lowest_bit(x)
        sc = _score(0, b, mode, out_tr, valued0, card, ptc)
        if sc < best:
            best = sc
            bc = np.int64(ptc[b])
        x &= x - U1
    x = x1
    while x != U0:
        b = lowest_bit(x)
        sc = _score(1, b, mode, out_tr, valued0, card, ptc)
        if sc < best:
            best = sc
            bc = np.int64(ptc[64 + b])
        x &= x - U1
    return bc, best


@njit(cache=True, inline="always")
def _secure(w, b, out_tr, out1, enemies_after, masks):
    """Whether card (w, b), best in the trick, stays best against the enemies still to play."""
    if enemies_after == 0:
        return True
    if w == 0:
        return (out_tr & above(b)) == U0
    suit = masks[MK_SUIT + (b >> 4), 1]
    if (out1 & suit & above(b)) != U0:
        return False
    return out_tr == U0 or popcount(out1 & suit) >= enemies_after


# ----------------------------------------------------------------------------------------------------------
# knowledge of the seat


@njit(cache=True, inline="always")
def _allies(st, tb, i, p, n):
    """Bitmask of seats that seat p knows to be on its side (p excluded): none before there is a declarer or
    while p does not know the sides (the family's sides_known: Mineo's hidden partnership)."""
    if st.meta[i, DECLARER] < 0 or not family.sides_known(st, i, np.int64(p), tb):  # (int64: one signature)
        return 0
    a = 0
    me = st.meta[i, SIDE + p]
    for s in range(n):
        if s != p and st.meta[i, SIDE + s] == me:
            a |= 1 << s
    return a


@njit(cache=True, inline="always")
def _reserved(st, tb, i, h0, out_tr, hand_n):
    """Trumps kept back for the last trick (the family's heuristic_reserved)."""
    if hand_n <= 1:
        return U0
    return family.heuristic_reserved(st, i, tb, h0, out_tr, hand_n)


# ----------------------------------------------------------------------------------------------------------
# card play


@njit(cache=True, inline="always")
def _lead(c0, c1, ex_legal, h0, tr, out_tr, out1, hand_n, valued0, attack, n, card, ptc, masks):
    """The card to lead (c0, c1: the legal cards less EX and reserved ones), or _CHEAPEST: the cheapest of them."""
    if (c0 | c1) == U0 or (ex_legal and hand_n <= 2):
        return np.int64(ptc[EX_BIT])
    n_out_tr = popcount(out_tr)
    # 1. a low honour trump (T1, the Petit) that has become master wins now
    low_hon = c0 & valued0 & np.uint64(0x3FF)
    if low_hon != U0:
        b = lowest_bit(low_hon)
        if (out_tr & above(b)) == U0:
            return np.int64(ptc[b])
    # 2. cash the most valuable master suit card
    best = -1
    best_sc = -1
    for s in range(4):
        suit = masks[MK_SUIT + s, 1]
        ms = c1 & suit
        if ms == U0:
            continue
        top = hi_bit(ms)
        if (out1 & suit & above(top)) != U0:
            continue
        if n_out_tr == 0 or popcount(out1 & suit) >= 2 * (n - 1):
            sc = _value(1, top, card, ptc) * 32 + (top & 15)
            if sc > best_sc:
                best_sc = sc
                best = np.int64(ptc[64 + top])
    if best >= 0:
        return best
    my_tr = c0 & tr
    # 3. draw trumps with the master trump
    if attack and my_tr != U0 and n_out_tr > 0 and 2 * popcount(h0 & tr) >= n_out_tr:
        top = hi_bit(my_tr)
        if (out_tr & above(top)) == U0:
            return np.int64(ptc[top])
    # 4. the lowest card of the shortest suit
    best_sc = _BIG
    for s in range(4):
        suit = masks[MK_SUIT + s, 1]
        ms = c1 & suit
        if ms == U0:
            continue
        low = lowest_bit(ms)
        sc = popcount(ms) * 8 + _value(1, low, card, ptc) * 4
        if (out1 & suit & above(hi_bit(ms))) == U0:
            sc += 40
        if sc < best_sc:
            best_sc = sc
            best = np.int64(ptc[64 + low])
    if best >= 0:
        return best
    # 5. trumps only: the master trump, else (_CHEAPEST) the cheapest trump
    if (out_tr & above(hi_bit(my_tr))) == U0:
        return np.int64(ptc[hi_bit(my_tr)])
    return _CHEAPEST


@njit(cache=True, inline="always")
def _play(st, tb, meta, cards, card, ptc, masks, params, i, l0, l1):
    """The card seat CUR plays, from the legal set (l0, l1)."""
    if popcount(l0) + popcount(l1) == 1:
        return np.int64(ptc[lowest_bit(l0)] if l0 != U0 else ptc[64 + lowest_bit(l1)])
    n = params[P_PLAYERS]
    p = meta[i, CUR]
    h0 = cards[i, HAND + p, 0]
    tr = masks[MK_TRUMPS, 0]
    out0, out1 = outstanding(meta, cards, masks, i, p, n)
    out_tr = out0 & tr
    valued0 = _valued0(masks, params)
    hand_n = popcount(h0) + popcount(cards[i, HAND + p, 1])
    allies = _allies(st, tb, i, p, n)
    res = _reserved(st, tb, i, h0, out_tr, hand_n)
    ex = (l0 & _EXB) != U0
    ex_id = np.int64(ptc[EX_BIT])
    c0 = l0 & _NOT_EXB & ~res
    c1 = l1
    if (c0 | c1) == U0:
        c0 = l0 & _NOT_EXB
    k = meta[i, TRICK_COUNT]
    led = meta[i, LED_SUIT]
    if k == 0 or led < 0:
        attack = family.heuristic_attack(st, i, p, allies, tb)
        c = _lead(c0, c1, ex, h0, tr, out_tr, out1, hand_n, valued0, attack, n, card, ptc, masks)
        if c != _CHEAPEST:
            return c
        x0, x1, mode, cheap = c0, c1, _CHEAP, False  # the cheapest card, no EX rule
    else:
        if ex and hand_n <= (2 if params[P_EX_LEAD_ANY] == 1 else 4):
            return ex_id  # EX must not reach the last trick (where it may be led only as the last card: by the 4th)
        if (c0 | c1) == U0:
            return ex_id
        x0, x1, mode = _follow(meta, card, ptc, masks, params, i, p, n, k, led, allies, c0, c1, ex_id, out_tr, out1,
                               valued0)
        cheap = mode == _CHEAP
        # play cheap: EX where the family dumps it (Mineo: the second half), else the cheapest card (below)
        if cheap and ex and family.heuristic_ex_dump(st, i, hand_n, tb):
            return ex_id
    c, sc = _select(x0, x1, mode, out_tr, valued0, card, ptc)
    queen = 4 if params[P_COUNT] == COUNT_TRIPLETS else 7
    if cheap and ex and (c < 0 or sc >= 4000 or (card[c, CARD_WORD] == 1 and card[c, CARD_VALUE] >= queen)):
        return ex_id  # rather than an honour trump or a card worth a Queen or more
    return c


@njit(cache=True, inline="always")
def _follow(meta, card, ptc, masks, params, i, p, n, k, led, allies, c0, c1, ex_id, out_tr, out1, valued0):
    """The choice when following: (x0, x1, mode), the card set and the _select mode (_CHEAP: play cheap, from
    c0, c1).

    _play's one _select serves every branch (each inlined copy costs seconds of the first compile); the secure
    winners have one of their own, as their score decides whether they are played."""
    enemies_after = 0
    s = p
    for _ in range(n - 1 - k):
        s = s + 1 if s + 1 < n else 0
        if (allies >> s) & 1 == 0:
            enemies_after += 1
    plain = params[P_VALUE]  # the value of a card without points
    trick_pts = 0
    for s in range(n):
        c = meta[i, TRICK + s]
        if c >= 0 and c != ex_id and card[c, CARD_VALUE] > plain:
            trick_pts += card[c, CARD_VALUE] - plain
    bs = meta[i, BEST_SEAT]
    bt = meta[i, BEST_TRUMP]
    bb = meta[i, BEST_BIT]
    tr = masks[MK_TRUMPS, 0]
    if (allies >> bs) & 1:
        if _secure(0 if bt != 0 else 1, bb, out_tr, out1, enemies_after, masks):
            return c0, c1, _SMEAR
        return c0, c1, _CHEAP
    if bt != 0:
        win0 = c0 & tr & above(bb)
        win1 = U0
    else:
        win0 = c0 & tr
        win1 = c1 & masks[MK_SUIT + led, 1] & above(bb) if led < 4 else U0
    if (win0 | win1) == U0:
        return c0, c1, _CHEAP
    if enemies_after == 0:
        return win0, win1, _WIN
    sw0 = U0
    x = win0
    while x != U0:
        b = lowest_bit(x)
        if _secure(0, b, out_tr, out1, enemies_after, masks):
            sw0 |= U1 << np.uint64(b)
        x &= x - U1
    sw1 = U0
    x = win1
    while x != U0:
        b = lowest_bit(x)
        if _secure(1, b, out_tr, out1, enemies_after, masks):
            sw1 |= U1 << np.uint64(b)
        x &= x - U1
    if (sw0 | sw1) != U0:
        _, sc = _select(sw0, sw1, _WIN, out_tr, valued0, card, ptc)
        if trick_pts > 0 or sc < 200:
            return sw0, sw1, _WIN
    if trick_pts > 0 or win0 != U0:
        t0 = U0
        if out_tr != U0:  # no-value winners below the outstanding trumps (masters are not tried cheaply)
            t0 = win0 & ~valued0 & ~above(hi_bit(out_tr))
        if (t0 | win1) != U0:
            return t0, win1, _WIN
    return c0, c1, _CHEAP


# ----------------------------------------------------------------------------------------------------------
# discard


@njit(cache=True)
def _discard(meta, cards, card, ptc, masks, params, i, d0, d1):
    p = meta[i, CUR]
    if d1 == U0:
        out0, _ = outstanding(meta, cards, masks, i, p, params[P_PLAYERS])
        c, _ = _select(d0, U0, _CHEAP, out0 & masks[MK_TRUMPS, 0], _valued0(masks, params), card, ptc)
        return c
    h1 = cards[i, HAND + p, 1]
    left = meta[i, DISCARDS_LEFT]
    kings = masks[MK_KINGS, 1]
    best = -1
    best_sc = -_BIG
    x = d1
    while x != U0:
        b = lowest_bit(x)
        suit = masks[MK_SUIT + (b >> 4), 1]
        cnt = popcount(h1 & suit)
        sc = -20 * cnt + 2 * np.int64(b & 15)
        if (h1 & suit & kings) == U0 and popcount(d1 & suit) == cnt and cnt <= left:
            sc += 1000  # this suit can be voided
        if sc > best_sc:
            best_sc = sc
            best = np.int64(ptc[64 + b])
        x &= x - U1
    return best


# ----------------------------------------------------------------------------------------------------------
# the row kernel and the batch driver


@njit(cache=True, inline="always")
def _in_set(c, x0, x1, card):
    if c < 0:
        return False
    mk = U1 << np.uint64(card[c, CARD_BIT])
    return ((x0 if card[c, CARD_WORD] == 0 else x1) & mk) != U0


@njit(cache=True, inline="always")
def _lowest_card(x0, x1, ptc):
    if x0 != U0:
        return np.int64(ptc[lowest_bit(x0)])
    return np.int64(ptc[64 + lowest_bit(x1)])


@njit(cache=True)
def heuristic_row(st, i, tb):
    """The heuristic's action id in game ``i`` (-1 when the game is done)."""
    ph = st.meta[i, PHASE]
    if ph == DONE:
        return -1
    card = tb.card
    ptc = tb.pos_to_card
    p0, p1, d0, d1, flags = legal_sets(st, i, tb)  # (one inlined copy for every phase: seconds of compile each)
    if ph == PLAY:
        if (p0 | p1) == U0:
            return -1
        c = _play(st, tb, st.meta, st.cards, card, ptc, tb.masks, tb.params, i, p0, p1)
        return c if _in_set(c, p0, p1, card) else _lowest_card(p0, p1, ptc)
    nc = tb.params[P_CARDS]
    if ph == DISCARD:
        if (d0 | d1) == U0:
            return -1
        c = _discard(st.meta, st.cards, card, ptc, tb.masks, tb.params, i, d0, d1)
        return nc + (c if _in_set(c, d0, d1, card) else _lowest_card(d0, d1, ptc))
    if flags == 0:
        return -1
    k = family.heuristic_special(st, i, tb, flags)
    if k < 0 or (flags & (1 << k)) == 0:
        k = lowest_bit(np.uint64(flags))
    return 2 * nc + k


@njit(cache=True, parallel=True)
def heuristic_actions(st, tb, idx, out):
    """out[k] = the heuristic's action in game idx[k] (-1 for games that are done)."""
    for k_ in prange(idx.shape[0]):
        k = game_index(k_)
        out[k] = heuristic_row(st, idx[k], tb)


@njit(cache=True)
def _heuristic_actions_serial(st, tb, idx, out):
    """heuristic_actions on the calling thread (a few games: no parallel region to start)."""
    for k in range(idx.shape[0]):
        out[k] = heuristic_row(st, idx[k], tb)


class HeuristicAgent(Agent):
    """The rule-based player of the module docstring (deterministic; ``seed`` is accepted and unused)."""

    name = "heuristic"
    needs_obs = False
    needs_mask = False  # legality comes from the core's legal sets inside the kernel
    legal_by_construction = True

    def __init__(self, seed: int = 0):
        self.seed = seed

    def act(self, obs, mask, env, idx=None) -> np.ndarray:
        if idx is None:
            idx = np.arange(env.batch_size)
        idx = np.ascontiguousarray(idx, dtype=np.int64)
        out = np.empty(idx.shape[0], np.int64)
        kernel = _heuristic_actions_serial if idx.shape[0] < SERIAL_BELOW else heuristic_actions
        kernel(env.state, env.tables, idx, out)
        return out
