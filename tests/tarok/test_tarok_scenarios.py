"""Scenario tests of Slovenian tarok (``tarok3``, ``tarok4``; docs/rules.md §7) with card names, each played on the
engine and on the independent oracle side by side (:class:`tests.support.tarok.Both`: every legal set, player and
return is asserted to agree), and the invariants of random deals on the batched core.

Card points: trula (T1, T21, T22) and Kings 5, Q 4, N 3, J 2, any other card 1, counted in groups of three; the
engine counts thirds (210 in the deck), a pile of t thirds counting (t + 1) // 3 points. Red suits rank, low to
high, 4 3 2 1 J N Q K; black suits 7 8 9 10 J N Q K.
"""

import json

import numpy as np
import pytest

import tarocchi_rl
from tarocchi_rl import BatchEnv
from tarocchi_rl.bot import Referee
from tarocchi_rl.cards import TRUMP
from tarocchi_rl.core.points import card_points
from tarocchi_rl.core.state import DISCARDED, HAND, SHOWN, STOCK, WON
from tarocchi_rl.search.seat_view import rebuild
from tarocchi_rl.variants import get_variant
from tarocchi_rl.views import Views
from tests.support.tarok import Both, make_deck

pytestmark = pytest.mark.nojit


def plays(*cards: str) -> set[str]:
    return {"play:" + c for c in cards}


def bids(*words: str) -> set[str]:
    return {"bid:" + w for w in words}


# ---------------------------------------------------------------------------------------------- card points


@pytest.mark.parametrize(("cards", "points"), [
    ([], 0), (["T2"], 0), (["T2", "T3"], 1), (["T21"], 4), (["T21", "JD"], 6), (["T14", "T21", "JD"], 6),
    (["T14", "T21", "JD", "QD"], 9), (["T2", "JC", "QC", "T21", "KC"], 14),
])
def test_card_points_in_threes_are_openspiels_figures(cards, points):
    """OpenSpiel's own test figures (tarok_test.cc), through the engine's thirds and (t + 1) // 3."""
    tb = get_variant("tarok4").tables({})
    mask = get_variant("tarok4").deck.mask_of(cards)
    assert (card_points(mask[0], mask[1], tb) + 1) // 3 == points


def test_the_deck_counts_70_points_210_thirds():
    spec = get_variant("tarok3")
    tb = spec.tables({})
    mask = spec.deck.mask_of(spec.deck.names)
    assert card_points(mask[0], mask[1], tb) == 210 == tb.params[33]  # P_TOTAL_POINTS
    assert spec.deck.names[:3] == ("T1", "T2", "T3") and spec.deck.names[21:24] == ("T22", "4H", "3H")
    assert spec.deck.names[53] == "KC" and "EX" not in spec.deck.names


# ---------------------------------------------------------------------------------------------- bidding


def test_bidding_priority_and_forehands_klop():
    """Seat 1 speaks first; a seat may hold the standing contract only with priority (a lower seat number);
    klop and three are forehand's alone, when every other seat has passed, and he may not pass then."""
    game = Both(4, make_deck(4, {}))
    assert game.player() == 1
    assert game.legal() == bids("pass", "two", "one", "solo_three", "solo_two", "solo_one", "beggar",
                                "solo_without", "open_beggar", "colour_valat", "valat")
    game.apply("bid:two")
    assert game.player() == 2 and "bid:two" not in game.legal() and "bid:one" in game.legal()  # seat 2 > seat 1
    game.apply("bid:pass bid:pass")
    assert game.player() == 0 and "bid:two" in game.legal()  # forehand has priority over everyone
    assert "bid:klop" not in game.legal() and "bid:three" not in game.legal()
    game.apply("bid:two")
    assert game.player() == 1 and "bid:two" not in game.legal() and "bid:one" in game.legal()
    game.apply("bid:pass")  # only forehand is left: he names the contract once more
    assert game.player() == 0 and "bid:pass" not in game.legal() and "bid:two" in game.legal()
    game.apply("bid:two")
    assert game.player() == 0 and game.legal() == {"call:KH", "call:KD", "call:KS", "call:KC"}


def test_three_players_pass_to_forehand_who_may_bid_klop_and_no_solos():
    game = Both(3, make_deck(3, {}))
    game.apply("bid:pass bid:pass")
    assert game.legal() == bids("klop", "three", "two", "one", "beggar", "solo_without", "open_beggar",
                                "colour_valat", "valat")
    game.apply("bid:klop")
    assert game.player() == 0 and game.engine.phase == "play"


# ---------------------------------------------------------------------------------------------- klop

