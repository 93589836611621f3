"""`tarocchi-rl games export|stats` on a database written through the store: the filters of export (variant, day,
practice tables), the stats of bots against people and of people (anonymous ids) against bots, and bad input as
one line on stderr with exit 2."""

import datetime as dt
import json

import pytest

from tarocchi_rl import cli
from tarocchi_rl.web.store import Abandoned, Finished, NewGame, open_store
from tests.support.records import random_record

FRENCH3 = (("person", "p-aaaaaaaaaaaa"), ("bot", "heuristic"), ("bot", "heuristic"))


def add_game(store, gid: str, variant: str, seats, record: dict | None, day: int = 1, practice: bool = False):
    at = dt.datetime(2026, 3, day, 12)
    writes = [NewGame(gid.ljust(32, "0"), variant, {}, practice, at, tuple(seats))]
    writes.append(Abandoned(gid.ljust(32, "0"), at) if record is None else Finished(gid.ljust(32, "0"), record, at))
    store.write(writes)


def run(args: list[str], capsys) -> tuple[int, str, str]:
    capsys.readouterr()
    code = cli.main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def db(db_url):
    """An empty games' database, SQLite and PostgreSQL (tests/web/conftest.py), its schema made."""
    open_store(db_url).close()
    return db_url


def test_export_filters_by_variant_day_and_practice_and_the_file_replays(db, tmp_path, capsys):
    store = open_store(db)
    records = {k: random_record("french3", k) for k in range(4)}
    for k, day in zip(range(4), (1, 10, 20, 25), strict=True):
        add_game(store, f"f{k}", "french3", FRENCH3, records[k], day=day, practice=k == 3)
    mineo = random_record("mineo", 9)
    add_game(store, "m", "mineo", [("person", "p-bbbbbbbbbbbb")] + [("bot", "random")] * 3, mineo, day=15)
    add_game(store, "x", "french3", FRENCH3, None, day=12)  # abandoned: never exported
    store.close()
    out = tmp_path / "out.jsonl"

    assert run(["games", "export", "--db", db, "--out", str(out)], capsys)[0] == 0
    got = [json.loads(line) for line in out.read_text().splitlines()]
    assert [g["stored"]["id"][:2] for g in got] == ["f0", "f1", "m0", "f2"]  # oldest first, no practice
    assert got[0]["stored"]["created"] == "2026-03-01T12:00:00Z"
    assert got[2]["stored"]["seats"][0] == {"kind": "person", "name": "p-bbbbbbbbbbbb"}
    assert {k: v for k, v in got[3].items() if k != "stored"} == records[2]

    code, _, err = run(["games", "export", "--db", db, "--out", str(out), "--variant", "french3", "--since",
                        "2026-03-10", "--practice"], capsys)
    assert code == 0 and err.strip() == f"wrote 3 games to {out}"
    assert [json.loads(line)["stored"]["id"][:2] for line in out.read_text().splitlines()] == ["f1", "f2", "f3"]
    code, text, _ = run(["replay", str(out)], capsys)
    assert code == 0 and text.strip() == f"{out}: 3 valid records (3 french3)"
    code, text, _ = run(["eval", "--variant", "french3", "--agents", "random,heuristic", "--deals-file", str(out),
                         "--json"], capsys)
    assert code == 0 and json.loads(text)["deals"] == 3

    assert run(["games", "export", "--db", db, "--out", str(out), "--since", "2027-01-01"], capsys)[0] == 0
    assert out.read_text() == ""
    bad = tmp_path / "bad.jsonl"
    bad.write_text(out.read_text() + json.dumps({**mineo, "actions": mineo["actions"][:-1]}) + "\n")
    code, _, err = run(["replay", str(bad)], capsys)
    assert code == 2 and err.startswith(f"error: {bad}: line 1: the record ends") and err.count("\n") == 1


