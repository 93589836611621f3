"""Head-to-head duplicate matches of agents, with each agent's measured wall time per decision.

    python experiments/studies/search_vs.py --variant mineo --deals 1000 \\
        --pair "ismcts:net=runs/mineo-expert,time=0.01" "ppo:runs/mineo-expert" \\
        --pair "ismcts:net=runs/mineo-expert,time=0.01" "ismcts:time=0.01,rollout=heuristic" \\
        [--deals-file benchmarks/deals/mineo.jsonl.gz] [--out results.json]

Each pair plays the same duplicate deals (the arena rotates the seats); the table gives the first agent's mean
payoff per deal against the second with the arena's 95% CI (``mean_a_vs_b``, ``ci95``: the first agent's score),
its score minus the second's (``a_minus_b``, ``a_minus_b_ci95``: head to head, as the leaderboard and
``tarocchi-rl eval`` give it; the same sign, larger: a seat's loss is shared by the other agent's seats), and for
each agent the wall time its ``act`` calls took divided by the decisions it made (searches of a batch of games run
together, so this is the time per decision amortised over the batch: what "the same wall time per decision"
compares).
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from tarocchi_rl.agents.specs import make_agent
from tarocchi_rl.arena import read_deals_file, run_arena

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: common.py
from common import Timed, today_utc  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", default="mineo")
    ap.add_argument("--deals", type=int, default=1000)
    ap.add_argument("--deals-file", default=None, help="frozen deals (benchmarks/deals/VARIANT.jsonl.gz)")
    ap.add_argument("--pair", nargs=2, action="append", required=True, metavar=("A", "B"))
    ap.add_argument("--seed", type=int, default=20261201)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    decks = None
    if args.deals_file:
        decks = read_deals_file(args.deals_file, args.variant)[: args.deals]
    rows = []
    for a_spec, b_spec in args.pair:
        a, b = Timed(make_agent(a_spec, seed=args.seed)), Timed(make_agent(b_spec, seed=args.seed + 1))
        t0 = time.perf_counter()
        r = run_arena(args.variant, [a, b], deals=None if decks is not None else args.deals, decks=decks,
                      seed=args.seed, progress=False)
        row, h2h = r["table"][0], r["head_to_head"][0]
        rows.append({"a": a_spec, "b": b_spec, "deals": r["deals"],
                     "mean_a_vs_b": row["mean_payoff_per_deal"], "ci95": row["ci95"], "win_rate_a": row["win_rate"],
                     "a_minus_b": h2h["mean_difference_per_deal"], "a_minus_b_ci95": h2h["ci95"],
                     "ms_per_decision_a": 1000 * a.seconds / max(a.decisions, 1),
                     "ms_per_decision_b": 1000 * b.seconds / max(b.decisions, 1),
                     "decisions_a": a.decisions, "decisions_b": b.decisions,
                     "minutes": (time.perf_counter() - t0) / 60})
        x = rows[-1]
        print(f"{args.variant}: {a_spec} vs {b_spec}: {x['mean_a_vs_b']:+.3f} [{x['ci95'][0]:+.3f}, "
              f"{x['ci95'][1]:+.3f}] per deal over {x['deals']} deals; ms/decision {x['ms_per_decision_a']:.2f} vs "
              f"{x['ms_per_decision_b']:.2f}; {x['minutes']:.1f} min", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps({"variant": args.variant, "command": " ".join(sys.argv),
                                              "date": today_utc(), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
