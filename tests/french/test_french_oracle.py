"""Tests of the independent French Tarot oracle (tests/oracle_french.py) on its own, written with card names.

Points in the comments are in HALF points (deck 182) unless written "pts". Card values in half points:
oudler (T1, T21, EX) 9, K 9, Q 7, N 5, J 3, any other card 1. Targets: 0 oudlers 112, 1: 102, 2: 82, 3: 72.
Score: T = s*(25 + d)*mult + pab + s*poignee + chelem, d = |points - target| in whole points, a half point
rounded up (d = ceil(|half_points - target_half| / 2)).
"""

from __future__ import annotations

import copy
import random

import pytest
from oracle_french import FrenchOracle, full_deck, half_points_of

BID_ORDER = ("pass", "prise", "garde", "garde_sans", "garde_contre")
RANKS = ("K", "Q", "N", "J", "10", "9", "8", "7", "6", "5", "4", "3", "2", "1")


def suit(s: str, ranks: str | None = None) -> list[str]:
    """Cards of suit s: suit("S", "K Q 1") -> ["KS", "QS", "1S"]; all 14 (K..1) when ranks is None."""
    names = RANKS if ranks is None else ranks.split()
    return [r + s for r in names]


def pips(s: str, hi: int, lo: int) -> list[str]:
    """Pip cards of suit s from hi down to lo: pips("S", 8, 3) -> ["8S", ..., "3S"]."""
    return [f"{i}{s}" for i in range(hi, lo - 1, -1)]


def trumps(hi: int, lo: int) -> list[str]:
    """Trumps from T<hi> down to T<lo>."""
    return [f"T{i}" for i in range(hi, lo - 1, -1)]


def make_deal(n: int, fixed: dict[int, list[str]], chien: list[str] | None = None):
    """Hands with the given cards first, the rest filled in deck order (suits, then trumps, then EX):
    seats 0..n-1, then the chien."""
    size = 24 if n == 3 else 18
    used = [c for cards in fixed.values() for c in cards] + list(chien or [])
    rest = [c for c in full_deck() if c not in used]
    hands = []
    for seat in range(n):
        hand = list(fixed.get(seat, []))
        while len(hand) < size:
            hand.append(rest.pop(0))
        hands.append(hand)
    chien = list(chien) if chien is not None else [rest.pop(0) for _ in range(6)]
    assert not rest
    return hands, chien


def random_deal(n: int, rng: random.Random):
    deck = full_deck()
    rng.shuffle(deck)
    size = 24 if n == 3 else 18
    return [deck[size * i : size * i + size] for i in range(n)], deck[size * n :]


def hands_from_tricks(n, tricks, taker=None, chien=(), discards=()):
    """The deal implied by a scripted game: in each (leader, cards) trick card i is played by seat
    (leader + i) % n. The taker who took the chien held his played cards + discards - chien."""
    hands = [[] for _ in range(n)]
    for leader, cards in tricks:
        assert len(cards) == n
        for i, card in enumerate(cards):
            hands[(leader + i) % n].append(card)
    if discards:
        hands[taker].extend(discards)
        for card in chien:
            hands[taker].remove(card)
    size = 24 if n == 3 else 18
    assert all(len(h) == size for h in hands), [len(h) for h in hands]
    return hands


def play_tricks(oracle: FrenchOracle, n: int, tricks, poignees=None) -> None:
    """Plays the scripted tricks; a pending poignee decision gets poignees[seat] (default "pass")."""
    poignees = poignees or {}
    for leader, cards in tricks:
        for i, card in enumerate(cards):
            seat = (leader + i) % n
            assert oracle.current_player() == seat
            if "pass" in oracle.legal_actions():  # in the play phase only a poignee decision offers "pass"
                oracle.apply(poignees.get(seat, "pass"))
                assert oracle.current_player() == seat
            oracle.apply("play:" + card)


def run_scripted(n, chien, tricks, bids, discards=(), chelem="pass", poignees=None):
    taker = max(range(n), key=lambda s: BID_ORDER.index(bids[s]))
    hands = hands_from_tricks(n, tricks, taker, chien, discards)
    oracle = FrenchOracle(hands, list(chien), n_players=n)
    for seat, bid in enumerate(bids):
        assert oracle.current_player() == seat
        oracle.apply(bid)
    for card in discards:
        assert oracle.current_player() == taker
        oracle.apply("discard:" + card)
    assert oracle.current_player() == taker and oracle.legal_actions() == {"pass", "chelem"}
    oracle.apply(chelem)
    play_tricks(oracle, n, tricks, poignees)
    assert oracle.is_terminal() and oracle.current_player() == -1 and oracle.legal_actions() == set()
    return oracle


