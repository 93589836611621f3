"""Small training checkpoints for the tests that need a saved network (export, guided search, expert iteration).

``make_checkpoint`` saves a freshly initialised network in the trainer's checkpoint format (with a numpy RNG state
in its worker states, as the trainer's have) and returns its config and network. ``TINY_RUN``: the ``--set``
overrides of a training run of a few seconds (one in-process worker, no evaluation), for the tests that train;
``TINY_RUN_MINEO`` and ``train_tiny``: the same run on mineo with the trainer's default checkpoint cadence.
"""

from pathlib import Path

import numpy as np
import torch

from tarocchi_rl.rl.checkpoint import save_checkpoint
from tarocchi_rl.rl.config import TrainConfig, load_config
from tarocchi_rl.rl.network import PolicyValueNet, build_network
from tarocchi_rl.variants import get_variant

TINY_RUN = [
    "num_envs=8", "rollout_steps=6", "num_workers=0", "async_rollouts=false", "torch_threads=1",
    "network.hidden=[32]", "ppo.minibatch_size=64", "ppo.epochs=2", "league.snapshot_every=1",
    "league.pool_size=2", "eval.every=0", "eval.final_deals=0", "checkpoint_every=1", "keep_checkpoints=1",
    "max_minutes=0",
]
# TINY_RUN on mineo, checkpoint_every and keep_checkpoints left at the trainer's defaults (the checkpoint tests
# set them per run)
TINY_RUN_MINEO = ["variant=mineo",
                  *(s for s in TINY_RUN if not s.startswith(("checkpoint_every=", "keep_checkpoints=")))]


def make_checkpoint(path: str | Path, variant: str = "mineo", hidden: tuple[int, ...] = (32,), seed: int = 0,
                    head_gain: float = 1.0, belief_loss: float = 0.0) -> tuple[TrainConfig, PolicyValueNet]:
    """Save a new network of ``variant`` at ``path``. ``head_gain`` scales the policy head: above 1 the initial
    near-uniform policy becomes a decisive one, whose greedy actions are not decided by rounding. ``belief_loss``
    above 0: the network has a belief head (a belief model for ``ismcts:belief=``)."""
    cfg = load_config(None, [f"variant={variant}", f"network.hidden={list(hidden)}", f"seed={seed}",
                             *([f"belief_loss={belief_loss}"] if belief_loss > 0 else [])])
    spec = get_variant(variant)
    torch.manual_seed(seed)
    net = build_network(cfg, spec.obs_dim, spec.n_actions)
    if head_gain != 1.0:
        with torch.no_grad():
            net.policy.weight.mul_(head_gain)
            net.value.weight.mul_(0.1)
    save_checkpoint(path, {
        "config": cfg.to_dict(), "model": net.state_dict(), "update": 0, "samples": 0, "decisions": 0,
        "minutes": 0.0, "workers": [{"env_rng": np.arange(4, dtype=np.uint64) * np.uint64(2**61)}],
    })
    return cfg, net


def decisive_checkpoint(path: Path, variant: str = "mineo", hidden: tuple[int, ...] = (64, 64), seed: int = 0,
                        head_gain: float = 100.0) -> Path:
    """:func:`make_checkpoint` with a decisive policy head (greedy actions not decided by rounding), the export
    tests' network; returns ``path``."""
    make_checkpoint(path, variant, tuple(hidden), seed, head_gain)
    return path


def train_tiny(run_dir: str | Path, *extra: str) -> dict:
    """Train a new ``TINY_RUN_MINEO`` run in ``run_dir`` with the ``--set`` overrides ``extra`` (later ones win);
    returns the trainer's result."""
    from tarocchi_rl.rl.trainer import train

    return train(load_config(None, [*TINY_RUN_MINEO, *extra]), run_dir, progress=False)
