"""``experiments/bench/bench_ppo_stacks.py --stack openspiel`` runs (it used a State attribute the OpenSpiel wrapper no
longer has): one tiny timed repeat, its JSON line."""

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = str(Path(__file__).resolve().parents[2] / "experiments" / "bench" / "bench_ppo_stacks.py")


def test_the_openspiel_stack_trains_against_heuristic_opponents(tmp_path):
    done = subprocess.run([sys.executable, SCRIPT, "--stack", "openspiel", "--seconds", "1", "--repeats", "1",
                           "--warmup", "0", "--batch", "256", "--minibatch", "64", "--epochs", "1", "--threads", "1",
                           "--json"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["stack"] == "openspiel" and out["repeats"][0]["decisions"] >= 256
