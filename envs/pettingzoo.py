"""PettingZoo adapter: an AEC env per variant, agents ``player_0`` .. ``player_{n-1}`` (the seats)::

    from tarocchi_rl.envs.pettingzoo import mineo_v0     # also piedmont3_v0, piedmont4_v0, french3_v0, french4_v0

    env = mineo_v0.env()                                  # = env("mineo"); variant options as keyword arguments
    env.reset(seed=0)
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        action = None if termination else env.action_space(agent).sample(obs["action_mask"])
        env.step(action)

One episode is one deal. Observations: ``{"observation": float32[obs_dim] in [0, 1], "action_mask":
int8[n_actions]}``, the deal as that seat sees it (layout: ``docs/observations.md``); the mask is the legal
actions for the agent to act and all zeros for the others and once the deal is over. Rewards: 0 until the
end, then every seat's payoff in the game's own units (``returns()``) divided by ``payoff_scale`` (default 1.0:
raw payoffs);
all agents terminate together at the deal's end; nothing truncates. A deal that ends before any decision
(French petit sec, annulled at the deal) is re-dealt at ``reset``; one where everybody passes ends with
payoffs 0.

Seeding: ``reset(seed)`` deals from ``seed``; a ``reset()`` without one deals the next deal from the env's
own RNG, so the whole sequence is reproducible from the first seed (``pettingzoo.test.seed_test`` passes).
An env never seeded draws its first seed from the OS.

Illegal actions (``env(..., illegal_action=...)``):
  * ``"raise"`` (default): a ValueError naming the action (id and string) and the legal ones; nothing is
    applied and the env stays usable.
  * ``"terminate"``: PettingZoo's convention for its classic games, its own ``TerminateIllegalWrapper``: the
    deal ends for everyone, the offender gets ``illegal_reward`` (default -1), the others 0, with a warning.
    Any integer that is not a legal action id is such an illegal action, negative or out of range (10**6) too.
``raw_env`` always raises. In both modes an action that is not an integer id at all (a float, a string, None
for an agent that must act, an array of several) is a ValueError, and ``reset``'s ``seed`` must be None or an
integer >= 0 (a ValueError otherwise).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from numpy.typing import NDArray
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from tarocchi_rl.batch import BatchEnv
from tarocchi_rl.envs.gym import _as_action, _check_seed  # the same checks of an action and a seed
from tarocchi_rl.game import State, make
from tarocchi_rl.variants import VARIANTS

_MAX_REDEALS = 1000


class _TerminateIllegal(wrappers.TerminateIllegalWrapper):
    """PettingZoo's ``TerminateIllegalWrapper`` for every integer: one outside the action ids (negative, or
    10**6) is an illegal action like any other, where the wrapper itself would index the mask with it (an
    IndexError, or a negative index read from the end). Anything but an integer is a ValueError."""

    _prev_obs: Any  # the wrapper's record of the last observation of the agent to act (its action mask)

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations.get(agent) or self.truncations.get(agent):
            super().step(action)  # the dead step (None)
            return
        a = _as_action(action)
        if not 0 <= a < self.unwrapped.game.num_actions:
            obs = self.observe(agent)  # the wrapper records the mask; it is given one that refuses id 0
            mask = np.array(obs["action_mask"], copy=True)
            mask[0] = 0
            self._prev_obs = {**obs, "action_mask": mask}
            a = 0
        super().step(a)


def _observation_space(obs_dim: int, n_actions: int) -> spaces.Dict:
    return spaces.Dict(
        {
            "observation": spaces.Box(0.0, 1.0, (obs_dim,), np.float32),
            "action_mask": spaces.Box(0, 1, (n_actions,), np.int8),
        }
    )


class raw_env(AECEnv, EzPickle):  # noqa: N801  (PettingZoo's naming)
    """One deal of ``variant`` as an AEC game (see the module docstring). Variant options go in ``**options``.

    ``self.state`` is the :class:`tarocchi_rl.State` of the deal (``to_record()``, ``outcome()``, ...).
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi"], "name": "tarocchi_v0", "is_parallelizable": False,
                                "render_fps": 1}

    def __init__(self, variant: str = "mineo", render_mode: str | None = None, payoff_scale: float = 1.0,
                 **options: Any) -> None:
        EzPickle.__init__(self, variant, render_mode, payoff_scale, **options)
        super().__init__()
        self.game = make(variant, **options)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.metadata = {**self.metadata, "name": f"tarocchi_{variant}_v0"}
        self.variant = variant
        self.render_mode = render_mode
        self.payoff_scale = float(payoff_scale)
        if not np.isfinite(self.payoff_scale) or self.payoff_scale <= 0:
            raise ValueError(f"payoff_scale must be a finite number > 0, got {payoff_scale!r}")
        n = self.game.num_players
        self.possible_agents = [f"player_{s}" for s in range(n)]
        self._seat = {agent: s for s, agent in enumerate(self.possible_agents)}
        space = _observation_space(self.game.obs_dim, self.game.num_actions)
        self.observation_spaces = {agent: space for agent in self.possible_agents}
        self.action_spaces = {agent: spaces.Discrete(self.game.num_actions) for agent in self.possible_agents}
        seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(1))
        self._core = BatchEnv(variant, 1, seed=seed, auto_reset=False, **self.game.options)
        self.state = State(self.game, self._core, [])
        self.agents: list[str] = []

    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new deal: from ``seed`` if given, else the next one from the env's RNG (``options`` is ignored)."""
        self._core.reset(_check_seed(seed))
        redeals = 0
        while self.state.is_terminal():  # annulled before any decision (French petit sec): re-deal
            redeals += 1
            if redeals > _MAX_REDEALS:
                raise RuntimeError(f"{_MAX_REDEALS} deals in a row were annulled at the deal")
            self._core.reset()
        self.state.history.clear()
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self._skip_agent_selection = None
        self.agent_selection = self.possible_agents[self.state.current_player()]

    def observe(self, agent: str) -> dict[str, NDArray[Any]]:
        seat = self._seat[agent]
        mask = np.zeros(self.game.num_actions, np.int8)
        if not self.state.is_terminal() and self.state.current_player() == seat:
            mask[:] = self.state.legal_mask()
        return {"observation": self._core.observe(np.array([seat]))[0], "action_mask": mask}

    def step(self, action: int | np.integer[Any] | NDArray[np.integer[Any]] | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        a = _as_action(action)
        if not (0 <= a < self.game.num_actions and self.state.legal_mask()[a]):
            raise ValueError(self.state.illegal_action_message(a, agent))
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        self.state.apply(a)
        if self.state.is_terminal():
            payoffs = self.state.returns()
            for s, other in enumerate(self.possible_agents):
                self.rewards[other] = float(payoffs[s]) / self.payoff_scale
            self.terminations = dict.fromkeys(self.agents, True)
            self._accumulate_rewards()
            self._deads_step_first()
        else:
            self.agent_selection = self.possible_agents[self.state.current_player()]

    def render(self) -> str | None:
        """``ansi``: the table as text (every hand, the phase, the seat to act; the payoffs at the end)."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; make the env with render_mode='ansi'")
            return None
        return f"{self.state}\n"

    def close(self) -> None:
        pass


def env(variant: str = "mineo", illegal_action: str = "raise", illegal_reward: float = -1.0,
        **kwargs: Any) -> AECEnv:
    """The AEC env of ``variant`` wrapped as PettingZoo does its games (order enforcing; see the module
    docstring for ``illegal_action``). ``kwargs``: ``render_mode``, ``payoff_scale`` and variant options."""
    if illegal_action not in ("raise", "terminate"):
        raise ValueError(f"illegal_action must be 'raise' or 'terminate', got {illegal_action!r}")
    e = raw_env(variant, **kwargs)
    if illegal_action == "terminate":
        e = _TerminateIllegal(e, illegal_reward=illegal_reward)
    return wrappers.OrderEnforcingWrapper(e)


def _variant_module(variant: str) -> SimpleNamespace:
    def make_env(**kwargs: Any) -> AECEnv:
        return env(variant, **kwargs)

    def make_raw_env(**kwargs: Any) -> raw_env:
        return raw_env(variant, **kwargs)

    make_env.__doc__ = f"The wrapped AEC env of {variant} (see :func:`env`)."
    make_raw_env.__doc__ = f"The raw AEC env of {variant} (see :class:`raw_env`)."
    return SimpleNamespace(env=make_env, raw_env=make_raw_env, variant=variant)


#: ``{variant: module-like namespace with env() and raw_env()}``, one per registered variant
ENVS = {v: _variant_module(v) for v in VARIANTS}


def __getattr__(name: str) -> SimpleNamespace:
    """``<variant>_v0`` (``mineo_v0``, ...): the variant's module-like namespace (PettingZoo's naming)."""
    if name.endswith("_v0") and name[:-3] in ENVS:
        return ENVS[name[:-3]]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["ENVS", "VARIANTS", "env", "raw_env", *(f"{v}_v0" for v in VARIANTS)]
