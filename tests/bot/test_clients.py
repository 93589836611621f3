"""The reference frontends (examples/python_client.py, examples/node_client.mjs) run as programs against the real
`tarocchi-rl referee` and `tarocchi-rl bot`: every variant played to the end with the payoffs of the same deals
played in-process (so the clients relay requests and actions faithfully), a bot's error line ending the run with
status 1 and one `error:` line quoting it, and (node) the probabilities asked of a bot that can give them, checked."""

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tarocchi_rl.agents.specs import make_agent
from tarocchi_rl.bot import VARIANTS, BotServer, play_deal
from tarocchi_rl.variants import get_variant

ROOT = Path(__file__).resolve().parents[2]
CLI = shlex.quote(str(Path(sys.executable).parent / "tarocchi-rl"))
BOT, REFEREE = f"{CLI} bot --agent heuristic", f"{CLI} referee"
NODE = shutil.which("node")
CLIENTS = {
    "python": [sys.executable, str(ROOT / "examples" / "python_client.py")],
    "node": [NODE or "node", str(ROOT / "examples" / "node_client.mjs")],
}
SEED = 3
PAYOFF_LINE = re.compile(r"^(\w+) deal (\d+): payoffs (\[.*\])$")
FAMILY_VARIANTS: dict[str, list[str]] = {}  # rule family (its module's name) -> the protocol's variants of it
for _v in VARIANTS:
    FAMILY_VARIANTS.setdefault(get_variant(_v).rules.__name__.rpartition(".")[2], []).append(_v)


@pytest.fixture(params=sorted(CLIENTS))
def client(request) -> list[str]:
    if request.param == "node" and NODE is None:
        pytest.skip("node is not installed")
    return CLIENTS[request.param]


def run(client: list[str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*client, "--referee", REFEREE, *args], capture_output=True, text=True, timeout=120)


def in_process_payoffs(variant: str, seed: int) -> list[float]:
    """The deal the clients play, with the referee and the heuristic bot called directly."""
    msg = play_deal(BotServer("heuristic", make_agent), variant, seed)
    assert msg["type"] == "over", msg
    return msg["payoffs"]


def payoff_lines(stdout: str) -> dict[tuple[str, int], list[float]]:
    found = [PAYOFF_LINE.match(line) for line in stdout.splitlines()]
    return {(m[1], int(m[2])): json.loads(m[3]) for m in found if m}


@pytest.mark.parametrize("family", sorted(FAMILY_VARIANTS))
def test_every_variant_played_through_the_client_pays_as_in_process(client, family):
    variants = FAMILY_VARIANTS[family]
    r = run(client, "--bot", BOT, "--variants", ",".join(variants), "--deals", "1", "--seed", str(SEED))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("bot: tarocchi-rl heuristic (capabilities: act)\n")
    got = payoff_lines(r.stdout)
    assert len(got) == len(variants) == len(r.stdout.splitlines()) - 1
    assert got == {(v, SEED): in_process_payoffs(v, SEED) for v in variants}


ERROR_BOT = """
import json, sys
for line in sys.stdin:
    req = json.loads(line)
    if req["type"] == "hello":
        out = {"type": "hello", "protocol": "tarocchi-bot/1", "name": "naysayer", "capabilities": ["act"]}
    elif req["type"] == "quit":
        out = {"type": "bye"}
    else:
        out = {"type": "error", "error": "nope"}
    if "id" in req:
        out["id"] = req["id"]
    print(json.dumps(out), flush=True)
    if out["type"] == "bye":
        break
"""


def test_a_bot_that_answers_errors_ends_the_run_with_one_error_line(client, tmp_path):
    script = tmp_path / "naysayer.py"
    script.write_text(ERROR_BOT)
    r = run(client, "--bot", f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}", "--variants", "french3")
    assert r.returncode == 1
    assert r.stdout == "bot: naysayer (capabilities: act)\n"
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "nope" in lines[0], r.stderr


# a heuristic bot that also claims "probabilities": it gives its own action probability SCALE (1.0: a consistent
# answer; else one whose probabilities do not sum to 1), and on quit says on stderr how often it was asked
PROBABILITY_BOT = """
import json, sys
from tarocchi_rl.agents.specs import make_agent
from tarocchi_rl.bot import BotServer
bot, asked = BotServer("heuristic", make_agent), 0
for line in sys.stdin:
    req = json.loads(line)
    want = req.pop("want", None)
    out = bot.handle(json.dumps(req))
    if req["type"] == "hello":
        out["capabilities"].append("probabilities")
    if want == ["probabilities"]:
        asked += 1
        out["probabilities"] = {out["action"]: SCALE}
    print(json.dumps(out), flush=True)
    if out["type"] == "bye":
        print(f"asked for probabilities {asked} times", file=sys.stderr)
        break
"""


@pytest.mark.skipif(NODE is None, reason="node is not installed")
@pytest.mark.parametrize("scale", [1.0, 0.4])
def test_node_client_asks_a_capable_bot_for_probabilities_once_a_deal_and_checks_them(tmp_path, scale):
    script = tmp_path / "probabilities.py"
    script.write_text(PROBABILITY_BOT.replace("SCALE", repr(scale)))
    bot = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"
    r = run(CLIENTS["node"], "--bot", bot, "--variants", "mineo", "--deals", "2", "--seed", str(SEED))
    if scale == 1.0:
        assert r.returncode == 0, r.stderr
        assert payoff_lines(r.stdout) == {("mineo", s): in_process_payoffs("mineo", s) for s in (SEED, SEED + 1)}
        assert r.stderr == "asked for probabilities 2 times\n"
    else:
        assert r.returncode == 1
        assert r.stderr.splitlines() == ["error: the bot's probabilities sum to 0.4, not 1",
                                         "asked for probabilities 1 times"]
