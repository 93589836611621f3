"""Scenario tests of the Piedmontese tarocchi (``piedmont3``, ``piedmont4``; docs/rules.md) on the engine,
with card names; deals written with :mod:`cards78`.

Piedmontese card points are in thirds: a special card of value v counts 3v - 2 thirds (K, T1 and the 5-point
honour(s) 13, Q 10, EX 10, N 7, J 4), any other card (scartina) 1 third. Deck: 231 thirds (piedmont3, one
5-point honour) or 243 (piedmont4, T20 and T21 both 5). piedmont3 payoff: thirds - 77; piedmont4: the side's
thirds minus the other side's.

Every test here runs in well under a second, so the whole module is also run with NUMBA_DISABLE_JIT=1.
"""

import pytest
from cards78 import (
    SHAPE,
    act,
    discards,
    fill,
    full_deck,
    hands_from_tricks,
    legal,
    new,
    pips,
    plane,
    play_first,
    play_tricks,
    plays,
    section,
    suit,
    trumps,
)

import tarocchi_rl

pytestmark = pytest.mark.nojit

# ----------------------------------------------------------------------------------------------------------
# Piedmontese: trick winners


def trick_state(variant: str, cards: list):
    """A piedmont deal where seat k plays cards[k] to the first trick (seat 0 leads), after the dealer's
    discard. The other cards are dealt so that each of those plays is legal: a seat playing off the suit led is
    void in it (and without trumps for a plain card); a seat playing a plain card on a trump lead has none."""
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
    hands = [pools[s][:size] for s in range(n)]
    state = new(variant, hands, pools[dealer][size:])
    keep = cards[dealer]
    while state.phase == "discard":
        a = next(x for x in state.legal_actions() if state.action_to_string(x) != "discard:" + keep)
        state.apply(a)
    assert state.phase == "play" and state.current_player() == 0
    return state


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


@pytest.mark.parametrize("variant, cards, winner", PIEDMONT_TRICKS, ids=lambda x: str(x))
def test_piedmont_trick_winner(variant, cards, winner):
    n, size, _ = SHAPE[variant]
    state = trick_state(variant, cards)
    for k, card in enumerate(cards):
        assert state.current_player() == k
        assert "play:" + card in legal(state)
        state.apply("play:" + card)
    assert state.current_player() == winner  # the winner leads the next trick
    assert section(state, "tricks_won", winner)[0] == pytest.approx(1 / size)
    assert [section(state, "tricks_won", s)[0] for s in range(n)].count(0) == n - 1


def test_piedmont_no_duty_to_overtrump():
    state = trick_state("piedmont3", ["KC", "T10", "T2"])
    act(state, "play:KC play:T10")
    held = [c for c in state.hand(2) if c.startswith("T") or c == "EX"]
    assert "T2" in held and any(int(c[1:]) > 10 for c in held if c != "EX")
    assert legal(state) == plays(held)  # void in Coppe: any trump, a lower one too
    state.apply("play:T2")
    assert state.current_player() == 1


# ----------------------------------------------------------------------------------------------------------
# Piedmontese: follow rules and the Excuse exchange (deals of test_oracle_piedmont.py)

COPPE = suit("C")
DENARI = suit("D")
SPADE = suit("S")
BASTONI = suit("B")


def ex_deal_3(ex_seat: int):
    """piedmont3: seat 0 EX, 12 Coppe, KD..3D; seat 1 3C, Spade, 2D, 1D, T1..T8; seat 2 (dealer) 9C,
    Bastoni, T9..T18; stock T19 T20 T21. With ex_seat 1, EX and 1D swap places."""
    seat0 = ["EX"] + [c for c in COPPE if c not in ("3C", "9C")] + DENARI[:12]
    seat1 = ["3C"] + SPADE + ["2D", "1D"] + trumps(1, 8)
    seat2 = ["9C"] + BASTONI + trumps(9, 18)
    if ex_seat == 1:
        seat0[0] = "1D"
        seat1[seat1.index("1D")] = "EX"
    return [seat0, seat1, seat2], ["T19", "T20", "T21"]


