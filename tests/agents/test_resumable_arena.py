"""The resumable arena (a blocks file, ``tarocchi-rl leaderboard --blocks-dir``): an interrupted run continued
gives the table of an uninterrupted one, recorded blocks are reused only for the same agents and deals, and a
damaged file is one error naming its line."""

import json
import shutil

import numpy as np
import pytest

from tarocchi_rl.agents.specs import agent_fingerprint, make_agent
from tarocchi_rl.arena import random_decks, run_arena, write_deals_file
from tarocchi_rl.cli import main
from tarocchi_rl.leaderboard import run_leaderboard

AGENTS = ["random", "heuristic", "ismcts:iterations=20,rollout=random"]


def arena(decks, blocks, agents=AGENTS):
    return run_arena("piedmont3", agents, decks=decks, batch_deals=2, make_agent=make_agent, blocks_file=blocks,
                     fingerprint=agent_fingerprint)


def table(r):
    return [(t["agent"], t["mean_payoff_per_deal"], t["ci95"], t["win_rate"], t["rating"], t["declarer"],
             t["bids"]) for t in r["table"]]


def test_an_interrupted_run_continued_gives_the_uninterrupted_table(tmp_path):
    decks = random_decks("piedmont3", 5, seed=4)
    whole = arena(decks, tmp_path / "whole.jsonl")
    lines = (tmp_path / "whole.jsonl").read_text().splitlines()
    assert len(lines) == 3 * 3 and whole["blocks_reused"] == 0  # 3 pairs x 3 chunks of <= 2 deals
    (tmp_path / "cut.jsonl").write_text("\n".join(lines[:4]) + "\n")  # stopped after four blocks
    continued = arena(decks, tmp_path / "cut.jsonl")
    assert continued["blocks_reused"] == 4 and table(continued) == table(whole)
    assert len((tmp_path / "cut.jsonl").read_text().splitlines()) == 9
    again = arena(decks, tmp_path / "cut.jsonl")  # everything recorded: nothing is played
    assert again["blocks_reused"] == 9 and table(again) == table(whole) and again["games"] == whole["games"]


def test_blocks_played_by_two_processes_give_the_table_of_one(tmp_path):
    decks = random_decks("piedmont3", 5, seed=4)
    one = arena(decks, tmp_path / "one.jsonl")
    lines = (tmp_path / "one.jsonl").read_text().splitlines()
    (tmp_path / "two.jsonl").write_text("\n".join(lines[:2]) + "\n")  # two blocks recorded before
    two = run_arena("piedmont3", AGENTS, decks=decks, batch_deals=2, make_agent=make_agent,
                    blocks_file=tmp_path / "two.jsonl", fingerprint=agent_fingerprint, workers=2)
    assert two["blocks_reused"] == 2 and table(two) == table(one) and two["games"] == one["games"]
    assert two["head_to_head"] == one["head_to_head"]

    def blocks(name):
        return sorted((json.dumps(r["key"], sort_keys=True), r["scores"], r["games"])
                      for r in map(json.loads, (tmp_path / name).read_text().splitlines()))
    assert blocks("two.jsonl") == blocks("one.jsonl")  # the same blocks, in the order they finished


def test_workers_are_bounded_and_need_a_blocks_file(tmp_path):
    decks = random_decks("piedmont3", 2, seed=4)
    for bad in (0, -1, 65, 1.5, True):
        with pytest.raises(ValueError, match="--workers must be an integer"):
            run_arena("piedmont3", ["random", "heuristic"], decks=decks, make_agent=make_agent,
                      blocks_file=tmp_path / "b.jsonl", fingerprint=agent_fingerprint, workers=bad)
    with pytest.raises(ValueError, match="needs a blocks file"):
        run_arena("piedmont3", ["random", "heuristic"], decks=decks, workers=2)
    assert main(["eval", "--variant", "piedmont3", "--agents", "random,heuristic", "--deals", "2",
                 "--workers", "2"]) != 0
    write_deals_file(tmp_path / "d.jsonl.gz", "piedmont3", 2, seed=4)
    with pytest.raises(ValueError, match="needs a blocks file"):  # the leaderboard: the same rule, said once
        run_leaderboard("piedmont3", tmp_path / "d.jsonl.gz", ["random", "heuristic"], make_agent, workers=2)


