"""French Tarot (docs/rules.md §4, FFT rules with the seed's errata corrected): ``french3`` and ``french4``.

Phases: bid -> (discard, after prise / garde) -> chelem -> poignee / play (each seat decides his poignee at
his first turn to play, before his card) -> done. A petit sec ends the deal before the bidding (payoffs 0,
no actions); all passing ends it too.

Actions (C = 78 cards; dense ids in :mod:`tarocchi_rl.cards`)

| action id   | meaning                     | string                |
|-------------|-----------------------------|-----------------------|
| 0 .. 77     | play card c                 | ``play:KS``           |
| 78 .. 155   | discard card c - 78         | ``discard:5H``        |
| 156         | pass                        | ``bid:pass`` / ``pass``|
| 157 .. 160  | prise, garde, garde sans, contre | ``bid:prise`` ... ``bid:garde_contre`` |
| 161         | chelem (announce)           | ``chelem``            |
| 162 .. 164  | poignee simple, double, triple | ``poignee:simple`` ... |

Contracts (``meta[CONTRACT]``): 1 prise (x1), 2 garde (x2), 3 garde sans (x4), 4 garde contre (x6).
``meta[COMMIT]``: chelem announced (0/1); ``COMMIT + 2``: trick in which T1 was played, ``COMMIT + 3`` its
winner. Option ``excuse_last_trick`` (``params[P_EX_LAST]``): EX played to the last trick outside a chelem goes
to the camp opposite its owner (``"other_side"``, the FFT text, EX_LAST_OTHER_SIDE) or to the trick's winner
(``"trick_winner"``, EX_LAST_ALWAYS). Points are half points (deck 182). The taker is side 0, the defenders side 1.
Poignee shown cards (``cards[SHOWN_BY + s]``): the lowest trumps needed for the level, EX only when his
trumps alone fall short. Bonuses (``meta[BONUS + k]``): slots ``B_*`` below, the score's parts.
The deal: seat s holds ``deck[H*s : H*s+H]`` (H = 24 / 18), the chien is the last 6.
"""

from functools import cache
from typing import Any

import numpy as np
from numba import njit

from ..bits import U0, U1, bit, lowest_bit, popcount
from ..cards import EX_BIT, FOOL, FRENCH_DECK
from ..core.deal import deal_hands
from ..core.known import hi_bit
from ..core.obs_layout import S_FAMILY, build_layout, section_sizes
from ..core.phases import DISCARD, DONE, PLAY, Phase
from ..core.points import card_points
from ..core.state import (
    BID_WORD,
    BONUS,
    COMMIT,
    CONTRACT,
    CUR,
    DECLARER,
    DISCARDED,
    DISCARDS_LEFT,
    EX_LAST,
    EX_PLAYER,
    EX_TRICK_WINNER,
    FAMILY_META,
    HAND,
    MULT,
    PAYOFF,
    PHASE,
    PLAYED,
    POINTS,
    SHOWN_BY,
    SIDE,
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
    CARD_SUIT,
    CARD_WORD,
    COUNT_DIRECT,
    EX_LAST_ALWAYS,
    EX_LAST_OTHER_SIDE,
    MK_DISCARD_FALLBACK,
    MK_DISCARD_FORBIDDEN,
    MK_EX,
    MK_FAMILY,
    MK_KINGS,
    MK_SUIT,
    MK_TRICK_HOOK,
    MK_TRUMPS,
    P_BID_WORDS,
    P_CARDS,
    P_COUNT,
    P_DEALER,
    P_DISCARDS,
    P_EX_LAST,
    P_EX_LEAD_ANY,
    P_EXCHANGE,
    P_FAMILY,
    P_FAMILY_PARAM,
    P_FIRST_CARD_PHASE,
    P_HAND,
    P_MUST_OVERTRUMP,
    P_N_CONTRACTS,
    P_N_SPECIAL,
    P_OBS_HOOK,
    P_PLAYERS,
    P_STOCK,
    P_TOTAL_POINTS,
    P_TRICKS,
    RuleTables,
    make_tables,
)
from ..core.trick import add_excluded, clear_trick
from .actions import card_action_to_string, card_string_to_action
from .defaults import (
    attack_declarer_side,
    never_dump_ex,
    no_hand_cap,
    no_play_exclusions,
    no_stock_places_known,
    play_rules_unchanged,
    sample_unchanged,
    sides_always_known,
    stock_taken_when_shown,
    whole_hand_dealt,
)
from .spec import VariantRow
from .words import Row, num, points_text, seats_text, signed

# the family's own entries of the shared tables (core/tables.py: MK_FAMILY + k, P_FAMILY_PARAM + k)
MK_OUDLERS = MK_FAMILY + 5  # T1, T21, EX
MK_PETIT = MK_FAMILY + 6  # T1 (petit au bout, petit sec)
P_POIGNEE_1 = P_FAMILY_PARAM + 2  # + k: trumps needed for a simple / double / triple poignee
# the family's own state columns (core/state.py: FAMILY_META + k)
_POIGNEE_LEVEL = FAMILY_META + 0  # + s: the seat's poignee (0 none, 1..3 simple..triple; -1 not yet)

