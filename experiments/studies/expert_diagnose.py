"""Why an expert-iteration run does or does not improve its network: two measurements on a run's own pieces.

``distill``: a copy of the run's starting network (its config's ``init``) trained on shard files of the run
(``runs/NAME/shards/round_*.npz``: held-out 15%), reporting after each epoch how often its most probable move is
the target's most probable one (agreement; the starting, best and learner networks for reference), then the
trained network head to head against the starting one on the run's gate deals: whole, and by kind of decision
(``compose``: the trained network for one kind, the starting one for the others)::

    .venv/bin/python experiments/studies/expert_diagnose.py distill runs-carry/expert-french3 \\
        --shards 'runs/expert-french3/shards/*.npz' [--phases 5] [--epochs 4 --lr 3e-4] [--json]

``noise``: the run's labelling search run twice on the same positions (the starting network's own greedy play,
positions of card play with more than one legal move): how often the two searches' targets have the same most
probable move (``--target``: the visits or the q target; default the run's), and how often the first is the
network's move::

    .venv/bin/python experiments/studies/expert_diagnose.py noise runs-carry/expert-french3-q --budgets 600,2400 \
        --deals 64 --target visits

Both read a run or carry directory (``resume.pt``, loaded as any checkpoint: no pickle) and use one thread.
"""

from __future__ import annotations

import argparse
import copy
import glob
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch

from tarocchi_rl.batch import BatchEnv
from tarocchi_rl.core.phases import DECISION_KINDS, PLAY
from tarocchi_rl.core.state import PHASE
from tarocchi_rl.expert.config import TARGETS, ExpertConfig, with_resume_overrides
from tarocchi_rl.expert.gate import gate_decks, head_to_head, network_agent
from tarocchi_rl.expert.labels import Labeller
from tarocchi_rl.expert.learn import train_round
from tarocchi_rl.expert.run import ExpertRun, load_resumable
from tarocchi_rl.expert.shards import Shard, ShardError
from tarocchi_rl.policies.compose import ComposeAgent
from tarocchi_rl.rl.checkpoint import CheckpointError
from tarocchi_rl.rl.config import ConfigError
from tarocchi_rl.rl.policy import PPOAgent


def _networks(run_dir: str) -> tuple[ExpertConfig, ExpertRun, torch.nn.Module, torch.nn.Module, torch.nn.Module]:
    """(config, the run object, the starting network, the best one, the learner), all in eval mode."""
    data = load_resumable(run_dir)
    cfg = with_resume_overrides(data["expert"]["config"], {"torch_threads": 1})
    run = ExpertRun(cfg, Path(run_dir), None, None, False)
    run.init_weights()
    start = copy.deepcopy(run.net).eval()
    run.restore(data)
    return cfg, run, start, copy.deepcopy(run.best).eval(), copy.deepcopy(run.net).eval()


def _agreement(net: torch.nn.Module, arrays: dict[str, np.ndarray]) -> float:
    """The share of samples whose target's most probable move is the network's."""
    picks = []
    with torch.no_grad():
        for lo in range(0, len(arrays["outcome"]), 8192):
            logits, _, _ = net.forward_all(torch.from_numpy(arrays["obs"][lo:lo + 8192]).float(),
                                           torch.from_numpy(arrays["mask"][lo:lo + 8192]), with_beliefs=False)
            picks.append(logits.argmax(dim=1).numpy())
    return float((np.concatenate(picks) == arrays["policy"].argmax(axis=1)).mean())


