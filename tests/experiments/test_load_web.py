"""``experiments/checks/load_web.py``, its tables phase (tests/web/test_load_script.py runs the API phase): two
WebSocket tables, each a whole deal against heuristic bots on ``tarocchi-rl serve``."""

import json

from .scripts import ok, run_script


def test_two_tables_play_whole_deals_without_errors():
    done = ok(run_script("load_web", "--agent", "bot:mineo", "--skip", "api", "--tables", "2", "--variants",
                         "mineo,french3", "--think", "0"))
    out = json.loads(done.stdout[: done.stdout.rindex("}") + 1])
    assert "api" not in out and out["server"] == {"workers": 1, "agent": "bot:mineo"}
    t = out["tables"]
    assert t["tables"] == t["completed"] == 2 and t["n_errors"] == 0 and t["errors"] == []
    assert t["moves"] >= 2 and 0 < t["median_ms"] <= t["p99_ms"] <= t["max_ms"]
    assert "tables: 2/2 deals completed, 0 errors" in done.stdout
