"""The policy/value network shared by every seat: an MLP trunk, a policy head and a value head.

Inputs are the core's observations (float32[B, obs_dim], the variant's table in ``docs/observations.md``);
they already carry the seat, the roles (declarer, partner, contract) and the phase, so one network serves
every seat and every decision (bids, discards, commitments, card play).

Illegal actions get the logit ``MASKED_LOGIT`` (a large finite negative: ``-inf`` makes NaNs in the entropy
and in gradients when a whole row is masked).
"""

from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import torch
from torch import nn

from ..variants import get_variant
from .checkpoint import CheckpointError, load_checkpoint
from .config import ConfigError, TrainConfig, config_from_dict

MASKED_LOGIT = -1e9


class PolicyValueNet(nn.Module):
    """obs float32[B, obs_dim] -> (logits float32[B, n_actions], value float32[B])."""

    def __init__(self, obs_dim: int, n_actions: int, hidden: Sequence[int] = (256, 256),
                 activation: str = "relu") -> None:
        super().__init__()
        act = {"relu": nn.ReLU, "tanh": nn.Tanh}[activation]
        layers: list[Any] = []
        width = obs_dim
        for h in hidden:
            layers += [nn.Linear(width, h), act()]
            width = h
        self.trunk = nn.Sequential(*layers)
        self.policy = nn.Linear(width, n_actions)
        self.value = nn.Linear(width, 1)
        # CleanRL's initialisation: orthogonal, small policy head (near-uniform start), unit value head
        for m in self.trunk:
            if isinstance(m, nn.Linear):
                nn.init.orthogonal_(m.weight, 2**0.5)
                nn.init.zeros_(m.bias)
        nn.init.orthogonal_(self.policy.weight, 0.01)
        nn.init.zeros_(self.policy.bias)
        nn.init.orthogonal_(self.value.weight, 1.0)
        nn.init.zeros_(self.value.bias)
        self.obs_dim, self.n_actions = obs_dim, n_actions

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """obs float32[B, obs_dim], mask bool[B, n_actions] -> masked logits [B, n_actions], value [B]."""
        z = self.trunk(obs)
        logits = torch.where(mask, self.policy(z), torch.tensor(MASKED_LOGIT, dtype=obs.dtype))
        return logits, self.value(z).squeeze(-1)


def build_network(cfg: TrainConfig, obs_dim: int, n_actions: int) -> PolicyValueNet:
    """The network a TrainConfig describes."""
    return PolicyValueNet(obs_dim, n_actions, tuple(cfg.network.hidden), cfg.network.activation)


class LoadedNetwork(NamedTuple):
    """A checkpoint's network (in eval mode), its validated config and the checkpoint's data (``load_checkpoint``)."""
    net: PolicyValueNet
    cfg: TrainConfig
    data: dict[str, Any]


def load_network(checkpoint: str | Path | dict[str, Any], variant: str | None = None) -> LoadedNetwork:
    """The network of ``checkpoint`` (a file, a run directory or already loaded data) as its config describes it.

    A :class:`CheckpointError` (one line) when the file is missing or damaged, its config invalid, it was trained on
    another variant than ``variant`` (when given), or its weights do not fit the network of its config."""
    data = checkpoint if isinstance(checkpoint, dict) else load_checkpoint(checkpoint)
    try:
        cfg = config_from_dict(data["config"])
    except ConfigError as e:
        raise CheckpointError(f"checkpoint {data['path']}: its config is invalid: {e}") from None
    if variant is not None and cfg.variant != variant:
        raise CheckpointError(f"checkpoint {data['path']} was trained on {cfg.variant}, not {variant}")
    spec = get_variant(cfg.variant)
    net = build_network(cfg, spec.obs_dim, spec.n_actions)
    try:
        net.load_state_dict(data["model"])
    except (RuntimeError, KeyError, TypeError) as e:
        raise CheckpointError(f"checkpoint {data['path']}: the weights do not fit its network {cfg.network.hidden} "
                              f"({' '.join(str(e).split())[:200]})") from None
    return LoadedNetwork(net.eval(), cfg, data)
