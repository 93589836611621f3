"""Agent specs: the strings that name an agent on the command line (``random``, ``heuristic``, ``ppo:PATH``).

| spec                                   | agent                                                      |
|----------------------------------------|------------------------------------------------------------|
| ``random``                             | uniformly random legal actions                             |
| ``heuristic``                          | the rule-based bot of :mod:`tarocchi_rl.agents.heuristic`  |
| ``ppo:PATH[,greedy=false][,seed=N]``   | a trained PPO policy (checkpoint file or run directory)    |
| ``ismcts:iterations=1000[,...]``       | Information Set MCTS (options in ``agents/ismcts.py``)     |
"""

from .base import RandomAgent

KNOWN = "random, heuristic, ppo:PATH, ismcts:iterations=N"


def make_agent(spec, seed: int = 0):
    """An agent from its spec (an agent object is returned as is). Unknown specs are a ValueError."""
    if not isinstance(spec, str):
        if not hasattr(spec, "act"):
            raise ValueError(f"not an agent spec or agent: {spec!r}")
        return spec
    name, _, args = spec.strip().partition(":")
    name = name.lower()
    if name == "random":
        return RandomAgent(seed)
    if name == "heuristic":
        from .heuristic import HeuristicAgent

        return HeuristicAgent()
    if name == "ppo":
        from .ppo import parse_ppo_spec

        return parse_ppo_spec(args, seed)
    if name == "ismcts":
        from .ismcts import parse_ismcts_spec

        return parse_ismcts_spec(args, seed)
    raise ValueError(f"unknown agent spec {spec!r} (known: {KNOWN})")


def agent_label(spec) -> str:
    """The name an agent or spec is reported under."""
    return spec if isinstance(spec, str) else getattr(spec, "name", type(spec).__name__)


def split_agent_specs(text: str) -> list:
    """Split ``--agents`` on commas; a ``key=value`` piece belongs to the spec before it
    (``ismcts:iterations=1000,workers=2,heuristic`` -> two specs)."""
    specs = []
    for piece in (p.strip() for p in text.split(",")):
        if not piece:
            continue
        if specs and "=" in piece and ":" not in piece.split("=", 1)[0]:
            specs[-1] += "," + piece
        else:
            specs.append(piece)
    return specs
