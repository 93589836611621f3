"""Tarocchi Siciliani di Mineo (docs/rules.md §2): tables, actions, its own phases and the settlement.

The shared engine (:mod:`tarocchi_rl.engine`) deals, discards and plays tricks; this module adds the
early round, the auction with the automatic call, the scommessa and rivanto rounds, and the jochi.

Phases (codes of :mod:`tarocchi_rl.core.phases`): early -> auction -> discard -> scommessa -> rivanto ->
play -> done (early only with option ``early_solo``; an early or auction solo skips the rest of the
bidding; all passing ends the deal).

Actions (``C = 63`` cards, dense ids of :mod:`tarocchi_rl.cards`)

| action id    | meaning              | string                           |
|--------------|----------------------|----------------------------------|
| 0 .. 62      | play card c          | ``play:KC``                      |
| 63 .. 125    | discard card c - 63  | ``discard:5D``                   |
| 126          | pass                 | ``bid:pass`` (bidding), ``pass`` |
| 127          | solo (vado solo)     | ``bid:solo``                     |
| 128          | call (chiamo)        | ``bid:call``                     |
| 129          | scommessa            | ``scommessa``                    |
| 130          | rivanto              | ``rivanto``                      |

Contracts (``meta[CONTRACT]``): 0 none, 1 call, 2 solo, 3 forced solo (the called trump was in the monte).
Commitments (``meta[COMMIT + k]``): k=0 scommessa said (0/1), k=1 seat that said rivanto (-1: none).
Bonuses (``meta[BONUS + 8*side + k]``, jochi per side, side 0 = declarer's): slots ``J_*`` below.
The deal (``st.deck``): seat p holds ``deck[15p : 15p+15]``, the first 5 being the early-round cards; the
monte is ``deck[60:63]``.
"""

from functools import cache
from typing import Any

import numpy as np
from numba import njit

from ..bits import U0, U1, bit, popcount
from ..cards import EX_BIT, MINEO_DECK
from ..core.deal import deal_hands
from ..core.known import above, hi_bit, outstanding
from ..core.obs_layout import S_FAMILY, build_layout, section_sizes
from ..core.phases import DISCARD, DONE, Phase
from ..core.points import card_points
from ..core.state import (
    BID_WORD,
    BONUS,
    CALLED,
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
    LAST_WINNER,
    MULT,
    PARTNER,
    PAYOFF,
    PHASE,
    PLAYED,
    POINTS,
    SIDE,
    STOCK,
    STOCK_SHOWN,
    TRICKS_WON,
    TURN,
    WON,
)
from ..core.tables import (
    CARD_BIT,
    CARD_WORD,
    COUNT_TRIPLETS,
    EX_LAST_IF_LED,
    MK_CAPTURE_BONUS,
    MK_DISCARD_FALLBACK,
    MK_DISCARD_FORBIDDEN,
    MK_EX,
    MK_FAMILY,
    MK_KINGS,
    MK_SUIT,
    MK_TRUMPS,
    P_BID_WORDS,
    P_CAPTURE_BONUS,
    P_CARDS,
    P_COUNT,
    P_DEALER,
    P_DISCARDS,
    P_EX_LAST,
    P_EX_LEAD_ANY,
    P_FAMILY,
    P_FIRST_ROUND,
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
    attack_declarer_side,
    no_hand_cap,
    no_play_exclusions,
    no_stock_places_known,
    play_rules_unchanged,
    sample_never_rejected,
    stock_taken_when_shown,
    trick_winner_unchanged,
)
from .spec import VariantRow
from .words import Row, points_text, seats_text, signed

# the family's own rows of the shared tables (core/tables.py: MK_FAMILY + k)
MK_PIGLIATA = MK_FAMILY + 0  # T16..T19, T1
_MK_ARIE = MK_FAMILY + 1  # T16..T19
_MK_GIOVE = MK_FAMILY + 2  # T20
_MK_SCOMMESSA = MK_FAMILY + 3  # T20, T1, EX (the cards the Scommessa must win)
MK_SCOMMESSA_NEED = MK_FAMILY + 4  # T20, EX (must be held to say scommessa)
# the family's own state columns (core/state.py: FAMILY_META + k)
_EARLY_BID = FAMILY_META + 0  # + s: the seat's word in the early round (-1 not spoken)

NAME = "mineo"
LONG_NAME = "Tarocchi Siciliani di Mineo (4 players, hidden partnerships)"
FAMILY_ID = 0  # its position in the registry's FAMILIES (variants/__init__.py): params[P_FAMILY]


class MineoTables(RuleTables):
    """Mineo rule tables: a Numba type of their own, so that the kernels compiled for this family reach its
    hooks alone (variants/dispatch.py)."""

    __slots__ = ()


Tables = MineoTables  # the contract's name (Numba tells named tuples apart by class name: one each)


