"""PettingZoo adapter: api_test and seed_test for every variant, a full deal's rewards and terminations,
re-deals at reset, illegal actions (the ValueError and PettingZoo's terminate convention), rendering."""

import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from tarocchi_rl import BatchEnv
from tarocchi_rl.envs import pettingzoo as pz
from tarocchi_rl.variants import VARIANTS, get_variant

# A deal is 60-90 decisions: 100 cycles play a whole deal, its end and the dead agents' steps.
CYCLES = 100


def masked_choice(rng, mask):
    return int(rng.choice(np.flatnonzero(mask)))


@pytest.mark.parametrize("variant", VARIANTS)
def test_api_test(variant):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its generic advice for dict observations (it whitelists its own games)
        api_test(pz.ENVS[variant].env(), num_cycles=CYCLES)
        api_test(pz.env(variant, illegal_action="terminate"), num_cycles=CYCLES)


@pytest.mark.parametrize("variant", VARIANTS)
def test_seed_test(variant):
    seed_test(pz.ENVS[variant].env, num_cycles=CYCLES)


def test_module_level_constructors():
    for variant in VARIANTS:
        module = getattr(pz, f"{variant}_v0")
        env = module.env()
        assert env.unwrapped.variant == variant and env.metadata["name"] == f"tarocchi_{variant}_v0"
        assert isinstance(module.raw_env(), pz.raw_env)
        env.reset(seed=0)
        n = get_variant(variant).n_players
        assert env.agents == [f"player_{s}" for s in range(n)]
        space = env.observation_space("player_0")
        assert space["observation"].dtype == np.float32 and space["action_mask"].dtype == np.int8
    assert pz.env("piedmont4", accuso=True).unwrapped.game.options["accuso"] is True
    with pytest.raises(ValueError, match="unknown option 'accuso'"):
        pz.env("piedmont3", accuso=True)


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_full_deal(variant):
    env = pz.env(variant)
    env.reset(seed=4)
    raw = env.unwrapped
    rng = np.random.default_rng(4)
    seen_end = {}
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        assert obs in env.observation_space(agent) and truncation is False
        for other in env.agents:  # only the agent to act has legal actions
            assert env.observe(other)["action_mask"].any() == (other == agent and not termination)
        if termination:
            seen_end[agent] = reward
            env.step(None)
        else:
            assert reward == 0
            env.step(masked_choice(rng, obs["action_mask"]))
    payoffs = raw.state.returns()
    assert seen_end == {f"player_{s}": float(p) for s, p in enumerate(payoffs)}
    assert sum(payoffs) == 0 or not get_variant(variant).zero_sum
    assert env.agents == []


def test_reset_redeals_a_deal_annulled_before_any_decision():
    core = BatchEnv("french4", 1)
    seed = next((s for s in range(5000) if core.reset(s) or core.done()[0]), None)  # a petit sec (~1 in 500)
    assert seed is not None
    env = pz.env("french4")
    env.reset(seed=seed)
    assert env.agents == env.possible_agents and not any(env.terminations.values())
    obs, *_ = env.last()
    assert obs["action_mask"].any()


def test_illegal_action_raises_a_value_error_naming_it_and_the_legal_ones():
    env = pz.mineo_v0.env()
    env.reset(seed=1)
    agent = env.agent_selection
    mask = env.last()[0]["action_mask"]
    legal = np.flatnonzero(mask).tolist()
    bad = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(ValueError, match=rf"illegal action {bad} \(.*\) for {agent} in phase early of mineo; "
                                          rf"legal actions: {legal[0]} \(bid:pass\)"):
        env.step(bad)
    with pytest.raises(ValueError, match="out of range 0..130"):
        env.step(131)
    assert env.agent_selection == agent  # nothing applied
    env.step(np.int32(legal[0]))
    assert env.agent_selection != agent


def test_illegal_action_terminate_follows_pettingzoo_convention():
    env = pz.env("french3", illegal_action="terminate", illegal_reward=-10)
    env.reset(seed=2)
    agent = env.agent_selection
    bad = int(np.flatnonzero(env.last()[0]["action_mask"] == 0)[0])
    env.step(bad)
    assert all(env.terminations.values())
    assert env._cumulative_rewards == {a: (-10.0 if a == agent else 0) for a in env.possible_agents}
    for _agent in env.agent_iter():
        assert env.last()[2]
        env.step(None)
    assert env.agents == []


def test_render():
    env = pz.env("piedmont3", render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert text.startswith("piedmont3") and "seat 2:" in text
    quiet = pz.env("piedmont3")
    quiet.reset(seed=0)
    with pytest.warns(UserWarning, match="render_mode"):
        assert quiet.render() is None
    with pytest.raises(ValueError, match="render_mode"):
        pz.env("mineo", render_mode="human")
