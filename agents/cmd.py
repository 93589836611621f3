"""``cmd:"PROGRAM ARGS"``: any external program that speaks ``tarocchi-bot/1`` as an agent (the conformance kit).

Spec: ``cmd:"PROGRAM ARGS"[,timeout=SECONDS]`` (the quotes keep commas inside the command; the arguments:
:data:`CMD`). The program is started when first needed, greeted with ``hello`` (it must answer with the
protocol's name), then gets one ``act`` request per decision of its seats: exactly what that seat knows
(:func:`tarocchi_rl.views.seat_request`), never the hidden cards. See docs/bot-protocol.md.

The program is a stranger: nothing it does can hang the caller or grow its memory without bound.

- Every wait has a deadline: ``timeout`` covers writing a request and reading its answer; the hello, which
  waits for the program's start too (an interpreter's imports), has at least :data:`START_SECONDS`;
  :meth:`CmdAgent.close` waits :data:`QUIT_SECONDS` for the program to exit after ``quit``,
  then kills it. The pipes are non-blocking and waited on with ``poll`` in the caller's thread: no reader
  thread, no queue, so there is nothing to outlive a program and a restarted one never sees its
  predecessor's output (each run has its own :class:`Program` with its own buffer).
- An answer line is read in chunks into a buffer of at most :data:`MAX_LINE_BYTES` (+1): a longer line is an
  error for that request, and a program that floods its output only fills its own pipe. Its stderr goes to
  ``/dev/null``. Answers are parsed by :func:`tarocchi_rl.bounded.loads` (nesting depth, integer digits).
- The program runs in a process group of its own; ending it kills the whole group (helpers it started too)
  and reaps it, so no zombie or thread is left behind. Open programs are closed at exit.

Failures. A request that fails is a one-line ValueError naming the program and the request (the arena stops
with it). Two kinds:

- the program is out of step: no answer in time, its exit or closed output, input it does not read, an
  over-long line, a line that is not a JSON object answering this request's ``id``, a bad hello, or a program
  that cannot be started. The program is killed; the next request starts it afresh (a new game is played
  by a new run of it).
- the program answered this request, wrongly: an ``error`` answer, or an unknown, malformed or illegal
  action. It keeps running (the protocol lets a bot keep serving after an error).

After :data:`MAX_FAILURES` failed requests in a row (of either kind; an accepted move resets the count) the
agent gives up: the program is ended and every later call fails at once with the same line, without
restarting it, so a broken program costs at most ``MAX_FAILURES`` timeouts.
"""

from __future__ import annotations

import atexit
import json
import math
import os
import select
import shlex
import signal
import subprocess
import time
import weakref
from typing import Any

import numpy as np
from numpy.typing import NDArray

from tarocchi_rl.bounded import CHUNK, BoundedInputError, loads
from tarocchi_rl.policies import Agent
from tarocchi_rl.views import Views, core_game, seat_request

from .args import Arg
from .registry import AgentKind, register_kind

PROTOCOL = "tarocchi-bot/1"
DEFAULT_TIMEOUT = 10.0
MAX_TIMEOUT = 3600.0  # seconds per request: the longest a spec may ask for
START_SECONDS = 5.0  # seconds the hello may take at least, the program's start included (a busy machine, imports)
MAX_LINE_BYTES = 1 << 20  # one answer line of the program (1 MiB); a longer one is an error
MAX_FAILURES = 3  # failed requests in a row before the agent gives up on its program
QUIT_SECONDS = 1.0  # how long close() lets the program exit after ``quit`` before killing it
KILL_SECONDS = 2.0  # how long to wait for a killed program to be reaped
SHOWN_CHARS = 200  # of what the program wrote, quoted in an error message
MAX_ACTION_CHARS = 64  # of an answer's action string (the longest real one is about 20)
TIMEOUT = Arg("timeout", "number", "seconds per request (the hello: at least 5)", default=DEFAULT_TIMEOUT, lo=0.0,
              hi=MAX_TIMEOUT, above=True)


class ProgramFailure(Exception):
    """The program is out of step with the protocol (the message says how); it must be ended."""


def _clip(text: object) -> str:
    """``text`` on one line, at most :data:`SHOWN_CHARS` characters (for quoting a stranger in an error)."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= SHOWN_CHARS else flat[:SHOWN_CHARS] + "..."


def _ready(fd: int, event: int, deadline: float) -> bool:
    """Whether ``fd`` is ready for ``event`` (``POLLIN``, ``POLLOUT``) before ``deadline``; a closed pipe counts as
    ready (the read or write that follows says so). ``poll``, not ``select``: a server's descriptors may pass 1024."""
    left = deadline - time.monotonic()
    if left <= 0:
        return False
    poller = select.poll()
    poller.register(fd, event)
    return bool(poller.poll(math.ceil(left * 1000)))


