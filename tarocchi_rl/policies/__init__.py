"""Policies without learned weights, in the agent protocol (:mod:`.base`): uniformly random and the heuristic,
and :class:`ComposeAgent` (one agent per kind of decision).

The layer between the game API and the learners / search: the heuristic's Numba kernels are used by search
rollouts (:mod:`tarocchi_rl.search`), by imitation and league opponents (:mod:`tarocchi_rl.rl`) and by the arena;
:func:`make_baseline` builds these two by name. Agents that load files or search (``ppo:``, ``ismcts:``) are
built by :func:`tarocchi_rl.agents.specs.make_agent`, one layer up.
"""

from .base import Agent, AgentLike, RandomAgent
from .compose import ComposeAgent
from .heuristic import HeuristicAgent, heuristic_actions, heuristic_row

BASELINES = ("random", "heuristic")


def make_baseline(spec: str | AgentLike, seed: int = 0) -> AgentLike:
    """``random`` or ``heuristic`` by name (an agent object is returned as is); ValueError otherwise."""
    if not isinstance(spec, str):
        if not hasattr(spec, "act"):
            raise ValueError(f"not an agent spec or agent: {spec!r}")
        return spec
    name = spec.strip().lower()
    if name == "random":
        return RandomAgent(seed)
    if name == "heuristic":
        return HeuristicAgent(seed)
    raise ValueError(f"unknown baseline {spec!r} (known here: {', '.join(BASELINES)}; every agent spec: "
                     "tarocchi_rl.agents.specs.make_agent)")


def agent_label(spec: str | AgentLike) -> str:
    """The name an agent or spec is reported under."""
    return spec if isinstance(spec, str) else getattr(spec, "name", type(spec).__name__)


__all__ = ["Agent", "AgentLike", "BASELINES", "ComposeAgent", "HeuristicAgent", "RandomAgent", "agent_label",
           "heuristic_actions", "heuristic_row", "make_baseline"]
