"""``experiments/bench/bench_openspiel_tarok.py``: one tiny run of the three loops (ours, OpenSpiel from Python,
OpenSpiel's C++ random_sim_test) on the same game, recorded as JSON with the ratios. Skipped where pyspiel
(OpenSpiel's Python package) is not installed."""

import json

import pytest

from .scripts import ok, run_script

pytest.importorskip("pyspiel", reason="OpenSpiel's pyspiel is not installed")


def test_a_tiny_run_times_both_sides_and_records_the_ratios(tmp_path):
    out = tmp_path / "tarok.json"
    done = ok(run_script("bench_openspiel_tarok", "--variant", "tarok3", "--seconds", "0.05", "--repeats", "1",
                         "--batch", "64", "--note", "test", "--out", str(out)))
    assert "ratio:" in done.stdout and "OpenSpiel from Python" in done.stdout
    r = json.loads(out.read_text())
    assert (r["variant"], r["openspiel_game"], r["threads"], r["note"]) == ("tarok3", "tarok(players=3)", 1, "test")
    for key in ("ours_deals_per_s", "openspiel_python_deals_per_s", "openspiel_cpp_random_sim_test_deals_per_s"):
        assert r[key] > 0, key
    assert r["ratio_python"] == pytest.approx(r["ours_deals_per_s"] / r["openspiel_python_deals_per_s"])
    assert r["openspiel_decisions_per_deal"] > 1  # whole deals, bids and cards


def test_bad_arguments_are_one_line():
    done = run_script("bench_openspiel_tarok", "--seconds", "0")
    assert done.returncode == 2 and "--seconds" in done.stderr and "Traceback" not in done.stderr
