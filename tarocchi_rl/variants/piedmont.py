"""Piedmontese tarocchi, "tre e venticinque" (docs/rules.md §3): ``piedmont3`` and ``piedmont4``.

The engine deals; the dealer takes the stock (3 cards in piedmont3, 2 in piedmont4) and discards as many
(Kings, T1, EX and the 5-point honour(s) never; other trumps only when unavoidable, and then shown); with
option ``accuso`` (piedmont4) seats 0..3 then may declare; seat 0 leads the first trick.

Phases: discard -> (accuso) -> play -> done.

Actions (C = 78 cards; dense ids in :mod:`tarocchi_rl.cards`, Angel T20 above World T21, reversed pips in
Coppe and Denari)

| action id   | meaning             | string        |
|-------------|---------------------|---------------|
| 0 .. 77     | play card c         | ``play:1D``   |
| 78 .. 155   | discard card c - 78 | ``discard:QS``|
| 156         | pass                | ``pass``      |
| 157         | accuso              | ``accuso``    |

Sides (``meta[SIDE + s]``): piedmont3 each seat is his own side (side = seat); piedmont4 seats 0+2 are side 0
and 1+3 side 1. Card points are thirds (triplet count, 231 / 243 in the deck); ``meta[POINTS + k]`` holds
them per seat (piedmont3) or per side (piedmont4), the Excuse exchange and accuso bonuses included.
The deal: seat s holds ``deck[H*s : H*s+H]`` (H = 25 / 19), the stock is the rest.
"""

from functools import cache
from typing import Any

import numpy as np
from numba import njit

