"""An exported bot carries only the policy and its seat-view value head: its only inputs are the seat's observation
(of the variant's obs_dim) and the mask, whatever critic trained it; a ``critic: perfect`` run exports."""

import json

import numpy as np
import onnx
import torch

from tarocchi_rl.rl.checkpoint import load_checkpoint
from tarocchi_rl.rl.config import load_config
from tarocchi_rl.rl.export import export_policy
from tarocchi_rl.rl.network import PolicyValueNet, privileged_dim
from tarocchi_rl.variants import get_variant

TINY = [
    "num_envs=8", "rollout_steps=6", "num_workers=0", "async_rollouts=false", "torch_threads=1",
    "network.hidden=[32]", "ppo.minibatch_size=64", "ppo.epochs=1", "eval.every=0", "eval.final_deals=0",
    "max_minutes=0", "max_updates=1", "critic=perfect",
]


def _inputs(model: onnx.ModelProto) -> dict[str, list]:
    """The graph's real inputs (not its initializers) and their shapes (a name for a symbolic axis)."""
    weights = {w.name for w in model.graph.initializer}
    return {i.name: [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim]
            for i in model.graph.input if i.name not in weights}


def test_the_exported_model_reads_only_the_seat_observation_and_the_mask(bot):
    spec = get_variant("mineo")
    model = onnx.load(bot / "policy.onnx")
    inputs = _inputs(model)
    assert list(inputs) == ["obs", "mask"]
    assert inputs["obs"][1] == spec.obs_dim and inputs["mask"][1] == spec.n_actions
    assert [o.name for o in model.graph.output] == ["probs", "value"]


def test_a_perfect_critic_run_exports_without_its_critic(tmp_path):
    from tarocchi_rl.rl.trainer import train

    train(load_config(None, TINY), tmp_path / "run", progress=False)
    data = load_checkpoint(tmp_path / "run")
    assert "critic" in data  # the run has one ...
    manifest = export_policy(tmp_path / "run", tmp_path / "bot", eval_deals=2, golden=16)
    model = onnx.load(tmp_path / "bot" / "policy.onnx")
    spec = get_variant("mineo")
    inputs = _inputs(model)
    assert list(inputs) == ["obs", "mask"] and inputs["obs"][1] == spec.obs_dim  # ... the bot reads no hidden card
    # ... and carries none of its weights: exactly the policy network's, no layer as wide as the critic's input
    shapes = sorted(tuple(w.dims) for w in model.graph.initializer if len(w.dims) == 2)
    net = PolicyValueNet(spec.obs_dim, spec.n_actions, (32,))
    assert shapes == sorted(tuple(p.shape) for p in net.parameters() if p.dim() == 2)
    wide = spec.obs_dim + privileged_dim(spec)
    assert not any(wide in w.dims for w in model.graph.initializer)
    n_weights = sum(int(np.prod(w.dims)) for w in model.graph.initializer)
    assert n_weights >= sum(p.numel() for p in net.parameters())
    assert n_weights < sum(p.numel() for p in net.parameters()) + sum(t.numel() for t in data["critic"].values())
    # the exported value is the policy network's own seat-view value head
    golden = [json.loads(line) for line in (tmp_path / "bot" / "golden.jsonl").read_text().splitlines()]
    net.load_state_dict(data["model"])
    with torch.no_grad():
        mask = torch.tensor([g["mask"] for g in golden], dtype=torch.bool)
        _, value = net(torch.tensor([g["obs"] for g in golden]), mask)
    np.testing.assert_allclose([g["value"] for g in golden], value.numpy(), atol=1e-5)
    assert manifest["provenance"]["config"]["critic"] == "perfect"  # how it was trained is on record
    assert [i["name"] for i in manifest["inputs"]] == ["obs", "mask"]