def expect(oracle, **fields):
    score = oracle.score()
    for key, value in fields.items():
        assert score[key] == value, (key, score[key], value)
    assert score["T"] == score["base"] + score["petit_au_bout"] + score["poignee"] + score["chelem"]
    assert score["half_points"] == oracle.taker_half_points()
    assert sum(oracle.returns()) == 0


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


@pytest.mark.parametrize("n", [3, 4])
def test_all_pass_is_void(n):
    hands, chien = make_deal(n, {})
    oracle = FrenchOracle(hands, chien, n_players=n)
    with pytest.raises(RuntimeError):
        oracle.returns()
    for seat in range(n):
        assert oracle.current_player() == seat
        assert oracle.legal_actions() == {"pass", "prise", "garde", "garde_sans", "garde_contre"}
        oracle.apply("pass")
    assert oracle.is_terminal() and oracle.current_player() == -1 and oracle.legal_actions() == set()
    assert oracle.returns() == [0] * n
    assert oracle.score()["taker"] == -1 and oracle.score()["T"] == 0
    assert oracle.taker_half_points() == 0
    with pytest.raises(ValueError):
        oracle.apply("pass")


def test_bidding_must_go_higher_and_highest_bidder_takes():
    hands, chien = make_deal(3, {})
    oracle = FrenchOracle(hands, chien)
    oracle.apply("garde")
    assert oracle.current_player() == 1
    assert oracle.legal_actions() == {"pass", "garde_sans", "garde_contre"}
    for bad in ("prise", "garde", "discard:KS", "play:KS", "chelem"):
        with pytest.raises(ValueError):
            oracle.apply(bad)
    oracle.apply("garde_sans")
    assert oracle.legal_actions() == {"pass", "garde_contre"}
    oracle.apply("pass")
    # garde sans: the taker is seat 1, no discard, the chelem decision comes at once
    assert oracle.taker == 1 and oracle.contract == "garde_sans"
    assert oracle.current_player() == 1 and oracle.legal_actions() == {"pass", "chelem"}
    assert len(oracle.hands[1]) == 24
    oracle.apply("pass")
    assert oracle.current_player() == 0  # seat 0 leads (poignee decision first)
    assert oracle.legal_actions() == {"pass"}


def test_prise_takes_the_chien_and_taker_discards():
    hands, chien = make_deal(4, {})
    oracle = FrenchOracle(hands, chien, n_players=4)
    for bid in ("pass", "prise", "pass", "pass"):
        oracle.apply(bid)
    assert oracle.taker == 1 and oracle.current_player() == 1
    assert len(oracle.hands[1]) == 24 and set(chien) <= set(oracle.hands[1])
    assert all(a.startswith("discard:") for a in oracle.legal_actions())


def test_garde_contre_skips_discard_then_announced_chelem_taker_leads():
    hands, chien = make_deal(4, {})
    oracle = FrenchOracle(hands, chien, n_players=4)
    for bid in ("pass", "pass", "garde_contre", "pass"):
        oracle.apply(bid)
    assert oracle.current_player() == 2 and oracle.legal_actions() == {"pass", "chelem"}
    oracle.apply("chelem")
    assert oracle.current_player() == 2


# ---------------------------------------------------------------------------------------------- petit sec


@pytest.mark.parametrize("n", [3, 4])
def test_petit_sec_ends_the_deal(n):
    size = 24 if n == 3 else 18
    seat1 = ["T1"] + suit("S") + suit("H")[: size - 15]  # T1 the only trump, no EX
    hands, chien = make_deal(n, {1: seat1})
    oracle = FrenchOracle(hands, chien, n_players=n)
    assert oracle.is_terminal() and oracle.current_player() == -1 and oracle.legal_actions() == set()
    assert oracle.returns() == [0] * n
    assert oracle.score()["T"] == 0
    with pytest.raises(ValueError):
        oracle.apply("pass")


