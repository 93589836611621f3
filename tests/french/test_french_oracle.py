"""Tests of the independent French Tarot oracle (tests/oracles/oracle_french.py) on its own, written with card
names: what has no engine counterpart here (validation, random games) or is checked differently there.

The scenarios written once and run on both the oracle and the engine are in test_french_scenarios.py.

Points in the comments are in HALF points (deck 182) unless written "pts". Card values in half points:
oudler (T1, T21, EX) 9, K 9, Q 7, N 5, J 3, any other card 1. Targets: 0 oudlers 112, 1: 102, 2: 82, 3: 72.
"""

from __future__ import annotations

import copy
import random

import pytest

from tests.oracles.oracle_french import EXCUSE_LAST_TRICK, FrenchOracle, full_deck, half_points_of
from tests.support.cards78 import SHAPE, fill, suit, trumps


def make_deal(n: int, fixed: dict[int, list[str]], chien: list[str] | None = None):
    """Hands with the given cards first, the rest filled in deck order (suits, then trumps, then EX):
    seats 0..n-1, then the chien."""
    return fill(f"french{n}", fixed, chien)


def random_deal(n: int, rng: random.Random):
    deck = full_deck()
    rng.shuffle(deck)
    _, size, _ = SHAPE[f"french{n}"]
    return [deck[size * i : size * i + size] for i in range(n)], deck[size * n :]


def _plays(cards):
    return {"play:" + c for c in cards}


# ---------------------------------------------------------------------------------------------- basics


def test_deck_and_points_total():
    deck = full_deck()
    assert len(deck) == len(set(deck)) == 78
    assert half_points_of(deck) == 182
    sample = ["T1", "T21", "EX", "KS", "QH", "ND", "JC", "10S", "T2"]
    assert half_points_of(sample) == 9 * 4 + 7 + 5 + 3 + 1 + 1


def test_validation():
    hands, chien = make_deal(3, {})
    FrenchOracle(hands, chien)
    bad = [list(h) for h in hands]
    bad[0][0] = bad[1][0]
    with pytest.raises(ValueError):
        FrenchOracle(bad, chien)
    bad = [list(h) for h in hands]
    bad[0][0] = "T22"
    with pytest.raises(ValueError):
        FrenchOracle(bad, chien)
    with pytest.raises(ValueError):
        FrenchOracle(hands, chien, n_players=4)
    with pytest.raises(ValueError):
        FrenchOracle(hands[:2] + [hands[2][:-1]], chien + [hands[2][-1]])
    hands4, chien4 = make_deal(4, {})
    FrenchOracle(hands4, chien4, n_players=4)
    with pytest.raises(ValueError):
        FrenchOracle(hands4, chien4, n_players=5)
    for value in EXCUSE_LAST_TRICK:
        FrenchOracle(hands4, chien4, n_players=4, excuse_last_trick=value)
    with pytest.raises(ValueError, match="excuse_last_trick"):
        FrenchOracle(hands, chien, excuse_last_trick="winner")


def test_prise_takes_the_chien_and_taker_discards():
    hands, chien = make_deal(4, {})
    oracle = FrenchOracle(hands, chien, n_players=4)
    for bid in ("pass", "prise", "pass", "pass"):
        oracle.apply(bid)
    assert oracle.taker == 1 and oracle.current_player() == 1
    assert len(oracle.hands[1]) == 24 and set(chien) <= set(oracle.hands[1])
    assert all(a.startswith("discard:") for a in oracle.legal_actions())


# ---------------------------------------------------------------------------------------------- card play


