"""Hand-worked deals of the Piedmontese tarocchi (``piedmont3``, ``piedmont4``; docs/rules.md), each written
once as data (deals with :mod:`tests.support.cards78`) and run on both the engine and the independent oracle
(tests/oracles/oracle_piedmont.py).

A Scenario (tests/support/scenarios.py) is a deal, options, a script and the expected figures. The script checks, on
both implementations, the seat to act (so every trick's winner), the exact legal sets, the phase and hands;
``engine=`` / ``oracle=`` hooks check what only one of them has (the engine's observations, the oracle's won piles
and Excuse exchange). The figures at the end are the payoffs, the card points in thirds per seat (piedmont3) or side
(piedmont4, seats 0+2 and 1+3) without the accuso, the accuso bonus per side, the accuso conditions per seat, the
Excuse (who played it, who won its trick, whether it went to the last trick's winner) and the sides; every finished
deal is also checked against the settlement (``settled``). ``versus`` replays a deal with other options (the Excuse
exchange, the accuso) and checks the differences. The oracle's own random-game properties are in
test_piedmont_oracle.py.

Piedmontese card points are in thirds: a special card of value v counts 3v - 2 thirds (K, T1 and the 5-point
honour(s) 13, Q 10, EX 10, N 7, J 4), any other card (scartina) 1 third. Deck: 231 thirds (piedmont3, one
5-point honour) or 243 (piedmont4, T20 and T21 both 5). piedmont3 payoff: thirds - 77; piedmont4: the side's
thirds minus the other side's.

"Lowest legal" (LOWEST, and Finish without cards) is the legal action with the lowest engine action id: for
cards, the lowest dense card id (T1..T19, T21, T20, EX, then Coppe, Denari, Spade, Bastoni, each low to high).

Every test here runs in well under a second, so the whole module is also run with NUMBA_DISABLE_JIT=1.
"""

from typing import NamedTuple

import pytest

import tarocchi_rl
from tarocchi_rl.variants import piedmont
from tests.oracles.oracle_piedmont import PiedmontOracle
from tests.support.cards78 import (
    SHAPE,
    discards,
    fill,
    full_deck,
    hands_from_tricks,
    new,
    pips,
    plane,
    plays,
    section,
    suit,
    trumps,
)
from tests.support.scenarios import ANY_CARD, IMPLS, At, EngineGame, Finish, Illegal, Scenario, ScenarioGame, slug
from tests.support.scenarios import play_scenario as play

pytestmark = pytest.mark.nojit


# ----------------------------------------------------------------------------------------------------------
# the two implementations behind one interface


class Deal(NamedTuple):
    variant: str
    hands: list
    stock: list


def settled(f: dict, variant: str) -> dict:
    """The deck's thirds are all counted (the Excuse exchange only moves one between seats); piedmont3 pays
    thirds - 77 to each seat, piedmont4 the difference of the sides' thirds with their accuso bonus."""
    assert sum(f["thirds"]) == (231 if variant == "piedmont3" else 243)
    assert f["card_points"] == [t / 3 for t in f["thirds"]]
    if variant == "piedmont3":
        assert f["accuso"] == [0, 0, 0] and f["payoffs"] == [t - 77 for t in f["thirds"]]
    else:
        d = f["thirds"][0] + f["accuso"][0] - f["thirds"][1] - f["accuso"][1]
        assert f["payoffs"] == [d, -d, d, -d]
    return f


class Engine(EngineGame):
    def __init__(self, deal: Deal, **options):
        super().__init__()
        self.variant, self.n_players = deal.variant, len(deal.hands)
        self.raw = new(deal.variant, deal.hands, deal.stock, **options)

    def figures(self):
        out = self.raw.outcome()
        assert out["payoffs"] == self.raw.returns()
        accuso = [0] * len(out["sides"])
        for b in out["bonuses"]:
            assert b["name"] == "accuso"
            accuso[b["side"]] += b["points"]
        return settled({
            "payoffs": out["payoffs"], "declarer": out["declarer"], "sides": out["sides"],
            "thirds": out["card_point_units"], "card_points": out["card_points"], "accuso": accuso,
            "accuso_conditions": out["details"].get("accuso"), "excuse": out["details"]["excuse"],
        }, self.variant)


