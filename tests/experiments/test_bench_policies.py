"""``experiments/bench/bench_policies.py``: a fresh default-size network exported to ONNX and both forms (onnx:, ppo:)
timed in the duplicate arena, one deal, one round."""

from .scripts import last_json, ok, run_script


def test_the_exported_and_the_torch_policy_play_the_same_games():
    done = ok(run_script("bench_policies", "--variant", "french3", "--deals", "1", "--rounds", "1", "--json"))
    r = last_json(done.stdout)
    assert (r["variant"], r["deals"], r["rounds"], r["network"]) == ("french3", 1, 1, [256, 256])
    # the same deals and seatings: both agents answer the same number of decisions
    assert r["decisions_per_run"]["onnx"] == r["decisions_per_run"]["ppo"] > 0
    for k in ("onnx", "ppo"):
        assert r["median"][k]["per_s_wall"] > 0 and r["median"][k]["per_s_cpu"] > 0
    assert isinstance(r["targets"]["met"], bool)
    assert r["threads"] == {"numba": 1, "torch": 1, "onnxruntime": 1}
