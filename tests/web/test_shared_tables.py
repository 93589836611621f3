"""Tables for several people (tarocchi_rl.web.shared) over /ws: two people and two bots play a whole Mineo deal, each
sent only their own seat's view; a person who leaves is replaced by the table's bot after the grace and takes the
seat back with its token; wrong codes and tokens are refused and cost the address its tries; the lobby lists only
the tables opened for it; the stored game has both people, who played which move, and the takeover; a seat taken
back is sent the whole deal so far as it saw it; a seed makes a practice table; a server of several processes
refuses shared tables."""

import json
import time

import pytest

from tarocchi_rl.game import make
from tarocchi_rl.web.app import ServerConfig, create_app
from tarocchi_rl.web.shared import (
    CODE_ALPHABET,
    CODE_LENGTH,
    GUESSES_BURST,
    SINGLE_PROCESS,
    new_code,
    normalize_code,
)
from tarocchi_rl.web.store import open_store
from tests.support.web_client import LocalClient
from tests.support.web_views import check_message

GRACE = 0.3  # seconds: the seat grace of these tests
SEATS = ["human", "heuristic", "human", "heuristic"]  # people at seats 0 and 2


def server(tmp_path, **kw):
    return create_app(ServerConfig(warmup=False, seat_grace=GRACE, db=f"sqlite:///{tmp_path / 'g.db'}", **kw))


def open_table(ws, **extra) -> dict:
    ws.send_json({"type": "open", "variant": "mineo", "seats": SEATS, **extra})
    joined = ws.receive_json()
    assert joined["type"] == "joined", joined
    return joined


class Person:
    """One connection at the table: every message it was sent (raw and parsed), its latest view."""

    def __init__(self, ws, seat: int) -> None:
        self.ws, self.seat = ws, seat
        self.texts: list[str] = []
        self.views: list[dict] = []

    def receive(self, *kinds: str) -> dict:
        text = self.ws.receive_text()
        msg = json.loads(text)
        assert msg["type"] in kinds, msg
        self.texts.append(text)
        if msg["type"] in ("state", "over"):
            self.views.append(msg)
        return msg

    @property
    def latest(self) -> dict:
        return self.views[-1]


def start_two(a_ws, b_ws) -> tuple[Person, Person, dict, dict]:
    """A opens the table, B joins it by its code (typed in lower case, with a dash): the deal starts."""
    a, joined_a = Person(a_ws, 0), open_table(a_ws)
    assert joined_a["seat"] == 0 and not joined_a["started"] and joined_a["waiting_for"] == 1
    code = joined_a["code"]
    assert len(code) == CODE_LENGTH and set(code) <= set(CODE_ALPHABET)
    b_ws.send_json({"type": "join", "code": f"{code[:4]}-{code[4:]}".lower()})
    b = Person(b_ws, 2)
    joined_b = b.receive("joined")
    assert joined_b["seat"] == 2 and joined_b["started"] and joined_b["code"] == code
    assert joined_a["token"] != joined_b["token"]
    b.receive("state")
    a.receive("people")
    a.receive("state")
    return a, b, joined_a, joined_b


def move(mover: Person, other: Person) -> None:
    """The person whose turn it is plays their first legal move; both are sent the table after it."""
    legal = mover.latest["table"]["legal"]
    assert mover.latest["table"]["your_turn"] and legal
    mover.ws.send_json({"type": "act", "action": legal[0]["action"]})
    mover.receive("state", "over")
    other.receive("state", "over")
    assert mover.latest["table"]["steps"] == other.latest["table"]["steps"]


def turn(a: Person, b: Person) -> None:
    """One turn at the table: the person to act plays (:func:`move`), or, when neither is to choose (a person's
    forced move is held, shared.py), the table plays it after a while and both are sent the table after it."""
    if a.latest["table"]["your_turn"]:
        move(a, b)
    elif b.latest["table"]["your_turn"]:
        move(b, a)
    else:
        forced = [p for p in (a, b) if "forced" in p.latest["table"]]
        assert len(forced) == 1, [p.latest["table"] for p in (a, b)]
        a.receive("state", "over")
        b.receive("state", "over")
        assert a.latest["table"]["steps"] == b.latest["table"]["steps"]


def play_out(a: Person, b: Person) -> dict:
    while a.latest["type"] != "over":
        turn(a, b)
    assert b.latest["type"] == "over"
    return a.latest


