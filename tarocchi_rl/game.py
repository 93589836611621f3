"""The single-game API: ``make(variant)`` -> Game, ``game.new_state(seed)`` -> State.

A State is a batch of one on the same kernels as :class:`tarocchi_rl.BatchEnv`, plus the action history, so
it can be printed, cloned and written as a ``tarocchi-record/1`` game record::

    game = tarocchi_rl.make("mineo")
    state = game.new_state(seed=7)
    while not state.is_terminal():
        state.apply(state.legal_actions()[0])      # or state.apply("play:KC")
    state.returns()                                # the deal's payoffs, one per seat
"""

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from . import engine
from .batch import BatchEnv, illegal_action_message
from .core.state import HAND, PHASE, copy_state
from .variants import get_variant
from .variants.phases import PHASE_NAMES

RECORD_FORMAT = "tarocchi-record/1"  # the game-record format written by State.to_record (records.py)


class Game:
    """One variant with its options. ``num_players``, ``num_actions``, ``obs_dim``, ``deck``."""

    def __init__(self, variant: str, **options: Any) -> None:
        self.spec = get_variant(variant)
        self.variant = variant
        self.options = self.spec.resolve_options(options)
        self.num_players = self.spec.n_players
        self.num_actions = self.spec.n_actions
        self.obs_dim = self.spec.obs_dim
        self.deck = self.spec.deck

    def new_state(self, seed: int | None = None) -> "State":
        """A new deal drawn from ``seed`` (an int; None draws one from the OS)."""
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(1))
        return State(self, BatchEnv(self.variant, 1, seed=int(seed), **self.options), [])

    def state_from_deal(self, hands: Sequence[Sequence[str]], stock: Sequence[str]) -> "State":
        """A new game on a given deal: ``hands`` one list of card names per seat (in deal order), ``stock``
        the monte / talon / chien. Wrong sizes, unknown or duplicated cards, and a hand the rules would deal
        again (none of the family's ``ONE_IN_EVERY_HAND``) are a ValueError saying which."""
        r = self.spec
        if not isinstance(hands, (list, tuple)) or len(hands) != self.num_players:
            raise ValueError(f"deal.hands must be {self.num_players} lists of cards")
        order: list[tuple[str, str]] = []
        for seat, (hand, size) in enumerate(zip(hands, r.hand_sizes, strict=True)):
            if not isinstance(hand, (list, tuple)) or len(hand) != size:
                n = len(hand) if isinstance(hand, (list, tuple)) else "not a list"
                raise ValueError(f"deal.hands[{seat}] must hold {size} cards, got {n}")
            order += [(f"deal.hands[{seat}][{k}]", c) for k, c in enumerate(hand)]
        if not isinstance(stock, (list, tuple)) or len(stock) != r.stock_size:
            n = len(stock) if isinstance(stock, (list, tuple)) else "not a list"
            raise ValueError(f"deal.stock must hold {r.stock_size} cards, got {n}")
        order += [(f"deal.stock[{k}]", c) for k, c in enumerate(stock)]
        ids: list[int] = []
        seen: dict[int, str] = {}
        for where, name in order:
            if not isinstance(name, str):
                raise ValueError(f"{where}: a card name must be a string, got {name!r}")
            try:
                c = self.deck.card_id(name)
            except ValueError:
                raise ValueError(f"{where}: unknown card {name!r} for variant {self.variant}") from None
            if c in seen:
                raise ValueError(f"{where}: card {name} is dealt twice (also at {seen[c]})")
            seen[c] = where
            ids.append(c)
        refused = r.refused_hand(np.array([ids]))
        if refused is not None:
            raise ValueError(f"deal.hands[{refused[1]}] {refused[2]}, which {self.variant} does not deal")
        env = BatchEnv(self.variant, 1, seed=0, **self.options)
        env.set_deals(np.array([ids]))
        return State(self, env, [])

    def action_to_string(self, action: int, phase: int = -1) -> str:
        return self.spec.rules.action_to_string(action, phase)

    def string_to_action(self, text: str) -> int:
        return self.spec.rules.string_to_action(text)

    def __repr__(self) -> str:
        return f"Game({self.variant!r}, {self.options})"


