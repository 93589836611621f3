"""Security headers on every response of ``tarocchi-rl serve`` (issue 52: another site could frame ``/?table=CODE``,
which joins a table by itself): the page's Content-Security-Policy allows only the server's own scripts, styles
and connections and no framing; the API, the static files and the errors forbid framing too; every response has
``X-Frame-Options``, ``Referrer-Policy`` and ``nosniff``. The page needs nothing the policy forbids (no inline
script, style or event handler; no ``eval``): checked here in its files, and in Chromium by tests/browser."""

import re

import pytest

from tarocchi_rl.web.app import STATIC, ServerConfig, create_app
from tests.support.web_client import LocalClient


@pytest.fixture(scope="module")
def client():
    with LocalClient(create_app(ServerConfig(warmup=False))) as c:
        yield c


def policy(response) -> dict[str, str]:
    """The Content-Security-Policy's directives, by name."""
    parts = [p.strip().split(None, 1) for p in response.headers["content-security-policy"].split(";") if p.strip()]
    return {p[0]: p[1] if len(p) > 1 else "" for p in parts}


def assert_common(response) -> None:
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["referrer-policy"] == "no-referrer"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert policy(response)["frame-ancestors"] == "'none'"


def test_the_page_may_not_be_framed_and_runs_only_its_own_scripts(client):
    for path in ("/", "/?table=ABCDEFGH"):
        r = client.get(path)
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
        assert_common(r)
        csp = policy(r)
        assert csp["script-src"] == "'self'" and csp["style-src"] == "'self'" and csp["default-src"] == "'self'"
        assert csp["img-src"] == "'self' data:"  # the icon: an empty data: image
        assert csp["connect-src"] == "'self'" and csp["object-src"] == "'none'" and csp["base-uri"] == "'none'"
        assert "unsafe" not in r.headers["content-security-policy"]


@pytest.mark.parametrize("path", ["/static/app.js", "/static/style.css", "/v1/health", "/v1/variants",
                                  "/openapi.json", "/v1/no-such-route", "/static/no-such-file.js"])
def test_every_other_response_has_them_too(client, path):
    r = client.get(path)
    assert r.status_code in (200, 404)
    assert_common(r)
    assert policy(r)["default-src"] == "'none'"  # JSON or a file opened as a document runs nothing


def test_refusals_have_them_too(client):
    r = client.post("/v1/act", content=b"{}", headers={"content-type": "text/plain"})
    assert r.status_code == 415
    assert_common(r)
    r = client.get("/v1/health", headers={"host": "evil.example"})  # a Host the server does not serve
    assert r.status_code == 400
    assert_common(r)


def test_the_page_needs_nothing_its_policy_forbids():
    html = (STATIC / "index.html").read_text()
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html), "an inline script"
    assert "<style" not in html and not re.search(r"\sstyle\s*=", html), "an inline style"
    assert not re.search(r"\son[a-z]+\s*=", html), "an inline event handler"
    for src in re.findall(r"<(?:script|link|img)[^>]*(?:src|href)=\"([^\"]+)\"", html):
        assert src.startswith("/") or src.startswith("data:"), f"{src}: another site's resource"
    for js in STATIC.glob("*.js"):
        text = js.read_text()
        for forbidden in ("eval(", "new Function(", "setAttribute(\"style\"", "javascript:", ".innerHTML"):
            assert forbidden not in text, f"{js.name} uses {forbidden} (blocked by the policy, or unsafe)"
