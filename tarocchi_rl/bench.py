"""``tarocchi-rl bench``: throughput of the core, measured several times, medians reported.

(a) the fused random-play rollout kernel: complete deals (shuffle, bidding, discards, commitments, play,
    scoring) with uniformly random legal decisions, in deals/s and card plays/s;
(b) the ``BatchEnv`` loop a learner runs: ``legal_mask`` + random legal actions + ``step`` (legality checked)
    + ``observe`` for every game, with auto-reset, in decisions/s.
"""

import statistics
import time
from typing import Any

import numba
import numpy as np

from . import engine
from .batch import BatchEnv
from .bits import seed_states
from .core.state import alloc_state
from .variants import get_variant


def bench_rollout(variant: str, batch: int, seconds: float, seed: int = 0) -> dict[str, Any]:
    """One timed run of the fused rollout kernel; returns deals/s, card plays/s and whether the payoffs summed
    to 0 (None for a family that is not zero-sum)."""
    spec = get_variant(variant)
    tables = spec.resolved_tables()
    st = alloc_state(batch)
    st.rng[:] = seed_states(seed, batch)
    payoff = np.zeros((batch, 4), np.int64)
    counts = np.zeros((batch, 2), np.int64)
    engine.rollout_random_batch(st, tables, 1, payoff, counts)  # compile / warm up
    # each game slot plays `deals_per_call` consecutive deals per kernel call (its rows stay in cache);
    # calibrate it so one call lasts about a tenth of the run
    deals_per_call = 1
    while True:
        t = time.perf_counter()
        engine.rollout_random_batch(st, tables, deals_per_call, payoff, counts)
        if time.perf_counter() - t >= seconds / 10:
            break
        deals_per_call *= 2
    counts[:] = 0
    payoff[:] = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        engine.rollout_random_batch(st, tables, deals_per_call, payoff, counts)
    dt = time.perf_counter() - t0
    deals, plays = counts.sum(axis=0)
    # the payoffs' sum checks the zero-sum families (None where the family's deals are not zero-sum)
    zero_sum = bool(payoff.sum() == 0) if spec.zero_sum else None
    return {"deals_per_s": deals / dt, "card_plays_per_s": plays / dt, "zero_sum": zero_sum}


def _bench_step(variant: str, batch: int, seconds: float, seed: int = 0) -> dict[str, float]:
    """One timed run of legal_mask + random actions + step + observe over a batch; decisions/s."""
    env = BatchEnv(variant, batch, seed=seed, auto_reset=True)
    mask = np.empty((batch, env.num_actions), bool)
    obs = np.empty((batch, env.obs_dim), np.float32)
    for _ in range(3):  # compile / warm up
        env.legal_mask(out=mask)
        env.observe(out=obs)
        env.step(env.random_actions())
    n = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        env.legal_mask(out=mask)
        env.observe(out=obs)
        env.step(env.random_actions())
        n += batch
    return {"decisions_per_s": n / (time.perf_counter() - t0)}


def run(variant: str, batch: int, threads: int, seconds: float, repeats: int) -> dict[str, Any]:
    """Both benchmarks, ``repeats`` runs each of ``seconds``; medians and all runs."""
    numba.set_num_threads(threads)
    roll = [bench_rollout(variant, batch, seconds, seed=k) for k in range(repeats)]
    step = [_bench_step(variant, batch, seconds, seed=k) for k in range(repeats)]
    return {
        "variant": variant,
        "batch": batch,
        "threads": threads,
        "seconds_per_run": seconds,
        "repeats": repeats,
        "rollout_deals_per_s": statistics.median(r["deals_per_s"] for r in roll),
        "rollout_card_plays_per_s": statistics.median(r["card_plays_per_s"] for r in roll),
        "step_decisions_per_s": statistics.median(r["decisions_per_s"] for r in step),
        "runs": {"rollout": roll, "step": step},
    }


def format_report(r: dict[str, Any]) -> str:
    lines = [
        f"tarocchi-rl bench: {r['variant']}, batch {r['batch']}, {r['threads']} thread(s), "
        f"median of {r['repeats']} runs of {r['seconds_per_run']:g} s",
        f"  fused random rollout : {r['rollout_deals_per_s']:>14,.0f} deals/s "
        f"{r['rollout_card_plays_per_s']:>16,.0f} card plays/s",
        f"  BatchEnv step loop   : {r['step_decisions_per_s']:>14,.0f} decisions/s "
        "(legal_mask + random action + step + observe)",
    ]
    return "\n".join(lines)