class Oracle(ScenarioGame):
    impl = "oracle"

    def __init__(self, deal: Deal, **options):
        super().__init__()
        self.variant, self.n_players = deal.variant, len(deal.hands)
        self.raw = PiedmontOracle(deal.hands, deal.stock, variant=deal.variant, **options)

    def _apply(self, action):
        self.raw.apply(action)

    def current_player(self):
        return self.raw.current_player()

    def legal(self):
        return self.raw.legal_actions()

    @property
    def phase(self):
        return self.raw.phase

    def hand(self, seat):
        return self.raw.hands[seat]

    def is_terminal(self):
        return self.raw.is_terminal()

    def action_key(self, action):
        return piedmont.string_to_action(action)

    def figures(self):
        o = self.raw
        per_seat = o.seat_card_thirds()
        (k, trick), = [(k, t) for k, t in enumerate(o.tricks) if any(c == "EX" for _, c in t["plays"])]
        excuse = {"played_by": next(s for s, c in trick["plays"] if c == "EX"), "trick_won_by": trick["winner"],
                  "to_last_trick_winner": k == len(o.tricks) - 1}
        if self.variant == "piedmont3":
            thirds, sides, conditions = per_seat, [[0], [1], [2]], None
        else:
            thirds, sides = [per_seat[0] + per_seat[2], per_seat[1] + per_seat[3]], [[0, 2], [1, 3]]
            conditions = list(o.accuso_conditions)
        accuso = o.accuso_bonus_thirds() if self.variant == "piedmont4" else [0, 0, 0]
        assert [t + a for t, a in zip(thirds, accuso, strict=True)] == o.points_thirds()
        return settled({
            "payoffs": o.returns(), "declarer": o.dealer, "sides": sides, "thirds": thirds,
            "card_points": [t / 3 for t in thirds], "accuso": accuso, "accuso_conditions": conditions,
            "excuse": excuse,
        }, self.variant)


GAMES = {"engine": Engine, "oracle": Oracle}
SCENARIOS = []


def scenario(*args, **kwargs) -> Scenario:
    sc = Scenario(*args, **kwargs)
    SCENARIOS.append(sc)
    return sc


def trick_steps(n: int, tricks) -> list:
    """The scripted tricks as steps: each card played by the seat whose turn it is."""
    return [x for leader, cards in tricks for i, c in enumerate(cards) for x in (At((leader + i) % n), f"play:{c}")]


def minus(cards, gone) -> list:
    return [c for c in cards if c not in gone]


def exchange_is(exchange):
    def check(oracle):
        assert oracle.exchange == exchange

    return check


def ex_won_by(seat: int):
    def check(oracle):
        assert "EX" in oracle.won_cards()[seat]

    return check


def shown_to(viewers, cards):
    def check(state):
        for viewer in viewers:
            assert plane(state, "shown", viewer) == set(cards)

    return check


# ----------------------------------------------------------------------------------------------------------
# trick winners


def trick_deal(variant: str, cards: list) -> Deal:
    """A deal where seat k can play cards[k] to the first trick (seat 0 leads), after the dealer's discard. The
    other cards are dealt so that each of those plays is legal: a seat playing off the suit led is void in it
    (and without trumps for a plain card); a seat playing a plain card on a trump lead has none."""
    n, size, stock_size = SHAPE[variant]
    dealer = n - 1

    def cat(c):
        return "T" if c.startswith("T") else "EX" if c == "EX" else c[-1]

    setter = next(k for k, c in enumerate(cards) if c != "EX")
    led = cat(cards[setter])
    voids = {s: set() for s in range(n)}
    for k, c in enumerate(cards):
        if k <= setter or c == "EX" or cat(c) == led:
            continue
        voids[k].add(led)
        if cat(c) != "T":
            voids[k].add("T")
    pools = {s: [cards[s]] for s in range(n)}
    room = {s: (size + stock_size if s == dealer else size) - 1 for s in range(n)}
    rest = [c for c in full_deck(variant) if c not in cards]
    # most constrained cards first, each to the allowed seat with the most room left
    rest.sort(key=lambda c: sum(cat(c) not in voids[s] for s in range(n)))
    for c in rest:
        allowed = [s for s in range(n) if cat(c) not in voids[s] and room[s] > 0]
        assert allowed, f"cannot place {c}"
        s = max(allowed, key=lambda x: room[x])
        pools[s].append(c)
        room[s] -= 1
    return Deal(variant, [pools[s][:size] for s in range(n)], pools[dealer][size:])


