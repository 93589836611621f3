"""Ablations at equal training time (issue 31): what the perfect-information critic, the belief loss and the card
network are each worth, measured head to head against the default recipe on the frozen deals.

    python experiments/studies/ablations.py --variant french3 [--minutes 20 | --updates 100] [--seeds 0,1]
        [--arms base,critic,belief,cards]
        [--deals 2000] [--runs runs/ablations] [--out benchmarks/results/ablations] [--set key=value ...]

Every arm is ``configs/ppo_VARIANT.yaml`` with the arm's overrides (:data:`ARMS`) and the same budget: either
``max_minutes=--minutes`` (the same wall time for each: what an arm costs in speed counts against it; only
meaningful on a machine nothing else loads) or ``max_updates=--updates`` (the same number of PPO updates, so the
same learner samples: robust to the machine's load; each run's minutes are reported), trained by ``tarocchi-rl train``
in its own process, one run at a time (2 cores), into ``RUNS/VARIANT/ARM-sSEED``. A run whose ``final.pt``
exists is not trained again, so the script resumes where it stopped. Then each arm plays the base arm of the
same seed head to head on ``benchmarks/deals/VARIANT.jsonl.gz`` (``--deals`` of them, duplicate seatings), as
``ppo:`` agents (greedy). Written to ``OUT/VARIANT.json`` (committed; the results pages are made from it): per
arm and seed the run's samples, updates and minutes and the head-to-head mean per deal with its 95% CI, and per
arm the mean over seeds.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
#: each arm's overrides of the variant's default config (``base``: none)
ARMS: dict[str, list[str]] = {
    "base": [],
    "critic": ["critic=perfect"],  # the perfect-information critic
    "belief": ["belief_loss=1.0"],  # the belief head as an auxiliary loss
    "cards": ["network.kind=cards"],  # the card encoder before the MLP trunk
}


def run_dir(runs: Path, variant: str, arm: str, seed: int) -> Path:
    return runs / variant / f"{arm}-s{seed}"


def train(variant: str, arm: str, seed: int, budget: list[str], runs: Path, extra: list[str]) -> Path:
    """Train one arm (unless its final checkpoint exists); its run directory."""
    out = run_dir(runs, variant, arm, seed)
    if (out / "checkpoints" / "final.pt").is_file():
        return out
    if out.exists():  # an interrupted run: started again from nothing, so that every arm has the same budget
        import shutil

        shutil.rmtree(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    sets = [f"seed={seed}", *budget, "eval.final_deals=0", *ARMS[arm], *extra]
    cmd = [str(Path(sys.executable).parent / "tarocchi-rl"), "train", "--config",
           str(ROOT / "configs" / f"ppo_{variant}.yaml"), "--out", str(out), "--no-progress"]
    for s in sets:
        cmd += ["--set", s]
    print(f"training {variant} {arm} seed {seed} ({', '.join(budget)}) -> {out}", file=sys.stderr, flush=True)
    done = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True)
    (out / SUMMARY).write_text(done.stdout.strip().splitlines()[-1] + "\n")  # train's last line: its JSON summary
    return out


SUMMARY = "train_summary.json"  # in a run directory: the JSON line ``tarocchi-rl train`` ends with


def summary(out: Path) -> dict[str, Any]:
    """A finished run's size (updates, learner samples, decisions, minutes), from its train summary."""
    data = json.loads((out / SUMMARY).read_text())
    return {k: data.get(k) for k in ("updates", "samples", "decisions", "minutes")}


def head_to_head(variant: str, arm_run: Path, base_run: Path, deals: int, seed: int) -> dict[str, Any]:
    """The arm's greedy policy against the base's, head to head on the frozen deals."""
    from tarocchi_rl.agents.specs import make_agent
    from tarocchi_rl.arena import read_deals_file, run_arena

    decks = read_deals_file(ROOT / "benchmarks" / "deals" / f"{variant}.jsonl.gz", variant)[:deals]
    r = run_arena(variant, [f"ppo:{arm_run}", f"ppo:{base_run}"], decks=decks, seed=seed, make_agent=make_agent)
    h = r["head_to_head"][0]
    return {"mean_difference_per_deal": h["mean_difference_per_deal"], "ci95": h["ci95"], "deals": r["deals"]}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--variant", required=True)
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--minutes", type=float, default=None, help="training wall time of every run (default 20)")
    budget.add_argument("--updates", type=int, default=None, help="PPO updates of every run, instead of minutes")
    p.add_argument("--seeds", default="0,1")
    p.add_argument("--arms", default=",".join(ARMS), help=f"arms, base first (known: {', '.join(ARMS)})")
    p.add_argument("--deals", type=int, default=2000, help="frozen deals of each head-to-head match")
    p.add_argument("--runs", default=str(ROOT / "runs" / "ablations"))
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "ablations"))
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="for every run (tests: tiny runs)")
    a = p.parse_args()
    arms = [x.strip() for x in a.arms.split(",") if x.strip()]
    unknown = [x for x in arms if x not in ARMS]
    if unknown or not arms or arms[0] != "base":
        p.error(f"--arms: base first, then any of {', '.join(ARMS)}; got {a.arms!r}")
    try:
        seeds = [int(s) for s in a.seeds.split(",")]
    except ValueError:
        p.error(f"--seeds: integers separated by commas, got {a.seeds!r}")
    if a.minutes is None and a.updates is None:
        a.minutes = 20.0
    if a.minutes is not None and not 0 < a.minutes <= 24 * 60:
        p.error(f"--minutes must be in (0, 1440], got {a.minutes}")
    if a.updates is not None and not 1 <= a.updates <= 10**6:
        p.error(f"--updates must be in [1, 1000000], got {a.updates}")
    if not 1 <= a.deals <= 100_000:
        p.error(f"--deals must be in [1, 100000], got {a.deals}")
    budget = [f"max_minutes={a.minutes}"] if a.minutes is not None else ["max_minutes=0", f"max_updates={a.updates}"]
    runs = Path(a.runs)
    result: dict[str, Any] = {"variant": a.variant, "minutes": a.minutes, "updates": a.updates, "seeds": seeds,
                              "deals": a.deals,
                              "overrides": {arm: ARMS[arm] for arm in arms}, "extra": a.set, "arms": {}}
    for seed in seeds:
        for arm in arms:
            train(a.variant, arm, seed, budget, runs, a.set)
    for arm in arms:
        per_seed = []
        for seed in seeds:
            row = {"seed": seed, **summary(run_dir(runs, a.variant, arm, seed))}
            if arm != "base":
                row["vs_base"] = head_to_head(a.variant, run_dir(runs, a.variant, arm, seed),
                                              run_dir(runs, a.variant, "base", seed), a.deals, seed)
            per_seed.append(row)
        entry: dict[str, Any] = {"runs": per_seed}
        if arm != "base":
            means = [r["vs_base"]["mean_difference_per_deal"] for r in per_seed]
            entry["mean_vs_base"] = sum(means) / len(means)
        result["arms"][arm] = entry
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{a.variant}.json").write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