@pytest.mark.parametrize("extra", ["EX", "T2"])
def test_t1_with_excuse_or_another_trump_is_not_petit_sec(extra):
    seat1 = ["T1", extra] + suit("S") + suit("H")[:8]
    hands, chien = make_deal(3, {1: seat1})
    oracle = FrenchOracle(hands, chien)
    assert not oracle.is_terminal() and oracle.current_player() == 0


# ---------------------------------------------------------------------------------------------- discards


def test_discard_no_kings_no_oudlers_trumps_only_when_unavoidable():
    # The taker (seat 0) holds after the chien: 4 Kings, T1 T21 EX, 1S..4S and T2..T20 (30 cards).
    seat0 = suit("S", "K") + suit("H", "K") + suit("D", "K") + suit("C", "K") + ["T1", "T21", "EX"]
    seat0 += pips("S", 4, 1) + trumps(14, 2)
    hands, chien = make_deal(3, {0: seat0}, chien=trumps(20, 15))
    oracle = FrenchOracle(hands, chien)
    for bid in ("prise", "pass", "pass"):
        oracle.apply(bid)
    spades = {"discard:" + c for c in pips("S", 4, 1)}
    all_trumps = {"discard:" + c for c in trumps(20, 2)}
    # 4 allowed suit cards < 6 to make: non-oudler trumps allowed too; never Kings nor oudlers
    assert oracle.legal_actions() == spades | all_trumps
    oracle.apply("discard:T2")
    assert oracle.legal_actions() == spades | (all_trumps - {"discard:T2"})  # 4 < 5
    oracle.apply("discard:T20")
    assert oracle.legal_actions() == spades  # 4 allowed suit cards, 4 discards to make: no trump now
    with pytest.raises(ValueError):
        oracle.apply("discard:T15")
    with pytest.raises(ValueError):
        oracle.apply("discard:KS")
    oracle.apply("discard:1S")
    assert oracle.legal_actions() == spades - {"discard:1S"}
    for card in ("2S", "3S", "4S"):
        oracle.apply("discard:" + card)
    assert oracle.discards == ["T2", "T20", "1S", "2S", "3S", "4S"]
    assert len(oracle.hands[0]) == 24 and oracle.legal_actions() == {"pass", "chelem"}
    # the discard counts for the taker at once: 6 half points
    assert oracle.taker_half_points() == 6


def test_discard_with_enough_suit_cards_never_allows_trumps():
    hands, chien = make_deal(3, {})  # seat 0: 14 spades + KH..5H; chien T17..T21, EX
    assert chien == trumps(21, 17)[::-1] + ["EX"]
    oracle = FrenchOracle(hands, chien)
    for bid in ("garde", "pass", "pass"):
        oracle.apply(bid)
    expected = {"discard:" + c for c in hands[0] if c[0] != "K"}
    assert oracle.legal_actions() == expected and len(expected) == 22


# ---------------------------------------------------------------------------------------------- card play


def _legality_deal():
    # seat 0: 14 spades + T1 T2 T4 T6..T9 T11 T12 T21; seat 1: T10 T20 + 14 hearts + KD..7D (no spade);
    # seat 2: T3 T5 T15 T18 EX + 6D..1D + KC..2C (no spade); chien: T13 T14 T16 T17 T19 1C.
    seat0 = suit("S") + ["T1", "T2", "T4", "T6", "T7", "T8", "T9", "T11", "T12", "T21"]
    seat1 = ["T10", "T20"] + suit("H") + suit("D")[:8]
    seat2 = ["T3", "T5", "T15", "T18", "EX"] + suit("D")[8:] + suit("C")[:13]
    chien = ["T13", "T14", "T16", "T17", "T19", "1C"]
    oracle = FrenchOracle([seat0, seat1, seat2], chien)
    for action in ("garde_sans", "pass", "pass", "pass"):
        oracle.apply(action)
    assert oracle.current_player() == 0 and oracle.legal_actions() == {"pass"}  # 10 trumps: no poignee
    oracle.apply("pass")
    return oracle


def _plays(cards):
    return {"play:" + c for c in cards}


