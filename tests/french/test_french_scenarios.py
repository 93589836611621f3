"""Scenario tests of French Tarot (``french3``, ``french4``; docs/rules.md) on the engine, with card names;
deals written with :mod:`cards78`.

French card points are in HALF points (deck 182): oudler (T1, T21, EX) 9, K 9, Q 7, N 5, J 3, any other card 1.
Targets by oudlers: 0: 112 (56 pts), 1: 102 (51), 2: 82 (41), 3: 72 (36).
Score: T = s*(25 + d)*mult + pab + s*poignee + chelem, d = |points - target| in whole points, a half point
rounded in favour of the side that scores (d = ceil(|half_points - target_half| / 2)).
Score parts checked (:func:`french_score_parts` of the outcome): ``base`` = 25 + d (unsigned, before the
multiplier), ``poignee`` = the poignees' total (unsigned; the score adds s*poignee), ``petit_au_bout`` and
``chelem`` signed, ``score`` = T, ``target`` in points. Payoffs: 3 players taker +2T, defenders -T; 4 players
taker +3T, defenders -T.

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
    play_tricks,
    plays,
    section,
    suit,
    trumps,
)

pytestmark = pytest.mark.nojit

# ----------------------------------------------------------------------------------------------------------
# French: bidding, petit sec

BIDS = ("pass", "prise", "garde", "garde_sans", "garde_contre")
ALL_BIDS = {"bid:" + b for b in BIDS}


@pytest.mark.parametrize("n", [3, 4])
def test_french_all_pass_is_void(n):
    variant = f"french{n}"
    state = new(variant, *fill(variant, {}))
    assert state.returns() == [0] * n
    for seat in range(n):
        assert state.phase == "bid" and state.current_player() == seat
        assert legal(state) == ALL_BIDS
        state.apply("bid:pass")
    assert state.is_terminal() and state.current_player() == -1 and state.legal_actions() == []
    assert state.returns() == [0] * n
    assert state.outcome()["payoffs"] == [0] * n and state.outcome()["contract"].startswith("none")
    with pytest.raises(ValueError):
        state.apply("pass")


def test_french_bidding_must_go_higher_and_highest_bidder_takes():
    state = new("french3", *fill("french3", {}))
    state.apply("bid:garde")
    assert state.current_player() == 1
    assert legal(state) == {"bid:pass", "bid:garde_sans", "bid:garde_contre"}
    for bad in ("bid:prise", "bid:garde", "discard:KS", "play:KS", "chelem"):
        with pytest.raises(ValueError):
            state.clone().apply(bad)
    state.apply("bid:garde_sans")
    assert legal(state) == {"bid:pass", "bid:garde_contre"}
    state.apply("pass")  # "pass" is accepted for "bid:pass"
    # garde sans: the taker is seat 1, no discard, the chien unseen, the chelem decision comes at once
    assert state.phase == "chelem" and state.current_player() == 1 and legal(state) == {"pass", "chelem"}
    assert len(state.hand(1)) == 24
    assert plane(state, "stock", 0) == set() and plane(state, "stock", 1) == set()
    state.apply("pass")
    assert state.phase == "poignee" and state.current_player() == 0  # seat 0 leads: his poignee first
    assert legal(state) == {"pass"}  # seat 0 holds no trump (the pass is still a decision)


def test_french_prise_takes_the_chien_and_shows_it():
    hands, chien = fill("french4", {})
    state = new("french4", hands, chien)
    act(state, "bid:pass bid:prise bid:pass bid:pass")
    assert state.phase == "discard" and state.current_player() == 1
    assert len(state.hand(1)) == 24 and set(chien) <= set(state.hand(1))
    assert all(a.startswith("discard:") for a in legal(state))
    assert plane(state, "stock", 0) == set(chien) == plane(state, "stock", 3)


def test_french_garde_contre_skips_discard_then_announced_chelem_taker_leads():
    state = new("french4", *fill("french4", {}))
    act(state, "bid:pass bid:pass bid:garde_contre bid:pass")
    assert state.phase == "chelem" and state.current_player() == 2 and legal(state) == {"pass", "chelem"}
    state.apply("chelem")
    assert state.phase == "poignee" and state.current_player() == 2
    state.apply("pass")
    assert state.phase == "play" and state.current_player() == 2
    assert section(state, "chelem", 0)[0] == 1


@pytest.mark.parametrize("n", [3, 4])
def test_french_petit_sec_ends_the_deal(n):
    variant = f"french{n}"
    size = SHAPE[variant][1]
    seat1 = ["T1"] + suit("S") + suit("H")[: size - 15]  # T1 the only trump, no EX
    state = new(variant, *fill(variant, {1: seat1}))
    assert state.phase == "done"
    assert state.is_terminal() and state.current_player() == -1 and state.legal_actions() == []
    assert state.returns() == [0] * n
    assert state.outcome()["payoffs"] == [0] * n
    with pytest.raises(ValueError):
        state.apply("bid:pass")


@pytest.mark.parametrize("extra", ["EX", "T2"])
def test_french_t1_with_excuse_or_another_trump_is_not_petit_sec(extra):
    seat1 = ["T1", extra] + suit("S") + suit("H")[:8]
    state = new("french3", *fill("french3", {1: seat1}))
    assert not state.is_terminal() and state.phase == "bid" and state.current_player() == 0


# ----------------------------------------------------------------------------------------------------------
# French: the taker's discard


def test_french_discard_no_kings_no_oudlers_trumps_only_when_unavoidable():
    # The taker (seat 0) holds after the chien: 4 Kings, T1 T21 EX, 1S..4S and T2..T20 (30 cards).
    seat0 = ["KS", "KH", "KD", "KC", "T1", "T21", "EX"] + pips("S", 4, 1) + trumps(14, 2)
    chien = trumps(20, 15)
    state = new("french3", *fill("french3", {0: seat0}, stock=chien))
    act(state, "bid:prise bid:pass bid:pass")
    spades = discards(pips("S", 4, 1))
    all_trumps = discards(trumps(20, 2))
    # 4 allowed suit cards < 6 to make: non-oudler trumps allowed too; never Kings nor oudlers
    assert legal(state) == spades | all_trumps
    state.apply("discard:T2")
    assert legal(state) == spades | (all_trumps - {"discard:T2"})  # 4 < 5
    state.apply("discard:T20")
    assert legal(state) == spades  # 4 allowed suit cards, 4 discards to make: no trump now
    for bad in ("T15", "KS", "T1", "T21", "EX"):
        with pytest.raises(ValueError):
            state.clone().apply("discard:" + bad)
    act(state, "discard:1S discard:2S discard:3S discard:4S")
    assert len(state.hand(0)) == 24 and state.phase == "chelem" and legal(state) == {"pass", "chelem"}
    for viewer in (0, 1, 2):
        assert plane(state, "shown", viewer) == {"T2", "T20"}  # the discarded trumps are shown to all
    assert plane(state, "discard", 0) == {"T2", "T20", "1S", "2S", "3S", "4S"}
    assert plane(state, "discard", 1) == set()


def test_french_discard_with_enough_suit_cards_never_allows_trumps():
    hands, chien = fill("french3", {})  # seat 0: 14 spades + KH..5H; chien T17..T21, EX
    assert chien == trumps(17, 21) + ["EX"]
    state = new("french3", hands, chien)
    act(state, "bid:garde bid:pass bid:pass")
    expected = discards([c for c in hands[0] if c[0] != "K"])
    assert legal(state) == expected and len(expected) == 22


# ----------------------------------------------------------------------------------------------------------
# French: card play


def _legality_deal():
    # seat 0: 14 spades + T1 T2 T4 T6..T9 T11 T12 T21; seat 1: T10 T20 + 14 hearts + KD..7D (no spade);
    # seat 2: T3 T5 T15 T18 EX + 6D..1D + KC..2C (no spade); chien: T13 T14 T16 T17 T19 1C.
    seat0 = suit("S") + ["T1", "T2", "T4", "T6", "T7", "T8", "T9", "T11", "T12", "T21"]
    seat1 = ["T10", "T20"] + suit("H") + suit("D")[:8]
    seat2 = ["T3", "T5", "T15", "T18", "EX"] + suit("D")[8:] + suit("C")[:13]
    chien = ["T13", "T14", "T16", "T17", "T19", "1C"]
    state = new("french3", [seat0, seat1, seat2], chien)
    act(state, "bid:garde_sans bid:pass bid:pass pass")
    assert state.phase == "poignee" and state.current_player() == 0 and legal(state) == {"pass"}  # 10 trumps
    state.apply("pass")
    return state


def test_french_void_must_trump_then_overtrump_or_undertrump():
    state = _legality_deal()
    act(state, "play:KS pass")  # seat 1's poignee decision
    assert legal(state) == plays("T10 T20")  # void in spades: must trump
    after_t10 = state.clone()
    act(after_t10, "play:T10 pass")
    assert legal(after_t10) == plays("T15 T18 EX")  # must overtrump T10 (EX always)
    after_t20 = state.clone()
    act(after_t20, "play:T20 pass")
    assert legal(after_t20) == plays("T3 T5 T15 T18 EX")  # unable: any lower trump
    after_t20.apply("play:T5")
    assert after_t20.current_player() == 1 and after_t20.phase == "play"
    assert "pass" not in legal(after_t20)  # the poignee decision is only at the first turn


@pytest.mark.parametrize(
    "lead, seat1_legal, seat1_card, seat2_legal",
    [
        ("T9", "T10 T20", "T10", "T15 T18 EX"),
        ("T9", "T10 T20", "T20", "T3 T5 T15 T18 EX"),
        ("T12", "T20", "T20", "T3 T5 T15 T18 EX"),
        ("T21", "T10 T20", "T10", "T3 T5 T15 T18 EX"),
        ("T1", "T10 T20", "T10", "T15 T18 EX"),
    ],
)
def test_french_trump_lead_requires_higher_trump(lead, seat1_legal, seat1_card, seat2_legal):
    state = _legality_deal()
    act(state, f"play:{lead} pass")
    assert legal(state) == plays(seat1_legal)
    act(state, f"play:{seat1_card} pass")
    assert legal(state) == plays(seat2_legal)


def test_french_follow_suit_and_excuse_lead():
    # seat 0: EX 1H + 14 spades + T8..T1; seat 1: KH..2H + T19..T9; seat 2: 14 diamonds + KC..5C
    seat0 = ["EX", "1H"] + suit("S") + trumps(8, 1)
    seat1 = suit("H")[:13] + trumps(19, 9)
    seat2 = suit("D") + suit("C")[:10]
    chien = suit("C")[10:] + ["T20", "T21"]
    state = new("french3", [seat0, seat1, seat2], chien)
    act(state, "bid:garde_contre bid:pass bid:pass pass")
    assert legal(state) == {"pass"}  # 8 trumps + EX = 9 < 13: no poignee
    state.apply("pass")
    assert legal(state) == plays(seat0)  # the leader may play anything, EX included
    hearts = state.clone()
    act(hearts, "play:1H pass")
    assert legal(hearts) == plays(suit("H")[:13])  # must follow suit (no trump allowed)
    act(hearts, "play:2H pass")
    assert legal(hearts) == plays(seat2)  # void, no trump: any card
    hearts.apply("play:KD")
    assert hearts.current_player() == 1  # 2H beats 1H; KD is off-suit
    act(state, "play:EX pass")
    assert legal(state) == plays(seat1)  # after a led EX the next player plays anything


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


def test_french_defender_excuse_in_a_trick_the_taker_wins():
    # seat 0 (taker) KS + 14 hearts + T1..T9; seat 1: EX + 14 diamonds + T10..T18; seat 2: QS..1S + KC..4C.
    seat0 = ["KS"] + suit("H") + trumps(9, 1)
    seat1 = ["EX"] + suit("D") + trumps(18, 10)
    seat2 = suit("S")[1:] + suit("C")[:11]
    chien = suit("C")[11:] + trumps(21, 19)
    state = new("french3", [seat0, seat1, seat2], chien)
    act(state, "bid:garde_contre bid:pass bid:pass pass pass play:KS pass")
    assert legal(state) == plays(trumps(18, 10) + ["EX"])  # void in spades: trump (or EX)
    act(state, "play:EX pass play:1S")
    assert state.current_player() == 0
    assert section(state, "points", 0)[0] == pytest.approx(10 / 182)  # KS 9 + 1S 1, EX not taken


# ----------------------------------------------------------------------------------------------------------
# French: poignee


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


def test_french_poignee_counts_the_hand_after_taking_the_chien():
    # seat 0 holds 12 trumps (T2..T13), the chien brings T14: 13 at his first card -> simple (3 players)
    seat0 = trumps(13, 2) + suit("S")[1:13]
    state = new("french3", *fill("french3", {0: seat0}, stock=["T14"] + suit("H")[9:]))
    act(state, "bid:prise bid:pass bid:pass")
    act(state, [f"discard:{c}" for c in suit("H")[9:] + ["2S"]])
    state.apply("pass")
    assert legal(state) == {"pass", "poignee:simple"}


# ----------------------------------------------------------------------------------------------------------
# French: complete deals scored by hand (written trick by trick; the hands are derived from the tricks)


def run_french(n, chien, tricks, bids, dropped=(), chelem="pass", poignees=None):
    variant = f"french{n}"
    taker = max(range(n), key=lambda s: BIDS.index(bids[s]))
    hands = hands_from_tricks(n, SHAPE[variant][1], tricks, taker, chien, dropped)
    state = new(variant, hands, chien)
    for seat, bid in enumerate(bids):
        assert state.phase == "bid" and state.current_player() == seat
        state.apply("bid:" + bid)
    for card in dropped:
        assert state.phase == "discard" and state.current_player() == taker
        state.apply("discard:" + card)
    assert state.phase == "chelem" and state.current_player() == taker and legal(state) == {"pass", "chelem"}
    state.apply(chelem)
    play_tricks(state, n, tricks, poignees)
    return state


def french_score_parts(out: dict) -> dict:
    """The FFT score's parts from an outcome: the details plus taker, card_points_half, and the bonuses as the
    score adds them (petit_au_bout and chelem signed for the taker, poignee unsigned)."""
    signed = {b["name"]: b["points"] if b["side"] == 0 else -b["points"] for b in out["bonuses"]}
    return {**out["details"], "taker": out["declarer"], "contract": out["contract"], "payoffs": out["payoffs"],
            "card_points_half": out["card_point_units"], "petit_au_bout": signed.get("petit au bout", 0),
            "poignee": abs(signed.get("poignee", 0)), "chelem": signed.get("chelem", 0)}


def expect(state, **fields):
    """Check outcome() fields (FFT names, :func:`french_score_parts`), the score formula and the payoffs."""
    out = french_score_parts(state.outcome())
    for key, value in fields.items():
        assert out[key] == value, (key, out[key], value)
    s = 1 if out["made"] else -1
    parts = s * out["base"] * out["multiplier"] + out["petit_au_bout"] + s * out["poignee"] + out["chelem"]
    assert out["score"] == parts
    assert sum(out["card_points_half"]) == 182
    n = state.game.num_players
    t, taker = out["score"], out["taker"]
    assert state.returns() == out["payoffs"] == [(n - 1) * t if p == taker else -t for p in range(n)]


def test_french_score_prise_made_with_excuse_exchange_and_petit_au_bout():
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
    state = run_french(3, chien, tricks, ["prise", "pass", "pass"], dropped=chien)
    # Defence: 11 + 9 + 8 + 1 = 29; taker 182 - 29 = 153 (76.5 pts), discard 3S..8S included.
    # Oudlers kept: T1, T21, EX -> 3 -> target 36 pts = 72. Diff 81 half points = 40.5 pts, rounded in
    # favour of the taker (who scores) to 41. base = +(25 + 41) * 1 = 66; pab +10*1; no poignee, no chelem.
    # T = 76: taker +2T = 152, defenders -76.
    expect(
        state,
        taker=0,
        contract="prise",
        multiplier=1,
        card_points_half=[153, 29],
        oudlers=3,
        target=36,
        made=True,
        base=66,
        petit_au_bout=10,
        poignee=0,
        chelem=0,
        chelem_announced=False,
        score=76,
    )
    assert state.returns() == [152, -76, -76]


def test_french_score_garde_failed_petit_au_bout_to_defence_and_defence_poignee():
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
    state = run_french(3, chien, tricks, ["pass", "garde", "pass"], dropped=chien, poignees={2: "poignee:double"})
    # Taker: discard 6 + trick 1 9 = 15 (7.5 pts), 0 oudlers -> target 56 pts = 112.
    # Diff -97 half points = 48.5 pts, rounded in favour of the defence to 49. s = -1.
    # base = -(25 + 49) * 2 = -148; pab: T1 in the last trick, won by the defence: -10*2 = -20;
    # poignee double 30 to the winning side (defence): -30. T = -198: taker 2T = -396, defenders +198.
    expect(
        state,
        taker=1,
        contract="garde",
        multiplier=2,
        card_points_half=[15, 167],
        oudlers=0,
        target=56,
        made=False,
        base=74,
        petit_au_bout=-20,
        poignee=30,
        chelem=0,
        score=-198,
        poignees=["none", "none", "double"],
    )
    assert state.returns() == [198, -396, 198]
    assert plane(state, "shown_by", 0, rel=2) == set(trumps(1, 15))  # the 15 lowest trumps, EX not needed


def test_french_score_garde_sans_4_players_with_taker_poignee():
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
    state = run_french(4, chien, tricks, bids, poignees={0: "poignee:triple"})
    # Taker: 182 - 12 = 170 (85 pts) with T21, T1 and EX (chien) -> target 36 pts = 72. Diff 98 = 49 pts.
    # base = (25 + 49) * 4 = 296; T1 never played: pab 0; poignee triple +40; T = 336.
    # taker +3T = 1008, each defender -336.
    expect(
        state,
        taker=0,
        contract="garde sans",
        multiplier=4,
        card_points_half=[170, 12],
        oudlers=3,
        target=36,
        made=True,
        base=74,
        petit_au_bout=0,
        poignee=40,
        chelem=0,
        score=336,
    )
    assert state.returns() == [1008, -336, -336, -336]
    assert plane(state, "shown_by", 1, rel=3) == set(trumps(5, 19))  # the 15 lowest of T5..T21


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


def test_french_score_garde_contre_chien_counts_for_defence():
    chien, tricks = _garde_contre_tricks()
    state = run_french(3, chien, tricks, ["pass", "pass", "garde_contre"])
    # Defence: chien 48 + 7 + 8 + 1 + 7 = 71; taker 182 - 71 = 111 (55.5 pts), oudlers T1 T21 EX -> 72.
    # Diff 39 half points = 19.5 pts -> 20 (the taker scores). base = (25 + 20) * 6 = 270; pab +10*6 = 60.
    # T = 330: taker +660, defenders -330.
    expect(
        state,
        taker=2,
        contract="garde contre",
        multiplier=6,
        card_points_half=[111, 71],
        oudlers=3,
        target=36,
        made=True,
        base=45,
        petit_au_bout=60,
        poignee=0,
        chelem=0,
        score=330,
    )
    assert state.returns() == [-330, -330, 660]


def test_french_same_deal_garde_sans_chien_counts_for_taker():
    chien, tricks = _garde_contre_tricks()
    state = run_french(3, chien, tricks, ["pass", "pass", "garde_sans"])
    contre = run_french(3, chien, tricks, ["pass", "pass", "garde_contre"])
    # the same play: the chien's 48 half points move from the defence to the taker
    assert state.outcome()["card_point_units"][0] == contre.outcome()["card_point_units"][0] + 48
    # Taker: 111 + chien 48 = 159 (79.5 pts); diff 87 = 43.5 -> 44; base (25 + 44) * 4 = 276; pab +40.
    # T = 316 (less than the garde contre's 330, but with the taker's points 159 instead of 111).
    expect(
        state,
        contract="garde sans",
        multiplier=4,
        card_points_half=[159, 23],
        target=36,
        made=True,
        base=69,
        petit_au_bout=40,
        score=316,
    )
    assert state.returns() == [-316, -316, 632]


def test_french_score_unannounced_chelem_with_excuse_last():
    # 3 players, seat 0 garde sans (x4): T1..T21, EX, KS, KH; chien 1S..6S (for the taker).
    chien = pips("S", 6, 1)
    seat1_rest = ["NS", "JS", "10S"] + suit("H")[2:] + suit("D", "K Q N J 10 9 8")  # 3 + 12 + 7 = 22
    seat2_rest = ["7S"] + pips("D", 7, 2) + suit("C") + ["1D"]  # 1 + 6 + 14 + 1 = 22
    tricks = [(0, ["KS", "QS", "9S"]), (0, ["KH", "QH", "8S"])]
    for k, trump in enumerate(trumps(21, 2) + ["T1"]):  # 20 trump leads, then T1 (second-to-last trick)
        tricks.append((0, [trump, seat1_rest[k], seat2_rest[k]]))
    tricks.append((0, ["EX", seat1_rest[21], seat2_rest[21]]))  # 8D sets diamonds, but EX wins (chelem)
    state = run_french(3, chien, tricks, ["garde_sans", "pass", "pass"])
    # Taker wins every trick: 182 (91 pts), 3 oudlers -> 72; diff 110 = 55 pts; base (25 + 55) * 4 = 320.
    # Chelem made with EX last: T1 in the second-to-last trick is au bout: +10*4 = 40.
    # Unannounced chelem made: +200. T = 560: taker +1120, defenders -560.
    expect(
        state,
        taker=0,
        contract="garde sans",
        card_points_half=[182, 0],
        oudlers=3,
        target=36,
        made=True,
        base=80,
        petit_au_bout=40,
        poignee=0,
        chelem=200,
        chelem_announced=False,
        score=560,
    )
    assert state.returns() == [1120, -560, -560]


def test_french_score_announced_chelem_made_4_players_with_forced_trump_discards():
    # 4 players, seat 2 prise (x1). Seat 2: T4..T21; chien T1 T2 T3 EX KS QS.
    chien = ["T1", "T2", "T3", "EX", "KS", "QS"]
    seat3_rest = pips("D", 4, 1) + suit("C")  # 18
    seat0_rest = suit("S")[2:] + suit("H")[:6]  # 12 + 6
    seat1_rest = pips("H", 8, 1) + suit("D")[:10]  # 8 + 10
    tricks = []
    for k, card in enumerate(["KS"] + trumps(21, 7) + ["T1", "EX"]):  # 18 leads by the taker
        tricks.append((2, [card, seat3_rest[k], seat0_rest[k], seat1_rest[k]]))
    dropped = ["T2", "T3", "T4", "T5", "T6", "QS"]
    hands = hands_from_tricks(4, 18, tricks, 2, chien, dropped)
    assert sorted(hands[2]) == sorted(trumps(21, 4))
    state = new("french4", hands, chien)
    act(state, "bid:pass bid:pass bid:prise bid:pass")
    # After the chien: T1..T21, EX, KS, QS. Only QS is an allowed suit card: trumps T2..T20 allowed.
    assert legal(state) == {"discard:QS"} | discards(trumps(20, 2))
    act(state, [f"discard:{c}" for c in dropped[:5]])
    assert legal(state) == {"discard:QS"}  # 1 allowed suit card for 1 discard: no trump now
    act(state, "discard:QS chelem")
    assert state.current_player() == 2  # the taker leads after announcing
    assert plane(state, "shown", 0) == set(trumps(2, 6))  # discarded trumps shown, QS not
    assert legal(state) == {"pass", "poignee:simple", "poignee:double", "poignee:triple"}
    play_tricks(state, 4, tricks, poignees={2: "poignee:triple"})
    # Taker: every trick + discard (T2..T6 5 + QS 7 = 12) = 182; 3 oudlers -> 72; diff 110 = 55 pts.
    # base (25 + 55) * 1 = 80; T1 in the second-to-last trick (EX wins the last): pab +10; poignee: T1,
    # T7..T21 and EX = 17 -> triple +40; chelem announced and made +400. T = 530: taker 3T = 1590.
    expect(
        state,
        taker=2,
        contract="prise",
        card_points_half=[182, 0],
        oudlers=3,
        target=36,
        made=True,
        base=80,
        petit_au_bout=10,
        poignee=40,
        chelem=400,
        chelem_announced=True,
        score=530,
    )
    assert state.returns() == [-530, -530, 1590, -530]
    assert plane(state, "shown_by", 0, rel=2) == {"T1"} | set(trumps(7, 20))  # 15 lowest trumps, no EX


def test_french_score_announced_chelem_failed_and_excuse_last_goes_to_winner():
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
    hands = hands_from_tricks(3, 24, tricks, 1, chien, chien)
    state = new("french3", hands, chien)
    act(state, "bid:pass bid:garde bid:pass")
    assert legal(state) == discards(["1H"] + chien)
    act(state, [f"discard:{c}" for c in chien] + ["chelem"])
    assert plane(state, "shown", 0) == set()  # no trump discarded
    play_tricks(state, 3, tricks)
    # Defence 11 + 11 = 22; taker 160 (80 pts) with T1 and T21 -> target 41 pts = 82; diff 78 = 39 pts.
    # base (25 + 39) * 2 = 128; T1 was in the second-to-last trick, no chelem: pab 0;
    # chelem announced and failed: -200. T = -72: taker 2T = -144, defenders +72.
    expect(
        state,
        taker=1,
        contract="garde",
        card_points_half=[160, 22],
        oudlers=2,
        target=41,
        made=True,
        base=64,
        petit_au_bout=0,
        poignee=0,
        chelem=-200,
        chelem_announced=True,
        score=-72,
    )
    assert state.returns() == [72, -144, 72]


def _rounding_tricks(first_tricks, taker_rest, seat2_rest):
    # 3 players, seat 0 garde sans (x4), chien T1 T21 KS KH KD KC (for the taker: 2 oudlers, 18 + 36 = 54).
    # Seat 1 holds T2..T20, EX and four suit cards; seat 2 and the taker no trump.
    tricks = list(first_tricks)
    for k, trump in enumerate(trumps(20, 2)):
        tricks.append((1, [trump, seat2_rest[k], taker_rest[k]]))
    tricks.append((1, ["EX", seat2_rest[19], taker_rest[19]]))  # seat 2 wins with a diamond, EX to him
    return tricks


@pytest.mark.parametrize(
    "case, half_points, made, base, score",
    [
        # 54 + 9 + 9 + 9 = 81 = 40.5 pts, needing 41: fails by 0.5 -> 1 in favour of the defence:
        # T = -(25 + 1) * 4 = -104
        ("81", 81, False, 26, -104),
        # 54 + 15 + 13 = 82 = 41 pts exactly: made by 0: T = (25 + 0) * 4 = 100
        ("82", 82, True, 25, 100),
        # 54 + 11 + 9 + 9 = 83 = 41.5 pts: made by 0.5 -> 1: T = (25 + 1) * 4 = 104
        ("83", 83, True, 26, 104),
    ],
)
def test_french_score_half_point_rounding_three_players(case, half_points, made, base, score):
    chien, tricks = _rounding_case(case)
    state = run_french(3, chien, tricks, ["garde_sans", "pass", "pass"])
    expect(
        state,
        taker=0,
        contract="garde sans",
        card_points_half=[half_points, 182 - half_points],
        oudlers=2,
        target=41,
        made=made,
        base=base,
        petit_au_bout=0,
        poignee=0,
        chelem=0,
        score=score,
    )
    assert state.returns() == [2 * score, -score, -score]


@pytest.mark.parametrize("case, score", [("81", -124), ("83", 124)])
def test_french_defender_poignee_goes_to_the_side_that_wins(case, score):
    # The deals above; seat 1 (defence, T2..T20 and EX: 20 >= 13) declares a simple poignee (20 points).
    # 81: the taker fails, T = -104 - 20 = -124. 83: the taker makes it, the poignee is his: T = 104 + 20 = 124.
    chien, tricks = _rounding_case(case)
    state = run_french(3, chien, tricks, ["garde_sans", "pass", "pass"], poignees={1: "poignee:simple"})
    expect(state, base=26, poignee=20, score=score, poignees=["none", "simple", "none"])
    assert state.returns() == [2 * score, -score, -score]
    assert plane(state, "shown_by", 0, rel=1) == set(trumps(2, 14))  # the 13 lowest trumps


def _rounding_case(case):
    chien = ["T1", "T21", "KS", "KH", "KD", "KC"]
    if case in ("81", "83"):
        second = "JS" if case == "83" else "2S"
        first = [
            (0, ["QS", "1S", second]),  # taker: 7 + 1 + 1 = 9 (83: 7 + 1 + 3 = 11)
            (0, ["QH", "1H", "2H"]),  # taker: 9
            (0, ["QD", "1D", "2D"]),  # taker: 9
            (0, ["1C", "QC", "2C"]),  # seat 1 wins with QC
        ]
        spades = ["JS" if case == "81" else "2S", "NS"] + pips("S", 10, 3)
        taker_rest = spades + suit("H", "N J 10 9 8 7 6 5 4 3")  # 20
        seat2_rest = suit("C", "N J 10 9 8 7 6 5 4 3") + suit("D", "N J 10 9 8 7 6 5 4 3")  # last: 3D
    else:
        first = [
            (0, ["QS", "NS", "JS"]),  # taker: 7 + 5 + 3 = 15
            (0, ["QH", "NH", "1H"]),  # taker: 7 + 5 + 1 = 13
            (0, ["1C", "QC", "2C"]),  # seat 1 wins with QC
            (1, ["NC", "JC", "1D"]),  # seat 1 wins with NC; the taker has no club
        ]
        taker_rest = pips("S", 10, 1) + suit("H", "J 10 9 8 7 6 5 4 3 2")  # 20
        seat2_rest = pips("C", 10, 3) + suit("D", "Q N J 10 9 8 7 6 5 4 3 2")  # 8 + 12, last: 2D
    return chien, _rounding_tricks(first, taker_rest, seat2_rest)


def test_french_score_defence_wins_every_trick():
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
    state = run_french(3, chien, tricks, ["prise", "pass", "pass"], dropped=chien)
    # Taker: only the discard, 6 (3 pts), 0 oudlers -> 112; diff -106 = 53 pts; base -(25 + 53) * 1 = -78;
    # pab -10; the defence won every trick: chelem -200. T = -288: taker -576, defenders +288.
    expect(
        state,
        taker=0,
        contract="prise",
        card_points_half=[6, 176],
        oudlers=0,
        target=56,
        made=False,
        base=78,
        petit_au_bout=-10,
        poignee=0,
        chelem=-200,
        score=-288,
    )
    assert state.returns() == [-576, 288, 288]


def test_french_excuse_led_last_by_defence_never_wins():
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
    state = run_french(3, chien, tricks, ["prise", "pass", "pass"], dropped=chien)
    # Taker: discard 6 + EX 9 + 5D 1 + 1D 1 = 17, 1 oudler -> 51 pts = 102; diff -85 = 42.5 -> 43 pts.
    # base -(25 + 43) * 1 = -68; T1 in trick 21: no pab; the defence did not win every trick: no chelem.
    expect(
        state,
        taker=0,
        card_points_half=[17, 165],
        oudlers=1,
        target=51,
        made=False,
        base=68,
        petit_au_bout=0,
        chelem=0,
        score=-68,
    )
    assert state.returns() == [-136, 68, 68]