class State:
    """One game in progress (see the module docstring)."""

    def __init__(self, game: Game, env: BatchEnv, history: list[int]) -> None:
        self.game = game
        self._env = env
        self.history = history

    # -- queries ------------------------------------------------------------------------------------------
    @property
    def phase(self) -> str:
        return PHASE_NAMES[int(self._env.state.meta[0, PHASE])]

    def current_player(self) -> int:
        """The seat to act, -1 when the deal is over."""
        return int(self._env.current_player()[0])

    def is_terminal(self) -> bool:
        return bool(self._env.done()[0])

    def legal_mask(self) -> NDArray[np.bool_]:
        """bool[num_actions]."""
        return self._env.legal_mask()[0]

    def legal_actions(self) -> list[int]:
        """The legal action ids, ascending (empty when the deal is over)."""
        return [int(a) for a in np.nonzero(self.legal_mask())[0]]

    def returns(self) -> list[int]:
        """The deal's payoffs per seat (all 0 until the deal is over)."""
        return [int(x) for x in self._env.returns()[0]]

    def observation(self, player: int | None = None) -> NDArray[np.float32]:
        """float32[obs_dim]: the game seen by ``player`` (default: the player to act)."""
        p = self.current_player() if player is None else int(player)
        if not 0 <= p < self.game.num_players:
            raise ValueError(f"player must be a seat 0..{self.game.num_players - 1}, got {player}")
        return self._env.observe(np.array([p]))[0]

    def privileged_observation(self, player: int | None = None) -> NDArray[np.float32]:
        """float32[H]: the cards hidden from ``player`` (default: the player to act), where they lie (every hand,
        the stock, the discard): training only, the perfect-information critic's extra input
        (:func:`tarocchi_rl.engine.observe_privileged`), never a policy's."""
        p = self.current_player() if player is None else int(player)
        if not 0 <= p < self.game.num_players:
            raise ValueError(f"player must be a seat 0..{self.game.num_players - 1}, got {player}")
        return engine.observe_privileged(self._env.state, self._env.tables, np.array([p]))[0]

    def outcome(self) -> dict[str, Any]:
        """Payoffs, card points per side and itemised bonuses of the finished deal."""
        return self.game.spec.rules.outcome(self._env.state, 0, self._env.tables)

    def hand(self, seat: int) -> list[str]:
        """Card names held by ``seat``, in display order (trumps high to low, EX, suits high to low)."""
        d = self.game.deck
        cards = d.cards_of(self._env.state.cards[0, HAND + seat])
        return [d.names[c] for c in sorted(cards, key=d.sort_key)]

    def deal(self) -> dict[str, list[Any]]:
        """The deal as card names: ``{"hands": [[...] per seat], "stock": [...]}`` in deal order."""
        r = self.game.spec
        names = [self.game.deck.names[c] for c in self._env.state.deck[0, : self.game.deck.n_cards]]
        hands: list[list[str]] = []
        k = 0
        for size in r.hand_sizes:
            hands.append(names[k : k + size])
            k += size
        return {"hands": hands, "stock": names[k : k + r.stock_size]}

    # -- acting -------------------------------------------------------------------------------------------
    def apply(self, action: int | np.integer[Any] | str) -> None:
        """Apply an action id or string; an illegal one is a ValueError naming it and the legal ones."""
        a = self.string_to_action(action) if isinstance(action, str) else action
        if isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, np.integer)):
            raise ValueError(f"an action must be an int id or a string, got {action!r}")
        if self.is_terminal():
            raise ValueError(f"the deal is over; action {action!r} cannot be applied")
        self._env.step(np.array([int(a)]))
        self.history.append(int(a))

    def illegal_action_message(self, action: int, who: str) -> str:
        """'illegal action 17 (play:KC) for <who> in phase play of mineo; legal actions: 3 (play:2S), ...'."""
        return illegal_action_message(self._env, 0, action, who)

    def action_to_string(self, action: int) -> str:
        """The action's string in the notation of docs/rules.md (``play:KC``, ``discard:5D``, ``bid:call``, ...)."""
        return self.game.spec.rules.action_to_string(action, int(self._env.state.meta[0, PHASE]))

    def string_to_action(self, text: str) -> int:
        return self.game.spec.rules.string_to_action(text)

    def clone(self) -> "State":
        env = BatchEnv.__new__(BatchEnv)
        env.__dict__.update(self._env.__dict__)
        env.state = copy_state(self._env.state)
        env._done = self._env._done.copy()
        env._payoffs = self._env._payoffs.copy()
        return State(self.game, env, list(self.history))

    def to_record(self) -> dict[str, Any]:
        """The game as a ``tarocchi-record/1`` dict (``result`` only once the deal is over); the format and its
        validation: :mod:`tarocchi_rl.records`."""
        rec: dict[str, Any] = {
            "format": RECORD_FORMAT,
            "variant": self.game.variant,
            "options": dict(self.game.options),
            "deal": self.deal(),
            "actions": [],
        }
        replay_state = self.game.state_from_deal(**rec["deal"])
        for a in self.history:
            rec["actions"].append(replay_state.action_to_string(a))
            replay_state.apply(a)
        if self.is_terminal():
            rec["result"] = {"payoffs": self.returns()}
        return rec

    def __str__(self) -> str:
        g = self.game
        lines = [f"{g.variant} {self.phase}, to act: seat {self.current_player()}"]
        for s in range(g.num_players):
            lines.append(f"  seat {s}: {' '.join(self.hand(s))}")
        if self.is_terminal():
            lines.append(f"  returns: {self.returns()}")
        return "\n".join(lines)


def make(variant: str = "mineo", **options: Any) -> Game:
    """The Game of ``variant`` (``mineo``, ...) with its options (unknown options are a ValueError)."""
    return Game(variant, **options)


__all__ = ["Game", "State", "make"]
