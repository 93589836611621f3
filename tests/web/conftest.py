"""The games' database the store tests run against: ``db_url`` is an empty SQLite file, and again (marker
``postgres``) an empty database of a throwaway PostgreSQL server (:mod:`tests.support.postgres`, one per test
process, skipped with the reason where none can be started)."""

import uuid
from collections.abc import Iterator

import pytest

from tests.support.postgres import MISSING, PostgresServer, running_postgres


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server for the test process, stopped and removed at its end."""
    if MISSING is not None:
        pytest.skip(MISSING)
    try:
        import psycopg  # noqa: F401  (SQLAlchemy's driver of postgresql:// URLs)
    except ImportError:
        pytest.skip("psycopg is missing (pip install -e '.[dev]': the postgres extra)")
    with running_postgres() as server:
        yield server


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """The URL of a new, empty database of the test process's PostgreSQL server."""
    return postgres_server.new_database(f"games_{uuid.uuid4().hex[:16]}")


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path) -> str:
    """An empty games' database: a new SQLite file, then a new PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'games.db'}"
    return str(request.getfixturevalue("postgres_url"))
