"""Checkpoints of a training run: one ``torch.save`` dict per file, written atomically.

Run directory layout (``runs/NAME/``)::

    config.yaml                  the resolved config
    events.out.tfevents.*        TensorBoard
    checkpoints/latest.pt        the newest checkpoint (what --resume reads)
    checkpoints/update_000100.pt periodic checkpoints
    checkpoints/final.pt         written when the run ends
    eval.jsonl                   every evaluation (update, decisions, minutes, mean payoff, CI per opponent)

A checkpoint holds: ``format`` (``CHECKPOINT_FORMAT``), ``config`` (dict), ``model``, ``optimizer``,
``update``, ``decisions``, ``samples``, ``minutes`` (training time so far), ``pool`` (list of snapshot id and
model state), ``next_snapshot_id``, ``learner_rng`` (torch generator state of the minibatch shuffles) and
``workers`` (each rollout worker's random state), so a resumed run continues exactly.

Loading is safe: ``torch.load(..., weights_only=True)``, whose unpickler builds only tensors, containers and
numbers, plus the allow-list :data:`SAFE_GLOBALS` (numpy arrays: the workers' game RNG states). A file that
asks for anything else (a class, a function: a pickle that would run code) is refused with a
:class:`CheckpointError` before any of it runs. Loading is bounded: a file over :data:`MAX_CHECKPOINT_BYTES` is
refused from its size before it is read, a zip whose entries expand beyond the file's size (a zip bomb) before
``torch.load``, and a network whose config asks for other shapes than its tensors, or too many parameters
(:func:`tarocchi_rl.rl.network.check_state_shapes`), before any module is built.

Integrity: :func:`save_checkpoint` writes the ``torch.save`` bytes followed by a one-line trailer
``\n#tarocchi-rl sha256 HEX\n`` (the SHA-256 of the bytes before it; ``torch.load`` ignores bytes after the zip,
so the file stays a plain PyTorch file), to a temp file that is fsynced, renamed over the target with
``os.replace`` and whose directory is then fsynced: a crash leaves the old file or the new one, never half of
one. Loading checks the checksum (a mismatch, e.g. a flipped bit or a truncated file, is a
:class:`CheckpointError`). A file without the trailer (a checkpoint written before checksums existed, or
re-saved with ``torch.save``) still loads, unchecked: backward compatible.
:func:`load_resume_checkpoint` (``--resume``) falls back from a damaged ``latest.pt`` to the newest good
checkpoint of the run, with a warning.
"""

import hashlib
import io
import logging
import os
import pickle
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .checkpoint_file import (  # noqa: F401 (the torch-free part, re-exported: one place for each fact)
    CHECKPOINT_FORMAT,
    CHECKSUM_PREFIX,
    MAX_CHECKPOINT_BYTES,
    TRAILER_LEN,
    CheckpointError,
    check_zip_sizes,
    read_verified,
    refusal,
    resolve_checkpoint,
)

log = logging.getLogger(__name__)


def _numpy_array_globals() -> list[Any]:
    """What a pickled numpy array names: its reconstructor (under numpy 1's and 2's module names), the array
    type and the dtype. Building an array from these runs no code of the file (object arrays get their items
    from the same restricted unpickler)."""
    reconstruct = np.ndarray.__reduce__(np.zeros(1))[0]  # numpy(._)core.multiarray._reconstruct
    return [reconstruct, (reconstruct, "numpy.core.multiarray._reconstruct"),
            (reconstruct, "numpy._core.multiarray._reconstruct"), np.ndarray, np.dtype,
            *{type(np.dtype(t)) for t in ("u8", "i8", "u4", "i4", "f4", "f8", "u1", "?")}]


# everything a tarocchi-rl checkpoint holds beyond what weights_only allows by default: numpy arrays
SAFE_GLOBALS = _numpy_array_globals()


def save_checkpoint(path: str | Path, data: dict) -> None:
    """Write ``data`` (plus ``format``) atomically and durably, with its checksum trailer (module docstring)."""
    buf = io.BytesIO()
    torch.save({"format": CHECKPOINT_FORMAT, **data}, buf)
    raw = buf.getvalue()
    write_atomic(path, raw + CHECKSUM_PREFIX + hashlib.sha256(raw).hexdigest().encode() + b"\n")


