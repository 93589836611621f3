"""The games of the web tables written to the store (:mod:`~tarocchi_rl.web.store`) off the event loop.

:class:`StoreWriter` is one thread that owns the database's writes: the event loop only puts writes in its bounded
queue (``put_nowait``, never waiting) and the thread applies what has gathered in one transaction (waiting
:data:`_GATHER_SECONDS` after a first write for more: fewer, larger transactions take the GIL from the event loop
less often), so a move is committed a few tens of milliseconds after it is played and a server killed at any moment
loses at most the writes still queued. When the queue is full (the database has stalled for long:
:data:`WRITE_QUEUE` writes behind), a write is dropped, counted in :attr:`StoreWriter.dropped` and logged, and the
event loop goes on; before that, from half full (:meth:`StoreWriter.has_room`), new deals are refused with a
``busy`` error, so that the deals in progress keep the other half. A batch the database refuses is retried write by
write, and a write it still refuses is logged and counted in :attr:`StoreWriter.failed`.

:class:`TableRecorder` follows the tables of the server: a deal is written when its first answer is sent (its
game and seats, and the moves played so far), then its moves after every answer, its record when it ends; a
deal left unfinished is marked abandoned. At a shared table each person seat has its own anonymous id, every
move says who played it, and a seat taken over by a bot is noted (:meth:`TableRecorder.replaced`).
"""

import logging
import queue
import secrets
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from weakref import WeakKeyDictionary

from .store import MOVE_BY, Abandoned, Finished, Moves, NewGame, SeatReplaced, Store, StoreError, Write, utc_now
from .table import Table

__all__ = ["BATCH", "StoreWriter", "TableRecorder", "WRITE_QUEUE", "new_person_id"]

WRITE_QUEUE = 10_000  # writes waiting for the database (a deal is about 3 writes per answer to its person)
BATCH = 500  # writes applied in one transaction at most
_GATHER_SECONDS = 0.02  # how long a transaction gathers writes after its first: fewer, larger transactions
_CLOSE_SECONDS = 10.0  # how long a closing server waits for the queued writes
log = logging.getLogger("tarocchi_rl.web.store")
_STOP = object()


def new_person_id() -> str:
    """An anonymous id for the person of a connection (``p-`` and 12 hex digits): random, never an address."""
    return "p-" + secrets.token_hex(6)


class StoreWriter:
    """The writer thread of a :class:`Store` (module docstring): :meth:`put` from any thread, :meth:`flush` to
    wait for what was put, :meth:`close` to drain and stop."""

    def __init__(self, store: Store, capacity: int = WRITE_QUEUE) -> None:
        self.store = store
        self.capacity = capacity
        self.queue: queue.Queue[Any] = queue.Queue(maxsize=capacity)
        self.dropped = 0  # writes refused because the queue was full
        self.failed = 0  # writes the database refused
        self.written = 0  # writes applied
        self._done = threading.Condition()
        self._put = 0
        self._handled = 0
        self.thread = threading.Thread(target=self._run, name="tarocchi-store-writer", daemon=True)

    def start(self) -> "StoreWriter":
        self.thread.start()
        return self

    def has_room(self) -> bool:
        """Whether the queue is less than half full (a new deal may start: module docstring)."""
        return self.queue.qsize() < self.capacity // 2

    def put(self, write: Write) -> bool:
        """Queue a write without waiting; False when the queue is full and the write was dropped."""
        try:
            self.queue.put_nowait(write)
        except queue.Full:
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 1000 == 0:
                log.error("the game store is %d writes behind: %d writes dropped so far", self.capacity,
                          self.dropped)
            return False
        with self._done:
            self._put += 1
        return True

    def flush(self, timeout: float = _CLOSE_SECONDS) -> bool:
        """Wait until every write put so far is applied (or refused); False after ``timeout`` seconds."""
        with self._done:
            target = self._put
            return self._done.wait_for(lambda: self._handled >= target, timeout)

    def close(self, timeout: float = _CLOSE_SECONDS) -> None:
        """Apply what is queued (for at most ``timeout`` seconds) and stop the thread."""
        if self.thread.is_alive():
            try:
                self.queue.put(_STOP, timeout=timeout)
            except queue.Full:
                log.error("the game store did not take the last %d writes in %g s", self.queue.qsize(), timeout)
                return
            self.thread.join(timeout)

    def _run(self) -> None:
        while True:
            first = self.queue.get()
            batch = [first]
            if first is not _STOP:
                time.sleep(_GATHER_SECONDS)  # the writes of the next moments join this transaction
            while len(batch) < BATCH:
                try:
                    batch.append(self.queue.get_nowait())
                except queue.Empty:
                    break
            stop = any(w is _STOP for w in batch)
            writes = [w for w in batch if w is not _STOP]
            if writes:
                self._write(writes)
            with self._done:
                self._handled += len(writes)
                self._done.notify_all()
            if stop:
                return

    def _write(self, writes: list[Write]) -> None:
        try:
            self.store.write(writes)
            self.written += len(writes)
            return
        except StoreError as e:
            if len(writes) == 1:
                self.failed += 1
                log.error("a game store write failed: %s", e)
                return
            log.warning("a batch of %d game store writes failed (%s): retried one by one", len(writes), e)
        for w in writes:
            self._write([w])


