"""Agent specs: the strings that name an agent on the command line (``random``, ``heuristic``, ...)."""

from .base import RandomAgent


def make_agent(spec: str, seed: int = 0):
    """An agent from its spec. Unknown specs are a ValueError listing the known ones."""
    name, _, args = spec.strip().partition(":")
    name = name.lower()
    if name == "random":
        return RandomAgent(seed)
    if name == "heuristic":
        from .heuristic import HeuristicAgent

        return HeuristicAgent()
    raise ValueError(f"unknown agent spec {spec!r} (known: random, heuristic)")
