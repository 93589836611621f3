"""``experiments/studies/search_vs.py``: a duplicate match of a search agent against the heuristic, timed per
decision."""

import json
import re

from .scripts import ok, run_script


def test_a_match_is_written_with_each_agents_time_per_decision(tmp_path):
    out = tmp_path / "vs.json"
    ok(run_script("search_vs", "--variant", "french3", "--deals", "1", "--pair", "ismcts:iterations=4", "heuristic",
                  "--out", str(out)))
    r = json.loads(out.read_text())
    assert r["variant"] == "french3" and len(r["rows"]) == 1
    row = r["rows"][0]
    assert (row["a"], row["b"], row["deals"]) == ("ismcts:iterations=4", "heuristic", 1)
    assert row["decisions_a"] > 0 and row["decisions_b"] > 0
    assert row["ms_per_decision_a"] > 0 and row["ms_per_decision_b"] > 0
    lo, hi = row["ci95"]
    assert lo <= row["mean_a_vs_b"] <= hi and 0 <= row["win_rate_a"] <= 1
    d_lo, d_hi = row["a_minus_b_ci95"]  # head to head: the first's score minus the second's, the same sign
    assert d_lo <= row["a_minus_b"] <= d_hi and row["a_minus_b"] * row["mean_a_vs_b"] >= 0
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", r["date"])  # the results pages compare it with the bots' export days
