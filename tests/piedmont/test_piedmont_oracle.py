"""Tests of the independent Piedmontese oracle (tests/oracle_piedmont.py) on its own, with card names."""

from __future__ import annotations

import random

import pytest
from oracle_piedmont import (
    PiedmontOracle,
    full_deck,
    special_values,
    thirds_of,
    trick_winner_index,
)

SIZES = {"piedmont3": (3, 25, 3), "piedmont4": (4, 19, 2)}  # players, hand size, stock size

COPPE = [r + "C" for r in ("K", "Q", "N", "J", "10", "9", "8", "7", "6", "5", "4", "3", "2", "1")]
DENARI = [c[:-1] + "D" for c in COPPE]
SPADE = [c[:-1] + "S" for c in COPPE]
BASTONI = [c[:-1] + "B" for c in COPPE]


def trumps(lo: int, hi: int) -> list[str]:
    return [f"T{i}" for i in range(lo, hi + 1)]


def make_deal(fixed: dict[int, list[str]], stock: list[str] | None = None, variant: str = "piedmont3"):
    """Hands with the given cards first, the rest filled in deck order (seats 0.., then the stock)."""
    n, size, stock_size = SIZES[variant]
    used = [c for cards in fixed.values() for c in cards] + list(stock or [])
    rest = [c for c in full_deck() if c not in used]
    hands = []
    for seat in range(n):
        hand = list(fixed.get(seat, []))
        while len(hand) < size:
            hand.append(rest.pop(0))
        hands.append(hand)
    stock = list(stock) if stock is not None else [rest.pop(0) for _ in range(stock_size)]
    assert not rest
    return hands, stock


def random_deal(rng: random.Random, variant: str):
    n, size, _ = SIZES[variant]
    deck = full_deck()
    rng.shuffle(deck)
    return [deck[size * i : size * i + size] for i in range(n)], deck[n * size :]


def play_first(oracles: list[PiedmontOracle]) -> None:
    """Play every oracle to the end with the same actions: always the first legal action in sorted order."""
    while not oracles[0].is_terminal():
        action = sorted(oracles[0].legal_actions())[0]
        for oracle in oracles:
            oracle.apply(action)


def apply_all(oracles: list[PiedmontOracle], actions: list[str]) -> None:
    for action in actions:
        for oracle in oracles:
            oracle.apply(action)


def plays(cards: list[str]) -> set[str]:
    return {"play:" + c for c in cards}


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


# ---------------------------------------------------------------------- trick winner


def test_trick_winner_reversed_and_normal_suits():
    assert trick_winner_index(["10D", "1D", "5D"]) == 1  # Denari: 1 > 10
    assert trick_winner_index(["10C", "2C", "1C"]) == 2  # Coppe: 1 > 2 > 10
    assert trick_winner_index(["1S", "10S", "5S"]) == 1  # Spade: 10 > 1
    assert trick_winner_index(["2B", "1B", "3B"]) == 2  # Bastoni: 3 > 2 > 1
    assert trick_winner_index(["1D", "JD", "2D"]) == 1  # courts above all pips, also in the reversed suits
    assert trick_winner_index(["QC", "KC", "NC", "1C"]) == 1
    assert trick_winner_index(["JS", "NS", "10S", "QS"]) == 3
    assert trick_winner_index(["6C", "KS", "5C"]) == 2  # off-suit King never wins; 5C > 6C
    assert trick_winner_index(["9S", "1D", "1C", "8S"]) == 0


def test_trick_winner_trumps_angel_above_world():
    assert trick_winner_index(["T21", "T20", "T19"]) == 1
    assert trick_winner_index(["T20", "T21", "KC"]) == 0
    assert trick_winner_index(["T21", "T19", "T18", "T2"]) == 0
    assert trick_winner_index(["KS", "T1", "QS"]) == 1  # the Bagatto beats any suit card
    assert trick_winner_index(["1D", "T2", "T3", "KD"]) == 2


