"""Learned inference: determinizations weighted by a belief model, still exact on what the observer knows.

The uniform determinizer (:mod:`tarocchi_rl.search.determinize`) gives every deal the observer cannot tell from
the true one the same chance. A *belief model* knows better: from the seat's observation it predicts, for each
card ``c`` and each location ``l``, the probability ``b[c, l]`` that ``c`` is there (the other helper's
``beliefs(obs float32[B, obs_dim]) -> float32[B, C, L]``; :mod:`tarocchi_rl.policies.belief`). Skat programs
got much stronger by sampling the hidden cards from such a model (Buro et al. 2009; Solinas et al. 2019).

Locations (the privileged observation's order, :func:`~tarocchi_rl.core.obs_layout.build_privileged_layout`):

| l            | location                                                                          |
|--------------|-----------------------------------------------------------------------------------|
| 0 .. N-1     | the hand of relative seat l (seat ``(observer + l) % N``; 0: the observer's own,  |
|              | which holds unknown cards only in the Mineo early round: his cards to come)        |
| N            | the stock                                                                         |
| N + 1        | the declarer's face-down discard                                                  |

The target. Among the consistent deals ``d`` (exactly those the uniform sampler draws), deal ``d`` gets the
probability ``pi(d) ∝ prod over the unknown cards c of b[c, loc_d(c)]``: the model's per-card marginals,
combined as if independent and restricted to what the observer knows. A model that puts no mass on a
consistent deal cannot veto it: probabilities are floored at :data:`_BELIEF_FLOOR` before the logarithm. Every
determinization, whatever the model says, satisfies every constraint; the fix-ups the deal implies (Mineo: the
partner and his side's pigliata bonuses; the rewritten deal; French: no petit sec dealt, by rejection, exact
since the rest is proportional to pi) follow the sampled cards; which of the Piedmontese dealer's cards were the
stock stays uniform (the model's stock location does not apply: that stock is in his hand).

Two methods (``belief_method``):

**exact** (default): the weighted DP, sequential and exact. The cards that several piles may take (the uniform
sampler's DP classes, card by card, the capped category first) are placed one at a time; ``g_k(R)`` = the sum
over the placements of cards k.. into the rooms R of the product of their (per-card scaled) beliefs, tabled per
layer k (the count caps checked at the layer after the category), and card k goes to pile q with probability
``w[k, q] g_{k+1}(R - e_q) / g_k(R)``: exactly pi. Every layer has one layout (the uniform sampler's
LAYER_RECORD, the same in each): the rooms of the piles other than the widest, each over its whole range 0 ..
room (the widest's room is the rest), so that g_{k+1}(R - e_q) sits at layer k's index less pile q's stride and
a layer is a stencil over the next one (:func:`_dp_stencil`); entries no deal reaches hold 0. Each layer is
scaled to a maximum of 1 (a draw compares entries of one layer only), so no product underflows. The tables are
built once per root (a few ns an entry: about 0.7 ms at the start of a French deal, ~150,000 entries;
:data:`_MAX_EXACT_FLOATS` at most), a draw costs a few microseconds (2-4 times the uniform sampler's). A
position whose tables would be larger (Mineo's early round: up to eight piles) is sampled by SIR.

**sir**: sampling-importance-resampling. Per determinization, ``M`` (``belief_samples``) deals are drawn with
the exact uniform sampler, deal ``t`` gets the log weight ``sum over its unknown cards of log b[c, loc_t(c)]``
(cards that one pile only may take are the same in every deal and left out), and one of them is kept with
probability proportional to its weight: a one-pass weighted reservoir in log space (candidate t replaces the
kept one with probability ``w_t / (w_1 + ... + w_t)``), nothing stored but the kept piles. Bias and variance in
``M``: the kept deal's law runs from the uniform one (``M = 1``: the uniform sampler's own call, the identical
code path and random stream) to pi (``M -> inf``); for finite ``M`` it is pulled towards uniform, the more so
the further pi is from uniform (effective sample size ``M / (1 + CV^2)`` of the weights). With ~30 unknown
cards and a sharp model the weights span many orders of magnitude: SIR then keeps roughly the best of M
uniform deals, far from pi (measured: a 0.7-peaked model of the true deal puts 31 % of the unknown cards
where they are with M = 1, 43 % with M = 8, 48 % with M = 32, 82 % with the exact method). Each candidate costs
one uniform draw (about a microsecond) plus one addition per unknown card. A uniform model gives every candidate
the same weight: the kept deal is one of M independent uniform draws, itself uniform (the exact method's law
is then the uniform one too).

The belief model itself is evaluated once per root decision (the seat's knowledge is fixed there); its plan
(:func:`belief_plan`: ints int64[NB] and floats, below) is built once per search with the sampler's plan.

ints (bi), declared once (``BELIEF_INTS``, ``BELIEF_CARD``; :mod:`tarocchi_rl.core.offsets`); a DP layer's record is the
sampler's ``LAYER_RECORD``

| offset      | field             | meaning                                                            |
|-------------|-------------------|--------------------------------------------------------------------|
| 0           | B_MODE            | the method used: METHOD_UNIFORM, METHOD_SIR or METHOD_EXACT        |
| 1           | B_M               | SIR's candidates per determinization                               |
| 2           | B_K               | the DP's cards                                                     |
| 3           | B_KB              | the DP's cap layer (-1: none)                                      |
| 4           | B_NF              | the DP's floats                                                    |
| 5 .. 7      | (unused)          |                                                                    |
| 8 .. 263    | B_CARD + CARD_W k | DP card k's record (k < MAX_DP_CARDS)                              |
| 264 .. 3746 | B_LAY + LAY_W k   | DP layer k's record (1 .. K-1): the uniform sampler's LAYER_RECORD |

DP card k's record

| offset | field      | meaning                                    |
|--------|------------|--------------------------------------------|
| 0      | CARD_POS   | the card's position (word * 64 + bit)      |
| 1      | CARD_PILES | the piles that may take it (bit q: pile q) |

floats (bf): ``[0, _W_SIZE)`` SIR: the log weight of the card at position pos in pile q at ``q * 128 + pos``;
the DP: the scaled weight of card k in pile q at ``k * MAXP + q``; then the DP's layer tables.

Kernels: :func:`belief_plan` (once per root), :func:`weighted_sample_row` (per determinization; METHOD_UNIFORM:
:func:`~tarocchi_rl.search.determinize.sample_row`). Python: :func:`log_beliefs`, :func:`uniform_beliefs`,
:func:`plan_of`, :func:`determinize_weighted`.
"""