def check_views(person: Person, record: dict, other_token: str) -> None:
    """Every view the person got shows only what their seat may know, and never the other seat's token."""
    for msg in person.views:
        check_message(msg, record, person.seat)
        assert msg["table"]["seat"] == person.seat
    assert all(other_token not in text for text in person.texts)
    assert all('"seed"' not in text for text in person.texts[:-1])


def test_two_people_and_two_bots_play_a_whole_deal_each_seeing_only_their_seat(tmp_path):
    with LocalClient(server(tmp_path)) as client:
        with client.websocket_connect("/ws") as a_ws, client.websocket_connect("/ws") as b_ws:
            a, b, joined_a, joined_b = start_two(a_ws, b_ws)
            assert client.get("/v1/health").json()["tables"] == 1
            over = play_out(a, b)
            assert client.get("/v1/health").json()["tables"] == 0  # the table is over: its place given back
    record = over["record"]
    assert a.latest["record"] == b.latest["record"] and "practice" not in record
    check_views(a, record, joined_b["token"])
    check_views(b, record, joined_a["token"])
    assert {m["seat"] for msg in a.views for m in msg["moves"] if m["by"] == "human"} == {0, 2}

    store = open_store(f"sqlite:///{tmp_path / 'g.db'}")
    (game,) = list(store.finished_games())
    assert game["record"] == record
    people = [s["name"] for s in game["seats"] if s["kind"] == "person"]
    assert [s["kind"] for s in game["seats"]] == ["person", "bot", "person", "bot"] and len(set(people)) == 2
    by = store.moves_by(game["id"])
    assert {who for _, seat, who in by if seat in (1, 3)} == {"bot"}
    assert {who for _, seat, who in by if seat in (0, 2)} <= {"person", "forced"}
    store.close()


def test_a_person_who_leaves_is_replaced_after_the_grace_and_takes_the_seat_back_with_the_token(tmp_path):
    with LocalClient(server(tmp_path)) as client:
        with client.websocket_connect("/ws") as a_ws:
            with client.websocket_connect("/ws") as b_ws:
                a, b, _, joined_b = start_two(a_ws, b_ws)
            left = a.receive("people")  # B's connection closed: the seat waits, its grace counting down
            away_left = left["people"][1].pop("away_left")
            assert left["people"][1] == {"seat": 2, "taken": True, "present": False, "replaced_by": None}
            assert 0 <= away_left <= GRACE and "away_left" not in left["people"][0]
            t0 = time.monotonic()
            taken = a.receive("state")  # after the grace, the bot plays B's seat
            assert time.monotonic() - t0 >= GRACE * 0.5
            assert taken["people"][1]["replaced_by"] == "heuristic"
            assert taken["table"]["seats"][2] == {"seat": 2, "player": "human", "replaced_by": "heuristic"}
            for _ in range(2):  # A plays (or A's forced move is played); the replacement plays B's seat between
                if a.latest["table"]["your_turn"]:
                    a_ws.send_json({"type": "act", "action": a.latest["table"]["legal"][0]["action"]})
                a.receive("state")
            replaced = [m for msg in a.views for m in msg["moves"] if m.get("by") == "replacement"]
            assert replaced and {m["seat"] for m in replaced} == {2}

            with client.websocket_connect("/ws") as thief:  # the code alone does not give a taken seat
                thief.send_json({"type": "join", "code": joined_b["code"]})
                assert "is full" in thief.receive_json()["error"]
                token = joined_b["token"]
                wrong = token[:-1] + ("y" if token.endswith("x") else "x")  # one token in 64 ends in x
                thief.send_json({"type": "join", "code": joined_b["code"], "token": wrong})
                assert thief.receive_json()["error"] == f"wrong seat token for table {joined_b['code']}"

            with client.websocket_connect("/ws") as b2_ws:  # B comes back with the seat's token
                b2_ws.send_json({"type": "join", "code": joined_b["code"], "token": joined_b["token"], "id": 7})
                b2 = Person(b2_ws, 2)
                back = b2.receive("joined")
                assert back["seat"] == 2 and back["id"] == 7 and back["people"][1]["replaced_by"] is None
                missed = b2.receive("state")
                assert missed["table"]["seats"][2] == {"seat": 2, "player": "human"}
                assert any(m.get("by") == "replacement" for m in missed["moves"])
                assert a.receive("people")["people"][1]["present"]
                over = play_out(a, b2)
    record = over["record"]
    for person in (a, b, b2):
        for msg in person.views:
            check_message(msg, record, person.seat)
    assert all(joined_b["token"] not in text for text in a.texts)

    store = open_store(f"sqlite:///{tmp_path / 'g.db'}")
    (game,) = list(store.finished_games())
    assert game["record"] == record
    row = store.game_row(game["id"])
    assert [(s["kind"], s["replaced_by"]) for s in row["seats"]] == [("person", None), ("bot", None),
                                                                    ("person", "heuristic"), ("bot", None)]
    assert row["seats"][2]["name"] != row["seats"][0]["name"]  # B's anonymous id, kept when B came back
    by = [who for _, seat, who in store.moves_by(game["id"]) if seat == 2]
    first, last = by.index("replacement"), len(by) - 1 - by[::-1].index("replacement")
    assert set(by[first:last + 1]) == {"replacement"}  # the bot played B's seat while B was away ...
    assert set(by[:first]) <= {"person", "forced"} and "person" in by[last + 1:]  # ... and B before and after
    assert {who for _, seat, who in store.moves_by(game["id"]) if seat == 0} <= {"person", "forced"}
    store.close()


