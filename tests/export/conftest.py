"""Fixtures of the export tests: a small checkpoint (a saved network in the trainer's checkpoint format) and the
bot directory ``tarocchi-rl export`` makes of it, once per session."""

import pytest

from tests.support.checkpoints import decisive_checkpoint


@pytest.fixture
def make_ckpt():
    return decisive_checkpoint


@pytest.fixture(scope="session")
def checkpoint(tmp_path_factory):
    return decisive_checkpoint(tmp_path_factory.mktemp("ckpt") / "final.pt")


@pytest.fixture(scope="session")
def bot(tmp_path_factory, checkpoint):
    """The exported bot directory (through the CLI, as a user would)."""
    from tarocchi_rl.cli import main

    out = tmp_path_factory.mktemp("bots") / "mineo-bot"
    assert main(["export", "--agent", f"ppo:{checkpoint}", "--out", str(out), "--eval-deals", "4"]) == 0
    return out
