"""Hostile ``cmd:`` programs (agents/cmd.py): whatever an external bot does, the caller never hangs.

Small Python programs that never answer, answer the hello and then hang, flood their output (one line of
megabytes, lines without end), die in the middle of a deal, answer illegal moves, or never read their input.
Each request ends in bounded time with a one-line ValueError naming the program and what happened; the
program is killed (its process group too) and a later request starts it again, until MAX_FAILURES failed
requests in a row make the agent give up at once. The timeouts are short (0.5 s) so that all of this is fast;
the time bounds asserted are generous: they prove "does not hang", not speed."""

import subprocess
import sys
import textwrap
import threading
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from tarocchi_rl.agents.cmd import MAX_FAILURES, MAX_LINE_BYTES, START_SECONDS, CmdAgent, Program, ProgramFailure
from tarocchi_rl.agents.specs import make_agent
from tarocchi_rl.arena import run_arena
from tarocchi_rl.batch import BatchEnv
from tests.support.processes import is_gone

TIMEOUT = 1.0  # seconds per request given to the programs below (their start and hello included)
BOUND = 10.0  # seconds: far more than any of these requests may take (a timeout, a start, a kill)
CLI = str(Path(sys.executable).parent / "tarocchi-rl")

PROGRAM = textwrap.dedent('''
    import json, os, subprocess, sys, time
    mode = sys.argv[1]

    def say(obj):
        sys.stdout.write(json.dumps(obj) + "\\n"); sys.stdout.flush()

    def hello(req):
        say({"type": "hello", "protocol": "tarocchi-bot/1", "name": "hostile", "id": req.get("id")})

    if mode == "deaf":  # never reads its input: says hello unasked, then sleeps
        hello({"id": 0})
        time.sleep(60)
    if mode == "orphan":  # leaves a child holding the output pipe, then exits
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        open(sys.argv[2], "w").write(str(child.pid))
        sys.exit(0)
    n = 0
    for line in sys.stdin:
        req = json.loads(line)
        if req["type"] == "quit":
            break
        if req["type"] == "hello":
            if mode == "silent":
                time.sleep(60)
            hello(req)
            continue
        n += 1
        if mode == "hello_then_hang":
            time.sleep(60)
        elif mode == "hang_first" and not os.path.exists(sys.argv[2]):  # a marker: only the first run hangs
            open(sys.argv[2], "w").close()
            time.sleep(60)
        elif mode == "long_line":
            block = "x" * (1 << 16)
            sys.stdout.write('{"type": "action", "action": "' + block * 80)  # 5 MiB, then a newline
            sys.stdout.write('"}\\n'); sys.stdout.flush()
            time.sleep(60)
        elif mode == "endless_lines":
            while True:
                sys.stdout.write('{"type": "noise"}\\n')
        elif mode == "die_at_2" and n == 2:
            sys.exit(3)
        elif mode == "illegal":
            say({"type": "action", "action": "play:KC" if req["decision"] != "play" else "bid:pass", "id": req["id"]})
        else:  # the first decision of a French deal is a bid: passing is always legal
            say({"type": "action", "action": "bid:pass", "id": req["id"]})
''')


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> str:
    p = tmp_path_factory.mktemp("hostile") / "hostile_bot.py"
    p.write_text(PROGRAM)
    return str(p)


def agent_of(program: str, mode: str, *extra: str) -> CmdAgent:
    return CmdAgent(" ".join([sys.executable, program, mode, *extra]), timeout=TIMEOUT, label=f"cmd:{mode}")


def first_bid() -> BatchEnv:
    """One French four-handed deal at its first decision (a bid, where ``bid:pass`` is legal)."""
    env = BatchEnv("french4", 1, seed=0)
    env.keep_history()
    return env


def act_once(agent: CmdAgent, env: BatchEnv | None = None) -> tuple[str | int, float]:
    """The agent's move on ``env`` (or a first bid), or its error message; and the seconds it took."""
    env = env or first_bid()
    t0 = time.monotonic()
    try:
        out: str | int = int(agent.act(None, None, env, np.zeros(1, np.int64))[0])
    except ValueError as e:
        out = str(e)
    return out, time.monotonic() - t0


def assert_one_line_error(out: str | int, *fragments: str) -> None:
    assert isinstance(out, str), f"expected an error, got the move {out}"
    assert out.startswith("cmd:") and "\n" not in out and len(out) < 1000, out
    for fragment in fragments:
        assert fragment in out, out


@pytest.mark.parametrize("mode,fragments", [
    ("silent", [f"no answer within {START_SECONDS:g} s to hello"]),
    ("hello_then_hang", [f"no answer within {TIMEOUT:g} s to request 1 (french4, seat 0, bid decision"]),
    ("long_line", [f"a line longer than the {MAX_LINE_BYTES:,} bytes allowed to request 1"]),
    ("endless_lines", ['answered {"type": "noise"} (not the id 1) to request 1']),
    ("deaf", [f"no answer within {TIMEOUT:g} s to request 1"]),
    ("illegal", ["on request 1 (french4, seat 0, bid decision", "illegal"]),
])
def test_a_hostile_program_fails_its_request_in_bounded_time(program, mode, fragments):
    agent = agent_of(program, mode)
    threads = threading.active_count()
    out, seconds = act_once(agent)
    assert_one_line_error(out, f"cmd:{mode}: ", *fragments)
    assert seconds < BOUND
    if mode == "illegal":  # it answered this request (wrongly): it keeps running
        assert agent.proc is not None and agent.proc.poll() is None
    else:  # out of step: killed and reaped
        assert agent.proc is None
    proc = agent.proc
    agent.close()
    assert agent.proc is None and (proc is None or proc.returncode is not None)
    assert threading.active_count() == threads  # no reader thread left behind