def test_piedmont_follow_suit_then_trump_then_anything():
    state = new("piedmont3", *ex_deal_3(ex_seat=0))
    assert state.phase == "discard" and state.current_player() == 2 and len(state.hand(2)) == 28
    act(state, "discard:1B discard:2B discard:3B play:KD")
    assert legal(state) == plays("2D 1D")  # follow suit
    state.apply("play:1D")
    assert legal(state) == plays(trumps(9, 21))  # void in Denari: trump (any trump)
    state.apply("play:T9")
    assert state.current_player() == 2  # T9 wins
    state.apply("play:KB")  # seat 0 has neither Bastoni nor trumps: anything
    assert legal(state) == plays(state.hand(0))


def test_piedmont_ex_led_next_card_sets_the_suit_and_exchange():
    hands, stock = ex_deal_3(ex_seat=0)
    with_ex = new("piedmont3", hands, stock, excuse_exchange=True)
    without = new("piedmont3", hands, stock, excuse_exchange=False)
    both = [with_ex, without]
    for s in both:
        act(s, "discard:1B discard:2B discard:3B")
    assert with_ex.current_player() == 0 and "play:EX" in legal(with_ex)  # EX may be led
    for s in both:
        s.apply("play:EX")
    assert with_ex.current_player() == 1
    assert legal(with_ex) == plays(with_ex.hand(1))  # after a led EX: anything
    for s in both:
        s.apply("play:3C")
    assert legal(with_ex) == {"play:9C"}  # must follow the second card's suit
    for s in both:
        s.apply("play:9C")
    assert with_ex.current_player() == 1  # 3C beats 9C in Coppe
    play_first(both)
    out, base = with_ex.outcome(), without.outcome()
    assert out["details"]["excuse"] == {"played_by": 0, "trick_won_by": 1, "to_last_trick_winner": False}
    a, b = out["card_point_units"], base["card_point_units"]
    # the owner keeps EX; with the exchange one third passes from seat 0 to seat 1, the trick's winner
    assert [x - y for x, y in zip(a, b, strict=True)] == [-1, 1, 0]
    assert sum(a) == sum(b) == 231
    assert with_ex.returns() == out["payoffs"] == [t - 77 for t in a]
    assert without.returns() == [t - 77 for t in b]


def test_piedmont_ex_led_then_trump_forces_trumps():
    state = new("piedmont3", *ex_deal_3(ex_seat=0))
    act(state, "discard:1B discard:2B discard:3B play:EX play:T1")
    assert legal(state) == plays(trumps(9, 21))
    state.apply("play:T21")
    assert state.current_player() == 2


def test_piedmont_ex_played_instead_of_following_suit():
    hands, stock = ex_deal_3(ex_seat=1)
    with_ex = new("piedmont3", hands, stock)
    without = new("piedmont3", hands, stock, excuse_exchange=False)
    both = [with_ex, without]
    for s in both:
        act(s, "discard:1B discard:2B discard:3B play:KC")
    assert legal(with_ex) == plays("3C EX")
    for s in both:
        s.apply("play:EX")
    assert legal(with_ex) == {"play:9C"}
    for s in both:
        s.apply("play:9C")
    assert with_ex.current_player() == 0
    play_first(both)
    a, b = with_ex.outcome()["card_point_units"], without.outcome()["card_point_units"]
    assert [x - y for x, y in zip(a, b, strict=True)] == [1, -1, 0]


def ex_deal_4():
    seat0 = ["EX"] + COPPE + ["KD", "QD", "ND", "JD"]
    seat1 = SPADE + ["10D", "9D", "8D", "7D", "6D"]
    seat2 = trumps(1, 19)
    seat3 = BASTONI + ["5D", "4D", "3D", "2D", "1D"]
    return [seat0, seat1, seat2, seat3], ["T20", "T21"]


