"""A rollout worker: one batched core (``num_envs`` games), the learner's policy and the league of opponents.

Each deal gets a **seating** when it is dealt (``controllers`` int[B, P], one entry per seat):

| value | who plays the seat                                   |
|-------|------------------------------------------------------|
| 0     | the learner's current policy (its decisions are kept) |
| -1    | ``league.opponent`` (the heuristic bot by default)    |
| k > 0 | snapshot slot k-1 of the league pool                 |

With probability ``league.self_play_share`` the current policy plays every seat; otherwise the opponents are
``league.opponent`` (``league.heuristic_share``; any agent spec, the heuristic by default) or one pool snapshot
drawn uniformly (the opponent while the pool is empty), and the learner takes a random non-empty, non-full set
of seats (alone against three, pairs, three against one...; ``league.learner_seats: one``: one seat). Every
player samples from its policy, snapshots included.

**Kinds of decision** (``learn``, default all of bid, discard, play): a learner seat's decisions of a kind not
in ``learn`` are played by the ``others`` agent and are not samples, so a run can train a bidding bot under a
fixed card player, or the reverse. Agent specs are built by the ``agent_factory`` the worker is given (the
CLI's ``make_agent``; default: the baselines random and heuristic).

``collect(weights)`` starts fresh deals in every game, plays ``rollout_steps`` decisions per game and then
finishes the deals in flight (no new deal once a game has made its steps), so every decision chain ends with
its payoff: nothing needs bootstrapping. It returns the learner's samples (arrays of the table below, in
time order, N samples) with GAE already computed, and statistics.

| key        | dtype / shape          | meaning                                                        |
|------------|------------------------|----------------------------------------------------------------|
| obs        | float32[N, obs_dim]    | the observation of the deciding seat                           |
| mask       | bool[N, n_actions]     | its legal actions                                              |
| action     | int64[N]               | the action sampled                                             |
| logp       | float32[N]             | its log-probability under the behaviour policy                 |
| value      | float32[N]             | the value estimate at the decision                             |
| advantage  | float32[N]             | GAE along the seat's chain (:mod:`tarocchi_rl.rl.losses`)      |
| ret        | float32[N]             | the value target ``advantage + value``                         |
| hidden     | float32[N, H]          | the deciding seat's privileged observation (the hidden cards:  |
|            |                        | :mod:`tarocchi_rl.core.obs_layout`); ``critic: perfect`` or    |
|            |                        | ``belief_loss > 0`` only, H = 0 otherwise                      |
| reward     | float32[N]             | payoff / payoff_scale on the seat's last decision, else 0      |
| done       | bool[N]                | the seat's last decision of the deal                           |
| next_idx   | int64[N]               | the same seat's next sample in the deal (-1 after its last)    |

``value``, ``advantage`` and ``ret`` are the policy network's own (its seat-view value head); with ``critic:
perfect`` the learner recomputes ``advantage`` and ``ret`` along the chains (``reward``, ``done``, ``next_idx``)
with its perfect-information critic, which the workers do not hold.

Where a worker runs: in a Ray actor (:class:`~tarocchi_rl.rl.workers.RayPool`) the worker notes the id of its
Ray node (``ray.get_runtime_context().get_node_id()``, a hex string) as ``node_id``; in the learner's process
(no Ray running) it is None. It is reported twice, with nothing else changed: in every rollout's ``stats``
(``stats["node_id"]``; :func:`merge_stats` gathers them as ``node_ids``) and in :meth:`RolloutWorker.get_state`
(``"node_id"``, only when set; :meth:`RolloutWorker.set_state` ignores it), so each checkpoint's ``workers``
list says which node each worker played on (``tests/cluster`` checks a two-node run with it).
"""

import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from .. import engine
from ..batch import BatchEnv
from ..core.phases import DECISION_KINDS, DONE
from ..core.state import BID_WORD, DECLARER, PHASE, SIDE
from ..policies import make_baseline
from ..policies.compose import decision_kinds
from .config import config_from_dict
from .losses import gae
from .network import build_network

