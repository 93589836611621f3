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
  (zero once the discard is over: then an exclusion); the family's ``hand_cap`` (a Piedmontese accuso of the
  honours alone proves fewer than ten trumps at the time: at most 9 less those played since in the hand).
- *Deal-level*: the family's ``sample_rejected`` (French: no seat was dealt a petit sec; rejection of the rare
  samples that have one: exact, since the rest is uniform over a superset).

What is the family's comes from its hooks (:data:`tarocchi_rl.variants.contract.KERNEL_HOOKS`, through the
generated dispatch): whether the stock is a pile of its own or in the declarer's hand (``stock_in_hand``), the
cards still to be dealt (``cards_dealt``), the count caps (``hand_cap``), the rejection (``sample_rejected``) and
the hidden meta a sample fixes (``sample_fixes``, ``fix_sample``). This module names no family.

Sampling is exact: the unknown cards are grouped into classes with identical allowed piles (and count
category); a class allowed in one pile only goes there; for the others, ``g_k(R)`` = the number of ways to
place classes k.. into the remaining capacities R is tabulated by a DP over classes × capacity boxes (closed
forms: the last class, a multinomial; the one before it when the last is open to every pile, by
Vandermonde's identity). Each class then draws its split over the piles with probability proportional to
``multinomial * g_{k+1}`` (the one before an open last class: multivariate hypergeometric), and its cards are
split uniformly. Counts are float64 (relative error ~1e-16); random numbers come from ``dst.rng[j]``
(SplitMix64).

Hidden meta fixed from the sampled cards (the family's ``fix_sample``): Mineo, while the called trump's holder
is unknown to p: ``PARTNER``, ``SIDE`` and the pigliata bonuses counted so far; Piedmontese, p not the dealer:
which of the dealer's cards were the stock (``STOCK``, uniform). The deal (``deck``) is rewritten to match the
sampled hands.

Kernels: ``build_plan`` + ``fill_tables`` (once per root: the knowledge and the DP), ``sample_row`` (per
sample: about a microsecond, nothing allocated), ``determinize_row`` (both, with stack buffers) and the batched
``_determinize_batch``. Python: :func:`determinize`, :func:`make_plan`.

``build_plan``, ``fill_tables`` and ``sample_row`` are sequences of small steps, one kernel each, compiled
without reference counting (``@njit(cache=True, _nrt=False)``: a step allocates nothing) so that LLVM inlines
them at no cost. (Numba's ``inline="always"`` leaves an incref / decref pair per array argument that its
reference-count pruning does not remove around loops: 10 to 40 % slower here.)

The plan
--------
``build_plan`` writes a root's knowledge, ``fill_tables`` its DP, and ``sample_row`` reads both, from three flat
arrays that a kernel can keep on its stack: ints int64[NI], masks uint64[NM] (a card set is two words, the card
positions 0-63 and 64-127) and floats float64[ints[I_NF]]. The offsets and the tables below come from one
declaration per array or record (``PLAN_INTS``, ``PILE_RECORD``, ``CLASS_RECORD``, ``LAYER_RECORD``,
``PLAN_MASKS``; :mod:`tarocchi_rl.core.offsets`): a table is ``LAYOUT.table()`` pasted, which
``tests/core/test_layouts.py`` checks.

ints: a header, then a record per hidden pile q < P, per DP class k < K and per tabled DP layer k

| offset      | field             | meaning                                                                            |
|-------------|-------------------|------------------------------------------------------------------------------------|
| 0           | I_STATUS          | 1 ok, 0 inconsistent (no assignment satisfies the constraints)                     |
| 1           | I_P               | P, the hidden piles (at most MAXP)                                                 |
| 2           | I_K               | K, the DP classes (at most MAXK)                                                   |
| 3           | I_KB              | the first DP class after the category classes: where the count caps are checked    |
|             |                   | (-1: no cap)                                                                       |
| 4           | I_NF              | the DP floats needed                                                               |
| 5           | I_FLAGS           | F_EARLY: the deal is rewritten from the piles of the cards to come                 |
| 6           | I_OBS             | the observer (a plan belongs to its seat)                                          |
| 7           | I_UNIV            | 1: the last class is open to every pile (one more closed form)                     |
| 8           | I_FIX             | the family's fix-ups of a sample (its sample_fixes; 0: none), for its              |
|             |                   | sample_rejected and fix_sample                                                     |
| 9 .. 15     | (unused)          |                                                                                    |
| 16 .. 47    | I_PILE + PILE_W q | pile q's record (q < MAXP)                                                         |
| 48 .. 175   | I_CLS + CLS_W k   | DP class k's record (k < MAXK)                                                     |
| 176 .. 1903 | I_LAY + LAY_W k   | DP layer k's record (k < MAXK)                                                     |

a pile's record, from ``I_PILE + PILE_W q``

| offset | field     | meaning                                                                |
|--------|-----------|------------------------------------------------------------------------|
| 0      | PILE_KIND | KIND_HAND, KIND_DISCARD, KIND_STOCK or KIND_FUTURE (Mineo early round) |
| 1      | PILE_SEAT | its seat (the discard: the declarer's; the stock: -1)                  |
| 2      | PILE_ROOM | its capacity left for the DP classes                                   |
| 3      | PILE_CAP  | the most category cards it may take from the DP classes (-1: no cap)   |

a DP class's record, from ``I_CLS + CLS_W k``

| offset | field     | meaning                                                                                         |
|--------|-----------|-------------------------------------------------------------------------------------------------|
| 0      | CLS_SIZE  | the class's cards                                                                               |
| 1      | CLS_PILES | the piles that may take them (bit q: pile q); while the plan is built, bit CLS_CATEGORY marks a |
|        |           | class of the capped category                                                                    |

a DP layer's record, from ``I_LAY + LAY_W k`` (tabled layers only: 1 <= k <= K-2, K-3 with I_UNIV)

| offset   | field          | meaning                                                           |
|----------|----------------|-------------------------------------------------------------------|
| 0        | LAY_OFF        | where the table of layer k starts in the floats                   |
| 1        | LAY_DROP       | the pile left out of the index (its room is the rest of LAY_LEFT) |
| 2        | LAY_LEFT       | the cards of classes k.. (the rooms add up to it)                 |
| 3 .. 10  | LAY_LO + q     | the least room of pile q with classes 0..k-1 placed               |
| 11 .. 18 | LAY_HI + q     | the most                                                          |
| 19 .. 26 | LAY_STRIDE + q | the index stride of pile q (not for the dropped pile)             |

masks: a card set (SET_W = 2 words) per entry

| offset     | entry        | meaning                                          |
|------------|--------------|--------------------------------------------------|
| 0 .. 15    | M_PILE + 2 q | pile q's unknown cards in the source row         |
| 16 .. 31   | M_FIX + 2 q  | the cards only pile q may take (placed for sure) |
| 32 .. 159  | M_CLS + 2 k  | DP class k                                       |
| 160 .. 161 | M_U          | every unknown card                               |

floats: ``f[0]`` the number of consistent assignments; ``g_k(R)`` at ``f[LAY_OFF + sum over q != LAY_DROP of
(R[q] - LAY_LO[q]) * LAY_STRIDE[q]]`` for the tabled layers (the others are closed forms).
"""

import math
from typing import NamedTuple

import numpy as np
from llvmlite import ir
from numba import carray, njit, prange, types
from numba.core import cgutils, config
from numba.extending import intrinsic

from ..bits import U0, U1, bit, bounded, draw_bits, lowest_bit, popcount, seed_states, splitmix_next
from ..core.offsets import Layout
from ..core.parallel import game_index
from ..core.phases import DISCARD
from ..core.state import (
    DECLARER,
    DISCARDED,
    DISCARDS_LEFT,
    EXCLUDED,
    HAND,
    N_META,
    PHASE,
    PLAYED,
    SHOWN,
    SHOWN_BY,
    STOCK,
    STOCK_SHOWN,
    BatchState,
    alloc_state,
)
from ..core.tables import (
    CARD_BIT,
    CARD_WORD,
    MK_TRUMPS,
    P_HAND,
    P_PLAYERS,
    P_STOCK,
)
from ..engine import discardable
from ..variants import dispatch as family

MAXP = 8  # piles (Mineo early round: 3 hands + 4 deals to come + the stock)
MAXK = 64  # classes
SET_W = 2  # the words of a card set
# the plan's layout, declared once: the offsets, record widths, NI, NM and the docstring's tables come from it
PILE_RECORD = Layout("pile", ("field", "meaning"), [
    ("PILE_KIND", 1, "KIND_HAND, KIND_DISCARD, KIND_STOCK or KIND_FUTURE (Mineo early round)"),
    ("PILE_SEAT", 1, "its seat (the discard: the declarer's; the stock: -1)"),
    ("PILE_ROOM", 1, "its capacity left for the DP classes"),
    ("PILE_CAP", 1, "the most category cards it may take from the DP classes (-1: no cap)"),
], total="PILE_W")
CLASS_RECORD = Layout("class", ("field", "meaning"), [
    ("CLS_SIZE", 1, "the class's cards"),
    ("CLS_PILES", 1, "the piles that may take them (bit q: pile q); while the plan is built, bit CLS_CATEGORY "
                     "marks a class of the capped category"),
], total="CLS_W")
LAYER_RECORD = Layout("layer", ("field", "meaning"), [
    ("LAY_OFF", 1, "where the table of layer k starts in the floats"),
    ("LAY_DROP", 1, "the pile left out of the index (its room is the rest of LAY_LEFT)"),
    ("LAY_LEFT", 1, "the cards of classes k.. (the rooms add up to it)"),
    ("LAY_LO + q", MAXP, "the least room of pile q with classes 0..k-1 placed"),
    ("LAY_HI + q", MAXP, "the most"),
    ("LAY_STRIDE + q", MAXP, "the index stride of pile q (not for the dropped pile)"),
], total="LAY_W")
PLAN_INTS = Layout("ints", ("field", "meaning"), [
    ("I_STATUS", 1, "1 ok, 0 inconsistent (no assignment satisfies the constraints)"),
    ("I_P", 1, "P, the hidden piles (at most MAXP)"),
    ("I_K", 1, "K, the DP classes (at most MAXK)"),
    ("I_KB", 1, "the first DP class after the category classes: where the count caps are checked (-1: no cap)"),
    ("I_NF", 1, "the DP floats needed"),
    ("I_FLAGS", 1, "F_EARLY: the deal is rewritten from the piles of the cards to come"),
    ("I_OBS", 1, "the observer (a plan belongs to its seat)"),
    ("I_UNIV", 1, "1: the last class is open to every pile (one more closed form)"),
    ("I_FIX", 1, "the family's fix-ups of a sample (its sample_fixes; 0: none), for its sample_rejected and "
                 "fix_sample"),
    ("", 7),
    ("I_PILE + PILE_W q", PILE_RECORD.total * MAXP, "pile q's record (q < MAXP)"),
    ("I_CLS + CLS_W k", CLASS_RECORD.total * MAXK, "DP class k's record (k < MAXK)"),
    ("I_LAY + LAY_W k", LAYER_RECORD.total * MAXK, "DP layer k's record (k < MAXK)"),
], total="NI")
PLAN_MASKS = Layout("masks", ("entry", "meaning"), [
    ("M_PILE + 2 q", SET_W * MAXP, "pile q's unknown cards in the source row"),
    ("M_FIX + 2 q", SET_W * MAXP, "the cards only pile q may take (placed for sure)"),
    ("M_CLS + 2 k", SET_W * MAXK, "DP class k"),
    ("M_U", SET_W, "every unknown card"),
], total="NM")

PILE_KIND = PILE_RECORD["PILE_KIND"]
PILE_SEAT = PILE_RECORD["PILE_SEAT"]
PILE_ROOM = PILE_RECORD["PILE_ROOM"]
PILE_CAP = PILE_RECORD["PILE_CAP"]
PILE_W = PILE_RECORD.total
CLS_SIZE = CLASS_RECORD["CLS_SIZE"]
CLS_PILES = CLASS_RECORD["CLS_PILES"]
CLS_W = CLASS_RECORD.total
_CLS_ALL_PILES = (1 << MAXP) - 1  # the pile bits of CLS_PILES
CLS_CATEGORY = 62  # the category bit of CLS_PILES while the plan is built
LAY_OFF = LAYER_RECORD["LAY_OFF"]
LAY_DROP = LAYER_RECORD["LAY_DROP"]
LAY_LEFT = LAYER_RECORD["LAY_LEFT"]
LAY_LO = LAYER_RECORD["LAY_LO"]
LAY_HI = LAYER_RECORD["LAY_HI"]
LAY_STRIDE = LAYER_RECORD["LAY_STRIDE"]
LAY_W = LAYER_RECORD.total
I_STATUS = PLAN_INTS["I_STATUS"]
I_P = PLAN_INTS["I_P"]
I_K = PLAN_INTS["I_K"]
I_KB = PLAN_INTS["I_KB"]
I_NF = PLAN_INTS["I_NF"]
I_FLAGS = PLAN_INTS["I_FLAGS"]
I_OBS = PLAN_INTS["I_OBS"]
I_UNIV = PLAN_INTS["I_UNIV"]
I_FIX = PLAN_INTS["I_FIX"]
I_PILE = PLAN_INTS["I_PILE"]
I_CLS = PLAN_INTS["I_CLS"]
I_LAY = PLAN_INTS["I_LAY"]
NI = PLAN_INTS.total
M_PILE = PLAN_MASKS["M_PILE"]
M_FIX = PLAN_MASKS["M_FIX"]
M_CLS = PLAN_MASKS["M_CLS"]
M_U = PLAN_MASKS["M_U"]
NM = PLAN_MASKS.total
PILE_RECORD.check_bound(globals())
CLASS_RECORD.check_bound(globals())
LAYER_RECORD.check_bound(globals())
PLAN_INTS.check_bound(globals())
PLAN_MASKS.check_bound(globals())
# pile kinds, fix-up flags
KIND_HAND, KIND_DISCARD, KIND_STOCK, KIND_FUTURE = range(4)
F_EARLY = 8
_NF_STACK = 4096  # DP table entries determinize_row keeps on the stack (more: one heap array)
NS = 4 * MAXP  # int scratch of a sample
MAX_TRIES = 100_000  # rejections (the family's sample_rejected) before giving up (status 0)
_KEY_OPEN, _KEY_PILE = 100_000, 1_000  # class order: category first, then fewer piles, then smaller (< 1000)

_FACT = np.array([float(math.factorial(k)) for k in range(80)])
_INV_FACT = np.array([1.0 / math.factorial(k) for k in range(80)])
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
_scratch_u = _stack_buffer(types.uint64, SET_W * MAXP, np.uint64)
_plan_i = _stack_buffer(types.int64, NI, np.int64)
_plan_m = _stack_buffer(types.uint64, NM, np.uint64)
_plan_f = _stack_buffer(types.float64, _NF_STACK, np.float64)


# ----------------------------------------------------------------------------------------------------------
# plan records


@njit(cache=True, _nrt=False)
def _pile(q):
    """The ints offset of pile q's record (+ PILE_*)."""
    return I_PILE + PILE_W * q


@njit(cache=True, _nrt=False)
def _cls(k):
    """The ints offset of DP class k's record (+ CLS_*)."""
    return I_CLS + CLS_W * k


@njit(cache=True, _nrt=False)
def _lay(k):
    """The ints offset of DP layer k's record (+ LAY_*)."""
    return I_LAY + LAY_W * k


@njit(cache=True, _nrt=False)
def _n2(x0, x1):
    return popcount(x0) + popcount(x1)


@njit(cache=True)
def _add_pile(pi, pm, q, kind, seat, c0, c1):
    """Pile q: a ``kind`` of ``seat`` hiding the cards (c0, c1), no cap yet; returns q + 1."""
    o = _pile(q)
    pi[o + PILE_KIND] = kind
    pi[o + PILE_SEAT] = seat
    pi[o + PILE_ROOM] = _n2(c0, c1)
    pi[o + PILE_CAP] = -1
    pm[M_PILE + SET_W * q] = c0
    pm[M_PILE + SET_W * q + 1] = c1
    pm[M_FIX + SET_W * q] = U0
    pm[M_FIX + SET_W * q + 1] = U0
    return q + 1


# ----------------------------------------------------------------------------------------------------------
# the plan, one step per kind of knowledge


@njit(cache=True, _nrt=False)
def _start_plan(pi, p, n):
    """An empty plan of observer p; False (status 0) when p is no seat."""
    for k in range(I_LAY):
        pi[k] = 0
    pi[I_STATUS] = 1
    pi[I_OBS] = p
    pi[I_KB] = -1
    if p < 0 or p >= n:
        pi[I_STATUS] = 0
        return False
    return True


@njit(cache=True, _nrt=False)
def _hand_piles(src, i, p, n, pi, pm, q):
    """Hidden piles: the other hands, less the cards they showed (pinned to them). Returns the next pile."""
    cd = src.cards
    for s in range(n):
        if s != p:
            c0 = cd[i, HAND + s, 0] & ~cd[i, SHOWN_BY + s, 0]
            c1 = cd[i, HAND + s, 1] & ~cd[i, SHOWN_BY + s, 1]
            if (c0 | c1) != U0:
                q = _add_pile(pi, pm, q, KIND_HAND, s, c0, c1)
    return q


@njit(cache=True, _nrt=False)
def _discard_pile(src, i, p, pi, pm, q):
    """Hidden pile: the declarer's face-down discard when p did not make it (less the trumps shown)."""
    cd = src.cards
    decl = src.meta[i, DECLARER]
    if decl >= 0 and decl != p:
        c0 = cd[i, DISCARDED, 0] & ~cd[i, SHOWN, 0]
        c1 = cd[i, DISCARDED, 1] & ~cd[i, SHOWN, 1]
        if (c0 | c1) != U0:
            q = _add_pile(pi, pm, q, KIND_DISCARD, decl, c0, c1)
    return q


@njit(cache=True, _nrt=False)
def _stock_pile(src, i, in_hand, pi, pm, q):
    """Hidden pile: an unseen stock that is no hand's (``in_hand``: the family's stock_in_hand)."""
    if not in_hand and src.meta[i, STOCK_SHOWN] != 1:
        c0 = src.cards[i, STOCK, 0]
        c1 = src.cards[i, STOCK, 1]
        if (c0 | c1) != U0:
            q = _add_pile(pi, pm, q, KIND_STOCK, -1, c0, c1)
    return q


@njit(cache=True, _nrt=False)
def _future_piles(src, i, n, dealt, tb, pi, pm, q):
    """Hidden piles, while each seat holds only the first ``dealt`` cards of its block (the family's
    cards_dealt; Mineo early round): every seat's cards still to be dealt (p's own too), from ``deck``.
    Returns (the next pile, F_EARLY or 0)."""
    h = tb.params[P_HAND]
    if dealt >= h:
        return q, 0
    for s in range(n):
        c0 = U0
        c1 = U0
        for k in range(h * s + dealt, h * s + h):
            c = src.deck[i, k]
            if tb.card[c, CARD_WORD] == 0:
                c0 |= bit(tb.card[c, CARD_BIT])
            else:
                c1 |= bit(tb.card[c, CARD_BIT])
        q = _add_pile(pi, pm, q, KIND_FUTURE, s, c0, c1)
    return q, F_EARLY


@njit(cache=True, _nrt=False)
def _unknown_cards(pi, pm):
    """M_U = every pile's cards; returns them."""
    u0 = U0
    u1 = U0
    for q in range(pi[I_P]):
        u0 |= pm[M_PILE + SET_W * q]
        u1 |= pm[M_PILE + SET_W * q + 1]
    pm[M_U] = u0
    pm[M_U + 1] = u1
    return u0, u1


@njit(cache=True, _nrt=False)
def _discard_cap(src, i, p, tb, pi, d0, d1, cat0, cat1):
    """Count cap: after the declarer discarded a trump (discard phase), his hand holds at most DISCARDS_LEFT
    discardable cards. Returns the capped category (d0, d1), or (cat0, cat1) unchanged."""
    m = src.meta[i]
    decl = m[DECLARER]
    if m[PHASE] == DISCARD and decl >= 0 and decl != p and (src.cards[i, SHOWN, 0] & tb.masks[MK_TRUMPS, 0]) != U0:
        for q in range(pi[I_P]):
            if pi[_pile(q) + PILE_KIND] == KIND_HAND and pi[_pile(q) + PILE_SEAT] == decl:
                pi[_pile(q) + PILE_CAP] = m[DISCARDS_LEFT]
                cat0 = d0
                cat1 = d1
    return cat0, cat1


@njit(cache=True, _nrt=False)
def _family_caps(src, i, tb, pi, cat0, cat1):
    """Count caps the family knows of the hidden hands (its hand_cap; Piedmontese accuso: at most 9 trumps less
    those played since). Returns the capped category, or (cat0, cat1) unchanged."""
    for q in range(pi[I_P]):
        if pi[_pile(q) + PILE_KIND] == KIND_HAND:
            cap, c0, c1 = family.hand_cap(src, i, pi[_pile(q) + PILE_SEAT], tb)
            if cap >= 0:
                pi[_pile(q) + PILE_CAP] = cap
                cat0 = c0
                cat1 = c1
    return cat0, cat1


@njit(cache=True)
def _split(pi, pm, nk, a0, a1, q):
    """Split every class by the set (a0, a1): the part inside gets bit q of its CLS_PILES. Returns the classes,
    -1 beyond MAXK."""
    for k in range(nk):
        c0 = pm[M_CLS + SET_W * k]
        c1 = pm[M_CLS + SET_W * k + 1]
        i0 = c0 & a0
        i1 = c1 & a1
        o0 = c0 & ~a0
        o1 = c1 & ~a1
        if (i0 | i1) == U0:
            continue
        if (o0 | o1) != U0:
            if nk >= MAXK:
                return -1
            pm[M_CLS + SET_W * nk] = o0
            pm[M_CLS + SET_W * nk + 1] = o1
            pi[_cls(nk) + CLS_PILES] = pi[_cls(k) + CLS_PILES]
            nk += 1
            pm[M_CLS + SET_W * k] = i0
            pm[M_CLS + SET_W * k + 1] = i1
        pi[_cls(k) + CLS_PILES] |= 1 << q
    return nk


@njit(cache=True, _nrt=False)
def _pile_classes(src, i, pi, pm, u0, u1, d0, d1):
    """Classes of the unknown cards by the piles that may take them: a hand none of its seat's EXCLUDED (voids,
    failed (over)trumps, ...), the discard only discardable cards (d0, d1), the others any. Returns the number
    of classes, -1 beyond MAXK."""
    nk = 0
    if (u0 | u1) != U0:
        pm[M_CLS] = u0
        pm[M_CLS + 1] = u1
        pi[_cls(0) + CLS_PILES] = 0
        nk = 1
    for q in range(pi[I_P]):
        kind = pi[_pile(q) + PILE_KIND]
        if kind == KIND_HAND:
            s = pi[_pile(q) + PILE_SEAT]
            a0 = ~src.cards[i, EXCLUDED + s, 0]
            a1 = ~src.cards[i, EXCLUDED + s, 1]
        elif kind == KIND_DISCARD:
            a0 = d0
            a1 = d1
        else:
            a0 = ~U0
            a1 = ~U0
        nk = _split(pi, pm, nk, a0, a1, q)
        if nk < 0:
            return -1
    return nk


@njit(cache=True, _nrt=False)
def _place_single_pile_classes(pi, pm, nk):
    """The classes that one pile only may take go to its M_FIX; the others are compacted into the DP classes
    (sizes set). Returns their number, -1 when a card no pile may take."""
    kd = 0
    for k in range(nk):
        a = pi[_cls(k) + CLS_PILES] & _CLS_ALL_PILES
        c0 = pm[M_CLS + SET_W * k]
        c1 = pm[M_CLS + SET_W * k + 1]
        if a == 0:
            return -1
        if (a & (a - 1)) == 0:
            q = 0
            while (a >> q) != 1:
                q += 1
            pm[M_FIX + SET_W * q] |= c0
            pm[M_FIX + SET_W * q + 1] |= c1
            continue
        pm[M_CLS + SET_W * kd] = c0
        pm[M_CLS + SET_W * kd + 1] = c1
        pi[_cls(kd) + CLS_SIZE] = _n2(c0, c1)
        pi[_cls(kd) + CLS_PILES] = pi[_cls(k) + CLS_PILES]
        kd += 1
    return kd


@njit(cache=True)
def _class_key(pi, k):
    """Category classes first, then by the number of piles, then by size."""
    a = pi[_cls(k) + CLS_PILES]
    npiles = 0
    for q in range(MAXP):
        npiles += (a >> q) & 1
    return (1 - ((a >> CLS_CATEGORY) & 1)) * _KEY_OPEN + npiles * _KEY_PILE + pi[_cls(k) + CLS_SIZE]


@njit(cache=True)
def _swap_classes(pi, pm, a, b):
    for t in range(CLS_W):
        x = pi[_cls(a) + t]
        pi[_cls(a) + t] = pi[_cls(b) + t]
        pi[_cls(b) + t] = x
    for t in range(SET_W):
        y = pm[M_CLS + SET_W * a + t]
        pm[M_CLS + SET_W * a + t] = pm[M_CLS + SET_W * b + t]
        pm[M_CLS + SET_W * b + t] = y


@njit(cache=True, _nrt=False)
def _order_classes(pi, pm, kd):
    """Insertion sort of the DP classes by _class_key; clears the category bits. Returns the category classes."""
    for k in range(kd):
        for t in range(k, 0, -1):
            if _class_key(pi, t) < _class_key(pi, t - 1):
                _swap_classes(pi, pm, t, t - 1)
            else:
                break
    n_cat = 0
    for k in range(kd):
        if (pi[_cls(k) + CLS_PILES] >> CLS_CATEGORY) & 1:
            n_cat += 1
        pi[_cls(k) + CLS_PILES] &= _CLS_ALL_PILES
    return n_cat


@njit(cache=True, _nrt=False)
def _reserve_fixed(pi, pm, cat0, cat1):
    """Each pile's room and cap less its M_FIX cards; False when they do not fit."""
    for q in range(pi[I_P]):
        o = _pile(q)
        f0 = pm[M_FIX + SET_W * q]
        f1 = pm[M_FIX + SET_W * q + 1]
        pi[o + PILE_ROOM] -= _n2(f0, f1)
        if pi[o + PILE_ROOM] < 0:
            return False
        if pi[o + PILE_CAP] >= 0:
            pi[o + PILE_CAP] -= _n2(f0 & cat0, f1 & cat1)
            if pi[o + PILE_CAP] < 0:
                return False
    return True


@njit(cache=True, _nrt=False)
def _univ(pi):
    """1 when the last DP class is open to every pile and not the last category class: then the one before it
    is a closed form too (Vandermonde)."""
    kd = pi[I_K]
    if kd >= 2 and pi[_cls(kd - 1) + CLS_PILES] == (1 << pi[I_P]) - 1 and pi[I_KB] != kd - 1:
        return 1
    return 0


@njit(cache=True, _nrt=False)
def _layer_boxes(pi):
    """The tabled layers 1 .. K-2 (K-3 with I_UNIV): the boxes of reachable rooms and their offsets in the floats.
    Returns the floats needed, -1 when some pile's room is unreachable."""
    kd = pi[I_K]
    n_piles = pi[I_P]
    off = 1
    for k in range(1, kd - 1 - pi[I_UNIV]):
        o = _lay(k)
        left = 0
        for t in range(k, kd):
            left += pi[_cls(t) + CLS_SIZE]
        pi[o + LAY_LEFT] = left
        size = 1
        drop = 0
        wmax = -1
        for q in range(n_piles):
            room = pi[_pile(q) + PILE_ROOM]
            pre = 0  # cards of the classes placed before layer k that pile q may take
            suf = 0  # and of classes k..
            for t in range(kd):
                if (pi[_cls(t) + CLS_PILES] >> q) & 1:
                    if t < k:
                        pre += pi[_cls(t) + CLS_SIZE]
                    else:
                        suf += pi[_cls(t) + CLS_SIZE]
            lo = max(0, room - pre)
            hi = min(room, suf)
            if lo > hi:
                return -1
            pi[o + LAY_LO + q] = lo
            pi[o + LAY_HI + q] = hi
            if hi - lo > wmax:
                wmax = hi - lo
                drop = q
        pi[o + LAY_DROP] = drop
        for q in range(n_piles):
            if q != drop:
                pi[o + LAY_STRIDE + q] = size
                size *= pi[o + LAY_HI + q] - pi[o + LAY_LO + q] + 1
        pi[o + LAY_OFF] = off
        off += size
    return off


@njit(cache=True)
def build_plan(src, i, p, tb, pi, pm):
    """What seat ``p`` knows in game ``i`` of BatchState ``src``: hidden piles, classes of unknown cards and
    the DP layer boxes, into ``pi`` (int64[NI]) and ``pm`` (uint64[NM]) (layout: the module docstring).
    ``pi[I_NF]``: DP floats needed; ``pi[I_STATUS]``: 1 ok, 0 inconsistent (no assignment satisfies the
    constraints)."""
    n = tb.params[P_PLAYERS]
    if not _start_plan(pi, p, n):
        return
    # the hidden piles
    q = _hand_piles(src, i, p, n, pi, pm, 0)
    q = _discard_pile(src, i, p, pi, pm, q)
    q = _stock_pile(src, i, family.stock_in_hand(src, i, tb), pi, pm, q)
    q, flags = _future_piles(src, i, n, family.cards_dealt(src, i, tb), tb, pi, pm, q)
    pi[I_P] = q
    u0, u1 = _unknown_cards(pi, pm)
    # count caps: one category at a time (a trump discarded: discard phase; the family's: after it)
    d0, d1 = discardable(tb)
    cat0, cat1 = _discard_cap(src, i, p, tb, pi, d0, d1, U0, U0)
    cat0, cat1 = _family_caps(src, i, tb, pi, cat0, cat1)
    # classes: the unknown cards by the piles that may take them, then by category
    nk = _pile_classes(src, i, pi, pm, u0, u1, d0, d1)
    if nk >= 0 and (cat0 | cat1) != U0:
        nk = _split(pi, pm, nk, cat0, cat1, CLS_CATEGORY)
    if nk < 0:
        pi[I_STATUS] = 0
        return
    # single-pile classes are placed for sure; the others go to the DP, category classes first
    kd = _place_single_pile_classes(pi, pm, nk)
    if kd < 0:
        pi[I_STATUS] = 0
        return
    n_cat = _order_classes(pi, pm, kd)
    pi[I_K] = kd
    if not _reserve_fixed(pi, pm, cat0, cat1):
        pi[I_STATUS] = 0
        return
    if (cat0 | cat1) != U0:
        pi[I_KB] = n_cat
    pi[I_UNIV] = _univ(pi)
    nf = _layer_boxes(pi)
    if nf < 0:
        pi[I_STATUS] = 0
        return
    pi[I_NF] = nf
    pi[I_FLAGS] = flags
    pi[I_FIX] = family.sample_fixes(src, i, p, tb)


# ----------------------------------------------------------------------------------------------------------
# the DP


@njit(cache=True, _nrt=False)
def _caps_hold(pi, r):
    """Once every category card is placed (rooms left r): no capped pile took more than its cap."""
    for q in range(pi[I_P]):
        cap = pi[_pile(q) + PILE_CAP]
        if cap >= 0 and pi[_pile(q) + PILE_ROOM] - r[q] > cap:
            return False
    return True


@njit(cache=True)
def _g(pi, pf, k, r):
    """Ways to place DP classes k.. into the remaining capacities r (int64[P]), float64."""
    n_piles = pi[I_P]
    kk = pi[I_K]
    if k == pi[I_KB] and not _caps_hold(pi, r):
        return 0.0
    if k >= kk:
        return 1.0
    if k == kk - 2 and pi[I_UNIV] == 1:  # sum over this class's splits of two multinomials: Vandermonde
        a = pi[_cls(k) + CLS_PILES]
        na = pi[_cls(k) + CLS_SIZE]
        v = _FACT[pi[_cls(k + 1) + CLS_SIZE]]
        room = 0
        for q in range(n_piles):
            v *= _INV_FACT[r[q]]
            if (a >> q) & 1:
                room += r[q]
        if room < na:
            return 0.0
        return v * _FACT[room] * _INV_FACT[room - na]
    if k == kk - 1:  # the last class: a multinomial
        a = pi[_cls(k) + CLS_PILES]
        v = _FACT[pi[_cls(k) + CLS_SIZE]]
        for q in range(n_piles):
            if r[q] > 0:
                if ((a >> q) & 1) == 0:
                    return 0.0
                v *= _INV_FACT[r[q]]
        return v
    o = _lay(k)  # a tabled layer
    drop = pi[o + LAY_DROP]
    idx = pi[o + LAY_OFF]
    for q in range(n_piles):
        x = r[q] - pi[o + LAY_LO + q]
        if x < 0 or r[q] > pi[o + LAY_HI + q]:
            return 0.0
        if q != drop:
            idx += x * pi[o + LAY_STRIDE + q]
    return pf[idx]


@njit(cache=True, _nrt=False)
def _class_piles(pi, k, a):
    """a[0 .. na-1] = the piles class k may take; returns na."""
    al = pi[_cls(k) + CLS_PILES]
    na = 0
    for q in range(pi[I_P]):
        if (al >> q) & 1:
            a[na] = q
            na += 1
    return na


@njit(cache=True)
def _enum(pi, pf, k, r, x, a, target):
    """Sum over the splits x of class k into its piles (within r) of multinomial * g_{k+1}(r - x).

    With ``target`` >= 0, stops at the first split whose running sum exceeds it (x[t]: cards to pile a[t]).
    Returns the running sum. x, a : int64 scratch of MAXP.
    """
    nk = pi[_cls(k) + CLS_SIZE]
    na = _class_piles(pi, k, a)
    for t in range(na):
        x[t] = 0
    last = a[na - 1]
    fn = _FACT[nk]
    total = 0.0
    head = 0  # sum of x[0 .. na-2]
    while True:
        rest = nk - head
        if rest <= r[last]:
            x[na - 1] = rest
            w = fn
            for t in range(na):
                w *= _INV_FACT[x[t]]
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


@njit(cache=True, _nrt=False)
def _box_rooms(pi, k, t, r):
    """r = the rooms of entry t of layer k's table."""
    o = _lay(k)
    drop = pi[o + LAY_DROP]
    s = 0
    for q in range(pi[I_P]):
        if q != drop:
            w = pi[o + LAY_HI + q] - pi[o + LAY_LO + q] + 1
            r[q] = pi[o + LAY_LO + q] + (t // pi[o + LAY_STRIDE + q]) % w
            s += r[q]
    r[drop] = pi[o + LAY_LEFT] - s


@njit(cache=True, _nrt=False)
def _fill_layer(pi, pf, k, size, r, x, a):
    """Layer k's table: g_k over its box (``size`` entries)."""
    o = _lay(k)
    drop = pi[o + LAY_DROP]
    off = pi[o + LAY_OFF]
    for t in range(size):
        _box_rooms(pi, k, t, r)
        v = 0.0
        if pi[o + LAY_LO + drop] <= r[drop] <= pi[o + LAY_HI + drop]:
            if k != pi[I_KB] or _caps_hold(pi, r):
                v = _enum(pi, pf, k, r, x, a, -1.0)
        pf[off + t] = v


@njit(cache=True)
def fill_tables(pi, pf):
    """The DP tables of a plan (layers K-2 .. 1) and pf[0] = the number of consistent assignments."""
    if pi[I_STATUS] != 1:
        return
    kk = pi[I_K]
    sc = _scratch_i()
    r = sc[:MAXP]
    x = sc[MAXP : 2 * MAXP]
    a = sc[2 * MAXP : 3 * MAXP]
    top = kk - 2 - pi[I_UNIV]  # the last tabled layer
    for k in range(top, 0, -1):
        end = pi[_lay(k + 1) + LAY_OFF] if k < top else pi[I_NF]
        _fill_layer(pi, pf, k, end - pi[_lay(k) + LAY_OFF], r, x, a)
    for q in range(pi[I_P]):
        r[q] = pi[_pile(q) + PILE_ROOM]
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
def _deal_class(c0, c1, x, a, na, nw, r):
    """Split the class (c0, c1) uniformly: x[t] cards to pile a[t] (nw: uint64[2*MAXP] pile
    contents, updated). Returns the RNG state."""
    big = 0
    for t in range(1, na):
        if x[t] > x[big]:
            big = t
    for t in range(na):
        if t == big:
            continue
        q = a[t]
        r, d0, d1, c0, c1 = draw_bits(c0, c1, x[t], r)
        nw[SET_W * q] |= d0
        nw[SET_W * q + 1] |= d1
    nw[SET_W * a[big]] |= c0
    nw[SET_W * a[big] + 1] |= c1
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
def _fix_deck(dst, j, p, tb, pi, nw):
    """Rewrite the deal of game j to match its cards (the observer's own block kept)."""
    m = dst.meta[j]
    cd = dst.cards
    n = tb.params[P_PLAYERS]
    h = tb.params[P_HAND]
    if pi[I_FLAGS] & F_EARLY:
        for q in range(pi[I_P]):
            if pi[_pile(q) + PILE_KIND] == KIND_FUTURE:
                s = pi[_pile(q) + PILE_SEAT]
                if s != p:
                    _write_set(dst, j, cd[j, HAND + s, 0], cd[j, HAND + s, 1], h * s, tb)
                _write_set(dst, j, nw[SET_W * q], nw[SET_W * q + 1], h * s + family.cards_dealt(dst, j, tb), tb)
    else:
        taken = family.stock_in_hand(dst, j, tb)
        for s in range(n):
            if s == p:
                continue
            d0 = cd[j, HAND + s, 0] | cd[j, PLAYED + s, 0]
            d1 = cd[j, HAND + s, 1] | cd[j, PLAYED + s, 1]
            if s == m[DECLARER] and taken:
                d0 = (d0 | cd[j, DISCARDED, 0]) & ~cd[j, STOCK, 0]
                d1 = (d1 | cd[j, DISCARDED, 1]) & ~cd[j, STOCK, 1]
            _write_set(dst, j, d0, d1, h * s, tb)
    k = family.stock_places_known(dst, j, tb)  # the first k places keep their cards as dealt (public)
    if k < tb.params[P_STOCK]:
        s0 = cd[j, STOCK, 0]
        s1 = cd[j, STOCK, 1]
        for q in range(k):
            c = dst.deck[j, n * h + q]
            if tb.card[c, CARD_WORD] == 0:
                s0 &= ~bit(tb.card[c, CARD_BIT])
            else:
                s1 &= ~bit(tb.card[c, CARD_BIT])
        _write_set(dst, j, s0, s1, n * h + k, tb)


@njit(cache=True, _nrt=False)
def _start_try(pi, pm, r, nw):
    """A fresh try: r = the piles' room for the DP classes, nw = their fixed cards."""
    for q in range(pi[I_P]):
        r[q] = pi[_pile(q) + PILE_ROOM]
        nw[SET_W * q] = pm[M_FIX + SET_W * q]
        nw[SET_W * q + 1] = pm[M_FIX + SET_W * q + 1]


@njit(cache=True, _nrt=False)
def _rest_split(pi, k, r, x, a):
    """The last class takes what is left: x[t] = r[a[t]]. Returns na."""
    na = _class_piles(pi, k, a)
    for t in range(na):
        x[t] = r[a[t]]
    return na


@njit(cache=True, _nrt=False)
def _hypergeometric_split(pi, k, r, x, a, rng):
    """The class before an open last class: its cards one by one into the room left (multivariate
    hypergeometric). Returns (na, the RNG state)."""
    na = _class_piles(pi, k, a)
    room = 0
    for t in range(na):
        x[t] = 0
        room += r[a[t]]
    for _d in range(pi[_cls(k) + CLS_SIZE]):
        rng, z = splitmix_next(rng)
        e = bounded(z, room)
        t = 0
        while e >= r[a[t]] - x[t]:
            e -= r[a[t]] - x[t]
            t += 1
        x[t] += 1
        room -= 1
    return na, rng


@njit(cache=True, _nrt=False)
def _weighted_split(pi, pf, k, r, x, a, total, rng):
    """A split of class k with probability multinomial * g_{k+1} / total (``total`` = g_k(r)). Returns (na,
    the RNG state)."""
    rng, z = splitmix_next(rng)
    target = np.float64(z >> _U11) * _INV53 * total
    got = _enum(pi, pf, k, r, x, a, target)
    if got <= target:  # rounding at the very end: the last split with a weight
        _enum(pi, pf, k, r, x, a, got * (1.0 - 1e-12))
    na = 0
    al = pi[_cls(k) + CLS_PILES]
    for q in range(pi[I_P]):
        if (al >> q) & 1:
            na += 1
    return na, rng


@njit(cache=True, _nrt=False)
def _draw_classes(pi, pm, pf, r, x, a, nw, rng):
    """Every DP class: its split over the piles, then its cards dealt uniformly into nw. Returns the RNG state."""
    kk = pi[I_K]
    univ = pi[I_UNIV] == 1
    total = pf[0]
    for k in range(kk):
        if k == kk - 1:
            na = _rest_split(pi, k, r, x, a)
        elif k == kk - 2 and univ:
            na, rng = _hypergeometric_split(pi, k, r, x, a, rng)
        else:
            na, rng = _weighted_split(pi, pf, k, r, x, a, total, rng)
        for t in range(na):
            r[a[t]] -= x[t]
        if k < kk - 2 or (k == kk - 2 and not univ):
            total = _g(pi, pf, k + 1, r)
        rng = _deal_class(pm[M_CLS + SET_W * k], pm[M_CLS + SET_W * k + 1], x, a, na, nw, rng)
    return rng


@njit(cache=True, _nrt=False)
def _store_piles(src, i, pi, pm, nw, dst, j):
    """The sampled piles into game j of dst (the known cards of their rows kept)."""
    u0 = pm[M_U]
    u1 = pm[M_U + 1]
    cd = dst.cards
    for q in range(pi[I_P]):
        kind = pi[_pile(q) + PILE_KIND]
        if kind == KIND_HAND:
            row = HAND + pi[_pile(q) + PILE_SEAT]
        elif kind == KIND_DISCARD:
            row = DISCARDED
        elif kind == KIND_STOCK:
            row = STOCK
        else:
            continue
        cd[j, row, 0] = (src.cards[i, row, 0] & ~u0) | nw[SET_W * q]
        cd[j, row, 1] = (src.cards[i, row, 1] & ~u1) | nw[SET_W * q + 1]


@njit(cache=True, _nrt=False)
def _fix_meta(dst, j, p, tb, pi, nw, rng):
    """The hidden meta (the family's fix_sample) and the deal fixed from the sampled cards. Returns the RNG
    state."""
    if pi[I_FIX] != 0:
        rng = family.fix_sample(dst, j, p, pi[I_FIX], tb, rng)
    _fix_deck(dst, j, p, tb, pi, nw)
    return rng


@njit(cache=True)
def sample_row(src, i, p, tb, pi, pm, pf, dst, j):
    """One determinization of game ``i`` of ``src`` for seat ``p`` into game ``j`` of ``dst`` from a plan
    (``build_plan`` + ``fill_tables`` of the same row and seat), with ``dst.rng[j]``. Allocates nothing.
    Returns False (dst row = a plain copy) when the plan is inconsistent."""
    _copy_row(src, i, dst, j)
    if pi[I_STATUS] != 1 or pi[I_OBS] != p:
        return False
    sc = _scratch_i()
    r = sc[:MAXP]
    x = sc[MAXP : 2 * MAXP]
    a = sc[2 * MAXP : 3 * MAXP]
    nw = _scratch_u()
    rng = dst.rng[j]
    for _ in range(MAX_TRIES):
        _start_try(pi, pm, r, nw)
        rng = _draw_classes(pi, pm, pf, r, x, a, nw, rng)
        _store_piles(src, i, pi, pm, nw, dst, j)
        if pi[I_FIX] == 0 or not family.sample_rejected(dst, j, pi[I_FIX], tb):  # (French: a petit sec dealt)
            dst.rng[j] = _fix_meta(dst, j, p, tb, pi, nw, rng)
            return True
    dst.rng[j] = rng
    _copy_row(src, i, dst, j)
    return False


# ----------------------------------------------------------------------------------------------------------
# entry points


@njit(cache=True)
def determinize_row(src, i, observer, tb, dst, j):
    """Copy game ``i`` of BatchState ``src`` into game ``j`` of ``dst`` with every card ``observer`` cannot
    locate redistributed uniformly over the consistent assignments (randomness: ``dst.rng[j]``).

    Builds the plan on the stack (a heap array only when the DP needs more than _NF_STACK floats). Returns
    True, or False (a plain copy) when the position admits no consistent assignment (never for a real one).
    """
    pi = _plan_i()
    pm = _plan_m()
    build_plan(src, i, observer, tb, pi, pm)
    if pi[I_NF] <= _NF_STACK:
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
def _determinize_batch(src, i, observer, tb, dst):
    """Fill every game of ``dst`` with a determinization of game ``i`` of ``src`` for ``observer`` (each game
    its own RNG ``dst.rng[j]``; the plan is built once). Returns False when the position is inconsistent."""
    pi = np.empty(NI, np.int64)
    pm = np.empty(NM, np.uint64)
    pf = _plan_row(src, i, observer, tb, pi, pm)
    for j_ in prange(dst.meta.shape[0]):
        j = game_index(j_)
        sample_row(src, i, observer, tb, pi, pm, pf, dst, j)
    return pi[I_STATUS] == 1


@njit(cache=True)
def _determinize_serial(src, i, observer, tb, dst):
    """_determinize_batch on the calling thread: for a few samples (a parallel region's start-up and the wait for
    a second thread on a busy machine cost more than the samples)."""
    pi = np.empty(NI, np.int64)
    pm = np.empty(NM, np.uint64)
    pf = _plan_row(src, i, observer, tb, pi, pm)
    for j in range(dst.meta.shape[0]):
        sample_row(src, i, observer, tb, pi, pm, pf, dst, j)
    return pi[I_STATUS] == 1


@njit(cache=True, parallel=True)
def sample_batch(src, i, observer, tb, pi, pm, pf, dst):
    """_determinize_batch from a ready plan (see :func:`make_plan`)."""
    for j_ in prange(dst.meta.shape[0]):
        j = game_index(j_)
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


def determinize(src: BatchState, i: int, observer: int, tb, n: int | None = None, dst: BatchState | None = None,
                seed: int | None = None, parallel: bool = True) -> BatchState:
    """Determinizations of game ``i`` of ``src`` for seat ``observer``.

    src : BatchState (meta int32[B, 80], cards uint64[B, N_SETS, 2], deck int16[B, 78], rng uint64[B])
    tb : the variant's RuleTables
    n / dst : a new BatchState of ``n`` games (RNG from ``seed``), or fill every game of ``dst``
    parallel : sample with Numba's threads (False: on the calling thread, for a few samples)
    Returns the BatchState whose every game is an independent uniform sample of the deals ``observer`` cannot
    tell from game ``i``. RuntimeError when none exists (an inconsistent state).
    """
    if dst is None:
        if n is None:
            raise ValueError("determinize: give n (a new batch of n games) or dst (a batch to fill)")
        dst = alloc_state(int(n))
        dst.rng[:] = seed_states(0 if seed is None else seed, int(n))
    kernel = _determinize_batch if parallel else _determinize_serial
    if not kernel(src, int(i), int(observer), tb, dst):
        raise RuntimeError(f"game {i}: no card assignment is consistent with what seat {observer} knows")
    return dst
