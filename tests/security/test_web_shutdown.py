"""``tarocchi-rl serve`` stops within 10 s of SIGTERM whatever its bots do (issue 52: with a ``cmd:`` bot that hangs
and two requests queued, it was still alive 50 s after SIGTERM, each request waiting for its program's timeout in
turn). Here the program answers its hello and then never answers a move, with a timeout of 300 s; several tables
from several addresses wait for it (one in the program, the others queued), then SIGTERM: the process is gone
within 10 s (polled; nothing else is timed) and so is every run of the program (killed with its process group)."""

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

from tests.support.processes import is_gone

CLI = str(Path(sys.executable).parent / "tarocchi-rl")
START_BOUND = 300.0  # seconds the server may take to start (its warm-up, on a busy machine)
STOP_BOUND = 10.0  # seconds from SIGTERM to the process's end (issue 52)
TABLES = 4  # tables waiting for the program, each from its own address

HANGING = textwrap.dedent('''
    import json, os, sys, time
    open(os.path.join(sys.argv[1], str(os.getpid())), "w").close()  # a mark for each run of the program
    for line in sys.stdin:
        req = json.loads(line)
        if req["type"] == "hello":
            sys.stdout.write(json.dumps({"type": "hello", "protocol": "tarocchi-bot/1", "id": req.get("id")}) + "\\n")
            sys.stdout.flush()
        elif req["type"] == "act":
            time.sleep(3600)  # never answers a move
''')


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def children(pid: int) -> list[int]:
    """The child processes of ``pid`` (Linux's /proc)."""
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with open(task / "children") as f:
            out += [int(x) for x in f.read().split()]
    return out


def wait_healthy(port: int, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + START_BOUND
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the server stopped"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                if s.recv(4096).startswith(b"HTTP/1.1 200"):
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise AssertionError("the server did not start")


def wait_for_the_bot(port: int, k: int, started: threading.Event) -> None:
    """A table from 127.0.5.k whose next move is the hanging bot's (an error or a closed connection ends it)."""
    from websockets.sync.client import connect

    try:
        with connect(f"ws://127.0.0.1:{port}/ws", source_address=(f"127.0.5.{k + 1}", 0), open_timeout=30) as ws:
            ws.send(json.dumps({"type": "start", "variant": "french3", "seats": ["human", "hang", "hang"]}))
            while True:  # the human's moves until a bot's turn: then no answer comes
                msg = json.loads(ws.recv(timeout=None))
                if msg["type"] != "state":
                    return
                started.set()
                ws.send(json.dumps({"type": "act", "action": msg["table"]["legal"][0]["action"]}))
    except Exception:  # noqa: BLE001 - the server went away: what the test waits for
        return


def test_serve_stops_within_10_s_while_a_hanging_program_has_requests_queued(tmp_path):
    marks = tmp_path / "runs"
    marks.mkdir()
    program = tmp_path / "hang.py"
    program.write_text(HANGING)
    port = free_port()
    log = tmp_path / "serve.log"  # (a file: a pipe would be held open by any process that outlived the server)
    proc = subprocess.Popen([CLI, "serve", "--port", str(port), "--db", "none", "--agents",
                             f'hang=cmd:"{sys.executable} {program} {marks}",timeout=300'],
                            stdout=subprocess.DEVNULL, stderr=log.open("w"))
    try:
        wait_healthy(port, proc)
        started = threading.Event()
        tables = [threading.Thread(target=wait_for_the_bot, args=(port, k, started), daemon=True)
                  for k in range(TABLES)]
        for t in tables:
            t.start()
        deadline = time.monotonic() + 60
        while not any(marks.iterdir()) and time.monotonic() < deadline:  # the program runs: a move waits for it
            time.sleep(0.1)
        assert any(marks.iterdir()), "no table reached the program"
        time.sleep(1.0)  # the other tables' moves reach the queue (not a bound: only more work queued)
        workers = children(proc.pid)  # the /v1/act and /v1/replay worker processes
        assert workers
        proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_BOUND
        while proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        alive = proc.poll() is None
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    assert not alive, f"serve was still running {STOP_BOUND:g} s after SIGTERM:\n{log.read_text()[-3000:]}"
    runs = [int(p.name) for p in marks.iterdir()]
    deadline = time.monotonic() + 10
    while not all(is_gone(pid) for pid in runs + workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert runs and all(is_gone(pid) for pid in runs), "a run of the program outlived the server"
    assert all(is_gone(pid) for pid in workers), "a worker process outlived the server"  # (and its resource tracker)
    for t in tables:
        t.join(10)
    assert os.path.exists(program)  # (the program file is the test's: nothing else to clean)
