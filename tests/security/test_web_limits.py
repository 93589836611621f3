"""Limits of ``tarocchi-rl serve`` against one greedy client (issue 30, item 3 and the web half of item 7), with
small limits so that each test is quick:

- tables per client and in all (a table is a deal held, not a connection), connections per client (requests
  and WebSockets in progress; and open connections per address, refused before any HTTP is parsed);
- a ping does not keep a table alive, and a table's lifetime closes it however active it is;
- a full queue is a 503 with ``Retry-After`` (the client's own share: 429), a busy error frame at a table (the
  table kept); a queue serves first the client that used the least time and hands ahead only cheap jobs; a
  client never holds every worker; ``/v1/act``'s rebuild and ``/v1/replay`` run in worker processes (one that
  dies is replaced), searches in a thread;
- a request body that does not arrive in time is a 408 and its connection closed (a real uvicorn on 127.0.0.1);
- ``serve --host 0.0.0.0`` needs ``--public`` (one line, exit 2), which prints what is exposed; the uvicorn
  options (``limit_concurrency``, ``timeout_keep_alive``, ``ws_max_size``).

The TestClient's client address is ``testclient`` for every request and WebSocket: one client.
"""

import asyncio
import contextlib
import json
import os
import socket
import threading
import time

import pytest
from starlette.websockets import WebSocketDisconnect

from tarocchi_rl import cli
from tarocchi_rl.game import make
from tarocchi_rl.web import limits
from tarocchi_rl.web.app import IDLE_CLOSE, MAX_WS_MESSAGE, ServerConfig, create_app
from tests.support.web_client import LocalClient

SEATS3 = ["human", "heuristic", "heuristic"]


def app_with(**config):
    return create_app(ServerConfig(warmup=False, **config))


def start(ws, seats=SEATS3, variant="french3"):
    ws.send_json({"type": "start", "variant": variant, "seats": seats})
    return ws.receive_json()


def act_request() -> dict:
    return {"type": "act", "variant": "french3", "seat": 0, "hand": make("french3").new_state(1).hand(0),
            "history": [], "decision": "bid"}


def closed_with(ws) -> tuple[dict, int]:
    """The fatal error frame a closing table sends, and its close code."""
    last = ws.receive_json()
    with pytest.raises(WebSocketDisconnect) as closed:
        ws.receive_json()
    return last, closed.value.code


# -- tables and connections ----------------------------------------------------------------------------------
def test_a_client_holds_at_most_its_tables_and_connections_without_a_deal_are_not_tables():
    # (a closed connection's deal waits seat_grace for a reload, still the client's: a short grace here)
    with LocalClient(app_with(max_tables_per_client=2, seat_grace=0.3)) as c:
        with c.websocket_connect("/ws") as a, c.websocket_connect("/ws") as b, c.websocket_connect("/ws") as d:
            assert c.get("/v1/health").json()["tables"] == 0  # three connections, no deal yet
            assert start(a)["type"] == "state" and start(b)["type"] == "state"
            refused = start(d)
            assert refused["type"] == "error" and "holds 2 tables" in refused["error"] and not refused.get("fatal")
            assert start(a)["type"] == "state"  # a new deal on a connection with one replaces it
            assert c.get("/v1/health").json()["tables"] == 2
            b.close()
            assert until(lambda: c.get("/v1/health").json()["tables"] == 1)  # the server has seen b close
            assert start(d)["type"] == "state"  # b's table is gone: d may hold one
        assert until(lambda: c.get("/v1/health").json()["tables"] == 0)


