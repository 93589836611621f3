"""Scenario tests of French Tarot (``french3``, ``french4``; docs/rules.md), with card names; deals written with
:mod:`tests.support.cards78`.

Most scenarios are written once, as data (:class:`Scenario`: the deal, the options, the actions and the
checks), and run on both implementations: the engine (:func:`test_on_engine`) and the independent oracle
tests/oracles/oracle_french.py (:func:`test_on_oracle`). Select one with ``-k``, e.g.
``pytest tests/french/test_french_scenarios.py -k score_prise_made`` runs it on both. The engine-only tests
(observation planes, the option's validation) follow; the oracle-only ones are in test_french_oracle.py.

French card points are in HALF points (deck 182): oudler (T1, T21, EX) 9, K 9, Q 7, N 5, J 3, any other card 1.
Targets by oudlers: 0: 112 (56 pts), 1: 102 (51), 2: 82 (41), 3: 72 (36).
Score: T = s*(25 + d)*mult + pab + s*poignee + chelem, d = |points - target| in whole points, a half point
rounded in favour of the side that scores (d = ceil(|half_points - target_half| / 2)).
Score figures checked (the ``("score", {...})`` step, the same names on both implementations): ``points`` the
half points [taker, defence], ``target`` in points, ``base`` = 25 + d (unsigned, before the multiplier),
``mult``, ``poignee`` the poignees' total (unsigned; the score adds s*poignee), ``petit_au_bout`` and ``chelem``
signed for the taker, ``T``, ``returns``. Payoffs: 3 players taker +2T, defenders -T; 4 players taker +3T,
defenders -T. Option ``excuse_last_trick``: ``other_side`` (default) or ``trick_winner``.

Every test here runs in well under a second, so the whole module is also run with NUMBA_DISABLE_JIT=1.
"""

import copy
from dataclasses import dataclass, field

import pytest

import tarocchi_rl
from tests.oracles.oracle_french import MULTIPLIER, OUDLERS, FrenchOracle
from tests.support.cards78 import (
    SHAPE,
    act,
    fill,
    full_deck,
    hands_from_tricks,
    legal,
    new,
    pips,
    plane,
    plays,
    section,
    suit,
    trumps,
)
from tests.support.engine import oracle_name

pytestmark = pytest.mark.nojit

BIDS = ("pass", "prise", "garde", "garde_sans", "garde_contre")
READINGS = ("other_side", "trick_winner")  # option excuse_last_trick

# ----------------------------------------------------------------------------------------------------------
# Scenarios run on both implementations
#
# Steps, in order: a string is actions (oracle spelling: "prise", "pass", "discard:KS", "chelem",
# "poignee:simple", "play:KS"; several separated by spaces); a tuple is a check:
#   ("player", seat)  ("phase", "bid" | "discard" | "chelem" | "poignee" | "play" | "done")
#   ("legal", actions)    the legal set is exactly these
#   ("lacks", actions)    none of these is legal
#   ("illegal", actions)  each one, applied to a copy, is a ValueError
#   ("hand", seat, n)     seat holds n cards
#   ("branch", steps)     run the steps on a copy
#   ("done",)             terminal, nobody to act, nothing legal
#   ("score", figures)    the outcome's figures (module docstring) and the score's formula
#   ("engine", check, why) / ("oracle", check, why)  a check of that implementation's own interface


@dataclass(frozen=True)
class Scenario:
    name: str
    variant: str
    hands: list
    chien: list
    steps: list
    options: dict = field(default_factory=dict)


class EngineRun:
    impl = "engine"

    def __init__(self, sc: Scenario):
        self.raw = new(sc.variant, sc.hands, sc.chien, **sc.options)

    def copy(self):
        other = copy.copy(self)
        other.raw = self.raw.clone()
        return other

    def apply(self, action: str) -> None:
        self.raw.apply("bid:" + action if action in BIDS[1:] else action)  # "pass" stands for bid:pass

    def legal(self) -> set:
        return {oracle_name(s) for s in legal(self.raw)}

    def player(self) -> int:
        return self.raw.current_player()

    def phase(self) -> str:
        return self.raw.phase

    def hand(self, seat: int) -> list:
        return self.raw.hand(seat)

    def terminal(self) -> bool:
        return self.raw.is_terminal()

    def score(self) -> dict:
        out = self.raw.outcome()
        assert out["payoffs"] == self.raw.returns()
        if out["declarer"] is None:
            assert out["contract"] == "none"
            return {"taker": None, "contract": None, "T": 0, "returns": out["payoffs"]}
        d = out["details"]
        signed = {b["name"]: b["points"] if b["side"] == 0 else -b["points"] for b in out["bonuses"]}
        return {"taker": out["declarer"], "contract": out["contract"].replace(" ", "_"), "mult": d["multiplier"],
                "points": out["card_point_units"], "oudlers": d["oudlers"], "target": d["target"],
                "made": d["made"], "base": d["base"], "petit_au_bout": signed.get("petit au bout", 0),
                "poignee": abs(signed.get("poignee", 0)), "chelem": signed.get("chelem", 0),
                "chelem_announced": d["chelem_announced"], "poignees": d["poignees"], "T": d["score"],
                "returns": out["payoffs"]}


class OracleRun:
    impl = "oracle"

    def __init__(self, sc: Scenario):
        self.raw = FrenchOracle(sc.hands, sc.chien, n_players=SHAPE[sc.variant][0], **sc.options)

    def copy(self):
        other = copy.copy(self)
        other.raw = copy.deepcopy(self.raw)
        return other

    def apply(self, action: str) -> None:
        self.raw.apply(action)

    def legal(self) -> set:
        return self.raw.legal_actions()

    def player(self) -> int:
        return self.raw.current_player()

    def phase(self) -> str:
        o = self.raw
        if o.phase == "play" and o._poignee_pending(o.current_player()):
            return "poignee"
        return {"bidding": "bid"}.get(o.phase, o.phase)

    def hand(self, seat: int) -> list:
        return self.raw.hands[seat]

    def terminal(self) -> bool:
        return self.raw.is_terminal()

    def score(self) -> dict:
        o = self.raw
        sc = o.score()
        if sc["taker"] < 0:
            assert o.taker_half_points() == 0 and sc["contract"] is None
            return {"taker": None, "contract": None, "T": sc["T"], "returns": o.returns()}
        mult = MULTIPLIER[sc["contract"]]
        made = sc["made"]
        assert sc["half_points"] == o.taker_half_points()
        assert sc["base"] % mult == 0 and (sc["base"] > 0) == made  # signed: s*(25 + d)*mult
        assert sc["poignee"] == 0 or (sc["poignee"] > 0) == made  # signed: s*poignees
        levels = dict(o.poignees)
        return {"taker": sc["taker"], "contract": sc["contract"], "mult": mult,
                "points": [o.taker_half_points(), o.defence_half_points()],
                "oudlers": sum(1 for c in o.taker_cards if c in OUDLERS), "target": sc["target"] // 2, "made": made,
                "base": abs(sc["base"]) // mult, "petit_au_bout": sc["petit_au_bout"], "poignee": abs(sc["poignee"]),
                "chelem": sc["chelem"], "chelem_announced": o.chelem_announced,
                "poignees": [levels.get(s, "none") for s in range(o.n)], "T": sc["T"], "returns": o.returns()}


def _actions(text) -> set:
    return set(text.split() if isinstance(text, str) else text)


