"""``onnx:DIR``: an exported policy (a bot directory written by ``tarocchi-rl export``) as an agent.

Spec: ``onnx:DIR[,greedy=false][,seed=N][,threads=N]`` (also ``path=DIR``). The agent runs on onnxruntime and
numpy only (no torch); ``threads`` is onnxruntime's intra-op thread count (default 1). Loading checks the
directory's manifest against this engine (variant, options, observation layout, action table) and refuses a
mismatch naming the field. The agent itself is :class:`tarocchi_rl.policies.onnx_policy.OnnxAgent`; a composed
bot directory (``compose.json``: one exported policy per kind of decision, :mod:`.compose_bot`) is a
:class:`~tarocchi_rl.policies.ComposeAgent` of them.
"""

from typing import Any

from tarocchi_rl.policies.onnx_policy import OnnxAgent

from .compose_bot import is_composed_bot, load_composed_bot
from .spec_args import check_spec_path, parse_greedy, parse_int, parse_seed_arg

__all__ = ["OnnxAgent", "parse_onnx_spec"]


MAX_THREADS = 1024  # onnxruntime intra-op threads


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
            greedy = parse_greedy("onnx", val)
        elif key == "seed":
            seed = parse_seed_arg("onnx", val)
        elif key == "threads":
            threads = parse_int("onnx", key, val, 1, MAX_THREADS)
        else:
            raise ValueError(f"onnx spec: unknown argument {key!r} (known: DIR, greedy, seed, threads)")
    if not path:
        raise ValueError("onnx spec needs a bot directory: onnx:DIR (written by `tarocchi-rl export`)")
    if is_composed_bot(check_spec_path("onnx", path)):  # one exported policy per kind of decision
        return load_composed_bot(path, greedy=greedy, seed=seed, threads=threads, label=f"onnx:{args}")
    return OnnxAgent(check_spec_path("onnx", path), greedy=greedy, seed=seed, threads=threads, label=f"onnx:{args}")
