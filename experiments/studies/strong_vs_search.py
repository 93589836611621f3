"""The strong bot against plain search on the frozen deals, resumable: issue 53's figure for ``strong:VARIANT``.

    python experiments/studies/strong_vs_search.py --variant french3 [--deals 500] [--time 0.05] \\
        [--opponent ismcts:iterations=1000,rollout=heuristic] [--out benchmarks/results/strong]

``strong:VARIANT,time=T`` (the shipped network guiding ISMCTS, T seconds a decision) and the opponent play the
first ``--deals`` frozen deals (``benchmarks/deals/VARIANT.jsonl.gz``) in the duplicate arena, seats rotated. The
arena is resumable: every finished block (100 deals) is kept in ``OUT/VARIANT_blocks.jsonl`` and a rerun plays only
the missing ones (a session that ends mid-match loses at most a block). When every block is played,
``OUT/VARIANT.json`` holds the head to head (the strong bot's score minus the opponent's, mean per deal, 95% CI)
and the wall time per decision of each agent measured on the blocks this process played (forced moves included:
the strong bot does not search them). Run it alone on the machine, one process a core: a timed search given less
than a core searches less. One core each (``NUMBA_NUM_THREADS=1`` is set here).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: common.py
from common import ROOT, Timed, today_utc  # noqa: E402

from tarocchi_rl.agents.specs import agent_fingerprint, make_agent  # noqa: E402
from tarocchi_rl.arena import read_deals_file, run_arena  # noqa: E402
from tarocchi_rl.arena.blocks import BLOCK_DEALS  # noqa: E402
from tarocchi_rl.variants import VARIANTS  # noqa: E402

TIMED: dict[str, list[Timed]] = {}  # the agents this process built, by spec (every block builds its own)


def timed_agent(spec: str, seed: int = 0) -> Any:
    """``make_agent`` with a clock, kept under its spec in :data:`TIMED`."""
    agent = Timed(make_agent(spec, seed=seed))
    TIMED.setdefault(spec, []).append(agent)
    return agent


def ms_per_decision(spec: str) -> float | None:
    parts = TIMED.get(spec, [])
    decisions = sum(a.decisions for a in parts)
    return None if decisions == 0 else 1000 * sum(a.seconds for a in parts) / decisions


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", required=True, choices=VARIANTS)
    ap.add_argument("--deals", type=int, default=500)
    ap.add_argument("--time", type=float, default=0.05, help="the strong bot's seconds a decision")
    ap.add_argument("--opponent", default="ismcts:iterations=1000,rollout=heuristic")
    ap.add_argument("--deals-file", default=None, help="default: benchmarks/deals/VARIANT.jsonl.gz")
    ap.add_argument("--out", default=str(ROOT / "benchmarks/results/strong"))
    args = ap.parse_args(argv)
    if args.deals < 1:
        ap.error("--deals must be >= 1")
    deals_file = args.deals_file or str(ROOT / f"benchmarks/deals/{args.variant}.jsonl.gz")
    decks = read_deals_file(deals_file, args.variant)[: args.deals]
    strong = f"strong:{args.variant},time={args.time:g}"
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    r = run_arena(args.variant, [strong, args.opponent], decks=decks, seed=20261201, make_agent=timed_agent,
                  blocks_file=out / f"{args.variant}_blocks.jsonl", fingerprint=agent_fingerprint,
                  batch_deals=BLOCK_DEALS)
    h2h = r["head_to_head"][0]
    command = "python experiments/studies/strong_vs_search.py " + " ".join(sys.argv[1:] if argv is None else argv)
    result = {"variant": args.variant, "date": today_utc(), "command": command,
              "a": strong, "b": args.opponent, "deals": r["deals"], "a_minus_b": h2h["mean_difference_per_deal"],
              "a_minus_b_ci95": h2h["ci95"], "ms_per_decision_a": ms_per_decision(strong),
              "ms_per_decision_b": ms_per_decision(args.opponent), "minutes_this_run": (time.perf_counter() - t0) / 60}
    (out / f"{args.variant}.json").write_text(json.dumps(result, indent=1) + "\n")
    lo, hi = result["a_minus_b_ci95"]
    print(f"{args.variant}: {strong} - {args.opponent}: {result['a_minus_b']:+.2f} [{lo:+.2f}, {hi:+.2f}] a deal, "
          f"{result['deals']} deals; written {out / (args.variant + '.json')}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
