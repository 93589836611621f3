"""``experiments/studies/learned_inference.py``: ISMCTS with cheating (oracle) beliefs against the uniform sampler on a
frozen deal, at equal time per decision."""

import json

from .scripts import last_json, ok, run_script


def test_an_oracle_belief_search_plays_the_uniform_one(tmp_path):
    out = tmp_path / "li.json"
    done = ok(run_script("learned_inference", "--variant", "french3", "--deals", "1", "--time", "0.001",
                         "--oracle", "0.9", "--out", str(out)))
    r = json.loads(out.read_text())
    assert r == last_json(done.stdout)
    assert r["a"] == "ismcts:time=0.001,belief=oracle:0.9,belief_method=exact,belief_samples=8"
    assert r["b"] == "ismcts:time=0.001" and r["deals"] == 1
    assert r["decisions_a"] > 0 and r["decisions_b"] > 0 and r["ms_per_decision_a"] > 0
    lo, hi = r["ci95"]
    assert lo <= r["mean_a_vs_b"] <= hi
    d_lo, d_hi = r["a_minus_b_ci95"]  # head to head: A's score minus B's, the same sign
    assert d_lo <= r["a_minus_b"] <= d_hi and r["a_minus_b"] * r["mean_a_vs_b"] >= 0


def test_an_oracle_outside_0_1_is_one_line():
    done = run_script("learned_inference", "--variant", "french3", "--deals", "1", "--oracle", "1.5")
    assert done.returncode == 2 and done.stderr.strip() == "learned_inference: --oracle must be in (0, 1), got 1.5"


def test_skip_starts_later_in_the_frozen_deals_and_a_slice_past_the_end_is_one_line():
    done = ok(run_script("learned_inference", "--variant", "french3", "--deals", "1", "--skip", "1999",
                         "--time", "0.001"))
    assert last_json(done.stdout)["deals"] == 1
    done = run_script("learned_inference", "--variant", "french3", "--deals", "2", "--skip", "1999")
    assert done.returncode == 2
    assert done.stderr.strip().endswith("holds 2000 deals; --skip 1999 --deals 2 asks for deals up to 2001")
