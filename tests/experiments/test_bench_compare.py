"""``experiments/bench/bench_compare.py``: this tree against its own HEAD, its files materialised in a cache of old
trees (here a temporary one, shared by the three modes: the second and third reuse it), one round of each benchmark.
A fresh tree has no Numba cache (compiling the core there takes minutes), so both trees run here with
``NUMBA_DISABLE_JIT=1`` on a batch of 4: the comparison's plumbing (the old tree, one subprocess per tree and round,
each importing its own tree, the table) is what is checked, not a speed."""

import re
import subprocess
from pathlib import Path

import pytest

from .scripts import ROOT, git_worktrees, ok, run_script

NO_JIT = {"NUMBA_DISABLE_JIT": "1"}


@pytest.fixture(scope="module")
def old_trees(tmp_path_factory) -> str:
    """The cache of old trees of this module's runs (not the user's)."""
    return str(tmp_path_factory.mktemp("old-trees"))


pytestmark = pytest.mark.skipif(
    subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True).returncode != 0,
    reason="not a git checkout: bench_compare.py checks out its --old commit")


@pytest.mark.parametrize("mode, metrics", [
    (["--seconds", "0.05", "--clock", "cpu"], ["rollout_deals_per_s", "step_decisions_per_s"]),
    (["--fixed-work", "--calls", "1", "--repeats", "1"], ["rollout_deals_per_s"]),
    (["--phases", "--repeats", "1"], ["deal_ns", "bidding_ns", "play_ns"]),
])
def test_head_and_this_tree_side_by_side(mode, metrics, old_trees):
    before = git_worktrees()
    done = ok(run_script("bench_compare", "--old", "HEAD", "--variants", "french3", "--rounds", "1", "--batch", "4",
                         *mode, env={**NO_JIT, "TAROCCHI_OLD_TREES": old_trees}))
    assert "old = HEAD, new = this tree; batch 4, 1 thread, medians of 1 alternating runs" in done.stdout
    rows = re.findall(r"^\| french3 \| (\w+) \| ([\d,]+) \| ([\d,]+) \| ([\d.]+) \|$", done.stdout, re.M)
    assert [r[0] for r in rows] == metrics, done.stdout
    for _, old, new, ratio in rows:
        o, n = float(old.replace(",", "")), float(new.replace(",", ""))
        assert o > 0 and n > 0
        rounding = (0.5 / o + 0.5 / n) * n / o + 0.0005  # the rates are printed to units, the ratio to 0.001
        assert abs(float(ratio) - n / o) <= rounding, (old, new, ratio)
    assert git_worktrees() == before  # no worktree: the old tree is a plain folder
    names = [p.name for p in Path(old_trees).iterdir()]  # HEAD's files (its commit at each run), no half-written one
    assert names and all(re.fullmatch(r"[0-9a-f]{40}", n) for n in names), names
