"""One PPO update, as a function of what it trains and the rollout it trains on (CleanRL's update loop, read top to
bottom)::

    lr set on every optimiser
    for epoch in 1..ppo.epochs:
        for each shuffled minibatch (ppo.minibatch_size rows):
            ppo_loss (+ the critic's value loss, + belief_coef x the belief head's cross-entropy)
            a non-finite loss stops the update (NonFiniteError) before any step
            backward -> clip the network's gradients (the critic's apart) -> Adam step(s)
        stop early when the epoch's mean approx_kl is above ppo.target_kl (when set)

The rollout arrives as arrays (:data:`TRAIN_KEYS`, N rows, and :data:`BELIEF_TARGET` when the network has a belief
head); the advantages and value targets are already computed (GAE, or the perfect critic's: the trainer's job).
The function changes the networks and optimisers in :class:`Learner` and returns the averaged statistics.
"""

import contextlib
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .config import PPOConfig
from .losses import belief_loss, ppo_loss

TRAIN_KEYS = ("obs", "mask", "action", "logp", "value", "advantage", "ret", "hidden")
"""The arrays of a rollout an update reads (float32 obs[N, D], bool mask[N, A], int64 action[N], float32 logp, value,
advantage, ret [N], float32 hidden[N, H]: the privileged observation, for the perfect critic and the beliefs)."""
BELIEF_TARGET = "belief_target"  # int64[N, C]: each unseen card's location (belief_loss > 0), -1 for the others


class NonFiniteError(ValueError):
    """A loss or the weights became non-finite: training stops before a checkpoint of such weights is written."""


@dataclass
class Learner:
    """What an update trains: the policy network, the perfect-information critic (or None), their optimisers, the
    device they live on, whether forward passes run under bf16 autocast (CUDA only) and the generator of the
    minibatch order."""

    net: Any  # PolicyNet (rl/network.py)
    critic: torch.nn.Module | None
    optimizers: list[torch.optim.Optimizer]
    device: torch.device
    bf16: bool
    gen: torch.Generator

    def autocast(self) -> Any:
        """bf16 autocast of the forward passes (``bf16`` on CUDA), else nothing."""
        return torch.autocast("cuda", dtype=torch.bfloat16) if self.bf16 else contextlib.nullcontext()

    def to_device(self, data: dict[str, np.ndarray]) -> dict[str, torch.Tensor]:
        """The arrays of :data:`TRAIN_KEYS` (and :data:`BELIEF_TARGET` when present) as tensors on the device
        (through pinned memory to a GPU)."""
        tensors = {k: torch.from_numpy(data[k]) for k in (*TRAIN_KEYS, BELIEF_TARGET) if k in data}
        if self.device.type == "cpu":
            return tensors
        return {k: t.pin_memory().to(self.device, non_blocking=True) for k, t in tensors.items()}


def ppo_update(learner: Learner, data: dict[str, np.ndarray], ppo: PPOConfig, lr: float, belief_coef: float = 0.0,
               warmup: bool = False, update: int = 0) -> dict[str, float]:
    """One PPO update on the rollout ``data`` (N > 0 rows; module docstring); returns each statistic of
    :func:`minibatch_step` averaged over the minibatches done. ``warmup``: the trunk and the policy stay fixed, only
    the heads and the critic learn (``ppo.policy_warmup``); ``update``: the update's index, for error messages."""
    n = len(data["action"])
    tensors = learner.to_device(data)
    for opt in learner.optimizers:
        for g in opt.param_groups:
            g["lr"] = lr
    sums: dict[str, float] = {}
    count = 0
    for _ in range(ppo.epochs):
        kls: list[float] = []
        for idx in torch.randperm(n, generator=learner.gen).split(ppo.minibatch_size):
            idx = idx.to(learner.device)
            st = minibatch_step(learner, {k: t[idx] for k, t in tensors.items()}, ppo, lr, belief_coef, warmup,
                                update)
            for k, v in st.items():
                sums[k] = sums.get(k, 0.0) + v
            count += 1
            kls.append(st["approx_kl"])
        if ppo.target_kl and np.mean(kls) > ppo.target_kl:
            break
    return {k: v / count for k, v in sums.items()}


def minibatch_step(learner: Learner, mb: dict[str, torch.Tensor], ppo: PPOConfig, lr: float, belief_coef: float,
                   warmup: bool, update: int) -> dict[str, float]:
    """One Adam step on a minibatch (tensors of :data:`TRAIN_KEYS`, M rows); returns its loss statistics
    (:func:`~tarocchi_rl.rl.losses.ppo_loss`'s, ``grad_norm``, and ``belief`` / ``critic_loss`` /
    ``critic_grad_norm`` when those parts learn). A non-finite loss raises :class:`NonFiniteError` before the
    step."""
    net, critic = learner.net, learner.critic
    with learner.autocast():
        logits, values, beliefs = net.forward_all(mb["obs"], mb["mask"], heads_only=warmup)
        critic_values = None if critic is None else critic(mb["obs"], mb["hidden"])
    loss, st = ppo_loss(logits.float(), values.float(), mb["action"], mb["logp"], mb["advantage"], mb["ret"],
                        ppo.clip, ppo.value_coef, ppo.entropy_coef, ppo.normalize_advantages,
                        policy_weight=0.0 if warmup else 1.0)
    if beliefs is not None:  # the belief head's auxiliary cross-entropy on the unseen cards
        b_loss = belief_loss(beliefs, mb[BELIEF_TARGET])
        loss = loss + belief_coef * b_loss
        st["belief"] = b_loss.item()
    if critic_values is not None:  # the critic's value loss, weighted as the policy network's
        critic_loss = 0.5 * (critic_values.float() - mb["ret"]).pow(2).mean()
        loss = loss + ppo.value_coef * critic_loss
        st["critic_loss"] = critic_loss.item()
    if not bool(torch.isfinite(loss)):
        parts = ", ".join(f"{k}={v:.4g}" for k, v in st.items() if isinstance(v, float) and not math.isfinite(v))
        raise NonFiniteError(f"non-finite loss at update {update + 1}: loss={float(loss.detach()):.4g}"
                             + (f" ({parts})" if parts else "") + f" (ppo.lr={lr:.4g}); "
                             "stopped before writing a checkpoint of these weights")
    for opt in learner.optimizers:
        opt.zero_grad(set_to_none=True)
    loss.backward()
    st["grad_norm"] = float(torch.nn.utils.clip_grad_norm_(net.parameters(), ppo.max_grad_norm))
    if critic is not None:  # clipped on its own: the critic's gradient never scales the policy's
        st["critic_grad_norm"] = float(torch.nn.utils.clip_grad_norm_(critic.parameters(), ppo.max_grad_norm))
    for opt in learner.optimizers:
        opt.step()
    return st
