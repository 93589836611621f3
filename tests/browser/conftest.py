"""The fixtures of the browser tests (the server, the browser, a page): :mod:`tests.support.browser`."""

from tests.support.browser import browser, games_db, server, web  # noqa: F401 (fixtures)
