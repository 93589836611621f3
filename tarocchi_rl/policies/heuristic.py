"""``heuristic``: a rule-based player for every decision of every variant, as batched Numba kernels.

``heuristic_actions(st, tb, idx, out)`` writes one action per game ``idx[k]`` (a prange loop calling the
non-inlined row function ``heuristic_row(st, i, tb)``, which dispatches on ``params[P_FAMILY]`` and the phase);
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

Hand strength (own cards only)
| variant | strength                                                                                        |
|---------|-------------------------------------------------------------------------------------------------|
| mineo   | 2 per trump, +2 per Aria (T16..T19), +4 T20, +3 EX, +3 per King, T1 +2 (>= 6 trumps) else -1,   |
|         | with >= 5 trumps: +2 per void suit, +1 per singleton                                            |
| french  | 2 per trump, +1 per T16..T20, T21 +10, EX +8, T1 +9/+7/+4/0 with >= 6/5/4/fewer trumps, King 6, |
|         | Queen 3 (+1 with its King), Cavalier 2, Valet 1, +2 per card beyond 4 in a suit with its King,  |
|         | with >= 5 trumps: +6 per void, +3 per singleton                                                  |

Bids and commitments (thresholds calibrated by forced-bid heuristic self-play, then duplicate tuning)
| decision          | rule                                                                                      |
|-------------------|-------------------------------------------------------------------------------------------|
| mineo early round | solo (doubled) if the 5 cards' strength >= MINEO_EARLY_SOLO (26: five top trumps), else pass |
| mineo auction     | solo if strength >= MINEO_SOLO (30); call if >= MINEO_CALL (9) and nobody called; else pass |
| mineo scommessa   | say it (T20 and EX held) when T1 is held too with >= 4 trumps; else pass                   |
| mineo rivanto     | (defenders) say it holding the master trump or >= 10 trumps; else pass                     |
| french bid        | the highest level whose threshold the strength reaches, FRENCH3_BIDS = (42, 46, 66, 76),   |
|                   | FRENCH4_BIDS = (40, 43, 62, 70) for prise / garde / garde sans / garde contre, if it is    |
|                   | above every bid so far; else pass                                                          |
| french chelem     | announce only with T21, >= 14 trumps and every suit an unbroken run from its King          |
| french poignee    | declare the highest level held (taker or defender)                                         |
| piedmont4 accuso  | declare whenever legal (a free bonus)                                                      |

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
| 3     | attacking side (Mineo declarer side, French taker, any Piedmontese player) holding at least half  |
|       | as many trumps as are outstanding: lead the master trump, if held                                 |
| 4     | the lowest card of the shortest suit (avoiding suits headed by a master and valuable low cards)   |
| 5     | only trumps left: the master trump, else the cheapest trump                                       |

Card play: following
| case                          | rule                                                                                |
|-------------------------------|-------------------------------------------------------------------------------------|
| EX held, 2 cards left         | play EX (Mineo: 4 cards left, as it may not be led)                                 |
| ally winning, secure          | smear: a vulnerable honour trump first (T1 / Petit, an Aria that can be beaten),     |
|                               | else the most valuable suit card, else the lowest no-value trump                    |
| ally winning, not secure      | play cheap                                                                          |
| enemy winning, I play last    | win with the lowest winner (a vulnerable honour trump first: it is banked; master   |
|                               | trumps last)                                                                        |
| enemy winning, others to play | the cheapest secure winner if the trick holds points or it is not a master trump;   |
|                               | else the lowest no-value, non-master winner if the trick holds points or I trump;   |
|                               | else play cheap                                                                     |
| play cheap                    | Mineo, second half of the deal: EX (it stays with its side when not led). Otherwise |
|                               | the cheapest card (lowest value, then rank; trumps: no-value ones, then masters,    |
|                               | honours last), or EX instead when that card is an honour trump or worth a Queen+    |

Reserved cards (kept back while anything else is legal): French - the Petit while this seat holds more other
trumps than are outstanding (petit au bout); Mineo - the master trump once a rivanto is said (the last trick
is worth 2 jochi).
"""

