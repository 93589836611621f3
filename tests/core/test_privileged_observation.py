"""The privileged observation (the hidden part of a deal, read only by the perfect-information critic of training):
its layout, a known Mineo deal checked card by card, and invariants on random positions of every variant."""

import numpy as np
import pytest

from tarocchi_rl import engine
from tarocchi_rl.batch import BatchEnv
from tarocchi_rl.core.obs_layout import PRIVILEGED_SECTIONS, build_privileged_layout
from tarocchi_rl.variants import VARIANTS, get_variant

# a Mineo deal by seat, then the monte (the deal order of st.deck)
HANDS = [
    "T0 T1 T2 T3 T4 T5 T6 T7 T8 T9 T10 T11 T12 T13 T14",
    "T15 T16 T17 T18 T19 T20 EX 5C 6C 7C 8C 9C 10C JC NC",
    "QC KC 4D 5D 6D 7D 8D 9D 10D JD ND QD KD 5S 6S",
    "7S 8S 9S 10S JS NS QS KS 5B 6B 7B 8B 9B 10B JB",
]
MONTE = "NB QB KB"


def _mineo_env(early_solo: bool) -> BatchEnv:
    env = BatchEnv("mineo", 1, seed=0, early_solo=early_solo)
    deck = env.spec.deck
    env.set_deals(np.array([[deck.card_id(c) for c in " ".join([*HANDS, MONTE]).split()]]))
    return env


def _sections(env: BatchEnv, viewer: int) -> dict[str, set[str]]:
    """The privileged observation of game 0 seen by ``viewer`` as card-name sets: hand0..hand{N-1}, stock, discard."""
    pv = engine.observe_privileged(env.state, env.tables, np.array([viewer]))[0]
    names, c, n = env.spec.deck.names, env.spec.deck.n_cards, env.num_players
    assert set(np.unique(pv)) <= {0.0, 1.0}
    planes = {f"hand{r}": pv[r * c : (r + 1) * c] for r in range(n)}
    planes |= {"stock": pv[n * c : (n + 1) * c], "discard": pv[(n + 1) * c : (n + 2) * c]}
    return {k: {names[j] for j in np.nonzero(v)[0]} for k, v in planes.items()}


def _act(env: BatchEnv, text: str) -> None:
    env.step(np.array([env.spec.rules.string_to_action(text)]))


def test_layout_is_every_hand_then_the_stock_then_the_discard():
    assert PRIVILEGED_SECTIONS == ("hands", "stock", "discard")
    offsets, dim, rows = build_privileged_layout(4, 63)
    assert list(offsets) == [0, 252, 315] and dim == 378
    assert rows == [(0, 252, "hands"), (252, 63, "stock"), (315, 63, "discard")]
    for name in VARIANTS:
        spec = get_variant(name)
        assert engine.privileged_layout(spec.tables(spec.resolve_options({})))[1] == (
            (spec.n_players + 2) * spec.deck.n_cards)


def test_a_known_deal_seen_from_seat_2_in_relative_seats():
    env = _mineo_env(early_solo=False)
    seen = _sections(env, viewer=2)
    for r in range(4):  # relative seat r of viewer 2 is seat (2 + r) mod 4
        assert seen[f"hand{r}"] == set(HANDS[(2 + r) % 4].split()), r
    assert seen["stock"] == set(MONTE.split()) and seen["discard"] == set()
    # seat 0 goes solo, takes the monte and discards T2, NB and QB: seat 2 (a defender) sees all of it here
    _act(env, "bid:solo")
    for card in ("T2", "NB", "QB"):
        _act(env, f"discard:{card}")
    seen = _sections(env, viewer=2)
    assert seen["hand2"] == (set(HANDS[0].split()) | {"KB"}) - {"T2"}
    assert seen["discard"] == {"T2", "NB", "QB"} and seen["stock"] == set(MONTE.split())
    assert seen["hand0"] == set(HANDS[2].split())
    # ... which its own observation does not show: no discard plane for a defender
    spec = env.spec
    offset, size = next((o, s) for o, s, name in spec.obs_rows if name == "discard")
    assert not env.observe(np.array([2]))[0, offset : offset + size].any()


def test_the_early_round_shows_every_share_of_the_deal_before_it_is_handed_out():
    env = _mineo_env(early_solo=True)
    hand_offset = next(o for o, _, name in env.spec.obs_rows if name == "hand")
    own = env.observe(np.array([1]))[0, hand_offset : hand_offset + 63]
    assert own.sum() == 5  # the early round: five cards each so far
    seen = _sections(env, viewer=1)
    for r in range(4):
        assert seen[f"hand{r}"] == set(HANDS[(1 + r) % 4].split()), r


@pytest.mark.parametrize("variant", VARIANTS)
def test_random_positions_account_for_every_card(variant):
    env = BatchEnv(variant, 64, seed=3)
    rng = np.random.default_rng(0)
    spec, n, c = env.spec, env.num_players, env.spec.deck.n_cards
    played_offset = next(o for o, _, name in spec.obs_rows if name == "played")
    hand_offset = next(o for o, _, name in spec.obs_rows if name == "hand")
    for _ in range(rng.integers(5, 40)):
        env.step(env.random_actions())
    live = ~env.done()
    viewer = np.where(live, 0, -1)
    base = engine.observe_privileged(env.state, env.tables, viewer)
    assert not base[~live].any()  # viewer -1: a zero row
    obs = env.observe(viewer)
    played = obs[:, played_offset : played_offset + n * c].reshape(-1, n, c).max(axis=1)
    hands = base[:, : n * c].reshape(-1, n, c)
    every = np.maximum.reduce([hands.max(axis=1), base[:, n * c : (n + 1) * c], base[:, (n + 1) * c :], played])
    assert (every[live] == 1).all()  # every card is in a hand, the stock, the discard or played
    assert (hands[live, 0] >= obs[live, hand_offset : hand_offset + c]).all()  # the viewer's own hand included
    for v in range(1, n):  # another viewer sees the same hands, rotated to its relative seats
        rotated = engine.observe_privileged(env.state, env.tables, np.where(live, v, -1))[:, : n * c]
        rotated = rotated.reshape(-1, n, c)
        for r in range(n):
            np.testing.assert_array_equal(rotated[live, r], hands[live, (v + r) % n])
