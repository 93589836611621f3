"""Gymnasium adapters: a single-agent env (one learner seat, the other seats played by given agents) and a
batched self-play ``VectorEnv`` on the core. Importing this module registers one id per variant::

    import gymnasium
    import tarocchi_rl.envs.gym  # registers tarocchi_rl/Mineo-v0, Piedmont3-v0, Piedmont4-v0, French3-v0, French4-v0

    env = gymnasium.make("tarocchi_rl/Mineo-v0", opponents="random")   # plus variant options, seat=..., ...
    obs, info = env.reset(seed=0)      # obs = {"observation": float32[obs_dim], "action_mask": int8[n_actions]}

Single-agent env (:class:`TarocchiEnv`)
    One episode is one deal. ``reset(seed)`` deals (the deal is drawn from the env's ``np_random``, so a seeded
    reset and the unseeded resets after it are reproducible) and lets the opponents play until the learner's
    first decision. A deal that ends before the learner decides anything (French petit sec, annulled at the
    deal) is re-dealt, as a match would; ``info["redeals"]`` counts them. ``step(action)`` applies the
    learner's action, then the opponents' until the learner's next decision or the deal's end.

    Reward: 0 until the end, then the learner's payoff in the game's own units (``returns()``: Mineo jochi,
    Piedmontese card points, French FFT marks) divided by ``payoff_scale`` (default 1.0: raw payoffs; the
    variant's own scale, ``get_variant(v).payoff_scale``, gives rewards of order 1, as the trainer uses).
    ``terminated`` is True at the deal's end; ``truncated`` is always False. ``info`` holds ``seat``,
    ``legal_actions`` (the ids, a list) and, at the end, ``payoffs`` (int32, every seat, raw units).

    Opponents: ``"random"`` (uniformly random legal actions, drawn from the deal's RNG, so seeded with
    ``reset``), an agent spec (``"heuristic"``) or agent object of :mod:`tarocchi_rl.agents` (the arena's
    protocol), a callable ``policy(obs) -> action`` with ``obs = {"observation", "action_mask"}`` as the learner
    sees it, or one of those per other seat (a list in seat order, or a dict ``{seat: policy}``). An illegal
    opponent action is a ValueError; an opponent that fails (an illegal action or an exception of its own)
    leaves the deal unfinished with another seat to act, so the env then refuses ``step`` (a RuntimeError
    saying so) until ``reset()``: the learner's next action is never played for another seat.

    Inputs are checked: ``reset``'s ``seed`` is None or an integer >= 0 (a ValueError otherwise); ``step``'s
    action is an integer id (a ValueError for anything else, e.g. a float or an array of several actions);
    ``step`` before ``reset``, after the deal's end or after an opponent's failure is a RuntimeError.

    Illegal learner actions (``illegal_action``):
      * ``"terminate"`` (default): the convention of PettingZoo's classic games (``TerminateIllegalWrapper``):
        the deal ends at once, the learner gets ``illegal_reward`` (default -1.0, not scaled by ``payoff_scale``),
        ``info["illegal_action"]`` holds the action, and a warning names it and the legal ones.
        This is the default because ``gymnasium.utils.env_checker.check_env`` steps unmasked
        ``action_space.sample()`` actions, and it must pass.
      * ``"raise"``: a ValueError naming the action and the legal ones (ids and strings); nothing is applied.
    Use the mask: ``env.action_space.sample(mask=obs["action_mask"])``; ``env.unwrapped.action_masks()`` gives
    the same mask as bool (the method sb3-contrib's MaskablePPO calls).

    ``gymnasium.make_vec(id, num_envs, vectorization_mode="sync" | "async")`` batches learner-vs-opponents
    envs (``tarocchi_rl`` selects Numba's fork-safe workqueue threading layer unless NUMBA_THREADING_LAYER is
    set; with the OpenMP layer, pass ``vector_kwargs={"context": "spawn"}`` to "async").

Vector env (:class:`TarocchiVectorEnv`)
    ``num_envs`` deals on one :class:`tarocchi_rl.BatchEnv` (``auto_reset=True``); the caller plays every seat
    (self-play). The observation of game i is that of its player to act, ``infos["player"][i]``.
    Autoreset mode: ``AutoresetMode.SAME_STEP`` (``metadata["autoreset_mode"]``): a deal that ends in ``step``
    is re-dealt inside that same step, so the returned observation is already the new deal's first one;
    ``terminations[i]`` is True and ``infos["final_info"]`` (with ``infos["_final_info"]``, the mask of the games
    that ended) holds ``payoffs`` (int32[num_envs, n_players], every seat, raw units) and ``player`` (the seat
    that made the deal's last move). ``rewards[i]`` is ``payoffs[i, player] / payoff_scale`` for a game that
    ended, else 0: the payoff of the seat that made the last move; credit the other seats from ``payoffs``.
    ``final_obs`` is not given: deals always terminate (never truncate), so nothing needs to bootstrap from
    it. Illegal actions are a ValueError naming the game, the action and the legal ones.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space
from numpy.typing import ArrayLike, NDArray

from tarocchi_rl.agents.specs import make_agent
from tarocchi_rl.batch import BatchEnv
from tarocchi_rl.game import State, make
from tarocchi_rl.policies import AgentLike
from tarocchi_rl.variants import VARIANTS

#: Gymnasium ids, one per variant (registered when this module is imported).
ENV_IDS = {v: f"tarocchi_rl/{v.capitalize()}-v0" for v in VARIANTS}  # Mineo-v0, Piedmont3-v0, ...
_MAX_REDEALS = 1000
Policy = Callable[[dict], int]
#: an opponent: "random", an agent spec, an agent object or a callable policy (see the module docstring)
Opponent = str | Policy | AgentLike
#: ``opponents``: one Opponent for every other seat, or one per seat (a list in seat order, a dict ``{seat: ...}``)
Opponents = Opponent | Sequence[Opponent | None] | Mapping[int, Opponent | None]
#: the observation of one seat: ``{"observation": float32[obs_dim], "action_mask": int8[n_actions]}``
Observation = dict[str, NDArray[Any]]


def observation_space(obs_dim: int, n_actions: int) -> spaces.Dict:
    """The observation space of one seat: ``observation`` float32[obs_dim] in [0, 1] (layout:
    ``docs/observations.md``) and ``action_mask`` int8[n_actions] (1 = legal)."""
    return spaces.Dict(
        {
            "observation": spaces.Box(0.0, 1.0, (obs_dim,), np.float32),
            "action_mask": spaces.Box(0, 1, (n_actions,), np.int8),
        }
    )


def _os_seed() -> int:
    return int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(1))


def _as_action(action: object) -> int:
    """An int from an int, a numpy integer or a 0-d integer array; ValueError otherwise."""
    if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
        return int(action)
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        raise ValueError(f"an action must be an integer action id, got {action!r}")
    return int(action)


def _check_seed(seed: object) -> int | None:
    """``reset``'s seed: None or an integer >= 0 (a ValueError naming it otherwise)."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be None or an integer >= 0, got {seed!r}")
    return int(seed)


