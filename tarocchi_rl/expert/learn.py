"""Learning from the search: the replay buffer and the loss, a pure function of the network and a minibatch.

For a minibatch of shard rows (:mod:`tarocchi_rl.expert.shards`), with ``z = (1 - w) * outcome + w * search_value``
(``w`` = ``learn.search_value_weight``)::

    loss = cross_entropy(policy target, softmax(masked logits))            the search's visits ^ (1 / tau)
         + value_coef * 0.5 * (V(obs) - z)^2                               the deal's outcome and the search's value
         + ppo_coef * -min(r * adv, clip(r, 1 +- ppo_clip) * adv)          optional: r = pi(move) / behaviour(move),
                                                                           adv = outcome - V(obs) (detached)
         + belief_loss * belief cross-entropy                              with a belief head: unseen cards' places

The cross-entropy is reported with the target's entropy subtracted (the KL divergence, 0 when the network plays
the search's distribution).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from ..rl.losses import belief_loss as belief_cross_entropy
from .config import LearnConfig
from .shards import FIELDS, Shard


class ReplayBuffer:
    """The newest ``capacity`` samples over rounds (whole shards; the oldest dropped first, a shard cut to fit)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = int(capacity)
        self.shards: list[Shard] = []

    def add(self, shard: Shard) -> None:
        self.shards.append(shard)
        total = sum(len(s) for s in self.shards)
        while total > self.capacity and self.shards:
            excess = total - self.capacity
            first = self.shards[0]
            if len(first) <= excess:
                self.shards.pop(0)
                total -= len(first)
            else:
                self.shards[0] = Shard({k: v[excess:] for k, v in first.arrays.items()})
                total -= excess

    def __len__(self) -> int:
        return sum(len(s) for s in self.shards)

    def arrays(self) -> dict[str, NDArray[Any]]:
        """Every kept sample, the oldest first (one array per field)."""
        return Shard.concatenate(self.shards).arrays if self.shards else {}


def to_tensors(arrays: dict[str, NDArray[Any]], idx: NDArray[np.int64],
               device: torch.device) -> dict[str, torch.Tensor]:
    """Rows ``idx`` of the shard fields as tensors on ``device`` (integers as int64, the belief targets too)."""
    out = {}
    for k in FIELDS:
        a = arrays[k][idx]
        t = torch.from_numpy(np.ascontiguousarray(a))
        if a.dtype.kind in "iu":
            t = t.long()
        out[k] = t.to(device)
    return out


def sharpened(policy: torch.Tensor, tau: float) -> torch.Tensor:
    """Rows of ``policy`` float[B, A] raised to 1/tau and normalised (tau 1: unchanged; 0: one-hot on the argmax)."""
    if tau == 1.0:
        return policy
    if tau == 0.0:
        return torch.nn.functional.one_hot(policy.argmax(dim=1), policy.shape[1]).to(policy.dtype)
    top = policy.double().amax(dim=1, keepdim=True)
    p = torch.pow(policy.double() / top, 1.0 / tau)  # relative to the row's largest: the largest stays 1
    return (p / p.sum(dim=1, keepdim=True)).to(policy.dtype)


def expert_loss(net: torch.nn.Module, batch: dict[str, torch.Tensor], learn: LearnConfig,
                belief_weight: float = 0.0) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """The module docstring's loss of one minibatch; returns (loss, its parts, detached)."""
    with_beliefs = belief_weight > 0 and batch["belief"].shape[1] > 0
    logits, value, belief_logits = net.forward_all(batch["obs"], batch["mask"], with_beliefs=with_beliefs)
    logp = torch.log_softmax(logits, dim=1)
    target = sharpened(batch["policy"], learn.target_temperature)
    safe_logp = torch.where(target > 0, logp, torch.zeros_like(logp))
    ce = -(target * safe_logp).sum(dim=1).mean()
    target_entropy = -(target * torch.log(torch.where(target > 0, target, torch.ones_like(target)))).sum(dim=1).mean()
    w = learn.search_value_weight
    z = (1 - w) * batch["outcome"] + w * batch["search_value"]
    value_loss = 0.5 * (value - z).pow(2).mean()
    loss = ce + learn.value_coef * value_loss
    parts = {"kl": (ce - target_entropy).detach(), "value_loss": value_loss.detach()}
    if learn.ppo_coef > 0:
        adv = batch["outcome"] - value.detach()
        ratio = torch.exp(logp.gather(1, batch["action"].unsqueeze(1)).squeeze(1) - torch.log(batch["behaviour"]))
        clipped = torch.clamp(ratio, 1 - learn.ppo_clip, 1 + learn.ppo_clip)
        pg = -torch.minimum(ratio * adv, clipped * adv).mean()
        loss = loss + learn.ppo_coef * pg
        parts["pg_loss"] = pg.detach()
    if with_beliefs and belief_logits is not None:
        b = belief_cross_entropy(belief_logits, batch["belief"])
        loss = loss + belief_weight * b
        parts["belief"] = b.detach()
    return loss, parts


def train_round(net: torch.nn.Module, opt: torch.optim.Optimizer, arrays: dict[str, NDArray[Any]],
                learn: LearnConfig, gen: torch.Generator, device: torch.device,
                belief_weight: float = 0.0) -> dict[str, float]:
    """``learn.epochs`` passes over ``arrays`` in shuffled minibatches; the mean of each loss part over the last
    pass (a ValueError on a non-finite loss, before the step that would spread it)."""
    net.train()
    n = len(arrays["outcome"])
    sums: dict[str, float] = {}
    for _ in range(learn.epochs):
        sums = {}
        perm = torch.randperm(n, generator=gen).numpy()
        for start in range(0, n, learn.minibatch_size):
            idx = perm[start:start + learn.minibatch_size]
            loss, parts = expert_loss(net, to_tensors(arrays, idx, device), learn, belief_weight)
            if not torch.isfinite(loss):
                raise ValueError(f"expert: a non-finite loss ({loss.item()}) while training")
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), learn.max_grad_norm)
            opt.step()
            for k, v in parts.items():
                sums[k] = sums.get(k, 0.0) + float(v) * len(idx)
    net.eval()
    return {k: v / max(n, 1) for k, v in sums.items()}
