"""Tests of the independent Mineo oracle (tests/oracle_mineo.py) on its own, written with card names."""

from __future__ import annotations

import random

import pytest
from oracle_mineo import MineoOracle, full_deck, thirds_of


def make_deal(fixed: dict[int, list[str]], monte: list[str] | None = None):
    """Hands with the given cards first, the rest filled in deck order (seats 0..3, then the monte)."""
    used = [c for cards in fixed.values() for c in cards] + list(monte or [])
    rest = [c for c in full_deck() if c not in used]
    hands = []
    for seat in range(4):
        hand = list(fixed.get(seat, []))
        while len(hand) < 15:
            hand.append(rest.pop(0))
        hands.append(hand)
    monte = list(monte) if monte is not None else [rest.pop(0) for _ in range(3)]
    assert not rest
    return hands, monte


def random_deal(rng: random.Random):
    deck = full_deck()
    rng.shuffle(deck)
    return [deck[15 * i : 15 * i + 15] for i in range(4)], deck[60:]


def play_randomly(oracle: MineoOracle, rng: random.Random) -> None:
    while not oracle.is_terminal():
        oracle.apply(rng.choice(sorted(oracle.legal_actions())))


def test_deck_and_thirds_total():
    deck = full_deck()
    assert len(deck) == len(set(deck)) == 63
    assert thirds_of(deck) + 15 == 327


def test_validation():
    hands, monte = make_deal({})
    MineoOracle(hands, monte)
    bad = [list(h) for h in hands]
    bad[0][0] = bad[1][0]
    with pytest.raises(ValueError):
        MineoOracle(bad, monte)
    bad = [list(h) for h in hands]
    bad[0][0] = "4C"  # no 4 in Coppe
    with pytest.raises(ValueError):
        MineoOracle(bad, monte)


@pytest.mark.parametrize("early_solo", [True, False])
def test_all_pass_is_void(early_solo):
    hands, monte = make_deal({})
    oracle = MineoOracle(hands, monte, early_solo=early_solo)
    expected_seats = [0, 1, 2, 3, 0, 1, 2, 3] if early_solo else [0, 1, 2, 3]
    for seat in expected_seats:
        assert oracle.current_player() == seat
        assert "pass" in oracle.legal_actions()
        oracle.apply("pass")
    assert oracle.is_terminal()
    assert oracle.current_player() == -1
    assert oracle.returns() == [0, 0, 0, 0]


def test_auction_legal_actions_and_illegal_action():
    hands, monte = make_deal({})
    oracle = MineoOracle(hands, monte, early_solo=False)
    assert oracle.legal_actions() == {"pass", "solo", "call"}
    oracle.apply("call")
    assert oracle.legal_actions() == {"pass", "solo"}
    with pytest.raises(ValueError):
        oracle.apply("call")
    oracle.apply("solo")  # seat 1 goes solo, overriding the call
    assert oracle.declarer == 1 and oracle.solo and oracle.partner is None and not oracle.doubled
    assert oracle.current_player() == 1
    assert len(oracle.hands[1]) == 18


def test_partner_is_holder_of_highest_missing_trump():
    hands, monte = make_deal({1: ["T20", "T19"], 3: ["T18"]})
    oracle = MineoOracle(hands, monte, early_solo=False)
    for action in ["pass", "call", "pass", "pass"]:
        oracle.apply(action)
    assert oracle.declarer == 1 and oracle.partner == 3 and not oracle.solo
    assert oracle.called_trump == "T18"
    for _ in range(3):
        oracle.apply(sorted(oracle.legal_actions())[0])
    assert monte[2] == "EX" and oracle.legal_actions() == {"pass", "scommessa"}  # T20 + EX from the monte
    oracle.apply("pass")
    # rivanto round: seats 2, 3, 0; the partner (3) may only pass
    assert oracle.current_player() == 2 and oracle.legal_actions() == {"pass", "rivanto"}
    oracle.apply("pass")
    assert oracle.current_player() == 3 and oracle.legal_actions() == {"pass"}
    oracle.apply("pass")
    assert oracle.current_player() == 0 and oracle.legal_actions() == {"pass", "rivanto"}
    oracle.apply("rivanto")
    assert oracle.rivanto_said and oracle.current_player() == 1  # the declarer leads
    play_randomly(oracle, random.Random(1))
    ret = oracle.returns()
    assert ret[1] == ret[3] == -ret[0] == -ret[2]
    decl, opp = oracle.jochi()
    assert decl["vanto"] == opp["vanto"] == 0
    assert decl["rivanto"] + opp["rivanto"] == 2


def test_forced_solo_when_called_trump_in_monte():
    hands, monte = make_deal({}, monte=["T20", "5C", "6C"])
    assert "T20" not in hands[0]
    oracle = MineoOracle(hands, monte, early_solo=True)
    for action in ["pass"] * 4 + ["call", "pass", "pass", "pass"]:
        oracle.apply(action)
    assert oracle.declarer == 0 and oracle.partner is None
    assert oracle.solo and oracle.forced_solo and not oracle.doubled
    assert oracle.current_player() == 0 and "T20" in oracle.hands[0]
    play_randomly(oracle, random.Random(2))
    ret = oracle.returns()
    assert ret[1] == ret[2] == ret[3] and ret[0] == -3 * ret[1]