def discard_all_but(keep: str):
    """A step: the dealer discards his lowest legal cards, never ``keep``."""

    def step(game):
        while game.phase == "discard":
            game.apply(min((a for a in game.legal() if a != "discard:" + keep), key=game.action_key))

    return step


def one_trick_won_by(winner: int, variant: str):
    def check(state):
        n, size, _ = SHAPE[variant]
        assert section(state, "tricks_won", winner)[0] == pytest.approx(1 / size)
        assert [section(state, "tricks_won", s)[0] for s in range(n)].count(0) == n - 1

    return check


PIEDMONT_TRICKS = [
    # reversed Denari and Coppe: 1 > 2 > ... > 10; normal Spade and Bastoni: 10 > ... > 1
    ("piedmont3", ["10D", "1D", "5D"], 1),
    ("piedmont3", ["10C", "2C", "1C"], 2),
    ("piedmont3", ["2C", "1C", "10C"], 1),
    ("piedmont3", ["1S", "10S", "5S"], 1),
    ("piedmont3", ["2B", "1B", "3B"], 2),
    # courts above all pips, also in the reversed suits
    ("piedmont3", ["1D", "JD", "2D"], 1),
    ("piedmont4", ["QC", "KC", "NC", "1C"], 1),
    ("piedmont4", ["JS", "NS", "10S", "QS"], 3),
    # an off-suit card never wins, whatever its rank
    ("piedmont3", ["6C", "KS", "5C"], 2),
    ("piedmont4", ["9S", "1D", "1C", "8S"], 0),
    # trumps: the Angel T20 above the World T21, the Bagatto T1 above any suit card
    ("piedmont3", ["T21", "T20", "T19"], 1),
    ("piedmont3", ["T20", "T21", "KC"], 0),
    ("piedmont4", ["T21", "T19", "T18", "T2"], 0),
    ("piedmont3", ["KS", "T1", "QS"], 1),
    ("piedmont4", ["1D", "T2", "T3", "KD"], 2),
    # EX: led, the next card sets the suit; played, it never wins
    ("piedmont3", ["EX", "5S", "KS"], 2),
    ("piedmont3", ["EX", "5S", "KC"], 1),
    ("piedmont4", ["EX", "10D", "1D", "T1"], 3),
    ("piedmont3", ["QB", "EX", "JB"], 0),
    ("piedmont4", ["2C", "1S", "EX", "3S"], 0),
]

for _variant, _cards, _winner in PIEDMONT_TRICKS:
    scenario(
        f"trick {_variant} {' '.join(_cards)}",
        trick_deal(_variant, _cards),
        (
            discard_all_but(_cards[-1]),
            At(0, phase="play"),
            *[x for k, c in enumerate(_cards) for x in (At(k, has=plays([c])), f"play:{c}")],
            At(_winner, engine=one_trick_won_by(_winner, _variant)),  # the winner leads the next trick
        ),
    )


def any_lower_trump(game):
    held = [c for c in game.hand(2) if c.startswith("T") or c == "EX"]
    assert "T2" in held and any(int(c[1:]) > 10 for c in held if c != "EX")
    assert game.legal() == plays(held)  # void in Coppe: any trump, a lower one too


scenario(
    "no duty to overtrump",
    trick_deal("piedmont3", ["KC", "T10", "T2"]),
    (discard_all_but("T2"), "play:KC play:T10", any_lower_trump, "play:T2", At(1)),
)


# ----------------------------------------------------------------------------------------------------------
# follow rules and the Excuse exchange

