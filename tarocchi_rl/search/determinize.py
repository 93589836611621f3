"""Exact, allocation-free determinization of the core's batch state, for Information-Set MCTS.

A determinization of game row ``i`` for ``observer`` copies the row and redistributes, uniformly at random
over every assignment consistent with what the observer knows, the cards he cannot locate. No history is
replayed: everything he knows is in the state, public inferences included (``cards[EXCLUDED + s]``, kept by
the kernels, see :mod:`tarocchi_rl.core.state`).

What the observer ``p`` knows, and how it is used:

- *Hidden piles* (the cards to redistribute are their contents; their sizes are public): each other seat's
  hand (less the poignée / accuso cards he showed, still pinned to him); the declarer's face-down discard
  when p did not make it (``DISCARDED`` less the shown trumps); an unseen stock (Mineo before the monte is
  shown, French before the bidding ends and in a garde sans / contre); Mineo early round: every seat's ten
  cards still to be dealt (p's own too) in ``deck``.
- *Per-card constraints*: a hand never takes a card of ``EXCLUDED + s`` (voids, failed (over)trumps, the
  called trump and the trumps above it, a shown monte / chien being the declarer's, scommessa, rivanto,
  poignée and accuso implications); the face-down discard takes only cards that may be discarded face down.
- *Counts*: after the declarer discarded a trump he holds at most ``DISCARDS_LEFT`` discardable cards
  (zero once the discard is over: then an exclusion); a Piedmontese accuso of the honours alone proves fewer
  than ten trumps at the time (at most 9 less those played since in the hand).
- *Deal-level*: French: no seat was dealt a petit sec (rejection of the rare samples that have one: exact,
  since the rest is uniform over a superset).

Sampling is exact: the unknown cards are grouped into classes with identical allowed piles (and count
category); a class allowed in one pile only goes there; for the others, ``g_k(R)`` = the number of ways to
place classes k.. into the remaining capacities R is tabulated by a DP over classes × capacity boxes (closed
forms: the last class, a multinomial; the one before it when the last is open to every pile, by
Vandermonde's identity). Each class then draws its split over the piles with probability proportional to
``multinomial * g_{k+1}`` (the one before an open last class: multivariate hypergeometric), and its cards are
split uniformly. Counts are float64 (relative error ~1e-16); random numbers come from ``dst.rng[j]``
(SplitMix64).

Hidden meta fixed from the sampled cards: Mineo, while the called trump's holder is unknown to p: ``PARTNER``,
``SIDE`` and the pigliata bonuses counted so far; Piedmontese, p not the dealer: which of the dealer's cards
were the stock (``STOCK``, uniform). The deal (``deck``) is rewritten to match the sampled hands.

Kernels: ``build_plan`` + ``fill_tables`` (once per root: the knowledge and the DP), ``sample_row`` (per
sample: about a microsecond, nothing allocated), ``determinize_row`` (both, with stack buffers) and the batched
``determinize_batch``. Python: :func:`determinize`, :func:`make_plan`.
"""

import math
from typing import NamedTuple

import numpy as np
from llvmlite import ir
from numba import carray, njit, prange, types
from numba.core import cgutils, config
from numba.extending import intrinsic

from ..bits import U0, U1, bit, bounded, kth_bit, lowest_bit, popcount, seed_states, splitmix_next
from ..cards import EX_BIT
from ..core.phases import DISCARD, DONE, EARLY
from ..core.state import (
    ACCUSO_DECL,
    BID_WORD,
    BONUS,
    CALLED,
    CONTRACT,
    DECLARER,
    DISCARDED,
    DISCARDS_LEFT,
    EXCLUDED,
    HAND,
    N_META,
    PARTNER,
    PHASE,
    PLAYED,
    SHOWN,
    SHOWN_BY,
    SIDE,
    STOCK,
    STOCK_SHOWN,
    WON,
    BatchState,
    alloc_state,
)
from ..core.tables import (
    CARD_BIT,
    CARD_WORD,
    FAMILY_FRENCH,
    FAMILY_MINEO,
    FAMILY_PIEDMONT,
    MK_PETIT,
    MK_PIGLIATA,
    MK_TRUMPS,
    P_FAMILY,
    P_FIRST_ROUND,
    P_HAND,
    P_PLAYERS,
    P_STOCK,
)
from ..engine import discardable
from ..variants import mineo

