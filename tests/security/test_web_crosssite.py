"""Other sites and hostile bodies against ``tarocchi-rl serve`` (issue 30, item 6's web bodies and the
cross-site requests of item 4), through Starlette's TestClient:

- ``/ws`` refuses a page of another site (its ``Origin``), takes the server's own, the ``--allow-origin`` ones and
  a client that sends none;
- a POST whose body is not declared ``application/json`` (a cross-site form: ``text/plain``, urlencoded) is a 415;
- a ``Host`` the server does not serve (DNS rebinding) is a 400, HTTP and WebSocket alike;
- 100,000 nested brackets and a 5,000-digit integer in ``/v1/act``, ``/v1/replay`` and ``/ws`` bodies are a clean
  400 or error frame with a one-line message, nothing logged with a traceback, the WebSocket still open.
"""

import json
import logging

import pytest
from starlette.testclient import TestClient, WebSocketDenialResponse
from starlette.websockets import WebSocketDisconnect

from tarocchi_rl import cli
from tarocchi_rl.bounded import MAX_DEPTH, MAX_INT_DIGITS
from tarocchi_rl.game import make
from tarocchi_rl.web.app import LOOPBACK_HOSTS, MAX_WS_MESSAGE, ORIGIN_CLOSE, ServerConfig, create_app, hosts_for
from tests.support.web_client import LOCAL, LocalClient

ALLOWED_ORIGIN = "https://tables.example.org"
NESTED = "[" * 100_000 + "]" * 100_000
NESTED_SHORT = "[" * 30_000 + "]" * 30_000  # under the WebSocket message limit: its depth is what is refused
HUGE_INT = "9" * 5_000


@pytest.fixture(scope="module")
def client():
    with LocalClient(create_app(ServerConfig(allowed_origins=[ALLOWED_ORIGIN + "/"], warmup=False))) as c:
        yield c


def act_request() -> dict:
    return {"type": "act", "variant": "french3", "seat": 0, "hand": make("french3").new_state(1).hand(0),
            "history": [], "decision": "bid"}


def hostile_bodies() -> dict[str, str]:
    req = json.dumps(act_request())
    return {"nested": NESTED, "nested in a request": req[:-1] + f', "id": {NESTED}}}',
            "huge integer": HUGE_INT, "huge integer in a request": req[:-1] + f', "seat": {HUGE_INT}}}',
            "huge negative integer": f'{{"type": "act", "id": -{HUGE_INT}}}'}


def no_traceback(caplog) -> None:
    bad = [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR or "Traceback" in r.getMessage()]
    assert not bad, [r.getMessage() for r in bad]


# -- Origin on /ws --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("origin", ["http://evil.example", "https://127.0.0.1:8000.evil.example", "null",
                                    "http://127.0.0.1:8001", "file://", "http://localhost:8000",
                                    "https://tables.example.org.evil.example"])
def test_a_page_of_another_site_cannot_open_a_table(client, origin):
    with pytest.raises(WebSocketDisconnect) as refused:
        with client.websocket_connect("/ws", headers={"origin": origin}):
            pass
    assert refused.value.code == ORIGIN_CLOSE
    assert client.get("/v1/health").json()["tables"] == 0


@pytest.mark.parametrize("origin", [None, "http://127.0.0.1:8000", "HTTP://127.0.0.1:8000/", ALLOWED_ORIGIN,
                                    "https://TABLES.example.org"])
def test_the_servers_own_pages_allowed_origins_and_non_browsers_play(client, origin):
    headers = {} if origin is None else {"origin": origin}
    with client.websocket_connect("/ws", headers=headers) as ws:
        ws.send_json({"type": "ping", "id": 1})
        assert ws.receive_json() == {"type": "pong", "id": 1}


# -- Content-Type on POST ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["/v1/act", "/v1/replay"])
@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
                                          None, "application/jsonx", "text/json"])
def test_a_post_not_declared_json_is_refused(client, path, content_type):
    body = json.dumps(act_request()).encode()
    headers = {} if content_type is None else {"content-type": content_type}
    r = client.post(path, content=body, headers=headers)
    assert r.status_code == 415 and "application/json" in r.json()["error"], r.text


