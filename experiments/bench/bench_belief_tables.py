"""The exact belief sampler's tables (learned inference, ``belief_method=exact``): what building them costs per
root decision, an old commit against this tree, side by side in one run.

    python experiments/bench/bench_belief_tables.py --old 7913361 [--variants french4,mineo] [--positions 300]
        [--rounds 3] [--repeats 5] [--out benchmarks/results/belief_tables/FILE.json]

The tables are built once per decision of a search with ``belief=`` and count against its time budget (at 2 ms a
decision in French Tarot they took most of it). Each round runs one subprocess per tree (the old one materialised
once, :func:`common.old_commit_tree`, imported through ``PYTHONPATH``; :func:`common.old_and_new`) on the same
positions: ``--positions`` games of random play stopped at random points (seed 3; a tenth at the start of the deal),
the seat to act, a random belief (Dirichlet(1) per card, seed 0), ``belief_plan(..., METHOD_EXACT)`` timed
``--repeats`` times, the median kept per position. Reported per tree: the mean, median, 90th percentile and largest
milliseconds per root (medians over rounds; old and new alternate), with the ratio old / new of the means, and how
many roots each tree built exact tables for (the rest fall back to SIR: a change of layout must not move roots to the
cheaper method).
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: common.py
from common import ROOT, median_of, old_and_new, run_json  # noqa: E402

STATS = ("mean_ms", "median_ms", "p90_ms", "max_ms")
CODE = """
import json, sys, time
import numpy as np
from tarocchi_rl import engine
from tarocchi_rl.bits import seed_states
from tarocchi_rl.core.phases import DONE
from tarocchi_rl.core.state import CUR, PHASE, alloc_state, copy_state
from tarocchi_rl.core.tables import P_CARDS, P_PLAYERS
from tarocchi_rl.search import inference as I
from tarocchi_rl.search.determinize import make_plan
from tarocchi_rl.variants import get_variant
assert sys.modules['tarocchi_rl'].__file__.startswith(sys.argv[1]), sys.modules['tarocchi_rl'].__file__
variant, n_games, repeats = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
spec = get_variant(variant)
tb = spec.tables(spec.resolve_options({}))
st = alloc_state(n_games)
st.rng[:] = seed_states(3, n_games)
engine.reset_batch(st, tb, True)
rng = np.random.default_rng(3)
stop = rng.integers(0, 100, n_games)
stop[: n_games // 10] = 0
out = copy_state(st)
actions = np.empty(n_games, np.int64)
done = np.zeros(n_games, bool)
pay = np.zeros((n_games, 4), np.int32)
for step in range(1, 200):
    engine.random_actions_batch(st, tb, actions)
    engine.step_batch(st, actions, tb, False, done, pay)
    keep = (stop == step) | ((stop > step) & (st.meta[:, PHASE] == DONE))
    for a, b in zip(out, st, strict=True):
        a[keep] = b[keep]
    stop[keep] = -1
    if (st.meta[:, PHASE] == DONE).all():
        break
n, c = int(tb.params[P_PLAYERS]), int(tb.params[P_CARDS])
brng = np.random.default_rng(0)
ms, exact = [], 0
for i in range(n_games):
    plan = make_plan(out, i, int(out.meta[i, CUR]), tb)
    logb = I.log_beliefs(brng.dirichlet(np.ones(I.n_locations(n)), size=c)[None], n, c)[0]
    bi, _ = I.belief_plan(plan.ints, plan.masks, tb, logb, I.METHOD_EXACT, 8)
    if bi[I.B_MODE] != I.METHOD_EXACT:
        continue
    exact += 1
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        I.belief_plan(plan.ints, plan.masks, tb, logb, I.METHOD_EXACT, 8)
        times.append(time.perf_counter() - t)
    ms.append(1e3 * float(np.median(times)))
ms = np.array(ms or [0.0])
print(json.dumps({"mean_ms": float(ms.mean()), "median_ms": float(np.median(ms)),
                  "p90_ms": float(np.percentile(ms, 90)), "max_ms": float(ms.max()), "exact_roots": exact}))
"""


def measure(tree: Path, variant: str, positions: int, repeats: int) -> dict:
    """One subprocess of ``tree``'s tarocchi_rl timing the exact tables of ``positions`` roots of ``variant``."""
    return run_json(tree, ["-c", CODE, str(tree), variant, str(positions), str(repeats)])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--old", required=True, help="git ref of the old version")
    p.add_argument("--variants", default="mineo,piedmont3,piedmont4,french3,french4")
    p.add_argument("--positions", type=int, default=300)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--out", type=Path, help="write the JSON here")
    a = p.parse_args()
    if a.positions < 1 or a.rounds < 1 or a.repeats < 1:
        print("bench_belief_tables: --positions, --rounds and --repeats must be >= 1", file=sys.stderr)
        return 2
    variants = [v.strip() for v in a.variants.split(",") if v.strip()]

    def one(tree: Path, v: str, short: bool) -> dict:  # short: the unrecorded run that fills the Numba cache
        return measure(tree, v, 2, 1) if short else measure(tree, v, a.positions, a.repeats)

    runs = old_and_new(a.old, variants, one, a.rounds, progress=False)
    rows = []
    for v in variants:
        row: dict = {"variant": v}
        for k in ("old", "new"):
            row[k] = {s: median_of(runs[v, k], s) for s in STATS}
            row[k]["exact_roots"] = runs[v, k][0]["exact_roots"]
            row[k + "_runs"] = runs[v, k]
        row["old_over_new_mean"] = row["old"]["mean_ms"] / max(row["new"]["mean_ms"], 1e-12)
        rows.append(row)
    print(f"old = {a.old}, new = this tree; ms per root decision, {a.positions} positions, medians of {a.rounds} "
          "alternating rounds")
    print("| variant | tree | mean | median | p90 | max | exact roots |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        for k in ("old", "new"):
            x = row[k]
            print(f"| {row['variant']} | {k} | {x['mean_ms']:.3f} | {x['median_ms']:.3f} | {x['p90_ms']:.3f} | "
                  f"{x['max_ms']:.3f} | {x['exact_roots']} |")
        print(f"| {row['variant']} | old / new | {row['old_over_new_mean']:.2f} | | | | |")
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "tarocchi_rl"],
                               capture_output=True, text=True).stdout.strip()
        a.out.write_text(json.dumps({
            "old": a.old, "new": head + (" (with uncommitted changes)" if dirty else ""), "positions": a.positions,
            "rounds": a.rounds, "repeats": a.repeats, "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "command": "python experiments/bench/bench_belief_tables.py " + " ".join(sys.argv[1:]), "rows": rows},
            indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
