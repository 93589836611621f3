"""Scenario tests of the Mineo engine on hand-built deals, written with card names (RULES.md §1, seed 000).

Seats: 0 speaks first, 3 deals; play passes seat i -> i+1. In the seed's examples the dealer is A and the
players are A, B, C, D counterclockwise, so B = seat 0, C = seat 1, D = seat 2, A = seat 3.

Every deal is a full 63-card deal: 15 cards per seat (the first five are the early-round cards) + the monte.
Expected payoffs are worked out by hand from RULES.md in the comments. Card points are in thirds:
a special card of value v counts 3v - 2 thirds (J 4, N 7, Q 10, K 13, T16..T19 13, T20 / T1 / EX 28), a
scartina 1 third; the deck is 312 thirds, 327 with the 15 thirds of the last trick.

Every test here runs in well under a second, so the whole module is also run with NUMBA_DISABLE_JIT=1.
"""

import pytest
from conftest import MINEO_OBS as O
from conftest import bonus_totals, bonuses_by_side

import tarocchi_rl
from tarocchi_rl.variants.mineo import thirds_of

pytestmark = pytest.mark.nojit

DECK = tarocchi_rl.make("mineo").deck
NAMES = DECK.names


# ----------------------------------------------------------------------------------------------------------
# helpers


def deal(seat0: str, seat1: str, seat2: str, seat3: str, monte: str, **options):
    """A State on the deal given as card-name strings (one per seat, in deal order) and the monte."""
    game = tarocchi_rl.make("mineo", **options)
    hands = [h.split() for h in (seat0, seat1, seat2, seat3)]
    return game.state_from_deal(hands, monte.split())


def act(state, actions) -> None:
    """Apply action strings in order: a list, or one whitespace-separated string (``"bid:pass bid:call"``)."""
    for a in actions.split() if isinstance(actions, str) else actions:
        state.apply(a)


def legal(state) -> set:
    """The legal actions of the player to act, as strings."""
    return {state.action_to_string(a) for a in state.legal_actions()}


def plays(cards: str) -> set:
    return {f"play:{c}" for c in cards.split()}


def discards(cards: str) -> set:
    return {f"discard:{c}" for c in cards.split()}


def plane(vec, base: int) -> set:
    """Card names set in a 63-wide observation plane starting at ``base``."""
    return {NAMES[c] for c in range(len(NAMES)) if vec[base + c] > 0.5}


def lowest_legal(state) -> int:
    """The opponents' deterministic policy: the legal action with the lowest id (= lowest dense card id)."""
    return min(state.legal_actions())


def play_to_end(state, script=None) -> list:
    """Play the deal out: seat s plays the cards of ``script[s]`` in order while it has some, every other
    turn plays ``lowest_legal``. Returns the tricks as (leader, [(seat, card), ...], winner) with winner None
    for the last trick (the deal is over: there is no next leader to read)."""
    assert state.phase == "play"
    queues = {s: list(c.split()) for s, c in (script or {}).items()}
    tricks = []
    while not state.is_terminal():
        leader = state.current_player()
        cards = []
        for _ in range(4):
            p = state.current_player()
            if queues.get(p):
                card = queues[p].pop(0)
                state.apply(f"play:{card}")
            else:
                a = lowest_legal(state)
                card = NAMES[a]
                state.apply(a)
            cards.append((p, card))
        winner = None if state.is_terminal() else state.current_player()
        tricks.append((leader, cards, winner))
    assert all(not q for q in queues.values()), "scripted cards left unplayed"
    return tricks


def assert_settlement(out) -> None:
    """Payoffs follow RULES.md settlement from the itemised jochi: D = own - theirs (x2 if doubled);
    solo: soloist +3D, each opponent -D; pairs: +D each, -D each."""
    d = bonus_totals(out)[0] - bonus_totals(out)[1]
    if out["details"]["doubled"]:
        d *= 2
    solo = out["details"]["partner"] is None
    expected = [0] * 4
    for s in range(4):
        if s in out["sides"][0]:
            expected[s] = 3 * d if solo else d
        else:
            expected[s] = -d
    assert out["payoffs"] == expected
    assert sum(out["payoffs"]) == 0
    assert sum(out["card_point_units"]) == 327


EARLY_ALL_PASS = "bid:pass bid:pass bid:pass bid:pass"


# ----------------------------------------------------------------------------------------------------------
# declarations (seed examples 1-3)

# Seed example 1: B passes, C calls, D may then only pass or go solo; he goes solo. Monte: T5 7S 9S.
EX1 = dict(
    seat0="T0 T1 T2 T3 T4 EX 5C 6C 7C 8C 9C 10C JC NC 7D",  # B
    seat1="T6 T7 T8 T9 T10 8D 9D 10D JD ND QD KD 5S 6S 8S",  # C
    seat2="T20 T19 T18 T17 T16 T15 T14 4D 5D 6D KC QC KB QB NB",  # D
    seat3="T11 T12 T13 10S JS NS QS KS 5B 6B 7B 8B 9B 10B JB",  # A, the dealer
    monte="T5 7S 9S",
)