def test_a_last_line_cut_short_is_dropped_and_its_block_played_again(tmp_path, capsys):
    decks = random_decks("piedmont3", 4, seed=4)
    whole = arena(decks, tmp_path / "b.jsonl", ["random", "heuristic"])
    lines = (tmp_path / "b.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "b.jsonl").write_text(lines[0] + lines[1][:100])  # killed while appending the second block
    again = arena(decks, tmp_path / "b.jsonl", ["random", "heuristic"])
    assert "last line is incomplete" in capsys.readouterr().err
    assert again["blocks_reused"] == 1 and table(again) == table(whole)
    replayed = [json.loads(line) for line in (tmp_path / "b.jsonl").read_text().splitlines()]
    assert len(replayed) == 2 and replayed[1]["scores"] == json.loads(lines[1])["scores"]


def test_a_block_is_reused_only_for_the_same_deals_and_agents(tmp_path):
    decks = random_decks("piedmont3", 2, seed=4)
    blocks = tmp_path / "b.jsonl"
    arena(decks, blocks, ["random", "heuristic"])
    assert arena(decks, blocks, ["random", "heuristic"])["blocks_reused"] == 1
    assert arena(random_decks("piedmont3", 2, seed=5), blocks, ["random", "heuristic"])["blocks_reused"] == 0
    grown = arena(decks, blocks, ["random", "heuristic", "ismcts:iterations=20"])  # a new agent: old pair kept
    assert grown["blocks_reused"] == 1


def test_a_fingerprint_follows_the_files_a_spec_names(tmp_path):
    bot = tmp_path / "bot"
    shutil.copytree("models/piedmont3", bot)
    before = agent_fingerprint(f"onnx:{bot}")
    assert agent_fingerprint(f"onnx:{bot}") == before != agent_fingerprint(f"onnx:{bot},greedy=false")
    card = bot / "README.md"
    card.write_text(card.read_text() + "\n")  # the model card is documentation
    assert agent_fingerprint(f"onnx:{bot}") == before
    golden = bot / "golden.jsonl"
    golden.write_text(golden.read_text() + "\n")
    assert agent_fingerprint(f"onnx:{bot}") != before
    assert agent_fingerprint("bot:piedmont3") == agent_fingerprint("bot:piedmont3")
    assert agent_fingerprint("compose:discard=bot:piedmont3,rest=heuristic") != agent_fingerprint(
        "compose:discard=heuristic,rest=heuristic")
    with pytest.raises(ValueError, match="cannot be fingerprinted"):
        agent_fingerprint('cmd:"python -m bot"')
    with pytest.raises(ValueError, match="no shipped bot"):
        agent_fingerprint("bot:nope")


@pytest.mark.parametrize("damage, message", [
    ("{not json\n", "line 2: not valid JSON"),
    ('{"format": "other"}\n', "line 2: not a tarocchi-arena-block/1 record"),
    ("BLOCK:scores=[[1.0], []]", "line 2: scores must be two equally long lists"),
    ("BLOCK:scores=[[NaN], [1.0]]", "line 2: scores must be two equally long lists of finite numbers"),
    ("BLOCK:games=-3", "line 2: games must be a count"),
    ("BLOCK:bids=[{\"x\": 1.5}, {}]", "line 2: bids must be two objects"),
])
def test_a_damaged_blocks_file_is_one_error_naming_the_line(tmp_path, damage, message):
    decks = random_decks("piedmont3", 2, seed=4)
    blocks = tmp_path / "b.jsonl"
    arena(decks, blocks, ["random", "heuristic"])
    good = blocks.read_text()
    if damage.startswith("BLOCK:"):
        field, _, value = damage[len("BLOCK:"):].partition("=")
        rec = json.loads(good)
        rec[field] = json.loads(value)
        damage = json.dumps(rec) + "\n"
    blocks.write_text(good + damage)
    with pytest.raises(ValueError, match=message):
        arena(decks, blocks, ["random", "heuristic"])


def test_the_leaderboard_resumes_from_its_blocks_dir(tmp_path, capsys):
    deals = tmp_path / "deals"
    deals.mkdir()
    write_deals_file(deals / "piedmont3.jsonl.gz", "piedmont3", 4, seed=1)
    args = ["leaderboard", "--variants", "piedmont3", "--deals-dir", str(deals), "--agents",
            "random,heuristic,ismcts:iterations=20,rollout=random", "--search-deals", "2", "--no-progress",
            "--blocks-dir", str(tmp_path / "blocks")]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    assert main([*args, "--out", str(tmp_path / "b")]) == 0
    a, b = (json.loads((tmp_path / d / "piedmont3.json").read_text())["tables"] for d in "ab")
    assert b["search"]["blocks_reused"] == 3 and b["fast"]["blocks_reused"] == 1
    assert [t["mean_payoff_per_deal"] for t in a["search"]["table"]] == [
        t["mean_payoff_per_deal"] for t in b["search"]["table"]]
    assert "(blocks recorded earlier: 3)" in (tmp_path / "b/piedmont3.md").read_text()
    capsys.readouterr()
    (tmp_path / "blocks/piedmont3.jsonl").write_text("garbage\n")
    assert main([*args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: blocks file") and "line 1: not valid JSON" in err[0]
    assert main([*args[:-1], str(tmp_path / "blocks/piedmont3.jsonl")]) == 2  # a file where a directory goes
    assert "--blocks-dir" in capsys.readouterr().err


def test_a_resumable_arena_needs_spec_strings_and_no_game_records(tmp_path):
    decks = random_decks("piedmont3", 2, seed=4)
    with pytest.raises(ValueError, match="keeps no game records"):
        run_arena("piedmont3", ["random", "heuristic"], decks=decks, out_dir=tmp_path / "o",
                  blocks_file=tmp_path / "b.jsonl", fingerprint=agent_fingerprint)
    with pytest.raises(ValueError, match="spec strings"):
        run_arena("piedmont3", [make_agent("random"), "heuristic"], decks=decks, blocks_file=tmp_path / "b.jsonl",
                  fingerprint=agent_fingerprint)
    assert np.isfinite(arena(decks, tmp_path / "b.jsonl", ["random", "heuristic"])["table"][0]["rating"])


def test_eval_resumes_from_its_blocks_file(tmp_path, capsys):
    args = ["eval", "--variant", "piedmont3", "--agents", "random,ismcts:iterations=20,rollout=random", "--deals",
            "150", "--seed", "2", "--json", "--blocks", str(tmp_path / "e.jsonl")]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert len((tmp_path / "e.jsonl").read_text().splitlines()) == 2  # 150 deals: blocks of 100 and 50
    assert main(args) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["blocks_reused"] == 2 and again["table"] == first["table"]
    assert main([*args, "--out", str(tmp_path / "o")]) == 2
    assert "keeps no game records" in capsys.readouterr().err
    assert main([*args[:-2], "--seed", "-1"]) == 2  # a seed no block (nor deal) can start from
    assert capsys.readouterr().err.strip() == "error: --seed must be an integer in [0, 2**63 - 1], got -1"