FAMILY_ID = 2  # its position in the registry's FAMILIES (variants/__init__.py): params[P_FAMILY]


class FrenchTables(RuleTables):
    """French Tarot rule tables: a Numba type of their own, so that the kernels compiled for this family reach its
    hooks alone (variants/dispatch.py)."""

    __slots__ = ()


Tables = FrenchTables  # the contract's name (Numba tells named tuples apart by class name: one each)


# French tarot's own phases (the engine's: core/phases.py); codes unique across the registry (variants/phases.py)
BID, CHELEM, POIGNEE = 7, 8, 9
PHASES = (
    Phase(BID, "bid", "bid", bidding=True, what="seats in turn: pass / prise / garde / garde sans / contre"),
    Phase(CHELEM, "chelem", "bid", what="taker: pass / chelem"),
    Phase(POIGNEE, "poignee", "bid", trick=True, what="each seat before his first card: pass / poignee level"),
)
DECK = FRENCH_DECK
N_CARDS = 78
A_PLAY, A_DISCARD, A_PASS = 0, N_CARDS, 2 * N_CARDS
BID_WORDS = ("pass", "prise", "garde", "garde sans", "garde contre")  # meta[BID + s], for display
SPECIAL_ACTION_NAMES = ("pass", "prise", "garde", "garde_sans", "garde_contre", "chelem", "poignee:simple",
                        "poignee:double", "poignee:triple")
N_ACTIONS = A_PASS + len(SPECIAL_ACTION_NAMES)
K_PASS, K_PRISE, K_GARDE, K_GARDE_SANS, K_GARDE_CONTRE, K_CHELEM, K_POIGNEE = 0, 1, 2, 3, 4, 5, 6
_PRISE, _GARDE, _GARDE_SANS, _GARDE_CONTRE = 1, 2, 3, 4
CONTRACT_NAMES = ("none", "prise", "garde", "garde sans", "garde contre")
MULTIPLIER = (0, 1, 2, 4, 6)
_POIGNEE_VALUES = (0, 20, 30, 40)
_POIGNEE_NAMES = ("none", "simple", "double", "triple")
_TARGET_HALF_POINTS = (112, 102, 82, 72)  # by oudlers held: 56, 51, 41, 36 points
_TOTAL_HALF_POINTS = 182
EXCUSE_LAST_TRICK = ("other_side", "trick_winner")  # option excuse_last_trick, the default first
# score parts in meta[BONUS + k]
B_TARGET, B_OUDLERS, B_MADE, B_BASE, B_PETIT, B_POIGNEE, B_CHELEM, B_SCORE = range(8)

# per variant: players, hand, tricks, poignee thresholds
SHAPES = {"french3": (3, 24, 24, (13, 15, 18)), "french4": (4, 18, 18, (10, 13, 15))}
OBS_SECTIONS = ("hand", "played", "trick", "stock", "discard", "shown", "shown_by", "bids", "declarer",
                "contract", "chelem", "poignee", "points", "tricks_won", "trick_num", "phase", "leader", "seat")
# French tarot's own observation sections (core/obs_layout.py: S_FAMILY + k), written by observe_sections:
# | section | size  | content                                                          |
# |---------|-------|------------------------------------------------------------------|
# | chelem  | 1     | chelem announced                                                 |
# | poignee | N x 3 | poignee declared (simple / double / triple) per relative seat    |
FAMILY_SECTIONS = ("chelem", "poignee")
_S_CHELEM, _S_POIGNEE = S_FAMILY + 0, S_FAMILY + 1
_EXB = np.uint64(1) << np.uint64(EX_BIT)


LONG_NAMES = {"french3": "French Tarot (3 players)", "french4": "French Tarot (4 players)"}

# -- facts, read by the adapters, ISMCTS, the trainer and the CLI (variants/__init__.py: the contract) ---------
PAYOFF_SCALE = 100.0  # payoffs are FFT marks (the taker (N-1) T): / 100 gives rewards of order 1
BONUS_UNIT = "score points (T)"
DECLARER_ROLE = "taker"  # what the outcome's "declarer" is called in this game
CARD_POINT_UNITS = 2  # card points are counted in half points
sides_known = sides_always_known  # (Numba hooks of the contract)
play_rules = play_rules_unchanged
play_exclusions = no_play_exclusions
ZERO_SUM = True  # every deal's payoffs add up to 0
CARD_POINT_UNIT_NAME = "half points"
STRING_OPTION_CHOICES = {"excuse_last_trick": EXCUSE_LAST_TRICK}  # the values of each string option
# the bidding rounds: (meta column of each seat's word, name, prefix of its words' counts)
BID_ROUNDS = ((BID_WORD, "bids", ""),)
OUTCOME_DETAILS = {
    "multiplier": "the contract's multiplier (prise 1, garde 2, garde sans 4, garde contre 6)",
    "oudlers": "oudlers in the taker's tricks", "target": "card points the taker needed",
    "made": "the contract was made", "base": "25 + points over / under the target",
    "poignees": "poignee level declared per seat", "chelem_announced": "the taker announced a chelem",
    "score": "T, the taker's score per defender (taker (N-1) T, each defender -T)",
}