def test_seed_example_1_solo_after_a_call_ends_the_auction():
    s = deal(**EX1)
    assert s.phase == "early" and s.current_player() == 0
    assert legal(s) == {"bid:pass", "bid:solo"}
    act(s, EARLY_ALL_PASS)
    assert s.phase == "auction" and s.current_player() == 0
    assert legal(s) == {"bid:pass", "bid:solo", "bid:call"}
    act(s, "bid:pass")  # B
    assert s.current_player() == 1 and legal(s) == {"bid:pass", "bid:solo", "bid:call"}
    act(s, "bid:call")  # C
    assert s.current_player() == 2
    assert legal(s) == {"bid:pass", "bid:solo"}  # after a call: only pass or solo
    act(s, "bid:solo")  # D: the first solo ends the auction at once, A never speaks
    assert s.phase == "discard" and s.current_player() == 2
    a_view = s.observation(3)
    assert not a_view[O.OBS_AUCTION : O.OBS_AUCTION + 3].any()  # A (relative seat 0) has not bid
    assert a_view[O.OBS_AUCTION + 3 * ((2 - 3) % 4) + 1] == 1  # D's solo, seen by A
    # the monte is shown to everyone and joins D's hand
    for viewer in range(4):
        assert plane(s.observation(viewer), O.OBS_MONTE) == {"T5", "7S", "9S"}
    assert len(s.hand(2)) == 18 and {"T5", "7S", "9S"} <= set(s.hand(2))
    # no trump (T5 included), no King may be discarded: the rest of D's 18 cards may
    assert legal(s) == discards("4D 5D 6D QC QB NB 7S 9S")
    act(s, "discard:7S discard:9S")
    assert legal(s) == discards("4D 5D 6D QC QB NB")
    act(s, "discard:4D")
    assert s.phase == "scommessa" and s.current_player() == 2
    assert len(s.hand(2)) == 15 and "T5" in s.hand(2)
    assert plane(s.observation(2), O.OBS_DISCARD) == {"7S", "9S", "4D"}
    assert not s.observation(0)[O.OBS_DISCARD : O.OBS_DISCARD + 63].any()
    assert not s.observation(0)[O.OBS_SHOWN : O.OBS_SHOWN + 63].any()  # no trump discarded
    assert legal(s) == {"pass"}  # D holds T20 but not EX
    act(s, "pass")
    for seat in (3, 0, 1):  # the rivanto round starts at the declarer's right: A, B, C
        assert s.current_player() == seat and legal(s) == {"pass", "rivanto"}
        act(s, "pass")
    assert s.phase == "play" and s.current_player() == 2  # the soloist leads
    play_to_end(s)
    out = s.outcome()
    assert out["contract"] == "solo" and out["declarer"] == 2
    assert out["details"]["partner"] is None and out["details"]["called"] is None and out["details"]["doubled"] is False
    assert out["sides"] == [[2], [0, 1, 3]]
    assert_settlement(out)
    assert s.returns() == out["payoffs"]


# Seed example 2: B calls holding T19 as his highest trump ("I call the 20"), the others pass; T20 is in the
# monte: forced solo. He keeps both monte trumps and discards QS, 4D, 5D.
EX2 = dict(
    seat0="T19 T18 T17 T16 T15 T14 EX 4D 5D KC QC KB QB NB 6D",  # B
    seat1="T0 T1 T2 T4 T5 5C 6C 7C 8C 9C 10C JC NC 7D 8D",  # C
    seat2="T6 T7 T8 T9 T10 9D 10D JD ND QD KD 5S 6S 7S 8S",  # D
    seat3="T11 T12 T13 9S 10S JS NS KS 5B 6B 7B 8B 9B 10B JB",  # A
    monte="T20 T3 QS",
)


def test_seed_example_2_called_trump_in_the_monte_is_a_forced_solo():
    s = deal(**EX2)
    act(s, EARLY_ALL_PASS)
    act(s, "bid:call")  # B
    for seat in (1, 2, 3):
        assert s.current_player() == seat and legal(s) == {"bid:pass", "bid:solo"}
        act(s, "bid:pass")
    assert s.phase == "discard" and s.current_player() == 0
    for viewer in range(4):
        o = s.observation(viewer)
        assert o[O.OBS_CONTRACT + 2] == 1 and o[O.OBS_CONTRACT : O.OBS_CONTRACT + 2].sum() == 0
        assert o[O.OBS_CALLED + 20] == 1 and o[O.OBS_CALLED : O.OBS_CALLED + 21].sum() == 1  # T20 called
        assert o[O.OBS_PARTNER_KNOWN] == 1  # a solo: everyone knows the sides
        assert o[O.OBS_DOUBLED] == 0
    # neither monte trump (T20, T3), nor EX, nor a King may go to the discard; QS may
    assert legal(s) == discards("4D 5D 6D QC QB NB QS")
    act(s, "discard:QS discard:4D discard:5D")
    assert {"T20", "T3"} <= set(s.hand(0)) and len(s.hand(0)) == 15
    assert s.phase == "scommessa"
    assert legal(s) == {"pass", "scommessa"}  # he now holds T20 and EX
    act(s, "pass")
    for seat in (1, 2, 3):
        assert s.current_player() == seat and legal(s) == {"pass", "rivanto"}  # all are opponents
        act(s, "pass")
    assert s.phase == "play" and s.current_player() == 0
    play_to_end(s)
    out = s.outcome()
    assert out["contract"] == "forced solo" and out["declarer"] == 0
    assert out["details"] == {"partner": None, "called": "T20", "doubled": False}
    assert out["sides"] == [[0], [1, 2, 3]]
    # scored as an ordinary undoubled solo: soloist +3D, each opponent -D
    d = bonus_totals(out)[0] - bonus_totals(out)[1]
    assert s.returns() == [3 * d, -d, -d, -d]
    assert_settlement(out)


# Seed example 3: C calls holding T20 and T19 but not T18; B holds T18, so B is the partner. The monte holds
# EX, a King and 5D: he keeps EX and the King and discards 5D, 4D, 6D.
EX3 = dict(
    seat0="T18 T17 T16 T0 T1 5C 6C 7C 8C 9C 10C 8D 9D 10D JD",  # B, holds the called T18
    seat1="T20 T19 T15 T14 T13 T12 4D 6D KC QC NC JC KS QS 7D",  # C, the caller
    seat2="T2 T3 T4 T5 T6 ND QD KD 5S 6S 7S 8S 9S 10S JS",  # D
    seat3="T7 T8 T9 T10 T11 NS 5B 6B 7B 8B 9B 10B JB NB QB",  # A
    monte="EX KB 5D",
)


