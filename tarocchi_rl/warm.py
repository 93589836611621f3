"""``tarocchi-rl warm``: compile the Numba kernels into Numba's on-disk cache before they are needed.

On a cold cache the first use of the kernels compiles them: about seventeen minutes of one core (the engine and
the heuristic five, the ISMCTS search and the learned inference eight, the guided search and the fused rollout
three). Every process that starts before a kernel's cache file is written compiles it again, so a test run, a
cluster's workers or a server started cold pay it several times over. This command pays it once, on two
processes: the kernels every agent needs, then the search kernels and the network paths (which load the first
stage's kernels from the cache).

A kernel is compiled once per Numba type of its arguments, and each family's tables have a type of their own (its
``Tables``: the kernels compiled for a family hold its hooks alone): the variants fall into groups by their tables' type
(:func:`tables_groups`), and each stage runs once per group, the groups side by side, since they compile
different signatures of the same kernels. Numba writes a kernel's cache index without a lock (read, add the
entry, write back), so two processes saving two signatures of one kernel at once could leave the index naming
the other's code: the warm processes hold one lock file around every save (:func:`serialise_cache_saves`).

Each stage plays one deal of every variant with the agents that reach those kernels (:data:`STAGES`); an entry
that names the shipped bot (``{v}`` in ``bot:{v}``) plays only the variants that have one. The first stage also
steps a batch of SERIAL_BELOW games of every variant (one deal plays fewer: the serial loops) and plays one deal
of every variant through the bot protocol (the referee and the heuristic's rebuilt views).
"""

import contextlib
import fcntl
import io
import multiprocessing
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np

from . import engine
from .agents.specs import make_agent
from .arena import run_arena
from .batch import BatchEnv
from .bits import seed_states
from .bot import BotServer, play_deal
from .core.parallel import SERIAL_BELOW
from .core.state import alloc_state
from .policies.heuristic import HeuristicAgent
from .shipped import shipped_bots
from .variants import VARIANTS, get_variant

# (stage, [(what, agent specs played against each other per variant)]); {v} is the variant's name
FIRST = [("engine and heuristic", ["heuristic", "random"])]
SEARCH = [("ISMCTS, heuristic rollouts", ["ismcts:iterations=4,rollout=heuristic", "heuristic"]),
          ("learned inference, SIR", ["ismcts:iterations=4,belief=uniform,belief_method=sir", "heuristic"])]
_NETWORK = [("shipped bot", ["bot:{v}", "heuristic"]),
           ("guided search", ["ismcts:iterations=4,net=bot:{v}", "heuristic"]),
           ("learned inference, exact", ["ismcts:iterations=4,belief=uniform", "heuristic"])]
STAGES = {"first": FIRST, "search": SEARCH, "network": _NETWORK}


def tables_groups() -> list[tuple[str, ...]]:
    """The variants grouped by the Numba type of their tables, in registry order: the kernels compiled for one
    variant of a group serve them all."""
    groups: dict[type, list[str]] = {}
    for v in VARIANTS:
        spec = get_variant(v)
        groups.setdefault(type(spec.resolved_tables()), []).append(v)
    return [tuple(g) for g in groups.values()]


def _warm_stage(stage: str, variants: Sequence[str] = tuple(VARIANTS)) -> list[tuple[str, float]]:
    """Play one deal of each of ``variants`` for each entry of ``STAGES[stage]``: [(what, seconds)]."""
    done = []
    for what, specs in STAGES[stage]:
        t = time.perf_counter()
        for v in variants:
            if any("bot:{v}" in s for s in specs) and v not in shipped_bots():
                continue  # no shipped bot for this variant (yet)
            with contextlib.redirect_stdout(io.StringIO()):
                run_arena(v, [s.format(v=v) for s in specs], deals=1, make_agent=make_agent)
        done.append((what, time.perf_counter() - t))
    if stage == "first":  # the batch loops' parallel set (one deal above plays a few games: the serial set)
        t = time.perf_counter()
        for v in variants:
            env = BatchEnv(v, SERIAL_BELOW, seed=0)
            env.step(HeuristicAgent().act(env.observe(), env.legal_mask(), env))
            env.step(env.random_actions())
        done.append(("parallel batch loops", time.perf_counter() - t))
        # the bot protocol's rebuilt views (each family's tables type compiles its own kernels)
        t = time.perf_counter()
        bot = BotServer("heuristic", make_agent)
        for v in variants:
            play_deal(bot, v, seed=1)  # only compiles: the protocol's tests judge the answers
        done.append(("bot protocol", time.perf_counter() - t))
    if stage == "network":  # the fused random-play kernel (bench)
        t = time.perf_counter()
        for v in variants:
            spec = get_variant(v)
            st = alloc_state(2)
            st.rng[:] = seed_states(0, 2)
            engine.rollout_random_batch(st, spec.resolved_tables(), 1, np.zeros((2, 4), np.int64),
                                        np.zeros((2, 2), np.int64))
        done.append(("fused rollout", time.perf_counter() - t))
    return done


def serialise_cache_saves(lock_path: str) -> None:
    """From now on, every save to Numba's cache in this process holds ``lock_path`` (an exclusive ``flock``): the
    saves of the processes sharing that path, each a read-extend-write of a kernel's index, come one at a time."""
    from numba.core.caching import IndexDataCacheFile

    unlocked: Any = IndexDataCacheFile.save

    def save(self: Any, key: Any, data: Any) -> None:
        with open(lock_path, "a") as lock:  # the lock goes with the file's closing
            fcntl.flock(lock, fcntl.LOCK_EX)
            unlocked(self, key, data)

    IndexDataCacheFile.save = save


def _stage_lines(task: tuple[str, tuple[str, ...]]) -> list[str]:
    stage, variants = task
    return [f"{what} ({', '.join(variants)}): {s:.0f} s" for what, s in _warm_stage(stage, variants)]


def warm(report: Callable[[str], None] = print, parallel: Sequence[str] = ("search", "network"),
         workers: int = 2) -> float:
    """Run the first stage, then the ``parallel`` stages, each once per group of :func:`tables_groups`, on
    ``workers`` processes (spawned) whose cache saves take turns; ``report`` gets a line per entry and group.
    Returns the seconds it took."""
    t0 = time.perf_counter()
    groups = tables_groups()
    with tempfile.TemporaryDirectory() as tmp:
        lock = os.path.join(tmp, "numba-cache.lock")
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                 initializer=serialise_cache_saves, initargs=(lock,)) as pool:
            for stages in (["first"], list(parallel)):
                for lines in pool.map(_stage_lines, [(s, g) for s in stages for g in groups]):
                    for line in lines:
                        report(line)
    return time.perf_counter() - t0
