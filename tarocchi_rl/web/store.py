"""The games of ``tarocchi-rl serve`` in a database (``serve --db URL``: SQLite by default, any SQLAlchemy URL).

Five tables (the schema is made and upgraded by the Alembic migrations of ``web/migrations``, run to their head
whenever a store is opened, by one process at a time; a database of a revision this version does not know is
refused):

- ``games``, a deal dealt at a table: id (32 hex digits), variant, options (JSON), practice, status
  (``in_progress``, ``finished``, ``abandoned``), created_at and finished_at (UTC), record (the
  ``tarocchi-record/1`` record, JSON, once finished);
- ``seats``, a seat of a game: game_id, seat, kind (``person``, ``bot``), name (the bot's display name or the
  person's anonymous id: never an address), payoff (once finished), replaced_by (the bot that took over a
  person's seat when the person left a shared table; null: never taken over);
- ``moves``, an action of a game: game_id, step (0, 1, ...), seat, action (its string), ms (since the move
  before it: a bot's thinking time, a person's answer with the network's round trip), by (who played it:
  ``person``, ``bot``, ``forced`` (a person's only legal move, played for them), ``replacement`` (the bot that
  took over a person's seat); null in games stored before revision 0002);
- ``challenge_results``, the challenged bot's result on one deal of a duplicate challenge
  (:mod:`~tarocchi_rl.web.challenges`), computed once offline: challenge (its key), deal, name, variant, bot (its
  display name), seat, payoff (the bot's at that seat), record, created_at. A game played on a challenge's deal has
  ``games.challenge`` (the key) and ``games.challenge_deal`` (revision 0003);
- ``server_secrets``, a server's secret by name, made once (revision 0004): ``player-tokens``, the key that signs the
  challenges' player tokens (:mod:`~tarocchi_rl.web.challenges`), shared by every process serving the database.

**Consistency.** Every write is one transaction (a batch of the writer's, all or none); every read that spans
tables or statements is one transaction on one snapshot (:meth:`Store.reading`, :data:`SNAPSHOT_ISOLATION`): a game
that finishes while ``games export`` reads is read before or after, never half (finished without its seats'
payoffs, or its seats missing). SQLite's driver begins no transaction before a SELECT of its own accord; the store
begins each one itself (``BEGIN``; a write ``BEGIN IMMEDIATE``, so that it waits its turn behind another process's
write instead of failing when it must upgrade its read lock).

A game is written as it is played (:mod:`~tarocchi_rl.web.writer`): its row and seats when dealt, its moves as
they come, its record when it ends; a deal that ends otherwise (the connection closes, a new deal replaces it, a
bot fails) is ``abandoned``, and so is any game still ``in_progress`` when a server starts
(:func:`prepare_database`): the process that played it is gone. Every error (a URL that does not parse, a
database driver that is not installed, a missing or corrupt file, an unknown revision) is a :class:`StoreError`,
one line naming the database (its password hidden).
"""

import contextlib
import datetime as dt
import secrets
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.dialects import postgresql as pg_dialect
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, SQLAlchemyError

__all__ = ["Abandoned", "ChallengeResult", "Finished", "MIGRATIONS", "MOVE_BY", "Moves", "NewGame", "Reader",
           "STATUSES", "SNAPSHOT_ISOLATION", "SeatReplaced", "Store", "StoreError", "Write", "check_url",
           "new_sqlite_file", "open_store", "prepare_database", "utc_now"]

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
STATUSES = ("in_progress", "finished", "abandoned")
MOVE_BY = {"human": "person", "bot": "bot", "forced": "forced", "replacement": "replacement"}  # a table's step's
# ``by`` -> the stored one
_SQLITE_BUSY_SECONDS = 30.0  # how long a SQLite write waits for another process's (serve --workers N) to end
_MAX_NAME = 64  # characters of a seat's name (bot display names and person ids are far shorter)
_MAX_ACTION = 64  # characters of an action string (tarocchi_rl.web.table.MAX_ACTION_TEXT)
MAX_MS = 2**31 - 1  # a move's ms (about 24.8 days) at most: an INTEGER is 32 bits in PostgreSQL (64 in SQLite)
# The isolation level of a read (Store.reading): one snapshot for the whole transaction, whatever commits meanwhile.
# SQLite: nothing to set (a transaction opened with BEGIN, which _sqlite_begin emits, reads one snapshot in WAL mode
# from its first read to its end); PostgreSQL's default, READ COMMITTED, takes a snapshot per statement, REPEATABLE
# READ keeps the transaction's first (and a read-only one never fails to serialize); any other: SERIALIZABLE.
SNAPSHOT_ISOLATION: dict[str, str | None] = {"sqlite": None, "postgresql": "REPEATABLE READ",
                                             "mysql": "REPEATABLE READ", "mariadb": "REPEATABLE READ"}
