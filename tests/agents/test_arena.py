"""The duplicate arena: seatings, scores, confidence intervals, ratings, outputs, frozen deal sets."""

import json
import subprocess
import sys

import numpy as np
import pytest

from tarocchi_rl.arena import bootstrap_ci, bradley_terry, read_deals_file, run_arena, seatings, write_deals_file
from tarocchi_rl.leaderboard import head_to_head_markdown
from tarocchi_rl.policies.base import RandomAgent
from tarocchi_rl.records import replay
from tarocchi_rl.variants import VARIANTS, get_variant


def test_seatings_rotate_every_seat_both_ways():
    m = seatings(4)
    assert m.shape == (14, 4)
    for s in range(4):  # A alone in seat s, and B alone in seat s
        assert [0 if k == s else 1 for k in range(4)] in m.tolist()
        assert [1 if k == s else 0 for k in range(4)] in m.tolist()
    assert [0, 1, 0, 1] in m.tolist() and [1, 0, 1, 0] in m.tolist() and [0, 0, 1, 1] in m.tolist()
    assert (m.sum(axis=0) == 7).all()  # every seat equally often for each agent
    assert seatings(3).shape == (6, 3)


def test_bootstrap_and_bradley_terry():
    rng = np.random.default_rng(0)
    lo, hi = bootstrap_ci(np.r_[np.ones(50), -np.ones(50)], rng)
    assert lo < 0 < hi
    lo, hi = bootstrap_ci(np.full(30, 2.0), rng)
    assert lo == hi == 2.0
    p = bradley_terry(np.array([[0.0, 75.0], [25.0, 0.0]]), prior=0.0)
    assert p[0] / p[1] == pytest.approx(3.0, rel=1e-3)
    p = bradley_terry(np.array([[0.0, 100.0], [0.0, 0.0]]))  # a sweep stays finite with the prior
    assert np.isfinite(p).all() and p[0] / p[1] == pytest.approx(100.5 / 0.5, rel=1e-3)


def test_random_agent_is_legal_and_seeded():
    mask = np.zeros((5, 10), bool)
    mask[np.arange(5), [1, 3, 5, 7, 9]] = True
    mask[0, 2] = True
    a = RandomAgent(1).act(None, mask)
    assert mask[np.arange(5), a].all()
    assert (RandomAgent(1).act(None, mask) == a).all()


@pytest.mark.parametrize("variant", VARIANTS)
def test_arena_outputs_and_replayable_records(variant, tmp_path):
    r = run_arena(variant, ["random", "random"], deals=12, seed=3, out_dir=str(tmp_path), progress=False)
    per_pair = 2 ** get_variant(variant).n_players - 2  # every split of the seats between the two agents
    assert r["games"] == 12 * per_pair and r["games_per_deal_per_pair"] == per_pair
    assert len(r["table"]) == 2
    for t in r["table"]:
        assert t["ci95"][0] <= t["mean_payoff_per_deal"] <= t["ci95"][1]
        if variant in ("mineo", "french3", "french4"):  # the variants with an auction: every seat speaks once
            assert sum(c for w, c in t["bids"].items() if not w.startswith("early ")) > 0
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["table"] == r["table"]
    assert (tmp_path / "ratings.png").stat().st_size > 1000
    games = [json.loads(line) for line in (tmp_path / "games.jsonl").read_text().splitlines()]
    assert len(games) == r["games"]
    for g in games[:: max(1, len(games) // 6)]:
        assert replay(g).returns() == g["result"]["payoffs"]


def test_head_to_head_is_each_pair_score_difference():
    r = run_arena("piedmont3", ["random", "heuristic", "random"], deals=30, seed=2, progress=False)
    h2h = {tuple(p["agents"]): p for p in r["head_to_head"]}
    assert len(h2h) == 3 and ("random", "heuristic") in h2h
    two = run_arena("piedmont3", ["random", "heuristic"], deals=30, seed=2, progress=False)
    mine, theirs = (t["mean_payoff_per_deal"] for t in two["table"])
    (only,) = two["head_to_head"]
    assert only["mean_difference_per_deal"] == pytest.approx(mine - theirs)
    assert only["ci95"][0] <= only["mean_difference_per_deal"] <= only["ci95"][1] < 0  # the heuristic wins
    assert h2h["random", "heuristic"]["mean_difference_per_deal"] == pytest.approx(mine - theirs)
    md = head_to_head_markdown(r)  # the same agent twice keeps its two rows apart
    d = [p["mean_difference_per_deal"] for p in r["head_to_head"]]  # pairs (1, 2), (1, 3), (2, 3)
    rows = {line.split(" | ")[0]: [c.rstrip("*") for c in line.removesuffix(" |").split(" | ")[1:]]
            for line in md if line[:3] in ("| 1", "| 2", "| 3")}
    assert rows["| 1. `random`"][:3] == ["", f"{d[0]:+.3f}", f"{d[1]:+.3f}"]
    assert rows["| 3. `random`"][:2] == [f"{-d[1]:+.3f}", f"{-d[2]:+.3f}"]


def test_duplicate_deals_are_shared_and_seeded():
    a = run_arena("mineo", ["random", "random"], deals=20, seed=5, progress=False)
    b = run_arena("mineo", ["random", "random"], deals=20, seed=5, progress=False)
    assert a["table"] == b["table"]


def test_frozen_deals_file_round_trip_and_errors(tmp_path):
    f = tmp_path / "deals.jsonl"
    write_deals_file(str(f), "french3", 7, seed=1)
    decks = read_deals_file(str(f), "french3")
    assert decks.shape == (7, 78)
    r1 = run_arena("french3", ["random", "random"], decks=decks, seed=2, progress=False)
    assert r1["deals"] == 7
    with pytest.raises(ValueError, match="deal of variant 'french3', expected 'mineo'"):
        read_deals_file(str(f), "mineo")
    bad = tmp_path / "bad.jsonl"
    line = json.loads(f.read_text().splitlines()[0])
    line["deal"]["hands"][0][0] = "ZZ"
    bad.write_text(json.dumps(line) + "\n")
    with pytest.raises(ValueError, match=r"bad.jsonl:1: deal.hands\[0\]\[0\]: unknown card 'ZZ'"):
        read_deals_file(str(bad), "french3")


def test_eval_cli(tmp_path):
    cmd = [sys.executable, "-m", "tarocchi_rl.cli"]
    r = subprocess.run(cmd + ["deals", "--variant", "mineo", "--n", "10", "--out", str(tmp_path / "d.jsonl")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(cmd + ["eval", "--variant", "mineo", "--agents", "random,random", "--deals-file",
                              str(tmp_path / "d.jsonl"), "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["deals"] == 10
    r = subprocess.run(cmd + ["eval", "--agents", "random,alphago", "--deals", "5"], capture_output=True, text=True)
    assert r.returncode == 2 and "unknown agent spec 'alphago'" in r.stderr
