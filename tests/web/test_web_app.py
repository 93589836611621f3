"""`tarocchi-rl serve` (tarocchi_rl.web.app) through Starlette's TestClient: a whole deal of every variant over the
WebSocket against heuristic bots (payoffs as `tarocchi-rl replay` scores the record sent, nothing hidden shown),
illegal and malformed messages, idle and full servers, POST /v1/act as the BotServer answers, /v1/variants,
POST /v1/replay, /openapi.json, and that a client can only name the server's own bots."""

import json
import time

import pytest
from starlette.websockets import WebSocketDisconnect

from tarocchi_rl import cli
from tarocchi_rl.agents.specs import make_agent
from tarocchi_rl.bot import BotServer, Referee
from tarocchi_rl.variants import VARIANTS, get_variant
from tarocchi_rl.web.app import IDLE_CLOSE, WS_MESSAGES, ServerConfig, create_app
from tarocchi_rl.web.bots import shipped_specs
from tests.support.web_client import LocalClient
from tests.support.web_views import check_message

EXTRA = "ismcts:iterations=20,c=0.7"  # a spec with a comma: --agents and --seats split it whole
EXTRA_NAME = "bot1"  # the neutral name of a bare --agents spec (clients never see the spec)
BOT_NAMES = ["random", "heuristic", "ismcts", *shipped_specs(), EXTRA_NAME]  # built in, shipped, --agents


@pytest.fixture(scope="module")
def client():
    with LocalClient(create_app(ServerConfig(agents=[EXTRA], warmup=False))) as c:
        yield c


def start(ws, variant, human=0, seed=1, bot="heuristic", **extra):
    n = get_variant(variant).n_players
    ws.send_json({"type": "start", "variant": variant, "seats": ["human" if k == human else bot for k in range(n)],
                  "seed": seed, **extra})
    return ws.receive_json()


