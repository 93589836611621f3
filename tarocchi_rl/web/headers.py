"""Security headers on every HTTP response of ``tarocchi-rl serve`` (an ASGI middleware, the outermost).

The page (``static/index.html``: scripts and a style sheet of its own, no inline script, style or event handler,
no other site's resource; its icon an empty ``data:`` image, so that browsers do not ask for ``/favicon.ico``)
gets a Content-Security-Policy that allows only this server's own files and its own ``/ws`` and API (``'self'``,
which matches ``ws:``/``wss:`` to the same host in CSP 3), and forbids framing (``frame-ancestors 'none'``, and
``X-Frame-Options: DENY`` for browsers without CSP 3): another site cannot frame ``/?table=CODE``, which joins a
table by itself. Every other response (the API's JSON, the static files, errors) gets ``default-src 'none'`` (a
response opened as a document runs nothing) with the same framing ban. All of them get ``Referrer-Policy:
no-referrer`` (a table's code in the URL is never sent to another site) and ``X-Content-Type-Options: nosniff``
(a response is only what its Content-Type says).
"""

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["API_CSP", "COMMON", "PAGE_CSP", "SecurityHeaders"]

PAGE_CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
COMMON: list[tuple[bytes, bytes]] = [(b"x-frame-options", b"DENY"), (b"referrer-policy", b"no-referrer"),
                                     (b"x-content-type-options", b"nosniff")]
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Any]]
Send = Callable[[Any], Awaitable[None]]


class SecurityHeaders:
    """Adds the headers of the module docstring to every HTTP response (an HTML one gets :data:`PAGE_CSP`, any
    other :data:`API_CSP`); a header the app set itself is kept."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {k.lower() for k, _ in headers}
                html = any(k.lower() == b"content-type" and v.lower().startswith(b"text/html") for k, v in headers)
                csp = PAGE_CSP if html else API_CSP
                headers += [(k, v) for k, v in [(b"content-security-policy", csp.encode()), *COMMON]
                            if k not in present]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)