def utility_bounds(variant: str, excuse_last_trick: str = "other_side") -> tuple[int, int]:
    """(min, max) payoff of any seat in any deal. T = s (25 + d) mult + petit + s poignee + chelem with d <= 55
    points made (182 half points, target 36) and <= 56 failed (0 half points, target 56), mult <= 6, petit au
    bout +-60, poignees <= 40 (two simple in french4 or one triple), chelem in [-400, 400]: T in [-986, 980];
    the taker gets (N-1) T, each defender -T: french3 [-1972, 1960], french4 [-2958, 2940]. The option
    excuse_last_trick only moves the Excuse between the camps: the bounds hold for both values."""
    k = SHAPES[variant][0] - 1
    t_max, t_min = 80 * 6 + 60 + 40 + 400, -(81 * 6 + 60 + 40 + 400)
    return min(k * t_min, -t_max), max(k * t_max, -t_min)


def max_game_length(variant: str, excuse_last_trick: str = "other_side") -> int:
    """The most player decisions in one deal: N bids + 6 discards + chelem + N poignees + N x tricks: 85
    (french3), 87 (french4), with either value of excuse_last_trick."""
    n, hand, _, _ = SHAPES[variant]
    return n + 6 + 1 + n + n * hand


def layout(variant):
    n, _, tricks, _ = SHAPES[variant]
    sizes = section_sizes(n, N_CARDS, 5, 4, tricks) | {"chelem": 1, "poignee": n * 3}
    return build_layout(OBS_SECTIONS, sizes, FAMILY_SECTIONS)


# the family's variants (the registry, variants/__init__.py, builds each VariantSpec from its row)
VARIANT_ROWS = {
    name: VariantRow(options={"excuse_last_trick": (str, EXCUSE_LAST_TRICK[0])}, n_players=n, hand_sizes=(hand,) * n,
                     stock_size=6, layout=layout(name), fixed={"variant": name}, long_name=LONG_NAMES[name],
                     option_ranges={})
    for name, (n, hand, _, _) in SHAPES.items()
}


def card_values():
    """Half points: oudlers (T1, T21, EX) and Kings 9, Queens 7, Cavaliers 5, Valets 3, any other card 1."""
    v = np.ones(N_CARDS, np.int8)
    for c, name in enumerate(DECK.names):
        if name in ("T1", "T21", "EX"):
            v[c] = 9
        elif not name.startswith("T"):
            v[c] = {"K": 9, "Q": 7, "N": 5, "J": 3}.get(name[0], 1)
    return v


@cache
def make_rule_tables(variant="french3", excuse_last_trick="other_side"):
    """RuleTables of ``french3`` / ``french4`` with the option ``excuse_last_trick`` (cached; read-only
    arrays)."""
    if excuse_last_trick not in EXCUSE_LAST_TRICK:
        raise ValueError(f"option excuse_last_trick must be 'other_side' or 'trick_winner', got {excuse_last_trick!r}")
    n, hand, tricks, thresholds = SHAPES[variant]
    trumps = [f"T{k}" for k in range(1, 22)]
    kings = ["KS", "KH", "KD", "KC"]
    offsets, _, _ = layout(variant)
    params = {
        P_FAMILY: FAMILY_ID,
        P_PLAYERS: n,
        P_CARDS: N_CARDS,
        P_HAND: hand,
        P_STOCK: 6,
        P_TRICKS: tricks,
        P_DISCARDS: 6,
        P_DEALER: n - 1,
        P_MUST_OVERTRUMP: 1,
        P_EX_LEAD_ANY: 1,
        P_EX_LAST: EX_LAST_OTHER_SIDE if excuse_last_trick == "other_side" else EX_LAST_ALWAYS,
        P_EXCHANGE: 1,
        P_COUNT: COUNT_DIRECT,
        P_N_SPECIAL: len(SPECIAL_ACTION_NAMES),
        P_BID_WORDS: 5,
        P_N_CONTRACTS: 4,
        P_TOTAL_POINTS: _TOTAL_HALF_POINTS,
        P_FIRST_CARD_PHASE: POIGNEE,
        P_OBS_HOOK: 1,  # observe_sections: the chelem and the poignees
    }
    for k, t in enumerate(thresholds):
        params[P_POIGNEE_1 + k] = t
    return make_tables(
        DECK,
        card_values(),
        masks={
            MK_TRUMPS: trumps,
            MK_EX: ["EX"],
            MK_KINGS: kings,
            MK_DISCARD_FORBIDDEN: trumps + kings + ["EX"],
            MK_DISCARD_FALLBACK: [f"T{k}" for k in range(2, 21)],
            MK_OUDLERS: ["T1", "T21", "EX"],
            MK_PETIT: ["T1"],
            MK_TRICK_HOOK: ["T1"],  # the petit au bout's trick (trick_won)
        },
        params=params,
        obs=offsets,
        phases=PHASES,
        tables_type=FrenchTables,
    )


