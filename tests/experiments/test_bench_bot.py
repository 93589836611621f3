"""``experiments/bench/bench_bot.py``: the latency of ``tarocchi-rl bot`` answering real requests through a pipe, with
the shipped mineo bot (the script's default, a freshly exported network, is experiments/common.py's export_fresh:
test_bench_policies runs its fresh_checkpoint and export_policy; an export costs several CPU seconds)."""

import re

from .scripts import ok, run_script


def test_the_bots_answers_are_timed():
    done = ok(run_script("bench_bot", "--agent", "bot:mineo", "--requests", "20"))
    assert "bot: tarocchi-rl bot:mineo; mineo" in done.stdout
    rows = {m[0]: m[1:] for m in re.findall(r"^\| (card play|all) \| (\d+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| "
                                            r"([\d.]+) \|$", done.stdout, re.M)}
    assert set(rows) == {"card play", "all"}, done.stdout
    plays, everything = int(rows["card play"][0]), int(rows["all"][0])
    assert 20 <= plays < everything  # whole deals: at least the card plays asked for, and the bids besides
    median, p90, p99, worst = map(float, rows["card play"][1:])
    assert 0 < median <= p90 <= p99 <= worst
    assert "targets (median <= 3 ms, p99 <= 15 ms):" in done.stdout