_WRITE_OPTION = "tarocchi_write"  # the execution option of a write transaction: SQLite begins it BEGIN IMMEDIATE
_UPGRADE_LOCK = 0x74617230  # the PostgreSQL advisory lock held while one process upgrades the schema
_PLAYER_SECRET = "player-tokens"  # server_secrets' key of the challenges' player tokens (web/challenges.py)

metadata = sa.MetaData()
games = sa.Table(
    "games", metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("variant", sa.String(32), nullable=False),
    sa.Column("options", sa.JSON, nullable=False),
    sa.Column("practice", sa.Boolean, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("finished_at", sa.DateTime, nullable=True),
    sa.Column("record", sa.JSON, nullable=True),
    sa.Column("challenge", sa.String(32), nullable=True),
    sa.Column("challenge_deal", sa.Integer, nullable=True),
    sa.Index("games_by_status", "status", "variant", "created_at"),
    sa.Index("games_by_challenge", "challenge", "challenge_deal"),
)
challenge_results = sa.Table(
    "challenge_results", metadata,
    sa.Column("challenge", sa.String(32), primary_key=True),
    sa.Column("deal", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(_MAX_NAME), nullable=False),
    sa.Column("variant", sa.String(32), nullable=False),
    sa.Column("bot", sa.String(_MAX_NAME), nullable=False),
    sa.Column("seat", sa.Integer, nullable=False),
    sa.Column("payoff", sa.Integer, nullable=False),
    sa.Column("record", sa.JSON, nullable=False),
    sa.Column("created_at", sa.DateTime, nullable=False),
)
seats = sa.Table(
    "seats", metadata,
    sa.Column("game_id", sa.String(32), sa.ForeignKey("games.id"), primary_key=True),
    sa.Column("seat", sa.Integer, primary_key=True),
    sa.Column("kind", sa.String(8), nullable=False),
    sa.Column("name", sa.String(_MAX_NAME), nullable=False),
    sa.Column("payoff", sa.Integer, nullable=True),
    sa.Column("replaced_by", sa.String(_MAX_NAME), nullable=True),
)
server_secrets = sa.Table(
    "server_secrets", metadata,
    sa.Column("name", sa.String(32), primary_key=True),
    sa.Column("value", sa.String(128), nullable=False),
    sa.Column("created_at", sa.DateTime, nullable=False),
)
moves = sa.Table(
    "moves", metadata,
    sa.Column("game_id", sa.String(32), sa.ForeignKey("games.id"), primary_key=True),
    sa.Column("step", sa.Integer, primary_key=True),
    sa.Column("seat", sa.Integer, nullable=False),
    sa.Column("action", sa.String(_MAX_ACTION), nullable=False),
    sa.Column("ms", sa.Integer, nullable=False),
    sa.Column("by", sa.String(12), nullable=True),
)


class StoreError(ValueError):
    """The database cannot be used: one line naming it and why."""


def utc_now() -> dt.datetime:
    """Now in UTC, naive (the columns hold UTC times without a zone: SQLite keeps none)."""
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


# -- the writes (queued by tarocchi_rl.web.writer, applied in batches by Store.write) ----------------------------
@dataclass(frozen=True)
class NewGame:
    """A deal dealt: ``seats[k]`` = (kind, name), kind ``person`` or ``bot``; ``challenge`` and ``challenge_deal``:
    the challenge's key and the deal's index when it is a deal of a duplicate challenge."""

    id: str
    variant: str
    options: dict[str, Any]
    practice: bool
    created: dt.datetime
    seats: tuple[tuple[str, str], ...]
    challenge: str | None = None
    challenge_deal: int | None = None


@dataclass(frozen=True)
class Moves:
    """Moves ``first``, ``first + 1``, ... of a game: (seat, action, ms) each; ``by``: who played each (a value
    of :data:`MOVE_BY`; empty: not said)."""

    game: str
    first: int
    rows: tuple[tuple[int, str, int], ...]
    by: tuple[str, ...] = ()


@dataclass(frozen=True)
class SeatReplaced:
    """A bot (by display name) took over a person's seat of a game (the person left a shared table)."""

    game: str
    seat: int
    bot: str


@dataclass(frozen=True)
class Finished:
    """A deal over: its ``tarocchi-record/1`` record (``result.payoffs`` per seat)."""

    game: str
    record: dict[str, Any]
    at: dt.datetime


@dataclass(frozen=True)
class Abandoned:
    """A deal that will not be finished (the connection closed, a new deal replaced it, a bot failed)."""

    game: str
    at: dt.datetime


@dataclass(frozen=True)
class ChallengeResult:
    """The challenged bot's result on deal ``deal`` of a challenge (key ``challenge``): its seat's payoff and the
    record of the deal it played. Written once: a row already there is kept."""

    challenge: str
    deal: int
    name: str
    variant: str
    bot: str
    seat: int
    payoff: int
    record: dict[str, Any]
    at: dt.datetime


Write = NewGame | Moves | Finished | Abandoned | SeatReplaced | ChallengeResult


# -- URLs and opening ------------------------------------------------------------------------------------------------
def _shown(url: "URL | str") -> str:
    return url.render_as_string(hide_password=True) if isinstance(url, URL) else str(url)


def check_url(url: str) -> URL:
    """The parsed URL, its dialect and driver loadable; a :class:`StoreError` otherwise (nothing is opened)."""
    if not isinstance(url, str) or not url.strip():
        raise StoreError("--db: expected a database URL such as sqlite:///games.db")
    try:
        parsed = make_url(url.strip())
        parsed.get_dialect()
    except NoSuchModuleError:  # (an ArgumentError too)
        raise StoreError(f"--db {url!r}: unknown database kind {url.partition(':')[0]!r}") from None
    except ArgumentError:
        raise StoreError(f"--db {url!r}: not a database URL (e.g. sqlite:///games.db, "
                         "postgresql://user@host/games)") from None
    if _in_memory(parsed):  # (SQLite: no password to hide in the URL as given)
        raise StoreError(f"--db {url.strip()}: an in-memory database lives in one process and ends with it "
                         "(games export and stats, other processes, could never read it): give a file, e.g. "
                         "sqlite:///tarocchi-games.db (serve --db none stores nothing)")
    path = _sqlite_path(parsed)
    if path is not None and path.is_dir():
        raise StoreError(f"--db {_shown(parsed)}: {path} is a directory")
    if path is not None and not path.parent.is_dir():
        raise StoreError(f"--db {_shown(parsed)}: no directory {path.parent}")
    return parsed


def _in_memory(url: URL) -> bool:
    """Whether a URL names an in-memory SQLite database (``sqlite://``, ``sqlite:///:memory:``, a ``file:`` URI with
    ``mode=memory``): refused by :func:`check_url`."""
    if url.get_backend_name() != "sqlite":
        return False
    db = str(url.database or "")
    return db in ("", ":memory:") or ":memory:" in db or str(url.query.get("mode", "")).lower() == "memory"


def _sqlite_path(url: URL) -> Path | None:
    """The file of a SQLite URL (None: not SQLite, or an in-memory database)."""
    if url.get_backend_name() != "sqlite" or _in_memory(url):
        return None
    return Path(str(url.database))


def new_sqlite_file(url: str) -> bool:
    """Whether ``url`` names a SQLite file that does not exist yet (opening it makes a new, empty database)."""
    path = _sqlite_path(check_url(url))
    return path is not None and not path.exists()


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    """WAL: readers (export, stats) beside the writer, and a commit survives the process being killed. The driver's
    own transactions off (it would begin none before a SELECT, so each read statement would see its own snapshot):
    :func:`_sqlite_begin` begins every transaction."""
    dbapi_connection.isolation_level = None
    cur = dbapi_connection.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def _sqlite_begin(conn: Connection) -> None:
    """Begin a SQLite transaction: ``BEGIN`` (a read: one snapshot to its end), ``BEGIN IMMEDIATE`` for a write
    (:data:`_WRITE_OPTION`: the write lock taken at once, waiting up to :data:`_SQLITE_BUSY_SECONDS` for another
    process's)."""
    conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(_WRITE_OPTION) else "BEGIN")


