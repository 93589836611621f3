"""Training under faults (issue 14, part 1): a rollout actor killed by PID is replaced and the run completes; a
new run directory appears whole; a resumed run trims ``eval.jsonl``; a second Ctrl-C during the save is
ignored; Ctrl-C before there is anything to save is one line. The driver killed with SIGKILL at random
moments is ``experiments/checks/kill_resume.py`` (20 kills; a 3-kill version here, marked slow)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from experiments.checks import kill_resume  # process-tree helpers and the kill experiment
from tarocchi_rl.rl.checkpoint import load_checkpoint
from tests.support.checkpoints import TINY_RUN_MINEO, train_tiny

ROOT = Path(__file__).resolve().parents[2]


def test_a_killed_rollout_worker_is_replaced_and_the_run_completes(tmp_path):
    pytest.importorskip("ray")
    updates = 14
    sets = [*[t for t in TINY_RUN_MINEO if not t.startswith("num_workers")], "num_workers=2", "async_rollouts=true",
            "num_envs=32", "rollout_steps=16", f"max_updates={updates}", "checkpoint_every=1", "keep_checkpoints=50"]
    run = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "tarocchi_rl.cli", "train", "--out", str(run), "--no-progress",
                             *[x for s in sets for x in ("--set", s)]],
                            cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 240
        while not (run / "checkpoints/update_000003.pt").exists():  # mid-run: 3 of 14 updates done
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[1][-2000:]
            time.sleep(0.1)
        workers = [p for p in kill_resume.descendants(proc.pid) if "RolloutWorker" in kill_resume.command_line(p)]
        assert len(workers) == 2, [kill_resume.command_line(p) for p in kill_resume.descendants(proc.pid)]
        os.kill(workers[0], signal.SIGKILL)
        out, err = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            kill_resume.kill_tree(proc)
    assert proc.returncode == 0, err[-2000:]
    assert json.loads(out.strip().splitlines()[-1])["updates"] == updates
    assert "rollout worker" in err and "died" in err and "replaced" in err, err[-2000:]
    assert load_checkpoint(run)["update"] == updates


def test_a_new_run_directory_appears_whole(tmp_path, monkeypatch):
    from tarocchi_rl.rl import trainer as tr

    def broken(*a, **k):  # the TensorBoard writer fails: the directory already holds its first checkpoint
        raise OSError("disk full")

    import torch.utils.tensorboard as tb

    monkeypatch.setattr(tb, "SummaryWriter", broken)
    with pytest.raises(OSError):
        train_tiny(tmp_path / "w", "max_updates=1")
    assert sorted(p.name for p in (tmp_path / "w").rglob("*")) == ["checkpoints", "config.yaml", "latest.pt"]
    assert load_checkpoint(tmp_path / "w")["update"] == 0
    monkeypatch.undo()

    # killed while it is being built: nothing but a hidden temp directory, which is removed on the way out
    real = tr.save_checkpoint

    def interrupted(path, data):
        real(path, data)
        raise KeyboardInterrupt

    monkeypatch.setattr(tr, "save_checkpoint", interrupted)
    with pytest.raises(KeyboardInterrupt):
        train_tiny(tmp_path / "x", "max_updates=1")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w"]
    monkeypatch.undo()
    assert tr.resume(tmp_path / "w", progress=False)["updates"] == 1


def test_a_resumed_run_trims_the_evaluation_log(tmp_path):
    from tarocchi_rl.rl import trainer as tr

    train_tiny(tmp_path / "r", "max_updates=4", "checkpoint_every=2", "eval.every=1", "eval.deals=4")
    log = tmp_path / "r/eval.jsonl"
    assert [json.loads(x)["update"] for x in log.read_text().splitlines()] == [1, 2, 3]
    # as if killed after update 3's evaluation with latest.pt at update 2, mid-way through writing a line
    ck = tmp_path / "r/checkpoints"
    (ck / "final.pt").unlink()
    data = load_checkpoint(ck / "update_000002.pt")
    data.pop("path")
    tr.save_checkpoint(ck / "latest.pt", data)
    log.write_text(log.read_text() + '{"update": 4, "vs"')
    r = tr.resume(tmp_path / "r", progress=False)
    assert r["updates"] == 4
    assert [json.loads(x)["update"] for x in log.read_text().splitlines()] == [1, 2, 3]


def test_a_second_ctrl_c_during_the_save_is_ignored(tmp_path, monkeypatch, capsys):
    from tarocchi_rl.rl import trainer as tr

    real_learn, real_save = tr.Trainer._learn, tr.save_checkpoint

    def learn(self, batches):
        if self.update == 2:
            raise KeyboardInterrupt
        return real_learn(self, batches)

    def save(path, data):  # the user presses Ctrl-C again while update 2's latest.pt is written
        if data["update"] == 2:
            os.kill(os.getpid(), signal.SIGINT)
        real_save(path, data)

    monkeypatch.setattr(tr.Trainer, "_learn", learn)
    monkeypatch.setattr(tr, "save_checkpoint", save)
    # Python's own handler, as in a terminal (a pytest-xdist worker may start with SIGINT ignored)
    outer = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        r = train_tiny(tmp_path / "c", "max_updates=4", "checkpoint_every=100")
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored afterwards
    finally:
        signal.signal(signal.SIGINT, outer)
    assert r["interrupted"] is True and r["updates"] == 2
    assert load_checkpoint(tmp_path / "c")["update"] == 2


def test_sigterm_stops_the_run_as_ctrl_c_does(tmp_path, monkeypatch):
    """``kill`` (a scheduler's preemption, or a run started in the background, where SIGINT is ignored): the last
    complete update is saved and the result says interrupted; the handler before the run is restored."""
    from tarocchi_rl.rl import trainer as tr

    real_learn = tr.Trainer._learn

    def learn(self, batches):
        if self.update == 2:
            os.kill(os.getpid(), signal.SIGTERM)
        return real_learn(self, batches)

    monkeypatch.setattr(tr.Trainer, "_learn", learn)
    outer = signal.getsignal(signal.SIGTERM)
    r = train_tiny(tmp_path / "t", "max_updates=4", "checkpoint_every=100")
    assert signal.getsignal(signal.SIGTERM) is outer
    assert r["interrupted"] is True and r["updates"] == 2
    assert load_checkpoint(tmp_path / "t")["update"] == 2


def test_ctrl_c_while_the_workers_start_is_one_line(tmp_path, monkeypatch, capsys):
    from tarocchi_rl.cli import main
    from tarocchi_rl.rl import trainer as tr

    def slow_ray(cfg, ray_address=None, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(tr, "make_worker_pool", slow_ray)
    code = main(["train", "--out", str(tmp_path / "k"), "--no-progress",
                 *[x for t in TINY_RUN_MINEO for x in ("--set", t)]])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 130 and err[-1] == "interrupted", err
    assert not (tmp_path / "k").exists()


def test_resume_restores_workers_missing_from_the_checkpoint(tmp_path):
    """A checkpoint saved when the Ray workers could not answer holds no worker states: it still resumes."""
    from tarocchi_rl.rl import trainer as tr

    train_tiny(tmp_path / "m", "max_updates=2")
    ck = tmp_path / "m/checkpoints/latest.pt"
    data = load_checkpoint(ck)
    data.pop("path")
    data["workers"] = None
    tr.save_checkpoint(ck, data)
    assert tr.resume(tmp_path / "m", {"max_updates": "3"}, progress=False)["updates"] == 3


@pytest.mark.slow
def test_the_driver_killed_at_random_moments_always_resumes(tmp_path):
    s = kill_resume.run_kills(kills=3, max_delay=10, updates=120, workers=0, seed=1, work=tmp_path, log=lambda m: None)
    assert s["ok"], s["failures"]
    assert s["final"]["updates"] == 120 and s["kills"] == 3