def test_early_solo_is_doubled():
    hands, monte = make_deal({})
    oracle = MineoOracle(hands, monte, early_solo=True)
    oracle.apply("pass")
    oracle.apply("pass")
    oracle.apply("solo")
    assert oracle.declarer == 2 and oracle.solo and oracle.doubled and oracle.current_player() == 2
    assert len(oracle.hands[2]) == 18
    play_randomly(oracle, random.Random(3))
    decl, opp = oracle.jochi()
    d = sum(decl.values()) - sum(opp.values())
    assert oracle.returns() == [-2 * d, -2 * d, 6 * d, -2 * d]


def test_discard_restriction_with_too_few_allowed_cards():
    seat0 = ["KC", "KD", "KS", "KB", "EX"] + [f"T{i}" for i in range(10)]  # T0..T9
    hands, monte = make_deal({0: seat0}, monte=["5C", "T10", "T11"])
    oracle = MineoOracle(hands, monte, early_solo=True)
    oracle.apply("solo")
    trumps_2_11 = {f"discard:T{i}" for i in range(2, 12)}
    assert oracle.legal_actions() == {"discard:5C"} | trumps_2_11
    oracle.apply("discard:5C")
    assert oracle.legal_actions() == trumps_2_11
    oracle.apply("discard:T5")
    assert oracle.legal_actions() == trumps_2_11 - {"discard:T5"}
    with pytest.raises(ValueError):
        oracle.apply("discard:T1")
    oracle.apply("discard:T11")
    assert oracle.discards == ["5C", "T5", "T11"]
    assert oracle.legal_actions() == {"pass"}  # no T20: no scommessa


def test_discard_restriction_with_enough_allowed_cards():
    seat0 = ["KC", "T20", "EX", "T3", "5C", "6C", "7C"]
    hands, monte = make_deal({0: seat0}, monte=["T19", "T18", "T17"])
    oracle = MineoOracle(hands, monte, early_solo=False)
    oracle.apply("solo")
    legal = oracle.legal_actions()
    assert "discard:5C" in legal
    forbidden = ["discard:KC", "discard:T20", "discard:EX", "discard:T3", "discard:T17"]
    assert not any(a in legal for a in forbidden)
    for action in ["discard:5C", "discard:6C", "discard:7C"]:
        oracle.apply(action)
    assert oracle.legal_actions() == {"pass", "scommessa"}  # holds T20 and EX
    oracle.apply("scommessa")
    assert oracle.scommessa_said
    for _ in range(3):
        oracle.apply("pass")
    assert oracle.current_player() == 0
    assert "play:EX" not in oracle.legal_actions()  # EX cannot be led
    play_randomly(oracle, random.Random(4))
    decl, opp = oracle.jochi()
    assert decl["scommessa"] + opp["scommessa"] == 1


def test_miseria_beats_king_of_spades():
    seat0 = ["KS"] + [f"T{i}" for i in range(1, 15)]
    seat1 = ["T0"] + ["KC", "QC", "NC", "JC", "10C", "9C", "8C", "KD", "QD", "ND", "JD", "10D", "9D", "8D"]
    seat2 = ["QS", "NS"]
    seat3 = ["JS", "10S"]
    hands, monte = make_deal({0: seat0, 1: seat1, 2: seat2, 3: seat3}, monte=["5C", "6C", "7C"])
    oracle = MineoOracle(hands, monte, early_solo=False)
    oracle.apply("solo")
    for card in ["5C", "6C", "7C"]:
        oracle.apply("discard:" + card)
    for _ in range(4):
        oracle.apply("pass")  # scommessa, then three rivanto turns
    oracle.apply("play:KS")
    assert oracle.legal_actions() == {"play:T0"}  # no spades: must trump
    oracle.apply("play:T0")
    spades2 = {"play:" + c for c in oracle.hands[2] if c.endswith("S") and not c.startswith("T")}
    assert {"play:QS", "play:NS"} <= spades2
    assert oracle.legal_actions() == spades2 | ({"play:EX"} if "EX" in oracle.hands[2] else set())
    oracle.apply("play:QS")
    oracle.apply("play:JS")
    trick = oracle.tricks[0]
    assert trick["winner"] == 1 and trick["leader"] == 0
    assert oracle.current_player() == 1


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


def test_soloist_wins_every_trick_and_takes_opponents_ex():
    seat0 = [f"T{i}" for i in range(6, 21)]  # T6..T20: wins every trick
    hands, monte = make_deal({0: seat0, 1: ["EX", "T1"]}, monte=["5C", "6C", "7C"])
    oracle = MineoOracle(hands, monte, early_solo=False)
    oracle.apply("solo")
    for card in monte:
        oracle.apply("discard:" + card)
    for _ in range(4):
        oracle.apply("pass")
    play_randomly(oracle, random.Random(8))
    assert all(t["winner"] == 0 for t in oracle.tricks)
    won_decl, won_opp = oracle.won_cards()
    assert won_opp == [] and "EX" in won_decl  # the opponents won no trick: EX goes to the trick's winner
    assert oracle.side_thirds() == (327, 0)
    decl, opp = oracle.jochi()
    assert decl == {
        "rimatura": 1,
        "vanto": 1,
        "rivanto": 0,
        "arie": 0,
        "arie_giove": 2,
        "pigliata": 1,  # T1 played by seat 1, won by the soloist; T16..T19 were the soloist's own
        "re": 1,
        "scommessa": 0,
    }
    assert sum(opp.values()) == 0
    assert oracle.returns() == [18, -6, -6, -6]
