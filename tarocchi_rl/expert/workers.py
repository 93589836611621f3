"""The labelling workers behind one interface: in the learner's process, or Ray actors (one CPU each).

::

    pool = make_label_pool(cfg, ray_address)          # num_workers: 0 -> in process, else Ray actors
    results = pool.label(weights, deals, round)       # [{"shard": arrays, "stats": ...}] one per worker
    pool.close()

The round's deals are split evenly over the workers. Ray starts locally (``num_cpus = max(2, num_workers)``) unless
one is running or ``ray_address`` (else ``$RAY_ADDRESS``) names a cluster: a cluster's nodes add workers, as PPO's
rollout workers do (:mod:`tarocchi_rl.rl.workers`). A worker that dies is replaced by a new actor with a fresh
random stream and its share of the round is played again on it, once; more than :data:`MAX_REPLACEMENTS` deaths in a
run is an error.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from .config import ExpertConfig
from .labels import Labeller

MAX_REPLACEMENTS = 20


class WorkerError(RuntimeError):
    """The labelling workers cannot go on (too many deaths in one run)."""


def split_deals(deals: int, workers: int) -> list[int]:
    """``deals`` split over ``workers`` as evenly as possible (the first ones get one more)."""
    base, extra = divmod(int(deals), int(workers))
    return [base + (1 if k < extra else 0) for k in range(workers)]


class LocalLabelPool:
    """One labeller in the learner's process (``num_workers: 0``): debugging and tests."""

    def __init__(self, cfg: ExpertConfig) -> None:
        self.workers = [Labeller(cfg.to_dict(), 0, cfg.torch_threads)]

    def __len__(self) -> int:
        return 1

    def label(self, weights: dict, deals: int, round_: int) -> list[dict[str, Any]]:
        return [self.workers[0].label(weights, deals, round_)]

    def close(self) -> None:
        self.workers = []


class RayLabelPool:
    """``cfg.num_workers`` Ray actors, worker k seeded by (seed, k) (module docstring)."""

    def __init__(self, cfg: ExpertConfig, ray_address: str | None = None) -> None:
        import ray

        address = ray_address or os.environ.get("RAY_ADDRESS") or None
        if not ray.is_initialized():
            if address:
                ray.init(address=address, log_to_driver=False)
            else:
                ray.init(num_cpus=max(2, cfg.num_workers), log_to_driver=False, include_dashboard=False)
        self._ray = ray
        self._cfg = cfg.to_dict()
        self._actor: Any = ray.remote(num_cpus=1)(Labeller)
        self.workers: list[Any] = [self._actor.remote(self._cfg, k, 1) for k in range(cfg.num_workers)]
        self.generations = [0] * cfg.num_workers
        self.replacements = 0

    def __len__(self) -> int:
        return len(self.workers)

    def label(self, weights: dict, deals: int, round_: int) -> list[dict[str, Any]]:
        ref = self._ray.put(weights)
        shares = split_deals(deals, len(self.workers))
        handles = [(k, w.label.remote(ref, n, round_)) for k, (w, n) in enumerate(zip(self.workers, shares,
                                                                                      strict=True)) if n > 0]
        out = []
        for k, h in handles:
            try:
                out.append(self._ray.get(h))
            except self._ray.exceptions.RayActorError as e:
                self._replace(k, e)
                out.append(self._ray.get(self.workers[k].label.remote(ref, shares[k], round_)))
        return out

    def _replace(self, k: int, error: Exception) -> None:
        self.replacements += 1
        if self.replacements > MAX_REPLACEMENTS:
            raise WorkerError(f"labelling worker {k} died ({type(error).__name__}) and {MAX_REPLACEMENTS} workers "
                              "have already been replaced in this run: giving up") from None
        self.generations[k] += 1
        stream = k + self.generations[k] * len(self.workers)
        print(f"warning: labelling worker {k} died ({type(error).__name__}); replaced (seed stream {stream}), its "
              "share of the round played again", file=sys.stderr)
        try:
            self._ray.kill(self.workers[k])
        except Exception:
            pass
        self.workers[k] = self._actor.remote(self._cfg, stream, 1)

    def close(self) -> None:
        for w in self.workers:
            try:
                self._ray.kill(w)
            except Exception:
                pass
        self.workers = []


LabelPool = LocalLabelPool | RayLabelPool


def make_label_pool(cfg: ExpertConfig, ray_address: str | None = None) -> LabelPool:
    """The pool the config asks for: ``num_workers: 0`` -> in process, else Ray actors."""
    return LocalLabelPool(cfg) if cfg.num_workers == 0 else RayLabelPool(cfg, ray_address)
