"""Differential test: the Numba core against the independent oracle (tests/oracles/oracle_mineo.py).

Random deals are played with uniformly random legal actions; at every decision both must agree on the player
to act and the exact set of legal actions, and at the end on the payoffs, the card points and the jochi.
"""

import numpy as np
import pytest

from tests.oracles.differential import PreferCommitments
from tests.oracles.differential import play_mineo_both as play_both
from tests.support.engine import JIT_DISABLED

N_FAST = 60 if JIT_DISABLED else 2000


def _biased_rng(seed):
    """A policy RNG; the deals themselves come from the engine seed."""
    return np.random.default_rng(seed + 1_000_003)


@pytest.mark.nojit
def test_core_matches_oracle_on_random_deals():
    for seed in range(N_FAST):
        play_both(seed)


@pytest.mark.nojit
def test_core_matches_oracle_without_early_solo():
    for seed in range(N_FAST // 4):
        play_both(10_000 + seed, early_solo=False)


def test_core_matches_oracle_on_calls_and_commitments():
    n = 40 if JIT_DISABLED else 1000
    for seed in range(n):
        play_both(20_000 + seed, policy_rng=PreferCommitments(seed))


@pytest.mark.slow
def test_core_matches_oracle_many_deals():
    for seed in range(100_000, 120_000):
        play_both(seed, policy_rng=PreferCommitments(seed) if seed % 2 else None)