def test_json_with_a_charset_is_taken(client):
    r = client.post("/v1/act", content=json.dumps(act_request()).encode(),
                    headers={"content-type": "Application/JSON; charset=utf-8"})
    assert r.status_code == 200 and r.json()["type"] == "action"


# -- Host -------------------------------------------------------------------------------------------------------
def test_a_host_the_server_does_not_serve_is_refused(client):
    evil = TestClient(client.app, base_url="http://rebound.evil.example:8000")
    for r in (evil.get("/v1/health"), evil.get("/"), evil.post("/v1/act", json=act_request())):
        assert r.status_code == 400 and "host" in r.text.lower()
    with pytest.raises(WebSocketDenialResponse):
        with evil.websocket_connect("ws://rebound.evil.example:8000/ws"):
            pass
    for host in LOOPBACK_HOSTS:
        assert TestClient(client.app, base_url=f"http://{host}:8000").get("/v1/health").status_code == 200
    assert client.get("/v1/health").status_code == 200


def test_the_hosts_a_bound_server_serves():
    assert set(hosts_for("127.0.0.1", [])) == set(LOOPBACK_HOSTS)
    assert set(hosts_for("localhost", ["box.lan"])) == {*LOOPBACK_HOSTS, "box.lan"}
    assert hosts_for("192.168.1.5", []) == ["192.168.1.5"]  # not loopback: no localhost
    assert set(hosts_for("0.0.0.0", ["Box.LAN"])) == {*LOOPBACK_HOSTS, "box.lan"}  # a wildcard: names must be given
    assert "[::1]" in hosts_for("::1", [])
    app = create_app(ServerConfig(allowed_hosts=hosts_for("192.168.1.5", []), warmup=False))
    assert TestClient(app, base_url="http://192.168.1.5:8000").get("/v1/health").status_code == 200
    assert TestClient(app, base_url=LOCAL).get("/v1/health").status_code == 400


def test_serve_options_allow_hosts_and_origins(monkeypatch):
    import uvicorn

    calls = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.append(app))
    assert cli.main(["serve", "--allow-origin", ALLOWED_ORIGIN, "--allow-origin", "http://a.example",
                     "--allow-host", "box.lan"]) == 0
    config = calls[-1].state.server.config
    assert config.allowed_origins == [ALLOWED_ORIGIN, "http://a.example"]
    assert set(config.allowed_hosts) == {"box.lan", *LOOPBACK_HOSTS}
    assert cli.main(["serve", "--host", "10.1.2.3", "--public"]) == 0  # beyond loopback: --public
    assert calls[-1].state.server.config.allowed_hosts == ["10.1.2.3"]


# -- hostile bodies -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["/v1/act", "/v1/replay"])
@pytest.mark.parametrize("name", list(hostile_bodies()))
def test_hostile_bodies_are_a_clean_400(client, caplog, path, name):
    body = hostile_bodies()[name]
    with caplog.at_level(logging.DEBUG):
        r = client.post(path, content=body.encode(), headers={"content-type": "application/json"})
    assert r.status_code == 400, r.text
    message = r.json()["error"]
    assert "\n" not in message and len(message) < 300
    expected = ("nested", str(MAX_DEPTH)) if "nested" in name else ("digits", str(MAX_INT_DIGITS))
    assert all(word in message for word in expected), message
    no_traceback(caplog)


@pytest.mark.parametrize("name", ["nested short", *hostile_bodies()])
def test_hostile_ws_messages_are_error_frames_and_the_table_serves_on(client, caplog, name):
    text = NESTED_SHORT if name == "nested short" else hostile_bodies()[name]
    with caplog.at_level(logging.DEBUG), client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "start", "variant": "french3", "seats": ["human", "heuristic", "heuristic"]})
        first = ws.receive_json()
        assert first["type"] == "state"
        ws.send_text(text)
        err = ws.receive_json()
        assert err["type"] == "error" and not err.get("fatal") and "\n" not in err["error"]
        if len(text) > MAX_WS_MESSAGE:
            assert "longer than" in err["error"]
        else:
            expected = ("nested", str(MAX_DEPTH)) if "nested" in name else ("digits", str(MAX_INT_DIGITS))
            assert all(word in err["error"] for word in expected), err
        ws.send_json({"type": "act", "action": first["table"]["legal"][0]["action"]})  # the table goes on
        assert ws.receive_json()["type"] in ("state", "over")
    no_traceback(caplog)