import numpy as np
from numba import njit, types
from numpy.typing import NDArray

from ..bits import U0, U1, bit, lowest_bit, seed_states, splitmix_next
from ..core.offsets import Layout
from ..core.state import BatchState, alloc_state
from ..core.tables import P_CARDS, P_PLAYERS
from ..variants import dispatch as family
from .determinize import (
    _INV53,
    _U11,
    CLS_PILES,
    I_FIX,
    I_K,
    I_KB,
    I_OBS,
    I_P,
    I_STATUS,
    KIND_DISCARD,
    KIND_STOCK,
    LAY_DROP,
    LAY_HI,
    LAY_LEFT,
    LAY_LO,
    LAY_OFF,
    LAY_STRIDE,
    LAY_W,
    M_CLS,
    M_FIX,
    M_U,
    MAX_TRIES,
    MAXP,
    PILE_ROOM,
    SET_W,
    Plan,
    _caps_hold,
    _cls,
    _copy_row,
    _draw_classes,
    _fix_meta,
    _pile,
    _scratch_i,
    _stack_buffer,
    _start_try,
    _store_piles,
    make_plan,
    sample_row,
)
from .determinize import PILE_KIND as _PILE_KIND
from .determinize import PILE_SEAT as _PILE_SEAT

#: a probability below this is taken as this (a model's zero never vetoes a consistent deal)
_BELIEF_FLOOR = 1e-6
#: belief_samples: SIR candidates per determinization (default, most)
DEFAULT_BELIEF_SAMPLES = 8
MAX_BELIEF_SAMPLES = 1024
#: the weighted DP's tables of one root, in floats (8 bytes each; filled at a few ns each: the start of a French
#: deal needs ~150,000); a position needing more (Mineo's early round) is sampled by SIR
_MAX_EXACT_FLOATS = 1 << 18
_N_POSITIONS = 128  # card positions: word * 64 + bit
MAX_DP_CARDS = _N_POSITIONS  # the weighted DP's cards (at most every position)
#: the methods (``belief_method``): the uniform sampler, SIR over M uniform candidates, the weighted DP (SIR where
#: its tables exceed _MAX_EXACT_FLOATS)
METHOD_UNIFORM, METHOD_SIR, METHOD_EXACT = range(3)
METHODS = {"exact": METHOD_EXACT, "sir": METHOD_SIR}

