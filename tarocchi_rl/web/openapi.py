"""The OpenAPI description of ``tarocchi-rl serve`` (``GET /openapi.json``), derived from the app's route table
(:data:`tarocchi_rl.web.app.ENDPOINTS`: every route with its :class:`Operation`) and the types of the bodies
(:mod:`~tarocchi_rl.web.bodies`, turned into JSON Schemas by :mod:`~tarocchi_rl.web.schema`). The operations are
described here, next to the routes they describe; a test checks the server's answers against their schemas."""

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from .. import __version__
from ..bot import PROTOCOL as BOT_PROTOCOL
from . import limits
from .bodies import (
    CLOSED,
    ActAnswer,
    ActRequest,
    BotList,
    BusyError,
    ChallengeList,
    Error,
    Health,
    Record,
    ReplayError,
    ReplayResult,
    TableList,
    VariantList,
)
from .bots import DEFAULT_BOT
from .schema import Json, SchemaBuilder

JSON = "application/json"
_PROTOCOL_FIELD = "{protocol}"  # in a summary: the WebSocket protocol's name


@dataclass(frozen=True)
class Reply:
    """A response: its description, its body's type (a hint :class:`~tarocchi_rl.web.schema.SchemaBuilder`
    describes; None: no schema), its media type (None: no body) and whether it carries ``Retry-After``."""

    description: str
    body: Any = None
    media_type: str | None = JSON
    retry_after: bool = False


@dataclass(frozen=True)
class Query:
    """A query parameter a client may leave out: its name, its type (its default as ``Json(default=...)``) and
    what it does."""

    name: str
    hint: Any
    description: str


@dataclass(frozen=True)
class Operation:
    """What the description says of one route: its method, summary (``{protocol}`` stands for the WebSocket
    protocol's name), responses by status, longer description, query parameters and the type of the request
    body (None: no body)."""

    method: Literal["GET", "POST"]
    summary: str
    responses: dict[int, Reply]
    description: str = ""
    query: tuple[Query, ...] = ()
    body: Any = None


@dataclass(frozen=True)
class Endpoint:
    """A route of the app: its path, its handler (of a request, or of a WebSocket with ``websocket``) and its
    operation."""

    path: str
    handler: Callable[..., Awaitable[Any]]
    operation: Operation
    websocket: bool = False


# -- the operations ----------------------------------------------------------------------------------------------
INFO = ("The browser game and the HTTP API of `tarocchi-rl serve`. Every error has a body {\"error\": \"...\"}; "
        "a Host name the server does not serve is a 400; a busy server answers 503 or 429 with Retry-After.")
_WS_DESCRIPTION = (
    "Upgrade to a WebSocket. Client messages (JSON text): {type: start, variant, options?, seats: ['human', BOT, "
    "...], seed?, id?} (seed: an integer or its digits as a string; a client's seed makes a practice table), "
    "{type: act, action: 'play:KC' (or its id), id?}, {type: ping, id?}. Server messages: {type: state, table, "
    "moves} (no seed before the end; the first one with resume: {code, token}), {type: over, seed (a string), "
    "practice, table, moves, outcome, summary, sheet (the score in words), record, annulled}, {type: error, error, "
    "fatal?}, {type: pong}; id is echoed. A deal whose connection closed waits --seat-grace seconds: {type: resume, "
    "code, token, id?} takes it back (a state with every move so far; a connection still playing it is closed, "
    "code 4002). An idle table is closed (code "
    "4000); a handshake whose Origin is another site's is refused (code 1008). A table for several people: "
    "{type: open, variant, options?, seats: ['human', 'human', BOT, ...], lobby?: bool (listed by GET /v1/tables), "
    "replacement?: BOT (plays a seat whose person left, default heuristic), seed?: a practice table as start's, "
    "id?} -> {type: joined, code, seat, token, started, waiting_for, people, practice, ...}; {type: join, code, "
    "token?, id?}: a free seat, or with the seat's token one's own seat back, then a state with every move of the "
    "deal so far as that seat saw it (a wrong code or token costs the address one of its tries); then act as "
    "above. Each seat is sent its own view: {type: state | over, code, table, moves, people} after every move at "
    "the table, {type: people, people} when someone comes or goes. A server of several processes (serve "
    "--workers N) refuses open and join. A duplicate challenge's deal (GET /v1/challenges): {type: challenge, name, "
    "deal (0-based), player?: the player token the server gave (8-40 letters, digits, - and _), id?}: a table as "
    "start's, each state and over with challenge: {name, deal, deals, seat, bot, counted, player?, why?} (player: "
    "the token to keep and send; counted false: practice, why says why); at over also you, bot_payoff, difference "
    "(you - bot) and bot_record (the same deal as the challenged bot played it, from the same seat).")
