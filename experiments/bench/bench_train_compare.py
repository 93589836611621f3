"""Training throughput of two versions side by side: ``tarocchi-rl train`` of a variant's default config, an old
commit against this tree, same run (issue 31: "training throughput of the default config not below today's").

    python experiments/bench/bench_train_compare.py --old a7f5e0d^ [--variants mineo,french3] [--rounds 3]
        [--updates 12] [--out benchmarks/results/speed/train_compare.json] [--no-warm] [--set key=value ...]

The old commit is checked out in a temporary git worktree (:func:`common.old_tree`); each run is a fresh
``python -m tarocchi_rl.cli train`` subprocess of one tree (the old one through ``PYTHONPATH``, this one as
installed) on ``configs/ppo_VARIANT.yaml`` of that tree with ``--updates`` PPO updates, no imitation warm start,
no evaluation and no checkpoint but the last. Old and new alternate round by round so that the machine's noise
falls on both; a first unrecorded run per tree and variant compiles its Numba cache (``--no-warm``: none; ``--set``
adds overrides to every run: tests' tiny runs). What is compared is the
train summary's ``decisions_per_s`` (every seat's decisions per second of the timed updates, rollouts and
learning together) and ``samples_per_s`` (the learner's); medians over rounds, with the ratio new / old.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: common.py
from common import ROOT, old_tree  # noqa: E402

METRICS = ("decisions_per_s", "samples_per_s")
#: every run: the default config minus what is not training (the warm start, evaluations, checkpoints)
SETS = ("imitation.decisions=0", "max_minutes=0", "eval.every=100000", "eval.final_deals=0",
        "checkpoint_every=100000")


def train_once(tree: Path, installed: bool, variant: str, updates: int, extra: list[str]) -> dict:
    """One training run of ``tree``'s trainer (a subprocess): its summary's throughput figures."""
    env = dict(os.environ)
    if not installed:
        env["PYTHONPATH"] = str(tree)
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "tarocchi_rl.cli", "train", "--config",
               str(tree / "configs" / f"ppo_{variant}.yaml"), "--out", str(Path(tmp) / "run"), "--no-progress"]
        for s in (*SETS, f"max_updates={updates}", *extra):
            cmd += ["--set", s]
        out = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"bench_train_compare: training in {tree} failed: {out.stderr.strip()[-500:]}")
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    return {m: summary[m] for m in METRICS}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--old", required=True, help="git ref of the old version")
    p.add_argument("--variants", default="mineo,french3")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--updates", type=int, default=12, help="PPO updates of every run")
    p.add_argument("--out", default=None, help="also write the result as JSON")
    p.add_argument("--no-warm", action="store_true", help="no first unrecorded run (the kernels are compiled)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="for every run (tests: tiny runs)")
    a = p.parse_args()
    if not 1 <= a.rounds <= 100 or not 2 <= a.updates <= 10_000:
        p.error("--rounds must be in [1, 100] and --updates in [2, 10000]")
    variants = [v.strip() for v in a.variants.split(",") if v.strip()]
    runs: dict[tuple[str, str], list[dict]] = {(v, k): [] for v in variants for k in ("old", "new")}
    with old_tree(a.old) as old:
        trees = {"old": (old, False), "new": (ROOT, True)}
        for v in variants if not a.no_warm else ():  # compile both trees' kernels
            for tree, installed in trees.values():
                train_once(tree, installed, v, 2, a.set)
        for r in range(a.rounds):
            order = ("old", "new") if r % 2 == 0 else ("new", "old")
            for v in variants:
                for k in order:
                    runs[v, k].append(train_once(*trees[k], v, a.updates, a.set))
            print(f"round {r + 1}/{a.rounds} done", file=sys.stderr)
    rows = []
    for v in variants:
        for m in METRICS:
            o = statistics.median(x[m] for x in runs[v, "old"])
            n = statistics.median(x[m] for x in runs[v, "new"])
            rows.append({"variant": v, "metric": m, "old": o, "new": n, "ratio": n / o,
                         "old_runs": [x[m] for x in runs[v, "old"]], "new_runs": [x[m] for x in runs[v, "new"]]})
    print(f"old = {a.old}, new = this tree; default config, {a.updates} updates a run, medians of {a.rounds} "
          "alternating runs")
    print("| variant | metric | old | new | new / old |\n|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['variant']} | {row['metric']} | {row['old']:,.0f} | {row['new']:,.0f} | {row['ratio']:.3f} |")
    if a.out:
        head = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True,
                              text=True).stdout.strip()
        result = {"old": a.old, "new": head or "this tree", "updates": a.updates, "rounds": a.rounds, "extra": a.set,
                  "command": " ".join(["python", *sys.argv]), "rows": rows}
        Path(a.out).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
