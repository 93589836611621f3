"""What a web table reveals (issue 30, items 2 and 4): only what the human's seat may know until the deal is over.

- Whole deals over ``/ws`` in every variant, every message the server sends on the way (state, error, pong) read
  as raw text: no seed (nor the bots' seeds drawn from it) and no card beyond the human's seat view
  (:meth:`tarocchi_rl.views.Views.view`: his hand as dealt, the cards that joined it, every action as he saw it,
  the monte / chien and the cards shown); the seed comes with ``over`` as a string.
- A client's seed makes a practice table (``practice`` in ``over`` and in the record); seeds above 2**53 survive
  as strings, and the page keeps them so.
- A failing bot is a generic error frame (no legal set, no exception text); the details are in the log.
- Bots are shown by display name: ``/v1/bots``, ``hello``, seat names and error texts never show a spec, a path
  or a command line.
- A slow bot's forced move is not measurably faster than its searched ones (the table paces it).
"""

import json
import logging
import re
import statistics
import time

import numpy as np
import pytest

from tarocchi_rl import cli
from tarocchi_rl.game import make
from tarocchi_rl.play import bot_seeds
from tarocchi_rl.variants import VARIANTS, get_variant
from tarocchi_rl.web.app import BOT_FAILED, ServerConfig, create_app
from tarocchi_rl.web.bots import Catalogue, agent_entries, named_entry, shipped_specs
from tarocchi_rl.web.table import FIRST_PACE, MAX_PACE, PACE_SAMPLES, DecisionClock, SeatBot, Table
from tests.support.web_client import LocalClient

STRONG = "ismcts:iterations=20,c=0.7"  # an operator's search, shown as "strong"
SECRET_CMD = 'cmd:"/nonexistent/secret-bot --level 3"'  # shown as "bot1"; the program cannot start
SECRETS = ("ismcts:iterations", "iterations=20", "secret-bot", "/nonexistent", "--level", "cmd:", "time=0.2")


@pytest.fixture(scope="module")
def client():
    config = ServerConfig(agents=[f"strong={STRONG}", SECRET_CMD], warmup=False)
    with LocalClient(create_app(config)) as c:
        yield c


def deck_names(variant: str) -> set[str]:
    return set(make(variant).deck.names)


def cards_in(text: str, names: set[str]) -> set[str]:
    """Every card name in a message's text (card names are alphanumeric words: ``play:KC`` names KC)."""
    return {w for w in re.split(r"[^A-Za-z0-9]+", text) if w in names}


def without_resume(text: str) -> str:
    """A message's text without its ``resume`` secrets: a random URL-safe token can hold a card's name between two
    of its ``-`` or ``_`` (``…-4D_…``), which is no card shown."""
    msg = json.loads(text)
    msg.pop("resume", None)
    return json.dumps(msg)


def seat_view(record: dict, human: int) -> list[str]:
    """The human's view of the deal, one entry per step (the deal first), from the record."""
    t = Table.from_record(record)
    for text in record["actions"]:
        t.apply(t.action_id(text), "record")
    return t.views.view(human)


def play_over_ws(ws, variant: str, human: int, seats: list[str]) -> tuple[list[tuple[int, str]], dict]:
    """A whole deal, no seed sent: the human plays his first legal move; on his first turns he also pings and
    sends an unknown and an illegal move (error frames). Returns (steps known when the message came, its raw
    text) for every message before ``over``, and ``over``."""
    ws.send_text(json.dumps({"type": "start", "variant": variant, "seats": seats}))
    texts: list[tuple[int, str]] = []
    steps = 0
    for turn in range(400):
        text = ws.receive_text()
        msg = json.loads(text)
        if msg["type"] == "over":
            return texts, msg
        assert msg["type"] == "state", msg
        steps = msg["table"]["steps"]
        texts.append((steps, text))
        legal = msg["table"]["legal"]
        if turn < 3:  # an illegal card of his own, a card of no deck, a bad start: errors that change nothing
            playable = {a["action"] for a in legal}
            own = [{"type": "act", "action": f"play:{c}"} for c in msg["table"]["hand"] if f"play:{c}" not in playable]
            for probe in ({"type": "ping"}, {"type": "act", "action": "play:ZZ"}, *own[:1],
                          {"type": "start", "variant": variant}):
                ws.send_text(json.dumps(probe))
                texts.append((steps, ws.receive_text()))
        ws.send_text(json.dumps({"type": "act", "action": legal[0]["action"]}))
    pytest.fail("the deal did not end")


