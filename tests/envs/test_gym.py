"""Gymnasium adapters: the registered single-agent env (check_env, episodes against opponents, seeding,
re-deals, illegal actions) and the self-play vector env (spaces, SAME_STEP autoreset, rewards, seeding)."""

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils import seeding
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode, VectorEnv

import tarocchi_rl
from tarocchi_rl import BatchEnv
from tarocchi_rl.envs.gym import ENV_IDS, TarocchiEnv, TarocchiVectorEnv
from tarocchi_rl.variants import VARIANTS, get_variant


def first_legal(obs):
    return int(np.flatnonzero(obs["action_mask"])[0])


def section(variant, obs, name):
    """The named section of a (batch of) observation(s) (offsets: the variant's layout table)."""
    for off, size, sec in get_variant(variant).obs_rows:
        if sec == name:
            return obs[..., off : off + size]
    raise KeyError(name)


# -- single-agent env ---------------------------------------------------------------------------------------
def test_one_id_per_variant():
    assert set(ENV_IDS) == set(VARIANTS)
    for variant, env_id in ENV_IDS.items():
        env = gymnasium.make(env_id)
        assert env.unwrapped.variant == variant
        assert env.observation_space["observation"].shape == (get_variant(variant).obs_dim,)
        assert env.action_space.n == get_variant(variant).n_actions
        env.close()


@pytest.mark.parametrize("variant", VARIANTS)
def test_check_env(variant):
    env = gymnasium.make(ENV_IDS[variant])
    with warnings.catch_warnings():
        # check_env steps unmasked action_space.sample() actions: the default illegal_action="terminate" warns
        warnings.filterwarnings("ignore", message=".*illegal action")
        check_env(env.unwrapped)


@pytest.mark.parametrize("variant", VARIANTS)
def test_full_episode_against_given_opponents(variant):
    n = get_variant(variant).n_players
    seat = n - 1
    calls = []

    def recording_policy(obs):
        assert obs["observation"].dtype == np.float32 and obs["action_mask"].dtype == np.int8
        assert obs["action_mask"].any()
        calls.append(obs)
        return first_legal(obs)

    opponents = ["random"] + [recording_policy] * (n - 2)  # seats 0 .. n-2
    env = gymnasium.make(ENV_IDS[variant], seat=seat, opponents=opponents)
    obs, info = env.reset(seed=11)
    space = env.observation_space
    rng = np.random.default_rng(0)
    steps, terminated = 0, False
    while not terminated:
        assert obs in space and obs["action_mask"].any() and info["seat"] == seat
        assert info["legal_actions"] == np.flatnonzero(obs["action_mask"]).tolist()
        assert env.unwrapped.state.current_player() == seat
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(info["legal_actions"])))
        assert truncated is False
        if not terminated:
            assert reward == 0.0
        steps += 1
    payoffs = info["payoffs"]
    assert reward == float(payoffs[seat]) and (sum(payoffs) == 0 or not get_variant(variant).zero_sum)
    assert payoffs.tolist() == env.unwrapped.state.returns()
    assert not obs["action_mask"].any() and obs in space
    assert steps >= 1 and len(calls) >= 1
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(0)


def test_payoff_scale_and_dict_opponents():
    env = TarocchiEnv("piedmont3", seat=1, opponents={0: first_legal, 2: "random"}, payoff_scale=100)
    obs, _ = env.reset(seed=5)
    terminated = False
    while not terminated:
        obs, reward, terminated, _, info = env.step(first_legal(obs))
    assert reward == pytest.approx(info["payoffs"][1] / 100)
    with pytest.raises(ValueError, match="payoff_scale"):
        TarocchiEnv("piedmont3", payoff_scale=0)


def test_seeded_resets_are_reproducible():
    a, b = TarocchiEnv("mineo"), TarocchiEnv("mineo")
    oa, _ = a.reset(seed=3)
    ob, _ = b.reset(seed=3)
    for _ in range(5):  # deals after a seeded reset follow from the seed too
        oa, _ = a.reset()
        ob, _ = b.reset()
        assert np.array_equal(oa["observation"], ob["observation"])
    done = False
    while not done:
        oa, ra, done, _, _ = a.step(first_legal(oa))
        ob, rb, _, _, _ = b.step(first_legal(ob))
        assert np.array_equal(oa["observation"], ob["observation"]) and ra == rb
    assert not np.array_equal(a.reset(seed=3)[0]["observation"], a.reset(seed=4)[0]["observation"])


