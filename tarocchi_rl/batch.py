"""``BatchEnv``: B games of one variant stepped together on the Numba core.

Every call validates its input in Python, then runs one compiled kernel over the whole batch::

    env = BatchEnv("mineo", batch_size=4096, seed=0)
    while not env.all_done():
        mask = env.legal_mask()            # bool[B, A]
        obs = env.observe()                # float32[B, OBS_DIM], each game seen by its player to act
        actions = policy(obs, mask)        # int[B]; entries of finished games are ignored
        payoffs, done = env.step(actions)  # int32[B, P] payoffs of games that ended now, bool[B]
    env.returns()                          # int32[B, P] the deals' payoffs

Auto-reset (opt-in, ``auto_reset=True``): a game that ends inside ``step`` is re-dealt at once from its own
RNG; ``step`` still reports that deal's ``payoffs`` and ``done`` for it, and the next ``observe`` shows the
new deal. Deals annulled before any decision (French petit sec) are re-dealt silently, as a match would.
Without it a finished game stays finished (its player is -1, its mask all False) until ``reset``; a French
deal can then be finished from the start (petit sec: payoffs 0).
"""

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import engine
from .bits import seed_states
from .core.phases import DONE
from .core.state import CUR, PAYOFF, PHASE, alloc_state
from .variants import VariantSpec, get_variant
from .variants.contract import FamilyRules
from .variants.phases import PHASE_NAMES