# ----------------------------------------------------------------------------------------------------------
# kernels called by the engine


@njit(cache=True)
def start_row(st, i, tb):
    """Full hands; a petit sec annuls the deal, else the bidding starts at seat 0."""
    m = st.meta[i]
    n = tb.params[P_PLAYERS]
    h = tb.params[P_HAND]
    m[CONTRACT] = 0
    m[MULT] = 1
    m[COMMIT] = 0
    m[STOCK_SHOWN] = 0
    petit = tb.masks[MK_PETIT, 0]
    sec = False
    deal_hands(st, i, tb, 0, h)
    for s in range(n):
        held = st.cards[i, HAND + s, 0]
        if (held & tb.masks[MK_TRUMPS, 0]) == petit and (held & _EXB) == U0:
            sec = True
        m[_POIGNEE_LEVEL + s] = -1
    m[PHASE] = DONE if sec else BID
    m[CUR] = 0


@njit(cache=True)
def _poignee_levels(st, i, p, tb):
    """Highest poignee level (0..3) seat p qualifies for, counting EX as a trump."""
    h0 = st.cards[i, HAND + p, 0]
    t = popcount(h0 & tb.masks[MK_TRUMPS, 0]) + (1 if (h0 & _EXB) != U0 else 0)
    level = 0
    for k in range(3):
        if t >= tb.params[P_POIGNEE_1 + k]:
            level = k + 1
    return level


@njit(cache=True)  # not inlined: its loops (variants/dispatch.py)
def legal_flags(st, i, tb):
    m = st.meta[i]
    ph = m[PHASE]
    if ph == BID:
        best = 0
        for s in range(tb.params[P_PLAYERS]):
            if m[BID_WORD + s] > best:
                best = m[BID_WORD + s]
        f = 1
        for b in range(best + 1, 5):
            f |= 1 << b
        return f
    if ph == CHELEM:
        return 1 | (1 << K_CHELEM)
    if ph == POIGNEE:
        f = 1
        for k in range(_poignee_levels(st, i, m[CUR], tb)):
            f |= 1 << (K_POIGNEE + k)
        return f
    return 0


@njit(cache=True)
def _end_bidding(st, i, tb):
    m = st.meta[i]
    n = tb.params[P_PLAYERS]
    taker = -1
    best = 0
    for s in range(n):
        if m[BID_WORD + s] > best:
            best = m[BID_WORD + s]
            taker = s
    if taker < 0:
        m[PHASE] = DONE  # all passed: void deal
        return
    m[DECLARER] = taker
    m[CONTRACT] = best
    m[MULT] = MULTIPLIER[best]
    for s in range(n):
        m[SIDE + s] = 0 if s == taker else 1
    m[CUR] = taker
    if best <= _GARDE:  # the chien is shown and taken; the taker discards 6
        m[STOCK_SHOWN] = 1
        st.cards[i, HAND + taker, 0] |= st.cards[i, STOCK, 0]
        st.cards[i, HAND + taker, 1] |= st.cards[i, STOCK, 1]
        for s in range(n):
            if s != taker:  # the shown chien is the taker's (hand or discard)
                add_excluded(st, i, s, st.cards[i, STOCK, 0], st.cards[i, STOCK, 1])
        m[DISCARDS_LEFT] = tb.params[P_DISCARDS]
        m[PHASE] = DISCARD
    else:
        m[PHASE] = CHELEM


@njit(cache=True)
def after_discard(st, i, tb):
    st.meta[i, PHASE] = CHELEM


@njit(cache=True)
def _shown_poignee(st, i, p, level, tb):
    """The documented fixed set shown for a poignee: the lowest trumps needed, EX only when required."""
    need = tb.params[P_POIGNEE_1 + level - 1]
    t = st.cards[i, HAND + p, 0] & tb.masks[MK_TRUMPS, 0]
    if popcount(t) < need:
        return t | _EXB
    shown = U0
    for _ in range(need):
        low = t & (~t + np.uint64(1))
        shown |= low
        t &= ~low
    return shown


