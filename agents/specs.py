"""Agent specs: the strings that name an agent on the command line (``random``, ``heuristic``, ``ppo:PATH``).

| spec                                   | agent                                                      |
|----------------------------------------|------------------------------------------------------------|
| ``random``                             | uniformly random legal actions                             |
| ``heuristic``                          | the rule-based bot of :mod:`tarocchi_rl.policies.heuristic`|
| ``ppo:PATH[,greedy=false][,seed=N]``   | a trained PPO policy (checkpoint file or run directory)    |
| ``onnx:DIR[,greedy=false][,seed=N]``   | an exported policy (``tarocchi-rl export``), no torch      |
| ``ismcts:iterations=1000[,...]``       | Information Set MCTS (options in ``agents/ismcts.py``)     |
| ``cmd:"PROGRAM ARGS"[,timeout=S]``     | an external program speaking tarocchi-bot/1 (``agents/cmd.py``) |

``ppo:`` and ``ismcts:`` (which can load a PPO prior) import torch, so their modules are imported when such a
spec is built: ``onnx:``, ``random`` and ``heuristic`` work where torch is not installed (the ``bot`` extra).
"""

from tarocchi_rl.policies import BASELINES, AgentLike, agent_label, make_baseline

from .onnx import parse_onnx_spec

KNOWN = 'random, heuristic, ppo:PATH, onnx:DIR, ismcts:iterations=N, cmd:"PROGRAM ARGS"'
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
        from .ppo import parse_ppo_spec  # torch: imported only for this spec (module docstring)

        return parse_ppo_spec(args, seed)
    if name == "onnx":
        return parse_onnx_spec(args, seed)
    if name == "ismcts":
        from .ismcts import parse_ismcts_spec  # torch (a PPO prior): imported only for this spec

        return parse_ismcts_spec(args, seed)
    if name == "cmd":
        from .cmd import parse_cmd_spec

        return parse_cmd_spec(args)
    raise ValueError(f"unknown agent spec {spec!r} (known: {KNOWN})")


def split_agent_specs(text: str) -> list[str]:
    """Split ``--agents`` on commas outside double quotes; a ``key=value`` piece belongs to the spec before it
    (``ismcts:iterations=1000,workers=2,heuristic`` -> two specs; ``cmd:"prog --a x,y",heuristic`` -> two)."""
    pieces, cur, quoted = [], "", False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        if ch == "," and not quoted:
            pieces.append(cur)
            cur = ""
        else:
            cur += ch
    if quoted:
        raise ValueError(f"unclosed double quote in agent specs {text!r}")
    pieces.append(cur)
    specs: list[str] = []
    for piece in (p.strip() for p in pieces):
        if not piece:
            continue
        if specs and "=" in piece and ":" not in piece.split("=", 1)[0]:
            specs[-1] += "," + piece
        else:
            specs.append(piece)
    return specs