def play_deal(ws, first: dict) -> list[dict]:
    msgs = [first]
    while msgs[-1]["type"] == "state":
        t = msgs[-1]["table"]
        assert t["your_turn"] and len(t["legal"]) >= 1
        ws.send_json({"type": "act", "action": t["legal"][0]["action"]})
        msgs.append(ws.receive_json())
    assert msgs[-1]["type"] == "over", msgs[-1]
    return msgs


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_whole_deal_over_the_websocket(client, variant, tmp_path, capsys):
    human = get_variant(variant).n_players - 1
    with client.websocket_connect("/ws") as ws:
        msgs = play_deal(ws, start(ws, variant, human=human, seed=11))
    over = msgs[-1]
    record = over["record"]
    path = tmp_path / "deal.json"
    path.write_text(json.dumps(record))
    capsys.readouterr()
    assert cli.main(["replay", str(path), "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)
    assert replayed["payoffs"] == over["outcome"]["payoffs"] == record["result"]["payoffs"]
    assert replayed["bonuses"] == over["outcome"]["bonuses"] and over["summary"][1].startswith("payoffs:")
    assert over["seed"] == "11" and over["practice"] and record["practice"] is True
    assert over["table"]["over"] and over["table"]["legal"] == []
    assert all("seed" not in m for m in msgs[:-1])
    for msg in msgs:
        check_message(msg, record, human)
    assert [m["index"] for msg in msgs for m in msg["moves"]] == list(range(len(record["actions"])))


def test_the_seed_deals_what_play_deals(client):
    from tarocchi_rl.game import make

    with client.websocket_connect("/ws") as ws:
        msgs = play_deal(ws, start(ws, "mineo", seed=5))
    assert msgs[-1]["record"]["deal"] == make("mineo").new_state(5).deal()


def test_illegal_moves_are_errors_and_change_nothing(client):
    with client.websocket_connect("/ws") as ws:
        first = start(ws, "french3", seed=2, id="s")
        assert first["type"] == "state" and first["id"] == "s"
        steps = first["table"]["steps"]
        legal = {a["action"] for a in first["table"]["legal"]}
        candidates = ("play:KS", "play:KH", "play:T21", "bid:garde_contre", "discard:KD")
        illegal = next(a for a in candidates if a not in legal)
        for bad in (illegal, "play:XX", 12345, None, ["play:KS"]):
            ws.send_json({"type": "act", "action": bad, "id": 9})
            err = ws.receive_json()
            assert err["type"] == "error" and err["id"] == 9 and not err.get("fatal")
        ws.send_json({"type": "act", "action": illegal})
        assert "illegal action" in ws.receive_json()["error"]
        ws.send_json({"type": "act", "action": first["table"]["legal"][0]["action"]})
        nxt = ws.receive_json()
        assert nxt["moves"][0]["index"] == steps and nxt["moves"][0]["by"] == "human"


def test_malformed_messages_get_errors_and_the_table_serves_on(client):
    with client.websocket_connect("/ws") as ws:
        for text, message in (("not json", "not valid JSON"), ("[1, 2]", "JSON object"), ('{"type": "dance"}', "type:"),
                              ('{"type": "act", "action": "play:KC"}', "no deal in progress"),
                              ('{"type": "ping", "colour": 1}', "unknown field 'colour'"),
                              ("x" * 70000, "longer than"), ('{"type": "act"}', "send start first")):
            ws.send_text(text)
            assert message in ws.receive_json()["error"]
        ws.send_bytes(b'{"type": "ping"}')
        assert "text" in ws.receive_json()["error"]
        bad_starts = [
            ({"variant": "poker"}, "unknown 'poker'"),
            ({"variant": "mineo", "options": {"early_solo": 3}}, "true or false"),
            ({"variant": "piedmont4", "options": {"accuso_points": 10**9}}, "0..99"),
            ({"variant": "mineo", "seats": ["human", "heuristic"]}, "list of 4"),
            ({"variant": "mineo", "seats": ["human", "human", "random", "random"]}, "exactly one"),
            ({"variant": "mineo", "seats": ["random"] * 4}, "exactly one"),
            ({"variant": "mineo", "seats": ["human", "heuristic", "onnx:/etc", "random"]}, "unknown bot"),
            ({"variant": "mineo", "seats": ["human", "heuristic", "ppo:runs/x", "random"]}, "unknown bot"),
            ({"variant": "mineo", "seats": ["human", "heuristic", "ismcts:iterations=9", "random"]}, "unknown bot"),
            ({"variant": "mineo", "seats": ["human", "heuristic", EXTRA, "random"]}, "unknown bot"),
            ({"variant": "mineo", "seats": ["human", 1, 99, "random"]}, f"index 0..{len(BOT_NAMES) - 1}"),
            ({"variant": "mineo", "seats": ["human", "heuristic", {"spec": "x"}, "random"]}, "unknown bot"),
            ({"variant": "mineo", "seed": -1}, "seed"),
            ({"variant": "mineo", "seed": "7x"}, "seed"),
            ({"variant": "mineo", "seed": "9" * 21}, "seed"),
            ({"variant": "mineo", "seed": str(2**63)}, "seed"),
        ]
        for fields, message in bad_starts:
            msg = {"type": "start", "seats": ["human", "heuristic", "heuristic", "heuristic"], **fields}
            ws.send_json(msg)
            err = ws.receive_json()
            assert err["type"] == "error" and message in err["error"], (fields, err)
        ws.send_json({"type": "ping", "id": 3})
        assert ws.receive_json() == {"type": "pong", "id": 3}
        assert start(ws, "piedmont4")["type"] == "state"


def test_bots_by_index_and_the_extra_agent_play(client):
    names = [b["name"] for b in client.get("/v1/bots").json()["bots"]]
    assert names == BOT_NAMES and len(shipped_specs()) == 14  # bot:VARIANT and strong:VARIANT, seven each
    with client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "start", "variant": "french3", "seats": [0, "human", EXTRA_NAME], "seed": "4"})
        msgs = play_deal(ws, ws.receive_json())
    assert msgs[0]["table"]["seats"] == [{"seat": 0, "player": "random"}, {"seat": 1, "player": "human"},
                                         {"seat": 2, "player": EXTRA_NAME}]
    assert msgs[-1]["seed"] == "4"


def test_an_idle_table_is_closed_and_a_full_server_refuses():
    with LocalClient(create_app(ServerConfig(idle_timeout=0.3, max_tables=1, warmup=False))) as c:
        with c.websocket_connect("/ws") as ws:
            assert start(ws, "french3")["type"] == "state"
            with c.websocket_connect("/ws") as other:
                full = other.receive_json()
                assert full["fatal"] and "full" in full["error"]
                with pytest.raises(WebSocketDisconnect) as closed:
                    other.receive_json()
                assert closed.value.code == 1013
            time.sleep(0.5)
            idle = ws.receive_json()
            assert idle["fatal"] and "idle" in idle["error"]
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_json()
            assert closed.value.code == IDLE_CLOSE
        assert c.get("/v1/health").json() == {"status": "ok", "tables": 0}


