"""The games' store on PostgreSQL (marker ``postgres``: a throwaway server, :mod:`tests.support.postgres`, skipped
with the reason where none can be started): the schema's column types, every kind of write the server makes read
back exactly as from SQLite (finished games, who played each move, the rows, the counts, the startup sweep), and a
real ``tarocchi-rl serve --db postgresql://...`` storing the deals played over its WebSocket: killed mid-deal, its
finished game replays, its unfinished one is swept at the next start, and ``games export`` writes what replays.
The store's other tests run on both databases (``db_url``, ``tests/web/conftest.py``)."""

import datetime as dt
import json
import signal
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa
from websockets.sync.client import connect

from tarocchi_rl import cli
from tarocchi_rl.records import replay
from tarocchi_rl.web.store import (
    MAX_MS,
    Abandoned,
    ChallengeResult,
    Finished,
    Moves,
    NewGame,
    SeatReplaced,
    Store,
    Write,
    games,
    open_store,
    prepare_database,
)
from tests.support.records import random_record
from tests.support.server_process import WAIT, ServerProcess, play, receive

pytestmark = pytest.mark.postgres

AT = dt.datetime(2026, 3, 1, 12, 0, 0, 123456)  # UTC, naive as the store keeps it; microseconds kept
SERVE_START = 120.0  # seconds for tarocchi-rl serve to listen (its warm-up loads every kernel)


def gid(name: str) -> str:
    return name.ljust(32, "0")


def batches() -> list[list[Write]]:
    """Every kind of write of the server, in the batches a writer thread could make: a shared-table deal finished
    (its moves by person, bot, forced move and replacement, a seat taken over), a practice deal finished, a deal
    abandoned, one left in progress (a move's time beyond 32 bits among its moves), and a challenge's deal
    finished with the challenged bot's result on it (written twice: kept once)."""
    french, mineo = random_record("french3", 1), random_record("mineo", 2)
    n = len(french["actions"])
    people = (("person", "p-aaaaaaaaaaaa"), ("person", "p-bbbbbbbbbbbb"), ("bot", "heuristic"))
    by = ["person", "bot", "forced", "replacement"]
    rows = tuple((k % 3, a, 10 * k) for k, a in enumerate(french["actions"]))
    return [
        [NewGame(gid("f"), "french3", {"seed": 1}, False, AT, people),
         Moves(gid("f"), 0, rows[:5], tuple(by[k % 4] for k in range(5)))],
        [SeatReplaced(gid("f"), 1, "heuristic"), Moves(gid("f"), 5, rows[5:], tuple(by[k % 4] for k in range(5, n))),
         Finished(gid("f"), french, AT + dt.timedelta(minutes=3))],
        [NewGame(gid("p"), "mineo", {}, True, AT + dt.timedelta(days=1), (("person", "p-cccccccccccc"),)
                 + (("bot", "random"),) * 3),
         Finished(gid("p"), mineo, AT + dt.timedelta(days=1, seconds=1))],
        [NewGame(gid("a"), "french3", {}, False, AT + dt.timedelta(days=2), people),
         Moves(gid("a"), 0, ((0, "bid:pass", 7),)), Abandoned(gid("a"), AT + dt.timedelta(days=2, seconds=9))],
        [NewGame(gid("i"), "french3", {}, False, AT + dt.timedelta(days=3), people),
         Moves(gid("i"), 0, ((0, "bid:pass", 3_000_000_000), (1, "bid:pass", 0)), ("person", "bot"))],
        [NewGame(gid("c"), "french3", {}, False, AT + dt.timedelta(days=4), (("person", "p-dddddddddddd"),)
                 + (("bot", "heuristic"),) * 2, challenge="french3-8", challenge_deal=3),
         Finished(gid("c"), french, AT + dt.timedelta(days=4, minutes=2))]
        + [ChallengeResult("french3-8", 3, "french3, 8 deals", "french3", "heuristic", 0, payoff, french, AT)
           for payoff in (-2, 5)],
    ]


def read_back(store: Store) -> dict:
    """Everything the store's reads give."""
    ids = [gid(x) for x in "fpaic"]
    return {"finished": list(store.finished_games(practice=True)),
            "french3 from day 2": list(store.finished_games("french3", AT + dt.timedelta(days=1))),
            "not practice": [g["id"] for g in store.finished_games()],
            "moves_by": [store.moves_by(g) for g in ids], "moves": [store.stored_moves(g) for g in ids],
            "rows": [store.game_row(g) for g in [*ids, gid("none")]], "counts": store.counts(),
            "challenge": [store.challenge_results("french3-8"), store.challenge_games(), store.challenge_names()]}


