"""Search targets: self-play deals in which the search decides every move worth searching, each such decision a sample.

One worker (:class:`Labeller`, a Ray actor or in the learner's process) holds the current network and plays
``search.games`` deals at once on one batched core::

    until the deals are played out:
        obs, mask, phase of every game's seat to act; the network's policy and value (one forward pass)
        forced decisions (one legal action): played, not samples
        kinds with a budget of 0: the network's most probable action; with search.anchor a sample whose target is
            the network's own policy (the kinds not searched keep their play while the others are learned)
        the rest: searched, grouped by budget (search.budget: iterations by kind of decision) --
            leaf heuristic: plain ISMCTS, heuristic rollouts, the network's policy a PUCT prior at the root
            leaf net:       the search guided by the network (priors at every node, value head at the leaves)
          -> the policy target: the root's visit distribution (search.target visits), or the network's policy
             reweighted by the root actions' values (q: :func:`q_improved_policy`); the root's mean value (the
             search value); the move played is drawn from the target^(1/T) (T = search.temperature; 0: its
             most probable move)
    at each deal's end: every sample of a seat gets the deal's outcome (its payoff / payoff_scale)

The samples of one call form a shard (:mod:`tarocchi_rl.expert.shards`). Forced decisions are counted, not kept.
Unsearched ones are kept only as anchors (``search.anchor``): trained on the searches' targets alone, the network
drifts in the kinds it never sees targets for (measured on french3: its bids, once only card play was learned).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from .. import engine
from ..batch import BatchEnv
from ..core.phases import DECISION_KINDS
from ..core.state import PHASE
from ..policies.belief import belief_targets
from ..rl.network import build_network
from ..rl.policy import PPOAgent
from ..search.guided import guided_search
from ..search.ismcts import ROLLOUT_HEURISTIC, SearchTrees
from ..variants.phases import DECISION_KIND_OF_PHASE
from .config import ExpertConfig, expert_config_from_dict
from .shards import Shard

KIND_OF_PHASE = np.array(DECISION_KIND_OF_PHASE, np.int64)
_STEP_FIELDS = ("obs", "mask", "policy", "search_value", "game", "seat", "phase", "action", "behaviour", "belief")


@dataclass
class _Samples:
    """The searched decisions of one batch of deals, in the order they were taken (lists of per-step arrays)."""

    parts: dict[str, list[NDArray[Any]]] = field(default_factory=lambda: {k: [] for k in _STEP_FIELDS})

    def add(self, **arrays: NDArray[Any]) -> None:
        for k, v in arrays.items():
            self.parts[k].append(v)

    def joined(self, width: dict[str, tuple[int, ...]], dtype: dict[str, Any]) -> dict[str, NDArray[Any]]:
        return {k: (np.concatenate(v) if v else np.zeros((0, *width[k]), dtype[k])) for k, v in self.parts.items()}



class Labeller:
    """One labelling worker: :meth:`label` plays deals with the search at the given weights and returns a shard's
    arrays with statistics. Seeded by (``seed``, ``stream``): workers never share deals."""

    def __init__(self, cfg: dict, stream: int = 0, threads: int = 1) -> None:
        self.cfg: ExpertConfig = expert_config_from_dict(cfg)
        self.threads = int(threads)
        torch.set_num_threads(self.threads)
        self.train_cfg = self.cfg.train_config()
        env = BatchEnv(self.cfg.variant, 1, **self.cfg.options)
        self.spec, self.obs_dim, self.n_actions = env.spec, env.obs_dim, env.num_actions
        self.net = build_network(self.train_cfg, self.obs_dim, self.n_actions).eval()
        self.stream = int(stream)
        self.rng = np.random.default_rng([self.cfg.seed, 7, self.stream])
        self.budgets = np.array(self.cfg.search.budget.of_kind(), np.int64)
        assert self.cfg.payoff_scale is not None  # resolved by the config's validation
        self.payoff_scale = float(self.cfg.payoff_scale)

    def label(self, weights: dict, deals: int, round_: int) -> dict[str, Any]:
        """``deals`` self-play deals of round ``round_`` with the network ``weights``: ``{"shard": arrays (Shard
        fields), "stats"}``. The deals, searches and moves drawn depend on (seed, stream, round) alone: a resumed
        run never plays a round's deals again, and needs no worker state."""
        self.rng = np.random.default_rng([self.cfg.seed, 7, self.stream, int(round_)])
        self.net.load_state_dict(weights)
        t0 = time.perf_counter()
        shards, stats = [], _Stats(len(DECISION_KINDS))
        left = int(deals)
        while left > 0:
            n = min(left, self.cfg.search.games)
            shards.append(self._play_batch(n, stats))
            left -= n
        stats.seconds = time.perf_counter() - t0
        stats.deals = int(deals)
        return {"shard": Shard.concatenate(shards).arrays, "stats": stats.as_dict()}

    # -- one batch of deals -----------------------------------------------------------------------------------
    def _play_batch(self, n: int, stats: _Stats) -> Shard:
        env = BatchEnv(self.cfg.variant, n, seed=int(self.rng.integers(0, 2**62)), **self.cfg.options)
        agent = PPOAgent(net=self.net, threads=self.threads)
        samples = _Samples()
        while True:
            cur = env.current_player().astype(np.int64)
            live = np.flatnonzero(cur >= 0)
            if len(live) == 0:
                break
            actions = np.full(n, -1, np.int64)
            actions[live] = self._decide(env, live, cur, agent, samples, stats)
            env.step(actions, check=True)
        payoffs = env.returns().astype(np.float64)
        joined = samples.joined(self._widths(), _DTYPES)
        outcome = payoffs[joined.pop("game"), joined["seat"].astype(np.int64)] / self.payoff_scale
        return Shard.from_arrays({**joined, "outcome": outcome.astype(np.float32)})

    def _decide(self, env: BatchEnv, live: NDArray[np.int64], cur: NDArray[np.int64], agent: PPOAgent,
                samples: _Samples, stats: _Stats) -> NDArray[np.int64]:
        """The moves of the live games (int64[len(live)]); the searched ones become samples."""
        obs, mask = env.observe()[live], env.legal_mask()[live]
        phase = env.state.meta[live, PHASE].astype(np.int64)
        kind = KIND_OF_PHASE[phase]
        probs, values = agent.run(obs, mask)
        moves = np.where(mask, probs, -1.0).argmax(axis=1)  # unsearched: the network's most probable move
        n_legal = mask.sum(axis=1)
        budget = np.where(n_legal > 1, self.budgets[kind], 0)
        stats.note_decisions(kind, n_legal == 1, budget > 0)
        anchors = np.flatnonzero((n_legal > 1) & (budget == 0)) if self.cfg.search.anchor else np.zeros(0, np.int64)
        if len(anchors):  # the network's own policy as the target: the kinds not searched keep their play
            own = np.where(mask[anchors], probs[anchors], 0.0)
            samples.add(obs=obs[anchors], mask=mask[anchors], policy=(own / own.sum(axis=1, keepdims=True)).astype(
                        np.float32), search_value=np.asarray(values, np.float32)[anchors], game=live[anchors],
                        seat=cur[live[anchors]].astype(np.int8), phase=phase[anchors].astype(np.int8),
                        action=moves[anchors].astype(np.int16), behaviour=np.ones(len(anchors), np.float32),
                        belief=self._belief_targets(env, live[anchors], cur, obs[anchors]))
            np.add.at(stats.anchored, kind[anchors], 1)
        for iterations in np.unique(budget[budget > 0]):
            rows = np.flatnonzero(budget == iterations)
            policy, value = self._search(env, live[rows], obs[rows], mask[rows], probs[rows], int(iterations))
            played, behaviour = self._draw(policy)
            moves[rows] = played
            stats.iterations += int(iterations) * len(rows)
            samples.add(obs=obs[rows], mask=mask[rows], policy=policy, search_value=value.astype(np.float32),
                        game=live[rows], seat=cur[live[rows]].astype(np.int8), phase=phase[rows].astype(np.int8),
                        action=played.astype(np.int16), behaviour=behaviour.astype(np.float32),
                        belief=self._belief_targets(env, live[rows], cur, obs[rows]))
        return moves

    def _search(self, env: BatchEnv, games: NDArray[np.int64], obs: NDArray[np.float32], mask: NDArray[np.bool_],
                probs: NDArray[np.float32], iterations: int) -> tuple[NDArray[np.float32], NDArray[np.float64]]:
        """(the policy target float32[k, A] (``search.target``), the root value float64[k]: the visit-weighted
        mean of the root actions' values)."""
        s, scale = self.cfg.search, self.payoff_scale
        seeds = self.rng.integers(1, 2**63, len(games), dtype=np.uint64)
        if s.leaf == "net":
            evaluate = PPOAgent(net=self.net, threads=self.threads).run
            means = np.full((len(games), self.n_actions), np.nan)
            _, visits = guided_search(env.state, games, env.tables, env.num_players, env.num_actions, obs, mask,
                                      evaluate, iterations, s.c_puct, scale, seeds, root_means=means)
        else:
            priors = probs if s.c_prior > 0 else np.zeros_like(probs)
            trees = SearchTrees(env.state, games, env.tables, iterations, s.c, scale, ROLLOUT_HEURISTIC,
                                np.ascontiguousarray(priors, np.float32), s.c_prior, seeds)
            trees.run(iterations)
            visits, means = trees.root_statistics()
        value = np.nansum(visits * np.nan_to_num(means), axis=1) / np.maximum(visits.sum(axis=1), 1.0)
        if s.target == "q":
            return q_improved_policy(probs, visits, means, value, mask, s.q_weight, s.q_shrink), value
        return (visits / visits.sum(axis=1, keepdims=True)).astype(np.float32), value

    def _draw(self, policy: NDArray[np.float32]) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """The moves drawn from visits^(1/T) and their probabilities under that draw (the behaviour policy)."""
        t = self.cfg.search.temperature
        if t <= 0:
            moves = policy.argmax(axis=1)
            return moves, np.ones(len(moves))
        p = np.power(policy.astype(np.float64), 1.0 / t)
        p /= p.sum(axis=1, keepdims=True)
        u = self.rng.random(len(p))[:, None]
        moves = np.minimum((np.cumsum(p, axis=1) <= u).sum(axis=1), p.shape[1] - 1)
        moves = np.where(p[np.arange(len(p)), moves] > 0, moves, p.argmax(axis=1))  # never a move of no visit
        return moves, p[np.arange(len(p)), moves]

    def _belief_targets(self, env: BatchEnv, games: NDArray[np.int64], cur: NDArray[np.int64],
                        obs: NDArray[np.float32]) -> NDArray[np.int8]:
        """int8[k, C]: each unseen card's true location (-1: seen), or int8[k, 0] without a belief loss."""
        if self.cfg.belief_loss <= 0:
            return np.zeros((len(games), 0), np.int8)
        viewers = np.full(env.batch_size, -1, np.int64)
        viewers[games] = cur[games]
        hidden = engine.observe_privileged(env.state, env.tables, viewers)[games]
        return belief_targets(obs, hidden, self.spec).astype(np.int8)

    def _widths(self) -> dict[str, tuple[int, ...]]:
        n_cards = self.spec.deck.n_cards if self.cfg.belief_loss > 0 else 0
        return {"obs": (self.obs_dim,), "mask": (self.n_actions,), "policy": (self.n_actions,), "search_value": (),
                "game": (), "seat": (), "phase": (), "action": (), "behaviour": (), "belief": (n_cards,)}


