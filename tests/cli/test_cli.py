"""The command line: play (a scripted human at the terminal), bench and demo, and their input errors."""

import json
import subprocess
import sys

import pytest

from tarocchi_rl.play import parse_seats, play_game
from tarocchi_rl.records import replay
from tarocchi_rl.variants import VARIANTS


class ScriptedHuman:
    """Answers prompts: first a few bad inputs, then always the first legal move by number."""

    def __init__(self):
        self.prompts = 0
        self.bad = ["", "xyz", "99", "play:ZZ"]

    def __call__(self, prompt):
        self.prompts += 1
        return self.bad.pop(0) if self.bad else "0"


def test_play_a_whole_deal_as_a_human_and_replay_the_record(tmp_path):
    out_lines = []
    human = ScriptedHuman()
    path = tmp_path / "game.json"
    record = play_game("mineo", ["human", "random", "random", "random"], seed=4, record_path=str(path),
                       inp=human, out=out_lines.append)
    text = "\n".join(out_lines)
    assert human.prompts > 4
    assert text.count("not a legal move") == 4  # every bad input re-prompted
    assert "your hand (seat 0):" in text and "legal: [0]" in text
    assert "=== deal over ===" in text
    saved = json.loads(path.read_text())
    assert saved == record
    assert replay(saved).returns() == record["result"]["payoffs"]


def test_play_accepts_numbers_strings_and_bare_card_names():
    out = []
    script = iter(["bid:pass", "pass", "PASS", "0", "bid:call", "bid:pass", "pass", "pass"])

    def human(prompt):
        legal = [line for line in out if line.startswith("legal: ")][-1]
        first = legal.split("] ", 1)[1].split()[0]
        if first.startswith(("discard:", "play:")):
            return first.split(":")[1].lower()  # a bare card name, any case
        return next(script, "0")

    rec = play_game("mineo", ["human"] * 4, seed=1, inp=human, out=out.append)
    assert rec["actions"][:8] == ["bid:pass"] * 4 + ["bid:call"] + ["bid:pass"] * 3
    assert any(a.startswith("discard:") for a in rec["actions"])
    assert "not a legal move" not in "\n".join(out)
    assert replay(rec).returns() == rec["result"]["payoffs"]


def test_parse_seats_errors():
    assert parse_seats("human, random,random,RANDOM", 4) == ["human", "random", "random", "random"]
    with pytest.raises(ValueError, match="needs 4"):
        parse_seats("human,random", 4)
    with pytest.raises(ValueError, match="unknown seat kind 'alphazero'"):
        parse_seats("human,random,random,alphazero", 4)


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "tarocchi_rl.cli", *args], capture_output=True, text=True)


def test_every_subcommand_has_help():
    for cmd in ("play", "replay", "bench", "demo"):
        r = _cli(cmd, "--help")
        assert r.returncode == 0 and "usage" in r.stdout


def test_bench_json_reports_both_figures():
    r = _cli("bench", "--batch", "64", "--seconds", "0.05", "--repeats", "1", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["rollout_card_plays_per_s"] > 0 and out["step_decisions_per_s"] > 0
    assert out["runs"]["rollout"][0]["zero_sum"] is True


def test_bench_runs_every_registered_family_tarok4_too():
    r = _cli("bench", "--variant", "tarok4", "--batch", "64", "--seconds", "0.05", "--repeats", "1", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["variant"] == "tarok4" and out["rollout_deals_per_s"] > 0 and out["step_decisions_per_s"] > 0
    assert out["runs"]["rollout"][0]["zero_sum"] is None  # tarok's returns are not zero-sum: nothing to check


def test_cli_input_errors_are_messages_not_tracebacks():
    r = _cli("bench", "--variant", "poker", "--seconds", "0.01", "--repeats", "1")
    assert r.returncode == 2 and "unknown variant 'poker'" in r.stderr and "Traceback" not in r.stderr
    r = _cli("bench", "--threads", "0")
    assert r.returncode == 2 and "--threads" in r.stderr
    r = _cli("play", "--seats", "human,random")
    assert r.returncode == 2 and "needs 4" in r.stderr


def test_demo_prints_an_arena_table_per_variant():
    r = _cli("demo", "--deals", "30")
    assert r.returncode == 0, r.stderr
    for variant in VARIANTS:
        assert f"{variant}: 30 duplicate deals" in r.stdout
        assert f"bot:{variant}" in r.stdout or f"{variant}: no shipped bot yet (models/{variant})" in r.stdout
    assert r.stdout.count("heuristic") >= len(VARIANTS) and "mean payoff/deal" in r.stdout


def test_eval_no_progress_turns_the_bar_off_on_a_terminal(monkeypatch):
    """The progress bar shows on a terminal unless --no-progress (or --json) says otherwise, as in train and
    leaderboard."""
    import tarocchi_rl.arena as arena
    from tarocchi_rl.cli import main

    seen, real = [], arena.run_arena
    monkeypatch.setattr(arena, "run_arena", lambda *a, **k: (seen.append(k["progress"]), real(*a, **k))[1])
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    for flags in ([], ["--no-progress"], ["--json"]):
        assert main(["eval", "--variant", "piedmont3", "--agents", "random,heuristic", "--deals", "2", *flags]) == 0
    assert seen == [True, False, False]