def act_requests(variant: str, seed: int, every: int = 9) -> list[dict]:
    """Act requests of a referee deal (every ``every``-th decision) played by the heuristic."""
    ref, bot = Referee(), BotServer("heuristic", make_agent)
    msg = ref.handle(json.dumps({"type": "new", "variant": variant, "seed": seed}))
    out, k = [], 0
    while msg["type"] == "turn":
        if k % every == 0:
            out.append(msg["request"])
        ans = bot.handle(json.dumps(msg["request"]))
        msg = ref.handle(json.dumps({"type": "apply", "action": ans["action"]}))
        k += 1
    return out


@pytest.mark.parametrize("variant", VARIANTS)
def test_act_answers_as_the_bot_server(client, variant):
    reference = BotServer("heuristic", make_agent)
    for req in act_requests(variant, 3):
        r = client.post("/v1/act", json=req)
        assert r.status_code == 200 and r.json() == reference.handle(json.dumps(req))
    rnd = BotServer("random", make_agent)
    req = act_requests(variant, 4)[1]
    assert client.post("/v1/act?agent=random", json=req).json() == rnd.handle(json.dumps(req))


def test_the_strong_bot_plays_a_table_and_answers_act(client):
    """strong:VARIANT (the shipped network guiding a search) is built in: a seat at a table of its variant, and
    ``POST /v1/act?agent=strong:VARIANT`` answers legal moves; it plays its own variant only."""
    with client.websocket_connect("/ws") as ws:
        msgs = play_deal(ws, start(ws, "french3", human=1, seed=7, bot="strong:french3"))
    assert msgs[0]["table"]["seats"][0] == {"seat": 0, "player": "strong:french3"}
    assert msgs[-1]["type"] == "over"
    hello = client.post("/v1/act?agent=strong:french3", json={"type": "hello", "id": 1}).json()
    assert hello["variants"] == ["french3"] and "search" in hello["capabilities"], hello
    ref, others = Referee(), BotServer("heuristic", make_agent)  # a referee deal, seat 0 asked over /v1/act
    msg, asked = ref.handle(json.dumps({"type": "new", "variant": "french3", "seed": 2})), 0
    while msg["type"] == "turn":
        if msg["seat"] == 0:
            ans, asked = client.post("/v1/act?agent=strong:french3", json=msg["request"]).json(), asked + 1
            assert ans["type"] == "action", ans
        else:
            ans = others.handle(json.dumps(msg["request"]))
        msg = ref.handle(json.dumps({"type": "apply", "action": ans["action"]}))  # an illegal one: an error
    assert msg["type"] == "over" and asked > 5, msg
    with client.websocket_connect("/ws") as ws:
        refused = start(ws, "mineo", bot="strong:french3")
    assert refused["type"] == "error" and "plays french3, not mineo" in refused["error"], refused


def test_act_errors(client):
    req = act_requests("mineo", 1)[1]
    reference = BotServer("heuristic", make_agent)
    for bad in ({**req, "decision": "nonsense"}, {**req, "hand": ["T1"]}, {**req, "want": ["probabilities"]},
                {**req, "colour": 1}, [1, 2], "just a string"):
        r = client.post("/v1/act", json=bad)
        assert r.status_code == 400 and r.json() == reference.handle(json.dumps(bad))
    hello = client.post("/v1/act?agent=ismcts", json={"type": "hello", "id": 1}).json()
    assert hello["type"] == "hello" and "search" in hello["capabilities"] and hello["id"] == 1
    for url, body, status, message in (
        ("/v1/act", {"type": "quit"}, 400, "act (and hello)"),
        ("/v1/act?agent=onnx:/etc/passwd", req, 400, "unknown bot"),
        ("/v1/act?agent=ppo:runs/x", req, 400, "unknown bot"),
        ("/v1/act?agent=ismcts:iterations=5", req, 400, "unknown bot"),
        ("/v1/act?agent=1", req, 400, "unknown bot"),
        ("/v1/act", {**req, "options": {"early_solo": 1}}, 400, "true or false"),
    ):
        r = client.post(url, json=body)
        assert r.status_code == status and message in r.json()["error"], (url, r.json())
    json_type = {"content-type": "application/json"}
    assert client.post("/v1/act", content=b"{not json", headers=json_type).status_code == 400
    assert client.post("/v1/act", content=b"\xff\xfe", headers=json_type).json()["error"] == \
        "the body is not UTF-8 text"
    big = client.post("/v1/act", content=b" " * (1 << 20) + b"{}", headers=json_type)
    assert big.status_code == 413 and "larger than" in big.json()["error"]
    assert client.get("/v1/act").status_code == 405 and "error" in client.get("/v1/act").json()
    assert client.get("/v1/nothing").json() == {"error": "Not Found"}
    assert client.post(f"/v1/act?agent={EXTRA_NAME}", json=req).json()["type"] == "action"
    assert client.post(f"/v1/act?agent={EXTRA}", json=req).status_code == 400  # a spec is not a name