_DTYPES = {"obs": np.float32, "mask": np.bool_, "policy": np.float32, "search_value": np.float32, "game": np.int64,
           "seat": np.int8, "phase": np.int8, "action": np.int16, "behaviour": np.float32, "belief": np.int8}


def q_improved_policy(prior: NDArray[np.floating], visits: NDArray[np.float64], means: NDArray[np.float64],
                      value: NDArray[np.float64], mask: NDArray[np.bool_], weight: float,
                      shrink: float) -> NDArray[np.float32]:
    """The prior reweighted by the search's values, float32[k, A] (rows sum to 1, 0 off ``mask``)::

        q(a)      = (N(a) * mean(a) + shrink * v) / (N(a) + shrink)     an action seldom visited stays near v
        target(a) ∝ prior(a) * exp(weight * (q(a) - v))                 over the legal actions

    the closed-form improvement of a policy under a KL bound (as MPO's and Gumbel MuZero's targets): it moves the
    prior as far as the values' differences say, where visit counts move it as far as the search's exploration did
    (about as often between two runs of the same search as between the search and the network, on french3).
    ``prior`` float[k, A]; ``visits`` float64[k, A] (N); ``means`` float64[k, A] (NaN where not visited);
    ``value`` float64[k] (v, payoff / payoff_scale); ``mask`` bool[k, A]."""
    seen = visits + shrink
    q = np.where(seen > 0, (visits * np.nan_to_num(means) + shrink * value[:, None]) / np.where(seen > 0, seen, 1.0),
                 value[:, None])
    logits = np.log(np.maximum(np.where(mask, prior, 0.0), 1e-8)) + weight * (q - value[:, None])
    logits = np.where(mask, logits, -np.inf)
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)).astype(np.float32)