def test_a_deal_annulled_before_the_learner_acts_is_redealt():
    """French petit sec annuls the deal before any decision: reset deals again (info["redeals"])."""
    env = TarocchiEnv("french4")
    core = BatchEnv("french4", 1)
    for seed in range(5000):  # a reset seed whose first deal is a petit sec (about 1 in 500)
        deal_seed = int(seeding.np_random(seed)[0].integers(0, 2**63 - 1))
        core.reset(deal_seed)
        if core.done()[0]:
            break
    else:
        pytest.fail("no petit sec deal in 5000 seeds")
    obs, info = env.reset(seed=seed)
    assert info["redeals"] == 1
    assert obs["action_mask"].any() and not env.unwrapped.state.is_terminal()


@pytest.mark.parametrize("variant", ["mineo", "french4"])  # a pick of the variants with an auction
def test_a_deal_where_everybody_passes_ends_with_reward_zero(variant):
    game = tarocchi_rl.make(variant)
    bid_pass = game.string_to_action("bid:pass")

    def passer(obs):
        return bid_pass if obs["action_mask"][bid_pass] else first_legal(obs)

    env = TarocchiEnv(variant, seat=2, opponents=passer)
    obs, _ = env.reset(seed=0)
    terminated = False
    while not terminated:
        obs, reward, terminated, _, info = env.step(passer(obs))
    assert reward == 0.0 and info["payoffs"].tolist() == [0] * game.num_players
    assert env.unwrapped.state.outcome()["payoffs"] == [0] * game.num_players


def test_illegal_action_raise_names_the_action_and_the_legal_ones():
    env = TarocchiEnv("mineo", illegal_action="raise")
    obs, info = env.reset(seed=1)
    legal = info["legal_actions"]
    bad = next(a for a in range(env.action_space.n) if a not in legal)
    names = [env.state.action_to_string(a) for a in legal]
    expected = ", ".join(f"{a} \\({s}\\)" for a, s in zip(legal, names, strict=True))
    with pytest.raises(ValueError, match=rf"illegal action {bad} \(.*\) for the learner \(seat 0\).*{expected}$"):
        env.step(bad)
    with pytest.raises(ValueError, match=r"illegal action 9999 \(out of range 0..130\)"):
        env.step(9999)
    with pytest.raises(ValueError, match="integer action id"):
        env.step(1.5)
    # nothing was applied: the env goes on
    obs2, reward, terminated, _, _ = env.step(np.int64(legal[0]))
    assert reward == 0.0 or terminated


def test_illegal_action_terminate_is_the_default():
    env = TarocchiEnv("french3", illegal_reward=-50.0)
    obs, info = env.reset(seed=2)
    bad = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with pytest.warns(UserWarning, match=rf"illegal action {bad} .* legal actions: .*terminates with reward -50"):
        obs, reward, terminated, truncated, info = env.step(bad)
    assert (reward, terminated, truncated, info["illegal_action"]) == (-50.0, True, False, bad)
    assert not obs["action_mask"].any() and not env.action_masks().any()
    with pytest.raises(RuntimeError):
        env.step(0)


def test_bad_arguments_and_illegal_opponents():
    with pytest.raises(ValueError, match="seat must be a seat 0..2"):
        TarocchiEnv("french3", seat=3)
    with pytest.raises(ValueError, match="unknown option 'colour'"):
        TarocchiEnv("mineo", colour=True)
    with pytest.raises(ValueError, match="illegal_action must be"):
        TarocchiEnv("mineo", illegal_action="ignore")
    with pytest.raises(ValueError, match="opponents must list 3 policies"):
        TarocchiEnv("mineo", opponents=["random", "random"])
    with pytest.raises(ValueError, match="the opponent at seat 1 must be"):
        TarocchiEnv("mineo", opponents=[None, 42, "random", "random"])
    with pytest.raises(ValueError, match="seats \\[0, 2\\]"):
        TarocchiEnv("french3", seat=1, opponents={0: "random"})
    env = TarocchiEnv("mineo", seat=3, opponents=lambda obs: 9999)
    with pytest.raises(ValueError, match=r"illegal action 9999 .* for the opponent at seat 0 .*legal actions: 126"):
        env.reset(seed=0)


def test_render_ansi_and_action_masks():
    env = gymnasium.make("tarocchi_rl/Piedmont4-v0", render_mode="ansi")
    obs, _ = env.reset(seed=0)
    text = env.render()
    assert "piedmont4" in text and "learner: seat 0" in text and "discard:" in text  # the dealer discarded
    assert np.array_equal(env.unwrapped.action_masks(), obs["action_mask"].astype(bool))