def test_variants_endpoint(client):
    out = client.get("/v1/variants").json()
    assert [v["name"] for v in out["variants"]] == list(VARIANTS)
    mineo = out["variants"][0]
    assert mineo["players"] == 4 and mineo["options"] == [{"name": "early_solo", "type": "boolean", "default": True}]
    assert mineo["actions"][0] == "play:T0" and len(mineo["actions"]) == get_variant("mineo").n_actions
    p3 = out["variants"][1]["options"]
    assert {"name": "honour_5", "type": "string", "default": "mondo", "choices": ["mondo", "angelo"]} in p3


def test_replay_endpoint(client):
    with client.websocket_connect("/ws") as ws:
        record = play_deal(ws, start(ws, "piedmont4", seed=8))[-1]["record"]
    ok = client.post("/v1/replay", json=record)
    assert ok.status_code == 200
    body = ok.json()
    assert body["valid"] and body["outcome"]["payoffs"] == record["result"]["payoffs"] and "steps" not in body
    assert record.pop("practice") is True  # a client's seed: a practice deal (the record says so)
    assert body["record"] == record and body["actions"] == len(record["actions"])
    steps = client.post("/v1/replay?steps=true", json=record).json()["steps"]
    assert len(steps) == len(record["actions"]) + 1 and all("hands" in s["table"] for s in steps)
    line = json.dumps(record).encode()  # a games.jsonl line: the same object
    json_type = {"content-type": "application/json; charset=utf-8"}
    assert client.post("/v1/replay", content=line, headers=json_type).status_code == 200
    bad_action = {**record, "actions": record["actions"][:5] + ["play:ZZ"] + record["actions"][6:]}
    r = client.post("/v1/replay", json=bad_action)
    assert r.status_code == 400 and r.json()["action_index"] == 5 and "action 5" in r.json()["error"]
    for bad, message in (({**record, "result": {"payoffs": [1, 2, 3, 4]}}, "disagree"),
                         ({**record, "format": "x"}, "format"), ({**record, "actions": record["actions"][:3]},
                                                                 "before the deal is over"),
                         ({**record, "options": {"accuso_points": 500}}, "0..99"),
                         ("/etc/passwd", "JSON object"), ([record], "JSON object")):
        r = client.post("/v1/replay", json=bad)
        assert r.status_code == 400 and message in r.json()["error"], (message, r.json())
    assert client.post("/v1/replay?steps=maybe", json=record).status_code == 400
    assert client.post("/v1/replay", content=b"{", headers=json_type).status_code == 400
    assert client.post("/v1/replay", content=b"[" + b"0," * (1 << 19) + b"0]", headers=json_type).status_code == 413


def test_openapi_lists_every_route(client):
    doc = client.get("/openapi.json").json()
    assert doc["openapi"].startswith("3.")
    routes = {r.path for r in client.app.routes if r.path != "/static"}
    assert routes == set(doc["paths"])
    assert set(doc["paths"]["/v1/act"]) == {"post"} and set(doc["paths"]["/v1/replay"]) == {"post"}
    assert "seats" in doc["paths"]["/ws"]["get"]["description"]
    from tarocchi_rl.web import limits

    for path in ("/v1/act", "/v1/replay"):  # the limits' answers, as the server sends them (tests/security)
        responses = doc["paths"][path]["post"]["responses"]
        for status in (limits.BUSY_STATUS, limits.CLIENT_BUSY_STATUS, limits.BODY_TIMEOUT_STATUS):
            assert str(status) in responses
        for status in (limits.BUSY_STATUS, limits.CLIENT_BUSY_STATUS):
            assert "Retry-After" in responses[str(status)]["headers"]
    for kind, fields in WS_MESSAGES.items():
        assert kind in doc["paths"]["/ws"]["get"]["description"]
        assert all(f in doc["paths"]["/ws"]["get"]["description"] for f in fields if f != "type")


