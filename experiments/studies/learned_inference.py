"""Learned inference in search: ISMCTS with belief-weighted determinizations against the same search with uniform
ones, at equal wall time per decision, on frozen duplicate deals.

    python experiments/studies/learned_inference.py --variant mineo --deals 500 --time 0.01 \\
        --belief bot:mineo [--belief-method exact|sir] [--belief-samples 8] [--search rollout=heuristic] \
        [--out results.json]

A: ``ismcts:time=T,SEARCH,belief=SOURCE,belief_method=..,belief_samples=M``; B: ``ismcts:time=T,SEARCH`` (the
uniform sampler).
Both spend ``time`` seconds per decision (the agent calibrates its iterations on the measured cost of its own
iterations, belief sampling included: A runs fewer iterations). SEARCH adds options to both, e.g.
``rollout=heuristic`` or ``net=bot:mineo,mix=1`` (the guided search). The deals are the first ``--deals`` of
``benchmarks/deals/VARIANT.jsonl.gz`` (or ``--deals-file``; ``--skip K`` starts at deal K: pilot runs on deals a
final run does not play), played by the duplicate arena (every seating of the two agents on every deal). Prints
(and with ``--out`` writes) one JSON object: A's mean payoff per deal against B with the arena's 95% CI
(``mean_a_vs_b``: A's score), A's score minus B's (``a_minus_b``, ``a_minus_b_ci95``: head to head, as
``search_vs.py`` writes it), A's win rate, each agent's measured milliseconds per decision.

``--oracle PEAK`` replaces A's belief model by a cheat that reads the true deal (probability PEAK on each unseen
card's true location, the rest spread evenly): not a player, an upper bound on what a belief model could bring
to the search, and a check of the machinery before a real model is trained. ``--belief uniform`` (the default)
is a smoke run: A's determinizations then have B's law and A only pays the sampling cost.
"""

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from tarocchi_rl import engine
from tarocchi_rl.agents.specs import make_agent
from tarocchi_rl.arena import read_deals_file, run_arena
from tarocchi_rl.core.state import CUR
from tarocchi_rl.search.inference import DEFAULT_BELIEF_SAMPLES, log_beliefs, n_locations

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: common.py
from common import ROOT, Timed, today_utc  # noqa: E402

DEALS_DIR = ROOT / "benchmarks" / "deals"


def oracle_beliefs(peak: float) -> Callable[..., NDArray[np.float64]]:
    """An ISMCTS agent's ``_log_beliefs`` that cheats: ``peak`` on each card's true location (the privileged
    observation of the seat to act), the rest of the mass spread over the other locations. Measurement only."""
    if not 0 < peak < 1:
        raise ValueError(f"--oracle must be in (0, 1), got {peak}")

    def log_b(obs: Any, env: Any, rows: NDArray[np.int64]) -> NDArray[np.float64]:
        n_loc = n_locations(env.num_players)
        viewers = np.full(env.batch_size, -1, np.int64)
        viewers[rows] = env.state.meta[rows, CUR]
        hidden = engine.observe_privileged(env.state, env.tables, viewers)[rows]
        n_cards = hidden.shape[1] // n_loc
        planes = hidden.reshape(len(rows), n_loc, n_cards)
        probs = np.full((len(rows), n_cards, n_loc), (1 - peak) / (n_loc - 1), np.float32)
        g, c = np.nonzero(planes.any(axis=1))
        probs[g, c, planes.argmax(axis=1)[g, c]] = peak
        return log_beliefs(probs, env.num_players, n_cards)

    return log_b


def _frozen_deals(args: argparse.Namespace) -> NDArray[np.integer[Any]]:
    """Frozen deals ``--skip`` .. ``--skip + --deals - 1`` of the deals file: int[deals, C]."""
    path = args.deals_file or DEALS_DIR / f"{args.variant}.jsonl.gz"
    if args.deals < 1 or args.skip < 0:
        raise ValueError(f"--deals must be at least 1 and --skip at least 0, got {args.deals} and {args.skip}")
    decks = read_deals_file(path, args.variant)
    if args.skip + args.deals > len(decks):
        raise ValueError(f"{path} holds {len(decks)} deals; --skip {args.skip} --deals {args.deals} asks for "
                         f"deals up to {args.skip + args.deals}")
    return decks[args.skip : args.skip + args.deals]


def _agents(args: argparse.Namespace) -> tuple[str, str, Any, Any]:
    """(A's label, B's spec, A, B)."""
    base = f"time={args.time}" + (f",{args.search}" if args.search else "")
    b_spec = f"ismcts:{base}"
    belief = "uniform" if args.oracle is not None else args.belief
    how = f"belief_method={args.belief_method},belief_samples={args.belief_samples}"
    a_spec = f"ismcts:{base},belief={belief},{how}"
    a = make_agent(a_spec, seed=args.seed)
    if args.oracle is not None:
        a._log_beliefs = oracle_beliefs(args.oracle)  # the agent's hook: its belief model's log beliefs
        a_spec = a.name = f"ismcts:{base},belief=oracle:{args.oracle},{how}"
    return a_spec, b_spec, a, make_agent(b_spec, seed=args.seed + 1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", default="mineo")
    ap.add_argument("--deals", type=int, default=200, help="N frozen deals (the first N, or from --skip)")
    ap.add_argument("--skip", type=int, default=0, help="start at this frozen deal (pilot runs on deals a final "
                    "run will not play)")
    ap.add_argument("--deals-file", default=None, help="default: benchmarks/deals/VARIANT.jsonl.gz")
    ap.add_argument("--time", type=float, default=0.01, help="seconds per decision, both agents")
    ap.add_argument("--belief", default="uniform", help="A's belief model: a bot dir, bot:VARIANT, a checkpoint")
    ap.add_argument("--belief-method", default="exact", choices=("exact", "sir"))
    ap.add_argument("--belief-samples", type=int, default=DEFAULT_BELIEF_SAMPLES, help="A's SIR candidates per "
                    "determinization (M)")
    ap.add_argument("--search", default="", help="more ismcts options for both (rollout=heuristic, net=...)")
    ap.add_argument("--oracle", type=float, default=None, metavar="PEAK", help="A cheats (module docstring)")
    ap.add_argument("--seed", type=int, default=20261231)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    try:
        decks = _frozen_deals(args)
        a_label, b_spec, a, b = _agents(args)
    except ValueError as e:
        print(f"learned_inference: {e}", file=sys.stderr)
        return 2
    a, b = Timed(a), Timed(b)
    t0 = time.perf_counter()
    r = run_arena(args.variant, [a, b], decks=decks, seed=args.seed, progress=False)
    row, h2h = r["table"][0], r["head_to_head"][0]
    result = {"variant": args.variant, "date": today_utc(), "a": a_label, "b": b_spec, "deals": r["deals"],
              "mean_a_vs_b": row["mean_payoff_per_deal"], "ci95": row["ci95"], "win_rate_a": row["win_rate"],
              "a_minus_b": h2h["mean_difference_per_deal"], "a_minus_b_ci95": h2h["ci95"],
              "ms_per_decision_a": 1000 * a.seconds / max(a.decisions, 1),
              "ms_per_decision_b": 1000 * b.seconds / max(b.decisions, 1),
              "decisions_a": a.decisions, "decisions_b": b.decisions,
              "minutes": (time.perf_counter() - t0) / 60, "command": " ".join(sys.argv)}
    print(json.dumps(result))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