# Mineo's own phases (the engine's: core/phases.py); codes unique across the registry (variants/phases.py)
EARLY, AUCTION, SCOMMESSA, RIVANTO = 0, 1, 3, 4
PHASES = (
    Phase(EARLY, "early", "bid", bidding=True, what="seats 0..3 after 5 cards: pass / solo (doubled)"),
    Phase(AUCTION, "auction", "bid", bidding=True, what="seats 0..3: pass / solo / call"),
    Phase(SCOMMESSA, "scommessa", "bid", what="declarer: pass / scommessa"),
    Phase(RIVANTO, "rivanto", "bid", what="declarer+1..+3: pass / rivanto"),
)
DECK = MINEO_DECK
_N_PLAYERS = 4
N_CARDS = 63
HAND_SIZE = 15
_FIRST_ROUND = 5  # cards per seat of the early round (option early_solo): params[P_FIRST_ROUND]
_HAND_SIZES = (15, 15, 15, 15)  # the deal order of st.deck: these hands by seat, then the stock
_STOCK_SIZE = 3
_N_TRICKS = 15

# contracts
NONE, CALL, SOLO, FORCED_SOLO = range(4)
CONTRACT_NAMES = ("none", "call", "solo", "forced solo")
# actions
A_PLAY = 0
A_DISCARD = N_CARDS
A_PASS = 2 * N_CARDS
A_SOLO = A_PASS + 1
A_CALL = A_PASS + 2
A_SCOMMESSA = A_PASS + 3
A_RIVANTO = A_PASS + 4
N_ACTIONS = A_PASS + 5
BID_WORDS = ("pass", "solo", "call")  # meta[BID_WORD + s] / meta[_EARLY_BID + s] words, for display
SPECIAL_ACTION_NAMES = ("pass", "solo", "call", "scommessa", "rivanto")
# special action k (flags bit k)
K_PASS, K_SOLO, K_CALL, K_SCOMMESSA, K_RIVANTO = range(5)
F_PASS, F_SOLO, F_CALL, F_SCOMMESSA, F_RIVANTO = 1, 2, 4, 8, 16
# words stored in meta[_EARLY_BID + s] / meta[BID_WORD + s]
_BID_PASS, _BID_SOLO, _BID_CALL = 0, 1, 2
# bonus slots (jochi)
J_RIMATURA, J_VANTO, J_RIVANTO, J_ARIE, J_PIGLIATA, J_RE, J_SCOMMESSA = range(7)
BONUS_NAMES = ("rimatura", "vanto", "rivanto", "arie", "pigliata", "re", "scommessa")
_RIMATURA_THIRDS = 164
_LAST_TRICK_THIRDS = 15
TOTAL_THIRDS = 327

# -- facts, read by the adapters, ISMCTS, the trainer and the CLI (variants/__init__.py: the contract) ---------
PAYOFF_SCALE = 10.0  # payoffs are jochi (x3 for the soloist): / 10 gives rewards of order 1
_MAX_JOCHI_PER_SIDE = 12  # rimatura 1 + rivanto 2 + arie con Giove 2 + 5 pigliate + re 1 + scommessa 1
BONUS_UNIT = "jochi"
DECLARER_ROLE = "declarer"  # what the outcome's "declarer" is called in this game
CARD_POINT_UNITS = 3  # card points are counted in thirds
CARD_POINT_UNIT_NAME = "thirds"
STRING_OPTION_CHOICES: dict[str, tuple[str, ...]] = {}  # the values of each string option: none
# the bidding rounds in the order of the deal: (meta column of each seat's word, name, prefix of its words' counts)
BID_ROUNDS = ((_EARLY_BID, "early round", "early "), (BID_WORD, "bids", ""))
OUTCOME_DETAILS = {
    "called": "the called trump (null: solo)",
    "partner": "the called trump's holder (null: solo)",
    "doubled": "stakes doubled by an early solo",
}


def utility_bounds(variant: str = NAME, early_solo: bool = True) -> tuple[int, int]:
    """(min, max) payoff of any seat in any deal: per side at most _MAX_JOCHI_PER_SIDE jochi, so the difference
    D is in [-12, 12], x2 after an early solo; the soloist gets 3D and each opponent -D: [-72, 72] (without
    ``early_solo`` [-36, 36])."""
    d = _MAX_JOCHI_PER_SIDE * (2 if early_solo else 1)
    return -3 * d, 3 * d


def max_game_length(variant: str = NAME, early_solo: bool = True) -> int:
    """The most player decisions in one deal: 4 early words + 4 auction words + 3 discards + scommessa + 3
    rivanto + 60 cards = 75 (71 without the early round)."""
    return (4 if early_solo else 0) + 4 + _STOCK_SIZE + 1 + 3 + _N_PLAYERS * _N_TRICKS


