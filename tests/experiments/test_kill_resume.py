"""``experiments/checks/kill_resume.py``: the training driver killed once with SIGKILL, then the run resumed to its end
(the 3-kill version is tests/rl/test_faults.py, marked slow)."""

import json

from .scripts import ok, run_script


def test_one_kill_then_the_run_completes(tmp_path):
    out = tmp_path / "kills.json"
    done = ok(run_script("kill_resume", "--kills", "1", "--max-delay", "1", "--updates", "2", "--out", str(out),
                         timeout=600))
    s = json.loads(out.read_text())
    assert s["ok"] and s["failures"] == [] and s["kills"] == 1
    killed = [r for r in s["rounds"] if not r["finished"]]
    assert len(killed) == 1 and 0 <= killed[0]["delay_s"] <= 1
    assert killed[0]["on_disk"] == "absent" or killed[0]["on_disk"].startswith("update ")
    assert s["final"]["updates"] == 2 and s["final"]["samples"] > 0
    assert s["eval_updates"][-1] == 2 and s["stale_temp_dirs"] == []
    assert done.stdout.strip().splitlines()[-1] == "every resume succeeded"
