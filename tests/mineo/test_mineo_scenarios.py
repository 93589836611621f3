"""Hand-worked Mineo deals (docs/rules.md §2), each written once as data and run on both the engine and
the independent oracle (tests/oracles/oracle_mineo.py); then the engine's own error messages.

A Scenario (tests/support/scenarios.py) is a deal, options, a script and the expected figures. The script checks, on
both implementations, the seat to act, the exact legal sets, the phase and hands; ``engine=`` / ``oracle=`` hooks
check what only one of them has (the engine's observations, the oracle's won piles). The figures at the end are the
payoffs, the card points per side in thirds, the jochi per side, the contract, declarer, partner, called trump,
doubling and sides; every finished deal is also checked against the settlement rule (``settled``). The oracle's own
random-game properties are in test_mineo_oracle.py.

Seats: 0 speaks first, 3 deals; play passes seat i -> i+1. In the seed's examples the dealer is A and the
players are A, B, C, D counterclockwise, so B = seat 0, C = seat 1, D = seat 2, A = seat 3.

Every deal is a full 63-card deal: 15 cards per seat (the first five are the early-round cards) + the monte.
Expected payoffs are worked out by hand from the rules (docs/rules.md) in the comments. Card points are in thirds:
a special card of value v counts 3v - 2 thirds (J 4, N 7, Q 10, K 13, T16..T19 13, T20 / T1 / EX 28), a
scartina 1 third; the deck is 312 thirds, 327 with the 15 thirds of the last trick.

"Lowest legal" (LOWEST, and Finish without a seed) is the legal action with the lowest engine action id: for
cards, the lowest dense card id (T0..T20, EX, then Coppe, Denari, Spade, Bastoni, each low to high).

Every test here runs in well under a second, so the whole module is also run with NUMBA_DISABLE_JIT=1.
"""

import pytest

import tarocchi_rl
from tarocchi_rl.variants import mineo
from tarocchi_rl.variants.mineo import thirds_of
from tests.oracles.oracle_mineo import MineoOracle, full_deck
from tests.oracles.oracle_mineo import thirds_of as oracle_thirds_of
from tests.support.engine import MINEO_OBS as O
from tests.support.engine import bonuses_by_side, oracle_name
from tests.support.scenarios import IMPLS, LOWEST, At, EngineGame, Finish, Illegal, Scenario, ScenarioGame, Sub, slug
from tests.support.scenarios import play_scenario as play

pytestmark = pytest.mark.nojit

DECK = tarocchi_rl.make("mineo").deck
NAMES = DECK.names


# ----------------------------------------------------------------------------------------------------------
# the two implementations behind one interface


def hands_and_monte(d: dict):
    """A deal written as card-name strings (seat0..seat3 in deal order, monte) as (hands, monte) lists."""
    return [d[f"seat{k}"].split() for k in range(4)], d["monte"].split()


def settled(f: dict) -> dict:
    """The settlement (docs/rules.md §2) from the itemised jochi: D = own - theirs (x2 if doubled); solo: soloist
    +3D, each opponent -D; pairs: +D each, -D each. A void deal pays nothing. Returns the figures."""
    assert sum(f["payoffs"]) == 0
    f["jochi_sum"] = {k: f["jochi"][0].get(k, 0) + f["jochi"][1].get(k, 0) for k in mineo.BONUS_NAMES}
    if f["contract"] == "none":
        assert f["payoffs"] == [0, 0, 0, 0] and f["thirds"] == [] and f["jochi"] == [{}, {}]
        return f
    d = sum(f["jochi"][0].values()) - sum(f["jochi"][1].values())
    if f["doubled"]:
        d *= 2
    solo = f["partner"] is None
    assert f["payoffs"] == [(3 * d if solo else d) if s in f["sides"][0] else -d for s in range(4)]
    assert sum(f["thirds"]) == 327
    return f


class Engine(EngineGame):
    n_players = 4

    def __init__(self, deal: dict, **options):
        super().__init__()
        self.raw = tarocchi_rl.make("mineo", **options).state_from_deal(*hands_and_monte(deal))

    def figures(self):
        out = self.raw.outcome()
        assert out["payoffs"] == self.raw.returns()
        details = out["details"]
        return settled({
            "payoffs": out["payoffs"], "contract": out["contract"], "declarer": out["declarer"],
            "partner": details.get("partner"), "called": details.get("called"), "doubled": details.get("doubled"),
            "sides": out["sides"], "thirds": out["card_point_units"], "jochi": bonuses_by_side(out),
        })


class Oracle(ScenarioGame):
    impl, n_players = "oracle", 4

    def __init__(self, deal: dict, early_solo: bool = True):
        super().__init__()
        self.raw = MineoOracle(*hands_and_monte(deal), early_solo=early_solo)

    def _apply(self, action):
        self.raw.apply(oracle_name(action))

    def current_player(self):
        return self.raw.current_player()

    def legal(self):
        bid = self.raw.phase in ("early", "auction")  # the engine spells these bid:pass, bid:solo, bid:call
        return {"bid:" + a if bid else a for a in self.raw.legal_actions()}

    @property
    def phase(self):
        return self.raw.phase

    def hand(self, seat):
        assert self.raw.phase != "early", "the engine shows only the five early-round cards then"
        return self.raw.hands[seat]

    def is_terminal(self):
        return self.raw.is_terminal()

    def action_key(self, action):
        return mineo.string_to_action(action)

    def figures(self):
        o = self.raw
        if o.void:
            return settled({"payoffs": o.returns(), "contract": "none", "declarer": None, "partner": None,
                            "called": None, "doubled": None, "sides": [], "thirds": [], "jochi": [{}, {}]})
        side = o.declarer_side()
        jochi = [{("arie" if k == "arie_giove" else k): v for k, v in j.items() if v} for j in o.jochi()]
        return settled({
            "payoffs": o.returns(), "contract": "forced solo" if o.forced_solo else "solo" if o.solo else "call",
            "declarer": o.declarer, "partner": o.partner, "called": o.called_trump, "doubled": o.doubled,
            "sides": [sorted(side), sorted(set(range(4)) - side)], "thirds": list(o.side_thirds()), "jochi": jochi,
        })


GAMES = {"engine": Engine, "oracle": Oracle}


# ----------------------------------------------------------------------------------------------------------
# writing scripts and engine-only checks


def plays(cards: str) -> set:
    return {f"play:{c}" for c in cards.split()}


def discards(cards: str) -> set:
    return {f"discard:{c}" for c in cards.split()}


def plane(vec, base: int) -> set:
    """Card names set in a 63-wide observation plane starting at ``base``."""
    return {NAMES[c] for c in range(len(NAMES)) if vec[base + c] > 0.5}


def rivanto_round(seats, legal="pass rivanto") -> list:
    """Everybody passes in the rivanto round: each seat in turn is to act with these legal actions."""
    return [x for s in seats for x in (At(s, legal), "pass")]


def history_is(n: int):
    def check(state):
        assert len(state.history) == n

    return check


def partner_known_is(flags: list):
    def check(state):
        assert [int(state.observation(v)[O.OBS_PARTNER_KNOWN]) for v in range(4)] == flags

    return check


