"""``POST /v1/act?agent=NAME`` for an external program (``serve --agents NAME=cmd:"PROGRAM"``): the position rebuilt
from the request carries the deal's history, so the program is sent exactly what the seat knows (before issue 52
every request was a 400 "needs the game's history: env.keep_history()"). A tiny program records what it is sent;
``tarocchi-rl bot --agent heuristic`` as the program answers every decision of a deal as the heuristic itself."""

import json
import sys
import textwrap
from pathlib import Path

import pytest

from tarocchi_rl.agents.specs import make_agent
from tarocchi_rl.bot import BotServer, Referee
from tarocchi_rl.web.app import ServerConfig, create_app
from tests.support.web_client import LocalClient

TINY = textwrap.dedent('''
    import json, sys
    log = open(sys.argv[1], "a")
    for line in sys.stdin:
        req = json.loads(line)
        if req["type"] == "quit":
            break
        if req["type"] == "hello":
            out = {"type": "hello", "protocol": "tarocchi-bot/1", "name": "tiny"}
        else:
            log.write(line); log.flush()
            out = {"type": "action", "action": "bid:pass"}  # (always legal in a French auction)
        out["id"] = req.get("id")
        sys.stdout.write(json.dumps(out) + "\\n"); sys.stdout.flush()
''')
TIMEOUT = 120  # seconds a program may take to answer (its start included: a busy machine)
CLI = Path(sys.executable).with_name("tarocchi-rl")


def deal_requests(variant: str, seed: int) -> list[dict]:
    """Every act request of a referee's deal played by the heuristic."""
    ref, bot = Referee(), BotServer("heuristic", make_agent)
    msg = ref.handle(json.dumps({"type": "new", "variant": variant, "seed": seed}))
    out = []
    while msg["type"] == "turn":
        out.append(msg["request"])
        msg = ref.handle(json.dumps({"type": "apply", "action": bot.handle(json.dumps(msg["request"]))["action"]}))
    return out


def test_a_cmd_bot_is_sent_what_the_seat_knows(tmp_path):
    program, log = tmp_path / "tiny.py", tmp_path / "requests.jsonl"
    program.write_text(TINY)
    config = ServerConfig(warmup=False, agents=[f'tiny=cmd:"{sys.executable} {program} {log}",timeout={TIMEOUT}'])
    bids = [r for r in deal_requests("french4", 5) if r["decision"] == "bid"]
    assert len(bids) >= 2
    with LocalClient(create_app(config)) as client:
        for k, req in enumerate(bids):
            r = client.post("/v1/act?agent=tiny", json={**req, "id": k})
            assert r.status_code == 200 and r.json() == {"type": "action", "action": "bid:pass", "id": k}, r.text
    sent = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(sent) == len(bids)
    for got, req in zip(sent, bids, strict=True):  # the seat's own view, rebuilt from the request: the same
        assert (got["variant"], got["seat"], got["decision"], got["history"]) == (req["variant"], req["seat"],
                                                                                  req["decision"], req["history"])
        assert sorted(got["hand"]) == sorted(req["hand"])


@pytest.mark.parametrize("variant", ["mineo", "french3"])
def test_a_cmd_bot_answers_every_decision_of_a_deal(variant):
    """``tarocchi-rl bot --agent heuristic`` behind ``cmd:``: every answer is the in-process heuristic's."""
    config = ServerConfig(warmup=False, agents=[f'h2=cmd:"{CLI} bot --agent heuristic",timeout={TIMEOUT}'])
    reference = BotServer("heuristic", make_agent)
    with LocalClient(create_app(config)) as client:
        for req in deal_requests(variant, 2):
            r = client.post("/v1/act?agent=h2", json=req)
            assert r.status_code == 200 and r.json() == reference.handle(json.dumps(req)), r.text
