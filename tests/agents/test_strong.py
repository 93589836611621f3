"""``strong:NAME``: the shipped network guiding ISMCTS at a fixed time a decision."""

import numpy as np
import pytest

from tarocchi_rl.agents.ismcts import ISMCTSAgent
from tarocchi_rl.agents.specs import make_agent
from tarocchi_rl.agents.strong import DEFAULT_TIME, RECIPE
from tarocchi_rl.arena import run_arena
from tarocchi_rl.shipped import shipped_bots


def test_a_strong_bot_is_the_shipped_network_guiding_the_search_at_its_time():
    for name in shipped_bots():
        agent = make_agent(f"strong:{name}")
        assert isinstance(agent, ISMCTSAgent)
        assert agent.time_budget == DEFAULT_TIME and agent.rollout == RECIPE["rollout"]
        assert agent.prior is not None and agent.variants == [name]
    assert make_agent("strong:mineo,time=0.2").time_budget == 0.2


@pytest.mark.parametrize("spec, message", [
    ("strong:nope", "no shipped bot 'nope'"),
    ("strong:mineo,time=0", "time must be > 0"),
    ("strong:mineo,time=1e9", "time must be > 0 and <= 3600"),
    ("strong", "needs"),
    ("strong:mineo,iterations=5", "iterations"),
])
def test_bad_strong_specs_are_one_line_errors(spec, message):
    with pytest.raises(ValueError, match=message) as e:
        make_agent(spec)
    assert "\n" not in str(e.value)


def test_a_strong_bot_plays_legal_whole_deals_against_the_heuristic():
    result = run_arena("piedmont3", ["strong:piedmont3,time=0.002", "heuristic"], deals=2, make_agent=make_agent)
    assert np.isfinite(result["head_to_head"][0]["mean_difference_per_deal"])
    assert result["games"] == 2 * 6  # every game played to its end: the arena checks every move
