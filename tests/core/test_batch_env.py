"""BatchEnv and the single-game API: shapes, errors on bad input, auto-reset, reproducibility, what the
observation shows and hides, JIT and pure-Python agreement, and that importing compiles nothing."""

import os
import subprocess
import sys

import numpy as np
import pytest

import tarocchi_rl
from tarocchi_rl import BatchEnv
from tarocchi_rl.core.phases import PLAY
from tarocchi_rl.core.state import DECLARER, HAND, PHASE
from tarocchi_rl.variants import VARIANTS, mineo
from tests.support.engine import JIT_DISABLED
from tests.support.engine import MINEO_OBS as mineo_obs

pytestmark = pytest.mark.nojit


def test_shapes_and_dtypes():
    env = BatchEnv("mineo", 8, seed=1)
    assert env.legal_mask().shape == (8, mineo.N_ACTIONS) and env.legal_mask().dtype == bool
    obs = env.observe()
    assert obs.shape == (8, mineo_obs.OBS_DIM) and obs.dtype == np.float32
    assert env.current_player().tolist() == [0] * 8
    payoffs, done = env.step(env.random_actions())
    assert payoffs.shape == (8, 4) and payoffs.dtype == np.int32 and done.shape == (8,)
    assert env.returns().shape == (8, 4)


def test_bad_input_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown variant 'mineo5'"):
        BatchEnv("mineo5", 4)
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        BatchEnv("mineo", 0)
    with pytest.raises(ValueError, match="unknown option 'doubling'"):
        BatchEnv("mineo", 2, doubling=True)
    env = BatchEnv("mineo", 3, seed=0)
    with pytest.raises(ValueError, match=r"actions must have shape \(3,\)"):
        env.step(np.zeros(2, int))
    with pytest.raises(ValueError, match="must be integers"):
        env.step(np.zeros(3))
    acts = env.random_actions()
    acts[1] = mineo.A_CALL  # call is not legal in the early round
    msg = r"illegal action 128 \(bid:call\) for game 1, seat \d .* legal actions: 126 \(bid:pass\), 127 \(bid:solo\)"
    with pytest.raises(ValueError, match=msg):
        env.step(acts)
    with pytest.raises(ValueError, match="illegal action 9999 \\(out of range 0..\\d+\\)"):
        env.step(np.array([9999, 0, 0]))
    with pytest.raises(ValueError, match="players must be seats"):
        env.observe(np.array([0, 4, 0]))
    with pytest.raises(ValueError, match="not a permutation"):
        env.set_deals(np.zeros((3, 63), int))


def test_seed_reproducibility_and_independent_games():
    a, b = BatchEnv("mineo", 16, seed=42), BatchEnv("mineo", 16, seed=42)
    c = BatchEnv("mineo", 16, seed=43)
    assert (a.state.deck == b.state.deck).all()
    assert not (a.state.deck == c.state.deck).all()
    assert len({tuple(row) for row in a.state.deck}) == 16
    for _ in range(30):
        a.step(a.random_actions())
        b.step(b.random_actions())
    assert (a.state.meta == b.state.meta).all() and (a.state.cards == b.state.cards).all()


def test_finished_games_are_ignored_and_auto_reset_redeals():
    env = BatchEnv("mineo", 32, seed=5)
    finished_payoffs = np.zeros((32, 4), np.int32)
    while not env.all_done():
        payoffs, done = env.step(env.random_actions())
        finished_payoffs[done] = payoffs[done]
        assert (env.current_player()[env.done()] == -1).all()
        assert not env.legal_mask()[env.done()].any()
    assert (finished_payoffs == env.returns()).all()
    before = env.state.meta.copy()
    env.step(np.full(32, -1))  # entries of finished games are ignored
    assert (env.state.meta == before).all()

    auto = BatchEnv("mineo", 32, seed=5, auto_reset=True)
    seen = np.zeros(32, bool)
    for _ in range(200):
        old_decks = auto.state.deck.copy()
        payoffs, done = auto.step(auto.random_actions())
        assert (payoffs[~done] == 0).all()
        assert (payoffs[done].sum(axis=1) == 0).all()
        if done.any():  # a finished game is re-dealt at once
            assert (auto.state.meta[done, PHASE] == mineo.EARLY).all()
            assert not (auto.state.deck[done] == old_decks[done]).all(axis=1).any()
        seen |= done
        assert not auto.done().any()
    assert seen.all()