def test_piedmont4_ex_won_by_partner_no_exchange():
    hands, stock = ex_deal_4()
    both = [new("piedmont4", hands, stock, excuse_exchange=flag) for flag in (True, False)]
    for s in both:
        act(s, "discard:1B discard:2B play:EX")
    assert legal(both[0]) == plays(both[0].hand(1))
    for s in both:
        s.apply("play:10D")
    assert legal(both[0]) == plays(trumps(1, 19))
    for s in both:
        s.apply("play:T1")
    assert legal(both[0]) == plays("5D 4D 3D 2D 1D")
    for s in both:
        s.apply("play:1D")
    assert both[0].current_player() == 2  # seat 0's partner wins: no exchange
    play_first(both)
    assert both[0].outcome()["card_point_units"] == both[1].outcome()["card_point_units"]
    assert sum(both[0].outcome()["card_point_units"]) == 243
    assert both[0].outcome()["sides"] == [[0, 2], [1, 3]]


def test_piedmont4_ex_won_by_opponent_one_third_between_sides():
    hands, stock = ex_deal_4()
    both = [new("piedmont4", hands, stock, excuse_exchange=flag) for flag in (True, False)]
    for s in both:
        act(s, "discard:1B discard:2B play:EX play:1S play:T1")
    assert legal(both[0]) == plays("T20 T21")  # void in Spade: must trump
    for s in both:
        s.apply("play:T21")
    assert both[0].current_player() == 3
    play_first(both)
    a, b = both[0].outcome()["card_point_units"], both[1].outcome()["card_point_units"]
    assert a == [b[0] - 1, b[1] + 1]
    d = a[0] - a[1]
    assert both[0].returns() == [d, -d, d, -d]
    assert both[1].returns() == [b[0] - b[1], b[1] - b[0], b[0] - b[1], b[1] - b[0]]


# ----------------------------------------------------------------------------------------------------------
# Piedmontese: complete deals worked by hand


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


@pytest.mark.parametrize("options", [{}, {"excuse_exchange": False}, {"honour_5": "angelo"}], ids=str)
def test_piedmont3_ex_led_to_last_trick_goes_to_winner(options):
    tricks = _piedmont3_ex_last_tricks()
    stock, dropped = ["1S", "2S", "KB"], ["1S", "2S", "3S"]
    hands = hands_from_tricks(3, 25, tricks, 2, stock, dropped)
    state = new("piedmont3", hands, stock, **options)
    assert state.current_player() == 2 and len(state.hand(2)) == 28
    act(state, [f"discard:{c}" for c in dropped])
    play_tricks(state, 3, tricks)
    out = state.outcome()
    assert out["details"]["excuse"] == {"played_by": 0, "trick_won_by": 1, "to_last_trick_winner": True}
    # Seat 1 wins only the last trick: EX 10 + 2D 1 + 1B 1 = 12 thirds (EX goes to the winner, no exchange).
    # Seat 2 (dealer): his discard 1S 2S 3S = 3 thirds. Seat 0: 231 - 12 - 3 = 216 (T20/T21 both his, so
    # honour_5 changes nothing). Payoffs: thirds - 77 = 139, -65, -74.
    assert out["card_point_units"] == [216, 12, 3]
    assert out["card_points"] == [72, 4, 1]
    assert out["payoffs"] == state.returns() == [139, -65, -74]
    assert out["declarer"] == 2


def _piedmont4_tricks(ex_trick: int):
    # Seat 0: T3..T21 leads 19 trumps and wins every trick. Seat 1: T1 T2 EX, Coppe, KD QD (plays T1, T2 on
    # the first two leads, EX in trick ex_trick). Seat 2: ND..1D, KS..8S. Seat 3 (dealer): 7S..1S, Bastoni;
    # stock KB 1S, discards 1S 2S.
    seat1 = ["T1", "T2"] + COPPE + ["KD", "QD"]
    seat1.insert(ex_trick, "EX")
    seat2 = suit("D")[2:] + suit("S", "K Q N J 10 9 8")
    seat3 = pips("S", 7, 3) + BASTONI
    return [(0, [t, seat1[k], seat2[k], seat3[k]]) for k, t in enumerate(trumps(21, 3))]