class BatchEnv:
    """B games of ``variant`` (a name, or its VariantSpec where the caller holds it; see the module docstring).

    Attributes: ``num_players``, ``num_actions``, ``obs_dim``, ``batch_size``, ``state`` (the BatchState),
    ``tables`` (the RuleTables), ``options`` (resolved variant options).
    """

    def __init__(self, variant: str | VariantSpec, batch_size: int, seed: int = 0, auto_reset: bool = False,
                 **options: Any) -> None:
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.spec = variant if isinstance(variant, VariantSpec) else get_variant(variant)
        self.variant = self.spec.name
        self.options = self.spec.resolve_options(options)
        self.tables = self.spec.tables(self.options)
        self.batch_size = int(batch_size)
        self.auto_reset = bool(auto_reset)
        self.num_players = self.spec.n_players
        self.num_actions = self.spec.n_actions
        self.obs_dim = self.spec.obs_dim
        self.state = alloc_state(self.batch_size)
        self._loops = engine.loops_for(self.batch_size)  # serial loops for a few games, else parallel
        self._done = np.zeros(self.batch_size, bool)
        self._payoffs = np.zeros((self.batch_size, 4), np.int32)
        self.history: list[list[int]] | None = None  # per game, the actions of its deal (keep_history())
        self.reset(seed)

    @property
    def _r(self) -> FamilyRules:
        """The variant's family module (action strings, outcome)."""
        return self.spec.rules

    def keep_history(self) -> None:
        """From now on keep ``history[i]``, the action ids of game i's deal so far (emptied on a new deal): for
        agents that need the whole game, such as an external bot (``needs_history``); off by default."""
        self.history = [[] for _ in range(self.batch_size)]

    # -- dealing ------------------------------------------------------------------------------------------
    def reset(self, seed: int | None = None) -> None:
        """New deals for every game (from ``seed`` if given, else from each game's RNG)."""
        if self.history is not None:
            self.keep_history()
        if seed is not None:
            self.state.rng[:] = seed_states(seed, self.batch_size)
        self._loops.reset(self.state, self.tables, True)
        if self.auto_reset:  # a deal annulled at once (French petit sec) is re-dealt, as inside step
            for i in np.nonzero(self.done())[0]:
                while self.state.meta[i, PHASE] == DONE:
                    engine.new_deal_row(self.state, i, self.tables)

    def set_deals(self, decks: ArrayLike) -> None:
        """Start every game on a given deal: ``decks`` int[B, n_cards] dense ids in the deal order of the
        variant's module docstring (hands by seat, then the stock). Each row must be a permutation, and a deal
        that the family's rules would deal again (a hand without any of its ``ONE_IN_EVERY_HAND``) is refused:
        a ValueError naming the seat."""
        decks = np.asarray(decks)
        n = self.spec.deck.n_cards
        if decks.shape != (self.batch_size, n):
            raise ValueError(f"decks must have shape ({self.batch_size}, {n}), got {decks.shape}")
        if not (np.sort(decks, axis=1) == np.arange(n)).all():
            bad = int(np.nonzero(~(np.sort(decks, axis=1) == np.arange(n)).all(axis=1))[0][0])
            raise ValueError(f"deal of game {bad} is not a permutation of the {n} cards")
        refused = self.spec.refused_hand(decks)
        if refused is not None:  # the rules would deal it again: a given deal is never silently replaced
            game, seat, why = refused
            raise ValueError(f"deal of game {game}: the hand of seat {seat} {why}, which {self.variant} does not deal")
        self.state.deck[:, :n] = decks
        self.state.deck[:, n:] = -1
        self._loops.reset(self.state, self.tables, False)
        if self.history is not None:
            self.keep_history()

    # -- queries ------------------------------------------------------------------------------------------
    def done(self) -> NDArray[np.bool_]:
        """bool[B]: which games are finished."""
        return self.state.meta[:, PHASE] == DONE

    def all_done(self) -> bool:
        return bool(self.done().all())

    def current_player(self) -> NDArray[np.int8]:
        """int8[B]: the seat to act in each game, -1 where the game is finished."""
        cur = self.state.meta[:, CUR].astype(np.int8)
        cur[self.done()] = -1
        return cur

    def legal_mask(self, out: NDArray[np.bool_] | None = None) -> NDArray[np.bool_]:
        """bool[B, num_actions]: the legal actions of each game's player to act (all False when done)."""
        if out is None:
            out = np.empty((self.batch_size, self.num_actions), bool)
        self._loops.legal_mask(self.state, self.tables, out)
        return out

    def observe(self, players: ArrayLike | None = None, out: NDArray[np.float32] | None = None) -> NDArray[np.float32]:
        """float32[B, obs_dim]: each game seen by ``players`` (int[B]; default: the player to act).

        Finished games (player -1) give zero rows. Layout: the variant's observation module table.
        """
        viewers = self.current_player() if players is None else np.asarray(players, np.int64)
        if viewers.shape != (self.batch_size,):
            raise ValueError(f"players must have shape ({self.batch_size},), got {viewers.shape}")
        if (viewers >= self.num_players).any():
            raise ValueError(f"players must be seats 0..{self.num_players - 1} (or -1)")
        if out is None:
            out = np.empty((self.batch_size, self.obs_dim), np.float32)
        self._loops.observe(self.state, self.tables, viewers.astype(np.int64), out)
        return out

    def returns(self) -> NDArray[np.int32]:
        """int32[B, num_players]: payoffs of the deals (0 for games not finished)."""
        r = self.state.meta[:, PAYOFF : PAYOFF + self.num_players].copy()
        r[~self.done()] = 0
        return r

    # -- acting -------------------------------------------------------------------------------------------
    def step(self, actions: ArrayLike, check: bool = True) -> tuple[NDArray[np.int32], NDArray[np.bool_]]:
        """Apply one action per game (entries of finished games are ignored).

        Returns (payoffs int32[B, num_players], done bool[B]): ``done`` marks the games that ended with this
        step and ``payoffs`` holds their deal payoffs (zeros elsewhere). An illegal action is a ValueError
        naming the game, the action and the legal ones (``check=False`` skips the check: faster, unsafe).
        """
        a = np.asarray(actions)
        if a.shape != (self.batch_size,):
            raise ValueError(f"actions must have shape ({self.batch_size},), got {a.shape}")
        if not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"actions must be integers, got dtype {a.dtype}")
        a = a.astype(np.int64, copy=False)
        if check:
            bad = engine.first_illegal(self.state, a, self.tables)
            if bad >= 0:
                raise ValueError(self._illegal_message(bad, int(a[bad])))
        history = self.history
        live = self.state.meta[:, PHASE] != DONE if history is not None else None  # the games this step acts in
        self._loops.step(self.state, a, self.tables, self.auto_reset, self._done, self._payoffs)
        if history is not None and live is not None:
            for i in np.nonzero(live)[0]:
                if self.auto_reset and self._done[i]:
                    history[i] = []  # a new deal has started in this slot
                else:
                    history[i].append(int(a[i]))
        return self._payoffs[:, : self.num_players].copy(), self._done.copy()

    def random_actions(self) -> NDArray[np.int64]:
        """int64[B]: a uniformly random legal action per game (-1 where done), drawn from each game's RNG."""
        out = np.empty(self.batch_size, np.int64)
        self._loops.random_actions(self.state, self.tables, out)
        return out

    def _illegal_message(self, i: int, a: int) -> str:
        return illegal_action_message(self, i, a, f"game {i}, seat {int(self.state.meta[i, CUR])}")


def illegal_action_message(env: BatchEnv, i: int, action: Any, who: str) -> str:
    """The one wording of an illegal action (BatchEnv, State, the seat views, the adapters): 'illegal action 17
    (play:KC) for <who> in phase play of mineo; legal actions: 3 (play:2S), 9 (play:5S)'."""
    mask = np.zeros(env.num_actions, bool)
    engine.legal_mask_row(env.state, i, env.tables, mask)
    phase = int(env.state.meta[i, PHASE])
    rules = env.spec.rules
    try:
        name = rules.action_to_string(int(action), phase)
    except (ValueError, IndexError, TypeError):
        name = f"out of range 0..{env.num_actions - 1}"
    legal = ", ".join(f"{x} ({rules.action_to_string(int(x), phase)})" for x in np.nonzero(mask)[0])
    return (f"illegal action {action} ({name}) for {who} in phase {PHASE_NAMES[phase]} of {env.variant}; "
            f"legal actions: {legal}")
