"""``tarocchi-rl serve``: the browser game and the HTTP API, a Starlette app (README: "Playing in the browser and
the HTTP API").

| route                | what                                                                                  |
|----------------------|---------------------------------------------------------------------------------------|
| ``GET /``            | the page (``static/``: plain HTML, CSS and JavaScript)                                |
| ``WS /ws``           | a table per connection, or a seat at a shared table (messages: :data:`WS_MESSAGES`)   |
| ``GET /v1/tables``   | the lobby: shared tables opened with ``lobby`` that have a free seat                  |
| ``GET /v1/variants`` | variants, players, options (types, defaults, choices), the action tables              |
| ``GET /v1/bots``     | the bots this server offers (a client names one; never a spec or a path)              |
| ``POST /v1/act``     | a ``tarocchi-bot/1`` act request -> the bot's answer (``?agent=NAME``, default heuristic)|
| ``POST /v1/replay``  | a ``tarocchi-record/1`` record -> validated and scored (``?steps=true``: every step)  |
| ``GET /v1/health``   | ``{"status": "ok", "tables": N}``                                                     |
| ``GET /openapi.json``| the OpenAPI description of these routes                                               |

Every error is a 4xx with ``{"error": "..."}``; bodies are limited (``max_body``, 1 MB: larger is 413), and
nothing a client sends names a file. A table lives in its WebSocket handler: no other connection can reach it;
an idle one (no move for ``idle_timeout`` seconds: pings do not count) is closed, and any one after
``table_lifetime``. A table's moves against fast bots (random, heuristic, the networks, a snapshot: about a
millisecond) are played on the event loop; everything else runs in the queue of its kind, off the loop
(:mod:`~tarocchi_rl.web.limits`: ``/v1/act``'s rebuilt positions, searches, external programs, replays), and a
full queue is a 503 with ``Retry-After`` (429: the client's own share) or a ``busy`` error frame. Tables are per
connection, so ``serve --workers N`` (processes) scales both the tables and the API.

Privacy: a table's messages before ``over`` carry no seed, no other seat's hidden card and no bot's legal
moves (:mod:`~tarocchi_rl.web.table`); a failing bot is a generic error to the client, its details go to the
log; bots are shown by display name (:mod:`~tarocchi_rl.web.bots`). A deal from a client's seed is a practice
table (``"practice": true`` in ``over`` and its record).

Shared tables (:mod:`~tarocchi_rl.web.shared`): ``open`` seats people and bots at one table under a short code,
``join`` takes a free seat by the code (or one's own back with its seat token); each connection is sent its own
seat's view only; a seat whose person left is played by a bot after ``seat_grace`` seconds until they come back.

Games: with ``ServerConfig.db`` (``serve --db URL``) every deal is stored as it is played (its seats, each move
and its time, the record at the end, the practice flag; a person by an anonymous id of the connection, never the
address), written by one thread off the event loop (:mod:`~tarocchi_rl.web.writer`, :mod:`~tarocchi_rl.web.store`);
``tarocchi-rl games export`` and ``stats`` read them, practice tables left out unless asked for.

Cross-site: only the hosts of :attr:`ServerConfig.allowed_hosts` are served (``TrustedHostMiddleware``: no DNS
rebinding); ``/ws`` refuses a browser ``Origin`` other than the server's own host or one of
:attr:`ServerConfig.allowed_origins` (no Origin: a non-browser client, allowed); a POST body must be declared
``application/json`` (415 otherwise: a cross-site form cannot send it without a preflight). Bodies and
WebSocket messages are parsed by :func:`tarocchi_rl.bounded.loads` (depth and integer bounds): hostile JSON is
a 400 or an error frame, never a traceback.
"""

import asyncio
import contextlib
import gc
import json
import logging
import os
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from ..agents.cmd import stop_all as stop_programs
from ..bot import BotServer, request_id
from ..bounded import BoundedInputError, loads
from ..play import bot_seeds, make_bot, new_seed
from ..variants import VARIANTS, get_variant
from ..views import seat_request
from . import limits, workers
from . import openapi as oa
from .bots import DEFAULT_BOT, DEFAULT_ISMCTS, Catalogue
from .challenges import Challenges
from .headers import SecurityHeaders
from .inline import InlineAct
from .openapi import Endpoint
from .resume import TAKEN_TEXT, OwnTables
from .shared import BOT_FAILED, SEAT_GRACE, BotFailed, Conn, SharedTables
from .store import open_store
from .table import SeatBot, Table, check_options, client_seed, variants_info
from .writer import StoreWriter, TableRecorder, new_person_id

__all__ = ["PROTOCOL", "ServerConfig", "WS_MESSAGES", "app_from_env", "create_app"]