@dataclass
class _Stored:
    """What of a table's deal is written: its game id, its moves, whether it is over (finished or abandoned)."""

    id: str
    moves: int = 0
    closed: bool = False


class TableRecorder:
    """Writes the deals of the server's tables through a :class:`StoreWriter` (module docstring). Called on the
    event loop only; a table it no longer sees (garbage) is forgotten."""

    def __init__(self, writer: StoreWriter) -> None:
        self.writer = writer
        self._deals: WeakKeyDictionary[Table, _Stored] = WeakKeyDictionary()

    def has_room(self) -> bool:
        return self.writer.has_room()

    def sync(self, table: Table, person: str | Mapping[int, str], record: dict[str, Any] | None = None) -> None:
        """After an answer: the deal's game and seats when new, the moves since, and ``record`` (the finished
        deal's ``tarocchi-record/1`` record) when it is over. ``person``: the anonymous id of the table's person,
        or of each person seat (a shared table)."""
        stored = self._deals.get(table)
        if stored is None:
            stored = self._deals[table] = _Stored(uuid.uuid4().hex)
            people = {k: person for k in table.persons} if isinstance(person, str) else person
            seats = tuple(("person", people[k]) if k in table.persons or bot is None else ("bot", bot.name)
                          for k, bot in enumerate(table.seats))
            self.writer.put(NewGame(stored.id, table.game.variant, dict(table.game.options), table.practice,
                                    utc_now(), seats, getattr(table, "challenge_key", None),
                                    getattr(table, "challenge_deal", None)))  # a challenge's deal (challenges.py)
        if stored.closed:
            return
        steps = table.steps
        if len(steps) > stored.moves:
            rows = tuple((int(s["seat"]), str(s["action"]), int(table.step_ms[k]))
                         for k, s in enumerate(steps[stored.moves:], stored.moves))
            by = tuple(MOVE_BY.get(str(s["by"]), "bot") for s in steps[stored.moves:])
            self.writer.put(Moves(stored.id, stored.moves, rows, by))
            stored.moves = len(steps)
        if record is not None:
            self.writer.put(Finished(stored.id, record, utc_now()))
            stored.closed = True

    def replaced(self, table: Table, seat: int, bot: str) -> None:
        """A bot took over a person's seat of ``table``'s deal (stored once the deal is)."""
        stored = self._deals.get(table)
        if stored is not None and not stored.closed:
            self.writer.put(SeatReplaced(stored.id, seat, bot))

    def abandon(self, table: Table | None) -> None:
        """The deal of ``table`` ends unfinished (its connection closed, a new deal replaced it, a bot failed)."""
        stored = self._deals.get(table) if table is not None else None
        if stored is not None and not stored.closed:
            self.writer.put(Abandoned(stored.id, utc_now()))
            stored.closed = True

    def game_id(self, table: Table) -> str | None:
        """The stored game of a table's deal (None: not written yet)."""
        stored = self._deals.get(table)
        return None if stored is None else stored.id

