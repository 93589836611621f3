"""``experiments/bench/bench_belief_tables.py``: this tree's exact belief tables against its own HEAD's, its files
materialised in a temporary cache of old trees, one round on a few positions without the JIT (a fresh tree has no
Numba cache): the comparison's plumbing (the old tree, one subprocess per tree importing its own tree, the figures,
the table, the JSON, the argument check) is what is checked, not a speed."""

import json
import re
import subprocess

import pytest

from .scripts import ROOT, git_worktrees, ok, run_script

pytestmark = pytest.mark.skipif(
    subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True).returncode != 0,
    reason="not a git checkout: bench_belief_tables.py checks out its --old commit")


def test_head_and_this_tree_build_the_tables_side_by_side(tmp_path):
    before = git_worktrees()
    out = tmp_path / "tables.json"
    done = ok(run_script("bench_belief_tables", "--old", "HEAD", "--variants", "piedmont3", "--positions", "6",
                         "--rounds", "1", "--repeats", "1", "--out", str(out),
                         env={"NUMBA_DISABLE_JIT": "1", "TAROCCHI_OLD_TREES": str(tmp_path / "trees")}))
    assert "old = HEAD, new = this tree; ms per root decision, 6 positions, medians of 1" in done.stdout
    rows = re.findall(r"^\| piedmont3 \| (old|new) \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| (\d+) \|$",
                      done.stdout, re.M)
    assert [r[0] for r in rows] == ["old", "new"], done.stdout
    data = json.loads(out.read_text())
    (row,) = data["rows"]
    assert row["variant"] == "piedmont3" and row["old"]["exact_roots"] == row["new"]["exact_roots"] > 0
    assert row["new"]["mean_ms"] > 0 and row["old_over_new_mean"] > 0
    assert data["old"] == "HEAD" and data["command"].startswith("python experiments/bench/bench_belief_tables.py --old")
    assert git_worktrees() == before  # no worktree: the old tree is a plain folder
    assert len(list((tmp_path / "trees").iterdir())) == 1  # HEAD's files, in the cache given


def test_a_bad_count_is_one_line_and_exit_2():
    done = run_script("bench_belief_tables", "--old", "HEAD", "--positions", "0")
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0 and "--positions" in done.stderr