EARLY_ALL_PASS = "bid:pass bid:pass bid:pass bid:pass"
SCENARIOS = []


def scenario(*args, **kwargs) -> Scenario:
    sc = Scenario(*args, **kwargs)
    SCENARIOS.append(sc)
    return sc


# ----------------------------------------------------------------------------------------------------------
# declarations (seed examples 1-3)

# Seed example 1: B passes, C calls, D may then only pass or go solo; he goes solo. Monte: T5 7S 9S.
EX1 = dict(
    seat0="T0 T1 T2 T3 T4 EX 5C 6C 7C 8C 9C 10C JC NC 7D",  # B
    seat1="T6 T7 T8 T9 T10 8D 9D 10D JD ND QD KD 5S 6S 8S",  # C
    seat2="T20 T19 T18 T17 T16 T15 T14 4D 5D 6D KC QC KB QB NB",  # D
    seat3="T11 T12 T13 10S JS NS QS KS 5B 6B 7B 8B 9B 10B JB",  # A, the dealer
    monte="T5 7S 9S",
)


def ex1_solo_seen(s):
    a_view = s.observation(3)
    assert not a_view[O.OBS_AUCTION : O.OBS_AUCTION + 3].any()  # A (relative seat 0) has not bid
    assert a_view[O.OBS_AUCTION + 3 * ((2 - 3) % 4) + 1] == 1  # D's solo, seen by A
    for viewer in range(4):  # the monte is shown to everyone
        assert plane(s.observation(viewer), O.OBS_MONTE) == {"T5", "7S", "9S"}


def ex1_discard_seen(s):
    assert plane(s.observation(2), O.OBS_DISCARD) == {"7S", "9S", "4D"}
    assert not s.observation(0)[O.OBS_DISCARD : O.OBS_DISCARD + 63].any()
    assert not s.observation(0)[O.OBS_SHOWN : O.OBS_SHOWN + 63].any()  # no trump discarded


scenario(
    "seed example 1: a solo after a call ends the auction",
    EX1,
    (
        At(0, "bid:pass bid:solo", phase="early"),
        EARLY_ALL_PASS,
        At(0, "bid:pass bid:solo bid:call", phase="auction"),
        "bid:pass",  # B
        At(1, "bid:pass bid:solo bid:call"),
        "bid:call",  # C
        At(2, "bid:pass bid:solo"),  # after a call: only pass or solo
        "bid:solo",  # D: the first solo ends the auction at once, A never speaks
        # the monte joins D's hand; no trump (T5 included), no King may be discarded: the rest of his 18 may
        At(2, discards("4D 5D 6D QC QB NB 7S 9S"), phase="discard", hands={2: EX1["seat2"] + " T5 7S 9S"},
           engine=ex1_solo_seen),
        "discard:7S discard:9S",
        At(2, discards("4D 5D 6D QC QB NB")),
        "discard:4D",
        # D holds T20 but not EX: no scommessa
        At(2, "pass", phase="scommessa", hands={2: "T20 T19 T18 T17 T16 T15 T14 5D 6D KC QC KB QB NB T5"},
           engine=ex1_discard_seen),
        "pass",
        *rivanto_round((3, 0, 1)),  # the rivanto round starts at the declarer's right: A, B, C
        At(2, phase="play"),  # the soloist leads
        Finish(),
    ),
    expect=dict(contract="solo", declarer=2, partner=None, called=None, doubled=False, sides=[[2], [0, 1, 3]]),
)

# Seed example 2: B calls holding T19 as his highest trump ("I call the 20"), the others pass; T20 is in the
# monte: forced solo. He keeps both monte trumps and discards QS, 4D, 5D.
EX2 = dict(
    seat0="T19 T18 T17 T16 T15 T14 EX 4D 5D KC QC KB QB NB 6D",  # B
    seat1="T0 T1 T2 T4 T5 5C 6C 7C 8C 9C 10C JC NC 7D 8D",  # C
    seat2="T6 T7 T8 T9 T10 9D 10D JD ND QD KD 5S 6S 7S 8S",  # D
    seat3="T11 T12 T13 9S 10S JS NS KS 5B 6B 7B 8B 9B 10B JB",  # A
    monte="T20 T3 QS",
)


def ex2_forced_solo_seen(s):
    for viewer in range(4):
        o = s.observation(viewer)
        assert o[O.OBS_CONTRACT + 2] == 1 and o[O.OBS_CONTRACT : O.OBS_CONTRACT + 2].sum() == 0
        assert o[O.OBS_CALLED + 20] == 1 and o[O.OBS_CALLED : O.OBS_CALLED + 21].sum() == 1  # T20 called
        assert o[O.OBS_PARTNER_KNOWN] == 1  # a solo: everyone knows the sides
        assert o[O.OBS_DOUBLED] == 0


scenario(
    "seed example 2: the called trump in the monte is a forced solo",
    EX2,
    (
        EARLY_ALL_PASS,
        "bid:call",  # B
        At(1, "bid:pass bid:solo"), "bid:pass",
        At(2, "bid:pass bid:solo"), "bid:pass",
        At(3, "bid:pass bid:solo"), "bid:pass",
        # neither monte trump (T20, T3), nor EX, nor a King may go to the discard; QS may
        At(0, discards("4D 5D 6D QC QB NB QS"), phase="discard", engine=ex2_forced_solo_seen),
        "discard:QS discard:4D discard:5D",
        # he now holds T20 and EX
        At(0, "pass scommessa", phase="scommessa", hands={0: "T19 T18 T17 T16 T15 T14 EX KC QC KB QB NB 6D T20 T3"}),
        "pass",
        *rivanto_round((1, 2, 3)),  # all are opponents
        At(0, phase="play"),
        Finish(),
    ),
    # scored as an ordinary undoubled solo: soloist +3D, each opponent -D (settled)
    expect=dict(contract="forced solo", declarer=0, partner=None, called="T20", doubled=False,
                sides=[[0], [1, 2, 3]]),
)

# Seed example 3: C calls holding T20 and T19 but not T18; B holds T18, so B is the partner. The monte holds
# EX, a King and 5D: he keeps EX and the King and discards 5D, 4D, 6D.
EX3 = dict(
    seat0="T18 T17 T16 T0 T1 5C 6C 7C 8C 9C 10C 8D 9D 10D JD",  # B, holds the called T18
    seat1="T20 T19 T15 T14 T13 T12 4D 6D KC QC NC JC KS QS 7D",  # C, the caller
    seat2="T2 T3 T4 T5 T6 ND QD KD 5S 6S 7S 8S 9S 10S JS",  # D
    seat3="T7 T8 T9 T10 T11 NS 5B 6B 7B 8B 9B 10B JB NB QB",  # A
    monte="EX KB 5D",
)


def ex3_call_seen(s):
    assert s.observation(2)[O.OBS_CALLED + 18] == 1  # T18 is announced to all
    partner_known_is([1, 0, 0, 0])(s)  # only the partner knows the partnership (the caller does not)
    assert s.observation(0)[O.OBS_PARTNER + 0] == 1  # B sees himself as the partner (relative seat 0)
    assert not s.observation(1)[O.OBS_PARTNER : O.OBS_PARTNER + 4].any()