_BODY_REPLIES = {  # a POST's body refused
    413: Reply("the body is larger than the limit (1 MB by default)", Error),
    415: Reply(f"the body is not declared Content-Type: {JSON}", Error),
}
_LIMIT_REPLIES = {  # the limits against one greedy client (tarocchi_rl/web/limits.py)
    limits.BODY_TIMEOUT_STATUS: Reply(f"the body did not arrive within the limit ({limits.BODY_SECONDS:g} s by "
                                      "default); the connection is closed", Error),
    limits.CLIENT_BUSY_STATUS: Reply("this client address has its share of the work queued, or of its "
                                     "connections, already", BusyError, retry_after=True),
    limits.BUSY_STATUS: Reply("the server's queue for this kind of work is full", BusyError, retry_after=True),
}

PAGE = Operation("GET", "The page: play a deal against the server's bots, replay records",
                 {200: Reply("HTML", media_type="text/html")})
WEBSOCKET = Operation("GET", f"WebSocket ({_PROTOCOL_FIELD}): one table per connection",
                      {101: Reply("switching protocols", media_type=None)}, description=_WS_DESCRIPTION)
VARIANTS = Operation("GET", "Variants: long names, players, options (type, default, choices), the action table",
                     {200: Reply("the variants", VariantList)})
BOTS = Operation("GET", "The bots this server offers, by name and index (the only names /ws and /v1/act accept)",
                 {200: Reply("the bots", BotList)})
TABLES = Operation("GET", "The lobby: shared tables opened for it that have a free seat (join by code over /ws)",
                   {200: Reply("the open tables, newest first", TableList)})
CHALLENGES = Operation("GET", "The duplicate challenges: fixed deals a person plays against the bot's results on them",
                       {200: Reply("the challenges", ChallengeList)})
HEALTH = Operation("GET", "Liveness and the number of open tables", {200: Reply("alive", Health)})
ACT = Operation(
    "POST", f"One {BOT_PROTOCOL} act request answered by one of the server's bots",
    {200: Reply("the bot's answer", ActAnswer),
     400: Reply("the bot's error answer {type: error, error}, or a bad agent / body {error}", ActAnswer | Error),
     **_BODY_REPLIES, **_LIMIT_REPLIES},
    query=(Query("agent", Annotated[str, Json(default=DEFAULT_BOT)], "a bot of GET /v1/bots, by name"),),
    body=ActRequest)
REPLAY = Operation(
    "POST", "Validate and score a game record",
    {200: Reply("the record is valid", ReplayResult),
     400: Reply("not JSON, or an invalid record: the reason and the action at fault", ReplayError),
     **_BODY_REPLIES, **_LIMIT_REPLIES},
    query=(Query("steps", Annotated[bool, Json(default=False)], "also return the open snapshot after every step"),),
    body=Record)
OPENAPI = Operation("GET", "This document", {200: Reply("OpenAPI 3.1", dict[str, Any])})


# -- the document ------------------------------------------------------------------------------------------------
def openapi_schema(protocol: str, endpoints: Iterable[Endpoint]) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``endpoints`` (``protocol``: the WebSocket protocol's name); the bodies' schemas
    are gathered under ``components``. A ValueError when two endpoints give the same method of a path."""
    builder = SchemaBuilder(closed=CLOSED)
    paths: dict[str, dict[str, Any]] = {}
    for e in endpoints:
        method = e.operation.method.lower()
        if method in paths.setdefault(e.path, {}):
            raise ValueError(f"two endpoints describe {e.operation.method} {e.path}")
        paths[e.path][method] = _operation(e.operation, protocol, builder)
    return {
        "openapi": "3.1.0",
        "info": {"title": "tarocchi-rl", "version": __version__, "description": INFO},
        "paths": paths,
        "components": {"schemas": builder.components},
    }


def _operation(op: Operation, protocol: str, builder: SchemaBuilder) -> dict[str, Any]:
    """One operation object: summary, description, parameters, request body, responses."""
    out: dict[str, Any] = {"summary": op.summary.replace(_PROTOCOL_FIELD, protocol)}
    if op.description:
        out["description"] = op.description
    if op.query:
        out["parameters"] = [{"name": q.name, "in": "query", "required": False, "schema": builder.schema(q.hint),
                              "description": q.description} for q in op.query]
    if op.body is not None:
        out["requestBody"] = {"required": True, "content": {JSON: {"schema": builder.schema(op.body)}}}
    out["responses"] = {str(status): _response(reply, builder) for status, reply in op.responses.items()}
    return out


def _response(reply: Reply, builder: SchemaBuilder) -> dict[str, Any]:
    """One response object: its description, its content (the body's schema) and its headers."""
    out: dict[str, Any] = {"description": reply.description}
    if reply.media_type is not None:
        out["content"] = {reply.media_type: {} if reply.body is None else {"schema": builder.schema(reply.body)}}
    if reply.retry_after:
        out["headers"] = {"Retry-After": {"schema": {"type": "integer"},
                                          "description": "seconds to wait before trying again"}}
    return out
