"""Fixtures and hooks shared by the whole suite (helpers live in :mod:`tests.support`).

Layout: ``tests/<area>/`` (core, mineo, piedmont, french, agents, envs, rl, search, cli, ...), every folder a
package, so test modules import helpers as ``from tests.support.scenarios import Scenario`` and the independent
slow oracles as ``from tests.oracles.oracle_mineo import MineoOracle``; ``tests/support/`` holds the shared
helpers, grouped by area.
"""

import numpy as np
import pytest

# the helpers' plain asserts report their operands, as the tests' own do
pytest.register_assert_rewrite("tests.support")


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