def test_postgresql_reads_back_what_sqlite_does(postgres_url, tmp_path):
    sqlite, pg = open_store(f"sqlite:///{tmp_path / 'games.db'}"), open_store(postgres_url)
    try:
        for batch in batches():
            sqlite.write(batch)
            pg.write(batch)
        got = read_back(pg)
        assert got == read_back(sqlite)
        assert got["counts"] == {"in_progress": 1, "finished": 3, "abandoned": 1, "practice": 1}
        assert [g["id"] for g in got["finished"]] == [gid("f"), gid("p"), gid("c")]
        assert got["not practice"] == [gid("f"), gid("c")]
        french, mineo, challenged = got["finished"]
        assert french["created"] == AT and french["created"].tzinfo is None  # UTC kept without a zone
        assert french["finished"] == AT + dt.timedelta(minutes=3)
        assert (french["practice"], mineo["practice"]) == (False, True)
        assert french["record"] == random_record("french3", 1)
        assert [s["payoff"] for s in french["seats"]] == french["record"]["result"]["payoffs"]
        assert [g["id"] for g in got["french3 from day 2"]] == [gid("c")]
        assert got["moves_by"][0][:5] == [(0, 0, "person"), (1, 1, "bot"), (2, 2, "forced"), (3, 0, "replacement"),
                                          (4, 1, "person")]
        assert [a for _, _, a, _ in got["moves"][0]] == french["record"]["actions"]
        assert got["moves"][3] == [(0, 0, "bid:pass", MAX_MS), (1, 1, "bid:pass", 0)]  # 32 bits: ~24.8 days kept
        row = got["rows"][0]
        assert row["options"] == {"seed": 1} and row["status"] == "finished" and row["practice"] is False
        assert [(s["name"], s["replaced_by"]) for s in row["seats"]] == [("p-aaaaaaaaaaaa", None),
                                                                         ("p-bbbbbbbbbbbb", "heuristic"),
                                                                         ("heuristic", None)]
        assert got["rows"][2]["status"] == "abandoned" and got["rows"][-1] is None
        assert (challenged["challenge"], challenged["challenge_deal"]) == ("french3-8", 3)
        results, (played,), names = got["challenge"]
        assert results == {3: (-2, french["record"])} and names == {"french3-8": "french3, 8 deals"}
        assert (played["game"], played["person"], played["bot_payoff"]) == (gid("c"), "p-dddddddddddd", -2)
        assert played["payoff"] == french["record"]["result"]["payoffs"][0]

        assert pg.abandon_unfinished() == sqlite.abandon_unfinished() == 1
        assert pg.abandon_unfinished() == 0
        swept = read_back(pg)
        assert swept["counts"] == read_back(sqlite)["counts"] == {"in_progress": 0, "finished": 3, "abandoned": 2,
                                                                   "practice": 1}
        assert swept["rows"][3]["status"] == "abandoned" and swept["rows"][3]["finished_at"] is not None
    finally:
        sqlite.close()
        pg.close()


def test_the_schema_has_postgresql_types(postgres_url):
    store = open_store(postgres_url)
    try:
        columns = {(t, c["name"]): c["type"] for t in ("games", "seats", "moves")
                   for c in sa.inspect(store.engine).get_columns(t)}
    finally:
        store.close()
    assert isinstance(columns["games", "practice"], sa.Boolean)
    for name in ("created_at", "finished_at"):
        assert isinstance(columns["games", name], sa.DateTime) and not columns["games", name].timezone
    assert isinstance(columns["games", "record"], sa.JSON) and isinstance(columns["moves", "ms"], sa.Integer)
    assert columns["seats", "name"].length == columns["seats", "replaced_by"].length == 64
    assert columns["moves", "action"].length == 64 and columns["games", "id"].length == 32


def serve_command(url: str) -> list[str]:
    """``tarocchi-rl serve`` on a free loopback port, its games stored at ``url``."""
    script = Path(sys.executable).with_name("tarocchi-rl")
    cmd = [str(script)] if script.exists() else [sys.executable, "-c",
                                                  "import sys; from tarocchi_rl.cli import main; sys.exit(main())"]
    return [*cmd, "serve", "--host", "127.0.0.1", "--port", "0", "--db", url]


def in_progress(store: Store) -> list[tuple[str, int]]:
    """The games in progress and their stored moves."""
    with store.engine.connect() as conn:
        ids = [r[0] for r in conn.execute(sa.select(games.c.id).where(games.c.status == "in_progress"))]
    return [(g, len(store.stored_moves(g))) for g in ids]


def test_a_served_game_is_stored_and_a_killed_servers_unfinished_game_swept(postgres_url, tmp_path, capsys):
    server = ServerProcess(postgres_url, tmp_path, argv=serve_command(postgres_url), wait=SERVE_START)
    store = open_store(postgres_url)
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
            while not (store.counts()["finished"] == 1 and [n for _, n in in_progress(store)] == [len(seen)]):
                assert time.monotonic() < deadline, "the moves were not committed"
                time.sleep(0.05)
            unfinished = in_progress(store)[0][0]
            server.stop(signal.SIGKILL)  # mid-deal, the connection still open
    finally:
        server.stop(signal.SIGKILL)
        store.close()
    assert server.proc.returncode == -signal.SIGKILL

    assert prepare_database(postgres_url) == 1  # what the next serve does before it listens
    store = open_store(postgres_url)
    try:
        (game,) = store.finished_games()
        abandoned = store.game_row(unfinished)
        assert store.counts() == {"in_progress": 0, "finished": 1, "abandoned": 1, "practice": 0}
        assert game["record"] == done[-1]["record"] and game["seats"][0]["kind"] == "person"
        assert replay(game["record"]).returns() == done[-1]["outcome"]["payoffs"]
        assert abandoned is not None and abandoned["status"] == "abandoned" and abandoned["variant"] == "mineo"
        assert [k for k, *_ in store.stored_moves(unfinished)] == [m["index"] for m in seen]
    finally:
        store.close()

    out = tmp_path / "games.jsonl"
    capsys.readouterr()
    assert cli.main(["games", "export", "--db", postgres_url, "--out", str(out)]) == 0
    (line,) = out.read_text().splitlines()
    exported = json.loads(line)
    assert exported["stored"]["id"] == game["id"] and exported["stored"]["created"].endswith("Z")
    assert replay({k: v for k, v in exported.items() if k != "stored"}).returns() == done[-1]["outcome"]["payoffs"]
    assert cli.main(["replay", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["valid"] is True