COPPE = suit("C")
DENARI = suit("D")
SPADE = suit("S")
BASTONI = suit("B")


def ex_deal_3(ex_seat: int) -> Deal:
    """piedmont3: seat 0 EX, 12 Coppe, KD..3D; seat 1 3C, Spade, 2D, 1D, T1..T8; seat 2 (dealer) 9C,
    Bastoni, T9..T18; stock T19 T20 T21. With ex_seat 1, EX and 1D swap places."""
    seat0 = ["EX"] + [c for c in COPPE if c not in ("3C", "9C")] + DENARI[:12]
    seat1 = ["3C"] + SPADE + ["2D", "1D"] + trumps(1, 8)
    seat2 = ["9C"] + BASTONI + trumps(9, 18)
    if ex_seat == 1:
        seat0[0] = "1D"
        seat1[seat1.index("1D")] = "EX"
    return Deal("piedmont3", [seat0, seat1, seat2], ["T19", "T20", "T21"])


EX_AT_0 = ex_deal_3(ex_seat=0)

scenario(
    "follow suit, then trump, then anything",
    EX_AT_0,
    (
        At(2, phase="discard", hands={2: EX_AT_0.hands[2] + EX_AT_0.stock}),  # the dealer holds 28 cards
        "discard:1B discard:2B discard:3B play:KD",
        At(1, plays("2D 1D")),  # follow suit
        "play:1D",
        At(2, plays(trumps(9, 21))),  # void in Denari: trump (any trump)
        "play:T9",
        At(2),  # T9 wins
        "play:KB",
        At(0, ANY_CARD),  # seat 0 has neither Bastoni nor trumps: anything
    ),
)

scenario(
    "EX led: the next card sets the suit; the exchange",
    EX_AT_0,
    (
        "discard:1B discard:2B discard:3B",
        At(0, has="play:EX"),  # EX may be led
        "play:EX",
        At(1, ANY_CARD),  # after a led EX: anything
        "play:3C",
        At(2, "play:9C"),  # must follow the second card's suit
        "play:9C",
        At(1, oracle=exchange_is([-1, 1, 0])),  # 3C beats 9C in Coppe
        Finish(),
        At(-1, oracle=ex_won_by(0)),  # the owner keeps EX
    ),
    expect=dict(excuse={"played_by": 0, "trick_won_by": 1, "to_last_trick_winner": False}, declarer=2),
    # with the exchange one third passes from seat 0 to seat 1, the trick's winner
    versus=({"excuse_exchange": False}, {"thirds": [-1, 1, 0]}),
)

scenario(
    "EX led, then a trump: trumps must follow",
    EX_AT_0,
    (
        "discard:1B discard:2B discard:3B play:EX play:T1",
        At(2, plays(trumps(9, 21))),  # no duty to overtrump: any trump
        "play:T21",
        At(2),
    ),
)

scenario(
    "EX played instead of following suit",
    ex_deal_3(ex_seat=1),
    (
        "discard:1B discard:2B discard:3B play:KC",
        At(1, plays("3C EX")),
        "play:EX",
        At(2, "play:9C"),
        "play:9C",
        At(0, oracle=exchange_is([1, -1, 0])),
        Finish(),
        At(-1, oracle=ex_won_by(1)),
    ),
    expect=dict(excuse={"played_by": 1, "trick_won_by": 0, "to_last_trick_winner": False}),
    versus=({"excuse_exchange": False}, {"thirds": [1, -1, 0]}),
)


def ex_deal_4() -> Deal:
    seat0 = ["EX"] + COPPE + ["KD", "QD", "ND", "JD"]
    seat1 = SPADE + ["10D", "9D", "8D", "7D", "6D"]
    seat2 = trumps(1, 19)
    seat3 = BASTONI + ["5D", "4D", "3D", "2D", "1D"]
    return Deal("piedmont4", [seat0, seat1, seat2, seat3], ["T20", "T21"])