def test_excuse_led_then_next_card_sets_suit_and_exchange():
    # seat 0 (taker, garde contre): EX + 14 spades + T1..T9; seat 1: 14 hearts + KD..5D;
    # seat 2: 4D..1D + 14 clubs + T10..T15; chien T16..T21 (counts for the defence: 5*1 + 9 = 14).
    seat0 = ["EX"] + suit("S") + trumps(9, 1)
    seat1 = suit("H") + suit("D")[:10]
    seat2 = suit("D")[10:] + suit("C") + trumps(15, 10)
    oracle = FrenchOracle([seat0, seat1, seat2], trumps(21, 16))
    for action in ("garde_contre", "pass", "pass", "pass", "pass"):
        oracle.apply(action)
    oracle.apply("play:EX")
    oracle.apply("pass")
    assert oracle.legal_actions() == _plays(seat1)
    branch = copy.deepcopy(oracle)
    branch.apply("play:KH")
    branch.apply("pass")
    assert branch.legal_actions() == _plays(trumps(15, 10))  # void in hearts: must trump
    oracle.apply("play:5D")
    oracle.apply("pass")
    assert oracle.legal_actions() == _plays(suit("D")[10:])  # must follow the suit set by 5D
    oracle.apply("play:1D")
    assert oracle.tricks[0]["winner"] == 1
    # The taker keeps EX (9) and gives half a point: taker 9 - 1 = 8;
    # defence: chien 14 + 5D 1 + 1D 1 + 1 = 17.
    assert oracle.taker_half_points() == 8
    assert oracle.defence_half_points() == 17
    assert "EX" in oracle.taker_cards


# ---------------------------------------------------------------------------------------------- poignee


@pytest.mark.parametrize(
    "n, n_trumps, with_ex, levels",
    [
        (3, 12, False, []),
        (3, 12, True, ["simple"]),
        (3, 14, True, ["simple", "double"]),
        (3, 17, True, ["simple", "double", "triple"]),
        (3, 17, False, ["simple", "double"]),
        (4, 9, False, []),
        (4, 9, True, ["simple"]),
        (4, 13, False, ["simple", "double"]),
        (4, 14, True, ["simple", "double", "triple"]),
    ],
)
def test_poignee_thresholds(n, n_trumps, with_ex, levels):
    size = 24 if n == 3 else 18
    seat0 = trumps(n_trumps, 1) + (["EX"] if with_ex else [])  # T1..Tn: nobody else holds T1
    seat0 += [c for c in full_deck() if c[0] != "T" and c != "EX"][: size - len(seat0)]
    hands, chien = make_deal(n, {0: seat0})
    oracle = FrenchOracle(hands, chien, n_players=n)
    oracle.apply("garde_contre")
    for _ in range(n - 1):
        oracle.apply("pass")
    oracle.apply("pass")  # no chelem
    assert oracle.current_player() == 0
    assert oracle.legal_actions() == {"pass"} | {"poignee:" + lv for lv in levels}
    with pytest.raises(ValueError):
        oracle.apply("poignee:bogus")


# ---------------------------------------------------------------------------------------------- invariants


@pytest.mark.parametrize("excuse_last_trick", EXCUSE_LAST_TRICK)
@pytest.mark.parametrize("n", [3, 4])
def test_random_games_invariants(n, excuse_last_trick):
    rng = random.Random(20240 + n)
    played = 0
    for _ in range(200):
        hands, chien = random_deal(n, rng)
        oracle = FrenchOracle(hands, chien, n_players=n, excuse_last_trick=excuse_last_trick)
        steps = 0
        while not oracle.is_terminal():
            legal = oracle.legal_actions()
            assert legal and 0 <= oracle.current_player() < n
            if oracle.phase == "bidding" and rng.random() < 0.5:
                action = "pass"
            else:
                action = rng.choice(sorted(legal))
            oracle.apply(action)
            steps += 1
            assert steps < 200
        assert oracle.current_player() == -1 and oracle.legal_actions() == set()
        ret = oracle.returns()
        assert len(ret) == n and sum(ret) == 0
        score = oracle.score()
        if oracle.taker is None:
            assert ret == [0] * n and score["T"] == 0
            continue
        played += 1
        taker = oracle.taker
        assert len(oracle.tricks) == (24 if n == 3 else 18)
        assert all(len(h) == 0 for h in oracle.hands)
        assert sorted(oracle.taker_cards + oracle.defence_cards) == sorted(full_deck())
        assert oracle.taker_half_points() + oracle.defence_half_points() == 182
        assert score["half_points"] == oracle.taker_half_points()
        assert score["made"] == (score["half_points"] >= score["target"])
        mult = {"prise": 1, "garde": 2, "garde_sans": 4, "garde_contre": 6}[score["contract"]]
        assert abs(score["base"]) >= 25 * mult and abs(score["base"]) % mult == 0
        assert score["T"] == score["base"] + score["petit_au_bout"] + score["poignee"] + score["chelem"]
        assert ret[taker] == (n - 1) * score["T"]
        assert all(ret[s] == -score["T"] for s in range(n) if s != taker)
    assert played > 100