def check_score(run, figures: dict) -> None:
    got = run.score()
    for key, value in figures.items():
        assert got[key] == value, (key, got[key], value)
    n = len(got["returns"])
    taker, t = got["taker"], got["T"]
    if taker is None:
        assert t == 0 and got["returns"] == [0] * n
        return
    s = 1 if got["made"] else -1
    assert t == s * got["base"] * got["mult"] + got["petit_au_bout"] + s * got["poignee"] + got["chelem"]
    assert sum(got["points"]) == 182 and got["made"] == (got["points"][0] >= 2 * got["target"])
    assert got["returns"] == [(n - 1) * t if p == taker else -t for p in range(n)]


def run_steps(run, steps) -> None:
    for k, step in enumerate(steps):
        where = f"{run.impl}, step {k}: {step!r}"
        if isinstance(step, str):
            for action in step.split():
                run.apply(action)
            continue
        kind, *args = step
        if kind == "player":
            assert run.player() == args[0], where
        elif kind == "phase":
            assert run.phase() == args[0], where
        elif kind == "legal":
            assert run.legal() == _actions(args[0]), where
        elif kind == "lacks":
            assert not run.legal() & _actions(args[0]), where
        elif kind == "illegal":
            for action in _actions(args[0]):
                with pytest.raises(ValueError):
                    run.copy().apply(action)
        elif kind == "hand":
            assert len(run.hand(args[0])) == args[1], where
        elif kind == "branch":
            run_steps(run.copy(), args[0])
        elif kind == "done":
            assert run.terminal() and run.player() == -1 and run.legal() == set(), where
            assert run.phase() == "done", where
        elif kind == "score":
            check_score(run, args[0])
        elif kind in ("engine", "oracle"):
            if kind == run.impl:
                assert args[0](run.raw), f"{where}: {args[1]}"
        else:
            raise AssertionError(f"unknown step {step!r}")


def play_steps(n, tricks, poignees=None) -> list:
    """The steps of scripted tricks ((leader, cards in playing order)), checking who acts; at his first turn
    each seat decides his poignee (poignees[seat], default "pass"); then the deal is over."""
    poignees = poignees or {}
    steps = []
    for t, (leader, cards) in enumerate(tricks):
        for i, card in enumerate(cards):
            seat = (leader + i) % n
            steps.append(("player", seat))
            if t == 0:
                steps += [("phase", "poignee"), poignees.get(seat, "pass"), ("player", seat)]
            steps += [("phase", "play"), "play:" + card]
    return steps + [("done",)]


def taker_of(bids) -> int:
    return max(range(len(bids)), key=lambda s: BIDS.index(bids[s]))


def auction_steps(bids, dropped=(), chelem="pass") -> list:
    """Bids from seat 0, the taker's discards, his chelem decision."""
    taker = taker_of(bids)
    steps = []
    for seat, bid in enumerate(bids):
        steps += [("phase", "bid"), ("player", seat), bid]
    for card in dropped:
        steps += [("phase", "discard"), ("player", taker), "discard:" + card]
    return steps + [("phase", "chelem"), ("player", taker), ("legal", "pass chelem"), chelem]


def deal(name, n, chien, tricks, bids, dropped=(), announce="pass", declare=None, options=None, auction=None,
         after=(), **figures) -> Scenario:
    """A complete deal written trick by trick (the hands are derived from the tricks), scored: bids from seat
    0, the taker's discards (``dropped``) and chelem decision (``announce``), the poignees declared
    ({seat: action}), then the tricks; or ``auction``: the steps before the first trick, written out."""
    variant = f"french{n}"
    hands = hands_from_tricks(n, SHAPE[variant][1], tricks, taker_of(bids), chien, dropped)
    steps = auction if auction is not None else auction_steps(bids, dropped, announce)
    steps = steps + play_steps(n, tricks, declare) + [("score", figures)] + list(after)
    return Scenario(name, variant, hands, list(chien), steps, dict(options or {}))


def both_readings(sc: Scenario) -> list:
    """The scenario under each value of excuse_last_trick (figures that do not depend on it)."""
    return [Scenario(f"{sc.name}-{r}", sc.variant, sc.hands, sc.chien, sc.steps, {"excuse_last_trick": r})
            for r in READINGS]


SCENARIOS: list = []

# -- bidding, petit sec ------------------------------------------------------------------------------------

for _n in (3, 4):
    _v = f"french{_n}"
    SCENARIOS.append(Scenario(f"all_pass_is_void-{_v}", _v, *fill(_v, {}), [
        ("engine", lambda st, n=_n: st.returns() == [0] * n, "returns are 0 before the end"),
        ("oracle", lambda o: _raises(RuntimeError, o.returns), "no returns before the end"),
        *[s for seat in range(_n) for s in (("phase", "bid"), ("player", seat), ("legal", BIDS), "pass")],
        ("done",), ("score", {"taker": None, "contract": None, "T": 0, "returns": [0] * _n}),
        ("illegal", "pass"),
    ]))

SCENARIOS.append(Scenario("bidding_must_go_higher_and_highest_bidder_takes", "french3", *fill("french3", {}), [
    "garde", ("player", 1), ("legal", "pass garde_sans garde_contre"),
    ("illegal", "prise garde discard:KS play:KS chelem"),
    "garde_sans", ("legal", "pass garde_contre"),
    "pass",  # the engine takes "pass" for "bid:pass"
    # garde sans: the taker is seat 1, no discard, the chien unseen, the chelem decision comes at once
    ("phase", "chelem"), ("player", 1), ("legal", "pass chelem"), ("hand", 1, 24),
    ("engine", lambda st: plane(st, "stock", 0) == set() == plane(st, "stock", 1), "the chien is unseen"),
    ("oracle", lambda o: o.taker == 1 and o.contract == "garde_sans", "seat 1 takes a garde sans"),
    "pass",
    ("phase", "poignee"), ("player", 0), ("legal", "pass"),  # seat 0 leads, holds no trump: pass is a decision
]))

SCENARIOS.append(Scenario("garde_contre_skips_discard_then_announced_chelem_taker_leads", "french4",
                          *fill("french4", {}), [
    "pass pass garde_contre pass", ("phase", "chelem"), ("player", 2), ("legal", "pass chelem"),
    "chelem", ("phase", "poignee"), ("player", 2),
    "pass", ("phase", "play"), ("player", 2),
    ("engine", lambda st: section(st, "chelem", 0)[0] == 1, "the announcement is observed"),
]))

for _n in (3, 4):
    _v = f"french{_n}"
    _seat1 = ["T1"] + suit("S") + suit("H")[: SHAPE[_v][1] - 15]  # T1 the only trump, no EX
    SCENARIOS.append(Scenario(f"petit_sec_ends_the_deal-{_v}", _v, *fill(_v, {1: _seat1}), [
        ("done",), ("score", {"taker": None, "T": 0, "returns": [0] * _n}), ("illegal", "pass"),
    ]))

for _extra in ("EX", "T2"):
    _seat1 = ["T1", _extra] + suit("S") + suit("H")[:8]
    SCENARIOS.append(Scenario(f"t1_with_excuse_or_another_trump_is_not_petit_sec-{_extra}", "french3",
                              *fill("french3", {1: _seat1}), [("phase", "bid"), ("player", 0)]))

# -- the taker's discard -----------------------------------------------------------------------------------