@dataclass
class _Stats:
    """What one :meth:`Labeller.label` call did (JSON-able through :meth:`as_dict`)."""

    n_kinds: int
    deals: int = 0
    seconds: float = 0.0
    iterations: int = 0
    decisions: NDArray[np.int64] = field(init=False)
    forced: NDArray[np.int64] = field(init=False)
    searched: NDArray[np.int64] = field(init=False)
    anchored: NDArray[np.int64] = field(init=False)

    def __post_init__(self) -> None:
        self.decisions = np.zeros(self.n_kinds, np.int64)
        self.forced = np.zeros(self.n_kinds, np.int64)
        self.searched = np.zeros(self.n_kinds, np.int64)
        self.anchored = np.zeros(self.n_kinds, np.int64)

    def note_decisions(self, kind: NDArray[np.int64], forced: NDArray[np.bool_], searched: NDArray[np.bool_]) -> None:
        np.add.at(self.decisions, kind, 1)
        np.add.at(self.forced, kind[forced], 1)
        np.add.at(self.searched, kind[searched], 1)

    def as_dict(self) -> dict[str, Any]:
        by_kind = {k: {"decisions": int(self.decisions[i]), "forced": int(self.forced[i]),
                       "searched": int(self.searched[i]), "anchored": int(self.anchored[i])}
                   for i, k in enumerate(DECISION_KINDS)}
        return {"deals": self.deals, "seconds": round(self.seconds, 3), "iterations": self.iterations,
                "samples": int(self.searched.sum() + self.anchored.sum()), "searched": int(self.searched.sum()),
                "by_kind": by_kind}


def merge_stats(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """The stats of several workers' :meth:`Labeller.label` calls added up (``seconds``: the slowest worker's)."""
    out: dict[str, Any] = {"deals": 0, "seconds": 0.0, "iterations": 0, "samples": 0, "searched": 0,
                           "by_kind": {k: {"decisions": 0, "forced": 0, "searched": 0, "anchored": 0}
                                       for k in DECISION_KINDS}}
    for p in parts:
        out["seconds"] = max(out["seconds"], p["seconds"])
        for key in ("deals", "iterations", "samples", "searched"):
            out[key] += p[key]
        for k in DECISION_KINDS:
            for key, v in p["by_kind"][k].items():
                out["by_kind"][k][key] += v
    return out