def test_void_must_trump_then_overtrump_or_undertrump():
    oracle = _legality_deal()
    oracle.apply("play:KS")
    oracle.apply("pass")  # seat 1's poignee decision
    assert oracle.legal_actions() == _plays(["T10", "T20"])  # void in spades: must trump
    after_t10 = copy.deepcopy(oracle)
    after_t10.apply("play:T10")
    after_t10.apply("pass")
    assert after_t10.legal_actions() == _plays(["T15", "T18", "EX"])  # must overtrump T10 (EX always)
    after_t20 = copy.deepcopy(oracle)
    after_t20.apply("play:T20")
    after_t20.apply("pass")
    assert after_t20.legal_actions() == _plays(["T3", "T5", "T15", "T18", "EX"])  # unable: any lower trump
    after_t20.apply("play:T5")
    assert after_t20.tricks[0]["winner"] == 1
    assert after_t20.current_player() == 1
    assert "pass" not in after_t20.legal_actions()  # the poignee decision is only at the first turn


@pytest.mark.parametrize(
    "lead, seat1_legal, seat1_card, seat2_legal",
    [
        ("T9", ["T10", "T20"], "T10", ["T15", "T18", "EX"]),
        ("T9", ["T10", "T20"], "T20", ["T3", "T5", "T15", "T18", "EX"]),
        ("T12", ["T20"], "T20", ["T3", "T5", "T15", "T18", "EX"]),
        ("T21", ["T10", "T20"], "T10", ["T3", "T5", "T15", "T18", "EX"]),
        ("T1", ["T10", "T20"], "T10", ["T15", "T18", "EX"]),
    ],
)
def test_trump_lead_requires_higher_trump(lead, seat1_legal, seat1_card, seat2_legal):
    oracle = _legality_deal()
    oracle.apply("play:" + lead)
    oracle.apply("pass")
    assert oracle.legal_actions() == _plays(seat1_legal)
    oracle.apply("play:" + seat1_card)
    oracle.apply("pass")
    assert oracle.legal_actions() == _plays(seat2_legal)


def test_follow_suit_and_excuse_lead():
    # seat 0: EX 1H + 14 spades + T1..T8; seat 1: 13 hearts KH..2H + T9..T19; seat 2: 14 diamonds + KC..5C
    seat0 = ["EX", "1H"] + suit("S") + trumps(8, 1)
    seat1 = suit("H")[:13] + trumps(19, 9)
    seat2 = suit("D") + suit("C")[:10]
    chien = suit("C")[10:] + ["T20", "T21"]
    oracle = FrenchOracle([seat0, seat1, seat2], chien)
    for action in ("garde_contre", "pass", "pass", "pass"):
        oracle.apply(action)
    oracle.apply("pass")  # seat 0: 8 trumps + EX = 9 < 13, no poignee
    assert oracle.legal_actions() == _plays(seat0)  # the leader may play anything, EX included
    hearts = copy.deepcopy(oracle)
    hearts.apply("play:1H")
    hearts.apply("pass")
    assert hearts.legal_actions() == _plays(suit("H")[:13])  # must follow suit (no trump allowed)
    hearts.apply("play:2H")
    hearts.apply("pass")
    assert hearts.legal_actions() == _plays(seat2)  # void, no trump: any card
    hearts.apply("play:KD")
    assert hearts.tricks[0]["winner"] == 1  # 2H beats 1H; KD is off-suit

    oracle.apply("play:EX")
    oracle.apply("pass")
    assert oracle.legal_actions() == _plays(seat1)  # after a led EX the next player plays anything


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


def test_defender_excuse_in_a_trick_the_taker_wins():
    # seat 0 (taker) KS + 14 hearts + T1..T9; seat 1: EX + 14 diamonds + T10..T18; seat 2: QS..1S + KC..4C.
    seat0 = ["KS"] + suit("H") + trumps(9, 1)
    seat1 = ["EX"] + suit("D") + trumps(18, 10)
    seat2 = suit("S")[1:] + suit("C")[:11]
    chien = suit("C")[11:] + trumps(21, 19)  # 3C 2C 1C T21 T20 T19: 1+1+1+9+1+1 = 14
    oracle = FrenchOracle([seat0, seat1, seat2], chien)
    for action in ("garde_contre", "pass", "pass", "pass", "pass"):
        oracle.apply(action)
    oracle.apply("play:KS")
    oracle.apply("pass")
    assert oracle.legal_actions() == _plays(trumps(18, 10) + ["EX"])
    oracle.apply("play:EX")
    oracle.apply("pass")
    oracle.apply("play:1S")
    assert oracle.tricks[0]["winner"] == 0
    # taker: KS 9 + 1S 1 + exchange 1 = 11; defence: chien 14 + EX 9 - 1 = 22
    assert oracle.taker_half_points() == 11
    assert oracle.defence_half_points() == 22


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