# -- vector env -----------------------------------------------------------------------------------------------
def test_vector_env_spaces_and_metadata():
    envs = TarocchiVectorEnv("piedmont4", num_envs=6, seed=0)
    assert isinstance(envs, VectorEnv) and envs.num_envs == 6
    assert envs.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    assert envs.single_action_space == gymnasium.spaces.Discrete(get_variant("piedmont4").n_actions)
    assert envs.action_space.shape == (6,)
    obs, infos = envs.reset(seed=0)
    assert obs in envs.observation_space and obs["action_mask"].dtype == np.int8
    assert obs["observation"].shape == (6, get_variant("piedmont4").obs_dim)
    assert infos["player"].tolist() == [3] * 6  # the dealer discards first


@pytest.mark.parametrize("variant", ["mineo", "french4"])  # a pick: a 63-card and a 78-card game
def test_vector_env_same_step_autoreset(variant):
    """A deal that ends in step() is re-dealt in that step: the returned observation is the new deal's first,
    terminations mark it, final_info holds every seat's payoffs, the reward is the last mover's payoff."""
    envs = TarocchiVectorEnv(variant, num_envs=16, seed=1, payoff_scale=2)
    obs, infos = envs.reset(seed=1)
    fresh = TarocchiVectorEnv(variant, num_envs=1, seed=99)  # what the first observation of any deal looks like
    fresh_obs, fresh_infos = fresh.reset()
    ended = 0
    for _ in range(400):
        acting = infos["player"]
        obs, rewards, terminations, truncations, infos = envs.step(envs.random_actions())
        assert obs in envs.observation_space and not truncations.any()
        assert (rewards[~terminations] == 0).all()
        if not terminations.any():
            assert "final_info" not in infos
            continue
        done = terminations
        ended += done.sum()
        final = infos["final_info"]
        assert np.array_equal(infos["_final_info"], done) and np.array_equal(final["_payoffs"], done)
        payoffs = final["payoffs"]
        assert (payoffs[done].sum(axis=1) == 0).all() and (payoffs[~done] == 0).all()
        assert np.array_equal(final["player"][done], acting[done])
        assert np.array_equal(rewards[done], 0.5 * payoffs[done, acting[done]])
        # the observation after the terminal step is the new deal's first one
        assert np.array_equal(infos["player"][done], np.repeat(fresh_infos["player"], done.sum()))
        for name in ("played", "trick", "points", "tricks_won", "phase", "trick_num"):
            new = section(variant, obs["observation"][done], name)
            assert np.array_equal(new, np.repeat(section(variant, fresh_obs["observation"], name), done.sum(), 0))
        assert (obs["action_mask"][done].sum(axis=1) > 0).all()
        # ... and the next step plays it (no reset step in between, unlike NEXT_STEP)
        if ended >= 20:
            break
    assert ended >= 20


def test_vector_env_seeding_and_illegal_actions():
    a, b = TarocchiVectorEnv("french3", 4), TarocchiVectorEnv("french3", 4)  # OS seeds, then the same seed
    oa, _ = a.reset(seed=7)
    ob, _ = b.reset(seed=7)
    for _ in range(30):
        oa, ra, *_ = a.step(a.random_actions())
        ob, rb, *_ = b.step(b.random_actions())
        assert np.array_equal(oa["observation"], ob["observation"]) and np.array_equal(ra, rb)
    obs, _ = a.reset(seed=7)
    actions = a.random_actions()
    actions[2] = int(np.flatnonzero(obs["action_mask"][2] == 0)[0])
    msg = rf"illegal action {actions[2]} \(.*\) for game 2, seat .* legal actions: \d+ \(bid:pass\)"
    with pytest.raises(ValueError, match=msg):
        a.step(actions)


def test_vector_env_with_record_episode_statistics():
    envs = gymnasium.wrappers.vector.RecordEpisodeStatistics(TarocchiVectorEnv("mineo", 8, seed=3))
    envs.reset(seed=3)
    for _ in range(300):
        *_, infos = envs.step(envs.unwrapped.random_actions())
        if "episode" in infos:
            assert (infos["episode"]["l"][infos["_episode"]] > 0).all()
            break
    else:
        pytest.fail("no deal ended")


def test_agents_of_the_arena_protocol_are_opponents():
    import gymnasium

    from tarocchi_rl.policies.heuristic import HeuristicAgent

    for opponents in ("heuristic", [HeuristicAgent(), "random", HeuristicAgent()]):
        env = gymnasium.make("tarocchi_rl/Mineo-v0", opponents=opponents)
        obs, info = env.reset(seed=3)
        terminated = False
        while not terminated:
            obs, reward, terminated, truncated, info = env.step(env.action_space.sample(mask=obs["action_mask"]))
        assert sum(info["payoffs"]) == 0