# tarok4: seats 1 and 2 are void in hearts, seat 3 holds the Pagat and the hearts
KLOP_DECK = (
    ["4H", "2H", "JD", "ND", "QD", "KD", "T2", "T3", "7S", "8S", "9S", "10S"]
    + ["T21", "T4", "T5", "T6", "KS", "QS", "NS", "JS", "7C", "8C", "9C", "10C"]
    + ["T22", "T7", "T8", "T9", "T10", "JC", "NC", "QC", "KC", "4D", "3D", "2D"]
    + ["T1", "1H", "3H", "JH", "NH", "QH", "KH", "T11", "T12", "T13", "T14", "T15"]
    + ["1D", "T16", "T17", "T18", "T19", "T20"]
)


def test_klop_must_beat_the_forced_pagat_and_the_talon_gifts():
    game = Both(4, KLOP_DECK).apply("bid:pass bid:pass bid:pass bid:klop")
    assert game.player() == 0 and len(game.legal()) == 12  # forehand leads anything (he has no Pagat)
    game.apply("play:4H")
    assert game.legal() == plays("T21", "T4", "T5", "T6")  # void: any tarok (the first on a suit lead)
    game.apply("play:T21")
    assert game.legal() == plays("T22")  # must beat the Mond
    game.apply("play:T22")
    assert game.legal() == plays("T1")  # the Pagat on the Mond and the Skis, though he holds hearts
    game.apply("play:T1")
    assert game.player() == 3  # the emperor trick: the Pagat wins
    deck = game.engine.game.deck
    st = game.engine._env.state
    assert deck.cards_of(st.cards[0, WON + 3]) == sorted(deck.card_id(c) for c in ("4H", "T21", "T22", "T1", "1D"))
    assert deck.cards_of(st.cards[0, SHOWN]) == [deck.card_id("1D")]  # the gift, shown to all
    assert game.oracle.collected[3][-1] == "1D"
    # the Pagat gone, seat 3 leads anything; seat 0 must beat 3H with his 2H
    game.apply("play:3H")
    assert game.legal() == plays("2H")
    game.apply("play:2H")
    assert game.legal() == plays("T4", "T5", "T6")
    game.apply("play:T4")
    assert game.legal() == plays("T7", "T8", "T9", "T10")  # beat the T4
    game.apply("play:T7")
    assert game.player() == 2 and "T16" in game.oracle.collected[2]  # the second gift
    game.apply("play:T8")
    assert game.legal() == plays("T11", "T12", "T13", "T14", "T15")
    game.apply("play:T11")
    assert game.legal() == plays("T2", "T3")  # cannot beat the T11: any tarok
    game.apply("play:T2 play:T5")
    returns = game.finish()
    out = game.engine.outcome()
    assert out["contract"] == "klop" and out["sides"] == [[0], [1], [2], [3]]
    assert sum(out["card_point_units"]) == 210
    points = out["details"]["points"]
    if any(p > 35 or p == 0 for p in points):
        assert returns == [-70 if p > 35 else 70 if p == 0 else 0 for p in points]
    else:
        assert returns == [-p for p in points]


def test_the_pagat_is_led_in_klop_only_as_the_last_card():
    deck = make_deck(3, {0: ["T1", "T5"] + [f"{r}H" for r in "4321"] + ["7S", "8S", "9S", "10S", "JS", "NS", "QS",
                                                                           "KS", "JC", "NC"]})
    game = Both(3, deck).apply("bid:pass bid:pass bid:klop")
    assert "play:T1" not in game.legal() and "play:T5" in game.legal()


# ---------------------------------------------------------------------------------------------- king calling, talon

KING_DECK = make_deck(4, {
    0: ["T20", "T19", "T18", "T17", "T16", "T15", "7S", "8S", "9S", "7C", "8C", "9C"],
    1: ["2H", "T2"], 2: ["1H", "T3"], 3: ["JH", "T4"],
}, talon=["KH", "4H", "3H", "T21", "10C", "JC"])