MAXP = 8  # piles (Mineo early round: 3 hands + 4 deals to come + the stock)
MAXK = 64  # classes
# plan ints (int64[NI])
I_STATUS, I_P, I_K, I_KB, I_NF, I_FLAGS, I_OBS, I_UNIV = range(8)
I_PILE = 16  # 4 per pile: kind, seat, capacity left for the DP classes, cap on category cards (-1 none)
I_CLS = I_PILE + 4 * MAXP  # 2 per class: size, allowed piles (bit mask)
LAY = 3 + 3 * MAXP  # per layer: table offset, dropped pile, cards left, lo[MAXP], hi[MAXP], stride[MAXP]
I_LAY = I_CLS + 2 * MAXK
NI = I_LAY + LAY * MAXK
# plan masks (uint64[NM], two words each)
M_PILE = 0  # the pile's unknown cards in the source row
M_FIX = 2 * MAXP  # cards allowed in that pile only
M_CLS = 4 * MAXP  # the DP classes
M_U = M_CLS + 2 * MAXK  # every unknown card
NM = M_U + 2
NF_STACK = 4096  # DP table entries determinize_row keeps on the stack (more: one heap array)
NS = 4 * MAXP  # int scratch of a sample
# pile kinds, flags
KIND_HAND, KIND_DISCARD, KIND_STOCK, KIND_FUTURE = range(4)
F_PARTNER, F_STOCK, F_PETIT, F_EARLY = 1, 2, 4, 8
MAX_TRIES = 100_000  # petit-sec rejections before giving up (status 0)

FACT = np.array([float(math.factorial(k)) for k in range(80)])
INV_FACT = np.array([1.0 / math.factorial(k) for k in range(80)])
_EXB = np.uint64(1) << np.uint64(EX_BIT)
_U11 = np.uint64(11)
_INV53 = 1.0 / 9007199254740992.0


class Plan(NamedTuple):
    """A root's knowledge and DP (see :func:`make_plan`): ints int64[NI], masks uint64[NM], f float64[*]."""

    ints: np.ndarray
    masks: np.ndarray
    f: np.ndarray


# ----------------------------------------------------------------------------------------------------------
# stack buffers (the kernels allocate nothing); plain arrays without the JIT


def _stack_buffer(nbtype, size, dtype):
    """An inline kernel returning a fresh 1-D array of ``size`` on the caller's stack (np.empty without JIT)."""
    if config.DISABLE_JIT:

        def buf():
            return np.zeros(size, dtype)

        return buf

    @intrinsic
    def _alloca(typingctx):
        def codegen(context, builder, signature, args):
            return cgutils.alloca_once(builder, ir.IntType(64) if nbtype != types.float64 else ir.DoubleType(),
                                       size=size)

        return types.CPointer(nbtype)(), codegen

    @njit(cache=True, inline="always")
    def buf():
        return carray(_alloca(), (size,))

    return buf


_scratch_i = _stack_buffer(types.int64, NS, np.int64)
_scratch_u = _stack_buffer(types.uint64, 2 * MAXP, np.uint64)
_plan_i = _stack_buffer(types.int64, NI, np.int64)
_plan_m = _stack_buffer(types.uint64, NM, np.uint64)
_plan_f = _stack_buffer(types.float64, NF_STACK, np.float64)


# ----------------------------------------------------------------------------------------------------------
# the plan: piles, classes, DP layers


@njit(cache=True, inline="always")
def _n2(x0, x1):
    return popcount(x0) + popcount(x1)


@njit(cache=True)
def _add_pile(pi, pm, q, kind, seat, c0, c1):
    pi[I_PILE + 4 * q] = kind
    pi[I_PILE + 4 * q + 1] = seat
    pi[I_PILE + 4 * q + 2] = _n2(c0, c1)
    pi[I_PILE + 4 * q + 3] = -1
    pm[M_PILE + 2 * q] = c0
    pm[M_PILE + 2 * q + 1] = c1
    pm[M_FIX + 2 * q] = U0
    pm[M_FIX + 2 * q + 1] = U0
    return q + 1