def test_wrong_codes_and_tokens_are_refused_and_cost_the_address_its_tries(tmp_path):
    with LocalClient(server(tmp_path)) as client:
        with client.websocket_connect("/ws") as a_ws, client.websocket_connect("/ws") as x:
            joined = open_table(a_ws)
            a_ws.send_json({"type": "act", "action": "bid:pass"})
            assert "waits for 1 more people" in a_ws.receive_json()["error"]
            a_ws.send_json({"type": "start", "variant": "mineo", "seats": ["human"] + ["random"] * 3})
            assert "shared table" in a_ws.receive_json()["error"]
            unknown = next(c for c in iter(new_code, None) if c != joined["code"])
            x.send_json({"type": "join", "code": unknown})
            assert x.receive_json()["error"] == f"no open table has the code {unknown}"
            x.send_json({"type": "join", "code": "O0I1"})
            assert "code: expected 8 characters" in x.receive_json()["error"]
            x.send_json({"type": "join", "code": joined["code"], "token": ["not", "a", "token"]})
            assert "wrong seat token" in x.receive_json()["error"]
            for _ in range(GUESSES_BURST - 3):
                x.send_json({"type": "join", "code": unknown})
                assert "no open table" in x.receive_json()["error"]
            x.send_json({"type": "join", "code": joined["code"]})  # the right code, but no tries left
            refused = x.receive_json()
            assert refused["type"] == "error" and "too many wrong table codes" in refused["error"]
            x.send_json({"type": "join", "code": joined["code"], "seat": 2})
            assert "unknown field 'seat'" in x.receive_json()["error"]


