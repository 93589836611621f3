"""The leaderboard (issue 15 part 4): the committed deal sets are the ones their seed writes, and the command
plays the fast and the search tables on a deal set and writes them as Markdown."""

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from tarocchi_rl.arena import random_decks, read_deals_file, write_deals_file
from tarocchi_rl.cli import main
from tarocchi_rl.leaderboard import DEALS_SEED, default_agents, is_search
from tarocchi_rl.variants import VARIANTS
from tests.support.numbers_close import assert_numbers_close, nudged

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_committed_deal_sets_are_what_their_seed_deals(variant):
    decks = read_deals_file(ROOT / "benchmarks/deals" / f"{variant}.jsonl.gz", variant)
    assert decks.shape[0] == 2000
    np.testing.assert_array_equal(decks[:200], random_decks(variant, 2000, DEALS_SEED)[:200])


def test_gzipped_deal_files_round_trip_and_damage_is_one_error(tmp_path):
    write_deals_file(tmp_path / "d.jsonl.gz", "french3", 7, seed=3)
    assert read_deals_file(tmp_path / "d.jsonl.gz", "french3").shape == (7, 78)
    with gzip.open(tmp_path / "d.jsonl.gz", "rt") as f:
        assert json.loads(f.readline())["variant"] == "french3"
    (tmp_path / "bad.jsonl.gz").write_bytes((tmp_path / "d.jsonl.gz").read_bytes()[:60])
    with pytest.raises(ValueError, match="damaged gzip"):
        read_deals_file(tmp_path / "bad.jsonl.gz", "french3")


def test_the_leaderboard_plays_both_tables_and_writes_markdown(tmp_path, capsys):
    deals = tmp_path / "deals"
    deals.mkdir()
    write_deals_file(deals / "piedmont3.jsonl.gz", "piedmont3", 6, seed=1)
    agents = "random,heuristic,ismcts:iterations=30,rollout=heuristic"
    assert main(["leaderboard", "--variants", "piedmont3", "--deals-dir", str(deals), "--agents", agents,
                 "--search-deals", "3", "--out", str(tmp_path / "out"), "--no-progress"]) == 0
    md = (tmp_path / "out/piedmont3.md").read_text()
    assert "**fast**: 6 duplicate deals" in md and "**search**: 3 duplicate deals" in md
    assert md.count("| `heuristic` |") == 2 and md.count("| `ismcts:iterations=30,rollout=heuristic` |") == 1
    assert md.count("Head to head:") == 2 and "| 3. `ismcts:iterations=30,rollout=heuristic` | " in md
    board = json.loads((tmp_path / "out/piedmont3.json").read_text())
    assert [t["agent"] for t in board["tables"]["fast"]["table"]] == ["random", "heuristic"]
    assert md.strip() in capsys.readouterr().out


def test_default_agents_add_the_shipped_bot_or_the_one_in_models_dir(tmp_path):
    plain = ["random", "heuristic", "ismcts:iterations=300,rollout=random", "ismcts:iterations=300,rollout=heuristic"]
    assert default_agents("mineo") == [*plain, "bot:mineo", "compose:bid=heuristic,rest=bot:mineo",
                                       "compose:bid=bot:mineo,rest=heuristic",
                                       "ismcts:iterations=300,net=bot:mineo,mix=1,lazy=1,rollout=heuristic"]
    with pytest.raises(ValueError, match=f"--models {tmp_path}: no bot for mineo"):
        default_agents("mineo", tmp_path)
    (tmp_path / "mineo").mkdir()
    (tmp_path / "mineo/manifest.json").write_text("{}")
    agents = default_agents("mineo", tmp_path)
    assert f"onnx:{tmp_path / 'mineo'}" in agents and sum(is_search(a) for a in agents) == 3
    assert f"ismcts:iterations=300,net=onnx:{tmp_path / 'mineo'},mix=1,lazy=1,rollout=heuristic" in agents