PROTOCOL = "tarocchi-web/1"
STATIC = Path(__file__).resolve().parent / "static"
CONFIG_ENV = "TAROCCHI_WEB_CONFIG"  # the JSON ServerConfig of `serve --workers N` processes
MAX_WS_MESSAGE = 64 * 1024  # characters of one WebSocket message from a client
WS_MESSAGES = {  # client -> server: fields (all others are an error)
    "start": ("type", "id", "variant", "options", "seats", "seed"),
    "open": ("type", "id", "variant", "options", "seats", "lobby", "replacement", "seed"),
    "join": ("type", "id", "code", "token"),
    "challenge": ("type", "id", "name", "deal", "player"),
    "act": ("type", "id", "action"),
    "resume": ("type", "id", "code", "token"),  # a deal of one's own taken back after a reload (resume.py)
    "ping": ("type", "id"),
}
IDLE_CLOSE = 4000  # WebSocket close code of an idle table
ORIGIN_CLOSE = 1008  # WebSocket close code (policy violation) of a connection from a page of another site
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")  # the Host names of a server bound to loopback
_JSON_MEDIA_TYPE = "application/json"  # the only body a POST takes (a cross-site form cannot send it unasked)
_WARM_SEARCH = "ismcts:iterations=8"  # the search run at startup in the search queue's thread
log = logging.getLogger("tarocchi_rl.web")
_WARM_LOG = "tarocchi_rl.web.warmup"  # a line per warm-up step (print_warmup_progress prints them)
_warm_log = logging.getLogger(_WARM_LOG)


class _ToStderr(logging.StreamHandler):
    """Writes to the sys.stderr of the moment (a test may have replaced it since the handler was made)."""

    def emit(self, record: logging.LogRecord) -> None:
        self.setStream(sys.stderr)
        super().emit(record)


def print_warmup_progress() -> None:
    """The app's warm-up steps (:data:`_WARM_LOG`) printed to stderr as they end, one line
    each, so that a first start (Numba's cache cold: minutes) says what it is doing."""
    logger = logging.getLogger(_WARM_LOG)
    if not any(isinstance(h, _ToStderr) for h in logger.handlers):
        handler = _ToStderr()
        handler.setFormatter(logging.Formatter("warm-up: %(message)s"))
        logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
T = TypeVar("T")


@dataclass
class ServerConfig:
    """What ``tarocchi-rl serve`` sets: the extra bots (``--agents``, ``NAME=SPEC`` or a bare spec), the default
    seating offered by the page (``--seats``), the built-in search's spec, limits, whether to warm the kernels
    up at startup, the Host names served (``allowed_hosts``: :func:`hosts_for` adds the bound host;
    ``--allow-host``) and the page origins besides the server's own allowed on ``/ws`` (``--allow-origin``)."""

    agents: list[str] = field(default_factory=list)
    seats: list[str] | None = None
    ismcts: str = DEFAULT_ISMCTS
    idle_timeout: float = 1800.0
    max_tables: int = 1000
    max_body: int = 1 << 20
    pool_size: int = 4
    warmup: bool = True
    allowed_hosts: list[str] = field(default_factory=lambda: list(LOOPBACK_HOSTS))
    allowed_origins: list[str] = field(default_factory=list)
    # limits against one greedy client (tarocchi_rl.web.limits; a client is an address)
    max_connections: int = limits.MAX_CONNECTIONS
    max_connections_per_client: int = limits.CONNECTIONS_PER_CLIENT
    max_tables_per_client: int = limits.TABLES_PER_CLIENT
    table_lifetime: float = limits.TABLE_LIFETIME
    body_timeout: float = limits.BODY_SECONDS
    keep_alive_timeout: float = limits.KEEP_ALIVE_SECONDS
    head_timeout: float = limits.HEAD_SECONDS  # seconds a request head may take (uvicorn has no such bound)
    max_waiting: int = limits.MAX_WAITING  # connections waiting for a request head, in all ...
    max_waiting_per_client: int = limits.WAITING_PER_CLIENT  # ... and per address (limits.Waiting)
    queues: dict[str, limits.QueueLimit] = field(default_factory=lambda: dict(limits.QUEUES))
    db: str | None = None  # the games' database (an SQLAlchemy URL; --db): None, nothing is stored
    seat_grace: float = SEAT_GRACE  # seconds a shared table's seat waits for its person before a bot plays it
    challenges: str | None = None  # a file of duplicate challenges (serve --challenges), besides the built-ins
    builtin_challenges: bool = True  # one challenge per variant (challenge_defs.builtin_challenges)
    processes: int = 1  # the server's processes (serve --workers): shared tables are refused above 1


def _default(x: Any) -> Any:
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    if isinstance(x, np.bool_):
        return bool(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(f"not JSON: {type(x).__name__}")


def dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), default=_default)


def _json_response(obj: Any, status: int = 200) -> Response:
    return Response(dumps(obj), status_code=status, media_type="application/json")


