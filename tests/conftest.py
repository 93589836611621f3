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


# tarok3 / tarok4 (issue 34) are registered before the parts below know them; each entry: a test function whose
# tarok parametrizations fail today, and why (xfail, not strict: they pass as soon as that part is written)
_TAROK_PENDING = {
    "tests/cli/test_shipped.py::test_a_wheel_ships_the_configs_and_bots_and_they_work_outside_the_repository":
        "no shipped training config or bot yet",
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        base, _, params = item.nodeid.partition("[")
        reason = _TAROK_PENDING.get(base)
        if reason and ("tarok" in params or not params):
            item.add_marker(pytest.mark.xfail(reason=f"tarok3/tarok4: {reason}", strict=False))
