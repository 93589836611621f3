"""A variant as a value: :class:`VariantSpec` (the family module, the options, sizes, deal order, observation
layout and facts), and :class:`VariantRow`, the one record shape in which a family module registers each of its
variants (its ``VARIANT_ROWS``; the registry, :mod:`tarocchi_rl.variants`, adds the family and builds the spec)."""

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ..bounded import shown
from ..cards import TRUMP, Deck
from ..core.tables import RuleTables
from .contract import FamilyRules


class VariantRow(NamedTuple):
    """A variant as its family module declares it (``VARIANT_ROWS``: name -> row)."""

    options: dict  # name -> (type, default)
    n_players: int
    hand_sizes: tuple  # cards per seat, in seat order
    stock_size: int
    layout: tuple  # (offsets, obs_dim, rows) of :func:`tarocchi_rl.core.obs_layout.build_layout`
    fixed: dict  # arguments of make_rule_tables that are not user options (the variant's name)
    long_name: str
    option_ranges: dict  # the allowed range (lo, hi) of each integer option (payoffs within int32)


INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1  # the core's payoffs are int32 (core/state.py)




@dataclass(frozen=True)
class VariantSpec:
    """A variant: family module, options (name -> (type, default)), sizes, deal order and facts."""

    name: str
    rules: FamilyRules
    options: dict
    n_players: int
    n_actions: int
    hand_sizes: tuple
    stock_size: int
    obs_dim: int
    obs_rows: tuple
    fixed: dict  # arguments of make_rule_tables that are not user options (the variant's name)
    long_name: str = ""
    # the allowed range (lo, hi) of each integer option, so that no deal's payoff can overflow the core's int32
    option_ranges: dict = field(default_factory=dict)

    @property
    def deck(self) -> Deck:
        return self.rules.DECK

    @property
    def payoff_scale(self) -> float:
        """Payoff units per unit of reward: rewards of order 1 are payoffs / this (the family's PAYOFF_SCALE)."""
        return float(self.rules.PAYOFF_SCALE)

    @property
    def zero_sum(self) -> bool:
        """Whether every deal's payoffs add up to 0 (the family's ZERO_SUM)."""
        return bool(self.rules.ZERO_SUM)

    @property
    def declarer_role(self) -> str:
        """What the outcome's ``declarer`` is called in this game: declarer, taker or dealer."""
        return self.rules.DECLARER_ROLE

    @property
    def special_actions(self) -> tuple:
        """The action vocabulary beyond playing and discarding a card: id 2C + k is ``special_actions[k]``."""
        return tuple(self.rules.SPECIAL_ACTION_NAMES)

    def refused_hand(self, decks: np.ndarray) -> tuple[int, int, str] | None:
        """The first hand in given deals ``decks`` int[B, n_cards] (hands by seat in deal order, then the stock)
        that holds none of the family's ``ONE_IN_EVERY_HAND``: (game, seat, why), or None where every hand may
        be dealt."""
        needed = tuple(self.rules.ONE_IN_EVERY_HAND)
        if not needed:
            return None
        starts = np.cumsum((0,) + tuple(self.hand_sizes))
        held = np.isin(np.asarray(decks), needed)
        refused = np.stack([~held[:, a:b].any(axis=1) for a, b in zip(starts[:-1], starts[1:], strict=True)], 1)
        if not refused.any():
            return None
        game, seat = (int(x) for x in np.argwhere(refused)[0])
        if set(needed) == set(np.nonzero(self.deck.suit == TRUMP)[0].tolist()):
            return game, seat, "holds no trump"
        return game, seat, "holds none of " + " ".join(self.deck.names[c] for c in needed)

    def dealable_deck(self, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random deck int64[n_cards] (dense ids in deal order) among those the rules deal: drawn
        again while :meth:`refused_hand` refuses it (tarok: a hand without a tarok), as the core's deal does."""
        deck = rng.permutation(self.deck.n_cards)
        while self.refused_hand(deck[None]) is not None:
            deck = rng.permutation(self.deck.n_cards)
        return deck

    def utility_bounds(self, options: dict | None = None) -> tuple[int, int]:
        """(min, max) payoff of any seat in any deal with these options (derivation: the family's docstring)."""
        return self.rules.utility_bounds(**self.fixed_or_name(), **self.resolve_options(options or {}))

    def max_game_length(self, options: dict | None = None) -> int:
        """The most player decisions in one deal with these options (derivation: the family's docstring)."""
        return self.rules.max_game_length(**self.fixed_or_name(), **self.resolve_options(options or {}))

    def fixed_or_name(self) -> dict:
        return self.fixed or {"variant": self.name}

    def resolve_options(self, options: dict) -> dict:
        """Defaults filled in; an unknown option, a value of the wrong type, an integer outside its range
        (:attr:`option_ranges`) or a value the rules do not allow is a ValueError saying which. The resolved
        options keep every payoff within the core's int32 (checked on :meth:`utility_bounds`)."""
        if not isinstance(options, dict):
            raise ValueError(f"options of variant {self.name!r} must be a mapping of names to values, got "
                             f"{type(options).__name__}")
        out = {k: default for k, (_, default) in self.options.items()}
        for k, v in options.items():
            if k not in self.options:
                known = ", ".join(sorted(self.options)) or "none"
                raise ValueError(f"unknown option {shown(k)} for variant {self.name!r} (options: {known})")
            typ, _ = self.options[k]
            if typ is bool and not isinstance(v, bool):
                raise ValueError(f"option {k!r} of variant {self.name!r} must be true or false, got {shown(v)}")
            if typ is int and (isinstance(v, bool) or not isinstance(v, int)):
                raise ValueError(f"option {k!r} of variant {self.name!r} must be an integer, got {shown(v)}")
            if typ is str and not isinstance(v, str):
                raise ValueError(f"option {k!r} of variant {self.name!r} must be a string, got {shown(v)}")
            if k in self.option_ranges:
                lo, hi = self.option_ranges[k]
                if not lo <= v <= hi:
                    raise ValueError(f"option {k!r} of variant {self.name!r} must be in [{lo}, {hi}], got "
                                     f"{shown(v)}")
            out[k] = v
        self.tables(out)  # the family checks the values (e.g. honour_5, excuse_last_trick): ValueError naming them
        lo, hi = self.rules.utility_bounds(**self.fixed_or_name(), **out)
        if not INT32_MIN <= lo <= hi <= INT32_MAX:  # a safety net beside option_ranges: payoffs are int32
            raise ValueError(f"options {out} of variant {self.name!r} allow payoffs in [{lo}, {hi}], beyond the "
                             "core's int32 payoffs")
        return out

    def tables(self, options: dict) -> RuleTables:
        """The variant's RuleTables with these (resolved) options."""
        return self.rules.make_rule_tables(**self.fixed, **options)

    def resolved_tables(self, options: dict | None = None) -> RuleTables:
        """The variant's RuleTables with ``options`` resolved first (:meth:`resolve_options`: defaults filled in,
        every value checked)."""
        return self.tables(self.resolve_options(options or {}))

