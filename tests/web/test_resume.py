"""A deal of one person against bots outlives its connection (tarocchi_rl.web.resume): the page that reloads takes it
back with the code and token of its first answer and gets every move so far, then plays it to the end (stored once,
finished, under the person who dealt it); a deal nobody takes back within the grace is abandoned and its place given
back; a second connection with the token takes the deal from the first, which is told and closed; wrong tokens are
refused and cost the address its tries; a deal closed for its idle time is not kept; a challenge's deal comes back
with its challenge."""

import time

import pytest
from starlette.websockets import WebSocketDisconnect

from tarocchi_rl.web.app import ServerConfig, create_app
from tarocchi_rl.web.resume import TAKEN_CLOSE
from tarocchi_rl.web.shared import GUESSES_BURST
from tarocchi_rl.web.store import open_store
from tests.support.web_client import LocalClient

GRACE = 0.4  # seconds a deal waits for its person here
WAIT = 30.0  # seconds a condition may take on a busy machine


def server(tmp_path, **kw):
    return create_app(ServerConfig(warmup=False, seat_grace=GRACE, db=f"sqlite:///{tmp_path / 'g.db'}", **kw))


def start(ws, seed=5):
    ws.send_json({"type": "start", "variant": "mineo", "seats": ["human", "heuristic", "heuristic", "heuristic"],
                  "seed": seed})
    first = ws.receive_json()
    assert first["type"] == "state" and set(first["resume"]) == {"code", "token"}, first
    return first


def act(ws, msg):
    ws.send_json({"type": "act", "action": msg["table"]["legal"][0]["action"]})
    out = ws.receive_json()
    assert out["type"] in ("state", "over"), out
    return out


def wait_until(condition) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.02)


def test_a_reloaded_page_takes_its_deal_back_and_plays_it_to_the_end(tmp_path):
    with LocalClient(server(tmp_path)) as client:
        with client.websocket_connect("/ws") as ws:
            first = start(ws)
            msgs = [first]
            for _ in range(3):
                msgs.append(act(ws, msgs[-1]))
        resume = first["resume"]
        assert client.get("/v1/health").json()["tables"] == 1  # parked: still counted
        with client.websocket_connect("/ws") as ws2:
            ws2.send_json({"type": "resume", **resume, "id": 3})
            back = ws2.receive_json()
            assert back["type"] == "state" and back["resumed"] and back["id"] == 3 and back["practice"] is True
            assert back["moves"] == [m for msg in msgs for m in msg["moves"]]  # every move, as the seat saw it
            assert back["table"] == msgs[-1]["table"] and "resume" not in back
            time.sleep(GRACE * 2)  # past the grace: taken back in time, nothing is abandoned
            msg = back
            while msg["type"] == "state":
                msg = act(ws2, msg)
        assert client.get("/v1/health").json()["tables"] == 0
        with client.websocket_connect("/ws") as ws3:  # a finished deal cannot be taken back
            ws3.send_json({"type": "resume", **resume})
            assert "no deal to take back has the code" in ws3.receive_json()["error"]
    store = open_store(f"sqlite:///{tmp_path / 'g.db'}")
    assert store.counts()["abandoned"] == 0 and store.counts()["finished"] == 1
    (game,) = list(store.finished_games(practice=True))
    assert game["record"] == msg["record"]
    assert [s["kind"] for s in game["seats"]] == ["person", "bot", "bot", "bot"]
    store.close()


def test_a_deal_nobody_takes_back_is_abandoned_after_the_grace(tmp_path):
    with LocalClient(server(tmp_path)) as client:
        with client.websocket_connect("/ws") as ws:
            resume = start(ws)["resume"]
        wait_until(lambda: client.get("/v1/health").json()["tables"] == 0)
        with client.websocket_connect("/ws") as ws2:
            ws2.send_json({"type": "resume", **resume})
            assert "no deal to take back has the code" in ws2.receive_json()["error"]
    store = open_store(f"sqlite:///{tmp_path / 'g.db'}")
    assert store.counts()["abandoned"] == 1
    store.close()


