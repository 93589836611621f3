"""Agent specs: the strings that name an agent on the command line (``random``, ``heuristic``, ``ppo:PATH``,
``ismcts:iterations=200``, ...). Every kind and its arguments: ``tarocchi-rl agents`` (:func:`spec_help`), or
the docs table (:func:`spec_table_markdown`); the kinds are declared in the modules of ``agents/`` and read by one
parser (:mod:`.registry`).

- :func:`make_agent`: a spec -> its agent (torch is imported only for a PPO checkpoint: ``ppo:``, or a checkpoint
  as an ``ismcts`` prior or net; ``onnx:``, ``bot:``, ``random``, ``heuristic`` and ``cmd:`` work without it)
- :func:`split_agent_specs`: ``--agents A,B,C`` -> the specs
- :func:`agent_fingerprint`: a digest of a spec and of the files it names (the resumable arena)
"""

import hashlib
import os
import re
from pathlib import Path

from tarocchi_rl.keyvalue import split_outside_quotes
from tarocchi_rl.policies import agent_label
from tarocchi_rl.shipped import shipped_bot

from .compose_bot import parse_compose_spec
from .registry import known_specs, make_agent, spec_help, spec_table_markdown

__all__ = ["agent_fingerprint", "agent_label", "known_specs", "make_agent", "parse_compose_spec", "spec_help",
           "spec_table_markdown", "split_agent_specs"]


def split_agent_specs(text: str) -> list[str]:
    """Split ``--agents`` on commas outside double quotes; a ``key=value`` piece belongs to the spec before it
    (``ismcts:iterations=1000,workers=2,heuristic`` -> two specs; ``cmd:"prog --a x,y",heuristic`` -> two)."""
    pieces = split_outside_quotes(text, "agent specs")
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
    arena, :mod:`tarocchi_rl.arena.blocks`). A directory's documentation (``*.md``: a model card) and the code
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
