"""GAE over each seat's decision chain and the clipped PPO objective.

A seat's decisions in one deal form a chain: ``next_idx[k]`` is the sample index of the same seat's next
decision in the same deal (-1 after the last). Rewards come only at the end of a deal (``reward[k]`` is the
seat's scaled payoff on its last decision, ``done[k] = True``; 0 elsewhere), so GAE runs along the chains::

    delta_k = r_k + gamma * V(next_k) * (1 - done_k) - V_k
    A_k     = delta_k + gamma * lambda * (1 - done_k) * A_{next_k}
    R_k     = A_k + V_k                       (the value target)

Every chain ends in a done sample: rollouts play their deals to the end, so nothing is bootstrapped.
"""

import numpy as np
import torch
from numba import njit


@njit(cache=True)
def gae(reward: np.ndarray, done: np.ndarray, value: np.ndarray, next_idx: np.ndarray, gamma: float,
        lam: float) -> np.ndarray:
    """Advantages float32[N] for samples in time order (``next_idx[k] > k`` or -1).

    reward float32[N], done bool[N], value float32[N], next_idx int64[N].
    """
    n = reward.shape[0]
    adv = np.zeros(n, np.float32)
    for k in range(n - 1, -1, -1):
        if done[k]:
            adv[k] = reward[k] - value[k]
        else:
            j = next_idx[k]
            if j < 0:  # a chain cut short: never produced by the rollouts (they finish every deal)
                raise ValueError("gae: a chain ends without a done sample")
            adv[k] = reward[k] + gamma * value[j] - value[k] + gamma * lam * adv[j]
    return adv


def ppo_loss(logits: torch.Tensor, values: torch.Tensor, actions: torch.Tensor, old_logp: torch.Tensor,
             advantages: torch.Tensor, returns: torch.Tensor, clip: float, value_coef: float, entropy_coef: float,
             normalize_advantages: bool = True, policy_weight: float = 1.0) -> tuple[torch.Tensor, dict]:
    """The clipped PPO objective on one minibatch (CleanRL's ppo.py, without value clipping).

    logits float[M, A] (already masked), values float[M], actions int64[M], old_logp float[M],
    advantages float[M], returns float[M]; ``policy_weight`` scales the policy and entropy terms (0: only the value
    head learns, as in ``ppo.policy_warmup``). Returns (loss, stats dict of floats: policy_loss, value_loss,
    entropy, approx_kl, clip_fraction).
    """
    logp_all = torch.log_softmax(logits, dim=-1)
    logp = logp_all.gather(1, actions[:, None]).squeeze(1)
    log_ratio = logp - old_logp
    ratio = log_ratio.exp()
    adv = advantages
    if normalize_advantages and adv.numel() > 1:
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    pg1 = -adv * ratio
    pg2 = -adv * torch.clamp(ratio, 1 - clip, 1 + clip)
    policy_loss = torch.max(pg1, pg2).mean()
    value_loss = 0.5 * (values - returns).pow(2).mean()
    probs = logp_all.exp()
    entropy = -(probs * logp_all).sum(-1).mean()  # masked actions: p = 0 exactly, finite log p: no NaN
    loss = policy_weight * (policy_loss - entropy_coef * entropy) + value_coef * value_loss
    with torch.no_grad():
        approx_kl = ((ratio - 1) - log_ratio).mean()  # the low-variance k3 estimator
        clip_fraction = ((ratio - 1).abs() > clip).float().mean()
    stats = {
        "policy_loss": policy_loss.item(), "value_loss": value_loss.item(), "entropy": entropy.item(),
        "approx_kl": float(approx_kl), "clip_fraction": float(clip_fraction),
    }
    return loss, stats


def explained_variance(pred: np.ndarray, target: np.ndarray) -> float:
    """1 - Var[target - pred] / Var[target] (nan when the target is constant)."""
    var = np.var(target)
    return float("nan") if var == 0 else float(1 - np.var(target - pred) / var)


def belief_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """The belief head's cross-entropy: logits float[M, C, L], targets int64[M, C] (each card's true location, -1
    for the cards left out: those the seat can see, or played). The mean over the cards kept (0 when none is)."""
    keep = targets >= 0
    logp = torch.log_softmax(logits.float(), dim=-1)
    picked = logp.gather(2, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    return -(picked * keep).sum() / keep.sum().clamp(min=1)
