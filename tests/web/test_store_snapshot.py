"""Reads of the games' store that span tables see one snapshot (tarocchi_rl.web.store.Store.reading), on SQLite and
(marker ``postgres``) PostgreSQL: a game finishing while ``finished_games``, ``games export``, ``games stats`` or
``game_row`` reads is read whole, before or after, never half (finished with no seats, or payoffs on a game still in
progress).

Two ways: a game is finished (by another connection) in every gap between two statements of each read, through a
hook on the statements the read sends, which makes each gap certain; and a writer thread finishes games while the
reader reads in a loop, as ``serve`` and ``games export`` do. Every loop is bounded; nothing depends on timing."""

import json
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import sqlalchemy as sa

from tarocchi_rl.web import games as games_module
from tarocchi_rl.web.games import export_games, games_stats
from tarocchi_rl.web.store import Finished, Moves, NewGame, Store, open_store, utc_now
from tests.support.records import random_record

SEATS = (("person", "p-aaaaaaaaaaaa"), ("bot", "heuristic"), ("bot", "random"))
RECORD = random_record("french3", 7)
WAIT = 120.0  # seconds a thread waits for the other at most (never reached unless something hangs)


def new_game(store: Store) -> str:
    """A french3 game in progress, with its seats and a move."""
    gid = uuid.uuid4().hex
    store.write([NewGame(gid, "french3", {}, False, utc_now(), SEATS), Moves(gid, 0, ((0, "bid:pass", 3),))])
    return gid


def finish(store: Store, gid: str) -> None:
    """Finish a game: its status, its record and its seats' payoffs, in one transaction."""
    store.write([Finished(gid, RECORD, utc_now())])


def whole(game: dict[str, Any]) -> bool:
    """A finished game as read: all its seats, each with its payoff from the record."""
    return [(s["seat"], s["payoff"]) for s in game["seats"]] == list(enumerate(RECORD["result"]["payoffs"]))


@contextmanager
def finishing_before_select(store: Store, gid: str, k: int) -> Iterator[list[int]]:
    """While in the block: just before the k-th SELECT (1-based) of the first connection to send one, ``gid`` is
    finished by another connection and committed. Yields a list that gets k once it happened."""
    reader: list[Any] = []
    done: list[int] = []

    def before(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if not statement.lstrip().upper().startswith("SELECT") or done:
            return
        if not reader:
            reader.append(conn)
        if conn is not reader[0]:
            return
        reader.append(statement)
        if len(reader) - 1 == k:
            done.append(k)
            finish(store, gid)  # another connection of the pool: its own transaction, committed

    sa.event.listen(store.engine, "before_cursor_execute", before)
    try:
        yield done
    finally:
        sa.event.remove(store.engine, "before_cursor_execute", before)


def selects_of(store: Store, read: Callable[[], Any]) -> int:
    """How many SELECTs ``read`` sends on its connection."""
    seen: list[Any] = []

    def count(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            seen.append(conn)

    sa.event.listen(store.engine, "before_cursor_execute", count)
    try:
        read()
    finally:
        sa.event.remove(store.engine, "before_cursor_execute", count)
    return len(seen)


def test_a_game_finished_between_any_two_statements_of_a_read_is_read_whole(db_url, tmp_path, monkeypatch):
    store = open_store(db_url)
    finish(store, new_game(store))  # one finished before
    monkeypatch.setattr(games_module, "open_store", lambda url, create=True: store)  # export and stats read this one

    def export(gid: str) -> None:
        out = tmp_path / "games.jsonl"
        assert export_games(db_url, str(out)) >= 1
        for line in out.read_text().splitlines():
            assert [s["name"] for s in json.loads(line)["stored"]["seats"]] == [name for _, name in SEATS], line[-300:]

    reads: dict[str, Callable[[str], None]] = {
        "finished_games": lambda gid: check_games(list(store.finished_games())),
        "game_row": lambda gid: check_row(store.game_row(gid)),
        "reading": lambda gid: check_stats(store),
        "games export": export,
        "games stats": lambda gid: check_stats_cli(db_url),
    }
    for name, read in reads.items():
        n = selects_of(store, lambda read=read: read(new_game(store)))
        assert n >= 2, name  # (a read of one statement has no gap)
        for k in range(2, n + 1):  # every gap between two statements of the read
            gid = new_game(store)
            with finishing_before_select(store, gid, k) as done:
                read(gid)
            assert done == [k], (name, k)
    store.close()


def check_games(games: list[dict]) -> None:
    assert games and all(whole(g) for g in games), [g["seats"] for g in games if not whole(g)]


def check_row(row: dict | None) -> None:
    assert row is not None
    payoffs = [s["payoff"] for s in row["seats"]]
    assert len(payoffs) == 3
    assert (row["status"] == "finished") == (None not in payoffs), (row["status"], payoffs)  # both or neither
    assert row["status"] == "in_progress" or all(p is not None for p in payoffs)


def check_stats(store: Store) -> None:
    with store.reading() as r:
        counts = r.counts()
        games = list(r.finished_games())
    assert counts["finished"] == len(games) and all(whole(g) for g in games)


def check_stats_cli(url: str) -> None:
    """games stats: its counts of finished games equal the deals of its tallies."""
    stats = games_stats(url)
    (bot_row,) = [r for r in stats["bots"] if r["bot"] == "heuristic"]
    assert bot_row["deals"] == stats["games"]["finished"]


ROUNDS = 30  # games the writer finishes while the reader reads


def test_a_writer_finishing_games_while_a_reader_reads_in_a_loop(db_url, tmp_path):
    """The race of issue 52: one thread deals and finishes games (each in its own transactions, as the server's
    writer does), the other reads ``finished_games`` and exports after each; every game read has all its seats."""
    store = open_store(db_url)
    read_once, stop = threading.Event(), threading.Event()
    failures: list[BaseException] = []

    def writer() -> None:
        try:
            for _ in range(ROUNDS):
                if stop.is_set():  # the reader failed: no more rounds
                    return
                gid = new_game(store)
                finish(store, gid)
                read_once.wait(WAIT)  # the reader has read since: reads and writes interleave (never asserted)
                read_once.clear()
        except BaseException as e:  # noqa: BLE001 (reported by the main thread)
            failures.append(e)

    t = threading.Thread(target=writer)
    t.start()
    reads = 0
    out = tmp_path / "race.jsonl"
    try:
        while t.is_alive() and reads < 100 * ROUNDS:
            games = list(store.finished_games())
            assert all(whole(g) for g in games), [g["seats"] for g in games if not whole(g)]
            if reads % 5 == 0:
                export_games(db_url, str(out))
                for line in out.read_text().splitlines():
                    assert len(json.loads(line)["stored"]["seats"]) == 3
            reads += 1
            read_once.set()
    finally:
        stop.set()
        read_once.set()
        t.join(WAIT)
    assert not failures, failures
    assert not t.is_alive()
    games = list(store.finished_games())
    assert len(games) == ROUNDS and all(whole(g) for g in games)
    store.close()


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:", "sqlite:///file::memory:?cache=shared&uri=true"])
def test_an_in_memory_database_is_refused(url):
    from tarocchi_rl.web.store import StoreError

    with pytest.raises(StoreError, match="in-memory database lives in one process"):
        open_store(url)