@pytest.mark.parametrize("variant", VARIANTS)
def test_no_message_before_over_names_the_seed_or_a_card_the_seat_may_not_know(client, variant):
    n = get_variant(variant).n_players
    bots = ["heuristic", "random", "strong"]
    for human in (0, n - 1):
        seats = ["human" if k == human else bots[k % 3] for k in range(n)]
        for _attempt in range(8):  # a tarok deal can end before the human has a real decision (a bot's valat
            with client.websocket_connect("/ws") as ws:  # lost on the first trick): such a deal tells nothing
                texts, over = play_over_ws(ws, variant, human, seats)
            if texts:
                break
        seed = int(over["seed"])
        assert over["seed"] == str(seed) and over["practice"] is False and "practice" not in over["record"]
        assert over["record"]["deal"] == make(variant, **over["record"]["options"]).new_state(seed).deal()
        secrets = [str(seed)] + [str(s) for s in bot_seeds(seed, n)]
        view = seat_view(over["record"], human)
        names = deck_names(variant)
        kinds = set()
        for steps, text in texts:
            kinds.add(json.loads(text)["type"])
            assert not any(s in text for s in secrets), f"a seed in {text[:200]}"
            assert '"seed"' not in text
            known = cards_in(" ".join(view[: steps + 1]), names)
            shown = cards_in(without_resume(text), names)
            assert shown <= known, f"step {steps}: seat {human} is shown {sorted(shown - known)}"
            assert not any(s in text for s in SECRETS), text[:300]
        assert kinds == {"state", "error", "pong"}


def test_a_client_seed_is_a_practice_table_and_seeds_stay_strings(client):
    big = 2**63 - 1  # above 2**53: a JavaScript number would round it
    for sent in (big, str(big)):
        with client.websocket_connect("/ws") as ws:
            ws.send_text(json.dumps({"type": "start", "variant": "french3", "seed": sent,
                                     "seats": ["human", "heuristic", "heuristic"]}))
            msg = json.loads(ws.receive_text())
            while msg["type"] == "state":
                assert "seed" not in msg  # even a practice table names its seed only at the end
                ws.send_text(json.dumps({"type": "act", "action": msg["table"]["legal"][0]["action"]}))
                msg = json.loads(ws.receive_text())
        assert msg["type"] == "over" and msg["practice"] is True and msg["record"]["practice"] is True
        assert msg["seed"] == str(big)  # a string: exact
        assert msg["record"]["deal"] == make("french3").new_state(big).deal()
    page = client.get("/").text
    js = client.get("/static/app.js").text
    assert 'id="seed" data-testid="seed" type="text"' in page  # not a number input
    assert "Number(seed)" not in js and "Number(msg.seed)" not in js and "msg.seed = seed;" in js
    assert "String(msg.seed)" in js


class Broken:
    """An agent whose answer is always illegal: bot_action's error lists the seat's legal moves."""

    def act(self, obs, mask, env, idx):
        legal = np.flatnonzero(mask[0])
        return np.array([next(a for a in range(mask.shape[1]) if a not in legal)])