class Program:
    """One run of the external program: its process (a group of its own) and its output buffer."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     bufsize=0, start_new_session=True)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin, self.stdout = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        os.set_blocking(self.stdin, False)
        os.set_blocking(self.stdout, False)
        self.buffer = bytearray()  # output read but not yet consumed: at most MAX_LINE_BYTES + 1 bytes
        self.scanned = 0  # bytes of the buffer known to hold no newline
        _OPEN.add(self)

    def status(self, seconds: float = 0.0) -> str:
        """The exit status (waiting up to ``seconds`` for it), or ``still running``."""
        try:
            return f"status {self.proc.wait(timeout=seconds)}"
        except subprocess.TimeoutExpired:
            return "still running"

    def send(self, data: bytes, deadline: float, what: str) -> None:
        """Write all of ``data`` to the program's stdin before ``deadline`` (ProgramFailure otherwise)."""
        view = memoryview(data)
        while view:
            if not _ready(self.stdin, select.POLLOUT, deadline):
                raise ProgramFailure(f"does not read its input: {what} not written within the timeout")
            try:
                view = view[os.write(self.stdin, view):]
            except BlockingIOError:
                continue
            except OSError:  # BrokenPipeError: it closed its input or exited
                raise ProgramFailure(f"the program has exited ({self.status(QUIT_SECONDS)}) before {what}") from None

    def read_line(self, deadline: float, timeout: float, what: str) -> bytes:
        """The next line of output (without its newline) before ``deadline`` (ProgramFailure otherwise)."""
        while True:
            end = self.buffer.find(b"\n", self.scanned)
            if end >= 0:  # the buffer never holds more than MAX_LINE_BYTES + 1 bytes: the line is within the cap
                line = bytes(self.buffer[:end])
                del self.buffer[: end + 1]
                self.scanned = 0
                return line
            self.scanned = len(self.buffer)
            if len(self.buffer) > MAX_LINE_BYTES:
                raise ProgramFailure(f"answered a line longer than the {MAX_LINE_BYTES:,} bytes allowed to {what}")
            if not _ready(self.stdout, select.POLLIN, deadline):
                raise ProgramFailure(f"no answer within {timeout:g} s to {what}")
            try:
                chunk = os.read(self.stdout, min(CHUNK, MAX_LINE_BYTES + 1 - len(self.buffer)))
            except BlockingIOError:
                continue
            if not chunk:
                raise ProgramFailure(f"the program closed its output ({self.status(QUIT_SECONDS)}) on {what}")
            self.buffer += chunk

    def close(self) -> None:
        """Say quit and give the program :data:`QUIT_SECONDS` to exit, then :meth:`kill` what is left."""
        if self.proc.poll() is None:
            try:
                self.send(b'{"type":"quit"}\n', time.monotonic() + QUIT_SECONDS, "quit")
                if self.proc.stdin is not None:
                    self.proc.stdin.close()  # end of input: a program that ignores quit sees it
                self.status(QUIT_SECONDS)
            except (ProgramFailure, OSError):  # it does not read its input: no point in waiting
                pass
        self.kill()

    def kill(self) -> None:
        """Kill the program's process group (itself and what it started), reap it, close the pipes."""
        _OPEN.discard(self)
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:  # the group is gone already
            pass
        self.status(KILL_SECONDS)
        for pipe in (self.proc.stdin, self.proc.stdout):
            try:
                if pipe is not None:
                    pipe.close()
            except OSError:
                pass


_OPEN: set[Program] = set()  # programs running now, ended at exit


@atexit.register
def _close_all() -> None:
    for program in list(_OPEN):
        program.close()


_AGENTS: weakref.WeakSet[CmdAgent] = weakref.WeakSet()  # the agents of this process (stop_all)