from ..bits import U0, draw_bits, popcount
from ..cards import EX_BIT, PIEDMONT_DECK
from ..core.deal import deal_hands
from ..core.obs_layout import S_FAMILY, build_layout, section_sizes
from ..core.phases import DISCARD, DONE, Phase
from ..core.points import card_points
from ..core.state import (
    CUR,
    DECLARER,
    DISCARDED,
    DISCARDS_LEFT,
    EX_LAST,
    EX_PLAYER,
    EX_TRICK_WINNER,
    FAMILY_META,
    HAND,
    PAYOFF,
    PHASE,
    PLAYED,
    POINTS,
    SHOWN_BY,
    SIDE,
    STOCK,
    TURN,
    WON,
)
from ..core.tables import (
    COUNT_TRIPLETS,
    EX_LAST_ALWAYS,
    MK_DISCARD_FALLBACK,
    MK_DISCARD_FORBIDDEN,
    MK_EX,
    MK_FAMILY,
    MK_KINGS,
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
from ..core.trick import add_excluded, start_play
from .actions import card_action_to_string, card_string_to_action
from .defaults import (
    never_dump_ex,
    no_hand_cap,
    no_play_exclusions,
    no_stock_places_known,
    play_rules_unchanged,
    reserve_nothing,
    sample_never_rejected,
    sides_always_known,
    trick_winner_unchanged,
    whole_hand_dealt,
)
from .spec import VariantRow
from .words import Row, points_text, seats_text, signed

# the family's own entries of the shared tables (core/tables.py: MK_FAMILY + k, P_FAMILY_PARAM + k)
_MK_ACCUSO_HONOURS = MK_FAMILY + 0  # the accuso's honours: T1, T20, T21
P_ACCUSO = P_FAMILY_PARAM + 0  # option accuso (0/1)
# the family's own state columns (core/state.py: FAMILY_META + k)
ACCUSO_DECL = FAMILY_META + 0  # + s: the accuso conditions the seat declared (0..2; -1 not spoken)
_P_ACCUSO_POINTS = P_FAMILY_PARAM + 1  # option accuso_points
_P_TEAMS = P_FAMILY_PARAM + 2  # 1: fixed partnerships 0+2 vs 1+3 (piedmont4)

FAMILY_ID = 1  # its position in the registry's FAMILIES (variants/__init__.py): params[P_FAMILY]


class PiedmontTables(RuleTables):
    """Piedmontese rule tables: a Numba type of their own, so that the kernels compiled for this family reach its
    hooks alone (variants/dispatch.py)."""

    __slots__ = ()


Tables = PiedmontTables  # the contract's name (Numba tells named tuples apart by class name: one each)


# The Piedmontese own phase (the engine's: core/phases.py); codes unique across the registry (variants/phases.py)
ACCUSO = 10
PHASES = (Phase(ACCUSO, "accuso", "bid", what="piedmont4, seats 0..3 after the discard: pass / accuso"),)
DECK = PIEDMONT_DECK
N_CARDS = 78
A_PLAY, A_DISCARD, A_PASS = 0, N_CARDS, 2 * N_CARDS
N_ACTIONS = A_PASS + 2
SPECIAL_ACTION_NAMES = ("pass", "accuso")
K_PASS, K_ACCUSO = 0, 1
F_PASS, F_ACCUSO = 1, 2
_EXB = np.uint64(1) << np.uint64(EX_BIT)

# per variant: players, hand, stock (= discards), tricks, total thirds
SHAPES = {"piedmont3": (3, 25, 3, 25, 231), "piedmont4": (4, 19, 2, 19, 243)}
OBS_SECTIONS = {
    "piedmont3": ("hand", "played", "trick", "discard", "shown", "points", "tricks_won", "trick_num", "phase",
                  "leader", "seat"),
    "piedmont4": ("hand", "played", "trick", "discard", "shown", "shown_by", "accuso", "points", "tricks_won",
                  "trick_num", "phase", "leader", "seat"),
}
# The Piedmontese own observation section (core/obs_layout.py: S_FAMILY + k), written by observe_sections:
# | section | size | content                                  |
# |---------|------|------------------------------------------|
# | accuso  | N    | accuso declared, per relative seat       |
FAMILY_SECTIONS = ("accuso",)
_S_ACCUSO = S_FAMILY + 0


LONG_NAMES = {"piedmont3": "Piedmontese tarocchi (3 players)", "piedmont4": "Piedmontese tarocchi (4 players, pairs)"}

# -- facts, read by the adapters, ISMCTS, the trainer and the CLI (variants/__init__.py: the contract) ---------
PAYOFF_SCALE = 10.0  # payoffs are thirds of a card point: / 10 gives rewards of order 1
BONUS_UNIT = "thirds"
DECLARER_ROLE = "dealer"  # what the outcome's "declarer" is called in this game
CARD_POINT_UNITS = 3  # card points are counted in thirds
sides_known = sides_always_known  # (Numba hooks of the contract)
trick_won = trick_winner_unchanged
play_rules = play_rules_unchanged
play_exclusions = no_play_exclusions
ZERO_SUM = True  # every deal's payoffs add up to 0
CARD_POINT_UNIT_NAME = "thirds"
STRING_OPTION_CHOICES = {"honour_5": ("mondo", "angelo")}  # the values of each string option
BID_WORDS: tuple[str, ...] = ()  # no auction
BID_ROUNDS: tuple[tuple[int, str, str], ...] = ()
CONTRACT_NAMES = None  # no contract (the outcome's contract is null)
OUTCOME_DETAILS = {
    "excuse": "who played the Excuse, who won its trick, whether it went to the last trick's winner",
    "accuso": "piedmont4: accuso conditions declared per seat",
}


def utility_bounds(variant: str, excuse_exchange: bool = True, honour_5: str = "mondo", accuso: bool = False,
                   accuso_points: int = 5) -> tuple[int, int]:
    """(min, max) payoff of any seat in any deal. piedmont3: own thirds - 77 with thirds in [0, 231] (the
    Excuse exchange only moves one third between seats): [-77, 154]. piedmont4: own side's thirds minus the
    other's, at most the deck's 243 plus, with ``accuso``, three conditions per side (one seat with >= 10 trumps
    and the honours, its partner >= 10 trumps) of ``accuso_points`` card points (x3 thirds): +-(243 + 9 P)."""
    if variant == "piedmont3":
        return -77, 154
    m = 243 + (9 * int(accuso_points) if accuso else 0)
    return -m, m


def max_game_length(variant: str, excuse_exchange: bool = True, honour_5: str = "mondo", accuso: bool = False,
                    accuso_points: int = 5) -> int:
    """The most player decisions in one deal: the dealer's discards (+ 4 accuso words) + N x tricks: 78
    (piedmont3), 78 (piedmont4; 82 with accuso)."""
    n, hand, stock, _, _ = SHAPES[variant]
    return stock + (n if accuso and variant == "piedmont4" else 0) + n * hand


def layout(variant):
    n, _, _, tricks, _ = SHAPES[variant]
    sizes = section_sizes(n, N_CARDS, 1, 1, tricks) | {"accuso": n}
    return build_layout(OBS_SECTIONS[variant], sizes, FAMILY_SECTIONS)


_ACCUSO_POINTS_MAX = 10_000  # piedmont4: far beyond any real table's stake, far below int32 payoffs


def _options(variant: str) -> dict:
    """The options of a variant (name -> (type, default))."""
    if variant == "piedmont3":
        return {"excuse_exchange": (bool, True), "honour_5": (str, "mondo")}
    return {"excuse_exchange": (bool, True), "accuso": (bool, False), "accuso_points": (int, 5)}


# the family's variants (the registry, variants/__init__.py, builds each VariantSpec from its row); accuso_points:
# card points per accuso condition, payoffs reach +-(243 + 9 P) thirds (utility_bounds)
VARIANT_ROWS = {
    name: VariantRow(options=_options(name), n_players=n, hand_sizes=(hand,) * n, stock_size=stock,
                     layout=layout(name), fixed={"variant": name}, long_name=LONG_NAMES[name],
                     option_ranges={"accuso_points": (0, _ACCUSO_POINTS_MAX)} if name == "piedmont4" else {})
    for name, (n, hand, stock, _, _) in SHAPES.items()
}


def card_values(honours):
    """Card-point values: K 5, T1 5, the 5-point honours 5, Q 4, EX 4, N 3, J 2, else scartina (0)."""
    v = np.zeros(N_CARDS, np.int8)
    for c, name in enumerate(DECK.names):
        if name in ("T1", "EX") or name in honours:
            v[c] = 4 if name == "EX" else 5
        elif not name.startswith("T"):
            v[c] = {"K": 5, "Q": 4, "N": 3, "J": 2}.get(name[0], 0)
    return v


@cache
def make_rule_tables(variant="piedmont3", excuse_exchange=True, honour_5="mondo", accuso=False,
                     accuso_points=5):
    """RuleTables of ``piedmont3`` / ``piedmont4`` with their options (cached; read-only arrays)."""
    n, hand, stock, tricks, total = SHAPES[variant]
    if variant == "piedmont4":
        honours = ["T20", "T21"]
    elif honour_5 in ("mondo", "angelo"):
        honours = ["T21"] if honour_5 == "mondo" else ["T20"]
    else:
        raise ValueError(f"option honour_5 must be 'mondo' or 'angelo', got {honour_5!r}")
    if accuso_points < 0:
        raise ValueError(f"option accuso_points must be >= 0, got {accuso_points}")
    trumps = [f"T{k}" for k in range(1, 22)]
    kings = ["KC", "KD", "KS", "KB"]
    protected = ["T1"] + honours
    offsets, _, _ = layout(variant)
    values = card_values(honours)
    return make_tables(
        DECK,
        values,
        masks={
            MK_TRUMPS: trumps,
            MK_EX: ["EX"],
            MK_KINGS: kings,
            MK_DISCARD_FORBIDDEN: trumps + kings + ["EX"],
            MK_DISCARD_FALLBACK: [t for t in trumps if t not in protected],
            _MK_ACCUSO_HONOURS: ["T1", "T20", "T21"],
        },
        params={
            P_FAMILY: FAMILY_ID,
            P_PLAYERS: n,
            P_CARDS: N_CARDS,
            P_HAND: hand,
            P_STOCK: stock,
            P_TRICKS: tricks,
            P_DISCARDS: stock,
            P_DEALER: n - 1,
            P_MUST_OVERTRUMP: 0,
            P_EX_LEAD_ANY: 1,
            P_EX_LAST: EX_LAST_ALWAYS,
            P_EXCHANGE: 1 if excuse_exchange else 0,
            P_COUNT: COUNT_TRIPLETS,
            P_ACCUSO: 1 if (accuso and variant == "piedmont4") else 0,
            _P_ACCUSO_POINTS: accuso_points,
            _P_TEAMS: 1 if variant == "piedmont4" else 0,
            P_N_SPECIAL: len(SPECIAL_ACTION_NAMES),
            P_BID_WORDS: 1,
            P_N_CONTRACTS: 1,
            P_TOTAL_POINTS: total,
            P_OBS_HOOK: 1 if variant == "piedmont4" else 0,  # observe_sections: the accuso
        },
        obs=offsets,
        phases=PHASES,
        tables_type=PiedmontTables,
    )


# ----------------------------------------------------------------------------------------------------------
# kernels called by the engine


@njit(cache=True)
def start_row(st, i, tb):
    """Full hands; the dealer takes the stock and discards."""
    m = st.meta[i]
    n = tb.params[P_PLAYERS]
    h = tb.params[P_HAND]
    deal_hands(st, i, tb, 0, h)
    for s in range(n):
        m[SIDE + s] = s % 2 if tb.params[_P_TEAMS] == 1 else s
    dealer = tb.params[P_DEALER]
    m[DECLARER] = dealer
    st.cards[i, HAND + dealer, 0] |= st.cards[i, STOCK, 0]
    st.cards[i, HAND + dealer, 1] |= st.cards[i, STOCK, 1]
    m[DISCARDS_LEFT] = tb.params[P_DISCARDS]
    m[PHASE] = DISCARD
    m[CUR] = dealer
    m[TURN] = 0


@njit(cache=True)
def _accuso_conditions(st, i, p, tb):
    """(conditions held 0..2, the cards they show as two words)."""
    t = st.cards[i, HAND + p, 0] & tb.masks[MK_TRUMPS, 0]
    hon = tb.masks[_MK_ACCUSO_HONOURS, 0]
    n = 0
    shown = U0
    if popcount(t) >= 10:
        n += 1
        shown |= t
    if (t & hon) == hon:
        n += 1
        shown |= hon
    return n, shown


@njit(cache=True)  # not inlined: its loops (variants/dispatch.py)
def legal_flags(st, i, tb):
    m = st.meta[i]
    if m[PHASE] == ACCUSO:
        n, _ = _accuso_conditions(st, i, m[CUR], tb)
        return F_PASS | F_ACCUSO if n > 0 else F_PASS
    return 0


@njit(cache=True)
def after_discard(st, i, tb):
    if tb.params[P_ACCUSO] == 1:
        st.meta[i, PHASE] = ACCUSO
        st.meta[i, CUR] = 0
        st.meta[i, TURN] = 0
    else:
        start_play(st, i, np.int64(0))


@njit(cache=True, inline="always")
def step_special(st, i, k, tb):
    """The accuso round: seats 0..3 in turn say pass or accuso."""
    m = st.meta[i]
    p = m[CUR]
    if k == K_ACCUSO:
        n, shown = _accuso_conditions(st, i, p, tb)
        m[ACCUSO_DECL + p] = n
        st.cards[i, SHOWN_BY + p, 0] = shown
        for s in range(tb.params[P_PLAYERS]):
            if s != p:  # the shown cards are his
                add_excluded(st, i, s, shown, U0)
        trumps = tb.masks[MK_TRUMPS, 0]
        if popcount(shown & trumps) >= 10:  # ten trumps accused: he showed all of them
            add_excluded(st, i, p, trumps & ~shown, U0)
    else:
        m[ACCUSO_DECL + p] = 0
    m[TURN] += 1
    if m[TURN] == tb.params[P_PLAYERS]:
        start_play(st, i, np.int64(0))
    else:
        m[CUR] = m[TURN]


@njit(cache=True)
def settle(st, i, tb):
    """Thirds per side (seat in piedmont3, team in piedmont4) with the Excuse exchange; payoffs."""
    m = st.meta[i]
    n = tb.params[P_PLAYERS]
    n_sides = 2 if tb.params[_P_TEAMS] == 1 else n
    dealer = tb.params[P_DEALER]
    for side in range(n_sides):
        s0 = U0
        s1 = U0
        for s in range(n):
            if m[SIDE + s] == side:
                s0 |= st.cards[i, WON + s, 0]
                s1 |= st.cards[i, WON + s, 1]
        if m[SIDE + dealer] == side:
            s0 |= st.cards[i, DISCARDED, 0]
            s1 |= st.cards[i, DISCARDED, 1]
        ep = m[EX_PLAYER]
        if m[EX_LAST] == 0 and m[SIDE + ep] == side:
            s0 |= _EXB  # the owner keeps the Excuse
        t = card_points(s0, s1, tb)
        for s in range(n):
            if m[SIDE + s] == side and m[ACCUSO_DECL + s] > 0:
                t += 3 * tb.params[_P_ACCUSO_POINTS] * m[ACCUSO_DECL + s]
        m[POINTS + side] = t
    if m[EX_LAST] == 0 and tb.params[P_EXCHANGE] == 1:
        owner = m[SIDE + m[EX_PLAYER]]
        taker = m[SIDE + m[EX_TRICK_WINNER]]
        if owner != taker:
            m[POINTS + owner] -= 1
            m[POINTS + taker] += 1
    if n_sides == 2:
        d = m[POINTS] - m[POINTS + 1]
        for s in range(n):
            m[PAYOFF + s] = d if m[SIDE + s] == 0 else -d
    else:
        for s in range(n):
            m[PAYOFF + s] = m[POINTS + s] - 77


@njit(cache=True, inline="always")
def observe_sections(st, i, viewer, tb, out):
    """The contract's hook: the accuso declared, per relative seat (FAMILY_SECTIONS; piedmont4)."""
    m = st.meta[i]
    n = tb.params[P_PLAYERS]
    for s in range(n):
        if m[ACCUSO_DECL + s] > 0:
            out[tb.obs[_S_ACCUSO] + (s - viewer) % n] = 1.0


# ----------------------------------------------------------------------------------------------------------
# kernels called by the determinizer (search/determinize.py) and the heuristic (policies/heuristic.py)

_FIX_STOCK = 1  # sample_fixes: which of the dealer's cards were the stock is drawn again
sample_rejected = sample_never_rejected
cards_dealt = whole_hand_dealt


stock_places_known = no_stock_places_known


@njit(cache=True, inline="always")
def stock_in_hand(st, i, tb):
    """The contract's hook: the dealer takes the stock unseen at the deal: it is always in his hand."""
    return True


@njit(cache=True, inline="always")
def hand_cap(st, i, s, tb):
    """The contract's hook: an accuso of the honours alone (fewer than ten trumps shown) proves fewer than ten
    trumps at the time: at most 9 less those played since in seat s's hidden hand."""
    if st.meta[i, ACCUSO_DECL + s] >= 1:
        cd = st.cards
        trumps = tb.masks[MK_TRUMPS, 0]
        shown = cd[i, SHOWN_BY + s, 0] & trumps
        if popcount(shown) < 10:
            return (9 - popcount(cd[i, PLAYED + s, 0] & trumps) - popcount(cd[i, HAND + s, 0] & shown)), trumps, U0
    return no_hand_cap(st, i, s, tb)


@njit(cache=True)
def sample_fixes(st, i, p, tb):
    """The contract's hook: _FIX_STOCK when seat p is not the dealer (he cannot tell which cards were the
    stock), else 0."""
    return _FIX_STOCK if st.meta[i, DECLARER] != p else 0


@njit(cache=True)
def fix_sample(st, j, p, fixes, tb, rng):
    """The contract's hook: which of the dealer's cards (held, played, discarded) were the stock, uniformly.
    Returns the RNG state."""
    cd = st.cards
    d = st.meta[j, DECLARER]
    a0 = cd[j, HAND + d, 0] | cd[j, PLAYED + d, 0] | cd[j, DISCARDED, 0]
    a1 = cd[j, HAND + d, 1] | cd[j, PLAYED + d, 1] | cd[j, DISCARDED, 1]
    rng, s0, s1, _, _ = draw_bits(a0, a1, tb.params[P_STOCK], rng)
    cd[j, STOCK, 0] = s0
    cd[j, STOCK, 1] = s1
    return rng


# The heuristic's rules of its own (policies/heuristic.py has the shared ones)
#
# | decision          | rule                                                                     |
# |-------------------|--------------------------------------------------------------------------|
# | piedmont4 accuso  | declare whenever legal (a free bonus)                                    |
# | attacking         | every seat (each plays for itself, or for its pair, from the deal on)    |
heuristic_reserved = reserve_nothing
heuristic_ex_dump = never_dump_ex


@njit(cache=True)
def heuristic_special(st, i, tb, flags):
    """The contract's hook: the accuso whenever legal, else pass."""
    if st.meta[i, PHASE] == ACCUSO and flags & 2:
        return 1
    return 0


@njit(cache=True, inline="always")
def heuristic_attack(st, i, p, allies, tb):
    """The contract's hook: every seat leads as the attacking side."""
    return True


# ----------------------------------------------------------------------------------------------------------
# Python side


def action_to_string(a: int, phase: int) -> str:
    a = int(a)
    card = card_action_to_string(DECK, a)
    if card is not None:
        return card
    if A_PASS <= a < N_ACTIONS:
        return SPECIAL_ACTION_NAMES[a - A_PASS]
    raise ValueError(f"action id {a} is out of range 0..{N_ACTIONS - 1}")


def string_to_action(text: str) -> int:
    card = card_string_to_action(DECK, text)
    if card is not None:
        return card
    kind, _, arg = text.strip().partition(":")
    kind = kind.lower()
    if not arg and kind in SPECIAL_ACTION_NAMES:
        return A_PASS + SPECIAL_ACTION_NAMES.index(kind)
    raise ValueError(f"unknown action {text!r}: expected play:<card>, discard:<card>, pass or accuso")


def outcome(st, i: int, tb) -> dict:
    """Finished game ``i`` in the one outcome schema (:data:`tarocchi_rl.variants.OUTCOME_FIELDS`): sides are the
    seats (piedmont3) or the pairs 0+2, 1+3 (piedmont4); the declarer is the dealer; the accuso is the bonus."""
    m = st.meta[i]
    if m[PHASE] != DONE:
        raise ValueError("the deal is not finished")
    n = int(tb.params[P_PLAYERS])
    n_sides = 2 if tb.params[_P_TEAMS] == 1 else n
    accuso = [3 * int(tb.params[_P_ACCUSO_POINTS]) * sum(int(max(m[ACCUSO_DECL + s], 0)) for s in range(n)
                                                        if m[SIDE + s] == k) for k in range(n_sides)]
    cards = [int(m[POINTS + k]) - accuso[k] for k in range(n_sides)]
    details: dict[str, Any] = {"excuse": {"played_by": int(m[EX_PLAYER]), "trick_won_by": int(m[EX_TRICK_WINNER]),
                                          "to_last_trick_winner": bool(m[EX_LAST])}}
    if n_sides == 2:
        details["accuso"] = [int(max(x, 0)) for x in m[ACCUSO_DECL : ACCUSO_DECL + 4]]
    return {
        "payoffs": [int(x) for x in m[PAYOFF : PAYOFF + n]],
        "contract": None,
        "declarer": int(m[DECLARER]),
        "sides": [[s for s in range(n) if m[SIDE + s] == k] for k in range(n_sides)],
        "card_points": [t / CARD_POINT_UNITS for t in cards],
        "card_point_units": cards,
        "bonuses": [{"name": "accuso", "side": k, "points": accuso[k]} for k in range(n_sides) if accuso[k]],
        "details": details,
    }


ONE_IN_EVERY_HAND: tuple[int, ...] = ()  # every deal may be played
STOCK_IN_ORDER = False  # the stock shown: its order tells nothing


# -- the score sheet (web/score_sheet.py) -------------------------------------------------------------------------
END_COUNT_TEXT = ("the dealer's discard and the Matto, kept by its owner (a third of a point given for it to the "
                  "trick's winner)")


def score_sheet_rows(out: dict[str, Any], options: dict[str, Any]) -> tuple[str, list[Row]]:
    """The score sheet's headline and rows of a finished deal (its outcome): the dealer, the card points, the Matto,
    the accuso and the payoffs."""
    d, sides = out["details"], out["sides"]
    cards = out["card_point_units"]
    accuso = [sum(b["points"] for b in out["bonuses"] if b["side"] == k) for k in range(len(sides))]
    total = sum(cards)
    rows = [{"term": "Dealer", "text": f"seat {out['declarer']} dealt and discarded"},
            {"term": "Card points", "text": ", ".join(f"{seats_text(s)} {points_text(cards[k], 3)}"
                                                      for k, s in enumerate(sides))
             + f" (of {points_text(total, 3)})"}]
    rows.append({"term": "Matto", "text": _matto_text(d["excuse"], bool(options.get("excuse_exchange", True)),
                                                      sides)})
    if len(sides) == 2:
        for k, s in enumerate(sides):
            if accuso[k]:
                rows.append({"term": "Accuso", "text": f"{seats_text(s)}: {accuso[k]} thirds for the conditions "
                                                       "declared"})
        mine = [cards[k] + accuso[k] for k in range(2)]
        pay = (f"each side its thirds minus the other's: {seats_text(sides[0])} {mine[0]} − {mine[1]} = "
               f"{signed(mine[0] - mine[1])}, {seats_text(sides[1])} {signed(mine[1] - mine[0])}")
    else:
        third = total // 3
        pay = "each seat its thirds minus a third of the deck (" + str(third) + "): " + ", ".join(
            f"seat {s[0]} {cards[k]} − {third} = {signed(cards[k] - third)}" for k, s in enumerate(sides))
    rows.append({"term": "Payoffs", "text": pay})
    best = max(range(len(out["payoffs"])), key=lambda k: out["payoffs"][k])
    return f"Seat {best} scores most: {signed(out['payoffs'][best])}", rows


def _matto_text(ex: dict[str, Any], exchange: bool, sides: list[list[int]]) -> str:
    by, won = ex["played_by"], ex["trick_won_by"]
    if by < 0:
        return "not played"
    if ex["to_last_trick_winner"]:
        return f"played by seat {by} to the last trick: it went to the trick's winner, seat {won}"
    same = any(by in s and won in s for s in sides)
    if same or not exchange:
        return f"played by seat {by} to a trick won by seat {won}: kept by seat {by}'s side"
    return f"played by seat {by} to a trick won by seat {won}: kept by seat {by}, who gave a third of a point for it"


def tally_note(final_units: int) -> str:
    """What the sheet adds to a side's final card points (in units) in the tally: nothing."""
    return ""