def partner_known(s) -> list:
    return [int(s.observation(v)[O.OBS_PARTNER_KNOWN]) for v in range(4)]


def test_seed_example_3_call_partner_is_the_holder_of_the_called_trump():
    s = deal(**EX3)
    act(s, EARLY_ALL_PASS)
    act(s, "bid:pass bid:call")  # B passes, C calls
    assert legal(s) == {"bid:pass", "bid:solo"}
    act(s, "bid:pass bid:pass")  # D, A
    assert s.phase == "discard" and s.current_player() == 1
    assert s.observation(2)[O.OBS_CALLED + 18] == 1  # T18 is announced to all
    # only the partner knows the partnership (the caller does not)
    assert partner_known(s) == [1, 0, 0, 0]
    b_view = s.observation(0)
    assert b_view[O.OBS_PARTNER + 0] == 1  # B sees himself as the partner (relative seat 0)
    assert not s.observation(1)[O.OBS_PARTNER : O.OBS_PARTNER + 4].any()
    # EX and the King of the monte may not be discarded
    assert legal(s) == discards("4D 5D 6D 7D QC NC JC QS")
    act(s, "discard:5D discard:4D discard:6D")
    assert {"EX", "KB"} <= set(s.hand(1)) and len(s.hand(1)) == 15
    assert legal(s) == {"pass", "scommessa"}  # C holds T20 and EX
    act(s, "pass")
    # rivanto round from the declarer's right: D and A are opponents, B (the secret partner) may only pass
    assert s.current_player() == 2 and legal(s) == {"pass", "rivanto"}
    act(s, "pass")
    assert s.current_player() == 3 and legal(s) == {"pass", "rivanto"}
    act(s, "pass")
    assert s.current_player() == 0 and legal(s) == {"pass"}
    act(s, "pass")
    assert s.phase == "play" and s.current_player() == 1
    assert partner_known(s) == [1, 0, 0, 0]  # still secret before T18 is played
    # first trick: C leads T20, everyone must trump; B plays the called T18
    act(s, "play:T20")
    assert legal(s) == plays("T2 T3 T4 T5 T6")
    act(s, "play:T2")
    assert legal(s) == plays("T7 T8 T9 T10 T11")
    act(s, "play:T7")
    assert legal(s) == plays("T18 T17 T16 T0 T1")
    assert partner_known(s) == [1, 0, 0, 0]
    act(s, "play:T18")
    assert s.current_player() == 1  # C's T20 wins
    assert partner_known(s) == [1, 1, 1, 1]  # the called trump is out: everyone knows
    for v in range(4):
        assert s.observation(v)[O.OBS_PARTNER + (0 - v) % 4] == 1
    play_to_end(s)
    out = s.outcome()
    assert out["contract"] == "call" and out["declarer"] == 1 and out["details"]["partner"] == 0
    assert out["details"]["called"] == "T18" and out["sides"] == [[0, 1], [2, 3]]
    d = bonus_totals(out)[0] - bonus_totals(out)[1]
    assert s.returns() == [d, d, -d, -d]
    assert_settlement(out)


# ----------------------------------------------------------------------------------------------------------
# trick play (the seed's four-trick example)

PLAY_EXAMPLE = dict(
    seat0="9S 6D T12 EX T8 T9 T10 T11 T14 T15 KD 7S 8S 10S JS",  # B
    seat1="QS 10C 6B 9C 6C 7C 8C JC NC KC 5B 7B 8B 9B 10B",  # C
    seat2="T0 4D T16 QC T17 T18 T19 T20 JB NB QB KB 5D 8D 9D",  # D
    seat3="KS 7D T13 5C T1 T2 T3 T4 T5 T6 T7 10D JD ND QD",  # A, soloist
    monte="5S 6S NS",
)