import numpy as np
from numba import njit, prange

from ..bits import U0, U1, lowest_bit, popcount
from ..cards import EX_BIT
from ..core.phases import (
    ACCUSO,
    AUCTION,
    BID,
    CHELEM,
    DISCARD,
    DONE,
    EARLY,
    PLAY,
    POIGNEE,
    RIVANTO,
    SCOMMESSA,
)
from ..core.state import (
    BEST_BIT,
    BEST_SEAT,
    BEST_TRUMP,
    BID_WORD,
    CALLED,
    COMMIT,
    CONTRACT,
    CUR,
    DECLARER,
    DISCARDED,
    DISCARDS_LEFT,
    HAND,
    LED_SUIT,
    PHASE,
    PLAYED,
    SHOWN,
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
    P_FAMILY,
    P_N_VALUES,
    P_PLAYERS,
    P_TRICKS,
    P_VALUE,
)
from ..core.trick import play_legal
from ..engine import legal_sets
from ..variants import french, mineo
from ..variants.french import MK_OUDLERS, MK_PETIT
from ..variants.mineo import MK_ARIE, MK_GIOVE, MK_PIGLIATA
from .base import Agent

FAMILY_MINEO, FAMILY_FRENCH = mineo.FAMILY_ID, french.FAMILY_ID  # (until the family's rules move behind hooks)

# bidding thresholds (strength scores of the module docstring)
MINEO_EARLY_SOLO = 26
MINEO_CALL = 9
MINEO_SOLO = 30
FRENCH3_BIDS = (42, 46, 66, 76)  # prise, garde, garde sans, garde contre
FRENCH4_BIDS = (40, 43, 62, 70)

_EXB = np.uint64(1) << np.uint64(EX_BIT)
_NOT_EXB = ~_EXB
_S1, _S2, _S4, _S8, _S16, _S32 = (np.uint64(k) for k in (1, 2, 4, 8, 16, 32))
_BIG = 1 << 40

# card scoring modes of _select (the lowest score is chosen)
CHEAP, WIN, SMEAR = 0, 1, 2


# ----------------------------------------------------------------------------------------------------------
# bit and card helpers (the kernels pass the state's and the tables' arrays, not the NamedTuples: reading a
# NamedTuple field in a kernel costs far more than the bit work here)


@njit(cache=True, inline="always")
def _hi_bit(x):
    """Index of the highest set bit of a non-zero uint64."""
    x |= x >> _S1
    x |= x >> _S2
    x |= x >> _S4
    x |= x >> _S8
    x |= x >> _S16
    x |= x >> _S32
    return popcount(x) - 1


@njit(cache=True, inline="always")
def _above(b):
    """All bits strictly above bit ``b`` (b <= 62)."""
    return ~((U1 << np.uint64(b + 1)) - U1)


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
        if mode == WIN:
            return r
        v = _value(1, b, card, ptc) * 32 + r
        return v if mode == CHEAP else -v  # SMEAR: the most valuable first
    bb = np.int64(b)
    master = (out_tr & _above(b)) == U0
    honour = (valued0 & (U1 << np.uint64(b))) != U0
    if mode == CHEAP:
        if honour:  # (a master honour may still lose to a higher trump already in the trick)
            return 4000 + _value(0, b, card, ptc) * 32 + bb
        return (2000 if master else 1000) + bb
    if mode == WIN:
        if honour and not master:
            return -100 + bb  # a vulnerable honour that wins is banked
        return (200 if master else 0) + bb
    if honour and not master:  # SMEAR
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
        return (out_tr & _above(b)) == U0
    suit = masks[MK_SUIT + (b >> 4), 1]
    if (out1 & suit & _above(b)) != U0:
        return False
    return out_tr == U0 or popcount(out1 & suit) >= enemies_after


