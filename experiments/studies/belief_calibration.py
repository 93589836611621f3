"""How well calibrated is a belief model? (issue 31 item 2) A reliability table and plot of its beliefs.

    .venv/bin/python experiments/studies/belief_calibration.py --model runs/mineo-XXXX --deals 500 \\
        --players heuristic --json belief.json --png belief.png [--seed 0] [--bins 10] [--batch 128]

``--model``: a checkpoint (file or run directory) trained with ``belief_loss > 0``, or a bot directory holding
``belief.onnx`` (``tarocchi-rl export``). ``--deals`` deals are played (``--players heuristic``: every seat by the
heuristic; ``self``: by the model's own policy, sampling); at every decision the deciding seat's beliefs
(:mod:`tarocchi_rl.policies.belief`) are compared with where its unseen cards really are (the privileged
observation). Each (unseen card, location) pair is one prediction, binned by its probability.

Written: ``--json``, the reliability table (bins: count, mean predicted probability, observed frequency), the
expected calibration error (ECE), top-1 accuracy and mean negative log-likelihood of the true location, for the
model and for two references: ``uniform`` (1 / L everywhere) and ``counts`` (each location in proportion to the
number of unseen cards it holds: what the seat knows from the hand sizes alone, no card-level inference);
``--png``, the reliability diagram. Both paths are given here: run outputs are never committed.
"""

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from tarocchi_rl import engine
from tarocchi_rl.batch import BatchEnv
from tarocchi_rl.policies import HeuristicAgent
from tarocchi_rl.policies.belief import (
    RELIABILITY_BINS,
    belief_shape,
    belief_targets,
    location_names,
    reliability_sums,
    reliability_table,
)
from tarocchi_rl.variants import get_variant

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: common.py
from common import bounded_int  # noqa: E402

MAX_DEALS = 1_000_000  # --deals
MAX_BATCH = 4096  # --batch: games played together
MAX_BINS = 100  # --bins
REFERENCES = ("uniform", "counts")


def load_model(path: str) -> tuple[Any, str, dict]:
    """(agent with ``beliefs``, variant, options) of a bot directory or a checkpoint; SystemExit(one line) when it
    has no belief model or cannot be loaded."""
    p = Path(path)
    try:
        if (p / "manifest.json").is_file():
            from tarocchi_rl.policies.onnx_policy import OnnxAgent

            agent: Any = OnnxAgent(p, greedy=False)
            variant, options = agent.variant, agent.options
        else:
            from tarocchi_rl.rl.network import load_network
            from tarocchi_rl.rl.policy import PPOAgent

            net, cfg, _ = load_network(p)
            agent = PPOAgent(net=net, variant=cfg.variant, greedy=False)
            variant, options = cfg.variant, get_variant(cfg.variant).resolve_options(dict(cfg.options))
    except ValueError as e:
        raise SystemExit(f"belief_calibration: --model {path}: {' '.join(str(e).split())[:300]}") from None
    if not agent.has_beliefs:
        raise SystemExit(f"belief_calibration: --model {path} has no belief model (train with belief_loss > 0)")
    return agent, variant, options


def count_beliefs(targets: np.ndarray, n_loc: int) -> np.ndarray:
    """The ``counts`` reference: float32[B, C, L], every card at location l with the share of the unseen cards
    there (what the hand, stock and discard sizes tell the seat)."""
    onehot = (targets[:, :, None] == np.arange(n_loc)).astype(np.float32)
    share = onehot.sum(axis=1)
    share /= np.maximum(share.sum(axis=1, keepdims=True), 1)
    return np.broadcast_to(share[:, None, :], onehot.shape)


