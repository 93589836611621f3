"""Duplicate challenges (tarocchi_rl.web.challenges) over the server: a person plays the deals of a small challenge
and is shown their payoff beside the challenged bot's, which are the arena's on the same decks from the same seat;
playing the bot's own moves at the table scores exactly the bot's payoff (the opponents answer the same); the stored
games carry the challenge and the deal; games stats --json reports the challenge figures; the bot's results are
read back from the database after a restart; bad messages and bad files are one-line errors."""

import json
from pathlib import Path

import numpy as np
import pytest

from tarocchi_rl import cli
from tarocchi_rl.arena import play_games, read_deals_file
from tarocchi_rl.play import make_bot
from tarocchi_rl.shipped import shipped_bots
from tarocchi_rl.variants import VARIANTS
from tarocchi_rl.web import challenges as challenges_module
from tarocchi_rl.web.app import ServerConfig, create_app
from tarocchi_rl.web.challenge_defs import BUILTIN_DEALS, DEALS_DIR, load_challenges
from tarocchi_rl.web.games import bot_rating
from tarocchi_rl.web.store import open_store
from tests.support.challenges import FIRST, FRENCH3, play, server, small_challenge
from tests.support.web_client import LocalClient

ROOT = Path(__file__).resolve().parents[2]
PLAYER = "browser-0123456789"


def arena_result(deck_index: int):
    """The arena's game of bot:french3 at seat 1 between two heuristics on one deck: (payoffs, record)."""
    decks = read_deals_file(FRENCH3, "french3")[FIRST + deck_index : FIRST + deck_index + 1]
    agents = [make_bot("bot:french3", 0, "bot"), make_bot("heuristic", 0, "h")]
    payoffs, _, records = play_games("french3", decks, np.array([[1, 0, 1]]), agents, {}, record=True)
    return [int(p) for p in payoffs[0]], records[0]