def error(status: int, message: str, **extra: Any) -> Response:
    return _json_response({"error": message, **extra}, status)


class Server:
    """The app's state: the configuration, the bots, the open tables."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        limits.check_limits(config)
        self.catalogue = Catalogue(config.agents, config.ismcts, config.pool_size)
        self.variants = {"protocol": PROTOCOL, "variants": variants_info()}
        self.seats = self._check_seats(config.seats)
        self.table_count = limits.TableCount(config.max_tables, config.max_tables_per_client)
        self.inline = InlineAct()  # cheap /v1/act requests on the loop, within a budget and a share per client
        self.shares = limits.LoopShares()  # each address's share of the loop (serve's protocols charge it)
        self.queues = {kind: limits.WorkQueue(kind, limits.QueueLimit(*q), self._processes(kind), self.shares.charge)
                       for kind, q in config.queues.items()}
        self.recorder: TableRecorder | None = None  # the games' database (config.db), from the app's startup
        self.default_bot = DEFAULT_BOT
        self.shared = SharedTables(self, OwnTables)  # the tables of several people, by code
        self.challenges = Challenges(config.challenges, config.builtin_challenges)  # duplicate challenges

    def _processes(self, kind: str) -> "limits.Processes | None":
        """How the act and replay queues start their worker processes (:mod:`~tarocchi_rl.web.workers`); None:
        the queue's work runs in threads."""
        if kind == "replay":
            return limits.Processes()
        if kind != "act":
            return None
        fast = {name: spec for name, spec in self.catalogue.specs.items() if self.catalogue.is_fast(name)}
        return limits.Processes(workers.start, (fast, self.config.warmup), nice=limits.QUEUE_NICE.get(kind, 0))

    @property
    def tables(self) -> int:
        """Tables held: deals of /ws connections (a connection without a deal is not a table)."""
        return self.table_count.total

    def _check_seats(self, seats: list[str] | None) -> list[str] | None:
        if seats is None:
            return None
        names = [s.strip() for s in seats]
        if sum(s.lower() == "human" for s in names) != 1:
            raise ValueError(f"--seats: exactly one seat must be human, got {','.join(names)}")
        if len(names) not in {get_variant(v).n_players for v in VARIANTS}:
            raise ValueError(f"--seats: {len(names)} seats: no variant has that many players")
        return ["human" if s.lower() == "human" else self.catalogue.resolve_operator(s, "--seats") for s in names]

    def bot_kind(self, name: str) -> str:
        """The queue of a bot's work (:func:`limits.work_kind`): ``act``, ``search`` or ``program``."""
        return limits.work_kind(self.catalogue.specs[name], self.catalogue.is_fast(name))

    def table_queue(self, table: Table) -> "limits.WorkQueue | None":
        """The queue that plays a table's slow bots (a search's queue if it has one); None when every bot is
        fast: its moves are played on the event loop (about a millisecond)."""
        kinds = {self.bot_kind(s.name) for s in table.seats if s is not None and not s.fast}
        return self.queues["search" if "search" in kinds else "program"] if kinds else None

    async def run(self, queue: "limits.WorkQueue | None", client: str, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on the event loop (``queue`` None: short work) or in ``queue`` (:class:`limits.Busy`
        when it is full)."""
        return fn(*args) if queue is None else await queue.run(client, fn, *args)

    def warmup(self) -> None:
        """Load every kernel a table and the API use (Numba's cache) before the first client waits for it."""
        for v in VARIANTS:
            started = time.perf_counter()
            n = get_variant(v).n_players
            t = Table.deal(v, {}, [None] + [self.catalogue.seat_bot("heuristic", k) for k in range(1, n)], 1)
            if not t.is_over():
                req = {"type": "act", **seat_request(t.views, t.views.current_player())}
                self.catalogue.pools[DEFAULT_BOT].handle(dumps(req), req)
            t.advance()
            mid = None
            while not t.is_over():
                if mid is None and len(t.views.state.history) > 3 * n:  # a card play: the rebuild's repairs
                    mid = {"type": "act", **seat_request(t.views, t.views.current_player())}
                t.act(t.snapshot(t.human)["legal"][0]["id"])
                t.advance()
            t.result()
            if mid is not None:
                BotServer(DEFAULT_BOT, lambda s: make_bot(s, 0, "bot")).handle(dumps(mid))
            _warm_log.info("%s: a deal against the heuristic, its score and a /v1/act position loaded (%.1f s)", v,
                          time.perf_counter() - started)
        gc.collect()
        gc.freeze()  # what startup made is permanent: the collector's passes stay short under load

    @staticmethod
    def warm_search() -> None:
        """A short search, run from the search queue's thread at startup (no other search runs then): the search
        kernel is loaded, and Numba's worker threads start, from a thread of lower priority that they inherit
        (:data:`limits.SEARCH_KERNEL_NICE`); the queue's own thread stays at the loop's priority."""
        first = VARIANTS[0]  # any variant loads the search kernel
        bot: SeatBot | None = SeatBot("heuristic", make_bot("heuristic", 0, "bot"))
        t = Table.deal(first, {}, [None] + [bot] * (get_variant(first).n_players - 1), 1)
        req = {"type": "act", **seat_request(t.views, t.views.current_player())}
        limits.run_at_priority(limits.SEARCH_KERNEL_NICE,
                               lambda: BotServer(_WARM_SEARCH, lambda s: make_bot(s, 0, "bot")).handle(dumps(req)))

    # -- the tables ---------------------------------------------------------------------------------------------
    def new_table(self, msg: dict[str, Any]) -> Table:
        variant = msg.get("variant")
        options = check_options(variant, msg.get("options"))
        n = get_variant(str(variant)).n_players
        seats = msg.get("seats")
        if not isinstance(seats, list) or len(seats) != n:
            raise ValueError(f"seats: expected a list of {n} entries for {variant} ('human' once, bots by name)")
        if sum(s == "human" for s in seats) != 1:
            raise ValueError("seats: exactly one entry must be 'human'")
        practice = msg.get("seed") is not None  # the client knows the seed, so every hand: practice only
        seed = client_seed(msg["seed"]) if practice else new_seed()
        names = [None if s == "human" else self.catalogue.resolve(s, f"seats[{k}]") for k, s in enumerate(seats)]
        for k, name in enumerate(names):
            if name is not None:
                self.catalogue.check_plays(name, str(variant), f"seats[{k}]")
        seeds = bot_seeds(seed, n)
        bots = [None if name is None else self.catalogue.seat_bot(name, seeds[k]) for k, name in enumerate(names)]
        return Table.deal(str(variant), options, bots, seed, practice=practice)

    @staticmethod
    def report(table: Table) -> dict[str, Any]:
        """The message after a start or a move: ``state``, or ``over`` with the outcome, the record, the seed
        (as a string) and ``practice``. Nothing before ``over`` names the seed."""
        moves = table.take_moves()
        msg = {"type": "over" if table.is_over() else "state", "table": table.snapshot(table.human), "moves": moves}
        if table.is_over():
            msg.update(table.result())
        return msg

    async def message(self, table: Table | None, text: str, client: str = "",
                      person: str = "", conn: Conn | None = None) -> tuple[Table | None, dict[str, Any]]:
        """One client message -> (the connection's table now, the answer). Never raises. ``client``: its address
        (limits: its tables, its share of the queues; a busy queue is an error with ``busy``, the table kept);
        ``person``: the anonymous id its deals are stored under (:mod:`~tarocchi_rl.web.writer`); ``conn``: the
        connection at the shared tables (``open``, ``join``, and ``act`` once seated at one)."""
        rid = None
        try:
            if len(text) > MAX_WS_MESSAGE:
                raise ValueError(f"message longer than {MAX_WS_MESSAGE} characters")
            msg = loads(text, what="message")  # bounded: depth and digits (BoundedInputError, a ValueError)
            if not isinstance(msg, dict):
                raise ValueError("a message must be a JSON object")
            rid = request_id(msg)
            kind = msg.get("type")
            if kind not in WS_MESSAGES:
                raise ValueError(f"type: expected one of {', '.join(WS_MESSAGES)}, got {kind!r}")
            extra = sorted(set(msg) - set(WS_MESSAGES[kind]))
            if extra:
                raise ValueError(f"unknown field {extra[0]!r} in a {kind} message "
                                 f"(known: {', '.join(WS_MESSAGES[kind])})")
            shared = conn is not None and conn.table is not None
            if kind == "ping":
                out: dict[str, Any] = {"type": "pong"}
            elif kind in ("open", "join") or (kind == "act" and shared):
                if conn is None:
                    raise ValueError(f"{kind}: shared tables are reached over /ws")
                out = (self.shared.open(msg, conn) if kind == "open" else
                       await self.shared.join(msg, conn) if kind == "join" else await self.shared.act(msg, conn))
                if kind != "act":  # seated at a shared table: a deal of one's own ends
                    self.abandon(table)
                    table = None
            elif shared:
                raise ValueError("you sit at a shared table: close the connection to leave it before a start")
            elif kind == "resume":
                table, out = await self._resume(table, msg, client, conn)
            elif kind in ("start", "challenge"):  # a new deal replaces the old one, even if the bots fail below
                if self.recorder is not None and not self.recorder.has_room():
                    raise limits.Busy("game store", False)  # the database is behind: deals in progress go first
                place = self.table_count.opening(client) if table is None else contextlib.nullcontext()
                with place:  # a place among the tables (ValueError: none), held while the bots play
                    new = self.new_table(msg) if kind == "start" else self.challenges.table(msg, client, conn)
                    self._check_queue(new, client)  # busy: the old deal stays
                    out = await self._advance(new, client)
                self.abandon(table)
                table = new
                self._store(table, person, out)
                if conn is not None and out["type"] != "over":  # taken back with these after a reload
                    out["resume"] = self.shared.own.add(table, conn, client)
            else:
                if table is not None and not self.shared.own.holds(table, conn):
                    table = None  # another connection took the deal back (resume.py)
                    raise ValueError(TAKEN_TEXT)
                if table is None:
                    raise ValueError("no deal in progress: send start first")
                if "action" not in msg:
                    raise ValueError("action: missing (an action string such as 'play:KC')")
                self._check_queue(table, client)  # busy: the move is not played
                table.act(msg["action"])  # an unknown or illegal move: ValueError, the game unchanged
                out = await self._advance(table, client)
                self._store(table, person, out)
                if out["type"] == "over":
                    self.shared.own.end(table)
        except limits.Busy as e:
            out = {"type": "error", "error": str(e), "busy": True, "retry_after": e.retry_after}
        except ValueError as e:
            out = {"type": "error", "error": str(e)}
        except BotFailed:
            self.abandon(table)  # an act's table (a start's failed before it was stored; the old one goes too)
            table = None
            out = {"type": "error", "error": BOT_FAILED, "fatal": True}
        if rid is not None:
            out["id"] = rid
        return table, out

    async def _resume(self, table: Table | None, msg: dict[str, Any], client: str,
                      conn: Conn | None) -> tuple[Table, dict[str, Any]]:
        """``resume``: a deal of one's own taken back with its code and token (resume.py), replacing the
        connection's deal; the answer is a ``state`` with every move of the deal so far, as its seat saw them."""
        if conn is None:
            raise ValueError("resume: a deal is taken back over /ws")
        new = await self.shared.own.take(msg, conn, client, replacing=table is not None)
        if table is not None and table is not new:
            self.abandon(table)
        new.sent = len(new.steps)
        out = {"type": "state", "table": new.snapshot(new.human), "moves": new.moves_from(0, new.human),
               "practice": new.practice, "resumed": True}
        return new, await self.challenges.annotate(new, out)

    def _store(self, table: Table, person: str, out: dict[str, Any]) -> None:
        """The deal's moves since the last answer (and its record when over) to the games' database."""
        if self.recorder is not None:
            person = getattr(table, "person_id", "") or person  # a challenge's deal: its player token (players.py)
            self.recorder.sync(table, person, out.get("record") if out["type"] == "over" else None)

    def abandon(self, table: Table | None) -> None:
        """A connection's deal ends unfinished (closed, replaced, a bot failed): stored as abandoned (and no longer
        taken back, resume.py)."""
        self.shared.own.end(table)
        if self.recorder is not None and table is not None:
            self.recorder.abandon(table)

    def store_shared(self, table: Table, people: dict[int, str], result: dict[str, Any] | None) -> None:
        """A shared table's moves (and its record when over: ``result``) to the games' database; ``people``: the
        anonymous id of each person seat."""
        if self.recorder is not None:
            self.recorder.sync(table, people, None if result is None else result["record"])

    def check_queue(self, table: Table, client: str) -> None:
        """:class:`limits.Busy` when the queue that plays this table's slow bots has no room for ``client``."""
        queue = self.table_queue(table)
        if queue is not None:
            queue.check(client)

    _check_queue = check_queue

    async def _advance(self, table: Table, client: str = "") -> dict[str, Any]:
        out: dict[str, Any] = await self.advanced(table, client, self._play_bots)
        return await self.challenges.annotate(table, out)  # a challenge's deal: the bot's result at the end

    async def advanced(self, table: Table, client: str, play: Callable[[Table], T]) -> T:
        """``play(table)`` (the bots' moves) on the loop or in the table's queue, then the pace owed for a search
        bot's forced moves; :class:`BotFailed` when a bot failed (the details in the log)."""
        try:
            out = await self.run(self.table_queue(table), client, play, table)
        except limits.Busy:
            raise
        except Exception:  # a bot failed (an illegal answer, a crash): the table cannot go on
            log.exception("a bot failed at a %s table, step %d; the deal is abandoned", table.game.variant,
                          len(table.steps))  # the details (its legal moves, the exception) stay in the log
            raise BotFailed() from None
        pace = table.take_pace()  # a search bot's forced moves answer no faster than its searched ones
        if pace > 0:
            await asyncio.sleep(pace)
        return out

    def _play_bots(self, table: Table) -> dict[str, Any]:
        table.advance()
        return self.report(table)


# -- HTTP ------------------------------------------------------------------------------------------------------
def _server(request: Request | WebSocket) -> Server:
    server: Server = request.app.state.server
    return server


async def read_json(request: Request) -> tuple[str, Any]:
    """The body as text and parsed; 415 unless declared ``application/json``, 413 over the limit, 400 when it
    is not UTF-8 JSON within :func:`tarocchi_rl.bounded.loads`'s bounds."""
    media_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media_type != _JSON_MEDIA_TYPE:
        raise HTTPException(415, f"Content-Type must be {_JSON_MEDIA_TYPE}, got {media_type or 'none'!r}"[:200])
    limit = _server(request).config.max_body
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise HTTPException(413, f"body larger than {limit} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPException(413, f"body larger than {limit} bytes")
        chunks.append(chunk)
    try:
        text = b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError:
        raise HTTPException(400, "the body is not UTF-8 text") from None
    try:
        return text, loads(text, what="body")
    except BoundedInputError as e:
        raise HTTPException(400, str(e)) from None


async def index(request: Request) -> Response:
    return FileResponse(STATIC / "index.html", media_type="text/html")


async def variants(request: Request) -> Response:
    return _json_response(_server(request).variants)


async def bots(request: Request) -> Response:
    srv = _server(request)
    return _json_response({"bots": srv.catalogue.info(), "default": DEFAULT_BOT, "seats": srv.seats,
                          "idle_timeout": srv.config.idle_timeout})


async def lobby(request: Request) -> Response:
    return _json_response({"tables": _server(request).shared.lobby()})


async def challenges(request: Request) -> Response:
    return _json_response({"challenges": _server(request).challenges.info()})


async def health(request: Request) -> Response:
    return _json_response({"status": "ok", "tables": _server(request).tables})


async def act(request: Request) -> Response:
    srv = _server(request)
    name = request.query_params.get("agent", DEFAULT_BOT)
    try:
        name = srv.catalogue.resolve(name, "agent")
    except ValueError as e:
        return error(400, str(e))
    queue, client = srv.queues[srv.bot_kind(name)], limits.client_of(request.scope)
    queue.check(client)  # busy: refused before the body is read
    text, req = await read_json(request)
    if isinstance(req, dict):
        if req.get("type") not in ("act", "hello"):
            return error(400, f"type: this endpoint answers act (and hello) requests, got {req.get('type')!r}")
        if req.get("type") == "act" and isinstance(req.get("variant"), str) and req["variant"] in VARIANTS:
            try:
                check_options(req["variant"], req.get("options"))
            except ValueError as e:
                return error(400, str(e), type="error", **({"id": req["id"]} if "id" in req else {}))
    pool = srv.catalogue.pools[name]
    out = None
    if queue.kind == "act":  # a fast bot: here when it is cheap (web/inline.py), else in a worker process
        out = srv.inline.answer(client, pool, text, req)
        if out is None:
            out = await queue.run(client, workers.act, name, text)  # the text: cheaper to send than the parsed
    else:  # a search or a program: in the queue's thread (Numba and programs let go of the GIL)
        out = await queue.run(client, pool.handle, text, req)
    return _json_response(out, 400 if out.get("type") == "error" else 200)


async def replay_record(request: Request) -> Response:
    flag = request.query_params.get("steps", "false").lower()
    if flag not in ("true", "false", "1", "0", "yes", "no"):
        return error(400, f"steps: expected true or false, got {flag!r}")
    srv = _server(request)
    queue, client = srv.queues["replay"], limits.client_of(request.scope)
    queue.check(client)
    _, record = await read_json(request)
    out = await queue.run(client, workers.replay, record, flag in ("true", "1", "yes"))  # in a worker process
    if "error" in out:
        return error(400, out["error"], action_index=out["action_index"])
    return _json_response(out["result"])


async def openapi(request: Request) -> Response:
    return _json_response(oa.openapi_schema(PROTOCOL, ENDPOINTS))


def _origin_allowed(origin: str | None, host: str | None, allowed: list[str]) -> bool:
    """Whether a ``/ws`` handshake's ``Origin`` may open a table: none (not a browser), the server's own host
    (scheme://HOST as the client addressed it; the Host itself is checked by ``TrustedHostMiddleware``), or one of
    ``allowed`` (``--allow-origin``, compared without a trailing slash, case-insensitive)."""
    if origin is None:
        return True
    origin = origin.strip().rstrip("/").lower()
    if origin in {a.strip().rstrip("/").lower() for a in allowed}:
        return True
    scheme, sep, netloc = origin.partition("://")
    return bool(sep) and scheme in ("http", "https") and host is not None and netloc == host.strip().lower()


async def ws_table(websocket: WebSocket) -> None:
    """One table per connection: JSON text messages, one answer each (docs in the README and :data:`WS_MESSAGES`)."""
    srv = _server(websocket)
    if not _origin_allowed(websocket.headers.get("origin"), websocket.headers.get("host"),
                          srv.config.allowed_origins):
        log.info("refused a /ws connection from origin %.200r", websocket.headers.get("origin"))
        await websocket.close(code=ORIGIN_CLOSE)  # before accepting: the handshake is answered 403
        return
    await websocket.accept()
    if srv.tables >= srv.config.max_tables:  # no room for one more deal
        await websocket.send_text(dumps({"type": "error", "error": "the server is full: try again later",
                                         "fatal": True}))
        await websocket.close(code=1013)
        return
    client = limits.client_of(websocket.scope)
    person = new_person_id()  # the connection's deals are stored under it (never the address)
    clock = limits.ConnectionClock(srv.config.idle_timeout, srv.config.table_lifetime)
    rate = limits.MessageRate()
    table: Table | None = None
    conn = Conn(client, person, websocket, dumps)  # its seat at a shared table, if it takes one
    try:
        while True:
            if conn.table is not None:  # a shared table's idle time is the table's (shared.py)
                clock.moved()
            left, why = clock.next_deadline()
            try:
                msg = await asyncio.wait_for(websocket.receive(), timeout=max(0.0, left))
            except asyncio.TimeoutError:
                if why == "idle" and conn.table is not None:
                    continue
                srv.shared.own.end(table)  # closed for its idle time or lifetime: abandoned, not kept for a reload
                await _close_table(websocket, srv.config, why, conn)
                return
            if msg["type"] == "websocket.disconnect":
                return
            text = msg.get("text")
            if text is None:
                out: dict[str, Any] = {"type": "error", "error": "send JSON text messages, not binary ones"}
            else:
                held = table is not None
                table, out = await srv.message(table, text, client, person, conn)
                srv.table_count.change(client, held, table is not None)
                if out["type"] in ("state", "over", "joined"):  # a move: pings and errors do not keep a table open
                    clock.moved()
            if conn.link is not None:  # seated at a shared table once: every message through its outbox
                conn.link.put(out)
                for later in conn.take_later():
                    conn.link.put(later)
            else:
                await websocket.send_text(dumps(out))
            await asyncio.sleep(rate.delay())  # a client sending faster than the rate is read more slowly
    except WebSocketDisconnect:
        pass
    except Exception:  # the connection broke while sending, or a bug: this table ends, the server goes on
        log.exception("table connection failed")
        with contextlib.suppress(Exception):
            await websocket.close(code=1011)
    finally:
        srv.shared.own.leave(table, conn, client)  # a deal of one's own waits for a reload (resume.py)
        srv.shared.leave(conn)


async def _close_table(websocket: WebSocket, config: ServerConfig, why: str, conn: Conn | None = None) -> None:
    """Close a connection idle too long (no move) or open too long (its lifetime), saying so first."""
    if why == "idle":
        text, code = f"idle for {config.idle_timeout:g} s: the table is closed", IDLE_CLOSE
    else:
        text, code = (f"open for {config.table_lifetime:g} s, the most a connection may: the table is closed "
                      "(connect again for a new deal)", limits.LIFETIME_CLOSE)
    out = {"type": "error", "fatal": True, "error": text}
    if conn is not None and conn.link is not None:
        conn.link.put(out)
        await conn.link.drain()
    else:
        await websocket.send_text(dumps(out))
    await websocket.close(code=code, reason=why)


async def _http_error(request: Request, exc: Exception) -> Response:
    if isinstance(exc, limits.Busy):  # a queue is full: 503 (429: this client's share), try again later; the
        response = error(exc.status, str(exc), retry_after=exc.retry_after)  # body may be unread: close
        response.headers.update({"Retry-After": str(exc.retry_after), "Connection": "close"})
        return response
    if isinstance(exc, HTTPException):
        return error(exc.status_code, str(exc.detail))
    return error(500, "internal error")


ENDPOINTS = (  # the routes (and /static) and what GET /openapi.json says of each
    Endpoint("/", index, oa.PAGE),
    Endpoint("/v1/variants", variants, oa.VARIANTS),
    Endpoint("/v1/bots", bots, oa.BOTS),
    Endpoint("/v1/health", health, oa.HEALTH),
    Endpoint("/v1/tables", lobby, oa.TABLES),
    Endpoint("/v1/challenges", challenges, oa.CHALLENGES),
    Endpoint("/v1/act", act, oa.ACT),
    Endpoint("/v1/replay", replay_record, oa.REPLAY),
    Endpoint("/openapi.json", openapi, oa.OPENAPI),
    Endpoint("/ws", ws_table, oa.WEBSOCKET, websocket=True),
)


def _route(endpoint: Endpoint) -> BaseRoute:
    """The Starlette route of an endpoint."""
    if endpoint.websocket:
        return WebSocketRoute(endpoint.path, endpoint.handler)
    return Route(endpoint.path, endpoint.handler, methods=[endpoint.operation.method])


def create_app(config: ServerConfig | None = None) -> Starlette:
    """The app; bad configuration (an unknown ``--agents`` spec, bad ``--seats``) is a ValueError."""
    server = Server(config or ServerConfig())

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, Any]]:
        writer = None
        if server.config.db is not None:  # the schema upgraded here; serve abandoned the unfinished games before
            writer = StoreWriter(await run_in_threadpool(open_store, server.config.db)).start()
            server.recorder = TableRecorder(writer)
        server.challenges.attach(writer)  # the bots' results read from the database, written to it
        if server.config.warmup:
            started = time.perf_counter()
            _warm_log.info("loading the compiled kernels (Numba's cache: minutes the first time, then seconds)")
            await server.queues["search"].run("startup", server.warm_search)  # first: Numba's threads start here
            _warm_log.info("the search (ismcts) loaded (%.1f s)", time.perf_counter() - started)
            _warm_log.info("each variant's tables, and the worker processes of /v1/act and /v1/replay (each loads "
                          "the fast bots and answers a request of every variant)")
            await asyncio.gather(run_in_threadpool(server.warmup), _timed("the /v1/act worker processes ready",
                                                                          server.queues["act"].run("startup",
                                                                                                   workers.ping)),
                                 _timed("the /v1/replay worker processes ready",
                                        server.queues["replay"].run("startup", workers.ping)))
            server.challenges.prepare_all()  # every challenge's bot results, in the background
            _warm_log.info("done in %.1f s; the challenges' bot results are played in the background",
                          time.perf_counter() - started)
        yield {limits.SHARES_STATE: server.shares}  # the protocols charge each address's work to it
        stop_programs("the server is stopping")  # no request waits for an external program (agents/cmd.py)
        server.challenges.close()
        server.shared.close_all()
        for queue in server.queues.values():
            queue.close()  # the jobs not started are cancelled
        if writer is not None:
            server.recorder = None
            # the writes still queued (at most SHUTDOWN_SECONDS: serve's exit does not wait for more), then the thread
            await run_in_threadpool(writer.close, limits.SHUTDOWN_SECONDS)
            writer.store.close()

    routes: list[BaseRoute] = [_route(e) for e in ENDPOINTS]
    routes.append(Mount("/static", StaticFiles(directory=STATIC), name="static"))
    hosts = server.config.allowed_hosts
    app = Starlette(routes=routes, lifespan=lifespan, middleware=[Middleware(SecurityHeaders),
                                                                  Middleware(TrustedHostMiddleware,
                                                                             allowed_hosts=hosts),
                                                                  *_limit_middleware(server.config)],
                    exception_handlers={HTTPException: _http_error, limits.Busy: _http_error, Exception: _http_error})
    app.state.server = server
    return app


def _limit_middleware(config: ServerConfig) -> list[Middleware]:
    """Requests and /ws connections in progress per client, and the deadline of a request body."""
    return [Middleware(limits.ClientLimit, per_client=config.max_connections_per_client),
            Middleware(limits.BodyDeadline, seconds=config.body_timeout)]


def hosts_for(bound: str, allowed: list[str]) -> list[str]:
    """The Host names a server bound to ``bound`` serves: ``allowed`` (``--allow-host``), the bound host itself
    unless it is a wildcard (0.0.0.0, ::), and the loopback names when it is loopback or a wildcard. Any other
    name (a LAN name, a domain) must be allowed by name: a page whose domain resolves to this machine (DNS
    rebinding) sends its own name and is refused."""
    bound = bound.strip().lower()
    wildcard = bound in ("", "0.0.0.0", "::")
    hosts = list(allowed)
    if not wildcard:
        hosts.append(f"[{bound}]" if ":" in bound and not bound.startswith("[") else bound)
    if wildcard or bound in ("localhost", "::1") or bound.startswith("127."):
        hosts += LOOPBACK_HOSTS
    return list(dict.fromkeys(h.lower() for h in hosts))


async def _timed(what: str, job: Any) -> Any:
    """``job`` awaited, then ``what`` and the seconds it took in the warm-up's lines."""
    started = time.perf_counter()
    out = await job
    _warm_log.info("%s (%.1f s)", what, time.perf_counter() - started)
    return out


def app_from_env() -> Starlette:
    """The app of a ``serve --workers N`` process: its configuration from the environment (:data:`CONFIG_ENV`)."""
    print_warmup_progress()
    sys.setswitchinterval(limits.GIL_SWITCH_SECONDS)  # as serve sets it in a single process
    return create_app(ServerConfig(**json.loads(os.environ.get(CONFIG_ENV, "{}"))))


def config_env(config: ServerConfig) -> str:
    return json.dumps(asdict(config))
