"""``experiments/studies/expert_diagnose.py``: a tiny expert run's shards distilled into its starting network, and its
labelling search run twice on the same positions."""

from tarocchi_rl.expert.config import load_expert_config
from tarocchi_rl.expert.run import start
from tests.support.checkpoints import make_checkpoint

from .scripts import last_json, ok, run_script

TINY = ["variant=french3", "num_workers=0", "deals_per_round=3", "search.games=3", "search.budget.bid=0",
        "search.budget.discard=4", "search.budget.play=6", "gate.deals=4", "gate.search_deals=0",
        "torch_threads=1", "network.hidden=[32]", "max_rounds=1"]


def test_a_tiny_runs_shards_are_distilled_and_its_search_run_twice(tmp_path):
    make_checkpoint(tmp_path / "init.pt", "french3", (32,))
    start(load_expert_config(None, [f"init={tmp_path / 'init.pt'}", *TINY]), tmp_path / "run", progress=False)
    done = ok(run_script("expert_diagnose", "distill", str(tmp_path / "run"), "--shards",
                         str(tmp_path / "run" / "shards" / "*.npz"), "--epochs", "1", "--deals", "4", "--json"))
    r = last_json(done.stdout)
    assert r["samples"] > 10 and len(r["epochs"]) == 1 and 0 <= r["epochs"][0]["agreement_held_out"] <= 1
    assert set(r["agreement"]) == {"start", "best", "learner"}
    for key in ("vs_start", "bid_only_vs_start", "discard_only_vs_start", "play_only_vs_start"):
        assert r[key]["deals"] == 4 and r[key]["ci95"][0] <= r[key]["mean"] <= r[key]["ci95"][1]
    done = ok(run_script("expert_diagnose", "noise", str(tmp_path / "run"), "--budgets", "4,8", "--deals", "2",
                         "--target", "q", "--json"))
    r = last_json(done.stdout)
    assert r["positions"] > 0 and set(r["budgets"]) == {"4", "8"} and r["target"] == "q"
    assert all(0 <= v["searches_agree"] <= 1 and 0 <= v["search_is_network"] <= 1 for v in r["budgets"].values())
    done = run_script("expert_diagnose", "distill", str(tmp_path / "run"), "--shards", str(tmp_path / "none*.npz"))
    assert done.returncode != 0 and "no shard file matches" in done.stderr and "Traceback" not in done.stderr
    done = run_script("expert_diagnose", "noise", str(tmp_path / "nowhere"))
    assert done.returncode != 0 and "no resume.pt" in done.stderr and "Traceback" not in done.stderr
