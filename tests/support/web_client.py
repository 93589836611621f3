"""A Starlette TestClient that addresses the app as a loopback server does (``tarocchi-rl serve`` serves only the
Host names of its ServerConfig.allowed_hosts: the loopback names by default). TestClient's own default host,
``testserver``, is refused, and its WebSockets always use it: here they use :data:`LOCAL` too."""

from typing import Any
from urllib.parse import urljoin

from starlette.testclient import TestClient

LOCAL = "http://127.0.0.1:8000"
LOCAL_WS = "ws://127.0.0.1:8000"


class LocalClient(TestClient):
    """``TestClient(app)`` with the Host ``127.0.0.1:8000`` for HTTP requests and WebSockets alike."""

    def __init__(self, app: Any, **kw: Any) -> None:
        super().__init__(app, base_url=LOCAL, **kw)

    def websocket_connect(self, url: str, *args: Any, **kw: Any) -> Any:
        return super().websocket_connect(urljoin(LOCAL_WS, url), *args, **kw)
