"""``init: onnx:DIR``: a training run starts from an exported bot's weights (read from its ONNX initializers, no
pickle), checked against the config's variant and network; ``ppo.policy_warmup`` keeps the policy fixed while the
value head and the critic learn."""

import numpy as np
import pytest
import torch

from tarocchi_rl.batch import BatchEnv
from tarocchi_rl.policies.onnx_policy import OnnxAgent
from tarocchi_rl.rl.checkpoint import CheckpointError, load_checkpoint
from tarocchi_rl.rl.config import load_config
from tarocchi_rl.rl.network import build_network
from tarocchi_rl.rl.trainer import load_initial_weights
from tarocchi_rl.shipped import shipped_bot
from tarocchi_rl.variants import get_variant
from tests.support.checkpoints import TINY_RUN

SHIPPED = [*TINY_RUN, "network.hidden=[256, 256]"]


def _net(cfg):
    spec = get_variant(cfg.variant)
    return build_network(cfg, spec.obs_dim, spec.n_actions)


def test_the_network_plays_as_the_bot_it_starts_from():
    bot = shipped_bot("mineo")
    cfg = load_config(None, [*SHIPPED, f"init=onnx:{bot}", "belief_loss=1.0"])
    net = _net(cfg)
    load_initial_weights(net, cfg)
    env = BatchEnv("mineo", 16, seed=3)
    obs, mask = env.observe(), env.legal_mask()
    with torch.no_grad():
        probs = torch.softmax(net(torch.from_numpy(obs), torch.from_numpy(mask))[0], -1).numpy()
    want = OnnxAgent(str(bot)).probabilities(obs, mask)
    np.testing.assert_allclose(probs, want, atol=1e-5)  # float32 kernels differ in the last bits


@pytest.mark.parametrize("changes, message", [
    (["variant=french3"], "variant is 'mineo'"),
    (["network.hidden=[128]"], "'hidden': \\[256, 256\\]"),
])
def test_a_bot_that_does_not_fit_the_config_is_refused(changes, message):
    cfg = load_config(None, [*SHIPPED, f"init=onnx:{shipped_bot('mineo')}", *changes])
    with pytest.raises(CheckpointError, match=message):
        load_initial_weights(_net(cfg), cfg)


def test_a_missing_bot_is_one_line(tmp_path):
    cfg = load_config(None, [*SHIPPED, f"init=onnx:{tmp_path / 'none'}"])
    with pytest.raises(CheckpointError, match="init: bot directory .* not found"):
        load_initial_weights(_net(cfg), cfg)


def test_the_policy_warmup_trains_the_critic_and_not_the_policy(tmp_path):
    from tarocchi_rl.rl.trainer import train

    bot = shipped_bot("mineo")
    cfg = load_config(None, [*SHIPPED, f"init=onnx:{bot}", "critic=perfect", "belief_loss=1.0",
                             "ppo.policy_warmup=2", "max_updates=2", "imitation.decisions=0"])
    start = _net(cfg)
    load_initial_weights(start, cfg)
    train(cfg, tmp_path / "run", progress=False)
    data = load_checkpoint(tmp_path / "run")
    before = start.state_dict()
    for key, weights in data["model"].items():  # the trunk too: the value and belief losses do not move it
        moves = key.startswith(("value.", "belief."))
        assert torch.equal(weights, before[key]) != moves, key
    assert data["critic"] is not None
