"""A checkpoint file without torch: its bytes (bounded, checksum checked) and a scan of what it holds.

Importing torch costs seconds and a few hundred MB; a command handed a hostile checkpoint (``eval --agents
ppo:FILE``) refuses it here first, in a process that has not imported torch (issue 30: every reader probe ends
within 2 s, under 200 MB). :func:`precheck_checkpoint` reads the file (at most :data:`MAX_CHECKPOINT_BYTES`,
its checksum trailer checked), refuses a zip that would inflate beyond the file, and scans the pickle of the
zip's ``data.pkl`` with :class:`_ShapeScanner`: an unpickler whose every global is one of this module's inert
stand-ins (a tensor becomes its shape; nothing of the file's choosing is called or imported; anything else is
refused). From the scan it checks the config (:func:`config_from_dict`: the network size bound) and the shape of
every tensor of ``model`` (and ``critic``) against the network the config describes (:mod:`.shapes`). What the
scan cannot tell (a legacy non-zip file, a pickle it does not read) is left to the full loader
(:mod:`.checkpoint`: ``torch.load(weights_only=True)``), which checks everything again.
"""

from __future__ import annotations

import collections
import hashlib
import io
import pickle
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import bounded
from .config import ConfigError, TrainConfig, config_from_dict
from .shapes import ShapeError, check_shapes

CHECKPOINT_FORMAT = "tarocchi-rl-ppo/1"
CHECKSUM_PREFIX = b"\n#tarocchi-rl sha256 "  # the trailer: prefix, 64 hex digits, newline
TRAILER_LEN = len(CHECKSUM_PREFIX) + 64 + 1
# bytes of one checkpoint file: a network at the parameter bound (rl.config.MAX_NETWORK_PARAMETERS, 64 MB of
# float32) with its Adam moments and a league of a dozen snapshots; the default network's are a few MB
MAX_CHECKPOINT_BYTES = 1 << 30


class CheckpointError(ValueError):
    """A missing, unreadable or foreign checkpoint."""


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


def read_verified(p: Path) -> bytes:
    """The file's ``torch.save`` bytes, its checksum trailer checked (a file without one is returned whole); a
    file over :data:`MAX_CHECKPOINT_BYTES` is refused from its size, before it is read."""
    try:
        raw = bounded.read_bytes(p, MAX_CHECKPOINT_BYTES, what=f"checkpoint {p}")
    except bounded.BoundedInputError as e:
        raise CheckpointError(str(e)) from None
    trailer = raw[-TRAILER_LEN:]
    if len(raw) >= TRAILER_LEN and trailer.startswith(CHECKSUM_PREFIX) and trailer.endswith(b"\n"):
        body, want = raw[:-TRAILER_LEN], trailer[len(CHECKSUM_PREFIX):-1].decode("ascii", "replace")
        if hashlib.sha256(body).hexdigest() != want:
            raise CheckpointError(f"checkpoint {p} is corrupt (checksum mismatch: the file was damaged after it "
                                  "was written)")
        return body
    return raw  # no trailer: an older checkpoint (or a truncated one: torch.load tells)


def check_zip_sizes(body: bytes, p: Path) -> None:
    """A zip-format checkpoint whose entries would expand beyond the file's own size (``torch.save`` stores them
    uncompressed; ``torch.load`` inflates a compressed one whole, before any check: a zip bomb) is a
    :class:`CheckpointError`. Anything else that is wrong with the zip is left to ``torch.load`` to say."""
    if not body.startswith(b"PK\x03\x04"):  # the legacy format (a pickle): torch.load reads it as it is
        return
    try:
        with zipfile.ZipFile(io.BytesIO(body)) as z:
            expanded = sum(info.file_size for info in z.infolist())
    except (zipfile.BadZipFile, ValueError, OSError, EOFError):
        return
    if expanded > len(body):
        raise CheckpointError(f"checkpoint {p} is corrupt or not a PyTorch file (its zip entries expand to "
                              f"{expanded:,} bytes, more than the file's {len(body):,})")


def refusal(p: Path, name: str) -> str:
    """The error of a checkpoint whose pickle names ``name``, a global outside the allow-list."""
    return (f"checkpoint {p} refused: it asks for {name}, which is not on the allow-list (checkpoints are loaded "
            "with weights_only=True: tensors, containers, numbers and numpy arrays only)")


# -- the scan ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TensorShape:
    """What the scan makes of a pickled tensor: its shape."""

    shape: tuple[int, ...]