def test_a_person_plays_a_challenge_against_the_bots_offline_results(tmp_path, capsys):
    expected = [arena_result(0), arena_result(1)]
    with LocalClient(server(tmp_path)) as client:
        (info,) = client.get("/v1/challenges").json()["challenges"]
        assert info == {"name": "small", "variant": "french3", "options": info["options"], "deals": 2, "seat": 1,
                        "players": ["heuristic", "human", "heuristic"], "bot": "bot:french3", "key": info["key"]}
        with client.websocket_connect("/ws") as ws:
            start = {"type": "challenge", "name": "small", "player": PLAYER}  # an older page's id: no token
            # deal 0: the person plays the bot's own moves; the opponents answer as they did offline
            over0, states = play(ws, {**start, "deal": 0}, expected[0][1]["actions"])
            token = over0["challenge"]["player"]  # the token the server gave, which the page keeps and sends
            # deal 1: the person plays the first legal moves
            over1, _ = play(ws, {**start, "deal": 1, "player": token})
            again, _ = play(ws, {**start, "deal": 1, "player": token})  # again: stored as practice, not counted
    first = {"name": "small", "deal": 0, "deals": 2, "seat": 1, "bot": "bot:french3", "counted": True, "player": token}
    assert all(s["challenge"] == first for s in states)
    assert over0["record"]["actions"] == expected[0][1]["actions"]
    for over, (payoffs, record) in zip((over0, over1), expected, strict=True):
        ch = over["challenge"]
        assert ch["bot_payoff"] == payoffs[1] and ch["bot_record"]["actions"] == record["actions"]
        assert ch["you"] == over["record"]["result"]["payoffs"][1] and ch["difference"] == ch["you"] - payoffs[1]
        assert "practice" not in over["record"] and over["practice"] is False
        assert ch["counted"] is True and ch["player"] == token
    assert over0["challenge"]["you"] == expected[0][0][1] and over0["challenge"]["difference"] == 0
    assert again["practice"] is True and again["record"]["practice"] is True
    assert again["challenge"]["counted"] is False and "before on this connection" in again["challenge"]["why"]

    store = open_store(f"sqlite:///{tmp_path / 'g.db'}")
    games = list(store.finished_games(practice=True))
    store.close()
    assert [(g["challenge"], g["challenge_deal"], g["practice"]) for g in games] == [
        (info["key"], 0, False), (info["key"], 1, False), (info["key"], 1, True)]
    assert all([s["kind"] for s in g["seats"]] == ["bot", "person", "bot"] for g in games)
    assert all(g["seats"][1]["name"] == f"t-{token[:16]}" for g in games)  # the token's id, never its signature

    assert cli.main(["games", "stats", "--db", f"sqlite:///{tmp_path / 'g.db'}", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["challenges"]
    diffs = [over0["challenge"]["difference"], over1["challenge"]["difference"]]
    assert row["variant"] == "french3" and row["bot"] == "bot:french3" and row["challenges"] == ["small"]
    assert row["deals"] == 2 and row["people"] == 1
    assert row["mean_person_minus_bot"] == pytest.approx(np.mean(diffs))
    assert row["person_beat_bot"] == pytest.approx(np.mean([d > 0 for d in diffs]))
    assert row["ci95"][0] <= row["mean_person_minus_bot"] <= row["ci95"][1]
    assert row["bot_rating"] == pytest.approx(bot_rating(np.array(diffs, float)))
    assert row["bot_rating_ci95"][0] <= row["bot_rating"] <= row["bot_rating_ci95"][1]
    assert cli.main(["games", "stats", "--db", f"sqlite:///{tmp_path / 'g.db'}"]) == 0
    assert "challenges (people against the challenged bot" in capsys.readouterr().out
    out = tmp_path / "games.jsonl"
    assert cli.main(["games", "export", "--db", f"sqlite:///{tmp_path / 'g.db'}", "--out", str(out)]) == 0
    exported = [json.loads(line)["stored"]["challenge"] for line in out.read_text().splitlines()]
    assert exported == [{"name": "small", "key": info["key"], "deal": k} for k in (0, 1)]  # practice: --practice
    assert token not in out.read_text()


def test_the_bots_results_are_stored_once_and_read_back_after_a_restart(tmp_path, monkeypatch):
    with LocalClient(server(tmp_path)) as client, client.websocket_connect("/ws") as ws:
        key = client.get("/v1/challenges").json()["challenges"][0]["key"]
        first, _ = play(ws, {"type": "challenge", "name": "small", "deal": 1})

    def played_again(*args, **kw):
        raise AssertionError("the bot's results were played again")

    monkeypatch.setattr(challenges_module, "play_offline", played_again)
    with LocalClient(server(tmp_path)) as client, client.websocket_connect("/ws") as ws:
        second, _ = play(ws, {"type": "challenge", "name": "small", "deal": 1})
    assert second["challenge"]["bot_payoff"] == first["challenge"]["bot_payoff"]
    assert second["challenge"]["bot_record"] == first["challenge"]["bot_record"]
    store = open_store(f"sqlite:///{tmp_path / 'g.db'}")
    assert sorted(store.challenge_results(key)) == [0, 1]  # every deal of the challenge, stored once
    store.close()


@pytest.mark.parametrize(("msg", "error"), [
    ({"name": "nope", "deal": 0}, "name: no challenge 'nope' (this server offers: small)"),
    ({"name": "small", "deal": 2}, "deal: challenge small has deals 0..1, got '2'"),
    ({"name": "small", "deal": "0"}, "deal: challenge small has deals 0..1, got '0'"),
    ({"name": "small", "deal": True}, "deal: challenge small has deals 0..1, got 'True'"),
    ({"name": "small", "deal": 0, "player": "short"}, "player: 8-40 letters, digits, - and _"),
    ({"name": "small", "deal": 0, "seats": []}, "unknown field 'seats' in a challenge message"),
])
def test_bad_challenge_messages_get_one_line_errors(tmp_path, msg, error):
    with LocalClient(server(tmp_path)) as client, client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "challenge", **msg})
        out = ws.receive_json()
    assert out["type"] == "error" and out["error"].startswith(error) and "\n" not in out["error"]


BAD_FILES = [  # (the file's text, or a change to the small challenge; what the one line says)
    ("not json", "not valid JSON"),
    ('{"challenges": []}', 'expected an object {"challenges": [...]} with at least one'),
    ({"colour": "red"}, "unknown field 'colour'"),
    ({"name": "has space"}, "name: 1-40 letters"),
    ({"variant": "skat"}, "variant: unknown 'skat'"),
    ({"seat": 3}, "seat: the person's seat, 0..2, got 3"),
    ({"opponents": ["heuristic"]}, "opponents: a list of 2 bots"),
    ({"opponents": ["heuristic", "random"]}, "the opponent at seat 2 (random) does not play deterministically"),
    ({"bot": "onnx:/somewhere/bot"}, "give 'onnx:/somewhere/bot' a display name (NAME=SPEC)"),
    ({"bot": "x=nosuchkind:1"}, "unknown agent spec"),
    ({"deals": {"file": "missing.jsonl", "count": 2}}, "missing.jsonl"),
    ({"deals": {"file": str(FRENCH3), "count": 65}}, "deals.count: at most 64 deals"),
    ({"deals": [{"hands": [["T1"]], "stock": []}]}, "deals[0]:"),
    ({"options": {"excuse_last_trick": "nowhere"}}, "options:"),
]


