"""``experiments/studies/ablations.py`` end to end with tiny runs: every arm trained once per seed (and not again when
its run is finished), each arm played against the base arm of its seed, the JSON written."""

import json
import subprocess
import sys
from pathlib import Path

from tests.support.checkpoints import TINY_RUN

ROOT = Path(__file__).resolve().parents[2]
TINY = [s for s in TINY_RUN if not s.startswith(("max_minutes", "eval."))] + ["max_updates=1", "imitation.decisions=0"]


def run(tmp_path, *args):
    sets = [x for s in TINY for x in ("--set", s)]
    return subprocess.run([sys.executable, str(ROOT / "experiments" / "studies" / "ablations.py"), "--variant",
                           "french3", "--seeds", "0", "--deals", "4", "--runs", str(tmp_path / "runs"), "--out",
                           str(tmp_path / "out"), *sets, *args], capture_output=True, text=True, timeout=600)


def test_arms_are_trained_once_and_played_against_the_base(tmp_path):
    done = run(tmp_path, "--arms", "base,cards")
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads((tmp_path / "out" / "french3.json").read_text())
    assert list(result["arms"]) == ["base", "cards"] and result["overrides"]["cards"] == ["network.kind=cards"]
    cards = result["arms"]["cards"]["runs"][0]
    assert cards["updates"] == 1 and cards["vs_base"]["deals"] == 4
    assert "training" in done.stderr
    again = run(tmp_path, "--arms", "base,cards")  # finished runs are not trained again
    assert again.returncode == 0 and "training" not in again.stderr


def test_bad_arms_are_a_usage_error(tmp_path):
    done = run(tmp_path, "--arms", "cards,base")
    assert done.returncode == 2 and "base first" in done.stderr and "Traceback" not in done.stderr