def test_a_search_guided_by_a_shipped_bot_is_the_search_guided_by_its_directory():
    from tarocchi_rl.agents.specs import agent_fingerprint, make_agent
    from tarocchi_rl.batch import BatchEnv

    by_name, by_path = (f"ismcts:iterations=50,net={net},mix=1,lazy=1,rollout=heuristic"
                        for net in ("bot:piedmont3", "models/piedmont3"))
    env = BatchEnv("piedmont3", 16, seed=5)
    idx = np.arange(16)
    chosen = [make_agent(spec, seed=3).act(env.observe(), env.legal_mask(), env, idx) for spec in (by_name, by_path)]
    assert np.array_equal(*chosen)  # the same search, seeded alike
    assert agent_fingerprint(by_name) != agent_fingerprint(by_name.replace("bot:piedmont3", "bot:piedmont4"))
    with pytest.raises(ValueError, match="no shipped bot 'chess'"):
        make_agent("ismcts:net=bot:chess")


def test_bad_leaderboard_input_is_one_line(tmp_path, capsys):
    assert main(["leaderboard", "--variants", "chess"]) == 2
    assert main(["leaderboard", "--variants", "mineo", "--deals-dir", str(tmp_path)]) == 2
    assert main(["leaderboard", "--variants", "mineo", "--search-deals", "0"]) == 2
    assert main(["leaderboard", "--variants", "mineo", "--models", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("error: --variants: unknown variant 'chess'")
    assert err[1].startswith("error: cannot read deals file")
    assert err[2] == "error: --search-deals must be >= 1 and <= 100000, got 0"
    assert err[3].startswith(f"error: --models {tmp_path}: no bot for mineo") and len(err) == 4


@pytest.mark.parametrize("variant, last_bits", [("mineo", "as is"), ("piedmont4", "as is"), ("french4", "as is"),
                                                ("french4", "nudged"), ("french3", "as is"),
                                                ("piedmont3", "as is")])
def test_the_committed_search_tables_are_their_committed_blocks(variant, last_bits, tmp_path, monkeypatch):
    """The search tables are recomputed, number for number, from the blocks committed in
    benchmarks/results/with_search/blocks/ without playing a game (the agents' specs, files and the deals are the
    blocks' keys: a changed shipped bot or deal set would need the blocks played again).

    Counts compare exactly; the ratings and CIs within tests/support/numbers_close.py's tolerance: their last bits
    depend on the CPU (SIMD log / exp). The "nudged" run is the guard: every rating and CI is moved a few units in
    the last place, as another machine would compute them, and the committed table must still match."""
    from tarocchi_rl.agents.specs import agent_fingerprint
    from tarocchi_rl.arena import statistics
    from tarocchi_rl.leaderboard import run_leaderboard
    from tarocchi_rl.shipped import bot_exported_on, played_before_the_bot

    def no_play(*args, **kwargs):
        raise AssertionError(f"a block was not found and would be played: {args}")

    if last_bits == "nudged":
        bradley_terry, bootstrap_ci = statistics.bradley_terry, statistics.bootstrap_ci
        monkeypatch.setattr(statistics, "bradley_terry", lambda *a, **k: nudged(bradley_terry(*a, **k)))
        monkeypatch.setattr(statistics, "bootstrap_ci", lambda *a, **k: nudged(bootstrap_ci(*a, **k)))
    monkeypatch.chdir(ROOT)
    results = ROOT / "benchmarks/results/with_search"
    (tmp_path / "blocks").mkdir()
    (tmp_path / "blocks" / f"{variant}.jsonl").write_bytes((results / "blocks" / f"{variant}.jsonl").read_bytes())
    board_file = json.loads((results / f"{variant}.json").read_text())
    if played_before_the_bot(board_file):  # the table holds the replaced bot (the results pages say so)
        pytest.skip(f"{variant}'s search table ({board_file['date']}) was played before today's bot:{variant} "
                    f"({bot_exported_on(variant)}): its blocks are the previous bot's until it is played again")
    committed = board_file["tables"]
    board = run_leaderboard(variant, board_file["deals_file"], committed["search"]["agents"], no_play,
                            blocks_dir=tmp_path / "blocks", fingerprint=agent_fingerprint)
    for name in ("fast", "search"):
        got, want = board["tables"][name], committed[name]
        assert got["games"] == want["games"] and got["deals"] == want["deals"]
        assert_numbers_close(got["table"], want["table"], f"{name}.table")
        assert_numbers_close(got["head_to_head"], want["head_to_head"], f"{name}.head_to_head")
