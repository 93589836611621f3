"""The registry of agent kinds and the one ``key=value`` reader: every built-in kind is registered from its module,
listed by ``tarocchi-rl agents`` (text and Markdown), and specs, ``--set`` and ``--option`` split the same way."""

import pytest

from tarocchi_rl.agents.registry import agent_kinds, known_specs
from tarocchi_rl.cli import main
from tarocchi_rl.keyvalue import key_value, key_values, pair_of, split_outside_quotes, unquote

BUILT_IN = {"random", "heuristic", "ppo", "onnx", "bot", "ismcts", "cmd", "compose", "strong"}


def test_every_built_in_kind_is_registered_and_listed(capsys):
    kinds = agent_kinds()
    assert BUILT_IN <= set(kinds)
    assert main(["agents"]) == 0
    text = capsys.readouterr().out
    for kind in kinds.values():
        assert kind.usage() in text.splitlines()
        for a in kind.args:
            assert any(line.split()[:1] == [a.shown_name.split()[0]] for line in text.splitlines()), a.name
    assert main(["agents", "--markdown"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0] == "| spec | argument | type and range | default | meaning |"
    assert "| | `iterations` | int 1..10000000 | 1000 | iterations per decision |" in rows
    assert "| | `DIR` | path | required | a bot directory (written by `tarocchi-rl export`) |" in rows
    assert all(name in known_specs() for name in BUILT_IN)


def test_ranges_and_defaults_are_the_declared_ones():
    ismcts = agent_kinds()["ismcts"]
    values = ismcts.parse("iterations=1e6,rollout=heuristic")
    assert values["iterations"] == 1_000_000 and values["rollout"] == "heuristic" and values["c"] == 0.7
    assert values["time"] is None and values["seed"] is None  # not given: the builder decides
    with pytest.raises(ValueError, match=r"^ismcts spec: c must be >= 0 and <= 100, got 101$"):
        ismcts.parse("c=101")
    with pytest.raises(ValueError, match=r"^ismcts spec: rollout must be random or heuristic, got 'ppo'$"):
        ismcts.parse("rollout=ppo")
    with pytest.raises(ValueError, match=r"^ppo spec: greedy must be true or false, got 'maybe'$"):
        agent_kinds()["ppo"].parse("x,greedy=maybe")
    with pytest.raises(ValueError, match=r"^cmd spec: timeout must be > 0 and <= 3600, got 0$"):
        agent_kinds()["cmd"].parse('"prog",timeout=0')


def test_quoted_and_nested_values():
    cmd = agent_kinds()["cmd"].parse('"prog --agent ismcts:iterations=5,seed=1",timeout=3')
    assert cmd == {"command": "prog --agent ismcts:iterations=5,seed=1", "timeout": 3.0}
    assert agent_kinds()["cmd"].parse("prog --x=1 --y")["command"] == "prog --x=1 --y"  # '=' in a bare piece
    compose = agent_kinds()["compose"].parse('bid=cmd:"p a,b",play=ismcts:iterations=3,net=bot:mineo,rest=random')
    assert compose == {"bid": 'cmd:"p a,b"', "discard": None, "play": "ismcts:iterations=3,net=bot:mineo",
                       "rest": "random"}


def test_one_tokenizer_for_specs_set_and_option():
    assert split_outside_quotes('a=1,cmd:"x,y",b', "specs") == ["a=1", 'cmd:"x,y"', "b"]
    with pytest.raises(ValueError, match="unclosed double quote in specs"):
        split_outside_quotes('cmd:"x', "specs")
    assert pair_of(" iterations = 5 ") == ("iterations", "5")
    assert pair_of("/tmp/a=b") is None and pair_of("plain") is None
    assert key_value("ppo.lr = 1e-4", "--set") == ("ppo.lr", "1e-4")
    assert key_values(["a=1", "b=x=y", "a=2"], "--set") == {"a": "2", "b": "x=y"}
    for bad in ("early_solo", "=3"):
        with pytest.raises(ValueError, match=f"^--option {bad!r}: expected KEY=VALUE$"):
            key_value(bad, "--option", "KEY=VALUE")
    assert unquote('"a b"') == "a b" and unquote('"') == '"' and unquote("x") == "x"
