"""``POST /v1/act`` with a fast bot answered on the event loop when it is cheap (tarocchi_rl/web/inline.py): within
a rebuild budget (a request over it goes to the worker processes, its deal and, for a while, its client with it),
within a share of the loop per client; the answers are the bot's own either way."""

import json
import time

import pytest

from tarocchi_rl.agents.specs import make_agent
from tarocchi_rl.bot import BotServer, Referee
from tarocchi_rl.game import make
from tarocchi_rl.search.seat_view import Budget, OverBudget, ViewCache, rebuild
from tarocchi_rl.web import inline
from tarocchi_rl.web.bots import BotPool
from tarocchi_rl.web.inline import InlineAct


def deal_requests(variant: str = "french4", seed: int = 1) -> list[dict]:
    """Every act request of one deal played by the heuristic, in order."""
    heuristic = BotServer("heuristic", make_agent)
    referee = Referee()
    msg = referee.handle(json.dumps({"type": "new", "variant": variant, "seed": seed}))
    out = []
    while msg["type"] == "turn":
        out.append(msg["request"])
        msg = referee.handle(json.dumps({"type": "apply", "action": heuristic.handle(json.dumps(msg["request"]))
                                         ["action"]}))
    return out


def test_a_rebuild_over_its_budget_stops_and_leaves_the_cache_usable():
    req = deal_requests()[-1]
    game = make(req["variant"])
    cache = ViewCache()
    with pytest.raises(OverBudget):
        rebuild(game, req["seat"], req["hand"], req["history"], cache=cache, budget=Budget(time.monotonic() - 1))
    again = rebuild(game, req["seat"], req["hand"], req["history"], cache=cache)
    fresh = rebuild(game, req["seat"], req["hand"], req["history"])
    assert again.view(req["seat"]) == fresh.view(req["seat"]) and again.legal_actions() == fresh.legal_actions()


@pytest.fixture
def roomy(monkeypatch):
    """Budgets no machine runs out of: these tests check which path answers and what, not how fast (a loaded CI
    machine can take more than the 5 ms budget for a rebuild that takes 0.3 ms here)."""
    monkeypatch.setattr(inline, "INLINE_SECONDS", 10.0)
    monkeypatch.setattr(inline, "CLIENT_BURST", 10.0)
    monkeypatch.setattr(inline, "TOTAL_SHARE", 10.0)


def test_cheap_requests_are_answered_inline_as_the_bot_answers(roomy):
    pool, loop = BotPool("heuristic", "heuristic", 1), InlineAct()
    reference = BotServer("heuristic", make_agent)
    for req in deal_requests()[::7]:
        text = json.dumps(req)
        assert loop.answer("a", pool, text, req) == reference.handle(text)
    assert loop.answered > 0 and loop.passed_on == 0


def test_a_request_over_budget_goes_on_with_its_deal_and_its_client(roomy, monkeypatch):
    pool, loop = BotPool("heuristic", "heuristic", 1), InlineAct()
    late, other = deal_requests(seed=1)[-1], deal_requests(seed=2)[-1]
    monkeypatch.setattr(inline, "INLINE_SECONDS", -1.0)  # every rebuild is over budget at its first step
    assert loop.answer("greedy", pool, json.dumps(late), late) is None
    assert inline.deal_key(late) in loop.heavy
    monkeypatch.setattr(inline, "INLINE_SECONDS", 10.0)
    assert loop.answer("greedy", pool, json.dumps(other), other) is None  # the client, for PENALTY_SECONDS
    assert loop.answer("honest", pool, json.dumps(late), late) is None  # the deal, for anyone
    assert loop.answer("honest", pool, json.dumps(other), other)["type"] == "action"


def test_a_client_over_its_share_of_the_loop_goes_on(roomy):
    pool, loop = BotPool("heuristic", "heuristic", 1), InlineAct()
    req = deal_requests()[3]
    loop._bucket("flood", time.monotonic()).spend(inline.CLIENT_BURST + 1.0)  # more than its burst used
    assert loop.answer("flood", pool, json.dumps(req), req) is None
    assert loop.answer("other", pool, json.dumps(req), req)["type"] == "action"
