"""Fit a belief model to the games of the search it will serve (issue 31, learned inference).

A belief head learns where the unseen cards lie from the players it watched during training (the learner, its league),
and what a bid or a lead says about a hand depends on who made it. In ``learned_inference.py`` the other seats are
searches, not those players. This script plays deals where one agent (``--teacher``, by default plain ISMCTS at 2 ms
a decision with heuristic rollouts, the uniform side of that match) holds every seat, takes each decision's
observation and the true location of every card the deciding seat cannot see, and trains the network of ``--init``
on them with the belief head's cross-entropy alone (``--epochs`` passes, Adam, ``--lr``); the last tenth of the
deals (whole batches of ``--batch`` games) is held out. The result is a checkpoint that ``ismcts:belief=OUT``
reads (its policy and value heads are left as they were, their trunk moved: use it as a belief model only).

    python experiments/studies/belief_from_search.py --init CHECKPOINT --out runs/li/b.pt --decisions 150000

Prints one JSON object: the held-out cross-entropy (nats a card) before and after each epoch, the decisions, the
seconds.
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

from tarocchi_rl.agents.specs import make_agent
from tarocchi_rl.policies.belief import belief_targets
from tarocchi_rl.rl.checkpoint import load_checkpoint, save_checkpoint
from tarocchi_rl.rl.checkpoint_file import CheckpointError
from tarocchi_rl.rl.imitation import teacher_chunks
from tarocchi_rl.rl.losses import belief_loss
from tarocchi_rl.rl.network import load_network

TEACHER = "ismcts:time=0.002,rollout=heuristic"
MINIBATCH = 1024


def held_out_loss(net: torch.nn.Module, obs: torch.Tensor, targets: torch.Tensor) -> float:
    """The belief head's mean cross-entropy over ``obs`` float32[N, D] with ``targets`` int64[N, C]."""
    with torch.no_grad():
        return float(belief_loss(net.belief_logits(obs), targets))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="belief_from_search", description=__doc__.split("\n\n")[0])
    ap.add_argument("--init", required=True, help="a checkpoint with a belief head (belief_loss > 0)")
    ap.add_argument("--out", required=True, help="where to write the fitted checkpoint")
    ap.add_argument("--decisions", type=int, default=150_000)
    ap.add_argument("--teacher", default=TEACHER, help=f"the agent in every seat (default {TEACHER})")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--batch", type=int, default=64, help="games played together")
    ap.add_argument("--seed", type=int, default=12345)
    args = ap.parse_args(argv)
    for name in ("decisions", "epochs", "batch"):
        if getattr(args, name) < 1:
            ap.error(f"--{name} must be >= 1, got {getattr(args, name)}")
    torch.set_num_threads(1)
    try:
        data = load_checkpoint(args.init)
        loaded = load_network(data)
        teacher = make_agent(args.teacher, seed=args.seed)
    except (CheckpointError, ValueError) as e:
        print(f"belief_from_search: {e}", file=sys.stderr)
        return 2
    net, cfg = loaded.net, loaded.cfg
    if net.belief_shape is None:
        print(f"belief_from_search: {args.init} has no belief head (trained with belief_loss: 0)", file=sys.stderr)
        return 2
    t0 = time.time()
    obs_l, tgt_l = [], []
    for chunk in teacher_chunks(teacher, cfg.variant, cfg.options, args.batch, args.seed, 1.0, args.decisions,
                                privileged=True):
        obs_l.append(chunk["obs"])
        tgt_l.append(belief_targets(chunk["obs"], chunk["hidden"], cfg.spec))
    held = max(1, len(obs_l) // 10) if len(obs_l) > 1 else 0  # whole batches (deals) held out; none from one
    obs, targets = torch.from_numpy(np.concatenate(obs_l)), torch.from_numpy(np.concatenate(tgt_l))
    cut = sum(len(o) for o in obs_l[:len(obs_l) - held])  # training rows [0, cut), held-out rows [cut, end)
    test = (obs[cut:], targets[cut:]) if held else (obs, targets)
    losses = [held_out_loss(net, *test)]
    gen = torch.Generator().manual_seed(args.seed)
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    net.train()
    for _ in range(args.epochs):
        perm = torch.randperm(cut, generator=gen)
        for start in range(0, cut, MINIBATCH):
            idx = perm[start:start + MINIBATCH]
            loss = belief_loss(net.belief_logits(obs[idx]), targets[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        losses.append(held_out_loss(net, *test))
    net.eval()
    out = {k: v for k, v in data.items() if k != "path"}
    out["model"] = net.state_dict()
    out["belief_from_search"] = {"teacher": args.teacher, "decisions": int(len(obs)), "init": str(args.init)}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    save_checkpoint(args.out, out)
    print(json.dumps({"init": str(args.init), "out": str(args.out), "variant": cfg.variant, "teacher": args.teacher,
                      "decisions": int(len(obs)), "held_out_decisions": int(len(obs) - cut),
                      "held_out_loss": losses, "seconds": round(time.time() - t0, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
