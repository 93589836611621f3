"""``tarocchi-rl warm``: compile the Numba kernels into Numba's on-disk cache before they are needed.

On a cold cache the first use of the kernels compiles them: about six and a half minutes of one core (the engine
and the heuristic two, the ISMCTS search three, the guided search and the learned inference two). Every process
that starts before a kernel's cache file is written compiles it again, so a test run, a cluster's workers or a
server started cold pay it several times over. This command pays it once: the kernels every agent needs, in this
process, then the search kernels and the network paths in two processes side by side (both load the first
stage's kernels from the cache).

Each stage plays one deal of every variant with the agents that reach those kernels (:data:`STAGES`); an entry
that names the shipped bot (``{v}`` in ``bot:{v}``) plays only the variants that have one. The first stage also
plays one deal of every variant through the bot protocol (the referee and the heuristic's rebuilt views): a family
with play rules has tables of their own Numba type (``core.tables.PlayRulesTables``), so its kernels are compiled
apart from the others'.
"""

import contextlib
import io
import multiprocessing
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from . import engine
from .agents.specs import make_agent
from .arena import run_arena
from .bits import seed_states
from .bot import BotServer, play_deal
from .core.state import alloc_state
from .shipped import shipped_bots
from .variants import VARIANTS, get_variant

# (stage, [(what, agent specs played against each other per variant)]); {v} is the variant's name
FIRST = [("engine and heuristic", ["heuristic", "random"])]
SEARCH = [("ISMCTS, heuristic rollouts", ["ismcts:iterations=4,rollout=heuristic", "heuristic"]),
          ("learned inference, SIR", ["ismcts:iterations=4,belief=uniform,belief_method=sir", "heuristic"])]
NETWORK = [("shipped bot", ["bot:{v}", "heuristic"]),
           ("guided search", ["ismcts:iterations=4,net=bot:{v}", "heuristic"]),
           ("learned inference, exact", ["ismcts:iterations=4,belief=uniform", "heuristic"])]
STAGES = {"first": FIRST, "search": SEARCH, "network": NETWORK}


def warm_stage(stage: str) -> list[tuple[str, float]]:
    """Play one deal of every variant for each entry of ``STAGES[stage]``: [(what, seconds)]."""
    done = []
    for what, specs in STAGES[stage]:
        t = time.perf_counter()
        for v in VARIANTS:
            if any("bot:{v}" in s for s in specs) and v not in shipped_bots():
                continue  # no shipped bot for this variant (yet)
            with contextlib.redirect_stdout(io.StringIO()):
                run_arena(v, [s.format(v=v) for s in specs], deals=1, make_agent=make_agent)
        done.append((what, time.perf_counter() - t))
    if stage == "first":  # the bot protocol's rebuilt views (each family's tables type compiles its own kernels)
        t = time.perf_counter()
        bot = BotServer("heuristic", make_agent)
        for v in VARIANTS:
            play_deal(bot, v, seed=1)  # only compiles: the protocol's tests judge the answers
        done.append(("bot protocol", time.perf_counter() - t))
    if stage == "network":  # the fused random-play kernel (bench)
        t = time.perf_counter()
        for v in VARIANTS:
            spec = get_variant(v)
            st = alloc_state(2)
            st.rng[:] = seed_states(0, 2)
            engine.rollout_random_batch(st, spec.tables(spec.resolve_options({})), 1, np.zeros((2, 4), np.int64),
                                        np.zeros((2, 2), np.int64))
        done.append(("fused rollout", time.perf_counter() - t))
    return done


def warm(report: Callable[[str], None] = print, parallel: Sequence[str] = ("search", "network")) -> float:
    """Run the first stage here, then the ``parallel`` stages in processes of their own (spawned, one each);
    ``report`` gets a line per entry. Returns the seconds it took."""
    t0 = time.perf_counter()
    for what, s in warm_stage("first"):
        report(f"{what}: {s:.0f} s")
    with ProcessPoolExecutor(len(parallel), mp_context=multiprocessing.get_context("spawn")) as pool:
        for lines in pool.map(warm_stage, parallel):
            for what, s in lines:
                report(f"{what}: {s:.0f} s")
    return time.perf_counter() - t0
