"""Agent specs and variant options: whatever the input, an agent / a game or a ValueError naming the value,
quickly, writing nothing; every option set that is accepted keeps every payoff within int32."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tarocchi_rl
import tarocchi_rl.agents.ppo  # noqa: F401  torch, imported once here rather than inside a timed example
from tarocchi_rl.agents.ismcts import MAX_ITERATIONS, ISMCTSAgent
from tarocchi_rl.agents.specs import make_agent, split_agent_specs
from tarocchi_rl.variants import VARIANTS, get_variant
from tests.support.reliability import JSON, in_empty_dir

NUMBERS = st.sampled_from(["0", "1", "-1", "1e20", "1e6", "1.5", "inf", "-inf", "nan", "1e-300", "10000001",
                           "99999999999999999999", "3600", "3600.5", "0x10", "", " 7 ", "1_000", "٣"])
ISMCTS_KEYS = ["iterations", "c", "rollout", "workers", "prior", "c_prior", "time", "seed", "depth", "net", "c_puct",
               "mix", ""]
ISMCTS_ARGS = st.lists(st.tuples(st.sampled_from(ISMCTS_KEYS), NUMBERS | st.text(max_size=12))
                       .map(lambda kv: "=".join(kv)) | st.text(max_size=15), max_size=4).map(",".join)
PATH_ARGS = st.lists(st.sampled_from(["greedy=true", "greedy=maybe", "seed=3", "seed=-1", "seed=1e3",
                                      f"seed={2**64}", "threads=0", "threads=2", "threads=99999", "path=",
                                      "fast=1", "/", ".", "nowhere", "a" * 300, "x\x00y"])
                     | st.text(max_size=20), max_size=3).map(",".join)


def _agent_or_value_error(spec):
    with in_empty_dir():
        try:
            agent = make_agent(spec)
        except ValueError:
            return None
    assert hasattr(agent, "act")
    return agent


@given(ISMCTS_ARGS)
def test_any_ismcts_spec(args):
    agent = _agent_or_value_error("ismcts:" + args)
    if agent is not None:
        assert 1 <= agent.iterations <= MAX_ITERATIONS and math.isfinite(agent.c) and math.isfinite(agent.c_prior)
        assert agent.time_budget is None or 0 < agent.time_budget <= 3600
        assert 0 <= agent.mix <= 1 and math.isfinite(agent.c_puct)


@given(st.sampled_from(["ppo:", "onnx:"]), PATH_ARGS)
def test_any_ppo_or_onnx_spec(kind, args):
    _agent_or_value_error(kind + args)  # no such checkpoint or bot in an empty directory: always an error


@given(st.sampled_from(["", "mineo", "nosuch", "../models", "x" * 5000, "a\x00b"]) | st.text(max_size=20),
       PATH_ARGS)
def test_any_shipped_bot_spec(name, args):
    agent = _agent_or_value_error(f"bot:{name},{args}")  # a shipped bot or a ValueError naming the name
    assert agent is None or agent.name.startswith("bot:")


@given(st.sampled_from(["random", "heuristic", "RANDOM", "heuristic:", "random:x", "", "ismcts", "cmd"])
       | st.text(max_size=20).filter(lambda t: not t.strip().lower().startswith("cmd")))
def test_any_agent_spec(spec):
    _agent_or_value_error(spec)


@given(st.text(max_size=60))
def test_split_agent_specs_of_any_text(text):
    try:
        specs = split_agent_specs(text)
    except ValueError:
        return
    assert all(isinstance(s, str) and s for s in specs)


def test_the_observed_ismcts_bugs():
    for spec, msg in (("ismcts:iterations=1e20", "iterations must be >= 1 and <= 10000000, got 1e"),
                      ("ismcts:time=inf", "time must be a finite number"),
                      ("ismcts:c=nan", "c must be a finite number"),
                      ("ismcts:c_prior=inf", "c_prior must be a finite number"),
                      ("ismcts:time=3601", "time must be > 0 and <= 3600"),
                      ("ismcts:iterations=1e9", "iterations must be >= 1 and <= 10000000"),
                      ("ismcts:workers=1000", "workers must be >= 1 and <= 256"),
                      ("ismcts:seed=-1", "seed must be >= 0")):
        with pytest.raises(ValueError, match=msg):
            make_agent(spec)
    assert make_agent("ismcts:iterations=1e6").iterations == 1_000_000
    with pytest.raises(ValueError, match="iterations must be a finite number"):
        ISMCTSAgent(iterations=float("inf"))
    with pytest.raises(ValueError, match="iterations must be an integer"):
        ISMCTSAgent(iterations="many")
    for spec, msg in (("ppo:x,seed=abc", "ppo spec: seed must be an integer"),
                      (f"ppo:x,seed={2**64}", r"ppo spec: seed must be an integer in \[0, 2\*\*63 - 1\]"),
                      ("onnx:x,seed=-1", r"onnx spec: seed must be an integer in \[0, 2\*\*63 - 1\], got -1"),
                      ("ppo:" + "a" * 5000, "ppo spec: cannot use the path"),
                      ("onnx:x,threads=100000", "threads must be >= 1 and <= 1024"),
                      ("onnx:" + "a" * 5000, "onnx spec: cannot use the path"),
                      ("ismcts:prior=" + "a" * 5000, "ismcts spec: cannot use the path")):
        with pytest.raises(ValueError, match=msg):
            make_agent(spec)


# -- variant options ----------------------------------------------------------------------------------------------
OPTION_NAMES = sorted({k for v in VARIANTS for k in get_variant(v).options} | {"speed", ""})
OPTION_VALUES = (JSON | st.integers(-(2**70), 2**70) | st.sampled_from(
    [True, False, 0, 5, 10_000, 10_001, 2**31, 2**40 + 7, -1, "mondo", "angelo", "other_side", "trick_winner"]))


@given(st.sampled_from(VARIANTS), st.dictionaries(st.sampled_from(OPTION_NAMES), OPTION_VALUES, max_size=3))
def test_any_variant_options(variant, options):
    try:
        game = tarocchi_rl.make(variant, **options)
    except ValueError:
        return
    lo, hi = game.spec.utility_bounds(game.options)
    assert -(2**31) <= lo <= hi < 2**31


def test_accuso_points_cannot_overflow_the_payoffs():
    for points in (2**31, 2**40 + 7, 10_001, -1):
        with pytest.raises(ValueError, match=r"accuso_points.*must be in \[0, 10000\]"):
            tarocchi_rl.make("piedmont4", accuso=True, accuso_points=points)
    game = tarocchi_rl.make("piedmont4", accuso=True, accuso_points=10_000)
    assert game.spec.utility_bounds(game.options) == (-90_243, 90_243)
    with pytest.raises(ValueError, match="must be a mapping"):
        get_variant("mineo").resolve_options([("early_solo", True)])
