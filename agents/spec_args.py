"""The arguments that several agent specs share: a file or directory path, ``greedy=``, ``seed=`` and bounded
integers, each refused with a ValueError that names the spec kind and the argument."""

import os

from tarocchi_rl.bits import parse_seed

__all__ = ["check_spec_path", "parse_greedy", "parse_int", "parse_seed_arg"]


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


def parse_greedy(kind: str, val: str) -> bool:
    """A spec's ``greedy=true|false|1|0``."""
    if val.strip().lower() not in ("true", "false", "1", "0"):
        raise ValueError(f"{kind} spec: greedy must be true or false, got {val.strip()!r}")
    return val.strip().lower() in ("true", "1")


def parse_seed_arg(kind: str, val: str) -> int:
    """A spec's ``seed=N``: an integer in [0, 2**63 - 1] (:data:`tarocchi_rl.bits.SEED_MAX`)."""
    return parse_seed(f"{kind} spec: seed", val)


def parse_int(kind: str, key: str, val: str, lo: int, hi: int) -> int:
    """A spec's integer argument ``key=val`` in [lo, hi]."""
    try:
        x = int(val.strip())
    except ValueError:
        raise ValueError(f"{kind} spec: {key} must be an integer, got {val.strip()!r}") from None
    if not lo <= x <= hi:
        raise ValueError(f"{kind} spec: {key} must be >= {lo} and <= {hi}, got {x}")
    return x


def parse_ppo_args(args: str, seed: int = 0) -> tuple[str, bool, int]:
    """A ``ppo:`` spec's ``PATH[,greedy=false][,seed=N]`` (also ``path=PATH``) -> (path, greedy, seed), without
    torch; a ValueError naming a bad argument."""
    path, greedy = None, True
    for part in [a for a in args.split(",") if a.strip()]:
        key, eq, val = part.partition("=")
        key = key.strip()
        if not eq:
            path = part.strip()
        elif key == "path":
            path = val.strip()
        elif key == "greedy":
            greedy = parse_greedy("ppo", val)
        elif key == "seed":
            seed = parse_seed_arg("ppo", val)
        else:
            raise ValueError(f"ppo spec: unknown argument {key!r} (known: PATH, greedy, seed)")
    if not path:
        raise ValueError("ppo spec needs a checkpoint: ppo:PATH (a .pt file or a run directory)")
    return check_spec_path("ppo", path), greedy, seed