@njit(cache=True)
def build_plan(src, i, p, tb, pi, pm):
    """What seat ``p`` knows in game ``i`` of BatchState ``src``: hidden piles, classes of unknown cards and
    the DP layer boxes, into ``pi`` (int64[NI]) and ``pm`` (uint64[NM]). ``pi[I_NF]``: DP floats needed;
    ``pi[I_STATUS]``: 1 ok, 0 inconsistent (no assignment satisfies the constraints)."""
    m = src.meta[i]
    cd = src.cards
    fam = tb.params[P_FAMILY]
    n = tb.params[P_PLAYERS]
    decl = m[DECLARER]
    trumps = tb.masks[MK_TRUMPS, 0]
    for k in range(I_LAY):
        pi[k] = 0
    pi[I_STATUS] = 1
    pi[I_OBS] = p
    pi[I_KB] = -1
    if p < 0 or p >= n:
        pi[I_STATUS] = 0
        return
    flags = 0
    q = 0
    for s in range(n):  # the other hands, less the cards they showed (pinned to them)
        if s != p:
            c0 = cd[i, HAND + s, 0] & ~cd[i, SHOWN_BY + s, 0]
            c1 = cd[i, HAND + s, 1] & ~cd[i, SHOWN_BY + s, 1]
            if (c0 | c1) != U0:
                q = _add_pile(pi, pm, q, KIND_HAND, s, c0, c1)
    if decl >= 0 and decl != p:  # his face-down discard
        c0 = cd[i, DISCARDED, 0] & ~cd[i, SHOWN, 0]
        c1 = cd[i, DISCARDED, 1] & ~cd[i, SHOWN, 1]
        if (c0 | c1) != U0:
            q = _add_pile(pi, pm, q, KIND_DISCARD, decl, c0, c1)
    if fam != FAMILY_PIEDMONT and m[STOCK_SHOWN] != 1:  # an unseen stock (the Piedmontese one is the dealer's)
        c0 = cd[i, STOCK, 0]
        c1 = cd[i, STOCK, 1]
        if (c0 | c1) != U0:
            q = _add_pile(pi, pm, q, KIND_STOCK, -1, c0, c1)
    if fam == FAMILY_MINEO and m[PHASE] == EARLY:  # the cards still to be dealt, p's own included
        flags |= F_EARLY
        h = tb.params[P_HAND]
        for s in range(n):
            c0 = U0
            c1 = U0
            for k in range(h * s + tb.params[P_FIRST_ROUND], h * s + h):
                c = src.deck[i, k]
                if tb.card[c, CARD_WORD] == 0:
                    c0 |= bit(tb.card[c, CARD_BIT])
                else:
                    c1 |= bit(tb.card[c, CARD_BIT])
            q = _add_pile(pi, pm, q, KIND_FUTURE, s, c0, c1)
    n_piles = q
    pi[I_P] = n_piles
    u0 = U0
    u1 = U0
    for q in range(n_piles):
        u0 |= pm[M_PILE + 2 * q]
        u1 |= pm[M_PILE + 2 * q + 1]
    pm[M_U] = u0
    pm[M_U + 1] = u1
    # count caps: one category at a time (a trump discarded: discard phase; accuso: after it)
    cat0 = U0
    cat1 = U0
    d0, d1 = discardable(tb)
    if m[PHASE] == DISCARD and decl >= 0 and decl != p and (cd[i, SHOWN, 0] & trumps) != U0:
        for q in range(n_piles):
            if pi[I_PILE + 4 * q] == KIND_HAND and pi[I_PILE + 4 * q + 1] == decl:
                pi[I_PILE + 4 * q + 3] = m[DISCARDS_LEFT]
                cat0 = d0
                cat1 = d1
    if fam == FAMILY_PIEDMONT:
        for q in range(n_piles):
            s = pi[I_PILE + 4 * q + 1]
            if pi[I_PILE + 4 * q] == KIND_HAND and m[ACCUSO_DECL + s] >= 1:
                shown = cd[i, SHOWN_BY + s, 0] & trumps
                if popcount(shown) < 10:  # the honours alone: fewer than ten trumps then
                    pi[I_PILE + 4 * q + 3] = (9 - popcount(cd[i, PLAYED + s, 0] & trumps)
                                              - popcount(cd[i, HAND + s, 0] & shown))
                    cat0 = trumps
                    cat1 = U0
    # classes: split the unknown cards by the piles that may take them, then by category
    nk = 0
    if (u0 | u1) != U0:
        pm[M_CLS] = u0
        pm[M_CLS + 1] = u1
        pi[I_CLS + 1] = 0
        nk = 1
    for q in range(n_piles):
        kind = pi[I_PILE + 4 * q]
        if kind == KIND_HAND:
            s = pi[I_PILE + 4 * q + 1]
            a0 = ~cd[i, EXCLUDED + s, 0]
            a1 = ~cd[i, EXCLUDED + s, 1]
        elif kind == KIND_DISCARD:
            a0 = d0
            a1 = d1
        else:
            a0 = ~U0
            a1 = ~U0
        nk = _split(pi, pm, nk, a0, a1, q)
        if nk < 0:
            pi[I_STATUS] = 0
            return
    if (cat0 | cat1) != U0:
        nk = _split(pi, pm, nk, cat0, cat1, 62)
        if nk < 0:
            pi[I_STATUS] = 0
            return
    # single-pile classes are placed for sure; the others go to the DP, category classes first
    kd = 0
    for k in range(nk):
        a = pi[I_CLS + 2 * k + 1] & ((1 << MAXP) - 1)
        c0 = pm[M_CLS + 2 * k]
        c1 = pm[M_CLS + 2 * k + 1]
        if a == 0:
            pi[I_STATUS] = 0  # a card no pile may take
            return
        if (a & (a - 1)) == 0:
            q = 0
            while (a >> q) != 1:
                q += 1
            pm[M_FIX + 2 * q] |= c0
            pm[M_FIX + 2 * q + 1] |= c1
            continue
        pm[M_CLS + 2 * kd] = c0
        pm[M_CLS + 2 * kd + 1] = c1
        pi[I_CLS + 2 * kd] = _n2(c0, c1)
        pi[I_CLS + 2 * kd + 1] = pi[I_CLS + 2 * k + 1]
        kd += 1
    n_cat = 0
    for k in range(kd):  # insertion sort: category classes first, then by size
        for t in range(k, 0, -1):
            if _class_key(pi, t) < _class_key(pi, t - 1):
                _swap_classes(pi, pm, t, t - 1)
            else:
                break
    for k in range(kd):
        if (pi[I_CLS + 2 * k + 1] >> 62) & 1:
            n_cat += 1
        pi[I_CLS + 2 * k + 1] &= (1 << MAXP) - 1
    pi[I_K] = kd
    for q in range(n_piles):
        f0 = pm[M_FIX + 2 * q]
        f1 = pm[M_FIX + 2 * q + 1]
        pi[I_PILE + 4 * q + 2] -= _n2(f0, f1)
        if pi[I_PILE + 4 * q + 2] < 0:
            pi[I_STATUS] = 0
            return
        if pi[I_PILE + 4 * q + 3] >= 0:
            pi[I_PILE + 4 * q + 3] -= _n2(f0 & cat0, f1 & cat1)
            if pi[I_PILE + 4 * q + 3] < 0:
                pi[I_STATUS] = 0
                return
    if (cat0 | cat1) != U0:
        pi[I_KB] = n_cat
    # the last class open to every pile: the one before it in closed form too (Vandermonde)
    univ = 0
    if kd >= 2 and pi[I_CLS + 2 * kd - 1] == (1 << n_piles) - 1 and pi[I_KB] != kd - 1:
        univ = 1
    pi[I_UNIV] = univ
    # tabled layers 1 .. K-2 (K-3 with univ): the boxes of reachable capacities
    off = 1
    for k in range(1, kd - 1 - univ):
        base = I_LAY + LAY * k
        left = 0
        for t in range(k, kd):
            left += pi[I_CLS + 2 * t]
        pi[base + 2] = left
        size = 1
        drop = 0
        wmax = -1
        for q in range(n_piles):
            cap = pi[I_PILE + 4 * q + 2]
            pre = 0
            suf = 0
            for t in range(kd):
                if (pi[I_CLS + 2 * t + 1] >> q) & 1:
                    if t < k:
                        pre += pi[I_CLS + 2 * t]
                    else:
                        suf += pi[I_CLS + 2 * t]
            lo = max(0, cap - pre)
            hi = min(cap, suf)
            if lo > hi:
                pi[I_STATUS] = 0
                return
            pi[base + 3 + q] = lo
            pi[base + 3 + MAXP + q] = hi
            if hi - lo > wmax:
                wmax = hi - lo
                drop = q
        pi[base + 1] = drop
        for q in range(n_piles):
            if q != drop:
                pi[base + 3 + 2 * MAXP + q] = size
                size *= pi[base + 3 + MAXP + q] - pi[base + 3 + q] + 1
        pi[base] = off
        off += size
    pi[I_NF] = off
    pi[I_FLAGS] = flags | _meta_flags(src, i, p, tb)


