"""The agent protocol shared by the arena, the environments and training.

An agent maps a batch of decisions to actions::

    actions = agent.act(obs, mask, env, idx)     # int64[len(idx)]

obs : float32[k, obs_dim]   observations of the k deciding games, each seen by its player to act (or None
                            when the agent declared ``needs_obs = False``: the arena then skips computing them)
mask : bool[k, n_actions]   their legal actions (None when every agent declared ``needs_mask = False``)
env : tarocchi_rl.BatchEnv  the batch the games live in (read-only: agents that need the core state, such as
                            the heuristic or search agents, read ``env.state`` / ``env.tables``)
idx : int64[k]              which games of ``env`` these rows are

Agents must return a legal action for every row and must not change ``env``. The arena checks every action
unless all agents set ``legal_by_construction = True`` (agents that pick from the core's legal sets and are
tested for it: random, heuristic). Randomness comes from the agent's
own generator, seeded at construction, so an arena run is reproducible from its seed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from ..batch import BatchEnv


class AgentLike(Protocol):
    """The protocol as a type: any object with this ``act`` (``name``, ``needs_obs``, ``needs_mask`` and
    ``legal_by_construction`` are read with defaults: the agent's type name, True, True, False)."""

    def act(self, obs: NDArray[np.float32] | None, mask: NDArray[np.bool_] | None, env: BatchEnv,
            idx: NDArray[np.int64], /) -> NDArray[np.int64]: ...


class Agent:
    """Base class (optional: any object with ``name``, ``needs_obs`` and ``act`` works)."""

    name = "agent"
    needs_obs = True
    needs_mask = True

    def act(self, obs: NDArray[np.float32] | None, mask: NDArray[np.bool_] | None, env: BatchEnv,
            idx: NDArray[np.int64]) -> NDArray[np.int64]:
        raise NotImplementedError


class RandomAgent(Agent):
    """Uniformly random legal actions (the weakest baseline)."""

    name = "random"
    needs_obs = False
    legal_by_construction = True

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, obs: NDArray[np.float32] | None, mask: NDArray[np.bool_] | None, env: BatchEnv | None = None,
            idx: NDArray[np.int64] | None = None) -> NDArray[np.int64]:
        mask = np.asarray(mask, bool)
        if not mask.any(axis=1).all():
            raise ValueError("RandomAgent.act: a row of the mask has no legal action")
        # the k-th legal action with k uniform: argmax over masked random keys
        keys = self.rng.random(mask.shape)
        keys[~mask] = -1.0
        return keys.argmax(axis=1).astype(np.int64)