def ex3_partner_revealed(s):
    partner_known_is([1, 1, 1, 1])(s)  # the called trump is out: everyone knows
    for v in range(4):
        assert s.observation(v)[O.OBS_PARTNER + (0 - v) % 4] == 1


scenario(
    "seed example 3: the partner of a call is the holder of the called trump",
    EX3,
    (
        EARLY_ALL_PASS,
        "bid:pass bid:call",  # B passes, C calls
        At(2, "bid:pass bid:solo"),
        "bid:pass bid:pass",  # D, A
        # EX and the King of the monte may not be discarded
        At(1, discards("4D 5D 6D 7D QC NC JC QS"), phase="discard", engine=ex3_call_seen),
        "discard:5D discard:4D discard:6D",
        At(1, "pass scommessa", hands={1: "T20 T19 T15 T14 T13 T12 KC QC NC JC KS QS 7D EX KB"}),  # T20 and EX
        "pass",
        # rivanto round from the declarer's right: D and A are opponents, B (the secret partner) may only pass
        *rivanto_round((2, 3)),
        *rivanto_round((0,), "pass"),
        At(1, phase="play", engine=partner_known_is([1, 0, 0, 0])),  # still secret before T18 is played
        # first trick: C leads T20, everyone must trump; B plays the called T18
        "play:T20",
        At(2, plays("T2 T3 T4 T5 T6")), "play:T2",
        At(3, plays("T7 T8 T9 T10 T11")), "play:T7",
        At(0, plays("T18 T17 T16 T0 T1"), engine=partner_known_is([1, 0, 0, 0])), "play:T18",
        At(1, engine=ex3_partner_revealed),  # C's T20 wins
        Finish(),
    ),
    expect=dict(contract="call", declarer=1, partner=0, called="T18", doubled=False, sides=[[0, 1], [2, 3]]),
)

# An auction without the early round (the oracle's deal in deck order): seat 0 calls, seat 1 may then only pass
# or go solo (a second call is refused); his solo overrides the call.
DECK_ORDER = dict(
    seat0="KC QC NC JC 10C 9C 8C 7C 6C 5C KD QD ND JD 10D",
    seat1="9D 8D 7D 6D 5D 4D KS QS NS JS 10S 9S 8S 7S 6S",
    seat2="5S KB QB NB JB 10B 9B 8B 7B 6B 5B T0 T1 T2 T3",
    seat3="T4 T5 T6 T7 T8 T9 T10 T11 T12 T13 T14 T15 T16 T17 T18",
    monte="T19 T20 EX",
)

scenario(
    "a solo after a call overrides it",
    DECK_ORDER,
    (
        At(0, "bid:pass bid:solo bid:call", phase="auction"),
        "bid:call",
        At(1, "bid:pass bid:solo"),
        Illegal("bid:call"),
        "bid:solo",  # seat 1 goes solo, overriding the call
        At(1, phase="discard", hands={1: DECK_ORDER["seat1"] + " T19 T20 EX"}),
        Finish(),
    ),
    options={"early_solo": False},
    expect=dict(contract="solo", declarer=1, partner=None, called=None, doubled=False, sides=[[1], [0, 2, 3]]),
)

# Seat 1 calls holding T20 and T19: the called trump is T18, held by seat 3, his partner. The monte brings EX
# (scommessa possible); seat 0 says rivanto. Played out at random: the rivanto's 2 jochi replace the vanto.
PARTNER_T18 = dict(
    seat0="KC QC NC JC 10C 9C 8C 7C 6C 5C KD QD ND JD 10D",
    seat1="T20 T19 9D 8D 7D 6D 5D 4D KS QS NS JS 10S 9S 8S",
    seat2="7S 6S 5S KB QB NB JB 10B 9B 8B 7B 6B 5B T0 T1",
    seat3="T18 T2 T3 T4 T5 T6 T7 T8 T9 T10 T11 T12 T13 T14 T15",
    monte="T16 T17 EX",
)

scenario(
    "the partner is the holder of the highest missing trump; rivanto",
    PARTNER_T18,
    (
        "bid:pass bid:call bid:pass bid:pass",
        "discard:10S discard:4D discard:5D",
        At(1, "pass scommessa"),  # T20, and EX from the monte
        "pass",
        # rivanto round: seats 2, 3, 0; the partner (3) may only pass
        At(2, "pass rivanto"), "pass",
        At(3, "pass"), "pass",
        At(0, "pass rivanto"), "rivanto",
        At(1, phase="play"),  # the declarer leads
        Finish(seed=1),
    ),
    options={"early_solo": False},
    expect=dict(contract="call", declarer=1, partner=3, called="T18", sides=[[1, 3], [0, 2]],
                jochi_sum=Sub(vanto=0, rivanto=2)),
)

# Every seat passes in the early round, then seat 0 calls "the 20", which lies in the monte: a forced solo.
FORCED = dict(
    seat0="KC QC NC JC 10C 9C 8C 7C KD QD ND JD 10D 9D 8D",
    seat1="7D 6D 5D 4D KS QS NS JS 10S 9S 8S 7S 6S 5S KB",
    seat2="QB NB JB 10B 9B 8B 7B 6B 5B T0 T1 T2 T3 T4 T5",
    seat3="T6 T7 T8 T9 T10 T11 T12 T13 T14 T15 T16 T17 T18 T19 EX",
    monte="T20 5C 6C",
)

scenario(
    "calling the trump that lies in the monte is a forced solo",
    FORCED,
    (
        EARLY_ALL_PASS,
        "bid:call bid:pass bid:pass bid:pass",
        At(0, phase="discard", hands={0: FORCED["seat0"] + " T20 5C 6C"}),
        Finish(seed=2),
    ),
    expect=dict(contract="forced solo", declarer=0, partner=None, called="T20", doubled=False,
                sides=[[0], [1, 2, 3]]),
)


# ----------------------------------------------------------------------------------------------------------
# trick play (the seed's four-trick example)

PLAY_EXAMPLE = dict(
    seat0="9S 6D T12 EX T8 T9 T10 T11 T14 T15 KD 7S 8S 10S JS",  # B
    seat1="QS 10C 6B 9C 6C 7C 8C JC NC KC 5B 7B 8B 9B 10B",  # C
    seat2="T0 4D T16 QC T17 T18 T19 T20 JB NB QB KB 5D 8D 9D",  # D
    seat3="KS 7D T13 5C T1 T2 T3 T4 T5 T6 T7 10D JD ND QD",  # A, soloist
    monte="5S 6S NS",
)


