"""The independent Piedmontese oracle (tests/oracles/oracle_piedmont.py) on its own: the deck and card values,
deal validation, and properties of random games (follow rules, the Excuse at the last trick, card points and
payoffs, the accuso).

The hand-worked deals (trick winners, follow rules, the Excuse exchange, the discard, the accuso, complete deals)
run on both the oracle and the engine in test_piedmont_scenarios.py; the two are compared on random deals in
tests/core/test_differential_78.py."""

from __future__ import annotations

import random

import pytest

from tests.oracles.oracle_piedmont import (
    PiedmontOracle,
    full_deck,
    special_values,
    thirds_of,
    trick_winner_index,
)
from tests.support.cards78 import SHAPE, fill


def make_deal(fixed: dict[int, list[str]], stock: list[str] | None = None, variant: str = "piedmont3"):
    """Hands with the given cards first, the rest filled in deck order (seats 0.., then the stock)."""
    return fill(variant, fixed, stock)


def random_deal(rng: random.Random, variant: str):
    n, size, _ = SHAPE[variant]
    deck = full_deck()
    rng.shuffle(deck)
    return [deck[size * i : size * i + size] for i in range(n)], deck[n * size :]


# ---------------------------------------------------------------------- deck, values, validation


def test_deck_and_thirds_totals():
    deck = full_deck()
    assert len(deck) == len(set(deck)) == 78
    assert thirds_of(deck, special_values("piedmont3", "mondo")) == 231
    assert thirds_of(deck, special_values("piedmont3", "angelo")) == 231
    assert thirds_of(deck, special_values("piedmont4")) == 243
    mondo = special_values("piedmont3", "mondo")
    assert mondo["T21"] == 5 and "T20" not in mondo
    angelo = special_values("piedmont3", "angelo")
    assert angelo["T20"] == 5 and "T21" not in angelo
    four = special_values("piedmont4", "angelo")  # honour_5 does not apply to piedmont4
    assert four["T20"] == four["T21"] == 5
    # one special + two scartine = the special's value; three scartine = 1 point
    assert thirds_of(["KC", "5C", "T7"], mondo) == 15
    assert thirds_of(["EX", "1S", "2S"], mondo) == 12
    assert thirds_of(["5C", "6C", "T7"], mondo) == 3
    assert thirds_of(["QC", "NC", "JC"], mondo) == 3 * 9 - 6


@pytest.mark.parametrize("variant", ["piedmont3", "piedmont4"])
def test_validation(variant):
    hands, stock = make_deal({}, variant=variant)
    PiedmontOracle(hands, stock, variant=variant)
    bad = [list(h) for h in hands]
    bad[0][0] = bad[1][0]
    with pytest.raises(ValueError):
        PiedmontOracle(bad, stock, variant=variant)
    for wrong in ("0C", "11S", "T22", "T0", "KH"):
        bad = [list(h) for h in hands]
        bad[0][0] = wrong
        with pytest.raises(ValueError):
            PiedmontOracle(bad, stock, variant=variant)
    with pytest.raises(ValueError):
        PiedmontOracle(hands[:-1], stock + hands[-1], variant=variant)
    bad = [list(h) for h in hands]
    moved = bad[0].pop()
    with pytest.raises(ValueError):
        PiedmontOracle(bad, stock + [moved], variant=variant)
    with pytest.raises(ValueError):
        PiedmontOracle(hands, stock, variant=variant, honour_5="papa")
    other = "piedmont4" if variant == "piedmont3" else "piedmont3"
    with pytest.raises(ValueError):
        PiedmontOracle(hands, stock, variant=other)
    with pytest.raises(ValueError):
        PiedmontOracle(hands, stock, variant="piedmont5")


def play_avoiding_ex(oracle: PiedmontOracle, rng: random.Random) -> None:
    """Random play that never plays EX while another card is legal: EX reaches the last trick."""
    while not oracle.is_terminal():
        legal = sorted(oracle.legal_actions())
        non_ex = [a for a in legal if a != "play:EX"]
        oracle.apply(rng.choice(non_ex if non_ex else legal))


@pytest.mark.parametrize("variant", ["piedmont3", "piedmont4"])
def test_ex_to_last_trick_goes_to_winner(variant):
    rng = random.Random(11)
    seen = {"led": 0, "played": 0}
    for _ in range(60):
        hands, stock = random_deal(rng, variant)
        seed = rng.random()
        with_ex = PiedmontOracle(hands, stock, variant=variant, excuse_exchange=True)
        play_avoiding_ex(with_ex, random.Random(seed))
        without = PiedmontOracle(hands, stock, variant=variant, excuse_exchange=False)
        play_avoiding_ex(without, random.Random(seed))
        assert with_ex.history == without.history
        owner = next((s for s, h in enumerate(hands) if "EX" in h), with_ex.dealer)
        last = with_ex.tricks[-1]
        if ("EX" in with_ex.discards) or all(c != "EX" for _, c in last["plays"]):
            continue
        position = [c for _, c in last["plays"]].index("EX")
        seen["led" if position == 0 else "played"] += 1
        assert last["plays"][position][0] == owner
        winner = last["winner"]
        assert winner != owner
        assert "EX" in with_ex.won_cards()[winner]
        assert with_ex.exchange == [0] * with_ex.n  # no exchange for the last trick
        assert with_ex.points_thirds() == without.points_thirds()
    assert seen["led"] > 0 and seen["played"] > 0