@njit(cache=True)
def _meta_flags(src, i, p, tb):
    """Fix-ups the sampled cards need: Mineo partner, Piedmontese stock, French petit-sec check."""
    m = src.meta[i]
    fam = tb.params[P_FAMILY]
    f = 0
    if fam == FAMILY_MINEO and m[CONTRACT] == mineo.CALL and m[CALLED] >= 0:
        c = m[CALLED]
        if (src.cards[i, HAND + p, 0] & bit(tb.card[c, CARD_BIT])) == U0:
            known = False
            for s in range(4):
                if (src.cards[i, PLAYED + s, 0] & bit(tb.card[c, CARD_BIT])) != U0:
                    known = True
            if not known:
                f |= F_PARTNER
    if fam == FAMILY_PIEDMONT and m[DECLARER] != p:
        f |= F_STOCK
    if fam == FAMILY_FRENCH and not (m[PHASE] == DONE and m[BID_WORD] == -1):  # (not a deal annulled at once)
        f |= F_PETIT
    return f


@njit(cache=True)
def _split(pi, pm, nk, a0, a1, q):
    """Split every class by the set (a0, a1): the part inside gets bit q of its allowed mask."""
    for k in range(nk):
        c0 = pm[M_CLS + 2 * k]
        c1 = pm[M_CLS + 2 * k + 1]
        i0 = c0 & a0
        i1 = c1 & a1
        o0 = c0 & ~a0
        o1 = c1 & ~a1
        if (i0 | i1) == U0:
            continue
        if (o0 | o1) != U0:
            if nk >= MAXK:
                return -1
            pm[M_CLS + 2 * nk] = o0
            pm[M_CLS + 2 * nk + 1] = o1
            pi[I_CLS + 2 * nk + 1] = pi[I_CLS + 2 * k + 1]
            nk += 1
            pm[M_CLS + 2 * k] = i0
            pm[M_CLS + 2 * k + 1] = i1
        pi[I_CLS + 2 * k + 1] |= 1 << q
    return nk


@njit(cache=True)
def _class_key(pi, k):
    a = pi[I_CLS + 2 * k + 1]
    npiles = 0
    for q in range(MAXP):
        npiles += (a >> q) & 1
    return (1 - ((a >> 62) & 1)) * 100000 + npiles * 1000 + pi[I_CLS + 2 * k]


@njit(cache=True)
def _swap_classes(pi, pm, a, b):
    for t in range(2):
        x = pi[I_CLS + 2 * a + t]
        pi[I_CLS + 2 * a + t] = pi[I_CLS + 2 * b + t]
        pi[I_CLS + 2 * b + t] = x
        y = pm[M_CLS + 2 * a + t]
        pm[M_CLS + 2 * a + t] = pm[M_CLS + 2 * b + t]
        pm[M_CLS + 2 * b + t] = y