def test_poignee_counts_the_hand_after_taking_the_chien():
    # seat 0 holds 12 trumps (T2..T13), the chien brings T14: 13 at his first card -> simple (3 players)
    seat0 = trumps(13, 2) + suit("S")[1:13]
    hands, chien = make_deal(3, {0: seat0}, chien=["T14"] + suit("H")[9:])
    oracle = FrenchOracle(hands, chien)
    for action in ("prise", "pass", "pass"):
        oracle.apply(action)
    for card in suit("H")[9:] + ["2S"]:
        oracle.apply("discard:" + card)
    oracle.apply("pass")
    assert oracle.legal_actions() == {"pass", "poignee:simple"}


# ---------------------------------------------------------------------------------------------- full deals
#
# Each deal below is written trick by trick as (leader, cards in playing order); the hands are derived from
# the tricks, so every card of the deal appears exactly once (checked by the oracle's validation).


def test_score_prise_made_with_excuse_exchange_and_petit_au_bout():
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
    oracle = run_scripted(3, chien, tricks, ["prise", "pass", "pass"], discards=chien)
    # Defence: 11 + 9 + 8 + 1 = 29; taker 182 - 29 = 153 (76.5 pts), discard 3S..8S included.
    # Oudlers kept: T1, T21, EX -> 3 -> target 36 pts = 72. Diff 81 half points = 40.5 pts, rounded in
    # favour of the taker (who scores) to 41. base = +(25 + 41) * 1 = 66; pab +10*1; no poignee, no chelem.
    # T = 76: taker +2T = 152, defenders -76.
    assert oracle.defence_half_points() == 29
    expect(
        oracle,
        taker=0,
        contract="prise",
        half_points=153,
        target=72,
        made=True,
        base=66,
        petit_au_bout=10,
        poignee=0,
        chelem=0,
        T=76,
    )
    assert oracle.returns() == [152, -76, -76]


def test_score_garde_failed_petit_au_bout_to_defence_and_defence_poignee():
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
    bids = ["pass", "garde", "pass"]
    oracle = run_scripted(3, chien, tricks, bids, discards=chien, poignees={2: "poignee:double"})
    # Taker: discard 6 + trick 1 9 = 15 (7.5 pts), 0 oudlers -> target 56 pts = 112.
    # Diff -97 half points = 48.5 pts, rounded in favour of the defence to 49. s = -1.
    # base = -(25 + 49) * 2 = -148; pab: T1 in the last trick, won by the defence: -10*2 = -20;
    # poignee double 30 to the winning side (defence): -30. T = -198: taker 2T = -396, defenders +198.
    expect(
        oracle,
        taker=1,
        contract="garde",
        half_points=15,
        target=112,
        made=False,
        base=-148,
        petit_au_bout=-20,
        poignee=-30,
        chelem=0,
        T=-198,
    )
    assert oracle.returns() == [198, -396, 198]
    assert oracle.poignees == [(2, "double")]


def test_score_garde_sans_4_players_with_taker_poignee():
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
    bids = ["garde_sans", "pass", "pass", "pass"]
    oracle = run_scripted(4, chien, tricks, bids, poignees={0: "poignee:triple"})
    # Taker: 182 - 12 = 170 (85 pts) with T21, T1 and EX (chien) -> target 36 pts = 72. Diff 98 = 49 pts.
    # base = (25 + 49) * 4 = 296; T1 never played: pab 0; poignee triple +40; T = 336.
    # taker +3T = 1008, each defender -336.
    expect(
        oracle,
        taker=0,
        contract="garde_sans",
        half_points=170,
        target=72,
        made=True,
        base=296,
        petit_au_bout=0,
        poignee=40,
        chelem=0,
        T=336,
    )
    assert oracle.returns() == [1008, -336, -336, -336]


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


def test_score_garde_contre_chien_counts_for_defence():
    chien, tricks = _garde_contre_tricks()
    oracle = run_scripted(3, chien, tricks, ["pass", "pass", "garde_contre"])
    # Defence: chien 48 + 7 + 8 + 1 + 7 = 71; taker 182 - 71 = 111 (55.5 pts), oudlers T1 T21 EX -> 72.
    # Diff 39 half points = 19.5 pts -> 20 (the taker scores). base = (25 + 20) * 6 = 270; pab +10*6 = 60.
    # T = 330: taker +660, defenders -330.
    assert oracle.defence_half_points() == 71
    expect(
        oracle,
        taker=2,
        contract="garde_contre",
        half_points=111,
        target=72,
        made=True,
        base=270,
        petit_au_bout=60,
        poignee=0,
        chelem=0,
        T=330,
    )
    assert oracle.returns() == [-330, -330, 660]


