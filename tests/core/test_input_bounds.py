"""The one bound on users' seeds (tarocchi_rl.bits.SEED_MAX) and on an arena's deals (arena.MAX_DEALS), as every entry
point applies them."""

import numpy as np
import pytest

from tarocchi_rl.bits import SEED_MAX, check_seed, parse_seed
from tarocchi_rl.cli import main


def test_check_seed_takes_the_bound_and_refuses_the_rest():
    assert check_seed("s", 0) == 0 and check_seed("s", SEED_MAX) == SEED_MAX
    assert check_seed("s", np.uint64(7)) == 7 and type(check_seed("s", np.int64(7))) is int
    np.random.SeedSequence(SEED_MAX)  # the bound is a seed numpy takes
    for bad in (-1, SEED_MAX + 1, True, 1.0, "3", None):
        with pytest.raises(ValueError, match=r"^s must be an integer in \[0, 2\*\*63 - 1\], got "):
            check_seed("s", bad)
    assert parse_seed("s", " 12 ") == 12
    with pytest.raises(ValueError, match="s must be an integer"):
        parse_seed("s", "1e3")


@pytest.mark.parametrize("argv", [["deals", "--variant", "mineo", "--out", "unused.jsonl.gz"],
                                  ["demo", "--deals", "2"], ["play", "--variant", "mineo"]])
def test_every_command_refuses_a_seed_out_of_range_in_one_line(argv, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main([*argv, "--seed", str(2**63)]) == 2
    assert capsys.readouterr().err == f"error: --seed must be an integer in [0, 2**63 - 1], got {2**63}\n"
    assert list(tmp_path.iterdir()) == []  # refused before anything was written


@pytest.mark.parametrize("argv", [["eval", "--variant", "mineo", "--agents", "random,heuristic"], ["demo"],
                                  ["exploit", "--target", "heuristic", "--minutes", "1", "--no-progress"]])
@pytest.mark.parametrize("deals", [0, -3, 100_001])
def test_every_command_bounds_its_deals_in_one_line(argv, deals, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main([*argv, "--deals", str(deals)]) == 2
    assert capsys.readouterr().err == f"error: --deals must be >= 1 and <= 100000, got {deals}\n"
    assert list(tmp_path.iterdir()) == []


def test_an_arena_refuses_a_deal_set_it_cannot_count():
    from tarocchi_rl.arena import run_arena

    with pytest.raises(ValueError, match="an arena plays 1 to 100000 deals, got 0"):
        run_arena("mineo", ["random", "heuristic"], decks=np.zeros((0, 40), np.int16))
