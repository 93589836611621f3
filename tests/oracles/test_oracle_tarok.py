"""Tests of the independent Slovenian tarok oracle (tests/oracles/oracle_tarok.py) on its own, written with card
names: the rules of docs/rules.md section 7 on hand-built deals, OpenSpiel's readings included (the forced Pagat,
the Mond penalty, the valat and kings tests). The oracle against OpenSpiel itself: tests/experiments/
test_check_openspiel_tarok.py.

Card points: trula (T1, T21, T22) and Kings 5, Q 4, N 3, J 2, any other card 1, counted in groups of three
(a group scores its values minus 2, a last group of one or two cards its values minus 1); the deck counts 70.
"""

from __future__ import annotations

import random

import pytest

from tests.oracles.oracle_tarok import (
    TarokOracle,
    card_points,
    full_deck,
    trick_winner_index,
)
from tests.support.tarok import make_deck


def _plays(*cards: str) -> set[str]:
    return {"play:" + c for c in cards}


def _apply(game: TarokOracle, *actions: str) -> None:
    for action in actions:
        game.apply(action)


# ---------------------------------------------------------------------------------------------- cards


def test_deck_and_card_points():
    deck = full_deck()
    assert len(deck) == len(set(deck)) == 54
    assert card_points(deck) == 70
    assert card_points([]) == 0
    assert card_points(["T2"]) == 0  # one card: 1 - 1
    assert card_points(["T2", "T3"]) == 1
    assert card_points(["T21"]) == 4
    assert card_points(["T21", "JD"]) == 6
    assert card_points(["T14", "T21", "JD"]) == 6  # one group: 1 + 5 + 2 - 2
    assert card_points(["T14", "T21", "JD", "QD"]) == 9  # 6 + (4 - 1)
    assert card_points(["T2", "JC", "QC", "T21", "KC"]) == 14  # (1 + 2 + 4 - 2) + (5 + 5 - 1)


def test_validation():
    deck = make_deck(3, {})
    TarokOracle(3, deck)
    with pytest.raises(ValueError, match="players"):
        TarokOracle(5, deck)
    with pytest.raises(ValueError, match="54 distinct"):
        TarokOracle(3, deck[:-1] + [deck[0]])
    with pytest.raises(ValueError, match="54 distinct"):
        TarokOracle(3, deck[:-1] + ["T23"])
    no_tarok = [c for c in full_deck() if not c.startswith("T")][:16]
    with pytest.raises(ValueError, match="seat 0 holds no tarok"):
        TarokOracle(3, make_deck(3, {0: no_tarok}))


def test_trick_winners():
    assert trick_winner_index(["4H", "KH", "1H"], "one") == 1  # K > ... > 1 > 2 > 3 > 4 in red suits
    assert trick_winner_index(["7S", "10S", "KC"], "one") == 1  # another suit never wins
    assert trick_winner_index(["KH", "T2", "QH", "T3"], "two") == 3  # the highest tarok
    assert trick_winner_index(["T21", "T22", "T1"], "one") == 2  # the emperor trick: the Pagat wins
    assert trick_winner_index(["T21", "T22", "T1"], "klop") == 2
    assert trick_winner_index(["4H", "T22", "1H"], "colour_valat") == 2  # taroks do not trump in colour valat
    assert trick_winner_index(["T3", "KH", "T2"], "colour_valat") == 0  # a tarok lead: the highest tarok
    assert trick_winner_index(["KH", "T21", "T22", "T1"], "colour_valat") == 0  # no emperor trick on a suit lead
    assert trick_winner_index(["T2", "T21", "T22", "T1"], "colour_valat") == 3


# ---------------------------------------------------------------------------------------------- bidding