def until(condition, seconds: float = 30.0) -> bool:
    """Whether ``condition()`` comes true within ``seconds`` (polled: a busy machine is slow, never wrong)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_two_starts_at_once_cannot_both_take_the_last_place():
    app = app_with(max_tables_per_client=1)
    srv = app.state.server
    gate, play = Gate(), srv._play_bots
    srv._play_bots = lambda table: gate(None, None) and play(table)  # the bots of the first deal wait
    with LocalClient(app) as c, c.websocket_connect("/ws") as a, c.websocket_connect("/ws") as b:
        a.send_json({"type": "start", "variant": "french3", "seats": ["human", "ismcts", "heuristic"]})
        assert gate.entered.wait(10)  # a's deal is being dealt: its place is taken
        refused = start(b)
        assert refused["type"] == "error" and "holds 1 tables" in refused["error"]
        gate.open.set()
        assert a.receive_json()["type"] == "state"
        assert c.get("/v1/health").json()["tables"] == 1


def test_the_server_limit_counts_tables():
    with LocalClient(app_with(max_tables=1)) as c:
        with c.websocket_connect("/ws") as idle, c.websocket_connect("/ws") as ws:
            assert start(ws)["type"] == "state"
            assert "full" in start(idle)["error"]  # a start beyond max_tables is refused
            with c.websocket_connect("/ws") as third:  # and a connection while the server is full
                full, code = closed_with(third)
                assert full["fatal"] and "full" in full["error"] and code == 1013


def test_a_client_has_at_most_its_connections():
    with LocalClient(app_with(max_connections_per_client=2)) as c:
        with c.websocket_connect("/ws") as a, c.websocket_connect("/ws"):
            r = c.get("/v1/health")
            assert r.status_code == 429 and r.headers["retry-after"] == str(limits.RETRY_AFTER)
            assert "too many connections" in r.json()["error"]
            with c.websocket_connect("/ws") as third:
                refused, code = closed_with(third)
                assert refused["fatal"] and "too many connections" in refused["error"] and code == 1013
            assert start(a)["type"] == "state"
        assert c.get("/v1/health").status_code == 200


def test_a_ping_does_not_keep_a_table_alive():
    with LocalClient(app_with(idle_timeout=0.6)) as c, c.websocket_connect("/ws") as ws:
        assert start(ws)["type"] == "state"
        t0 = time.monotonic()
        answers = []
        for _ in range(600):  # pings every 0.05 s: the table closes about 0.6 s after the deal started
            ws.send_json({"type": "ping"})
            answer = ws.receive_json()
            answers.append(answer)
            if answer["type"] != "pong":
                break
            time.sleep(0.05)
        assert answers[-1]["fatal"] and "idle" in answers[-1]["error"]
        assert 0.5 < time.monotonic() - t0 < 30  # (a bound on "never closed", generous for a busy machine)
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
        assert closed.value.code == IDLE_CLOSE


def test_moves_keep_a_table_alive_but_not_past_its_lifetime():
    with LocalClient(app_with(idle_timeout=0.4, table_lifetime=1.2)) as c, c.websocket_connect("/ws") as ws:
        msg = start(ws, variant="mineo", seats=["human", "heuristic", "heuristic", "heuristic"])
        t0 = time.monotonic()
        while time.monotonic() - t0 < 30:  # a move every 0.1 s: never idle, closed at 1.2 s all the same
            if msg["type"] == "over":
                ws.send_json({"type": "start", "variant": "mineo",
                              "seats": ["human", "heuristic", "heuristic", "heuristic"]})
            elif msg["type"] == "state":
                ws.send_json({"type": "act", "action": msg["table"]["legal"][0]["action"]})
            else:
                break
            msg = ws.receive_json()
            time.sleep(0.1)
        assert msg["fatal"] and "open for 1.2 s" in msg["error"]
        assert 1.0 < time.monotonic() - t0 < 30
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
        assert closed.value.code == limits.LIFETIME_CLOSE


def test_a_fast_client_is_read_more_slowly():
    rate = limits.MessageRate(per_second=10, burst=3)
    assert [rate.delay() for _ in range(3)] == [0, 0, 0]
    assert 0.05 < rate.delay() <= 0.1 and rate.delay() > 0.1  # the fourth waits a tenth of a second, then more


# -- queues --------------------------------------------------------------------------------------------------
class Gate:
    """A bot's handle that blocks until opened: holds a queue's worker while a test looks at the queue."""

    def __init__(self) -> None:
        self.entered, self.open, self.threads = threading.Event(), threading.Event(), []

    def __call__(self, line, req):
        self.threads.append(threading.current_thread().name)
        self.entered.set()
        assert self.open.wait(10)
        return {"type": "action", "action": "bid:pass"}


@contextlib.contextmanager
def opened_at_exit(gate):
    try:
        yield gate
    finally:
        gate.open.set()


def in_background(fn):
    box = {}
    t = threading.Thread(target=lambda: box.setdefault("result", fn()), daemon=True)
    t.start()
    return t, box


@pytest.mark.parametrize("max_jobs, per_client, status", [(1, 1, 503), (4, 1, 429)])
def test_a_full_queue_is_a_503_with_retry_after(max_jobs, per_client, status):
    app = app_with(queues={**limits.QUEUES, "search": limits.QueueLimit(1, max_jobs, per_client)})
    gate = Gate()
    app.state.server.catalogue.pools["ismcts"].handle = gate
    with LocalClient(app) as c, opened_at_exit(gate):  # a failed assertion must not leave the server's shutdown
        # waiting on the gated search
        t, box = in_background(lambda: c.post("/v1/act?agent=ismcts", json=act_request()))
        assert gate.entered.wait(10)
        r = c.post("/v1/act?agent=ismcts", json=act_request())
        assert r.status_code == status and r.headers["retry-after"] == str(limits.RETRY_AFTER)
        assert "busy" in r.json()["error"] and r.json()["retry_after"] == limits.RETRY_AFTER
        fast = c.post("/v1/act?agent=heuristic", json=act_request())  # cheap work does not wait for searches
        assert fast.status_code == 200 and fast.json()["type"] == "action"
        with c.websocket_connect("/ws") as ws:
            assert start(ws)["type"] == "state"
            busy = start(ws, seats=["human", "ismcts", "heuristic"])  # a search seat: the search queue
            assert busy["type"] == "error" and busy["busy"] and not busy.get("fatal") and "busy" in busy["error"]
            ws.send_json({"type": "act", "action": "bid:pass"})  # the old deal is kept and plays on
            assert ws.receive_json()["type"] in ("state", "over")
        gate.open.set()
        t.join(10)
        assert box["result"].status_code == 200 and box["result"].json()["action"] == "bid:pass"
        assert gate.threads == ["tarocchi-search_0"]


def test_act_rebuilds_and_replays_run_in_worker_processes():
    from tarocchi_rl.agents.specs import make_agent
    from tarocchi_rl.bot import BotServer

    app = app_with()
    srv = app.state.server
    with LocalClient(app) as c:
        req = act_request()
        answer = c.post("/v1/act", json=req).json()
        assert answer == BotServer("heuristic", make_agent).handle(json.dumps(req))  # as the bot answers
        bad = c.post("/v1/replay", json={"variant": "french3"})
        assert bad.status_code == 400 and bad.json()["error"] and "action_index" in bad.json()
        for kind in ("act", "replay"):  # the GIL-holding work: in other processes, never the event loop's
            pid = c.portal.call(srv.queues[kind].run, "test", os.getpid)
            assert pid != os.getpid() and isinstance(pid, int)
        assert c.portal.call(srv.queues["search"].run, "test", os.getpid) == os.getpid()  # searches: a thread
        with pytest.raises(limits.Busy):  # a worker process that dies: its job is busy, another process starts
            c.portal.call(srv.queues["act"].run, "test", os._exit, 3)
        assert c.post("/v1/act", json=req).json() == answer


def test_a_queue_serves_first_the_client_that_used_the_least_time():
    async def scenario() -> list[str]:
        queue = limits.WorkQueue("act", limits.QueueLimit(1, 8, 3))
        gate, order = threading.Event(), []

        def job(name: str) -> str:
            if name in ("a1", "d1"):  # these take long (until the gate opens)
                gate.wait(10)
            order.append(name)
            return name

        tasks = [asyncio.create_task(queue.run(client, job, name))
                 for client, name in (("a", "a1"), ("a", "a2"), ("a", "a3"), ("b", "b1"))]
        await asyncio.sleep(0.05)
        with pytest.raises(limits.Busy) as full:  # a's share (3 jobs) is full, the queue is not
            await queue.run("a", job, "a4")
        assert full.value.per_client and full.value.status == 429
        waiting = asyncio.create_task(queue.run("c", job, "c1"))
        await asyncio.sleep(0.01)
        waiting.cancel()  # a client that goes away: its waiting job never runs, its place is freed
        await asyncio.gather(waiting, return_exceptions=True)
        assert queue.jobs == 4 and "c" not in queue.per_client
        gate.set()
        assert await asyncio.gather(*tasks) == ["a1", "a2", "a3", "b1"]
        assert queue.cost["a"] >= limits.CHEAP_JOB_SECONDS > queue.cost["b"]  # a1 took long: a is expensive
        gate.clear()
        tasks = [asyncio.create_task(queue.run("d", job, "d1"))]
        await asyncio.sleep(0.02)
        tasks.append(asyncio.create_task(queue.run("a", job, "a5")))  # expensive: not handed ahead of d1's end
        await asyncio.sleep(0.02)
        tasks.append(asyncio.create_task(queue.run("b", job, "b2")))  # cheap: handed ahead
        await asyncio.sleep(0.02)
        gate.set()
        await asyncio.gather(*tasks)
        queue.close()
        return order

    # b waits for the job running (a1) and the one handed to the thread ahead (a2, PREFETCH: a's cost unknown yet),
    # not for a's backlog; while d1 runs, a, now known expensive, is not handed ahead, b is: b2 before a5
    assert limits.PREFETCH == 1 and asyncio.run(scenario()) == ["a1", "a2", "b1", "a3", "d1", "b2", "a5"]


def test_a_client_never_holds_every_worker():
    async def scenario() -> list[str]:
        queue = limits.WorkQueue("program", limits.QueueLimit(2, 8, 4))
        gate, order = threading.Event(), []

        def job(name: str) -> str:
            if name.startswith("a"):
                gate.wait(10)
            order.append(name)
            return name

        tasks = [asyncio.create_task(queue.run("a", job, f"a{k}")) for k in range(3)]
        await asyncio.sleep(0.05)
        b = asyncio.create_task(queue.run("b", job, "b1"))
        assert await asyncio.wait_for(b, 5) == "b1"  # a runs on one worker, the other was left free for b
        gate.set()
        await asyncio.gather(*tasks)
        queue.close()
        return order

    assert asyncio.run(scenario())[0] == "b1"


def test_many_clients_filling_a_queue_cannot_keep_another_out():
    """A full queue takes a new client's job in the place of the newest waiting job of the client holding the
    most (at least two more): many addresses filling it together cannot shut one more out."""
    async def scenario() -> tuple[list, list]:
        queue = limits.WorkQueue("program", limits.QueueLimit(1, 4, 3))
        gate = threading.Event()

        def job(name: str) -> str:
            assert gate.wait(10)
            return name

        tasks = [asyncio.create_task(queue.run("a", job, f"a{k}")) for k in range(3)]
        tasks.append(asyncio.create_task(queue.run("b", job, "b0")))
        await asyncio.sleep(0)  # (each task registers its job at once)
        assert queue.jobs == 4  # full: a holds 3 (one running, one handed ahead, one waiting), b 1
        tasks.append(asyncio.create_task(queue.run("c", job, "c0")))  # takes the place of a's waiting one
        await asyncio.sleep(0)
        with pytest.raises(limits.Busy) as refused:
            await queue.run("d", job, "d0")  # nobody holds two more than d: refused, as a full queue is
        assert not refused.value.per_client
        gate.set()
        done = await asyncio.gather(*tasks, return_exceptions=True)
        queue.close()
        return [type(x).__name__ if isinstance(x, Exception) else x for x in done], [refused.value.status]

    results, status = asyncio.run(scenario())
    assert results == ["a0", "a1", "Busy", "b0", "c0"] and status == [limits.BUSY_STATUS]


def test_a_queue_charges_the_loop_time_of_a_clients_jobs_to_it():
    """What a job's end costs the event loop (its result handed over, the next job sent) is the client's."""
    charged: list[tuple[str, float]] = []

    async def scenario() -> None:
        queue = limits.WorkQueue("program", limits.QueueLimit(1, 4, 2), meter=lambda c, s: charged.append((c, s)))
        assert await queue.run("a", str, 1) == "1" and await queue.run("b", str, 2) == "2"
        queue.close()

    asyncio.run(scenario())
    assert [c for c, _ in charged] == ["a", "b"] and all(s >= 0 for _, s in charged)


def test_the_search_queue_runs_on_one_thread():
    with pytest.raises(ValueError, match="1 thread"):
        limits.WorkQueue("search", limits.QueueLimit(2, 8, 2))
    with pytest.raises(ValueError, match="max-tables-per-client must be a positive number"):
        app_with(max_tables_per_client=0)


# -- slow bodies, on a real server -----------------------------------------------------------------------------
@pytest.fixture(params=["httptools", "h11"])
def live_server(request):
    """A real server with the protocol ``serve`` runs (httptools) and with the h11 fallback."""
    import uvicorn

    protocol = limits.CAPPED_PROTOCOL if request.param == "httptools" else limits.ClientCappedH11Protocol
    config = uvicorn.Config(app_with(body_timeout=0.5), host="127.0.0.1", port=0, log_level="warning",
                            lifespan="on", http=protocol, proxy_headers=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    assert server.started
    yield server.servers[0].sockets[0].getsockname()[1]
    server.should_exit = True
    thread.join(10)


def test_a_slow_body_gets_408_and_the_connection_closes(live_server):
    with socket.create_connection(("127.0.0.1", live_server), timeout=20) as s:
        s.sendall(b"POST /v1/replay HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 1000\r\n\r\n{\"variant\":")
        t0 = time.monotonic()
        data = b""
        while True:  # until the server closes the connection (a bounded wait: the socket's timeout)
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        assert time.monotonic() - t0 < 15  # the body timeout is 0.5 s: a bound on "never answered", not a speed
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408") and b"connection: close" in head.lower()
    assert "did not arrive within 0.5 s" in json.loads(body)["error"]


def test_a_body_in_time_is_answered(live_server):
    with socket.create_connection(("127.0.0.1", live_server), timeout=20) as s:
        body = json.dumps(act_request()).encode()
        s.sendall(b"POST /v1/act HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\n\r\n%s" % (len(body), body[:10]))
        time.sleep(0.2)
        s.sendall(body[10:])
        assert s.recv(4096).startswith(b"HTTP/1.1 200")


def http_get(s: socket.socket, path: str = "/v1/health") -> bytes:
    s.sendall(b"GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % path.encode())
    return s.recv(4096)


def test_an_address_holds_at_most_its_connections_before_any_http(live_server, monkeypatch):
    monkeypatch.setenv(limits.CONNECTIONS_ENV, "2")
    with socket.create_connection(("127.0.0.1", live_server), timeout=20) as a, \
            socket.create_connection(("127.0.0.1", live_server), timeout=20) as b:
        assert http_get(a).startswith(b"HTTP/1.1 200") and http_get(b).startswith(b"HTTP/1.1 200")  # kept alive
        with socket.create_connection(("127.0.0.1", live_server), timeout=20) as c:
            refused = c.recv(4096)
            assert refused.startswith(b"HTTP/1.1 429") and b"retry-after: 1" in refused
            assert c.recv(4096) == b""  # closed
    def room_again() -> bool:  # once the server has seen a and b close
        with socket.create_connection(("127.0.0.1", live_server), timeout=20) as d:
            return http_get(d).startswith(b"HTTP/1.1 200")

    assert until(room_again)


# -- the serve command ---------------------------------------------------------------------------------------
def test_serve_needs_public_beyond_loopback(monkeypatch, capsys):
    import uvicorn

    calls = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.append((app, kw)))
    for host in ("0.0.0.0", "::", "192.168.1.5", "example.org"):
        capsys.readouterr()
        assert cli.main(["serve", "--host", host]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--public" in err and not calls
    assert cli.main(["serve", "--host", "127.0.0.2"]) == 0 and capsys.readouterr().out == ""
    assert cli.main(["serve", "--host", "0.0.0.0", "--public", "--max-tables-per-client", "3"]) == 0
    out = capsys.readouterr().out
    assert "serving publicly on 0.0.0.0:8000" in out and "/v1/act" in out and "/ws" in out
    assert "ismcts" in out and "3 per client" in out and "search 1/" in out
    _, kw = calls[-1]
    assert kw["limit_concurrency"] == limits.MAX_CONNECTIONS and kw["timeout_keep_alive"] == limits.KEEP_ALIVE_SECONDS
    assert kw["ws_max_size"] == 4 * MAX_WS_MESSAGE and kw["http"] is limits.CAPPED_PROTOCOL
    assert limits.CAPPED_PROTOCOL.__name__ == "ClientCappedHttpToolsProtocol"  # httptools: a dependency
    assert cli.main(["serve", "--max-connections-per-client", "0"]) == 2
    assert "max-connections-per-client must be a positive number" in capsys.readouterr().err


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="niceness: POSIX")
def test_work_run_at_a_lower_priority_leaves_the_callers_priority_alone():
    """What starts Numba's worker threads for the searches (limits.run_at_priority): a thread of lower priority,
    whose threads inherit it; the calling thread (the search queue's, which holds the GIL between kernels) keeps
    the loop's priority."""
    mine = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    def inner() -> tuple[int, int]:
        box = {}
        child = threading.Thread(target=lambda: box.setdefault(
            "nice", os.getpriority(os.PRIO_PROCESS, threading.get_native_id())))
        child.start()
        child.join()
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id()), box["nice"]

    there, child = limits.run_at_priority(limits.SEARCH_KERNEL_NICE, inner)
    assert there == child  # inherited
    if mine <= limits.SEARCH_KERNEL_NICE:  # (an already nicer test runner may not go back up)
        assert there == limits.SEARCH_KERNEL_NICE
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == mine
    with pytest.raises(ZeroDivisionError):
        limits.run_at_priority(1, lambda: 1 / 0)


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="niceness: POSIX")
def test_a_queue_of_processes_runs_them_at_its_niceness():
    """The act queue's worker processes (limits.QUEUE_NICE) run below the event loop's priority."""
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    nice = limits.QUEUE_NICE["act"]
    executor = limits.Processes(nice=nice).executor(1)
    try:
        there = executor.submit(os.getpriority, os.PRIO_PROCESS, 0).result(timeout=60)
    finally:
        executor.shutdown()
    assert there == nice or (there == mine > nice)  # (a nicer runner without the right to go back up stays)
    assert os.getpriority(os.PRIO_PROCESS, 0) == mine
