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
"""

import os
from pathlib import Path

import torch

CHECKPOINT_FORMAT = "tarocchi-rl-ppo/1"


class CheckpointError(ValueError):
    """A missing, unreadable or foreign checkpoint."""


def save_checkpoint(path: str | Path, data: dict) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    torch.save({"format": CHECKPOINT_FORMAT, **data}, tmp)
    os.replace(tmp, path)


def resolve_checkpoint(path: str | Path) -> Path:
    """A checkpoint file from a file or run-directory path (``final.pt``, else ``latest.pt``)."""
    p = Path(path)
    if p.is_dir():
        for name in ("checkpoints/final.pt", "checkpoints/latest.pt", "final.pt", "latest.pt"):
            if (p / name).is_file():
                return p / name
        raise CheckpointError(f"no checkpoint in {p} (looked for checkpoints/final.pt and checkpoints/latest.pt)")
    if not p.is_file():
        raise CheckpointError(f"checkpoint {p} not found")
    return p


def load_checkpoint(path: str | Path, latest: bool = False) -> dict:
    """Load and check a checkpoint (``latest``: prefer ``latest.pt`` over ``final.pt`` in a run directory)."""
    p = Path(path)
    if latest and p.is_dir() and (p / "checkpoints/latest.pt").is_file():
        p = p / "checkpoints/latest.pt"
    else:
        p = resolve_checkpoint(p)
    try:
        data = torch.load(p, map_location="cpu", weights_only=False)
    except Exception as e:  # torch raises many types for a damaged file
        raise CheckpointError(f"checkpoint {p} is corrupt or not a PyTorch file: {type(e).__name__}: {e}") from None
    if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{p} is not a tarocchi-rl PPO checkpoint (format {CHECKPOINT_FORMAT} expected)")
    missing = [k for k in ("config", "model") if k not in data]
    if missing:
        raise CheckpointError(f"checkpoint {p} lacks {', '.join(missing)}")
    data["path"] = str(p)
    return data