def open_store(url: str, create: bool = True) -> "Store":
    """The store at ``url``, its schema upgraded to the migrations' head. ``create`` False: a SQLite file must
    exist already (``games export`` and ``stats`` read, they make no empty database)."""
    parsed = check_url(url)
    path = _sqlite_path(parsed)
    if path is not None and not create and not path.is_file():
        raise StoreError(f"--db {_shown(parsed)}: no such file {path}")
    kw: dict[str, Any] = {}
    if parsed.get_backend_name() == "sqlite":
        kw["connect_args"] = {"timeout": _SQLITE_BUSY_SECONDS}
    try:
        engine = sa.create_engine(parsed, **kw)
    except ImportError as e:  # the driver (psycopg for postgresql:// with SQLAlchemy 2.1: the postgres extra)
        raise StoreError(f"--db {_shown(parsed)}: its driver is not installed ({e})") from None
    except ArgumentError as e:
        raise StoreError(f"--db {_shown(parsed)}: {' '.join(str(e).split())}") from None
    if parsed.get_backend_name() == "sqlite":
        sa.event.listen(engine, "connect", _sqlite_pragmas)
        sa.event.listen(engine, "begin", _sqlite_begin)
    store = Store(engine, _shown(parsed))
    try:
        store.upgrade()
    except BaseException:
        engine.dispose()
        raise
    return store


