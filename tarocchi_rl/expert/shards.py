"""Shards: the samples of expert iteration's search, as compressed NumPy archives (``round_R_worker_W.npz``).

One row per searched decision, N rows:

| field        | dtype   | shape    | meaning                                                                  |
|--------------|---------|----------|--------------------------------------------------------------------------|
| obs          | float32 | [N, D]   | the deciding seat's observation                                          |
| mask         | bool    | [N, A]   | its legal actions                                                        |
| policy       | float32 | [N, A]   | the root's visit distribution (sums to 1, 0 off the mask): policy target |
| search_value | float32 | [N]      | the root's visit-weighted mean value (payoff / payoff_scale)             |
| outcome      | float32 | [N]      | the deal's payoff of that seat / payoff_scale                            |
| phase        | int8    | [N]      | the phase code (:mod:`tarocchi_rl.core.phases`)                          |
| seat         | int8    | [N]      | the deciding seat                                                        |
| action       | int16   | [N]      | the move played (drawn from the visits)                                  |
| behaviour    | float32 | [N]      | its probability under that draw                                          |
| belief       | int8    | [N, C']  | each unseen card's true location, -1 seen (C' = 0 without a belief loss) |

A shard read from a file is untrusted: :func:`Shard.read` refuses a file over :data:`MAX_SHARD_BYTES`, a zip whose
entries expand beyond :data:`MAX_EXPANDED_BYTES`, anything pickled (``allow_pickle=False``), missing or extra
fields, wrong dtypes or shapes, non-finite numbers, a policy that is not a distribution over the legal actions
and a move that is illegal; each a :class:`ShardError` naming the file and the field.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import bounded

MAX_SHARD_BYTES = 1 << 30  # bytes of one shard file
MAX_EXPANDED_BYTES = 1 << 33  # bytes its arrays expand to
#: field -> (dtype, trailing shape: "D" observation width, "A" actions, "C" belief cards (0 allowed), () a scalar)
FIELDS: dict[str, tuple[Any, tuple[str, ...]]] = {
    "obs": (np.float32, ("D",)), "mask": (np.bool_, ("A",)), "policy": (np.float32, ("A",)),
    "search_value": (np.float32, ()), "outcome": (np.float32, ()), "phase": (np.int8, ()), "seat": (np.int8, ()),
    "action": (np.int16, ()), "behaviour": (np.float32, ()), "belief": (np.int8, ("C",)),
}
POLICY_TOLERANCE = 1e-3  # |sum of a policy row - 1|


class ShardError(ValueError):
    """A shard that is not what :data:`FIELDS` says (names the file and the field)."""


@dataclass(frozen=True)
class Shard:
    """Checked arrays of :data:`FIELDS` (build with :meth:`from_arrays` or :meth:`read`)."""

    arrays: dict[str, NDArray[Any]]

    def __len__(self) -> int:
        return len(self.arrays["outcome"])

    @classmethod
    def from_arrays(cls, arrays: dict[str, Any], where: str = "shard", obs_dim: int | None = None,
                    n_actions: int | None = None) -> Shard:
        """The arrays checked (:func:`check_arrays`) and cast to their dtypes."""
        return cls(check_arrays(arrays, where, obs_dim, n_actions))

    @classmethod
    def concatenate(cls, shards: list[Shard]) -> Shard:
        if not shards:
            raise ShardError("no shard to concatenate")
        return cls({k: np.concatenate([s.arrays[k] for s in shards]) for k in FIELDS})

    def to_bytes(self) -> bytes:
        """The compressed archive (``np.savez_compressed``)."""
        buf = io.BytesIO()
        np.savez_compressed(buf, **self.arrays)  # type: ignore[arg-type]
        return buf.getvalue()

    def write(self, path: str | Path) -> None:
        from ..rl.checkpoint import write_atomic

        write_atomic(path, self.to_bytes())

    @classmethod
    def read(cls, path: str | Path, obs_dim: int | None = None, n_actions: int | None = None) -> Shard:
        """A shard file, checked (module docstring); ``obs_dim`` / ``n_actions``: the widths it must have."""
        try:
            raw = bounded.read_bytes(path, MAX_SHARD_BYTES, what=f"shard {path}")
        except bounded.BoundedInputError as e:
            raise ShardError(str(e)) from None
        return cls.from_bytes(raw, str(path), obs_dim, n_actions)

    @classmethod
    def from_bytes(cls, raw: bytes, where: str = "shard", obs_dim: int | None = None,
                   n_actions: int | None = None) -> Shard:
        try:
            with zipfile.ZipFile(io.BytesIO(raw)) as z:
                expanded = sum(info.file_size for info in z.infolist())
        except (zipfile.BadZipFile, ValueError, OSError, EOFError):
            raise ShardError(f"{where}: not a NumPy archive (.npz)") from None
        if expanded > MAX_EXPANDED_BYTES:
            raise ShardError(f"{where}: its arrays expand to {expanded:,} bytes, more than {MAX_EXPANDED_BYTES:,}")
        try:
            with np.load(io.BytesIO(raw), allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
        except (ValueError, OSError, EOFError, zipfile.BadZipFile) as e:  # pickled arrays included
            raise ShardError(f"{where}: unreadable ({type(e).__name__}: {' '.join(str(e).split())[:120]})") from None
        return cls.from_arrays(arrays, where, obs_dim, n_actions)


def check_arrays(arrays: dict[str, Any], where: str, obs_dim: int | None = None,
                 n_actions: int | None = None) -> dict[str, NDArray[Any]]:
    """The arrays of :data:`FIELDS` cast to their dtypes, or a :class:`ShardError` naming what is wrong."""
    names = set(arrays)
    if names != set(FIELDS):
        missing, extra = sorted(set(FIELDS) - names), sorted(names - set(FIELDS))
        raise ShardError(f"{where}: fields differ from a shard's (missing {missing}, unknown {extra})")
    out: dict[str, NDArray[Any]] = {}
    widths: dict[str, int | None] = {"D": obs_dim, "A": n_actions, "C": None}
    n = None
    for name, (dtype, trailing) in FIELDS.items():
        a = np.asarray(arrays[name])
        if a.ndim != 1 + len(trailing):
            raise ShardError(f"{where}: {name} has {a.ndim} dimensions, a shard's {1 + len(trailing)}")
        if n is None:
            n = a.shape[0]
        if a.shape[0] != n:
            raise ShardError(f"{where}: {name} has {a.shape[0]} rows, obs {n}")
        for letter, size in zip(trailing, a.shape[1:], strict=True):
            if widths[letter] is None:
                widths[letter] = size
            elif widths[letter] != size:
                raise ShardError(f"{where}: {name} is {size} wide, expected {widths[letter]}")
        if not np.can_cast(a.dtype, dtype, casting="same_kind") and not (a.dtype == np.bool_ and dtype == np.bool_):
            raise ShardError(f"{where}: {name} has dtype {a.dtype}, a shard's {np.dtype(dtype)}")
        out[name] = a.astype(dtype, copy=False)
    _check_values(out, where)
    return out


def _check_values(a: dict[str, NDArray[Any]], where: str) -> None:
    for name in ("obs", "policy", "search_value", "outcome", "behaviour"):
        if not np.isfinite(a[name]).all():
            raise ShardError(f"{where}: {name} holds a NaN or an infinity")
    if len(a["outcome"]) == 0:
        return
    if (a["policy"] < 0).any() or (a["policy"][~a["mask"]] != 0).any():
        raise ShardError(f"{where}: policy has a negative entry or weight on an illegal action")
    if (np.abs(a["policy"].sum(axis=1) - 1) > POLICY_TOLERANCE).any():
        raise ShardError(f"{where}: a policy row does not sum to 1")
    act = a["action"].astype(np.int64)
    if (act < 0).any() or (act >= a["mask"].shape[1]).any() or not a["mask"][np.arange(len(act)), act].all():
        raise ShardError(f"{where}: an action is not one of its row's legal actions")
    if ((a["behaviour"] <= 0) | (a["behaviour"] > 1)).any():
        raise ShardError(f"{where}: behaviour must be a probability in (0, 1]")