def play_example_points_seen(s):
    # Won cards so far (thirds, from D's point of view): EX is not among D's cards.
    # D: {KS 9S QS T0} 13+1+10+1 = 25, {T13 T12 6B T16} 1+1+1+13 = 16, {QC 5C 9C} 10+1+1 = 12 -> 53.
    # A: {4D 7D 6D 10C} = 4 scartine = 4.
    d_won = "KS 9S QS T0 T13 T12 6B T16 QC 5C 9C".split()
    assert thirds_of(d_won) == 53 and thirds_of(d_won + ["EX"]) == 81
    d_view = s.observation(2)
    assert d_view[O.OBS_POINTS + 0] == pytest.approx(53 / 327)
    assert d_view[O.OBS_POINTS + (3 - 2) % 4] == pytest.approx(4 / 327)
    assert d_view[O.OBS_POINTS + (0 - 2) % 4] == 0 and d_view[O.OBS_POINTS + (1 - 2) % 4] == 0
    assert d_view[O.OBS_TRICKS_WON + 0] == pytest.approx(3 / 15)
    assert d_view[O.OBS_TRICKS_WON + 1] == pytest.approx(1 / 15)
    assert d_view[O.OBS_TRICK_NUM + 4] == 1
    assert "EX" in plane(s.observation(1), O.OBS_PLAYED + 63 * ((0 - 1) % 4))  # everyone saw B play EX


scenario(
    "seed play example: four tricks",
    PLAY_EXAMPLE,
    (
        EARLY_ALL_PASS,
        "bid:pass bid:pass bid:pass bid:solo",  # A goes solo
        At(3, discards("7D 5C 10D JD ND QD 5S 6S NS"), phase="discard"),
        "discard:5S discard:6S discard:NS",
        At(3, "pass"),  # A has neither T20 nor EX
        "pass pass pass pass",  # A, then B, C, D
        # Trick 1: A leads KS; B follows (any spade, or EX); C's only spade is QS; D has no spades: must trump
        At(3, phase="play"), "play:KS",
        At(0, plays("9S 7S 8S 10S JS EX")), "play:9S",
        At(1, plays("QS")), "play:QS",
        At(2, plays("T0 T16 T17 T18 T19 T20")), "play:T0",  # D wins: the Miseria beats the King
        # Trick 2: D leads 4D; C has neither Denari nor trumps: any card
        At(2), "play:4D",
        At(3, plays("7D 10D JD ND QD")), "play:7D",
        At(0, plays("6D KD EX")), "play:6D",
        At(1, plays("10C 6B 9C 6C 7C 8C JC NC KC 5B 7B 8B 9B 10B")), "play:10C",  # A: the highest Denari
        # Trick 3: A leads T13; B must trump (or EX); C has no trumps: any card; D trumps with T16
        At(3, plays("T13 5C T1 T2 T3 T4 T5 T6 T7 10D JD ND QD")), "play:T13",  # EX aside, any card may lead
        At(0, plays("T8 T9 T10 T11 T12 T14 T15 EX")), "play:T12",
        At(1, plays("6B 9C 6C 7C 8C JC NC KC 5B 7B 8B 9B 10B")), "play:6B",
        At(2, plays("T16 T17 T18 T19 T20")), "play:T16",  # no duty to overtrump: all of them
        # Trick 4: D leads QC; A's only Coppe is 5C; B has no Coppe: trumps or EX; he plays EX; C follows 9C
        At(2), "play:QC",  # D's T16 is the highest trump
        At(3, plays("5C")), "play:5C",
        At(0, plays("T8 T9 T10 T11 T14 T15 EX")), "play:EX",
        At(1, plays("9C 6C 7C 8C JC NC KC")), "play:9C",
        At(2, hands={0: "T8 T9 T10 T11 T14 T15 KD 7S 8S 10S JS"}, engine=play_example_points_seen),  # D wins
    ),
    expect=dict(tricks={
        0: (3, [(3, "KS"), (0, "9S"), (1, "QS"), (2, "T0")], 2),
        1: (2, [(2, "4D"), (3, "7D"), (0, "6D"), (1, "10C")], 3),
        2: (3, [(3, "T13"), (0, "T12"), (1, "6B"), (2, "T16")], 2),
        3: (2, [(2, "QC"), (3, "5C"), (0, "EX"), (1, "9C")], 2),
    }),
)

# The Miseria (T0) beats the King of Spades: seat 1 has no Spade and must trump.
MISERIA = dict(
    seat0="KS T1 T2 T3 T4 T5 T6 T7 T8 T9 T10 T11 T12 T13 T14",
    seat1="T0 KC QC NC JC 10C 9C 8C KD QD ND JD 10D 9D 8D",
    seat2="QS NS 7D 6D 5D 4D 9S 8S 7S 6S 5S KB QB NB JB",
    seat3="JS 10S 10B 9B 8B 7B 6B 5B T15 T16 T17 T18 T19 T20 EX",
    monte="5C 6C 7C",
)

scenario(
    "the Miseria beats the King of Spades",
    MISERIA,
    (
        "bid:solo discard:5C discard:6C discard:7C",
        "pass pass pass pass",  # scommessa, then three rivanto turns
        "play:KS",
        At(1, "play:T0"),  # no spades: must trump
        "play:T0",
        At(2, plays("QS NS 9S 8S 7S 6S 5S")),
        "play:QS play:JS",
    ),
    options={"early_solo": False},
    expect=dict(tricks={0: (0, [(0, "KS"), (1, "T0"), (2, "QS"), (3, "JS")], 1)}),
)


# ----------------------------------------------------------------------------------------------------------
# edge cases, each played to the end

# (a) The Fuggitivo led at the last trick. Seat 0 holds T20..T7 and EX; the monte 5C 6C 7C goes back to the
# discard. Opponents play their lowest legal card: each keeps his highest-id card (a Bastoni) to the end:
# seat 1 KB, seat 2 QB, seat 3 NB.
FUGGITIVO_LAST = dict(
    seat0="T20 T19 T18 T17 T16 T15 T14 T13 T12 T11 T10 T9 T8 T7 EX",
    seat1="T0 T1 T2 8C 9C 10C JC NC QC KC 4D 5D 6D 7D KB",
    seat2="T3 T4 8D 9D 10D JD ND QD KD 5S 6S 7S 8S 9S QB",
    seat3="T5 T6 10S JS NS QS KS 5B 6B 7B 8B 9B 10B JB NB",
    monte="5C 6C 7C",
)
TRUMPS_20_7 = [f"T{k}" for k in range(20, 6, -1)]


def scommessa_seen(s):
    for v in range(4):
        assert s.observation(v)[O.OBS_SCOMMESSA] == 1