def test_seed_play_example_four_tricks():
    s = deal(**PLAY_EXAMPLE)
    act(s, EARLY_ALL_PASS)
    act(s, "bid:pass bid:pass bid:pass bid:solo")  # A goes solo
    assert s.phase == "discard" and s.current_player() == 3
    assert legal(s) == discards("7D 5C 10D JD ND QD 5S 6S NS")
    act(s, "discard:5S discard:6S discard:NS")
    assert legal(s) == {"pass"}  # A has neither T20 nor EX
    act(s, "pass")
    act(s, "pass pass pass")  # B, C, D
    assert s.phase == "play"

    # Trick 1: A leads KS; B follows (any spade, or EX); C's only spade is QS; D has no spades: must trump
    assert s.current_player() == 3
    act(s, "play:KS")
    assert legal(s) == plays("9S 7S 8S 10S JS EX")
    act(s, "play:9S")
    assert legal(s) == plays("QS")
    act(s, "play:QS")
    assert legal(s) == plays("T0 T16 T17 T18 T19 T20")
    act(s, "play:T0")
    assert s.current_player() == 2  # D wins: the Miseria beats the King

    # Trick 2: D leads 4D; C has neither Denari nor trumps: any card
    act(s, "play:4D")
    assert legal(s) == plays("7D 10D JD ND QD")
    act(s, "play:7D")
    assert legal(s) == plays("6D KD EX")
    act(s, "play:6D")
    assert legal(s) == plays("10C 6B 9C 6C 7C 8C JC NC KC 5B 7B 8B 9B 10B")
    act(s, "play:10C")
    assert s.current_player() == 3  # A wins with the highest Denari

    # Trick 3: A leads T13; B must trump (or EX); C has no trumps: any card; D trumps with T16
    assert legal(s) == plays("T13 5C T1 T2 T3 T4 T5 T6 T7 10D JD ND QD")  # EX aside, any card may lead
    act(s, "play:T13")
    assert legal(s) == plays("T8 T9 T10 T11 T12 T14 T15 EX")
    act(s, "play:T12")
    assert legal(s) == plays("6B 9C 6C 7C 8C JC NC KC 5B 7B 8B 9B 10B")
    act(s, "play:6B")
    assert legal(s) == plays("T16 T17 T18 T19 T20")  # no duty to overtrump: all of them
    act(s, "play:T16")
    assert s.current_player() == 2  # D's T16 is the highest trump

    # Trick 4: D leads QC; A's only Coppe is 5C; B has no Coppe: trumps or EX; he plays EX; C follows with 9C
    act(s, "play:QC")
    assert legal(s) == plays("5C")
    act(s, "play:5C")
    assert legal(s) == plays("T8 T9 T10 T11 T14 T15 EX")
    act(s, "play:EX")
    assert legal(s) == plays("9C 6C 7C 8C JC NC KC")
    act(s, "play:9C")
    assert s.current_player() == 2  # D wins the three Coppe

    # Won cards so far (thirds, from D's point of view): EX is not among D's cards.
    # D: {KS 9S QS T0} 13+1+10+1 = 25, {T13 T12 6B T16} 1+1+1+13 = 16, {QC 5C 9C} 10+1+1 = 12 -> 53.
    # A: {4D 7D 6D 10C} = 4 scartine = 4.
    d_won = "KS 9S QS T0 T13 T12 6B T16 QC 5C 9C".split()
    assert thirds_of(d_won) == 53 and thirds_of(d_won + ["EX"]) == 81
    d_view = s.observation(2)
    assert d_view[O.OBS_POINTS + 0] == pytest.approx(53 / 327)
    assert d_view[O.OBS_POINTS + (3 - 2) % 4] == pytest.approx(4 / 327)
    assert d_view[O.OBS_POINTS + (0 - 2) % 4] == 0 and d_view[O.OBS_POINTS + (1 - 2) % 4] == 0
    assert d_view[O.OBS_TRICKS_WON + 0] == pytest.approx(3 / 15)
    assert d_view[O.OBS_TRICKS_WON + 1] == pytest.approx(1 / 15)
    assert d_view[O.OBS_TRICK_NUM + 4] == 1
    assert "EX" in plane(s.observation(1), O.OBS_PLAYED + 63 * ((0 - 1) % 4))  # everyone saw B play EX
    assert "EX" not in s.hand(0)


# ----------------------------------------------------------------------------------------------------------
# card points


@pytest.mark.parametrize(
    "cards, thirds",
    [
        ("5C 6C T2", 3),  # 3 scartine = 1 point
        ("QS 5C T3", 12),  # Q + 2 scartine = 4 points
        ("KB 7D T0", 15),  # K + 2 scartine = 5 points
        ("NC 5C 6C T1 JD 7C", 42),  # {N + 2 scartine} 3 + {T1 + J + 1 scartina} 10 + 2 - 1 = 14 points
        ("KC T20 QD", 51),  # 3 specials: 5 + 10 + 4 - 2 = 17 points
        ("T2 9B", 2),  # 2 scartine left over
        ("T4", 1),  # 1 scartina left over
        ("KC", 13),
        ("T16 T17 T18 T19", 52),
        ("EX T20 T1", 84),  # 30 - 2 = 28 points
    ],
)
def test_thirds_of_seed_counting_examples(cards, thirds):
    assert thirds_of(cards.split()) == thirds


def test_thirds_of_whole_deck_and_errors():
    # 23 specials: 3*sum - 2*23 + 40 scartine; sum = 4*(2+3+4+5) + 4*5 + 3*10 = 106 -> 318 - 46 + 40 = 312
    assert thirds_of(list(NAMES)) == 312  # + 15 for the last trick = 327 = 109 points
    assert thirds_of([]) == 0
    with pytest.raises(ValueError, match="duplicated"):
        thirds_of(["KC", "KC"])
    with pytest.raises(ValueError, match="T21"):
        thirds_of(["T21"])


# ----------------------------------------------------------------------------------------------------------
# edge cases, each played to the end

# (a) The Fuggitivo led at the last trick. Seat 0 holds T20..T7 and EX; the monte 5C 6C 7C goes back to the
# discard. Opponents play their lowest legal card: each keeps his highest-id card (a Bastoni) to the end:
# seat 1 KB, seat 2 QB, seat 3 NB.
FUGGITIVO_LAST = dict(
    seat0="T20 T19 T18 T17 T16 T15 T14 T13 T12 T11 T10 T9 T8 T7 EX",
    seat1="T0 T1 T2 8C 9C 10C JC NC QC KC 4D 5D 6D 7D KB",
    seat2="T3 T4 8D 9D 10D JD ND QD KD 5S 6S 7S 8S 9S QB",
    seat3="T5 T6 10S JS NS QS KS 5B 6B 7B 8B 9B 10B JB NB",
    monte="5C 6C 7C",
)


