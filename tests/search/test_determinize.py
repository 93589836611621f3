"""Determinization against the replay oracle (tests/oracles/oracle_determinize.py).

The cross-check of the library's exact sampler (tarocchi_rl.search.determinize), over random positions of every
registered variant (default options, and every boolean option flipped) and every seat: the oracle accepts the
true deal, and it accepts every deal the exact sampler draws (the history replayed on it, others' face-down
discards rewritten to the sampled ones, is legal and looks the same to the player after every step); the
replayed game is the sampler's row, hidden meta included.

The oracle itself (its own sampler), over random positions of every variant and every seat:
- the true deal is in the support (it satisfies every constraint of the proposal);
- every sample replays legally through the public API (State.apply), and the player's observation is the
  same as in the real game after every step (an independent check of "he cannot tell them apart");
- the player's own dealt cards, the public cards and the history (but others' face-down discards) are kept.
Then scenarios written with card names: voids, the called trump, a trump discarded face up, a poignée, an
accuso of the honours.
"""

import zlib

import numpy as np
import pytest

import tarocchi_rl
from tarocchi_rl.core.state import DISCARDED, SHOWN, TRICK, TRICK_LEADER
from tarocchi_rl.search import determinize as D
from tarocchi_rl.variants import VARIANTS, get_variant
from tests.oracles.oracle_determinize import Proposal, sample_deal, tracker_of

CONFIGS = [
    ("mineo", {}),
    ("mineo", {"early_solo": False}),
    ("piedmont3", {}),
    ("piedmont4", {"accuso": True}),
    ("french3", {}),
    ("french4", {}),
]


def stable_seed(variant, options):
    """A seed per configuration that does not depend on PYTHONHASHSEED."""
    return zlib.crc32(f"{variant} {sorted(options.items())}".encode())


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
    rng = np.random.default_rng(stable_seed(variant, options))
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


def trump_discarded_face_up():
    """Soloist with 13 trumps, 2 Kings and the monte 5C 6C EX: he may (and does) discard T5 face up, which
    proves he kept no discardable card."""
    game = tarocchi_rl.make("mineo")
    hands, stock = mineo_deal([f"T{k}" for k in range(13)] + ["KC", "KD"], ["5C", "6C", "EX"])
    s = game.state_from_deal(hands, stock)
    for a in ("bid:solo", "discard:T5", "discard:5C", "discard:6C"):
        s.apply(a)
    return s


def check_trump_discarded_face_up(t):
    """He holds no discardable card; 5C, 6C are in the face-down discard."""
    assert all(c.startswith("T") or c in ("EX", "KC", "KD", "KS", "KB") for c in t.hand(0))
    assert {t.action_to_string(a) for a in t.history[2:4]} <= {"discard:5C", "discard:6C"}


def called_trump_and_rivanto():
    """Seat 0 calls holding T20..T18 (T17 is called, seat 2 holds it); seat 1 says rivanto, so seat 1 is not
    the partner."""
    game = tarocchi_rl.make("mineo", early_solo=False)
    first = ["T20", "T19", "T18", "T1", "T2", "KC", "QC", "NC", "JC", "10C", "9C", "8C", "7C", "6C", "5C"]
    hands, stock = mineo_deal(first, ["5D", "6D", "7D"], others=[["T3"], ["T17"], ["T4"]])
    s = game.state_from_deal(hands, stock)
    for a in ("bid:call", "bid:pass", "bid:pass", "bid:pass", "discard:5D", "discard:6D", "discard:7D", "pass",
              "rivanto"):
        s.apply(a)
    assert s.phase == "play"
    return s


def check_called_trump_and_rivanto(t):
    """From seat 3's view, T20..T18 are seat 0's and T17 is seat 2's."""
    assert {"T20", "T19", "T18"} <= set(t.hand(0))
    assert "T17" in t.hand(2)  # not the caller's, not the rivanto seat's, not seat 3's


POIGNEE_SHOWN = ["T3", "T4", "T6", "T8", "T9", "T11", "T12", "T14", "T15", "T17"]


