"""``ismcts``: Information Set MCTS on the compiled core, optionally root-parallel on Ray, guided by a network
(``net=``), with learned inference (``belief=``).

Its spec arguments are :data:`ARGS` (the spec help, ``tarocchi-rl agents``, is written from them); every value
is checked when the agent is built, from a spec or from Python (a ValueError naming it). Across arguments:
``lazy=1`` needs ``net`` and ``mix=1``; ``belief_method`` and ``belief_samples`` need ``belief``; ``net`` excludes
``prior`` and ``workers`` (the guided search is one process: its games share one forward pass per iteration
step). The belief model runs once per decision, on the seat's observation, for all the games searched together;
with ``time`` the iterations follow the measured cost (a first short search, then each), weighted sampling
included.

Forced decisions (one legal action) are played without searching. The search itself is
:mod:`tarocchi_rl.search.ismcts` (guided: :mod:`tarocchi_rl.search.guided`; learned inference:
:mod:`tarocchi_rl.search.inference`); games of a batch are searched in parallel with Numba threads. A long search
(more than :data:`CHUNK_ITERATIONS` iterations in one batch) runs as a sequence of short compiled calls that
continue the same trees, so that Ctrl-C (KeyboardInterrupt) stops it within about a second; the results are
identical to one call.
"""

import time
from pathlib import Path
from typing import Any

import numba
import numpy as np
from numpy.typing import NDArray

from tarocchi_rl.bits import SEED_MAX
from tarocchi_rl.core.state import BatchState, alloc_state
from tarocchi_rl.core.tables import P_CARDS
from tarocchi_rl.policies import Agent, AgentLike
from tarocchi_rl.policies.onnx_policy import OnnxAgent
from tarocchi_rl.rl.checkpoint_file import precheck_checkpoint
from tarocchi_rl.search.guided import check_lazy, guided_search
from tarocchi_rl.search.inference import (
    DEFAULT_BELIEF_SAMPLES,
    MAX_BELIEF_SAMPLES,
    METHODS,
    log_beliefs,
    uniform_beliefs,
)
from tarocchi_rl.search.ismcts import ROLLOUT_HEURISTIC, ROLLOUT_RANDOM, SearchTrees, search_batch
from tarocchi_rl.shipped import bot_directory
from tarocchi_rl.variants import VariantSpec

from .args import Arg, check_spec_path, defaults
from .registry import AgentKind, make_agent, register_kind

MAX_ITERATIONS = 10**7  # iterations per decision: the tree holds one node per iteration (~48 bytes each)
MAX_TIME = 3600.0  # seconds per decision
MAX_C, MAX_C_PRIOR, MAX_WORKERS = 100.0, 1000.0, 256
#: a policy given by ``prior=`` / ``net=`` / ``belief=``
POLICY_FORMS = "an exported bot (onnx:DIR, bot:NAME or a DIR with manifest.json: no torch) or a PPO checkpoint"