@njit(cache=True, inline="always")
def _cheap(c0, c1, ex, ex_dump, out_tr, valued0, queen, card, ptc):
    """Play cheap: the cheapest card, or EX (Mineo's dump, or to save an honour trump / a Queen or more)."""
    ex_id = np.int64(ptc[EX_BIT])
    if ex_dump:
        return ex_id
    c, sc = _select(c0, c1, CHEAP, out_tr, valued0, card, ptc)
    if ex and (c < 0 or sc >= 4000 or (card[c, CARD_WORD] == 1 and card[c, CARD_VALUE] >= queen)):
        return ex_id
    return c


# ----------------------------------------------------------------------------------------------------------
# knowledge of the seat


@njit(cache=True, inline="always")
def _allies(meta, cards, card, fam, i, p, n):
    """Bitmask of seats that seat p knows to be on its side (p excluded)."""
    if fam == FAMILY_MINEO:
        ct = meta[i, CONTRACT]
        if ct == mineo.NONE:
            return 0
        if ct == mineo.CALL:  # the partnership is known to the called trump's holder, to all once it is played
            c = meta[i, CALLED]
            w = card[c, CARD_WORD]
            mk = U1 << np.uint64(card[c, CARD_BIT])
            seen = cards[i, HAND + p, w]
            for s in range(n):
                seen |= cards[i, PLAYED + s, w]
            if (seen & mk) == U0:
                return 0
    elif fam == FAMILY_FRENCH and meta[i, DECLARER] < 0:
        return 0
    a = 0
    me = meta[i, SIDE + p]
    for s in range(n):
        if s != p and meta[i, SIDE + s] == me:
            a |= 1 << s
    return a


@njit(cache=True, inline="always")
def _outstanding(meta, cards, masks, i, p, n):
    """Cards seat p cannot place (not in its hand, not played, not shown, not in its own discard):
    (word 0 with EX, word 1)."""
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


@njit(cache=True, inline="always")
def _reserved(meta, masks, fam, i, h0, out_tr, hand_n):
    """Trumps kept back for the last trick (see the module docstring)."""
    if hand_n <= 1:
        return U0
    mine = h0 & masks[MK_TRUMPS, 0]
    if fam == FAMILY_FRENCH:
        petit = masks[MK_PETIT, 0]
        if (mine & petit) != U0 and popcount(mine) - 1 > popcount(out_tr):
            return petit
    elif fam == FAMILY_MINEO and meta[i, COMMIT + 1] >= 0 and mine != U0:
        top = _hi_bit(mine)
        if (out_tr & _above(top)) == U0:
            return U1 << np.uint64(top)
    return U0


# ----------------------------------------------------------------------------------------------------------
# card play


@njit(cache=True, inline="always")
def _lead(c0, c1, ex_legal, h0, tr, out_tr, out1, hand_n, valued0, attack, n, card, ptc, masks):
    """The card to lead (c0, c1: the legal cards less EX and reserved ones)."""
    if (c0 | c1) == U0 or (ex_legal and hand_n <= 2):
        return np.int64(ptc[EX_BIT])
    n_out_tr = popcount(out_tr)
    # 1. a low honour trump (T1, the Petit) that has become master wins now
    low_hon = c0 & valued0 & np.uint64(0x3FF)
    if low_hon != U0:
        b = lowest_bit(low_hon)
        if (out_tr & _above(b)) == U0:
            return np.int64(ptc[b])
    # 2. cash the most valuable master suit card
    best = -1
    best_sc = -1
    for s in range(4):
        suit = masks[MK_SUIT + s, 1]
        ms = c1 & suit
        if ms == U0:
            continue
        top = _hi_bit(ms)
        if (out1 & suit & _above(top)) != U0:
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
        top = _hi_bit(my_tr)
        if (out_tr & _above(top)) == U0:
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
        if (out1 & suit & _above(_hi_bit(ms))) == U0:
            sc += 40
        if sc < best_sc:
            best_sc = sc
            best = np.int64(ptc[64 + low])
    if best >= 0:
        return best
    # 5. trumps only
    if (out_tr & _above(_hi_bit(my_tr))) == U0:
        return np.int64(ptc[_hi_bit(my_tr)])
    c, _ = _select(c0, c1, CHEAP, out_tr, valued0, card, ptc)
    return c


