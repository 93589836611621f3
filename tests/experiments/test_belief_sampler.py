"""``experiments/studies/belief_sampler.py``: the share of a seat's unseen cards each sampler (uniform, a belief
model's, the oracle's) puts where they are, on the same positions."""

import json

from .scripts import last_json, ok, run_script


def test_the_samplers_are_measured_on_the_same_positions(tmp_path):
    out = tmp_path / "s.json"
    done = ok(run_script("belief_sampler", "--variant", "french3", "--belief", "bot:french3", "--deals", "2",
                         "--every", "7", "--draws", "8", "--oracle", "0.9", "--json", str(out)))
    r = json.loads(out.read_text())
    assert r == last_json(done.stdout)
    assert list(r["samplers"]) == ["uniform", "learned", "oracle:0.9"] and r["positions"] > 0
    uniform, oracle = r["samplers"]["uniform"], r["samplers"]["oracle:0.9"]
    assert uniform["gain_over_uniform"] == 0 and uniform["gain_se"] == 0  # the reference against itself
    for s in r["samplers"].values():
        assert 0 <= s["placed"] <= 1 and s["placed_se"] >= 0
    # a 0.9 cheat: most unseen cards land where they are, far more than the uniform law's share
    assert oracle["placed"] > 0.7 and oracle["gain_over_uniform"] > 0.3
    assert 0 < r["model_marginals"]["top1"] <= 1 and r["model_marginals"]["nll"] > 0


def test_bad_input_is_one_line():
    done = run_script("belief_sampler", "--variant", "french3", "--belief", "uniform", "--deals", "1")
    assert done.returncode == 1
    assert done.stderr.strip() == "belief_sampler: --belief uniform has nothing to measure: name a belief model"
    done = run_script("belief_sampler", "--variant", "french3", "--belief", "bot:french3", "--oracle", "0.5,1.5")
    assert done.returncode == 2 and "--oracle: every peak must be in (0, 1), got '0.5,1.5'" in done.stderr
    assert "Traceback" not in done.stderr
    done = run_script("belief_sampler", "--variant", "french3", "--belief", "bot:mineo", "--deals", "1")
    assert done.returncode == 1 and done.stderr.startswith("belief_sampler: ") and "Traceback" not in done.stderr
