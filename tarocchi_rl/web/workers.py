"""The work of ``tarocchi-rl serve`` that runs in worker processes: ``POST /v1/act`` with a fast bot (the seat's
position rebuilt from the request's history, then the bot) and ``POST /v1/replay``.

Both are Python that holds the GIL for milliseconds (a crafted impossible history: up to 0.2 s); in a thread of
the server they would take the GIL from the event loop that serves every table. In their own processes
(:class:`tarocchi_rl.web.limits.Processes`, spawned: no fork of a process running Numba's and onnxruntime's
threads) they take only a CPU. Each act process builds its own :class:`~tarocchi_rl.web.bots.BotPool` per fast
bot at start (:func:`start`), so a deal's rebuilt position stays cached there between its requests. Everything
here is a plain function of plain data (pickled to and from the process); nothing raises to the caller.
"""

import json
from typing import Any

from ..bot import BotServer, play_deal
from ..play import make_bot
from ..records import RecordError, describe_outcome
from ..records import replay as replay_record
from ..variants import VARIANTS, get_variant
from .bots import BotPool
from .score_sheet import score_sheet
from .table import check_options, replay_steps

__all__ = ["act", "ping", "replay", "start"]

_POOLS: dict[str, BotPool] = {}  # this process's fast bots, by display name


def start(specs: dict[str, str], warm: bool) -> None:
    """A worker process's initializer: a BotPool per fast bot (``specs``: display name -> spec); ``warm``: answer
    a few real requests first, so that the kernels are loaded before a client waits."""
    for name, spec in specs.items():
        _POOLS[name] = BotPool(name, spec, 1)
    if warm:
        for line in _warm_requests():
            for pool in _POOLS.values():
                pool.handle(line, json.loads(line))


def _warm_requests() -> list[str]:
    """Per variant, the first request of a deal and one in its card play (the heuristic plays every seat; a bot
    error ends the deal early: enough is warm, and a warm-up never keeps the server from starting)."""
    heuristic = BotServer("heuristic", lambda spec: make_bot(spec, 0, "bot"))
    out = []
    for variant in VARIANTS:
        sent: list[str] = []
        play_deal(heuristic, variant, 1, sent)
        out += [line for k, line in enumerate(sent) if k in (0, 4 * get_variant(variant).n_players)]
    return out


def ping() -> bool:
    """Nothing: a job that starts the process (and runs :func:`start`) before the first request."""
    return True


def act(name: str, line: str) -> dict[str, Any]:
    """The fast bot ``name``'s answer to one request line (parsed here again, within the protocol's bounds: the
    server checked it already); an ``error`` answer, never an exception."""
    pool = _POOLS.get(name)
    if pool is None:
        return {"type": "error", "error": f"agent: this worker has no fast bot {name!r}"}
    return pool.handle(line, None)


def replay(record: Any, steps: bool) -> dict[str, Any]:
    """``{"result": ...}``, the checked and scored record, or ``{"error": ..., "action_index": ...}``."""
    try:
        return {"result": replay_result(record, steps)}
    except RecordError as e:
        return {"error": str(e), "action_index": e.action_index}


def replay_result(record: Any, steps: bool) -> dict[str, Any]:
    """A record checked and scored (``steps``: and every position); RecordError when it is not valid. Runs in a
    worker process (:func:`replay`)."""
    if isinstance(record, dict) and isinstance(record.get("variant"), str) and record["variant"] in VARIANTS:
        try:
            check_options(record["variant"], record.get("options") or {})
        except ValueError as e:
            raise RecordError(str(e)) from None
    state = replay_record(record)
    out = state.outcome()
    result: dict[str, Any] = {"valid": True, "variant": state.game.variant, "options": dict(state.game.options),
                              "actions": len(state.history), "outcome": out,
                              "summary": describe_outcome(out, state.game.variant), "sheet": score_sheet(state),
                              "record": state.to_record()}
    if steps:
        result["steps"] = replay_steps(record)
    return result