def test_same_deal_garde_sans_chien_counts_for_taker():
    chien, tricks = _garde_contre_tricks()
    oracle = run_scripted(3, chien, tricks, ["pass", "pass", "garde_sans"])
    # Taker: 111 + chien 48 = 159 (79.5 pts); diff 87 = 43.5 -> 44; base (25 + 44) * 4 = 276; pab +40.
    expect(oracle, half_points=159, target=72, made=True, base=276, petit_au_bout=40, T=316)
    assert oracle.returns() == [-316, -316, 632]


def test_score_unannounced_chelem_with_excuse_last():
    # 3 players, seat 0 garde sans (x4): T1..T21, EX, KS, KH; chien 1S..6S (for the taker).
    chien = pips("S", 6, 1)
    seat1_rest = ["NS", "JS", "10S"] + suit("H")[2:] + suit("D", "K Q N J 10 9 8")  # 3 + 12 + 7 = 22
    seat2_rest = ["7S"] + pips("D", 7, 2) + suit("C") + ["1D"]  # 1 + 6 + 14 + 1 = 22
    tricks = [(0, ["KS", "QS", "9S"]), (0, ["KH", "QH", "8S"])]
    for k, trump in enumerate(trumps(21, 2) + ["T1"]):  # 20 trump leads, then T1 (second-to-last trick)
        tricks.append((0, [trump, seat1_rest[k], seat2_rest[k]]))
    tricks.append((0, ["EX", seat1_rest[21], seat2_rest[21]]))  # 8D sets diamonds, but EX wins (chelem)
    oracle = run_scripted(3, chien, tricks, ["garde_sans", "pass", "pass"])
    assert oracle.tricks[-1]["winner"] == 0
    # Taker wins every trick: 182 (91 pts), 3 oudlers -> 72; diff 110 = 55 pts; base (25 + 55) * 4 = 320.
    # Chelem made with EX last: T1 in the second-to-last trick is au bout: +10*4 = 40.
    # Unannounced chelem made: +200. T = 560: taker +1120, defenders -560.
    expect(
        oracle,
        half_points=182,
        target=72,
        made=True,
        base=320,
        petit_au_bout=40,
        poignee=0,
        chelem=200,
        T=560,
    )
    assert oracle.returns() == [1120, -560, -560]


def test_score_announced_chelem_made_4_players_with_forced_trump_discards():
    # 4 players, seat 2 prise (x1). Seat 2: T4..T21; chien T1 T2 T3 EX KS QS.
    chien = ["T1", "T2", "T3", "EX", "KS", "QS"]
    seat3_rest = pips("D", 4, 1) + suit("C")  # 18
    seat0_rest = suit("S")[2:] + suit("H")[:6]  # 12 + 6
    seat1_rest = pips("H", 8, 1) + suit("D")[:10]  # 8 + 10
    tricks = []
    for k, card in enumerate(["KS"] + trumps(21, 7) + ["T1", "EX"]):  # 18 leads by the taker
        tricks.append((2, [card, seat3_rest[k], seat0_rest[k], seat1_rest[k]]))
    hands = hands_from_tricks(4, tricks, 2, chien, ["T2", "T3", "T4", "T5", "T6", "QS"])
    assert sorted(hands[2]) == sorted(trumps(21, 4))
    oracle = FrenchOracle(hands, chien, n_players=4)
    for bid in ("pass", "pass", "prise", "pass"):
        oracle.apply(bid)
    # After the chien: T1..T21, EX, KS, QS. Only QS is an allowed suit card: trumps T2..T20 allowed.
    assert oracle.legal_actions() == {"discard:QS"} | {"discard:" + t for t in trumps(20, 2)}
    for card in ("T2", "T3", "T4", "T5", "T6"):
        oracle.apply("discard:" + card)
    assert oracle.legal_actions() == {"discard:QS"}  # 1 allowed suit card for 1 discard: no trump now
    oracle.apply("discard:QS")
    oracle.apply("chelem")
    assert oracle.current_player() == 2  # the taker leads after announcing
    assert oracle.legal_actions() == {"pass", "poignee:simple", "poignee:double", "poignee:triple"}
    play_tricks(oracle, 4, tricks, poignees={2: "poignee:triple"})
    # Taker: every trick + discard (T2..T6 5 + QS 7 = 12) = 182; 3 oudlers -> 72; diff 110 = 55 pts.
    # base (25 + 55) * 1 = 80; T1 in the second-to-last trick (EX wins the last): pab +10; poignee: T1,
    # T7..T21 and EX = 17 -> triple +40; chelem announced and made +400. T = 530: taker 3T = 1590.
    expect(
        oracle,
        taker=2,
        half_points=182,
        target=72,
        made=True,
        base=80,
        petit_au_bout=10,
        poignee=40,
        chelem=400,
        T=530,
    )
    assert oracle.returns() == [-530, -530, 1590, -530]