def measure(agent: Any, variant: str, options: dict, deals: int, players: str, seed: int, bins: int,
            batch: int) -> dict:
    """Play the deals; the reliability sums of the model and of the references."""
    spec = get_variant(variant)
    _, n_loc = belief_shape(spec)
    sums: dict[str, dict] = {}
    decisions, played = 0, 0
    heuristic = HeuristicAgent(seed)
    while played < deals:
        games = min(batch, deals - played)
        env = BatchEnv(variant, games, seed=seed + played, **options)
        rows = np.arange(games)
        while not env.all_done():
            cur = env.current_player().astype(np.int64)
            live = np.nonzero(cur >= 0)[0]
            obs, mask = env.observe(), env.legal_mask()
            hidden = engine.observe_privileged(env.state, env.tables, cur)
            targets = belief_targets(obs[live], hidden[live], spec)
            predicted = {"model": agent.beliefs(obs[live]),
                         "uniform": np.full((len(live), *belief_shape(spec)), 1 / n_loc, np.float32),
                         "counts": count_beliefs(targets, n_loc)}
            for name, probs in predicted.items():
                part = reliability_sums(probs, targets, bins)
                sums[name] = part if name not in sums else {k: sums[name][k] + v for k, v in part.items()}
            decisions += len(live)
            actor = agent if players == "self" else heuristic
            actions = np.full(games, -1, np.int64)
            actions[live] = actor.act(obs[live], mask[live], env, rows[live])
            env.step(actions)
        played += games
    return {"decisions": decisions, **{name: reliability_table(s) for name, s in sums.items()},
            "locations": list(location_names(spec.n_players))}


def plot(result: dict, path: Path) -> None:
    """The reliability diagram: observed frequency against mean predicted probability per bin (the model and the
    references), the diagonal, and the share of predictions in each bin."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, hist) = plt.subplots(2, 1, figsize=(6, 7.5), gridspec_kw={"height_ratios": [3, 1]}, sharex=True)
    ax.plot([0, 1], [0, 1], color="grey", linestyle=":", label="perfectly calibrated")
    for name, style in (("model", "o-"), ("counts", "s--"), ("uniform", "^:")):
        table = result[name]
        pts = [(b["mean_predicted"], b["observed"]) for b in table["bins"] if b["count"]]
        ax.plot(*zip(*pts, strict=True), style, label=f"{name} (ECE {table['ece']:.3f}, NLL {table['nll']:.3f})")
    ax.set_ylabel("observed frequency")
    ax.set_title(f"Belief calibration: {result['variant']}, {result['deals']} deals ({result['players']}), "
                 f"{result['model']['cards']:,} unseen cards", fontsize=9)
    ax.legend(fontsize=8, loc="upper left")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    bins = result["model"]["bins"]
    total = max(1, result["model"]["predictions"])
    hist.bar([(b["lo"] + b["hi"]) / 2 for b in bins], [b["count"] / total for b in bins],
             width=1 / len(bins) * 0.9, color="tab:blue")
    hist.set_yscale("log")
    hist.set_xlabel("predicted probability (model)")
    hist.set_ylabel("share of predictions")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, help="checkpoint (file or run dir) or bot directory with belief.onnx")
    ap.add_argument("--deals", type=bounded_int("--deals", 1, MAX_DEALS), default=200)
    ap.add_argument("--players", choices=("heuristic", "self"), default="heuristic")
    ap.add_argument("--seed", type=bounded_int("--seed", 0, 2**62), default=0)
    ap.add_argument("--bins", type=bounded_int("--bins", 2, MAX_BINS), default=RELIABILITY_BINS)
    ap.add_argument("--batch", type=bounded_int("--batch", 1, MAX_BATCH), default=128, help="games played together")
    ap.add_argument("--json", required=True, type=Path, help="where to write the reliability table")
    ap.add_argument("--png", required=True, type=Path, help="where to write the reliability plot")
    args = ap.parse_args(argv)
    for out in (args.json, args.png):
        if not out.parent.is_dir():
            raise SystemExit(f"belief_calibration: {out}: the directory {out.parent} does not exist")
    agent, variant, options = load_model(args.model)
    t = time.perf_counter()
    result = {"model_path": str(args.model), "variant": variant, "options": options, "deals": args.deals,
              "players": args.players, "seed": args.seed, "bins": args.bins,
              **measure(agent, variant, options, args.deals, args.players, args.seed, args.bins, args.batch)}
    result["seconds"] = round(time.perf_counter() - t, 1)
    args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    plot(result, args.png)
    m = result["model"]
    print(f"{variant}: {result['decisions']:,} decisions, {m['cards']:,} unseen cards: model ECE {m['ece']:.4f} "
          f"top-1 {m['top1']:.3f} NLL {m['nll']:.3f}; counts ECE {result['counts']['ece']:.4f} NLL "
          f"{result['counts']['nll']:.3f}; uniform NLL {result['uniform']['nll']:.3f} -> {args.json}, {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