def test_bidding_three_players():
    game = TarokOracle(3, make_deck(3, {}))
    assert game.current_player() == 1  # forehand (seat 0) speaks last
    later = {"bid:" + b for b in ("two", "one", "beggar", "solo_without", "open_beggar", "colour_valat", "valat")}
    assert game.legal_actions() == {"bid:pass"} | later  # no solos with three players, no three / klop
    _apply(game, "bid:pass", "bid:pass")
    assert game.current_player() == 0
    assert game.legal_actions() == {"bid:klop", "bid:three"} | later  # forehand may not pass
    game.apply("bid:klop")
    assert (game.phase, game.contract, game.declarer, game.current_player()) == ("play", "klop", 0, 0)


def test_bidding_priority_and_the_last_word():
    game = TarokOracle(4, make_deck(4, {}))
    _apply(game, "bid:pass", "bid:one", "bid:pass")  # seats 1, 2, 3
    assert game.current_player() == 0
    assert "bid:one" in game.legal_actions()  # forehand may hold a bid of a later seat
    game.apply("bid:one")
    assert game.current_player() == 2  # the passed seats are skipped
    assert "bid:one" not in game.legal_actions() and "bid:solo_three" in game.legal_actions()
    game.apply("bid:pass")
    assert game.current_player() == 0
    assert "bid:pass" not in game.legal_actions()  # the last seat standing names the contract
    game.apply("bid:one")
    assert (game.phase, game.declarer, game.contract) == ("king_calling", 0, "one")
    assert game.legal_actions() == {"call:KH", "call:KD", "call:KS", "call:KC"}


# ---------------------------------------------------------------------------------------------- king, talon


def test_king_calling_partner_talon_and_own_king():
    talon = ["KS", "4H", "3H", "2H", "1H", "JH"]
    deck = make_deck(4, {0: ["KH"], 2: ["KD"]}, talon)
    for king, partner, in_talon in (("KD", 2, False), ("KS", None, True), ("KH", None, False)):
        game = TarokOracle(4, deck)
        _apply(game, "bid:pass", "bid:pass", "bid:pass", "bid:two", "call:" + king)
        assert (game.partner, game.king_in_talon, game.phase) == (partner, in_talon, "talon_choice")
        assert game.legal_actions() == {"talon:0", "talon:1", "talon:2"}


def test_talon_sets_the_mond_left_behind_and_discards():
    talon = ["T21", "4H", "3H", "2H", "1H", "QD"]
    deck = make_deck(3, {0: ["KC", "KS", "T5"]}, talon)
    game = TarokOracle(3, deck)
    _apply(game, "bid:pass", "bid:pass", "bid:one")
    assert game.legal_actions() == {f"talon:{i}" for i in range(6)}
    game.apply("talon:5")  # takes QD, leaves the Mond
    assert game.mond_penalty_seat == 0 and game.talon == ["T21", "4H", "3H", "2H", "1H"]
    discards = game.legal_actions()
    assert discards and all(not a.startswith("discard:T") and not a.startswith("discard:K") for a in discards)
    assert "discard:QD" in discards
    game.apply("discard:QD")
    assert game.phase == "play" and game.collected[0] == ["QD"] and game.current_player() == 0

    game = TarokOracle(3, deck)
    _apply(game, "bid:pass", "bid:pass", "bid:one", "talon:0")  # takes the Mond
    assert game.mond_penalty_seat is None


def test_taroks_discarded_only_when_nothing_else_and_never_the_trula():
    hand = ["KH", "KD", "KS", "KC", "T1", "T21", "T22", "T2", "T3", "T4", "T5", "T6", "T7", "T8", "T9", "T10"]
    talon = ["T11", "T12", "T13", "4H", "3H", "2H"]
    game = TarokOracle(3, make_deck(3, {0: hand}, talon))
    _apply(game, "bid:pass", "bid:pass", "bid:three", "talon:0")  # takes three more taroks
    assert game.legal_actions() == {f"discard:T{i}" for i in range(2, 14)}


# ---------------------------------------------------------------------------------------------- trick play