ARGS = (
    Arg("iterations", "int", "iterations per decision", default=1000, lo=1, hi=MAX_ITERATIONS),
    Arg("time", "number", "instead of a fixed count: seconds per decision, amortised over the games searched "
        "together (iterations = time / the measured cost of a game-iteration)", lo=0.0, hi=MAX_TIME, above=True),
    Arg("c", "number", "UCB exploration constant (rewards: payoffs / the variant's payoff_scale)", default=0.7,
        lo=0.0, hi=MAX_C),
    Arg("rollout", "choice", "rollout policy", default="random", choices=("random", "heuristic")),
    Arg("workers", "int", "root parallelism: N independent searches (Ray actors when N > 1), root visits summed",
        default=1, lo=1, hi=MAX_WORKERS),
    Arg("prior", "text", f"a PUCT prior at the root: {POLICY_FORMS}"),
    Arg("c_prior", "number", "weight of the prior", default=2.0, lo=0.0, hi=MAX_C_PRIOR),
    Arg("net", "text", "a search guided by this policy/value network (same forms as prior): its policy the PUCT "
        "prior at every node, its value head the leaves' values"),
    Arg("c_puct", "number", "with net: the PUCT constant", default=1.5, lo=0.0, hi=MAX_C),
    Arg("mix", "number", "with net: a rollout's weight in a leaf's value (0: the value head alone)", default=0.0,
        lo=0.0, hi=1.0),
    Arg("lazy", "int", "with net and mix=1: a node's prior evaluated on its second visit, not when it is added",
        default=0, lo=0, hi=1),
    Arg("belief", "text", "learned inference: determinizations weighted by a belief model (same forms as prior, "
        "with a belief model; uniform: the uniform stand-in)"),
    Arg("belief_method", "choice", "with belief: the exact weighted DP (SIR where its tables would be too large), "
        "or sampling-importance-resampling (default exact)", choices=tuple(METHODS)),
    Arg("belief_samples", "int", f"with belief: SIR's candidate deals per determinization (default "
        f"{DEFAULT_BELIEF_SAMPLES})", lo=1, hi=MAX_BELIEF_SAMPLES),
    Arg("seed", "int", "the agent's random seed (left out: the seed it is built with)", lo=0, hi=SEED_MAX),
)
CHECK = {a.name: a for a in ARGS}
DEFAULT = defaults(ARGS)
#: bytes of node priors (float32[games, iterations + 1, n_actions]) held at once by a guided search: the games
#: of a batch are searched in groups that fit
GUIDED_PRIOR_BYTES = 2**27
#: iterations (summed over the games searched together) per compiled call; between two calls Python can raise
#: KeyboardInterrupt. About a second of search on one thread (random rollouts; heuristic ones: about two).
CHUNK_ITERATIONS = 100_000


def _search_in_chunks(state: BatchState, idx: NDArray[np.int64], tables: Any, iterations: int, c: float,
                      payoff_scale: float, rollout: int, priors: NDArray[np.float32], c_prior: float,
                      scratch: BatchState, seeds: NDArray[np.uint64], chunk: int,
                      log_b: NDArray[np.float64] | None = None, belief_method: str = "exact",
                      belief_samples: int = DEFAULT_BELIEF_SAMPLES,
                      seconds: float | None = None) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """The searches of games ``idx`` as compiled calls of ``chunk`` iterations each, continuing the same trees;
    with ``seconds``, no call starts that the last one's duration says would end after them (the first always
    runs; the searches stop short of ``iterations``)."""
    trees = SearchTrees(state, idx, tables, iterations, c, payoff_scale, rollout, priors, c_prior, seeds, scratch,
                        log_b, belief_method, belief_samples)
    now = time.perf_counter()
    stop = None if seconds is None else now + seconds
    while trees.done < iterations:  # KeyboardInterrupt is raised here, between two calls
        trees.run(min(chunk, iterations - trees.done))
        t = time.perf_counter()
        last, now = t - now, t
        if stop is not None and now + last > stop:
            break
    return trees.decisions()


#: with a time budget a search runs in about this many calls over its room (twice the iterations its measured
#: cost plans), the clock read between them: a position dearer than planned stops at its time (was: 1.5-4 times
#: its time at p99 with the iterations fixed by the cost measured on other positions)
DEADLINE_CALLS = 16