def test_fuggitivo_led_at_the_last_trick_goes_to_the_winner():
    s = deal(**FUGGITIVO_LAST)
    act(s, EARLY_ALL_PASS)
    act(s, "bid:solo")
    assert legal(s) == discards("5C 6C 7C")
    act(s, "discard:5C discard:6C discard:7C")
    assert legal(s) == {"pass", "scommessa"}
    act(s, "scommessa")
    for v in range(4):
        assert s.observation(v)[O.OBS_SCOMMESSA] == 1
    act(s, "pass pass pass")
    assert s.phase == "play"
    trumps = [f"T{k}" for k in range(20, 6, -1)]
    for k, t in enumerate(trumps):
        assert s.current_player() == 0
        lead = legal(s)
        assert "play:EX" not in lead  # EX may never be led while he holds anything else
        assert lead == plays(" ".join(trumps[k:]))
        act(s, f"play:{t}")
        for _ in range(3):
            s.apply(lowest_legal(s))
        assert s.current_player() == 0  # he wins every trump trick
    assert s.hand(0) == ["EX"]
    assert legal(s) == {"play:EX"}  # all he has left: now he must lead it
    act(s, "play:EX")
    assert legal(s) == plays("KB")  # the next card sets the suit
    act(s, "play:KB")
    assert legal(s) == plays("QB")
    act(s, "play:QB")
    act(s, "play:NB")
    assert s.is_terminal() and s.current_player() == -1
    out = s.outcome()
    # Seat 1 wins the last trick with KB and takes EX: opponents hold {EX KB QB NB} = 28+13+10+7 = 58 thirds
    # + 15 for the last trick = 73; the soloist holds the other 59 cards: 312 - 58 = 254.
    assert out["card_point_units"] == [254, 73]
    # Soloist: rimatura 1, T16..T20 all won -> arie 2, T1 played by seat 1 and won -> pigliata 1. = 4
    # Opponents: vanto 1 (last trick), failed scommessa (no EX) 1. = 2
    # D = 2, solo: [+6, -2, -2, -2]
    assert bonuses_by_side(out) == [{"rimatura": 1, "arie": 2, "pigliata": 1}, {"vanto": 1, "scommessa": 1}]
    assert out["payoffs"] == [6, -2, -2, -2]
    assert s.returns() == [6, -2, -2, -2]
    assert_settlement(out)


# (b)/(c) The Fuggitivo of a side that wins no trick. Seat 0 holds the 15 trumps T20..T6; seat 3 holds EX and
# no trump, so with the lowest-legal policy he throws EX (dense id 21, below every suit card) at trick 1.
NO_TRICK_SIDE = dict(
    seat0="T20 T19 T18 T17 T16 T15 T14 T13 T12 T11 T10 T9 T8 T7 T6",
    seat1="T0 T1 T2 8C 9C 10C JC NC QC KC 4D 5D 6D 7D 8D",
    seat2="T3 T4 T5 9D 10D JD ND QD KD 5S 6S 7S 8S 9S 10S",
    seat3="EX JS NS QS KS 5B 6B 7B 8B 9B 10B JB NB QB KB",
    monte="5C 6C 7C",
)


def _slam_with_fuggitivo(s):
    assert legal(s) == discards("5C 6C 7C")
    act(s, "discard:5C discard:6C discard:7C")
    assert legal(s) == {"pass"}  # no EX: no scommessa
    act(s, "pass pass pass pass")
    leads = " ".join(f"T{k}" for k in range(20, 5, -1))
    tricks = play_to_end(s, {0: leads})
    assert tricks[0][1] == [(0, "T20"), (1, "T0"), (2, "T3"), (3, "EX")]
    assert all(t[0] == 0 for t in tricks)  # seat 0 led (and so won) every trick
    out = s.outcome()
    # EX's side (the opponents) won no trick: EX goes to the winner of trick 1, the soloist. He holds the
    # whole deck: 312 + 15 (last trick) = 327 thirds.
    assert out["card_point_units"] == [327, 0]
    # rimatura 1, vanto 1, arie + Giove 2, pigliata 1 (T1 from seat 1), all four Kings 1 -> 6; opponents 0
    assert bonuses_by_side(out) == [{"rimatura": 1, "vanto": 1, "arie": 2, "pigliata": 1, "re": 1}, {}]
    assert bonus_totals(out) == [6, 0]
    return out


def test_fuggitivo_of_a_side_without_tricks_goes_to_the_trick_winner():
    s = deal(**NO_TRICK_SIDE)
    act(s, EARLY_ALL_PASS)
    act(s, "bid:solo")
    out = _slam_with_fuggitivo(s)
    assert out["details"]["doubled"] is False
    # D = 6, solo: soloist +18, each opponent -6
    assert s.returns() == [18, -6, -6, -6]
    assert_settlement(out)


def test_early_solo_doubles_the_stakes():
    s = deal(**NO_TRICK_SIDE)
    assert s.phase == "early"
    assert s.hand(0) == ["T20", "T19", "T18", "T17", "T16"]  # the first five cards of his hand
    assert all(len(s.hand(p)) == 5 for p in range(4))
    assert legal(s) == {"bid:pass", "bid:solo"}
    act(s, "bid:solo")
    assert s.phase == "discard" and s.current_player() == 0
    assert all(len(s.hand(p)) == 15 for p in (1, 2, 3)) and len(s.hand(0)) == 18
    assert s.observation(2)[O.OBS_DOUBLED] == 1
    assert s.observation(2)[O.OBS_EARLY + 2 * ((0 - 2) % 4) + 1] == 1  # seat 0's early solo, seen by seat 2
    out = _slam_with_fuggitivo(s)
    assert out["details"]["doubled"] is True and out["contract"] == "solo"
    # D = 6, doubled 12: soloist +36, each opponent -12
    assert s.returns() == [36, -12, -12, -12]
    assert_settlement(out)


