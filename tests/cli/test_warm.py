"""``tarocchi-rl warm`` plays every entry of its stages for every group of variants that share a tables type (make
test runs it first, so here the cache is warm), and its processes' saves to Numba's cache take turns."""

import fcntl
import subprocess
import sys
import textwrap
import time

from tarocchi_rl.cli import main
from tarocchi_rl.warm import STAGES, tables_groups, warm


def test_warm_reports_every_stage_entry_for_every_tables_group():
    groups = tables_groups()
    assert len(groups) >= 2 and ("tarok3", "tarok4") in groups  # play rules: tables of a Numba type of their own
    lines: list[str] = []
    warm(lines.append, parallel=("search",))
    want = [f"{what} ({', '.join(g)})"
            for stage, extra in (("first", ["parallel batch loops", "bot protocol"]), ("search", []))
            for g in groups for what in [w for w, _ in STAGES[stage]] + extra]
    assert [line.rsplit(":", 1)[0] for line in lines] == want


def test_a_save_to_numbas_cache_waits_for_the_lock(tmp_path):
    lock = tmp_path / "numba-cache.lock"
    (tmp_path / "kernel.py").write_text("from numba import njit\n\n\n@njit(cache=True)\ndef one_more(x):\n"
                                        "    return x + 1\n")
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        from tarocchi_rl.warm import serialise_cache_saves
        serialise_cache_saves({str(lock)!r})
        import kernel
        print("compiling", flush=True)
        assert kernel.one_more(1) == 2
    """)
    with open(lock, "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                                env={"NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"})
        assert proc.stdout is not None and proc.stdout.readline().strip() == "compiling"
        time.sleep(3)  # the compile of a one-line kernel, then the save, which waits
        assert proc.poll() is None and not list((tmp_path / "cache").rglob("*.nbi"))
    assert proc.wait(timeout=120) == 0  # the lock released: the save goes through
    assert list((tmp_path / "cache").rglob("*.nbi"))


def test_the_command_says_the_kernels_are_cached(capsys, monkeypatch):
    import tarocchi_rl.warm as w

    monkeypatch.setattr(w, "warm", lambda report: (report("engine and heuristic: 1 s"), 1.0)[1])
    assert main(["warm"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "the kernels are in Numba's cache (1 s)"