def test_trick_winner_ex():
    assert trick_winner_index(["EX", "5S", "KS"]) == 2  # led EX: the second card sets the suit
    assert trick_winner_index(["EX", "5S", "KC"]) == 1
    assert trick_winner_index(["EX", "10D", "1D", "T1"]) == 3
    assert trick_winner_index(["QB", "EX", "JB"]) == 0  # EX never wins
    assert trick_winner_index(["2C", "1S", "EX", "3S"]) == 0


# ---------------------------------------------------------------------- EX led / played and the exchange


def ex_deal_3(ex_seat: int):
    """piedmont3 deal: seat 0 EX, 12 Coppe, KD..3D; seat 1 3C, Spade, 2D, 1D, T1..T8; seat 2 (dealer) 9C,
    Bastoni, T9..T21 (T19..T21 in the stock).

    With ex_seat 1, EX and 1D swap places."""
    seat0 = ["EX"] + [c for c in COPPE if c not in ("3C", "9C")] + DENARI[:12]  # DENARI[:12] = KD .. 3D
    seat1 = ["3C"] + SPADE + ["2D", "1D"] + trumps(1, 8)
    seat2 = ["9C"] + BASTONI + trumps(9, 18)
    if ex_seat == 1:
        seat0[0] = "1D"
        seat1[seat1.index("1D")] = "EX"
    return make_deal({0: seat0, 1: seat1, 2: seat2}, stock=["T19", "T20", "T21"])


def test_ex_led_next_card_sets_the_suit_and_exchange():
    hands, stock = ex_deal_3(ex_seat=0)
    with_ex = PiedmontOracle(hands, stock, excuse_exchange=True)
    without = PiedmontOracle(hands, stock, excuse_exchange=False)
    both = [with_ex, without]
    assert with_ex.current_player() == 2 and len(with_ex.hands[2]) == 28
    apply_all(both, ["discard:1B", "discard:2B", "discard:3B"])
    assert with_ex.current_player() == 0
    assert "play:EX" in with_ex.legal_actions()  # EX may be led
    apply_all(both, ["play:EX"])
    assert with_ex.current_player() == 1
    assert with_ex.legal_actions() == plays(with_ex.hands[1])  # after a led EX: anything
    apply_all(both, ["play:3C"])
    assert with_ex.legal_actions() == {"play:9C"}  # must follow the second card's suit
    apply_all(both, ["play:9C"])
    trick = with_ex.tricks[0]
    assert trick["winner"] == 1  # 3C beats 9C in Coppe
    assert with_ex.exchange == [-1, 1, 0] and without.exchange == [0, 0, 0]
    assert with_ex.current_player() == 1
    play_first(both)
    assert "EX" in with_ex.won_cards()[0] and "EX" in without.won_cards()[0]  # the owner keeps it
    assert with_ex.won_cards() == without.won_cards()
    a, b = with_ex.points_thirds(), without.points_thirds()
    assert [x - y for x, y in zip(a, b, strict=True)] == [-1, 1, 0]
    assert sum(a) == sum(b) == 231
    assert with_ex.returns() == [t - 77 for t in a]


def test_ex_led_then_trump_forces_trumps():
    hands, stock = ex_deal_3(ex_seat=0)
    oracle = PiedmontOracle(hands, stock)
    for action in ["discard:1B", "discard:2B", "discard:3B", "play:EX", "play:T1"]:
        oracle.apply(action)
    assert oracle.legal_actions() == plays(trumps(9, 21))  # no duty to overtrump: any trump
    oracle.apply("play:T21")
    assert oracle.tricks[0]["winner"] == 2


