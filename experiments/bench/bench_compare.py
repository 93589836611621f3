"""Core throughput of two versions side by side: ``tarocchi-rl bench`` of an old commit and of this tree, same run.

    python experiments/bench/bench_compare.py --old 4b332bb [--variants mineo,french3] [--rounds 5] [--seconds 2]
    python experiments/bench/bench_compare.py --old 4b332bb --phases    # ns per deal in each phase: where a change is

The old commit's files are materialised once (:func:`common.old_commit_tree`, cached with their Numba cache); each
measurement runs in a fresh subprocess with ``PYTHONPATH`` set to one tree (so ``import tarocchi_rl`` loads that
tree), and old and new alternate round by round so that the machine's noise falls on both
(:func:`common.old_and_new`). One round per variant and version = one run of each benchmark of ``tarocchi_rl.bench``
(fused random rollout, BatchEnv step loop) of ``--seconds``; medians over rounds are reported with the ratio new /
old. Each tree's Numba cache is warmed by a first unrecorded run. ``--clock cpu`` times by the process's CPU time
instead of the wall clock (on a shared machine the wall clock also counts the time other processes took).
``--phases`` splits one random deal into its phases (the shuffle and deal, the auction and every decision before
trick play, the trick play with its fused playout) and reports CPU nanoseconds per deal for each, the best of
``--repeats`` batches per round: the way to find which phase a change slowed.
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: common.py
from common import median_of, old_and_new, run_json  # noqa: E402

METRICS = ("rollout_deals_per_s", "step_decisions_per_s")
PHASE_METRICS = ("deal_ns", "bidding_ns", "play_ns")  # CPU ns per deal (lower is faster), in PHASES_CODE's order
# --fixed-work: the same work in both trees (no per-run calibration), timed as the best of several repeats
# (timeit's rule: interference only ever slows a repeat down); engine module path differs between versions
FIXED_CODE = """
import json, sys, time
import numpy as np
try:
    from tarocchi_rl import engine
    engine.rollout_random_batch
except (ImportError, AttributeError):
    from tarocchi_rl.core import engine
from tarocchi_rl.bits import seed_states
from tarocchi_rl.core.state import alloc_state
from tarocchi_rl.variants import get_variant
assert sys.modules['tarocchi_rl'].__file__.startswith(sys.argv[1]), sys.modules['tarocchi_rl'].__file__
variant, batch, calls, repeats = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
spec = get_variant(variant)
tables = spec.tables(spec.resolve_options({}))
st = alloc_state(batch)
st.rng[:] = seed_states(0, batch)
payoff = np.zeros((batch, 4), np.int64)
counts = np.zeros((batch, 2), np.int64)
engine.rollout_random_batch(st, tables, 1, payoff, counts)
best = 0.0
for _ in range(repeats):
    counts[:] = 0
    t = time.process_time()
    for _ in range(calls):
        engine.rollout_random_batch(st, tables, 4, payoff, counts)
    best = max(best, counts[:, 0].sum() / (time.process_time() - t))
print(json.dumps({"rollout_deals_per_s": best}))
"""
# --phases: CPU ns per deal in each phase, best of several repeats of one batch (the driver functions as each tree
# names them)
PHASES_CODE = """
import json, sys, time
from numba import njit
try:
    from tarocchi_rl.engine import drivers as d
except ImportError:
    from tarocchi_rl.core import engine as d
from tarocchi_rl.bits import seed_states
from tarocchi_rl.core.phases import DONE, PLAY
from tarocchi_rl.core.state import PHASE, alloc_state
from tarocchi_rl.variants import get_variant
assert sys.modules['tarocchi_rl'].__file__.startswith(sys.argv[1]), sys.modules['tarocchi_rl'].__file__
variant, batch, repeats, names = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5].split(",")
spec = get_variant(variant)
tb = spec.tables(spec.resolve_options({}))
st = alloc_state(batch)
st.rng[:] = seed_states(0, batch)
shuffle_row, reset_row, random_action, step_row, playout = (d.shuffle_row, d.reset_row, d.random_action, d.step_row,
                                                            d.random_playout_row)

@njit
def deal(st, tb):
    for i in range(st.meta.shape[0]):
        shuffle_row(st, i, tb)
        reset_row(st, i, tb)

@njit
def bid(st, tb):
    for i in range(st.meta.shape[0]):
        while st.meta[i, PHASE] != DONE and st.meta[i, PHASE] != PLAY:
            step_row(st, i, random_action(st, i, tb), tb)

