"""``experiments/checks/load_web.py`` runs: its API load goes to the variants the bot plays (a one-variant network gets
its own variant's requests only, and a bot that plays none of ``--variants`` is a one-line refusal)."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = str(ROOT / "experiments" / "checks" / "load_web.py")


def test_a_bot_that_plays_none_of_the_variants_is_refused_in_one_line():
    done = subprocess.run([sys.executable, SCRIPT, "--agent", "bot:mineo", "--variants", "french3,french4"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == "error: --agent bot:mineo plays mineo; --variants asks for french3, french4"


def test_a_one_variant_bot_gets_its_own_requests_without_errors():
    done = subprocess.run([sys.executable, SCRIPT, "--agent", "bot:mineo", "--skip", "tables", "--act-seconds", "1",
                           "--act-clients", "2", "--act-deals", "2"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout[: done.stdout.rindex("}") + 1])
    assert out["api"]["requests"] > 0 and out["api"]["n_errors"] == 0, out["api"]