def test_ex_played_instead_of_following_suit():
    hands, stock = ex_deal_3(ex_seat=1)
    with_ex = PiedmontOracle(hands, stock)
    without = PiedmontOracle(hands, stock, excuse_exchange=False)
    both = [with_ex, without]
    apply_all(both, ["discard:1B", "discard:2B", "discard:3B", "play:KC"])
    assert with_ex.legal_actions() == {"play:3C", "play:EX"}
    apply_all(both, ["play:EX"])
    assert with_ex.legal_actions() == {"play:9C"}
    apply_all(both, ["play:9C"])
    assert with_ex.tricks[0]["winner"] == 0
    assert with_ex.exchange == [1, -1, 0]
    play_first(both)
    assert "EX" in with_ex.won_cards()[1]
    a, b = with_ex.points_thirds(), without.points_thirds()
    assert [x - y for x, y in zip(a, b, strict=True)] == [1, -1, 0]


def ex_deal_4():
    seat0 = ["EX"] + COPPE + ["KD", "QD", "ND", "JD"]
    seat1 = SPADE + ["10D", "9D", "8D", "7D", "6D"]
    seat2 = trumps(1, 19)
    seat3 = BASTONI + ["5D", "4D", "3D", "2D", "1D"]
    return make_deal({0: seat0, 1: seat1, 2: seat2, 3: seat3}, stock=["T20", "T21"], variant="piedmont4")


def test_piedmont4_exchange_only_between_sides():
    # EX led by seat 0, won by his partner (seat 2): no exchange
    hands, stock = ex_deal_4()
    both = [PiedmontOracle(hands, stock, variant="piedmont4", excuse_exchange=flag) for flag in (True, False)]
    apply_all(both, ["discard:1B", "discard:2B", "play:EX"])
    assert both[0].legal_actions() == plays(both[0].hands[1])
    apply_all(both, ["play:10D"])
    assert both[0].legal_actions() == plays(trumps(1, 19))
    apply_all(both, ["play:T1"])
    assert both[0].legal_actions() == plays(["5D", "4D", "3D", "2D", "1D"])
    apply_all(both, ["play:1D"])
    assert both[0].tricks[0]["winner"] == 2 and both[0].exchange == [0, 0, 0, 0]
    play_first(both)
    assert both[0].points_thirds() == both[1].points_thirds()
    assert sum(both[0].points_thirds()) == 243

    # EX led by seat 0, won by an opponent (seat 3): one third from side 0+2 to side 1+3
    both = [PiedmontOracle(hands, stock, variant="piedmont4", excuse_exchange=flag) for flag in (True, False)]
    apply_all(both, ["discard:1B", "discard:2B", "play:EX", "play:1S", "play:T1"])
    assert both[0].legal_actions() == {"play:T20", "play:T21"}  # void in Spade: must trump
    apply_all(both, ["play:T21"])
    assert both[0].tricks[0]["winner"] == 3 and both[0].exchange == [-1, 0, 0, 1]
    play_first(both)
    a, b = both[0].points_thirds(), both[1].points_thirds()
    assert a == [b[0] - 1, b[1] + 1]
    d = a[0] - a[1]
    assert both[0].returns() == [d, -d, d, -d]


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


# ---------------------------------------------------------------------- discard restrictions


def test_discard_normal_case_piedmont3():
    dealer = ["KC", "QC", "NC", "JC", "1C", "T1", "T21", "T20", "T5", "EX"]
    hands, stock = make_deal({2: dealer[:7]}, stock=dealer[7:])
    oracle = PiedmontOracle(hands, stock)
    assert oracle.current_player() == 2
    legal = oracle.legal_actions()
    assert {"discard:QC", "discard:NC", "discard:JC", "discard:1C"} <= legal
    for card in ("KC", "T1", "T21", "T20", "T5", "EX"):
        assert "discard:" + card not in legal
    assert all(a.startswith("discard:") for a in legal)
    for action in ["discard:QC", "discard:NC", "discard:1C"]:
        oracle.apply(action)
    assert oracle.discards == ["QC", "NC", "1C"] and len(oracle.hands[2]) == 25
    assert oracle.current_player() == 0 and oracle.phase == "play"