class _Inert:
    """Any other allowed object (a storage, a numpy array or dtype, encoded bytes): accepts its state, holds
    nothing."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __setstate__(self, state: Any) -> None:
        pass


def _rebuild_tensor(storage: Any, offset: Any, size: Any, *rest: Any) -> TensorShape:
    if not isinstance(size, tuple) or not all(isinstance(n, int) and 0 <= n < 1 << 40 for n in size):
        raise pickle.UnpicklingError("a tensor with a malformed size")
    return TensorShape(size)


def _inert(*args: Any, **kwargs: Any) -> _Inert:
    return _Inert()


# (module, name) -> its stand-in: what torch.save writes for a checkpoint (tensors, ordered dicts, numpy arrays
# of the workers' random states); the names are data, never imported
_STAND_INS: dict[tuple[str, str], Any] = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
    ("_codecs", "encode"): _inert,
    ("numpy", "ndarray"): _Inert,
    ("numpy", "dtype"): _Inert,
    ("numpy.core.multiarray", "_reconstruct"): _inert,
    ("numpy._core.multiarray", "_reconstruct"): _inert,
    **{("numpy.dtypes", f"{kind}DType"): _Inert
       for kind in ("UInt8", "Int8", "UInt32", "Int32", "UInt64", "Int64", "Float32", "Float64", "Bool")},
    **{("torch", f"{kind}Storage"): _Inert
       for kind in ("Float", "Double", "Half", "BFloat16", "Long", "Int", "Short", "Char", "Byte", "Bool")},
}


class _Refused(pickle.UnpicklingError):
    """A global outside the stand-ins: what a pickle that runs code needs."""


class _ShapeScanner(pickle.Unpickler):
    """An unpickler that builds only containers, numbers, strings and this module's stand-ins."""

    def find_class(self, module: str, name: str) -> Any:
        try:
            return _STAND_INS[(module, name)]
        except KeyError:
            raise _Refused(f"{module}.{name}"[:120]) from None

    def persistent_load(self, pid: Any) -> Any:
        return _Inert()


@dataclass(frozen=True)
class CheckpointScan:
    """What a checkpoint says before torch reads it: its config (validated) and its tensors' shapes."""

    path: Path
    config: TrainConfig
    model: dict[str, tuple[int, ...] | None]
    critic: dict[str, tuple[int, ...] | None] | None


def _shapes(state: Any, where: str) -> dict[str, tuple[int, ...] | None]:
    """{name: shape} of a scanned state dict (None for an entry that is not a tensor)."""
    if not isinstance(state, dict):
        raise CheckpointError(f"{where}: the weights must be a mapping of names to tensors, got "
                              f"{type(state).__name__}")
    return {str(k): v.shape if isinstance(v, TensorShape) else None for k, v in state.items()}


def scan_checkpoint(path: str | Path) -> CheckpointScan | None:
    """Scan a checkpoint file (or run directory) without torch: a :class:`CheckpointError` (one line) for a
    missing, oversized, damaged, bomb-shaped or foreign file, an invalid config, or tensors that do not fit the
    network its config describes; None when the scan cannot read it (left to the full loader)."""
    p = resolve_checkpoint(path)
    body = read_verified(p)
    check_zip_sizes(body, p)
    if not body.startswith(b"PK\x03\x04"):
        return None
    try:
        with zipfile.ZipFile(io.BytesIO(body)) as z:
            names = [n for n in z.namelist() if n.endswith("/data.pkl") or n == "data.pkl"]
            if len(names) != 1:
                return None
            data = _ShapeScanner(io.BytesIO(z.read(names[0]))).load()
    except _Refused as e:
        raise CheckpointError(refusal(p, str(e))) from None
    except (pickle.UnpicklingError, zipfile.BadZipFile, EOFError, ValueError, TypeError, KeyError, IndexError,
            AttributeError, OverflowError, MemoryError, RecursionError, OSError) as e:
        raise CheckpointError(f"checkpoint {p} is corrupt or not a tarocchi-rl checkpoint "
                              f"({' '.join(str(e).split())[:160]})") from None
    if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{p} is not a tarocchi-rl PPO checkpoint (format {CHECKPOINT_FORMAT} expected)")
    missing = [k for k in ("config", "model") if k not in data]
    if missing:
        raise CheckpointError(f"checkpoint {p} lacks {', '.join(missing)}")
    try:
        cfg = config_from_dict(data["config"])
    except ConfigError as e:
        raise CheckpointError(f"checkpoint {p}: its config is invalid: {e}") from None
    model = _shapes(data["model"], f"checkpoint {p}")
    critic = None
    try:
        check_shapes(model, cfg, f"checkpoint {p}")
        if cfg.critic == "perfect" and "critic" in data:
            critic = _shapes(data["critic"], f"checkpoint {p}: critic")
            check_shapes(critic, cfg, f"checkpoint {p}: critic", critic=True)
    except ShapeError as e:
        raise CheckpointError(str(e)) from None
    return CheckpointScan(p, cfg, model, critic)


def precheck_checkpoint(path: str | Path, variant: str | None = None) -> None:
    """:func:`scan_checkpoint`, and the variant it was trained on (when ``variant`` is given)."""
    scan = scan_checkpoint(path)
    if scan is not None and variant is not None and scan.config.variant != variant:
        raise CheckpointError(f"checkpoint {scan.path} was trained on {scan.config.variant}, not {variant}")
