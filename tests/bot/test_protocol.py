"""The tarocchi-bot/1 server (tarocchi_rl.bot.BotServer) and the referee: handshake, answers from the seat's view
alone, every malformed or impossible request answered by an error line naming the problem, the bot serving on
afterwards; the real `tarocchi-rl bot` process over a pipe."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tarocchi_rl.agents.specs import make_agent
from tarocchi_rl.bot import PROTOCOL, BotServer, Referee
from tarocchi_rl.game import make
from tarocchi_rl.search.seat_view import rebuild
from tarocchi_rl.variants import VARIANTS
from tarocchi_rl.views import Views, seat_request

CLI = str(Path(sys.executable).parent / "tarocchi-rl")


def first_request(variant: str, seed: int = 1, steps: int = 0) -> dict:
    ref = Referee()
    msg = ref.handle(json.dumps({"type": "new", "variant": variant, "seed": seed}))
    bot = BotServer("heuristic", make_agent)
    for _ in range(steps):
        ans = bot.handle(json.dumps(msg["request"]))
        msg = ref.handle(json.dumps({"type": "apply", "action": ans["action"]}))
        assert msg["type"] == "turn"
    return msg["request"]


def test_hello_names_the_protocol_and_capabilities():
    bot = BotServer("heuristic", make_agent)
    h = bot.handle('{"type": "hello", "id": 7, "protocol": "tarocchi-bot/1"}')
    assert h["type"] == "hello" and h["protocol"] == PROTOCOL and h["id"] == 7
    assert h["capabilities"] == ["act"]
    assert h["variants"] == list(VARIANTS)  # every registered variant
    assert "search" in BotServer("ismcts:iterations=20", make_agent).capabilities()
    wrong = bot.handle('{"type": "hello", "protocol": "tarocchi-bot/9"}')
    assert wrong["type"] == "error" and "tarocchi-bot/1" in wrong["error"]


def test_a_bot_trained_on_one_variant_says_so_and_refuses_the_others():
    mineo = BotServer("bot:mineo", make_agent)
    assert mineo.handle('{"type": "hello"}')["variants"] == ["mineo"]
    assert BotServer("ismcts:net=bot:french3,iterations=4", make_agent).hello()["variants"] == ["french3"]
    req = first_request("french3", steps=3)
    out = mineo.handle(json.dumps(req))
    assert out["type"] == "error" and out["error"] == "variant: this bot plays mineo, not french3"


@pytest.mark.parametrize("variant", VARIANTS)
def test_heuristic_over_the_protocol_plays_as_the_heuristic_on_the_real_game(variant):
    """The heuristic answering from a rebuilt position chooses what it chooses on the true state: the request
    carries all it uses (and it does not peek). The engine's own deals (tarok deals again a hand without a
    tarok)."""
    direct = make_agent("heuristic")
    bot = BotServer("heuristic", make_agent)
    g = make(variant)
    for seed in range(2):
        v = Views(g, g.new_state(seed)._env.state.deck[0, : g.deck.n_cards].tolist())
        while not v.is_terminal():
            p = v.current_player()
            env = v.state._env
            a = int(direct.act(env.observe(np.array([p])), env.legal_mask()[:1], env, np.array([0]))[0])
            ans = bot.handle(json.dumps({"type": "act", "id": 1, **seat_request(v, p)}))
            assert ans == {"type": "action", "action": v.action_to_string(a), "id": 1}
            v.apply(a)


@pytest.mark.parametrize("variant", ["tarok3", "tarok4"])
def test_a_tarok_talon_is_seen_in_the_order_dealt(variant):
    """The talon is laid out in the order dealt (its sets are its consecutive slices): the position rebuilt from
    any seat's request holds the true talon, so a bot's talon:k is the real set k, and the heuristic bot takes the
    set it takes on the true state. Forehand bids three (the others passed), then the king call (tarok4)."""
    g = make(variant)
    n = g.num_players
    direct = make_agent("heuristic")
    bot = BotServer("heuristic", make_agent)
    for seed in range(4):
        v = Views(g, g.new_state(seed)._env.state.deck[0, : g.deck.n_cards].tolist())
        for text in ["bid:pass"] * (n - 1) + ["bid:three"]:
            v.apply(g.string_to_action(text))
        while not any(v.action_to_string(a).startswith("talon:") for a in v.legal_actions()):
            v.apply(v.legal_actions()[0])  # tarok4: the king call
        stock = v.state.deal()["stock"]
        for p in range(n):
            req = seat_request(v, p)
            assert rebuild(g, p, req["hand"], req["history"]).state.deal()["stock"] == stock
        p = v.current_player()
        env = v.state._env
        a = int(direct.act(env.observe(np.array([p])), env.legal_mask()[:1], env, np.array([0]))[0])
        ans = bot.handle(json.dumps({"type": "act", **seat_request(v, p)}))
        assert ans == {"type": "action", "action": v.action_to_string(a)} and ans["action"].startswith("talon:")


def test_search_answers_are_reproducible_and_carry_statistics():
    req = first_request("french4", seed=3, steps=4)
    req["want"] = ["search"]
    a = BotServer("ismcts:iterations=200", make_agent).handle(json.dumps(req))
    b = BotServer("ismcts:iterations=200", make_agent).handle(json.dumps(req))
    assert a == b and a["type"] == "action"
    visits = a["search"]["visits"]
    assert a["action"] in visits and sum(visits.values()) == a["search"]["iterations"] > 0


def test_unsupported_want_is_an_error_naming_the_capabilities():
    req = first_request("mineo")
    req["want"] = ["probabilities"]
    ans = BotServer("heuristic", make_agent).handle(json.dumps(req))
    assert ans["type"] == "error" and "probabilities" in ans["error"] and "capabilities" in ans["error"]


def bad_requests() -> list[tuple[object, str]]:
    """(request line or object, a fragment the error must contain)."""
    good = first_request("french4", seed=3, steps=5)
    hist = good["history"]

    def with_(**kw):
        r = dict(good)
        r.update(kw)
        return r

    def without(key):
        return {k: v for k, v in good.items() if k != key}

    return [
        ("not json at all", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        ({"type": "dance"}, "type"),
        (with_(colour="red"), "unknown field 'colour'"),
        (without("seat"), "seat: missing"),
        (with_(seat="2"), "seat: expected int"),
        (with_(seat=True), "seat: expected int"),
        (with_(seat=7), "seat must be 0..3"),
        (with_(variant="bridge"), "variant: unknown 'bridge'"),
        (with_(options={"excuse_last_trick": "never"}), "options"),
        (with_(options={"colour": 1}), "options"),
        (with_(hand=good["hand"][:-1]), "hand"),
        (with_(hand=good["hand"][:-1] + ["ZZ"]), "unknown card 'ZZ'"),
        (with_(hand=good["hand"][:-1] + [good["hand"][0]]), "named twice"),
        (with_(history=hist + ["1:play:KC"]), f"history[{len(hist)}]"),
        (with_(history=hist[:-1] + ["1:fly:away"]), f"history[{len(hist) - 1}]"),
        (with_(history=hist[:-1] + [42]), f"history[{len(hist) - 1}]"),
        (with_(history="0:bid:pass"), "history: expected list"),
        (with_(decision="play"), "decision"),
        (with_(want=["everything"]), "want: unknown"),
        ("{" * 100, "nested too deeply"),
    ]


def test_every_bad_request_gets_an_error_line_and_the_bot_keeps_serving():
    bot = BotServer("heuristic", make_agent)
    good = first_request("french4", seed=3, steps=5)
    expected = bot.handle(json.dumps(good))
    assert expected["type"] == "action"
    for req, fragment in bad_requests():
        line = req if isinstance(req, str) else json.dumps({**req, "id": 99})
        ans = bot.handle(line)
        assert ans["type"] == "error", (req, ans)
        assert fragment in ans["error"], (fragment, ans["error"])
        if not isinstance(req, str):
            assert ans["id"] == 99
        assert bot.handle(json.dumps(good)) == expected  # still serving, same answer


def test_the_bot_process_over_a_pipe():
    """The real command: hello, bad lines, a good request, EOF ends it cleanly; nothing on stderr."""
    good = first_request("mineo", seed=4, steps=3)
    lines = [json.dumps({"type": "hello", "id": 0}), "garbage", json.dumps({**good, "seat": 9}), "",
             json.dumps(good), json.dumps({"type": "quit"}), json.dumps(good)]
    out = subprocess.run([CLI, "bot", "--agent", "heuristic"], input="\n".join(lines) + "\n", text=True,
                         capture_output=True, timeout=120)
    assert out.returncode == 0, out.stderr
    answers = [json.loads(x) for x in out.stdout.splitlines()]
    assert [a["type"] for a in answers] == ["hello", "error", "error", "action", "bye"]  # nothing after quit
    assert out.stderr == ""
    eof = subprocess.run([CLI, "bot", "--agent", "heuristic"], input=json.dumps(good), text=True,
                         capture_output=True, timeout=120)
    assert eof.returncode == 0 and json.loads(eof.stdout)["type"] == "action"
    bad = subprocess.run([CLI, "bot", "--agent", "nonsense"], input="", text=True, capture_output=True,
                         timeout=120)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "unknown agent spec" in bad.stderr


def test_referee_refuses_bad_lines_and_illegal_actions():
    ref = Referee()
    assert "no deal" in ref.handle('{"type": "apply", "action": "bid:pass"}')["error"]
    t = ref.handle('{"type": "new", "variant": "piedmont3", "seed": 1}')
    assert t["type"] == "turn" and t["request"]["type"] == "act"
    assert "illegal" in ref.handle('{"type": "apply", "action": "play:KC"}')["error"]
    assert ref.handle('{"type": "new", "variant": "x"}')["type"] == "error"
    assert ref.handle('{"type": "new", "variant": "mineo", "seed": -1}')["type"] == "error"
    assert ref.handle('{"type": "new", "variant": "mineo", "bogus": 1}')["type"] == "error"


def test_an_id_is_an_int_or_a_string_and_a_bad_one_is_not_echoed():
    server = BotServer("heuristic", make_agent)
    for bad in (True, 1.5, [1], {"a": 1}):
        answer = server.handle(json.dumps({"type": "hello", "id": bad}))
        assert answer["type"] == "error" and "id" not in answer and answer["error"].startswith("id: expected"), bad
    assert server.handle('{"type": "hello", "id": "x7"}')["id"] == "x7"
    assert server.handle('{"type": "hello", "id": 0}')["id"] == 0
