"""``tarocchi-rl serve``: the browser game and the HTTP API, a Starlette app (README: "Playing in the browser and
the HTTP API").

| route                | what                                                                                  |
|----------------------|---------------------------------------------------------------------------------------|
| ``GET /``            | the page (``static/``: plain HTML, CSS and JavaScript)                                |
| ``WS /ws``           | one table per connection (messages: :data:`WS_MESSAGES`)                              |
| ``GET /v1/variants`` | variants, players, options (types, defaults, choices), the action tables              |
| ``GET /v1/bots``     | the bots this server offers (a client names one; never a spec or a path)              |
| ``POST /v1/act``     | a ``tarocchi-bot/1`` act request -> the bot's answer (``?agent=NAME``, default heuristic)|
| ``POST /v1/replay``  | a ``tarocchi-record/1`` record -> validated and scored (``?steps=true``: every step)  |
| ``GET /v1/health``   | ``{"status": "ok", "tables": N}``                                                     |
| ``GET /openapi.json``| the OpenAPI description of these routes                                               |

Every error is a 4xx with ``{"error": "..."}``; bodies are limited (``max_body``, 1 MB: larger is 413), and
nothing a client sends names a file. A table lives in its WebSocket handler: no other connection can reach it;
an idle one (no message for ``idle_timeout`` seconds) is closed. Short work (the random and heuristic bots,
the networks, a snapshot: about a millisecond) runs on the event loop; searches, external programs and replays
run in the thread pool. Tables are per connection, so ``serve --workers N`` (processes) scales both the tables
and the API.
"""

import asyncio
import contextlib
import gc
import json
import logging
import os
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from ..bits import check_seed
from ..bot import BotServer, request_id
from ..play import bot_seeds, make_bot, new_seed
from ..records import RecordError, describe_outcome, replay
from ..variants import VARIANTS, get_variant
from ..views import seat_request
from .bots import DEFAULT_BOT, DEFAULT_ISMCTS, Catalogue
from .openapi import openapi_schema
from .table import Table, check_options, replay_steps, variants_info

__all__ = ["PROTOCOL", "ServerConfig", "WS_MESSAGES", "app_from_env", "create_app"]

PROTOCOL = "tarocchi-web/1"
STATIC = Path(__file__).resolve().parent / "static"
CONFIG_ENV = "TAROCCHI_WEB_CONFIG"  # the JSON ServerConfig of `serve --workers N` processes
MAX_WS_MESSAGE = 64 * 1024  # characters of one WebSocket message from a client
WS_MESSAGES = {  # client -> server: fields (all others are an error)
    "start": ("type", "id", "variant", "options", "seats", "seed"),
    "act": ("type", "id", "action"),
    "ping": ("type", "id"),
}
IDLE_CLOSE = 4000  # WebSocket close code of an idle table
log = logging.getLogger("tarocchi_rl.web")
T = TypeVar("T")


@dataclass
class ServerConfig:
    """What ``tarocchi-rl serve`` sets: the extra bots (``--agents``), the default seating offered by the page
    (``--seats``), the built-in search's spec, limits, and whether to warm the kernels up at startup."""

    agents: list[str] = field(default_factory=list)
    seats: list[str] | None = None
    ismcts: str = DEFAULT_ISMCTS
    idle_timeout: float = 1800.0
    max_tables: int = 1000
    max_body: int = 1 << 20
    pool_size: int = 4
    warmup: bool = True


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


def json_response(obj: Any, status: int = 200) -> Response:
    return Response(dumps(obj), status_code=status, media_type="application/json")


def error(status: int, message: str, **extra: Any) -> Response:
    return json_response({"error": message, **extra}, status)