@njit(cache=True)
def _poignee_exclusions(st, i, p, shown, tb):
    """What a poignee proves: the others lack the shown cards; the shower lacks every trump below his highest
    shown one that he did not show (the lowest are shown), all his unshown trumps when EX is shown."""
    trumps = tb.masks[MK_TRUMPS, 0]
    for s in range(tb.params[P_PLAYERS]):
        if s != p:
            add_excluded(st, i, s, shown, U0)
    if (shown & _EXB) != U0:
        add_excluded(st, i, p, trumps & ~shown, U0)
        return
    top = shown & trumps
    while (top & (top - np.uint64(1))) != U0:
        top &= top - np.uint64(1)  # the highest shown trump
    add_excluded(st, i, p, trumps & (top - np.uint64(1)) & ~shown, U0)


@njit(cache=True, inline="always")
def step_special(st, i, k, tb):
    m = st.meta[i]
    ph = m[PHASE]
    p = m[CUR]
    if ph == BID:
        m[BID_WORD + p] = k
        if p == tb.params[P_PLAYERS] - 1:
            _end_bidding(st, i, tb)
        else:
            m[CUR] = p + 1
    elif ph == CHELEM:
        m[COMMIT] = 1 if k == K_CHELEM else 0
        clear_trick(st, i, np.int64(m[DECLARER] if k == K_CHELEM else 0))
        m[PHASE] = POIGNEE
    elif ph == POIGNEE:
        level = k - K_POIGNEE + 1 if k >= K_POIGNEE else 0
        m[_POIGNEE_LEVEL + p] = level
        if level > 0:
            shown = _shown_poignee(st, i, p, level, tb)
            st.cards[i, SHOWN_BY + p, 0] = shown
            _poignee_exclusions(st, i, p, shown, tb)
        m[PHASE] = PLAY


@njit(cache=True)
def _last_trick_winner(st, i, winner, tb):
    """The chelem exception: EX led to the last trick by the taker, whose side won every earlier trick,
    wins it."""
    m = st.meta[i]
    lead = m[TRICK_LEADER]
    if lead != m[DECLARER] or tb.card[m[TRICK + lead], CARD_SUIT] != FOOL:
        return winner
    for s in range(tb.params[P_PLAYERS]):
        if m[SIDE + s] == 1 and m[TRICKS_WON + s] > 0:
            return winner
    return lead


@njit(cache=True)
def _note_petit(st, i, winner, tb):
    """Remember the trick in which T1 was played and its winner (for the petit au bout)."""
    m = st.meta[i]
    for s in range(tb.params[P_PLAYERS]):
        c = m[TRICK + s]
        if tb.card[c, CARD_WORD] == 0 and (bit(tb.card[c, CARD_BIT]) & tb.masks[MK_PETIT, 0]) != U0:
            m[COMMIT + 2] = m[TRICK_NUM]
            m[COMMIT + 3] = winner


@njit(cache=True, inline="always")
def trick_won(st, i, winner, last, tb):
    """The contract's hook: the last trick's chelem exception, then the petit au bout's trick noted."""
    if last:
        winner = _last_trick_winner(st, i, winner, tb)
    _note_petit(st, i, winner, tb)
    return winner


@njit(cache=True)
def settle(st, i, tb):
    """The FFT score: T = s*(25 + d)*mult + petit au bout + s*poignees + chelem; payoffs."""
    m = st.meta[i]
    n = tb.params[P_PLAYERS]
    taker = m[DECLARER]
    s0 = st.cards[i, WON + taker, 0] | st.cards[i, DISCARDED, 0]
    s1 = st.cards[i, WON + taker, 1] | st.cards[i, DISCARDED, 1]
    if m[CONTRACT] == _GARDE_SANS:
        s0 |= st.cards[i, STOCK, 0]
        s1 |= st.cards[i, STOCK, 1]
    hp_adjust = 0
    if m[EX_PLAYER] >= 0 and m[EX_LAST] == 0:  # (EX left in the chien of a garde sans / contre: not played)
        ex_owner_side = m[SIDE + m[EX_PLAYER]]
        if ex_owner_side == 0:
            s0 |= _EXB  # the owner's side keeps the Excuse ...
        if m[SIDE + m[EX_TRICK_WINNER]] != ex_owner_side:  # ... and gives half a point to the winner's side
            hp_adjust = -1 if ex_owner_side == 0 else 1
    hp = card_points(s0, s1, tb) + hp_adjust
    oudlers = popcount(s0 & tb.masks[MK_OUDLERS, 0])
    target = _TARGET_HALF_POINTS[oudlers]
    diff = hp - target
    made = diff >= 0
    sign = 1 if made else -1
    base = 25 + (abs(diff) + 1) // 2  # integer  # to the nearest point, a half point in favour of the side that scores
    mult = m[MULT]
    taker_tricks = m[TRICKS_WON + taker]
    tricks = tb.params[P_TRICKS]
    taker_slam = taker_tricks == tricks
    defence_slam = taker_tricks == 0
    au_bout = m[COMMIT + 2] == tricks - 1  # T1 in the last trick
    if taker_slam and m[EX_LAST] == 1 and m[EX_PLAYER] == taker and m[COMMIT + 2] == tricks - 2:
        au_bout = True  # chelem with the taker's EX led last: T1 in the second-to-last trick is au bout too
    petit = 0
    if au_bout:
        petit = 10 * mult if m[SIDE + m[COMMIT + 3]] == 0 else -10 * mult
    poignee = 0
    for s in range(n):
        if m[_POIGNEE_LEVEL + s] > 0:
            poignee += _POIGNEE_VALUES[m[_POIGNEE_LEVEL + s]]
    chelem = 0
    if m[COMMIT] == 1:
        chelem = 400 if taker_slam else -200
    elif taker_slam:
        chelem = 200
    if defence_slam:
        chelem -= 200
    score = sign * base * mult + petit + sign * poignee + chelem
    m[POINTS] = hp
    m[POINTS + 1] = _TOTAL_HALF_POINTS - hp
    m[BONUS + B_TARGET] = target
    m[BONUS + B_OUDLERS] = oudlers
    m[BONUS + B_MADE] = 1 if made else 0
    m[BONUS + B_BASE] = base
    m[BONUS + B_PETIT] = petit
    m[BONUS + B_POIGNEE] = poignee
    m[BONUS + B_CHELEM] = chelem
    m[BONUS + B_SCORE] = score
    for s in range(n):
        m[PAYOFF + s] = (n - 1) * score if s == taker else -score