scenario(
    "the Fuggitivo led at the last trick goes to the trick's winner",
    FUGGITIVO_LAST,
    (
        EARLY_ALL_PASS,
        "bid:solo",
        At(0, discards("5C 6C 7C")),
        "discard:5C discard:6C discard:7C",
        At(0, "pass scommessa"),
        "scommessa",
        At(1, "pass rivanto", engine=scommessa_seen),
        "pass pass pass",
        At(0, phase="play"),
        # he leads his trumps and wins every trick; EX may never be led while he holds anything else
        *[x for k, t in enumerate(TRUMPS_20_7)
          for x in (At(0, plays(" ".join(TRUMPS_20_7[k:]))), f"play:{t} {LOWEST} {LOWEST} {LOWEST}")],
        At(0, "play:EX", hands={0: "EX"}),  # all he has left: now he must lead it
        "play:EX",
        At(1, plays("KB")), "play:KB",  # the next card sets the suit
        At(2, plays("QB")), "play:QB",
        "play:NB",
    ),
    expect=dict(
        winners=[0] * 14 + [None],
        tricks={14: (0, [(0, "EX"), (1, "KB"), (2, "QB"), (3, "NB")], None)},
        # Seat 1 wins the last trick with KB and takes EX: opponents hold {EX KB QB NB} = 28+13+10+7 = 58 thirds
        # + 15 for the last trick = 73; the soloist holds the other 59 cards: 312 - 58 = 254.
        thirds=[254, 73],
        # Soloist: rimatura 1, T16..T20 all won -> arie 2, T1 played by seat 1 and won -> pigliata 1. = 4
        # Opponents: vanto 1 (last trick), failed scommessa (no EX) 1. = 2
        jochi=[{"rimatura": 1, "arie": 2, "pigliata": 1}, {"vanto": 1, "scommessa": 1}],
        payoffs=[6, -2, -2, -2],  # D = 2, solo: [+6, -2, -2, -2]
    ),
)

# (b)/(c) The Fuggitivo of a side that wins no trick. Seat 0 holds the 15 trumps T20..T6; seat 3 holds EX and
# no trump, so with the lowest-legal policy he throws EX (dense id 21, below every suit card) at trick 1.
NO_TRICK_SIDE = dict(
    seat0="T20 T19 T18 T17 T16 T15 T14 T13 T12 T11 T10 T9 T8 T7 T6",
    seat1="T0 T1 T2 8C 9C 10C JC NC QC KC 4D 5D 6D 7D 8D",
    seat2="T3 T4 T5 9D 10D JD ND QD KD 5S 6S 7S 8S 9S 10S",
    seat3="EX JS NS QS KS 5B 6B 7B 8B 9B 10B JB NB QB KB",
    monte="5C 6C 7C",
)
SLAM_WITH_FUGGITIVO = (
    At(0, discards("5C 6C 7C")),
    "discard:5C discard:6C discard:7C",
    At(0, "pass"),  # no EX: no scommessa
    "pass pass pass pass",
    Finish({0: " ".join(f"T{k}" for k in range(20, 5, -1))}),
)
SLAM_EXPECT = dict(
    tricks={0: (0, [(0, "T20"), (1, "T0"), (2, "T3"), (3, "EX")], 0)},
    winners=[0] * 14 + [None],  # seat 0 led (and so won) every trick
    # EX's side (the opponents) won no trick: EX goes to the winner of trick 1, the soloist. He holds the
    # whole deck: 312 + 15 (last trick) = 327 thirds.
    thirds=[327, 0],
    # rimatura 1, vanto 1, arie + Giove 2, pigliata 1 (T1 from seat 1), all four Kings 1 -> 6; opponents 0
    jochi=[{"rimatura": 1, "vanto": 1, "arie": 2, "pigliata": 1, "re": 1}, {}],
)

scenario(
    "the Fuggitivo of a side without tricks goes to the trick's winner",
    NO_TRICK_SIDE,
    (EARLY_ALL_PASS, "bid:solo", *SLAM_WITH_FUGGITIVO),
    expect=dict(SLAM_EXPECT, contract="solo", doubled=False, payoffs=[18, -6, -6, -6]),  # D = 6, solo
)


def early_round_hands(s):
    assert s.hand(0) == ["T20", "T19", "T18", "T17", "T16"]  # the first five cards of his hand
    assert all(len(s.hand(p)) == 5 for p in range(4))


def early_solo_seen(s):
    assert s.observation(2)[O.OBS_DOUBLED] == 1
    assert s.observation(2)[O.OBS_EARLY + 2 * ((0 - 2) % 4) + 1] == 1  # seat 0's early solo, seen by seat 2


def full_hands(d: dict, taker: int) -> dict:
    """Every seat's hand as dealt, the taker's with the monte."""
    return {s: d[f"seat{s}"] + (" " + d["monte"] if s == taker else "") for s in range(4)}


scenario(
    "an early solo doubles the stakes",
    NO_TRICK_SIDE,
    (
        At(0, "bid:pass bid:solo", phase="early", engine=early_round_hands),
        "bid:solo",
        At(0, phase="discard", hands=full_hands(NO_TRICK_SIDE, 0), engine=early_solo_seen),
        *SLAM_WITH_FUGGITIVO,
    ),
    # D = 6, doubled 12: soloist +36, each opponent -12
    expect=dict(SLAM_EXPECT, contract="solo", doubled=True, payoffs=[36, -12, -12, -12]),
)


def later_early_solo_seen(s):
    o = s.observation(0)
    assert o[O.OBS_DECLARER + 2] == 1 and o[O.OBS_DOUBLED] == 1 and o[O.OBS_CONTRACT + 1] == 1
    assert not o[O.OBS_AUCTION : O.OBS_AUCTION + 12].any()  # no auction after an early solo


scenario(
    "an early solo by a later seat",
    NO_TRICK_SIDE,
    (
        "bid:pass bid:pass",
        At(2, "bid:pass bid:solo"),
        "bid:solo",
        At(2, phase="discard", hands=full_hands(NO_TRICK_SIDE, 2), engine=later_early_solo_seen),  # 3 never speaks
        Finish(),
    ),
    expect=dict(contract="solo", declarer=2, doubled=True, sides=[[2], [0, 1, 3]]),
)

scenario(
    "an early solo by a later seat (deck-order deal, played at random)",
    DECK_ORDER,
    (
        "bid:pass bid:pass bid:solo",
        At(2, phase="discard", hands=full_hands(DECK_ORDER, 2)),
        Finish(seed=3),
    ),
    expect=dict(contract="solo", declarer=2, doubled=True, sides=[[2], [0, 1, 3]]),  # settled: -2D, -2D, 6D, -2D
)

scenario(
    "without the early round a solo is not doubled",
    NO_TRICK_SIDE,
    ("bid:solo", *SLAM_WITH_FUGGITIVO),
    options={"early_solo": False},
    expect=dict(SLAM_EXPECT, doubled=False, payoffs=[18, -6, -6, -6]),
)

# A soloist with T6..T20 wins every trick at any play; the opponents' EX (seat 1, with T1) goes to him.
SOLOIST_EVERY_TRICK = dict(
    seat0="T6 T7 T8 T9 T10 T11 T12 T13 T14 T15 T16 T17 T18 T19 T20",
    seat1="EX T1 KC QC NC JC 10C 9C 8C KD QD ND JD 10D 9D",
    seat2="8D 7D 6D 5D 4D KS QS NS JS 10S 9S 8S 7S 6S 5S",
    seat3="KB QB NB JB 10B 9B 8B 7B 6B 5B T0 T2 T3 T4 T5",
    monte="5C 6C 7C",
)


def opponents_won_nothing(o):
    won_decl, won_opp = o.won_cards()
    assert won_opp == [] and "EX" in won_decl  # the opponents won no trick: EX goes to the trick's winner