def _search(state: BatchState, idx: NDArray[np.int64], tables: Any, iterations: int, c: float, payoff_scale: float,
            rollout: int, priors: NDArray[np.float32], c_prior: float, seeds: NDArray[np.uint64],
            chunk_iterations: int | None = None, log_b: NDArray[np.float64] | None = None,
            belief_method: str = "exact", belief_samples: int = DEFAULT_BELIEF_SAMPLES,
            seconds_per_game: float | None = None) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Run one batch of searches (rewards: payoffs / payoff_scale); returns (actions int64[k], visits
    float64[k, A]).

    At most ``chunk_iterations`` (default :data:`CHUNK_ITERATIONS`) iterations, summed over games, run in one
    compiled call: a larger batch is searched by groups of games, and a search too long for one call is cut into
    pieces that continue the same trees (:class:`~tarocchi_rl.search.ismcts.SearchTrees`), so that Ctrl-C can
    stop it. Each game's search depends only on its seed: the results are those of one ``search_batch`` call.
    ``log_b`` float64[k, C, L] (``belief_method``, ``belief_samples``): determinizations weighted by a belief model
    (always through :class:`~tarocchi_rl.search.ismcts.SearchTrees`). ``seconds_per_game``: a deadline, a group of
    n games stops after n times it (``iterations`` is then the most; the visits say how many ran)."""
    budget = CHUNK_ITERATIONS if chunk_iterations is None else max(1, int(chunk_iterations))
    iterations = int(iterations)
    idx = np.ascontiguousarray(idx, np.int64)
    k, n_act = len(idx), priors.shape[1]
    visits = np.zeros((k, n_act), np.float64)
    actions = np.zeros(k, np.int64)
    group = max(1, min(k, max(numba.get_num_threads(), budget // max(iterations, 1))))
    for lo in range(0, k, group):
        rows = slice(lo, min(lo + group, k))
        n = rows.stop - lo
        scratch = alloc_state(n)
        if seconds_per_game is not None:  # timed: calls of a part of the iterations, the clock read between them
            actions[rows], visits[rows] = _search_in_chunks(
                state, idx[rows], tables, iterations, float(c), float(payoff_scale), int(rollout),
                np.ascontiguousarray(priors[rows]), float(c_prior), scratch, seeds[rows],
                max(1, min(budget // n, -(-iterations // DEADLINE_CALLS))), None if log_b is None else log_b[rows],
                belief_method, belief_samples, seconds=seconds_per_game * n)
        elif log_b is None and (n * iterations <= budget or k * iterations <= budget):  # short: one search_batch call
            scratch.rng[:] = seeds[rows]
            search_batch(state, idx[rows], tables, scratch, iterations, float(c), float(payoff_scale), int(rollout),
                         np.ascontiguousarray(priors[rows]), float(c_prior), visits[rows], actions[rows])
        else:
            actions[rows], visits[rows] = _search_in_chunks(
                state, idx[rows], tables, iterations, float(c), float(payoff_scale), int(rollout),
                np.ascontiguousarray(priors[rows]), float(c_prior), scratch, seeds[rows], max(1, budget // n),
                None if log_b is None else log_b[rows], belief_method, belief_samples)
    return actions, visits


class _RemoteSearcher:
    """A Ray actor: searches given root states of one variant (root parallelism)."""

    def __init__(self, spec: VariantSpec, options: dict) -> None:
        self.tables = spec.resolved_tables(options)

    def search(self, meta: NDArray[Any], cards: NDArray[Any], deck: NDArray[Any], rng: NDArray[Any], iterations: int,
               c: float, payoff_scale: float, rollout: int, priors: NDArray[np.float32], c_prior: float,
               seeds: NDArray[np.uint64], log_b: NDArray[np.float64] | None = None,
               belief_method: str = "exact", belief_samples: int = DEFAULT_BELIEF_SAMPLES) -> NDArray[np.float64]:
        # Ray hands the arrays over read-only; Numba types those apart and would compile every kernel again
        # (minutes per worker) instead of loading the cached writable-array ones: search writable copies.
        meta, cards, deck, rng, priors, seeds = (np.array(a) for a in (meta, cards, deck, rng, priors, seeds))
        log_b = None if log_b is None else np.array(log_b)
        st = BatchState(meta=meta, cards=cards, deck=deck, rng=rng)
        return _search(st, np.arange(len(meta)), self.tables, iterations, c, payoff_scale, rollout, priors,
                       c_prior, seeds, log_b=log_b, belief_method=belief_method, belief_samples=belief_samples)[1]


def policy_path(spec: str) -> str:
    """The file or directory of a ``prior=`` / ``net=`` value: ``bot:NAME`` (a shipped bot: a ValueError naming
    those shipped when there is none), ``onnx:DIR`` or a path (checked by :func:`check_spec_path`)."""
    directory = bot_directory(spec)
    if spec.startswith("bot:"):
        return str(directory)
    return check_spec_path("ismcts", spec if directory is None else str(directory))


def load_prior(prior: str) -> Any:
    """The prior policy: ``onnx:DIR``, ``bot:NAME`` or a bot directory (onnxruntime), else a PPO checkpoint
    (torch). Either runs its forward passes on one thread (a time budget is per decision: see
    :class:`~tarocchi_rl.rl.policy.PPOAgent`'s ``threads``)."""
    path = policy_path(prior)
    if prior.startswith(("onnx:", "bot:")) or (Path(path) / "manifest.json").is_file():
        return OnnxAgent(path)
    precheck_checkpoint(path)  # a missing or hostile file is refused before torch is imported
    from tarocchi_rl.rl.policy import PPOAgent  # torch: only for a checkpoint prior

    return PPOAgent(path=prior, threads=1)


#: ``belief=`` value of the uniform stand-in (no model: every candidate deal weighs the same)
UNIFORM_BELIEF = "uniform"


def load_belief(source: str) -> Any:
    """The belief model of ``belief=SOURCE`` (:func:`load_prior`'s forms), its ``beliefs`` answering; None for
    ``uniform``. A one-line ValueError when SOURCE has no belief model."""
    if not isinstance(source, str) or not source.strip():
        raise ValueError(f"ismcts: belief must be uniform, a bot directory or a PPO checkpoint, got {source!r}")
    if source.strip() == UNIFORM_BELIEF:
        return None
    shown = source if len(source) <= 80 else source[:77] + "..."
    try:
        model = load_prior(source)
    except ValueError as e:
        raise ValueError(f"ismcts: belief={shown}: {e}") from None
    if not getattr(model, "has_beliefs", False) or not callable(getattr(model, "beliefs", None)):
        raise ValueError(f"ismcts: belief={shown}: no belief model there (a bot directory needs belief.onnx, a "
                         "checkpoint a belief head: train with belief_loss > 0)")
    return model


class ISMCTSAgent(Agent):
    """SO-ISMCTS for every decision (module docstring)."""

    needs_mask = True  # the arena's mask rows: no second legal-mask pass over the whole batch
    legal_by_construction = True  # the search picks among the core's legal actions

    def __init__(self, iterations: int = DEFAULT["iterations"], c: float = DEFAULT["c"],
                 rollout: str = DEFAULT["rollout"], workers: int = DEFAULT["workers"], prior: str | None = None,
                 c_prior: float = DEFAULT["c_prior"], time_budget: float | None = None, seed: int = 0,
                 label: str | None = None, net: str | None = None, c_puct: float = DEFAULT["c_puct"],
                 mix: float = DEFAULT["mix"], lazy: int = DEFAULT["lazy"], belief: str | None = None,
                 belief_method: str | None = None, belief_samples: int | None = None) -> None:
        iterations, c, workers, c_prior, seed, c_puct, mix, lazy = (
            CHECK[k].check(f"ismcts: {k}", v) for k, v in (("iterations", iterations), ("c", c), ("workers", workers),
                                                          ("c_prior", c_prior), ("seed", seed), ("c_puct", c_puct),
                                                          ("mix", mix), ("lazy", lazy)))
        rollout = CHECK["rollout"].check("ismcts: rollout", rollout)
        if time_budget is not None:
            time_budget = CHECK["time"].check("ismcts: time", time_budget)
        if prior is not None:
            if not isinstance(prior, str) or not prior.strip():
                raise ValueError(f"ismcts: prior must be a path (a bot directory or a PPO checkpoint), got {prior!r}")
            policy_path(prior)
        if lazy and net is None:
            raise ValueError("ismcts: lazy=1 needs net (a network's priors to evaluate lazily)")
        check_lazy(bool(lazy), mix, "ismcts: lazy=1")
        if net is not None:
            if not isinstance(net, str) or not net.strip():
                raise ValueError(f"ismcts: net must be a path (a bot directory or a PPO checkpoint), got {net!r}")
            if prior is not None or workers > 1:
                raise ValueError("ismcts: net (a guided search) excludes prior and workers")
            policy_path(net)
        self.c_puct, self.mix, self.lazy = c_puct, mix, bool(lazy)
        self.iterations, self.c, self.rollout = iterations, c, rollout
        self.workers, self.c_prior, self.time_budget = workers, c_prior, time_budget
        self.rng = np.random.default_rng(seed)
        self.prior: Any = None
        if prior is not None:
            self.prior = load_prior(prior)
        self.net: Any = load_prior(net) if net is not None else None
        self._init_belief(belief, belief_method, belief_samples, net)
        self.needs_obs = self.prior is not None or self.net is not None or self.belief is not None
        self.name = label or f"ismcts:iterations={self.iterations}"
        self._actors: tuple[tuple, list[Any]] | None = None  # (variant key, Ray actor handles)
        self._cost: float | None = None  # time budgets: measured seconds per game-iteration (amortised)

    @property
    def variants(self) -> list[str] | None:
        """The variants this search plays: those of the models it uses (prior, net, belief: each trained on one),
        or None (every variant) without one."""
        bound = {v for m in (self.prior, self.net, self._belief_model)
                 if isinstance(v := getattr(m, "variant", None), str)}
        return sorted(bound) if bound else None

    def _init_belief(self, belief: str | None, method: str | None, belief_samples: int | None,
                     net: str | None) -> None:
        """``belief`` (its model: None for ``uniform``), ``belief_method`` and ``belief_samples``."""
        self.belief_method = "exact" if method is None else method
        m = DEFAULT_BELIEF_SAMPLES if belief_samples is None else belief_samples
        self.belief_samples = CHECK["belief_samples"].check("ismcts: belief_samples", m)
        CHECK["belief_method"].check("ismcts: belief_method", self.belief_method, shown=repr(method))
        if belief is None:
            if belief_samples is not None or method is not None:
                raise ValueError("ismcts: belief_method and belief_samples need belief=SOURCE (a belief model, or "
                                 "uniform)")
            self.belief: str | None = None
            self._belief_model: Any = None
            return
        same_as_net = net is not None and isinstance(belief, str) and belief.strip() == net.strip()
        self._belief_model = self.net if same_as_net else load_belief(belief)
        if same_as_net and not getattr(self.net, "has_beliefs", False):
            raise ValueError(f"ismcts: belief={belief}: no belief model there (a bot directory needs belief.onnx, "
                             "a checkpoint a belief head: train with belief_loss > 0)")
        self.belief = belief.strip()

    def _belief_kw(self) -> dict[str, Any]:
        """The searches' ``belief_method`` and ``belief_samples`` keywords."""
        return {"belief_method": self.belief_method, "belief_samples": self.belief_samples}

    def _log_beliefs(self, obs: NDArray[np.float32] | None, env: Any,
                     rows: NDArray[np.int64]) -> NDArray[np.float64] | None:
        """The log beliefs (float64[k, C, L]) of games ``rows`` of ``env`` to search, from their players'
        observations ``obs`` (one call of the model), or None without a belief."""
        if self.belief is None:
            return None
        assert obs is not None  # needs_obs
        n_players, n_cards = env.num_players, int(env.tables.params[P_CARDS])
        if self._belief_model is None:
            probs = uniform_beliefs(len(obs), n_players, n_cards)
        else:
            probs = self._belief_model.beliefs(obs)
        try:
            return log_beliefs(probs, n_players, n_cards)
        except ValueError as e:
            raise ValueError(f"ismcts: belief={self.belief}: {e} (a model of another variant?)") from None

    # -- Ray root parallelism ---------------------------------------------------------------------------------
    def _ray_actors(self, env: Any) -> list[Any]:
        import ray

        if not ray.is_initialized():
            ray.init(num_cpus=max(2, self.workers), log_to_driver=False, include_dashboard=False)
        key = (env.variant, tuple(sorted(env.options.items())))
        if self._actors is None or self._actors[0] != key:
            cls = ray.remote(num_cpus=1)(_RemoteSearcher)
            self._actors = (key, [cls.remote(env.spec, env.options) for _ in range(self.workers)])
        return self._actors[1]

    def _budget_iterations(self, run: Any, k: int, spent: float = 0.0) -> int:
        """Iterations per decision for the time budget: what is left of ``time`` after ``spent`` (seconds per
        game already spent on this decision before the search: the belief model's and the prior's forward
        passes) / the measured seconds per game-iteration (amortised over the ``k`` games searched together); at
        least 1. The first time, ``run(n)`` (a search of ``n`` iterations of these games) runs twice: 2 iterations
        (the compiled code loads), then 32, timed; each search after that updates the measure
        (:meth:`_measured`)."""
        assert self.time_budget is not None  # only called with a time budget
        if self._cost is None:
            run(2)
            t0 = time.perf_counter()
            run(32)
            self._cost = max(time.perf_counter() - t0, 1e-9) / (k * 32)
        return max(1, min(MAX_ITERATIONS, int((self.time_budget - spent) / self._cost)))

    def _measured(self, seconds: float, k: int, iterations: int) -> None:
        """A search of ``k`` games x ``iterations`` took ``seconds``: the cost's moving average follows it."""
        if self.time_budget is not None and self._cost is not None:
            self._cost = 0.8 * self._cost + 0.2 * max(seconds, 1e-9) / (k * iterations)

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
        payoff_scale = env.spec.payoff_scale  # rewards: payoffs / payoff_scale
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
        t_decision = time.perf_counter()  # a time budget counts the belief model and the prior too
        log_b = self._log_beliefs(None if obs is None else obs[todo], env, rows)  # once per decision
        if self.net is not None:
            assert obs is not None  # needs_obs
            out[todo], visits_all[todo] = self._guided(env, rows, obs[todo], legal[todo], payoff_scale, log_b,
                                                       (time.perf_counter() - t_decision) / len(rows))
            return out, visits_all
        priors = np.zeros((len(rows), env.num_actions), np.float32)
        if self.prior is not None:
            assert obs is not None  # needs_obs: the arena passes observations when there is a prior
            priors[:] = self.prior.probabilities(obs[todo], legal[todo], env)
        iters = self.iterations
        if self.time_budget is not None:
            cal = slice(0, min(len(rows), 8))

            def run(n: int) -> None:
                _search(env.state, rows[cal], env.tables, n, self.c, payoff_scale, self._kind(), priors[cal],
                        self.c_prior, self.rng.integers(1, 2**63, len(rows[cal]), dtype=np.uint64),
                        log_b=None if log_b is None else log_b[cal], **self._belief_kw())

            iters = self._budget_iterations(run, len(rows[cal]), (time.perf_counter() - t_decision) / len(rows))
        t0 = time.perf_counter()
        if self.workers == 1:
            seeds = self.rng.integers(1, 2**63, len(rows), dtype=np.uint64)
            timed: dict[str, Any] = {}
            if self.time_budget is not None:  # room for twice the planned iterations, stopped by the clock
                left = self.time_budget - (time.perf_counter() - t_decision) / len(rows)
                timed = {"seconds_per_game": max(0.0, left)}
                iters = min(MAX_ITERATIONS, 2 * iters)
            out[todo], visits_all[todo] = _search(env.state, rows, env.tables, iters, self.c, payoff_scale,
                                                  self._kind(), priors, self.c_prior, seeds, log_b=log_b,
                                                  **self._belief_kw(), **timed)
            done = max(1, int(round(visits_all[todo].sum() / len(rows))))  # a root visit an iteration
            self._measured(time.perf_counter() - t0, len(rows), done)
            return out, visits_all
        import ray

        st = env.state
        args = (st.meta[rows], st.cards[rows], st.deck[rows], st.rng[rows])
        futures = [a.search.remote(*args, iters, self.c, payoff_scale, self._kind(), priors, self.c_prior,
                                   self.rng.integers(1, 2**63, len(rows), dtype=np.uint64), log_b,
                                   self.belief_method, self.belief_samples)
                   for a in self._ray_actors(env)]
        visits = sum(ray.get(futures))  # root parallelism: the workers' root statistics merged
        self._measured(time.perf_counter() - t0, len(rows), iters)
        visits_all[todo] = visits
        visits = visits.copy()
        visits[~legal[todo]] = -1.0
        out[todo] = visits.argmax(axis=1)
        return out, visits_all


    # -- the guided search -------------------------------------------------------------------------------------
    def _evaluate(self, obs: NDArray[np.float32], mask: NDArray[np.bool_]) -> tuple[NDArray[np.float32],
                                                                                     NDArray[np.float32]]:
        """The network on k positions: (probabilities float32[k, A], values float32[k]), one forward pass."""
        probs, value = self.net.run(obs, mask)
        return np.asarray(probs, np.float32), np.asarray(value, np.float32)

    def _guided(self, env: Any, rows: NDArray[np.int64], obs: NDArray[np.float32], legal: NDArray[np.bool_],
                payoff_scale: float, log_b: NDArray[np.float64] | None = None,
                spent: float = 0.0) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Guided searches of games ``rows`` (their players' observations and legal actions), in groups whose
        node priors fit :data:`GUIDED_PRIOR_BYTES`; with a time budget the iterations follow the measured cost
        of a game-iteration (all games of a group share each forward pass) and what is left after ``spent``
        (seconds per game spent on this decision before the search)."""
        iters = self.iterations
        if self.time_budget is not None:
            def run(n: int) -> None:
                guided_search(env.state, rows, env.tables, env.num_players, env.num_actions, obs, legal,
                              self._evaluate, n, self.c_puct, payoff_scale,
                              self.rng.integers(1, 2**63, len(rows), dtype=np.uint64), mix=self.mix,
                              rollout=self.rollout, lazy=self.lazy, log_beliefs=log_b, **self._belief_kw())

            iters = self._budget_iterations(run, len(rows), spent)
        per_game = (iters + 1) * env.num_actions * 4
        group = max(1, min(len(rows), GUIDED_PRIOR_BYTES // per_game))
        actions = np.zeros(len(rows), np.int64)
        visits = np.zeros((len(rows), env.num_actions))
        t0 = time.perf_counter()
        for lo in range(0, len(rows), group):
            sl = slice(lo, lo + group)
            actions[sl], visits[sl] = guided_search(
                env.state, rows[sl], env.tables, env.num_players, env.num_actions, obs[sl], legal[sl],
                self._evaluate, iters, self.c_puct, payoff_scale,
                self.rng.integers(1, 2**63, len(rows[sl]), dtype=np.uint64), mix=self.mix, rollout=self.rollout,
                lazy=self.lazy, log_beliefs=None if log_b is None else log_b[sl], **self._belief_kw())
        self._measured(time.perf_counter() - t0, len(rows), iters)
        return actions, visits


def _build(values: dict[str, Any], seed: int, label: str) -> AgentLike:
    kw = dict(values)
    return ISMCTSAgent(label=label, time_budget=kw.pop("time"), **kw)


ISMCTS = register_kind(AgentKind("ismcts", "Information Set MCTS (tarocchi_rl.agents.ismcts.ISMCTSAgent): plain, "
                                 "guided by a network (net=), with learned inference (belief=)", build=_build,
                                 args=ARGS))


def parse_ismcts_spec(args: str, seed: int = 0) -> ISMCTSAgent:
    """The agent of the spec ``ismcts:ARGS`` (:data:`ARGS`)."""
    agent = make_agent(f"ismcts:{args}", seed)
    assert isinstance(agent, ISMCTSAgent)
    return agent