def prepare_database(url: str) -> int:
    """What ``serve`` does once before it listens (before its worker processes start): the database opened and
    upgraded, and every game a previous server left ``in_progress`` marked ``abandoned``; their number."""
    store = open_store(url)
    try:
        return store.abandon_unfinished()
    finally:
        store.close()


def _alembic_config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return cfg


class Store:
    """A database of web games: the writes of :class:`NewGame`, :class:`Moves`, :class:`Finished`,
    :class:`Abandoned` (:meth:`write`, one transaction a batch) and the reads of ``games export`` / ``stats``
    (:meth:`reading`: several reads on one snapshot; each read method below is one snapshot of its own). Every
    database error is a :class:`StoreError` naming the database."""

    def __init__(self, engine: Engine, shown: str) -> None:
        self.engine = engine
        self.shown = shown

    def close(self) -> None:
        self.engine.dispose()

    def _error(self, e: Exception) -> StoreError:
        why = getattr(e, "orig", None) or e
        return StoreError(f"database {self.shown}: {' '.join(str(why).split())[:300]}")

    @contextlib.contextmanager
    def _writing(self) -> Iterator[Connection]:
        """One write transaction (SQLite: ``BEGIN IMMEDIATE``), committed at the end; a database error is a
        :class:`StoreError`."""
        try:
            with self.engine.connect() as conn:
                conn.execution_options(**{_WRITE_OPTION: True})
                with conn.begin():
                    yield conn
        except SQLAlchemyError as e:
            raise self._error(e) from None

    @contextlib.contextmanager
    def reading(self) -> Iterator["Reader"]:
        """A :class:`Reader` whose reads all see one snapshot of the database (:data:`SNAPSHOT_ISOLATION`), until the
        block ends; a database error is a :class:`StoreError`."""
        try:
            with self.engine.connect() as conn:
                level = SNAPSHOT_ISOLATION.get(conn.dialect.name, "SERIALIZABLE")
                if level is not None:
                    conn.execution_options(isolation_level=level)
                with conn.begin():
                    yield Reader(conn)
        except SQLAlchemyError as e:
            raise self._error(e) from None

    # -- the schema ----------------------------------------------------------------------------------------------
    def revision(self) -> str | None:
        """The database's schema revision (None: no schema yet)."""
        with self.reading() as r:
            return MigrationContext.configure(r.conn).get_current_revision()

    def upgrade(self) -> None:
        """Upgrade the schema to the migrations' head, one process at a time (the revision read again under the
        write lock: SQLite's, or a PostgreSQL advisory lock); a revision they do not know (a newer tarocchi-rl made
        the database) is refused."""
        cfg = _alembic_config()
        script = ScriptDirectory.from_config(cfg)
        head = script.get_current_head()
        current = self.revision()
        known = {r.revision for r in script.walk_revisions()}
        if current is not None and current not in known:
            raise StoreError(f"database {self.shown}: schema revision {current!r} is unknown to this tarocchi-rl "
                             f"(its newest is {head!r}): a newer version made it; upgrade tarocchi-rl")
        if current == head:
            return
        with self._writing() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(sa.select(sa.func.pg_advisory_xact_lock(_UPGRADE_LOCK)))
            if MigrationContext.configure(conn).get_current_revision() == head:  # another process did it meanwhile
                return
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")

    # -- writes --------------------------------------------------------------------------------------------------
    def write(self, batch: Sequence[Write]) -> None:
        """Apply the writes in one transaction (all or none); the moves of every :class:`Moves` of the batch are
        inserted together at its end (one statement: the games they belong to are in by then)."""
        with self._writing() as conn:
            move_rows: list[dict[str, Any]] = []
            for w in batch:
                if isinstance(w, Moves):
                    move_rows += _move_rows(w)
                else:
                    _apply(conn, w)
            if move_rows:
                conn.execute(moves.insert(), move_rows)

    def abandon_unfinished(self) -> int:
        """Mark every ``in_progress`` game ``abandoned``; how many there were."""
        with self._writing() as conn:
            done = conn.execute(games.update().where(games.c.status == "in_progress")
                                .values(status="abandoned", finished_at=utc_now()))
            return int(done.rowcount)

    def secret(self, name: str = _PLAYER_SECRET) -> bytes:
        """The server's secret ``name`` (32 random bytes), made by the first process that asks and the same for
        every later one (the insert of a second process that raced it is ignored, and it reads the first's)."""
        with self._writing() as conn:
            _insert_new(conn, server_secrets, {"name": name, "value": secrets.token_hex(32), "created_at": utc_now()})
            value = conn.execute(sa.select(server_secrets.c.value).where(server_secrets.c.name == name)).scalar_one()
        return bytes.fromhex(str(value))

    # -- reads (each on a snapshot of its own: Store.reading for several on one) ---------------------------------
    def counts(self) -> dict[str, int]:
        """:meth:`Reader.counts`."""
        with self.reading() as r:
            return r.counts()

    def finished_games(self, variant: str | None = None, since: dt.datetime | None = None,
                       practice: bool = False) -> Iterator[dict[str, Any]]:
        """:meth:`Reader.finished_games`, on one snapshot held while the games are read."""
        with self.reading() as r:
            yield from r.finished_games(variant, since, practice)

    def challenge_results(self, challenge: str) -> dict[int, tuple[int, dict[str, Any]]]:
        """:meth:`Reader.challenge_results`."""
        with self.reading() as r:
            return r.challenge_results(challenge)

    def challenge_games(self) -> list[dict[str, Any]]:
        """:meth:`Reader.challenge_games`."""
        with self.reading() as r:
            return r.challenge_games()

    def challenge_names(self) -> dict[str, str]:
        """:meth:`Reader.challenge_names`."""
        with self.reading() as r:
            return r.challenge_names()

    def moves_by(self, game: str) -> list[tuple[int, int, str | None]]:
        """:meth:`Reader.moves_by`."""
        with self.reading() as r:
            return r.moves_by(game)

    def stored_moves(self, game: str) -> list[tuple[int, int, str, int]]:
        """:meth:`Reader.stored_moves`."""
        with self.reading() as r:
            return r.stored_moves(game)

    def game_row(self, game: str) -> dict[str, Any] | None:
        """:meth:`Reader.game_row`."""
        with self.reading() as r:
            return r.game_row(game)


