"""An agent made of other agents, one per kind of decision (a bidding bot with a card-play bot).

::

    agent = ComposeAgent({"bid": ppo_agent, "discard": heuristic, "play": ismcts_agent})
    agent.act(obs, mask, env, idx)   # each row goes to the agent of its kind, by the game's phase

The kinds are :data:`tarocchi_rl.core.phases.DECISION_KINDS` (``bid``: the auction and every commitment;
``discard``: monte / chien discards; ``play``: cards played to tricks). The spec is
``compose:bid=SPEC,discard=SPEC,play=SPEC`` with ``rest=SPEC`` for the kinds not named (agents/specs.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ..core.phases import DECISION_KINDS
from ..core.state import PHASE
from ..variants.phases import DECISION_KIND_OF_PHASE
from .base import Agent, AgentLike

if TYPE_CHECKING:
    from ..batch import BatchEnv

_KIND_OF_PHASE = np.asarray(DECISION_KIND_OF_PHASE, np.int64)


def decision_kinds(env: BatchEnv, idx: NDArray[np.int64]) -> NDArray[np.int64]:
    """int64[k]: the kind index (into DECISION_KINDS) of the decision each game ``idx`` is at."""
    return _KIND_OF_PHASE[np.asarray(env.state.meta[idx, PHASE], np.int64)]


class ComposeAgent(Agent):
    """Each kind of decision played by its own agent (module docstring). ``parts`` maps every kind of
    :data:`DECISION_KINDS` to an agent (a ValueError names a missing or unknown kind)."""

    def __init__(self, parts: dict[str, AgentLike], name: str | None = None) -> None:
        unknown = sorted(set(parts) - set(DECISION_KINDS))
        missing = [k for k in DECISION_KINDS if k not in parts]
        if unknown or missing:
            raise ValueError(f"compose: {'unknown kinds ' + ', '.join(unknown) if unknown else ''}"
                             f"{'; ' if unknown and missing else ''}"
                             f"{'no agent for ' + ', '.join(missing) if missing else ''} "
                             f"(kinds: {', '.join(DECISION_KINDS)}; rest=SPEC covers the others)")
        self.parts = [parts[k] for k in DECISION_KINDS]
        labels = [getattr(a, "name", type(a).__name__) for a in self.parts]
        self.name = name or "compose:" + ",".join(f"{k}={n}" for k, n in zip(DECISION_KINDS, labels, strict=True))
        self.needs_obs = any(getattr(a, "needs_obs", True) for a in self.parts)
        self.needs_mask = any(getattr(a, "needs_mask", True) for a in self.parts)
        self.legal_by_construction = all(getattr(a, "legal_by_construction", False) for a in self.parts)
        self.needs_history = any(getattr(a, "needs_history", False) for a in self.parts)

    def act(self, obs: NDArray[np.float32] | None, mask: NDArray[np.bool_] | None, env: BatchEnv,
            idx: NDArray[np.int64]) -> NDArray[np.int64]:
        idx = np.asarray(idx, np.int64)
        kinds = decision_kinds(env, idx)
        out = np.full(len(idx), -1, np.int64)
        for k, agent in enumerate(self.parts):
            rows = np.flatnonzero(kinds == k)
            if len(rows):
                out[rows] = agent.act(_rows(obs, rows), _rows(mask, rows), env, idx[rows])
        if (out < 0).any():
            raise ValueError("compose: a game is not at a decision (phase done)")
        return out

    @property
    def rng(self) -> np.random.Generator | None:
        """The first part's generator (a search's): the bot protocol reseeds searches per request."""
        return next((r for r in (getattr(a, "rng", None) for a in self.parts)
                     if isinstance(r, np.random.Generator)), None)

    @rng.setter
    def rng(self, gen: np.random.Generator) -> None:
        for a in self.parts:  # each part with a generator gets its own stream drawn from gen
            part: Any = a  # a generator is no part of the AgentLike protocol
            if isinstance(getattr(part, "rng", None), np.random.Generator):
                part.rng = np.random.default_rng(int(gen.integers(2**63)))


def _rows(a: Any, rows: NDArray[np.int64]) -> Any:
    return None if a is None else a[rows]
