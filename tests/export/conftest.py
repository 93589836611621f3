"""Fixtures of the export tests: a small checkpoint (a saved network in the trainer's checkpoint format) and the
bot directory ``tarocchi-rl export`` makes of it, once per session."""

import numpy as np
import pytest
import torch

from tarocchi_rl.rl.checkpoint import save_checkpoint
from tarocchi_rl.rl.config import load_config
from tarocchi_rl.rl.network import build_network
from tarocchi_rl.variants import get_variant


def make_checkpoint(path, variant="mineo", hidden=(64, 64), seed=0, head_gain=100.0):
    """A freshly initialised network saved as a training checkpoint (with a numpy RNG state, as the trainer's
    have). ``head_gain`` scales the policy head: the initial near-uniform policy becomes a decisive one, whose
    greedy actions are not decided by rounding."""
    cfg = load_config(None, [f"variant={variant}", f"network.hidden={list(hidden)}", f"seed={seed}"])
    spec = get_variant(variant)
    torch.manual_seed(seed)
    net = build_network(cfg, spec.obs_dim, spec.n_actions)
    with torch.no_grad():
        net.policy.weight.mul_(head_gain)
        net.value.weight.mul_(0.1)
    save_checkpoint(path, {
        "config": cfg.to_dict(), "model": net.state_dict(), "update": 0, "samples": 0, "decisions": 0,
        "minutes": 0.0, "workers": [{"env_rng": np.arange(4, dtype=np.uint64) * np.uint64(2**61)}],
    })
    return path


@pytest.fixture
def make_ckpt():
    return make_checkpoint


@pytest.fixture(scope="session")
def checkpoint(tmp_path_factory):
    return make_checkpoint(tmp_path_factory.mktemp("ckpt") / "final.pt")


@pytest.fixture(scope="session")
def bot(tmp_path_factory, checkpoint):
    """The exported bot directory (through the CLI, as a user would)."""
    from tarocchi_rl.cli import main

    out = tmp_path_factory.mktemp("bots") / "mineo-bot"
    assert main(["export", "--agent", f"ppo:{checkpoint}", "--out", str(out), "--eval-deals", "4"]) == 0
    return out