def _policy_table(opponents: Opponents, n_players: int, seat: int) -> dict[int, Any]:
    """``{seat: "random" | callable}`` for every seat but the learner's (see the module docstring)."""
    others = [s for s in range(n_players) if s != seat]
    table: dict[int, Any]
    if isinstance(opponents, str) or callable(opponents) or hasattr(opponents, "act"):
        table = dict.fromkeys(others, opponents)
    elif isinstance(opponents, Mapping):
        table = {int(s): p for s, p in opponents.items() if p is not None or int(s) != seat}
        if set(table) != set(others):
            raise ValueError(f"opponents must give a policy for each of the seats {others}, got seats {sorted(table)}")
    elif isinstance(opponents, Sequence):
        opponents = list(opponents)
        if len(opponents) == n_players:
            if opponents[seat] is not None:
                raise ValueError(f"opponents[{seat}] is the learner's seat and must be None")
            opponents = opponents[:seat] + opponents[seat + 1 :]
        if len(opponents) != len(others):
            raise ValueError(
                f"opponents must list {len(others)} policies (seats {others}) or {n_players} with None at the "
                f"learner's seat {seat}, got {len(opponents)}"
            )
        table = dict(zip(others, opponents, strict=True))
    else:
        raise ValueError(f"opponents must be 'random', an agent spec, an agent, a callable, a list or a dict, "
                         f"got {opponents!r}")
    for s, p in table.items():
        if isinstance(p, str) and p != "random":
            table[s] = p = make_agent(p, seed=s)  # an agent spec such as "heuristic"
        if not (p == "random" if isinstance(p, str) else callable(p) or hasattr(p, "act")):
            raise ValueError(f"the opponent at seat {s} must be 'random', an agent spec, an agent (with act) or a "
                             f"callable policy(obs) -> action, got {p!r}")
    return table



def _positive_finite(x: float) -> float:
    """``payoff_scale``: a finite number > 0 (ValueError otherwise)."""
    v = float(x)
    if not np.isfinite(v) or v <= 0:
        raise ValueError(f"payoff_scale must be a finite number > 0, got {x!r}")
    return v

