"""The table of the browser game (tarocchi_rl.web.table), without a server: whole deals of every variant with a
scripted human, what the human's seat is shown (never another seat's hidden card, the Mineo partnership only once
known), illegal moves, the open replay of a record, the variants table."""

import json

import pytest

from tarocchi_rl.play import make_bot
from tarocchi_rl.records import replay
from tarocchi_rl.variants import VARIANTS, get_variant
from tarocchi_rl.web.table import STRING_CHOICES, SeatBot, Table, check_options, replay_steps, variants_info
from tests.support.web_views import check_message


def heuristic_table(variant: str, human: int, seed: int, options: dict | None = None) -> Table:
    n = get_variant(variant).n_players
    seats = [None if k == human else SeatBot("heuristic", make_bot("heuristic", seed + k, "test")) for k in range(n)]
    return Table.deal(variant, options or {}, seats, seed)


def play_out(t: Table) -> list[dict]:
    """The human plays his first legal move each time; returns every message (as the server sends them)."""
    msgs = []
    t.advance()
    while True:
        msgs.append({"type": "over" if t.is_over() else "state", "moves": t.take_moves(),
                     "table": t.snapshot(t.human)})
        if t.is_over():
            return msgs
        t.act(msgs[-1]["table"]["legal"][0]["action"])
        t.advance()


@pytest.mark.parametrize("variant", VARIANTS)
def test_whole_deals_show_the_human_only_what_his_seat_may_see(variant):
    n = get_variant(variant).n_players
    for human, seed in ((0, 1), (n - 1, 2), (1, 3)):  # seat n-1 is the Piedmontese dealer
        t = heuristic_table(variant, human, seed)
        msgs = play_out(t)
        result = t.result()
        record = result["record"]
        assert replay(record).returns() == result["outcome"]["payoffs"] == record["result"]["payoffs"]
        for msg in msgs:
            check_message(msg, record, human)
        moves = [m for msg in msgs for m in msg["moves"]]
        assert [m["index"] for m in moves] == list(range(len(record["actions"])))
        for m, a in zip(moves, record["actions"], strict=True):
            hidden = m["action"] == "discard:?"
            assert m["action"] == a or (hidden and a.startswith("discard:") and m["seat"] != human)
        json.dumps(msgs)


def test_the_mineo_partnership_is_hidden_until_known():
    """In some call deal, seen by a seat that is not the partner, the partnership is hidden at first and shown
    once the called trump falls."""
    seen = 0
    for seed in range(40):
        for human in range(4):
            t = heuristic_table("mineo", human, seed)
            msgs = play_out(t)
            out = t.result()["outcome"]
            if out["contract"] != "call" or out["details"]["partner"] == human:
                continue
            states = [m["table"] for m in msgs if m["table"]["contract"] == "call" and not m["table"]["over"]]
            if states and states[0]["sides"] is None and any(s["sides"] for s in states):
                seen += 1
        if seen >= 2:
            return
    pytest.fail("no Mineo call deal where the partnership was revealed during play")


def test_illegal_and_unknown_moves_change_nothing():
    t = heuristic_table("french3", 0, 5)
    t.advance()
    before = (t.snapshot(0), list(t.views.state.history))
    legal = {a["action"] for a in before[0]["legal"]}
    illegal = next(s for s in ("play:KS", "play:T21", "bid:garde_contre", "discard:KS") if s not in legal)
    for bad, message in ((illegal, "illegal action"), ("play:ZZ", "unknown"), ("", "unknown action"),
                         (9999, "out of range"), (-1, "out of range"), (True, "expected an action string"),
                         (None, "expected an action string"), ("x" * 100, "longer than")):
        with pytest.raises(ValueError, match=message):
            t.act(bad)
        assert (t.snapshot(0), t.views.state.history) == before
    t.act(before[0]["legal"][0]["id"])  # an id works too
    assert t.steps[len(before[1])]["by"] == "human"


def test_forced_moves_of_the_human_play_themselves():
    """French: the human's chelem / poignee 'pass' when it is his only choice, and a single legal card."""
    for seed in range(5):
        t = heuristic_table("french4", 2, seed)
        play_out(t)
        forced = [s for s in t.steps if s["by"] == "forced"]
        assert all(s["seat"] == 2 for s in forced)
        if forced:
            return
    pytest.fail("no forced move in five deals")


def test_options_are_checked():
    assert check_options("piedmont4", {"accuso": True})["accuso"] is True
    for variant, options, message in (("poker", {}, "unknown 'poker'"), ("mineo", [], "expected an object"),
                                      ("mineo", {"colour": 1}, "unknown option"),
                                      ("mineo", {"early_solo": "yes"}, "true or false"),
                                      ("piedmont4", {"accuso_points": 100}, "0..99"),
                                      ("piedmont3", {"honour_5": "sole"}, "honour_5")):
        with pytest.raises(ValueError, match=message):
            check_options(variant, options)
    for name, choices in STRING_CHOICES.items():
        variant = next(v for v in VARIANTS if name in get_variant(v).options)
        for c in choices:
            assert check_options(variant, {name: c})[name] == c


def test_variants_info_describes_every_variant():
    info = {v["name"]: v for v in variants_info()}
    assert list(info) == list(VARIANTS)
    for name, v in info.items():
        spec = get_variant(name)
        assert v["players"] == spec.n_players and v["long_name"] == spec.long_name
        assert {o["name"]: o["default"] for o in v["options"]} == {k: d for k, (_, d) in spec.options.items()}
        assert len(v["actions"]) == spec.n_actions
        for a, text in enumerate(v["actions"]):
            assert spec.rules.string_to_action(text) == a
        for a, text in v["bidding_actions"].items():
            assert spec.rules.string_to_action(text) == int(a)
    assert info["mineo"]["bidding_actions"] == {"126": "bid:pass"}


@pytest.mark.parametrize("variant", ["mineo", "piedmont3", "french4"])
def test_replay_steps_open_every_step(variant):
    t = heuristic_table(variant, 0, 7)
    play_out(t)
    record = t.result()["record"]
    replay(record)
    steps = replay_steps(record)
    assert len(steps) == len(record["actions"]) + 1
    assert steps[0]["move"] is None and steps[-1]["table"]["over"]
    deal = record["deal"]
    dealt = {c for h in deal["hands"] for c in h} | set(deal["stock"])
    assert {c for h in steps[0]["table"]["hands"] for c in h} <= dealt
    for k, step in enumerate(steps[1:]):
        assert step["move"]["action"] == record["actions"][k] and step["table"]["steps"] == k + 1
    assert steps[-1]["table"]["tricks_played"] == len(t.tricks)