def test_early_solo_by_a_later_seat():
    s = deal(**NO_TRICK_SIDE)
    act(s, "bid:pass bid:pass")
    assert s.current_player() == 2 and legal(s) == {"bid:pass", "bid:solo"}
    act(s, "bid:solo")
    assert s.phase == "discard" and s.current_player() == 2  # seat 3 never speaks
    assert len(s.hand(2)) == 18 and all(len(s.hand(p)) == 15 for p in (0, 1, 3))
    o = s.observation(0)
    assert o[O.OBS_DECLARER + 2] == 1 and o[O.OBS_DOUBLED] == 1 and o[O.OBS_CONTRACT + 1] == 1
    assert not o[O.OBS_AUCTION : O.OBS_AUCTION + 12].any()  # no auction after an early solo


# (d) Too few allowed discards. Seat 0 holds T20..T8, EX and KC; the monte is KD KS 5C.
FEW_DISCARDS = dict(
    seat0="T20 T19 T18 T17 T16 T15 T14 T13 T12 T11 T10 T9 T8 EX KC",
    seat1="T0 T1 T2 T3 T4 T5 T6 T7 6C 7C 8C 9C 10C JC NC",
    seat2="QC 4D 5D 6D 7D 8D 9D 10D JD ND QD 5S 6S 7S 8S",
    seat3="9S 10S JS NS QS 5B 6B 7B 8B 9B 10B JB NB QB KB",
    monte="KD KS 5C",
)


def test_discarding_trumps_when_too_few_other_cards():
    s = deal(**FEW_DISCARDS)
    act(s, EARLY_ALL_PASS)
    act(s, "bid:solo")
    # allowed: only 5C (1 < 3 discards to make) -> T2..T15 held are legal too; never T16..T20, EX, Kings
    assert legal(s) == discards("5C T8 T9 T10 T11 T12 T13 T14 T15")
    act(s, "discard:5C")
    assert legal(s) == discards("T8 T9 T10 T11 T12 T13 T14 T15")
    act(s, "discard:T8")
    for v in (1, 2, 3):
        o = s.observation(v)
        assert plane(o, O.OBS_SHOWN) == {"T8"}  # a discarded trump is shown to all
        assert not o[O.OBS_DISCARD : O.OBS_DISCARD + 63].any()  # but the discard is not theirs to see
    assert plane(s.observation(0), O.OBS_DISCARD) == {"5C", "T8"}
    assert legal(s) == discards("T9 T10 T11 T12 T13 T14 T15")
    act(s, "discard:T9")
    assert plane(s.observation(2), O.OBS_SHOWN) == {"T8", "T9"}
    assert s.hand(0) == "T20 T19 T18 T17 T16 T15 T14 T13 T12 T11 T10 EX KC KD KS".split()
    assert legal(s) == {"pass", "scommessa"}
    act(s, "pass pass pass pass")
    # He leads T20..T10 (11 tricks): seat 1 plays T0..T7 then 6C 7C 8C; seat 2 QC 4D..10D then JD ND QD;
    # seat 3 9S..QS 5B 6B 7B then 8B 9B 10B. Then KC (9C, 5S, JB), KD (10C, 6S, NB), KS (JC, 7S, QB): he
    # wins them all. Last trick: he must lead EX; seat 1 NC sets Coppe, seat 2 8S, seat 3 KB: seat 1 wins.
    tricks = play_to_end(s, {0: "T20 T19 T18 T17 T16 T15 T14 T13 T12 T11 T10 KC KD KS EX"})
    assert [t[2] for t in tricks[:-1]] == [0] * 14
    assert tricks[11][1] == [(0, "KC"), (1, "9C"), (2, "5S"), (3, "JB")]
    assert tricks[14][1] == [(0, "EX"), (1, "NC"), (2, "8S"), (3, "KB")]
    out = s.outcome()
    # Opponents: {EX NC 8S KB} = 28 + 7 + 1 + 13 = 49 + 15 (last trick) = 64; soloist 312 - 49 = 263
    assert out["card_point_units"] == [263, 64]
    # Soloist: rimatura 1, arie 2, pigliata 1 (T1) = 4 (KB went to the opponents: no re); opponents: vanto 1
    # D = 3, solo: [+9, -3, -3, -3]
    assert bonuses_by_side(out) == [{"rimatura": 1, "arie": 2, "pigliata": 1}, {"vanto": 1}]
    assert s.returns() == [9, -3, -3, -3]
    assert_settlement(out)


# EX played (not led) to the last trick stays with its owner's side, which has won tricks.
# Seat 0: T20..T8, EX, 5B; monte JB NB QB (discarded back). Opponents keep their Bastoni to the end.
EX_LAST_NOT_LED = dict(
    seat0="T20 T19 T18 T17 T16 T15 T14 T13 T12 T11 T10 T9 T8 EX 5B",
    seat1="T0 T1 T2 T3 T4 T5 T6 T7 5C 6C 7C 8C 9C 6B 7B",
    seat2="10C JC NC QC KC 4D 5D 6D 7D 8D 9D 10D JD 8B 9B",
    seat3="ND QD KD 5S 6S 7S 8S 9S 10S JS NS QS KS 10B KB",
    monte="JB NB QB",
)


