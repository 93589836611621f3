"""The rollout workers behind one interface: in the learner's process, or Ray actors.

::

    workers = make_worker_pool(cfg, ray_address)       # num_workers: 0 -> LocalPool, else RayPool
    batches = workers.sample(weights, league, version)  # one rollout per worker (rollout.RolloutWorker.collect)
    states  = workers.state_dicts()                      # their random states (checkpoints: exact resume)
    workers.load_state_dicts(states)
    workers.close()

``weights`` is the learner network's ``state_dict`` (CPU tensors), sent with every rollout; ``league`` the
snapshot pool, a list of (snapshot id, state_dict), sent only when ``version`` differs from the last one sent
(the workers keep the networks they already hold).

With ``prefetch`` (``async_rollouts``, Ray only) one rollout stays in flight: ``sample`` returns the rollout
started at the previous call (played with the weights of then: one update old, the PPO ratio uses the
behaviour log-probabilities it was sampled with) and, before returning, starts the next with the weights it
was given, so the workers play while the learner trains. The first call starts one and waits for it.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from .config import TrainConfig
from .rollout import AgentFactory, RolloutWorker


class WorkerError(RuntimeError):
    """The rollout workers cannot go on (too many deaths in one run)."""


class WorkerPool:
    """Rollout workers (module docstring). Subclasses implement ``_start``, ``_wait`` and the state calls."""

    prefetch = False
    workers: list[Any]  # the rollout workers (RolloutWorker, or Ray actor handles: Any)

    def __init__(self) -> None:
        self._in_flight: Any = None  # the handle of a started rollout not yet returned
        self._league_sent = -1  # the league version the workers hold

    def __len__(self) -> int:
        return len(self.workers)

    def sample(self, weights: dict, league: list, league_version: int) -> list[dict]:
        """One rollout batch per worker (the arrays and ``stats`` of :meth:`RolloutWorker.collect`)."""
        if self._in_flight is None:
            self._in_flight = self._start_rollout(weights, league, league_version)
        batches = self._wait(self._in_flight)
        self._in_flight = None
        if self.prefetch:  # the next rollout plays while the learner trains on these
            self._in_flight = self._start_rollout(weights, league, league_version)
        return batches

    def _start_rollout(self, weights: dict, league: list, league_version: int) -> Any:
        snapshots = list(league) if league_version != self._league_sent else None
        self._league_sent = league_version
        return self._start(weights, snapshots)

    def _start(self, weights: dict, snapshots: list | None) -> Any:
        raise NotImplementedError

    def _wait(self, handle: Any) -> list[dict]:
        raise NotImplementedError

    def state_dicts(self) -> list[dict]:
        """Every worker's random state (:meth:`RolloutWorker.get_state`)."""
        raise NotImplementedError

    def load_state_dicts(self, states: list[dict]) -> None:
        """Restore :meth:`state_dicts` (one per worker: a ValueError when the count differs)."""
        raise NotImplementedError

    def _check_count(self, states: list[dict]) -> None:
        if len(states) != len(self.workers):
            raise ValueError(f"{len(states)} worker states for {len(self.workers)} workers")

    def close(self) -> None:
        """Stop the workers (a rollout in flight is dropped)."""


class LocalPool(WorkerPool):
    """One worker in the learner's process (``num_workers: 0``): debugging, exact reproducibility tests. Its
    rollout is played when it is started; ``async_rollouts`` has no effect."""

    def __init__(self, cfg: TrainConfig, agent_factory: AgentFactory | None = None) -> None:
        super().__init__()
        self.workers: list[Any] = [RolloutWorker(cfg.to_dict(), 0, cfg.torch_threads, agent_factory)]

    def _start(self, weights: dict, snapshots: list | None) -> list[dict]:
        return [w.collect(weights, snapshots) for w in self.workers]

    def _wait(self, handle: Any) -> list[dict]:
        return handle

    def state_dicts(self) -> list[dict]:
        return [w.get_state() for w in self.workers]

    def load_state_dicts(self, states: list[dict]) -> None:
        self._check_count(states)
        for w, s in zip(self.workers, states, strict=True):
            w.set_state(s)


