"""The adapters' step / reset: any action or seed gives a step, the documented illegal-action handling or a
ValueError (RuntimeError for a step the env cannot take now), never an IndexError or a move for the wrong
seat."""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tarocchi_rl.envs import pettingzoo as pz
from tarocchi_rl.envs.gym import TarocchiEnv, TarocchiVectorEnv

ACTIONS = (st.integers(-(2**70), 2**70) | st.integers(-2, 200) | st.floats() | st.none() | st.text(max_size=3)
           | st.booleans() | st.builds(np.int64, st.integers(-(2**63), 2**63 - 1))
           | st.lists(st.integers(0, 200), max_size=3).map(np.array))
SEEDS = st.none() | st.integers(-5, 2**70) | st.floats() | st.text(max_size=3) | st.booleans()

GYM = TarocchiEnv("mineo", illegal_action="raise")
GYM_TERMINATE = TarocchiEnv("french3")
VEC = TarocchiVectorEnv("piedmont3", num_envs=3, seed=0)


@given(SEEDS, st.lists(ACTIONS, max_size=6))
def test_gym_reset_and_step_with_anything(seed, actions):
    for env in (GYM, GYM_TERMINATE):
        try:
            env.reset(seed=seed)
        except ValueError as e:
            assert "seed must be None or an integer >= 0" in str(e)
            env.reset(seed=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the terminate mode's warning
            for a in actions:
                seat_to_act = env.state.current_player()
                history = list(env.state.history)
                try:
                    _, _, terminated, _, _ = env.step(a)
                except ValueError:  # raise mode, or not an integer id: nothing applied
                    assert env.state.history == history
                    continue
                except RuntimeError:  # the deal is over: reset first
                    assert env.state.is_terminal() or env.action_masks().sum() == 0
                    break
                assert seat_to_act == env.seat
                if terminated:
                    break


BATCHES = (st.just("legal") | ACTIONS | st.lists(st.integers(-5, 200), min_size=3, max_size=3).map(np.array)
           | st.lists(st.integers(-(2**70), 2**70) | st.floats(), max_size=5).map(lambda xs: np.array(xs, dtype=object))
           | st.lists(st.integers(0, 200), min_size=3, max_size=3).map(lambda xs: np.array(xs, np.uint8)))


@given(SEEDS, st.lists(BATCHES, max_size=4))
def test_vector_env_reset_and_step_with_anything(seed, batches):
    try:
        VEC.reset(seed=seed)
    except ValueError as e:
        assert "seed must be None or an integer >= 0" in str(e)
        VEC.reset(seed=0)
    for batch in batches:
        if isinstance(batch, str) and batch == "legal":
            batch = VEC.random_actions()
        try:
            VEC.step(batch)
        except ValueError:  # the core's checks: shape, integer dtype, legal actions (nothing applied)
            pass


@given(st.sampled_from(["raise", "terminate"]), SEEDS, st.lists(ACTIONS, max_size=5))
def test_pettingzoo_reset_and_step_with_anything(mode, seed, actions):
    env = pz.mineo_v0.env(illegal_action=mode)
    try:
        env.reset(seed=seed)
    except ValueError as e:
        assert "seed must be None or an integer >= 0" in str(e)
        env.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for a in actions:
            agent = env.agent_selection
            if env.terminations[agent]:
                env.step(None)
                continue
            try:
                env.step(a)
            except ValueError:  # not an integer id, or (raise mode) an illegal one: nothing applied
                assert env.agent_selection == agent and not env.terminations[agent]


@pytest.mark.parametrize("action", [10**6, -1, 131, -(10**6), 2**70])
def test_pettingzoo_terminate_mode_treats_any_bad_integer_as_illegal(action, caplog):
    env = pz.mineo_v0.env(illegal_action="terminate", illegal_reward=-7)
    env.reset(seed=0)
    agent = env.agent_selection
    env.step(action)
    assert "Illegal move" in caplog.text  # PettingZoo's own warning (its logger)
    assert all(env.terminations.values())
    assert env._cumulative_rewards == {a: (-7.0 if a == agent else 0) for a in env.possible_agents}
    for _agent in env.agent_iter():
        env.step(None)
    assert env.agents == []


def test_gym_refuses_to_step_after_an_opponent_failed():
    calls = []

    def flaky(obs):  # plays its first legal action, then fails on its third decision
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("the opponent's own bug")
        return int(np.flatnonzero(obs["action_mask"])[0])

    env = TarocchiEnv("mineo", opponents=flaky)
    obs, _ = env.reset(seed=0)
    with pytest.raises(RuntimeError, match="the opponent's own bug"):
        for _ in range(10):
            obs, *_ = env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    seat_to_act, history = env.state.current_player(), list(env.state.history)
    assert seat_to_act != env.seat  # the failed opponent's turn: the learner must not move for it
    with pytest.raises(RuntimeError, match=r"abandoned when the opponent at seat \d failed \(RuntimeError\)"):
        env.step(int(np.flatnonzero(env.state.legal_mask())[0]))
    assert env.state.history == history and not env.action_masks().any()
    obs, _ = env.reset(seed=1)  # a new deal works
    assert env.state.current_player() == env.seat and obs["action_mask"].any()

    env = TarocchiEnv("mineo", seat=3, opponents=lambda obs: 10**6)
    with pytest.raises(ValueError, match="for the opponent at seat 0"):
        env.reset(seed=0)
    with pytest.raises(RuntimeError, match="abandoned"):
        env.step(0)
