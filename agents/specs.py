"""Agent specs: the strings that name an agent on the command line (``random``, ``heuristic``, ``ppo:PATH``).

| spec                                   | agent                                                      |
|----------------------------------------|------------------------------------------------------------|
| ``random``                             | uniformly random legal actions                             |
| ``heuristic``                          | the rule-based bot of :mod:`tarocchi_rl.policies.heuristic`|
| ``ppo:PATH[,greedy=false][,seed=N]``   | a trained PPO policy (checkpoint file or run directory)    |
| ``onnx:DIR[,greedy=false][,seed=N]``   | an exported policy (``tarocchi-rl export``), no torch      |
| ``bot:NAME[,greedy=false][,seed=N]``   | a bot shipped with the package (``models/NAME``, e.g.      |
|                                        | ``bot:mineo``): ``onnx:`` of that directory                |
| ``ismcts:iterations=1000[,...]``       | Information Set MCTS (options in ``agents/ismcts.py``)     |
| ``cmd:"PROGRAM ARGS"[,timeout=S]``     | an external program speaking tarocchi-bot/1 (``agents/cmd.py``) |
| ``compose:bid=SPEC,play=SPEC[,...]``    | one agent per kind of decision: ``bid`` (auction, commitments), |
|                                        | ``discard``, ``play``; ``rest=SPEC`` for the kinds not named   |

``ppo:`` and ``ismcts:`` (which can load a PPO prior) import torch, so their modules are imported when such a
spec is built: ``onnx:``, ``random`` and ``heuristic`` work where torch is not installed (the ``bot`` extra).
"""

import hashlib
import os
import re
from pathlib import Path

from tarocchi_rl.core.phases import DECISION_KINDS
from tarocchi_rl.policies import BASELINES, AgentLike, agent_label, make_baseline
from tarocchi_rl.policies.compose import ComposeAgent
from tarocchi_rl.rl.checkpoint_file import precheck_checkpoint
from tarocchi_rl.shipped import shipped_bot

from .onnx import parse_onnx_spec
from .spec_args import parse_ppo_args

KNOWN = ('random, heuristic, ppo:PATH, onnx:DIR, bot:VARIANT, ismcts:iterations=N, cmd:"PROGRAM ARGS", '
         'compose:bid=SPEC,play=SPEC')
__all__ = ["KNOWN", "agent_fingerprint", "agent_label", "make_agent", "split_agent_specs"]


def make_agent(spec: str | AgentLike, seed: int = 0) -> AgentLike:
    """An agent from its spec (an agent object is returned as is). Unknown specs are a ValueError."""
    if not isinstance(spec, str):
        return make_baseline(spec, seed)
    name, _, args = spec.strip().partition(":")
    name = name.lower()
    if name in BASELINES and not args:
        return make_baseline(name, seed)
    if name == "ppo":
        # a hostile checkpoint is refused before torch is imported (rl/checkpoint_file.py: seconds, 200+ MB)
        precheck_checkpoint(parse_ppo_args(args, seed)[0])
        from .ppo import parse_ppo_spec  # torch: imported only for this spec (module docstring)

        return parse_ppo_spec(args, seed)
    if name == "onnx":
        return parse_onnx_spec(args, seed)
    if name == "bot":
        bot, _, rest = args.partition(",")
        agent = parse_onnx_spec(",".join([str(shipped_bot(bot.strip())), *([rest] if rest else [])]), seed)
        agent.name = spec.strip()
        return agent
    if name == "ismcts":
        from .ismcts import parse_ismcts_spec  # torch (a PPO prior): imported only for this spec

        return parse_ismcts_spec(args, seed)
    if name == "cmd":
        from .cmd import parse_cmd_spec

        return parse_cmd_spec(args)
    if name == "compose":
        return ComposeAgent({kind: make_agent(sub, seed + k) for k, (kind, sub) in enumerate(
            parse_compose_spec(args).items())}, name=spec.strip())
    raise ValueError(f"unknown agent spec {spec!r} (known: {KNOWN})")