OBS_SECTIONS = (
    "hand", "played", "trick", "stock", "discard", "shown", "early", "bids", "declarer", "contract", "doubled",
    "called", "partner_known", "partner", "scommessa", "rivanto", "points", "tricks_won", "trick_num", "phase",
    "leader", "seat",
)
# Mineo's own observation sections (core/obs_layout.py: S_FAMILY + k), written by observe_sections:
# | section       | size | content                                                                         |
# |---------------|------|---------------------------------------------------------------------------------|
# | early         | 4x2  | the early round: [pass, solo] per relative seat                                 |
# | doubled       | 1    | stakes doubled (an early solo)                                                  |
# | partner_known | 1    | the viewer knows the partnership (partner, called trump played, or solo)        |
# | partner       | 4    | partner, relative seat (when known and there is one)                            |
# | scommessa     | 1    | scommessa said                                                                  |
# | rivanto       | 4    | rivanto said, by relative seat                                                  |
FAMILY_SECTIONS = ("early", "doubled", "partner_known", "partner", "scommessa", "rivanto")
_S_EARLY, _S_DOUBLED, _S_PARTNER_KNOWN, _S_PARTNER, _S_SCOMMESSA, _S_RIVANTO = (S_FAMILY + k for k in range(6))
_OBS_SIZES = section_sizes(4, N_CARDS, 3, 3, _N_TRICKS) | {
    "early": 4 * 2, "doubled": 1, "partner_known": 1, "partner": 4, "scommessa": 1, "rivanto": 4,
    "called": 21,  # the called trumps T0..T20: dense ids 0..20
}
OBS_OFFSETS, OBS_DIM, OBS_ROWS = build_layout(OBS_SECTIONS, _OBS_SIZES, FAMILY_SECTIONS)

# the family's variant (the registry, variants/__init__.py, builds its VariantSpec from this row)
VARIANT_ROWS = {NAME: VariantRow(options={"early_solo": (bool, True)}, n_players=_N_PLAYERS, hand_sizes=_HAND_SIZES,
                                 stock_size=_STOCK_SIZE, layout=(OBS_OFFSETS, OBS_DIM, OBS_ROWS), fixed={},
                                 long_name=LONG_NAME, option_ranges={})}

_EXB = np.uint64(1) << np.uint64(EX_BIT)


def card_values():
    """Card-point value of each dense card: specials as docs/rules.md §2, 0 for scartine."""
    v = np.zeros(N_CARDS, np.int8)
    for c, name in enumerate(DECK.names):
        if name in ("T1", "T20", "EX"):
            v[c] = 10
        elif name in ("T16", "T17", "T18", "T19"):
            v[c] = 5
        elif not name.startswith("T"):
            v[c] = {"K": 5, "Q": 4, "N": 3, "J": 2}.get(name[0], 0)
    return v


@cache
def make_rule_tables(early_solo=True):
    """RuleTables for Mineo with its option ``early_solo`` (bool). Cached: treat the arrays as read-only."""
    trumps = [f"T{k}" for k in range(21)]
    kings = ["KC", "KD", "KS", "KB"]
    return make_tables(
        DECK,
        card_values(),
        masks={
            MK_TRUMPS: trumps,
            MK_EX: ["EX"],
            MK_KINGS: kings,
            MK_DISCARD_FORBIDDEN: trumps + kings + ["EX"],
            MK_DISCARD_FALLBACK: [f"T{k}" for k in range(2, 16)],
            MK_PIGLIATA: ["T16", "T17", "T18", "T19", "T1"],
            MK_CAPTURE_BONUS: ["T16", "T17", "T18", "T19", "T1"],  # the pigliata: one jocco each
            _MK_ARIE: ["T16", "T17", "T18", "T19"],
            _MK_GIOVE: ["T20"],
            _MK_SCOMMESSA: ["T20", "T1", "EX"],
            MK_SCOMMESSA_NEED: ["T20", "EX"],
        },
        params={
            P_FAMILY: FAMILY_ID,
            P_OBS_HOOK: 1,  # observe_sections: the partnership and the commitments
            P_CAPTURE_BONUS: J_PIGLIATA,
            P_PLAYERS: _N_PLAYERS,
            P_CARDS: N_CARDS,
            P_HAND: HAND_SIZE,
            P_STOCK: _STOCK_SIZE,
            P_TRICKS: _N_TRICKS,
            P_DISCARDS: 3,
            P_DEALER: 3,
            P_MUST_OVERTRUMP: 0,
            P_EX_LEAD_ANY: 0,
            P_EX_LAST: EX_LAST_IF_LED,
            P_COUNT: COUNT_TRIPLETS,
            P_FIRST_ROUND: _FIRST_ROUND if early_solo else HAND_SIZE,
            P_N_SPECIAL: len(SPECIAL_ACTION_NAMES),
            P_BID_WORDS: 3,
            P_N_CONTRACTS: 3,
            P_TOTAL_POINTS: TOTAL_THIRDS,
        },
        obs=OBS_OFFSETS,
        phases=PHASES,
        tables_type=MineoTables,
    )


# ----------------------------------------------------------------------------------------------------------
# kernels called by the engine