scenario(
    "a soloist who wins every trick takes the opponents' EX (played at random)",
    SOLOIST_EVERY_TRICK,
    (
        "bid:solo discard:5C discard:6C discard:7C pass pass pass pass",
        Finish(seed=8),
        At(-1, oracle=opponents_won_nothing),
    ),
    options={"early_solo": False},
    expect=dict(
        winners=[0] * 14 + [None],
        thirds=[327, 0],
        # pigliata 1: T1 played by seat 1, won by the soloist; T16..T19 were the soloist's own
        jochi=[{"rimatura": 1, "vanto": 1, "arie": 2, "pigliata": 1, "re": 1}, {}],
        payoffs=[18, -6, -6, -6],
    ),
)


# (d) Too few allowed discards. Seat 0 holds T20..T8, EX and KC; the monte is KD KS 5C.
FEW_DISCARDS = dict(
    seat0="T20 T19 T18 T17 T16 T15 T14 T13 T12 T11 T10 T9 T8 EX KC",
    seat1="T0 T1 T2 T3 T4 T5 T6 T7 6C 7C 8C 9C 10C JC NC",
    seat2="QC 4D 5D 6D 7D 8D 9D 10D JD ND QD 5S 6S 7S 8S",
    seat3="9S 10S JS NS QS 5B 6B 7B 8B 9B 10B JB NB QB KB",
    monte="KD KS 5C",
)


def t8_shown(s):
    for v in (1, 2, 3):
        o = s.observation(v)
        assert plane(o, O.OBS_SHOWN) == {"T8"}  # a discarded trump is shown to all
        assert not o[O.OBS_DISCARD : O.OBS_DISCARD + 63].any()  # but the discard is not theirs to see
    assert plane(s.observation(0), O.OBS_DISCARD) == {"5C", "T8"}


def t8_t9_shown(s):
    assert plane(s.observation(2), O.OBS_SHOWN) == {"T8", "T9"}


scenario(
    "discarding trumps when too few other cards",
    FEW_DISCARDS,
    (
        EARLY_ALL_PASS,
        "bid:solo",
        # allowed: only 5C (1 < 3 discards to make) -> T2..T15 held are legal too; never T16..T20, EX, Kings
        At(0, discards("5C T8 T9 T10 T11 T12 T13 T14 T15")),
        "discard:5C",
        At(0, discards("T8 T9 T10 T11 T12 T13 T14 T15")),
        "discard:T8",
        At(0, discards("T9 T10 T11 T12 T13 T14 T15"), engine=t8_shown),
        "discard:T9",
        At(0, "pass scommessa", hands={0: "T20 T19 T18 T17 T16 T15 T14 T13 T12 T11 T10 EX KC KD KS"},
           engine=t8_t9_shown),
        "pass pass pass pass",
        # He leads T20..T10 (11 tricks): seat 1 plays T0..T7 then 6C 7C 8C; seat 2 QC 4D..10D then JD ND QD;
        # seat 3 9S..QS 5B 6B 7B then 8B 9B 10B. Then KC (9C, 5S, JB), KD (10C, 6S, NB), KS (JC, 7S, QB): he
        # wins them all. Last trick: he must lead EX; seat 1 NC sets Coppe, seat 2 8S, seat 3 KB: seat 1 wins.
        Finish({0: "T20 T19 T18 T17 T16 T15 T14 T13 T12 T11 T10 KC KD KS EX"}),
    ),
    expect=dict(
        winners=[0] * 14 + [None],
        tricks={11: (0, [(0, "KC"), (1, "9C"), (2, "5S"), (3, "JB")], 0),
                14: (0, [(0, "EX"), (1, "NC"), (2, "8S"), (3, "KB")], None)},
        # Opponents: {EX NC 8S KB} = 28 + 7 + 1 + 13 = 49 + 15 (last trick) = 64; soloist 312 - 49 = 263
        thirds=[263, 64],
        # Soloist: rimatura 1, arie 2, pigliata 1 (T1) = 4 (KB went to the opponents: no re); opponents: vanto 1
        jochi=[{"rimatura": 1, "arie": 2, "pigliata": 1}, {"vanto": 1}],
        payoffs=[9, -3, -3, -3],  # D = 3, solo
    ),
)

# Too few allowed discards, the oracle's deal: 5C is the only card other than trumps, Kings and EX.
FEW_DISCARDS_2 = dict(
    seat0="KC KD KS KB EX T0 T1 T2 T3 T4 T5 T6 T7 T8 T9",
    seat1="QC NC JC 10C 9C 8C 7C 6C QD ND JD 10D 9D 8D 7D",
    seat2="6D 5D 4D QS NS JS 10S 9S 8S 7S 6S 5S QB NB JB",
    seat3="10B 9B 8B 7B 6B 5B T12 T13 T14 T15 T16 T17 T18 T19 T20",
    monte="5C T10 T11",
)
TRUMPS_2_11 = " ".join(f"T{i}" for i in range(2, 12))

scenario(
    "discarding trumps T2..T15 only while short of other cards; never T0, T1",
    FEW_DISCARDS_2,
    (
        "bid:solo",
        At(0, discards("5C " + TRUMPS_2_11)),
        "discard:5C",
        At(0, discards(TRUMPS_2_11)),
        "discard:T5",
        At(0, discards(TRUMPS_2_11) - {"discard:T5"}),
        Illegal("discard:T1"),
        "discard:T11",
        At(0, "pass", phase="scommessa", hands={0: "KC KD KS KB EX T0 T1 T2 T3 T4 T6 T7 T8 T9 T10"}),  # no T20
        Finish(),
    ),
    expect=dict(contract="solo", declarer=0, doubled=True),
)

# Enough allowed discards: no trump, King or EX may go (the oracle's deal; no early round); then a scommessa.
ENOUGH_DISCARDS = dict(
    seat0="KC T20 EX T3 5C 6C 7C QC NC JC 10C 9C 8C KD QD",
    seat1="ND JD 10D 9D 8D 7D 6D 5D 4D KS QS NS JS 10S 9S",
    seat2="8S 7S 6S 5S KB QB NB JB 10B 9B 8B 7B 6B 5B T0",
    seat3="T1 T2 T4 T5 T6 T7 T8 T9 T10 T11 T12 T13 T14 T15 T16",
    monte="T19 T18 T17",
)

scenario(
    "with enough other cards no trump may be discarded; scommessa (played at random)",
    ENOUGH_DISCARDS,
    (
        "bid:solo",
        At(0, discards("5C 6C 7C 8C 9C 10C JC NC QC QD"), lacks=discards("KC T20 EX T3 T17")),
        "discard:5C discard:6C discard:7C",
        At(0, "pass scommessa"),  # holds T20 and EX
        "scommessa pass pass pass",
        At(0, phase="play", lacks="play:EX"),  # EX cannot be led
        Finish(seed=4),
    ),
    options={"early_solo": False},
    expect=dict(contract="solo", declarer=0, jochi_sum=Sub(scommessa=1)),
)