@njit(cache=True, inline="always")
def _play(meta, cards, card, ptc, masks, params, i, l0, l1):
    """The card seat CUR plays, from the legal set (l0, l1)."""
    if popcount(l0) + popcount(l1) == 1:
        return np.int64(ptc[lowest_bit(l0)] if l0 != U0 else ptc[64 + lowest_bit(l1)])
    n = params[P_PLAYERS]
    fam = params[P_FAMILY]
    p = meta[i, CUR]
    h0 = cards[i, HAND + p, 0]
    tr = masks[MK_TRUMPS, 0]
    out0, out1 = _outstanding(meta, cards, masks, i, p, n)
    out_tr = out0 & tr
    valued0 = _valued0(masks, params)
    hand_n = popcount(h0) + popcount(cards[i, HAND + p, 1])
    allies = _allies(meta, cards, card, fam, i, p, n)
    res = _reserved(meta, masks, fam, i, h0, out_tr, hand_n)
    ex = (l0 & _EXB) != U0
    ex_id = np.int64(ptc[EX_BIT])
    c0 = l0 & _NOT_EXB & ~res
    c1 = l1
    if (c0 | c1) == U0:
        c0 = l0 & _NOT_EXB
    k = meta[i, TRICK_COUNT]
    led = meta[i, LED_SUIT]
    if k == 0 or led < 0:
        if fam == FAMILY_MINEO:
            attack = meta[i, SIDE + p] == 0 and (allies != 0 or meta[i, DECLARER] == p)
        elif fam == FAMILY_FRENCH:
            attack = meta[i, DECLARER] == p
        else:
            attack = True
        return _lead(c0, c1, ex, h0, tr, out_tr, out1, hand_n, valued0, attack, n, card, ptc, masks)
    if ex and hand_n <= (4 if fam == FAMILY_MINEO else 2):
        return ex_id  # EX must not reach the last trick (Mineo: it cannot be led before)
    if (c0 | c1) == U0:
        return ex_id
    # Mineo: EX stays with its side when played (not led): dump it when playing cheap in the second half
    ex_dump = ex and fam == FAMILY_MINEO and 2 * hand_n <= params[P_TRICKS] + 1
    queen = 4 if params[P_COUNT] == COUNT_TRIPLETS else 7
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
    if (allies >> bs) & 1:
        if _secure(0 if bt != 0 else 1, bb, out_tr, out1, enemies_after, masks):
            c, _ = _select(c0, c1, SMEAR, out_tr, valued0, card, ptc)
            return c
        return _cheap(c0, c1, ex, ex_dump, out_tr, valued0, queen, card, ptc)
    if bt != 0:
        win0 = c0 & tr & _above(bb)
        win1 = U0
    else:
        win0 = c0 & tr
        win1 = c1 & masks[MK_SUIT + led, 1] & _above(bb) if led < 4 else U0
    if (win0 | win1) == U0:
        return _cheap(c0, c1, ex, ex_dump, out_tr, valued0, queen, card, ptc)
    if enemies_after == 0:
        c, _ = _select(win0, win1, WIN, out_tr, valued0, card, ptc)
        return c
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
        c, sc = _select(sw0, sw1, WIN, out_tr, valued0, card, ptc)
        if trick_pts > 0 or sc < 200:
            return c
    if trick_pts > 0 or win0 != U0:
        t0 = U0
        if out_tr != U0:  # no-value winners below the outstanding trumps (masters are not tried cheaply)
            t0 = win0 & ~valued0 & ~_above(_hi_bit(out_tr))
        if (t0 | win1) != U0:
            c, _ = _select(t0, win1, WIN, out_tr, valued0, card, ptc)
            return c
    return _cheap(c0, c1, ex, ex_dump, out_tr, valued0, queen, card, ptc)


# ----------------------------------------------------------------------------------------------------------
# discard