@njit(cache=True)
def start_row(st, i, tb):
    """After the shared reset: the early round gets 5 cards each, else the full deal and the auction."""
    m = st.meta[i]
    m[COMMIT] = 0
    m[CONTRACT] = NONE
    m[MULT] = 1
    m[STOCK_SHOWN] = 0
    m[TURN] = 0
    early = tb.params[P_FIRST_ROUND] < HAND_SIZE
    deal_hands(st, i, tb, np.int64(0), tb.params[P_FIRST_ROUND])
    m[PHASE] = EARLY if early else AUCTION
    m[CUR] = 0


@njit(cache=True)  # not inlined: its loops (variants/dispatch.py)
def legal_flags(st, i, tb):
    """Legal special actions in Mineo's own phases (bit k = special action k)."""
    m = st.meta[i]
    ph = m[PHASE]
    p = m[CUR]
    if ph == EARLY:
        return F_PASS | F_SOLO
    if ph == AUCTION:
        for s in range(4):
            if m[BID_WORD + s] == _BID_CALL:
                return F_PASS | F_SOLO
        return F_PASS | F_SOLO | F_CALL
    if ph == SCOMMESSA:
        need = tb.masks[MK_SCOMMESSA_NEED, 0]
        return F_PASS | F_SCOMMESSA if (st.cards[i, HAND + p, 0] & need) == need else F_PASS
    if ph == RIVANTO:
        return F_PASS | F_RIVANTO if m[SIDE + p] == 1 else F_PASS
    return 0


@njit(cache=True)
def _take_monte(st, i, declarer, contract, mult, tb):
    """The declarer is fixed: show the monte, add it to his hand, set sides, go to the discard. (Its callers pass
    int64 values, not literals or int32 ones: each argument type would compile a specialisation of its own.)"""
    m = st.meta[i]
    m[DECLARER] = declarer
    m[CONTRACT] = contract
    m[MULT] = mult
    for s in range(4):
        m[SIDE + s] = 0 if (s == declarer or s == m[PARTNER]) else 1
    m[STOCK_SHOWN] = 1
    st.cards[i, HAND + declarer, 0] |= st.cards[i, STOCK, 0]
    st.cards[i, HAND + declarer, 1] |= st.cards[i, STOCK, 1]
    for s in range(4):
        if s != declarer:  # the shown monte is the declarer's (hand or discard)
            add_excluded(st, i, s, st.cards[i, STOCK, 0], st.cards[i, STOCK, 1])
    m[DISCARDS_LEFT] = tb.params[P_DISCARDS]
    m[PHASE] = DISCARD
    m[CUR] = declarer


@njit(cache=True)
def _end_auction(st, i, tb):
    """After the fourth bid: resolve a call (partner or forced solo), or end a deal where all passed."""
    m = st.meta[i]
    caller = -1
    for s in range(4):
        if m[BID_WORD + s] == _BID_CALL:
            caller = s
    if caller < 0:
        m[PHASE] = DONE  # all passed: void deal, payoffs 0
        return
    held = st.cards[i, HAND + caller, 0] & tb.masks[MK_TRUMPS, 0]
    b = 20  # the highest trump the caller does not hold (he cannot hold all 21 in 15 cards)
    while (held & bit(b)) != U0:
        b -= 1
    m[CALLED] = tb.pos_to_card[b]
    above = tb.masks[MK_TRUMPS, 0] & ~((bit(b) << U1) - U1)
    for s in range(4):
        if s != caller:  # the trumps above the called one are the caller's
            add_excluded(st, i, s, above, U0)
    if (st.cards[i, STOCK, 0] & bit(b)) != U0:
        _take_monte(st, i, np.int64(caller), np.int64(FORCED_SOLO), np.int64(1), tb)
        return
    for s in range(4):
        if (st.cards[i, HAND + s, 0] & bit(b)) != U0:
            m[PARTNER] = s
    add_excluded(st, i, caller, bit(b), U0)
    _take_monte(st, i, np.int64(caller), np.int64(CALL), np.int64(1), tb)