scenario(
    "piedmont4: EX won by the partner, no exchange",
    ex_deal_4(),
    (
        "discard:1B discard:2B play:EX",
        At(1, ANY_CARD),
        "play:10D",
        At(2, plays(trumps(1, 19))),
        "play:T1",
        At(3, plays("5D 4D 3D 2D 1D")),
        "play:1D",
        At(2, oracle=exchange_is([0, 0, 0, 0])),  # seat 0's partner wins: no exchange
        Finish(),
    ),
    expect=dict(sides=[[0, 2], [1, 3]], excuse={"played_by": 0, "trick_won_by": 2, "to_last_trick_winner": False}),
    versus=({"excuse_exchange": False}, {"thirds": [0, 0]}),
)

scenario(
    "piedmont4: EX won by an opponent, one third between the sides",
    ex_deal_4(),
    (
        "discard:1B discard:2B play:EX play:1S play:T1",
        At(3, plays("T20 T21")),  # void in Spade: must trump
        "play:T21",
        At(3, oracle=exchange_is([-1, 0, 0, 1])),
        Finish(),
    ),
    expect=dict(excuse={"played_by": 0, "trick_won_by": 3, "to_last_trick_winner": False}),
    versus=({"excuse_exchange": False}, {"thirds": [-1, 1]}),
)


# ----------------------------------------------------------------------------------------------------------
# complete deals worked by hand


def _piedmont3_ex_last_tricks():
    # Seat 0: KC KD KS T1..T21 EX; seat 1: Coppe QC..1C, Denari QD..2D; seat 2 (dealer): 1D, Spade, Bastoni,
    # who takes the stock 1S 2S KB and discards 1S 2S 3S.
    seat1_rest = suit("C", "J 10 9 8 7 6 5 4 3 2 1") + suit("D", "N J 10 9 8 7 6 5 4 3")  # 21
    seat2_rest = suit("S", "N J 10 9 8 7 6 5 4") + suit("B", "Q N J 10 9 8 7 6 5 4 3 2")  # 21
    tricks = [
        (0, ["KC", "QC", "KB"]),  # seat 2 void in Coppe, without trumps
        (0, ["KD", "QD", "1D"]),  # courts above pips in the reversed Denari: KD wins
        (0, ["KS", "NC", "QS"]),
    ]
    for k, t in enumerate(trumps(21, 1)):  # 21 trump leads, nobody else holds a trump
        tricks.append((0, [t, seat1_rest[k], seat2_rest[k]]))
    tricks.append((0, ["EX", "2D", "1B"]))  # EX led to the last trick: 2D sets Denari, seat 1 wins
    return tricks


P3_TRICKS = _piedmont3_ex_last_tricks()
P3_STOCK, P3_DROPPED = ["1S", "2S", "KB"], ["1S", "2S", "3S"]
P3_HANDS = hands_from_tricks(3, 25, P3_TRICKS, 2, P3_STOCK, P3_DROPPED)

for _options in ({}, {"excuse_exchange": False}, {"honour_5": "angelo"}):
    scenario(
        f"piedmont3: EX led to the last trick goes to the winner {_options}",
        Deal("piedmont3", P3_HANDS, P3_STOCK),
        (
            At(2, phase="discard", hands={2: P3_HANDS[2] + P3_STOCK}),
            " ".join(f"discard:{c}" for c in P3_DROPPED),
            *trick_steps(3, P3_TRICKS),
        ),
        options=_options,
        expect=dict(
            excuse={"played_by": 0, "trick_won_by": 1, "to_last_trick_winner": True},
            # Seat 1 wins only the last trick: EX 10 + 2D 1 + 1B 1 = 12 thirds (EX goes to the winner, no
            # exchange). Seat 2 (dealer): his discard 1S 2S 3S = 3 thirds. Seat 0: 231 - 12 - 3 = 216 (T20/T21
            # both his, so honour_5 changes nothing). Payoffs: thirds - 77 = 139, -65, -74.
            thirds=[216, 12, 3],
            card_points=[72, 4, 1],
            payoffs=[139, -65, -74],
            declarer=2,
        ),
    )


