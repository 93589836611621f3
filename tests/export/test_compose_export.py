"""A composed bot directory (agents/compose_bot.py): ``export --agent compose:...`` writes one exported policy per
distinct part, ``onnx:DIR`` loads it as a ComposeAgent that plays each kind with its part (the same actions as
composing the parts by hand), the bot protocol serves it, and a damaged compose.json is a one-line error."""

import json

import pytest

from tarocchi_rl.agents.compose_bot import COMPOSE_FILE, load_composed_bot
from tarocchi_rl.agents.specs import make_agent
from tarocchi_rl.arena import run_arena
from tarocchi_rl.bot import BotServer, Referee
from tarocchi_rl.cli import main
from tarocchi_rl.policies import ComposeAgent
from tarocchi_rl.policies.onnx_policy import OnnxPolicyError


@pytest.fixture(scope="module")
def composed(tmp_path_factory, checkpoint, bot):
    """bid: the exported bot (copied), discard: heuristic, play: the checkpoint (exported again)."""
    out = tmp_path_factory.mktemp("composed") / "mineo-compose"
    spec = f"compose:bid=onnx:{bot},discard=heuristic,play=ppo:{checkpoint}"
    assert main(["export", "--agent", spec, "--out", str(out), "--eval-deals", "4", "--golden", "8"]) == 0
    return out


def test_the_directory_holds_each_distinct_part_once(composed):
    m = json.loads((composed / COMPOSE_FILE).read_text())
    assert m["format"] == "tarocchi-compose/1" and m["variant"] == "mineo"
    assert m["kinds"] == {"bid": {"bot": "parts/bid"}, "discard": {"agent": "heuristic"}, "play": {"bot": "parts/play"}}
    assert sorted(p.name for p in (composed / "parts").iterdir()) == ["bid", "play"]
    assert set(m["evaluation"]["opponents"]) == {"heuristic", "random"}
    assert "| discard | heuristic |" in (composed / "README.md").read_text()


def test_it_plays_as_its_parts_composed_by_hand(composed, bot):
    agent = make_agent(f"onnx:{composed}")
    assert isinstance(agent, ComposeAgent)
    by_hand = ComposeAgent({"bid": make_agent(f"onnx:{bot}"), "discard": make_agent("heuristic"),
                            "play": make_agent(f"onnx:{composed}/parts/play")})
    a = run_arena("mineo", [agent, "random"], deals=30, seed=5, progress=False)
    b = run_arena("mineo", [by_hand, "random"], deals=30, seed=5, progress=False)
    assert a["table"][0]["mean_payoff_per_deal"] == b["table"][0]["mean_payoff_per_deal"]


def test_the_bot_protocol_serves_a_composed_bot(composed):
    ref = Referee()
    msg = ref.handle(json.dumps({"type": "new", "variant": "mineo", "seed": 2}))
    server = BotServer(f"onnx:{composed}", make_agent)
    for _ in range(200):  # a whole deal, every seat played by the composed bot
        if msg["type"] != "turn":
            break
        ans = server.handle(json.dumps(msg["request"]))
        assert ans["type"] == "action", ans
        msg = ref.handle(json.dumps({"type": "apply", "action": ans["action"]}))
    assert msg["type"] == "over" and sum(msg["payoffs"]) == 0


@pytest.mark.parametrize("edit, message", [
    (lambda m: m.update(format="x"), "format"),
    (lambda m: m["kinds"].pop("play"), "kinds"),
    (lambda m: m["kinds"].update(play={"bot": "../../etc"}), "kinds.play"),
    (lambda m: m["kinds"].update(play={"bot": "parts/missing"}), "missing"),
    (lambda m: m["kinds"].update(play={"agent": "ismcts"}), "kinds.play"),
    (lambda m: m.update(variant="french3"), "plays mineo"),
])
def test_a_damaged_compose_json_is_an_error_naming_the_field(composed, tmp_path, edit, message):
    import shutil

    copy = tmp_path / "c"
    shutil.copytree(composed, copy)
    m = json.loads((copy / COMPOSE_FILE).read_text())
    edit(m)
    (copy / COMPOSE_FILE).write_text(json.dumps(m))
    with pytest.raises(OnnxPolicyError, match=message):
        load_composed_bot(copy)


@pytest.mark.parametrize("spec, message", [
    ("compose:bid=ismcts:iterations=10,rest=heuristic", "trained policies"),
    ("compose:bid=heuristic,rest=random", "at least one trained policy"),
    ("compose:bid=ppo:/no/such.pt,rest=heuristic", "no/such"),
])
def test_bad_composed_exports_are_one_line_errors(spec, message, tmp_path, capsys):
    assert main(["export", "--agent", spec, "--out", str(tmp_path / "o"), "--eval-deals", "0"]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()
    assert not list(tmp_path.glob(".o.export-*"))  # the staging directory is gone too