@njit(cache=True, inline="always")
def step_special(st, i, k, tb):
    """Apply special action k (pass, solo, call, scommessa, rivanto) in Mineo's own phases."""
    m = st.meta[i]
    ph = m[PHASE]
    p = m[CUR]
    if ph == EARLY:
        if k == K_SOLO:
            m[_EARLY_BID + p] = _BID_SOLO
            deal_hands(st, i, tb, tb.params[P_FIRST_ROUND], np.int64(HAND_SIZE))
            _take_monte(st, i, np.int64(p), np.int64(SOLO), np.int64(2), tb)
        else:
            m[_EARLY_BID + p] = _BID_PASS
            if p == 3:
                deal_hands(st, i, tb, tb.params[P_FIRST_ROUND], np.int64(HAND_SIZE))
                m[PHASE] = AUCTION
                m[CUR] = 0
            else:
                m[CUR] = p + 1
    elif ph == AUCTION:
        m[BID_WORD + p] = k
        if k == K_SOLO:
            _take_monte(st, i, np.int64(p), np.int64(SOLO), np.int64(1), tb)
        elif p == 3:
            _end_auction(st, i, tb)
        else:
            m[CUR] = p + 1
    elif ph == SCOMMESSA:
        m[COMMIT] = 1 if k == K_SCOMMESSA else 0
        if k == K_SCOMMESSA:  # he holds T20 and EX
            for s in range(4):
                if s != p:
                    add_excluded(st, i, s, tb.masks[MK_SCOMMESSA_NEED, 0], U0)
        m[PHASE] = RIVANTO
        m[TURN] = 1
        m[CUR] = (m[DECLARER] + 1) % 4
    elif ph == RIVANTO:
        if k == K_RIVANTO:
            m[COMMIT + 1] = p
            c = m[CALLED]
            if c >= 0:  # an opponent: not the called trump's holder
                add_excluded(st, i, p, bit(tb.card[c, CARD_BIT]), U0)
            start_play(st, i, np.int64(m[DECLARER]))
        else:
            m[TURN] += 1
            if m[TURN] == 4:
                start_play(st, i, np.int64(m[DECLARER]))
            else:
                m[CUR] = (m[DECLARER] + m[TURN]) % 4


@njit(cache=True)
def after_discard(st, i, tb):
    st.meta[i, PHASE] = SCOMMESSA


@njit(cache=True)
def _side_cards(st, i, side):
    """The two-word set of cards a side holds at the end: won tricks, the discard, and EX as docs/rules.md §2."""
    m = st.meta[i]
    s0 = U0
    s1 = U0
    for s in range(4):
        if m[SIDE + s] == side:
            s0 |= st.cards[i, WON + s, 0]
            s1 |= st.cards[i, WON + s, 1]
    if side == 0:
        s0 |= st.cards[i, DISCARDED, 0]
        s1 |= st.cards[i, DISCARDED, 1]
    ep = m[EX_PLAYER]
    if ep >= 0 and m[EX_LAST] == 0:
        owner = m[SIDE + ep]
        owner_won = owner == 0  # the declarer's discard counts as a trick
        for s in range(4):
            if m[SIDE + s] == owner and m[TRICKS_WON + s] > 0:
                owner_won = True
        dest = owner if owner_won else m[SIDE + m[EX_TRICK_WINNER]]
        if dest == side:
            s0 |= _EXB
    return s0, s1


@njit(cache=True)
def settle(st, i, tb):
    """Count card points (thirds) and jochi, then set the payoffs (docs/rules.md §2 settlement)."""
    m = st.meta[i]
    last_side = m[SIDE + m[LAST_WINNER]]
    for side in range(2):
        s0, s1 = _side_cards(st, i, side)
        thirds = card_points(s0, s1, tb)
        if side == last_side:
            thirds += _LAST_TRICK_THIRDS
        m[POINTS + side] = thirds
        bonus = BONUS + 8 * side
        if thirds >= _RIMATURA_THIRDS:
            m[bonus + J_RIMATURA] = 1
        arie = tb.masks[_MK_ARIE, 0]
        if (s0 & arie) == arie:
            giove = tb.masks[_MK_GIOVE, 0]
            m[bonus + J_ARIE] = 2 if (s0 & giove) == giove else 1
        kings = tb.masks[MK_KINGS, 1]
        if (s1 & kings) == kings:
            m[bonus + J_RE] = 1
        if side == 0 and m[COMMIT] == 1:
            need = tb.masks[_MK_SCOMMESSA, 0]
            m[BONUS + (0 if (s0 & need) == need else 8) + J_SCOMMESSA] = 1
    if m[COMMIT + 1] >= 0:
        m[BONUS + 8 * last_side + J_RIVANTO] = 2
    else:
        m[BONUS + 8 * last_side + J_VANTO] = 1
    d = 0
    for k in range(8):
        d += m[BONUS + k] - m[BONUS + 8 + k]
    d *= m[MULT]
    solo = m[PARTNER] < 0
    for s in range(4):
        if m[SIDE + s] == 0:
            m[PAYOFF + s] = 3 * d if solo else d
        else:
            m[PAYOFF + s] = -d


@njit(cache=True)
def partner_known(st, i, viewer, tb):
    """Whether ``viewer`` knows the partnership: a solo, he is the partner, or the called trump was played."""
    m = st.meta[i]
    if m[CONTRACT] == SOLO or m[CONTRACT] == FORCED_SOLO:
        return True
    if m[CONTRACT] != CALL:
        return False
    if viewer == m[PARTNER]:
        return True
    c = m[CALLED]
    w = tb.card[c, CARD_WORD]
    mk = bit(tb.card[c, CARD_BIT])
    for s in range(4):
        if (st.cards[i, PLAYED + s, w] & mk) != U0:
            return True
    return False


sides_known = partner_known  # the contract's hook: whether a seat knows the sides
trick_won = trick_winner_unchanged  # (the pigliata is the tables' capture bonus)
play_rules = play_rules_unchanged
play_exclusions = no_play_exclusions
ZERO_SUM = True  # every deal's payoffs add up to 0


