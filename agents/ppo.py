"""``ppo:PATH``: a trained PPO policy as an agent (greedy by default).

Spec: ``ppo:PATH[,greedy=false][,seed=N]`` where PATH is a checkpoint file or a run directory (its
``checkpoints/final.pt``, else ``latest.pt``). The policy must have been trained on the variant it plays
(checked on the first decision: the arena and the environments pass the batch env). The agent itself is
:class:`tarocchi_rl.rl.policy.PPOAgent`.
"""

from tarocchi_rl.rl.policy import PPOAgent

from .spec_args import check_spec_path, parse_greedy, parse_seed_arg

__all__ = ["PPOAgent", "parse_ppo_spec"]


def parse_ppo_spec(args: str, seed: int = 0) -> PPOAgent:
    """``PATH[,greedy=false][,seed=N]`` (also ``path=PATH``) -> PPOAgent; a ValueError naming a bad argument
    (a missing or damaged checkpoint: :class:`tarocchi_rl.rl.checkpoint.CheckpointError`, a ValueError too)."""
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
    return PPOAgent(path=check_spec_path("ppo", path), greedy=greedy, seed=seed, label=f"ppo:{args}")
