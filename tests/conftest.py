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
_TAROK_HEURISTIC = "the heuristic has no tarok rules yet (its family hooks, issue 34); the bots default to it"
_TAROK_PENDING = {
    "tests/search/test_determinize.py::test_exact_samples_are_accepted_by_the_oracle":
        "the determinizer's oracle assumes a deck with EX; no tarok determinizer hooks yet",
    "tests/web/test_web_table.py::test_whole_deals_show_the_human_only_what_his_seat_may_see": _TAROK_HEURISTIC,
    "tests/cli/test_play.py::test_a_whole_deal_with_bots_at_every_other_seat": _TAROK_HEURISTIC,
    "tests/security/test_web_privacy.py::test_no_message_before_over_names_the_seed_or_a_card_the_seat_may_not_know":
        _TAROK_HEURISTIC,
    "tests/web/test_web_app.py::test_a_whole_deal_over_the_websocket": _TAROK_HEURISTIC,
    "tests/web/test_web_app.py::test_act_answers_as_the_bot_server": _TAROK_HEURISTIC,
    "tests/browser/test_browser.py::test_a_deal_by_clicking_scores_as_its_record": "the web table's tarok page",
    "tests/cli/test_shipped.py::test_every_variant_has_a_shipped_config_that_is_the_repository_file":
        "no shipped training config (configs/ppo_tarok3.yaml, ppo_tarok4.yaml) yet",
    "tests/cli/test_shipped.py::test_a_wheel_ships_the_configs_and_bots_and_they_work_outside_the_repository":
        "no shipped training config or bot yet",
    "tests/web/test_openapi.py::test_the_get_routes_answer_as_described":
        "the bot protocol's variant list (bot.py VARIANTS) does not name tarok yet",
    "tests/web/test_web_app.py::test_a_bot_seated_at_a_variant_it_does_not_play_is_refused_before_the_deal":
        "the bot protocol's variant list (bot.py VARIANTS) does not name tarok yet",
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        base, _, params = item.nodeid.partition("[")
        reason = _TAROK_PENDING.get(base)
        if reason and ("tarok" in params or not params):
            item.add_marker(pytest.mark.xfail(reason=f"tarok3/tarok4: {reason}", strict=False))
