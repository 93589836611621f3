"""The games of ``tarocchi-rl serve`` in a database (``serve --db URL``: SQLite by default, any SQLAlchemy URL).

Three tables (the schema is made and upgraded by the Alembic migrations of ``web/migrations``, run to their head
whenever a store is opened; a database of a revision this version does not know is refused):

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
  ``games.challenge`` (the key) and ``games.challenge_deal`` (revision 0003).

A game is written as it is played (:mod:`~tarocchi_rl.web.writer`): its row and seats when dealt, its moves as
they come, its record when it ends; a deal that ends otherwise (the connection closes, a new deal replaces it, a
bot fails) is ``abandoned``, and so is any game still ``in_progress`` when a server starts
(:func:`prepare_database`): the process that played it is gone. Every error (a URL that does not parse, a
database driver that is not installed, a missing or corrupt file, an unknown revision) is a :class:`StoreError`,
one line naming the database (its password hidden).
"""

import datetime as dt
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, SQLAlchemyError

__all__ = ["Abandoned", "ChallengeResult", "Finished", "MIGRATIONS", "MOVE_BY", "Moves", "NewGame", "STATUSES",
           "SeatReplaced", "Store", "StoreError", "Write", "check_url", "new_sqlite_file", "open_store",
           "prepare_database", "utc_now"]

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
STATUSES = ("in_progress", "finished", "abandoned")
MOVE_BY = {"human": "person", "bot": "bot", "forced": "forced", "replacement": "replacement"}  # a table's step's
# ``by`` -> the stored one
SQLITE_BUSY_SECONDS = 30.0  # how long a SQLite write waits for another process's (serve --workers N) to end
MAX_NAME = 64  # characters of a seat's name (bot display names and person ids are far shorter)
MAX_ACTION = 64  # characters of an action string (tarocchi_rl.web.table.MAX_ACTION_TEXT)
MAX_MS = 2**31 - 1  # a move's ms (about 24.8 days) at most: an INTEGER is 32 bits in PostgreSQL (64 in SQLite)

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
    sa.Column("name", sa.String(MAX_NAME), nullable=False),
    sa.Column("variant", sa.String(32), nullable=False),
    sa.Column("bot", sa.String(MAX_NAME), nullable=False),
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
    sa.Column("name", sa.String(MAX_NAME), nullable=False),
    sa.Column("payoff", sa.Integer, nullable=True),
    sa.Column("replaced_by", sa.String(MAX_NAME), nullable=True),
)
moves = sa.Table(
    "moves", metadata,
    sa.Column("game_id", sa.String(32), sa.ForeignKey("games.id"), primary_key=True),
    sa.Column("step", sa.Integer, primary_key=True),
    sa.Column("seat", sa.Integer, nullable=False),
    sa.Column("action", sa.String(MAX_ACTION), nullable=False),
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
    path = sqlite_path(parsed)
    if path is not None and path.is_dir():
        raise StoreError(f"--db {_shown(parsed)}: {path} is a directory")
    if path is not None and not path.parent.is_dir():
        raise StoreError(f"--db {_shown(parsed)}: no directory {path.parent}")
    return parsed


def sqlite_path(url: URL) -> Path | None:
    """The file of a SQLite URL (None: not SQLite, or an in-memory database)."""
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    return Path(str(url.database))


def new_sqlite_file(url: str) -> bool:
    """Whether ``url`` names a SQLite file that does not exist yet (opening it makes a new, empty database)."""
    path = sqlite_path(check_url(url))
    return path is not None and not path.exists()


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    """WAL: readers (export, stats) beside the writer, and a commit survives the process being killed."""
    cur = dbapi_connection.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def open_store(url: str, create: bool = True) -> "Store":
    """The store at ``url``, its schema upgraded to the migrations' head. ``create`` False: a SQLite file must
    exist already (``games export`` and ``stats`` read, they make no empty database)."""
    parsed = check_url(url)
    path = sqlite_path(parsed)
    if path is not None and not create and not path.is_file():
        raise StoreError(f"--db {_shown(parsed)}: no such file {path}")
    kw: dict[str, Any] = {}
    if parsed.get_backend_name() == "sqlite":
        kw["connect_args"] = {"timeout": SQLITE_BUSY_SECONDS}
    try:
        engine = sa.create_engine(parsed, **kw)
    except ImportError as e:  # the driver (psycopg for postgresql:// with SQLAlchemy 2.1: the postgres extra)
        raise StoreError(f"--db {_shown(parsed)}: its driver is not installed ({e})") from None
    except ArgumentError as e:
        raise StoreError(f"--db {_shown(parsed)}: {' '.join(str(e).split())}") from None
    if parsed.get_backend_name() == "sqlite":
        sa.event.listen(engine, "connect", _sqlite_pragmas)
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
    :class:`Abandoned` (:meth:`write`, one transaction a batch) and the reads of ``games export`` / ``stats``.
    Every database error is a :class:`StoreError` naming the database."""

    def __init__(self, engine: Engine, shown: str) -> None:
        self.engine = engine
        self.shown = shown

    def close(self) -> None:
        self.engine.dispose()

    def _error(self, e: Exception) -> StoreError:
        why = getattr(e, "orig", None) or e
        return StoreError(f"database {self.shown}: {' '.join(str(why).split())[:300]}")

    # -- the schema ----------------------------------------------------------------------------------------------
    def revision(self) -> str | None:
        """The database's schema revision (None: no schema yet)."""
        try:
            with self.engine.connect() as conn:
                return MigrationContext.configure(conn).get_current_revision()
        except SQLAlchemyError as e:
            raise self._error(e) from None

    def upgrade(self) -> None:
        """Upgrade the schema to the migrations' head; a revision they do not know (a newer tarocchi-rl made the
        database) is refused."""
        cfg = _alembic_config()
        script = ScriptDirectory.from_config(cfg)
        current = self.revision()
        known = {r.revision for r in script.walk_revisions()}
        if current is not None and current not in known:
            raise StoreError(f"database {self.shown}: schema revision {current!r} is unknown to this tarocchi-rl "
                             f"(its newest is {script.get_current_head()!r}): a newer version made it; upgrade "
                             "tarocchi-rl")
        if current == script.get_current_head():
            return
        try:
            with self.engine.begin() as conn:
                cfg.attributes["connection"] = conn
                command.upgrade(cfg, "head")
        except SQLAlchemyError as e:
            raise self._error(e) from None

    # -- writes --------------------------------------------------------------------------------------------------
    def write(self, batch: Sequence[Write]) -> None:
        """Apply the writes in one transaction (all or none); the moves of every :class:`Moves` of the batch are
        inserted together at its end (one statement: the games they belong to are in by then)."""
        try:
            with self.engine.begin() as conn:
                move_rows: list[dict[str, Any]] = []
                for w in batch:
                    if isinstance(w, Moves):
                        move_rows += _move_rows(w)
                    else:
                        _apply(conn, w)
                if move_rows:
                    conn.execute(moves.insert(), move_rows)
        except SQLAlchemyError as e:
            raise self._error(e) from None

    def abandon_unfinished(self) -> int:
        """Mark every ``in_progress`` game ``abandoned``; how many there were."""
        try:
            with self.engine.begin() as conn:
                done = conn.execute(games.update().where(games.c.status == "in_progress")
                                    .values(status="abandoned", finished_at=utc_now()))
                return int(done.rowcount)
        except SQLAlchemyError as e:
            raise self._error(e) from None

    # -- reads ---------------------------------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        """Games per status, and ``practice``: the practice tables among them."""
        try:
            with self.engine.connect() as conn:
                rows = conn.execute(sa.select(games.c.status, games.c.practice, sa.func.count())
                                    .group_by(games.c.status, games.c.practice)).all()
        except SQLAlchemyError as e:
            raise self._error(e) from None
        out = dict.fromkeys(STATUSES, 0) | {"practice": 0}
        for status, practice, n in rows:
            out[str(status)] = out.get(str(status), 0) + int(n)
            out["practice"] += int(n) if practice else 0
        return out

    def _finished(self, variant: str | None, since: dt.datetime | None, practice: bool) -> Any:
        """The WHERE clause of the finished games asked for."""
        where = [games.c.status == "finished"]
        if variant is not None:
            where.append(games.c.variant == variant)
        if since is not None:
            where.append(games.c.created_at >= since)
        if not practice:
            where.append(games.c.practice == sa.false())
        return sa.and_(*where)

    def finished_games(self, variant: str | None = None, since: dt.datetime | None = None,
                       practice: bool = False) -> Iterator[dict[str, Any]]:
        """The finished games (oldest first): id, variant, practice, created, finished, record, seats
        ``[{"seat", "kind", "name", "payoff"}]``, challenge and challenge_deal (None: not a challenge's deal).
        ``practice`` False: practice tables left out."""
        where = self._finished(variant, since, practice)
        try:
            with self.engine.connect() as conn:
                seated: dict[str, list[dict[str, Any]]] = {}
                q = (sa.select(seats).join(games, games.c.id == seats.c.game_id).where(where)
                     .order_by(seats.c.game_id, seats.c.seat))
                for s in conn.execute(q):
                    seated.setdefault(s.game_id, []).append({"seat": s.seat, "kind": s.kind, "name": s.name,
                                                             "payoff": s.payoff})
                q = sa.select(games).where(where).order_by(games.c.created_at, games.c.id)
                for g in conn.execution_options(yield_per=500).execute(q):
                    yield {"id": g.id, "variant": g.variant, "practice": bool(g.practice), "created": g.created_at,
                           "finished": g.finished_at, "record": g.record, "seats": seated.get(g.id, []),
                           "challenge": g.challenge, "challenge_deal": g.challenge_deal}
        except SQLAlchemyError as e:
            raise self._error(e) from None

    def challenge_results(self, challenge: str) -> dict[int, tuple[int, dict[str, Any]]]:
        """The challenged bot's stored results on a challenge's deals: deal -> (payoff, record)."""
        try:
            with self.engine.connect() as conn:
                rows = conn.execute(sa.select(challenge_results.c.deal, challenge_results.c.payoff,
                                              challenge_results.c.record)
                                    .where(challenge_results.c.challenge == challenge)).all()
        except SQLAlchemyError as e:
            raise self._error(e) from None
        return {int(d): (int(p), dict(r)) for d, p, r in rows}

    def challenge_games(self) -> list[dict[str, Any]]:
        """The finished, non-practice games played on a challenge's deal whose bot result is stored, oldest first:
        game, created, person (the person seat's name), payoff (the person's), challenge (key), name, deal,
        variant, bot (display name), bot_payoff."""
        r = challenge_results.c
        q = (sa.select(games.c.id, games.c.created_at, seats.c.name, seats.c.payoff, r.challenge, r.name, r.deal,
                       r.variant, r.bot, r.payoff.label("bot_payoff"))
             .join(seats, sa.and_(seats.c.game_id == games.c.id, seats.c.kind == "person"))
             .join(challenge_results, sa.and_(r.challenge == games.c.challenge, r.deal == games.c.challenge_deal,
                                              r.seat == seats.c.seat))
             .where(games.c.status == "finished", games.c.practice == sa.false(), seats.c.payoff.is_not(None))
             .order_by(games.c.created_at, games.c.id))
        try:
            with self.engine.connect() as conn:
                rows = conn.execute(q).all()
        except SQLAlchemyError as e:
            raise self._error(e) from None
        return [{"game": g, "created": c, "person": str(person), "payoff": int(p), "challenge": key, "name": name,
                 "deal": int(d), "variant": v, "bot": bot, "bot_payoff": int(bp)}
                for g, c, person, p, key, name, d, v, bot, bp in rows]

    def challenge_names(self) -> dict[str, str]:
        """Challenge key -> name, of the challenges whose bot results are stored."""
        try:
            with self.engine.connect() as conn:
                rows = conn.execute(sa.select(challenge_results.c.challenge, challenge_results.c.name).distinct()).all()
        except SQLAlchemyError as e:
            raise self._error(e) from None
        return {str(k): str(n) for k, n in rows}

    def moves_by(self, game: str) -> list[tuple[int, int, str | None]]:
        """Who played each move of a game: (step, seat, by), in order (by: a value of :data:`MOVE_BY`, None when
        not stored)."""
        try:
            with self.engine.connect() as conn:
                rows = conn.execute(sa.select(moves.c.step, moves.c.seat, moves.c.by)
                                    .where(moves.c.game_id == game).order_by(moves.c.step)).all()
        except SQLAlchemyError as e:
            raise self._error(e) from None
        return [(int(a), int(b), None if c is None else str(c)) for a, b, c in rows]

    def stored_moves(self, game: str) -> list[tuple[int, int, str, int]]:
        """A game's moves: (step, seat, action, ms), in order."""
        try:
            with self.engine.connect() as conn:
                rows = conn.execute(sa.select(moves.c.step, moves.c.seat, moves.c.action, moves.c.ms)
                                    .where(moves.c.game_id == game).order_by(moves.c.step)).all()
        except SQLAlchemyError as e:
            raise self._error(e) from None
        return [(int(a), int(b), str(c), int(d)) for a, b, c, d in rows]

    def game_row(self, game: str) -> dict[str, Any] | None:
        """One game's row and seats (None: no such game)."""
        try:
            with self.engine.connect() as conn:
                g = conn.execute(sa.select(games).where(games.c.id == game)).first()
                if g is None:
                    return None
                seated = conn.execute(sa.select(seats).where(seats.c.game_id == game).order_by(seats.c.seat)).all()
        except SQLAlchemyError as e:
            raise self._error(e) from None
        return {**g._asdict(), "seats": [s._asdict() for s in seated]}


def _move_rows(w: Moves) -> list[dict[str, Any]]:
    """The rows of the ``moves`` table of a :class:`Moves` write."""
    return [{"game_id": w.game, "step": w.first + k, "seat": seat, "action": action[:MAX_ACTION],
             "ms": min(ms, MAX_MS), "by": w.by[k] if k < len(w.by) else None} for k, (seat, action, ms) in
            enumerate(w.rows)]


def _apply(conn: Connection, w: Write) -> None:
    """Apply one write other than :class:`Moves` (:meth:`Store.write` inserts those together)."""
    if isinstance(w, NewGame):
        conn.execute(games.insert().values(id=w.id, variant=w.variant, options=w.options, practice=w.practice,
                                           status="in_progress", created_at=w.created, challenge=w.challenge,
                                           challenge_deal=w.challenge_deal))
        conn.execute(seats.insert(), [{"game_id": w.id, "seat": k, "kind": kind, "name": name[:MAX_NAME]}
                                      for k, (kind, name) in enumerate(w.seats)])
    elif isinstance(w, Finished):
        conn.execute(games.update().where(games.c.id == w.game)
                     .values(status="finished", finished_at=w.at, record=w.record))
        payoffs = (w.record.get("result") or {}).get("payoffs") or []
        for k, p in enumerate(payoffs):
            conn.execute(seats.update().where(seats.c.game_id == w.game, seats.c.seat == k).values(payoff=int(p)))
    elif isinstance(w, ChallengeResult):
        have = conn.execute(sa.select(challenge_results.c.deal).where(challenge_results.c.challenge == w.challenge,
                                                                       challenge_results.c.deal == w.deal)).first()
        if have is None:
            conn.execute(challenge_results.insert().values(challenge=w.challenge, deal=w.deal, name=w.name[:MAX_NAME],
                                                           variant=w.variant, bot=w.bot[:MAX_NAME], seat=w.seat,
                                                           payoff=w.payoff, record=w.record, created_at=w.at))
    elif isinstance(w, SeatReplaced):
        conn.execute(seats.update().where(seats.c.game_id == w.game, seats.c.seat == w.seat)
                     .values(replaced_by=w.bot[:MAX_NAME]))
    elif isinstance(w, Abandoned):
        conn.execute(games.update().where(games.c.id == w.game, games.c.status == "in_progress")
                     .values(status="abandoned", finished_at=w.at))
    else:  # Moves: Store.write inserts a batch's moves together
        raise TypeError(f"_apply takes no {type(w).__name__} write")

