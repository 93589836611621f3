"""Who is one person in the challenges' statistics (tarocchi_rl.web.players, docs/web.md "Who is one person"): one
client replaying a deal under new player ids or on new connections stays one person with one deal; a player token
outlives a restart (the database's key) and only its first start of a deal counts; new tokens per address are
limited; a forged or foreign token is none."""

import datetime as dt
import json

import pytest

from tarocchi_rl import cli
from tarocchi_rl.web.games import counted_challenge_games, games_stats
from tarocchi_rl.web.players import NEW_PLAYERS_BURST, PlayerTokens, address_group
from tarocchi_rl.web.store import ChallengeResult, Finished, NewGame, open_store
from tests.support.challenges import play, server
from tests.support.records import random_record
from tests.support.web_client import LocalClient


def stats(tmp_path, capsys) -> dict:
    """games stats --json's one challenge row."""
    capsys.readouterr()
    assert cli.main(["games", "stats", "--db", f"sqlite:///{tmp_path / 'g.db'}", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["challenges"]
    return row


def test_one_client_replaying_a_deal_is_one_person(tmp_path, capsys):
    """Issue 52's client: the same deal played again under a new player id, on a new connection, with its first
    token and with a forged one; every play after the first is practice, and stats count one person, one deal."""
    start = {"type": "challenge", "name": "small", "deal": 0}

    def first_state(ws, msg: dict) -> dict:  # (the deal's first answer says how it counts; left unfinished)
        ws.send_json(msg)
        return ws.receive_json()

    with LocalClient(server(tmp_path)) as client:
        with client.websocket_connect("/ws") as ws:
            first, _ = play(ws, start)
            token = first["challenge"]["player"]
            again, _ = play(ws, {**start, "player": "another-id-of-mine"})  # a new id, the same connection
        with client.websocket_connect("/ws") as ws:
            fresh = first_state(ws, start)  # a new connection, no token: a new one, but the address played the deal
        with client.websocket_connect("/ws") as ws:
            back = first_state(ws, {**start, "player": token})  # the first token on a new connection
        forged = token[:16] + format(int(token[16:], 16) ^ 1, "016x")
        with client.websocket_connect("/ws") as ws:
            fake = first_state(ws, {**start, "player": forged})
    assert first["challenge"]["counted"] is True and first["practice"] is False
    assert again["practice"] is True  # finished, stored as practice
    for msg, why in ((again, "on this connection"), (fresh, "from your address"), (back, "you started this deal"),
                     (fake, "from your address")):
        assert msg["challenge"]["counted"] is False, msg["challenge"]
        assert why in msg["challenge"]["why"]
    assert back["challenge"]["player"] == token  # a valid token is kept
    assert fake["challenge"]["player"] not in (token, forged)  # a forged one is none: a new one was given
    row = stats(tmp_path, capsys)
    assert (row["deals"], row["people"]) == (1, 1)
    assert row["mean_person_minus_bot"] == first["challenge"]["difference"]


def test_a_token_outlives_a_restart_and_only_its_first_start_of_a_deal_counts(tmp_path, capsys):
    with LocalClient(server(tmp_path)) as client, client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "challenge", "name": "small", "deal": 1})
        started = ws.receive_json()  # the deal shown, then left unfinished: abandoned when the connection closes
        token = started["challenge"]["player"]
        first, _ = play(ws, {"type": "challenge", "name": "small", "deal": 0, "player": token})
    with LocalClient(server(tmp_path)) as client, client.websocket_connect("/ws") as ws:  # a new server process
        again, _ = play(ws, {"type": "challenge", "name": "small", "deal": 1, "player": token})
        zero, _ = play(ws, {"type": "challenge", "name": "small", "deal": 0, "player": token})
    assert again["challenge"]["player"] == token  # signed with the database's key: still valid
    # the new process does not know of the earlier starts (its memory is its own): the stats do, from the store
    assert again["challenge"]["counted"] is True and zero["challenge"]["counted"] is True
    row = stats(tmp_path, capsys)
    assert (row["deals"], row["people"]) == (1, 1)  # deal 0's first game; deal 1's first start was abandoned
    assert row["mean_person_minus_bot"] == first["challenge"]["difference"]