def distill(args: argparse.Namespace) -> dict[str, Any]:
    cfg, run, start, best, learner = _networks(args.run)
    files = sorted(glob.glob(args.shards))
    if not files:
        raise SystemExit(f"expert_diagnose: no shard file matches {args.shards}")
    arrays = Shard.concatenate([Shard.read(f, run.obs_dim, run.n_actions) for f in files]).arrays
    if args.phases:
        keep = np.isin(arrays["phase"], [int(p) for p in args.phases.split(",")])
        arrays = {k: v[keep] for k, v in arrays.items()}
    n = len(arrays["outcome"])
    order = np.random.default_rng(0).permutation(n)
    train = {k: v[order[: int(0.85 * n)]] for k, v in arrays.items()}
    held = {k: v[order[int(0.85 * n):]] for k, v in arrays.items()}
    out: dict[str, Any] = {"samples": n, "files": len(files), "phases": args.phases or "all",
                           "agreement": {k: round(_agreement(m, held), 4)
                                         for k, m in (("start", start), ("best", best), ("learner", learner))},
                           "epochs": []}
    say(f"{n} samples; held-out agreement {out['agreement']}")
    net = copy.deepcopy(start)
    opt = torch.optim.Adam(net.parameters(), lr=args.lr, eps=1e-5)
    gen = torch.Generator().manual_seed(1)
    for epoch in range(args.epochs):
        parts = train_round(net, opt, train, cfg.learn, gen, torch.device("cpu"), belief_weight=cfg.belief_loss)
        row = {"epoch": epoch + 1, **{k: round(v, 4) for k, v in parts.items()},
               "agreement_held_out": round(_agreement(net, held), 4)}
        out["epochs"].append(row)
        say(str(row))
    decks = gate_decks(cfg)[: args.deals]
    out["vs_start"] = head_to_head(cfg, network_agent(net, cfg, "trained"), network_agent(start, cfg, "start"),
                                   decks, seed=7)
    say(f"trained vs start: {out['vs_start']}")
    for kind in DECISION_KINDS:
        parts = {k: network_agent(net if k == kind else start, cfg, f"{k}-{k == kind}") for k in DECISION_KINDS}
        one = ComposeAgent(parts, name=f"{kind}=trained")
        out[f"{kind}_only_vs_start"] = head_to_head(cfg, one, network_agent(start, cfg, "start"), decks, seed=7)
        say(f"{kind} trained, the rest the start: {out[f'{kind}_only_vs_start']}")
    return out


def noise(args: argparse.Namespace) -> dict[str, Any]:
    cfg, _, start, _, _ = _networks(args.run)
    if args.target:
        cfg.search.target = args.target
    labeller = Labeller(cfg.to_dict(), stream=99)
    labeller.net.load_state_dict(start.state_dict())
    agent = PPOAgent(net=labeller.net, threads=1)
    budgets = [int(b) for b in args.budgets.split(",")]
    counts = {b: [0, 0] for b in budgets}  # the two searches the same, the first the network's
    positions = 0
    env = BatchEnv(cfg.variant, args.deals, seed=args.seed, **cfg.options)
    while True:
        live = np.flatnonzero(env.current_player() >= 0)
        if len(live) == 0:
            break
        obs, mask = env.observe()[live], env.legal_mask()[live]
        probs, _ = agent.run(obs, mask)
        moves = np.where(mask, probs, -1.0).argmax(axis=1)
        rows = np.flatnonzero((env.state.meta[live, PHASE] == PLAY) & (mask.sum(axis=1) > 1))
        if len(rows):
            positions += len(rows)
            for b in budgets:
                one = labeller._search(env, live[rows], obs[rows], mask[rows], probs[rows], b)[0].argmax(axis=1)
                two = labeller._search(env, live[rows], obs[rows], mask[rows], probs[rows], b)[0].argmax(axis=1)
                counts[b][0] += int((one == two).sum())
                counts[b][1] += int((one == moves[rows]).sum())
        actions = np.full(args.deals, -1, np.int64)
        actions[live] = moves
        env.step(actions)
    out = {"positions": positions, "target": cfg.search.target,
           "budgets": {str(b): {"searches_agree": round(s / positions, 4), "search_is_network": round(a / positions, 4)}
                       for b, (s, a) in counts.items()}}
    say(str(out))
    return out


def say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    d = sub.add_parser("distill", help="train the starting network on a run's shards; agreement, head to head")
    d.add_argument("run", help="a run or carry directory (resume.pt)")
    d.add_argument("--shards", required=True, help="a glob of the run's shard files")
    d.add_argument("--phases", default="", help="phase codes to keep (tarocchi_rl/core/phases.py), e.g. 5")
    d.add_argument("--epochs", type=int, default=4)
    d.add_argument("--lr", type=float, default=3e-4)
    d.add_argument("--deals", type=int, default=1000, help="gate deals for the head to head")
    n = sub.add_parser("noise", help="the labelling search run twice on the same positions")
    n.add_argument("run", help="a run or carry directory (resume.pt)")
    n.add_argument("--budgets", default="600", help="iterations, comma-separated")
    n.add_argument("--deals", type=int, default=64)
    n.add_argument("--seed", type=int, default=5)
    n.add_argument("--target", choices=TARGETS, default=None,
                   help="the policy target whose most probable move is compared (default: the run's search.target)")
    for q in (d, n):
        q.add_argument("--json", action="store_true", help="stdout: the result as JSON alone")
    args = p.parse_args()
    torch.set_num_threads(1)
    try:
        out = distill(args) if args.what == "distill" else noise(args)
    except (CheckpointError, ConfigError, ShardError, OSError) as e:
        raise SystemExit(f"expert_diagnose: {' '.join(str(e).split())}") from None
    print(json.dumps(out) if args.json else json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
