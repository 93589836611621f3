"""Average the network weights of several checkpoints of one run (issue 31: a bot from the mean of a run's late
checkpoints, as stochastic weight averaging smooths the noise of the last PPO updates).

    python experiments/studies/average_checkpoints.py --out runs/avg/mineo.pt CHECKPOINT CHECKPOINT ...

Every input must be a checkpoint of the same variant, options and network (the config's ``network`` section); each
tensor of ``model`` becomes the arithmetic mean of the inputs' (computed in float64, stored in its dtype). The rest
(config, update, samples, decisions, minutes, the commits of the run's starts) is the last input's, and
``averaged_from`` lists every input (path, update, the SHA-256 of its file). The optimizer, the league pool and the
RNG states are left out: the result is a network to evaluate or export (``ppo:OUT``, ``tarocchi-rl export --agent
ppo:OUT``), not a run to resume.
Prints one JSON object: the inputs and the output.
"""

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from tarocchi_rl.rl.checkpoint import load_checkpoint, save_checkpoint
from tarocchi_rl.rl.checkpoint_file import CheckpointError
from tarocchi_rl.rl.network import load_network

KEPT = ("format", "config", "update", "samples", "decisions", "minutes", "sources", "imitated")  # the last input's


def sha256_of(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def same_network(a: dict[str, Any], b: dict[str, Any]) -> str | None:
    """Why two checkpoint configs cannot be averaged (another variant, options or network), or None."""
    for key in ("variant", "options", "network"):
        if a.get(key) != b.get(key):
            return f"its {key} {b.get(key)!r} differs from the first's {a.get(key)!r}"
    return None


def average(checkpoints: list[dict[str, Any]]) -> dict[str, Any]:
    """The checkpoint whose ``model`` is the mean of ``checkpoints``' (loaded and checked ones, same network)."""
    last = checkpoints[-1]
    model = {name: (sum(c["model"][name].double() for c in checkpoints) / len(checkpoints)).to(tensor.dtype)
             for name, tensor in last["model"].items()}
    out = {k: last[k] for k in KEPT if k in last}
    out["model"] = model
    out["averaged_from"] = [{"path": c["path"], "update": c.get("update"), "sha256": sha256_of(c["path"])}
                            for c in checkpoints]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="average_checkpoints", description=__doc__.split("\n\n")[0])
    ap.add_argument("checkpoints", nargs="+", help="checkpoint files of one run (two or more)")
    ap.add_argument("--out", required=True, help="where to write the averaged checkpoint")
    args = ap.parse_args(argv)
    if len(args.checkpoints) < 2:
        ap.error("give two checkpoints or more")
    try:
        loaded: list[dict[str, Any]] = []
        for path in args.checkpoints:
            data = load_checkpoint(path)
            load_network(data)  # its config and tensor shapes checked before any arithmetic
            if loaded and (why := same_network(loaded[0]["config"], data["config"])):
                raise CheckpointError(f"{path}: {why}")
            loaded.append(data)
        averaged = average(loaded)
        save_checkpoint(args.out, averaged)
        load_network(load_checkpoint(args.out))  # the result loads as a network
    except (CheckpointError, ValueError, OSError) as e:
        print(f"average_checkpoints: {e}", file=sys.stderr)
        return 2
    print(json.dumps({"out": args.out, "variant": averaged["config"]["variant"],
                      "averaged_from": averaged["averaged_from"]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