def poignee():
    """French4: seat 1 holds eleven trumps and shows a simple poignée (his ten lowest)."""
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
    return s


def check_poignee(t):
    """He holds the ten shown trumps, and no lower trump that was not shown."""
    held = set(t.hand(1))
    assert set(POIGNEE_SHOWN) <= held
    assert not held & {"T1", "T2", "T5", "T7", "T10", "T13", "T16"}


def accuso_of_the_honours():
    """Piedmont4 with accuso: seat 1 shows T1 T20 T21 (fewer than ten trumps)."""
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
    return s


def check_accuso_of_the_honours(t):
    """He holds the honours and at most nine trumps."""
    held = set(t.hand(1))
    assert {"T1", "T20", "T21"} <= held
    assert len([c for c in held if c.startswith("T")]) <= 9


def face_down_discards():
    """Piedmont3: the dealer (seat 2) discards three cards face down."""
    game = tarocchi_rl.make("piedmont3")
    s = game.new_state(21)
    for _ in range(3):
        assert s.phase == "discard"
        s.apply(s.legal_actions()[-1])
    return s


# name: (position, seats whose view is sampled, property of every sample)
SCENARIOS = {
    "trump discarded face up": (trump_discarded_face_up, (1, 2, 3), check_trump_discarded_face_up),
    "called trump and rivanto": (called_trump_and_rivanto, (3,), check_called_trump_and_rivanto),
    "poignee": (poignee, (0, 2, 3), check_poignee),
    "accuso of the honours": (accuso_of_the_honours, (0, 2, 3), check_accuso_of_the_honours),
    "face-down discards": (face_down_discards, (0, 1), lambda t: None),
}


@pytest.mark.nojit
def test_trump_discarded_face_up_bounds_the_declarer_hand():
    """Every sample gives the soloist no discardable card, and 5C, 6C in the face-down discard."""
    s = trump_discarded_face_up()
    game = s.game
    rng = np.random.default_rng(1)
    for p in (1, 2, 3):
        assert Proposal(game, deck_of(s), s.history, p).violations(s) == []
        for _ in range(10):
            t = sample_deal(s, p, rng)
            assert_consistent(s, t, p, deep=False)
            check_trump_discarded_face_up(t)


@pytest.mark.nojit
def test_called_trump_and_rivanto():
    """From seat 3's view, T20..T18 are seat 0's and T17 is seat 2's in every sample."""
    s = called_trump_and_rivanto()
    rng = np.random.default_rng(2)
    prop = Proposal(s.game, deck_of(s), s.history, 3)
    assert prop.violations(s) == []
    for _ in range(20):
        t = sample_deal(s, 3, rng)
        assert_consistent(s, t, 3, deep=False)
        check_called_trump_and_rivanto(t)


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
    """In every sample from seat 0's view seat 1 holds the ten trumps he showed, and no lower trump that was
    not shown."""
    s = poignee()
    rng = np.random.default_rng(4)
    for p in (0, 2, 3):
        assert Proposal(s.game, deck_of(s), s.history, p).violations(s) == []
        for _ in range(10):
            t = sample_deal(s, p, rng)
            assert_consistent(s, t, p, deep=False)
            check_poignee(t)


@pytest.mark.nojit
def test_accuso_of_the_honours():
    """Every sample gives seat 1 the honours and at most nine trumps."""
    s = accuso_of_the_honours()
    rng = np.random.default_rng(5)
    for p in (0, 2, 3):
        assert Proposal(s.game, deck_of(s), s.history, p).violations(s) == []
        for _ in range(10):
            t = sample_deal(s, p, rng)
            assert_consistent(s, t, p, deep=False)
            check_accuso_of_the_honours(t)


def test_face_down_discards_are_resampled():
    """Piedmont3: the dealer's face-down discards are hidden from the others; the samples' histories
    discard other cards, which are legal and keep the other players' views."""
    s = face_down_discards()
    rng = np.random.default_rng(6)
    discards = set()
    for _ in range(10):
        t = sample_deal(s, 0, rng)
        assert_consistent(s, t, 0, deep=True)
        discards.add(tuple(t.history[:3]))
    assert len(discards) > 1


