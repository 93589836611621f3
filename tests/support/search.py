"""Positions and a uniform evaluator for the search tests (ISMCTS, guided search, learned inference)."""

import numpy as np

from tarocchi_rl import engine
from tarocchi_rl.batch import BatchEnv
from tarocchi_rl.core.phases import DONE
from tarocchi_rl.core.state import PHASE
from tarocchi_rl.search.guided import guided_search
from tarocchi_rl.variants import get_variant


def games_after(variant, n, seed, steps):
    """n games of ``variant``, game i after ``steps[i]`` random decisions (or finished)."""
    env = BatchEnv(variant, n, seed=seed)
    for i in range(n):
        for _ in range(int(steps[i])):
            if env.state.meta[i, PHASE] == DONE:
                break
            engine.step_row(env.state, i, engine.random_action_row(env.state, i, env.tables), env.tables)
    return env


def unfinished_positions(variant, n, seed, max_steps=90):
    """n unfinished games of ``variant`` after random numbers of random decisions, with at least two legal
    actions each."""
    rng = np.random.default_rng(seed)
    env = BatchEnv(variant, n, seed=seed)
    for i in range(n):
        for _ in range(int(rng.integers(0, max_steps))):
            row = env.state.meta[i].copy(), env.state.cards[i].copy(), env.state.deck[i].copy()
            engine.step_row(env.state, i, engine.random_action_row(env.state, i, env.tables), env.tables)
            if env.state.meta[i, PHASE] == DONE:  # one step back: the position before the end
                env.state.meta[i], env.state.cards[i], env.state.deck[i] = row
                break
    mask = env.legal_mask()
    return env, np.flatnonzero(mask.sum(axis=1) > 1)


class Uniform:
    """An evaluator: uniform over the legal actions, value 0; counts its calls and the positions evaluated."""

    def __init__(self):
        self.calls, self.positions = 0, 0

    def __call__(self, obs, mask):
        self.calls += 1
        self.positions += len(obs)
        p = mask.astype(np.float32)
        return p / p.sum(axis=1, keepdims=True), np.zeros(len(obs), np.float32)


def guided_search_on(env, idx, evaluate, iterations, seed=1, **kw):
    """``guided_search`` (c = 1.5) of the games ``idx`` of ``env`` with the evaluator ``evaluate``; returns its
    (actions, root visits)."""
    obs = env.observe()[idx]
    mask = env.legal_mask()[idx]
    seeds = np.arange(seed, seed + len(idx), dtype=np.uint64)
    return guided_search(env.state, idx, env.tables, env.num_players, env.num_actions, obs, mask, evaluate,
                         iterations, 1.5, get_variant(env.variant).payoff_scale, seeds, **kw)