def write_atomic(path: str | Path, content: bytes) -> None:
    """Write a file so that a crash at any moment leaves the old file or the new one: a temp file beside it,
    fsynced, renamed over the target, then the directory fsynced (the parent directories are created)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(content)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def fsync_dir(d: Path) -> None:
    """Make a rename in ``d`` durable (no-op where directories cannot be opened, e.g. Windows)."""
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def load_checkpoint(path: str | Path, latest: bool = False) -> dict:
    """Load and check a checkpoint (``latest``: prefer ``latest.pt`` over ``final.pt`` in a run directory)."""
    p = Path(path)
    if latest and p.is_dir() and (p / "checkpoints/latest.pt").is_file():
        p = p / "checkpoints/latest.pt"
    else:
        p = resolve_checkpoint(p)
    return _load_file(p)


def _load_file(p: Path) -> dict:
    """One checkpoint file, checksum and format checked."""
    data = _safe_load(p)
    if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{p} is not a tarocchi-rl PPO checkpoint (format {CHECKPOINT_FORMAT} expected)")
    missing = [k for k in ("config", "model") if k not in data]
    if missing:
        raise CheckpointError(f"checkpoint {p} lacks {', '.join(missing)}")
    data["path"] = str(p)
    return data


def load_resume_checkpoint(run_dir: str | Path) -> dict:
    """The checkpoint ``--resume`` continues from: ``checkpoints/latest.pt`` when it loads; when it is damaged
    (unreadable, truncated, checksum mismatch, foreign), the newest good one of ``final.pt`` (written last) and
    ``update_*.pt`` (newest first), with a warning (logged: on stderr by default). None good: a
    :class:`CheckpointError` naming every file tried and why. A path that is not a run directory (or one with no
    ``checkpoints/latest.pt``) behaves as ``load_checkpoint(path, latest=True)``."""
    run = Path(run_dir)
    ck = run / "checkpoints"
    if not (run.is_dir() and (ck / "latest.pt").is_file()):
        return load_checkpoint(run, latest=True)
    candidates = [ck / "latest.pt", ck / "final.pt", *sorted(ck.glob("update_*.pt"), reverse=True)]
    errors: list[str] = []
    for p in candidates:
        if not p.is_file():
            continue
        try:
            data = _load_file(p)
        except CheckpointError as e:
            errors.append(str(e))
            continue
        if errors:
            log.warning("warning: %s; resuming from %s (update %s) instead", "; ".join(errors), p,
                        data.get("update", "?"))
        return data
    raise CheckpointError(f"no good checkpoint in {run} to resume from: " + "; ".join(errors))


def _safe_load(p: Path) -> Any:
    """``torch.load`` with ``weights_only=True`` and :data:`SAFE_GLOBALS`, after the checksum check;
    CheckpointError (one line) otherwise."""
    body = read_verified(p)
    check_zip_sizes(body, p)
    try:
        with warnings.catch_warnings(), torch.serialization.safe_globals(SAFE_GLOBALS):
            warnings.simplefilter("ignore")  # e.g. "Detected pickle protocol 4": the refusal below says enough
            return torch.load(io.BytesIO(body), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:
        text = str(e)
        m = re.search(r"(?:Unsupported global: |unsupported )GLOBAL (\S+)", text)
        if m:  # a class or function outside the allow-list: what a pickle that runs code needs
            raise CheckpointError(refusal(p, m.group(1))) from None
        m = re.search(r"Unsupported operand (\S+)", text)
        why = f"the safe loader cannot read pickle opcode {m.group(1)}" if m else _one_line(text)
        raise CheckpointError(f"checkpoint {p} is corrupt or not a PyTorch file ({why})") from None
    except Exception as e:  # torch raises many types for a damaged file
        raise CheckpointError(f"checkpoint {p} is corrupt or not a PyTorch file: {type(e).__name__}: "
                              f"{_one_line(str(e))}") from None


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."