@njit(cache=True, inline="always")
def observe_sections(st, i, viewer, tb, out):
    """The contract's hook: the early round, the doubled stakes, the partnership once the viewer knows it, the
    scommessa and the rivanto."""
    m = st.meta[i]
    o = tb.obs
    for s in range(4):
        if m[_EARLY_BID + s] >= 0:
            out[o[_S_EARLY] + 2 * ((s - viewer) % 4) + m[_EARLY_BID + s]] = 1.0
    if m[MULT] == 2:
        out[o[_S_DOUBLED]] = 1.0
    if partner_known(st, i, viewer, tb):
        out[o[_S_PARTNER_KNOWN]] = 1.0
        if m[PARTNER] >= 0:
            out[o[_S_PARTNER] + (m[PARTNER] - viewer) % 4] = 1.0
    if m[COMMIT] == 1:
        out[o[_S_SCOMMESSA]] = 1.0
    if m[COMMIT + 1] >= 0:
        out[o[_S_RIVANTO] + (m[COMMIT + 1] - viewer) % 4] = 1.0


# ----------------------------------------------------------------------------------------------------------
# kernels called by the determinizer (search/determinize.py) and the heuristic (policies/heuristic.py)

_FIX_PARTNER = 1  # sample_fixes: the partnership follows the sampled cards
stock_in_hand = stock_taken_when_shown  # (the monte, once shown, is the declarer's)
stock_places_known = no_stock_places_known
hand_cap = no_hand_cap
sample_rejected = sample_never_rejected


@njit(cache=True, inline="always")
def cards_dealt(st, i, tb):
    """The contract's hook: in the early round each seat holds its first params[P_FIRST_ROUND] cards."""
    return tb.params[P_FIRST_ROUND] if st.meta[i, PHASE] == EARLY else tb.params[P_HAND]


@njit(cache=True)
def sample_fixes(st, i, p, tb):
    """The contract's hook: _FIX_PARTNER while seat p cannot tell who holds the called trump (a call; the trump
    neither in his hand nor played), else 0."""
    m = st.meta[i]
    if m[CONTRACT] == CALL and m[CALLED] >= 0:
        mk = bit(tb.card[m[CALLED], CARD_BIT])
        if (st.cards[i, HAND + p, 0] & mk) == U0:
            for s in range(4):
                if (st.cards[i, PLAYED + s, 0] & mk) != U0:
                    return 0
            return _FIX_PARTNER
    return 0


@njit(cache=True)
def fix_sample(st, j, p, fixes, tb, rng):
    """The contract's hook: the holder of the called trump is the partner; the sides and the pigliata bonuses
    (each pigliata card won from the other side in a completed trick) follow. Draws nothing."""
    m = st.meta[j]
    cd = st.cards
    mk = bit(tb.card[m[CALLED], CARD_BIT])
    for s in range(4):
        if (cd[j, HAND + s, 0] & mk) != U0:
            m[PARTNER] = s
    for s in range(4):
        m[SIDE + s] = 0 if (s == m[DECLARER] or s == m[PARTNER]) else 1
    m[BONUS + J_PIGLIATA] = 0
    m[BONUS + 8 + J_PIGLIATA] = 0
    pig = tb.masks[MK_PIGLIATA, 0]
    while pig != U0:
        b = pig & (~pig + U1)
        pig &= ~b
        for w in range(4):
            if (cd[j, WON + w, 0] & b) != U0:
                for s in range(4):
                    if (cd[j, PLAYED + s, 0] & b) != U0 and m[SIDE + s] != m[SIDE + w]:
                        m[BONUS + 8 * m[SIDE + w] + J_PIGLIATA] += 1
    return rng


# The heuristic's rules of its own (policies/heuristic.py has the shared ones)
#
# | decision      | rule                                                                                       |
# |---------------|--------------------------------------------------------------------------------------------|
# | strength      | 2 per trump, +2 per Aria (T16..T19), +4 T20, +3 EX, +3 per King, T1 +2 (>= 6 trumps) else |
# |               | -1, with >= 5 trumps: +2 per void suit, +1 per singleton (hand_strength)                   |
# | early round   | solo (doubled) if the 5 cards' strength >= _HEURISTIC_EARLY_SOLO (26: five top trumps)     |
# | auction       | solo if strength >= _HEURISTIC_SOLO (30); call if >= _HEURISTIC_CALL (9) and nobody called; |
# |               | else pass                                                                                  |
# | scommessa     | say it (T20 and EX held) when T1 is held too with >= 4 trumps; else pass                   |
# | rivanto       | (defenders) say it holding the master trump or >= 10 trumps; else pass                     |
# | attacking     | the declarer, and his partner once he knows the partnership                                |
# | reserved      | the master trump once a rivanto is said (the last trick is worth 2 jochi)                  |
# | EX            | played by the 4th card from the end (it may not be led before its last card), and dumped   |
# |               | when playing cheap in the second half of the deal (not led, it stays with its side)         |
_HEURISTIC_EARLY_SOLO = 26
_HEURISTIC_CALL = 9
_HEURISTIC_SOLO = 30
heuristic_attack = attack_declarer_side