@njit(cache=True, inline="always")
def observe_sections(st, i, viewer, tb, out):
    """The contract's hook: the poignees declared and the chelem announced (FAMILY_SECTIONS)."""
    m = st.meta[i]
    o = tb.obs
    n = tb.params[P_PLAYERS]
    for s in range(n):
        if m[_POIGNEE_LEVEL + s] > 0:
            out[o[_S_POIGNEE] + 3 * ((s - viewer) % n) + m[_POIGNEE_LEVEL + s] - 1] = 1.0
    if m[COMMIT] == 1:
        out[o[_S_CHELEM]] = 1.0


# ----------------------------------------------------------------------------------------------------------
# kernels called by the determinizer (search/determinize.py) and the heuristic (policies/heuristic.py)

_FIX_PETIT_SEC = 1  # sample_fixes: a sample that deals a petit sec is drawn again
stock_in_hand = stock_taken_when_shown  # (the chien, once shown, is the taker's; never in a garde sans / contre)
stock_places_known = no_stock_places_known
cards_dealt = whole_hand_dealt
hand_cap = no_hand_cap
fix_sample = sample_unchanged


@njit(cache=True)
def sample_fixes(st, i, p, tb):
    """The contract's hook: _FIX_PETIT_SEC (no seat was dealt a petit sec), except in a deal annulled at once."""
    m = st.meta[i]
    return 0 if (m[PHASE] == DONE and m[BID_WORD] == -1) else _FIX_PETIT_SEC


@njit(cache=True)
def sample_rejected(st, j, fixes, tb):
    """The contract's hook: whether some seat's dealt hand in sample j is a petit sec (the Petit its only trump,
    no Excuse)."""
    m = st.meta[j]
    cd = st.cards
    petit = tb.masks[MK_PETIT, 0]
    trumps = tb.masks[MK_TRUMPS, 0]
    for s in range(tb.params[P_PLAYERS]):
        d = cd[j, HAND + s, 0] | cd[j, PLAYED + s, 0]
        if s == m[DECLARER] and m[STOCK_SHOWN] == 1:
            d = (d | cd[j, DISCARDED, 0]) & ~cd[j, STOCK, 0]
        if (d & trumps) == petit and (d & _EXB) == U0:
            return True
    return False


# The heuristic's rules of its own (policies/heuristic.py has the shared ones)
#
# | decision  | rule                                                                                            |
# |-----------|-------------------------------------------------------------------------------------------------|
# | strength  | 2 per trump, +1 per T16..T20, T21 +10, EX +8, T1 +9/+7/+4/0 with >= 6/5/4/fewer trumps, King 6, |
# |           | Queen 3 (+1 with its King), Cavalier 2, Valet 1, +2 per card beyond 4 in a suit with its King,  |
# |           | with >= 5 trumps: +6 per void, +3 per singleton (hand_strength)                                 |
# | bid       | the highest level whose threshold the strength reaches, HEURISTIC_BIDS_3 = (42, 46, 66, 76),    |
# |           | HEURISTIC_BIDS_4 = (40, 43, 62, 70) for prise / garde / garde sans / garde contre, if it is     |
# |           | above every bid so far; else pass                                                               |
# | chelem    | announce only with T21, >= 14 trumps and every suit an unbroken run from its King               |
# | poignee   | declare the highest level held (taker or defender)                                              |
# | attacking | the taker                                                                                       |
# | reserved  | the Petit while this seat holds more other trumps than are outstanding (petit au bout)          |
HEURISTIC_BIDS_3 = (42, 46, 66, 76)  # prise, garde, garde sans, garde contre
HEURISTIC_BIDS_4 = (40, 43, 62, 70)
heuristic_attack = attack_declarer_side
heuristic_ex_dump = never_dump_ex


