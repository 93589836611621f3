"""``experiments/bench/bench_games_export.py`` with tiny settings: a few stored games of every variant are exported by
``tarocchi-rl games export`` (one line a game) and the file replays; bad arguments are one line and exit 2."""

import json

from .scripts import ok, run_script


def test_stored_games_are_exported_and_replayed(tmp_path):
    out_file = tmp_path / "out.json"
    done = ok(run_script("bench_games_export", "--games", "12", "--distinct", "5", "--json", "--out", str(out_file)))
    out = json.loads(out_file.read_text())
    assert json.loads(done.stdout) == out
    assert out["games"] == 12 and out["export"]["exit"] == 0 and out["export"]["lines"] == 12
    assert out["replay"]["exit"] == 0 and out["export"]["seconds"] > 0 and out["fill_seconds"] > 0
    assert out["targets"]["met"] is (out["export"]["seconds"] < out["targets"]["export_under_s"])


def test_bad_arguments_are_one_line_and_exit_2():
    done = run_script("bench_games_export", "--games", "0")
    assert done.returncode == 2 and done.stderr == "error: --games and --distinct must be >= 1\n"