# ----------------------------------------------------------------------------------------------------------
# the DP


@njit(cache=True)
def _g(pi, pf, k, r):
    """Ways to place DP classes k.. into the remaining capacities r (int64[P]), float64."""
    n_piles = pi[I_P]
    kk = pi[I_K]
    if k == pi[I_KB]:  # every category card is placed: the caps hold
        for q in range(n_piles):
            ck = pi[I_PILE + 4 * q + 3]
            if ck >= 0 and pi[I_PILE + 4 * q + 2] - r[q] > ck:
                return 0.0
    if k >= kk:
        return 1.0
    if k == kk - 2 and pi[I_UNIV] == 1:  # sum over this class's splits of two multinomials: Vandermonde
        a = pi[I_CLS + 2 * k + 1]
        na = pi[I_CLS + 2 * k]
        v = FACT[pi[I_CLS + 2 * k + 2]]
        room = 0
        for q in range(n_piles):
            v *= INV_FACT[r[q]]
            if (a >> q) & 1:
                room += r[q]
        if room < na:
            return 0.0
        return v * FACT[room] * INV_FACT[room - na]
    if k == kk - 1:  # the last class: a multinomial
        a = pi[I_CLS + 2 * k + 1]
        v = FACT[pi[I_CLS + 2 * k]]
        for q in range(n_piles):
            if r[q] > 0:
                if ((a >> q) & 1) == 0:
                    return 0.0
                v *= INV_FACT[r[q]]
        return v
    base = I_LAY + LAY * k
    drop = pi[base + 1]
    idx = pi[base]
    for q in range(n_piles):
        x = r[q] - pi[base + 3 + q]
        if x < 0 or r[q] > pi[base + 3 + MAXP + q]:
            return 0.0
        if q != drop:
            idx += x * pi[base + 3 + 2 * MAXP + q]
    return pf[idx]


@njit(cache=True)
def _enum(pi, pf, k, r, x, a, target):
    """Sum over the splits x of class k into its piles (within r) of multinomial * g_{k+1}(r - x).

    With ``target`` >= 0, stops at the first split whose running sum exceeds it (x[t]: cards to pile a[t]).
    Returns the running sum. x, a : int64 scratch of MAXP.
    """
    n_piles = pi[I_P]
    nk = pi[I_CLS + 2 * k]
    al = pi[I_CLS + 2 * k + 1]
    na = 0
    for q in range(n_piles):
        if (al >> q) & 1:
            a[na] = q
            na += 1
            x[na - 1] = 0
    last = a[na - 1]
    fn = FACT[nk]
    total = 0.0
    head = 0  # sum of x[0 .. na-2]
    while True:
        rest = nk - head
        if rest <= r[last]:
            x[na - 1] = rest
            w = fn
            for t in range(na):
                w *= INV_FACT[x[t]]
                r[a[t]] -= x[t]
            w *= _g(pi, pf, k + 1, r)
            for t in range(na):
                r[a[t]] += x[t]
            total += w
            if target >= 0.0 and w > 0.0 and total > target:
                return total
        t = 0
        while t < na - 1:  # the next split (odometer over x[0 .. na-2])
            x[t] += 1
            head += 1
            if x[t] <= r[a[t]] and head <= nk:
                break
            head -= x[t]
            x[t] = 0
            t += 1
        if t == na - 1:
            return total


