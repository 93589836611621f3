"""Warm start: the network first imitates a teacher (the heuristic bot by default) or recorded games, then PPO
takes over.

With ``imitation.decisions > 0`` the trainer, before its first update, plays deals where the teacher
(``imitation.teacher``, any agent spec) holds every seat (batched core, ``num_envs`` games at a time), and
trains on each chunk of complete deals as it comes (``imitation.epochs`` passes, shuffled minibatches):

    loss = cross_entropy(masked logits, teacher action) + value_coef * 0.5 * (V(obs) - payoff / payoff_scale)^2

With ``imitation.records`` set, the chunks are instead the decisions recorded in those files (people's, by default:
:mod:`tarocchi_rl.rl.record_imitation`, at most ``imitation.decisions`` of them), the recorded action in place of
the teacher's and the recorded deal's payoff in place of the teacher's deal's; the teacher is not used.

so the policy starts near the teacher and the value head near the teacher's expected payoffs (a critic
that fits the first PPO rollouts); with ``critic: perfect`` the perfect-information critic is fitted to the same
payoffs from (observation, hidden cards) beside it, with its own optimizer. ``tarocchi-rl exploit`` makes its
target the teacher: the exploiter starts as a clone of what it is to exploit. Everything after that is PPO: the
bids, discards and commitments the final policy makes are its own, and they can (and do) move away from the
teacher's. ``decisions: 0`` trains from a random network (pure self-play RL).
"""

from collections.abc import Callable, Iterable, Iterator

import numpy as np
import torch

from .. import engine
from ..batch import BatchEnv
from ..core.phases import DONE
from ..core.state import PHASE
from ..policies import AgentLike
from .config import TrainConfig
from .network import CriticNet, PolicyValueNet


def teacher_chunks(teacher: AgentLike, variant: str, options: dict, num_envs: int, seed: int, payoff_scale: float,
                   total: int, privileged: bool = False) -> Iterator[dict]:
    """Yield dicts of complete deals of ``teacher`` in every seat until ``total`` decisions: obs float32[N, D],
    mask bool[N, A], action int64[N] (the teacher's), ret float32[N] (the deciding seat's payoff / payoff_scale)
    and, with ``privileged``, hidden float32[N, H] (the deciding seat's privileged observation)."""
    env = BatchEnv(variant, num_envs, seed=seed, **options)
    if getattr(teacher, "needs_history", False):
        env.keep_history()  # an external bot (cmd:) writes the seat's view from it
    done_total = 0
    first = True
    while done_total < total:
        if not first:
            env.reset()
        first = False
        obs_l, mask_l, act_l, game_l, seat_l, hidden_l = [], [], [], [], [], []
        while True:
            cur = env.current_player().astype(np.int64)
            live = np.nonzero(cur >= 0)[0]
            if len(live) == 0:
                break
            obs = env.observe()
            mask = env.legal_mask()
            if privileged:
                hidden_l.append(engine.observe_privileged(env.state, env.tables, cur)[live])
            actions = np.full(env.batch_size, -1, np.int64)
            actions[live] = teacher.act(obs[live], mask[live], env, live)
            obs_l.append(obs[live])
            mask_l.append(mask[live])
            act_l.append(actions[live])
            game_l.append(live)
            seat_l.append(cur[live])
            env.step(actions, check=False)
        assert (env.state.meta[:, PHASE] == DONE).all()
        if not act_l:
            continue
        payoffs = env.returns()
        games, seats = np.concatenate(game_l), np.concatenate(seat_l)
        chunk = {
            "obs": np.concatenate(obs_l), "mask": np.concatenate(mask_l), "action": np.concatenate(act_l),
            "ret": (payoffs[games, seats] / payoff_scale).astype(np.float32),
        }
        if privileged:
            chunk["hidden"] = np.concatenate(hidden_l)
        done_total += len(games)
        yield chunk