LEARNER, HEURISTIC = 0, -1  # the controllers of the seating table (HEURISTIC: league.opponent, the heuristic)
OTHERS = -3  # not a seating: a learner seat's decision of a kind it does not learn (played by cfg.others)
AgentFactory = Callable[[str, int], Any]  # (agent spec, seed) -> an agent (policies.base protocol)


def ray_node_id() -> str | None:
    """The Ray node id of this process when Ray is running in it (a Ray actor), else None (module docstring)."""
    ray = sys.modules.get("ray")  # a process that never imported Ray runs no Ray
    if ray is None or not ray.is_initialized():
        return None
    return str(ray.get_runtime_context().get_node_id())


def sample_actions(logits: torch.Tensor, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Sample from masked logits float[B, A] -> (actions int64[B], logp float32[B])."""
    logp_all = torch.log_softmax(logits, dim=-1)
    a = torch.multinomial(logp_all.exp(), 1, generator=gen).squeeze(1)
    return a, logp_all.gather(1, a[:, None]).squeeze(1)


def role_of(meta_row: np.ndarray, seat: int) -> str:
    """The seat's role in a finished deal: declarer (Piedmontese: the dealer), partner, defender or passed."""
    d = int(meta_row[DECLARER])
    if d < 0:
        return "passed"
    if seat == d:
        return "declarer"
    return "partner" if meta_row[SIDE + seat] == meta_row[SIDE + d] else "defender"


class RolloutWorker:
    """Plays self-play deals on a batched core and returns the learner's trajectories (module docstring).

    ``cfg`` is a TrainConfig as a dict (picklable for Ray); ``index`` the worker number (its seed stream).
    """

    def __init__(self, cfg: dict, index: int = 0, threads: int = 1, agent_factory: AgentFactory | None = None) -> None:
        self.cfg = config_from_dict(cfg)
        torch.set_num_threads(threads)
        c = self.cfg
        ss = np.random.SeedSequence([c.seed, index])
        env_seed, torch_seed = (int(x) for x in ss.generate_state(2, np.uint64) >> np.uint64(1))
        self.env = BatchEnv(c.variant, c.num_envs, seed=env_seed, **c.options)
        self.rng = np.random.default_rng(ss.spawn(1)[0])
        self.gen = torch.Generator().manual_seed(torch_seed)
        self.net = build_network(c, self.env.obs_dim, self.env.num_actions).eval()
        # the privileged observation of the learner's decisions (critic: perfect, or the belief head's targets:
        # belief_loss > 0), else a width of 0
        wants_hidden = c.critic == "perfect" or c.belief_loss > 0
        self.hidden_dim = engine.privileged_layout(self.env.tables)[1] if wants_hidden else 0
        self.pool: list[tuple[int, Any]] = []  # (snapshot id, network), slot k-1 is controller k
        self.n_players = self.env.num_players
        make = agent_factory or make_baseline
        # the fixed opponent (league.opponent) and the player of the kinds the learner does not learn (others)
        self.opponent = make(c.league.opponent, int(self.rng.integers(2**31)))
        self.learned = np.isin(np.arange(len(DECISION_KINDS)), [DECISION_KINDS.index(k) for k in c.learn])
        self.others = None if self.learned.all() else make(c.others, int(self.rng.integers(2**31)))
        if any(getattr(a, "needs_history", False) for a in (self.opponent, self.others)):
            self.env.keep_history()  # an external bot (cmd:) writes the seat's view from it
        self.node_id = ray_node_id()  # the Ray node this worker plays on (module docstring), None outside Ray

    # -- weights and league -------------------------------------------------------------------------------
    def set_weights(self, state_dict: dict) -> None:
        self.net.load_state_dict(state_dict)

    def set_pool(self, snapshots: list) -> None:
        """snapshots: list of (id, state_dict); nets already held are kept."""
        have = dict(self.pool)
        new = []
        for sid, sd in snapshots:
            net = have.get(sid)
            if net is None:
                net = build_network(self.cfg, self.env.obs_dim, self.env.num_actions).eval()
                net.load_state_dict(sd)
            new.append((sid, net))
        self.pool = new

    def pool_ids(self) -> list[int]:
        return [sid for sid, _ in self.pool]

    def get_state(self) -> dict:
        """The worker's random state (for exact resumption); in a Ray actor also its ``node_id`` (module
        docstring: informational, :meth:`set_state` ignores it)."""
        s = {"env_rng": self.env.state.rng.copy(), "np_rng": self.rng.bit_generator.state,
             "torch_gen": self.gen.get_state()}
        if self.node_id is not None:
            s["node_id"] = self.node_id
        return s

    def set_state(self, s: dict) -> None:
        self.env.state.rng[:] = s["env_rng"]
        self.rng.bit_generator.state = s["np_rng"]
        self.gen.set_state(s["torch_gen"])

    def _draw_seating(self) -> np.ndarray:
        """int8[P] controllers of one new deal (module docstring)."""
        lg, p = self.cfg.league, self.n_players
        u = self.rng.random()
        if u < lg.self_play_share:
            return np.zeros(p, np.int8)
        if u < lg.self_play_share + lg.heuristic_share or not self.pool:
            opp = HEURISTIC
        else:
            opp = 1 + int(self.rng.integers(len(self.pool)))
        seats = np.full(p, opp, np.int8)
        k = 1 if lg.learner_seats == "one" else int(self.rng.integers(1, p))  # learner seats: 1 .. P-1
        seats[self.rng.choice(p, k, replace=False)] = LEARNER
        return seats

    # -- playing ------------------------------------------------------------------------------------------
    @torch.no_grad()
    def collect(self, weights: dict | None = None, pool: list | None = None) -> dict:
        """Play one rollout (module docstring); optional new weights / pool first.

        Returns the sample arrays of the module docstring's table (N learner samples) and ``stats``
        (:func:`merge_stats`' format: ``all_decisions`` every seat's decisions, ``learner_samples`` = N).
        """
        if weights is not None:
            self.set_weights(weights)
        if pool is not None:
            self.set_pool(pool)
        c, env = self.cfg, self.env
        b, p = env.batch_size, self.n_players
        env.reset()
        for i in range(b):
            self._deal_until_live(i)
        seating = np.stack([self._draw_seating() for _ in range(b)])  # int8[B, P], redrawn for every deal
        steps = np.zeros(b, np.int64)  # decisions made in each game this rollout (every seat's)
        traj = _Trajectories(b, p, capacity=b * (c.rollout_steps + 400))  # no deal has 400 decisions
        stats = _Stats(p)
        all_decisions = 0
        payoff_scale = c.payoff_scale
        assert payoff_scale is not None  # resolved by TrainConfig.validate
        mask_buf = np.empty((b, env.num_actions), bool)
        actions = np.full(b, -1, np.int64)
        while True:
            cur = env.current_player().astype(np.int64)
            live = cur >= 0
            if not live.any():
                break
            self._choose_actions(cur, live, seating, traj, mask_buf, actions)
            all_decisions += int(live.sum())
            steps += live
            payoffs, done = env.step(actions, check=False)
            for i in np.nonzero(done)[0].tolist():
                traj.end_deal(i, payoffs[i], payoff_scale)
                stats.deal(env.state.meta[i], seating[i], payoffs[i], c.variant)
                if steps[i] < c.rollout_steps:  # else the game idles until the rollout ends
                    self._deal_until_live(i)
                    seating[i] = self._draw_seating()
        out = traj.arrays(env.obs_dim, env.num_actions, self.hidden_dim, c.ppo.gamma, c.ppo.gae_lambda)
        out["stats"] = stats.as_dict(all_decisions, traj.n) | {"node_id": self.node_id}
        return out

    def _deal_until_live(self, i: int) -> None:
        """Deal game ``i`` again while its deal is over at once (French petit sec)."""
        st = self.env.state
        while st.meta[i, PHASE] == DONE:
            engine.new_deal_row(st, i, self.env.tables)

    def _choose_actions(self, cur: np.ndarray, live: np.ndarray, seating: np.ndarray, traj: "_Trajectories",
                        mask_buf: np.ndarray, actions: np.ndarray) -> None:
        """Fill ``actions`` int64[B] for the games to move (-1 elsewhere): the learner samples from its policy
        (its decisions go to ``traj``), snapshots from theirs, the heuristic plays its rule.

        cur int64[B] (the seat to move, -1 when the game idles), live bool[B], seating int8[B, P].
        """
        env = self.env
        who = np.where(live, seating[np.arange(len(cur)), np.maximum(cur, 0)], -2)  # controller of the mover
        if self.others is not None:  # the learner's decisions of a kind it does not learn: OTHERS plays them
            kinds = decision_kinds(env, np.arange(len(cur)))
            who[(who == LEARNER) & ~self.learned[np.maximum(kinds, 0)]] = OTHERS
        mask = env.legal_mask(out=mask_buf)
        needs_obs = (who >= 0) | ((who == HEURISTIC) & getattr(self.opponent, "needs_obs", True))
        if self.others is not None:
            needs_obs |= (who == OTHERS) & getattr(self.others, "needs_obs", True)
        obs = env.observe(np.where(needs_obs, cur, -1))  # only the players that read one get an observation
        actions[:] = -1
        learn = np.nonzero(who == LEARNER)[0]
        if len(learn):
            o, m = obs[learn], mask[learn]
            logits, v = self.net(torch.from_numpy(o), torch.from_numpy(m))
            a, lp = sample_actions(logits, self.gen)
            actions[learn] = a.numpy()
            traj.add(learn, cur[learn], o, m, a.numpy(), lp.numpy(), v.numpy(), self._hidden(learn, cur))
        for slot, (_, net) in enumerate(self.pool):
            r = np.nonzero(who == slot + 1)[0]
            if len(r):
                logits, _ = net(torch.from_numpy(obs[r]), torch.from_numpy(mask[r]))
                actions[r] = sample_actions(logits, self.gen)[0].numpy()
        for code, agent in ((HEURISTIC, self.opponent), (OTHERS, self.others)):
            r = np.nonzero(who == code)[0]
            if len(r) and agent is not None:
                actions[r] = agent.act(obs[r], mask[r], env, r)

    def _hidden(self, learn: np.ndarray, cur: np.ndarray) -> np.ndarray:
        """float32[k, H]: the privileged observation of the learner's k decisions (games ``learn``, seats to move
        ``cur``); width 0 without a perfect-information critic or a belief head."""
        if not self.hidden_dim:
            return np.zeros((len(learn), 0), np.float32)
        viewers = np.full(self.env.batch_size, -1, np.int64)
        viewers[learn] = cur[learn]
        return engine.observe_privileged(self.env.state, self.env.tables, viewers)[learn]


class _Trajectories:
    """The learner's samples of one rollout in time order, linked into each (game, seat)'s decision chain.

    ``next_idx`` int64[cap] (the same seat's next sample in the deal, -1 after its last), ``reward``
    float32[cap] and ``done`` bool[cap] (set on a seat's last sample of a deal), ``last`` int64[B, P] (the
    latest sample of each game's seat in the current deal, -1 before its first).
    """

    KEYS = ("obs", "mask", "action", "logp", "value", "hidden")

    def __init__(self, b: int, p: int, capacity: int) -> None:
        self.next_idx = np.full(capacity, -1, np.int64)
        self.reward = np.zeros(capacity, np.float32)
        self.done = np.zeros(capacity, bool)
        self.last = np.full((b, p), -1, np.int64)
        self.chunks: dict[str, list[np.ndarray]] = {k: [] for k in self.KEYS}
        self.n = 0

    def add(self, games: np.ndarray, seats: np.ndarray, obs: np.ndarray, mask: np.ndarray, action: np.ndarray,
            logp: np.ndarray, value: np.ndarray, hidden: np.ndarray) -> None:
        """Append k samples: games, seats int64[k]; obs float32[k, D], mask bool[k, A], action int64[k],
        logp float32[k], value float32[k], hidden float32[k, H]."""
        for k, x in zip(self.KEYS, (obs, mask, action, logp, value, hidden), strict=True):
            self.chunks[k].append(x)
        idx = self.n + np.arange(len(games))
        prev = self.last[games, seats]
        linked = prev >= 0
        self.next_idx[prev[linked]] = idx[linked]
        self.last[games, seats] = idx
        self.n += len(games)

    def end_deal(self, game: int, payoffs: np.ndarray, payoff_scale: float) -> None:
        """Game ``game``'s deal ended with ``payoffs`` [P]: each seat's last sample gets payoff / payoff_scale."""
        for s, k in enumerate(self.last[game]):
            if k >= 0:
                self.reward[k] = payoffs[s] / payoff_scale
                self.done[k] = True
        self.last[game] = -1

    def arrays(self, obs_dim: int, n_actions: int, hidden_dim: int, gamma: float, lam: float) -> dict:
        """The samples as the module docstring's arrays, with GAE advantages and returns."""
        n = self.n
        if n == 0:
            out = {"obs": np.zeros((0, obs_dim), np.float32), "mask": np.zeros((0, n_actions), bool),
                   "action": np.zeros(0, np.int64), "logp": np.zeros(0, np.float32), "value": np.zeros(0, np.float32),
                   "hidden": np.zeros((0, hidden_dim), np.float32)}
        else:
            out = {k: np.concatenate(v) for k, v in self.chunks.items()}
        out["reward"], out["done"] = self.reward[:n].copy(), self.done[:n].copy()
        out["next_idx"] = self.next_idx[:n].copy()
        out["advantage"] = gae(out["reward"], out["done"], out["value"].astype(np.float32), out["next_idx"], gamma, lam)
        out["ret"] = out["advantage"] + out["value"]
        return out


class _Stats:
    """Per-rollout sums of the learner seats' payoffs (by seat, role, opponent) and auction words."""

    def __init__(self, p: int) -> None:
        self.p = p
        self.sums: dict[str, list[float]] = {}
        self.bids: dict[int, int] = {}

    def _add(self, key: str, x: float) -> None:
        s = self.sums.setdefault(key, [0.0, 0])
        s[0] += x
        s[1] += 1

    def deal(self, meta_row: np.ndarray, seating: np.ndarray, payoffs: np.ndarray, variant: str) -> None:
        learner = [s for s in range(self.p) if seating[s] == LEARNER]
        if not learner:
            return
        opp = seating[seating != LEARNER]
        kind = "self_play" if len(opp) == 0 else ("vs_heuristic" if opp[0] == HEURISTIC else "vs_snapshot")
        mean = float(np.mean([payoffs[s] for s in learner]))
        self._add(f"payoff/{kind}", mean)
        for s in learner:
            self._add(f"payoff_seat/{s}", float(payoffs[s]))
            self._add(f"payoff_role/{role_of(meta_row, s)}", float(payoffs[s]))
            w = int(meta_row[BID_WORD + s])
            if w >= 0:
                self.bids[w] = self.bids.get(w, 0) + 1
        self._add("deals", 1.0)

    def as_dict(self, all_decisions: int, learner_samples: int) -> dict:
        return {"sums": self.sums, "bids": self.bids, "all_decisions": all_decisions,
                "learner_samples": learner_samples}


def merge_stats(parts: list[dict]) -> dict:
    """Sum the statistics of several rollouts: ``sums`` {key: [total, count]} of payoffs (``payoff/KIND``,
    ``payoff_seat/S``, ``payoff_role/ROLE``, ``deals``), ``bids`` {auction word: count}, ``all_decisions``
    (every seat's decisions), ``learner_samples`` (the learner's decisions, the samples trained on) and
    ``node_ids`` (the sorted Ray node ids the rollouts were played on, module docstring; empty outside Ray)."""
    sums: dict[str, list[float]] = {}
    bids: dict[int, int] = {}
    out: dict[str, Any] = {"sums": sums, "bids": bids, "all_decisions": 0, "learner_samples": 0,
                           "node_ids": sorted({s["node_id"] for s in parts if s.get("node_id")})}
    for s in parts:
        out["all_decisions"] += s["all_decisions"]
        out["learner_samples"] += s["learner_samples"]
        for k, (tot, cnt) in s["sums"].items():
            e = sums.setdefault(k, [0.0, 0])
            e[0] += tot
            e[1] += cnt
        for w, cnt in s["bids"].items():
            bids[w] = bids.get(w, 0) + cnt
    return out
