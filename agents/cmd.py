"""``cmd:"PROGRAM ARGS"``: any external program that speaks ``tarocchi-bot/1`` as an agent (the conformance kit).

Spec: ``cmd:"PROGRAM ARGS"[,timeout=SECONDS]`` (the quotes keep commas inside the command; default timeout
10 s per request). The program is started once, greeted with ``hello`` (it must answer with the protocol's
name), then gets one ``act`` request per decision of its seats: exactly what that seat knows
(:func:`tarocchi_rl.views.seat_request`), never the hidden cards. A request the program does not answer in
time, an ``error`` answer, an unparsable or illegal answer, or the program's exit is a ValueError that quotes
the request (the arena stops with it). See docs/bot-protocol.md.
"""

import atexit
import json
import queue
import shlex
import subprocess
import threading
from typing import Any

import numpy as np
from numpy.typing import NDArray

from tarocchi_rl.policies import Agent
from tarocchi_rl.views import Views, core_game, seat_request

PROTOCOL = "tarocchi-bot/1"
DEFAULT_TIMEOUT = 10.0


class CmdAgent(Agent):
    """An external bot process driven over the protocol (module docstring)."""

    needs_obs = False
    needs_mask = False
    needs_history = True  # the arena keeps each game's actions so the seat's view can be written
    legal_by_construction = False

    def __init__(self, command: str, timeout: float = DEFAULT_TIMEOUT, label: str | None = None) -> None:
        self.argv = shlex.split(command)
        if not self.argv:
            raise ValueError('cmd spec: empty command (cmd:"PROGRAM ARGS")')
        if not timeout > 0:
            raise ValueError(f"cmd spec: timeout must be > 0, got {timeout}")
        self.command, self.timeout = command, float(timeout)
        self.name = label or f"cmd:{command}"
        self.proc: subprocess.Popen[str] | None = None
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.requests = 0
        self.hello: dict[str, Any] = {}
        self._views: dict[int, Views] = {}  # per game slot: its views so far

    # -- the process ----------------------------------------------------------------------------------------
    def _start(self) -> None:
        try:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL, text=True, bufsize=1)
        except OSError as e:
            raise ValueError(f"{self.name}: cannot start {self.argv[0]!r}: {e.strerror}") from None
        threading.Thread(target=self._read, args=(self.proc,), daemon=True).start()
        atexit.register(self.close)
        hello = self._ask({"type": "hello", "id": 0, "protocol": PROTOCOL}, "hello")
        if hello.get("type") != "hello" or hello.get("protocol") != PROTOCOL:
            raise ValueError(f"{self.name}: the program does not speak {PROTOCOL}: it answered {hello} to hello")
        self.hello = hello

    def _read(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            self.lines.put(line)
        self.lines.put(None)  # end of output

    def _ask(self, message: dict[str, Any], what: str) -> dict[str, Any]:
        proc = self.proc
        assert proc is not None and proc.stdin is not None
        try:
            proc.stdin.write(json.dumps(message, separators=(",", ":")) + "\n")
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise ValueError(f"{self.name}: the program has exited (status {proc.poll()}) before {what}") from None
        try:
            line = self.lines.get(timeout=self.timeout)
        except queue.Empty:
            self.close()
            raise ValueError(f"{self.name}: no answer within {self.timeout:g} s to {what}") from None
        if line is None:
            raise ValueError(f"{self.name}: the program closed its output (status {proc.wait()}) on {what}")
        try:
            answer = json.loads(line)
        except json.JSONDecodeError:
            raise ValueError(f"{self.name}: answered {line.strip()[:200]!r} (not JSON) to {what}") from None
        if not isinstance(answer, dict):
            raise ValueError(f"{self.name}: answered {answer!r} (not an object) to {what}")
        return answer

    def close(self) -> None:
        """Say quit and end the process (called at exit too)."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        try:
            assert proc.stdin is not None
            proc.stdin.write('{"type":"quit"}\n')
            proc.stdin.close()
            proc.wait(timeout=2)
        except (OSError, subprocess.TimeoutExpired, AssertionError):
            proc.kill()
            proc.wait()

    # -- the agent protocol ---------------------------------------------------------------------------------
    def _views_of(self, env: Any, i: int) -> Views:
        """Views of game i brought up to date with env.history[i] (replayed from the deal when it changed)."""
        hist = env.history[i]
        deck = env.state.deck[i, : env.spec.deck.n_cards].tolist()
        v = self._views.get(i)
        if v is None or v.deck_ids() != deck or v.state.history != hist[: len(v.state.history)]:
            v = Views(core_game(env.variant, env.options), deck)
        for a in hist[len(v.state.history):]:
            v.apply(a)
        self._views[i] = v
        return v

    def act(self, obs: NDArray[np.float32] | None, mask: NDArray[np.bool_] | None, env: Any,
            idx: NDArray[np.int64] | None = None) -> NDArray[np.int64]:
        if getattr(env, "history", None) is None:
            raise ValueError(f"{self.name} needs the game's history: env.keep_history() (the arena does it)")
        if self.proc is None:
            self._start()
        idx = np.arange(env.batch_size) if idx is None else np.asarray(idx, np.int64)
        out = np.empty(len(idx), np.int64)
        for k, i in enumerate(idx.tolist()):
            v = self._views_of(env, i)
            seat = v.current_player()
            self.requests += 1
            req = {"type": "act", "id": self.requests, **seat_request(v, seat)}
            what = (f"request {self.requests} ({req['variant']}, seat {seat}, {req['decision']} decision after "
                    f"{len(req['history'])} steps)")
            answer = self._ask(req, what)
            if answer.get("type") == "error":
                raise ValueError(f"{self.name}: error on {what}: {answer.get('error')}")
            action = answer.get("action")
            if answer.get("type") != "action" or not isinstance(action, str) or answer.get("id") != req["id"]:
                raise ValueError(f"{self.name}: answered {json.dumps(answer)[:200]} to {what}")
            try:
                a = v.state.string_to_action(action)
            except ValueError as e:
                raise ValueError(f"{self.name}: on {what}: {e}") from None
            if a not in v.legal_actions():
                raise ValueError(f"{self.name}: on {what}: {v.illegal_message(a)}")
            out[k] = a
        return out


def parse_cmd_spec(args: str) -> CmdAgent:
    """``"PROGRAM ARGS"[,timeout=S]`` (or an unquoted command with no commas) -> CmdAgent."""
    text = args.strip()
    timeout = DEFAULT_TIMEOUT
    if text.startswith('"'):
        end = text.find('"', 1)
        if end < 0:
            raise ValueError('cmd spec: unclosed quote (cmd:"PROGRAM ARGS")')
        command, rest = text[1:end], text[end + 1:]
        for part in [p.strip() for p in rest.split(",") if p.strip()]:
            key, eq, val = part.partition("=")
            if key.strip() != "timeout" or not eq:
                raise ValueError(f"cmd spec: unknown argument {part!r} (known: timeout=SECONDS)")
            try:
                timeout = float(val)
            except ValueError:
                raise ValueError(f"cmd spec: timeout must be a number, got {val!r}") from None
    else:
        command = text
    return CmdAgent(command, timeout, label=f"cmd:{args}")