def test_score_announced_chelem_failed_and_excuse_last_goes_to_winner():
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
    tricks.append((1, ["EX", "1D", "2D"]))  # not a chelem: EX goes to the winner, seat 0: 9 + 1 + 1 = 11
    hands = hands_from_tricks(3, tricks, 1, chien, chien)
    oracle = FrenchOracle(hands, chien)
    for bid in ("pass", "garde", "pass"):
        oracle.apply(bid)
    assert oracle.legal_actions() == {"discard:" + c for c in ["1H"] + chien}
    for card in chien:
        oracle.apply("discard:" + card)
    oracle.apply("chelem")
    play_tricks(oracle, 3, tricks)
    assert oracle.tricks[-1]["winner"] == 0 and "EX" in oracle.defence_cards
    # Defence 11 + 11 = 22; taker 160 (80 pts) with T1 and T21 -> target 41 pts = 82; diff 78 = 39 pts.
    # base (25 + 39) * 2 = 128; T1 was in the second-to-last trick, no chelem: pab 0;
    # chelem announced and failed: -200. T = -72: taker 2T = -144, defenders +72.
    expect(
        oracle,
        taker=1,
        half_points=160,
        target=82,
        made=True,
        base=128,
        petit_au_bout=0,
        poignee=0,
        chelem=-200,
        T=-72,
    )
    assert oracle.returns() == [72, -144, 72]


def _rounding_tricks(first_tricks, seat1_suit_cards, taker_rest, seat2_rest):
    # 3 players, seat 0 garde sans (x4), chien T1 T21 KS KH KD KC (for the taker: 2 oudlers, 18 + 36 = 54).
    # Seat 1 holds T2..T20, EX and four suit cards; seat 2 and the taker no trump.
    tricks = list(first_tricks)
    for k, trump in enumerate(trumps(20, 2)):
        tricks.append((1, [trump, seat2_rest[k], taker_rest[k]]))
    tricks.append((1, ["EX", seat2_rest[19], taker_rest[19]]))  # seat 2 wins with a diamond, EX to him
    hands = hands_from_tricks(3, tricks)
    assert sorted(hands[1]) == sorted(trumps(20, 2) + ["EX"] + seat1_suit_cards)
    return tricks


