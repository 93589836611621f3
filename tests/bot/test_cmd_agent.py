"""The conformance kit: ``cmd:"PROGRAM ARGS"`` agents in the duplicate arena (agents/cmd.py).

An external program that speaks tarocchi-bot/1 plays in ``tarocchi-rl eval``; a program that hangs, answers
garbage, an error or an illegal move, or exits, stops the run with one line that quotes the request."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tarocchi_rl.agents.cmd import START_SECONDS
from tarocchi_rl.agents.specs import make_agent, split_agent_specs
from tarocchi_rl.arena import run_arena

CLI = str(Path(sys.executable).parent / "tarocchi-rl")

FAKE_BOT = textwrap.dedent('''
    import json, sys, time
    mode = sys.argv[1]
    for line in sys.stdin:
        req = json.loads(line)
        if req["type"] == "quit":
            break
        if req["type"] == "hello":
            if mode == "silent_hello":
                time.sleep(60)
            out = {"type": "hello", "protocol": "tarocchi-bot/1", "name": "fake", "capabilities": ["act"]}
        elif mode == "hang":
            time.sleep(60)
        elif mode == "garbage":
            sys.stdout.write("what?\\n"); sys.stdout.flush(); continue
        elif mode == "error":
            out = {"type": "error", "error": "I give up", "id": req["id"]}
        elif mode == "illegal":
            out = {"type": "action", "action": "play:KC" if req["decision"] != "play" else "bid:pass",
                   "id": req["id"]}
        elif mode == "exit":
            sys.exit(3)
        out["id"] = req.get("id")
        sys.stdout.write(json.dumps(out) + "\\n"); sys.stdout.flush()
''')


@pytest.fixture(scope="module")
def fake_bot(tmp_path_factory) -> str:
    p = tmp_path_factory.mktemp("bot") / "fake_bot.py"
    p.write_text(FAKE_BOT)
    return str(p)


def test_split_agent_specs_keeps_quoted_commands_whole():
    assert split_agent_specs('cmd:"prog --agent ismcts:iterations=5,seed=1",timeout=3,heuristic') == [
        'cmd:"prog --agent ismcts:iterations=5,seed=1",timeout=3', "heuristic"]
    with pytest.raises(ValueError, match="unclosed"):
        split_agent_specs('cmd:"prog,heuristic')


@pytest.mark.parametrize("variant", ["mineo", "french3"])
def test_the_heuristic_through_the_protocol_plays_exactly_as_in_process(variant):
    """Duplicate arena, the bot process against the in-process heuristic: every game ends the same for both
    (mean payoff difference exactly 0), through complete deals."""
    spec = f'cmd:"{CLI} bot --agent heuristic",timeout=60'
    r = run_arena(variant, [spec, "heuristic"], deals=2, seed=5, make_agent=make_agent)
    assert r["games"] > 0
    assert [row["mean_payoff_per_deal"] for row in r["table"]] == [0.0, 0.0]
    assert r["table"][0]["bids"] == r["table"][1]["bids"]  # the same auctions, seat for seat


@pytest.mark.parametrize("mode,fragment", [
    ("hang", "no answer within 1 s to request 1"),
    ("silent_hello", f"no answer within {START_SECONDS:g} s to hello"),
    ("garbage", "(not JSON)"),
    ("error", "I give up"),
    ("illegal", "illegal action"),
    ("exit", "closed its output (status 3)"),
])
def test_a_misbehaving_program_stops_the_arena_with_the_request_quoted(fake_bot, mode, fragment):
    spec = f'cmd:"{sys.executable} {fake_bot} {mode}",timeout=1'
    agent = make_agent(spec)
    with pytest.raises(ValueError, match="cmd:") as err:
        run_arena("french4", [agent, "random"], deals=1, seed=1, make_agent=make_agent)
    msg = str(err.value)
    assert fragment in msg, msg
    if mode not in ("silent_hello",):
        assert "french4, seat" in msg and "decision" in msg


def test_eval_with_a_failing_program_is_one_line_and_exit_2(fake_bot):
    out = subprocess.run([CLI, "eval", "--variant", "mineo", "--deals", "1", "--agents",
                          f'cmd:"{sys.executable} {fake_bot} error",timeout=5,random'],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert out.stderr.startswith("error: cmd:") and out.stderr.count("\n") == 1 and "I give up" in out.stderr
    missing = subprocess.run([CLI, "eval", "--deals", "1", "--agents", 'cmd:"/no/such/program",random'],
                             capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2 and "cannot start" in missing.stderr and missing.stderr.count("\n") == 1


def test_the_check_before_a_long_run_ends_the_program_it_started():
    """check_plays is handed a throwaway copy of an agent: a program's copy answers one decision and is closed."""
    from tarocchi_rl.arena import check_plays

    agent = make_agent(f'cmd:"{CLI} bot --agent heuristic",timeout=60')
    check_plays(agent, "mineo")
    assert agent.proc is None
