"""A ``tarocchi-rl serve`` in a child process on loopback (:class:`ServerProcess`, every wait bounded by
:data:`WAIT`) and the client steps the store's tests share (:func:`receive`, :func:`play`)."""

import json
import os
import re
import signal
import subprocess
import sys
import threading

SERVER = ("import sys; from tarocchi_rl.web.app import ServerConfig; from tarocchi_rl.web.serve import run_server; "
          "run_server(ServerConfig(db=sys.argv[1], warmup=False), port=0, log_level='info')")
RUNNING = re.compile(r"Uvicorn running on http://127\.0\.0\.1:(\d+)")
WAIT = 60.0  # seconds: the longest wait for a server to start, a message or a commit


class ServerProcess:
    """The server in a child process; its output read by a thread (a full pipe would stall it). ``argv``: the
    command (default: :data:`SERVER` on ``url``), which prints uvicorn's line with the port within ``wait``
    seconds."""

    def __init__(self, url: str, cwd, argv: list[str] | None = None, wait: float = WAIT) -> None:
        self.proc = subprocess.Popen(argv or [sys.executable, "-c", SERVER, url], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, cwd=cwd,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.lines: list[str] = []
        self.port: int | None = None
        self.ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        if not (self.ready.wait(wait) and self.port is not None):
            self.stop(signal.SIGKILL)
            raise AssertionError("the server did not start:\n" + "".join(self.lines))

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)
            m = RUNNING.search(line)
            if m:
                self.port = int(m.group(1))
                self.ready.set()
        self.ready.set()

    def stop(self, sig: int) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        self.proc.wait(WAIT)


def receive(ws) -> dict:
    return json.loads(ws.recv(timeout=WAIT))


def play(ws, msg: dict, moves: int | None = None) -> list[dict]:
    """Play the first legal move until the deal ends (or ``moves`` moves); every message received."""
    seen = [msg]
    while seen[-1]["type"] == "state" and (moves is None or moves > 0):
        ws.send(json.dumps({"type": "act", "action": seen[-1]["table"]["legal"][0]["action"]}))
        seen.append(receive(ws))
        moves = None if moves is None else moves - 1
    return seen