@pytest.mark.parametrize(
    "variant, half_points, made, base",
    [
        # 54 + 9 + 9 + 9 = 81 = 40.5 pts, needing 41: fails by 0.5 -> 1 in favour of the defence:
        # base = -(25 + 1) * 4 = -104
        ("81", 81, False, -104),
        # 54 + 15 + 13 = 82 = 41 pts exactly: made by 0: base = (25 + 0) * 4 = 100
        ("82", 82, True, 100),
        # 54 + 11 + 9 + 9 = 83 = 41.5 pts: made by 0.5 -> 1: base = (25 + 1) * 4 = 104
        ("83", 83, True, 104),
    ],
)
def test_score_half_point_rounding_three_players(variant, half_points, made, base):
    chien = ["T1", "T21", "KS", "KH", "KD", "KC"]
    if variant in ("81", "83"):
        second = "JS" if variant == "83" else "2S"
        first = [
            (0, ["QS", "1S", second]),  # taker: 7 + 1 + 1 = 9 (83: 7 + 1 + 3 = 11)
            (0, ["QH", "1H", "2H"]),  # taker: 9
            (0, ["QD", "1D", "2D"]),  # taker: 9
            (0, ["1C", "QC", "2C"]),  # seat 1 wins with QC
        ]
        spades = ["JS" if variant == "81" else "2S", "NS"] + pips("S", 10, 3)
        taker_rest = spades + suit("H", "N J 10 9 8 7 6 5 4 3")  # 20
        seat2_rest = suit("C", "N J 10 9 8 7 6 5 4 3") + suit("D", "N J 10 9 8 7 6 5 4 3")  # last: 3D
        tricks = _rounding_tricks(first, ["1S", "1H", "1D", "QC"], taker_rest, seat2_rest)
    else:
        first = [
            (0, ["QS", "NS", "JS"]),  # taker: 7 + 5 + 3 = 15
            (0, ["QH", "NH", "1H"]),  # taker: 7 + 5 + 1 = 13
            (0, ["1C", "QC", "2C"]),  # seat 1 wins with QC
            (1, ["NC", "JC", "1D"]),  # seat 1 wins with NC; the taker has no club
        ]
        taker_rest = pips("S", 10, 1) + suit("H", "J 10 9 8 7 6 5 4 3 2")  # 20
        seat2_rest = pips("C", 10, 3) + suit("D", "Q N J 10 9 8 7 6 5 4 3 2")  # 8 + 12, last: 2D
        tricks = _rounding_tricks(first, ["NS", "NH", "QC", "NC"], taker_rest, seat2_rest)
    oracle = run_scripted(3, chien, tricks, ["garde_sans", "pass", "pass"])
    assert oracle.tricks[-1]["winner"] == 2
    expect(
        oracle,
        taker=0,
        half_points=half_points,
        target=82,
        made=made,
        base=base,
        petit_au_bout=0,
        poignee=0,
        chelem=0,
        T=base,
    )
    assert oracle.returns() == [2 * base, -base, -base]


def test_score_defence_wins_every_trick():
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
    oracle = run_scripted(3, chien, tricks, ["prise", "pass", "pass"], discards=chien)
    # Taker: only the discard, 6 (3 pts), 0 oudlers -> 112; diff -106 = 53 pts; base -(25 + 53) * 1 = -78;
    # pab -10; the defence won every trick: chelem -200. T = -288: taker -576, defenders +288.
    expect(
        oracle,
        taker=0,
        half_points=6,
        target=112,
        made=False,
        base=-78,
        petit_au_bout=-10,
        poignee=0,
        chelem=-200,
        T=-288,
    )
    assert oracle.returns() == [-576, 288, 288]


def test_excuse_led_last_by_defence_never_wins():
    # The defence wins tricks 1..23, then seat 2 leads EX to the last trick: no chelem exception for the
    # defence, the taker's 5D beats seat 1's 1D and the taker gets the trick, EX included.
    chien = pips("H", 6, 1)
    seat2_rest = suit("D")[:9] + suit("C")[:12]  # 21: KD..6D, KC..3C
    taker_rest = suit("S")[1:13] + suit("H", "Q N J 10 9 8") + ["2D", "3D"]  # 20
    tricks = [(0, ["1S", "T2", "KS"])]
    for k, trump in enumerate(trumps(21, 3) + ["T1"]):
        tricks.append((1, [trump, seat2_rest[k], taker_rest[k]]))
    tricks += [
        (1, ["KH", seat2_rest[20], "7H"]),
        (1, ["1C", "2C", "4D"]),  # seat 2 wins with 2C
        (2, ["EX", "5D", "1D"]),  # 5D sets diamonds: the taker wins the last trick
    ]
    oracle = run_scripted(3, chien, tricks, ["prise", "pass", "pass"], discards=chien)
    assert oracle.tricks[-1]["winner"] == 0 and "EX" in oracle.taker_cards
    # Taker: discard 6 + EX 9 + 5D 1 + 1D 1 = 17, 1 oudler -> 51 pts = 102; diff -85 = 42.5 -> 43 pts.
    # base -(25 + 43) * 1 = -68; T1 in trick 21: no pab; the defence did not win every trick: no chelem.
    expect(oracle, half_points=17, target=102, made=False, base=-68, petit_au_bout=0, chelem=0, T=-68)
    assert oracle.returns() == [-136, 68, 68]


# ---------------------------------------------------------------------------------------------- invariants


@pytest.mark.parametrize("n", [3, 4])
def test_random_games_invariants(n):
    rng = random.Random(20240 + n)
    played = 0
    for _ in range(200):
        hands, chien = random_deal(n, rng)
        oracle = FrenchOracle(hands, chien, n_players=n)
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
