"""Run the app under uvicorn (``tarocchi-rl serve``): one process, or ``workers`` processes sharing the port (each
builds the app from :data:`tarocchi_rl.web.app.CONFIG_ENV`; a table lives in the process of its connection)."""

import os
from typing import Any

from .app import CONFIG_ENV, MAX_WS_MESSAGE, ServerConfig, config_env, create_app


def run_server(config: ServerConfig, host: str = "127.0.0.1", port: int = 8000, workers: int = 1,
               log_level: str = "info", access_log: bool = False) -> None:
    """Serve until interrupted; a bad configuration is a ValueError before anything listens."""
    import uvicorn

    if workers < 1:
        raise ValueError("--workers must be >= 1")
    if not 0 <= port < 65536:
        raise ValueError(f"--port must be 0..65535, got {port}")
    # no access log by default: a line per request costs about as much as answering a cached bot request
    kw: dict[str, Any] = {"host": host, "port": port, "log_level": log_level, "ws_max_size": 4 * MAX_WS_MESSAGE,
                          "access_log": access_log}
    if workers == 1:
        uvicorn.run(create_app(config), **kw)
        return
    create_app(ServerConfig(**{**config.__dict__, "warmup": False}))  # check the configuration here, once
    os.environ[CONFIG_ENV] = config_env(config)
    uvicorn.run("tarocchi_rl.web.app:app_from_env", factory=True, workers=workers, **kw)