# ----------------------------------------------------------------------------------------------------------
# the exact sampler, cross-checked by the oracle


def variant_configs():
    """Every registered variant with its default options, and with every boolean option flipped."""
    out = []
    for v in VARIANTS:
        out.append((v, {}))
        flipped = {name: not spec[1] for name, spec in get_variant(v).options.items() if spec[0] is bool}
        if flipped:
            out.append((v, flipped))
    return out


def ended_at_once(state):
    """A deal that ended before any action (a French petit sec)."""
    return state.is_terminal() and not state.history


def exact_sample(game, state, prop, dst, j, rng):
    """The deal of game j of ``dst`` (an exact sample of ``state`` for ``prop.player``) and the history on it:
    the face-down discards the player did not see discard the sampled face-down cards, in random order."""
    n = game.deck.n_cards
    deck = [int(c) for c in dst.deck[j, :n]]
    history = list(state.history)
    if prop.hidden_steps:
        cards = game.deck.cards_of(dst.cards[j, DISCARDED] & ~dst.cards[j, SHOWN])
        rng.shuffle(cards)
        for k, c in zip(prop.hidden_steps, cards, strict=True):
            history[k] = n + int(c)
    return deck, history


@pytest.mark.parametrize(("variant", "options"), variant_configs())
def test_exact_samples_are_accepted_by_the_oracle(variant, options):
    game = tarocchi_rl.make(variant, **options)
    rng = np.random.default_rng(stable_seed(variant, options))
    positions = random_positions(game, n_games=16, per_game=10, rng=rng)
    assert len(positions) >= 150
    samples = 4
    checked = 0
    for i, state in enumerate(positions):
        st, tb = state._env.state, state._env.tables
        for p in range(game.num_players):
            prop = Proposal(game, deck_of(state), state.history, p)
            tr, why = prop.accept(deck_of(state), state.history)
            assert tr is not None, (variant, i, p, "the true deal", why)
            if ended_at_once(state):  # the sampler does not condition on the petit sec (OpenSpiel rejects)
                continue
            dst = D.determinize(st, 0, p, tb, n=samples, seed=int(rng.integers(1 << 62)))
            for j in range(samples):
                deck, history = exact_sample(game, state, prop, dst, j, rng)
                tr, why = prop.accept(deck, history)
                assert tr is not None, (variant, options, i, p, j, why)
                row = tr.state._env.state
                wrong = np.flatnonzero(row.meta[0] != dst.meta[j])
                assert not wrong.size, (variant, i, p, "meta fields", wrong)
                assert np.array_equal(row.cards[0], dst.cards[j]), (variant, i, p)
                checked += 1
    assert checked >= 150 * game.num_players * samples * 0.9


@pytest.mark.nojit
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_exact_samples_of_the_scenarios(name):
    """The scenarios above, sampled by the exact sampler: every deal is accepted by the oracle, looks the same
    to the player (replayed through the public API), has the scenario's property, and the deals vary."""
    build, seats, check = SCENARIOS[name]
    state = build()
    game = state.game
    st, tb = state._env.state, state._env.tables
    rng = np.random.default_rng(8)
    for p in seats:
        prop = Proposal(game, deck_of(state), state.history, p)
        dst = D.determinize(st, 0, p, tb, n=12, seed=p)
        deals, histories = set(), set()
        for j in range(12):
            deck, history = exact_sample(game, state, prop, dst, j, rng)
            tr, why = prop.accept(deck, history)
            assert tr is not None, (name, p, j, why)
            assert_consistent(state, tr.state, p, deep=j < 2)
            check(tr.state)
            deals.add(tuple(deck))
            histories.add(tuple(history))
        assert len(deals) > 1, (name, p)
        if prop.hidden_steps:
            assert len(histories) > 1, (name, p)  # the face-down discards are resampled too