def test_fuggitivo_played_to_the_last_trick_stays_with_its_side():
    s = deal(**EX_LAST_NOT_LED)
    act(s, EARLY_ALL_PASS)
    act(s, "bid:solo")
    assert legal(s) == discards("5B JB NB QB")
    act(s, "discard:JB discard:NB discard:QB")
    act(s, "pass pass pass pass")
    tricks = play_to_end(s, {0: "T20 T19 T18 T17 T16 T15 T14 T13 T12 T11 T10 T9 T8 5B EX"})
    assert [t[2] for t in tricks[:13]] == [0] * 13
    # trick 14: 5B, 6B, 8B, 10B -> seat 3; trick 15: seat 3 leads KB, seat 0 EX, 7B, 9B -> seat 3
    assert tricks[13] == (0, [(0, "5B"), (1, "6B"), (2, "8B"), (3, "10B")], 3)
    assert tricks[14] == (3, [(3, "KB"), (0, "EX"), (1, "7B"), (2, "9B")], None)
    out = s.outcome()
    # Opponents: {5B 6B 8B 10B KB 7B 9B} = 6 scartine + 13 = 19, + 15 (last trick) = 34.
    # Soloist: everything else, EX included: 312 - 19 = 293 (it would be 265 / 62 had EX gone to seat 3).
    assert out["card_point_units"] == [293, 34]
    # Soloist: rimatura 1, arie 2, pigliata 1 (T1) = 4; opponents: vanto 1. D = 3: [+9, -3, -3, -3]
    assert bonuses_by_side(out) == [{"rimatura": 1, "arie": 2, "pigliata": 1}, {"vanto": 1}]
    assert s.returns() == [9, -3, -3, -3]
    assert_settlement(out)


# (e) All pass.
def test_all_pass_is_a_void_deal():
    s = deal(**PLAY_EXAMPLE)
    assert s.phase == "early"
    act(s, EARLY_ALL_PASS)
    assert s.phase == "auction" and all(len(s.hand(p)) == 15 for p in range(4))
    act(s, "bid:pass bid:pass bid:pass")
    assert s.current_player() == 3 and legal(s) == {"bid:pass", "bid:solo", "bid:call"}
    act(s, "bid:pass")
    assert s.is_terminal() and s.phase == "done" and s.current_player() == -1
    assert len(s.history) == 8
    assert s.legal_actions() == []
    assert s.returns() == [0, 0, 0, 0]
    out = s.outcome()
    assert out["payoffs"] == [0, 0, 0, 0] and out["contract"] == "none"


def test_all_pass_without_early_round():
    s = deal(**PLAY_EXAMPLE, early_solo=False)
    assert s.phase == "auction" and s.current_player() == 0
    assert all(len(s.hand(p)) == 15 for p in range(4))
    act(s, "bid:pass bid:pass bid:pass bid:pass")
    assert s.is_terminal() and len(s.history) == 4
    assert s.returns() == [0, 0, 0, 0]


def test_without_early_round_a_solo_is_not_doubled():
    s = deal(**NO_TRICK_SIDE, early_solo=False)
    act(s, "bid:solo")
    out = _slam_with_fuggitivo(s)
    assert out["details"]["doubled"] is False and s.returns() == [18, -6, -6, -6]


# (f) Rivanto. Seat 0 calls: his highest missing trump is T18, held by seat 2 (his partner) as her only
# trump; she must play it under his T20 at trick 1.

# The declarer's side wins the last trick: seat 0 holds 15 trumps and wins every trick.
RIVANTO_FAILS = dict(
    seat0="T20 T19 T17 T16 T15 T14 T13 T12 T11 T10 T9 T8 T7 T6 T5",
    seat1="T0 T1 T2 T3 T4 8C 9C 10C JC NC QC KC 4D 5D 6D",
    seat2="T18 7D 8D 9D 10D JD ND QD KD 5S 6S 7S 8S 9S 10S",
    seat3="EX JS NS QS KS 5B 6B 7B 8B 9B 10B JB NB QB KB",
    monte="5C 6C 7C",
)


def test_rivanto_failed_gives_two_jochi_to_the_declarer_side():
    s = deal(**RIVANTO_FAILS)
    act(s, EARLY_ALL_PASS)
    act(s, "bid:call bid:pass bid:pass bid:pass")
    assert s.observation(0)[O.OBS_CALLED + 18] == 1
    act(s, "discard:5C discard:6C discard:7C pass")
    assert s.phase == "rivanto" and s.current_player() == 1
    assert legal(s) == {"pass", "rivanto"}
    act(s, "rivanto")  # the first rivanto closes the round at once: play starts, the declarer leads
    assert s.phase == "play" and s.current_player() == 0
    assert s.observation(3)[O.OBS_RIVANTO + (1 - 3) % 4] == 1
    leads = "T20 T19 T17 T16 T15 T14 T13 T12 T11 T10 T9 T8 T7 T6 T5"
    tricks = play_to_end(s, {0: leads})
    assert tricks[0][1] == [(0, "T20"), (1, "T0"), (2, "T18"), (3, "EX")]
    assert all(t[0] == 0 for t in tricks)
    out = s.outcome()
    assert out["contract"] == "call" and out["details"]["partner"] == 2 and out["sides"] == [[0, 2], [1, 3]]
    # EX's side won no trick: EX to the trick-1 winner. Side 0 has every card: 327 thirds.
    assert out["card_point_units"] == [327, 0]
    # Side 0: rimatura 1, rivanto 2 (failed by the opponents; replaces the vanto), arie + Giove 2,
    # pigliata 1 (T1 from seat 1; T18 came from the partner: none), re 1 = 7. Opponents 0.
    # D = 7, pairs: seats 0 and 2 +7, seats 1 and 3 -7
    assert bonuses_by_side(out) == [{"rimatura": 1, "rivanto": 2, "arie": 2, "pigliata": 1, "re": 1}, {}]
    assert s.returns() == [7, -7, 7, -7]
    assert_settlement(out)


# The opponents win the last trick: seat 0 holds 14 trumps and EX and must lead EX last; seat 1 wins it.
RIVANTO_MADE = dict(
    seat0="T20 T19 T17 T16 T15 T14 T13 T12 T11 T10 T9 T8 T7 T6 EX",
    seat1="T0 T1 T2 T3 T4 T5 10D JD ND QD KD 5S 6S 7S KB",
    seat2="T18 8C 9C 10C JC NC QC KC 4D 5D 6D 7D 8D 9D QS",
    seat3="8S 9S 10S JS NS KS 5B 6B 7B 8B 9B 10B JB NB QB",
    monte="5C 6C 7C",
)


