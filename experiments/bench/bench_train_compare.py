"""Training throughput of two versions side by side: ``tarocchi-rl train`` of a variant's default config, an old
commit against this tree, same run (issue 31: "training throughput of the default config not below today's").

    python experiments/bench/bench_train_compare.py --old a7f5e0d^ [--variants mineo,french3] [--rounds 3]
        [--updates 12] [--out benchmarks/results/speed/train_compare.json] [--no-warm] [--set key=value ...]

The old commit's files are materialised once (:func:`common.old_commit_tree`, cached with their Numba cache); each
run is a fresh ``python -m tarocchi_rl.cli train`` subprocess of one tree (the old one through ``PYTHONPATH``, this
one as installed) on ``configs/ppo_VARIANT.yaml`` of that tree with ``--updates`` PPO updates, no imitation warm
start, no evaluation and no checkpoint but the last. Old and new alternate round by round so that the machine's noise
falls on both (:func:`common.old_and_new`); a first unrecorded run per tree and variant compiles its Numba cache
(``--no-warm``: none; ``--set`` adds overrides to every run: tests' tiny runs). What is compared is the train
summary's ``decisions_per_s`` (every seat's decisions per second of the timed updates, rollouts and learning
together) and ``samples_per_s`` (the learner's); medians over rounds, with the ratio new / old.
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: common.py
from common import ROOT, median_of, old_and_new, run_json  # noqa: E402

METRICS = ("decisions_per_s", "samples_per_s")
#: every run: the default config minus what is not training (the warm start, evaluations, checkpoints)
SETS = ("imitation.decisions=0", "max_minutes=0", "eval.every=100000", "eval.final_deals=0",
        "checkpoint_every=100000")


def train_once(tree: Path, variant: str, updates: int, extra: list[str]) -> dict:
    """One training run of ``tree``'s trainer (a subprocess; this tree's as installed): its summary's throughput
    figures."""
    with tempfile.TemporaryDirectory() as tmp:
        args = ["-m", "tarocchi_rl.cli", "train", "--config", str(tree / "configs" / f"ppo_{variant}.yaml"), "--out",
                str(Path(tmp) / "run"), "--no-progress"]
        for s in (*SETS, f"max_updates={updates}", *extra):
            args += ["--set", s]
        summary = run_json(tree, args, own_path=tree != ROOT)
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

    def one(tree: Path, v: str, short: bool) -> dict:  # short: the unrecorded run that compiles the kernels
        return train_once(tree, v, 2 if short else a.updates, a.set)

    runs = old_and_new(a.old, variants, one, a.rounds, warm=not a.no_warm)
    rows = []
    for v in variants:
        for m in METRICS:
            o, n = median_of(runs[v, "old"], m), median_of(runs[v, "new"], m)
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