# the belief plan's ints (bi int64[NB]), declared once: the offsets, NB and the docstring's tables come from it
BELIEF_CARD = Layout("belief card", ("field", "meaning"), [
    ("CARD_POS", 1, "the card's position (word * 64 + bit)"),
    ("CARD_PILES", 1, "the piles that may take it (bit q: pile q)"),
], total="CARD_W")
BELIEF_INTS = Layout("belief ints", ("field", "meaning"), [
    ("B_MODE", 1, "the method used: METHOD_UNIFORM, METHOD_SIR or METHOD_EXACT"),
    ("B_M", 1, "SIR's candidates per determinization"),
    ("B_K", 1, "the DP's cards"),
    ("B_KB", 1, "the DP's cap layer (-1: none)"),
    ("B_NF", 1, "the DP's floats"),
    ("", 3),
    ("B_CARD + CARD_W k", BELIEF_CARD.total * MAX_DP_CARDS, "DP card k's record (k < MAX_DP_CARDS)"),
    ("B_LAY + LAY_W k", LAY_W * (MAX_DP_CARDS + 1), "DP layer k's record (1 .. K-1): the uniform sampler's "
                                                     "LAYER_RECORD"),
], total="NB")
CARD_POS = BELIEF_CARD["CARD_POS"]
CARD_PILES = BELIEF_CARD["CARD_PILES"]
CARD_W = BELIEF_CARD.total
B_MODE = BELIEF_INTS["B_MODE"]
B_M = BELIEF_INTS["B_M"]
B_K = BELIEF_INTS["B_K"]
B_KB = BELIEF_INTS["B_KB"]
B_NF = BELIEF_INTS["B_NF"]
B_CARD = BELIEF_INTS["B_CARD"]
B_LAY = BELIEF_INTS["B_LAY"]
NB = BELIEF_INTS.total
BELIEF_CARD.check_bound(globals())
BELIEF_INTS.check_bound(globals())
_W_SIZE = MAXP * _N_POSITIONS  # SIR: log weight [q * 128 + pos]; the DP: weight [k * MAXP + q]
_TWO_SETS = 2 * SET_W * MAXP  # the candidate's piles and the kept ones

_pair_u = _stack_buffer(types.uint64, _TWO_SETS, np.uint64)
_pile_f = _stack_buffer(types.float64, MAXP, np.float64)


def n_locations(n_players: int) -> int:
    """L: the locations of a card (module docstring's table)."""
    return n_players + 2


# ----------------------------------------------------------------------------------------------------------
# the log weights of a root


@njit(cache=True, _nrt=False)
def _pile_location(pi, q, n):
    """The belief location of hidden pile q (its seat relative to the plan's observer, the stock, the discard)."""
    kind = pi[_pile(q) + _PILE_KIND]
    if kind == KIND_STOCK:
        return n
    if kind == KIND_DISCARD:
        return n + 1
    return (pi[_pile(q) + _PILE_SEAT] - pi[I_OBS]) % n  # a hand, or (Mineo early round) a seat's cards to come


@njit(cache=True)
def _pile_log_weights(pi, pm, tb, logb, out):
    """out[q * 128 + pos] (float64[_W_SIZE]) = logb[the card at position pos, the location of pile q] for every card
    the plan's observer cannot locate, 0 elsewhere; ``logb`` float64[C, L] (:func:`log_beliefs`) of the plan's
    row, seen by its observer."""
    out[:_W_SIZE] = 0.0
    if pi[I_STATUS] != 1:
        return
    n = tb.params[P_PLAYERS]
    for q in range(pi[I_P]):
        loc = _pile_location(pi, q, n)
        for w in range(SET_W):
            x = pm[M_U + w]
            while x != U0:
                pos = 64 * w + lowest_bit(x)
                out[q * _N_POSITIONS + pos] = logb[tb.pos_to_card[pos], loc]
                x &= x - U1


# ----------------------------------------------------------------------------------------------------------
# SIR


@njit(cache=True, _nrt=False)
def _log_weight(pi, pm, lw, nw):
    """The log weight of the piles ``nw``: lw summed over their cards, less those placed for sure (M_FIX)."""
    t = 0.0
    for q in range(pi[I_P]):
        for w in range(SET_W):
            x = nw[SET_W * q + w] & ~pm[M_FIX + SET_W * q + w]
            while x != U0:
                t += lw[q * _N_POSITIONS + 64 * w + lowest_bit(x)]
                x &= x - U1
    return t


@njit(cache=True)
def _draw_piles(src, i, tb, pi, pm, pf, r, x, a, nw, dst, j, rng):
    """One exact uniform draw of the hidden piles into ``nw`` (``sample_row``'s draw, the deals the family's
    sample_rejected refuses (French: a petit sec) drawn again on dst row j), without the fix-ups. Returns (ok, the
    RNG state)."""
    fix = pi[I_FIX]
    for _ in range(MAX_TRIES):
        _start_try(pi, pm, r, nw)
        rng = _draw_classes(pi, pm, pf, r, x, a, nw, rng)
        if fix == 0:
            return True, rng
        _store_piles(src, i, pi, pm, nw, dst, j)
        if not family.sample_rejected(dst, j, fix, tb):
            return True, rng
    return False, rng