def test_rivanto_made_gives_two_jochi_to_the_opponents():
    s = deal(**RIVANTO_MADE)
    act(s, EARLY_ALL_PASS)
    act(s, "bid:call bid:pass bid:pass bid:pass")
    act(s, "discard:5C discard:6C discard:7C")
    assert legal(s) == {"pass", "scommessa"}
    act(s, "pass")
    assert s.current_player() == 1 and legal(s) == {"pass", "rivanto"}
    act(s, "pass")
    assert s.current_player() == 2 and legal(s) == {"pass"}  # the partner may only pass
    act(s, "pass")
    assert s.current_player() == 3 and legal(s) == {"pass", "rivanto"}
    act(s, "rivanto")
    assert s.phase == "play" and s.current_player() == 0
    leads = "T20 T19 T17 T16 T15 T14 T13 T12 T11 T10 T9 T8 T7 T6 EX"
    tricks = play_to_end(s, {0: leads})
    assert [t[2] for t in tricks[:-1]] == [0] * 14
    # last trick: EX led; seat 1's KB sets Bastoni; seat 2 has only QS; seat 3 QB: seat 1 wins and takes EX
    assert tricks[-1][1] == [(0, "EX"), (1, "KB"), (2, "QS"), (3, "QB")]
    out = s.outcome()
    assert out["details"]["partner"] == 2
    # Opponents: {EX KB QS QB} = 28 + 13 + 10 + 10 = 61 + 15 = 76; side 0: 312 - 61 = 251
    assert out["card_point_units"] == [251, 76]
    # Side 0: rimatura 1, arie 2, pigliata 1 (T1) = 4; opponents: rivanto 2 (no vanto). D = 2
    assert bonuses_by_side(out) == [{"rimatura": 1, "arie": 2, "pigliata": 1}, {"rivanto": 2}]
    assert s.returns() == [2, -2, 2, -2]
    assert_settlement(out)


# ----------------------------------------------------------------------------------------------------------
# errors


def test_illegal_action_names_it_and_the_legal_ones():
    s = deal(**EX1)
    with pytest.raises(ValueError, match=r"play:KC") as e:
        s.apply("play:KC")
    assert "legal: bid:pass, bid:solo" in str(e.value)
    assert s.history == [] and s.current_player() == 0 and s.phase == "early"
    act(s, EARLY_ALL_PASS)
    act(s, "bid:pass bid:call")
    with pytest.raises(ValueError, match=r"bid:call.*legal: bid:pass, bid:solo"):
        s.apply("bid:call")
    act(s, "bid:solo")
    with pytest.raises(ValueError, match=r"discard:KC") as e:
        s.apply("discard:KC")  # Kings may not be discarded
    assert "discard:4D" in str(e.value) and "discard:T5" not in str(e.value)
    with pytest.raises(ValueError, match=r"discard:T5"):
        s.apply("discard:T5")
    with pytest.raises(ValueError, match="rivanto"):
        s.apply("rivanto")
    assert len(s.history) == 7


def test_unknown_action_strings():
    s = deal(**EX1)
    with pytest.raises(ValueError, match="unknown action"):
        s.apply("bid:double")
    with pytest.raises(ValueError, match="ZZ"):
        s.apply("play:ZZ")
    with pytest.raises(ValueError):
        s.apply(True)


def test_action_after_the_end_is_an_error():
    s = deal(**PLAY_EXAMPLE)
    act(s, EARLY_ALL_PASS + " bid:pass bid:pass bid:pass bid:pass")
    with pytest.raises(ValueError, match="over"):
        s.apply("bid:pass")


def _hands(d):
    return [d[f"seat{k}"].split() for k in range(4)]


def test_state_from_deal_rejects_bad_deals():
    game = tarocchi_rl.make("mineo")
    hands, monte = _hands(EX1), EX1["monte"].split()
    game.state_from_deal(hands, monte)  # the good deal is accepted

    bad = [h[:] for h in hands]
    bad[0][3] = "T21"  # Mineo's trumps stop at T20
    with pytest.raises(ValueError, match=r"deal\.hands\[0\]\[3\].*unknown card 'T21'"):
        game.state_from_deal(bad, monte)

    bad = [h[:] for h in hands]
    bad[1][0] = "4S"  # only Denari has the 4
    with pytest.raises(ValueError, match="unknown card '4S'"):
        game.state_from_deal(bad, monte)

    bad = [h[:] for h in hands]
    bad[2][4] = "T0"  # T0 is already seat 0's first card
    with pytest.raises(ValueError, match=r"deal\.hands\[2\]\[4\].*T0 is dealt twice.*deal\.hands\[0\]\[0\]"):
        game.state_from_deal(bad, monte)

    bad = [h[:] for h in hands]
    bad[2] = bad[2][:14]
    with pytest.raises(ValueError, match=r"deal\.hands\[2\] must hold 15 cards, got 14"):
        game.state_from_deal(bad, monte)

    with pytest.raises(ValueError, match=r"deal\.stock must hold 3 cards, got 2"):
        game.state_from_deal(hands, monte[:2])

    with pytest.raises(ValueError, match="4 lists"):
        game.state_from_deal(hands[:3], monte)


def test_bad_options_and_observer():
    with pytest.raises(ValueError, match="unknown option"):
        tarocchi_rl.make("mineo", doubled=True)
    with pytest.raises(ValueError, match="early_solo"):
        tarocchi_rl.make("mineo", early_solo="yes")
    s = deal(**EX1)
    with pytest.raises(ValueError, match="seat"):
        s.observation(4)