@pytest.mark.parametrize("honour_5", ["mondo", "angelo"])
def test_discard_fallback_to_trumps_piedmont3(honour_5):
    dealer = trumps(1, 21) + ["EX"] + ["KC", "KD", "KS", "KB"] + ["1C", "2C"]  # 28 cards
    hands, stock = make_deal({2: dealer[:25]}, stock=dealer[25:])
    protected_top = "T21" if honour_5 == "mondo" else "T20"
    other_top = "T20" if honour_5 == "mondo" else "T21"
    allowed_trumps = {"discard:" + t for t in trumps(2, 21) if t != protected_top}
    assert "discard:" + other_top in allowed_trumps
    base = {"discard:1C", "discard:2C"}

    oracle = PiedmontOracle(hands, stock, honour_5=honour_5)
    assert oracle.legal_actions() == base | allowed_trumps  # 2 other cards < 3 discards to make
    oracle.apply("discard:T5")
    assert oracle.legal_actions() == base  # 2 other cards, 2 to make: trumps no longer allowed
    with pytest.raises(ValueError):
        oracle.apply("discard:T6")
    oracle.apply("discard:2C")
    assert oracle.legal_actions() == {"discard:1C"}
    oracle.apply("discard:1C")
    assert oracle.discards == ["T5", "2C", "1C"] and oracle.current_player() == 0

    oracle = PiedmontOracle(hands, stock, honour_5=honour_5)
    oracle.apply("discard:1C")  # 1 other card < 2 to make: trumps still allowed
    assert oracle.legal_actions() == {"discard:2C"} | allowed_trumps
    oracle.apply("discard:" + other_top)
    assert oracle.legal_actions() == {"discard:2C"}  # 1 other card, 1 to make
    oracle.apply("discard:2C")
    assert oracle.discards == ["1C", other_top, "2C"]
    assert sorted(oracle.hands[2]) == sorted(c for c in dealer if c not in oracle.discards)
    play_first([oracle])
    assert set(oracle.discards) <= set(oracle.won_cards()[2])


def test_discard_fallback_to_trumps_piedmont4():
    dealer = trumps(1, 15) + ["T20", "T21", "EX", "KC", "KD", "1S"]  # 21 cards
    hands, stock = make_deal({3: dealer[:19]}, stock=dealer[19:], variant="piedmont4")
    oracle = PiedmontOracle(hands, stock, variant="piedmont4", honour_5="mondo")
    assert oracle.current_player() == 3 and len(oracle.hands[3]) == 21
    allowed_trumps = {"discard:" + t for t in trumps(2, 15)}
    assert oracle.legal_actions() == {"discard:1S"} | allowed_trumps
    oracle.apply("discard:1S")
    assert oracle.legal_actions() == allowed_trumps  # T1, T20, T21, Kings, EX never
    oracle.apply("discard:T15")
    assert oracle.current_player() == 0 and oracle.phase == "play"  # no accuso round by default


# ---------------------------------------------------------------------- follow rules


def test_follow_suit_then_trump_then_anything():
    hands, stock = ex_deal_3(ex_seat=0)
    oracle = PiedmontOracle(hands, stock)
    for action in ["discard:1B", "discard:2B", "discard:3B", "play:KD"]:
        oracle.apply(action)
    assert oracle.legal_actions() == {"play:2D", "play:1D"}  # follow suit
    oracle.apply("play:1D")
    assert oracle.legal_actions() == plays(trumps(9, 21))  # void in Denari: trump
    oracle.apply("play:T9")
    assert oracle.tricks[0]["winner"] == 2
    # seat 2 leads a Bastoni: seat 0 has neither Bastoni nor trumps and may play anything
    oracle.apply("play:KB")
    assert oracle.legal_actions() == plays(oracle.hands[0])


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


def accuso_deal():
    seat0 = trumps(2, 11)  # 10 trumps
    seat1 = ["T1", "T20", "T21"] + trumps(12, 18)  # 10 trumps and the three honours: both conditions
    seat2 = ["T19", "EX"]  # one trump (EX not counted)
    return make_deal({0: seat0, 1: seat1, 2: seat2}, variant="piedmont4")