@njit
def play(st, tb):
    for i in range(st.meta.shape[0]):
        while st.meta[i, PHASE] != DONE:
            if st.meta[i, PHASE] == PLAY:
                playout(st, i, tb)
            else:
                step_row(st, i, random_action(st, i, tb), tb)

best = dict.fromkeys(names, float("inf"))  # PHASE_METRICS, in the order timed below
for rep in range(repeats + 1):  # the first compiles
    t0 = time.process_time(); deal(st, tb)
    t1 = time.process_time(); bid(st, tb)
    t2 = time.process_time(); play(st, tb)
    t3 = time.process_time()
    if rep:
        for k, dt in zip(best, (t1 - t0, t2 - t1, t3 - t2)):
            best[k] = min(best[k], dt / batch * 1e9)
print(json.dumps(best))
"""
CODE = (
    "import json, sys, time; from tarocchi_rl.bench import run; "
    "time.perf_counter = time.process_time if sys.argv[5] == 'cpu' else time.perf_counter; "
    "assert sys.modules['tarocchi_rl'].__file__.startswith(sys.argv[1]), sys.modules['tarocchi_rl'].__file__; "
    "print(json.dumps(run(sys.argv[2], int(sys.argv[3]), 1, float(sys.argv[4]), 1)))"
)


def measure(tree: Path, variant: str, batch: int, seconds: float, clock: str = "wall") -> dict:
    """One run of both benchmarks with ``tree``'s tarocchi_rl (a subprocess); ``clock="cpu"`` times them by the
    process's CPU time (``time.process_time``), which time taken by other processes of the machine does not
    inflate."""
    return run_json(tree, ["-c", CODE, str(tree), variant, str(batch), str(seconds), clock])


def measure_fixed(tree: Path, variant: str, batch: int, calls: int, repeats: int) -> dict:
    """Fixed-work rollout rate of ``tree`` (deals per CPU second, best of ``repeats``), in a subprocess."""
    return run_json(tree, ["-c", FIXED_CODE, str(tree), variant, str(batch), str(calls), str(repeats)])


def measure_phases(tree: Path, variant: str, batch: int, repeats: int) -> dict:
    """CPU ns per deal in each phase of ``tree`` (``PHASE_METRICS``, best of ``repeats`` batches), in a
    subprocess."""
    return run_json(tree, ["-c", PHASES_CODE, str(tree), variant, str(batch), str(repeats), ",".join(PHASE_METRICS)])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--old", required=True, help="git ref of the old version")
    p.add_argument("--variants", default="mineo,piedmont3,piedmont4,french3,french4")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--seconds", type=float, default=2.0)
    p.add_argument("--batch", type=int, default=4096)
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                   help="time by the wall clock (as tarocchi-rl bench) or by the process's CPU time")
    p.add_argument("--fixed-work", action="store_true",
                   help="rollout only: the same kernel calls in both trees (batch, 4 deals per slot per call, "
                        "--calls calls), best of --repeats repeats by CPU time, per round")
    p.add_argument("--phases", action="store_true",
                   help="CPU ns per deal in each phase (deal, bidding, play), best of --repeats batches per round")
    p.add_argument("--calls", type=int, default=4)
    p.add_argument("--repeats", type=int, default=5)
    a = p.parse_args()
    variants = [v.strip() for v in a.variants.split(",") if v.strip()]
    metrics = ("rollout_deals_per_s",) if a.fixed_work else PHASE_METRICS if a.phases else METRICS

    def one(tree: Path, v: str, short: bool) -> dict:  # short: the unrecorded run that warms the Numba cache
        if a.phases:
            return measure_phases(tree, v, a.batch, a.repeats)
        if a.fixed_work:
            return measure_fixed(tree, v, a.batch, a.calls, a.repeats)
        return measure(tree, v, a.batch, 0.2 if short else a.seconds, a.clock)

    runs = old_and_new(a.old, variants, one, a.rounds)
    what = (f"fixed work: {a.calls} calls x 4 deals per slot, best of {a.repeats} by CPU time" if a.fixed_work
            else f"CPU ns per deal by phase, best of {a.repeats} batches (lower is faster)" if a.phases
            else f"{a.seconds:g} s ({a.clock} clock)")
    print(f"old = {a.old}, new = this tree; batch {a.batch}, 1 thread, medians of {a.rounds} alternating runs, "
          f"{what}")
    print("| variant | metric | old | new | new / old |\n|---|---|---|---|---|")
    for v in variants:
        for m in metrics:
            o, n = median_of(runs[v, "old"], m), median_of(runs[v, "new"], m)
            print(f"| {v} | {m} | {o:,.0f} | {n:,.0f} | {n / o:.3f} |")


if __name__ == "__main__":
    main()
