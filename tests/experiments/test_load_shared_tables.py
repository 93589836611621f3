"""``experiments/checks/load_shared_tables.py`` with tiny settings: three shared tables (two scripted people and two
bots each) play whole deals on ``tarocchi-rl serve`` with SQLite, the lag probe answers, and every game is stored."""

import json

from .scripts import ok, run_script


def test_three_shared_tables_finish_and_every_game_is_stored(tmp_path):
    out_file = tmp_path / "out.json"
    done = ok(run_script("load_shared_tables", "--tables", "3", "--think", "0", "--bound", "60", "--db", "sqlite",
                         "--out", str(out_file)))
    out = json.loads(out_file.read_text())
    assert json.loads(done.stdout[: done.stdout.rindex("}") + 1]) == out
    assert list(out["runs"]) == ["sqlite"] and out["config"]["tables"] == 3
    run = out["runs"]["sqlite"]
    t = run["tables"]
    assert t["finished"] == t["tables"] == 3 and t["n_errors"] == 0 and t["errors"] == []
    assert t["moves"] >= 3 * 8 and 0 < t["p50_ms"] <= t["p95_ms"] <= t["p99_ms"] <= t["max_ms"]
    lag = run["lag_probe"]
    assert lag["n"] > 10 and lag["failed"] == 0 and 0 < lag["p50_ms"] <= lag["p99_ms"]
    s = run["stored"]
    assert s["finished_with_two_people"] == s["of"] == 3 and s["every_game_stored"]
    assert s["counts"]["finished"] == 3 and s["counts"]["in_progress"] == 0 and s["counts"]["abandoned"] == 0
    assert run["load_average"]["cpus"] >= 1 and run["load_average"]["max"] >= 0
    cpu = run["cpu"]
    # The server serves every move, so it spends CPU; the load generator mostly waits on sockets, and on a fast
    # machine its CPU over three tables can be below the clock's tick: only its presence is checked.
    assert cpu["server_s"] > 0 and cpu["server_ms_per_move"] > 0
    assert cpu["client_s"] >= 0 and cpu["client_ms_per_move"] >= 0
    assert out["targets"]["sqlite"]["all_finished"] and out["targets"]["sqlite"]["every_game_stored"]
    assert "--db sqlite: 3/3 deals finished" in done.stdout and "stored finished with two people: 3/3" in done.stdout


def test_a_variant_without_four_seats_is_refused_before_any_server_starts():
    done = run_script("load_shared_tables", "--variants", "mineo,french3", "--tables", "1")
    assert done.returncode == 2 and "--variants: french3 has 3 players; these tables seat 4" in done.stderr
    done = run_script("load_shared_tables", "--variants", "nope")
    assert done.returncode == 2 and "unknown variant 'nope'" in done.stderr
