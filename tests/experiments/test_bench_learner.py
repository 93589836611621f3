"""``experiments/bench/bench_learner.py``: PPO updates of a small network on a synthetic batch, timed."""

from .scripts import last_json, ok, run_script


def test_a_small_learner_is_timed_on_the_cpu():
    done = ok(run_script("bench_learner", "--seconds", "0.01", "--repeats", "1", "--samples", "64", "--set",
                         "network.hidden=[32]", "--set", "device=cpu", "--json"))
    r = last_json(done.stdout)
    assert r["samples_per_update"] == 64 and r["network"] == [32] and r["device"] == "cpu"
    assert len(r["repeats"]) == 1 and r["learner_samples_per_s"] > 0
    assert r["overrides"] == ["network.hidden=[32]", "device=cpu"] and r["gpu"] is None