@njit(cache=True)
def hand_strength(h0, h1, tb):
    """The heuristic's hand strength for the bids (the table above)."""
    tr = h0 & tb.masks[MK_TRUMPS, 0]
    nt = popcount(tr)
    s = 2 * nt + 2 * popcount(tr & tb.masks[_MK_ARIE, 0]) + 3 * popcount(h1 & tb.masks[MK_KINGS, 1])
    if (tr & tb.masks[_MK_GIOVE, 0]) != U0:
        s += 4
    if (h0 & _EXB) != U0:
        s += 3
    if (tr & tb.masks[MK_PIGLIATA, 0] & ~tb.masks[_MK_ARIE, 0]) != U0:
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
def heuristic_special(st, i, tb, flags):
    """The contract's hook: the heuristic's bid or commitment (the table above)."""
    m = st.meta[i]
    ph = m[PHASE]
    p = m[CUR]
    h0 = st.cards[i, HAND + p, 0]
    h1 = st.cards[i, HAND + p, 1]
    tr = h0 & tb.masks[MK_TRUMPS, 0]
    if ph == EARLY:
        return K_SOLO if hand_strength(h0, h1, tb) >= _HEURISTIC_EARLY_SOLO else K_PASS
    if ph == AUCTION:
        s = hand_strength(h0, h1, tb)
        if s >= _HEURISTIC_SOLO:
            return K_SOLO
        if s >= _HEURISTIC_CALL and flags & F_CALL:
            return K_CALL
        return K_PASS
    if ph == SCOMMESSA:
        nt = popcount(tr)
        one = (tr & tb.masks[MK_PIGLIATA, 0] & ~tb.masks[_MK_ARIE, 0]) != U0
        if one and nt >= 4:
            return K_SCOMMESSA
        return K_PASS
    if ph == RIVANTO:
        out0, _ = outstanding(st.meta, st.cards, tb.masks, i, p, 4)
        top_master = tr != U0 and (out0 & tb.masks[MK_TRUMPS, 0] & above(hi_bit(tr))) == U0
        if top_master or popcount(tr) >= 10:
            return K_RIVANTO
        return K_PASS
    return K_PASS


@njit(cache=True, inline="always")
def heuristic_reserved(st, i, tb, h0, out_tr, hand_n):
    """The contract's hook: the master trump, once a rivanto is said."""
    mine = h0 & tb.masks[MK_TRUMPS, 0]
    if st.meta[i, COMMIT + 1] >= 0 and mine != U0:
        top = hi_bit(mine)
        if (out_tr & above(top)) == U0:
            return U1 << np.uint64(top)
    return U0


@njit(cache=True, inline="always")
def heuristic_ex_dump(st, i, hand_n, tb):
    """The contract's hook: EX is dumped when playing cheap in the second half of the deal."""
    return 2 * hand_n <= tb.params[P_TRICKS] + 1


# ----------------------------------------------------------------------------------------------------------
# Python side: action strings (docs/rules.md card notation), outcome


def action_to_string(a: int, phase: int) -> str:
    """The string of action id ``a`` (``phase`` chooses ``bid:pass`` or ``pass``)."""
    a = int(a)
    card = card_action_to_string(DECK, a)
    if card is not None:
        return card
    if a == A_PASS:
        return "bid:pass" if phase in (EARLY, AUCTION) else "pass"
    if a in (A_SOLO, A_CALL):
        return "bid:" + SPECIAL_ACTION_NAMES[a - A_PASS]
    if A_PASS < a < N_ACTIONS:
        return SPECIAL_ACTION_NAMES[a - A_PASS]
    raise ValueError(f"action id {a} is out of range 0..{N_ACTIONS - 1}")


def string_to_action(text: str) -> int:
    """Action id of a string such as ``play:KC``, ``discard:5D``, ``bid:call``, ``pass``, ``rivanto``."""
    card = card_string_to_action(DECK, text)
    if card is not None:
        return card
    kind, _, arg = text.strip().partition(":")
    kind = kind.lower()
    if arg:
        if kind == "bid" and arg.lower() in ("pass", "solo", "call"):
            return A_PASS + SPECIAL_ACTION_NAMES.index(arg.lower())
    elif kind in SPECIAL_ACTION_NAMES:
        return A_PASS + SPECIAL_ACTION_NAMES.index(kind)
    raise ValueError(
        f"unknown action {text!r}: expected play:<card>, discard:<card>, bid:pass|solo|call, pass, scommessa "
        "or rivanto"
    )


