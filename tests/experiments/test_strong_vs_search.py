"""``experiments/studies/strong_vs_search.py``: the strong bot against a search on the first frozen deals, resumable."""

import json

from .scripts import ok, run_script


def test_a_tiny_match_is_written_and_a_rerun_plays_nothing_again(tmp_path):
    args = ("--variant", "piedmont3", "--deals", "2", "--time", "0.002", "--opponent",
            "ismcts:iterations=4,rollout=heuristic", "--out", str(tmp_path))
    done = ok(run_script("strong_vs_search", *args))
    r = json.loads((tmp_path / "piedmont3.json").read_text())
    assert r["a"] == "strong:piedmont3,time=0.002" and r["b"] == "ismcts:iterations=4,rollout=heuristic"
    assert r["deals"] == 2 and r["a_minus_b_ci95"][0] <= r["a_minus_b"] <= r["a_minus_b_ci95"][1]
    assert r["ms_per_decision_a"] > 0 and r["ms_per_decision_b"] > 0 and "written" in done.stdout
    blocks = (tmp_path / "piedmont3_blocks.jsonl").read_text()
    ok(run_script("strong_vs_search", *args))  # every block is recorded: nothing is played again
    again = json.loads((tmp_path / "piedmont3.json").read_text())
    assert (tmp_path / "piedmont3_blocks.jsonl").read_text() == blocks and again["a_minus_b"] == r["a_minus_b"]
    assert again["ms_per_decision_a"] is None  # no block played by this process: no time measured
    bad = run_script("strong_vs_search", "--variant", "piedmont3", "--deals", "0")
    assert bad.returncode == 2 and "--deals must be >= 1" in bad.stderr
