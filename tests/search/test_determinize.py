"""The determinization sampler (tarocchi_rl.determinize): samples are consistent with all a player has seen.

Checks, over random positions of every variant and every seat:
- the true deal is in the support (it satisfies every constraint of the proposal);
- every sample replays legally through the public API (State.apply), and the player's observation is the
  same as in the real game after every step (an independent check of "he cannot tell them apart");
- the player's own dealt cards, the public cards and the history (but others' face-down discards) are kept.
Then scenarios written with card names: voids, the called trump, a trump discarded face up, a poignée, an
accuso of the honours.
"""

import numpy as np
import pytest

import tarocchi_rl
from tarocchi_rl.core.state import TRICK, TRICK_LEADER
from tarocchi_rl.determinize import Proposal, sample_deal, tracker_of

CONFIGS = [
    ("mineo", {}),
    ("mineo", {"early_solo": False}),
    ("piedmont3", {}),
    ("piedmont4", {"accuso": True}),
    ("french3", {}),
    ("french4", {}),
]


def deck_of(state):
    return [int(c) for c in state._env.state.deck[0, : state.game.deck.n_cards]]


def random_positions(game, n_games, per_game, rng):
    """States at random points of random games (the start and the end included)."""
    out = []
    for _ in range(n_games):
        s = game.new_state(int(rng.integers(1 << 30)))
        trail = [s.clone()]
        while not s.is_terminal():
            la = s.legal_actions()
            s.apply(la[rng.integers(len(la))])
            trail.append(s.clone())
        picks = {0, len(trail) - 1} | set(rng.choice(len(trail), min(per_game, len(trail)), replace=False).tolist())
        out += [trail[k] for k in sorted(picks)]
    return out


def replay_observations(state, player):
    """The player's observation after each step of ``state``'s history, replayed with the public API."""
    s = state.game.state_from_deal(**state.deal())
    obs = [s.observation(player)]
    for a in state.history:
        s.apply(a)  # raises on an illegal action
        obs.append(s.observation(player))
    return s, obs


def assert_consistent(orig, sample, p, deep=True):
    game = orig.game
    assert len(sample.history) == len(orig.history)
    c = game.deck.n_cards
    for k, (a, b) in enumerate(zip(orig.history, sample.history, strict=True)):
        if a != b:  # only another seat's face-down discard may differ
            assert c <= a < 2 * c and c <= b < 2 * c, f"action {k} differs"
            assert game.deck.word[a - c] == 1 and game.deck.word[b - c] == 1, f"discard {k} was face up"
    seen = 5 if orig.phase == "early" else None  # the Mineo early round: he has seen five cards
    assert sample.deal()["hands"][p][:seen] == orig.deal()["hands"][p][:seen]
    assert sample.hand(p) == orig.hand(p)
    assert sample.current_player() == orig.current_player()
    assert sample.phase == orig.phase
    assert np.array_equal(sample.observation(p), orig.observation(p))
    if orig.current_player() == p:
        assert sample.legal_actions() == orig.legal_actions()
    assert tracker_of(sample).view(p) == tracker_of(orig).view(p)
    if deep:
        _, want = replay_observations(orig, p)
        end, got = replay_observations(sample, p)
        for k, (x, y) in enumerate(zip(want, got, strict=True)):
            assert np.array_equal(x, y), f"step {k} looks different to seat {p}"
        assert end.returns() == sample.returns()