def test_negative_contract_must_beat_and_keeps_the_pagat():
    deck = make_deck(3, {0: ["2H", "T1", "T5"], 1: ["3H", "1H", "T6"], 2: ["T7", "T8"]})
    game = TarokOracle(3, deck)
    _apply(game, "bid:pass", "bid:pass", "bid:klop")
    assert "play:T1" not in game.legal_actions()  # the Pagat is not led while other cards remain
    game.apply("play:2H")
    assert game.legal_actions() & _plays("3H", "1H") == _plays("1H")  # beat 2H when able


def test_emperor_trick_forces_the_pagat_even_over_the_suit_led():
    hearts = ["4H", "3H", "2H", "1H", "JH", "NH", "QH", "KH"]
    others = [c for c in full_deck() if c[-1] in "DSC" and not c.startswith("T")]
    seat1 = ["T21"] + others[:11]
    seat2 = ["T22"] + others[11:22]
    deck = make_deck(4, {0: ["4H", "T2"], 1: seat1, 2: seat2, 3: ["3H", "T1"]},
                     talon=hearts[2:])
    game = TarokOracle(4, deck)
    _apply(game, "bid:pass", "bid:pass", "bid:pass", "bid:klop", "play:4H")
    assert game.legal_actions() == _plays("T21")  # void in hearts, one tarok
    game.apply("play:T21")
    assert game.legal_actions() == _plays("T22")
    game.apply("play:T22")
    assert game.legal_actions() == _plays("T1")  # OpenSpiel: the Pagat although he holds a heart
    game.apply("play:T1")
    assert game.tricks[-1]["winner"] == 3
    assert game.collected[3][-1] == hearts[2]  # klop: the trick's winner gets the first talon card


def test_positive_contract_any_card_of_the_suit():
    deck = make_deck(3, {0: ["2H", "T5"], 1: ["3H", "1H", "T6"], 2: ["T7"]})
    game = TarokOracle(3, deck)
    _apply(game, "bid:pass", "bid:pass", "bid:three", "talon:0")
    for _ in range(3):
        game.apply(sorted(game.legal_actions() - {"discard:2H"})[0])
    game.apply("play:2H")
    assert game.legal_actions() & _plays("3H", "1H") == _plays("3H", "1H")


def test_beggar_ends_at_the_declarers_first_trick():
    deck = make_deck(3, {1: ["KH"], 2: ["4H"], 0: ["3H"]})
    game = TarokOracle(3, deck)
    _apply(game, "bid:beggar", "bid:pass", "bid:pass", "bid:beggar")
    assert game.current_player() == 1  # the declarer leads in beggar
    _apply(game, "play:KH")
    heart = sorted(a for a in game.legal_actions() if a.endswith("H"))[0]
    game.apply(heart)
    game.apply(sorted(a for a in game.legal_actions() if a.endswith("H"))[0])
    assert game.is_terminal() and game.returns() == [0, -70, 0]


# ---------------------------------------------------------------------------------------------- scoring


def _finished(players: int, contract: str, declarer: int, partner: int | None, piles: list[list[str]],
              last_winner: int) -> TarokOracle:
    """An oracle put at the end of a deal with the given piles (each seat's collected cards, in order)."""
    game = TarokOracle(players, make_deck(players, {}))
    game.contract, game.declarer, game.partner = contract, declarer, partner
    game.collected = [list(p) for p in piles]
    game.tricks = [{"plays": [], "winner": last_winner}]
    game.phase, game.turn = "done", -1
    return game


def test_normal_contract_difference_ultimo_and_partner():
    deck = full_deck()
    team = deck[:30]  # T1..T22 and the hearts: values 52, 30 cards in 10 groups: 52 - 20 = 32 points
    assert card_points(team) == 32
    # four players, "two": declarer 0 and partner 2 hold the team's cards, seat 3 won the last trick with the
    # called King (KC, the last card of his pile)
    game = _finished(4, "two", 0, 2, [team[4:], [], team[:4], deck[30:]], last_winner=3)
    game.called_king = "KC"
    parts = game.score_parts()
    assert (parts["team_points"], parts["base"]) == (32, 32 - 35 - 20)  # 35 or less: the contract is lost
    assert (parts["ultimo"], parts["kings"], parts["trula"], parts["valat"]) == (-10, 0, 0, 0)
    assert game.returns() == [-33, 0, -33, 0]  # the declarer and the partner score; the opponents 0