def test_the_page_and_its_hooks(client):
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    for hook in ('data-testid="variant"', 'data-testid="start"', 'data-testid="status"', 'data-testid="hand"',
                 'data-testid="replay-load"', 'data-testid="replay-next"', 'data-testid="result"'):
        assert hook in page.text
    js = client.get("/static/app.js")
    assert js.status_code == 200 and "data-action" not in page.text and "dataset.action" in js.text
    assert "http" not in page.text.replace("http-equiv", "")  # nothing fetched from elsewhere
    assert client.get("/static/style.css").status_code == 200
    assert client.get("/static/../app.py").status_code == 404


def test_the_serve_command(monkeypatch, capsys, tmp_path):
    import uvicorn

    from tarocchi_rl.web.app import CONFIG_ENV, app_from_env

    monkeypatch.chdir(tmp_path)  # serve's default --db is a file here (made before the processes of --workers 2)
    calls = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.append((app, kw)))
    monkeypatch.setenv(CONFIG_ENV, "{}")
    assert cli.main(["serve", "--port", "8123", "--agents", EXTRA, "--seats", f"human,heuristic,{EXTRA},random"]) == 0
    app, kw = calls[-1]
    assert kw["port"] == 8123 and kw["host"] == "127.0.0.1"
    assert app.state.server.seats == ["human", "heuristic", EXTRA_NAME, "random"]
    assert [b["name"] for b in app.state.server.catalogue.info()] == BOT_NAMES
    assert cli.main(["serve", "--agents", f"strong={EXTRA}", "--agents", "heuristic,random",
                     "--seats", "human,strong,heuristic,random"]) == 0
    app, _ = calls[-1]
    assert app.state.server.catalogue.specs["strong"] == EXTRA and app.state.server.seats[1] == "strong"
    assert app.state.server.config.db == "sqlite:///tarocchi-games.db" and not (tmp_path / "tarocchi-games.db").exists()
    assert cli.main(["serve", "--workers", "2", "--idle-timeout", "60"]) == 0
    app, kw = calls[-1]
    assert app == "tarocchi_rl.web.app:app_from_env" and kw["factory"] and kw["workers"] == 2
    assert app_from_env().state.server.config.idle_timeout == 60
    assert app_from_env().state.server.config.processes == 2  # shared tables refused (test_shared_tables)
    assert "shared tables need `serve --workers 1`: this server runs 2 processes" in capsys.readouterr().err
    assert (tmp_path / "tarocchi-games.db").is_file()  # made and upgraded once, before the worker processes
    assert cli.main(["serve", "--db", "none"]) == 0 and calls[-1][0].state.server.config.db is None
    for args, message in ((["--agents", "alphazero"], "unknown agent spec"),
                          (["--seats", "human,human,random"], "exactly one seat"),
                          (["--seats", "human,heuristic,onnx:x"], "unknown bot"),
                          (["--agents", "heuristic=random"], "taken"),
                          (["--ismcts", "ismcts:speed=3"], "ismcts spec"), (["--workers", "0"], "--workers"),
                          (["--db", "nonsense"], "not a database URL"), (["--db", "sqlite:///no/such/dir/g.db"],
                                                                         "no directory")):
        capsys.readouterr()
        assert cli.main(["serve", *args]) == 2
        assert message in capsys.readouterr().err


def test_a_bot_seated_at_a_variant_it_does_not_play_is_refused_before_the_deal():
    with LocalClient(create_app(ServerConfig(agents=["m=bot:mineo"], warmup=False))) as c:
        bots = {b["name"]: b for b in c.get("/v1/bots").json()["bots"]}
        assert bots["m"]["variants"] == ["mineo"] and bots["heuristic"]["variants"] == list(VARIANTS)
        with c.websocket_connect("/ws") as ws:
            out = start(ws, "french3", bot="m")
            assert out["type"] == "error" and out["error"] == "seats[1]: m plays mineo, not french3"
            assert "fatal" not in out
            assert start(ws, "mineo", bot="m")["type"] in ("state", "over")  # the same connection plays on
