"""Slovenian tarok as OpenSpiel's ``tarok`` game plays it (docs/rules.md §7): ``tarok3`` and ``tarok4``.

Phases (``PHASES``): bid -> king_call (tarok4: the declarer calls a King, for the contracts that call one) ->
talon_choice (the declarer takes a set of the talon, for the contracts that take one) -> discard (the normal
contracts) -> play -> done. The deal ends early in beggar and open beggar (the declarer takes a trick) and in the
valats (he loses one).

Actions (C = 54 cards; dense ids are OpenSpiel's card ids: 0 .. 21 the taroks T1 (Pagat) .. T22 (Skis), 22 .. 29
hearts 4 3 2 1 J N Q K, 30 .. 37 diamonds the same, 38 .. 45 spades 7 8 9 10 J N Q K, 46 .. 53 clubs the same)

| action id   | meaning                           | string                                       |
|-------------|-----------------------------------|----------------------------------------------|
| 0 .. 53     | play card c                       | ``play:T22``                                 |
| 54 .. 107   | discard card c - 54               | ``discard:QD``                               |
| 108         | pass                              | ``bid:pass``                                 |
| 109 .. 120  | bid klop .. valat (contract 1..12)| ``bid:klop`` ... ``bid:valat``               |
| 121 .. 124  | call a King                       | ``call:KH`` ``call:KD`` ``call:KS`` ``call:KC``|
| 125 .. 130  | take talon set i                  | ``talon:0`` ... ``talon:5``                  |

Contracts (``meta[CONTRACT]``, 0 none): 1 klop, 2 three, 3 two, 4 one, 5 solo three, 6 solo two, 7 solo one,
8 beggar, 9 solo without, 10 open beggar, 11 colour valat, 12 valat. ``meta[BID_WORD + s]``: -1 not spoken,
0 pass, else the contract last bid. ``meta[CALLED]``: the called King (dense id), ``meta[PARTNER]``: its holder
(-1: none, the King in the talon or the declarer's own). Sides: the declarer and his partner side 0, the others
side 1; in klop every seat is its own side. Card points are thirds (``core.points``, 210 in the deck); a pile of
t thirds counts (t + 1) // 3 points, OpenSpiel's count in groups of three. ``meta[POINTS + k]``: thirds per side
(per seat in klop). Returns are NOT zero-sum (``ZERO_SUM``): the opponents of a declarer score 0, and the Mond
penalty is one seat's own.

The deal: seat s holds ``deck[H*s : H*s+H]`` (H = 16 / 12), the talon is the last 6 in order (its sets are
consecutive slices). A deal in which a hand holds no tarok is dealt again, as OpenSpiel does: ``start_row``
shuffles again from the game's RNG until every hand has a tarok. A deal given by a caller (``set_deals``,
``state_from_deal``, a deals file, a record) with such a hand is refused (a ValueError naming
the seat), never replaced silently: ``ONE_IN_EVERY_HAND``.
"""

from functools import cache
from typing import Any

import numpy as np
from numba import njit

from ..bits import U0, U1, bit, popcount
from ..cards import FACE_WORDS, TRUMP, build_deck
from ..core.deal import deal_hands, give, shuffle_deck
from ..core.obs_layout import build_layout, section_sizes
from ..core.phases import DISCARD, DONE, Phase
from ..core.points import card_points
from ..core.state import (
    BEST_BIT,
    BEST_TRUMP,
    BID_WORD,
    BONUS,
    CALLED,
    COMMIT,
    CONTRACT,
    CUR,
    DECLARER,
    DISCARDED,
    DISCARDS_LEFT,
    HAND,
    LED_SUIT,
    MULT,
    PARTNER,
    PAYOFF,
    PHASE,
    PLAYED,
    POINTS,
    SHOWN,
    SIDE,
    STOCK,
    STOCK_SHOWN,
    TRICK,
    TRICK_COUNT,
    TRICK_LEADER,
    TRICK_NUM,
    WON,
)
from ..core.tables import (
    CARD_BIT,
    CARD_SUIT,
    CARD_VALUE,
    CARD_WORD,
    COUNT_TRIPLETS,
    MK_DISCARD_FALLBACK,
    MK_DISCARD_FORBIDDEN,
    MK_KINGS,
    MK_SUIT,
    MK_TRUMPS,
    P_BID_WORDS,
    P_CARDS,
    P_COUNT,
    P_DEALER,
    P_DISCARD_FALLBACK_EMPTY,
    P_DISCARDS,
    P_EX_LEAD_ANY,
    P_FAMILY,
    P_HAND,
    P_N_CONTRACTS,
    P_N_SPECIAL,
    P_PLAY_HOOK,
    P_PLAYERS,
    P_STOCK,
    P_TOTAL_POINTS,
    P_TRICK_HOOK_EVERY,
    P_TRICKS,
    PlayRulesTables,
    make_tables,
)
from ..core.trick import add_excluded, start_play
from .actions import card_action_to_string, card_string_to_action
from .defaults import (
    attack_declarer_side,
    never_dump_ex,
    no_hand_cap,
    observe_nothing,
    whole_hand_dealt,
)
from .spec import VariantRow
from .words import Row, num, payoffs_row, seats_text, signed

FAMILY_ID = 3  # its position in the registry's FAMILIES (variants/__init__.py): params[P_FAMILY]


class TarokTables(PlayRulesTables):
    """Tarok rule tables: a Numba type of their own, so that the kernels compiled for this family reach its
    hooks alone (variants/dispatch.py)."""

    __slots__ = ()


Tables = TarokTables  # the contract's name (Numba tells named tuples apart by class name: one each)


# Tarok's own phases (the engine's: core/phases.py); codes unique across the registry (variants/phases.py): the
# bidding is French tarot's phase (the same record). The king call and the talon choice are part of the auction
# (the sides are not settled), shown to the networks in the bidding's slot of the observation (as they were
# trained, when the three were one phase).
BID, KING_CALL, TALON_CHOICE = 7, 11, 12
PHASES = (
    Phase(BID, "bid", "bid", bidding=True, what="seats in turn: pass / a contract"),
    Phase(KING_CALL, "king_call", "bid", bidding=True, slot=BID, what="tarok4, the declarer: a King"),
    Phase(TALON_CHOICE, "talon_choice", "bid", bidding=True, slot=BID, what="the declarer: a set of the talon"),
)

_RED = ("4", "3", "2", "1", "J", "N", "Q", "K")  # low to high
_BLACK = ("7", "8", "9", "10", "J", "N", "Q", "K")
DECK = build_deck([f"T{k}" for k in range(1, 23)], [("H", _RED), ("D", _RED), ("S", _BLACK), ("C", _BLACK)],
                  suit_system="french", fool=False, rank_words=FACE_WORDS,  # the 1 is a pip, not an Ace
                  trump_names={"T1": "Pagat", "T21": "Mond", "T22": "Škis"})