# EX played (not led) to the last trick stays with its owner's side, which has won tricks.
# Seat 0: T20..T8, EX, 5B; monte JB NB QB (discarded back). Opponents keep their Bastoni to the end.
EX_LAST_NOT_LED = dict(
    seat0="T20 T19 T18 T17 T16 T15 T14 T13 T12 T11 T10 T9 T8 EX 5B",
    seat1="T0 T1 T2 T3 T4 T5 T6 T7 5C 6C 7C 8C 9C 6B 7B",
    seat2="10C JC NC QC KC 4D 5D 6D 7D 8D 9D 10D JD 8B 9B",
    seat3="ND QD KD 5S 6S 7S 8S 9S 10S JS NS QS KS 10B KB",
    monte="JB NB QB",
)

scenario(
    "the Fuggitivo played to the last trick stays with its side",
    EX_LAST_NOT_LED,
    (
        EARLY_ALL_PASS,
        "bid:solo",
        At(0, discards("5B JB NB QB")),
        "discard:JB discard:NB discard:QB",
        "pass pass pass pass",
        Finish({0: "T20 T19 T18 T17 T16 T15 T14 T13 T12 T11 T10 T9 T8 5B EX"}),
    ),
    expect=dict(
        # trick 14: 5B, 6B, 8B, 10B -> seat 3; trick 15: seat 3 leads KB, seat 0 EX, 7B, 9B -> seat 3
        winners=[0] * 13 + [3, None],
        tricks={13: (0, [(0, "5B"), (1, "6B"), (2, "8B"), (3, "10B")], 3),
                14: (3, [(3, "KB"), (0, "EX"), (1, "7B"), (2, "9B")], None)},
        # Opponents: {5B 6B 8B 10B KB 7B 9B} = 6 scartine + 13 = 19, + 15 (last trick) = 34.
        # Soloist: everything else, EX included: 312 - 19 = 293 (it would be 265 / 62 had EX gone to seat 3).
        thirds=[293, 34],
        # Soloist: rimatura 1, arie 2, pigliata 1 (T1) = 4; opponents: vanto 1. D = 3: [+9, -3, -3, -3]
        jochi=[{"rimatura": 1, "arie": 2, "pigliata": 1}, {"vanto": 1}],
        payoffs=[9, -3, -3, -3],
    ),
)


# (e) All pass.
scenario(
    "all pass: a void deal",
    PLAY_EXAMPLE,
    (
        *[x for s in range(4) for x in (At(s, "bid:pass bid:solo", phase="early"), "bid:pass")],
        At(0, "bid:pass bid:solo bid:call", phase="auction", hands=full_hands(PLAY_EXAMPLE, None)),
        *[x for s in range(4) for x in (At(s, "bid:pass bid:solo bid:call"), "bid:pass")],
        At(-1, phase="done", engine=history_is(8)),
    ),
    expect=dict(payoffs=[0, 0, 0, 0], contract="none", declarer=None),
)

scenario(
    "all pass without the early round",
    PLAY_EXAMPLE,
    (
        At(0, phase="auction", hands=full_hands(PLAY_EXAMPLE, None)),
        *[x for s in range(4) for x in (At(s, "bid:pass bid:solo bid:call"), "bid:pass")],
        At(-1, phase="done", engine=history_is(4)),
    ),
    options={"early_solo": False},
    expect=dict(payoffs=[0, 0, 0, 0], contract="none", declarer=None),
)


# (f) Rivanto. Seat 0 calls: his highest missing trump is T18, held by seat 2 (his partner) as her only
# trump; she must play it under his T20 at trick 1.

# The declarer's side wins the last trick: seat 0 holds 15 trumps and wins every trick.
RIVANTO_FAILS = dict(
    seat0="T20 T19 T17 T16 T15 T14 T13 T12 T11 T10 T9 T8 T7 T6 T5",
    seat1="T0 T1 T2 T3 T4 8C 9C 10C JC NC QC KC 4D 5D 6D",
    seat2="T18 7D 8D 9D 10D JD ND QD KD 5S 6S 7S 8S 9S 10S",
    seat3="EX JS NS QS KS 5B 6B 7B 8B 9B 10B JB NB QB KB",
    monte="5C 6C 7C",
)


def t18_called_seen(s):
    assert s.observation(0)[O.OBS_CALLED + 18] == 1


def rivanto_seen(s):
    assert s.observation(3)[O.OBS_RIVANTO + (1 - 3) % 4] == 1


scenario(
    "a failed rivanto gives two jochi to the declarer's side",
    RIVANTO_FAILS,
    (
        EARLY_ALL_PASS,
        "bid:call bid:pass bid:pass bid:pass",
        At(0, phase="discard", engine=t18_called_seen),
        "discard:5C discard:6C discard:7C pass",
        At(1, "pass rivanto", phase="rivanto"),
        "rivanto",  # the first rivanto closes the round at once: play starts, the declarer leads
        At(0, phase="play", engine=rivanto_seen),
        Finish({0: "T20 T19 T17 T16 T15 T14 T13 T12 T11 T10 T9 T8 T7 T6 T5"}),
    ),
    expect=dict(
        tricks={0: (0, [(0, "T20"), (1, "T0"), (2, "T18"), (3, "EX")], 0)},
        winners=[0] * 14 + [None],
        contract="call", partner=2, sides=[[0, 2], [1, 3]],
        # EX's side won no trick: EX to the trick-1 winner. Side 0 has every card: 327 thirds.
        thirds=[327, 0],
        # Side 0: rimatura 1, rivanto 2 (failed by the opponents; replaces the vanto), arie + Giove 2,
        # pigliata 1 (T1 from seat 1; T18 came from the partner: none), re 1 = 7. Opponents 0.
        jochi=[{"rimatura": 1, "rivanto": 2, "arie": 2, "pigliata": 1, "re": 1}, {}],
        payoffs=[7, -7, 7, -7],  # D = 7, pairs: seats 0 and 2 +7, seats 1 and 3 -7
    ),
)

# The opponents win the last trick: seat 0 holds 14 trumps and EX and must lead EX last; seat 1 wins it.
RIVANTO_MADE = dict(
    seat0="T20 T19 T17 T16 T15 T14 T13 T12 T11 T10 T9 T8 T7 T6 EX",
    seat1="T0 T1 T2 T3 T4 T5 10D JD ND QD KD 5S 6S 7S KB",
    seat2="T18 8C 9C 10C JC NC QC KC 4D 5D 6D 7D 8D 9D QS",
    seat3="8S 9S 10S JS NS KS 5B 6B 7B 8B 9B 10B JB NB QB",
    monte="5C 6C 7C",
)