def stop_all(reason: str) -> None:
    """Every agent of this process stops (:meth:`CmdAgent.stop`): a server shutting down waits for no program."""
    for agent in list(_AGENTS):
        agent.stop(reason)


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
        self.command, self.timeout = command, TIMEOUT.check("cmd spec: timeout", timeout)
        self.name = label or f"cmd:{command}"
        self.program: Program | None = None
        self.requests = 0
        self.failures = 0  # failed requests in a row
        self.gave_up: str | None = None  # the error every call raises once MAX_FAILURES is reached
        self.hello: dict[str, Any] = {}
        self._views: dict[int, Views] = {}  # per game slot: its views so far
        _AGENTS.add(self)

    @property
    def proc(self) -> subprocess.Popen[bytes] | None:
        """The running program's process, or None."""
        return None if self.program is None else self.program.proc

    # -- the process ----------------------------------------------------------------------------------------
    def _running(self) -> Program:
        """The program, started and greeted if it is not running (ProgramFailure when that fails)."""
        if self.program is not None:
            return self.program
        try:
            self.program = Program(self.argv)
        except OSError as e:
            raise ProgramFailure(f"cannot start {self.argv[0]!r}: {e.strerror or e}") from None
        hello = self._exchange({"type": "hello", "id": 0, "protocol": PROTOCOL}, "hello",
                               max(self.timeout, START_SECONDS))
        if hello.get("type") != "hello" or hello.get("protocol") != PROTOCOL:
            raise ProgramFailure(f"the program does not speak {PROTOCOL}: it answered {_clip(json.dumps(hello))} "
                                 "to hello")
        self.hello = hello
        return self.program

    def _exchange(self, message: dict[str, Any], what: str, timeout: float | None = None) -> dict[str, Any]:
        """Send one request and read its answer, a JSON object, within ``timeout`` (the spec's by default;
        ProgramFailure otherwise)."""
        program = self.program
        assert program is not None
        timeout = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        program.send(json.dumps(message, separators=(",", ":")).encode() + b"\n", deadline, what)
        line = program.read_line(deadline, timeout, what)
        try:
            answer = loads(line)
        except BoundedInputError as e:
            shown = _clip(repr(line[:SHOWN_CHARS].decode("utf-8", "replace")))
            reason = str(e)
            kind = "not JSON" if reason.startswith(("not valid JSON", "not UTF-8")) else _clip(reason)
            raise ProgramFailure(f"answered {shown} ({kind}) to {what}") from None
        if not isinstance(answer, dict):
            raise ProgramFailure(f"answered {_clip(json.dumps(answer))} (not an object) to {what}")
        return answer

    def close(self) -> None:
        """Say quit and end the program (called at exit too); the next request starts it again."""
        program, self.program = self.program, None
        if program is not None:
            program.close()

    def stop(self, reason: str) -> None:
        """Give up now, from any thread: every later call fails at once with ``reason`` (no program is started
        again) and the running program is killed, so that a request waiting for its answer fails at once (its
        output ends; that request's thread reaps it)."""
        self.gave_up = reason
        program = self.program
        if program is not None:
            try:
                os.killpg(program.proc.pid, signal.SIGKILL)
            except OSError:  # the group is gone already
                pass

    def _kill(self) -> None:
        """End a program out of step at once (no quit: it would not be read); the next request starts it again."""
        program, self.program = self.program, None
        if program is not None:
            program.kill()

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
        idx = np.arange(env.batch_size) if idx is None else np.asarray(idx, np.int64)
        out = np.empty(len(idx), np.int64)
        for k, i in enumerate(idx.tolist()):
            out[k] = self.act_views(self._views_of(env, i))
        return out

    def act_views(self, views: Views) -> int:
        """The program's move for the seat to act in ``views`` (a one-line ValueError otherwise). What the bot
        protocol's server (``tarocchi-rl bot``, ``POST /v1/act``) calls with the position it rebuilt from a request:
        that position's deck may not replay its history (the rebuild repairs the hidden cards as the view grows),
        but its views are the seat's own."""
        if self.gave_up is not None:
            raise ValueError(self.gave_up)
        try:
            a = self._move(views)
        except ValueError as e:
            self._count_failure(str(e))
            raise
        self.failures = 0
        return a

    def _count_failure(self, message: str) -> None:
        self.failures += 1
        if self.failures >= MAX_FAILURES:
            self.close()
            self.gave_up = (f"{self.name}: gave up on the program after {self.failures} failed requests in a row "
                            f"(the last: {message.removeprefix(self.name + ': ')})")

    def _move(self, v: Views) -> int:
        """The program's move in the position of ``v``: a legal action id, or a one-line ValueError."""
        seat = v.current_player()
        self.requests += 1
        req = {"type": "act", "id": self.requests, **seat_request(v, seat)}
        what = (f"request {self.requests} ({req['variant']}, seat {seat}, {req['decision']} decision after "
                f"{len(req['history'])} steps)")
        try:
            self._running()
            answer = self._exchange(req, what)
            if answer.get("id") != req["id"]:
                raise ProgramFailure(f"answered {_clip(json.dumps(answer))} (not the id {req['id']}) to {what}")
        except ProgramFailure as e:
            self._kill()
            raise ValueError(f"{self.name}: {e}") from None
        if answer.get("type") == "error":
            raise ValueError(f"{self.name}: error on {what}: {_clip(answer.get('error'))}")
        action = answer.get("action")
        if answer.get("type") != "action" or not isinstance(action, str):
            raise ValueError(f"{self.name}: answered {_clip(json.dumps(answer))} to {what}")
        if len(action) > MAX_ACTION_CHARS:
            raise ValueError(f"{self.name}: on {what}: an action of {len(action):,} characters "
                             f"(at most {MAX_ACTION_CHARS}): {_clip(action)}")
        try:
            a = v.state.string_to_action(action)
        except ValueError as e:
            raise ValueError(f"{self.name}: on {what}: {_clip(e)}") from None
        if a not in v.legal_actions():
            raise ValueError(f"{self.name}: on {what}: {_clip(v.illegal_message(a))}")
        return int(a)


CMD = register_kind(AgentKind(
    "cmd", "an external program speaking tarocchi-bot/1 (docs/bot-protocol.md)",
    build=lambda values, seed, label: CmdAgent(values["command"], values["timeout"], label=label),
    args=(Arg("command", "text", "a command line (in double quotes when it holds commas)", positional=True,
              required=True, metavar='"PROGRAM ARGS"'), TIMEOUT)))
