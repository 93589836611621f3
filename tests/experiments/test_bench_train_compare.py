"""``experiments/bench/bench_train_compare.py``: this tree's trainer against its own HEAD's, its files materialised
in a temporary cache of old trees, one round of tiny runs without the JIT (a fresh tree has no Numba cache): the
comparison's plumbing (the old tree, one training subprocess per tree importing its own tree, the summary's figures,
the table and the JSON) is what is checked, not a speed."""

import json
import re
import subprocess

import pytest

from tests.support.checkpoints import TINY_RUN

from .scripts import ROOT, git_worktrees, ok, run_script

pytestmark = pytest.mark.skipif(
    subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True).returncode != 0,
    reason="not a git checkout: bench_train_compare.py checks out its --old commit")


def test_head_and_this_tree_trained_side_by_side(tmp_path):
    before = git_worktrees()
    sets = [x for s in TINY_RUN for x in ("--set", s)]
    out = tmp_path / "compare.json"
    done = ok(run_script("bench_train_compare", "--old", "HEAD", "--variants", "piedmont3", "--rounds", "1",
                         "--updates", "2", "--no-warm", "--out", str(out), *sets,
                         env={"NUMBA_DISABLE_JIT": "1", "TAROCCHI_OLD_TREES": str(tmp_path / "trees")}))
    assert "old = HEAD, new = this tree; default config, 2 updates a run, medians of 1 alternating runs" in done.stdout
    rows = re.findall(r"^\| piedmont3 \| (\w+) \| ([\d,]+) \| ([\d,]+) \| ([\d.]+) \|$", done.stdout, re.M)
    assert [r[0] for r in rows] == ["decisions_per_s", "samples_per_s"], done.stdout
    data = json.loads(out.read_text())
    assert [r["metric"] for r in data["rows"]] == ["decisions_per_s", "samples_per_s"]
    for r in data["rows"]:
        assert r["old"] > 0 and r["new"] > 0 and len(r["old_runs"]) == len(r["new_runs"]) == 1
    assert git_worktrees() == before  # no worktree: the old tree is a plain folder
    assert len(list((tmp_path / "trees").iterdir())) == 1  # HEAD's files, in the cache given
