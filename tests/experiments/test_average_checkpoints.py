"""``experiments/studies/average_checkpoints.py``: the mean of several checkpoints' weights, as a network that loads,
plays and exports (its manifest and card name the checkpoints averaged); checkpoints of different
networks are refused in one line."""

import json

import torch

from tarocchi_rl.rl.checkpoint import load_checkpoint
from tarocchi_rl.rl.export import export_policy
from tarocchi_rl.rl.network import load_network
from tests.support.checkpoints import make_checkpoint

from .scripts import last_json, ok, run_script


def test_the_average_is_the_mean_of_the_weights_and_loads_as_a_network(tmp_path):
    paths = [tmp_path / f"u{k}.pt" for k in range(3)]
    nets = [make_checkpoint(p, "piedmont3", seed=k)[1] for k, p in enumerate(paths)]
    out = tmp_path / "avg.pt"
    r = last_json(ok(run_script("average_checkpoints", *map(str, paths), "--out", str(out))).stdout)
    assert r["variant"] == "piedmont3" and [a["path"] for a in r["averaged_from"]] == list(map(str, paths))
    averaged = load_network(str(out)).net.state_dict()
    for name, tensor in averaged.items():
        mean = sum(n.state_dict()[name].double() for n in nets) / 3
        assert torch.allclose(tensor.double(), mean, atol=1e-6), name
    data = load_checkpoint(out)
    assert "optimizer" not in data and len(data["averaged_from"]) == 3
    ok(run_script("search_vs", "--variant", "piedmont3", "--deals", "2", "--pair", f"ppo:{out}", "heuristic",
                  "--out", str(tmp_path / "played.json")))
    assert json.loads((tmp_path / "played.json").read_text())["rows"][0]["deals"] == 2
    manifest = export_policy(out, tmp_path / "bot", eval_deals=0, golden=4, seed=1)  # the card names the average
    assert [a["update"] for a in manifest["provenance"]["averaged_from"]] == [0, 0, 0]
    assert "The weights are the mean of 3 checkpoints of the run" in (tmp_path / "bot" / "README.md").read_text()


def test_other_networks_and_one_checkpoint_are_refused(tmp_path):
    make_checkpoint(tmp_path / "a.pt", "piedmont3", hidden=(32,))
    make_checkpoint(tmp_path / "b.pt", "piedmont3", hidden=(16,))
    make_checkpoint(tmp_path / "c.pt", "mineo", hidden=(32,))
    for other in ("b.pt", "c.pt"):
        bad = run_script("average_checkpoints", str(tmp_path / "a.pt"), str(tmp_path / other), "--out",
                         str(tmp_path / "o.pt"))
        assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "differs" in bad.stderr
        assert not (tmp_path / "o.pt").exists()
    one = run_script("average_checkpoints", str(tmp_path / "a.pt"), "--out", str(tmp_path / "o.pt"))
    assert one.returncode == 2 and "two checkpoints or more" in one.stderr
    missing = run_script("average_checkpoints", str(tmp_path / "a.pt"), str(tmp_path / "nope.pt"), "--out",
                         str(tmp_path / "o.pt"))
    assert missing.returncode == 2 and len(missing.stderr.strip().splitlines()) == 1