def _piedmont4_tricks(ex_trick: int):
    # Seat 0: T3..T21 leads 19 trumps and wins every trick. Seat 1: T1 T2 EX, Coppe, KD QD (plays T1, T2 on
    # the first two leads, EX in trick ex_trick). Seat 2: ND..1D, KS..8S. Seat 3 (dealer): 7S..1S, Bastoni;
    # stock KB 1S, discards 1S 2S.
    seat1 = ["T1", "T2"] + COPPE + ["KD", "QD"]
    seat1.insert(ex_trick, "EX")
    seat2 = suit("D")[2:] + suit("S", "K Q N J 10 9 8")
    seat3 = pips("S", 7, 3) + BASTONI
    return [(0, [t, seat1[k], seat2[k], seat3[k]]) for k, t in enumerate(trumps(21, 3))]


for _ex_trick, _exchange, _thirds, _excuse_last in [
    # EX in trick 3, won by seat 0: side 1+3 keeps EX and gives one third. Side 1+3: discards 1S 2S 2 +
    # EX 10 - 1 = 11; side 0+2: 243 - 12 + 1 = 232. d = 221.
    (2, True, [232, 11], False),
    # without the exchange: 243 - 12 = 231 and 12, d = 219
    (2, False, [231, 12], False),
    # EX played (not led) to the last trick: it goes to the winner, seat 0: side 1+3 only 2, side 0+2 241
    (18, True, [241, 2], True),
    (18, False, [241, 2], True),
]:
    _tricks = _piedmont4_tricks(_ex_trick)
    _hands = hands_from_tricks(4, 19, _tricks, 3, ["KB", "1S"], ["1S", "2S"])
    _d = _thirds[0] - _thirds[1]
    scenario(
        f"piedmont4: a complete deal, team payoffs, EX in trick {_ex_trick + 1}, exchange {_exchange}",
        Deal("piedmont4", _hands, ["KB", "1S"]),
        (
            At(3, phase="discard", hands={3: _hands[3] + ["KB", "1S"]}),
            "discard:1S discard:2S",
            At(0, phase="play"),  # no accuso round by default
            *trick_steps(4, _tricks),
        ),
        options={"excuse_exchange": _exchange},
        expect=dict(
            excuse={"played_by": 1, "trick_won_by": 0, "to_last_trick_winner": _excuse_last},
            thirds=_thirds,
            payoffs=[_d, -_d, _d, -_d],
            accuso_conditions=[0, 0, 0, 0],
        ),
    )


# ----------------------------------------------------------------------------------------------------------
# the dealer's discard

NORMAL_DEALER = ["KC", "QC", "NC", "JC", "1C", "T1", "T21", "T20", "T5", "EX"]
NORMAL = Deal("piedmont3", *fill("piedmont3", {2: NORMAL_DEALER[:7]}, stock=NORMAL_DEALER[7:]))
# the fill gives the dealer also 1B and T2..T4, T6..T19
NORMAL_DEALER_HAND = NORMAL_DEALER + ["1B"] + trumps(2, 4) + trumps(6, 19)
assert sorted(NORMAL.hands[2] + NORMAL.stock) == sorted(NORMAL_DEALER_HAND)


def discard_seen_by_dealer_only(state):
    assert plane(state, "discard", 2) == {"QC", "NC", "1C"}  # the dealer sees his discard
    assert plane(state, "discard", 0) == set()  # nobody else does
    assert plane(state, "shown", 0) == set()  # no trump discarded: nothing shown


scenario(
    "piedmont3: the dealer's discard, normal case",
    NORMAL,
    (
        # 5 cards other than Kings, trumps, EX for 3 discards: no trump (not even T20 nor T5), no King, no EX
        At(2, discards("QC NC JC 1C 1B"), phase="discard", hands={2: NORMAL_DEALER_HAND}),
        *[Illegal("discard:" + bad) for bad in ("KC", "T1", "T21", "T20", "T5", "EX")],
        "discard:QC discard:NC discard:1C",
        At(0, phase="play", hands={2: minus(NORMAL_DEALER_HAND, "QC NC 1C".split())},
           engine=discard_seen_by_dealer_only),
    ),
)


def discards_won_by_dealer(oracle):
    assert set(oracle.discards) <= set(oracle.won_cards()[2])


