"""``ismcts``: Information Set MCTS on the compiled core, optionally root-parallel on Ray.

Spec: ``ismcts:iterations=1000[,c=0.7][,rollout=random|heuristic][,workers=N][,prior=PATH][,c_prior=2]
[,time=SECONDS][,seed=S]``.

| option     | meaning                                                                                     |
|------------|---------------------------------------------------------------------------------------------|
| iterations | iterations per decision (default 1000)                                                      |
| time       | instead of a fixed count: seconds per decision (iterations calibrated from a first search)  |
| c          | UCB exploration constant, rewards being payoffs / the variant's payoff_scale (default 0.7)  |
| rollout    | rollout policy: random (default) or heuristic                                               |
| workers    | root parallelism: N independent searches (Ray actors when N > 1), root visits summed        |
| prior      | a policy whose probabilities are a PUCT prior at the root: an exported bot directory        |
|            | (``onnx:DIR`` or a DIR with manifest.json: no torch) or a PPO checkpoint (file or run dir)  |
| c_prior    | weight of the prior (default 2)                                                             |
| seed       | the agent's random seed                                                                     |

Forced decisions (one legal action) are played without searching. The search itself is
:mod:`tarocchi_rl.search.ismcts`; games of a batch are searched in parallel with Numba threads.
"""

import time
from typing import Any

import numpy as np
from numpy.typing import NDArray

from tarocchi_rl.core.state import BatchState, alloc_state
from tarocchi_rl.policies import Agent
from tarocchi_rl.search.ismcts import ROLLOUT_HEURISTIC, ROLLOUT_RANDOM, search_batch
from tarocchi_rl.variants import get_variant