@pytest.mark.parametrize(
    "ex_trick, exchange, thirds, excuse_last",
    [
        # EX in trick 3, won by seat 0: side 1+3 keeps EX and gives one third. Side 1+3: discards 1S 2S 2 +
        # EX 10 - 1 = 11; side 0+2: 243 - 12 + 1 = 232. d = 221.
        (2, True, [232, 11], False),
        # without the exchange: 243 - 12 = 231 and 12, d = 219
        (2, False, [231, 12], False),
        # EX played (not led) to the last trick: it goes to the winner, seat 0: side 1+3 only 2, side 0+2 241
        (18, True, [241, 2], True),
        (18, False, [241, 2], True),
    ],
)
def test_piedmont4_complete_deal_team_payoffs(ex_trick, exchange, thirds, excuse_last):
    tricks = _piedmont4_tricks(ex_trick)
    stock, dropped = ["KB", "1S"], ["1S", "2S"]
    hands = hands_from_tricks(4, 19, tricks, 3, stock, dropped)
    state = new("piedmont4", hands, stock, excuse_exchange=exchange)
    assert state.current_player() == 3 and len(state.hand(3)) == 21
    act(state, [f"discard:{c}" for c in dropped])
    assert state.phase == "play" and state.current_player() == 0  # no accuso round by default
    play_tricks(state, 4, tricks)
    out = state.outcome()
    assert out["details"]["excuse"] == {"played_by": 1, "trick_won_by": 0, "to_last_trick_winner": excuse_last}
    assert out["card_point_units"] == thirds
    d = thirds[0] - thirds[1]
    assert state.returns() == out["payoffs"] == [d, -d, d, -d]
    assert out["details"]["accuso"] == [0, 0, 0, 0]


# ----------------------------------------------------------------------------------------------------------
# Piedmontese: the dealer's discard


def test_piedmont3_discard_normal_case():
    dealer = ["KC", "QC", "NC", "JC", "1C", "T1", "T21", "T20", "T5", "EX"]
    hands, stock = fill("piedmont3", {2: dealer[:7]}, stock=dealer[7:])
    # the fill gives the dealer also 1B and T2..T4, T6..T19
    assert sorted(hands[2]) == sorted(dealer[:7] + ["1B"] + trumps(2, 4) + trumps(6, 19))
    state = new("piedmont3", hands, stock)
    assert state.phase == "discard" and state.current_player() == 2
    # 5 cards other than Kings, trumps, EX for 3 discards: no trump (not even T20 nor T5), no King, no EX
    assert legal(state) == discards("QC NC JC 1C 1B")
    for bad in ("KC", "T1", "T21", "T20", "T5", "EX"):
        with pytest.raises(ValueError):
            state.clone().apply("discard:" + bad)
    act(state, "discard:QC discard:NC discard:1C")
    assert len(state.hand(2)) == 25 and state.phase == "play" and state.current_player() == 0
    assert plane(state, "discard", 2) == {"QC", "NC", "1C"}  # the dealer sees his discard
    assert plane(state, "discard", 0) == set()  # nobody else does
    assert plane(state, "shown", 0) == set()  # no trump discarded: nothing shown