@njit(cache=True)
def _discard(meta, cards, card, ptc, masks, params, i, d0, d1):
    p = meta[i, CUR]
    if d1 == U0:
        out0, _ = _outstanding(meta, cards, masks, i, p, params[P_PLAYERS])
        c, _ = _select(d0, U0, CHEAP, out0 & masks[MK_TRUMPS, 0], _valued0(masks, params), card, ptc)
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
# bidding and commitments


@njit(cache=True)
def mineo_strength(h0, h1, tb):
    """Hand strength for the Mineo bids (module docstring)."""
    tr = h0 & tb.masks[MK_TRUMPS, 0]
    nt = popcount(tr)
    s = 2 * nt + 2 * popcount(tr & tb.masks[MK_ARIE, 0]) + 3 * popcount(h1 & tb.masks[MK_KINGS, 1])
    if (tr & tb.masks[MK_GIOVE, 0]) != U0:
        s += 4
    if (h0 & _EXB) != U0:
        s += 3
    if (tr & tb.masks[MK_PIGLIATA, 0] & ~tb.masks[MK_ARIE, 0]) != U0:
        s += 2 if nt >= 6 else -1
    if nt >= 5:
        for su in range(4):
            cnt = popcount(h1 & tb.masks[MK_SUIT + su, 1])
            if cnt == 0:
                s += 2
            elif cnt == 1:
                s += 1
    return s


@njit(cache=True)
def french_strength(h0, h1, tb):
    """Hand strength for the French bids (module docstring)."""
    tr = h0 & tb.masks[MK_TRUMPS, 0]
    nt = popcount(tr)
    s = 2 * nt + popcount(tr & np.uint64(0x1F8000))  # T16..T20 are bits 15..19
    oud = tb.masks[MK_OUDLERS, 0]
    petit = tb.masks[MK_PETIT, 0]
    if (h0 & oud & ~petit & tr) != U0:
        s += 10  # T21
    if (h0 & _EXB) != U0:
        s += 8
    if (tr & petit) != U0:
        s += 9 if nt >= 6 else 7 if nt == 5 else 4 if nt == 4 else 0
    for su in range(4):
        ms = h1 & tb.masks[MK_SUIT + su, 1]
        cnt = popcount(ms)
        base = 16 * su
        king = (ms >> np.uint64(base + 13)) & U1
        queen = (ms >> np.uint64(base + 12)) & U1
        s += 6 * np.int64(king) + 3 * np.int64(queen) + 2 * np.int64((ms >> np.uint64(base + 11)) & U1)
        s += np.int64((ms >> np.uint64(base + 10)) & U1)
        if king and queen:
            s += 1
        if king and cnt > 4:
            s += 2 * (cnt - 4)
        if nt >= 5:
            if cnt == 0:
                s += 6
            elif cnt == 1:
                s += 3
    return s


@njit(cache=True)
def _mineo_special(st, i, tb, flags):
    m = st.meta[i]
    ph = m[PHASE]
    p = m[CUR]
    h0 = st.cards[i, HAND + p, 0]
    h1 = st.cards[i, HAND + p, 1]
    tr = h0 & tb.masks[MK_TRUMPS, 0]
    if ph == EARLY:
        return mineo.K_SOLO if mineo_strength(h0, h1, tb) >= MINEO_EARLY_SOLO else mineo.K_PASS
    if ph == AUCTION:
        s = mineo_strength(h0, h1, tb)
        if s >= MINEO_SOLO:
            return mineo.K_SOLO
        if s >= MINEO_CALL and flags & mineo.F_CALL:
            return mineo.K_CALL
        return mineo.K_PASS
    if ph == SCOMMESSA:
        nt = popcount(tr)
        one = (tr & tb.masks[MK_PIGLIATA, 0] & ~tb.masks[MK_ARIE, 0]) != U0
        if one and nt >= 4:
            return mineo.K_SCOMMESSA
        return mineo.K_PASS
    if ph == RIVANTO:
        out0, _ = _outstanding(st.meta, st.cards, tb.masks, i, p, 4)
        top_master = tr != U0 and (out0 & tb.masks[MK_TRUMPS, 0] & _above(_hi_bit(tr))) == U0
        if top_master or popcount(tr) >= 10:
            return mineo.K_RIVANTO
        return mineo.K_PASS
    return mineo.K_PASS


