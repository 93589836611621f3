"""compose: one agent per kind of decision (issue 15 part 5): each row reaches the agent of its kind, the spec
parses with nested options and refuses what it cannot mean, and it plays in the arena and over tarocchi-bot/1."""

import json

import numpy as np
import pytest

from tarocchi_rl.agents.specs import make_agent, parse_compose_spec, split_agent_specs
from tarocchi_rl.arena import run_arena
from tarocchi_rl.bot import BotServer, Referee
from tarocchi_rl.core import phases as ph
from tarocchi_rl.core.state import PHASE
from tarocchi_rl.policies import HeuristicAgent
from tarocchi_rl.policies.compose import ComposeAgent
from tarocchi_rl.variants import french, mineo, piedmont, tarok
from tarocchi_rl.variants.phases import PHASE_NAMES

PHASES_OF_KIND = {"bid": {mineo.EARLY, mineo.AUCTION, french.BID, mineo.SCOMMESSA, mineo.RIVANTO, french.CHELEM,
                          french.POIGNEE, piedmont.ACCUSO, tarok.KING_CALL, tarok.TALON_CHOICE},
                  "discard": {ph.DISCARD}, "play": {ph.PLAY}}


class Recorder(HeuristicAgent):
    """The heuristic, noting the phase of every game it is asked about."""

    def __init__(self, seed=0):
        super().__init__(seed)
        self.phases = set()

    def act(self, obs, mask, env, idx):
        self.phases |= {PHASE_NAMES[p] for p in env.state.meta[idx, PHASE]}
        return super().act(obs, mask, env, idx)


@pytest.mark.parametrize("variant", ["mineo", "piedmont3", "piedmont4", "french3", "french4"])
def test_each_kind_of_decision_reaches_its_own_agent(variant):
    parts = {k: Recorder(k) for k in range(3)}
    agent = ComposeAgent(dict(zip(("bid", "discard", "play"), parts.values(), strict=True)))
    options = {"accuso": True} if variant == "piedmont4" else {}
    r = run_arena(variant, [agent, "heuristic"], deals=60, seed=3, options=options, progress=False)
    assert r["deals"] == 60
    for kind, rec in zip(("bid", "discard", "play"), parts.values(), strict=True):
        assert rec.phases <= {PHASE_NAMES[p] for p in PHASES_OF_KIND[kind]}, (kind, rec.phases)
    assert bool(parts[0].phases) == (variant != "piedmont3")  # the three-handed game has no auction or commitment
    assert parts[2].phases == {"play"} and parts[1].phases == {"discard"}


def test_composed_of_the_heuristic_everywhere_plays_as_the_heuristic():
    a = run_arena("french4", [make_agent("compose:rest=heuristic"), "random"], deals=80, seed=5, progress=False)
    b = run_arena("french4", ["heuristic", "random"], deals=80, seed=5, progress=False)
    assert [r["mean_payoff_per_deal"] for r in a["table"]] == [r["mean_payoff_per_deal"] for r in b["table"]]


def test_the_spec_keeps_nested_options_and_refuses_what_it_cannot_mean():
    assert split_agent_specs("compose:bid=heuristic,play=ismcts:iterations=50,c=0.7,random") == [
        "compose:bid=heuristic,play=ismcts:iterations=50,c=0.7", "random"]
    assert parse_compose_spec("bid=heuristic,play=ismcts:iterations=50,c=0.7,rest=random") == {
        "bid": "heuristic", "discard": "random", "play": "ismcts:iterations=50,c=0.7"}
    agent = make_agent("compose:bid=random,rest=heuristic")
    assert agent.name == "compose:bid=random,rest=heuristic" and agent.legal_by_construction
    for bad, why in [("compose:bid=heuristic", "no agent for discard, play"), ("compose:play=x,play=y", "twice"),
                     ("compose:foo=random", "expected kind=SPEC"), ("compose:bid=,rest=random", "names no agent"),
                     ("compose:rest=compose:rest=random", "nested compose"), ("compose:rest=nonsense", "unknown")]:
        with pytest.raises(ValueError, match=why):
            make_agent(bad)


def test_a_composed_bot_answers_over_the_protocol():
    """The bot protocol serves a compose spec: a whole deal refereed, every answer legal."""
    bot = BotServer("compose:bid=random,rest=heuristic", make_agent)
    ref = Referee()
    msg = ref.handle(json.dumps({"type": "new", "variant": "mineo", "seed": 4}))
    steps = 0
    while msg["type"] == "turn":
        ans = bot.handle(json.dumps(msg["request"]))
        assert ans["type"] == "action", ans
        msg = ref.handle(json.dumps({"type": "apply", "action": ans["action"]}))
        steps += 1
    assert msg["type"] == "over" and steps > 40 and sum(msg["payoffs"]) == 0
    assert np.isfinite(msg["payoffs"]).all()
