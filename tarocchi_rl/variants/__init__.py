"""The variants: one rule family module each (mineo, piedmont, french) behind one contract, and the registry.

The family contract is a type, :class:`tarocchi_rl.variants.contract.FamilyRules` (a ``Protocol``): mypy checks
every module of ``FAMILIES`` below against it, and ``tests/core/test_variant_contract.py`` checks each at run
time. A family module provides, beside its rules:

| what                                                       | kind    | used by                              |
|------------------------------------------------------------|---------|--------------------------------------|
| ``FAMILY_ID``                                              | fact    | its position in ``FAMILIES``: the    |
|                                                            |         | value of ``params[P_FAMILY]``        |
| ``make_rule_tables(**options)``                            | Python  | the engine (RuleTables: masks, params)|
| ``start_row``, ``legal_flags``, ``step_special``,          | Numba   | the engine and the observation,      |
| ``after_discard``, ``trick_won``, ``settle``,              | kernels | through the generated family         |
| ``observe_sections``, ``sides_known``, ``play_rules``      |         | dispatch (``dispatch.py``; arguments:|
|                                                            |         | ``contract.KERNEL_HOOKS``)           |
| ``stock_in_hand``, ``cards_dealt``, ``hand_cap``,          | Numba   | the determinizer (search/): what a   |
| ``sample_fixes``, ``sample_rejected``, ``fix_sample``      | kernels | seat knows of the hidden cards       |
| ``heuristic_special``, ``heuristic_reserved``,             | Numba   | the rule-based player (policies/     |
| ``heuristic_attack``, ``heuristic_ex_dump``                | kernels | heuristic.py); the family's table of |
|                                                            |         | its heuristic rules beside them      |
| ``MK_FAMILY + k``, ``P_FAMILY_PARAM + k`` aliases          | tables  | the family's own rows of the rule    |
|                                                            |         | tables (core/tables.py), its kernels |
| ``DECK``, ``N_ACTIONS``, ``SPECIAL_ACTION_NAMES``,         | Python  | game API, records, adapters: the     |
| ``action_to_string``, ``string_to_action``                 |         | action vocabulary                    |
| ``outcome(st, i, tb)``                                     | Python  | the one schema (:data:`OUTCOME_FIELDS`)|
| ``ZERO_SUM``                                               | fact    | invariant tests, adapters: payoffs   |
|                                                            |         | add up to 0 in every deal            |
| ``STOCK_IN_ORDER``                                         | fact    | the views: the stock shown in deal   |
|                                                            |         | order (tarok's talon sets)           |
| ``PAYOFF_SCALE``                                           | fact    | rewards = payoff / scale (trainer,   |
|                                                            |         | ISMCTS, envs)                        |
| ``utility_bounds``, ``max_game_length`` (derived in their  | facts   | OpenSpiel metadata, contract test    |
| docstrings), ``LONG_NAME(S)``                              |         |                                      |
| ``OUTCOME_DETAILS``, ``BONUS_UNIT``, ``CARD_POINT_UNITS``, | facts   | the CLI, replay, docs, the arena's   |
| ``CARD_POINT_UNIT_NAME``, ``DECLARER_ROLE``, ``BID_WORDS``,|         | counts, the web table                |
| ``BID_ROUNDS``, ``CONTRACT_NAMES``                         |         |                                      |

The hooks a family has no use for are the do-nothing kernels of ``defaults.py`` under the hook's name. Two
hooks run only where the family's tables ask for them (a call through the dispatch costs more than the shared
work around it): ``trick_won`` for the last trick and the tricks holding a trump of ``masks[MK_TRICK_HOOK]``
(none where that row is empty; every trick where ``params[P_TRICK_HOOK_EVERY]`` is 1), ``observe_sections``
where ``params[P_OBS_HOOK]`` is 1, ``play_rules`` where ``params[P_PLAY_HOOK]`` is 1. Rules that the shared
kernels apply from the tables alone stay table entries (``P_FIRST_TRICK_POIGNEE``, ``MK_CAPTURE_BONUS`` with
``P_CAPTURE_BONUS``, ``P_EX_LAST``, ...).

A ``VariantSpec`` gathers, per variant, the family module, the options (name -> (type, default)), sizes,
deal order, observation layout and these facts. A sixth variant is one family module (or a new entry of an
existing family), its line in ``FAMILIES`` (a new family), its lines in ``_FACTORIES`` and its oracle in
``tests/oracles``; the contract test ``tests/core/test_variant_contract.py`` runs over every registered family
and variant.
"""

from dataclasses import dataclass, field

import numpy as np

from ..bounded import shown
from ..cards import TRUMP, Deck
from ..core.obs_layout import build_privileged_layout, layout_table
from ..core.tables import RuleTables
from . import french, mineo, piedmont, tarok
from .contract import FamilyRules

# The rule families; a family's id (params[P_FAMILY], its FAMILY_ID) is its position here. mypy checks each
# module against the FamilyRules protocol on this line.
FAMILIES: tuple[FamilyRules, ...] = (mineo, piedmont, french, tarok)
for _k, _family in enumerate(FAMILIES):
    if _family.FAMILY_ID != _k:
        raise ImportError(f"family {_family!r} has FAMILY_ID {_family.FAMILY_ID}, but is FAMILIES[{_k}]")

