"""``onnx:DIR`` and ``bot:NAME``: an exported policy (a bot directory written by ``tarocchi-rl export``, or one
shipped with the package) as an agent, on onnxruntime and numpy only (no torch).

``threads`` is onnxruntime's intra-op thread count. Loading checks the directory's manifest against this engine
(variant, options, observation layout, action table) and refuses a mismatch naming the field. The agent itself is
:class:`tarocchi_rl.policies.onnx_policy.OnnxAgent`; a composed bot directory (``compose.json``: one exported
policy per kind of decision, :mod:`.compose_bot`) is a :class:`~tarocchi_rl.policies.ComposeAgent` of them.
"""

from typing import Any

from tarocchi_rl.policies import AgentLike
from tarocchi_rl.policies.onnx_policy import OnnxAgent
from tarocchi_rl.shipped import shipped_bot

from .args import GREEDY, SEED, Arg
from .compose_bot import is_composed_bot, load_composed_bot
from .registry import AgentKind, register_kind

__all__ = ["BOT", "ONNX", "OnnxAgent", "load_bot_directory"]

MAX_THREADS = 1024  # onnxruntime intra-op threads
THREADS = Arg("threads", "int", "onnxruntime's intra-op threads", default=1, lo=1, hi=MAX_THREADS)


def load_bot_directory(path: str, values: dict[str, Any], label: str) -> AgentLike:
    """The agent of a bot directory (a composed one: a ComposeAgent of its parts) with the spec's ``greedy``,
    ``seed`` and ``threads``; a missing, damaged or mismatched directory is an
    :class:`~tarocchi_rl.policies.onnx_policy.OnnxPolicyError` (a ValueError)."""
    options = {k: values[k] for k in ("greedy", "seed", "threads")}
    if is_composed_bot(path):  # one exported policy per kind of decision
        return load_composed_bot(path, label=label, **options)
    return OnnxAgent(path, label=label, **options)


ONNX = register_kind(AgentKind(
    "onnx", "an exported policy, no torch (tarocchi_rl.policies.onnx_policy.OnnxAgent)",
    build=lambda values, seed, label: load_bot_directory(values["path"], values, label),
    args=(Arg("path", "path", "a bot directory (written by `tarocchi-rl export`)", positional=True, required=True,
              metavar="DIR"), GREEDY, SEED, THREADS)))

BOT = register_kind(AgentKind(
    "bot", "a bot shipped with the package (models/NAME, e.g. bot:mineo): onnx: of that directory",
    build=lambda values, seed, label: load_bot_directory(str(shipped_bot(values["name"])), values, label),
    args=(Arg("name", "text", "the name of a shipped bot (a variant)", positional=True, required=True,
              metavar="NAME"), GREEDY, SEED, THREADS)))