@pytest.mark.parametrize("honour_5", ["mondo", "angelo"])
def test_piedmont3_discard_fallback_to_trumps(honour_5):
    dealer = trumps(1, 21) + ["EX", "KC", "KD", "KS", "KB", "1C", "2C"]  # 28 cards
    hands, stock = fill("piedmont3", {2: dealer[:25]}, stock=dealer[25:])
    protected_top = "T21" if honour_5 == "mondo" else "T20"
    other_top = "T20" if honour_5 == "mondo" else "T21"
    allowed_trumps = discards([t for t in trumps(2, 21) if t != protected_top])
    assert "discard:" + other_top in allowed_trumps
    base = discards("1C 2C")

    state = new("piedmont3", hands, stock, honour_5=honour_5)
    assert legal(state) == base | allowed_trumps  # 2 other cards < 3 discards to make
    state.apply("discard:T5")
    assert legal(state) == base  # 2 other cards, 2 to make: trumps no longer allowed
    with pytest.raises(ValueError):
        state.clone().apply("discard:T6")
    for viewer in (0, 1, 2):
        assert plane(state, "shown", viewer) == {"T5"}  # a discarded trump is shown to all
    act(state, "discard:2C")
    assert legal(state) == {"discard:1C"}
    act(state, "discard:1C")
    assert state.current_player() == 0 and state.phase == "play"
    assert plane(state, "shown", 1) == {"T5"}  # 2C, 1C face down
    assert plane(state, "discard", 2) == {"T5", "2C", "1C"}

    state = new("piedmont3", hands, stock, honour_5=honour_5)
    state.apply("discard:1C")  # 1 other card < 2 to make: trumps still allowed
    assert legal(state) == {"discard:2C"} | allowed_trumps
    state.apply("discard:" + other_top)
    assert legal(state) == {"discard:2C"}
    state.apply("discard:2C")
    assert plane(state, "shown", 0) == {other_top}
    assert sorted(state.hand(2)) == sorted(c for c in dealer if c not in ("1C", other_top, "2C"))


def test_piedmont3_honour_5_option_is_checked():
    with pytest.raises(ValueError):
        tarocchi_rl.make("piedmont3", honour_5="papa").state_from_deal(*fill("piedmont3", {}))
    with pytest.raises(ValueError):
        tarocchi_rl.make("piedmont4", honour_5="mondo")  # does not apply to piedmont4
    with pytest.raises(ValueError):
        tarocchi_rl.make("piedmont3", accuso=True)  # accuso is a piedmont4 option


def test_piedmont4_discard_fallback_protects_t20_and_t21():
    dealer = trumps(1, 15) + ["T20", "T21", "EX", "KC", "KD", "1S"]  # 21 cards
    hands, stock = fill("piedmont4", {3: dealer[:19]}, stock=dealer[19:])
    state = new("piedmont4", hands, stock)
    assert state.current_player() == 3 and len(state.hand(3)) == 21
    allowed_trumps = discards(trumps(2, 15))
    assert legal(state) == {"discard:1S"} | allowed_trumps
    state.apply("discard:1S")
    assert legal(state) == allowed_trumps  # T1, T20, T21, Kings, EX never
    state.apply("discard:T15")
    assert state.current_player() == 0 and state.phase == "play"  # no accuso round by default
    assert plane(state, "shown", 0) == {"T15"}
    assert plane(state, "shown", 2) == {"T15"}
    with pytest.raises(ValueError):
        state.clone().apply("accuso")


def thirds_with_accuso(out: dict) -> list[int]:
    """Piedmontese thirds per side, card points plus the accuso bonus (what the payoffs are made of)."""
    bonus = [sum(b["points"] for b in out["bonuses"] if b["side"] == k) for k in range(len(out["sides"]))]
    return [u + bonus[k] for k, u in enumerate(out["card_point_units"])]


# ----------------------------------------------------------------------------------------------------------
# Piedmontese: accuso (piedmont4)


def accuso_deal():
    seat0 = trumps(2, 11)  # 10 trumps
    seat1 = ["T1", "T20", "T21"] + trumps(12, 18)  # 10 trumps and the three honours: both conditions
    seat2 = ["T19", "EX"]  # one trump (EX not counted)
    return fill("piedmont4", {0: seat0, 1: seat1, 2: seat2})