_spades = ["discard:" + c for c in pips("S", 4, 1)]
_trumps = ["discard:" + c for c in trumps(20, 2)]
SCENARIOS.append(Scenario(
    # The taker (seat 0) holds after the chien: 4 Kings, T1 T21 EX, 1S..4S and T2..T20 (30 cards).
    "discard_no_kings_no_oudlers_trumps_only_when_unavoidable", "french3",
    *fill("french3", {0: ["KS", "KH", "KD", "KC", "T1", "T21", "EX"] + pips("S", 4, 1) + trumps(14, 2)},
          stock=trumps(20, 15)), [
        "prise pass pass",
        ("legal", _spades + _trumps),  # 4 allowed suit cards < 6 to make: non-oudler trumps too
        "discard:T2", ("legal", _spades + _trumps[:-1]),  # 4 < 5
        "discard:T20", ("legal", _spades),  # 4 allowed suit cards, 4 discards to make: no trump now
        ("illegal", "discard:T15 discard:KS discard:T1 discard:T21 discard:EX"),
        "discard:1S discard:2S discard:3S discard:4S",
        ("hand", 0, 24), ("phase", "chelem"), ("legal", "pass chelem"),
        ("engine", lambda st: all(plane(st, "shown", v) == {"T2", "T20"} for v in range(3)),
         "the discarded trumps are shown to all"),
        ("engine", lambda st: plane(st, "discard", 0) == {"T2", "T20", "1S", "2S", "3S", "4S"}
         and plane(st, "discard", 1) == set(), "the discard is the taker's"),
        ("oracle", lambda o: o.discards == ["T2", "T20", "1S", "2S", "3S", "4S"], "the discards"),
        ("oracle", lambda o: o.taker_half_points() == 6, "the discard counts for the taker at once"),
    ]))

_hands, _chien = fill("french3", {})  # seat 0: 14 spades + KH..5H; chien T17..T21, EX
assert _chien == trumps(17, 21) + ["EX"]
_allowed = ["discard:" + c for c in _hands[0] if c[0] != "K"]
assert len(_allowed) == 22
SCENARIOS.append(Scenario("discard_with_enough_suit_cards_never_allows_trumps", "french3", _hands, _chien, [
    "garde pass pass", ("legal", _allowed),
]))

# -- card play ---------------------------------------------------------------------------------------------

# seat 0: 14 spades + T1 T2 T4 T6..T9 T11 T12 T21; seat 1: T10 T20 + 14 hearts + KD..7D (no spade);
# seat 2: T3 T5 T15 T18 EX + 6D..1D + KC..2C (no spade); chien: T13 T14 T16 T17 T19 1C.
_LEGALITY_DEAL = (
    [suit("S") + ["T1", "T2", "T4", "T6", "T7", "T8", "T9", "T11", "T12", "T21"],
     ["T10", "T20"] + suit("H") + suit("D")[:8],
     ["T3", "T5", "T15", "T18", "EX"] + suit("D")[8:] + suit("C")[:13]],
    ["T13", "T14", "T16", "T17", "T19", "1C"],
)
_LEGALITY_START = ["garde_sans pass pass pass", ("phase", "poignee"), ("player", 0), ("legal", "pass"), "pass"]

SCENARIOS.append(Scenario("void_must_trump_then_overtrump_or_undertrump", "french3", *_LEGALITY_DEAL, [
    *_LEGALITY_START,
    "play:KS pass",  # seat 1's poignee decision
    ("legal", "play:T10 play:T20"),  # void in spades: must trump
    ("branch", ["play:T10 pass", ("legal", "play:T15 play:T18 play:EX")]),  # must overtrump T10 (EX always)
    "play:T20 pass", ("legal", "play:T3 play:T5 play:T15 play:T18 play:EX"),  # unable: any lower trump
    "play:T5", ("player", 1), ("phase", "play"),  # seat 1 won the trick
    ("lacks", "pass"),  # the poignee decision is only at the first turn
]))

for _k, (_lead, _seat1_legal, _seat1_card, _seat2_legal) in enumerate([
    ("T9", "T10 T20", "T10", "T15 T18 EX"),
    ("T9", "T10 T20", "T20", "T3 T5 T15 T18 EX"),
    ("T12", "T20", "T20", "T3 T5 T15 T18 EX"),
    ("T21", "T10 T20", "T10", "T3 T5 T15 T18 EX"),
    ("T1", "T10 T20", "T10", "T15 T18 EX"),
]):
    SCENARIOS.append(Scenario(f"trump_lead_requires_higher_trump-{_k}-{_lead}-{_seat1_card}", "french3",
                              *_LEGALITY_DEAL, [
        *_LEGALITY_START,
        f"play:{_lead} pass", ("legal", plays(_seat1_legal)),
        f"play:{_seat1_card} pass", ("legal", plays(_seat2_legal)),
    ]))

# seat 0: EX 1H + 14 spades + T8..T1; seat 1: KH..2H + T19..T9; seat 2: 14 diamonds + KC..5C
_seat0 = ["EX", "1H"] + suit("S") + trumps(8, 1)
_seat1 = suit("H")[:13] + trumps(19, 9)
_seat2 = suit("D") + suit("C")[:10]
SCENARIOS.append(Scenario("follow_suit_and_excuse_lead", "french3", [_seat0, _seat1, _seat2],
                          suit("C")[10:] + ["T20", "T21"], [
    "garde_contre pass pass pass", ("legal", "pass"),  # 8 trumps + EX = 9 < 13: no poignee
    "pass", ("legal", plays(_seat0)),  # the leader may play anything, EX included
    ("branch", [
        "play:1H pass", ("legal", plays(suit("H")[:13])),  # must follow suit (no trump allowed)
        "play:2H pass", ("legal", plays(_seat2)),  # void, no trump: any card
        "play:KD", ("player", 1),  # 2H beats 1H; KD is off-suit
    ]),
    "play:EX pass", ("legal", plays(_seat1)),  # after a led EX the next player plays anything
]))

# seat 0 (taker) KS + 14 hearts + T1..T9; seat 1: EX + 14 diamonds + T10..T18; seat 2: QS..1S + KC..4C;
# chien 3C 2C 1C T21 T20 T19 (for the defence: 1 + 1 + 1 + 9 + 1 + 1 = 14).
SCENARIOS.append(Scenario("defender_excuse_in_a_trick_the_taker_wins", "french3",
                          [["KS"] + suit("H") + trumps(9, 1), ["EX"] + suit("D") + trumps(18, 10),
                           suit("S")[1:] + suit("C")[:11]], suit("C")[11:] + trumps(21, 19), [
    "garde_contre pass pass pass pass play:KS pass",
    ("legal", plays(trumps(18, 10) + ["EX"])),  # void in spades: trump (or EX)
    "play:EX pass play:1S", ("player", 0),  # the taker won
    ("engine", lambda st: section(st, "points", 0)[0] == pytest.approx(10 / 182),
     "the taker's won cards: KS 9 + 1S 1, EX not taken"),
    # with the Excuse exchange: taker KS 9 + 1S 1 + 1 = 11; defence chien 14 + EX 9 - 1 = 22
    ("oracle", lambda o: (o.taker_half_points(), o.defence_half_points()) == (11, 22), "half points"),
]))

# -- poignee -----------------------------------------------------------------------------------------------

# seat 0 holds 12 trumps (T2..T13), the chien brings T14: 13 at his first card -> simple (3 players)
SCENARIOS.append(Scenario("poignee_counts_the_hand_after_taking_the_chien", "french3",
                          *fill("french3", {0: trumps(13, 2) + suit("S")[1:13]}, stock=["T14"] + suit("H")[9:]), [
    "prise pass pass", *["discard:" + c for c in suit("H")[9:] + ["2S"]],
    "pass", ("legal", "pass poignee:simple"),
]))

# -- complete deals scored by hand (written trick by trick; the hands are derived from the tricks) --------


