"""Tables for several people (``open`` / ``join`` over ``/ws``): one deal, people at some seats, bots at the others.

A person opens a table (variant, options, which seats are people's and which bots', whether the lobby lists it)
and gets its code, :data:`CODE_LENGTH` characters of :data:`CODE_ALPHABET` (no 0/O, 1/I/L: read aloud or typed
from a phone), and a seat token. Others join by the code and get their own seat's token; the deal starts when
every person's seat is taken, and the bots play between the people's moves as at a table for one. Each connection
is bound to one seat and is sent only that seat's view (:meth:`~tarocchi_rl.web.table.Table.snapshot`), its own
moves as it saw them, and who is present.

Leaving: when a person's connection drops, the seat waits :attr:`~tarocchi_rl.web.app.ServerConfig.seat_grace`
seconds (``serve --seat-grace``); then the table's replacement bot plays it (the store notes
``seats.replaced_by`` and each move's ``by``), and the person who comes back with the seat's token (``join`` with
``code`` and ``token``) plays it again from the next decision. Before the deal starts a seat left that long is
free again. When nobody is left (every person away past the grace) the table closes, its deal abandoned. A
connection that comes with the token of a seat held by another connection takes it over (the other is told).

Forced moves: a person's move when it is their only legal one is not played at once (that would tell the others
that the seat had one legal card, or too few trumps for a poignée): the table holds it
(:attr:`~tarocchi_rl.web.table.Table.hold_forced`) and plays it after that person's typical decision time (the
median of their chosen moves' times at this table, :data:`_FIRST_PERSON_PACE` before the first), in a message of its
own, as a chosen move would come; the other seats see it as a chosen move (``by`` ``human``), the seat itself is
told (its snapshot's ``forced``), and the store notes ``forced``. A person away is paced the same way.

Guessing: a wrong code or token costs the address one of :data:`GUESSES_BURST` tries, refilled at
:data:`_GUESSES_PER_SECOND`; with none left, ``join`` is refused before any table is looked up. A table counts
among its opener's tables (:class:`~tarocchi_rl.web.limits.TableCount`) until it closes, lives at most the
table lifetime and closes after the idle timeout without a move.

Every message to a bound connection goes through its :class:`Link`: a bounded outbox sent in order by one task,
so that a person who does not read never holds up the others' moves (:data:`OUTBOX` messages behind, the
connection is closed).
"""

import asyncio
import collections
import contextlib
import hmac
import logging
import secrets
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..play import bot_seeds, new_seed
from ..variants import get_variant
from . import limits
from .table import DecisionClock, Table, check_options, client_seed

if TYPE_CHECKING:  # pragma: no cover
    from .app import Server
    from .resume import OwnTables

__all__ = ["BOT_FAILED", "BotFailed", "CODE_ALPHABET", "CODE_LENGTH", "Conn", "LOBBY_PER_CLIENT", "LOBBY_SIZE",
           "Link", "PersonSeat", "SEAT_GRACE", "SINGLE_PROCESS", "SharedTable", "SharedTables", "new_code",
           "normalize_code"]

CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"  # 31 characters that cannot be mistaken for one another
CODE_LENGTH = 8  # 31**8: about 8.5e11 codes
TOKEN_BYTES = 18  # a seat token: 24 URL-safe characters
_MAX_CODE_TEXT = 32  # characters of a code as a client sends it (spaces and dashes dropped)
MAX_TOKEN_TEXT = 64
SEAT_GRACE = 60.0  # seconds a person's seat waits for them before its bot plays it (serve --seat-grace)
LOBBY_SIZE = 50  # tables GET /v1/tables lists at most (SharedTables.lobby: each address's oldest first)
LOBBY_PER_CLIENT = 2  # lobby tables waiting for people that one address may have at once (open refused beyond)
OUTBOX = 64  # messages waiting for a connection; one more and it is closed
GUESSES_BURST = 10  # wrong codes or tokens an address may send at once ...
_GUESSES_PER_SECOND = 0.1  # ... and on average (6 a minute)
_TRACKED_GUESSERS = 4096  # addresses whose wrong guesses are remembered (the least recent forgotten)
_LINK_DRAIN_SECONDS = 2.0  # what a closing connection waits for its outbox
OVERFLOW_CLOSE = 1008  # close code of a connection that does not read its messages
_FIRST_PERSON_PACE = 1.0  # seconds a person's forced move waits before they chose a move (then: their median)
PERSON = "human"  # a person's seat in ``open``'s seats (as in ``start``)
BOT_FAILED = "a bot failed; the deal is abandoned: send start for a new one"  # all a client learns of it
SINGLE_PROCESS = ("shared tables need `serve --workers 1`: this server runs {workers} processes, and a table's code "
                  "reaches only the process that opened it")  # open / join's error (and serve's note) above 1
