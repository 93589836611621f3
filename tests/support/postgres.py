"""A throwaway PostgreSQL server for the tests of the games' store (``tests/web``, marker ``postgres``).

:func:`running_postgres` makes a cluster with the newest ``/usr/lib/postgresql/*/bin/initdb`` (Debian's
``postgresql`` package; ``make test`` installs it) in a temporary directory, starts it with ``pg_ctl`` listening
on 127.0.0.1 only, on a free port (and on a unix socket in that directory), trust authentication for the
``postgres`` role, durability off (a test's data need not survive a crash), and at the end stops it
(``pg_ctl stop -m immediate``) and removes the directory, also when a test failed. PostgreSQL refuses to run as
root: as root the directory is given to the ``postgres`` user (made by the Debian package) and every command runs
through ``runuser -u postgres --``; otherwise as the current user. Every wait is bounded (:data:`WAIT_SECONDS`).
:data:`MISSING` says why no server can be started here (None: one can), for the tests to skip with.
"""

import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MISSING", "PostgresServer", "find_initdb", "running_postgres"]

WAIT_SECONDS = 30  # the longest wait for initdb, for the server to start or to stop
PORT_TRIES = 3  # free ports tried (another process may take the one found before the server binds it)
ROLE = "postgres"  # the superuser initdb makes (trust authentication: no password)
# a test's data need not survive a crash: no fsync, no full pages in the WAL, no waiting for the WAL at commit
FAST = ("-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=40 "
        "-c shared_buffers=16MB")
_DATABASE_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def find_initdb() -> Path | None:
    """The ``initdb`` of the newest PostgreSQL in ``/usr/lib/postgresql/*/bin`` (Debian's layout), else the one
    on PATH; None: no PostgreSQL server is installed."""
    found = []
    for path in Path("/usr/lib/postgresql").glob("*/bin/initdb"):
        version = path.parent.parent.name
        if version.isdigit() or re.fullmatch(r"\d+(\.\d+)*", version):
            found.append((tuple(int(p) for p in version.split(".")), path))
    if found:
        return max(found)[1]
    on_path = shutil.which("initdb")
    return None if on_path is None else Path(on_path)


def _missing() -> str | None:
    if find_initdb() is None:
        return ("no PostgreSQL server binaries (initdb) in /usr/lib/postgresql/*/bin or on PATH: install Debian's "
                "postgresql package (make test does)")
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(ROLE)
        except KeyError:
            return "running as root, and PostgreSQL refuses root: no 'postgres' user to run it as"
        if shutil.which("runuser") is None:
            return "running as root, and PostgreSQL refuses root: no runuser to run it as the 'postgres' user"
    return None


#: why no PostgreSQL server can be started here (the tests skip with it), or None
MISSING = _missing()


@dataclass(frozen=True)
class PostgresServer:
    """A running throwaway server: ``url`` is its ``postgres`` database as the ``postgres`` role (an SQLAlchemy
    URL, the psycopg2 driver); :meth:`new_database` makes an empty database beside it."""

    host: str
    port: int
    socket_dir: Path

    @property
    def url(self) -> str:
        return self.url_of(ROLE)

    def url_of(self, database: str) -> str:
        return f"postgresql://{ROLE}@{self.host}:{self.port}/{database}"

    def new_database(self, name: str) -> str:
        """Create the empty database ``name`` (lower case letters, digits, _); its URL."""
        if not _DATABASE_NAME.fullmatch(name):
            raise ValueError(f"new_database: {name!r} is not a plain database name (a-z, 0-9, _; 63 at most)")
        import sqlalchemy as sa

        engine = sa.create_engine(self.url, isolation_level="AUTOCOMMIT")  # CREATE DATABASE: no transaction
        try:
            with engine.connect() as conn:
                conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
        finally:
            engine.dispose()
        return self.url_of(name)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_server_user(cmd: list[str]) -> list[str]:
    """``cmd`` run as the user PostgreSQL runs as (``postgres`` when we are root: it refuses root)."""
    return ["runuser", "-u", ROLE, "--", *cmd] if os.geteuid() == 0 else cmd


def _run(cmd: list[str], what: str, log: Path | None = None) -> None:
    """Run a PostgreSQL command (bounded); a RuntimeError with its output (and the server's log) when it fails."""
    env = {**os.environ, "LC_ALL": "C", "LANG": "C"}
    env.pop("PGDATA", None)
    try:
        done = subprocess.run(_as_server_user(cmd), capture_output=True, text=True, timeout=WAIT_SECONDS + 10,
                              env=env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{what}: no answer in {WAIT_SECONDS + 10} s") from None
    if done.returncode != 0:
        tail = log.read_text(errors="replace")[-2000:] if log is not None and log.exists() else ""
        raise RuntimeError(f"{what} failed ({done.returncode}): {done.stdout[-2000:]}{done.stderr[-2000:]}{tail}")


@contextmanager
def running_postgres() -> Iterator[PostgresServer]:
    """A fresh PostgreSQL server for the block (module docstring); a RuntimeError naming the step that failed.
    Check :data:`MISSING` first."""
    initdb = find_initdb()
    if initdb is None:
        raise RuntimeError(MISSING or "no initdb")
    bin_dir = initdb.parent
    top = Path(tempfile.mkdtemp(prefix="tarocchi-pg-"))
    data, log = top / "data", top / "server.log"
    try:
        if os.geteuid() == 0:
            user = pwd.getpwnam(ROLE)
            os.chown(top, user.pw_uid, user.pw_gid)
        _run([str(initdb), "-D", str(data), "-U", ROLE, "--auth=trust", "--encoding=UTF8", "--locale=C",
              "--no-sync"], "initdb")
        for attempt in range(PORT_TRIES):
            port = _free_port()
            options = f"-c listen_addresses=127.0.0.1 -p {port} -k {top} {FAST}"
            try:
                _run([str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", str(WAIT_SECONDS),
                      "-o", options, "start"], f"pg_ctl start on port {port}", log)
                break
            except RuntimeError:
                if attempt == PORT_TRIES - 1 or "could not bind" not in (log.read_text(errors="replace")
                                                                         if log.exists() else ""):
                    raise
        yield PostgresServer("127.0.0.1", port, top)
    finally:
        try:
            if (data / "postmaster.pid").exists():  # a server runs (or one pg_ctl start gave up waiting for)
                _run([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "-t", str(WAIT_SECONDS),
                      "stop"], "pg_ctl stop", log)
        finally:
            shutil.rmtree(top, ignore_errors=True)