def test_a_king_called_from_the_talon_takes_the_talons_rest_and_cancels_the_mond_penalty():
    game = Both(4, KING_DECK).apply("bid:pass bid:pass bid:pass")
    assert "bid:three" in game.legal()
    game.apply("bid:three")
    assert game.legal() == {"call:KH", "call:KD", "call:KS", "call:KC"} and game.engine.phase == "king_call"
    game.apply("call:KH")
    assert game.legal() == {"talon:0", "talon:1"} and game.player() == 0 and game.engine.phase == "talon_choice"
    assert game.engine._env.state.meta[0, 7] == 1  # STOCK_SHOWN: the talon is face up before the choice
    game.apply("talon:0")  # KH 4H 3H; the Mond stays in the talon: his penalty, for now
    assert game.engine.phase == "discard"
    assert game.legal() == {"discard:" + c for c in ("4H", "3H", "7S", "8S", "9S", "7C", "8C", "9C")}
    game.apply("discard:4H discard:3H discard:7S")
    assert game.player() == 0 and game.engine.phase == "play"  # forehand leads
    assert "play:KH" in game.legal()
    game.apply("play:KH")
    assert "play:2H" in game.legal() and all(c.endswith("H") for c in game.legal())  # follow suit
    game.apply("play:2H play:1H play:JH")
    assert game.player() == 0  # the called King won: the talon's rest (T21 10C JC) is his
    assert game.oracle.collected[0][-3:] == ["T21", "10C", "JC"]
    deck = game.engine.game.deck
    st = game.engine._env.state
    assert deck.card_id("T21") in deck.cards_of(st.cards[0, WON])
    assert not st.cards[0, STOCK].any()
    game.finish()
    out = game.engine.outcome()
    assert out["details"]["king_in_talon"] and out["details"]["partner"] is None
    assert out["details"]["mond_penalty"] is None and out["sides"] == [[0], [1, 2, 3]]


def test_the_mond_left_in_the_talon_costs_the_declarer_20():
    game = Both(4, KING_DECK).apply("bid:pass bid:pass bid:pass bid:three call:KS talon:0")
    game.apply("discard:4H discard:3H discard:7S")
    returns = game.finish()
    out = game.engine.outcome()
    assert out["details"]["mond_penalty"] == 0 and out["details"]["partner"] == 3  # seat 3 holds the KS
    score = out["details"]["score"]
    assert returns == [score - 20, 0, 0, score]  # the partner scores too, the opponents nothing
    assert {"name": "mond penalty", "side": 0, "points": -20} in out["bonuses"]


def test_discards_taroks_only_when_nothing_else_is_left():
    deck = make_deck(3, {0: [f"T{k}" for k in range(2, 17)] + ["KH"]}, talon=["T1", "T21", "T22", "QH", "T17", "T18"])
    game = Both(3, deck).apply("bid:pass bid:pass bid:three")
    assert game.legal() == {"talon:0", "talon:1"}
    game.apply("talon:0")  # T1 T21 T22: no card but taroks and Kings, so taroks, never the trula
    assert game.legal() == {"discard:" + f"T{k}" for k in range(2, 17)}
    game.apply("discard:T2")
    st = game.engine._env.state
    assert game.engine.game.deck.cards_of(st.cards[0, SHOWN]) == [1]  # a laid-down tarok is shown to all
    assert game.engine.game.deck.cards_of(st.cards[0, DISCARDED]) == [1]


# ---------------------------------------------------------------------------------------------- trick play


def test_the_emperor_trick_and_the_mond_captured_in_a_normal_contract():
    deck = make_deck(3, {0: ["T1", "T5"], 1: ["T21", "T6"], 2: ["T22", "T7"]})
    game = Both(3, deck).apply("bid:pass bid:pass bid:two talon:0")
    game.apply(*sorted(game.legal())[:1])
    game.apply(*sorted(game.legal())[:1])
    assert game.engine.phase == "play" and game.player() == 0
    game.apply("play:T1 play:T21 play:T22")  # the Pagat can be led in a normal contract
    assert game.player() == 0  # the Pagat takes the trula
    assert game.oracle.mond_penalty_seat == 1  # the Mond, captured by the Pagat: its player pays
    returns = game.finish()
    assert returns[1] == -20


def test_colour_valat_taroks_do_not_trump_and_a_lost_trick_ends_the_deal():
    deck = make_deck(3, {1: ["7S", "T2"], 2: [f"T{k}" for k in range(3, 19)], 0: ["KS", "T19"]})
    game = Both(3, deck).apply("bid:colour_valat bid:pass bid:pass bid:colour_valat")
    assert game.player() == 1  # the declarer leads
    game.apply("play:7S")
    assert game.legal() == {"play:" + f"T{k}" for k in range(3, 19)}  # void: a tarok, which cannot win
    game.apply("play:T18 play:KS")
    assert game.done() and game.returns() == [0, -125, 0]
    assert game.engine.outcome()["details"]["won"] is False


