"""``ppo:PATH``: a trained PPO policy as an agent (greedy by default).

PATH is a checkpoint file or a run directory (its ``checkpoints/final.pt``, else ``latest.pt``). The policy must
have been trained on the variant it plays (checked on the first decision: the arena and the environments pass the
batch env). The agent itself is :class:`tarocchi_rl.rl.policy.PPOAgent` (also importable from here, as
``tarocchi_rl.agents.ppo.PPOAgent``); torch is imported when such an agent is built (or PPOAgent is imported), and
a hostile checkpoint is refused before that (:func:`tarocchi_rl.rl.checkpoint_file.precheck_checkpoint`).
"""

from typing import Any

from tarocchi_rl.policies import AgentLike
from tarocchi_rl.rl.checkpoint_file import precheck_checkpoint

from .args import GREEDY, SEED, Arg
from .registry import AgentKind, register_kind

__all__ = ["PPO", "PPOAgent"]  # noqa: F822  PPOAgent: the module __getattr__ below (torch)


def _policy_class() -> Any:
    """:class:`tarocchi_rl.rl.policy.PPOAgent` (imports torch)."""
    from tarocchi_rl.rl.policy import PPOAgent

    return PPOAgent


def _build(values: dict[str, Any], seed: int, label: str) -> AgentLike:
    precheck_checkpoint(values["path"])  # seconds and 200+ MB of torch are spent only on a plausible checkpoint
    agent: AgentLike = _policy_class()(path=values["path"], greedy=values["greedy"], seed=values["seed"], label=label)
    return agent


PPO = register_kind(AgentKind(
    "ppo", "a trained PPO policy (a checkpoint; imports torch): tarocchi_rl.rl.policy.PPOAgent", build=_build,
    args=(Arg("path", "path", "a checkpoint: a .pt file or a run directory", positional=True, required=True,
              metavar="PATH"), GREEDY, SEED)))


def __getattr__(name: str) -> Any:
    """``PPOAgent``, imported (with torch) when asked for."""
    if name == "PPOAgent":
        return _policy_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
