"""Agent specs: the strings that name an agent on the command line (``random``, ``heuristic``, ``ppo:PATH``).

| spec                                   | agent                                                      |
|----------------------------------------|------------------------------------------------------------|
| ``random``                             | uniformly random legal actions                             |
| ``heuristic``                          | the rule-based bot of :mod:`tarocchi_rl.policies.heuristic`|
| ``ppo:PATH[,greedy=false][,seed=N]``   | a trained PPO policy (checkpoint file or run directory)    |
| ``ismcts:iterations=1000[,...]``       | Information Set MCTS (options in ``agents/ismcts.py``)     |
"""

from tarocchi_rl.policies import BASELINES, AgentLike, agent_label, make_baseline

from .ismcts import parse_ismcts_spec
from .ppo import parse_ppo_spec

KNOWN = "random, heuristic, ppo:PATH, ismcts:iterations=N"
__all__ = ["KNOWN", "agent_label", "make_agent", "split_agent_specs"]


def make_agent(spec: str | AgentLike, seed: int = 0) -> AgentLike:
    """An agent from its spec (an agent object is returned as is). Unknown specs are a ValueError."""
    if not isinstance(spec, str):
        return make_baseline(spec, seed)
    name, _, args = spec.strip().partition(":")
    name = name.lower()
    if name in BASELINES and not args:
        return make_baseline(name, seed)
    if name == "ppo":
        return parse_ppo_spec(args, seed)
    if name == "ismcts":
        return parse_ismcts_spec(args, seed)
    raise ValueError(f"unknown agent spec {spec!r} (known: {KNOWN})")


def split_agent_specs(text: str) -> list[str]:
    """Split ``--agents`` on commas; a ``key=value`` piece belongs to the spec before it
    (``ismcts:iterations=1000,workers=2,heuristic`` -> two specs)."""
    specs: list[str] = []
    for piece in (p.strip() for p in text.split(",")):
        if not piece:
            continue
        if specs and "=" in piece and ":" not in piece.split("=", 1)[0]:
            specs[-1] += "," + piece
        else:
            specs.append(piece)
    return specs