def test_accuso_legality_and_bonus():
    hands, stock = accuso_deal()
    assert not any(c.startswith("T") for c in hands[3] + stock)
    on = PiedmontOracle(hands, stock, variant="piedmont4", accuso=True)
    off = PiedmontOracle(hands, stock, variant="piedmont4", accuso=False)
    for _ in range(2):
        action = sorted(on.legal_actions())[0]
        on.apply(action)
        off.apply(action)
    assert off.phase == "play" and off.current_player() == 0
    assert on.phase == "accuso"
    expected = [{"pass", "accuso"}, {"pass", "accuso"}, {"pass"}, {"pass"}]
    for seat in range(4):
        assert on.current_player() == seat
        assert on.legal_actions() == expected[seat]
        on.apply("accuso" if "accuso" in expected[seat] else "pass")
    with pytest.raises(ValueError):
        PiedmontOracle(hands, stock, variant="piedmont4").apply("accuso")
    assert on.phase == "play" and on.current_player() == 0
    assert on.accuso_conditions == [1, 2, 0, 0]
    while not off.is_terminal():
        action = sorted(off.legal_actions())[0]
        on.apply(action)
        off.apply(action)
    a, b = on.points_thirds(), off.points_thirds()
    assert a == [b[0] + 15, b[1] + 30]  # 1 x 5 points for side 0+2, 2 x 5 points for side 1+3
    assert sum(a) == 243 + 45
    d = a[0] - a[1]
    assert on.returns() == [d, -d, d, -d]


def test_accuso_points_option_and_passing():
    hands, stock = accuso_deal()
    oracle = PiedmontOracle(hands, stock, variant="piedmont4", accuso=True, accuso_points=2)
    for action in ["discard:" + c for c in sorted(oracle.hands[3]) if c[0] not in "KT" and c != "EX"][:2]:
        oracle.apply(action)
    for action in ["pass", "accuso", "pass", "pass"]:  # seat 0 qualifies but passes
        oracle.apply(action)
    assert oracle.accuso_conditions == [0, 2, 0, 0]
    assert oracle.accuso_bonus_thirds() == [0, 12]
    play_first([oracle])
    assert sum(oracle.points_thirds()) == 243 + 12


def test_dealer_accuso_after_his_discard():
    dealer = trumps(2, 12) + ["KC", "KD", "KS", "KB", "EX", "1C", "QB", "NB", "JB", "10B"]  # 11 trumps
    hands, stock = make_deal({3: dealer[:19]}, stock=dealer[19:], variant="piedmont4")
    oracle = PiedmontOracle(hands, stock, variant="piedmont4", accuso=True)
    assert oracle.legal_actions() == {"discard:" + c for c in ["1C", "QB", "NB", "JB", "10B"]}
    oracle.apply("discard:1C")
    oracle.apply("discard:QB")
    for seat in range(3):
        assert oracle.current_player() == seat
        oracle.apply("pass")
    assert oracle.current_player() == 3 and oracle.legal_actions() == {"pass", "accuso"}
    oracle.apply("accuso")
    assert oracle.accuso_conditions == [0, 0, 0, 1] and oracle.current_player() == 0
    play_first([oracle])
    assert oracle.accuso_bonus_thirds() == [0, 15]
    assert sum(oracle.points_thirds()) == 243 + 15


def test_accuso_needs_ten_trumps_not_counting_ex():
    seat0 = trumps(2, 10) + ["EX"]  # 9 trumps + EX
    seat1 = ["T1", "T20"]  # two of the three honours only
    hands, stock = make_deal({0: seat0, 1: seat1}, variant="piedmont4")
    oracle = PiedmontOracle(hands, stock, variant="piedmont4", accuso=True)
    while oracle.phase == "discard":
        oracle.apply(sorted(oracle.legal_actions())[0])
    assert oracle.legal_actions() == {"pass"}
    oracle.apply("pass")
    assert oracle.legal_actions() == {"pass"}


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
    n, size, _ = SIZES[variant]
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