def test_openspiel_valat_counts_cards_not_tricks():
    deck = full_deck()
    # four players, "two": the team's pile 48 cards (with the 2 discards) is a valat for OpenSpiel ...
    game = _finished(4, "two", 0, None, [deck[:48], deck[48:52], [], []], last_winner=0)
    assert game.score_parts()["valat"] == 1 and game.returns() == [250, 0, 0, 0]
    # ... and 50 cards (every trick and the discards) is not
    game = _finished(4, "two", 0, None, [deck[:50], [], [], []], last_winner=0)
    parts = game.score_parts()
    assert parts["valat"] == 0 and game.returns()[0] == parts["base"] + parts["ultimo"]
    # the opponents' 48 cards: valat lost
    game = _finished(3, "one", 1, None, [deck[:48], deck[48:49], []], last_winner=0)
    assert game.returns() == [0, -250, 0]


def test_openspiel_kings_bonus_is_a_pile_of_four_cards():
    deck = full_deck()
    # an opponent's pile of exactly four cards (one trick with four players) costs the team 10 "kings"
    team = deck[4:]
    game = _finished(4, "solo_one", 0, None, [team, deck[:4], [], []], last_winner=0)
    parts = game.score_parts()
    assert parts["kings"] == -10
    # all four Kings in the team's pile score nothing
    assert all(k in team for k in ("KH", "KD", "KS", "KC")) and parts["trula"] == 0


def test_klop_scores():
    deck = full_deck()
    # nobody over 35 and everybody with a trick: each loses his points
    piles = [deck[0:18], deck[18:36], deck[36:54]]
    game = _finished(3, "klop", 0, None, piles, last_winner=0)
    assert game.returns() == [-card_points(p) for p in piles]
    # one seat over 35 loses 70, one seat with nothing wins 70, the others score nothing
    piles = [deck[0:27], [], deck[27:54]]
    assert [card_points(p) for p in piles] == [22, 0, 48]
    game = _finished(3, "klop", 0, None, piles, last_winner=0)
    assert game.returns() == [0, 70, -70]


def test_mond_penalty_adds_to_one_seat():
    deck = full_deck()
    game = _finished(4, "solo_without", 2, None, [[], [], deck[:40], deck[40:48]], last_winner=2)
    game.mond_penalty_seat = 2
    assert game.score_parts()["won"] == (card_points(deck[:40]) > 35)
    assert game.returns() == [0, 0, 80 - 20, 0]


# ---------------------------------------------------------------------------------------------- random deals


@pytest.mark.parametrize("players", [3, 4])
def test_random_deals_end_within_openspiels_bounds(players):
    rng = random.Random(players)
    max_length = {3: 65, 4: 72}[players]
    deck = full_deck()
    played = 0
    while played < 200:
        rng.shuffle(deck)
        try:
            game = TarokOracle(players, deck)
        except ValueError:
            continue  # a hand without tarok: OpenSpiel deals again
        played += 1
        steps = 0
        while not game.is_terminal():
            legal = sorted(game.legal_actions())
            assert legal, (game.phase, game.history)
            game.apply(rng.choice(legal))
            steps += 1
        assert steps <= max_length
        returns = game.returns()
        assert len(returns) == players and all(-500 <= r <= 500 for r in returns)
        # every card is in a pile, a hand (a beggar or valat ended early) or the talon's remainder
        assert sum(len(p) for p in game.collected) + len(game.talon) + sum(len(h) for h in game.hands) == 54