def outcome(st, i: int, tb=None) -> dict:
    """Finished game ``i`` in the one outcome schema (:data:`tarocchi_rl.variants.OUTCOME_FIELDS`); side 0 is
    the declarer's, bonuses are the itemised jochi."""
    m = st.meta[i]
    if m[PHASE] != DONE:
        raise ValueError("the deal is not finished")
    payoffs = [int(x) for x in m[PAYOFF : PAYOFF + 4]]
    if m[DECLARER] < 0:
        return {"payoffs": payoffs, "contract": "none", "declarer": None, "sides": [], "card_points": [],
                "card_point_units": [], "bonuses": [], "details": {}}
    return {
        "payoffs": payoffs,
        "contract": CONTRACT_NAMES[m[CONTRACT]],
        "declarer": int(m[DECLARER]),
        "sides": [[s for s in range(4) if m[SIDE + s] == k] for k in range(2)],
        "card_points": [int(m[POINTS + k]) / CARD_POINT_UNITS for k in range(2)],
        "card_point_units": [int(m[POINTS + k]) for k in range(2)],
        "bonuses": [{"name": name, "side": k, "points": int(m[BONUS + 8 * k + j])}
                    for k in range(2) for j, name in enumerate(BONUS_NAMES) if m[BONUS + 8 * k + j]],
        "details": {
            "called": DECK.names[m[CALLED]] if m[CALLED] >= 0 else None,
            "partner": int(m[PARTNER]) if m[PARTNER] >= 0 else None,
            "doubled": bool(m[MULT] == 2),
        },
    }


def thirds_of(names) -> int:
    """Card points, in thirds, of a list of card names (the triplet count of docs/rules.md §2, no last trick)."""
    if len(set(names)) != len(names):
        raise ValueError("thirds_of: duplicated card")
    mask = DECK.mask_of(names)
    return int(card_points(mask[0], mask[1], make_rule_tables()))


ONE_IN_EVERY_HAND: tuple[int, ...] = ()  # every deal may be played
STOCK_IN_ORDER = False  # the stock shown: its order tells nothing


# -- the score sheet (web/score_sheet.py) -------------------------------------------------------------------------
END_COUNT_TEXT = ("the declarer's discard (his side's first trick), the 5 points of the last trick and the Fuggitivo, "
                  "kept by its owner's side")
_JOCHI_WORDS = {  # the jochi (docs/rules.md, section 2)
    "rimatura": "Rimatura (54⅔ card points or more)", "vanto": "Vanto (the last trick)",
    "rivanto": "Rivanto (the last trick, said by an opponent)", "arie": "Tutte le Arie (T16-T19, or with T20)",
    "pigliata": "Pigliata (an honour of the other side captured)", "re": "Tutti i Re (the four Kings)",
    "scommessa": "Scommessa (T20, T1 and the Fuggitivo)",
}


def score_sheet_rows(out: dict[str, Any], options: dict[str, Any]) -> tuple[str, list[Row]]:
    """The score sheet's headline and rows of a finished deal (its outcome): the contract, the card points, each
    side's jochi, their difference D and the payoffs."""
    d, dec = out["details"], out["declarer"]
    sides, units = out["sides"], out["card_point_units"]
    solo = out["contract"] != "call"
    who = f"{out['contract']} by seat {dec}, the declarer"
    if not solo:
        who += f", who called {d['called']}: partner seat {d['partner']}"
    names = ("the declarer's side", "the opponents") if not solo else ("the soloist", "the opponents")
    got = [[b for b in out["bonuses"] if b["side"] == k] for k in range(2)]
    jochi = [sum(b["points"] for b in g) for g in got]
    rows = [{"term": "Contract", "text": who},
            {"term": "Card points", "text": f"{names[0]} ({seats_text(sides[0])}) {points_text(units[0], 3)}, "
                                            f"{names[1]} {points_text(units[1], 3)} of "
                                            f"{points_text(TOTAL_THIRDS, CARD_POINT_UNITS)} (the Rimatura needs "
                                            f"{points_text(_RIMATURA_THIRDS, CARD_POINT_UNITS)})"}]
    for k in range(2):
        listed = ", ".join(f"{_JOCHI_WORDS.get(b['name'], b['name'])} {b['points']}" for b in got[k]) or "none"
        rows.append({"term": f"Jochi of {names[k]}", "text": f"{listed}: {jochi[k]}"})
    mult = 2 if d["doubled"] else 1
    diff = (jochi[0] - jochi[1]) * mult
    rows.append({"term": "Difference", "text": f"D = {jochi[0]} − {jochi[1]}"
                                               + (" × 2 (an early solo doubles the stakes)" if mult == 2 else "")
                                               + f" = {signed(diff)}"})
    if solo:
        pay = f"the soloist 3 × D = {signed(3 * diff)}, each opponent −D = {signed(-diff)}"
    else:
        pay = f"the declarer and the partner +D = {signed(diff)} each, each opponent −D = {signed(-diff)}"
    rows.append({"term": "Payoffs", "text": pay})
    return f"{out['contract'].capitalize()}: D = {diff}, {pay}", rows


def tally_note(final_units: int) -> str:
    """What the sheet adds to a side's final card points (in units) in the tally: nothing."""
    return ""
