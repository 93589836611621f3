"""Adding an agent kind is one module: declare its arguments once, register it, and every spec reader knows it.

The kind below stands for such a module (``agents/mykind.py`` would hold exactly these lines): ``make_agent``
builds it from a spec, the one parser checks its arguments (errors naming the spec, the key and the range), and
the spec help and the docs table list it.
"""

import numpy as np
import pytest

from tarocchi_rl.agents.registry import AgentKind, Arg, agent_kinds, register_kind, unregister_kind
from tarocchi_rl.agents.specs import make_agent, spec_help, spec_table_markdown, split_agent_specs
from tarocchi_rl.arena import run_arena
from tarocchi_rl.policies import Agent


class FirstLegal(Agent):
    """Plays the ``x``-th legal action (counted from the first, wrapping round)."""

    needs_obs = False
    legal_by_construction = True

    def __init__(self, x: int, label: str) -> None:
        self.x, self.name = x, label

    def act(self, obs, mask, env, idx):
        legal = [np.flatnonzero(row) for row in mask]
        return np.array([acts[self.x % len(acts)] for acts in legal], np.int64)


def build_first_legal(values, seed, label):
    return FirstLegal(values["x"], label)


MYKIND = AgentKind("mykind", "the x-th legal action (an example kind)", build=build_first_legal,
                   args=(Arg("x", "int", "which legal action, counted from the first", default=0, lo=0, hi=10),))


@pytest.fixture
def mykind():
    register_kind(MYKIND)
    yield MYKIND
    unregister_kind("mykind")


def test_a_registered_kind_is_built_from_its_spec(mykind):
    agent = make_agent("mykind:x=1")
    assert isinstance(agent, FirstLegal) and agent.x == 1 and agent.name == "mykind:x=1"
    assert make_agent("mykind").x == 0  # the declared default
    assert split_agent_specs("mykind:x=2,heuristic") == ["mykind:x=2", "heuristic"]
    r = run_arena("piedmont3", ["mykind:x=1", "random"], deals=2, seed=0, progress=False, make_agent=make_agent)
    assert r["deals"] == 2


@pytest.mark.parametrize("spec, message", [
    ("mykind:x=11", "mykind spec: x must be >= 0 and <= 10, got 11"),
    ("mykind:x=two", "mykind spec: x must be an integer, got 'two'"),
    ("mykind:y=1", "mykind spec: unknown argument 'y' (expected key=value; known: x)"),
    ("mykind:x=1,x=2", "mykind spec: x given twice"),
])
def test_its_arguments_are_checked_by_the_one_parser(mykind, spec, message):
    with pytest.raises(ValueError) as e:
        make_agent(spec)
    assert str(e.value) == message


def test_it_shows_in_the_spec_help_and_the_docs_table(mykind):
    assert "mykind" in agent_kinds()
    help_lines = spec_help().splitlines()
    assert "mykind:key=value[,...]" in help_lines
    assert any(line.split()[:4] == ["x", "int", "0..10", "0"] for line in help_lines)
    assert "| | `x` | int 0..10 | 0 | which legal action, counted from the first |" in spec_table_markdown()


def test_a_kind_name_is_taken_once(mykind):
    with pytest.raises(ValueError, match="registered already"):
        register_kind(AgentKind("mykind", "another", build=build_first_legal))
    unregister_kind("mykind")
    with pytest.raises(ValueError, match="unknown agent spec 'mykind:x=1'"):
        make_agent("mykind:x=1")