def _prise_made():
    # 3 players, seat 0 takes a prise (x1). Seat 0: T1..T21, EX, 1S, 2S; chien 3S..8S, taken and discarded.
    chien = pips("S", 8, 3)
    seat1_rest = suit("H")[2:] + suit("D", "N J 10 9 8 7")  # 12 + 6
    seat2_rest = pips("D", 6, 1) + suit("C")[2:]  # 6 + 12
    tricks = [
        (0, ["1S", "KS", "9S"]),  # seat 1 wins: defence 1 + 9 + 1 = 11
        (1, ["KH", "QH", "T2"]),  # taker trumps
        (0, ["2S", "QS", "10S"]),  # seat 1 wins: defence 1 + 7 + 1 = 9
        (1, ["KD", "QD", "T3"]),
        (0, ["EX", "NS", "JS"]),  # EX led, NS sets spades, seat 1 wins: defence NS 5 + JS 3 = 8, +1 exchange
        (1, ["KC", "QC", "T4"]),
    ]
    for k, trump in enumerate(trumps(21, 5)):  # 17 trump leads, the defenders discard
        tricks.append((0, [trump, seat1_rest[k], seat2_rest[k]]))
    tricks.append((0, ["T1", seat1_rest[17], seat2_rest[17]]))  # petit au bout, won by the taker
    # Defence: 11 + 9 + 8 + 1 = 29; taker 182 - 29 = 153 (76.5 pts), discard 3S..8S included.
    # Oudlers kept: T1, T21, EX -> 3 -> target 36 pts = 72. Diff 81 half points = 40.5 pts, rounded in
    # favour of the taker (who scores) to 41. base = +(25 + 41) * 1 = 66; pab +10*1; no poignee, no chelem.
    # T = 76: taker +2T = 152, defenders -76.
    return deal("score_prise_made_with_excuse_exchange_and_petit_au_bout", 3, chien, tricks,
                ["prise", "pass", "pass"], dropped=chien, taker=0, contract="prise", mult=1, points=[153, 29],
                oudlers=3, target=36, made=True, base=66, petit_au_bout=10, poignee=0, chelem=0,
                chelem_announced=False, T=76, returns=[152, -76, -76])


def _garde_failed():
    # 3 players, seat 1 takes a garde (x2); seat 0 leads. Taker: QS..1S, QH..3H; chien 1C..6C discarded.
    # Seat 0: 1H KS + 14 diamonds + KC..7C; seat 2: 2H KH T1..T21 EX (declares a double poignee).
    chien = pips("C", 6, 1)
    seat0_rest = suit("C")[:8] + suit("D")  # 22: clubs first, 2D and 1D last
    taker_rest = suit("S")[2:] + suit("H", "N J 10 9 8 7 6") + ["5H", "4H", "3H"]  # 12 + 7 + 3
    tricks = [
        (0, ["1H", "QH", "2H"]),  # taker wins: 1 + 7 + 1 = 9
        (1, ["QS", "T2", "KS"]),  # seat 2 trumps
    ]
    for k, trump in enumerate(trumps(21, 3)):  # 19 trump leads by seat 2
        tricks.append((2, [trump, seat0_rest[k], taker_rest[k]]))
    tricks.append((2, ["KH", seat0_rest[19], taker_rest[19]]))  # taker must follow hearts with 5H
    tricks.append((2, ["EX", "2D", taker_rest[20]]))  # EX led, 2D sets diamonds, seat 0 wins (no exchange)
    tricks.append((0, ["1D", taker_rest[21], "T1"]))  # seat 2 must trump: T1 wins the last trick
    # Taker: discard 6 + trick 1 9 = 15 (7.5 pts), 0 oudlers -> target 56 pts = 112.
    # Diff -97 half points = 48.5 pts, rounded in favour of the defence to 49. s = -1.
    # base = -(25 + 49) * 2 = -148; pab: T1 in the last trick, won by the defence: -10*2 = -20;
    # poignee double 30 to the winning side (defence): -30. T = -198: taker 2T = -396, defenders +198.
    return deal("score_garde_failed_petit_au_bout_to_defence_and_defence_poignee", 3, chien, tricks,
                ["pass", "garde", "pass"], dropped=chien, declare={2: "poignee:double"},
                after=[("engine", lambda st: plane(st, "shown_by", 0, rel=2) == set(trumps(1, 15)),
                        "the 15 lowest trumps are shown, EX not needed")],
                taker=1, contract="garde", mult=2, points=[15, 167], oudlers=0, target=56, made=False, base=74,
                petit_au_bout=-20, poignee=30, chelem=0, T=-198, poignees=["none", "none", "double"],
                returns=[198, -396, 198])


def _garde_sans_4_players():
    # 4 players, seat 0 garde sans (x4): chien T1 T2 T3 T4 EX 2S unseen, for the taker (2 oudlers in it).
    # Taker: T5..T21 (17 trumps) + 1S: triple poignee (>= 15 with 4 players).
    chien = ["T1", "T2", "T3", "T4", "EX", "2S"]
    seat1_rest = suit("S", "Q N J 10 9 8 7 6 5") + suit("H", "J 10 9 8 7 6 5")
    seat2_rest = pips("H", 4, 1) + suit("D")[:12]
    seat3_rest = ["2D", "1D"] + suit("C")
    tricks = [
        (0, ["1S", "KS", "3S", "4S"]),  # seat 1 wins: defence 1 + 9 + 1 + 1 = 12
        (1, ["KH", "QH", "NH", "T5"]),  # the taker trumps
    ]
    for k, trump in enumerate(trumps(21, 6)):  # 16 trump leads
        tricks.append((0, [trump, seat1_rest[k], seat2_rest[k], seat3_rest[k]]))
    # Taker: 182 - 12 = 170 (85 pts) with T21, T1 and EX (chien) -> target 36 pts = 72. Diff 98 = 49 pts.
    # base = (25 + 49) * 4 = 296; T1 never played: pab 0; poignee triple +40; T = 336.
    # taker +3T = 1008, each defender -336.
    return deal("score_garde_sans_4_players_with_taker_poignee", 4, chien, tricks,
                ["garde_sans", "pass", "pass", "pass"], declare={0: "poignee:triple"},
                after=[("engine", lambda st: plane(st, "shown_by", 1, rel=3) == set(trumps(5, 19)),
                        "the 15 lowest of T5..T21 are shown")],
                taker=0, contract="garde_sans", mult=4, points=[170, 12], oudlers=3, target=36, made=True,
                base=74, petit_au_bout=0, poignee=40, chelem=0, T=336, returns=[1008, -336, -336, -336])


def _garde_contre_tricks():
    # 3 players, seat 2 is the taker: T1..T21, EX, 1D, 1C; chien KS KH KC QS QH QC (9*3 + 7*3 = 48).
    seat0_rest = suit("S", "N J 10 9 8 7 6 5 2 1") + suit("H", "N J 10 9 8 7 6 5")
    seat1_rest = pips("H", 4, 1) + ["10D", "9D", "8D", "7D", "2D"] + suit("C", "J 10 9 8 7 6 5 4 3")
    tricks = [
        (0, ["3S", "4S", "T2"]),  # taker trumps
        (2, ["1D", "ND", "3D"]),  # seat 0 wins: 1 + 5 + 1 = 7
        (0, ["QD", "4D", "EX"]),  # the taker's EX: seat 0 wins QD 7 + 4D 1 = 8, and the exchange 1
        (0, ["JD", "5D", "T3"]),
        (2, ["1C", "NC", "2C"]),  # seat 0 wins: 1 + 5 + 1 = 7
        (0, ["KD", "6D", "T4"]),
    ]
    for k, trump in enumerate(trumps(21, 5)):  # 17 trump leads
        tricks.append((2, [trump, seat0_rest[k], seat1_rest[k]]))
    tricks.append((2, ["T1", seat0_rest[17], seat1_rest[17]]))  # petit au bout for the taker
    return ["KS", "KH", "KC", "QS", "QH", "QC"], tricks


