"""``ppo:PATH``: a trained PPO policy as an agent (greedy by default).

Spec: ``ppo:PATH[,greedy=false][,seed=N]`` where PATH is a checkpoint file or a run directory (its
``checkpoints/final.pt``, else ``latest.pt``). The policy must have been trained on the variant it plays
(checked on the first decision: the arena and the environments pass the batch env). The agent itself is
:class:`tarocchi_rl.rl.policy.PPOAgent`.
"""

from tarocchi_rl.rl.policy import PPOAgent

from .spec_args import parse_ppo_args

__all__ = ["PPOAgent", "parse_ppo_spec"]


def parse_ppo_spec(args: str, seed: int = 0) -> PPOAgent:
    """``PATH[,greedy=false][,seed=N]`` (also ``path=PATH``) -> PPOAgent; a ValueError naming a bad argument
    (a missing or damaged checkpoint: :class:`tarocchi_rl.rl.checkpoint.CheckpointError`, a ValueError too)."""
    path, greedy, seed = parse_ppo_args(args, seed)
    return PPOAgent(path=path, greedy=greedy, seed=seed, label=f"ppo:{args}")
