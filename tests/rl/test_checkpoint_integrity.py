"""Checkpoint integrity and training faults (issue 14, part 1): checksummed atomic checkpoints, ``--resume``
falling back from a damaged ``latest.pt``, non-finite losses and weights stopping the run before any checkpoint
of them, Ctrl-C saving the last complete update and resuming exactly, nothing on disk before the workers start."""

import logging

import pytest
import torch

from tarocchi_rl.rl.checkpoint import CHECKSUM_PREFIX, CheckpointError, load_checkpoint, save_checkpoint
from tests.support.checkpoints import TINY_RUN_MINEO, train_tiny


def _same_weights(a, b):
    return all(torch.equal(a["model"][k], b["model"][k]) for k in a["model"])


def test_checkpoint_carries_a_checksum_and_old_files_still_load(tmp_path):
    p = tmp_path / "c.pt"
    save_checkpoint(p, {"config": {"a": 1}, "model": {"w": torch.ones(3)}})
    raw = p.read_bytes()
    assert CHECKSUM_PREFIX in raw[-100:] and not list(tmp_path.glob("*.tmp"))
    assert torch.load(p, weights_only=True)["config"] == {"a": 1}  # still a plain PyTorch file
    assert load_checkpoint(p)["config"] == {"a": 1}
    flipped = bytearray(raw)
    flipped[len(raw) // 2] ^= 0x10
    p.write_bytes(bytes(flipped))
    with pytest.raises(CheckpointError, match="checksum mismatch"):
        load_checkpoint(p)
    # a checkpoint from before checksums (plain torch.save) loads unchecked
    torch.save({"format": "tarocchi-rl-ppo/1", "config": {"a": 2}, "model": {}}, p)
    assert load_checkpoint(p)["config"] == {"a": 2}


@pytest.mark.parametrize("damage", ["truncated", "bit_flip", "empty"])
def test_resume_falls_back_from_a_damaged_latest(tmp_path, caplog, damage):
    from tarocchi_rl.rl.trainer import resume

    run = tmp_path / "r"
    train_tiny(run, "max_updates=3", "checkpoint_every=2", "keep_checkpoints=1")
    ck = run / "checkpoints"
    (ck / "final.pt").unlink()  # leave latest.pt (update 3) and update_000002.pt
    latest = ck / "latest.pt"
    raw = latest.read_bytes()
    if damage == "truncated":
        latest.write_bytes(raw[: len(raw) // 2])
    elif damage == "bit_flip":
        flipped = bytearray(raw)
        flipped[len(raw) // 3] ^= 0x01
        latest.write_bytes(bytes(flipped))
    else:
        latest.write_bytes(b"")
    with caplog.at_level(logging.WARNING, logger="tarocchi_rl.rl.checkpoint"):
        r = resume(run, {"max_updates": "4"}, progress=False)
    assert r["updates"] == 4
    text = caplog.text
    assert "latest.pt" in text and "update_000002.pt" in text and "instead" in text
    assert load_checkpoint(run)["update"] == 4


def test_resume_with_every_checkpoint_damaged_is_one_clear_error(tmp_path):
    from tarocchi_rl.rl.trainer import resume

    run = tmp_path / "r"
    train_tiny(run, "max_updates=2", "checkpoint_every=1", "keep_checkpoints=1")
    ck = run / "checkpoints"
    names = sorted(p.name for p in ck.glob("*.pt"))
    assert names == ["final.pt", "latest.pt", "update_000001.pt"]
    for p in ck.glob("*.pt"):
        raw = p.read_bytes()
        p.write_bytes(raw[: len(raw) - 200])
    with pytest.raises(CheckpointError, match="no good checkpoint") as e:
        resume(run, progress=False)
    assert all(n in str(e.value) for n in names) and "\n" not in str(e.value)


def test_non_finite_loss_stops_before_a_checkpoint(tmp_path, monkeypatch, capsys):
    from tarocchi_rl.cli import main
    from tarocchi_rl.rl import trainer as tr
    from tarocchi_rl.rl import update

    real = update.ppo_loss

    def poisoned(*a, **k):  # from update 3 on
        loss, st = real(*a, **k)
        return (loss * float("nan"), st) if tr_update["u"] >= 2 else (loss, st)

    tr_update = {"u": 0}
    real_count = tr.Trainer._count

    def count(self, batches, clock):
        out = real_count(self, batches, clock)
        tr_update["u"] = self.update
        return out

    monkeypatch.setattr(update, "ppo_loss", poisoned)
    monkeypatch.setattr(tr.Trainer, "_count", count)
    run = tmp_path / "nan"
    with pytest.raises(tr.NonFiniteError, match="non-finite loss at update 3") as e:
        train_tiny(run, "max_updates=5", "checkpoint_every=1", "keep_checkpoints=5")
    assert isinstance(e.value, ValueError)
    ck = run / "checkpoints"
    assert sorted(p.name for p in ck.glob("*.pt")) == ["latest.pt", "update_000001.pt", "update_000002.pt"]
    data = load_checkpoint(ck / "latest.pt")
    assert data["update"] == 2 and all(bool(torch.isfinite(t).all()) for t in data["model"].values())

    # a NaN weight after update 1, through the CLI: one line, exit 2, nothing checkpointed
    monkeypatch.setattr(update, "ppo_loss", real)
    real_learn = tr.Trainer._learn

    def learn(self, batches):
        out = real_learn(self, batches)
        with torch.no_grad():
            next(self.net.parameters()).view(-1)[0] = float("inf")
        return out

    monkeypatch.setattr(tr.Trainer, "_learn", learn)
    out = tmp_path / "inf"
    code = main(["train", "--out", str(out), "--no-progress",
                 *[x for t in [*TINY_RUN_MINEO, "max_updates=3", "checkpoint_every=1"] for x in ("--set", t)]])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].startswith("error: non-finite weights after update 1"), err
    assert [p.name for p in out.glob("checkpoints/*.pt")] == ["latest.pt"]  # the run's start, nothing later
    data = load_checkpoint(out / "checkpoints/latest.pt")
    assert data["update"] == 0 and all(bool(torch.isfinite(t).all()) for t in data["model"].values())


def test_ctrl_c_saves_latest_and_resume_is_exact(tmp_path, monkeypatch, capsys):
    from tarocchi_rl.rl import trainer as tr

    extra = ["max_updates=4", "checkpoint_every=100", "keep_checkpoints=1"]
    train_tiny(tmp_path / "a", *extra)

    real_learn = tr.Trainer._learn

    def learn(self, batches):  # Ctrl-C halfway through update 3's learning step
        if self.update == 2:
            real_learn(self, batches)  # the weights move: the handler must save update 2's, not these
            raise KeyboardInterrupt
        return real_learn(self, batches)

    monkeypatch.setattr(tr.Trainer, "_learn", learn)
    r = train_tiny(tmp_path / "b", *extra)
    assert r["interrupted"] is True and r["updates"] == 2
    err = capsys.readouterr().err
    assert "interrupted: saved update 2" in err and "--resume" in err
    ck = tmp_path / "b/checkpoints"
    assert sorted(p.name for p in ck.iterdir()) == ["latest.pt"]
    assert load_checkpoint(ck / "latest.pt")["update"] == 2
    monkeypatch.setattr(tr.Trainer, "_learn", real_learn)
    r = tr.resume(tmp_path / "b", progress=False)
    assert r["updates"] == 4 and "interrupted" not in r
    a, b = load_checkpoint(tmp_path / "a"), load_checkpoint(tmp_path / "b")
    assert _same_weights(a, b) and a["samples"] == b["samples"]


def test_ctrl_c_during_the_rollout_also_resumes_exactly(tmp_path, monkeypatch):
    from tarocchi_rl.rl import trainer as tr
    from tarocchi_rl.rl.workers import LocalPool

    extra = ["max_updates=3", "checkpoint_every=100", "keep_checkpoints=1"]
    train_tiny(tmp_path / "a", *extra)
    real = LocalPool.sample
    calls = {"n": 0}

    def sample(self, *a):
        calls["n"] += 1
        out = real(self, *a)  # the worker's random state moves on: the handler saves it as it was
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return out

    monkeypatch.setattr(LocalPool, "sample", sample)
    assert train_tiny(tmp_path / "b", *extra)["updates"] == 1
    monkeypatch.setattr(LocalPool, "sample", real)
    assert tr.resume(tmp_path / "b", progress=False)["updates"] == 3
    assert _same_weights(load_checkpoint(tmp_path / "a"), load_checkpoint(tmp_path / "b"))


def test_nothing_on_disk_when_the_workers_fail_to_start(tmp_path, monkeypatch):
    from tarocchi_rl.rl import trainer as tr

    def broken(cfg, ray_address=None, **kw):
        raise RuntimeError("actor constructor failed")

    monkeypatch.setattr(tr, "make_worker_pool", broken)
    with pytest.raises(ValueError, match="workers failed to start: RuntimeError"):
        train_tiny(tmp_path / "w", "max_updates=1")
    assert not (tmp_path / "w").exists()