def test_observation_hides_what_the_viewer_cannot_see():
    game = tarocchi_rl.make("mineo")
    state = game.new_state(2)
    obs = state.observation(1)
    hand = obs[mineo_obs.OBS_HAND : mineo_obs.OBS_HAND + 63]
    # during the early round a player holds and sees 5 cards
    assert hand.sum() == 5
    assert state.hand(1) == [game.deck.names[c] for c in sorted(np.nonzero(hand)[0], key=game.deck.sort_key)]
    assert obs[mineo_obs.OBS_MONTE : mineo_obs.OBS_MONTE + 63].sum() == 0  # the monte is not shown yet
    while state.phase != "play":
        state.apply(state.legal_actions()[-1] if state.phase == "early" else state.legal_actions()[0])
    st = state._env.state
    decl = int(st.meta[0, DECLARER])
    other = (decl + 1) % 4
    o_decl, o_other = state.observation(decl), state.observation(other)
    sl = slice(mineo_obs.OBS_DISCARD, mineo_obs.OBS_DISCARD + 63)
    assert o_decl[sl].sum() == 3 and o_other[sl].sum() == 0  # own discard: the declarer only
    assert o_other[mineo_obs.OBS_MONTE : mineo_obs.OBS_MONTE + 63].sum() == 3  # the monte was shown
    hand_other = o_other[mineo_obs.OBS_HAND : mineo_obs.OBS_HAND + 63]
    assert hand_other.sum() == 15
    hand_decl = o_decl[mineo_obs.OBS_HAND : mineo_obs.OBS_HAND + 63]
    assert not (hand_other.astype(bool) & hand_decl.astype(bool)).any()
    assert int(st.cards[0, HAND + other, 0]) != 0 or int(st.cards[0, HAND + other, 1]) != 0
    assert o_decl[mineo_obs.OBS_SEAT + decl] == 1 and o_decl[mineo_obs.OBS_PHASE + PLAY] == 1


def test_single_game_api_strings_and_clone():
    game = tarocchi_rl.make("mineo", early_solo=False)
    state = game.new_state(9)
    assert state.phase == "auction"
    assert [state.action_to_string(a) for a in state.legal_actions()] == ["bid:pass", "bid:solo", "bid:call"]
    assert state.string_to_action("bid:call") == state.string_to_action("call") == mineo.A_CALL
    assert state.string_to_action("pass") == state.string_to_action("bid:pass") == mineo.A_PASS
    assert game.string_to_action("play:KC") == game.deck.card_id("KC")
    assert game.string_to_action("discard:5d") == mineo.A_DISCARD + game.deck.card_id("5D")
    twin = state.clone()
    state.apply("bid:solo")
    assert twin.phase == "auction" and twin.history == [] and state.history == [mineo.A_SOLO]
    with pytest.raises(ValueError, match="an action must be an int id or a string"):
        state.apply(1.5)


def test_jit_and_pure_python_agree():
    """The same seeded games in a subprocess with the other JIT mode give identical states."""
    code = (
        "import numpy as np, tarocchi_rl;"
        "env = tarocchi_rl.BatchEnv('mineo', 12, seed=77);"
        "[env.step(env.random_actions()) for _ in range(200)];"
        "obs = env.observe(np.zeros(12, np.int64));"
        "print(int(env.state.meta.astype(np.int64).sum()),"
        " int(np.bitwise_xor.reduce(env.state.cards.ravel())), env.returns().tolist(), float(obs.sum()))"
    )
    mine = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ)
    other_env = dict(os.environ, NUMBA_DISABLE_JIT="0" if JIT_DISABLED else "1")
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=other_env)
    assert mine.returncode == 0 and other.returncode == 0, mine.stderr + other.stderr
    assert mine.stdout == other.stdout