def test_a_failing_bot_is_a_generic_error_and_the_details_go_to_the_log(client, monkeypatch, caplog):
    catalogue = client.app.state.server.catalogue
    monkeypatch.setattr(catalogue, "seat_bot", lambda name, seed: SeatBot(name, Broken()))
    with caplog.at_level(logging.ERROR, logger="tarocchi_rl.web"), client.websocket_connect("/ws") as ws:
        ws.send_text(json.dumps({"type": "start", "variant": "french4", "seats": ["heuristic", "human", "heuristic",
                                                                                 "heuristic"]}))
        text = ws.receive_text()
        while json.loads(text)["type"] == "state":  # the human's moves until a bot's turn
            ws.send_text(json.dumps({"type": "act", "action": json.loads(text)["table"]["legal"][0]["action"]}))
            text = ws.receive_text()
        err = json.loads(text)
        assert err == {"type": "error", "error": BOT_FAILED, "fatal": True}
        assert not cards_in(text, deck_names("french4")) and "illegal" not in text and "legal" not in text
        ws.send_text(json.dumps({"type": "ping", "id": 1}))
        assert json.loads(ws.receive_text()) == {"type": "pong", "id": 1}  # the connection serves on
    logged = [r for r in caplog.records if r.exc_info]
    assert logged and "legal actions" in str(logged[0].exc_info[1])


def test_bots_are_shown_by_display_name_only(client):
    bots = client.get("/v1/bots")
    shipped = shipped_specs()  # the trained bots, built in (bot:VARIANT: a spec that names no path)
    assert [b["name"] for b in bots.json()["bots"]] == ["random", "heuristic", "ismcts", *shipped, "strong", "bot1"]
    assert all(set(b) == {"index", "name", "fast", "capabilities", "variants"} for b in bots.json()["bots"])
    for name in ("strong", "bot1", "ismcts"):
        hello = client.post(f"/v1/act?agent={name}", json={"type": "hello"})
        assert hello.json()["agent"] == name and hello.json()["name"] == f"tarocchi-rl {name}"
        assert not any(s in hello.text for s in SECRETS), hello.text
    assert not any(s in bots.text for s in SECRETS), bots.text
    for spec in (STRONG, SECRET_CMD, "ismcts:time=0.2"):  # a spec is no name; the error lists the names only
        r = client.post("/v1/act", params={"agent": spec}, json={"type": "hello"})
        offered = r.json()["error"].partition("this server offers")[2]
        assert r.status_code == 400 and offered.startswith(f" random, heuristic, ismcts, {', '.join(shipped)}, "
                                                            "strong, bot1 (")
        assert not any(s in offered for s in SECRETS)
    # the external program cannot start: its error names the bot, not the command line
    act = {"type": "act", "variant": "french3", "seat": 0, "hand": make("french3").new_state(1).hand(0),
           "history": [], "decision": "bid"}
    r = client.post("/v1/act?agent=bot1", json=act)
    assert r.status_code == 400 and "bot1" in r.json()["error"], r.json()
    assert not any(s in r.text for s in SECRETS), r.text
    with client.websocket_connect("/ws") as ws:
        ws.send_text(json.dumps({"type": "start", "variant": "french3", "seats": ["human", "strong", "bot1"]}))
        text = ws.receive_text()
        while json.loads(text)["type"] == "state":
            assert [s["player"] for s in json.loads(text)["table"]["seats"]] == ["human", "strong", "bot1"]
            ws.send_text(json.dumps({"type": "act", "action": json.loads(text)["table"]["legal"][0]["action"]}))
            text = ws.receive_text()
        assert json.loads(text)["error"] == BOT_FAILED and not any(s in text for s in SECRETS)


def test_agents_entries_names_and_their_mistakes():
    assert named_entry("strong=ismcts:iterations=20,c=0.7") == ("strong", "ismcts:iterations=20,c=0.7")
    assert named_entry("ismcts:iterations=20,c=0.7") == (None, "ismcts:iterations=20,c=0.7")
    assert named_entry('cmd:"prog --a=1"') == (None, 'cmd:"prog --a=1"')
    assert agent_entries(["a=ismcts:iterations=5,rollout=heuristic", "onnx:x,ismcts:iterations=3,c=1"]) == [
        "a=ismcts:iterations=5,rollout=heuristic", "onnx:x", "ismcts:iterations=3,c=1"]
    cat = Catalogue(["ismcts:iterations=5", "bot1=random", "heuristic", "ismcts:iterations=5", "x=ismcts:iterations=6"])
    assert cat.names == ["random", "heuristic", "ismcts", *shipped_specs(), "bot2", "bot1", "x"]  # bot1 taken
    assert cat.resolve_operator("ismcts:iterations=5", "--seats") == "bot2"
    strong = {s for s in shipped_specs() if s.startswith("strong:")}  # the shipped networks guiding a search
    assert set(cat.clocks) == {"ismcts", "bot2", "x", *strong} and len(strong) == 7  # the slow bots are paced
    for bad, message in ((["heuristic=random"], "taken"), (["a=random", "A=heuristic"], "taken"),
                         (["a=nonsense"], "unknown agent spec")):
        with pytest.raises(ValueError, match=message):
            Catalogue(bad)


