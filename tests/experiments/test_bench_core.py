"""``experiments/bench/bench_core.py``: one short run of both core benchmarks, recorded as JSON with the machine."""

import json

from .scripts import ok, run_script


def test_a_short_benchmark_is_recorded_with_the_machine(tmp_path):
    out = tmp_path / "core.json"
    done = ok(run_script("bench_core", "--variant", "french3", "--batch", "64", "--seconds", "0.05", "--repeats",
                         "1", "--out", str(out)))
    assert "tarocchi-rl bench: french3, batch 64" in done.stdout
    r = json.loads(out.read_text())
    assert (r["variant"], r["batch"], r["repeats"]) == ("french3", 64, 1)
    assert r["rollout_deals_per_s"] > 0 and r["step_decisions_per_s"] > 0
    assert len(r["runs"]["rollout"]) == len(r["runs"]["step"]) == 1
    assert r["runs"]["rollout"][0]["zero_sum"] is True  # the random deals' payoffs sum to zero
    assert r["machine"]["cpus"] >= 1 and r["when"].endswith("+00:00")