@njit(cache=True, _nrt=False)
def _keep_if_drawn(log_total, w, rng, nw, keep):
    """The weighted reservoir's step: candidate ``nw`` of log weight ``w`` replaces ``keep`` with probability
    exp(w - the new log total). Returns (the new log total, the RNG state)."""
    if log_total == -np.inf:
        log_total = w
    else:
        hi, lo = (log_total, w) if log_total >= w else (w, log_total)
        log_total = hi + np.log1p(np.exp(lo - hi))
    rng, z = splitmix_next(rng)
    if np.float64(z >> _U11) * _INV53 < np.exp(w - log_total):
        for k in range(SET_W * MAXP):
            keep[k] = nw[k]
    return log_total, rng


@njit(cache=True)
def _sir_piles(src, i, tb, pi, pm, pf, bi, bf, dst, j, keep, nw, rng):
    """SIR: bi[B_M] uniform candidates (nw), the kept one in ``keep``. Returns (ok, the RNG state)."""
    sc = _scratch_i()
    r = sc[:MAXP]
    x = sc[MAXP : 2 * MAXP]
    a = sc[2 * MAXP : 3 * MAXP]
    log_total = -np.inf
    for _ in range(bi[B_M]):
        ok, rng = _draw_piles(src, i, tb, pi, pm, pf, r, x, a, nw, dst, j, rng)
        if not ok:
            return False, rng
        log_total, rng = _keep_if_drawn(log_total, _log_weight(pi, pm, bf, nw), rng, nw, keep)
    return True, rng


# ----------------------------------------------------------------------------------------------------------
# the weighted DP: g_k(R) = sum over the piles q card k may take of w[k, q] * g_{k+1}(R - e_q)


@njit(cache=True, _nrt=False)
def _card(k):
    """The ints offset of DP card k's record (+ CARD_*)."""
    return B_CARD + CARD_W * k


@njit(cache=True, _nrt=False)
def _layer(k):
    """The ints offset of DP layer k's record (+ LAY_*)."""
    return B_LAY + LAY_W * k


@njit(cache=True, _nrt=False)
def _dp_cards(pi, pm, bi):
    """The DP's cards: the plan's DP classes card by card (capped category first), their piles; bi[B_KB] the first
    card after the category. Returns the cards."""
    k = 0
    bi[B_KB] = -1
    for c in range(pi[I_K]):
        if c == pi[I_KB]:
            bi[B_KB] = k
        for w in range(SET_W):
            x = pm[M_CLS + SET_W * c + w]
            while x != U0:
                bi[_card(k) + CARD_POS] = 64 * w + lowest_bit(x)
                bi[_card(k) + CARD_PILES] = pi[_cls(c) + CLS_PILES]
                k += 1
                x &= x - U1
    if pi[I_KB] >= 0 and pi[I_KB] >= pi[I_K]:
        bi[B_KB] = k
    bi[B_K] = k
    return k


@njit(cache=True, _nrt=False)
def _dp_layers(pi, bi, kk):
    """One layout for the tables of layers 1 .. K-1: every layer indexes the rooms left of the piles other than
    the widest (its room is the rest of LAY_LEFT) over their whole range 0 .. room, with the same strides, so
    that g_{k+1}(R - e_q) is layer k+1's entry at layer k's index less pile q's stride (0 for the dropped pile).
    Entries no deal reaches hold 0. Returns the floats needed (after the weights), -1 when a pile cannot be
    filled (fewer DP cards may go there than its room)."""
    n_piles = pi[I_P]
    drop, size = 0, 1
    for q in range(n_piles):
        room = pi[_pile(q) + PILE_ROOM]
        takers = 0
        for k in range(kk):
            takers += (bi[_card(k) + CARD_PILES] >> q) & 1
        if takers < room:
            return -1
        if room > pi[_pile(drop) + PILE_ROOM]:
            drop = q
    for q in range(n_piles):
        if q != drop:
            size *= pi[_pile(q) + PILE_ROOM] + 1
    if kk > 1 and size > (_MAX_EXACT_FLOATS - _W_SIZE) // (kk - 1):
        return _MAX_EXACT_FLOATS + 1  # too large: the caller falls back
    for k in range(1, kk):
        o = _layer(k)
        bi[o + LAY_LEFT] = kk - k
        bi[o + LAY_DROP] = drop
        bi[o + LAY_OFF] = _W_SIZE + (k - 1) * size
        stride = 1
        for q in range(n_piles):
            bi[o + LAY_LO + q] = 0
            bi[o + LAY_HI + q] = pi[_pile(q) + PILE_ROOM]
            bi[o + LAY_STRIDE + q] = 0
            if q != drop:
                bi[o + LAY_STRIDE + q] = stride
                stride *= pi[_pile(q) + PILE_ROOM] + 1
    return _W_SIZE + max(kk - 1, 0) * size


