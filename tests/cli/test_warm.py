"""``tarocchi-rl warm`` plays every entry of its stages (make test runs it first, so here the cache is warm)."""

from tarocchi_rl.cli import main
from tarocchi_rl.warm import STAGES, warm


def test_warm_reports_every_stage_entry():
    lines: list[str] = []
    warm(lines.append, parallel=("search",))
    named = [line.split(":")[0] for line in lines]
    assert named == [w for w, _ in STAGES["first"]] + ["bot protocol"] + [w for w, _ in STAGES["search"]]


def test_the_command_says_the_kernels_are_cached(capsys, monkeypatch):
    import tarocchi_rl.warm as w

    monkeypatch.setattr(w, "warm", lambda report: (report("engine and heuristic: 1 s"), 1.0)[1])
    assert main(["warm"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "the kernels are in Numba's cache (1 s)"