def test_serve_takes_named_agents(monkeypatch, capsys):
    import uvicorn

    calls = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.append(app))
    assert cli.main(["serve", "--agents", f"strong={STRONG}", "--agents", "random,ismcts:iterations=9,c=1",
                     "--seats", "human,strong,bot1"]) == 0
    server = calls[-1].state.server
    assert server.catalogue.names == ["random", "heuristic", "ismcts", *shipped_specs(), "strong", "bot1"]
    assert server.catalogue.specs["bot1"] == "ismcts:iterations=9,c=1" and server.seats == ["human", "strong", "bot1"]


# -- pacing ------------------------------------------------------------------------------------------------------
def test_the_decision_clock():
    clock = DecisionClock()
    assert clock.typical() == FIRST_PACE
    for s in (0.1, 0.3, 0.2):
        clock.note(s)
    assert clock.typical() == pytest.approx(0.2)
    for _ in range(PACE_SAMPLES):
        clock.note(100.0)
    assert clock.typical() == MAX_PACE


class TimedTable(Table):
    """A table that notes how long each bot move took and whether it was forced."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.timings: list[tuple[bool, float]] = []

    def _bot_move(self, bot, seat):
        """The time the client waits for this move: the bot's own, plus the pacing it adds (which the server
        awaits before answering: test_the_server_awaits_the_pacing_a_table_owes)."""
        forced = len(self.views.legal_actions()) == 1
        start, owed = time.perf_counter(), self.pace_owed
        a = super()._bot_move(bot, seat)
        self.timings.append((forced, time.perf_counter() - start + self.pace_owed - owed))
        return a


def test_a_search_bots_forced_moves_are_not_faster_than_its_searched_ones():
    cat = Catalogue(ismcts="ismcts:time=0.04")
    timings: list[tuple[bool, float]] = []
    for seed in range(2):
        seats = [None] + [cat.seat_bot("ismcts", seed * 10 + k) for k in (1, 2)]
        t = TimedTable.deal("french3", {}, seats, seed)
        t.advance()
        while not t.is_over():  # the human bids highest (the bots defend: a whole card play), then plays first
            legal = t.snapshot(0)["legal"]
            t.act(legal[-1 if legal[0]["action"].startswith("bid:") else 0]["id"])
            t.advance()
        timings += t.timings
    forced = [s for f, s in timings if f]
    searched = [s for f, s in timings if not f]
    assert len(forced) >= 4 and len(searched) >= 20  # the last tricks at least are forced
    assert statistics.median(forced) >= 0.7 * statistics.median(searched), (forced, statistics.median(searched))
    fast = Catalogue().seat_bot("heuristic", 0)
    assert fast.clock is None  # a heuristic bot answers in a millisecond either way: not paced


def test_the_server_awaits_the_pacing_a_table_owes():
    """The pacing is awaited by the connection's handler (no worker thread sleeps), then taken off the table."""
    import asyncio

    from tarocchi_rl.web.app import Server

    server = Server(ServerConfig(warmup=False))
    table = Table.deal("french3", {}, [None] + [server.catalogue.seat_bot("heuristic", k) for k in (1, 2)], 5)
    table.pace_owed = 0.25
    start = time.perf_counter()
    out = asyncio.run(server._advance(table))
    assert out["type"] in ("state", "over") and time.perf_counter() - start >= 0.25
    assert table.take_pace() == 0.0