class RayPool(WorkerPool):
    """``cfg.num_workers`` Ray actors (1 CPU each), worker k seeded by (seed, k). Starts a local Ray
    (``num_cpus = max(2, num_workers)``) unless one is running or ``ray_address`` (else ``$RAY_ADDRESS``, which
    the job server sets for a ``ray job``) names a cluster.

    **A worker that dies is replaced.** When an actor's process or node is lost (``RayActorError``: killed,
    out of memory, node gone), a new actor takes its slot and the call is repeated on it once; only that
    worker's rollout in flight is lost (``sample`` returns the others' batches and the run goes on). A
    replacement plays a fresh random stream, (seed, k + generation * num_workers), so it never repeats the deals
    of the one it replaces, and it is sent the league before its first rollout. A task that raises (a bug, not a
    death) is not retried. More than :data:`MAX_REPLACEMENTS` deaths in a run is an error (something kills them
    systematically)."""

    MAX_REPLACEMENTS = 20

    def __init__(self, cfg: TrainConfig, ray_address: str | None = None,
                 agent_factory: AgentFactory | None = None) -> None:
        super().__init__()
        import ray

        ray_address = ray_address or os.environ.get("RAY_ADDRESS") or None  # a Ray job's cluster, for one
        if not ray.is_initialized():
            if ray_address:
                ray.init(address=ray_address, log_to_driver=False)
            else:
                ray.init(num_cpus=max(2, cfg.num_workers), log_to_driver=False, include_dashboard=False)
        self._ray = ray
        self.prefetch = cfg.async_rollouts
        self._actor = ray.remote(num_cpus=1)(RolloutWorker)
        self._cfg_dict = cfg.to_dict()
        self._agent_factory = agent_factory  # a module-level function: Ray pickles it by reference
        self.workers: list[Any] = [self._actor.remote(self._cfg_dict, k, 1, agent_factory)
                                   for k in range(cfg.num_workers)]
        self.generations = [0] * cfg.num_workers  # how many times each slot was replaced
        self.replacements = 0
        self._league: list = []  # the league last sent, for replacements

    def _start(self, weights: dict, snapshots: list | None) -> list[Any]:
        if snapshots is not None:
            self._league = snapshots
        wref, sref = self._ray.put(weights), self._ray.put(snapshots)  # one copy in the object store for all
        self._weights_ref = wref
        return [w.collect.remote(wref, sref) for w in self.workers]

    def _wait(self, handle: list[Any]) -> list[dict]:
        batches = []
        for k, ref in enumerate(handle):
            try:
                batches.append(self._ray.get(ref))
            except self._ray.exceptions.RayActorError as e:
                self._replace(k, e)  # its rollout is lost; the next one plays on the new actor
        if not batches:  # every worker died: play this rollout again on the replacements
            league = self._ray.put(self._league)
            return self._get_each(lambda w: w.collect.remote(self._weights_ref, league))
        return batches

    def _get_each(self, call: Any) -> list[Any]:
        """``ray.get`` of ``call(actor)`` on every worker; a dead actor is replaced and asked again once."""
        out = []
        for k in range(len(self.workers)):
            try:
                out.append(self._ray.get(call(self.workers[k])))
            except self._ray.exceptions.RayActorError as e:
                self._replace(k, e)
                out.append(self._ray.get(call(self.workers[k])))
        return out

    def _replace(self, k: int, error: Exception) -> None:
        """A new actor in slot k (fresh random stream, holding the league), after a warning on stderr."""
        self.replacements += 1
        if self.replacements > self.MAX_REPLACEMENTS:
            raise WorkerError(f"rollout worker {k} died ({type(error).__name__}) and {self.MAX_REPLACEMENTS} "
                               "workers have already been replaced in this run: giving up") from None
        self.generations[k] += 1
        stream = k + self.generations[k] * len(self.workers)
        why = " ".join(str(error).split())[:160]
        print(f"warning: rollout worker {k} died ({type(error).__name__}: {why}); replaced (seed stream {stream}), "
              "its rollout in flight is lost", file=sys.stderr)
        try:
            self._ray.kill(self.workers[k])
        except Exception:
            pass
        self.workers[k] = self._actor.remote(self._cfg_dict, stream, 1, self._agent_factory)
        if self._league:
            self._ray.get(self.workers[k].set_pool.remote(self._league))

    def state_dicts(self) -> list[dict]:
        return self._get_each(lambda w: w.get_state.remote())

    def load_state_dicts(self, states: list[dict]) -> None:
        self._check_count(states)
        self._ray.get([w.set_state.remote(s) for w, s in zip(self.workers, states, strict=True)])

    def close(self) -> None:
        for w in self.workers:
            self._ray.kill(w)
        self.workers, self._in_flight = [], None


def make_worker_pool(cfg: TrainConfig, ray_address: str | None = None,
                     agent_factory: AgentFactory | None = None) -> WorkerPool:
    """The pool the config asks for: ``num_workers: 0`` -> :class:`LocalPool`, else :class:`RayPool`.
    ``agent_factory`` builds the agents of ``league.opponent`` and ``others`` from their specs (default: the
    baselines only; the CLI passes ``tarocchi_rl.agents.specs.make_agent``)."""
    return LocalPool(cfg, agent_factory) if cfg.num_workers == 0 else RayPool(cfg, ray_address, agent_factory)