N_CARDS = 54
TALON = 6
PAGAT_ID, MOND_ID, SKIS_ID = 0, 20, 21  # dense ids (= their bits in word 0)
_PAGAT = np.uint64(1) << np.uint64(PAGAT_ID)
_MOND = np.uint64(1) << np.uint64(MOND_ID)
_SKIS = np.uint64(1) << np.uint64(SKIS_ID)

# -- contracts: code (meta[CONTRACT]) = position; the bid strings; per contract its value, the talon cards
# taken (0: no exchange), king call with four players, the declarer leads, negative (must beat, the Pagat rules)
CONTRACT_NAMES = ("none", "klop", "three", "two", "one", "solo three", "solo two", "solo one", "beggar",
                  "solo without", "open beggar", "colour valat", "valat")
BIDS = ("pass", "klop", "three", "two", "one", "solo_three", "solo_two", "solo_one", "beggar", "solo_without",
        "open_beggar", "colour_valat", "valat")  # bid:<word>, by contract code (0: pass)
KLOP, THREE, TWO, ONE, SOLO_THREE, SOLO_TWO, SOLO_ONE, BEGGAR, SOLO_WITHOUT, OPEN_BEGGAR, COLOUR_VALAT, VALAT = \
    range(1, 13)
# (arrays, not tuples: a kernel indexes a tuple by a run-time value through a switch that may raise, and that
# code, inlined into the shared dispatch, slowed the other families' kernels)
VALUE = np.array((0, 70, 10, 20, 30, 40, 50, 60, 70, 80, 90, 125, 500), np.int64)
_TAKEN = np.array((0, 0, 3, 2, 1, 3, 2, 1, 0, 0, 0, 0, 0), np.int64)
CALLS_KING = np.array((0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0), np.int64)
DECLARER_LEADS = np.array((0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1), np.int64)
NEGATIVE = np.array((0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0), np.int64)
_TALON_SETS = np.array([TALON // t if t else 0 for t in _TAKEN], np.int64)  # the talon sets offered
KINGS = ("KH", "KD", "KS", "KC")
_KING_IDS = np.array([DECK.card_id(k) for k in KINGS], np.int64)

# -- the action vocabulary
A_PLAY, A_DISCARD, A_SPECIAL = 0, N_CARDS, 2 * N_CARDS
K_PASS, K_CALL, K_TALON = 0, 13, 17  # special action k: bids 0..12, calls 13..16, talon sets 17..22
SPECIAL_ACTION_NAMES = tuple("bid:" + b for b in BIDS) + tuple("call:" + k for k in KINGS) + tuple(
    f"talon:{i}" for i in range(TALON))
N_ACTIONS = A_SPECIAL + len(SPECIAL_ACTION_NAMES)
BID_WORDS = ("pass",) + CONTRACT_NAMES[1:]  # meta[BID_WORD + s], for display

# -- meta[COMMIT + k]: the family's own columns
_C_TALON_SET, _C_MOND, _C_KING_IN_TALON = 1, 2, 3  # (COMMIT + 0: unused)
# -- meta[BONUS + k]: the score's parts (side 0's)
B_SCORE, B_BASE, B_ULTIMO, B_KINGS, B_VALAT, B_WON, B_POINTS = range(7)

MOND_PENALTY = -20
KLOP_LIMIT = 35
UNANNOUNCED_VALAT = 250
KING_ULTIMO, PAGAT_ULTIMO, KINGS_BONUS = 10, 25, 10

# per variant: players, hand, tricks, longest deal in decisions
SHAPES = {"tarok3": (3, 16, 16), "tarok4": (4, 12, 12)}
LONG_NAMES = {"tarok3": "Slovenian tarok (3 players, OpenSpiel's rules)",
              "tarok4": "Slovenian tarok (4 players, OpenSpiel's rules)"}
OBS_SECTIONS = ("hand", "played", "trick", "stock", "discard", "shown", "bids", "declarer", "contract", "called",
                "points", "tricks_won", "trick_num", "phase", "leader", "seat")
FAMILY_SECTIONS: tuple[str, ...] = ()  # (no observation section of its own)

# -- facts, read by the adapters, ISMCTS, the trainer and the CLI (variants/__init__.py: the contract) ---------
PAYOFF_SCALE = 100.0  # returns are OpenSpiel's points (within +-500, most deals within +-100): / 100
BONUS_UNIT = "points"
DECLARER_ROLE = "declarer"
CARD_POINT_UNITS = 3  # card points are counted in thirds (a pile counts (thirds + 1) // 3 points)
CARD_POINT_UNIT_NAME = "thirds"
ZERO_SUM = False  # only the declarer's side scores; the Mond penalty is one seat's own
ONE_IN_EVERY_HAND = tuple(int(c) for c in np.nonzero(DECK.suit == TRUMP)[0])  # a tarok (else OpenSpiel deals again)
STOCK_IN_ORDER = True  # the talon is laid out as dealt: its sets are its consecutive slices
STRING_OPTION_CHOICES: dict[str, tuple[str, ...]] = {}
BID_ROUNDS = ((BID_WORD, "bids", ""),)
observe_sections = observe_nothing
# the determinizer's hooks (the talon, once shown, is public: the set taken is the declarer's, the rest nobody's,
# both written by _take_talon as excluded cards; stock_in_hand and stock_places_known below)
cards_dealt = whole_hand_dealt
hand_cap = no_hand_cap
heuristic_ex_dump = never_dump_ex  # (no EX in the deck)
OUTCOME_DETAILS = {
    "value": "the contract's value",
    "partner": "tarok4: the holder of the called King (null: none)",
    "called": "tarok4: the called King (null: no call)",
    "king_in_talon": "the called King lay in the talon",
    "talon_set": "the talon set the declarer took (null: none)",
    "won": "the contract was made",
    "points": "the card points of side 0's piles, counted in threes (klop: per seat)",
    "base": "normal contracts: points - 35 +- the value",
    "mond_penalty": "the seat paying the Mond penalty (-20), null: none",
    "score": "what each seat of side 0 scores before the Mond penalty (klop: per seat)",
}


def utility_bounds(variant: str) -> tuple[int, int]:
    """(min, max) return of any seat in any deal: [-500, 500] (OpenSpiel's bounds). Valat scores +-500, colour
    valat +-125, open beggar +-90, solo without +-80 (-100 with the Mond penalty), beggar and klop +-70; the normal
    contracts +-250 for a valat (230 / -270 with the Mond penalty), else (points - 35) +- value with points in
    [0, 70] and value <= 60 (+-95), ultimo +-25, kings +-10, the Mond penalty -20: within [-150, 130]."""
    return -500, 500


def max_game_length(variant: str) -> int:
    """The most decisions in one deal, OpenSpiel's MaxGameLength: the longest bidding, then the 48 cards of the
    hands: 65 (tarok3) and 72 (tarok4). The longest bidding: every bid but a seat's last raises the standing
    contract or holds it by priority, at most 17 bids with three players and 24 with four (docs/rules.md §7), and
    so long a bidding climbs past the talon contracts; a talon contract's king call, talon set and 1 to 3
    discards (at most 5 decisions) come after a bidding shorter by more than that."""
    n = SHAPES[variant][0]
    return (17 if n == 3 else 24) + 48


def layout(variant):
    n, _, tricks = SHAPES[variant]
    sizes = section_sizes(n, N_CARDS, len(BIDS), len(CONTRACT_NAMES) - 1, tricks)
    return build_layout(OBS_SECTIONS, sizes)


# the family's variants (the registry, variants/__init__.py, builds each VariantSpec from its row)
VARIANT_ROWS = {
    name: VariantRow(options={}, n_players=n, hand_sizes=(hand,) * n, stock_size=TALON, layout=layout(name),
                     fixed={"variant": name}, long_name=LONG_NAMES[name], option_ranges={})
    for name, (n, hand, _) in SHAPES.items()
}


def card_values():
    """The trula and Kings 5, Queens 4, Knights 3, Jacks 2; every other card 0 here (a scartina: one third,
    :func:`tarocchi_rl.core.points.card_points`), i.e. 1 in OpenSpiel's count."""
    v = np.zeros(N_CARDS, np.int8)
    for c, name in enumerate(DECK.names):
        if name in ("T1", "T21", "T22"):
            v[c] = 5
        elif not name.startswith("T"):
            v[c] = {"K": 5, "Q": 4, "N": 3, "J": 2}.get(name[0], 0)
    return v


@cache
def make_rule_tables(variant="tarok4"):
    """RuleTables of ``tarok3`` / ``tarok4`` (cached; read-only arrays)."""
    if variant not in SHAPES:
        raise ValueError(f"unknown tarok variant {variant!r}")
    n, hand, tricks = SHAPES[variant]
    taroks = [f"T{k}" for k in range(1, 23)]
    offsets, _, _ = layout(variant)
    return make_tables(
        DECK,
        card_values(),
        masks={
            MK_TRUMPS: taroks,
            MK_KINGS: list(KINGS),
            MK_DISCARD_FORBIDDEN: taroks + list(KINGS),
            MK_DISCARD_FALLBACK: [t for t in taroks if t not in ("T1", "T21", "T22")],
        },
        params={
            P_FAMILY: FAMILY_ID,
            P_PLAYERS: n,
            P_CARDS: N_CARDS,
            P_HAND: hand,
            P_STOCK: TALON,
            P_TRICKS: tricks,
            P_DISCARDS: 0,  # 3, 2 or 1 by contract (meta[DISCARDS_LEFT])
            P_DEALER: n - 1,
            P_EX_LEAD_ANY: 1,  # (no EX in the deck)
            P_COUNT: COUNT_TRIPLETS,
            P_N_SPECIAL: len(SPECIAL_ACTION_NAMES),
            P_BID_WORDS: len(BIDS),
            P_N_CONTRACTS: len(CONTRACT_NAMES) - 1,
            P_TOTAL_POINTS: 210,
            P_PLAY_HOOK: 1,
            P_TRICK_HOOK_EVERY: 1,
            P_DISCARD_FALLBACK_EMPTY: 1,
        },
        obs=offsets,
        phases=PHASES,
        tables_type=TarokTables,
    )


# ----------------------------------------------------------------------------------------------------------
# kernels called by the engine


@njit(cache=True)
def _every_hand_has_a_tarok(st, i, tb):
    for s in range(tb.params[P_PLAYERS]):
        if (st.cards[i, HAND + s, 0] & tb.masks[MK_TRUMPS, 0]) == U0:
            return False
    return True


@njit(cache=True)
def start_row(st, i, tb):
    """Full hands (dealt again while a hand has no tarok); seat 1 bids first."""
    m = st.meta[i]
    n = tb.params[P_PLAYERS]
    h = tb.params[P_HAND]
    deal_hands(st, i, tb, 0, h)
    while not _every_hand_has_a_tarok(st, i, tb):
        shuffle_deck(st, i, tb)
        for s in range(n):
            st.cards[i, HAND + s, 0] = U0
            st.cards[i, HAND + s, 1] = U0
        st.cards[i, STOCK, 0] = U0
        st.cards[i, STOCK, 1] = U0
        for k in range(tb.params[P_STOCK]):
            give(st, i, STOCK, st.deck[i, n * h + k], tb)
        deal_hands(st, i, tb, 0, h)
    m[CONTRACT] = 0
    m[MULT] = 1
    m[STOCK_SHOWN] = 0
    m[COMMIT + _C_TALON_SET] = -1
    m[COMMIT + _C_MOND] = -1
    m[COMMIT + _C_KING_IN_TALON] = 0
    m[PHASE] = BID
    m[CUR] = 1


@njit(cache=True)
def _highest_bid(m, n):
    """(the highest standing contract, the lowest seat holding it); (0, n) when nobody bid."""
    best = 0
    holder = n
    for s in range(n):
        b = m[BID_WORD + s]
        if b > best:
            best = b
            holder = s
    return best, holder


@njit(cache=True)
def _others_passed(m, seat, n):
    for s in range(n):
        if s != seat and m[BID_WORD + s] != 0:
            return False
    return True


@njit(cache=True)
def _bid_flags(m, n):
    seat = m[CUR]
    f = 0
    if _others_passed(m, seat, n):
        if seat == 0 and m[BID_WORD] < 0:
            f |= (1 << KLOP) | (1 << THREE)  # forehand, every other seat passed: klop and three too
    else:
        f |= 1 << K_PASS
    best, holder = _highest_bid(m, n)
    for c in range(TWO, VALAT + 1):
        if n == 3 and SOLO_THREE <= c <= SOLO_ONE:
            continue
        if c > best or (c == best and seat <= holder):
            f |= 1 << c
    return f


@njit(cache=True, inline="always")
def legal_flags(st, i, tb):
    m = st.meta[i]
    if m[PHASE] == BID:
        return _bid_flags(m, tb.params[P_PLAYERS])
    if m[PHASE] == KING_CALL:
        return 15 << K_CALL
    if m[PHASE] == TALON_CHOICE:
        return ((1 << _TALON_SETS[m[CONTRACT]]) - 1) << K_TALON
    return 0


@njit(cache=True)
def _start_tricks(st, i, tb):
    m = st.meta[i]
    start_play(st, i, np.int64(m[DECLARER] if DECLARER_LEADS[m[CONTRACT]] == 1 else 0))


@njit(cache=True)
def _bid(st, i, k, tb):
    m = st.meta[i]
    n = tb.params[P_PLAYERS]
    seat = m[CUR]
    m[BID_WORD + seat] = k
    if _others_passed(m, seat, n):  # the last seat standing has named the contract
        m[DECLARER] = seat
        m[CONTRACT] = k
        for s in range(n):
            m[SIDE + s] = s if k == KLOP else (0 if s == seat else 1)
        if n == 4 and CALLS_KING[k] == 1:
            m[PHASE] = KING_CALL
        elif _TAKEN[k] > 0:
            _show_talon(st, i, tb)
        else:
            _start_tricks(st, i, tb)
        return
    s = seat
    while True:
        s = s + 1 if s + 1 < n else 0
        if m[BID_WORD + s] != 0:
            break
    m[CUR] = s


@njit(cache=True)
def _show_talon(st, i, tb):
    """The talon is laid out face up; the declarer chooses a set."""
    m = st.meta[i]
    m[PHASE] = TALON_CHOICE
    m[STOCK_SHOWN] = 1


@njit(cache=True)
def _set_partnership(st, i, king, tb):
    """The king call's partnership: the partner is the seat other than the declarer who holds or held the
    called King (none when the declarer holds it); the declarer and his partner are side 0, the others 1."""
    m = st.meta[i]
    w = tb.card[king, CARD_WORD]
    mk = bit(tb.card[king, CARD_BIT])
    d = m[DECLARER]
    m[PARTNER] = -1
    for s in range(tb.params[P_PLAYERS]):
        if s != d and ((st.cards[i, HAND + s, w] | st.cards[i, PLAYED + s, w]) & mk) != U0:
            m[PARTNER] = s
    for s in range(tb.params[P_PLAYERS]):
        m[SIDE + s] = 0 if (s == d or s == m[PARTNER]) else 1


@njit(cache=True)
def _call(st, i, j, tb):
    m = st.meta[i]
    king = _KING_IDS[j]
    m[CALLED] = king
    if (st.cards[i, STOCK, tb.card[king, CARD_WORD]] & bit(tb.card[king, CARD_BIT])) != U0:
        m[COMMIT + _C_KING_IN_TALON] = 1
    else:
        _set_partnership(st, i, king, tb)
    _show_talon(st, i, tb)


@njit(cache=True)
def _take_talon(st, i, j, tb):
    """The declarer takes talon set j into his hand (the Mond left in the talon: his Mond penalty), then lays
    down as many cards."""
    m = st.meta[i]
    n = tb.params[P_PLAYERS]
    h = tb.params[P_HAND]
    k = _TAKEN[m[CONTRACT]]
    d = m[DECLARER]
    s0 = U0
    s1 = U0
    for q in range(j * k, (j + 1) * k):
        c = st.deck[i, n * h + q]
        if tb.card[c, CARD_WORD] == 0:
            s0 |= bit(tb.card[c, CARD_BIT])
        else:
            s1 |= bit(tb.card[c, CARD_BIT])
    if (st.cards[i, STOCK, 0] & _MOND) != U0 and (s0 & _MOND) == U0:
        m[COMMIT + _C_MOND] = d
    st.cards[i, HAND + d, 0] |= s0
    st.cards[i, HAND + d, 1] |= s1
    st.cards[i, STOCK, 0] &= ~s0
    st.cards[i, STOCK, 1] &= ~s1
    for s in range(n):
        if s != d:  # the set taken is the declarer's (hand or discard)
            add_excluded(st, i, s, s0, s1)
        add_excluded(st, i, s, st.cards[i, STOCK, 0], st.cards[i, STOCK, 1])  # the rest: nobody's
    m[COMMIT + _C_TALON_SET] = j
    m[DISCARDS_LEFT] = k
    m[CUR] = d
    m[PHASE] = DISCARD


@njit(cache=True, inline="always")
def step_special(st, i, k, tb):
    """A bid, the king call or the talon set taken."""
    m = st.meta[i]
    if m[PHASE] == BID:
        _bid(st, i, k, tb)
    elif m[PHASE] == KING_CALL:
        _call(st, i, k - K_CALL, tb)
    else:
        _take_talon(st, i, k - K_TALON, tb)


@njit(cache=True)
def after_discard(st, i, tb):
    _start_tricks(st, i, tb)


@njit(cache=True)
def sides_known(st, i, viewer, tb):
    """Whether ``viewer`` knows the sides: always, but in tarok4's king call before the called King is played,
    where only its holder (the partner, or the declarer holding it) knows, and everyone when it lay in the
    talon."""
    m = st.meta[i]
    c = m[CALLED]
    if c < 0 or m[COMMIT + _C_KING_IN_TALON] == 1:
        return True
    w = tb.card[c, CARD_WORD]
    mk = bit(tb.card[c, CARD_BIT])
    for s in range(tb.params[P_PLAYERS]):
        if (st.cards[i, PLAYED + s, w] & mk) != U0:
            return True
    return ((st.cards[i, HAND + viewer, w] | st.cards[i, PLAYED + viewer, w]) & mk) != U0


@njit(cache=True, inline="always")
def _above(b):
    """The bits above bit b."""
    return ~((bit(b) << U1) - U1)


@njit(cache=True)
def _in_trick(st, i, card_id, tb):
    m = st.meta[i]
    for s in range(tb.params[P_PLAYERS]):
        if m[TRICK + s] == card_id:
            return True
    return False


@njit(cache=True)
def play_rules(st, i, l0, l1, tb):
    """The negative contracts (klop, beggar, open beggar): a follower beats the best card of the suit he must
    play when he can (a suit once trumped excepted; the first tarok on a suit lead may be any), the Pagat is
    played only as the last card he may play, and must be played on the Mond and the Skis (even by a seat that
    holds the suit led: OpenSpiel)."""
    m = st.meta[i]
    if NEGATIVE[m[CONTRACT]] == 0:
        return l0, l1
    if m[TRICK_COUNT] > 0:
        h0 = st.cards[i, HAND + m[CUR], 0]
        if (h0 & _PAGAT) != U0 and _in_trick(st, i, np.int64(MOND_ID), tb) and _in_trick(st, i, np.int64(SKIS_ID), tb):
            return _PAGAT, U0
        led = m[LED_SUIT]
        if l0 == U0 and led < 4 and l1 != U0 and (l1 & ~tb.masks[MK_SUIT + led, 1]) == U0:  # following suit
            if m[BEST_TRUMP] == 0:
                higher = l1 & _above(m[BEST_BIT])
                if higher != U0:
                    l1 = higher
        elif l1 == U0 and l0 != U0:  # taroks: led, or trumping
            if m[BEST_TRUMP] == 1:
                higher = l0 & _above(m[BEST_BIT])
                if higher != U0:
                    l0 = higher
        else:
            return l0, l1  # neither the suit led nor a tarok: any card
    if (l0 & _PAGAT) != U0 and popcount(l0) + popcount(l1) > 1:
        l0 &= ~_PAGAT
    return l0, l1


@njit(cache=True)
def play_exclusions(st, i, card, tb):
    """What a card played shows by the negative contracts' rules (play_rules): following the suit led with a
    card below its best card (no tarok on it yet), or a tarok below the best tarok: no higher card of it held;
    the Pagat played (not forced by the Mond and the Skis): no other tarok held (the whole hand when it leads);
    another card on the Mond and the Skis: no Pagat."""
    m = st.meta[i]
    if NEGATIVE[m[CONTRACT]] == 0:
        return U0, U0
    if m[TRICK_COUNT] == 0:
        return (~_PAGAT, ~U0) if card == PAGAT_ID else (U0, U0)
    trumps = tb.masks[MK_TRUMPS, 0]
    if _in_trick(st, i, np.int64(MOND_ID), tb) and _in_trick(st, i, np.int64(SKIS_ID), tb):
        return (_PAGAT, U0) if card != PAGAT_ID else (U0, U0)
    if card == PAGAT_ID:
        return trumps & ~_PAGAT, U0
    b = tb.card[card, CARD_BIT]
    led = m[LED_SUIT]
    if tb.card[card, CARD_WORD] == 1:
        if led < 4 and tb.card[card, CARD_SUIT] == led and m[BEST_TRUMP] == 0 and b < m[BEST_BIT]:
            return U0, _above(m[BEST_BIT]) & tb.masks[MK_SUIT + led, 1]
        return U0, U0
    if m[BEST_TRUMP] == 1 and b < m[BEST_BIT]:
        return _above(m[BEST_BIT]) & trumps, U0
    return U0, U0


@njit(cache=True, inline="always")
def stock_in_hand(st, i, tb):
    """The contract's hook: never; the talon is a pile of its own (the set taken joins the hand card by card, in
    _take_talon, and the declarer's cards held and played are then his hand)."""
    return False


@njit(cache=True)
def sample_fixes(st, i, p, tb):
    """The contract's hook: every sample is checked against the deal's own rule (a tarok in every hand) and its
    partnership set from its cards (fix_sample)."""
    return 1


@njit(cache=True)
def sample_rejected(st, j, fixes, tb):
    """The contract's hook: a sample in which a seat's hand as dealt holds no tarok is one OpenSpiel would have
    dealt again (ONE_IN_EVERY_HAND): drawn again. A hand as dealt: the cards held and played, and for the
    declarer those discarded less the talon set taken."""
    m = st.meta[j]
    n = tb.params[P_PLAYERS]
    h = tb.params[P_HAND]
    trumps = tb.masks[MK_TRUMPS, 0]
    for s in range(n):
        t = (st.cards[j, HAND + s, 0] | st.cards[j, PLAYED + s, 0]) & trumps
        if s == m[DECLARER] and m[COMMIT + _C_TALON_SET] >= 0:
            k = _TAKEN[m[CONTRACT]]
            t |= st.cards[j, DISCARDED, 0] & trumps
            for q in range(m[COMMIT + _C_TALON_SET] * k, (m[COMMIT + _C_TALON_SET] + 1) * k):
                c = st.deck[j, n * h + q]
                if tb.card[c, CARD_WORD] == 0:
                    t &= ~bit(tb.card[c, CARD_BIT])
        if t == U0:
            return True
    return False


@njit(cache=True)
def fix_sample(st, j, p, fixes, tb, rng):
    """The contract's hook: with four players the partnership follows the sampled cards (the holder of the called
    King, as _call sets it: none when it lay in the talon or the declarer holds it). Draws nothing."""
    m = st.meta[j]
    if m[CALLED] >= 0 and m[COMMIT + _C_KING_IN_TALON] == 0:
        _set_partnership(st, j, m[CALLED], tb)
    return rng


@njit(cache=True, inline="always")
def stock_places_known(st, i, tb):
    """The contract's hook: the talon's places are public once it is shown; in klop the first tricks' winners
    take its cards in order, face up: one place per trick completed, at most six."""
    m = st.meta[i]
    if m[STOCK_SHOWN] == 1:
        return TALON
    if m[CONTRACT] == KLOP and m[TRICK_NUM] > 0:
        return min(m[TRICK_NUM], TALON)
    return 0


@njit(cache=True)
def _ultimo(st, i, winner, remainder, tb):
    """The ultimo of the last trick, won by ``winner`` (its cards, then with ``remainder`` the talon's rest, in
    its order, join his pile): the called King among the pile's last N cards 10, else the Pagat 25; for the side
    of the trick's winner (+ the declarer's side, - the other)."""
    m = st.meta[i]
    n = tb.params[P_PLAYERS]
    h = tb.params[P_HAND]
    # the pile's new cards in order: the trick's (from its leader), then the talon's rest (r cards) in the deck's
    # order; the last n of them are those from position r on. Read in place: a step allocates nothing (search
    # kernels that call it are compiled without reference counting, search/determinize.py)
    r = 0
    if remainder:
        for q in range(TALON):
            c = st.deck[i, n * h + q]
            if (st.cards[i, STOCK, tb.card[c, CARD_WORD]] & bit(tb.card[c, CARD_BIT])) != U0:
                r += 1
    king = False
    pagat = False
    t = 0
    lead = m[TRICK_LEADER]
    for q in range(n):
        s = lead + q
        if s >= n:
            s -= n
        if t >= r:
            king = king or m[TRICK + s] == m[CALLED]
            pagat = pagat or m[TRICK + s] == PAGAT_ID
        t += 1
    if remainder:
        for q in range(TALON):
            c = st.deck[i, n * h + q]
            if (st.cards[i, STOCK, tb.card[c, CARD_WORD]] & bit(tb.card[c, CARD_BIT])) != U0:
                if t >= r:
                    king = king or c == m[CALLED]
                    pagat = pagat or c == PAGAT_ID
                t += 1
    u = KING_ULTIMO if king else (PAGAT_ULTIMO if pagat else 0)
    return u if m[SIDE + winner] == 0 else -u


@njit(cache=True)
def trick_won(st, i, winner, last, tb):
    """Every trick, before its cards are taken: the emperor trick (the Pagat takes the trula; in colour valat only
    on a tarok lead), colour valat's suit leads (taroks do not trump), klop's talon card to each of the first six
    tricks, the talon's rest to the called King from the talon, the Mond captured, the ultimo of the last trick,
    and the early end of beggar, open beggar and the valats."""
    m = st.meta[i]
    n = tb.params[P_PLAYERS]
    h = tb.params[P_HAND]
    contract = m[CONTRACT]
    lead = m[TRICK_LEADER]
    led = tb.card[m[TRICK + lead], CARD_SUIT]
    pagat = -1
    mond = -1
    skis = False
    for s in range(n):
        c = m[TRICK + s]
        if c == PAGAT_ID:
            pagat = s
        elif c == MOND_ID:
            mond = s
        elif c == SKIS_ID:
            skis = True
    if pagat >= 0 and mond >= 0 and skis and (contract != COLOUR_VALAT or led == TRUMP):
        winner = pagat
    elif contract == COLOUR_VALAT and led != TRUMP:
        best = -1
        for s in range(n):
            c = m[TRICK + s]
            if tb.card[c, CARD_SUIT] == led and tb.card[c, CARD_BIT] > best:
                best = tb.card[c, CARD_BIT]
                winner = s
    card = m[TRICK + winner]
    called_talon = card == m[CALLED] and m[COMMIT + _C_KING_IN_TALON] == 1
    if last and _TAKEN[contract] > 0:
        m[BONUS + B_ULTIMO] = _ultimo(st, i, winner, called_talon and (st.cards[i, STOCK, 0] |
                                                                        st.cards[i, STOCK, 1]) != U0, tb)
    if contract == KLOP:
        t = m[TRICK_NUM]
        if t < TALON:  # a talon card to each of the first six tricks, shown to all
            c = st.deck[i, n * h + t]
            w = tb.card[c, CARD_WORD]
            mk = bit(tb.card[c, CARD_BIT])
            st.cards[i, STOCK, w] &= ~mk
            st.cards[i, WON + winner, w] |= mk
            st.cards[i, SHOWN, w] |= mk
    elif called_talon:  # the called King from the talon takes the talon's rest
        if (st.cards[i, STOCK, 0] & _MOND) != U0:
            m[COMMIT + _C_MOND] = -1
        st.cards[i, WON + winner, 0] |= st.cards[i, STOCK, 0]
        st.cards[i, WON + winner, 1] |= st.cards[i, STOCK, 1]
        st.cards[i, STOCK, 0] = U0
        st.cards[i, STOCK, 1] = U0
    elif (_TAKEN[contract] > 0 or contract == SOLO_WITHOUT) and (card == SKIS_ID or card == PAGAT_ID) and mond >= 0:
        m[COMMIT + _C_MOND] = mond  # the Mond captured: its player pays
    d = m[DECLARER]
    if (contract == BEGGAR or contract == OPEN_BEGGAR) and winner == d:
        m[PHASE] = DONE
    elif (contract == COLOUR_VALAT or contract == VALAT) and winner != d:
        m[PHASE] = DONE
    return winner


@njit(cache=True, inline="always")
def _points(thirds):
    """Card points of a pile of ``thirds`` (OpenSpiel's count in groups of three, rounded)."""
    return (thirds + 1) // 3


@njit(cache=True)
def settle(st, i, tb):
    """OpenSpiel's scores (docs/rules.md §7, Scoring), the Mond penalty, the returns."""
    m = st.meta[i]
    n = tb.params[P_PLAYERS]
    contract = m[CONTRACT]
    d = m[DECLARER]
    for s in range(n):
        m[PAYOFF + s] = 0
    if contract == KLOP:
        extreme = False
        for s in range(n):
            t = card_points(st.cards[i, WON + s, 0], st.cards[i, WON + s, 1], tb)
            m[POINTS + s] = t
            p = _points(t)
            if p > KLOP_LIMIT or p == 0:
                extreme = True
        for s in range(n):
            p = _points(m[POINTS + s])
            if extreme:
                m[PAYOFF + s] = -VALUE[KLOP] if p > KLOP_LIMIT else (VALUE[KLOP] if p == 0 else 0)
            else:
                m[PAYOFF + s] = -p
    else:
        t0 = U0
        t1 = U0
        o0 = U0
        o1 = U0
        for s in range(n):
            if m[SIDE + s] == 0:
                t0 |= st.cards[i, WON + s, 0]
                t1 |= st.cards[i, WON + s, 1]
            else:
                o0 |= st.cards[i, WON + s, 0]
                o1 |= st.cards[i, WON + s, 1]
        t0 |= st.cards[i, DISCARDED, 0]
        t1 |= st.cards[i, DISCARDED, 1]
        thirds = card_points(t0, t1, tb)
        m[POINTS] = thirds
        m[POINTS + 1] = tb.params[P_TOTAL_POINTS] - thirds
        points = _points(thirds)
        m[BONUS + B_POINTS] = points
        value = VALUE[contract]
        if _TAKEN[contract] > 0:
            cards = popcount(t0) + popcount(t1)
            others = popcount(o0) + popcount(o1)
            if cards == 48:
                m[BONUS + B_VALAT] = 1
                score = UNANNOUNCED_VALAT
            elif others == 48:
                m[BONUS + B_VALAT] = -1
                score = -UNANNOUNCED_VALAT
            else:
                base = points - 35 + (value if points > 35 else -value)
                kings = KINGS_BONUS if cards == 4 else (-KINGS_BONUS if others == 4 else 0)
                m[BONUS + B_BASE] = base
                m[BONUS + B_KINGS] = kings
                score = base + m[BONUS + B_ULTIMO] + kings
            m[BONUS + B_WON] = 1 if points > 35 else 0
        else:
            pile = popcount(st.cards[i, WON + d, 0]) + popcount(st.cards[i, WON + d, 1])
            if contract == BEGGAR or contract == OPEN_BEGGAR:
                won = pile == 0
            elif contract == COLOUR_VALAT or contract == VALAT:
                won = pile == 48
            else:
                won = points > 35
            m[BONUS + B_WON] = 1 if won else 0
            score = value if won else -value
        m[BONUS + B_SCORE] = score
        for s in range(n):
            if m[SIDE + s] == 0:
                m[PAYOFF + s] = score
    if m[COMMIT + _C_MOND] >= 0:
        m[PAYOFF + m[COMMIT + _C_MOND]] += MOND_PENALTY


# ----------------------------------------------------------------------------------------------------------
# Python side


def action_to_string(a: int, phase: int) -> str:
    a = int(a)
    card = card_action_to_string(DECK, a)
    if card is not None:
        return card
    if A_SPECIAL <= a < N_ACTIONS:
        return SPECIAL_ACTION_NAMES[a - A_SPECIAL]
    raise ValueError(f"action id {a} is out of range 0..{N_ACTIONS - 1}")


def string_to_action(text: str) -> int:
    card = card_string_to_action(DECK, text)
    if card is not None:
        return card
    t = text.strip()
    kind, _, arg = t.partition(":")
    kind = kind.lower()
    if kind == "call":
        t = "call:" + arg.upper()
    else:
        t = t.lower()
    if t in SPECIAL_ACTION_NAMES:
        return A_SPECIAL + SPECIAL_ACTION_NAMES.index(t)
    raise ValueError(f"unknown action {text!r}: expected play:<card>, discard:<card>, bid:pass|klop|three|two|one|"
                     "solo_three|solo_two|solo_one|beggar|solo_without|open_beggar|colour_valat|valat, "
                     "call:KH|KD|KS|KC or talon:0..5")


def outcome(st, i: int, tb) -> dict:
    """Finished game ``i`` in the one outcome schema (:data:`tarocchi_rl.variants.OUTCOME_FIELDS`). Where its
    wording does not hold: the payoffs are not zero-sum (``ZERO_SUM``); in klop every seat is a side (side 0 is
    forehand, who named it); otherwise side 0 is the declarer and his partner and side 1 every card outside side
    0's piles (the opponents' piles, and also the talon's rest, which counts for nobody, and the cards left in
    the hands after an early end), so that the card points add up to the deck's 70; bonuses are side 0's, signed
    (ultimo, kings, valat), and the Mond penalty of the seat that pays it."""
    m = st.meta[i]
    if m[PHASE] != DONE:
        raise ValueError("the deal is not finished")
    n = int(tb.params[P_PLAYERS])
    contract = int(m[CONTRACT])
    payoffs = [int(x) for x in m[PAYOFF : PAYOFF + n]]
    mond = int(m[COMMIT + _C_MOND])
    called = int(m[CALLED])
    bonuses: list[dict[str, Any]] = []
    details: dict[str, Any] = {
        "value": int(VALUE[contract]), "partner": int(m[PARTNER]) if m[PARTNER] >= 0 else None,
        "called": DECK.names[called] if called >= 0 else None, "king_in_talon": bool(m[COMMIT + _C_KING_IN_TALON]),
        "talon_set": int(m[COMMIT + _C_TALON_SET]) if m[COMMIT + _C_TALON_SET] >= 0 else None,
        "mond_penalty": mond if mond >= 0 else None,
    }
    if contract == KLOP:
        sides = [[s] for s in range(n)]
        units = [int(m[POINTS + s]) for s in range(n)]
        details["points"] = [(u + 1) // 3 for u in units]
        details["score"] = payoffs  # (no Mond penalty in klop)
    else:
        sides = [[s for s in range(n) if m[SIDE + s] == k] for k in range(2)]
        units = [int(m[POINTS]), int(m[POINTS + 1])]
        b = [int(x) for x in m[BONUS : BONUS + 8]]
        details.update({"won": bool(b[B_WON]), "points": b[B_POINTS], "score": b[B_SCORE]})
        if _TAKEN[contract] > 0:
            if b[B_VALAT]:
                bonuses.append({"name": "valat", "side": 0, "points": b[B_VALAT] * UNANNOUNCED_VALAT})
            else:
                details["base"] = b[B_BASE]
                bonuses += [{"name": name, "side": 0, "points": b[k]} for name, k in
                            (("ultimo", B_ULTIMO), ("kings", B_KINGS)) if b[k]]
    if mond >= 0:
        side = next(k for k, seats in enumerate(sides) if mond in seats)
        bonuses.append({"name": "mond penalty", "side": side, "points": MOND_PENALTY})
    return {
        "payoffs": payoffs,
        "contract": CONTRACT_NAMES[contract],
        "declarer": int(m[DECLARER]),
        "sides": sides,
        "card_points": [u / CARD_POINT_UNITS for u in units],
        "card_point_units": units,
        "bonuses": bonuses,
        "details": details,
    }


# ----------------------------------------------------------------------------------------------------------
# the heuristic's hooks (policies/heuristic.py plays the tricks; these are tarok's own decisions)
#
# | decision   | rule                                                                                          |
# |------------|-----------------------------------------------------------------------------------------------|
# | strength   | taroks + those from T15 up + 2 each for the Mond and the Skis + 2 per King + 1 per Queen       |
# |            | + 1 per void suit when holding at least 4 taroks                                               |
# | bid        | the lowest legal positive contract (three .. solo one) not above the highest whose threshold   |
# |            | the strength reaches (HEURISTIC_BIDS_3 / _4, by contract code); else pass; the forehand after  |
# |            | three passes: three at the first threshold, else klop                                           |
# | king call  | a King the seat does not hold, of the suit it holds most cards of (then the lowest); its own   |
# |            | King (playing alone) only when it holds all four                                                |
# | talon set  | the most card value (Kings and the trula 5, Queens 4, ...) + 2 per tarok + 20 holding the Mond  |
# | attacking  | the declarer's side in the positive contracts; nobody in klop and the beggars                  |
# | reserved   | the Pagat, while another card is legal (kept for the last trick: the ultimo)                   |
# thresholds by contract code 0..7 (99: never): the strength from which the forced declarer's mean score is above 0
# in heuristic self-play (experiments/studies/calibrate_tarok_bids.py, 20,000 deals per contract)
HEURISTIC_BIDS_3 = (99, 99, 16, 18, 20, 99, 99, 99)  # three, two, one (no solos with three players)
HEURISTIC_BIDS_4 = (99, 99, 9, 10, 12, 15, 16, 18)  # three, two, one, solo three, solo two, solo one
_HIGH_TAROKS = np.uint64(0x3FC000)  # T15 .. T22: bits 14 .. 21


@njit(cache=True)
def hand_strength(h0, h1, tb):
    """The heuristic's hand strength for the bids (the table above)."""
    tr = h0 & tb.masks[MK_TRUMPS, 0]
    nt = popcount(tr)
    s = nt + popcount(tr & _HIGH_TAROKS) + 2 * popcount(tr & (_MOND | _SKIS))
    for su in range(4):
        ms = h1 & tb.masks[MK_SUIT + su, 1]
        if ms == U0:
            s += 1 if nt >= 4 else 0
        for c in range(16 * su, 16 * su + 8):
            if (ms & bit(c)) != U0:
                v = tb.card[tb.pos_to_card[64 + c], CARD_VALUE]
                s += 2 if v == 5 else (1 if v == 4 else 0)
    return s


@njit(cache=True)
def _talon_set_value(st, i, j, k, tb):
    n = tb.params[P_PLAYERS]
    h = tb.params[P_HAND]
    v = 0
    for q in range(j * k, (j + 1) * k):
        c = st.deck[i, n * h + q]
        v += tb.card[c, CARD_VALUE]
        if tb.card[c, CARD_SUIT] == TRUMP:
            v += 2
        if c == MOND_ID:
            v += 20
    return v


@njit(cache=True)
def heuristic_special(st, i, tb, flags):
    """The contract's hook: the heuristic's bid, king call and talon set (the table above)."""
    m = st.meta[i]
    p = m[CUR]
    h0 = st.cards[i, HAND + p, 0]
    h1 = st.cards[i, HAND + p, 1]
    if m[PHASE] == BID:
        s = hand_strength(h0, h1, tb)
        want = 0
        for c in range(THREE, SOLO_ONE + 1):
            thr = HEURISTIC_BIDS_3[c] if tb.params[P_PLAYERS] == 3 else HEURISTIC_BIDS_4[c]
            if s >= thr:
                want = c
        for c in range(THREE, want + 1):
            if flags & (1 << c):
                return c
        if flags & (1 << K_PASS):
            return K_PASS
        return KLOP
    if m[PHASE] == KING_CALL:
        best = -1
        most = -1
        for j in range(4):
            king = _KING_IDS[j]
            if (h1 & bit(tb.card[king, CARD_BIT])) != U0:
                continue
            held = popcount(h1 & tb.masks[MK_SUIT + tb.card[king, CARD_SUIT], 1])
            if held > most:
                most = held
                best = j
        return K_CALL + (best if best >= 0 else 0)
    k = _TAKEN[m[CONTRACT]]
    best = 0
    top = -1
    for j in range(_TALON_SETS[m[CONTRACT]]):
        v = _talon_set_value(st, i, j, k, tb)
        if v > top:
            top = v
            best = j
    return K_TALON + best


@njit(cache=True, inline="always")
def heuristic_reserved(st, i, tb, h0, out_tr, hand_n):
    """The contract's hook: the Pagat, kept for the last trick."""
    return h0 & _PAGAT


@njit(cache=True, inline="always")
def heuristic_attack(st, i, p, allies, tb):
    """The contract's hook: the declarer's side attacks in the positive contracts, nobody in the negative ones."""
    if NEGATIVE[st.meta[i, CONTRACT]] == 1:
        return False
    return attack_declarer_side(st, i, p, allies, tb)


# -- the score sheet (web/score_sheet.py) -------------------------------------------------------------------------
END_COUNT_TEXT = "the declarer's discard; the talon's rest counts for nobody and is listed with the opponents"
_WIN_ABOVE = 35  # the normal contracts: the declarer's side wins with more card points than this (of the deck's 70)


def score_sheet_rows(out: dict[str, Any], options: dict[str, Any]) -> tuple[str, list[Row]]:
    """The score sheet's headline and rows of a finished deal (its outcome): the contract and its value, klop's
    card points, the normal contracts' points, base and bonuses, the Mond, the score and the payoffs."""
    d, dec, contract = out["details"], out["declarer"], out["contract"]
    if contract == "klop":
        points = d["points"]
        rows = [{"term": "Contract", "text": "klop (every seat passed): each seat for itself"},
                {"term": "Card points", "text": ", ".join(f"seat {k} {p}" for k, p in enumerate(points))},
                {"term": "Rule", "text": f"when a seat has more than {KLOP_LIMIT} points or none, each seat above "
                                         f"{KLOP_LIMIT} gets −{VALUE[KLOP]} and each seat without a trick "
                                         f"+{VALUE[KLOP]}; otherwise each seat loses its points"}]
        rows.append(payoffs_row(out))
        return "Klop: " + ", ".join(f"seat {k} {signed(p)}" for k, p in enumerate(out["payoffs"])), rows
    call = ""
    if d["called"] is not None:
        call = (f", called {d['called']}: " + ("it lay in the talon" if d["king_in_talon"] else
                                               f"partner seat {d['partner']}" if d["partner"] is not None else
                                               "held by the declarer"))
    rows = [{"term": "Contract", "text": f"{contract} by seat {dec}, the declarer, value {d['value']}{call}"}]
    if _TAKEN[CONTRACT_NAMES.index(contract)] > 0:  # the normal contracts: points, base, bonuses
        rows += _points_rows(out, d)
    else:
        rows.append({"term": "Result", "text": f"{'made' if d.get('won') else 'failed'}: the declarer alone scores "
                                               f"{'+' if d.get('won') else '−'}{d['value']}"})
    if d["mond_penalty"] is not None:
        rows.append({"term": "Mond", "text": f"seat {d['mond_penalty']} lost the Mond (T21) to the other side: "
                                             f"{num(MOND_PENALTY)} to that seat"})
    rows.append({"term": "Score", "text": f"each seat of the declarer's side ({seats_text(out['sides'][0])}) "
                                          f"scores {signed(d['score'])}; the opponents 0"})
    rows.append(payoffs_row(out))
    result = "won" if d.get("won") else "lost"
    return f"{contract.capitalize()} {result}: {signed(d['score'])} to the declarer's side", rows


def _points_rows(out: dict[str, Any], d: dict[str, Any]) -> list[Row]:
    """A normal contract's rows: the card points, then the valat alone or the base and the bonuses."""
    points, value = d["points"], d["value"]
    rows = [{"term": "Card points", "text": f"the declarer's side {points} of 70 (more than {_WIN_ABOVE} wins)"}]
    extra = [b for b in out["bonuses"] if b["name"] != "mond penalty"]
    if any(b["name"] == "valat" for b in extra):
        (v,) = [b for b in extra if b["name"] == "valat"]
        rows.append({"term": "Valat", "text": "one side's piles hold all 48 cards (OpenSpiel's valat): "
                                              f"{signed(v['points'])}, nothing else counts"})
        return rows
    won = points > _WIN_ABOVE
    rows.append({"term": "Base", "text": f"({points} − {_WIN_ABOVE}) {'+' if won else '−'} {value} = {num(d['base'])}"})
    for b in extra:
        what = ("the called King or the Pagat in the last trick" if b["name"] == "ultimo" else
                "exactly four cards in one side's piles (OpenSpiel's test of the four Kings)")
        rows.append({"term": b["name"].capitalize(), "text": f"{what}: {signed(b['points'])}"})
    return rows


def tally_note(final_units: int) -> str:
    """What the sheet adds to a side's final card points (in thirds) in the tally: a pile counts in groups of three
    cards, so a count with a third left over is rounded to whole points."""
    if final_units % CARD_POINT_UNITS == 0:
        return ""
    return f", {(final_units + 1) // CARD_POINT_UNITS} counted in threes"