def test_another_connection_takes_the_deal_and_the_first_is_told(tmp_path):
    with LocalClient(server(tmp_path)) as client:
        first_cm = client.websocket_connect("/ws")
        ws = first_cm.__enter__()
        first = start(ws)
        with client.websocket_connect("/ws") as ws2:
            ws2.send_json({"type": "resume", **first["resume"]})
            back = ws2.receive_json()
            assert back["type"] == "state" and back["moves"] == first["moves"]
            told = ws.receive_json()
            assert told["fatal"] and told["taken"] and "another" in told["error"]
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_json()
            assert closed.value.code == TAKEN_CLOSE
            first_cm.__exit__(None, None, None)  # the first page's connection ends ...
            wait_until(lambda: client.get("/v1/health").json()["tables"] == 1)  # ... the deal counted once, ws2's
            assert act(ws2, back)["type"] in ("state", "over")
            ws2.send_json({"type": "resume", **first["resume"]})
            assert "you play the deal" in ws2.receive_json()["error"]
        wait_until(lambda: client.get("/v1/health").json()["tables"] == 0)  # parked, then abandoned


def test_wrong_codes_and_tokens_are_refused_and_cost_tries(tmp_path):
    with LocalClient(server(tmp_path)) as client:
        with client.websocket_connect("/ws") as ws, client.websocket_connect("/ws") as x:
            resume = start(ws)["resume"]
            wrong = resume["token"][:-1] + ("y" if resume["token"].endswith("x") else "x")  # one in 64 ends in x
            x.send_json({"type": "resume", "code": resume["code"], "token": wrong})
            assert x.receive_json()["error"] == f"wrong token for the deal {resume['code']}"
            x.send_json({"type": "resume", "code": resume["code"], "token": ["not", "a", "token"]})
            assert "wrong token" in x.receive_json()["error"]
            x.send_json({"type": "resume", "code": "O0I1", "token": resume["token"]})
            assert "code: expected 8 characters" in x.receive_json()["error"]
            for _ in range(GUESSES_BURST - 3):
                x.send_json({"type": "resume", "code": resume["code"], "token": "nope"})
                assert "wrong token" in x.receive_json()["error"]
            x.send_json({"type": "resume", **resume})  # the right token, but no tries left
            assert "too many wrong" in x.receive_json()["error"]
            x.send_json({"type": "resume", **resume, "seat": 0})
            assert "unknown field 'seat'" in x.receive_json()["error"]
            ws.send_json({"type": "ping"})
            assert ws.receive_json()["type"] == "pong"  # the deal stayed where it was


def test_an_idle_deal_is_closed_not_kept(tmp_path):
    with LocalClient(server(tmp_path, idle_timeout=0.3)) as client:
        with client.websocket_connect("/ws") as ws:
            resume = start(ws)["resume"]
            assert "idle" in ws.receive_json()["error"]
        assert client.get("/v1/health").json()["tables"] == 0
        with client.websocket_connect("/ws") as ws2:
            ws2.send_json({"type": "resume", **resume})
            assert "no deal to take back" in ws2.receive_json()["error"]


def test_a_challenge_deal_comes_back_with_its_challenge(tmp_path):
    with LocalClient(server(tmp_path)) as client:
        name = client.get("/v1/challenges").json()["challenges"][0]["name"]
        with client.websocket_connect("/ws") as ws:
            ws.send_json({"type": "challenge", "name": name, "deal": 0})
            first = ws.receive_json()
            assert first["type"] == "state" and first["challenge"]["name"] == name, first
        with client.websocket_connect("/ws") as ws2:
            ws2.send_json({"type": "resume", **first["resume"]})
            back = ws2.receive_json()
            assert back["type"] == "state" and back["challenge"]["name"] == name and back["challenge"]["deal"] == 0
            assert back["practice"] is False and back["table"] == first["table"]


def test_a_deal_taken_back_from_another_address_counts_against_its_tables(tmp_path):
    """A parked deal moves to the address that takes it back: refused there when that address already holds its
    most tables, unless the connection's own deal is the one it replaces."""
    app = create_app(ServerConfig(warmup=False, seat_grace=WAIT, max_tables_per_client=1,
                                  db=f"sqlite:///{tmp_path / 'g.db'}"))
    with LocalClient(app) as client:
        with client.websocket_connect("/ws") as ws:
            parked = start(ws)["resume"]  # address "testclient": its deal parked when the page closes
        client._transport.client = ("127.0.0.9", 50000)  # the next connections come from another address
        with client.websocket_connect("/ws") as ws2, client.websocket_connect("/ws") as ws3:
            start(ws2, seed=6)  # the other address's one table
            ws3.send_json({"type": "resume", **parked})
            refused = ws3.receive_json()
            assert refused["type"] == "error" and "already holds 1 tables" in refused["error"], refused
            ws2.send_json({"type": "resume", **parked})  # in the place of ws2's own deal: allowed
            back = ws2.receive_json()
            assert back["type"] == "state" and back["resumed"] is True, back
            assert client.get("/v1/health").json()["tables"] == 1