def test_piedmont4_accuso_legality_bonus_and_showncard_set():
    hands, stock = accuso_deal()
    assert not any(c.startswith("T") for c in hands[3] + stock)
    on = new("piedmont4", hands, stock, accuso=True)
    off = new("piedmont4", hands, stock)
    for s in (on, off):
        act(s, "discard:1B discard:2B")
    assert off.phase == "play" and off.current_player() == 0
    assert on.phase == "accuso"
    expected = [{"pass", "accuso"}, {"pass", "accuso"}, {"pass"}, {"pass"}]
    for seat in range(4):
        assert on.current_player() == seat
        assert legal(on) == expected[seat]
        on.apply("accuso" if "accuso" in expected[seat] else "pass")
    assert on.phase == "play" and on.current_player() == 0
    # the qualifying cards are shown: seat 0 his 10 trumps, seat 1 his trumps (the three honours among them)
    assert plane(on, "shown_by", 3, rel=1) == set(trumps(2, 11))
    assert plane(on, "shown_by", 3, rel=2) == set(["T1", "T20", "T21"] + trumps(12, 18))
    assert plane(on, "shown_by", 3, rel=3) == set()
    assert list(section(on, "accuso", 3)) == [0, 1, 1, 0]  # relative seats 0..3 = seats 3, 0, 1, 2
    play_first([on, off])
    a, b = thirds_with_accuso(on.outcome()), thirds_with_accuso(off.outcome())
    assert on.outcome()["details"]["accuso"] == [1, 2, 0, 0]
    assert a == [b[0] + 15, b[1] + 30]  # 1 x 5 points for side 0+2, 2 x 5 points for side 1+3
    assert sum(a) == 243 + 45
    d = a[0] - a[1]
    assert on.returns() == [d, -d, d, -d]


def test_piedmont4_accuso_points_option_and_passing():
    hands, stock = accuso_deal()
    on = new("piedmont4", hands, stock, accuso=True, accuso_points=2)
    off = new("piedmont4", hands, stock)
    for s in (on, off):
        act(s, "discard:1B discard:2B")
    act(on, "pass accuso pass pass")  # seat 0 qualifies but passes
    assert plane(on, "shown_by", 1, rel=3) == set()  # seat 0 (relative 3 for seat 1) shows nothing
    play_first([on, off])
    assert on.outcome()["details"]["accuso"] == [0, 2, 0, 0]
    a, b = thirds_with_accuso(on.outcome()), thirds_with_accuso(off.outcome())
    assert a == [b[0], b[1] + 12]  # 2 conditions x 2 points x 3 thirds
    assert sum(a) == 243 + 12


def test_piedmont4_dealer_accuso_after_his_discard():
    dealer = trumps(2, 12) + ["KC", "KD", "KS", "KB", "EX", "1C", "QB", "NB", "JB", "10B"]  # 11 trumps
    hands, stock = fill("piedmont4", {3: dealer[:19]}, stock=dealer[19:])
    assert sorted(c for c in hands[2] if c.startswith("T")) == sorted(["T1"] + trumps(13, 21))  # 10 trumps
    on = new("piedmont4", hands, stock, accuso=True)
    off = new("piedmont4", hands, stock)
    assert legal(on) == discards("1C QB NB JB 10B")
    for s in (on, off):
        act(s, "discard:1C discard:QB")
    assert legal(on) == {"pass"}
    on.apply("pass")
    assert legal(on) == {"pass"}
    on.apply("pass")
    assert on.current_player() == 2 and legal(on) == {"pass", "accuso"}
    on.apply("pass")
    assert on.current_player() == 3 and legal(on) == {"pass", "accuso"}
    on.apply("accuso")
    assert on.current_player() == 0 and on.phase == "play"
    play_first([on, off])
    assert on.outcome()["details"]["accuso"] == [0, 0, 0, 1]
    a, b = thirds_with_accuso(on.outcome()), thirds_with_accuso(off.outcome())
    assert a == [b[0], b[1] + 15]


def test_piedmont4_accuso_needs_ten_trumps_not_counting_ex():
    hands, stock = fill("piedmont4", {0: trumps(2, 10) + ["EX"], 1: ["T1", "T20"]})  # 9 trumps + EX; 2 honours
    state = new("piedmont4", hands, stock, accuso=True)
    act(state, "discard:1B discard:2B")
    assert state.phase == "accuso" and state.current_player() == 0
    assert legal(state) == {"pass"}
    with pytest.raises(ValueError):
        state.clone().apply("accuso")
    state.apply("pass")
    assert legal(state) == {"pass"}
