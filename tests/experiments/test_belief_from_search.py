"""``experiments/studies/belief_from_search.py``: a belief head fitted to the games of an agent in every seat, written
as a checkpoint that the search reads as its belief model."""

import json

import torch

from tarocchi_rl.rl.network import load_network
from tests.support.checkpoints import make_checkpoint

from .scripts import last_json, ok, run_script


def test_the_fitted_head_learns_on_held_out_deals_and_serves_the_search(tmp_path):
    init = tmp_path / "init.pt"
    make_checkpoint(init, "piedmont3", belief_loss=1.0)
    out = tmp_path / "fitted.pt"
    done = ok(run_script("belief_from_search", "--init", str(init), "--out", str(out), "--decisions", "3000",
                         "--teacher", "heuristic", "--epochs", "3", "--batch", "16", "--lr", "3e-3"))
    r = last_json(done.stdout)
    assert r["variant"] == "piedmont3" and r["decisions"] >= 3000 and 0 < r["held_out_decisions"] < r["decisions"]
    assert len(r["held_out_loss"]) == 4 and r["held_out_loss"][-1] < r["held_out_loss"][0]  # a random head learns
    fitted = load_network(str(out)).net
    before = load_network(str(init)).net
    assert not torch.equal(fitted.state_dict()["belief.weight"], before.state_dict()["belief.weight"])
    li = ok(run_script("learned_inference", "--variant", "piedmont3", "--deals", "1", "--time", "0.001",
                       "--belief", str(out), "--out", str(tmp_path / "li.json")))
    assert json.loads((tmp_path / "li.json").read_text()) == last_json(li.stdout)


def test_a_network_without_a_belief_head_is_one_line(tmp_path):
    init = tmp_path / "init.pt"
    make_checkpoint(init, "piedmont3")
    done = run_script("belief_from_search", "--init", str(init), "--out", str(tmp_path / "o.pt"))
    assert done.returncode == 2 and done.stderr.strip().endswith("has no belief head (trained with belief_loss: 0)")
    bad = run_script("belief_from_search", "--init", str(tmp_path / "missing.pt"), "--out", str(tmp_path / "o.pt"))
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