def test_stats_per_bot_against_people_and_per_person(db, capsys):
    store = open_store(db)
    for k, payoffs in enumerate(([-2, 1, 1], [4, -2, -2], [-2, 1, 1])):
        add_game(store, f"f{k}", "french3", FRENCH3, {"result": {"payoffs": payoffs}})
    add_game(store, "p", "french3", FRENCH3, {"result": {"payoffs": [100, -50, -50]}}, practice=True)
    add_game(store, "m", "mineo", [("person", "p-bbbbbbbbbbbb"), ("bot", "random"), ("bot", "heuristic"),
                                   ("bot", "random")], {"result": {"payoffs": [3, -1, -1, -1]}})
    add_game(store, "x", "mineo", [("person", "p-bbbbbbbbbbbb")] + [("bot", "random")] * 3, None)
    store.close()

    code, text, _ = run(["games", "stats", "--db", db, "--json"], capsys)
    assert code == 0
    stats = json.loads(text)
    assert stats["games"] == {"in_progress": 0, "finished": 5, "abandoned": 1, "practice": 1}
    bots = {(r["variant"], r["bot"]): r for r in stats["bots"]}
    assert set(bots) == {("french3", "heuristic"), ("mineo", "heuristic"), ("mineo", "random")}
    h = bots["french3", "heuristic"]
    assert h["deals"] == 3 and h["mean_payoff_per_deal"] == pytest.approx(0.0) and h["win_rate"] == pytest.approx(2 / 3)
    lo, hi = h["ci95"]
    assert -2 <= lo <= 0 <= hi <= 1
    assert bots["mineo", "random"]["deals"] == 1 and bots["mineo", "random"]["win_rate"] == 0.0
    people = {(r["variant"], r["person"]): r for r in stats["people"]}
    assert people["french3", "p-aaaaaaaaaaaa"]["win_rate"] == pytest.approx(1 / 3)
    assert people["mineo", "p-bbbbbbbbbbbb"]["mean_payoff_per_deal"] == pytest.approx(3.0)

    code, text, _ = run(["games", "stats", "--db", db], capsys)
    assert code == 0 and "5 finished, 1 abandoned, 0 in progress (1 practice tables" in text
    row = next(line for line in text.splitlines() if "french3" in line and "heuristic" in line).split()
    assert row[:3] == ["french3", "heuristic", "3"] and row[-1] == "66.7%"


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    import sqlite3

    db = f"sqlite:///{tmp_path / 'games.db'}"  # SQLite alone: the cases are its files' and the flags' errors
    open_store(db).close()
    missing = tmp_path / "missing.db"
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"not a database at all " * 200)
    newer = tmp_path / "newer.db"
    open_store(f"sqlite:///{newer}").close()
    with sqlite3.connect(newer) as conn:
        conn.execute("UPDATE alembic_version SET version_num = 'beef'")
    out = str(tmp_path / "out.jsonl")
    cases = [
        (["stats", "--db", "nonsense"], "not a database URL"),
        (["stats", "--db", "nosuchkind://x/y"], "unknown database kind 'nosuchkind'"),
        (["stats", "--db", "postgresql://tarocchi:secret@127.0.0.1:1/games"],  # no driver, or no server there
         "postgresql://tarocchi:***@127.0.0.1:1/games"),
        (["stats", "--db", f"sqlite:///{missing}"], f"no such file {missing}"),
        (["export", "--db", f"sqlite:///{missing}", "--out", out], "no such file"),
        (["stats", "--db", f"sqlite:///{corrupt}"], "file is not a database"),
        (["export", "--db", f"sqlite:///{corrupt}", "--out", out], "file is not a database"),
        (["stats", "--db", f"sqlite:///{newer}"], "schema revision 'beef' is unknown"),
        (["export", "--db", db, "--out", out, "--variant", "poker"], "--variant: unknown 'poker'"),
        (["export", "--db", db, "--out", out, "--since", "last week"], "--since: expected a date YYYY-MM-DD"),
        (["export", "--db", db, "--out", str(tmp_path)], "is a directory"),
        (["export", "--db", db, "--out", str(tmp_path / "no" / "dir.jsonl")], "cannot write"),
        (["stats", "--db", "sqlite:///:memory:"], "an in-memory database lives in one process"),
        (["export", "--db", "sqlite://", "--out", out], "an in-memory database lives in one process"),
    ]
    for args, message in cases:
        code, text, err = run(["games", *args], capsys)
        assert code == 2 and text == "", args
        assert err.startswith("error: ") and err.count("\n") == 1 and message in err, (args, err)
        assert "Traceback" not in err
    assert not missing.exists() and not (tmp_path / "out.jsonl").exists()


def test_replay_of_an_endless_jsonl_stops_at_its_first_long_line(tmp_path, capsys):
    import time

    zeros = tmp_path / "zeros.jsonl"
    zeros.symlink_to("/dev/zero")
    start = time.monotonic()
    code, _, err = run(["replay", str(zeros)], capsys)
    assert code == 2 and err.strip() == f"error: {zeros}: line 1: longer than 1,048,576 bytes"
    assert time.monotonic() - start < 5


@pytest.mark.parametrize("url", ["sqlite:///:memory:", "sqlite://"])
def test_serve_refuses_an_in_memory_database_before_it_listens(url):
    """Its games would live in one process and end with it, and games export / stats could never read them (before
    issue 52 the server started, then lost every game: "no such table"). The command line's own exit, one line."""
    import subprocess
    import sys
    from pathlib import Path

    cli_path = Path(sys.executable).with_name("tarocchi-rl")
    out = subprocess.run([str(cli_path), "serve", "--port", "0", "--db", url], capture_output=True, text=True,
                         timeout=300, stdin=subprocess.DEVNULL)
    assert out.returncode == 2 and out.stdout == ""
    err = out.stderr
    assert err.count("\n") == 1 and err.startswith(f"error: --db {url}: an in-memory database"), err
    assert "sqlite:///tarocchi-games.db" in err and "--db none" in err
