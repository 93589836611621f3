"""``experiments/bench/bench_ismcts.py``: our ISMCTS and OpenSpiel's two (Python on mineo, C++ on hearts), one tiny
repeat each."""

import pytest

from .scripts import last_json, ok, run_script

pytest.importorskip("pyspiel")


def test_all_three_searches_are_timed():
    done = ok(run_script("bench_ismcts", "--positions", "1", "--iterations", "10", "--python-iterations", "2",
                         "--python-positions", "1", "--repeats", "1", "--json"))
    r = last_json(done.stdout)
    assert (r["positions"], r["iterations"]) == (1, 10)
    assert set(r["runs"]) == {"ours", "openspiel_python", "openspiel_cpp_hearts"}
    assert all(len(v) == 1 and v[0] > 0 for v in r["runs"].values()), r["runs"]
    assert r["speedup_vs_openspiel_python"] > 0 and r["speedup_vs_openspiel_cpp_hearts"] > 0