@njit(cache=True)
def hand_strength(h0, h1, tb):
    """The heuristic's hand strength for the bids (the table above)."""
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
def heuristic_special(st, i, tb, flags):
    """The contract's hook: the heuristic's bid, chelem and poignee (the table above)."""
    m = st.meta[i]
    ph = m[PHASE]
    p = m[CUR]
    n = tb.params[P_PLAYERS]
    h0 = st.cards[i, HAND + p, 0]
    h1 = st.cards[i, HAND + p, 1]
    if ph == BID:
        s = hand_strength(h0, h1, tb)
        want = 0
        for k in range(4):
            thr = HEURISTIC_BIDS_3[k] if n == 3 else HEURISTIC_BIDS_4[k]
            if s >= thr:
                want = k + 1
        best = 0
        for q in range(n):
            if m[BID_WORD + q] > best:
                best = m[BID_WORD + q]
        return want if want > best else K_PASS
    if ph == CHELEM:
        tr = h0 & tb.masks[MK_TRUMPS, 0]
        t21 = (tr & tb.masks[MK_OUDLERS, 0] & ~tb.masks[MK_PETIT, 0]) != U0
        if not t21 or 3 * popcount(tr) < 2 * 21:
            return K_PASS
        for su in range(4):
            ms = h1 & tb.masks[MK_SUIT + su, 1]
            # every card a master: the suit's cards form an unbroken sequence from the King down
            if ms != U0 and (hi_bit(ms) != 16 * su + 13 or hi_bit(ms) - lowest_bit(ms) + 1 != popcount(ms)):
                return K_PASS
        return K_CHELEM
    if ph == POIGNEE:
        k = 0
        for q in range(3):
            if flags & (1 << (K_POIGNEE + q)):
                k = K_POIGNEE + q
        return k
    return K_PASS


@njit(cache=True, inline="always")
def heuristic_reserved(st, i, tb, h0, out_tr, hand_n):
    """The contract's hook: the Petit while this seat holds more other trumps than are outstanding."""
    mine = h0 & tb.masks[MK_TRUMPS, 0]
    petit = tb.masks[MK_PETIT, 0]
    if (mine & petit) != U0 and popcount(mine) - 1 > popcount(out_tr):
        return petit
    return U0


# ----------------------------------------------------------------------------------------------------------
# Python side


def action_to_string(a: int, phase: int) -> str:
    a = int(a)
    card = card_action_to_string(DECK, a)
    if card is not None:
        return card
    if a == A_PASS:
        return "bid:pass" if phase == BID else "pass"
    if A_PASS < a <= A_PASS + K_GARDE_CONTRE:
        return "bid:" + SPECIAL_ACTION_NAMES[a - A_PASS]
    if A_PASS < a < N_ACTIONS:
        return SPECIAL_ACTION_NAMES[a - A_PASS]
    raise ValueError(f"action id {a} is out of range 0..{N_ACTIONS - 1}")


def string_to_action(text: str) -> int:
    card = card_string_to_action(DECK, text)
    if card is not None:
        return card
    t = text.strip().lower()
    kind, _, arg = t.partition(":")
    if kind == "bid" and arg in SPECIAL_ACTION_NAMES[:5]:
        return A_PASS + SPECIAL_ACTION_NAMES.index(arg)
    if t in SPECIAL_ACTION_NAMES:
        return A_PASS + SPECIAL_ACTION_NAMES.index(t)
    raise ValueError(
        f"unknown action {text!r}: expected play:<card>, discard:<card>, bid:pass|prise|garde|garde_sans|"
        "garde_contre, pass, chelem or poignee:simple|double|triple"
    )


def outcome(st, i: int, tb) -> dict:
    """Finished game ``i`` in the one outcome schema (:data:`tarocchi_rl.variants.OUTCOME_FIELDS`): side 0 is
    the taker, side 1 the defence; bonuses are the parts of T besides the base (petit au bout, poignees,
    chelem), each given to the side it counts for."""
    m = st.meta[i]
    if m[PHASE] != DONE:
        raise ValueError("the deal is not finished")
    n = int(tb.params[P_PLAYERS])
    payoffs = [int(x) for x in m[PAYOFF : PAYOFF + n]]
    if m[DECLARER] < 0:
        return {"payoffs": payoffs, "contract": "none", "declarer": None, "sides": [], "card_points": [],
                "card_point_units": [], "bonuses": [], "details": {}}
    b = [int(x) for x in m[BONUS : BONUS + 8]]
    hp = int(m[POINTS])
    made = bool(b[B_MADE])
    signed = {"petit au bout": b[B_PETIT], "poignee": b[B_POIGNEE] if made else -b[B_POIGNEE],
              "chelem": b[B_CHELEM]}
    return {
        "payoffs": payoffs,
        "contract": CONTRACT_NAMES[m[CONTRACT]],
        "declarer": int(m[DECLARER]),
        "sides": [[s for s in range(n) if m[SIDE + s] == k] for k in range(2)],
        "card_points": [hp / CARD_POINT_UNITS, (_TOTAL_HALF_POINTS - hp) / CARD_POINT_UNITS],
        "card_point_units": [hp, _TOTAL_HALF_POINTS - hp],
        "bonuses": [{"name": name, "side": 0 if v > 0 else 1, "points": abs(v)} for name, v in signed.items() if v],
        "details": {
            "multiplier": int(m[MULT]),
            "oudlers": b[B_OUDLERS],
            "target": b[B_TARGET] / CARD_POINT_UNITS,
            "made": made,
            "base": b[B_BASE],
            "poignees": [_POIGNEE_NAMES[max(int(x), 0)] for x in m[_POIGNEE_LEVEL : _POIGNEE_LEVEL + n]],
            "chelem_announced": bool(m[COMMIT] == 1),
            "score": b[B_SCORE],
        },
    }


