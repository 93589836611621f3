"""Every config shipped in configs/ loads and validates (an unknown key or a bad value would be an error naming
it), and one that starts from a shipped bot finds it."""

import dataclasses
from pathlib import Path

import pytest

from tarocchi_rl.expert.config import load_expert_config
from tarocchi_rl.rl.config import load_config
from tarocchi_rl.rl.network import build_network
from tarocchi_rl.rl.trainer import load_initial_weights
from tarocchi_rl.variants import get_variant

CONFIGS = sorted((Path(__file__).resolve().parents[2] / "configs").glob("*.yaml"))


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_every_shipped_config_loads(path):
    if path.stem.startswith("challenges_"):  # duplicate challenges for serve --challenges (tests/web: what they hold)
        from tarocchi_rl.web.challenge_defs import load_challenges

        assert load_challenges(str(path))
        return
    if path.stem.startswith("expert_"):  # expert iteration's own schema; its network described as PPO's
        expert = load_expert_config(path)
        cfg = dataclasses.replace(expert.train_config(), init=expert.init)
    else:
        cfg = load_config(path)
    assert path.stem.rsplit("_", 1)[1] == cfg.variant  # KIND_VARIANT.yaml
    if cfg.init is not None and cfg.init.startswith("bot:"):
        spec = get_variant(cfg.variant)
        net = build_network(cfg, spec.obs_dim, spec.n_actions)
        load_initial_weights(net, cfg)  # the shipped bot fits the config's network


def test_a_shipped_bot_that_does_not_exist_is_one_line():
    from tarocchi_rl.rl.checkpoint import CheckpointError

    cfg = load_config(None, ["init=bot:nonesuch", "network.hidden=[256, 256]"])
    spec = get_variant(cfg.variant)
    with pytest.raises(CheckpointError, match="init: no shipped bot 'nonesuch'"):
        load_initial_weights(build_network(cfg, spec.obs_dim, spec.n_actions), cfg)