def teacher_source(cfg: TrainConfig, teacher: AgentLike, privileged: bool = False) -> Iterator[dict]:
    """The chunks of :func:`teacher_chunks` the warm start of ``cfg`` imitates (``imitation.decisions`` of the
    teacher's, from the run's seed)."""
    assert cfg.payoff_scale is not None  # resolved by TrainConfig.validate
    return teacher_chunks(teacher, cfg.variant, cfg.options, cfg.num_envs, cfg.seed + 7_777_777, cfg.payoff_scale,
                          cfg.imitation.decisions, privileged=privileged)


def imitate(net: PolicyValueNet, cfg: TrainConfig, chunks: Iterable[dict], gen: torch.Generator,
            log: Callable | None = None, progress: Callable | None = None, critic: CriticNet | None = None) -> dict:
    """Train ``net`` to imitate the actions of ``chunks`` (:func:`teacher_source`, or the records' chunks of
    :func:`tarocchi_rl.rl.record_imitation.record_chunks`; ``hidden`` in each when ``critic`` is given; module
    docstring), ``imitation.epochs`` passes over each chunk; returns final statistics (those of each chunk's last
    pass).

    gen: the learner's torch.Generator (minibatch shuffles); log(step, dict) receives per-chunk statistics.
    The chunks are trained on where ``net`` is (the learner's device). ``critic`` (critic: perfect) is fitted to
    the payoffs beside it (statistic ``critic_value_loss``).
    """
    im = cfg.imitation
    opt = torch.optim.Adam(net.parameters(), lr=im.lr, eps=1e-5)
    critic_opt = None if critic is None else torch.optim.Adam(critic.parameters(), lr=im.lr, eps=1e-5)
    seen = 0
    stats = {}
    device = next(net.parameters()).device
    for chunk in chunks:
        n = len(chunk["action"])
        obs, mask, act, ret = (torch.from_numpy(chunk[k]).to(device) for k in ("obs", "mask", "action", "ret"))
        hidden = torch.from_numpy(chunk["hidden"]).to(device) if critic is not None else None
        for _ in range(im.epochs):
            perm = torch.randperm(n, generator=gen).to(device)
            sums = _one_pass(net, opt, cfg, (obs, mask, act, ret, hidden), perm, critic, critic_opt)
        seen += n
        stats = {"cross_entropy": float(sums[0] / n), "value_loss": float(sums[1] / n),
                 "accuracy": float(sums[2] / n), "decisions": seen}  # plain floats: the checkpoint keeps them
        if critic is not None:
            stats["critic_value_loss"] = float(sums[3] / n)
        if log is not None:
            log(seen, stats)
        if progress is not None:
            progress(seen)
    return stats


def _one_pass(net: PolicyValueNet, opt: torch.optim.Optimizer, cfg: TrainConfig, data: tuple, perm: torch.Tensor,
              critic: CriticNet | None, critic_opt: torch.optim.Optimizer | None) -> np.ndarray:
    """One pass over a chunk (obs, mask, action, ret, hidden or None) in the order ``perm``, in minibatches of
    ``imitation.minibatch_size``: the sums over its samples of (cross-entropy, value loss, accuracy, critic loss,
    1), float64[5]."""
    obs, mask, act, ret, hidden = data
    im = cfg.imitation
    n = len(perm)
    sums = np.zeros(5)
    for start in range(0, n, im.minibatch_size):
        idx = perm[start : start + im.minibatch_size]
        logits, value = net(obs[idx], mask[idx])
        ce = torch.nn.functional.cross_entropy(logits, act[idx])
        vloss = 0.5 * (value - ret[idx]).pow(2).mean()
        loss = ce + im.value_coef * vloss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.ppo.max_grad_norm)
        opt.step()
        closs = 0.0
        if critic is not None and critic_opt is not None and hidden is not None:
            critic_loss = 0.5 * (critic(obs[idx], hidden[idx]) - ret[idx]).pow(2).mean()
            critic_opt.zero_grad(set_to_none=True)
            critic_loss.backward()
            torch.nn.utils.clip_grad_norm_(critic.parameters(), cfg.ppo.max_grad_norm)
            critic_opt.step()
            closs = critic_loss.item()
        with torch.no_grad():
            acc = (logits.argmax(1) == act[idx]).float().mean().item()
        sums += np.array([ce.item(), vloss.item(), acc, closs, 1.0]) * len(idx)
    return sums
