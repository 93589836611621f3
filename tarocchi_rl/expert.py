"""Expert iteration: the network learns from the search it guides, then PPO can continue from it.

``tarocchi-rl expert --init CHECKPOINT --out DIR``, top to bottom::

    net = the checkpoint's network (a PPO run, e.g. warm-started by imitation)
    for each round (until --rounds or --minutes):
        self-play: --deals deals on a batched core, every seat played by the guided search
            (tarocchi_rl.search.guided) with the current net, --iterations per decision (with --beliefs, its
            determinizations drawn by the net's own belief head: learned inference); each searched
            decision is a sample (obs, mask, the root visit distribution, the deciding seat); the action is
            drawn from the visits (temperature 1: the searches' own policy, and varied deals to learn from)
        targets: the visit distribution (policy) and the deciding seat's payoff / payoff_scale (value)
        buffer: this round's samples and, with --buffer N, the most recent earlier rounds' while they fit in N
            samples (the searches of a few nets back are still good targets; a round alone is few samples)
        train: --epochs passes over the buffer, in shuffled minibatches of
            loss = cross_entropy(visits, softmax(masked logits)) + value_coef * 0.5 * (V(obs) - payoff)^2
        DIR/checkpoints/round_R.pt and DIR/checkpoints/final.pt (the trainer's format), DIR/expert.jsonl
    then:  tarocchi-rl train --config configs/ppo_V.yaml --set init=DIR     (PPO continues from the expert)
           ismcts:net=DIR                                                     (search with the improved net)

The search's visit counts are a better policy than the network's own (search improves on its prior), so
imitating them moves the network towards the search; the value head learns the outcomes of the search's
play. Forced decisions (one legal action) are played without searching and are not samples.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from .batch import BatchEnv
from .bits import SEED_MAX
from .rl.checkpoint import save_checkpoint
from .rl.network import load_network
from .rl.policy import PPOAgent
from .search.guided import check_lazy, guided_search
from .search.inference import log_beliefs

#: bounds of the options (ValueError naming the option outside them)
LIMITS = {"rounds": (1, 10**6), "deals": (1, 2**16), "iterations": (1, 10**5), "epochs": (1, 1000),
          "minibatch": (1, 2**20), "lr": (1e-8, 1.0), "value_coef": (0.0, 1e3), "c_puct": (0.0, 100.0),
          "mix": (0.0, 1.0), "minutes": (0.0, 10**6), "seed": (0, SEED_MAX), "buffer": (0, 10**8)}
PRIOR_BYTES = 2**27  # node priors held at once by one guided search (games searched in groups that fit)


def _check(name: str, value: float) -> None:
    lo, hi = LIMITS[name]
    if not (isinstance(value, (int, float)) and np.isfinite(value) and lo <= value <= hi):
        raise ValueError(f"expert: {name} must be a finite number in [{lo:g}, {hi:g}], got {value!r}")


def self_play(net: torch.nn.Module, variant: str, options: dict, deals: int, iterations: int, c_puct: float,
              mix: float, payoff_scale: float, rng: np.random.Generator,
              beliefs: bool = False, lazy: bool = False) -> dict[str, NDArray[Any]]:
    """``deals`` deals played by the guided search with ``net`` at every seat; returns the samples: obs
    float32[N, D], mask bool[N, A], policy float32[N, A] (root visits / iterations), ret float32[N] (the deciding
    seat's payoff / payoff_scale). ``beliefs``: the searches draw their deals weighted by the network's own belief
    head (learned inference, :mod:`tarocchi_rl.search.inference`; the network must have one). ``lazy`` (needs
    ``mix`` = 1): a node's prior evaluated on its second visit (``ismcts:lazy=1``)."""
    env = BatchEnv(variant, deals, seed=int(rng.integers(0, 2**62)), **options)
    if beliefs and not getattr(net, "has_beliefs", False):
        raise ValueError("expert: --beliefs needs a network with a belief head (trained with belief_loss > 0)")
    evaluate = PPOAgent(net=net.eval()).run  # (obs, mask) -> (probabilities, values), one forward pass
    per_game = (iterations + 1) * env.num_actions * 4
    group = max(1, PRIOR_BYTES // per_game)
    obs_l, mask_l, pol_l, game_l, seat_l = [], [], [], [], []
    while True:
        cur = env.current_player().astype(np.int64)
        live = np.flatnonzero(cur >= 0)
        if len(live) == 0:
            break
        obs, mask = env.observe()[live], env.legal_mask()[live]
        actions = np.full(env.batch_size, -1, np.int64)
        actions[live] = mask.argmax(axis=1)  # forced decisions: the only legal action
        todo = np.flatnonzero(mask.sum(axis=1) > 1)
        for lo in range(0, len(todo), group):
            rows = todo[lo:lo + group]
            seeds = rng.integers(1, 2**63, len(rows), dtype=np.uint64)
            log_b = None
            if beliefs:
                with torch.no_grad():
                    probs = net.beliefs(torch.from_numpy(obs[rows])).numpy()
                log_b = log_beliefs(probs, env.num_players, env.spec.deck.n_cards)
            _, visits = guided_search(env.state, live[rows], env.tables, env.num_players, env.num_actions,
                                      obs[rows], mask[rows], evaluate, iterations, c_puct, payoff_scale, seeds,
                                      mix=mix, lazy=lazy, log_beliefs=log_b)
            policy = (visits / visits.sum(axis=1, keepdims=True)).astype(np.float32)
            c = np.cumsum(policy, axis=1)  # an action drawn from the visits
            u = rng.random(len(rows))[:, None] * c[:, -1:]
            actions[live[rows]] = np.minimum((c <= u).sum(axis=1), env.num_actions - 1)
            actions[live[rows]] = np.where(policy[np.arange(len(rows)), actions[live[rows]]] > 0,
                                           actions[live[rows]], policy.argmax(axis=1))
            obs_l.append(obs[rows])
            mask_l.append(mask[rows])
            pol_l.append(policy)
            game_l.append(live[rows])
            seat_l.append(cur[live[rows]])
        env.step(actions, check=True)
    payoffs = env.returns()
    games, seats = np.concatenate(game_l), np.concatenate(seat_l)
    return {"obs": np.concatenate(obs_l), "mask": np.concatenate(mask_l), "policy": np.concatenate(pol_l),
            "ret": (payoffs[games, seats] / payoff_scale).astype(np.float32)}


class ReplayBuffer:
    """The samples of the most recent rounds (dicts of arrays with equal first dimensions, as :func:`self_play`
    returns): the newest round always, and earlier ones, newest first, while the total stays within ``capacity``
    samples (0: the newest round only)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.rounds: list[dict[str, NDArray[Any]]] = []

    def add(self, samples: dict[str, NDArray[Any]]) -> None:
        self.rounds.append(samples)
        kept: list[dict[str, NDArray[Any]]] = []
        total = 0
        for r in reversed(self.rounds):
            n = len(r["ret"])
            if kept and total + n > self.capacity:
                break
            kept.append(r)
            total += n
        self.rounds = kept[::-1]

    def __len__(self) -> int:
        return sum(len(r["ret"]) for r in self.rounds)

    def samples(self) -> dict[str, NDArray[Any]]:
        """Every kept sample, the oldest round first."""
        return {k: np.concatenate([r[k] for r in self.rounds]) for k in self.rounds[-1]}


def train_on(net: torch.nn.Module, opt: torch.optim.Optimizer, samples: dict[str, NDArray[Any]], epochs: int,
             minibatch: int, value_coef: float, gen: torch.Generator) -> dict[str, float]:
    """``epochs`` passes over ``samples`` (module docstring's loss); returns the mean losses of the last pass."""
    net.train()
    obs, mask = torch.from_numpy(samples["obs"]), torch.from_numpy(samples["mask"])
    pol, ret = torch.from_numpy(samples["policy"]), torch.from_numpy(samples["ret"])
    n = len(obs)
    stats: dict[str, float] = {}
    for _ in range(epochs):
        sums = np.zeros(2)
        perm = torch.randperm(n, generator=gen)
        for start in range(0, n, minibatch):
            idx = perm[start:start + minibatch]
            logits, value = net(obs[idx], mask[idx])[:2]
            logp = torch.log_softmax(logits, dim=1)
            ce = -(pol[idx] * torch.where(pol[idx] > 0, logp, torch.zeros_like(logp))).sum(dim=1).mean()
            vloss = 0.5 * (value - ret[idx]).pow(2).mean()
            loss = ce + value_coef * vloss
            if not torch.isfinite(loss):
                raise ValueError(f"expert: a non-finite loss ({loss.item()}) while training")
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
            opt.step()
            sums += np.array([ce.item(), vloss.item()]) * len(idx)
        stats = {"cross_entropy": float(sums[0] / n), "value_loss": float(sums[1] / n)}
    net.eval()
    return stats


def expert_iteration(init: str, out: str | Path, rounds: int = 10, deals: int = 256, iterations: int = 64,
                     minutes: float = 0.0, epochs: int = 2, minibatch: int = 1024, lr: float = 3e-4,
                     value_coef: float = 1.0, c_puct: float = 1.5, mix: float = 0.0, seed: int = 0,
                     buffer: int = 0, beliefs: bool = False, lazy: bool = False,
                     progress: bool = True) -> dict[str, Any]:
    """Run expert iteration from checkpoint ``init`` into directory ``out`` (module docstring); ``minutes`` > 0
    also stops after that wall time (at the end of a round); ``buffer``: samples kept across rounds
    (:class:`ReplayBuffer`); ``beliefs``: learned inference in the searches, ``lazy``: lazy priors (needs ``mix`` =
    1; :func:`self_play`). Returns the summary (JSON-able)."""
    for name, value in (("rounds", rounds), ("deals", deals), ("iterations", iterations), ("epochs", epochs),
                        ("minibatch", minibatch), ("lr", lr), ("value_coef", value_coef), ("c_puct", c_puct),
                        ("mix", mix), ("minutes", minutes), ("seed", seed), ("buffer", buffer)):
        _check(name, value)
    check_lazy(lazy, mix, "expert: --lazy")
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ValueError(f"expert: --out {out} exists and is not an empty directory")
    net, cfg, data = load_network(init)
    if beliefs and not net.has_beliefs:
        raise ValueError(f"expert: --beliefs needs a network with a belief head; {data['path']} was trained with "
                         "belief_loss: 0")
    torch.manual_seed(seed)
    opt = torch.optim.Adam(net.parameters(), lr=lr, eps=1e-5)
    gen = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    assert cfg.payoff_scale is not None  # resolved by config_from_dict's validation
    # the checkpoints' config: PPO continuing from them starts from these weights, not from a new imitation
    out_cfg = cfg.to_dict() | {"init": None}
    out_cfg["imitation"] = dict(out_cfg["imitation"], decisions=0)
    (out / "checkpoints").mkdir(parents=True, exist_ok=True)
    log_path = out / "expert.jsonl"
    t0 = time.perf_counter()
    history, n_samples = [], 0
    replay = ReplayBuffer(buffer)
    for r in range(1, rounds + 1):
        t = time.perf_counter()
        samples = self_play(net, cfg.variant, cfg.options, deals, iterations, c_puct, mix, cfg.payoff_scale, rng,
                            beliefs, lazy)
        t_play = time.perf_counter() - t
        replay.add(samples)
        stats = train_on(net, opt, replay.samples(), epochs, minibatch, value_coef, gen)
        n_samples += len(samples["ret"])
        entry = {"round": r, "samples": len(samples["ret"]), "trained_on": len(replay), "total_samples": n_samples,
                 "self_play_s": round(t_play, 2), "train_s": round(time.perf_counter() - t - t_play, 2),
                 "minutes": round((time.perf_counter() - t0) / 60, 3), **stats}
        history.append(entry)
        with open(log_path, "a") as f:
            f.write(json.dumps(entry) + "\n")
        ck = {"config": out_cfg, "model": net.state_dict(), "update": 0, "samples": n_samples, "decisions": 0,
              "minutes": entry["minutes"], "workers": [], "expert": {"init": str(data["path"]), "round": r}}
        save_checkpoint(out / "checkpoints" / f"round_{r}.pt", ck)
        save_checkpoint(out / "checkpoints" / "final.pt", ck)
        if progress:
            print(f"round {r}: {entry['samples']} samples ({t_play:.0f} s of search), cross-entropy "
                  f"{stats['cross_entropy']:.3f}, value loss {stats['value_loss']:.3f}", flush=True)
        if minutes > 0 and time.perf_counter() - t0 >= minutes * 60:
            break
    return {"out": str(out), "variant": cfg.variant, "rounds": len(history), "samples": n_samples,
            "minutes": round((time.perf_counter() - t0) / 60, 3), "last": history[-1]}