@njit(cache=True, _nrt=False)
def _dp_g(pi, bi, bf, k, r):
    """g_k(r) (layer k scaled by its own constant; the rooms r int64[P]); 0 outside the layer's box."""
    if k == bi[B_KB] and not _caps_hold(pi, r):
        return 0.0
    if k >= bi[B_K]:
        return 1.0
    o = _layer(k)
    drop = bi[o + LAY_DROP]
    idx = bi[o + LAY_OFF]
    for q in range(pi[I_P]):
        x = r[q] - bi[o + LAY_LO + q]
        if x < 0 or r[q] > bi[o + LAY_HI + q]:
            return 0.0
        if q != drop:
            idx += x * bi[o + LAY_STRIDE + q]
    return bf[idx]


@njit(cache=True, _nrt=False)
def _dp_split(pi, bi, bf, k, r, acc):
    """acc[q] = w[k, q] * g_{k+1}(r - e_q) for the piles card k may take (0 elsewhere); returns their sum."""
    piles = bi[_card(k) + CARD_PILES]
    n_piles = pi[I_P]
    if k + 1 >= bi[B_K] or k + 1 == bi[B_KB]:  # the last card, or the caps to check: g one by one
        total = 0.0
        for q in range(n_piles):
            acc[q] = 0.0
            if (piles >> q) & 1 and r[q] > 0:
                r[q] -= 1
                acc[q] = bf[k * MAXP + q] * _dp_g(pi, bi, bf, k + 1, r)
                r[q] += 1
                total += acc[q]
        return total
    o = _layer(k + 1)  # a tabled layer: r's index there once, then r - e_q is one stride less
    drop = bi[o + LAY_DROP]
    base = bi[o + LAY_OFF]
    n_out = 0  # coordinates of r outside layer k+1's box
    for q in range(n_piles):
        if q != drop:
            base += (r[q] - bi[o + LAY_LO + q]) * bi[o + LAY_STRIDE + q]
        if r[q] < bi[o + LAY_LO + q] or r[q] > bi[o + LAY_HI + q]:
            n_out += 1
    total = 0.0
    for q in range(n_piles):
        acc[q] = 0.0
        if (piles >> q) & 1 and r[q] > 0:
            out_q = 1 if (r[q] < bi[o + LAY_LO + q] or r[q] > bi[o + LAY_HI + q]) else 0
            if n_out - out_q == 0 and bi[o + LAY_LO + q] <= r[q] - 1 <= bi[o + LAY_HI + q]:
                idx = base if q == drop else base - bi[o + LAY_STRIDE + q]
                acc[q] = bf[k * MAXP + q] * bf[idx]
                total += acc[q]
    return total


@njit(cache=True, _nrt=False)
def _dp_stencil(pi, bi, bf, k, r, ws, st):
    """Layer k's table from layer k+1's (both tabled, neither the cap layer): entry t (rooms r, the layout's
    odometer, the first kept pile fastest with stride 1) = sum over the piles q card k may take, r[q] > 0, of
    w[k, q] * layer k+1's entry t - stride q. ``r`` int64[MAXP], ``ws`` float64[MAXP], ``st`` int64[MAXP]: scratch.
    Returns the layer's largest entry."""
    n_piles = pi[I_P]
    o = _layer(k)
    drop = bi[o + LAY_DROP]
    left = bi[o + LAY_LEFT]
    off = bi[o + LAY_OFF]
    nxt = bi[_layer(k + 1) + LAY_OFF]
    size = nxt - off
    room_drop = bi[o + LAY_HI + drop]
    piles = bi[_card(k) + CARD_PILES]
    fast = 1 if drop == 0 else 0
    room_fast = bi[o + LAY_HI + fast]
    w_fast = bf[k * MAXP + fast] if (piles >> fast) & 1 else 0.0
    w_drop = bf[k * MAXP + drop] if (piles >> drop) & 1 else 0.0
    for q in range(n_piles):
        r[q] = 0
    top = 0.0
    t = 0
    while t < size:  # one run of the fast pile: the slower piles' rooms r fixed
        s, n_slow = 0, 0
        for q in range(n_piles):
            if q != drop and q != fast:
                s += r[q]
                if (piles >> q) & 1 and r[q] > 0:
                    ws[n_slow] = bf[k * MAXP + q]
                    st[n_slow] = bi[o + LAY_STRIDE + q]
                    n_slow += 1
        base = nxt + t
        x_lo = max(0, left - s - room_drop)  # r[fast] = x; the dropped pile's room, left - s - x, in range
        x_hi = min(room_fast, left - s)
        for x in range(min(x_lo, room_fast + 1)):  # unreachable rooms of the run: 0
            bf[off + t + x] = 0.0
        for x in range(max(x_hi + 1, 0), room_fast + 1):
            bf[off + t + x] = 0.0
        for x in range(x_lo, x_hi + 1):
            v = 0.0
            for u in range(n_slow):
                v += ws[u] * bf[base + x - st[u]]
            if x > 0:
                v += w_fast * bf[base + x - 1]
            if x < left - s:
                v += w_drop * bf[base + x]
            bf[off + t + x] = v
            top = max(top, v)
        t += room_fast + 1
        for q in range(n_piles):  # the slower piles' odometer
            if q != drop and q != fast:
                r[q] += 1
                if r[q] <= bi[o + LAY_HI + q]:
                    break
                r[q] = 0
    return top