@njit(cache=True)
def fill_tables(pi, pf):
    """The DP tables of a plan (layers K-2 .. 1) and pf[0] = the number of consistent assignments."""
    if pi[I_STATUS] != 1:
        return
    kk = pi[I_K]
    n_piles = pi[I_P]
    sc = _scratch_i()
    r = sc[:MAXP]
    x = sc[MAXP : 2 * MAXP]
    a = sc[2 * MAXP : 3 * MAXP]
    top = kk - 2 - pi[I_UNIV]  # the last tabled layer
    for k in range(top, 0, -1):
        base = I_LAY + LAY * k
        off = pi[base]
        drop = pi[base + 1]
        left = pi[base + 2]
        size = pi[I_LAY + LAY * (k + 1)] - off if k < top else pi[I_NF] - off
        for t in range(size):
            s = 0
            for q in range(n_piles):
                if q != drop:
                    w = pi[base + 3 + MAXP + q] - pi[base + 3 + q] + 1
                    r[q] = pi[base + 3 + q] + (t // pi[base + 3 + 2 * MAXP + q]) % w
                    s += r[q]
            r[drop] = left - s
            v = 0.0
            if pi[base + 3 + drop] <= r[drop] <= pi[base + 3 + MAXP + drop]:
                ok = True
                if k == pi[I_KB]:
                    for q in range(n_piles):
                        ck = pi[I_PILE + 4 * q + 3]
                        if ck >= 0 and pi[I_PILE + 4 * q + 2] - r[q] > ck:
                            ok = False
                if ok:
                    v = _enum(pi, pf, k, r, x, a, -1.0)
            pf[off + t] = v
    for q in range(n_piles):
        r[q] = pi[I_PILE + 4 * q + 2]
    if kk == 0:
        pf[0] = 1.0
    elif kk == 1 or (kk == 2 and pi[I_UNIV] == 1):
        pf[0] = _g(pi, pf, 0, r)
    else:
        pf[0] = _enum(pi, pf, 0, r, x, a, -1.0)
    if not pf[0] > 0.0:
        pi[I_STATUS] = 0


# ----------------------------------------------------------------------------------------------------------
# sampling


@njit(cache=True)
def _copy_row(src, i, dst, j):
    for k in range(N_META):
        dst.meta[j, k] = src.meta[i, k]
    for k in range(src.cards.shape[1]):
        dst.cards[j, k, 0] = src.cards[i, k, 0]
        dst.cards[j, k, 1] = src.cards[i, k, 1]
    for k in range(src.deck.shape[1]):
        dst.deck[j, k] = src.deck[i, k]


@njit(cache=True)
def _deal_class(c0, c1, nk, x, a, na, nw, r):
    """Split the class (c0, c1) of nk cards uniformly: x[t] cards to pile a[t] (nw: uint64[2*MAXP] pile
    contents, updated). Returns the RNG state."""
    big = 0
    for t in range(1, na):
        if x[t] > x[big]:
            big = t
    left = nk
    for t in range(na):
        if t == big:
            continue
        q = a[t]
        for _ in range(x[t]):
            r, z = splitmix_next(r)
            e = bounded(z, left)
            n0 = popcount(c0)
            if e < n0:
                mk = bit(kth_bit(c0, e))
                c0 &= ~mk
                nw[2 * q] |= mk
            else:
                mk = bit(kth_bit(c1, e - n0))
                c1 &= ~mk
                nw[2 * q + 1] |= mk
            left -= 1
    nw[2 * a[big]] |= c0
    nw[2 * a[big] + 1] |= c1
    return r


@njit(cache=True)
def _write_set(dst, j, x0, x1, start, tb):
    """deck[j, start ...] = the dense ids of (x0, x1); returns the next position."""
    k = start
    while x0 != U0:
        dst.deck[j, k] = tb.pos_to_card[lowest_bit(x0)]
        x0 &= x0 - U1
        k += 1
    while x1 != U0:
        dst.deck[j, k] = tb.pos_to_card[64 + lowest_bit(x1)]
        x1 &= x1 - U1
        k += 1
    return k


@njit(cache=True)
def _petit_sec(dst, j, tb):
    """Whether some seat's dealt hand (French) is a petit sec."""
    m = dst.meta[j]
    cd = dst.cards
    petit = tb.masks[MK_PETIT, 0]
    trumps = tb.masks[MK_TRUMPS, 0]
    for s in range(tb.params[P_PLAYERS]):
        d = cd[j, HAND + s, 0] | cd[j, PLAYED + s, 0]
        if s == m[DECLARER] and m[STOCK_SHOWN] == 1:
            d = (d | cd[j, DISCARDED, 0]) & ~cd[j, STOCK, 0]
        if (d & trumps) == petit and (d & _EXB) == U0:
            return True
    return False


@njit(cache=True)
def _fix_partner(dst, j, tb):
    """Mineo: the holder of the called trump is the partner; sides and pigliata bonuses follow."""
    m = dst.meta[j]
    cd = dst.cards
    mk = bit(tb.card[m[CALLED], CARD_BIT])
    for s in range(4):
        if (cd[j, HAND + s, 0] & mk) != U0:
            m[PARTNER] = s
    for s in range(4):
        m[SIDE + s] = 0 if (s == m[DECLARER] or s == m[PARTNER]) else 1
    m[BONUS + mineo.J_PIGLIATA] = 0
    m[BONUS + 8 + mineo.J_PIGLIATA] = 0
    pig = tb.masks[MK_PIGLIATA, 0]
    while pig != U0:  # each pigliata card won from the other side in a completed trick
        b = pig & (~pig + U1)
        pig &= ~b
        for w in range(4):
            if (cd[j, WON + w, 0] & b) != U0:
                for s in range(4):
                    if (cd[j, PLAYED + s, 0] & b) != U0 and m[SIDE + s] != m[SIDE + w]:
                        m[BONUS + 8 * m[SIDE + w] + mineo.J_PIGLIATA] += 1


@njit(cache=True)
def _fix_deck(dst, j, p, tb, pi, nw):
    """Rewrite the deal of game j to match its cards (the observer's own block kept)."""
    m = dst.meta[j]
    cd = dst.cards
    n = tb.params[P_PLAYERS]
    h = tb.params[P_HAND]
    fam = tb.params[P_FAMILY]
    n_piles = pi[I_P]
    if pi[I_FLAGS] & F_EARLY:
        for q in range(n_piles):
            if pi[I_PILE + 4 * q] == KIND_FUTURE:
                s = pi[I_PILE + 4 * q + 1]
                if s != p:
                    _write_set(dst, j, cd[j, HAND + s, 0], cd[j, HAND + s, 1], h * s, tb)
                _write_set(dst, j, nw[2 * q], nw[2 * q + 1], h * s + tb.params[P_FIRST_ROUND], tb)
    else:
        taken = fam == FAMILY_PIEDMONT or m[STOCK_SHOWN] == 1
        for s in range(n):
            if s == p:
                continue
            d0 = cd[j, HAND + s, 0] | cd[j, PLAYED + s, 0]
            d1 = cd[j, HAND + s, 1] | cd[j, PLAYED + s, 1]
            if s == m[DECLARER] and taken:
                d0 = (d0 | cd[j, DISCARDED, 0]) & ~cd[j, STOCK, 0]
                d1 = (d1 | cd[j, DISCARDED, 1]) & ~cd[j, STOCK, 1]
            _write_set(dst, j, d0, d1, h * s, tb)
    _write_set(dst, j, cd[j, STOCK, 0], cd[j, STOCK, 1], n * h, tb)


@njit(cache=True)
def _resample_stock(dst, j, tb, r):
    """Piedmontese: which of the dealer's cards were the stock, uniformly (p is not the dealer)."""
    cd = dst.cards
    d = dst.meta[j, DECLARER]
    a0 = cd[j, HAND + d, 0] | cd[j, PLAYED + d, 0] | cd[j, DISCARDED, 0]
    a1 = cd[j, HAND + d, 1] | cd[j, PLAYED + d, 1] | cd[j, DISCARDED, 1]
    s0 = U0
    s1 = U0
    left = _n2(a0, a1)
    for _ in range(tb.params[P_STOCK]):
        r, z = splitmix_next(r)
        e = bounded(z, left)
        n0 = popcount(a0)
        if e < n0:
            mk = bit(kth_bit(a0, e))
            a0 &= ~mk
            s0 |= mk
        else:
            mk = bit(kth_bit(a1, e - n0))
            a1 &= ~mk
            s1 |= mk
        left -= 1
    cd[j, STOCK, 0] = s0
    cd[j, STOCK, 1] = s1
    return r


@njit(cache=True)
def sample_row(src, i, p, tb, pi, pm, pf, dst, j):
    """One determinization of game ``i`` of ``src`` for seat ``p`` into game ``j`` of ``dst`` from a plan
    (``build_plan`` + ``fill_tables`` of the same row and seat), with ``dst.rng[j]``. Allocates nothing.
    Returns False (dst row = a plain copy) when the plan is inconsistent."""
    _copy_row(src, i, dst, j)
    if pi[I_STATUS] != 1 or pi[I_OBS] != p:
        return False
    n_piles = pi[I_P]
    kk = pi[I_K]
    u0 = pm[M_U]
    u1 = pm[M_U + 1]
    sc = _scratch_i()
    r = sc[:MAXP]
    x = sc[MAXP : 2 * MAXP]
    a = sc[2 * MAXP : 3 * MAXP]
    nw = _scratch_u()
    rng = dst.rng[j]
    cd = dst.cards
    flags = pi[I_FLAGS]
    ok = False
    for _ in range(MAX_TRIES):
        for q in range(n_piles):
            r[q] = pi[I_PILE + 4 * q + 2]
            nw[2 * q] = pm[M_FIX + 2 * q]
            nw[2 * q + 1] = pm[M_FIX + 2 * q + 1]
        total = pf[0]
        for k in range(kk):
            nk = pi[I_CLS + 2 * k]
            al = pi[I_CLS + 2 * k + 1]
            if k == kk - 1:  # the last class takes what is left
                na = 0
                for q in range(n_piles):
                    if (al >> q) & 1:
                        a[na] = q
                        x[na] = r[q]
                        na += 1
            elif k == kk - 2 and pi[I_UNIV] == 1:  # its split is multivariate hypergeometric
                na = 0
                room = 0
                for q in range(n_piles):
                    if (al >> q) & 1:
                        a[na] = q
                        x[na] = 0
                        room += r[q]
                        na += 1
                for _d in range(nk):
                    rng, z = splitmix_next(rng)
                    e = bounded(z, room)
                    t = 0
                    while e >= r[a[t]] - x[t]:
                        e -= r[a[t]] - x[t]
                        t += 1
                    x[t] += 1
                    room -= 1
            else:
                rng, z = splitmix_next(rng)
                target = np.float64(z >> _U11) * _INV53 * total
                got = _enum(pi, pf, k, r, x, a, target)
                if got <= target:  # rounding at the very end: the last split with a weight
                    _enum(pi, pf, k, r, x, a, got * (1.0 - 1e-12))
                na = 0
                for q in range(n_piles):
                    if (al >> q) & 1:
                        na += 1
            for t in range(na):
                r[a[t]] -= x[t]
            if k < kk - 2 or (k == kk - 2 and pi[I_UNIV] == 0):
                total = _g(pi, pf, k + 1, r)
            rng = _deal_class(pm[M_CLS + 2 * k], pm[M_CLS + 2 * k + 1], nk, x, a, na, nw, rng)
        for q in range(n_piles):  # the piles back into the row
            kind = pi[I_PILE + 4 * q]
            if kind == KIND_HAND:
                row = HAND + pi[I_PILE + 4 * q + 1]
            elif kind == KIND_DISCARD:
                row = DISCARDED
            elif kind == KIND_STOCK:
                row = STOCK
            else:
                continue
            cd[j, row, 0] = (src.cards[i, row, 0] & ~u0) | nw[2 * q]
            cd[j, row, 1] = (src.cards[i, row, 1] & ~u1) | nw[2 * q + 1]
        if (flags & F_PETIT) == 0 or not _petit_sec(dst, j, tb):
            ok = True
            break
    if not ok:
        dst.rng[j] = rng
        _copy_row(src, i, dst, j)
        return False
    if flags & F_PARTNER:
        _fix_partner(dst, j, tb)
    if flags & F_STOCK:
        rng = _resample_stock(dst, j, tb, rng)
    _fix_deck(dst, j, p, tb, pi, nw)
    dst.rng[j] = rng
    return True


# ----------------------------------------------------------------------------------------------------------
# entry points


@njit(cache=True)
def determinize_row(src, i, observer, tb, dst, j):
    """Copy game ``i`` of BatchState ``src`` into game ``j`` of ``dst`` with every card ``observer`` cannot
    locate redistributed uniformly over the consistent assignments (randomness: ``dst.rng[j]``).

    Builds the plan on the stack (a heap array only when the DP needs more than NF_STACK floats). Returns
    True, or False (a plain copy) when the position admits no consistent assignment (never for a real one).
    """
    pi = _plan_i()
    pm = _plan_m()
    build_plan(src, i, observer, tb, pi, pm)
    if pi[I_NF] <= NF_STACK:
        pf = _plan_f()
        fill_tables(pi, pf)
        return sample_row(src, i, observer, tb, pi, pm, pf, dst, j)
    pf = np.empty(pi[I_NF], np.float64)
    fill_tables(pi, pf)
    return sample_row(src, i, observer, tb, pi, pm, pf, dst, j)


@njit(cache=True)
def _plan_row(src, i, observer, tb, pi, pm):
    build_plan(src, i, observer, tb, pi, pm)
    pf = np.empty(max(pi[I_NF], 1), np.float64)
    fill_tables(pi, pf)
    return pf


@njit(cache=True, parallel=True)
def determinize_batch(src, i, observer, tb, dst):
    """Fill every game of ``dst`` with a determinization of game ``i`` of ``src`` for ``observer`` (each game
    its own RNG ``dst.rng[j]``; the plan is built once). Returns False when the position is inconsistent."""
    pi = np.empty(NI, np.int64)
    pm = np.empty(NM, np.uint64)
    pf = _plan_row(src, i, observer, tb, pi, pm)
    for j in prange(dst.meta.shape[0]):
        sample_row(src, i, observer, tb, pi, pm, pf, dst, j)
    return pi[I_STATUS] == 1


@njit(cache=True, parallel=True)
def sample_batch(src, i, observer, tb, pi, pm, pf, dst):
    """determinize_batch from a ready plan (see :func:`make_plan`)."""
    for j in prange(dst.meta.shape[0]):
        sample_row(src, i, observer, tb, pi, pm, pf, dst, j)


def make_plan(src: BatchState, i: int, observer: int, tb) -> Plan:
    """The knowledge and DP of game ``i`` of ``src`` seen by ``observer``, for repeated sampling with
    ``sample_row(src, i, observer, tb, *plan, dst, j)`` or ``sample_batch``. RuntimeError if inconsistent."""
    pi = np.empty(NI, np.int64)
    pm = np.empty(NM, np.uint64)
    pf = _plan_row(src, int(i), int(observer), tb, pi, pm)
    if pi[I_STATUS] != 1:
        raise RuntimeError(f"game {i}: no card assignment is consistent with what seat {observer} knows")
    return Plan(pi, pm, pf)


def determinize(src: BatchState, i: int, observer: int, tb, n: int = None, dst: BatchState = None,
                seed: int = None) -> BatchState:
    """Determinizations of game ``i`` of ``src`` for seat ``observer``.

    src : BatchState (meta int32[B, 80], cards uint64[B, N_SETS, 2], deck int16[B, 78], rng uint64[B])
    tb : the variant's RuleTables
    n / dst : a new BatchState of ``n`` games (RNG from ``seed``), or fill every game of ``dst``
    Returns the BatchState whose every game is an independent uniform sample of the deals ``observer`` cannot
    tell from game ``i``. RuntimeError when none exists (an inconsistent state).
    """
    if dst is None:
        dst = alloc_state(int(n))
        dst.rng[:] = seed_states(0 if seed is None else seed, int(n))
    if not determinize_batch(src, int(i), int(observer), tb, dst):
        raise RuntimeError(f"game {i}: no card assignment is consistent with what seat {observer} knows")
    return dst