ONE_IN_EVERY_HAND: tuple[int, ...] = ()  # every deal may be played
STOCK_IN_ORDER = False  # the stock shown: its order tells nothing


# -- the score sheet (web/score_sheet.py) -------------------------------------------------------------------------
END_COUNT_TEXT = ("the taker's discard (the chien in a garde sans, the defence's in a garde contre), the Excuse, kept "
                  "by its owner's side, and the half point given for it to the side that won its trick")
_SHEET_BONUS_WORDS = {"petit au bout": "petit au bout", "poignee": "poignée", "chelem": "chelem"}


def score_sheet_rows(out: dict[str, Any], options: dict[str, Any]) -> tuple[str, list[Row]]:
    """The score sheet's headline and rows of a finished deal (its outcome): the contract, the oudlers and the
    points needed, the card points, the base, the bonuses, the score T and the payoffs."""
    d, n, taker = out["details"], len(out["payoffs"]), out["declarer"]
    mult, made, base, score = d["multiplier"], d["made"], d["base"], d["score"]
    units = out["card_point_units"]
    got, need = points_text(units[0], 2), f"{d['target']:g}"
    diff = base - 25
    rows = [
        {"term": "Contract", "text": f"{out['contract']} by seat {taker}, the taker, against "
                                     f"{seats_text(out['sides'][1])} (multiplier {mult}: prise 1, garde 2, "
                                     "garde sans 4, garde contre 6)"},
        {"term": "Oudlers", "text": f"the taker ended with {d['oudlers']} oudler{'s' if d['oudlers'] != 1 else ''} "
                                    f"(T1, T21, the Excuse), so needed {need} of the "
                                    f"{_TOTAL_HALF_POINTS // CARD_POINT_UNITS} card points"},
        {"term": "Card points", "text": f"the taker made {got}, the defence {points_text(units[1], 2)}: the "
                                        f"contract is {'made' if made else 'failed'} by {diff} (a half point counts "
                                        "for the side that scores)"},
        {"term": "Base", "text": f"25 + {diff} = {base}, × {mult} = {base * mult}, "
                                 f"{'for' if made else 'against'} the taker"},
    ]
    terms = [f"{'+' if made else '−'}{base} × {mult}"]
    for b in out["bonuses"]:
        pts = b["points"] if b["side"] == 0 else -b["points"]
        word = _SHEET_BONUS_WORDS.get(b["name"], b["name"])
        terms.append(f"{'+' if pts >= 0 else '−'} {abs(pts)} {word}")
        rows.append({"term": word.capitalize(), "text": _bonus_text(b, d, mult)})
    rows.append({"term": "Score", "text": f"T = {' '.join(terms)} = {num(score)}"})
    rows.append({"term": "Payoffs", "text": f"the taker {n - 1} × T = {signed((n - 1) * score)}, each defender −T = "
                                            f"{signed(-score)}"})
    head = (f"{out['contract'].capitalize()} {'made' if made else 'failed'} by {diff}: the taker "
            f"{signed(out['payoffs'][taker])}, each defender {signed(-score)}")
    return head, rows


def _bonus_text(b: dict[str, Any], d: dict[str, Any], mult: int) -> str:
    side = "the taker" if b["side"] == 0 else "the defence"
    if b["name"] == "petit au bout":
        return f"the Petit (T1) in the last trick: 10 × {mult} = {b['points']} to {side}, who won that trick"
    if b["name"] == "poignee":
        shown = ", ".join(f"seat {k} a {p} poignée" for k, p in enumerate(d["poignees"]) if p != "none")
        return f"{shown} (simple 20, double 30, triple 40): {b['points']} to {side}, the side that won the deal"
    announced = "announced" if d["chelem_announced"] else "not announced"
    return f"chelem ({announced}): {b['points']} to {side}"


def tally_note(final_units: int) -> str:
    """What the sheet adds to a side's final card points (in units) in the tally: nothing."""
    return ""