@pytest.mark.parametrize("variant", ["piedmont3", "piedmont4"])
def test_follow_rules_on_random_games(variant):
    rng = random.Random(5)
    for _ in range(40):
        oracle = PiedmontOracle(*random_deal(rng, variant), variant=variant)
        while not oracle.is_terminal():
            if oracle.phase == "play":
                hand = oracle.hands[oracle.current_player()]
                legal = {a.split(":", 1)[1] for a in oracle.legal_actions()}
                assert legal and legal <= set(hand)
                if "EX" in hand:
                    assert "EX" in legal
                played = [c for _, c in oracle.current_plays]
                setter = next((c for c in played if c != "EX"), None)
                if setter is None:
                    assert legal == set(hand)
                else:
                    trumps_held = {c for c in hand if c.startswith("T")}
                    if setter.startswith("T"):
                        expected = trumps_held or set(hand)
                    else:
                        plain = [c for c in hand if not c.startswith("T") and c != "EX"]
                        suited = {c for c in plain if c[-1] == setter[-1]}
                        expected = suited or trumps_held or set(hand)
                    assert legal - {"EX"} == expected - {"EX"}
            oracle.apply(rng.choice(sorted(oracle.legal_actions())))


# ---------------------------------------------------------------------- accuso


def test_accuso_ignored_in_piedmont3():
    hands, stock = make_deal({})
    oracle = PiedmontOracle(hands, stock, accuso=True)
    for _ in range(3):
        oracle.apply(sorted(oracle.legal_actions())[0])
    assert oracle.phase == "play" and oracle.current_player() == 0


# ---------------------------------------------------------------------- random invariants

CONFIGS = [
    {"variant": "piedmont3", "honour_5": "mondo", "excuse_exchange": True},
    {"variant": "piedmont3", "honour_5": "angelo", "excuse_exchange": False},
    {"variant": "piedmont4", "excuse_exchange": True},
    {"variant": "piedmont4", "excuse_exchange": False, "accuso": True, "accuso_points": 5},
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(str(v) for v in c.values()))
def test_random_games_invariants(config):
    variant = config["variant"]
    n, size, _ = SHAPE[variant]
    rng = random.Random(20240 + len(str(config)))
    accusos = 0
    for _ in range(200):
        hands, stock = random_deal(rng, variant)
        oracle = PiedmontOracle(hands, stock, **config)
        with pytest.raises(RuntimeError):
            oracle.returns()
        turns = []
        while not oracle.is_terminal():
            legal = sorted(oracle.legal_actions())
            assert legal
            turns.append(oracle.current_player())
            if "accuso" in legal:
                action = "accuso" if rng.random() < 0.8 else "pass"
            else:
                action = rng.choice(legal)
            oracle.apply(action)
        assert oracle.current_player() == -1 and oracle.legal_actions() == set()
        with pytest.raises(ValueError):
            oracle.apply("pass")
        n_discards = 3 if variant == "piedmont3" else 2
        assert turns[:n_discards] == [n - 1] * n_discards
        if config.get("accuso"):
            assert turns[n_discards : n_discards + 4] == [0, 1, 2, 3]
        assert len(oracle.tricks) == size and all(len(t["plays"]) == n for t in oracle.tricks)
        assert oracle.tricks[0]["leader"] == 0
        for prev, nxt in zip(oracle.tricks, oracle.tricks[1:], strict=False):
            assert nxt["leader"] == prev["winner"] == nxt["plays"][0][0]
        for trick in oracle.tricks:
            seats = [s for s, _ in trick["plays"]]
            assert seats == [(trick["leader"] + k) % n for k in range(n)]
            assert trick["winner"] == seats[trick_winner_index([c for _, c in trick["plays"]])]
        assert all(len(h) == 0 for h in oracle.hands)
        won = oracle.won_cards()
        assert sorted(c for w in won for c in w) == sorted(full_deck())
        thirds = oracle.points_thirds()
        ret = oracle.returns()
        assert sum(ret) == 0
        if variant == "piedmont3":
            assert sum(thirds) == 231 and ret == [t - 77 for t in thirds]
        else:
            bonus = 3 * oracle.accuso_points * sum(oracle.accuso_conditions)
            accusos += sum(oracle.accuso_conditions)
            assert sum(thirds) == 243 + bonus
            d = thirds[0] - thirds[1]
            assert ret == [d, -d, d, -d]
        assert sum(oracle.exchange) == 0 and all(abs(x) <= 1 for x in oracle.exchange)
        if not config["excuse_exchange"]:
            assert oracle.exchange == [0] * n
    if config.get("accuso"):
        assert accusos > 0
