"""The games' database of `tarocchi-rl serve` (tarocchi_rl.web.store, tarocchi_rl.web.writer): the migrations make
the schema and refuse a newer one, deals played through the server are stored (seats, moves with their times,
the record, the practice flag; unfinished ones abandoned), the exported file replays and deals an arena, and the
writes never run on the event loop's thread."""

import asyncio
import json
import threading
import time

import pytest
import sqlalchemy as sa

from tarocchi_rl import cli
from tarocchi_rl.web.app import ServerConfig, create_app
from tarocchi_rl.web.store import (
    Moves,
    NewGame,
    Store,
    StoreError,
    metadata,
    open_store,
    prepare_database,
    utc_now,
)
from tarocchi_rl.web.writer import StoreWriter
from tests.support.web_client import LocalClient

SEATS3 = ["human", "heuristic", "heuristic"]
WAIT = 120.0  # seconds a test waits for a thread at most (never reached unless something hangs)


def url_of(path) -> str:
    return f"sqlite:///{path}"


def test_the_migrations_make_the_schema_and_a_newer_revision_is_refused(db_url):
    url = db_url
    store = open_store(url)
    assert store.revision() == "0004"  # 0002: moves.by, seats.replaced_by (shared tables); 0003: challenges;
    # 0004: server_secrets
    inspector = sa.inspect(store.engine)
    for table in metadata.sorted_tables:
        assert {c["name"] for c in inspector.get_columns(table.name)} == {c.name for c in table.columns}
    assert {i["name"] for i in inspector.get_indexes("games")} == {"games_by_status", "games_by_challenge"}
    store.close()
    open_store(url).close()  # at head already: nothing to do
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE alembic_version SET version_num = 'f00d'"))
    engine.dispose()
    with pytest.raises(StoreError, match=r"schema revision 'f00d' is unknown to this tarocchi-rl .*upgrade"):
        open_store(url)


def test_a_database_of_revision_0001_is_upgraded_and_keeps_its_games(db_url):
    from alembic import command

    from tarocchi_rl.web.store import _alembic_config

    url = db_url
    engine = sa.create_engine(url)
    cfg = _alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0001")
    with engine.begin() as conn:  # a game as revision 0001 stored it: no moves.by, no seats.replaced_by
        conn.execute(sa.text("INSERT INTO games VALUES ('g', 'french3', '{}', FALSE, 'finished', '2026-01-01', NULL, "
                             "NULL)"))
        conn.execute(sa.text("INSERT INTO seats VALUES ('g', 0, 'person', 'p-1', NULL)"))
        conn.execute(sa.text("INSERT INTO moves VALUES ('g', 0, 0, 'bid:pass', 5)"))
    engine.dispose()
    store = open_store(url)
    assert store.revision() == "0004"
    assert store.stored_moves("g") == [(0, 0, "bid:pass", 5)] and store.moves_by("g") == [(0, 0, None)]
    assert store.game_row("g")["seats"][0]["replaced_by"] is None
    store.close()


def test_serve_marks_the_games_left_in_progress_abandoned(db_url):
    url = db_url
    store = open_store(url)
    store.write([NewGame("a" * 32, "french3", {}, False, utc_now(), (("person", "p-1"), ("bot", "random"),
                                                                      ("bot", "random"))),
                 Moves("a" * 32, 0, ((0, "bid:pass", 5),))])
    store.close()
    assert prepare_database(url) == 1
    store = open_store(url)
    assert store.game_row("a" * 32)["status"] == "abandoned" and store.stored_moves("a" * 32) == [(0, 0, "bid:pass", 5)]
    store.close()


def play_to_the_end(ws, first: dict) -> dict:
    msg = first
    while msg["type"] == "state":
        ws.send_json({"type": "act", "action": msg["table"]["legal"][0]["action"]})
        msg = ws.receive_json()
    assert msg["type"] == "over", msg
    return msg


