"""A server killed with SIGKILL mid-deal loses no stored game: on loopback, a server process (run_server, as
`tarocchi-rl serve --db` runs it, without the warm-up) plays a whole deal and part of another with a client, is
killed once the moves are committed, and started again on the same database: the finished game is there with a
record that replays, the unfinished one is marked abandoned with every move the client saw, and SQLite finds
nothing corrupt. Every wait is bounded."""

import json
import signal
import sqlite3
import time

from websockets.sync.client import connect

from tarocchi_rl.records import replay
from tarocchi_rl.web.store import open_store
from tests.support.server_process import WAIT, ServerProcess, play, receive


def committed_moves(path, game_moves: int) -> bool:
    """Whether the database holds a finished game and an unfinished one with ``game_moves`` moves."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as conn:
        finished = conn.execute("SELECT count(*) FROM games WHERE status = 'finished'").fetchone()[0]
        unfinished = conn.execute("SELECT count(*) FROM moves JOIN games ON games.id = moves.game_id "
                                  "WHERE games.status = 'in_progress'").fetchone()[0]
    return finished == 1 and unfinished == game_moves


def test_a_killed_server_loses_no_game_and_its_unfinished_one_is_abandoned(tmp_path):
    path = tmp_path / "games.db"
    url = f"sqlite:///{path}"
    server = ServerProcess(url, tmp_path)
    try:
        with connect(f"ws://127.0.0.1:{server.port}/ws", open_timeout=WAIT, close_timeout=1) as ws:
            ws.send(json.dumps({"type": "start", "variant": "french3", "seats": ["human", "heuristic", "heuristic"]}))
            done = play(ws, receive(ws))
            assert done[-1]["type"] == "over"
            ws.send(json.dumps({"type": "start", "variant": "mineo",
                                "seats": ["human", "heuristic", "random", "heuristic"]}))
            partial = play(ws, receive(ws), moves=2)
            assert partial[-1]["type"] == "state"
            seen = [m for msg in partial for m in msg["moves"]]
            deadline = time.monotonic() + WAIT
            while not committed_moves(path, len(seen)):  # the writer commits within milliseconds of a move
                assert time.monotonic() < deadline, "the moves were not committed"
                time.sleep(0.05)
            server.stop(signal.SIGKILL)  # mid-deal, the connection still open
    finally:
        server.stop(signal.SIGKILL)
    assert server.proc.returncode == -signal.SIGKILL

    again = ServerProcess(url, tmp_path)  # the same database: the unfinished game is swept at startup
    again.stop(signal.SIGTERM)
    assert "1 game left in progress by an earlier server marked abandoned" in "".join(again.lines)

    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    store = open_store(url, create=False)
    rows = {row["status"]: row for row in (store.game_row(g) for g in _ids(path))}
    assert set(rows) == {"finished", "abandoned"}
    finished, abandoned = rows["finished"], rows["abandoned"]
    assert finished["record"] == done[-1]["record"]
    assert replay(finished["record"]).returns() == done[-1]["outcome"]["payoffs"]
    stored = store.stored_moves(abandoned["id"])
    assert [k for k, *_ in stored] == [m["index"] for m in seen] == list(range(len(seen)))
    assert all(a == m["action"] for (_, _, a, _), m in zip(stored, seen, strict=True) if "?" not in m["action"])
    assert abandoned["variant"] == "mineo" and abandoned["finished_at"] is not None
    store.close()


def _ids(path) -> list[str]:
    with sqlite3.connect(path) as conn:
        return [r[0] for r in conn.execute("SELECT id FROM games")]