@njit(cache=True, _nrt=False)
def _dp_fill(pi, bi, bf, r, acc, st):
    """The tables of layers K-1 .. 1, each scaled to a maximum of 1 (the draws of a layer's card compare entries
    of the next layer only): :func:`_dp_stencil` where both layers are plain tables, entry by entry
    (:func:`_dp_split`) for the last card and around the cap layer. Returns g_0 of the rooms (scaled): 0 when no
    deal is consistent."""
    kk = bi[B_K]
    for k in range(kk - 1, 0, -1):
        o = _layer(k)
        off = bi[o + LAY_OFF]
        end = bi[_layer(k + 1) + LAY_OFF] if k < kk - 1 else bi[B_NF]
        if k + 1 < kk and k != bi[B_KB] and k + 1 != bi[B_KB] and pi[I_P] >= 2:
            top = _dp_stencil(pi, bi, bf, k, r, acc, st)
        else:
            drop = bi[o + LAY_DROP]
            top = 0.0
            for q in range(pi[I_P]):
                r[q] = bi[o + LAY_LO + q]
            for t in range(end - off):  # r: the rooms of entry t (an odometer, pile 0 fastest, as the strides)
                s = 0
                for q in range(pi[I_P]):
                    if q != drop:
                        s += r[q]
                r[drop] = bi[o + LAY_LEFT] - s
                v = 0.0
                if bi[o + LAY_LO + drop] <= r[drop] <= bi[o + LAY_HI + drop]:
                    if k != bi[B_KB] or _caps_hold(pi, r):
                        v = _dp_split(pi, bi, bf, k, r, acc)
                bf[off + t] = v
                top = max(top, v)
                for q in range(pi[I_P]):
                    if q != drop:
                        r[q] += 1
                        if r[q] <= bi[o + LAY_HI + q]:
                            break
                        r[q] = bi[o + LAY_LO + q]
        if top > 0.0:
            for t in range(end - off):
                bf[off + t] /= top
    for q in range(pi[I_P]):
        r[q] = pi[_pile(q) + PILE_ROOM]
    if kk == 0:
        return 1.0
    if bi[B_KB] == 0 and not _caps_hold(pi, r):
        return 0.0
    return _dp_split(pi, bi, bf, 0, r, acc)


@njit(cache=True, _nrt=False)
def _dp_weights(pi, bi, bf, lw, kk):
    """w[k, q] = the belief of card k in pile q, scaled by its largest over the piles it may take."""
    for k in range(kk):
        pos = bi[_card(k) + CARD_POS]
        piles = bi[_card(k) + CARD_PILES]
        top = -np.inf
        for q in range(pi[I_P]):
            if (piles >> q) & 1:
                top = max(top, lw[q * _N_POSITIONS + pos])
        for q in range(MAXP):
            bf[k * MAXP + q] = np.exp(lw[q * _N_POSITIONS + pos] - top) if (piles >> q) & 1 else 0.0