def test_beggar_ends_when_the_declarer_takes_a_trick():
    deck = make_deck(3, {1: ["KS", "T2"], 0: ["7S", "T3"], 2: ["8S", "T4"]})
    game = Both(3, deck).apply("bid:beggar bid:pass bid:pass bid:beggar")
    assert game.player() == 1
    game.apply("play:KS")
    assert "play:8S" in game.legal() and all(c.endswith("S") for c in game.legal())  # follow; cannot beat the K
    game.apply("play:8S")
    assert "play:7S" in game.legal() and all(c.endswith("S") for c in game.legal())
    game.apply("play:7S")
    assert game.done() and game.returns() == [0, -70, 0]
    assert len(game.oracle.tricks) == 1


@pytest.mark.parametrize(("contract", "value"), [("beggar", 70), ("solo_without", 80), ("open_beggar", 90),
                                               ("colour_valat", 125), ("valat", 500)])
def test_the_contracts_without_talon_score_the_declarer_alone(contract, value):
    game = Both(4, make_deck(4, {})).apply(f"bid:{contract} bid:pass bid:pass bid:pass bid:{contract}")
    assert game.player() == 1  # the declarer leads
    returns = game.finish()
    out = game.engine.outcome()
    penalty = [-20 if s == out["details"]["mond_penalty"] else 0 for s in range(4)]
    score = value if out["details"]["won"] else -value
    assert returns == [p + (score if s == 1 else 0) for s, p in enumerate(penalty)]


# ---------------------------------------------------------------------------------------------- invariants


@pytest.mark.parametrize("variant", ["tarok3", "tarok4"])
def test_random_deals_conserve_the_cards_and_the_points(variant):
    """Every card in one place at every step (hands, played, talon and discard); at the end the piles, the
    talon's rest and the hands hold 210 thirds; the returns within the bounds, not zero-sum."""
    spec = get_variant(variant)
    n = spec.n_players
    env = BatchEnv(variant, 64, seed=3)
    lo, hi = spec.utility_bounds()
    full = spec.deck.mask_of(spec.deck.names)
    while not env.all_done():
        st = env.state
        for i in range(env.batch_size):
            sets = [st.cards[i, HAND + s] for s in range(n)] + [st.cards[i, 4 + s] for s in range(n)]
            sets += [st.cards[i, STOCK], st.cards[i, DISCARDED]]
            union = np.zeros(2, np.uint64)
            count = 0
            for x in sets:
                assert not (union & x).any()
                union |= x
                count += sum(bin(int(w)).count("1") for w in x)
            assert (union == full).all() and count == 54
        env.step(env.random_actions())
    st, tb = env.state, env.tables
    for i in range(env.batch_size):
        total = 0
        for row in [WON + s for s in range(n)] + [HAND + s for s in range(n)] + [STOCK, DISCARDED]:
            total += card_points(st.cards[i, row, 0], st.cards[i, row, 1], tb)
        assert total == 210
    r = env.returns()
    assert lo <= r.min() and r.max() <= hi


def test_a_given_deal_with_a_hand_without_a_tarok_is_refused_naming_the_seat():
    game = tarocchi_rl.make("tarok4")
    hands = [[f"T{k}" for k in range(1, 13)], [f"T{k}" for k in range(13, 23)] + ["4H", "3H"],
             ["2H", "1H", "JH", "NH", "QH", "KH", "4D", "3D", "2D", "1D", "JD", "ND"],
             ["QD", "KD", "7S", "8S", "9S", "10S", "JS", "NS", "QS", "KS", "7C", "8C"]]
    stock = ["9C", "10C", "JC", "NC", "QC", "KC"]
    with pytest.raises(ValueError, match=r"deal\.hands\[2\] holds no trump"):
        game.state_from_deal(hands, stock)
    env = BatchEnv("tarok4", 2, seed=0)
    good = make_deck(4, {})
    bad = [c for h in hands for c in h] + stock
    decks = np.array([[game.deck.card_id(c) for c in d] for d in (good, bad)])
    with pytest.raises(ValueError, match="game 1: the hand of seat 2 holds no trump"):
        env.set_deals(decks)
    with pytest.raises(ValueError, match="deal: the hand of seat 2 holds no trump, which tarok4 does not deal"):
        Views(game, decks[1].tolist())  # the web table's and the bot protocol's game: never dealt again silently
    assert Views(game, decks[0].tolist()).deck_ids() == decks[0].tolist()


# seeds whose first permutation (numpy's default_rng(seed).permutation(54)) gives a hand without a tarok
REFUSED_FIRST = {"tarok3": (27189, 30561), "tarok4": (92, 98, 527)}