@pytest.mark.parametrize(("content", "error"), BAD_FILES)
def test_a_bad_challenges_file_is_one_line_and_serve_exits_2(tmp_path, capsys, content, error):
    path = tmp_path / "c.json"
    if isinstance(content, str):
        path.write_text(content)
    else:
        small_challenge(path, **content)
    assert cli.main(["serve", "--challenges", str(path), "--db", "none"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --challenges {path}") and error in err and err.count("\n") == 1, err


def test_names_clash_with_the_built_ins_and_yaml_files_load(tmp_path, capsys):
    path = small_challenge(tmp_path / "c.json", name="mineo-8", variant="mineo",
                           deals={"file": str(ROOT / "benchmarks/deals/mineo.jsonl.gz"), "count": 1},
                           seat=0, opponents=["heuristic"] * 3, bot="heuristic")
    assert cli.main(["serve", "--challenges", str(path), "--db", "none"]) == 2
    assert "the name 'mineo-8' is taken" in capsys.readouterr().err
    yaml_file = tmp_path / "c.yaml"
    yaml_file.write_text(f"challenges:\n  - name: y\n    variant: french3\n    deals: {{file: {FRENCH3}, count: 1}}\n"
                         "    opponents: [heuristic, strong=bot:french3]\n    bot: heuristic\n")
    (ch,) = load_challenges(str(yaml_file))
    assert ch.players() == ["human", "heuristic", "strong"] and ch.deals == 1 and ch.bot.name == "heuristic"


def test_the_strong_bots_challenges_file_offers_each_variants_strong_bot_on_the_built_in_deals():
    """configs/challenges_strong.yaml: ``VARIANT-strong`` for every variant, the deals of ``VARIANT-8``, heuristic
    opponents, ``strong:VARIANT`` challenged (``serve --challenges`` reads it beside the built-ins)."""
    loaded = {c.name: c for c in load_challenges(str(ROOT / "configs/challenges_strong.yaml"), taken=[
        f"{v}-{BUILTIN_DEALS}" for v in VARIANTS])}
    assert set(loaded) == {f"{v}-strong" for v in VARIANTS}
    for v in VARIANTS:
        ch = loaded[f"{v}-strong"]
        assert ch.variant == v and ch.bot.spec == f"strong:{v}" and ch.deals == BUILTIN_DEALS
        assert ch.players()[0] == "human" and set(ch.players()[1:]) == {"heuristic"}
        assert np.array_equal(ch.decks, read_deals_file(str(ROOT / f"benchmarks/deals/{v}.jsonl.gz"), v)[:8])


def test_the_built_in_challenges_are_the_first_frozen_deals_of_every_variant_with_a_shipped_bot(tmp_path):
    with LocalClient(create_app(ServerConfig(warmup=False))) as client:
        listed = {c["name"]: c for c in client.get("/v1/challenges").json()["challenges"]}
    with_bot = [v for v in VARIANTS if v in shipped_bots()]
    assert len(with_bot) >= 5 and set(listed) == {f"{v}-{BUILTIN_DEALS}" for v in with_bot}
    for v in with_bot:
        c = listed[f"{v}-{BUILTIN_DEALS}"]
        assert c["deals"] == BUILTIN_DEALS and c["seat"] == 0 and c["bot"] == f"bot:{v}"
        assert set(c["players"][1:]) == {"heuristic"}
        shipped = read_deals_file(DEALS_DIR / f"{v}.jsonl", v)
        frozen = read_deals_file(ROOT / "benchmarks" / "deals" / f"{v}.jsonl.gz", v)[:BUILTIN_DEALS]
        assert np.array_equal(shipped, frozen)


def test_the_bot_rating_against_people_is_the_arenas_bradley_terry_with_people_as_one_opponent():
    # 3 deals the bot won, 1 it lost: odds (3 + 0.5) / (1 + 0.5) with the arena's half pseudo-win each way
    assert bot_rating(np.array([-2.0, -1.0, -5.0, 4.0])) == pytest.approx(400 * np.log10(3.5 / 1.5), abs=1e-6)
    assert bot_rating(np.array([0.0, 0.0, 3.0, -3.0])) == pytest.approx(0.0, abs=1e-6)  # ties are halves
    assert bot_rating(np.array([1.0] * 10)) == pytest.approx(400 * np.log10(0.5 / 10.5), abs=1e-6)  # a sweep: finite
