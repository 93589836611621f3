"""``experiments/checks/check_seat_views.py``: positions rebuilt from one seat's view match the real game, per case."""

import re

from .scripts import ok, run_script


def test_rebuilt_positions_match_the_real_game():
    done = ok(run_script("check_seat_views", "--cases", "french3,mineo+early_solo=false", "--games", "1",
                         "--rate", "0.5"))
    rows = dict(re.findall(r"^(\S+): (\d+) positions, 0 failures", done.stdout, re.M))
    assert set(rows) == {"french3", "mineo+early_solo=false", "all"}, done.stdout
    assert int(rows["all"]) == int(rows["french3"]) + int(rows["mineo+early_solo=false"]) > 0
    assert "FAIL" not in done.stdout and "MISMATCH" not in done.stdout