def test_import_compiles_nothing_and_kernels_are_cached():
    code = (
        "import importlib, tarocchi_rl;"
        "from numba.core.registry import CPUDispatcher;"
        "names = ('bits', 'core.deal', 'core.trick', 'core.points', 'engine.drivers', 'engine.observation',"
        " 'variants.mineo', 'variants.piedmont', 'variants.french', 'policies.heuristic');"
        "mods = [importlib.import_module('tarocchi_rl.' + n) for n in names];"
        "ks = [f for mod in mods for f in vars(mod).values() if isinstance(f, CPUDispatcher)];"
        "print(len(ks), sum(len(f.signatures) for f in ks),"
        " sum(type(f._cache).__name__ == 'NullCache' for f in ks))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if JIT_DISABLED:
        pytest.skip("no dispatchers without the JIT")
    n_kernels, n_compiled, n_uncached = map(int, r.stdout.split())
    assert n_kernels > 40
    assert n_compiled == 0  # importing compiled nothing
    assert n_uncached == 0  # every kernel has cache=True


def test_observation_layout_doc_is_current():
    import pathlib

    from tarocchi_rl.variants import observation_layouts_markdown

    doc = pathlib.Path(__file__).resolve().parents[2] / "docs" / "observations.md"
    assert doc.read_text() == observation_layouts_markdown(), "regenerate: python -m tarocchi_rl.variants"


@pytest.mark.parametrize("variant", VARIANTS)
def test_observation_of_every_variant_hides_other_hands(variant):
    env = BatchEnv(variant, 4, seed=1)
    for _ in range(10):
        env.step(env.random_actions())
    spec = env.spec
    off = {name: (o, size) for o, size, name in spec.obs_rows}
    for viewer in range(env.num_players):
        obs = env.observe(np.full(4, viewer))
        o, size = off["hand"]
        for i in range(4):
            held = sorted(spec.deck.cards_of(env.state.cards[i, HAND + viewer]))
            assert sorted(np.nonzero(obs[i, o : o + size])[0].tolist()) == held
            assert obs[i, off["seat"][0] + viewer] == 1
    assert obs.shape == (4, spec.obs_dim)


def test_auto_reset_redeals_petit_sec_and_never_shows_a_finished_game():
    seed = next(k for k in range(1000) if BatchEnv("french4", 64, seed=k).done().any())  # a petit sec at once
    assert BatchEnv("french4", 64, seed=seed).done().any()
    auto = BatchEnv("french4", 64, seed=seed, auto_reset=True)
    assert not auto.done().any()
    for _ in range(300):
        payoffs, done = auto.step(auto.random_actions())
        assert not auto.done().any()
        assert (payoffs.sum(axis=1) == 0).all()


def _copy_of(st):
    """A new batch state holding the arrays of ``st``."""
    from tarocchi_rl.core.state import alloc_state

    new = alloc_state(st.meta.shape[0])
    for mine, theirs in zip(new, st, strict=True):
        mine[...] = theirs
    return new


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_serial_and_parallel_loops_play_the_same_games(variant):
    """The serial twins (a batch under SERIAL_BELOW games) and the parallel batch drivers, run on copies of one
    state with the same actions, give the same states, legal masks, observations and payoffs."""
    from tarocchi_rl import engine

    env = BatchEnv(variant, 8, seed=3, auto_reset=True)
    both = (engine.SERIAL, engine.PARALLEL)
    states = [_copy_of(env.state) for _ in both]
    seen = [[], []]
    for _ in range(150):  # (more than a deal's actions in every variant)
        actions = env.random_actions()
        env.step(actions)
        for st, loops, out in zip(states, both, seen, strict=True):
            done = np.zeros(8, bool)
            payoffs = np.zeros((8, 4), np.int32)
            loops.step(st, actions, env.tables, True, done, payoffs)
            mask = np.zeros((8, env.num_actions), bool)
            loops.legal_mask(st, env.tables, mask)
            obs = np.zeros((8, env.obs_dim), np.float32)
            loops.observe(st, env.tables, np.arange(8, dtype=np.int64) % env.num_players, obs)
            out.append((done, payoffs, mask, obs))
    for a, b in zip(*states, strict=True):
        assert np.array_equal(a, b)
    for (d0, p0, m0, o0), (d1, p1, m1, o1) in zip(*seen, strict=True):
        assert np.array_equal(d0, d1) and np.array_equal(p0, p1) and np.array_equal(m0, m1)
        assert np.array_equal(o0, o1)  # (the same kernel writes both: no float arithmetic differs)
    assert any(d.any() for d, _, _, _ in seen[0])  # deals ended (and were re-dealt) on the way
    dealt = []
    for loops in both:
        st = _copy_of(states[0])
        loops.reset(st, env.tables, True)
        drawn = np.empty(8, np.int64)
        loops.random_actions(st, env.tables, drawn)
        dealt.append((st.meta, drawn))
    assert np.array_equal(dealt[0][0], dealt[1][0]) and np.array_equal(dealt[0][1], dealt[1][1])
