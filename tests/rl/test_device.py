"""The learner's device (``device: auto | cpu | cuda``, ``bf16``): resolution, the one-line error for a missing GPU,
an update on the CPU, weights sent to the workers as CPU copies; a CUDA run where there is a GPU."""

import pytest
import torch

from tarocchi_rl.rl.checkpoint import load_checkpoint
from tarocchi_rl.rl.config import ConfigError, load_config
from tarocchi_rl.rl.network import resolve_device

TINY = [
    "num_envs=8", "rollout_steps=6", "num_workers=0", "async_rollouts=false", "torch_threads=1",
    "network.hidden=[32]", "ppo.minibatch_size=64", "ppo.epochs=2", "league.snapshot_every=1",
    "league.pool_size=2", "eval.every=0", "eval.final_deals=0", "max_minutes=0",
]
no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA GPU")
cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU here")


def _cfg(*extra):
    return load_config(None, [*TINY, *extra])


def test_device_config_values():
    assert load_config(None, []).device == "auto" and load_config(None, []).bf16 is False
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto") == torch.device("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ConfigError, match="device: must be one of auto, cpu, cuda, got 'tpu'"):
        load_config(None, ["device=tpu"])


@no_cuda
def test_cuda_without_a_gpu_is_a_one_line_config_error(tmp_path, capsys):
    from tarocchi_rl.cli import main
    from tarocchi_rl.rl.trainer import train

    with pytest.raises(ConfigError, match="device: cuda asked for, but torch .* sees no CUDA GPU"):
        resolve_device("cuda")
    with pytest.raises(ConfigError, match="device: cuda"):
        train(_cfg("device=cuda"), tmp_path / "x", progress=False)
    assert not (tmp_path / "x").exists()  # nothing written
    assert main(["train", "--set", "device=cuda", "--set", "num_workers=0", "--out", str(tmp_path / "y")]) == 2
    assert not (tmp_path / "y").exists()
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: device: cuda asked for") and not any("Traceback" in line for line in err)


def test_the_update_runs_on_the_cpu_and_the_workers_get_cpu_copies(tmp_path):
    from tarocchi_rl.rl.trainer import Trainer

    t = Trainer(_cfg("device=cpu", "bf16=true", "critic=perfect", "max_updates=2"), tmp_path / "run",
                progress=False)
    assert t.device == torch.device("cpu") and t.bf16 is False  # bf16 is for CUDA only
    sent: list[dict] = []
    sample = t.workers.sample

    def spy(weights, league, version):
        sent.append(weights)
        return sample(weights, league, version)

    t.workers.sample = spy
    before = {k: v.clone() for k, v in t.net.state_dict().items()}
    r = t.run()
    assert r["updates"] == 2 and len(sent) == 2
    live = {v.data_ptr() for v in t.net.state_dict().values()}
    for weights in sent:
        assert all(v.device.type == "cpu" for v in weights.values())
        assert not live & {v.data_ptr() for v in weights.values()}  # copies, not the learner's tensors
    assert not all(torch.equal(before[k], v) for k, v in t.net.state_dict().items())  # it learned
    data = load_checkpoint(tmp_path / "run")
    assert all(v.device.type == "cpu" for part in ("model", "critic") for v in data[part].values())


def test_a_resumed_run_may_move_to_another_device(tmp_path):
    from tarocchi_rl.rl.trainer import resume, train

    train(_cfg("max_updates=1", "device=auto"), tmp_path / "r", progress=False)
    r = resume(tmp_path / "r", {"max_updates": "2", "device": "cpu"}, progress=False)
    assert r["updates"] == 2 and load_checkpoint(tmp_path / "r")["config"]["device"] == "cpu"


@cuda
def test_a_cuda_run_with_bf16_trains_and_resumes_on_the_cpu(tmp_path):
    from tarocchi_rl.rl.trainer import resume, train

    r = train(_cfg("device=cuda", "bf16=true", "critic=perfect", "max_updates=2", "imitation.decisions=200"),
              tmp_path / "g", progress=False)
    assert r["updates"] == 2
    data = load_checkpoint(tmp_path / "g")
    assert all(v.device.type == "cpu" for v in data["model"].values())
    assert resume(tmp_path / "g", {"max_updates": "3", "device": "cpu"}, progress=False)["updates"] == 3