def test_new_tokens_per_address_are_limited_and_a_deal_without_one_is_practice(tmp_path):
    with LocalClient(server(tmp_path)) as client:
        tokens = []
        for _ in range(NEW_PLAYERS_BURST + 1):
            with client.websocket_connect("/ws") as ws:
                ws.send_json({"type": "challenge", "name": "small", "deal": 0})
                tokens.append(ws.receive_json()["challenge"])
    given = [t["player"] for t in tokens[:-1]]
    assert len(set(given)) == NEW_PLAYERS_BURST
    assert "player" not in tokens[-1] and tokens[-1]["counted"] is False
    assert "new ones for today" in tokens[-1]["why"]


class Conn:
    """A connection as the players' memory sees it (the server's shared.Conn): a key, by identity."""


AT = dt.datetime(2026, 3, 1, 12)
KEY = "k" * 32  # a challenge's key


def challenge_game(gid: str, person: str, deal: int, minutes: int, practice: bool = False) -> NewGame:
    return NewGame(gid.ljust(32, "0"), "french3", {}, practice, AT + dt.timedelta(minutes=minutes),
                   (("bot", "heuristic"), ("person", person), ("bot", "heuristic")), KEY, deal)


def test_stats_count_each_persons_first_start_of_a_deal_if_it_finished_and_is_no_practice(db_url):
    record = random_record("french3", 3)
    you = record["result"]["payoffs"][1]
    store = open_store(db_url)
    store.write([ChallengeResult(KEY, d, "small", "french3", "bot:french3", 1, you - 1 - d, record, AT)
                 for d in range(2)])
    games = [
        (challenge_game("a0", "t-a", 0, 1), None),  # abandoned: the deal was shown, and so ...
        (challenge_game("a1", "t-a", 0, 2), record),  # ... this second start does not count
        (challenge_game("a2", "t-a", 1, 3), record),  # counts: +2
        (challenge_game("b0", "t-b", 0, 4, practice=True), record),  # a practice first start ...
        (challenge_game("b1", "t-b", 0, 5), record),  # ... and so not this one either
        (challenge_game("c0", "t-c", 0, 6), record),  # counts: +1
        (challenge_game("c1", "t-c", 0, 7), None),  # (in progress: a later start, nothing)
    ]
    for game, rec in games:
        store.write([game] + ([Finished(game.id, rec, game.created)] if rec is not None else []))
    rows = store.challenge_games()
    store.close()
    assert [g["game"][:2] for g in counted_challenge_games(rows)] == ["a2", "c0"]
    (row,) = games_stats(db_url)["challenges"]
    assert (row["deals"], row["people"]) == (2, 2)
    assert row["mean_person_minus_bot"] == pytest.approx(1.5)


def test_player_tokens_are_signed_and_new_ones_are_budgeted_per_address():
    players, other = PlayerTokens(b"1" * 32), PlayerTokens(b"2" * 32)
    token = players.issue()
    assert players.verify(token) == token[:16] and other.verify(token) is None
    assert players.verify(token.upper()) is None and players.verify(token + "0") is None
    assert players.verify(None) is None and players.verify(["x"]) is None
    deal = ("k", 0)
    for k in range(NEW_PLAYERS_BURST):  # one /64: its addresses share a budget
        assert players.admit(None, f"2001:db8:1:2::{k + 1}", Conn(), deal).token is not None
    assert players.admit(None, "2001:db8:1:2::ff", Conn(), deal).token is None
    assert players.admit(None, "2001:db8:1:3::1", Conn(), deal).token is not None  # another /64
    assert players.admit(token, "2001:db8:1:2::ff", Conn(), deal).counted  # a token of its own needs no budget
    assert address_group("::ffff:192.0.2.1") == "192.0.2.1" == address_group("192.0.2.1")
    assert address_group("testclient") == "testclient"


def test_a_deal_shown_at_one_address_is_practice_for_another_token_there_not_elsewhere():
    players = PlayerTokens(b"1" * 32)
    deal, a, b = ("k", 3), players.issue(), players.issue()
    conn = Conn()
    first = players.admit(a, "198.51.100.7", conn, deal)
    assert first.counted
    players.started(first, conn, deal)
    assert not players.admit(b, "198.51.100.7", Conn(), deal).counted  # another browser behind the same address
    assert players.admit(b, "198.51.100.8", Conn(), deal).counted  # another address
    assert players.admit(b, "198.51.100.7", Conn(), ("k", 4)).counted  # another deal
    assert not players.admit(a, "198.51.100.8", Conn(), deal).counted  # the same token anywhere