class TarocchiEnv(gymnasium.Env):
    """One deal of ``variant`` from the seat ``seat``, the other seats played by ``opponents`` (see the module
    docstring for rewards, seeding, re-deals and illegal actions). Variant options go in ``**options``.

    ``self.state`` is the :class:`tarocchi_rl.State` of the deal (``to_record()``, ``returns()``, ``outcome()``).
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        variant: str = "mineo",
        seat: int = 0,
        opponents: Opponents = "random",
        payoff_scale: float = 1.0,
        illegal_action: str = "terminate",
        illegal_reward: float = -1.0,
        render_mode: str | None = None,
        **options: Any,
    ) -> None:
        self.game = make(variant, **options)
        n = self.game.num_players
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < n:
            raise ValueError(f"seat must be a seat 0..{n - 1} of {variant}, got {seat!r}")
        if illegal_action not in ("terminate", "raise"):
            raise ValueError(f"illegal_action must be 'terminate' or 'raise', got {illegal_action!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.variant = variant
        self.seat = int(seat)
        self.opponents = _policy_table(opponents, n, self.seat)
        self.payoff_scale = _positive_finite(payoff_scale)
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        self.render_mode = render_mode
        self.observation_space = observation_space(self.game.obs_dim, self.game.num_actions)
        self.action_space = spaces.Discrete(self.game.num_actions)
        self._core = BatchEnv(variant, 1, seed=0, auto_reset=False, **self.game.options)
        self.state = State(self.game, self._core, [])
        self._seat_row = np.array([self.seat])
        self._over = True  # no deal until reset
        self._failure: str | None = None  # why the deal was abandoned (an opponent failed), until reset
        self._log: list[tuple[int, str]] = []  # (seat, action string) since the learner's last decision, for render

    # -- gymnasium API --------------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[Observation, dict[str, Any]]:
        """A new deal (``options`` is accepted and ignored)."""
        seed = _check_seed(seed)
        self._over = True  # until the new deal is ready: an opponent that fails below leaves no deal to step
        self._failure = None
        super().reset(seed=seed)
        self._core.reset(seed=int(self.np_random.integers(0, 2**63 - 1)))
        redeals = 0
        while True:
            self.state.history.clear()
            self._log = []
            self._play_opponents_or_abandon()
            if not self.state.is_terminal():
                break
            redeals += 1  # the deal ended before the learner's first decision (French petit sec): re-deal
            if redeals > _MAX_REDEALS:
                raise RuntimeError(f"{_MAX_REDEALS} deals in a row ended before seat {self.seat} had to act")
            self._core.reset()
        self._over = False
        return self._observation(), {**self._info(), "redeals": redeals}

    def step(self, action: int | np.integer[Any] | NDArray[np.integer[Any]]
             ) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        if self._failure is not None:
            raise RuntimeError(f"the deal was abandoned when {self._failure}: call reset() before step()")
        if self._over:
            raise RuntimeError("the deal is over (or reset() was never called): call reset() before step()")
        a = _as_action(action)
        mask = self.state.legal_mask()
        if not (0 <= a < self.game.num_actions and mask[a]):
            message = self.state.illegal_action_message(a, f"the learner (seat {self.seat})")
            if self.illegal_action == "raise":
                raise ValueError(message)
            gymnasium.logger.warn(f"{message}; the episode terminates with reward {self.illegal_reward}")
            self._over = True
            info = {**self._info(), "illegal_action": a}
            return self._observation(), self.illegal_reward, True, False, info
        self._log = []
        self._apply(a)
        self._play_opponents_or_abandon()
        info = self._info()
        if self.state.is_terminal():
            self._over = True
            payoffs = self._core.returns()[0]
            info["payoffs"] = payoffs
            return self._observation(), float(payoffs[self.seat]) / self.payoff_scale, True, False, info
        return self._observation(), 0.0, False, False, info

    def render(self) -> str | None:
        """``ansi``: the table as text (every hand; for debugging) and the moves since the learner's last one."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; make the env with render_mode='ansi'")
            return None
        moves = "  ".join(f"seat {s}: {m}" for s, m in self._log)
        return f"{self.state}\n  learner: seat {self.seat}\n  moves: {moves or '-'}\n"

    def action_masks(self) -> NDArray[np.bool_]:
        """bool[n_actions]: the learner's legal actions now (all False once the deal is over)."""
        if self._over:
            return np.zeros(self.game.num_actions, bool)
        return self.state.legal_mask().copy()

    # -- internals ------------------------------------------------------------------------------------------
    def _observation(self) -> Observation:
        mask = np.zeros(self.game.num_actions, np.int8) if self._over else self.state.legal_mask().astype(np.int8)
        return {"observation": self._core.observe(self._seat_row)[0], "action_mask": mask}

    def _info(self) -> dict[str, Any]:
        legal = [] if self._over else self.state.legal_actions()
        return {"seat": self.seat, "legal_actions": legal}

    def _apply(self, a: int) -> None:
        self._log.append((self.state.current_player(), self.state.action_to_string(a)))
        self.state.apply(a)

    def _play_opponents_or_abandon(self) -> None:
        """:meth:`_play_opponents`; if an opponent fails, the deal is abandoned (``step`` refused until
        ``reset``) and the error goes to the caller."""
        try:
            self._play_opponents()
        except BaseException as e:  # KeyboardInterrupt in a long search too: the deal is left mid-way
            self._over = True
            p = self.state.current_player()
            self._failure = f"the opponent at seat {p} failed ({type(e).__name__})"
            raise

    def _play_opponents(self) -> None:
        """Opponents act until the learner must act or the deal is over."""
        while not self.state.is_terminal():
            p = self.state.current_player()
            if p == self.seat:
                return
            policy = self.opponents[p]
            if isinstance(policy, str):  # "random": from the deal's own RNG
                a = int(self._core.random_actions()[0])
            elif hasattr(policy, "act"):  # the agent protocol of tarocchi_rl.agents.base (batch of one)
                mask = self.state.legal_mask()
                obs = self._core.observe(np.array([p])) if getattr(policy, "needs_obs", True) else None
                a = int(policy.act(obs, mask[None], self._core, np.array([0]))[0])
                if not (0 <= a < self.game.num_actions and mask[a]):
                    raise ValueError(self.state.illegal_action_message(a, f"the opponent at seat {p}"))
            else:
                mask = self.state.legal_mask()
                seen = {"observation": self._core.observe(np.array([p]))[0], "action_mask": mask.astype(np.int8)}
                a = _as_action(policy(seen))
                if not (0 <= a < self.game.num_actions and mask[a]):
                    raise ValueError(self.state.illegal_action_message(a, f"the opponent at seat {p}"))
            self._apply(a)


