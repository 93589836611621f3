"""Fixtures of the export tests: a small checkpoint (a saved network in the trainer's checkpoint format) and the
bot directory ``tarocchi-rl export`` makes of it, once per session."""

import pytest
from checkpoints import make_checkpoint as _make


def make_checkpoint(path, variant="mineo", hidden=(64, 64), seed=0, head_gain=100.0):
    """``checkpoints.make_checkpoint`` with a decisive policy head (greedy actions not decided by rounding); the
    path."""
    _make(path, variant, tuple(hidden), seed, head_gain)
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