def _garde_contre():
    chien, tricks = _garde_contre_tricks()
    # Defence: chien 48 + 7 + 8 + 1 + 7 = 71; taker 182 - 71 = 111 (55.5 pts), oudlers T1 T21 EX -> 72.
    # Diff 39 half points = 19.5 pts -> 20 (the taker scores). base = (25 + 20) * 6 = 270; pab +10*6 = 60.
    # T = 330: taker +660, defenders -330.
    return deal("score_garde_contre_chien_counts_for_defence", 3, chien, tricks, ["pass", "pass", "garde_contre"],
                taker=2, contract="garde_contre", mult=6, points=[111, 71], oudlers=3, target=36, made=True,
                base=45, petit_au_bout=60, poignee=0, chelem=0, T=330, returns=[-330, -330, 660])


def _same_deal_garde_sans():
    chien, tricks = _garde_contre_tricks()
    # The same play as the garde contre: the chien's 48 half points move from the defence to the taker.
    # Taker: 111 + chien 48 = 159 (79.5 pts); diff 87 = 43.5 -> 44; base (25 + 44) * 4 = 276; pab +40.
    # T = 316 (less than the garde contre's 330, but with the taker's points 159 instead of 111).
    return deal("same_deal_garde_sans_chien_counts_for_taker", 3, chien, tricks, ["pass", "pass", "garde_sans"],
                contract="garde_sans", mult=4, points=[159, 23], target=36, made=True, base=69,
                petit_au_bout=40, T=316, returns=[-316, -316, 632])


def _unannounced_chelem():
    # 3 players, seat 0 garde sans (x4): T1..T21, EX, KS, KH; chien 1S..6S (for the taker).
    chien = pips("S", 6, 1)
    seat1_rest = ["NS", "JS", "10S"] + suit("H")[2:] + suit("D", "K Q N J 10 9 8")  # 3 + 12 + 7 = 22
    seat2_rest = ["7S"] + pips("D", 7, 2) + suit("C") + ["1D"]  # 1 + 6 + 14 + 1 = 22
    tricks = [(0, ["KS", "QS", "9S"]), (0, ["KH", "QH", "8S"])]
    for k, trump in enumerate(trumps(21, 2) + ["T1"]):  # 20 trump leads, then T1 (second-to-last trick)
        tricks.append((0, [trump, seat1_rest[k], seat2_rest[k]]))
    tricks.append((0, ["EX", seat1_rest[21], seat2_rest[21]]))  # 8D sets diamonds, but EX wins (chelem)
    # Taker wins every trick: 182 (91 pts), 3 oudlers -> 72; diff 110 = 55 pts; base (25 + 55) * 4 = 320.
    # Chelem made with EX last: T1 in the second-to-last trick is au bout: +10*4 = 40.
    # Unannounced chelem made: +200. T = 560: taker +1120, defenders -560. EX stays with the taker, who
    # won every other trick, with either reading of excuse_last_trick.
    return both_readings(deal(
        "score_unannounced_chelem_with_excuse_last", 3, chien, tricks, ["garde_sans", "pass", "pass"],
        after=[("oracle", lambda o: o.tricks[-1]["winner"] == 0, "EX wins the last trick")],
        taker=0, contract="garde_sans", points=[182, 0], oudlers=3, target=36, made=True, base=80,
        petit_au_bout=40, poignee=0, chelem=200, chelem_announced=False, T=560, returns=[1120, -560, -560]))


def _chelem_with_petit_in_the_excuse_trick():
    # 3 players, seat 0 garde sans (x4), leads every trick. Taker: EX, T12..T21, KS..8S, KH..9H (24);
    # seat 1: T1..T11, 7S..1S, 8H..3H (24); seat 2: 14 diamonds, KC..5C; chien 2H 1H 4C 3C 2C 1C (taker's).
    # Seat 1 can never beat a trump lead and follows every suit lead: he keeps T1 to the last trick, to
    # which the taker leads EX. T1 is then in the last trick, won by the taker's EX (the chelem exception):
    # petit au bout for the taker (the engine once looked only at the second-to-last trick: 520, not 560).
    chien = ["2H", "1H", "4C", "3C", "2C", "1C"]
    seat2 = suit("D") + suit("C")[:10]
    leads = trumps(21, 12) + suit("S", "K Q N J 10 9 8") + suit("H", "K Q N J 10 9")
    follows = trumps(11, 2) + pips("S", 7, 1) + pips("H", 8, 3)  # seat 1 keeps T1
    tricks = [(0, [lead, follows[k], seat2[k]]) for k, lead in enumerate(leads)]
    tricks.append((0, ["EX", "T1", seat2[23]]))
    # Taker: every card, 182 (91 pts), oudlers T21, EX and T1 -> 72; diff 110 = 55 pts; base (25 + 55) * 4 =
    # 320. Petit au bout: T1 in the last trick, won by the taker: +10 * 4 = 40. Unannounced chelem made:
    # +200. T = 560: taker +1120, defenders -560.
    return both_readings(deal(
        "score_chelem_with_excuse_last_and_petit_in_the_last_trick", 3, chien, tricks,
        ["garde_sans", "pass", "pass"],
        taker=0, contract="garde_sans", points=[182, 0], oudlers=3, target=36, made=True, base=80,
        petit_au_bout=40, poignee=0, chelem=200, chelem_announced=False, T=560, returns=[1120, -560, -560]))


def _announced_chelem_made_4_players():
    # 4 players, seat 2 prise (x1). Seat 2: T4..T21; chien T1 T2 T3 EX KS QS.
    chien = ["T1", "T2", "T3", "EX", "KS", "QS"]
    seat3_rest = pips("D", 4, 1) + suit("C")  # 18
    seat0_rest = suit("S")[2:] + suit("H")[:6]  # 12 + 6
    seat1_rest = pips("H", 8, 1) + suit("D")[:10]  # 8 + 10
    tricks = []
    for k, card in enumerate(["KS"] + trumps(21, 7) + ["T1", "EX"]):  # 18 leads by the taker
        tricks.append((2, [card, seat3_rest[k], seat0_rest[k], seat1_rest[k]]))
    dropped = ["T2", "T3", "T4", "T5", "T6", "QS"]
    assert sorted(hands_from_tricks(4, 18, tricks, 2, chien, dropped)[2]) == sorted(trumps(21, 4))
    auction = [
        "pass pass prise pass",
        # After the chien: T1..T21, EX, KS, QS. Only QS is an allowed suit card: trumps T2..T20 allowed.
        ("legal", ["discard:QS"] + ["discard:" + t for t in trumps(20, 2)]),
        *["discard:" + c for c in dropped[:5]],
        ("legal", "discard:QS"),  # 1 allowed suit card for 1 discard: no trump now
        "discard:QS chelem",
        ("player", 2),  # the taker leads after announcing
        ("engine", lambda st: plane(st, "shown", 0) == set(trumps(2, 6)), "discarded trumps shown, QS not"),
        ("legal", "pass poignee:simple poignee:double poignee:triple"),
    ]
    # Taker: every trick + discard (T2..T6 5 + QS 7 = 12) = 182; 3 oudlers -> 72; diff 110 = 55 pts.
    # base (25 + 55) * 1 = 80; T1 in the second-to-last trick (EX wins the last): pab +10; poignee: T1,
    # T7..T21 and EX = 17 -> triple +40; chelem announced and made +400. T = 530: taker 3T = 1590.
    return deal("score_announced_chelem_made_4_players_with_forced_trump_discards", 4, chien, tricks,
                ["pass", "pass", "prise", "pass"], dropped=dropped, declare={2: "poignee:triple"},
                auction=auction,
                after=[("engine", lambda st: plane(st, "shown_by", 0, rel=2) == {"T1"} | set(trumps(7, 20)),
                        "the 15 lowest trumps are shown, no EX")],
                taker=2, contract="prise", points=[182, 0], oudlers=3, target=36, made=True, base=80,
                petit_au_bout=10, poignee=40, chelem=400, chelem_announced=True, T=530,
                returns=[-530, -530, 1590, -530])