log = logging.getLogger("tarocchi_rl.web")


class BotFailed(Exception):
    """A bot of a table failed (its details are in the log); the deal cannot go on."""


def new_code() -> str:
    """A table code: :data:`CODE_LENGTH` characters of :data:`CODE_ALPHABET`, from the OS's random source."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normalize_code(value: Any) -> str | None:
    """A client's code -> the code (upper case, spaces and dashes dropped); None when it cannot be one."""
    if not isinstance(value, str) or len(value) > _MAX_CODE_TEXT:
        return None
    code = value.replace("-", "").replace(" ", "").upper()
    if len(code) != CODE_LENGTH or any(c not in CODE_ALPHABET for c in code):
        return None
    return code


class Link:
    """A connection's outbox: :meth:`put` never waits; one task sends the messages in order. A connection that
    lets :data:`OUTBOX` messages pile up is closed (code :data:`OVERFLOW_CLOSE`)."""

    def __init__(self, websocket: Any, encode: Callable[[Any], str], size: int = OUTBOX) -> None:
        self.websocket = websocket
        self.encode = encode
        self.queue: asyncio.Queue[str | None] = asyncio.Queue(size)
        self.closed = False
        self.task = asyncio.get_running_loop().create_task(self._send_all())
        self.closing: asyncio.Task[None] | None = None

    def put(self, msg: dict[str, Any]) -> None:
        if self.closed:
            return
        try:
            self.queue.put_nowait(self.encode(msg))
        except asyncio.QueueFull:
            log.info("a /ws connection did not read %d messages: closed", self.queue.maxsize)
            self.closed = True
            self.task.cancel()
            self.closing = asyncio.get_running_loop().create_task(self._close())

    async def _send_all(self) -> None:
        while True:
            text = await self.queue.get()
            if text is None:
                return
            await self.websocket.send_text(text)

    async def _close(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.websocket.close(code=OVERFLOW_CLOSE), _LINK_DRAIN_SECONDS)

    async def drain(self, timeout: float = _LINK_DRAIN_SECONDS) -> None:
        """Send what is queued (at most ``timeout`` seconds), then stop."""
        if not self.closed:
            self.closed = True
            with contextlib.suppress(asyncio.QueueFull):
                self.queue.put_nowait(None)
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await asyncio.wait_for(self.task, timeout)

    def stop(self) -> None:
        """The connection is gone: drop what is queued."""
        self.closed = True
        self.task.cancel()


@dataclass(eq=False)
class Conn:
    """A /ws connection as the shared tables see it: its address, its person's anonymous id, its outbox (from
    its first ``open`` / ``join``), the table and seat it is bound to, and messages to send after its answer."""

    client: str
    person: str
    websocket: Any = None
    encode: Callable[[Any], str] = str
    link: Link | None = None
    table: "SharedTable | None" = None
    seat: "PersonSeat | None" = None
    later: list[dict[str, Any]] = field(default_factory=list)

    def ensure_link(self) -> None:
        if self.link is None and self.websocket is not None:
            self.link = Link(self.websocket, self.encode)

    def send(self, msg: dict[str, Any]) -> None:
        if self.link is not None:
            self.link.put(msg)

    def take_later(self) -> list[dict[str, Any]]:
        out, self.later = self.later, []
        return out


