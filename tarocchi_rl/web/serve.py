"""Run the app under uvicorn (``tarocchi-rl serve``): one process, or ``workers`` processes sharing the port (each
builds the app from :data:`tarocchi_rl.web.app.CONFIG_ENV`; a table lives in the process of its connection)."""

import contextlib
import dataclasses
import os
import sys
import threading
from collections.abc import Iterator
from typing import Any

from starlette.applications import Starlette

from . import limits
from .app import CONFIG_ENV, MAX_WS_MESSAGE, ServerConfig, config_env, create_app, hosts_for, print_warmup_progress
from .shared import SINGLE_PROCESS
from .store import new_sqlite_file, prepare_database

_OPEN_FILES_MARGIN = 256  # files a server holds besides its connections (the database, pipes, the static files)


def run_server(config: ServerConfig, host: str = "127.0.0.1", port: int = 8000, workers: int = 1,
               log_level: str = "info", access_log: bool = False, public: bool = False) -> None:
    """Serve until interrupted; a bad configuration is a ValueError before anything listens. A host other than
    loopback needs ``public`` (``--public``), and then what is exposed (routes, bots, limits) is printed."""
    import uvicorn

    limits.check_exposure(host, public)
    if workers < 1:
        raise ValueError("--workers must be >= 1")
    if not 0 <= port < 65536:
        raise ValueError(f"--port must be 0..65535, got {port}")
    config = dataclasses.replace(config, allowed_hosts=hosts_for(host, config.allowed_hosts),  # DNS rebinding
                                 processes=workers)  # more than one: open / join refused (shared.SINGLE_PROCESS)
    if config.db is not None:
        _prepare_games_database(config.db, workers)
    # no access log by default: a line per request costs about as much as answering a cached bot request
    kw: dict[str, Any] = {"host": host, "port": port, "log_level": log_level, "ws_max_size": 4 * MAX_WS_MESSAGE,
                          "access_log": access_log, "limit_concurrency": config.max_connections,
                          "timeout_keep_alive": config.keep_alive_timeout, "http": limits.CAPPED_PROTOCOL,
                          "timeout_graceful_shutdown": limits.SHUTDOWN_GRACE_SECONDS,  # then the requests are cancelled
                          "ws": limits.FAIR_WS_PROTOCOL or "auto"}
    os.environ[limits.CONNECTIONS_ENV] = str(config.max_connections_per_client)  # read by every worker's protocol
    os.environ[limits.WAITING_ENV] = limits.Waiting(config.head_timeout, config.max_waiting,
                                                    config.max_waiting_per_client).env()
    raise_open_files(config.max_connections + config.max_waiting)
    sys.setswitchinterval(limits.GIL_SWITCH_SECONDS)  # the event loop gets the GIL back soon from a queue's thread
    if workers == 1:
        if config.warmup:
            print_warmup_progress()
        app = create_app(config)
        if public:
            _print_exposure(app, host, port, workers)
        with _exit_in_bounded_time():
            uvicorn.run(app, **kw)
        return
    app = create_app(ServerConfig(**{**config.__dict__, "warmup": False}))  # check the configuration here, once
    if public:
        _print_exposure(app, host, port, workers)
    print(SINGLE_PROCESS.format(workers=workers), file=sys.stderr, flush=True)
    os.environ[CONFIG_ENV] = config_env(config)
    with _exit_in_bounded_time():
        uvicorn.run("tarocchi_rl.web.app:app_from_env", factory=True, workers=workers, **kw)


@contextlib.contextmanager
def _exit_in_bounded_time(seconds: float = limits.SHUTDOWN_SECONDS) -> Iterator[None]:
    """Around uvicorn: stopped by Ctrl-C (SIGINT: Python's exit then waits for every thread), the process ends
    within ``seconds`` whatever a thread does (a bot's search, a challenge's deals played offline); the app's
    shutdown has killed the external programs already. (Stopped by SIGTERM, uvicorn ends the process with the
    signal once the app has shut down: no thread is waited for.)"""
    try:
        yield
    except KeyboardInterrupt:
        def exit_now() -> None:
            print(f"serve: a thread was still busy {seconds:g} s after the server stopped: exiting without it",
                  file=sys.stderr, flush=True)
            os._exit(130)

        timer = threading.Timer(seconds, exit_now)
        timer.daemon = True
        timer.start()
        raise


def raise_open_files(needed: int) -> None:
    """The soft limit on open files raised to the hard one (Linux, macOS) when it is below ``needed`` plus a margin
    (the database, the worker processes' pipes): every connection the limits allow is a file. A hard limit below
    that is only said (the kernel refuses connections beyond it, and the limits then bind earlier)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = needed + _OPEN_FILES_MARGIN
    if soft != resource.RLIM_INFINITY and soft < want:
        new = want if hard == resource.RLIM_INFINITY else min(hard, max(want, soft))
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
        except (ValueError, OSError):
            new = soft
        if new < want:
            print(f"note: this process may open {new} files, fewer than the {want} the connection limits allow "
                  "(ulimit -n): connections beyond it are refused by the kernel", file=sys.stderr, flush=True)


def _print_exposure(app: Starlette, host: str, port: int, workers: int) -> None:
    """What a ``--public`` server exposes, before it listens: where, its routes, its bots, its limits."""
    server = app.state.server
    routes = [str(getattr(r, "path", r)) for r in app.routes]
    print(f"serving publicly on {host}:{port} ({workers} process{'es' if workers > 1 else ''}, the limits per "
          f"process; clients by address):", flush=True)
    for line in limits.describe(server.config, routes, server.catalogue.names, {k: q.limit for k, q in
                                                                          server.queues.items()}):
        print("  " + line, flush=True)


def _prepare_games_database(url: str, workers: int) -> None:
    """Before anything listens: the games' database checked (a StoreError, one line, when it cannot be used),
    upgraded, and the games a killed server left in progress marked abandoned (here once, before the worker
    processes start; a new SQLite file is left for the app's startup to make, so that nothing is written before
    the server runs)."""
    if workers == 1 and new_sqlite_file(url):
        return
    abandoned = prepare_database(url)
    if abandoned:
        print(f"games database: {abandoned} game{'s' if abandoned > 1 else ''} left in progress by an earlier "
              "server marked abandoned", file=sys.stderr, flush=True)
