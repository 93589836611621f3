"""``experiments/checks/leak_check.py``, its arena phase for nine seconds: the worker subprocess plays arena rounds
while this script samples its memory from /proc and summarises the growth (the train phase, a Ray training run of
``--minutes``, is too long for a smoke test)."""

import json

from .scripts import ok, run_script


def test_the_arena_phase_is_sampled_and_summarised(tmp_path):
    out = tmp_path / "leak.json"
    # --target: any growth passes (nine seconds are mostly start-up: what is checked is the machinery)
    done = ok(run_script("leak_check", "--phases", "arena", "--minutes", "0.15", "--warmup-minutes", "0.05",
                         "--interval", "0.5", "--arena-deals", "2", "--ismcts-iterations", "2", "--target", "1e9",
                         "--out", str(out)))
    r = json.loads(out.read_text())
    assert list(r["phases"]) == ["arena"]
    arena = r["phases"]["arena"]
    assert arena["exit_code"] == 0 and arena["lingering"] == []
    assert arena["arena_rounds"] >= 1 and arena["arena_games"] > 0
    s = arena["summary"]
    assert s["pass"] and s["samples_after_warmup"] >= 2 and 3 <= s["warmup_t_s"] <= s["end_t_s"] <= 9.5
    assert 0 < s["warmup_mb"] <= s["max_mb"] and 0 < s["end_mb"] <= s["max_mb"]
    samples = arena["samples"]
    assert len(samples) >= 3 and max(x["measured_mb"] for x in samples) == s["max_mb"]
    assert [x["t"] for x in samples] == sorted(x["t"] for x in samples)
    assert "arena (main+ray_workers+other)" in done.stdout and "arena: exit 0" in done.stdout
