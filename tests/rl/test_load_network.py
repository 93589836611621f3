"""``rl.network.load_network``: the one loader of a checkpoint's network (export, PPOAgent, expert, init=)."""

import pytest
import torch

from tarocchi_rl.rl.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from tarocchi_rl.rl.network import load_network
from tests.support.checkpoints import make_checkpoint


def test_the_network_comes_back_with_its_weights_config_and_data(tmp_path):
    cfg, net = make_checkpoint(tmp_path / "a.pt", "french3", hidden=(16,))
    loaded = load_network(tmp_path / "a.pt", variant="french3")
    assert loaded.cfg.variant == "french3" and loaded.cfg.network.hidden == [16]
    assert not loaded.net.training
    for name, w in net.state_dict().items():
        assert torch.equal(loaded.net.state_dict()[name], w), name
    again = load_network(load_checkpoint(tmp_path / "a.pt"))  # already loaded data
    assert str(again.data["path"]) == str(loaded.data["path"])


def test_errors_name_the_file_and_what_is_wrong(tmp_path):
    make_checkpoint(tmp_path / "a.pt", "mineo", hidden=(16,))
    with pytest.raises(CheckpointError, match=r"a\.pt was trained on mineo, not piedmont3"):
        load_network(tmp_path / "a.pt", variant="piedmont3")
    data = load_checkpoint(tmp_path / "a.pt")
    data["config"]["network"]["hidden"] = [32]
    save_checkpoint(tmp_path / "b.pt", {k: v for k, v in data.items() if k != "path"})
    with pytest.raises(CheckpointError, match=r"b\.pt: the weights do not fit its network \[32\]"):
        load_network(tmp_path / "b.pt")
    with pytest.raises(CheckpointError, match="not found"):
        load_network(tmp_path / "missing.pt")