@dataclass(eq=False)
class PersonSeat:
    """A person's seat: its index, its token (None: free), the anonymous id it is stored under, the connection
    at it (None: away), since when it is away, whether its grace ran out, the moves already sent to it, and how
    long its person takes to choose a move (which paces their forced moves)."""

    index: int
    token: str | None = None
    person: str = ""
    conn: Conn | None = None
    away_since: float | None = None
    expired: bool = False
    timer: asyncio.TimerHandle | None = None
    sent: int = 0
    clock: DecisionClock = field(default_factory=lambda: DecisionClock(_FIRST_PERSON_PACE))  # its chosen moves' times


@dataclass(eq=False)
class SharedTable:
    """One deal shared by people: its code, the :class:`Table`, the person seats, its opener's address (whose
    table it counts as), whether the lobby lists it, the bot that replaces a person who left, and its clocks."""

    code: str
    table: Table
    seats: dict[int, PersonSeat]
    owner: str
    lobby: bool
    replacement: str
    opened: float = field(default_factory=time.monotonic)
    active: float = field(default_factory=time.monotonic)
    started: bool = False
    closed: bool = False
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    watchdog: "asyncio.Task[None] | None" = None
    result: dict[str, Any] | None = None
    forced: asyncio.TimerHandle | None = None  # a person's held forced move, played when it fires

    def free(self) -> list[int]:
        return [k for k, s in self.seats.items() if s.token is None]

    def present(self) -> list[PersonSeat]:
        return [s for s in self.seats.values() if s.conn is not None]

    def people(self, grace: float) -> list[dict[str, Any]]:
        """Each person seat: taken, present, the bot playing it while its person is away, and for a seat whose
        person is away and not yet replaced the seconds its grace has left (``away_left``)."""
        now = time.monotonic()
        return [{"seat": k, "taken": s.token is not None, "present": s.conn is not None,
                 "replaced_by": self.table.replaced_by(k),
                 **({"away_left": round(max(0.0, s.away_since + grace - now), 1)}
                    if s.away_since is not None and not s.expired and s.conn is None else {})}
                for k, s in self.seats.items()]

    def seat_of(self, token: Any) -> PersonSeat | None:
        """The seat whose token is ``token`` (compared in constant time); None: no seat's."""
        if not isinstance(token, str) or not token.isascii() or len(token) > MAX_TOKEN_TEXT:
            return None
        found = None
        for s in self.seats.values():
            if s.token is not None and hmac.compare_digest(s.token, token):
                found = s
        return found

    def listing(self, now: float) -> dict[str, Any]:
        """What the lobby shows of it."""
        t = self.table
        return {"code": self.code, "variant": t.game.variant, "options": dict(t.game.options),
                "players": t.game.num_players, "seats": [t.player(k) for k in range(t.game.num_players)],
                "people": len(self.seats), "taken": len(self.seats) - len(self.free()),
                "open_for": round(now - self.opened), "practice": t.practice}