def test_deals_played_at_the_server_are_stored_and_the_export_replays(db_url, tmp_path, monkeypatch, capsys):
    url = db_url
    writers: list[str] = []
    write = Store.write

    def spy(self, batch):  # the thread of every write, and whether an event loop runs in it
        try:
            asyncio.get_running_loop()
            writers.append("an event loop's thread")
        except RuntimeError:
            writers.append(threading.current_thread().name)
        return write(self, batch)

    monkeypatch.setattr(Store, "write", spy)
    with LocalClient(create_app(ServerConfig(db=url, warmup=False))) as client:
        with client.websocket_connect("/ws") as ws:
            ws.send_json({"type": "start", "variant": "french3", "seats": SEATS3})
            over = play_to_the_end(ws, ws.receive_json())
            ws.send_json({"type": "start", "variant": "french3", "seats": SEATS3[::-1], "seed": 4})
            practice = play_to_the_end(ws, ws.receive_json())
            ws.send_json({"type": "start", "variant": "mineo", "seats": ["human", "random", "heuristic", "random"]})
            assert ws.receive_json()["type"] == "state"
            ws.send_json({"type": "start", "variant": "french3", "seats": SEATS3})  # replaces the mineo deal
            left = ws.receive_json()
            assert left["type"] == "state"
        # the connection closed mid-deal: that one is abandoned too; the writer is drained at shutdown
    assert writers and set(writers) == {"tarocchi-store-writer"}

    store = open_store(url)
    assert store.counts() == {"in_progress": 0, "finished": 2, "abandoned": 2, "practice": 1}
    finished = list(store.finished_games(practice=True))
    assert [g["practice"] for g in finished] == [False, True]
    game, practised = finished
    assert game["record"] == over["record"] and practised["record"] == practice["record"]
    assert practised["record"]["practice"] is True
    person = game["seats"][0]["name"]
    assert person.startswith("p-") and len(person) == 14 and "127.0.0.1" not in json.dumps(game, default=str)
    assert [(s["kind"], s["name"]) for s in game["seats"]] == [("person", person), ("bot", "heuristic"),
                                                              ("bot", "heuristic")]
    assert [s["payoff"] for s in game["seats"]] == over["outcome"]["payoffs"]
    assert practised["seats"][2] == {"seat": 2, "kind": "person", "name": person, "payoff": practice["outcome"][
        "payoffs"][2]}  # one id for the connection's deals
    stored = store.stored_moves(game["id"])
    assert [a for _, _, a, _ in stored] == over["record"]["actions"] and [k for k, *_ in stored] == list(
        range(len(stored)))
    assert all(ms >= 0 for *_, ms in stored)
    humans = [m["index"] for m in over["moves"] if m.get("by") == "human"]
    assert all(stored[k][1] == 0 for k in humans)
    store.close()

    out = tmp_path / "games.jsonl"
    capsys.readouterr()
    assert cli.main(["games", "export", "--db", url, "--out", str(out)]) == 0
    assert capsys.readouterr().err.strip() == f"wrote 1 game to {out}"
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 1 and lines[0]["stored"]["id"] == game["id"]
    assert {k: v for k, v in lines[0].items() if k != "stored"} == over["record"]
    assert cli.main(["games", "export", "--db", url, "--out", str(out), "--practice"]) == 0
    assert len(out.read_text().splitlines()) == 2
    assert cli.main(["replay", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"file": str(out), "valid": True, "records": 2,
                                                   "variants": {"french3": 2}}
    assert cli.main(["eval", "--variant", "french3", "--agents", "random,heuristic", "--deals-file", str(out),
                     "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["deals"] == 2


class SlowStore:
    """A store whose writes wait for ``go``."""

    def __init__(self) -> None:
        self.go = threading.Event()
        self.batches: list[int] = []

    def write(self, batch) -> None:
        self.go.wait(WAIT)
        self.batches.append(len(batch))


def test_a_full_write_queue_drops_writes_without_waiting_and_refuses_new_deals_from_half_full():
    slow = SlowStore()
    writer = StoreWriter(slow, capacity=4).start()  # type: ignore[arg-type]
    move = Moves("a" * 32, 0, ((0, "bid:pass", 1),))
    assert writer.put(move)  # taken by the thread, which waits in write
    deadline = time.monotonic() + WAIT  # (a condition waited for: a busy machine may take long to run the thread)
    while writer.queue.qsize() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert writer.queue.qsize() == 0 and writer.has_room()
    assert all(writer.put(move) for _ in range(2)) and not writer.has_room()
    assert all(writer.put(move) for _ in range(2))
    assert not writer.put(move) and writer.dropped == 1  # full: dropped at once
    slow.go.set()
    assert writer.flush(WAIT)
    writer.close()
    assert sum(slow.batches) == 5 and not writer.thread.is_alive()


def test_the_server_refuses_a_new_deal_while_the_store_is_behind(tmp_path):
    with LocalClient(create_app(ServerConfig(db=url_of(tmp_path / "g.db"), warmup=False))) as client:
        recorder = client.app.state.server.recorder
        recorder.writer.has_room = lambda: False
        with client.websocket_connect("/ws") as ws:
            ws.send_json({"type": "start", "variant": "french3", "seats": SEATS3})
            msg = ws.receive_json()
    assert msg["type"] == "error" and msg["busy"] and "game store" in msg["error"]
