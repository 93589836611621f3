"""Learner throughput: PPO updates on synthetic batches, in learner samples per second, on whatever device runs it.

What is measured: the trainer's own update (``Trainer._learn``: the host-to-device copy of the batch, the critic's
advantages and targets with ``critic: perfect``, then ``ppo.epochs`` passes of shuffled minibatches: forward,
clipped-PPO loss, backward, gradient clip, Adam step) on a batch of the shapes the config's rollouts give:
``num_envs * rollout_steps * max(1, num_workers)`` samples of the variant's observation, mask and hidden cards (a
rollout plays about that many decisions; the learner's share of them is smaller, so this is an upper bound on a
real batch). No game is played: the batch is synthetic (sparse 0/1 observations, random legal masks, chains of 15
decisions ending in a payoff), which costs the update what a real one does. The first update (allocation, CUDA
start-up) is excluded; each repeat runs whole updates until ``--seconds`` have passed; the median of the repeats is
the figure to quote.

    .venv/bin/python experiments/bench/bench_learner.py          # configs/ppo_mineo.yaml, device auto
    .venv/bin/python experiments/bench/bench_learner.py --set critic=perfect --json
    .venv/bin/python experiments/bench/bench_learner.py --set device=cuda --set bf16=true --seconds 20

``--set`` takes the trainer's config keys (``tarocchi-rl train --set``), e.g. ``device``, ``bf16``, ``critic``,
``network.hidden``, ``ppo.minibatch_size``, ``torch_threads``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import tempfile
import time

import numpy as np
import torch

from tarocchi_rl.provenance import machine_stamp
from tarocchi_rl.rl.config import load_config
from tarocchi_rl.rl.network import privileged_dim
from tarocchi_rl.rl.trainer import Trainer
from tarocchi_rl.variants import get_variant

CHAIN = 15  # decisions of one seat in one deal, about a Mineo seat's (its chain ends in the payoff)
OBS_DENSITY = 0.08  # share of ones in an observation (a few dozen cards and flags among ~1000 floats)


def synthetic_batch(n: int, obs_dim: int, n_actions: int, hidden_dim: int, rng: np.random.Generator) -> dict:
    """One rollout's arrays (:mod:`tarocchi_rl.rl.rollout`'s table) of ``n`` made-up samples."""
    mask = rng.random((n, n_actions)) < 0.1
    mask[np.arange(n), rng.integers(n_actions, size=n)] = True  # at least one legal action per row
    legal = mask.sum(1)
    action = np.array([rng.choice(np.nonzero(row)[0]) for row in mask], np.int64)
    k = np.arange(n)
    last = (k % CHAIN == CHAIN - 1) | (k == n - 1)
    value = rng.standard_normal(n).astype(np.float32)
    return {
        "obs": (rng.random((n, obs_dim)) < OBS_DENSITY).astype(np.float32), "mask": mask, "action": action,
        "logp": -np.log(legal).astype(np.float32), "value": value,
        "advantage": rng.standard_normal(n).astype(np.float32), "ret": rng.standard_normal(n).astype(np.float32),
        "hidden": (rng.random((n, hidden_dim)) < 0.25).astype(np.float32),
        "reward": np.where(last, rng.standard_normal(n), 0).astype(np.float32), "done": last,
        "next_idx": np.where(last, -1, k + 1).astype(np.int64),
    }


def bench(config: str, overrides: list[str], seconds: float, repeats: int, samples: int | None) -> dict:
    """Median learner samples/s of ``repeats`` runs of ``seconds`` (after one warm-up update)."""
    cfg = load_config(config, [*overrides, "num_workers=0"])
    n = samples or cfg.num_envs * cfg.rollout_steps * max(1, load_config(config, overrides).num_workers)
    spec = get_variant(cfg.variant)
    hidden_dim = privileged_dim(spec) if cfg.critic == "perfect" else 0
    batch = synthetic_batch(n, spec.obs_dim, spec.n_actions, hidden_dim, np.random.default_rng(cfg.seed))
    small = load_config(config, [*overrides, "num_workers=0", "num_envs=1"])  # its one rollout worker is unused
    with tempfile.TemporaryDirectory() as d:
        trainer = Trainer(small, f"{d}/run", progress=False)
        try:
            trainer._learn([batch])  # warm-up: allocation, CUDA context and kernels
            rates = []
            for _ in range(repeats):
                done, t0 = 0, time.perf_counter()
                while time.perf_counter() - t0 < seconds:
                    trainer._learn([batch])
                    done += n
                if trainer.device.type == "cuda":
                    torch.cuda.synchronize()
                rates.append(done / (time.perf_counter() - t0))
        finally:
            trainer.workers.close()
    return {
        "learner_samples_per_s": round(statistics.median(rates), 1), "repeats": [round(r, 1) for r in rates],
        "samples_per_update": n, "epochs": cfg.ppo.epochs, "minibatch_size": cfg.ppo.minibatch_size,
        "network": cfg.network.hidden, "critic": cfg.critic, "device": str(trainer.device),
        "bf16": trainer.bf16, "torch_threads": cfg.torch_threads, "variant": cfg.variant, "config": config,
        "overrides": overrides, "torch": torch.__version__,
        "gpu": torch.cuda.get_device_name() if trainer.device.type == "cuda" else None,
        "machine": machine_stamp(),
        "when": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", default="configs/ppo_mineo.yaml", help="the trainer's config (default: %(default)s)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a config override (repeatable)")
    p.add_argument("--seconds", type=float, default=10.0, help="seconds per repeat (default: %(default)s)")
    p.add_argument("--repeats", type=int, default=3, help="repeats; the median is reported (default: %(default)s)")
    p.add_argument("--samples", type=int, default=None, help="samples per update (default: the config's rollout)")
    p.add_argument("--json", action="store_true", help="print one JSON object only")
    a = p.parse_args()
    if a.seconds <= 0 or a.repeats < 1 or (a.samples is not None and a.samples < 1):
        p.error("--seconds must be > 0, --repeats and --samples >= 1")
    r = bench(a.config, a.set, a.seconds, a.repeats, a.samples)
    if a.json:
        print(json.dumps(r))
        return
    print(f"learner on {r['device']}{' (' + r['gpu'] + ')' if r['gpu'] else ''}, critic {r['critic']}, bf16 "
          f"{r['bf16']}: {r['learner_samples_per_s']:,.0f} samples/s (median of {r['repeats']}; "
          f"{r['samples_per_update']:,} samples x {r['epochs']} epochs per update, minibatch {r['minibatch_size']})")


if __name__ == "__main__":
    main()
