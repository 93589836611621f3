"""``onnx:DIR``: an exported policy (a bot directory written by ``tarocchi-rl export``) as an agent.

Spec: ``onnx:DIR[,greedy=false][,seed=N][,threads=N]`` (also ``path=DIR``). The agent runs on onnxruntime and
numpy only (no torch); ``threads`` is onnxruntime's intra-op thread count (default 1). Loading checks the
directory's manifest against this engine (variant, options, observation layout, action table) and refuses a
mismatch naming the field. The agent itself is :class:`tarocchi_rl.policies.onnx_policy.OnnxAgent`; a composed
bot directory (``compose.json``: one exported policy per kind of decision, :mod:`.compose_bot`) is a
:class:`~tarocchi_rl.policies.ComposeAgent` of them.
"""

import os
from typing import Any

from tarocchi_rl.policies.onnx_policy import OnnxAgent

from .compose_bot import is_composed_bot, load_composed_bot

__all__ = ["OnnxAgent", "check_spec_path", "parse_onnx_spec"]


SEED_MAX = 2**63 - 1
MAX_THREADS = 1024  # onnxruntime intra-op threads


def check_spec_path(kind: str, path: str) -> str:
    """A spec's file or directory path, refused (a ValueError naming it) when the system cannot even look it up:
    a NUL character, a name too long, ... (a path that does not exist is left to the loader, which says so)."""
    try:
        os.stat(path)
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as e:
        shown = path if len(path) <= 80 else path[:77] + "..."
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise ValueError(f"{kind} spec: cannot use the path {shown!r}: {why}") from None
    return path


def _int(key: str, val: str, lo: int, hi: int) -> int:
    """A spec's integer argument in [lo, hi] (a ValueError naming it otherwise)."""
    try:
        x = int(val.strip())
    except ValueError:
        raise ValueError(f"onnx spec: {key} must be an integer, got {val.strip()!r}") from None
    if not lo <= x <= hi:
        raise ValueError(f"onnx spec: {key} must be >= {lo} and <= {hi}, got {x}")
    return x


def parse_onnx_spec(args: str, seed: int = 0) -> Any:
    """``DIR[,greedy=false][,seed=N][,threads=N]`` -> OnnxAgent; a ValueError naming a bad argument (a missing,
    damaged or mismatched bot directory: :class:`tarocchi_rl.policies.onnx_policy.OnnxPolicyError`)."""
    path, greedy, threads = None, True, 1
    for part in [a for a in args.split(",") if a.strip()]:
        key, eq, val = part.partition("=")
        key = key.strip()
        if not eq:
            path = part.strip()
        elif key == "path":
            path = val.strip()
        elif key == "greedy":
            if val.strip().lower() not in ("true", "false", "1", "0"):
                raise ValueError(f"onnx spec: greedy must be true or false, got {val.strip()!r}")
            greedy = val.strip().lower() in ("true", "1")
        elif key == "seed":
            seed = _int(key, val, 0, SEED_MAX)
        elif key == "threads":
            threads = _int(key, val, 1, MAX_THREADS)
        else:
            raise ValueError(f"onnx spec: unknown argument {key!r} (known: DIR, greedy, seed, threads)")
    if not path:
        raise ValueError("onnx spec needs a bot directory: onnx:DIR (written by `tarocchi-rl export`)")
    if is_composed_bot(check_spec_path("onnx", path)):  # one exported policy per kind of decision
        return load_composed_bot(path, greedy=greedy, seed=seed, threads=threads, label=f"onnx:{args}")
    return OnnxAgent(check_spec_path("onnx", path), greedy=greedy, seed=seed, threads=threads, label=f"onnx:{args}")