@pytest.mark.parametrize("variant", ["tarok3", "tarok4"])
def test_the_bot_protocols_new_games_deal_only_what_the_rules_deal(variant):
    """The referee's ``new`` draws a deal from the request's seed: one the rules refuse is drawn again, never an
    error."""
    spec, referee = get_variant(variant), Referee()
    for seed in REFUSED_FIRST[variant]:
        assert spec.refused_hand(np.random.default_rng(seed).permutation(54)[None]) is not None
    for seed in (*REFUSED_FIRST[variant], 0, 1, 2):
        assert referee.handle(json.dumps({"type": "new", "variant": variant, "seed": seed}))["type"] == "turn"
        assert referee.views is not None and spec.refused_hand(np.array([referee.views.deck_ids()])) is None


@pytest.mark.parametrize("variant", ["tarok3", "tarok4"])
def test_the_engines_own_deals_give_every_hand_a_tarok(variant):
    env = BatchEnv(variant, 256, seed=5)
    env.reset()
    deck, n = env.spec.deck, env.num_players
    h = env.spec.hand_sizes[0]
    hands = env.state.deck[:, : n * h].reshape(256, n, h)
    assert (deck.suit[hands] == TRUMP).any(axis=2).all()


def test_a_rebuilt_view_keeps_the_void_shown_by_a_tarok_on_a_suit_lead():
    """The bot protocol's rebuild of seat 1's view (the referee's tarok3 deal of seed 0): seat 2's T14 on a diamond
    lead, with the other unseen diamonds then all in the declarer's face-down discard. The redraw tries the play on
    samples where seat 2 still holds diamonds; the void it shows must be kept (it was once dropped as if the
    family's rules had forced the card, and no deal was found)."""
    hist = ["1:bid:pass", "2:bid:pass", "0:bid:three;stock:T15,KH,10S,1D,T16,3D", "0:talon:0", "0:discard:?",
            "0:discard:?", "0:discard:?", "0:play:KS", "1:play:JS", "2:play:7S", "0:play:T22", "1:play:T2",
            "2:play:T6", "0:play:T21", "1:play:T7", "2:play:T8", "0:play:10S", "1:play:T9", "2:play:QS", "1:play:KD",
            "2:play:2D", "0:play:T3", "0:play:3H", "1:play:JH", "2:play:1H", "1:play:4H", "2:play:T10", "0:play:2H",
            "2:play:KC", "0:play:T4", "1:play:8C", "0:play:NH", "1:play:T17", "2:play:T13", "1:play:4D",
            "2:play:T14"]
    hand = ["T1", "T2", "T7", "T9", "T17", "T18", "T20", "4H", "JH", "4D", "KD", "JS", "8C", "10C", "JC", "NC"]
    game = tarocchi_rl.make("tarok3")
    v = rebuild(game, 1, hand, hist, 0)
    cards = v.state._env.state.cards[0]
    assert {game.deck.names[c] for c in game.deck.cards_of(cards[DISCARDED])} == {"JD", "ND", "QD"}
    assert not [c for c in game.deck.cards_of(cards[HAND + 2]) if game.deck.names[c].endswith("D")]


@pytest.mark.parametrize("variant", ["tarok3", "tarok4"])
def test_the_king_call_and_the_talon_are_phases_of_their_own_shown_as_the_bidding(variant):
    """The king call and the talon choice are tarok's own phases (kind bid, part of the auction), and
    the observation shows them in the bidding's slot, as the shipped networks were trained (one phase then)."""
    from tarocchi_rl.core.obs_layout import S_PHASE
    from tarocchi_rl.variants import tarok
    from tarocchi_rl.variants.phases import BIDDING_PHASES, PHASE_NAMES

    assert PHASE_NAMES[tarok.KING_CALL] == "king_call" and PHASE_NAMES[tarok.TALON_CHOICE] == "talon_choice"
    assert {tarok.BID, tarok.KING_CALL, tarok.TALON_CHOICE} <= set(BIDDING_PHASES)
    players = int(variant[-1])
    game = Both(players, make_deck(players, {}))
    game.apply(" ".join(["bid:pass"] * (players - 1)) + " bid:three")
    state = game.engine._env.state
    seen = {game.phase()}
    while game.engine.phase in ("bid", "king_call", "talon_choice"):
        obs = game.engine.observation(game.player())
        slot = game.engine._env.tables.obs[S_PHASE]
        assert obs[slot + tarok.BID] == 1 and obs[slot : slot + 11].sum() == 1
        assert state.meta[0, 0] in (tarok.KING_CALL, tarok.TALON_CHOICE)
        game.apply(min(game.legal()))
        seen.add(game.phase())
    assert seen >= ({"king_call", "talon_choice"} if players == 4 else {"talon_choice"})