def _finished_where(variant: str | None, since: dt.datetime | None, practice: bool) -> Any:
    """The WHERE clause of the finished games asked for."""
    where = [games.c.status == "finished"]
    if variant is not None:
        where.append(games.c.variant == variant)
    if since is not None:
        where.append(games.c.created_at >= since)
    if not practice:
        where.append(games.c.practice == sa.false())
    return sa.and_(*where)


class Reader:
    """The reads of a store on one connection in one transaction (:meth:`Store.reading`): every read sees the same
    snapshot."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def counts(self) -> dict[str, int]:
        """Games per status, and ``practice``: the practice tables among them."""
        rows = self.conn.execute(sa.select(games.c.status, games.c.practice, sa.func.count())
                                 .group_by(games.c.status, games.c.practice)).all()
        out = dict.fromkeys(STATUSES, 0) | {"practice": 0}
        for status, practice, n in rows:
            out[str(status)] = out.get(str(status), 0) + int(n)
            out["practice"] += int(n) if practice else 0
        return out

    def finished_games(self, variant: str | None = None, since: dt.datetime | None = None,
                       practice: bool = False) -> Iterator[dict[str, Any]]:
        """The finished games (oldest first): id, variant, practice, created, finished, record, seats
        ``[{"seat", "kind", "name", "payoff"}]``, challenge and challenge_deal (None: not a challenge's deal).
        ``practice`` False: practice tables left out. The games and their seats are read side by side, in the same
        order (both streamed: one game's seats in memory at a time)."""
        where = _finished_where(variant, since, practice)
        order = (games.c.created_at, games.c.id)
        seat_rows = iter(self.conn.execute(sa.select(seats).join(games, games.c.id == seats.c.game_id).where(where)
                                           .order_by(*order, seats.c.seat), execution_options={"yield_per": 2000}))
        game_rows = self.conn.execute(sa.select(games).where(where).order_by(*order),
                                      execution_options={"yield_per": 500})
        s = next(seat_rows, None)
        for g in game_rows:
            seated = []
            while s is not None and s.game_id == g.id:
                seated.append({"seat": s.seat, "kind": s.kind, "name": s.name, "payoff": s.payoff})
                s = next(seat_rows, None)
            yield {"id": g.id, "variant": g.variant, "practice": bool(g.practice), "created": g.created_at,
                   "finished": g.finished_at, "record": g.record, "seats": seated, "challenge": g.challenge,
                   "challenge_deal": g.challenge_deal}

    def challenge_results(self, challenge: str) -> dict[int, tuple[int, dict[str, Any]]]:
        """The challenged bot's stored results on a challenge's deals: deal -> (payoff, record)."""
        rows = self.conn.execute(sa.select(challenge_results.c.deal, challenge_results.c.payoff,
                                           challenge_results.c.record)
                                 .where(challenge_results.c.challenge == challenge)).all()
        return {int(d): (int(p), dict(r)) for d, p, r in rows}

    def challenge_games(self) -> list[dict[str, Any]]:
        """Every game played on a challenge's deal whose bot result is stored, whatever its status (in progress,
        abandoned, practice too: :func:`tarocchi_rl.web.games.challenge_rows` counts a person's first start of a
        deal only), oldest first: game, created, status, practice, person (the person seat's name), payoff (the
        person's; None unless finished), challenge (key), name, deal, variant, bot (display name), bot_payoff."""
        r = challenge_results.c
        q = (sa.select(games.c.id, games.c.created_at, games.c.status, games.c.practice, seats.c.name, seats.c.payoff,
                       r.challenge, r.name, r.deal, r.variant, r.bot, r.payoff.label("bot_payoff"))
             .join(seats, sa.and_(seats.c.game_id == games.c.id, seats.c.kind == "person"))
             .join(challenge_results, sa.and_(r.challenge == games.c.challenge, r.deal == games.c.challenge_deal,
                                              r.seat == seats.c.seat))
             .order_by(games.c.created_at, games.c.id))
        return [{"game": g, "created": c, "status": str(status), "practice": bool(practice), "person": str(person),
                 "payoff": None if p is None else int(p), "challenge": key, "name": name, "deal": int(d),
                 "variant": v, "bot": bot, "bot_payoff": int(bp)}
                for g, c, status, practice, person, p, key, name, d, v, bot, bp in self.conn.execute(q)]

    def challenge_names(self) -> dict[str, str]:
        """Challenge key -> name, of the challenges whose bot results are stored."""
        rows = self.conn.execute(sa.select(challenge_results.c.challenge, challenge_results.c.name).distinct()).all()
        return {str(k): str(n) for k, n in rows}

    def moves_by(self, game: str) -> list[tuple[int, int, str | None]]:
        """Who played each move of a game: (step, seat, by), in order (by: a value of :data:`MOVE_BY`, None when
        not stored)."""
        rows = self.conn.execute(sa.select(moves.c.step, moves.c.seat, moves.c.by)
                                 .where(moves.c.game_id == game).order_by(moves.c.step)).all()
        return [(int(a), int(b), None if c is None else str(c)) for a, b, c in rows]

    def stored_moves(self, game: str) -> list[tuple[int, int, str, int]]:
        """A game's moves: (step, seat, action, ms), in order."""
        rows = self.conn.execute(sa.select(moves.c.step, moves.c.seat, moves.c.action, moves.c.ms)
                                 .where(moves.c.game_id == game).order_by(moves.c.step)).all()
        return [(int(a), int(b), str(c), int(d)) for a, b, c, d in rows]

    def game_row(self, game: str) -> dict[str, Any] | None:
        """One game's row and seats (None: no such game)."""
        g = self.conn.execute(sa.select(games).where(games.c.id == game)).first()
        if g is None:
            return None
        seated = self.conn.execute(sa.select(seats).where(seats.c.game_id == game).order_by(seats.c.seat)).all()
        return {**g._asdict(), "seats": [s._asdict() for s in seated]}


def _insert_new(conn: Connection, table: sa.Table, values: dict[str, Any]) -> None:
    """Insert a row unless one with its primary key is there (kept): one statement on SQLite and PostgreSQL (``ON
    CONFLICT DO NOTHING``: two processes racing, the second's insert is ignored, not an error failing its batch);
    elsewhere a read then an insert."""
    if conn.dialect.name in ("sqlite", "postgresql"):
        dialect = sqlite_dialect if conn.dialect.name == "sqlite" else pg_dialect
        conn.execute(dialect.insert(table).values(**values).on_conflict_do_nothing())
        return
    keys = list(table.primary_key.columns)
    if conn.execute(sa.select(*keys).where(*[k == values[k.name] for k in keys])).first() is None:
        conn.execute(table.insert().values(**values))


def _move_rows(w: Moves) -> list[dict[str, Any]]:
    """The rows of the ``moves`` table of a :class:`Moves` write."""
    return [{"game_id": w.game, "step": w.first + k, "seat": seat, "action": action[:_MAX_ACTION],
             "ms": min(ms, MAX_MS), "by": w.by[k] if k < len(w.by) else None} for k, (seat, action, ms) in
            enumerate(w.rows)]


def _apply(conn: Connection, w: Write) -> None:
    """Apply one write other than :class:`Moves` (:meth:`Store.write` inserts those together)."""
    if isinstance(w, NewGame):
        conn.execute(games.insert().values(id=w.id, variant=w.variant, options=w.options, practice=w.practice,
                                           status="in_progress", created_at=w.created, challenge=w.challenge,
                                           challenge_deal=w.challenge_deal))
        conn.execute(seats.insert(), [{"game_id": w.id, "seat": k, "kind": kind, "name": name[:_MAX_NAME]}
                                      for k, (kind, name) in enumerate(w.seats)])
    elif isinstance(w, Finished):
        conn.execute(games.update().where(games.c.id == w.game)
                     .values(status="finished", finished_at=w.at, record=w.record))
        payoffs = (w.record.get("result") or {}).get("payoffs") or []
        for k, p in enumerate(payoffs):
            conn.execute(seats.update().where(seats.c.game_id == w.game, seats.c.seat == k).values(payoff=int(p)))
    elif isinstance(w, ChallengeResult):  # written once: a row already there (another process's) is kept
        _insert_new(conn, challenge_results, {"challenge": w.challenge, "deal": w.deal, "name": w.name[:_MAX_NAME],
                                              "variant": w.variant, "bot": w.bot[:_MAX_NAME], "seat": w.seat,
                                              "payoff": w.payoff, "record": w.record, "created_at": w.at})
    elif isinstance(w, SeatReplaced):
        conn.execute(seats.update().where(seats.c.game_id == w.game, seats.c.seat == w.seat)
                     .values(replaced_by=w.bot[:_MAX_NAME]))
    elif isinstance(w, Abandoned):
        conn.execute(games.update().where(games.c.id == w.game, games.c.status == "in_progress")
                     .values(status="abandoned", finished_at=w.at))
    else:  # Moves: Store.write inserts a batch's moves together
        raise TypeError(f"_apply takes no {type(w).__name__} write")