@njit(cache=True)
def _dp_piles(pi, pm, bi, bf, nw, rng):
    """One draw of the weighted DP: card by card, pile q with probability w[k, q] g_{k+1}(R - e_q) / g_k(R), into
    nw (the fixed cards first). Returns (ok, the RNG state)."""
    sc = _scratch_i()
    r = sc[:MAXP]
    acc = _pile_f()
    _start_try(pi, pm, r, nw)
    for k in range(bi[B_K]):
        total = _dp_split(pi, bi, bf, k, r, acc)
        if not total > 0.0:
            return False, rng
        rng, z = splitmix_next(rng)
        target = np.float64(z >> _U11) * _INV53 * total
        q, run = -1, 0.0
        for t in range(pi[I_P]):
            if acc[t] > 0.0:
                q = t
                run += acc[t]
                if run > target:
                    break
        pos = bi[_card(k) + CARD_POS]
        nw[SET_W * q + pos // 64] |= bit(pos % 64)
        r[q] -= 1
    return True, rng


@njit(cache=True)
def _exact_piles(src, i, tb, pi, pm, bi, bf, dst, j, keep, rng):
    """The weighted DP's draw into ``keep``, the deals the family's sample_rejected refuses (French: a petit sec)
    drawn again. Returns (ok, the RNG state)."""
    fix = pi[I_FIX]
    for _ in range(MAX_TRIES):
        ok, rng = _dp_piles(pi, pm, bi, bf, keep, rng)
        if not ok:
            return False, rng
        if fix == 0:
            return True, rng
        _store_piles(src, i, pi, pm, keep, dst, j)
        if not family.sample_rejected(dst, j, fix, tb):
            return True, rng
    return False, rng


# ----------------------------------------------------------------------------------------------------------
# the belief plan and the sampler


@njit(cache=True, inline="always")
def belief_plan(pi, pm, tb, logb, method, m):
    """The belief sampler's plan of a root (ints int64[NB], floats): the sampler's plan ``pi``, ``pm`` (its
    observer's knowledge), the log beliefs ``logb`` float64[C, L] of that root, ``method`` (METHOD_*) and ``m``
    SIR candidates. bi[B_MODE] is the method used: METHOD_UNIFORM without beliefs (``method`` uniform, or SIR
    with one candidate), SIR where the weighted DP's tables would exceed _MAX_EXACT_FLOATS. (Inlined where it is
    compiled in: called from Python after a search kernel had compiled it as a callee, Numba's cached version
    failed to return its arrays, "NRT_adapt_ndarray_to_python: descr is NULL".)"""
    bi = np.zeros(NB, np.int64)
    bi[B_M] = m
    mode = method
    if pi[I_STATUS] != 1 or (method == METHOD_SIR and m <= 1):
        mode = METHOD_UNIFORM
    nf = _W_SIZE
    if mode == METHOD_EXACT:
        kk = _dp_cards(pi, pm, bi)
        nf = _dp_layers(pi, bi, kk) if kk <= MAX_DP_CARDS else -1
        if nf < 0 or nf > _MAX_EXACT_FLOATS:
            mode = METHOD_SIR if m > 1 else METHOD_UNIFORM
            nf = _W_SIZE
    bi[B_MODE] = mode
    bi[B_NF] = nf
    bf = np.zeros(nf, np.float64)
    if mode == METHOD_UNIFORM:
        return bi, bf
    lw = np.zeros(_W_SIZE, np.float64)
    _pile_log_weights(pi, pm, tb, logb, lw)
    if mode == METHOD_SIR:
        bf[:_W_SIZE] = lw
        return bi, bf
    _dp_weights(pi, bi, bf, lw, bi[B_K])
    r = np.zeros(MAXP, np.int64)
    acc = np.zeros(MAXP, np.float64)
    strides = np.zeros(MAXP, np.int64)
    if not _dp_fill(pi, bi, bf, r, acc, strides) > 0.0:  # not for a consistent plan (the beliefs are floored)
        bi[B_MODE] = METHOD_SIR if m > 1 else METHOD_UNIFORM
        bf[:_W_SIZE] = lw
    return bi, bf


@njit(cache=True)
def weighted_sample_row(src, i, p, tb, pi, pm, pf, bi, bf, dst, j):
    """One determinization of game ``i`` of ``src`` for seat ``p`` into game ``j`` of ``dst`` with the belief plan
    (bi, bf) of :func:`belief_plan` (the same row and seat): the weighted DP, SIR, or (METHOD_UNIFORM)
    ``sample_row`` itself. Randomness: ``dst.rng[j]``. Returns False (dst row = a plain copy) when the plan is
    inconsistent."""
    if bi[B_MODE] == METHOD_UNIFORM:
        return sample_row(src, i, p, tb, pi, pm, pf, dst, j)
    _copy_row(src, i, dst, j)
    if pi[I_STATUS] != 1 or pi[I_OBS] != p:
        return False
    buf = _pair_u()
    nw = buf[: SET_W * MAXP]
    keep = buf[SET_W * MAXP :]
    if bi[B_MODE] == METHOD_SIR:
        ok, rng = _sir_piles(src, i, tb, pi, pm, pf, bi, bf, dst, j, keep, nw, dst.rng[j])
    else:
        ok, rng = _exact_piles(src, i, tb, pi, pm, bi, bf, dst, j, keep, dst.rng[j])
    if not ok:
        dst.rng[j] = rng
        _copy_row(src, i, dst, j)
        return False
    _store_piles(src, i, pi, pm, keep, dst, j)
    dst.rng[j] = _fix_meta(dst, j, p, tb, pi, keep, rng)
    return True


@njit(cache=True)
def _weighted_serial(src, i, observer, tb, pi, pm, pf, bi, bf, dst):
    for j in range(dst.meta.shape[0]):
        weighted_sample_row(src, i, observer, tb, pi, pm, pf, bi, bf, dst, j)


# ----------------------------------------------------------------------------------------------------------
# Python


def uniform_beliefs(n_rows: int, n_players: int, n_cards: int) -> NDArray[np.float32]:
    """The uniform stand-in of a belief model: float32[n_rows, C, L], every location of every card 1 / L."""
    n_loc = n_locations(n_players)
    return np.full((n_rows, n_cards, n_loc), 1.0 / n_loc, np.float32)


def log_beliefs(probs: NDArray, n_players: int, n_cards: int) -> NDArray[np.float64]:
    """A belief model's output (float[B, C, L] probabilities, L = N + 2) as the search's log weights:
    float64[B, C, L], floored at :data:`_BELIEF_FLOOR`. A ValueError naming the shape or values otherwise."""
    arr = np.asarray(probs, np.float64)
    want = (n_cards, n_locations(n_players))
    if arr.ndim != 3 or arr.shape[1:] != want:
        raise ValueError(f"beliefs: expected float[B, {want[0]}, {want[1]}] (card x location), got shape "
                         f"{tuple(arr.shape)}")
    if not np.isfinite(arr).all() or (arr < 0).any():
        raise ValueError("beliefs: probabilities must be finite and >= 0")
    return np.ascontiguousarray(np.log(np.maximum(arr, _BELIEF_FLOOR)))


def belief_samples_checked(m: int) -> int:
    """``belief_samples`` in [1, MAX_BELIEF_SAMPLES] (a ValueError naming it otherwise)."""
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or not 1 <= m <= MAX_BELIEF_SAMPLES:
        raise ValueError(f"belief_samples must be an integer >= 1 and <= {MAX_BELIEF_SAMPLES}, got {m!r}")
    return int(m)


def method_code(method: str) -> int:
    """METHOD_* of a ``belief_method`` name (``exact`` or ``sir``); a ValueError naming them otherwise."""
    if method not in METHODS:
        raise ValueError(f"belief_method must be one of {', '.join(METHODS)}, got {method!r}")
    return METHODS[method]


def plan_of(src: BatchState, i: int, observer: int, tb, belief: NDArray, method: str = "exact",
            samples: int = DEFAULT_BELIEF_SAMPLES) -> tuple[Plan, NDArray[np.int64], NDArray[np.float64]]:
    """(the sampler's plan, the belief plan's ints and floats) of game ``i`` seen by ``observer`` with ``belief``
    (float[C, L] probabilities: one row of a belief model's output). RuntimeError when no deal is consistent."""
    samples = belief_samples_checked(samples)
    logb = log_beliefs(np.asarray(belief)[None], int(tb.params[P_PLAYERS]), int(tb.params[P_CARDS]))[0]
    plan = make_plan(src, int(i), int(observer), tb)
    bi, bf = belief_plan(plan.ints, plan.masks, tb, logb, method_code(method), samples)
    return plan, bi, bf


def determinize_weighted(src: BatchState, i: int, observer: int, tb, belief: NDArray, samples: int, n: int,
                         seed: int = 0, method: str = "sir") -> BatchState:
    """``n`` determinizations of game ``i`` of ``src`` for ``observer`` (a new BatchState, RNG from ``seed``)
    weighted by ``belief`` (float[C, L] probabilities: one row of a belief model's output): ``method`` ``sir``
    over ``samples`` uniform candidates, or ``exact`` (the weighted DP; module docstring). RuntimeError when no
    deal is consistent."""
    plan, bi, bf = plan_of(src, i, observer, tb, belief, method, samples)
    dst = alloc_state(int(n))
    dst.rng[:] = seed_states(seed, int(n))
    _weighted_serial(src, int(i), int(observer), tb, plan.ints, plan.masks, plan.f, bi, bf, dst)
    return dst