def t5_shown_2c_1c_face_down(state):
    assert plane(state, "shown", 1) == {"T5"}
    assert plane(state, "discard", 2) == {"T5", "2C", "1C"}


def fallback_scenarios(honour_5: str) -> None:
    dealer = trumps(1, 21) + ["EX", "KC", "KD", "KS", "KB", "1C", "2C"]  # 28 cards
    deal = Deal("piedmont3", *fill("piedmont3", {2: dealer[:25]}, stock=dealer[25:]))
    protected_top = "T21" if honour_5 == "mondo" else "T20"
    other_top = "T20" if honour_5 == "mondo" else "T21"
    allowed_trumps = discards([t for t in trumps(2, 21) if t != protected_top])
    assert "discard:" + other_top in allowed_trumps
    base = discards("1C 2C")
    scenario(
        f"piedmont3: the discard falls back to trumps, honour_5 {honour_5}, a trump first",
        deal,
        (
            At(2, base | allowed_trumps, hands={2: dealer}),  # 2 other cards < 3 discards to make
            "discard:T5",
            At(2, base, engine=shown_to((0, 1, 2), ["T5"])),  # 2 other cards, 2 to make: no trump any more
            Illegal("discard:T6"),  # (a discarded trump is shown to all)
            "discard:2C",
            At(2, "discard:1C"),
            "discard:1C",
            At(0, phase="play", hands={2: minus(dealer, ["T5", "2C", "1C"])}, engine=t5_shown_2c_1c_face_down),
            Finish(),
            At(-1, oracle=discards_won_by_dealer),
        ),
        options={"honour_5": honour_5},
    )
    scenario(
        f"piedmont3: the discard falls back to trumps, honour_5 {honour_5}, the other top honour",
        deal,
        (
            "discard:1C",
            At(2, {"discard:2C"} | allowed_trumps),  # 1 other card < 2 to make: trumps still allowed
            "discard:" + other_top,
            At(2, "discard:2C"),  # 1 other card, 1 to make
            "discard:2C",
            At(0, phase="play", hands={2: minus(dealer, ["1C", other_top, "2C"])}, engine=shown_to((0,), [other_top])),
            Finish(),
            At(-1, oracle=discards_won_by_dealer),
        ),
        options={"honour_5": honour_5},
    )


fallback_scenarios("mondo")
fallback_scenarios("angelo")

P4_DEALER = trumps(1, 15) + ["T20", "T21", "EX", "KC", "KD", "1S"]  # 21 cards

scenario(
    "piedmont4: the discard falls back to trumps, never T1, T20, T21",
    Deal("piedmont4", *fill("piedmont4", {3: P4_DEALER[:19]}, stock=P4_DEALER[19:])),
    (
        At(3, discards(["1S"] + trumps(2, 15)), phase="discard", hands={3: P4_DEALER}),
        "discard:1S",
        At(3, discards(trumps(2, 15))),  # T1, T20, T21, Kings, EX never
        "discard:T15",
        At(0, phase="play", engine=shown_to((0, 2), ["T15"])),  # no accuso round by default
        Illegal("accuso"),
    ),
)


# ----------------------------------------------------------------------------------------------------------
# accuso (piedmont4)

ACCUSO_DEAL = Deal("piedmont4", *fill("piedmont4", {
    0: trumps(2, 11),  # 10 trumps
    1: ["T1", "T20", "T21"] + trumps(12, 18),  # 10 trumps and the three honours: both conditions
    2: ["T19", "EX"],  # one trump (EX not counted)
}))
assert not any(c.startswith("T") for c in ACCUSO_DEAL.hands[3] + ACCUSO_DEAL.stock)


def accuso_shown(state):
    # the qualifying cards are shown: seat 0 his 10 trumps, seat 1 his trumps (the three honours among them)
    assert plane(state, "shown_by", 3, rel=1) == set(trumps(2, 11))
    assert plane(state, "shown_by", 3, rel=2) == set(["T1", "T20", "T21"] + trumps(12, 18))
    assert plane(state, "shown_by", 3, rel=3) == set()
    assert list(section(state, "accuso", 3)) == [0, 1, 1, 0]  # relative seats 0..3 = seats 3, 0, 1, 2