@pytest.mark.parametrize(("variant", "options"), CONFIGS)
def test_samples_are_consistent(variant, options):
    game = tarocchi_rl.make(variant, **options)
    rng = np.random.default_rng(hash(variant + str(options)) % 2**32)
    positions = random_positions(game, n_games=10, per_game=9, rng=rng)
    assert len(positions) >= 100
    n = game.num_players
    for i, state in enumerate(positions):
        for p in range(n):
            prop = Proposal(game, deck_of(state), state.history, p)
            assert prop.violations(state) == [], (variant, i, p)
            sample = sample_deal(state, p, rng)
            assert_consistent(state, sample, p, deep=i % 5 == 0 and p == (i // 5) % n)


@pytest.mark.parametrize(("variant", "options"), CONFIGS)
def test_samples_vary(variant, options):
    """Mid-game, the hidden cards are really resampled (not the true deal every time)."""
    game = tarocchi_rl.make(variant, **options)
    rng = np.random.default_rng(7)
    for seed in range(50):
        s = game.new_state(seed)
        while not s.is_terminal() and len(s.history) < 15:
            la = s.legal_actions()
            s.apply(la[rng.integers(len(la))])
        if not s.is_terminal():
            break
    p = s.current_player()
    deals = {tuple(deck_of(sample_deal(s, p, rng))) for _ in range(10)}
    assert len(deals) > 1


@pytest.mark.nojit
def test_mineo_early_round_keeps_only_the_first_five():
    game = tarocchi_rl.make("mineo")
    s = game.new_state(3)
    s.apply("bid:pass")
    rng = np.random.default_rng(0)
    for _ in range(5):
        t = sample_deal(s, 1, rng)
        assert t.deal()["hands"][1][:5] == s.deal()["hands"][1][:5]
        assert t.hand(1) == s.hand(1)  # five cards in the early round
    others = {tuple(sample_deal(s, 1, rng).deal()["hands"][1][5:]) for _ in range(5)}
    assert len(others) > 1  # his later ten cards are not known to him yet


def test_rejection_gives_a_clear_error():
    game = tarocchi_rl.make("french4")
    s = game.new_state(5)
    s.apply(s.legal_actions()[0])
    prop = Proposal(game, deck_of(s), s.history, 1)
    prop.target = ["never seen"] + prop.target[1:]
    with pytest.raises(RuntimeError, match="no deal consistent with what seat 1 has seen"):
        prop.sample(np.random.default_rng(0), max_tries=20)


def test_bad_player():
    game = tarocchi_rl.make("french3")
    with pytest.raises(ValueError, match="player must be a seat 0..2"):
        sample_deal(game.new_state(1), 3)


# ----------------------------------------------------------------------------------------------------------
# scenarios with card names


def mineo_deal(first, monte, others=()):
    """Seat 0 holds ``first``, the monte is ``monte``; seats 1..3 get ``others`` then the rest in order."""
    names = tarocchi_rl.make("mineo").deck.names
    rest = [c for c in names if c not in list(first) + list(monte) + [x for h in others for x in h]]
    hands = [list(first)]
    for k in range(3):
        h = list(others[k]) if k < len(others) else []
        need = 15 - len(h)
        hands.append(h + rest[:need])
        rest = rest[need:]
    return hands, list(monte)


@pytest.mark.nojit
def test_trump_discarded_face_up_bounds_the_declarer_hand():
    """Soloist with 13 trumps, 2 Kings and the monte 5C 6C EX: he may (and does) discard T5 face up, which
    proves he kept no discardable card: every sample gives him none, and 5C, 6C in the face-down discard."""
    game = tarocchi_rl.make("mineo")
    hands, stock = mineo_deal([f"T{k}" for k in range(13)] + ["KC", "KD"], ["5C", "6C", "EX"])
    s = game.state_from_deal(hands, stock)
    for a in ("bid:solo", "discard:T5", "discard:5C", "discard:6C"):
        s.apply(a)
    rng = np.random.default_rng(1)
    for p in (1, 2, 3):
        assert Proposal(game, deck_of(s), s.history, p).violations(s) == []
        for _ in range(10):
            t = sample_deal(s, p, rng)
            assert_consistent(s, t, p, deep=False)
            assert all(c.startswith("T") or c in ("EX", "KC", "KD", "KS", "KB") for c in t.hand(0))
            assert {t.action_to_string(a) for a in t.history[2:4]} <= {"discard:5C", "discard:6C"}


@pytest.mark.nojit
def test_called_trump_and_rivanto():
    """Seat 0 calls holding T20..T18 (T17 is called, seat 2 holds it); seat 1 says rivanto, so seat 1 is not
    the partner: from seat 3's view, T20..T18 are seat 0's and T17 is seat 2's in every sample."""
    game = tarocchi_rl.make("mineo", early_solo=False)
    first = ["T20", "T19", "T18", "T1", "T2", "KC", "QC", "NC", "JC", "10C", "9C", "8C", "7C", "6C", "5C"]
    hands, stock = mineo_deal(first, ["5D", "6D", "7D"], others=[["T3"], ["T17"], ["T4"]])
    s = game.state_from_deal(hands, stock)
    for a in ("bid:call", "bid:pass", "bid:pass", "bid:pass", "discard:5D", "discard:6D", "discard:7D", "pass",
              "rivanto"):
        s.apply(a)
    assert s.phase == "play"
    rng = np.random.default_rng(2)
    prop = Proposal(game, deck_of(s), s.history, 3)
    assert prop.violations(s) == []
    for _ in range(20):
        t = sample_deal(s, 3, rng)
        assert_consistent(s, t, 3, deep=False)
        assert {"T20", "T19", "T18"} <= set(t.hand(0))
        assert "T17" in t.hand(2)  # not the caller's, not the rivanto seat's, not seat 3's


def test_voids_shown_in_play():
    """A seat that did not follow suit holds none of that suit in any sample (French, with overtrumping)."""
    game = tarocchi_rl.make("french4")
    rng = np.random.default_rng(3)
    checked = 0
    for seed in range(40):
        s = game.new_state(seed)
        while not s.is_terminal() and checked < 30:
            before = s.clone()
            la = s.legal_actions()
            s.apply(la[rng.integers(len(la))])
            if before.phase != "play" or s.is_terminal():
                continue
            meta = before._env.state.meta[0]
            first = int(meta[TRICK + meta[TRICK_LEADER]])
            seat = before.current_player()
            card = game.deck.names[s.history[-1]]
            led = game.deck.names[first] if first >= 0 else None
            if not led or led == "EX" or led.startswith("T") or card == "EX" or card[-1] == led[-1]:
                continue
            p = (seat + 1) % 4
            for _ in range(3):
                t = sample_deal(s, p, rng)
                assert not [c for c in t.hand(seat) if c[-1] == led[-1] and not c.startswith("T") and c != "EX"]
            checked += 1
    assert checked >= 10


@pytest.mark.nojit
def test_poignee_pins_the_shown_trumps():
    """French4: seat 1 holds eleven trumps and shows a simple poignée (his ten lowest); in every sample from
    seat 0's view he holds those ten, and no lower trump that was not shown."""
    game = tarocchi_rl.make("french4")
    names = game.deck.names
    s1 = ["T3", "T4", "T6", "T8", "T9", "T11", "T12", "T14", "T15", "T17", "T20"] + ["1S", "2S", "3S", "4S", "5S",
                                                                                   "6S", "7S"]
    s0 = ["T1", "T2", "EX"] + [f"{r}H" for r in ("1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "N", "Q",
                                                 "K", )] + ["8S"]
    rest = [c for c in names if c not in s0 + s1]
    hands = [s0, s1, rest[:18], rest[18:36]]
    s = game.state_from_deal(hands, rest[36:])
    assert not s.is_terminal()
    for a in ("bid:prise", "bid:pass", "bid:pass", "bid:pass"):
        s.apply(a)
    while s.phase == "discard":
        s.apply(s.legal_actions()[0])
    s.apply("pass")  # no chelem
    s.apply("pass")  # seat 0's poignee
    s.apply(s.legal_actions()[0])  # seat 0 leads
    s.apply("poignee:simple")
    shown = ["T3", "T4", "T6", "T8", "T9", "T11", "T12", "T14", "T15", "T17"]
    rng = np.random.default_rng(4)
    for p in (0, 2, 3):
        assert Proposal(game, deck_of(s), s.history, p).violations(s) == []
        for _ in range(10):
            t = sample_deal(s, p, rng)
            assert_consistent(s, t, p, deep=False)
            held = set(t.hand(1))
            assert set(shown) <= held
            assert not held & {"T1", "T2", "T5", "T7", "T10", "T13", "T16"}


@pytest.mark.nojit
def test_accuso_of_the_honours():
    """Piedmont4 with accuso: seat 1 shows T1 T20 T21 (fewer than ten trumps); every sample gives him the
    honours and at most nine trumps."""
    game = tarocchi_rl.make("piedmont4", accuso=True)
    names = game.deck.names
    s1 = ["T1", "T20", "T21", "T2", "T3", "1B"] + [c for c in names if c.endswith("S") and c != "KS"]
    assert len(s1) == 19
    rest = [c for c in names if c not in s1]
    hands = [rest[:19], s1, rest[19:38], rest[38:57]]
    s = game.state_from_deal(hands, rest[57:])
    while s.phase == "discard":
        s.apply(s.legal_actions()[0])
    s.apply("pass")
    s.apply("accuso")
    rng = np.random.default_rng(5)
    for p in (0, 2, 3):
        assert Proposal(game, deck_of(s), s.history, p).violations(s) == []
        for _ in range(10):
            t = sample_deal(s, p, rng)
            assert_consistent(s, t, p, deep=False)
            held = set(t.hand(1))
            assert {"T1", "T20", "T21"} <= held
            assert len([c for c in held if c.startswith("T")]) <= 9


def test_face_down_discards_are_resampled():
    """Piedmont3: the dealer's face-down discards are hidden from the others; the samples' histories
    discard other cards, which are legal and keep the other players' views."""
    game = tarocchi_rl.make("piedmont3")
    s = game.new_state(21)
    for _ in range(3):
        assert s.phase == "discard"
        s.apply(s.legal_actions()[-1])
    rng = np.random.default_rng(6)
    discards = set()
    for _ in range(10):
        t = sample_deal(s, 0, rng)
        assert_consistent(s, t, 0, deep=True)
        discards.add(tuple(t.history[:3]))
    assert len(discards) > 1
