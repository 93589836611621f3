"""Checkpoints load safely (``torch.load(weights_only=True)`` and an allow-list of numpy array globals): a crafted
pickle that would run code is refused with CheckpointError and runs nothing; real checkpoints still load."""

import builtins
import os
import pickle

import numpy as np
import pytest
import torch

from tarocchi_rl.agents.specs import make_agent
from tarocchi_rl.cli import main
from tarocchi_rl.rl.checkpoint import CheckpointError, load_checkpoint, save_checkpoint


class _Exec:
    """Unpickling this calls exec(code): the classic malicious pickle."""

    def __init__(self, code):
        self.code = code

    def __reduce__(self):
        return (builtins.exec, (self.code,))


class _System:
    def __init__(self, command):
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


def _touch_code(marker):
    return f"open({str(marker)!r}, 'w').close()"


@pytest.mark.parametrize("how", ["zip", "legacy", "pickle2"])
def test_a_malicious_checkpoint_is_refused_and_runs_nothing(tmp_path, how, capsys):
    marker = tmp_path / "pwned"
    ck = tmp_path / "checkpoints" / "final.pt"
    ck.parent.mkdir()
    payload = {"format": "tarocchi-rl-ppo/1", "config": _Exec(_touch_code(marker)), "model": {}}
    if how == "zip":
        torch.save(payload, ck)
    elif how == "legacy":
        torch.save(payload, ck, _use_new_zipfile_serialization=False)
    else:
        with open(ck, "wb") as f:
            pickle.dump(payload, f, protocol=2)
    with pytest.raises(CheckpointError, match=r"refused: it asks for (builtins\.)?exec,") as e:
        load_checkpoint(ck)
    assert "\n" not in str(e.value)
    assert not marker.exists()
    for path in (ck, tmp_path):  # the file or its run directory, through every entry point
        with pytest.raises(ValueError, match="refused"):
            make_agent(f"ppo:{path}")
        assert main(["export", "--agent", f"ppo:{path}", "--out", str(tmp_path / "bot")]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and "refused" in err and err.count("\n") == 1
        assert main(["train", "--resume", str(tmp_path)]) == 2
        assert "refused" in capsys.readouterr().err
    assert not marker.exists() and not (tmp_path / "bot").exists()
    if how != "pickle2":  # the file really is an exploit: an unsafe load runs it
        torch.load(ck, weights_only=False)
        assert marker.exists()


def test_other_globals_are_refused_too(tmp_path):
    marker = tmp_path / "pwned"
    ck = tmp_path / "a.pt"
    torch.save({"format": "tarocchi-rl-ppo/1", "config": {}, "model": _System(f"touch {marker}")}, ck)
    with pytest.raises(CheckpointError, match=r"refused: it asks for (posix|nt)\.system"):
        load_checkpoint(ck)
    assert not marker.exists()
    with open(ck, "wb") as f:  # a modern pickle: the safe loader does not read its opcodes at all
        pickle.dump({"format": "tarocchi-rl-ppo/1", "config": _Exec(_touch_code(marker))}, f, protocol=4)
    with pytest.raises(CheckpointError, match="corrupt or not a PyTorch file"):
        load_checkpoint(ck)
    assert not marker.exists()


def test_checkpoints_with_numpy_states_load_exactly(tmp_path):
    rng = np.random.default_rng(1)
    workers = [{"env_rng": rng.integers(0, 2**63, 8, dtype=np.uint64) * np.uint64(2), "np_rng": rng.bit_generator.state,
                "torch_gen": torch.Generator().manual_seed(3).get_state()}]
    extra = {"f32": np.linspace(0, 1, 5, dtype=np.float32), "i8": np.arange(6).reshape(2, 3), "b": np.ones(3, bool)}
    save_checkpoint(tmp_path / "c.pt", {"config": {"variant": "mineo"}, "model": {"w": torch.ones(2)},
                                        "workers": workers, "extra": extra})
    data = load_checkpoint(tmp_path / "c.pt")
    got = data["workers"][0]
    assert got["env_rng"].dtype == np.uint64 and (got["env_rng"] == workers[0]["env_rng"]).all()
    assert got["np_rng"] == workers[0]["np_rng"]  # 128-bit PCG64 state as Python ints
    assert torch.equal(got["torch_gen"], workers[0]["torch_gen"])
    for k, v in extra.items():
        assert data["extra"][k].dtype == v.dtype and (data["extra"][k] == v).all()


def test_a_training_checkpoint_loads_safely_and_exports(tmp_path):
    from tarocchi_rl.rl.config import load_config
    from tarocchi_rl.rl.export import export_policy
    from tarocchi_rl.rl.trainer import train

    cfg = load_config(None, ["variant=piedmont3", "num_envs=8", "rollout_steps=6", "num_workers=0",
                             "async_rollouts=false", "network.hidden=[16]", "ppo.minibatch_size=64", "ppo.epochs=1",
                             "eval.every=0", "eval.final_deals=0", "max_minutes=0", "max_updates=1"])
    train(cfg, tmp_path / "run", progress=False)
    data = load_checkpoint(tmp_path / "run")
    assert data["workers"][0]["env_rng"].dtype == np.uint64 and data["update"] == 1
    m = export_policy(tmp_path / "run", tmp_path / "bot", eval_deals=0, golden=32)
    assert m["variant"] == "piedmont3" and m["provenance"]["update"] == 1 and m["golden"]["positions"] == 32
    assert m["verification"]["max_abs_prob_diff"] <= 1e-5
