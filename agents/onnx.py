"""``onnx:DIR``: an exported policy (a bot directory written by ``tarocchi-rl export``) as an agent.

Spec: ``onnx:DIR[,greedy=false][,seed=N][,threads=N]`` (also ``path=DIR``). The agent runs on onnxruntime and
numpy only (no torch); ``threads`` is onnxruntime's intra-op thread count (default 1). Loading checks the
directory's manifest against this engine (variant, options, observation layout, action table) and refuses a
mismatch naming the field. The agent itself is :class:`tarocchi_rl.policies.onnx_policy.OnnxAgent`.
"""

from tarocchi_rl.policies.onnx_policy import OnnxAgent

__all__ = ["OnnxAgent", "parse_onnx_spec"]


def _int(key: str, val: str) -> int:
    try:
        return int(val.strip())
    except ValueError:
        raise ValueError(f"onnx spec: {key} must be an integer, got {val!r}") from None


def parse_onnx_spec(args: str, seed: int = 0) -> OnnxAgent:
    """``DIR[,greedy=false][,seed=N][,threads=N]`` -> OnnxAgent."""
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
                raise ValueError(f"onnx spec: greedy must be true or false, got {val!r}")
            greedy = val.strip().lower() in ("true", "1")
        elif key == "seed":
            seed = _int(key, val)
        elif key == "threads":
            threads = _int(key, val)
            if threads < 1:
                raise ValueError(f"onnx spec: threads must be >= 1, got {threads}")
        else:
            raise ValueError(f"onnx spec: unknown argument {key!r} (known: DIR, greedy, seed, threads)")
    if not path:
        raise ValueError("onnx spec needs a bot directory: onnx:DIR (written by `tarocchi-rl export`)")
    return OnnxAgent(path, greedy=greedy, seed=seed, threads=threads, label=f"onnx:{args}")