class TarocchiVectorEnv(VectorEnv):
    """``num_envs`` deals of ``variant`` stepped together, every seat played by the caller (self-play). See the
    module docstring for observations, rewards, infos and the SAME_STEP autoreset."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, variant: str = "mineo", num_envs: int = 1, seed: int | None = None,
                 payoff_scale: float = 1.0, **options: Any) -> None:
        self.core = BatchEnv(variant, num_envs, seed=_os_seed() if seed is None else int(seed), auto_reset=True,
                             **options)
        self.variant = variant
        self.num_envs = self.core.batch_size
        self.num_players = self.core.num_players
        self.payoff_scale = _positive_finite(payoff_scale)
        self.single_observation_space = observation_space(self.core.obs_dim, self.core.num_actions)
        self.single_action_space = spaces.Discrete(self.core.num_actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._rows = np.arange(self.num_envs)

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[Observation, dict[str, Any]]:
        """New deals for every game: from ``seed`` if given, else each game's next deal from its own RNG
        (``options`` is accepted and ignored)."""
        seed = _check_seed(seed)
        super().reset(seed=seed)
        self.core.reset(seed)
        return self._observation(), {"player": self.core.current_player().astype(np.int64)}

    def step(self, actions: ArrayLike
             ) -> tuple[Observation, NDArray[np.float64], NDArray[np.bool_], NDArray[np.bool_], dict[str, Any]]:
        """One action per game (int[num_envs]) for its player to act; see the module docstring."""
        acting = self.core.current_player().astype(np.int64)
        payoffs, done = self.core.step(np.asarray(actions))
        rewards = np.where(done, payoffs[self._rows, acting], 0).astype(np.float64) / self.payoff_scale
        infos: dict[str, Any] = {"player": self.core.current_player().astype(np.int64)}
        if done.any():
            infos["final_info"] = {"payoffs": payoffs, "_payoffs": done.copy(), "player": acting,
                                   "_player": done.copy()}
            infos["_final_info"] = done.copy()
        return self._observation(), rewards, done, np.zeros(self.num_envs, bool), infos

    def random_actions(self) -> NDArray[np.int64]:
        """int64[num_envs]: a uniformly random legal action per game, from each game's own RNG."""
        return self.core.random_actions()

    def _observation(self) -> Observation:
        return {"observation": self.core.observe(), "action_mask": self.core.legal_mask().astype(np.int8)}


def _register() -> None:
    for variant, env_id in ENV_IDS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(env_id, entry_point="tarocchi_rl.envs.gym:TarocchiEnv", kwargs={"variant": variant})


_register()

__all__ = ["ENV_IDS", "TarocchiEnv", "TarocchiVectorEnv", "observation_space"]