scenario(
    "a rivanto made gives two jochi to the opponents",
    RIVANTO_MADE,
    (
        EARLY_ALL_PASS,
        "bid:call bid:pass bid:pass bid:pass",
        "discard:5C discard:6C discard:7C",
        At(0, "pass scommessa"),
        "pass",
        At(1, "pass rivanto"), "pass",
        At(2, "pass"), "pass",  # the partner may only pass
        At(3, "pass rivanto"), "rivanto",
        At(0, phase="play"),
        Finish({0: "T20 T19 T17 T16 T15 T14 T13 T12 T11 T10 T9 T8 T7 T6 EX"}),
    ),
    expect=dict(
        winners=[0] * 14 + [None],
        # last trick: EX led; seat 1's KB sets Bastoni; seat 2 has only QS; seat 3 QB: seat 1 wins and takes EX
        tricks={14: (0, [(0, "EX"), (1, "KB"), (2, "QS"), (3, "QB")], None)},
        partner=2,
        # Opponents: {EX KB QS QB} = 28 + 13 + 10 + 10 = 61 + 15 = 76; side 0: 312 - 61 = 251
        thirds=[251, 76],
        # Side 0: rimatura 1, arie 2, pigliata 1 (T1) = 4; opponents: rivanto 2 (no vanto). D = 2
        jochi=[{"rimatura": 1, "arie": 2, "pigliata": 1}, {"rivanto": 2}],
        payoffs=[2, -2, 2, -2],
    ),
)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("sc", SCENARIOS, ids=[slug(sc.id) for sc in SCENARIOS])
def test_scenario(sc, impl):
    play(sc, GAMES[impl])


# ----------------------------------------------------------------------------------------------------------
# card points and deals, on both


THIRDS_OF = {"engine": thirds_of, "oracle": oracle_thirds_of}


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize(
    "cards, thirds",
    [
        ("5C 6C T2", 3),  # 3 scartine = 1 point
        ("QS 5C T3", 12),  # Q + 2 scartine = 4 points
        ("KB 7D T0", 15),  # K + 2 scartine = 5 points
        ("NC 5C 6C T1 JD 7C", 42),  # {N + 2 scartine} 3 + {T1 + J + 1 scartina} 10 + 2 - 1 = 14 points
        ("KC T20 QD", 51),  # 3 specials: 5 + 10 + 4 - 2 = 17 points
        ("T2 9B", 2),  # 2 scartine left over
        ("T4", 1),  # 1 scartina left over
        ("KC", 13),
        ("T16 T17 T18 T19", 52),
        ("EX T20 T1", 84),  # 30 - 2 = 28 points
    ],
)
def test_thirds_of_seed_counting_examples(cards, thirds, impl):
    assert THIRDS_OF[impl](cards.split()) == thirds


@pytest.mark.parametrize("impl", IMPLS)
def test_thirds_of_whole_deck(impl):
    deck = list(NAMES) if impl == "engine" else full_deck()
    assert len(deck) == len(set(deck)) == 63
    # 23 specials: 3*sum - 2*23 + 40 scartine; sum = 4*(2+3+4+5) + 4*5 + 3*10 = 106 -> 318 - 46 + 40 = 312
    assert THIRDS_OF[impl](deck) == 312  # + 15 for the last trick = 327 = 109 points
    assert THIRDS_OF[impl]([]) == 0


def test_thirds_of_errors():
    with pytest.raises(ValueError, match="duplicated"):
        thirds_of(["KC", "KC"])
    with pytest.raises(ValueError, match="T21"):
        thirds_of(["T21"])


def _set(seat: int, k: int, card):
    def change(hands, monte):
        hands[seat][k] = card if isinstance(card, str) else hands[card[0]][card[1]]
        return hands, monte

    return change


BAD_DEALS = [
    # (how the good deal EX1 is spoiled, the engine's message)
    (_set(0, 3, "T21"), r"deal\.hands\[0\]\[3\].*unknown card 'T21'"),  # Mineo's trumps stop at T20
    (_set(1, 0, "4S"), "unknown card '4S'"),  # only Denari has the 4
    (_set(0, 0, "4C"), "unknown card '4C'"),
    (_set(2, 4, "T0"), r"deal\.hands\[2\]\[4\].*T0 is dealt twice.*deal\.hands\[0\]\[0\]"),  # seat 0's first card
    (_set(0, 0, (1, 0)), r"deal\.hands\[1\]\[0\].*T6 is dealt twice.*deal\.hands\[0\]\[0\]"),
    (lambda h, m: (h[:2] + [h[2][:14]] + h[3:], m), r"deal\.hands\[2\] must hold 15 cards, got 14"),
    (lambda h, m: (h, m[:2]), r"deal\.stock must hold 3 cards, got 2"),
    (lambda h, m: (h[:3], m), "4 lists"),
]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("spoil, message", BAD_DEALS, ids=range(len(BAD_DEALS)))
def test_bad_deals_are_rejected(spoil, message, impl):
    hands, monte = hands_and_monte(EX1)
    if impl == "engine":
        game = tarocchi_rl.make("mineo")
        game.state_from_deal(hands, monte)  # the good deal is accepted
        with pytest.raises(ValueError, match=message):
            game.state_from_deal(*spoil([h[:] for h in hands], monte[:]))
    else:
        MineoOracle(hands, monte)
        with pytest.raises(ValueError):
            MineoOracle(*spoil([h[:] for h in hands], monte[:]))


# ----------------------------------------------------------------------------------------------------------
# the engine's errors


def deal(d: dict, **options):
    return tarocchi_rl.make("mineo", **options).state_from_deal(*hands_and_monte(d))


def act(state, actions: str) -> None:
    for a in actions.split():
        state.apply(a)


def test_illegal_action_names_it_and_the_legal_ones():
    s = deal(EX1)
    with pytest.raises(ValueError, match=r"play:KC") as e:
        s.apply("play:KC")
    assert "legal actions: 126 (bid:pass), 127 (bid:solo)" in str(e.value)
    assert s.history == [] and s.current_player() == 0 and s.phase == "early"
    act(s, EARLY_ALL_PASS)
    act(s, "bid:pass bid:call")
    with pytest.raises(ValueError, match=r"bid:call.*legal actions: 126 \(bid:pass\), 127 \(bid:solo\)"):
        s.apply("bid:call")
    act(s, "bid:solo")
    with pytest.raises(ValueError, match=r"discard:KC") as e:
        s.apply("discard:KC")  # Kings may not be discarded
    assert "discard:4D" in str(e.value) and "discard:T5" not in str(e.value)
    with pytest.raises(ValueError, match=r"discard:T5"):
        s.apply("discard:T5")
    with pytest.raises(ValueError, match="rivanto"):
        s.apply("rivanto")
    assert len(s.history) == 7


def test_unknown_action_strings():
    s = deal(EX1)
    with pytest.raises(ValueError, match="unknown action"):
        s.apply("bid:double")
    with pytest.raises(ValueError, match="ZZ"):
        s.apply("play:ZZ")
    with pytest.raises(ValueError):
        s.apply(True)


def test_action_after_the_end_is_an_error():
    s = deal(PLAY_EXAMPLE)
    act(s, EARLY_ALL_PASS + " bid:pass bid:pass bid:pass bid:pass")
    with pytest.raises(ValueError, match="over"):
        s.apply("bid:pass")


def test_bad_options_and_observer():
    with pytest.raises(ValueError, match="unknown option"):
        tarocchi_rl.make("mineo", doubled=True)
    with pytest.raises(ValueError, match="early_solo"):
        tarocchi_rl.make("mineo", early_solo="yes")
    s = deal(EX1)
    with pytest.raises(ValueError, match="seat"):
        s.observation(4)