def test_a_program_that_dies_mid_deal_is_restarted_for_the_next_game(program):
    agent = agent_of(program, "die_at_2")
    env = first_bid()
    assert isinstance(act_once(agent, env)[0], int)  # request 1: a pass
    first = agent.proc
    out, seconds = act_once(agent, env)  # request 2: it exits with status 3
    assert_one_line_error(out, "closed its output (status 3) on request 2")
    assert seconds < BOUND and agent.proc is None and first is not None and first.returncode == 3
    move, _ = act_once(agent)  # the next game: a new run of the program
    assert isinstance(move, int) and agent.proc is not None and agent.proc is not first
    agent.close()


def test_a_program_that_hangs_once_works_again_on_the_next_game(program, tmp_path):
    agent = agent_of(program, "hang_first", str(tmp_path / "marker"))
    out, seconds = act_once(agent)
    assert_one_line_error(out, f"no answer within {TIMEOUT:g} s to request 1")
    assert seconds < BOUND
    for _ in range(MAX_FAILURES + 1):  # every later game is played by a fresh run, which never sees the old output
        move, seconds = act_once(agent)
        assert isinstance(move, int) and seconds < BOUND
    assert agent.failures == 0 and agent.gave_up is None
    agent.close()


def test_after_max_failures_in_a_row_every_call_fails_at_once(program):
    agent = agent_of(program, "hello_then_hang")
    for _ in range(MAX_FAILURES):
        assert_one_line_error(act_once(agent)[0], f"no answer within {TIMEOUT:g} s")
    out, seconds = act_once(agent)
    assert_one_line_error(out, f"gave up on the program after {MAX_FAILURES} failed requests in a row",
                          f"no answer within {TIMEOUT:g} s")
    assert seconds < TIMEOUT / 2 and agent.proc is None  # no restart, no wait


def test_a_flood_of_megabytes_does_not_grow_memory(program):
    agent = agent_of(program, "long_line")
    tracemalloc.start()
    try:
        out, _ = act_once(agent)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert_one_line_error(out, "longer than")
    assert peak < 4 * MAX_LINE_BYTES  # the program wrote five times the cap; at most the cap is buffered


def test_a_program_that_never_reads_its_input_cannot_block_the_writer(program):
    """A request larger than the pipe's buffer, to a program that reads nothing: the write stops at the deadline,
    and closing it (quit cannot be written either) still ends it."""
    prog = Program([sys.executable, program, "deaf"])
    t0 = time.monotonic()
    with pytest.raises(ProgramFailure, match="does not read its input"):
        prog.send(b"x" * (4 * MAX_LINE_BYTES) + b"\n", time.monotonic() + TIMEOUT, "request 1")
    prog.close()
    assert time.monotonic() - t0 < BOUND
    assert prog.proc.returncode is not None


def test_close_kills_the_programs_process_group(program, tmp_path):
    """A program that exits leaving a child holding its output: the request times out (the pipe never ends) and
    the child is killed with the program's group."""
    pid_file = tmp_path / "child.pid"
    agent = agent_of(program, "orphan", str(pid_file))
    out, seconds = act_once(agent)
    assert_one_line_error(out, f"no answer within {START_SECONDS:g} s to hello")
    assert seconds < BOUND
    child = int(pid_file.read_text())
    deadline = time.monotonic() + BOUND
    while not is_gone(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert is_gone(child)


def test_the_arena_with_a_hanging_program_stops_with_one_line(program):
    spec = f'cmd:"{sys.executable} {program} hello_then_hang",timeout={TIMEOUT}'
    t0 = time.monotonic()
    with pytest.raises(ValueError) as err:
        run_arena("french4", [make_agent(spec), "random"], deals=2, seed=1, make_agent=make_agent)
    assert time.monotonic() - t0 < BOUND
    assert_one_line_error(str(err.value), f"no answer within {TIMEOUT:g} s to request 1")


def test_web_tables_sharing_a_hanging_program_each_fail_in_bounded_time(program):
    """The server's case: one agent shared by the tables (under a lock). The first table fails on the timeout,
    the next ones too (each with a new run of the program), then at once: none hangs."""
    from tarocchi_rl.web.table import SeatBot, Table

    agent = agent_of(program, "hello_then_hang")
    lock = threading.Lock()
    for table in range(MAX_FAILURES + 1):
        seats = [SeatBot("cmd", agent, lock, fast=False) for _ in range(3)] + [None]
        t0 = time.monotonic()
        with pytest.raises(ValueError) as err:
            Table.deal("french4", {}, seats, seed=table).advance()
        assert time.monotonic() - t0 < BOUND
        expected = "gave up" if table == MAX_FAILURES else f"no answer within {TIMEOUT:g} s"
        assert_one_line_error(str(err.value), expected)
    assert agent.proc is None


def test_eval_with_a_hanging_program_is_one_line_and_exit_2(program):
    out = subprocess.run([CLI, "eval", "--variant", "french4", "--deals", "1", "--agents",
                          f'cmd:"{sys.executable} {program} hello_then_hang",timeout={TIMEOUT},random'],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith("error: cmd:") and out.stderr.count("\n") == 1
    assert f"no answer within {TIMEOUT:g} s" in out.stderr
