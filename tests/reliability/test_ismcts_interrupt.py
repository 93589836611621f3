"""Long ISMCTS searches are interruptible: they run as short compiled calls continuing the same trees, with
results identical to one ``search_batch`` call, and Ctrl-C (SIGINT) stops one within seconds."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from tarocchi_rl.agents import ismcts
from tarocchi_rl.batch import BatchEnv
from tarocchi_rl.variants import get_variant


def _positions(variant, n, seed, steps):
    env = BatchEnv(variant, n, seed=seed)
    for _ in range(steps):
        env.step(env.random_actions())
    return env


@pytest.mark.parametrize("variant", ["mineo", "french3"])
def test_searches_in_pieces_equal_one_call(variant):
    env = _positions(variant, 5, seed=13, steps=6)
    live = np.nonzero(~env.done())[0]
    k = len(live)
    rng = np.random.default_rng(0)
    seeds = rng.integers(1, 2**63, k, dtype=np.uint64)
    scale = get_variant(variant).payoff_scale
    for rollout in (ismcts.ROLLOUT_RANDOM, ismcts.ROLLOUT_HEURISTIC):
        for with_prior in (False, True):
            priors = np.zeros((k, env.num_actions), np.float32)
            if with_prior:
                priors[:] = rng.random((k, env.num_actions))
            args = (env.state, live, env.tables, 120, 0.7, scale, rollout, priors, 2.0, seeds)
            one = ismcts._search(*args, chunk_iterations=10**9)  # one search_batch call
            for chunk in (7, 120, 250):  # pieces of one search; groups of whole searches
                a, v = ismcts._search(*args, chunk_iterations=chunk)
                assert (a == one[0]).all() and (v == one[1]).all(), (rollout, with_prior, chunk)


CHILD = textwrap.dedent("""
    import signal, sys, numpy as np
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal (pytest-xdist workers ignore it)
    from tarocchi_rl.batch import BatchEnv
    from tarocchi_rl.agents import ismcts
    env = BatchEnv("mineo", 1, seed=3)
    for _ in range(20):
        env.step(env.random_actions())
    while env.legal_mask()[0].sum() < 2:  # a decision to search (the deal is far from over)
        env.step(env.random_actions())
    agent = ismcts.ISMCTSAgent(iterations=3_000_000, seed=1)
    ismcts._search(env.state, np.arange(1), env.tables, 40, 0.7, 10.0, 0, np.zeros((1, env.num_actions),
                   np.float32), 2.0, np.ones(1, np.uint64), chunk_iterations=10)  # compiled before the clock
    print("ready", flush=True)
    try:
        agent.search(None, env, np.arange(1))
        print("finished", flush=True)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
""")


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process")
def test_ctrl_c_stops_a_long_search():
    p = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env={**os.environ, "NUMBA_NUM_THREADS": "1"})
    try:
        assert p.stdout.readline().strip() == "ready", p.stderr.read()[-2000:]
        time.sleep(1.0)  # the search is running (3 million iterations: about half a minute)
        p.send_signal(signal.SIGINT)
        t = time.perf_counter()
        out, err = p.communicate(timeout=60)
        waited = time.perf_counter() - t
    finally:
        p.kill()
    assert out.strip() == "interrupted", err[-2000:]
    assert waited < 15, f"{waited:.1f} s from Ctrl-C to the end of the search"
