"""The torch-free checkpoint scan (tarocchi_rl/rl/checkpoint_file.py): it reads the same config and tensor shapes
as ``torch.load``, refuses what the full loader refuses (a foreign global, a config too large, tensors that do not
fit) without running anything of the file's, and ``ppo:`` specs go through it before torch is imported."""

import io
import os
import pickle
import subprocess
import sys
import zipfile

import pytest
import torch

from tarocchi_rl.rl.checkpoint import load_checkpoint, save_checkpoint
from tarocchi_rl.rl.checkpoint_file import CheckpointError, scan_checkpoint
from tarocchi_rl.rl.config import load_config
from tests.support.checkpoints import TINY_RUN, make_checkpoint


def shapes(state):
    return {k: tuple(v.shape) for k, v in state.items()}


def test_the_scan_reads_what_torch_reads(tmp_path):
    from tarocchi_rl.rl.trainer import train

    cfg = load_config(None, [*TINY_RUN, "critic=perfect", "belief_loss=1.0", "max_updates=1"])
    train(cfg, tmp_path / "run", progress=False)
    path = tmp_path / "run" / "checkpoints" / "final.pt"
    scan = scan_checkpoint(path)
    data = load_checkpoint(path)
    assert scan is not None and scan.config.to_dict() == data["config"]
    assert scan.model == shapes(data["model"]) and "belief.weight" in scan.model
    assert scan.critic == shapes(data["critic"])
    assert scan_checkpoint(tmp_path / "run").path == path  # a run directory: its final.pt


def test_a_checkpoint_whose_tensors_do_not_fit_its_config_is_refused(tmp_path):
    cfg, net = make_checkpoint(tmp_path / "ok.pt")
    config = cfg.to_dict()
    config["network"]["hidden"] = [64]
    save_checkpoint(tmp_path / "bad.pt", {"config": config, "model": net.state_dict()})
    with pytest.raises(CheckpointError, match=r"trunk.0.weight has the shape \[32, 858\], the network needs"):
        scan_checkpoint(tmp_path / "bad.pt")
    config["network"]["hidden"] = [65536] * 64
    save_checkpoint(tmp_path / "huge.pt", {"config": config, "model": net.state_dict()})
    with pytest.raises(CheckpointError, match="its config is invalid: network.hidden: a network of"):
        scan_checkpoint(tmp_path / "huge.pt")


class RunsCode:
    def __reduce__(self):
        return (os.system, ("touch pwned",))


def test_a_pickle_that_would_run_code_is_refused_without_running_it(tmp_path):
    make_checkpoint(tmp_path / "ok.pt")
    body = (tmp_path / "ok.pt").read_bytes()
    body = body[:body.rindex(b"\n#tarocchi-rl sha256 ")]  # no trailer: the scan still reads it
    evil = tmp_path / "evil.pt"
    with zipfile.ZipFile(io.BytesIO(body)) as src, zipfile.ZipFile(evil, "w") as out:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename.endswith("/data.pkl"):
                data = pickle.dumps({"format": "tarocchi-rl-ppo/1", "config": RunsCode(), "model": {}})
            out.writestr(info.filename, data)
    with pytest.raises(CheckpointError, match="refused: it asks for (posix|os).system, which is not on the allow-list"):
        scan_checkpoint(evil)
    assert not (tmp_path / "pwned").exists() and not os.path.exists("pwned")


def test_a_foreign_file_is_refused(tmp_path):
    torch.save({"model": {}}, tmp_path / "plain.pt")
    with pytest.raises(CheckpointError, match="not a tarocchi-rl PPO checkpoint"):
        scan_checkpoint(tmp_path / "plain.pt")
    (tmp_path / "text.pt").write_text("hello")
    assert scan_checkpoint(tmp_path / "text.pt") is None  # not a zip: left to torch.load, which says what it is


def test_a_ppo_spec_is_refused_before_torch_is_imported(tmp_path):
    cfg, net = make_checkpoint(tmp_path / "ok.pt")
    config = cfg.to_dict()
    config["network"]["hidden"] = [4096] * 3
    save_checkpoint(tmp_path / "wide.pt", {"config": config, "model": net.state_dict()})
    code = ("import sys\nfrom tarocchi_rl.agents.specs import make_agent\n"
            f"try:\n    make_agent('ppo:{tmp_path / 'wide.pt'}')\nexcept ValueError as e:\n    print(e)\n"
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout
    assert out.splitlines()[-1] == "False" and "its config is invalid" in out
