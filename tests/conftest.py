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
_TAROK_REBUILD = ("a bot's rebuild of its seat's view fails in tarok's card play ('no deal consistent with the view "
                  "before it allows it'): the core records no exclusions for tarok's own play rules (klop's and the "
                  "beggars' must-beat, the Pagat), so the determinizer's redraws rarely explain another seat's card, "
                  "and a redraw misplaces klop's talon cards (the determinizer's entry below) (the heuristic through "
                  "the referee: tarok3 7 of 16 deals, tarok4 25 of 40 end in a bot error)")
_TAROK_PENDING = {
    "tests/search/test_determinize.py::test_exact_samples_are_accepted_by_the_oracle":
        "the exact determinizer's samples are wrong for tarok: it writes a sample's talon places by dense id "
        "(_fix_deck), so the talon once shown lies in another order (other sets: every sample at the talon choice "
        "is rejected) and in klop, once a talon card is given, places are stale (a card twice in the deal, other "
        "cards given: every sample rejected); and it draws deals tarok refuses (a hand without a tarok, "
        "ONE_IN_EVERY_HAND: tarok4 6 of 2,576 random positions' samples)",
    "tests/cli/test_shipped.py::test_every_variant_has_a_shipped_config_that_is_the_repository_file":
        "no shipped training config (configs/ppo_tarok3.yaml, ppo_tarok4.yaml) yet",
    "tests/cli/test_shipped.py::test_a_wheel_ships_the_configs_and_bots_and_they_work_outside_the_repository":
        "no shipped training config or bot yet",
    "tests/web/test_web_app.py::test_act_answers_as_the_bot_server": _TAROK_REBUILD,
    "tests/bot/test_protocol.py::test_heuristic_over_the_protocol_plays_as_the_heuristic_on_the_real_game":
        _TAROK_REBUILD,
    "tests/bot/test_clients.py::test_every_variant_played_through_the_client_pays_as_in_process": _TAROK_REBUILD,
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        base, _, params = item.nodeid.partition("[")
        reason = _TAROK_PENDING.get(base)
        if reason and ("tarok" in params or not params):
            item.add_marker(pytest.mark.xfail(reason=f"tarok3/tarok4: {reason}", strict=False))