class Server:
    """The app's state: the configuration, the bots, the open tables."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.catalogue = Catalogue(config.agents, config.ismcts, config.pool_size)
        self.variants = {"protocol": PROTOCOL, "variants": variants_info()}
        self.seats = self._check_seats(config.seats)
        self.tables = 0

    def _check_seats(self, seats: list[str] | None) -> list[str] | None:
        if seats is None:
            return None
        names = [s.strip() for s in seats]
        if sum(s.lower() == "human" for s in names) != 1:
            raise ValueError(f"--seats: exactly one seat must be human, got {','.join(names)}")
        if len(names) not in {get_variant(v).n_players for v in VARIANTS}:
            raise ValueError(f"--seats: {len(names)} seats: no variant has that many players")
        return ["human" if s.lower() == "human" else self.catalogue.resolve(s, "--seats") for s in names]

    async def run(self, fast: bool, fn: Callable[..., T], *args: Any) -> T:
        """Short work on the loop, the rest in the thread pool."""
        return fn(*args) if fast else await run_in_threadpool(fn, *args)

    def warmup(self) -> None:
        """Load every kernel a table and the API use (Numba's cache) before the first client waits for it."""
        for v in VARIANTS:
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
        gc.collect()
        gc.freeze()  # what startup made is permanent: the collector's passes stay short under load

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
        seed = msg.get("seed")
        if seed is None:
            seed = new_seed()
        check_seed("seed", seed)
        names = [None if s == "human" else self.catalogue.resolve(s, f"seats[{k}]") for k, s in enumerate(seats)]
        seeds = bot_seeds(seed, n)
        bots = [None if name is None else self.catalogue.seat_bot(name, seeds[k]) for k, name in enumerate(names)]
        return Table.deal(str(variant), options, bots, seed)

    @staticmethod
    def report(table: Table) -> dict[str, Any]:
        """The message after a start or a move: ``state``, or ``over`` with the outcome and the record."""
        moves = table.take_moves()
        msg = {"type": "over" if table.is_over() else "state", "seed": table.seed,
               "table": table.snapshot(table.human), "moves": moves}
        if table.is_over():
            msg.update(table.result())
        return msg

    async def message(self, table: Table | None, text: str) -> tuple[Table | None, dict[str, Any]]:
        """One client message -> (the connection's table now, the answer). Never raises."""
        rid = None
        try:
            if len(text) > MAX_WS_MESSAGE:
                raise ValueError(f"message longer than {MAX_WS_MESSAGE} characters")
            try:
                msg = json.loads(text)
            except json.JSONDecodeError as e:
                raise ValueError(f"not JSON: {e.msg} at column {e.colno}") from None
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
            if kind == "ping":
                out: dict[str, Any] = {"type": "pong"}
            elif kind == "start":
                new = self.new_table(msg)
                table = None  # a new deal replaces the old one, even if the bots fail below
                table, out = new, await self._advance(new)
            else:
                if table is None:
                    raise ValueError("no deal in progress: send start first")
                if "action" not in msg:
                    raise ValueError("action: missing (an action string such as 'play:KC')")
                table.act(msg["action"])  # an unknown or illegal move: ValueError, the game unchanged
                out = await self._advance(table)
        except ValueError as e:
            out = {"type": "error", "error": str(e)}
        except _BotFailed as e:
            table = None
            out = {"type": "error", "error": f"{e}; the deal is abandoned: send start for a new one",
                   "fatal": True}
        if rid is not None:
            out["id"] = rid
        return table, out

    async def _advance(self, table: Table) -> dict[str, Any]:
        try:
            return await self.run(not table.needs_threads(), self._play_bots, table)
        except Exception as e:  # a bot failed (an illegal answer, a crash): the table cannot go on
            log.exception("a bot failed")
            raise _BotFailed(f"a bot failed: {type(e).__name__}: {e}") from None

    def _play_bots(self, table: Table) -> dict[str, Any]:
        table.advance()
        return self.report(table)


class _BotFailed(Exception):
    pass


# -- HTTP ------------------------------------------------------------------------------------------------------
def _server(request: Request | WebSocket) -> Server:
    server: Server = request.app.state.server
    return server


async def read_json(request: Request) -> tuple[str, Any]:
    """The body as text and parsed; 413 over the limit, 400 when it is not UTF-8 JSON."""
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
        return text, json.loads(text)
    except json.JSONDecodeError as e:
        raise HTTPException(400, f"not JSON: {e.msg} at line {e.lineno} column {e.colno}") from None


async def index(request: Request) -> Response:
    return FileResponse(STATIC / "index.html", media_type="text/html")


async def variants(request: Request) -> Response:
    return json_response(_server(request).variants)


async def bots(request: Request) -> Response:
    srv = _server(request)
    return json_response({"bots": srv.catalogue.info(), "default": DEFAULT_BOT, "seats": srv.seats,
                          "idle_timeout": srv.config.idle_timeout})


async def health(request: Request) -> Response:
    return json_response({"status": "ok", "tables": _server(request).tables})


async def act(request: Request) -> Response:
    srv = _server(request)
    name = request.query_params.get("agent", DEFAULT_BOT)
    try:
        name = srv.catalogue.resolve(name, "agent")
    except ValueError as e:
        return error(400, str(e))
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
    out = await srv.run(srv.catalogue.is_fast(name), pool.handle, text, req)
    return json_response(out, 400 if out.get("type") == "error" else 200)


def _replay(record: Any, steps: bool) -> dict[str, Any]:
    if isinstance(record, dict) and isinstance(record.get("variant"), str) and record["variant"] in VARIANTS:
        try:
            check_options(record["variant"], record.get("options") or {})
        except ValueError as e:
            raise RecordError(str(e)) from None
    state = replay(record)
    out = state.outcome()
    result: dict[str, Any] = {"valid": True, "variant": state.game.variant, "options": dict(state.game.options),
                              "actions": len(state.history), "outcome": out,
                              "summary": describe_outcome(out, state.game.variant), "record": state.to_record()}
    if steps:
        result["steps"] = replay_steps(record)
    return result


async def replay_record(request: Request) -> Response:
    flag = request.query_params.get("steps", "false").lower()
    if flag not in ("true", "false", "1", "0", "yes", "no"):
        return error(400, f"steps: expected true or false, got {flag!r}")
    _, record = await read_json(request)
    try:
        return json_response(await run_in_threadpool(_replay, record, flag in ("true", "1", "yes")))
    except RecordError as e:
        return error(400, str(e), action_index=e.action_index)


async def openapi(request: Request) -> Response:
    return json_response(openapi_schema(PROTOCOL))


async def ws_table(websocket: WebSocket) -> None:
    """One table per connection: JSON text messages, one answer each (docs in the README and :data:`WS_MESSAGES`)."""
    srv = _server(websocket)
    await websocket.accept()
    if srv.tables >= srv.config.max_tables:
        await websocket.send_text(dumps({"type": "error", "error": "the server is full: try again later",
                                         "fatal": True}))
        await websocket.close(code=1013)
        return
    srv.tables += 1
    table: Table | None = None
    try:
        while True:
            try:
                msg = await asyncio.wait_for(websocket.receive(), timeout=srv.config.idle_timeout)
            except asyncio.TimeoutError:
                await websocket.send_text(dumps({"type": "error", "fatal": True, "error":
                                                 f"idle for {srv.config.idle_timeout:g} s: the table is closed"}))
                await websocket.close(code=IDLE_CLOSE, reason="idle")
                return
            if msg["type"] == "websocket.disconnect":
                return
            text = msg.get("text")
            if text is None:
                out: dict[str, Any] = {"type": "error", "error": "send JSON text messages, not binary ones"}
            else:
                table, out = await srv.message(table, text)
            await websocket.send_text(dumps(out))
    except WebSocketDisconnect:
        pass
    except Exception:  # the connection broke while sending, or a bug: this table ends, the server goes on
        log.exception("table connection failed")
        with contextlib.suppress(Exception):
            await websocket.close(code=1011)
    finally:
        srv.tables -= 1


async def http_error(request: Request, exc: Exception) -> Response:
    if isinstance(exc, HTTPException):
        return error(exc.status_code, str(exc.detail))
    return error(500, "internal error")


def create_app(config: ServerConfig | None = None) -> Starlette:
    """The app; bad configuration (an unknown ``--agents`` spec, bad ``--seats``) is a ValueError."""
    server = Server(config or ServerConfig())

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if server.config.warmup:
            await run_in_threadpool(server.warmup)
        yield

    routes = [
        Route("/", index, methods=["GET"]),
        Route("/v1/variants", variants, methods=["GET"]),
        Route("/v1/bots", bots, methods=["GET"]),
        Route("/v1/health", health, methods=["GET"]),
        Route("/v1/act", act, methods=["POST"]),
        Route("/v1/replay", replay_record, methods=["POST"]),
        Route("/openapi.json", openapi, methods=["GET"]),
        WebSocketRoute("/ws", ws_table),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes, lifespan=lifespan,
                    exception_handlers={HTTPException: http_error, Exception: http_error})
    app.state.server = server
    return app


def app_from_env() -> Starlette:
    """The app of a ``serve --workers N`` process: its configuration from the environment (:data:`CONFIG_ENV`)."""
    return create_app(ServerConfig(**json.loads(os.environ.get(CONFIG_ENV, "{}"))))


def config_env(config: ServerConfig) -> str:
    return json.dumps(asdict(config))