scenario(
    "piedmont4: accuso, who may declare it, its bonus and the shown cards",
    ACCUSO_DEAL,
    (
        Illegal("accuso"),
        "discard:1B discard:2B",
        At(0, "pass accuso", phase="accuso"), "accuso",
        At(1, "pass accuso"), "accuso",
        At(2, "pass"), "pass",
        At(3, "pass"), "pass",
        At(0, phase="play", engine=accuso_shown),
        Finish(),
    ),
    options={"accuso": True},
    # 1 x 5 points for side 0+2, 2 x 5 points for side 1+3 (in thirds); settled: 243 + 45 in all
    expect=dict(accuso_conditions=[1, 2, 0, 0], accuso=[15, 30]),
    versus=({"accuso": False}, {"thirds": [0, 0]}),
)


def seat0_shows_nothing(state):
    assert plane(state, "shown_by", 1, rel=3) == set()  # seat 0 (relative 3 for seat 1) shows nothing


scenario(
    "piedmont4: accuso points option, a qualifying seat passes",
    ACCUSO_DEAL,
    (
        "discard:1B discard:2B",
        At(0, "pass accuso"), "pass",  # seat 0 qualifies but passes
        At(1, "pass accuso"), "accuso",
        "pass pass",
        At(0, phase="play", engine=seat0_shows_nothing),
        Finish(),
    ),
    options={"accuso": True, "accuso_points": 2},
    expect=dict(accuso_conditions=[0, 2, 0, 0], accuso=[0, 12]),  # 2 conditions x 2 points x 3 thirds
    versus=({"accuso": False}, {"thirds": [0, 0]}),
)

ACCUSO_DEALER = trumps(2, 12) + ["KC", "KD", "KS", "KB", "EX", "1C", "QB", "NB", "JB", "10B"]  # 11 trumps
ACCUSO_DEALER_DEAL = Deal("piedmont4", *fill("piedmont4", {3: ACCUSO_DEALER[:19]}, stock=ACCUSO_DEALER[19:]))
assert sorted(c for c in ACCUSO_DEALER_DEAL.hands[2] if c.startswith("T")) == sorted(["T1"] + trumps(13, 21))

scenario(
    "piedmont4: the dealer declares accuso after his discard",
    ACCUSO_DEALER_DEAL,
    (
        At(3, discards("1C QB NB JB 10B")),
        "discard:1C discard:QB",
        At(0, "pass"), "pass",
        At(1, "pass"), "pass",
        At(2, "pass accuso"), "pass",  # 10 trumps, passes
        At(3, "pass accuso"), "accuso",
        At(0, phase="play"),
        Finish(),
    ),
    options={"accuso": True},
    expect=dict(accuso_conditions=[0, 0, 0, 1], accuso=[0, 15]),
    versus=({"accuso": False}, {"thirds": [0, 0]}),
)

scenario(
    "piedmont4: accuso needs ten trumps, EX not counted",
    Deal("piedmont4", *fill("piedmont4", {0: trumps(2, 10) + ["EX"], 1: ["T1", "T20"]})),  # 9 trumps + EX
    (
        "discard:1B discard:2B",
        At(0, "pass", phase="accuso"),
        Illegal("accuso"),
        "pass",
        At(1, "pass"),  # two of the three honours only
    ),
    options={"accuso": True},
)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("sc", SCENARIOS, ids=[slug(sc.id) for sc in SCENARIOS])
def test_scenario(sc, impl):
    play(sc, GAMES[impl])


# ----------------------------------------------------------------------------------------------------------
# the engine's option checks


def test_piedmont3_honour_5_option_is_checked():
    with pytest.raises(ValueError):
        tarocchi_rl.make("piedmont3", honour_5="papa").state_from_deal(*fill("piedmont3", {}))
    with pytest.raises(ValueError):
        tarocchi_rl.make("piedmont4", honour_5="mondo")  # does not apply to piedmont4
    with pytest.raises(ValueError):
        tarocchi_rl.make("piedmont3", accuso=True)  # accuso is a piedmont4 option