def _announced_chelem_failed():
    # 3 players, seat 1 garde (x2), announces a chelem and leads. Taker: T1..T21, EX, KS, 1H;
    # chien 2H..7H taken and discarded (7 allowed suit cards: no trump may be discarded).
    chien = pips("H", 7, 2)
    seat2_rest = suit("S", "N J 10 9 8 7") + suit("C")  # 20
    seat0_rest = pips("S", 5, 1) + suit("H", "Q N J 10 9") + suit("D", "N J 10 9 8 7 6 5 4 3")  # 20
    tricks = [
        (1, ["KS", "QS", "6S"]),
        (1, ["1H", "KH", "8H"]),  # seat 2 wins: 1 + 9 + 1 = 11
        (2, ["KD", "QD", "T2"]),
    ]
    for k, trump in enumerate(trumps(21, 3) + ["T1"]):
        tricks.append((1, [trump, seat2_rest[k], seat0_rest[k]]))
    # The taker's EX, led to the last trick, seat 0 wins it: not a chelem (seat 2 won a trick), so EX goes to
    # the defence, 9 + 1D 1 + 2D 1 = 11, with either reading: the camp opposite its owner is the winner's.
    tricks.append((1, ["EX", "1D", "2D"]))
    auction = [
        "pass garde pass", ("legal", ["discard:" + c for c in ["1H"] + chien]),
        *["discard:" + c for c in chien], "chelem",
        ("engine", lambda st: plane(st, "shown", 0) == set(), "no trump discarded"),
    ]
    # Defence 11 + 11 = 22; taker 160 (80 pts) with T1 and T21 -> target 41 pts = 82; diff 78 = 39 pts.
    # base (25 + 39) * 2 = 128; T1 was in the second-to-last trick, no chelem: pab 0;
    # chelem announced and failed: -200. T = -72: taker 2T = -144, defenders +72.
    return both_readings(deal(
        "score_announced_chelem_failed_and_excuse_last_goes_to_winner", 3, chien, tricks,
        ["pass", "garde", "pass"], dropped=chien, auction=auction,
        after=[("oracle", lambda o: o.tricks[-1]["winner"] == 0 and "EX" in o.defence_cards, "EX to the defence")],
        taker=1, contract="garde", points=[160, 22], oudlers=2, target=41, made=True, base=64, petit_au_bout=0,
        poignee=0, chelem=-200, chelem_announced=True, T=-72, returns=[72, -144, 72]))


def _rounding_case(case):
    # 3 players, seat 0 garde sans (x4), chien T1 T21 KS KH KD KC (for the taker: 2 oudlers, 18 + 36 = 54).
    # Seat 1 holds T2..T20, EX and four suit cards; seat 2 and the taker no trump. Seat 1 leads his 19
    # trumps, then EX to the last trick, which seat 2 wins with a diamond.
    chien = ["T1", "T21", "KS", "KH", "KD", "KC"]
    if case in ("81", "83"):
        second = "JS" if case == "83" else "2S"
        tricks = [
            (0, ["QS", "1S", second]),  # taker: 7 + 1 + 1 = 9 (83: 7 + 1 + 3 = 11)
            (0, ["QH", "1H", "2H"]),  # taker: 9
            (0, ["QD", "1D", "2D"]),  # taker: 9
            (0, ["1C", "QC", "2C"]),  # seat 1 wins with QC
        ]
        spades = ["JS" if case == "81" else "2S", "NS"] + pips("S", 10, 3)
        taker_rest = spades + suit("H", "N J 10 9 8 7 6 5 4 3")  # 20
        seat2_rest = suit("C", "N J 10 9 8 7 6 5 4 3") + suit("D", "N J 10 9 8 7 6 5 4 3")  # last: 3D
        seat1_suit_cards = ["1S", "1H", "1D", "QC"]
    else:
        tricks = [
            (0, ["QS", "NS", "JS"]),  # taker: 7 + 5 + 3 = 15
            (0, ["QH", "NH", "1H"]),  # taker: 7 + 5 + 1 = 13
            (0, ["1C", "QC", "2C"]),  # seat 1 wins with QC
            (1, ["NC", "JC", "1D"]),  # seat 1 wins with NC; the taker has no club
        ]
        taker_rest = pips("S", 10, 1) + suit("H", "J 10 9 8 7 6 5 4 3 2")  # 20
        seat2_rest = pips("C", 10, 3) + suit("D", "Q N J 10 9 8 7 6 5 4 3 2")  # 8 + 12, last: 2D
        seat1_suit_cards = ["NS", "NH", "QC", "NC"]
    for k, trump in enumerate(trumps(20, 2)):
        tricks.append((1, [trump, seat2_rest[k], taker_rest[k]]))
    tricks.append((1, ["EX", seat2_rest[19], taker_rest[19]]))  # the defender's EX; seat 2 wins the trick
    assert sorted(hands_from_tricks(3, 24, tricks)[1]) == sorted(trumps(20, 2) + ["EX"] + seat1_suit_cards)
    return chien, tricks


# The rounding deals: a defender's EX goes to the last trick, won by another defender. With "trick_winner" it
# stays with the defence and the taker's points sit at his target of 41 (2 oudlers), the rounding rule's cases
# (docs/rules.md: needing 41, 40.5 fails by 1 and 41.5 wins by 1):
#   81: 54 + 9 + 9 + 9 = 81 = 40.5 pts: fails by 0.5 -> 1 in favour of the defence: T = -(25 + 1) * 4 = -104
#   82: 54 + 15 + 13 = 82 = 41 pts exactly: made by 0: T = (25 + 0) * 4 = 100
#   83: 54 + 11 + 9 + 9 = 83 = 41.5 pts: made by 0.5 -> 1: T = (25 + 1) * 4 = 104
# With "other_side" (the default, FFT) EX changes camp: the taker gets it, 9 half points more and a third
# oudler (target 36 pts = 72):
#   81: 90 = 45 pts, made by 9: T = (25 + 9) * 4 = 136
#   82: 91 = 45.5 pts, made by 9.5 -> 10 in favour of the taker: T = (25 + 10) * 4 = 140
#   83: 92 = 46 pts, made by 10: T = (25 + 10) * 4 = 140
ROUNDING = {  # (case, reading): taker's half points, oudlers, target, made, base, T
    ("81", "trick_winner"): (81, 2, 41, False, 26, -104),
    ("82", "trick_winner"): (82, 2, 41, True, 25, 100),
    ("83", "trick_winner"): (83, 2, 41, True, 26, 104),
    ("81", "other_side"): (90, 3, 36, True, 34, 136),
    ("82", "other_side"): (91, 3, 36, True, 35, 140),
    ("83", "other_side"): (92, 3, 36, True, 35, 140),
}