def _search(state: BatchState, idx: NDArray[np.int64], tables: Any, iterations: int, c: float, payoff_scale: float,
            rollout: int, priors: NDArray[np.float32], c_prior: float,
            seeds: NDArray[np.uint64]) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Run one batch of searches (rewards: payoffs / payoff_scale); returns (actions int64[k], visits
    float64[k, A])."""
    k = len(idx)
    scratch = alloc_state(k)
    scratch.rng[:] = seeds
    n_act = priors.shape[1]
    visits = np.zeros((k, n_act), np.float64)
    actions = np.zeros(k, np.int64)
    search_batch(state, np.ascontiguousarray(idx, np.int64), tables, scratch, int(iterations), float(c),
                 float(payoff_scale), int(rollout), priors, float(c_prior), visits, actions)
    return actions, visits


class _RemoteSearcher:
    """A Ray actor: searches given root states of one variant (root parallelism)."""

    def __init__(self, variant: str, options: dict) -> None:
        spec = get_variant(variant)
        self.tables = spec.tables(spec.resolve_options(options))

    def search(self, meta: NDArray[Any], cards: NDArray[Any], deck: NDArray[Any], rng: NDArray[Any], iterations: int,
               c: float, payoff_scale: float, rollout: int, priors: NDArray[np.float32], c_prior: float,
               seeds: NDArray[np.uint64]) -> NDArray[np.float64]:
        st = BatchState(meta=meta, cards=cards, deck=deck, rng=rng.copy())
        return _search(st, np.arange(len(meta)), self.tables, iterations, c, payoff_scale, rollout, priors,
                       c_prior, seeds)[1]


def load_prior(prior: str) -> Any:
    """The prior policy: ``onnx:DIR`` or a bot directory (onnxruntime), else a PPO checkpoint (torch)."""
    from pathlib import Path

    from tarocchi_rl.policies.onnx_policy import OnnxAgent

    path = prior[len("onnx:"):] if prior.startswith("onnx:") else prior
    if prior.startswith("onnx:") or (Path(path) / "manifest.json").is_file():
        return OnnxAgent(path)
    from .ppo import PPOAgent  # torch: only for a checkpoint prior

    return PPOAgent(path=prior)


class ISMCTSAgent(Agent):
    """SO-ISMCTS for every decision (module docstring)."""

    needs_mask = True  # the arena's mask rows: no second legal-mask pass over the whole batch
    legal_by_construction = True  # the search picks among the core's legal actions

    def __init__(self, iterations: int = 1000, c: float = 0.7, rollout: str = "random", workers: int = 1,
                 prior: str | None = None, c_prior: float = 2.0, time_budget: float | None = None, seed: int = 0,
                 label: str | None = None) -> None:
        if int(iterations) < 1:
            raise ValueError(f"ismcts: iterations must be >= 1, got {iterations}")
        if rollout not in ("random", "heuristic"):
            raise ValueError(f"ismcts: rollout must be random or heuristic, got {rollout!r}")
        if int(workers) < 1:
            raise ValueError(f"ismcts: workers must be >= 1, got {workers}")
        if time_budget is not None and float(time_budget) <= 0:
            raise ValueError(f"ismcts: time must be > 0, got {time_budget}")
        if float(c) < 0:
            raise ValueError(f"ismcts: c must be >= 0, got {c}")
        self.iterations, self.c, self.rollout = int(iterations), float(c), rollout
        self.workers, self.c_prior, self.time_budget = int(workers), float(c_prior), time_budget
        self.rng = np.random.default_rng(seed)
        self.prior: Any = None
        if prior is not None:
            self.prior = load_prior(prior)
        self.needs_obs = self.prior is not None
        self.name = label or f"ismcts:iterations={self.iterations}"
        self._actors: tuple[tuple, list[Any]] | None = None  # (variant key, Ray actor handles)
        self._rate: float | None = None  # measured iterations per second (time budgets)

    # -- Ray root parallelism ---------------------------------------------------------------------------------
    def _ray_actors(self, env: Any) -> list[Any]:
        import ray

        if not ray.is_initialized():
            ray.init(num_cpus=max(2, self.workers), log_to_driver=False, include_dashboard=False)
        key = (env.variant, tuple(sorted(env.options.items())))
        if self._actors is None or self._actors[0] != key:
            cls = ray.remote(num_cpus=1)(_RemoteSearcher)
            self._actors = (key, [cls.remote(env.variant, env.options) for _ in range(self.workers)])
        return self._actors[1]

    def _iterations_for_budget(self, env: Any, idx: NDArray[np.int64], priors: NDArray[np.float32],
                               payoff_scale: float) -> int:
        if self._rate is None:
            t = time.perf_counter()
            _search(env.state, idx[:1], env.tables, 200, self.c, payoff_scale, self._kind(), priors[:1],
                    self.c_prior, self.rng.integers(1, 2**63, 1, dtype=np.uint64))
            self._rate = 200 / max(time.perf_counter() - t, 1e-6)
        assert self.time_budget is not None  # only called with a time budget
        return max(1, int(self._rate * self.time_budget))

    def _kind(self) -> int:
        return ROLLOUT_HEURISTIC if self.rollout == "heuristic" else ROLLOUT_RANDOM

    # -- the protocol -------------------------------------------------------------------------------------------
    def act(self, obs: NDArray[np.float32] | None, mask: NDArray[np.bool_] | None, env: Any,
            idx: NDArray[np.int64] | None = None) -> NDArray[np.int64]:
        return self.search(obs, env, idx, mask)[0]

    def search(self, obs: NDArray[np.float32] | None, env: Any, idx: NDArray[np.int64] | None = None,
               mask: NDArray[np.bool_] | None = None) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Search games ``idx`` of ``env`` (``mask``: their legal actions, computed when None): (actions
        int64[k], root visits float64[k, n_actions]; summed over the workers; all zero for forced decisions,
        which are not searched)."""
        if idx is None:
            idx = np.arange(env.batch_size)
        idx = np.ascontiguousarray(idx, np.int64)
        payoff_scale = get_variant(env.variant).payoff_scale  # rewards: payoffs / payoff_scale
        legal = env.legal_mask()[idx] if mask is None else np.asarray(mask, bool)
        n_legal = legal.sum(axis=1)
        if (n_legal == 0).any():
            raise ValueError("ismcts: a game to act in is finished")
        out = legal.argmax(axis=1).astype(np.int64)  # forced moves: the only legal action
        visits_all = np.zeros((len(idx), env.num_actions))
        todo = np.nonzero(n_legal > 1)[0]
        if len(todo) == 0:
            return out, visits_all
        rows = idx[todo]
        priors = np.zeros((len(rows), env.num_actions), np.float32)
        if self.prior is not None:
            assert obs is not None  # needs_obs: the arena passes observations when there is a prior
            priors[:] = self.prior.probabilities(obs[todo], legal[todo], env)
        iters = self.iterations
        if self.time_budget is not None:
            iters = self._iterations_for_budget(env, rows, priors, payoff_scale)
        if self.workers == 1:
            seeds = self.rng.integers(1, 2**63, len(rows), dtype=np.uint64)
            out[todo], visits_all[todo] = _search(env.state, rows, env.tables, iters, self.c, payoff_scale,
                                                  self._kind(), priors, self.c_prior, seeds)
            return out, visits_all
        import ray

        st = env.state
        args = (st.meta[rows], st.cards[rows], st.deck[rows], st.rng[rows])
        futures = [a.search.remote(*args, iters, self.c, payoff_scale, self._kind(), priors, self.c_prior,
                                   self.rng.integers(1, 2**63, len(rows), dtype=np.uint64))
                   for a in self._ray_actors(env)]
        visits = sum(ray.get(futures))  # root parallelism: the workers' root statistics merged
        visits_all[todo] = visits
        visits = visits.copy()
        visits[~legal[todo]] = -1.0
        out[todo] = visits.argmax(axis=1)
        return out, visits_all


def parse_ismcts_spec(args: str, seed: int = 0) -> ISMCTSAgent:
    """``iterations=1000,c=0.7,...`` (module docstring) -> ISMCTSAgent."""
    kw: dict[str, Any] = {"seed": seed}
    conv: dict[str, type] = {"iterations": int, "c": float, "rollout": str, "workers": int, "prior": str,
                             "c_prior": float, "time": float, "seed": int}
    for part in [a for a in args.split(",") if a.strip()]:
        key, eq, val = part.partition("=")
        key = key.strip()
        if not eq or key not in conv:
            raise ValueError(f"ismcts spec: expected key=value with key in {', '.join(conv)}, got {part!r}")
        try:
            v = conv[key](val.strip())
        except ValueError:
            raise ValueError(f"ismcts spec: {key} must be {conv[key].__name__}, got {val!r}") from None
        kw["time_budget" if key == "time" else key] = v
    return ISMCTSAgent(label=f"ismcts:{args}" if args else "ismcts", **kw)