def parse_compose_spec(args: str) -> dict[str, str]:
    """``bid=SPEC,play=SPEC,rest=SPEC`` -> {kind: spec} for every kind of DECISION_KINDS (a ValueError names a
    kind given twice, an unknown one, or a kind left without an agent). A piece ``key=value`` whose key is not
    a kind belongs to the spec before it (``play=ismcts:time=0.05,iterations=100``); a nested compose is refused."""
    parts: dict[str, str] = {}
    current = None
    for piece in split_agent_specs_raw(args):
        key, eq, value = piece.partition("=")
        key = key.strip().lower()
        if eq and (key in DECISION_KINDS or key == "rest"):
            if key in parts:
                raise ValueError(f"compose: {key} given twice")
            parts[key], current = value.strip(), key
        elif current is None:
            raise ValueError(f"compose: expected kind=SPEC (kinds: {', '.join(DECISION_KINDS)}, rest), got {piece!r}")
        else:
            parts[current] += "," + piece.strip()
    for kind, sub in parts.items():
        if not sub:
            raise ValueError(f"compose: {kind}= names no agent")
        if sub.lower().startswith("compose"):
            raise ValueError(f"compose: {kind}={sub!r}: a nested compose is not supported")
    rest = parts.pop("rest", None)
    missing = [k for k in DECISION_KINDS if k not in parts]
    if missing and rest is None:
        raise ValueError(f"compose: no agent for {', '.join(missing)} (name each kind or add rest=SPEC)")
    return {k: parts.get(k, rest or "") for k in DECISION_KINDS}


def split_agent_specs_raw(text: str) -> list[str]:
    """Split on commas outside double quotes (``cmd:"prog --a x,y"`` stays whole)."""
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
    return pieces


def split_agent_specs(text: str) -> list[str]:
    """Split ``--agents`` on commas outside double quotes; a ``key=value`` piece belongs to the spec before it
    (``ismcts:iterations=1000,workers=2,heuristic`` -> two specs; ``cmd:"prog --a x,y",heuristic`` -> two)."""
    pieces = split_agent_specs_raw(text)
    specs: list[str] = []
    for piece in (p.strip() for p in pieces):
        if not piece:
            continue
        if specs and "=" in piece and ":" not in piece.split("=", 1)[0]:
            specs[-1] += "," + piece
        else:
            specs.append(piece)
    return specs


def agent_fingerprint(spec: str) -> str:
    """A digest of an agent spec and of the bytes of every file it names (a bot directory, a shipped bot, a
    checkpoint, a search's network), so that a recorded result is reused only for the same agent (the resumable
    arena, :mod:`tarocchi_rl.arena_blocks`). A directory's documentation (``*.md``: a model card) and the code
    are not part of it. ``cmd:`` specs are a ValueError: their program is outside the files a spec names."""
    tokens = [t.strip() for t in re.split(r"[:,=]", spec)]
    if any(t.lower() == "cmd" for t in tokens):
        raise ValueError(f"agent {spec!r}: an external program (cmd:) cannot be fingerprinted for reuse")
    h = hashlib.sha256(spec.strip().encode())
    for k, tok in enumerate(tokens):
        if k > 0 and tokens[k - 1].lower() == "bot":
            tok = str(shipped_bot(tok))
        if tok and os.path.exists(tok):
            root = Path(tok)
            files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix != ".md") if root.is_dir() else [root]
            for f in files:
                h.update(str(f.relative_to(root) if root.is_dir() else f.name).encode() + b"\0")
                h.update(_file_digest(f))
    return h.hexdigest()[:32]


def _file_digest(path: Path) -> bytes:
    """SHA-256 of a regular file, read in chunks (a checkpoint may be large); a pipe or a device, which may never
    end, is a ValueError."""
    if not path.is_file():
        raise ValueError(f"agent file {path}: not a regular file")
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.digest()