def _rounding(case, reading):
    chien, tricks = _rounding_case(case)
    half, oudlers, target, made, base, t = ROUNDING[case, reading]
    return deal(f"score_half_point_rounding_three_players-{case}-{reading}", 3, chien, tricks,
                ["garde_sans", "pass", "pass"], options={"excuse_last_trick": reading},
                after=[("oracle", lambda o: o.tricks[-1]["winner"] == 2, "seat 2 wins the last trick")],
                taker=0, contract="garde_sans", points=[half, 182 - half], oudlers=oudlers, target=target,
                made=made, base=base, petit_au_bout=0, poignee=0, chelem=0, T=t, returns=[2 * t, -t, -t])


def _defender_poignee(case, reading):
    # The rounding deals; seat 1 (defence, T2..T20 and EX: 20 >= 13) declares a simple poignee (20 points),
    # which goes to the side that wins. trick_winner: 81, the taker fails, T = -104 - 20 = -124; 83, he makes
    # it, T = 104 + 20 = 124. other_side: he makes both, T = 136 + 20 = 156 and 140 + 20 = 160.
    chien, tricks = _rounding_case(case)
    _, _, _, made, base, t = ROUNDING[case, reading]
    t += 20 if made else -20
    return deal(f"defender_poignee_goes_to_the_side_that_wins-{case}-{reading}", 3, chien, tricks,
                ["garde_sans", "pass", "pass"], declare={1: "poignee:simple"},
                options={"excuse_last_trick": reading},
                after=[("engine", lambda st: plane(st, "shown_by", 0, rel=1) == set(trumps(2, 14)),
                        "the 13 lowest trumps are shown")],
                made=made, base=base, poignee=20, T=t, poignees=["none", "simple", "none"], returns=[2 * t, -t, -t])


def _defence_wins_every_trick():
    # 3 players, seat 0 prise (x1). Taker: QS..1S, QH..7H, 1D..4D; chien 1H..6H discarded.
    # Seat 1: T1..T21, KH, KD, KC; seat 2: KS, EX, QD..5D, QC..1C.
    chien = pips("H", 6, 1)
    seat2_rest = ["EX"] + suit("C")[1:] + suit("D", "Q N J 10 9")  # 19 for the trump leads
    taker_rest = suit("S")[1:13] + suit("H", "Q N J 10 9 8") + ["1D"]  # 19
    tricks = [(0, ["1S", "T2", "KS"])]  # seat 1 must trump, seat 2 must follow with KS
    for k, trump in enumerate(trumps(21, 3)):
        tricks.append((1, [trump, seat2_rest[k], taker_rest[k]]))
    tricks += [
        (1, ["KH", "8D", "7H"]),  # the taker must follow hearts
        (1, ["KD", "7D", "2D"]),
        (1, ["KC", "6D", "3D"]),
        (1, ["T1", "5D", "4D"]),  # petit au bout for the defence
    ]
    # Taker: only the discard, 6 (3 pts), 0 oudlers -> 112; diff -106 = 53 pts; base -(25 + 53) * 1 = -78;
    # pab -10; the defence won every trick: chelem -200. T = -288: taker -576, defenders +288.
    return deal("score_defence_wins_every_trick", 3, chien, tricks, ["prise", "pass", "pass"], dropped=chien,
                taker=0, contract="prise", points=[6, 176], oudlers=0, target=56, made=False, base=78,
                petit_au_bout=-10, poignee=0, chelem=-200, T=-288, returns=[-576, 288, 288])


def _defence_leads_excuse_last(name, last, after, **figures):
    # 3 players, seat 0 prise (x1), chien 1H..6H discarded. The defence wins tricks 1..23 (seat 1 trumps the
    # first, leads T21..T3 and T1, then KH; seat 2 wins the 23rd with 2C), then seat 2 leads EX to the last.
    chien = pips("H", 6, 1)
    seat2_rest = suit("D")[:9] + suit("C")[:12]  # 21: KD..6D, KC..3C
    taker_rest = suit("S")[1:13] + suit("H", "Q N J 10 9 8") + ["2D", "3D"]  # 20
    tricks = [(0, ["1S", "T2", "KS"])]
    for k, trump in enumerate(trumps(21, 3) + ["T1"]):
        tricks.append((1, [trump, seat2_rest[k], taker_rest[k]]))
    tricks += [
        (1, ["KH", seat2_rest[20], "7H"]),
        (1, ["1C", "2C", "4D"]),  # seat 2 wins with 2C
        (2, ["EX", *last]),
    ]
    return both_readings(deal(name, 3, chien, tricks, ["prise", "pass", "pass"], dropped=chien, after=after,
                              **figures))


# No chelem exception for the defence: 5D sets diamonds, the taker's 5D beats seat 1's 1D and the taker wins
# the last trick, EX included (with either reading: the winner's camp is the one opposite its owner).
# Taker: discard 6 + EX 9 + 5D 1 + 1D 1 = 17, 1 oudler -> 51 pts = 102; diff -85 = 42.5 -> 43 pts.
# base -(25 + 43) * 1 = -68; T1 in trick 21: no pab; the defence did not win every trick: no chelem.
_EX_NEVER_WINS = _defence_leads_excuse_last(
    "excuse_led_last_by_defence_never_wins", ["5D", "1D"],
    [("oracle", lambda o: o.tricks[-1]["winner"] == 0 and "EX" in o.taker_cards, "EX to the taker")],
    taker=0, points=[17, 165], oudlers=1, target=51, made=False, base=68, petit_au_bout=0, chelem=0, T=-68,
    returns=[-136, 68, 68])

# The same defence, whose side won every earlier trick, leads EX to the last trick, and seat 1 wins it with 5D
# over the taker's 1D: inside a chelem EX goes with the trick (it does not change camp), with either reading.
# Taker: the discard, 6, 0 oudlers -> 112; diff -106 = 53 pts; base -(25 + 53) = -78; T1 in trick 21: no
# pab; the defence won every trick: chelem -200. T = -278: taker -556, defenders +278.
_DEFENCE_CHELEM_EX = _defence_leads_excuse_last(
    "excuse_led_last_by_defence_after_every_trick_stays_with_the_defence", ["1D", "5D"],
    [("oracle", lambda o: o.tricks[-1]["winner"] == 1 and "EX" in o.defence_cards, "EX stays in the defence")],
    taker=0, points=[6, 176], oudlers=0, target=56, made=False, base=78, petit_au_bout=0, chelem=-200, T=-278,
    returns=[-556, 278, 278])