def test_the_lobby_lists_only_the_tables_opened_for_it_while_a_seat_is_free(tmp_path):
    with LocalClient(server(tmp_path)) as client:
        assert client.get("/v1/tables").json() == {"tables": []}
        with client.websocket_connect("/ws") as a_ws, client.websocket_connect("/ws") as c_ws:
            private = open_table(a_ws)
            listed = open_table(c_ws, lobby=True, replacement="random")
            tables = client.get("/v1/tables").json()["tables"]
            assert [t["code"] for t in tables] == [listed["code"]] and private["code"] not in json.dumps(tables)
            (t,) = tables
            assert (t["variant"], t["players"], t["people"], t["taken"]) == ("mineo", 4, 2, 1)
            assert t["seats"] == SEATS
            jsonschema = pytest.importorskip("jsonschema")
            doc = client.get("/openapi.json").json()
            schema = doc["paths"]["/v1/tables"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
            jsonschema.Draft202012Validator({**schema, "components": doc["components"]}).validate({"tables": tables})
            with client.websocket_connect("/ws") as d_ws:
                d_ws.send_json({"type": "join", "code": t["code"]})
                assert d_ws.receive_json()["type"] == "joined"
                assert client.get("/v1/tables").json() == {"tables": []}  # full: no longer listed
        time.sleep(GRACE * 3)  # everyone left: past the grace the tables close
        assert client.get("/v1/health").json()["tables"] == 0
    store = open_store(f"sqlite:///{tmp_path / 'g.db'}")
    assert store.counts()["abandoned"] == 1 and store.counts()["finished"] == 0  # the started one
    store.close()


def test_open_errors_and_the_tables_per_client():
    with LocalClient(create_app(ServerConfig(warmup=False, max_tables_per_client=1))) as client:
        with client.websocket_connect("/ws") as ws, client.websocket_connect("/ws") as other:
            ws.send_json({"type": "open", "variant": "mineo", "seats": ["heuristic"] * 4})
            assert "at least one entry must be 'human'" in ws.receive_json()["error"]
            ws.send_json({"type": "open", "variant": "mineo", "seats": SEATS, "lobby": "yes"})
            assert "lobby: expected true" in ws.receive_json()["error"]
            ws.send_json({"type": "open", "variant": "mineo", "seats": SEATS, "replacement": "nobody"})
            assert "replacement: unknown bot 'nobody'" in ws.receive_json()["error"]
            open_table(ws)
            other.send_json({"type": "open", "variant": "mineo", "seats": SEATS})
            assert "already holds 1 tables" in other.receive_json()["error"]
            ws.send_json({"type": "open", "variant": "mineo", "seats": SEATS})
            assert "you sit at table" in ws.receive_json()["error"]


def test_codes_are_normalized_or_refused():
    code = new_code()
    assert normalize_code(code.lower()) == code and normalize_code(f" {code[:4]}-{code[4:]} ") == code
    assert normalize_code("0" * CODE_LENGTH) is None and normalize_code(code + "A") is None
    assert normalize_code(7) is None and normalize_code("A" * 1000) is None


@pytest.mark.parametrize("bad", [0, -1.0, float("inf")])
def test_the_seat_grace_must_be_positive(bad):
    with pytest.raises(ValueError, match="seat-grace must be a positive number"):
        create_app(ServerConfig(warmup=False, seat_grace=bad))


def test_a_failing_bot_closes_the_table_for_everyone(tmp_path, monkeypatch):
    from tarocchi_rl.web import table as table_module

    with LocalClient(server(tmp_path)) as client:
        with client.websocket_connect("/ws") as a_ws, client.websocket_connect("/ws") as b_ws:
            a, b, _, _ = start_two(a_ws, b_ws)

            def fails(*args, **kw):
                raise RuntimeError("the bot's secret details")

            monkeypatch.setattr(table_module, "bot_action", fails)
            while True:  # the people play until a bot is to move after them
                mover, other = (a, b) if a.latest["table"]["your_turn"] else (b, a)
                legal = mover.latest["table"]["legal"]
                if legal:  # (none: a person's forced move is held; the table plays it, then the bots)
                    mover.ws.send_json({"type": "act", "action": legal[0]["action"]})
                answer = json.loads(mover.ws.receive_text())
                told = json.loads(other.ws.receive_text())
                if answer["type"] == "error":
                    break
                mover.views.append(answer)
                other.views.append(told)
            assert answer["fatal"] and "a bot failed" in answer["error"]
            assert told["type"] == "error" and told["fatal"] and "secret" not in json.dumps([answer, told])
            assert client.get("/v1/health").json()["tables"] == 0
            other.ws.send_json({"type": "act", "action": "bid:pass"})  # unbound: a deal of one's own is needed
            assert "no deal in progress" in other.ws.receive_json()["error"]
    store = open_store(f"sqlite:///{tmp_path / 'g.db'}")
    assert store.counts()["abandoned"] == 1
    store.close()


def test_an_idle_shared_table_is_closed(tmp_path):
    with LocalClient(server(tmp_path, idle_timeout=0.4)) as client:
        with client.websocket_connect("/ws") as ws:
            open_table(ws)
            closed = ws.receive_json()
            assert closed["type"] == "error" and closed["fatal"] and "idle for 0.4 s" in closed["error"]
            assert client.get("/v1/health").json()["tables"] == 0


def test_a_connection_that_does_not_read_is_closed_without_holding_up_the_others():
    import asyncio

    from tarocchi_rl.web.shared import OUTBOX, OVERFLOW_CLOSE, Link

    class Stuck:
        """A WebSocket whose sends never finish (a client that does not read)."""

        def __init__(self) -> None:
            self.closed_with: int | None = None

        async def send_text(self, text: str) -> None:
            await asyncio.Event().wait()

        async def close(self, code: int) -> None:
            self.closed_with = code

    async def run() -> Stuck:
        ws = Stuck()
        link = Link(ws, json.dumps)
        t0 = time.perf_counter()
        for k in range(OUTBOX + 2):  # one is taken by the sending task, OUTBOX wait, the next overflows
            link.put({"k": k})
        assert time.perf_counter() - t0 < 0.5 and link.closed
        await asyncio.sleep(0.05)
        return ws

    assert asyncio.run(run()).closed_with == OVERFLOW_CLOSE


def test_a_seat_taken_back_is_sent_the_whole_deal_so_far_as_that_seat_saw_it(tmp_path):
    """A new connection (a reload) with B's token gets every move since the deal began, exactly as B's seat was
    sent them (never another seat's hidden card), and the public moves as A saw them."""
    with LocalClient(server(tmp_path)) as client:
        with client.websocket_connect("/ws") as a_ws, client.websocket_connect("/ws") as b_ws:
            a, b, _, joined_b = start_two(a_ws, b_ws)
            for _ in range(6):  # a few moves of the people (the bots' between)
                turn(a, b)
            while not (a.latest["table"]["your_turn"] or b.latest["table"]["your_turn"]):
                turn(a, b)  # (a person's forced move held: played first, so that nothing is on the way)
            with client.websocket_connect("/ws") as b2_ws:
                b2_ws.send_json({"type": "join", "code": joined_b["code"], "token": joined_b["token"]})
                b2 = Person(b2_ws, 2)
                assert b2.receive("joined")["seat"] == 2
                again = b2.receive("state")
                assert b.ws.receive_json()["fatal"]  # the old connection stood up
                a.receive("people")
                seen_by_b = [m for msg in b.views for m in msg["moves"]]
                steps = again["table"]["steps"]
                assert [m["index"] for m in again["moves"]] == list(range(steps)) and steps > 6
                assert again["moves"] == seen_by_b  # what B's seat was sent, nothing more
                seen_by_a = [m for msg in a.views for m in msg["moves"]]
                assert [(m["seat"], m["phase"]) for m in again["moves"]] == [(m["seat"], m["phase"]) for m in seen_by_a]
                public = [k for k, m in enumerate(seen_by_a) if m["phase"] != "discard" and "received" not in m]
                assert public and all(again["moves"][k]["action"] == seen_by_a[k]["action"] for k in public)
                over = play_out(a, b2)
    for msg in b2.views:
        check_message(msg, over["record"], 2)


def test_a_shared_table_opened_with_a_seed_is_a_practice_table(tmp_path):
    seed = 2**63 - 1  # as a string, the way the page sends it
    with LocalClient(server(tmp_path)) as client:
        with client.websocket_connect("/ws") as a_ws, client.websocket_connect("/ws") as b_ws:
            for bad in (-1, "12x", 2**63, 1.5, True):
                a_ws.send_json({"type": "open", "variant": "mineo", "seats": SEATS, "seed": bad})
                assert "seed must be an integer in [0, 2**63 - 1]" in a_ws.receive_json()["error"], bad
            assert client.get("/v1/health").json()["tables"] == 0  # nothing opened
            joined = open_table(a_ws, seed=str(seed), lobby=True)
            assert joined["practice"] is True
            assert client.get("/v1/tables").json()["tables"][0]["practice"] is True
            b_ws.send_json({"type": "join", "code": joined["code"]})
            b = Person(b_ws, 2)
            assert b.receive("joined")["practice"] is True
            b.receive("state")
            a = Person(a_ws, 0)
            a.receive("people")
            a.receive("state")
            assert "seed" not in a.latest and "seed" not in b.latest  # named only at the end
            over = play_out(a, b)
    assert over["practice"] is True and over["seed"] == str(seed) and over["record"]["practice"] is True
    assert over["record"]["deal"] == make("mineo").new_state(seed).deal()  # the deal of that seed
    store = open_store(f"sqlite:///{tmp_path / 'g.db'}")
    assert list(store.finished_games()) == []  # practice tables left out ...
    (game,) = list(store.finished_games(practice=True))  # ... unless asked for
    assert game["practice"] and game["record"] == over["record"]
    assert [s["kind"] for s in game["seats"]] == ["person", "bot", "person", "bot"]
    store.close()


def test_a_server_of_several_processes_refuses_shared_tables_in_one_line():
    with LocalClient(create_app(ServerConfig(warmup=False, processes=2))) as client:
        with client.websocket_connect("/ws") as ws:
            ws.send_json({"type": "open", "variant": "mineo", "seats": SEATS})
            refused = ws.receive_json()["error"]
            assert refused == SINGLE_PROCESS.format(workers=2) and "\n" not in refused
            assert refused.startswith("shared tables need `serve --workers 1`")
            ws.send_json({"type": "join", "code": new_code()})
            assert ws.receive_json()["error"] == refused
            ws.send_json({"type": "start", "variant": "mineo", "seats": ["human"] + ["random"] * 3})
            assert ws.receive_json()["type"] == "state"  # a deal of one's own is served as ever


# -- forced moves tell the others nothing ---------------------------------------------------------------------------
MOVE_FIELDS = {"index", "seat", "phase", "action", "by", "card", "trick", "won_by", "stock", "called", "shown",
               "received"}  # what a move of another person's seat may carry (the same for a forced and a chosen one)
BIDDING = ("early", "auction", "bid")


def table_turn(people: list[Person]) -> None:
    """One turn: the person to choose plays (a bid that is not a pass while there is one: the auction goes up, so
    that the later bidders are left with a forced pass; else their first legal move); with nobody to choose (a
    person's forced move is held) the table plays it. Every person is then sent exactly one message."""
    chooser = [p for p in people if p.latest["table"]["your_turn"]]
    if chooser:
        (p,) = chooser
        t = p.latest["table"]
        legal = [m["action"] for m in t["legal"]]
        bids = [a for a in legal if "pass" not in a] if t["phase"] in BIDDING else []
        p.ws.send_json({"type": "act", "action": (bids or legal)[0]})
    else:
        assert [p.seat for p in people if "forced" in p.latest["table"]] == [people[0].latest["table"]["to_act"]]
    for p in people:
        p.receive("state", "over")


def test_a_persons_forced_move_looks_to_the_others_like_a_chosen_one(tmp_path):
    """Three people and a bot play French tarot deals to the end (the auction pushed up so that late bidders must
    pass, poignées most seats cannot show, the last cards): every message each person is sent is scanned, and
    nothing in it tells another person's forced move from a chosen one: the same fields and values (``by``
    ``human``, no ``forced``), and each such move the first of a message of its own (never in the message of the
    move before it), as a chosen move comes. The seat itself is told (``forced`` in its own view) and the store
    notes who played what."""
    seats = ["human", "human", "human", "heuristic"]
    deals: list[list[Person]] = []
    with LocalClient(server(tmp_path)) as client:
        for _ in range(2):
            sockets = [client.websocket_connect("/ws") for _ in range(3)]
            wss = [s.__enter__() for s in sockets]
            try:
                wss[0].send_json({"type": "open", "variant": "french4", "seats": seats})
                code = wss[0].receive_json()["code"]
                for ws in wss[1:]:
                    ws.send_json({"type": "join", "code": code})
                    assert ws.receive_json()["type"] == "joined"
                people = [Person(ws, k) for k, ws in enumerate(wss)]
                for k, p in enumerate(people):  # the people who came before the last one are told who came
                    for _ in range(2 - k):
                        p.receive("people")
                    p.receive("state")
                for _ in range(400):
                    if people[0].latest["type"] == "over":
                        break
                    table_turn(people)
                else:
                    pytest.fail("the deal did not end")
            finally:
                for s in sockets:
                    s.__exit__(None, None, None)
            deals.append(people)
    store = open_store(f"sqlite:///{tmp_path / 'g.db'}")
    forced_seen = {0: 0, 1: 0, 2: 0}
    for people in deals:
        record = people[0].latest["record"]
        game = next(g for g in store.finished_games() if g["record"] == record)
        truth = {step: who for step, _, who in store.moves_by(game["id"])}
        for p in people:
            for k, msg in enumerate(p.views):
                check_message(msg, record, p.seat)
                if msg["table"]["to_act"] != p.seat or msg["table"]["over"]:
                    assert "forced" not in msg["table"]  # a held forced move is told to its own seat only
                for j, m in enumerate(msg["moves"]):
                    if m["seat"] == p.seat or m["seat"] == 3:
                        continue
                    assert set(m) <= MOVE_FIELDS and m["by"] == "human", m  # chosen or forced alike
                    assert j == 0, (k, msg["moves"])  # the first of its message: never sent with the move before
                    forced_seen[m["seat"]] += truth[m["index"]] == "forced"
            own = [m for msg in p.views for m in msg["moves"] if m["seat"] == p.seat]
            assert {m["by"] for m in own} <= {"human", "forced"}  # its own seat may know
            assert [m["by"] == "forced" for m in own] == [truth[m["index"]] == "forced" for m in own]
    store.close()
    assert all(n >= 2 for n in forced_seen.values()), forced_seen  # forced moves of every person were scanned