class SharedTables:
    """The shared tables of a server process, by code (module docstring). Used from the event loop only."""

    def __init__(self, host: "Server", own: "Callable[[SharedTables], OwnTables]") -> None:
        self.host = host
        self.tables: dict[str, SharedTable] = {}
        self.guesses: collections.OrderedDict[str, limits.TokenBucket] = collections.OrderedDict()
        self._tasks: set[asyncio.Task[Any]] = set()
        self.own = own(self)  # the deals of one person, taken back after a reload (resume.py: it imports this module)

    @property
    def grace(self) -> float:
        return float(self.host.config.seat_grace)

    def lobby(self) -> list[dict[str, Any]]:
        """The tables opened for the lobby that still have a free seat and a person sitting at it (a table whose
        people left is not listed, from that moment), :data:`LOBBY_SIZE` at most: every address's oldest table,
        oldest first, then every address's second (:data:`LOBBY_PER_CLIENT`). A burst of new tables, from a few
        addresses or many, never pushes an older table off the list, and the longest wait is joined first."""
        now = time.monotonic()
        rank: collections.Counter[str] = collections.Counter()
        listed = []
        for st in sorted(self.tables.values(), key=lambda st: st.opened):
            if st.lobby and not st.started and not st.closed and st.free() and st.present():
                listed.append((rank[st.owner], st.opened, st))
                rank[st.owner] += 1
        listed.sort(key=lambda x: x[:2])
        return [st.listing(now) for _, _, st in listed[:LOBBY_SIZE]]

    def _check_lobby(self, client: str) -> None:
        """A ValueError when ``client`` has :data:`LOBBY_PER_CLIENT` lobby tables waiting for people already (one
        whose people left, unlisted, does not count: its total is bounded by the tables per client)."""
        waiting = sum(st.owner == client and st.lobby and not st.started and not st.closed and bool(st.present())
                      for st in self.tables.values())
        if waiting >= LOBBY_PER_CLIENT:
            raise ValueError(f"lobby: your address has {waiting} tables waiting for people in the lobby (the most "
                             "per address): start one, or open this one without the lobby and give its code")

    # -- guesses ----------------------------------------------------------------------------------------------
    def _bucket(self, client: str) -> limits.TokenBucket:
        bucket = self.guesses.get(client)
        if bucket is None:
            bucket = self.guesses[client] = limits.TokenBucket(_GUESSES_PER_SECOND, GUESSES_BURST)
            while len(self.guesses) > _TRACKED_GUESSERS:
                self.guesses.popitem(last=False)
        self.guesses.move_to_end(client)
        return bucket

    def check_guesses(self, client: str) -> None:
        """A ValueError when ``client`` has no try left for a code or a token (before anything is looked up)."""
        bucket = self._bucket(client)
        if bucket.level() < 1.0:
            wait = max(1, round((1.0 - bucket.tokens) / bucket.rate))
            raise ValueError(f"too many wrong table codes or seat tokens from your address: try again in {wait} s")

    def _check_processes(self) -> None:
        processes = int(self.host.config.processes)
        if processes > 1:
            raise ValueError(SINGLE_PROCESS.format(workers=processes))

    def wrong(self, client: str, message: str) -> ValueError:
        """A wrong code or token from ``client``: one try spent; the error to raise."""
        self._bucket(client).spend(1.0)
        return ValueError(message)

    # -- open, join, act, leave -------------------------------------------------------------------------------
    def open(self, msg: dict[str, Any], conn: Conn) -> dict[str, Any]:
        """``open``: a new table with the connection at its first person seat; the ``joined`` answer."""
        if conn.table is not None:
            raise ValueError(f"you sit at table {conn.table.code} already: close the connection to leave it")
        host = self.host
        self._check_processes()
        variant = msg.get("variant")
        options = check_options(variant, msg.get("options"))
        n = get_variant(str(variant)).n_players
        seats = msg.get("seats")
        if not isinstance(seats, list) or len(seats) != n:
            raise ValueError(f"seats: expected a list of {n} entries for {variant} ('human' for each person's "
                             "seat, bots by name)")
        persons = [k for k, s in enumerate(seats) if s == PERSON]
        if not persons:
            raise ValueError("seats: at least one entry must be 'human' (yours)")
        lobby = msg.get("lobby", False)
        if not isinstance(lobby, bool):
            raise ValueError("lobby: expected true (list the table in GET /v1/tables) or false")
        replacement = host.catalogue.resolve(msg.get("replacement", host.default_bot), "replacement")
        host.catalogue.check_plays(replacement, str(variant), "replacement")
        names = [None if s == PERSON else host.catalogue.resolve(s, f"seats[{k}]") for k, s in enumerate(seats)]
        for k, name in enumerate(names):
            if name is not None:
                host.catalogue.check_plays(name, str(variant), f"seats[{k}]")
        practice = msg.get("seed") is not None  # the opener knows the seed, so every hand: practice only
        seed = client_seed(msg["seed"]) if practice else new_seed()
        if host.recorder is not None and not host.recorder.has_room():
            raise limits.Busy("game store", False)
        refusal = host.table_count.refusal(conn.client)
        if refusal is not None:
            raise ValueError(refusal)
        if lobby:
            self._check_lobby(conn.client)
        seeds = bot_seeds(seed, n)
        bots = [None if name is None else host.catalogue.seat_bot(name, seeds[k]) for k, name in enumerate(names)]
        table = Table.deal(str(variant), options, bots, seed, practice=practice)
        table.hold_forced = True  # a person's forced move is paced (module docstring)
        code = new_code()
        while code in self.tables:
            code = new_code()
        st = SharedTable(code, table, {k: PersonSeat(k) for k in persons}, conn.client, lobby, replacement)
        host.table_count.change(conn.client, False, True)  # counted as its opener's until it closes
        self.tables[code] = st
        st.watchdog = self._spawn(self._watch(st))
        seat = st.seats[persons[0]]
        self._sit(st, seat, conn)
        log.info("shared table opened: %s, %d people%s", table.game.variant, len(persons),
                 ", practice" if practice else "")
        return self._joined(st, seat)

    async def join(self, msg: dict[str, Any], conn: Conn) -> dict[str, Any]:
        """``join``: a free seat of the table ``code``, or with ``token`` one's own seat back."""
        if conn.table is not None:
            raise ValueError(f"you sit at table {conn.table.code} already: close the connection to leave it")
        self._check_processes()
        self.check_guesses(conn.client)
        code = normalize_code(msg.get("code"))
        if code is None:
            raise self.wrong(conn.client, f"code: expected {CODE_LENGTH} characters of {CODE_ALPHABET}")
        st = self.tables.get(code)
        if st is None or st.closed:
            raise self.wrong(conn.client, f"no open table has the code {code}")
        if "token" in msg:
            seat = st.seat_of(msg["token"])
            if seat is None:
                raise self.wrong(conn.client, f"wrong seat token for table {code}")
            return await self._reclaim(st, seat, conn)
        free = st.free()
        if not free:
            raise ValueError(f"table {code} is full: every person's seat is taken (a seat's token takes it back)")
        seat = st.seats[free[0]]
        self._sit(st, seat, conn)
        st.started = not st.free()  # everybody is here: the deal starts
        answer = self._joined(st, seat)
        self._tell_people(st, conn)
        if st.started:
            async with st.lock:
                st.active = time.monotonic()
                try:
                    await self._play(st, conn.client, conn)
                except BotFailed:
                    conn.later.append({"type": "error", "error": BOT_FAILED, "fatal": True})
                    return answer
                conn.later.append(self._message(st, seat))
                if st.result is not None:
                    self._finish(st)
        return answer

    async def _reclaim(self, st: SharedTable, seat: PersonSeat, conn: Conn) -> dict[str, Any]:
        async with st.lock:
            if st.closed:
                raise ValueError(f"no open table has the code {st.code}")
            old = seat.conn
            if old is not None:  # the same person from a new connection (a reload): the old one stands up
                old.send({"type": "error", "fatal": True, "error": f"your seat at table {st.code} was taken back "
                          "with its token by another connection"})
                old.table = old.seat = None
            self._sit(st, seat, conn)
            if st.table.replaced_by(seat.index) is not None:
                st.table.reclaim(seat.index)
            answer = self._joined(st, seat)
            if st.started:
                seat.sent = 0  # a new page (a reload) knows nothing: every move so far, as this seat saw them
                conn.later.append(self._message(st, seat))
            self._tell_people(st, conn)
            return answer

    async def act(self, msg: dict[str, Any], conn: Conn) -> dict[str, Any]:
        """``act`` at the connection's shared table: its seat's move, the bots', then everybody's view."""
        st, seat = conn.table, conn.seat
        assert st is not None and seat is not None
        if not st.started:
            raise ValueError(f"table {st.code} waits for {len(st.free())} more people: give them its code")
        if "action" not in msg:
            raise ValueError("action: missing (an action string such as 'play:KC')")
        async with st.lock:
            if st.closed or conn.table is not st:
                raise ValueError("the table is closed: open or join another")
            self.host.check_queue(st.table, conn.client)  # busy: the move is not played
            forced = st.table.held_forced() == seat.index  # (a client may send it: then it is a chosen move)
            st.table.act(msg["action"], seat.index)  # an unknown or illegal move: ValueError, the game unchanged
            if not forced:
                seat.clock.note(st.table.step_ms[-1] / 1000.0)  # since the move before: the person's decision
            st.active = time.monotonic()
            try:
                await self._play(st, conn.client, conn)
            except BotFailed:
                return {"type": "error", "error": BOT_FAILED, "fatal": True}
            answer = self._message(st, seat)
            if st.result is not None:
                self._finish(st)
            return answer

    def leave(self, conn: Conn) -> None:
        """The connection is gone: its seat waits :attr:`grace` seconds for its person."""
        st, seat = conn.table, conn.seat
        conn.table = conn.seat = None
        if conn.link is not None:
            conn.link.stop()
        if st is None or seat is None or seat.conn is not conn or st.closed:
            return
        seat.conn = None
        seat.away_since = time.monotonic()
        seat.timer = asyncio.get_running_loop().call_later(self.grace, self._later, self._grace_over, st, seat)
        self._tell_people(st, None)

    def close_all(self) -> None:
        """At shutdown: every table's timers and tasks stop, the deals in progress abandoned (and the parked deals
        of one person)."""
        self.own.close_all()
        for st in list(self.tables.values()):
            if st.started and st.result is None:
                self.host.abandon(st.table)
            st.closed = True
            for s in st.seats.values():
                if s.timer is not None:
                    s.timer.cancel()
            if st.forced is not None:
                st.forced.cancel()
        for task in list(self._tasks):
            task.cancel()
        self.tables.clear()

    # -- inside -----------------------------------------------------------------------------------------------
    def _spawn(self, coro: Coroutine[Any, Any, None]) -> "asyncio.Task[None]":
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _later(self, fn: Callable[..., Coroutine[Any, Any, None]], *args: Any) -> None:
        self._spawn(fn(*args))

    def _sit(self, st: SharedTable, seat: PersonSeat, conn: Conn) -> None:
        if seat.token is None:
            seat.token = secrets.token_urlsafe(TOKEN_BYTES)
            seat.person = conn.person
        if seat.timer is not None:
            seat.timer.cancel()
            seat.timer = None
        seat.conn, seat.away_since, seat.expired = conn, None, False
        conn.table, conn.seat = st, seat
        conn.ensure_link()

    def _joined(self, st: SharedTable, seat: PersonSeat) -> dict[str, Any]:
        t = st.table
        return {"type": "joined", "code": st.code, "seat": seat.index, "token": seat.token, "variant": t.game.variant,
                "options": dict(t.game.options), "players": [t.player(k) for k in range(t.game.num_players)],
                "lobby": st.lobby, "started": st.started, "waiting_for": len(st.free()),
                "people": st.people(self.grace), "grace": self.grace, "practice": t.practice}

    def _tell_people(self, st: SharedTable, but: Conn | None) -> None:
        msg = {"type": "people", "code": st.code, "waiting_for": len(st.free()), "people": st.people(self.grace)}
        for s in st.present():
            if s.conn is not but and s.conn is not None:
                s.conn.send(msg)

    def _message(self, st: SharedTable, seat: PersonSeat) -> dict[str, Any]:
        """``state`` (or ``over``) for one seat: its view, the moves since its last message as it saw them."""
        t = st.table
        moves = t.moves_from(seat.sent, seat.index)
        seat.sent = len(t.steps)
        msg: dict[str, Any] = {"type": "over" if t.is_over() else "state", "code": st.code,
                               "table": t.snapshot(seat.index), "moves": moves, "people": st.people(self.grace)}
        if t.is_over():
            if st.result is None:
                st.result = t.result()
            msg.update(st.result)
        return msg

    async def _play(self, st: SharedTable, client: str, actor: Conn | None) -> None:
        """The bots' moves up to a person's decision, then every present seat's view but ``actor``'s (whose
        message the caller makes: its answer); the deal stored. A failing bot closes the table (every other
        person told) and raises :class:`BotFailed`. Holds ``st.lock``."""
        try:
            await self.host.advanced(st.table, client, Table.advance)
        except BotFailed:
            self._close(st, BOT_FAILED, actor)
            raise
        except limits.Busy as e:  # a slow bot's queue is full: the bots play a little later
            asyncio.get_running_loop().call_later(e.retry_after, self._later, self._resume, st)
        if st.table.is_over() and st.result is None:
            st.result = st.table.result()
        self.host.store_shared(st.table, {k: s.person for k, s in st.seats.items()}, st.result)
        for s in st.present():
            if s.conn is not None and s.conn is not actor:
                s.conn.send(self._message(st, s))
        self._pace_forced(st)

    def _pace_forced(self, st: SharedTable) -> None:
        """A person's forced move held by the table: played after that person's typical decision time
        (:meth:`_play_forced`). Holds ``st.lock``."""
        k = st.table.held_forced()
        if st.forced is not None:
            st.forced.cancel()
            st.forced = None
        if k is not None and not st.closed:
            st.forced = asyncio.get_running_loop().call_later(st.seats[k].clock.typical(), self._later,
                                                              self._play_forced, st, len(st.table.steps))

    async def _play_forced(self, st: SharedTable, steps: int) -> None:
        """The held forced move, if the table is where it was held (``steps`` moves; else it moved on: the person
        played it), then the bots, every present seat told."""
        async with st.lock:
            st.forced = None
            if st.closed or len(st.table.steps) != steps or not st.table.play_forced():
                return
            with contextlib.suppress(BotFailed):  # the table is closed, its people told
                await self._play(st, st.owner, None)
            if st.result is not None:
                self._finish(st)

    async def _resume(self, st: SharedTable) -> None:
        """The bots play on (after a takeover, or a busy queue), every present seat told."""
        async with st.lock:
            if st.closed:
                return
            with contextlib.suppress(BotFailed):  # the table is closed, its people told
                await self._play(st, st.owner, None)
            if st.result is not None:
                self._finish(st)

    async def _grace_over(self, st: SharedTable, seat: PersonSeat) -> None:
        """A person away for the grace: before the deal, the seat is free again; after, its bot plays it; with
        nobody left, the table closes."""
        async with st.lock:
            seat.timer = None
            if st.closed or seat.conn is not None:
                return
            seat.expired = True
            if all(s.conn is None and (s.expired or s.token is None) for s in st.seats.values()):
                self._close(st, None)
                return
            if not st.started:
                seat.token, seat.person, seat.sent = None, "", 0
                self._tell_people(st, None)
                return
            k = seat.index
            bot = self.host.catalogue.seat_bot(st.replacement, bot_seeds(st.table.seed, st.table.game.num_players)[k])
            st.table.replace(k, bot)
            if self.host.recorder is not None:
                self.host.recorder.replaced(st.table, k, st.replacement)
            log.info("shared table: seat %d taken over by %s", k, st.replacement)
        await self._resume(st)

    async def _watch(self, st: SharedTable) -> None:
        """Close the table at its lifetime, or idle (no move) for the idle timeout."""
        config = self.host.config
        while not st.closed:
            now = time.monotonic()
            idle_left = st.active + config.idle_timeout - now
            life_left = st.opened + config.table_lifetime - now
            if min(idle_left, life_left) <= 0:
                async with st.lock:
                    if not st.closed:
                        self._close(st, f"idle for {config.idle_timeout:g} s: the table is closed"
                                    if idle_left <= life_left else
                                    f"open for {config.table_lifetime:g} s, the most a table may: it is closed")
                return
            await asyncio.sleep(min(idle_left, life_left) + 0.01)

    def _close(self, st: SharedTable, why: str | None, but: Conn | None = None) -> None:
        """The table ends unfinished (a bot failed, its lifetime, idle, nobody left): its deal abandoned, the
        people still there (but ``but``) told ``why``."""
        for s in st.present():
            if s.conn is not None and s.conn is not but and why is not None:
                s.conn.send({"type": "error", "fatal": True, "code": st.code, "error": why})
        if st.started:
            self.host.abandon(st.table)
        self._finish(st)

    def _finish(self, st: SharedTable) -> None:
        """The table is over (finished or closed): out of the list, its place given back, its people unbound."""
        if st.closed and st.code not in self.tables:
            return
        st.closed = True
        self.tables.pop(st.code, None)
        self.host.table_count.change(st.owner, True, False)
        if st.forced is not None:
            st.forced.cancel()
            st.forced = None
        for s in st.seats.values():
            if s.timer is not None:
                s.timer.cancel()
                s.timer = None
            if s.conn is not None:
                s.conn.table = s.conn.seat = None
        current = asyncio.current_task()
        if st.watchdog is not None and st.watchdog is not current:
            st.watchdog.cancel()