OUTCOME_FIELDS = {
    "payoffs": "int per seat, the deal's payoffs (zero-sum where the family's ZERO_SUM says so)",
    "contract": "the contract's name ('none': every seat passed), null where the game has none (Piedmontese)",
    "declarer": "the seat that plays against the others: Mineo declarer, French taker, Piedmontese dealer (null: "
                "no contract)",
    "sides": "seats per side; side 0 is the declarer's (Piedmontese: piedmont3 each seat, piedmont4 0+2, 1+3)",
    "card_points": "card points per side (numbers; exact in units of 1 / CARD_POINT_UNITS)",
    "card_point_units": "the same in the family's counting unit (thirds, half points): integers",
    "bonuses": "itemised bonuses: [{name, side, points}] in the family's BONUS_UNIT",
    "details": "the family's own fields (its OUTCOME_DETAILS)",
}


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

    def __reduce__(self) -> tuple:  # pickle / deepcopy by name (the spec holds a module)
        return (get_variant, (self.name,))


def _mineo() -> VariantSpec:
    return VariantSpec("mineo", mineo, {"early_solo": (bool, True)}, 4, mineo.N_ACTIONS, mineo.HAND_SIZES,
                       mineo.STOCK_SIZE, mineo.OBS_DIM, tuple(mineo.OBS_ROWS), {}, mineo.LONG_NAME)


ACCUSO_POINTS_MAX = 10_000  # piedmont4: far beyond any real table's stake, far below int32 payoffs


def _piedmont(name: str) -> VariantSpec:
    n, hand, stock, _, _ = piedmont.SHAPES[name]
    options: dict[str, tuple[type, object]] = {"excuse_exchange": (bool, True)}
    if name == "piedmont3":
        options["honour_5"] = (str, "mondo")
    else:
        options["accuso"] = (bool, False)
        options["accuso_points"] = (int, 5)
    _, dim, rows = piedmont.layout(name)
    # accuso_points: card points per accuso condition; payoffs reach +-(243 + 9 P) thirds (piedmont.utility_bounds)
    ranges = {"accuso_points": (0, ACCUSO_POINTS_MAX)} if name == "piedmont4" else {}
    return VariantSpec(name, piedmont, options, n, piedmont.N_ACTIONS, (hand,) * n, stock, dim, tuple(rows),
                       {"variant": name}, piedmont.LONG_NAMES[name], ranges)


def _french(name: str) -> VariantSpec:
    n, hand, _, _ = french.SHAPES[name]
    _, dim, rows = french.layout(name)
    options = {"excuse_last_trick": (str, french.EXCUSE_LAST_TRICK[0])}  # "other_side" | "trick_winner"
    return VariantSpec(name, french, options, n, french.N_ACTIONS, (hand,) * n, 6, dim, tuple(rows),
                       {"variant": name}, french.LONG_NAMES[name])


def _tarok(name: str) -> VariantSpec:
    n, hand, _ = tarok.SHAPES[name]
    _, dim, rows = tarok.layout(name)
    return VariantSpec(name, tarok, {}, n, tarok.N_ACTIONS, (hand,) * n, tarok.TALON, dim, tuple(rows),
                       {"variant": name}, tarok.LONG_NAMES[name])


_FACTORIES = {
    "mineo": _mineo,
    "piedmont3": lambda: _piedmont("piedmont3"),
    "piedmont4": lambda: _piedmont("piedmont4"),
    "french3": lambda: _french("french3"),
    "french4": lambda: _french("french4"),
    "tarok3": lambda: _tarok("tarok3"),
    "tarok4": lambda: _tarok("tarok4"),
}
VARIANTS = tuple(_FACTORIES)
_cache: dict = {}


def get_variant(name: str) -> VariantSpec:
    """The VariantSpec of ``name``; ValueError listing the known variants otherwise."""
    if name not in _FACTORIES:
        raise ValueError(f"unknown variant {name!r} (known: {', '.join(VARIANTS)})")
    if name not in _cache:
        _cache[name] = _FACTORIES[name]()
    return _cache[name]


def observation_layouts_markdown() -> str:
    """Every variant's observation layout as Markdown (the content of docs/observations.md)."""
    parts = [
        "# Observation layouts",
        "",
        "Generated by `python -m tarocchi_rl.variants` (a test checks this file is current). Section",
        "meanings: `tarocchi_rl/core/obs_layout.py`. Seats are relative to the viewer; card planes are indexed",
        "by dense card id (`tarocchi_rl/cards.py`).",
    ]
    for name in VARIANTS:
        spec = get_variant(name)
        parts += ["", f"## `{name}`: {spec.obs_dim} floats", "", layout_table(spec.obs_rows)]
    parts += ["", "## The privileged observation (training only)", "",
              "The hidden part of a deal, which only the perfect-information critic of training reads",
              "(`critic: perfect`; never the policy, never an exported bot). Section meanings:",
              "`tarocchi_rl/core/obs_layout.py`. Offset (size) of each section:", "",
              "| variant | hands | stock | discard | floats |", "|---|---|---|---|---|"]
    for name in VARIANTS:
        spec = get_variant(name)
        _, dim, rows = build_privileged_layout(spec.n_players, spec.deck.n_cards)
        hands, stock, discard = (f"{o} ({size})" for o, size, _ in rows)
        parts.append(f"| `{name}` | {hands} | {stock} | {discard} | {dim} |")
    return "\n".join(parts) + "\n"