def _defender_excuse_last_4_players(reading):
    # 4 players, seat 0 garde sans (x4): T5..T21 and 1S; chien T1 T2 T3 T4 and two suit cards (his). The
    # defenders hold no trump. The taker leads T21..T5 (17 tricks, the defenders play what they like), then 1S
    # to the last trick: seat 1 plays EX, seat 2 KS, seat 3 2S; seat 2 wins.
    rest = [c for c in full_deck("french4") if c[0] != "T" and c not in ("EX", "1S", "KS", "2S")]  # 53
    seat1, seat2, seat3 = rest[:17], rest[17:34], rest[34:51]
    chien = ["T1", "T2", "T3", "T4"] + rest[51:]
    tricks = [(0, [trump, seat1[k], seat2[k], seat3[k]]) for k, trump in enumerate(trumps(21, 5))]
    tricks.append((0, ["1S", "EX", "KS", "2S"]))
    # trick_winner: EX stays with the defence, 1S 1 + EX 9 + KS 9 + 2S 1 = 20; taker 162 (81 pts) with T21 and
    # T1 (chien) -> target 41 pts = 82; diff 80 = 40 pts: base (25 + 40) * 4 = 260. T = 260.
    # other_side: EX changes camp, to the taker: defence 11; taker 171 (85.5 pts), 3 oudlers -> 72; diff 99 =
    # 49.5 -> 50 pts (the taker scores): base (25 + 50) * 4 = 300. T = 300. T1 never played: no pab.
    half, oudlers, target, base = (162, 2, 41, 65) if reading == "trick_winner" else (171, 3, 36, 75)
    t = 4 * base
    return deal(f"defender_excuse_to_the_last_trick_won_by_another_defender-french4-{reading}", 4, chien, tricks,
                ["garde_sans", "pass", "pass", "pass"], options={"excuse_last_trick": reading},
                taker=0, contract="garde_sans", points=[half, 182 - half], oudlers=oudlers, target=target,
                made=True, base=base, petit_au_bout=0, poignee=0, chelem=0, T=t, returns=[3 * t, -t, -t, -t])


SCENARIOS += [_prise_made(), _garde_failed(), _garde_sans_4_players(), _garde_contre(), _same_deal_garde_sans(),
              *_unannounced_chelem(), *_chelem_with_petit_in_the_excuse_trick(), _announced_chelem_made_4_players(),
              *_announced_chelem_failed(), _defence_wins_every_trick(), *_EX_NEVER_WINS, *_DEFENCE_CHELEM_EX]
SCENARIOS += [_rounding(case, r) for case in ("81", "82", "83") for r in ("trick_winner", "other_side")]
SCENARIOS += [_defender_poignee(case, r) for case in ("81", "83") for r in ("trick_winner", "other_side")]
SCENARIOS += [_defender_excuse_last_4_players(r) for r in ("trick_winner", "other_side")]


def _raises(exc, fn) -> bool:
    try:
        fn()
    except exc:
        return True
    return False


def test_scenario_names_are_unique():
    names = [sc.name for sc in SCENARIOS]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("sc", SCENARIOS, ids=lambda sc: sc.name)
def test_on_engine(sc):
    run_steps(EngineRun(sc), sc.steps)


@pytest.mark.parametrize("sc", SCENARIOS, ids=lambda sc: sc.name)
def test_on_oracle(sc):
    run_steps(OracleRun(sc), sc.steps)


# ----------------------------------------------------------------------------------------------------------
# Engine only: observations, the option's validation


@pytest.mark.parametrize("variant", ["french3", "french4"])
def test_french_excuse_last_trick_option(variant):
    assert tarocchi_rl.make(variant).options == {"excuse_last_trick": "other_side"}
    assert tarocchi_rl.make(variant, excuse_last_trick="trick_winner").options["excuse_last_trick"] == "trick_winner"
    with pytest.raises(ValueError, match="excuse_last_trick.*'other_side' or 'trick_winner'.*'winner'"):
        tarocchi_rl.make(variant, excuse_last_trick="winner").state_from_deal(*fill(variant, {}))
    with pytest.raises(ValueError, match="excuse_last_trick"):
        tarocchi_rl.make(variant, excuse_last_trick=1)


def test_french_prise_takes_the_chien_and_shows_it():
    hands, chien = fill("french4", {})
    state = new("french4", hands, chien)
    act(state, "bid:pass bid:prise bid:pass bid:pass")
    assert state.phase == "discard" and state.current_player() == 1
    assert len(state.hand(1)) == 24 and set(chien) <= set(state.hand(1))
    assert all(a.startswith("discard:") for a in legal(state))
    assert plane(state, "stock", 0) == set(chien) == plane(state, "stock", 3)


def test_french_excuse_led_next_card_sets_the_suit():
    # seat 0 (taker, garde contre): EX + 14 spades + T9..T1; seat 1: 14 hearts + KD..5D;
    # seat 2: 4D..1D + 14 clubs + T15..T10; chien T21..T16.
    seat0 = ["EX"] + suit("S") + trumps(9, 1)
    seat1 = suit("H") + suit("D")[:10]
    seat2 = suit("D")[10:] + suit("C") + trumps(15, 10)
    state = new("french3", [seat0, seat1, seat2], trumps(21, 16))
    act(state, "bid:garde_contre bid:pass bid:pass pass pass play:EX pass")
    assert legal(state) == plays(seat1)
    branch = state.clone()
    act(branch, "play:KH pass")
    assert legal(branch) == plays(trumps(15, 10))  # void in hearts: must trump
    act(state, "play:5D pass")
    assert legal(state) == plays(suit("D")[10:])  # must follow the suit set by 5D
    state.apply("play:1D")
    assert state.current_player() == 1
    # EX stays out of the winner's tricks: seat 1 won 5D + 1D = 2 half points, the taker nothing yet
    assert section(state, "points", 1)[0] == pytest.approx(2 / 182)
    assert section(state, "points", 0)[0] == 0


@pytest.mark.parametrize(
    "n, n_trumps, with_ex, levels",
    [
        (3, 12, False, []),
        (3, 12, True, ["simple"]),
        (3, 14, True, ["simple", "double"]),
        (3, 17, True, ["simple", "double", "triple"]),
        (3, 17, False, ["simple", "double"]),
        (3, 18, False, ["simple", "double", "triple"]),
        (4, 9, False, []),
        (4, 9, True, ["simple"]),
        (4, 13, False, ["simple", "double"]),
        (4, 14, True, ["simple", "double", "triple"]),
        (4, 15, False, ["simple", "double", "triple"]),
    ],
)
def test_french_poignee_thresholds_and_showncard_set(n, n_trumps, with_ex, levels):
    variant = f"french{n}"
    size = SHAPE[variant][1]
    seat0 = trumps(n_trumps, 1) + (["EX"] if with_ex else [])  # T1..Tn: nobody else holds T1
    seat0 += [c for c in full_deck(variant) if c[0] != "T" and c != "EX"][: size - len(seat0)]
    state = new(variant, *fill(variant, {0: seat0}))
    act(state, ["bid:garde_contre"] + ["bid:pass"] * (n - 1) + ["pass"])  # no chelem
    assert state.phase == "poignee" and state.current_player() == 0
    assert legal(state) == {"pass"} | {"poignee:" + lv for lv in levels}
    with pytest.raises(ValueError):
        state.clone().apply("poignee:bogus")
    if not levels:
        return
    # declare the highest level: the lowest trumps needed are shown, EX only when the trumps fall short
    need = {3: (13, 15, 18), 4: (10, 13, 15)}[n][len(levels) - 1]
    shown = set(trumps(1, need)) if n_trumps >= need else set(trumps(1, n_trumps)) | {"EX"}
    state.apply("poignee:" + levels[-1])
    assert state.phase == "play" and state.current_player() == 0
    for viewer in range(1, n):
        assert plane(state, "shown_by", viewer, rel=(0 - viewer) % n) == shown
        assert section(state, "poignee", viewer)[3 * ((0 - viewer) % n) + len(levels) - 1] == 1


def test_french_poignee_lower_level_shows_fewer_trumps():
    seat0 = trumps(17, 1) + ["EX"] + suit("S")[:6]
    state = new("french3", *fill("french3", {0: seat0}))
    act(state, "bid:garde_contre bid:pass bid:pass pass poignee:simple")
    assert plane(state, "shown_by", 1, rel=2) == set(trumps(1, 13))  # 13 trumps, no EX needed
