"""The independent Mineo oracle (tests/oracles/oracle_mineo.py) on its own: properties of random games (follow
rules, card points and zero-sum payoffs, the Fuggitivo led to the last trick).

The hand-worked deals run on both the oracle and the engine in test_mineo_scenarios.py (deals, legal sets,
payoffs, thirds, jochi, bad deals, card counting); the two are compared on random deals in
test_mineo_differential.py."""

from __future__ import annotations

import random

from tests.oracles.oracle_mineo import MineoOracle, full_deck


def random_deal(rng: random.Random):
    deck = full_deck()
    rng.shuffle(deck)
    return [deck[15 * i : 15 * i + 15] for i in range(4)], deck[60:]


def play_randomly(oracle: MineoOracle, rng: random.Random) -> None:
    while not oracle.is_terminal():
        oracle.apply(rng.choice(sorted(oracle.legal_actions())))


def test_follow_rules_on_random_games():
    rng = random.Random(5)
    for _ in range(100):
        oracle = MineoOracle(*random_deal(rng), early_solo=rng.random() < 0.5)
        while not oracle.is_terminal():
            if oracle.phase == "play":
                seat = oracle.current_player()
                hand = oracle.hands[seat]
                legal = {a.split(":", 1)[1] for a in oracle.legal_actions()}
                assert legal <= set(hand) and legal
                if not oracle.current_plays and len(hand) > 1:
                    assert "EX" not in legal
                if oracle.current_plays and "EX" in hand:
                    assert "EX" in legal
                if oracle.current_plays and oracle.current_plays[0][1] not in ("EX",):
                    led = oracle.current_plays[0][1]
                    if led.startswith("T"):
                        if any(c.startswith("T") for c in hand):
                            assert all(c.startswith("T") or c == "EX" for c in legal)
                    elif any(c[-1] == led[-1] and not c.startswith("T") and c != "EX" for c in hand):
                        assert all((c[-1] == led[-1] and not c.startswith("T")) or c == "EX" for c in legal)
            oracle.apply(rng.choice(sorted(oracle.legal_actions())))


def test_random_games_thirds_and_zero_sum():
    rng = random.Random(12345)
    played = 0
    for _ in range(200):
        oracle = MineoOracle(*random_deal(rng), early_solo=rng.random() < 0.7)
        play_randomly(oracle, rng)
        ret = oracle.returns()
        assert sum(ret) == 0
        if oracle.void:
            assert ret == [0, 0, 0, 0]
            continue
        played += 1
        decl_thirds, opp_thirds = oracle.side_thirds()
        assert decl_thirds + opp_thirds == 327
        won_decl, won_opp = oracle.won_cards()
        assert sorted(won_decl + won_opp) == sorted(full_deck())
        decl, opp = oracle.jochi()
        assert decl["rimatura"] + opp["rimatura"] == 1
        assert (decl_thirds >= 164) == (decl["rimatura"] == 1)
        assert decl["vanto"] + opp["vanto"] + decl["rivanto"] + opp["rivanto"] in (1, 2)
        assert all(len(h) == 0 for h in oracle.hands)
        assert len(oracle.tricks) == 15
    assert played > 100


def test_ex_led_to_last_trick_goes_to_winner_and_second_card_sets_suit():
    rng = random.Random(7)
    found = 0
    for _ in range(3000):
        oracle = MineoOracle(*random_deal(rng), early_solo=False)
        play_randomly(oracle, rng)
        if oracle.void or oracle.tricks[-1]["plays"][0][1] != "EX":
            continue
        found += 1
        plays = oracle.tricks[-1]["plays"]
        cards = [c for _, c in plays]
        winner = oracle.tricks[-1]["winner"]
        if not any(c.startswith("T") for c in cards):
            # no trump: the highest card of the second card's suit wins (the deck lists each suit high to low)
            suit = cards[1][-1]
            same = [(s, c) for s, c in plays[1:] if c[-1] == suit]
            best_seat = min(same, key=lambda sc: full_deck().index(sc[1]))[0]
            assert winner == best_seat
        won_decl, won_opp = oracle.won_cards()
        assert ("EX" in won_decl) == (oracle.side_of(winner) == 0)
    assert found > 0