@njit(cache=True)
def _french_special(st, i, tb, flags):
    m = st.meta[i]
    ph = m[PHASE]
    p = m[CUR]
    n = tb.params[P_PLAYERS]
    h0 = st.cards[i, HAND + p, 0]
    h1 = st.cards[i, HAND + p, 1]
    if ph == BID:
        s = french_strength(h0, h1, tb)
        want = 0
        for k in range(4):
            thr = FRENCH3_BIDS[k] if n == 3 else FRENCH4_BIDS[k]
            if s >= thr:
                want = k + 1
        best = 0
        for q in range(n):
            if m[BID_WORD + q] > best:
                best = m[BID_WORD + q]
        return want if want > best else french.K_PASS
    if ph == CHELEM:
        tr = h0 & tb.masks[MK_TRUMPS, 0]
        t21 = (tr & tb.masks[MK_OUDLERS, 0] & ~tb.masks[MK_PETIT, 0]) != U0
        if not t21 or 3 * popcount(tr) < 2 * 21:
            return french.K_PASS
        for su in range(4):
            ms = h1 & tb.masks[MK_SUIT + su, 1]
            # every card a master: the suit's cards form an unbroken sequence from the King down
            if ms != U0 and (_hi_bit(ms) != 16 * su + 13 or _hi_bit(ms) - lowest_bit(ms) + 1 != popcount(ms)):
                return french.K_PASS
        return french.K_CHELEM
    if ph == POIGNEE:
        k = 0
        for q in range(3):
            if flags & (1 << (french.K_POIGNEE + q)):
                k = french.K_POIGNEE + q
        return k
    return french.K_PASS


@njit(cache=True)
def _piedmont_special(st, i, tb, flags):
    if st.meta[i, PHASE] == ACCUSO and flags & 2:
        return 1
    return 0


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
    if ph == PLAY:  # the legal cards as legal_sets gives them in this phase
        p0, p1 = play_legal(st, i, tb)
        if (p0 | p1) == U0:
            return -1
        c = _play(st.meta, st.cards, card, ptc, tb.masks, tb.params, i, p0, p1)
        return c if _in_set(c, p0, p1, card) else _lowest_card(p0, p1, ptc)
    p0, p1, d0, d1, flags = legal_sets(st, i, tb)
    nc = tb.params[P_CARDS]
    if ph == DISCARD:
        if (d0 | d1) == U0:
            return -1
        c = _discard(st.meta, st.cards, card, ptc, tb.masks, tb.params, i, d0, d1)
        return nc + (c if _in_set(c, d0, d1, card) else _lowest_card(d0, d1, ptc))
    if flags == 0:
        return -1
    fam = tb.params[P_FAMILY]
    if fam == FAMILY_MINEO:
        k = _mineo_special(st, i, tb, flags)
    elif fam == FAMILY_FRENCH:
        k = _french_special(st, i, tb, flags)
    else:
        k = _piedmont_special(st, i, tb, flags)
    if k < 0 or (flags & (1 << k)) == 0:
        k = lowest_bit(np.uint64(flags))
    return 2 * nc + k


@njit(cache=True, parallel=True)
def heuristic_actions(st, tb, idx, out):
    """out[k] = the heuristic's action in game idx[k] (-1 for games that are done)."""
    for k in prange(idx.shape[0]):
        out[k] = heuristic_row(st, idx[k], tb)


@njit(cache=True)
def heuristic_actions_serial(st, tb, idx, out):
    """heuristic_actions on the calling thread (a few games: no parallel region to start)."""
    for k in range(idx.shape[0]):
        out[k] = heuristic_row(st, idx[k], tb)


SERIAL_BELOW = 64  # games per call under which the heuristic runs on the calling thread


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
        kernel = heuristic_actions_serial if idx.shape[0] < SERIAL_BELOW else heuristic_actions
        kernel(env.state, env.tables, idx, out)
        return out
