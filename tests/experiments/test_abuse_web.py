"""``experiments/checks/abuse_web.py``: one honest table and the probes, quiet and then beside a greedy client (here its
search flood, crafted impossible histories and one slow upload; its own tables of search bots would cost the
server a core for the whole phase); and a polite client beside each crowd of ``experiments/checks/abuse_floods.py``. The
latency targets are not checked: a smoke test on a shared machine."""

import json
from typing import Any

import pytest

from .scripts import ok, run_script


@pytest.fixture(scope="module")
def run() -> tuple[str, dict[str, Any]]:
    """One run of the script, every phase, small and short (one server for both tests): (stdout, its JSON)."""
    # --phase-seconds: an upper bound only (a phase ends when its tables have finished)
    done = ok(run_script("abuse_web", "--honest", "1", "--deals", "1", "--think", "0", "--phase-seconds", "60",
                         "--slow-uploads", "1", "--abuse", "search,crafted,slow", "--crowd-seconds", "1.5",
                         "--halfopen", "60", timeout=600))
    return done.stdout, json.loads(done.stdout[: done.stdout.rindex("}") + 1])


def test_the_server_serves_the_honest_table_through_the_abuse(run):
    stdout, out = run
    assert out["server"]["alive_at_the_end"] is True
    for phase in ("quiet", "abuse"):
        tables = out[phase]["tables"]
        assert tables["finished"] == tables["of"] == 1 and tables["errors"] == [], (phase, tables)
        assert tables["moves"] > 0 and tables["p50_ms"] <= tables["p99_ms"]
        for name, probe in out[phase]["probes"].items():
            assert probe["n"] > 0 and probe["failed"] == 0, (phase, name, probe)
    abuser = out["abuse"]["abuser"]
    assert abuser["crafted_requests"] > 0 and sum(abuser["crafted"].values()) > 0
    # a swapped pair of plays is mostly impossible (400), but a swap the seat cannot tell apart from a real deal is
    # a legal request (200); 0 is a connection the server closed (the abuser's address holds more connections than
    # its share: its slow uploads, web.limits); what must never come back is a server error
    assert set(abuser["crafted"]) <= {"0", "200", "400", "429", "503"}, abuser["crafted"]
    assert abuser["crafted"].get("400", 0) > 0, abuser["crafted"]
    refused = sum(n for kind in ("search", "crafted") for status, n in abuser[kind].items() if status in ("429", "503"))
    assert refused > 0, abuser  # the per-client limits held the flood back
    # the slow upload is not checked: it is answered only when the phase outlasts the server's body timeout
    assert out["targets"]["all_finished"] is True
    assert "honest tables under abuse: 1/1 finished" in stdout


def test_a_polite_client_is_answered_beside_every_crowd(run):
    """The crowd phases of ``experiments/checks/abuse_floods.py``: every polite request answered, the genuine lobby
    table listed all along and the crowd's gone once it left, each crowd doing what it does."""
    stdout, out = run
    for phase in ("calm", "halfopen", "lobby", "pings", "acts"):
        polite = out[phase]["polite"]
        assert polite["health"]["n"] > 0 and polite["health"]["failed"] == {}, (phase, polite)
        assert polite["page"]["ok"] == polite["page"]["of"] > 0 and polite["api"]["ok"] == polite["api"]["of"] > 0
        assert f"{phase}: polite /v1/health p50" in stdout
    halfopen = out["halfopen"]["crowd"]
    assert halfopen["max_open"] > 0 and halfopen["answered"] == 0, halfopen  # a head never ended: never answered
    lobby = out["lobby"]["lobby"]
    assert lobby["opened"] and lobby["listed"] == lobby["polls"] > 0 and lobby["tables_listed_after_all_left"] == 0
    assert out["lobby"]["crowd"]["opened"] > 0  # the crowd did open tables (up to its addresses' limit)
    assert out["pings"]["crowd"]["connected"] > 0 and out["pings"]["crowd"]["frames_sent"] > 0
    assert out["acts"]["crowd"]["status"].get("200", 0) > 0
