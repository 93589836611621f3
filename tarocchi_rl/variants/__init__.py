"""The variants: one rule family module each (mineo, piedmont, french, tarok) behind one contract, and the registry.

The family contract is a type, :class:`tarocchi_rl.variants.contract.FamilyRules` (a ``Protocol``): mypy checks
every module of ``FAMILIES`` below against it, and ``tests/core/test_variant_contract.py`` checks each at run
time. A family module provides, beside its rules:

| what                                                       | kind    | used by                              |
|------------------------------------------------------------|---------|--------------------------------------|
| ``FAMILY_ID``                                              | fact    | its position in ``FAMILIES``: the    |
|                                                            |         | value of ``params[P_FAMILY]``        |
| ``Tables``: its RuleTables subclass, a class name of its   | type    | Numba: the kernels are compiled per  |
| own (a PlayRulesTables where ``play_rules`` narrows)       |         | family, for this type (dispatch.py)  |
| ``make_rule_tables(**options)``                            | Python  | the engine (its Tables: masks, params)|
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
kernels apply from the tables alone stay table entries (``P_FIRST_CARD_PHASE``, ``MK_CAPTURE_BONUS`` with
``P_CAPTURE_BONUS``, ``P_EX_LAST``, ...).

A ``VariantSpec`` (:mod:`tarocchi_rl.variants.spec`) gathers, per variant, the family module, the options (name ->
(type, default)), sizes, deal order, observation layout and these facts; each family module registers its own
variants as ``VARIANT_ROWS`` (name -> ``VariantRow``, one record shape for every family). A new variant of a family
is a row there; a new family is one module, its line in ``FAMILIES`` below and its oracle in ``tests/oracles``.
``contract.check_family(module)`` checks a family module, and the contract test
``tests/core/test_variant_contract.py`` runs it and its checks over every registered family and variant.
"""

import copyreg

from ..core.obs_layout import build_privileged_layout, layout_table
from . import french, mineo, piedmont, tarok
from .contract import FamilyRules, check_registry
from .spec import INT32_MAX, INT32_MIN, VariantRow, VariantSpec

__all__ = ["FAMILIES", "INT32_MAX", "INT32_MIN", "OUTCOME_FIELDS", "VARIANTS", "VariantRow", "VariantSpec",
           "get_variant", "observation_layouts_markdown"]

# The rule families; a family's id (params[P_FAMILY], its FAMILY_ID) is its position here. mypy checks each
# module against the FamilyRules protocol on this line.
FAMILIES: tuple[FamilyRules, ...] = (mineo, piedmont, french, tarok)
for _k, _family in enumerate(FAMILIES):
    if _family.FAMILY_ID != _k:
        raise ImportError(f"family {_family!r} has FAMILY_ID {_family.FAMILY_ID}, but is FAMILIES[{_k}]")
if check_registry(FAMILIES):
    raise ImportError("; ".join(check_registry(FAMILIES)))

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


# Every variant, from its family's VARIANT_ROWS (a family module registers its own variants).
_ROWS = {name: (family, row) for family in FAMILIES for name, row in family.VARIANT_ROWS.items()}
VARIANTS = tuple(_ROWS)
# a spec holds a module: pickled and deep-copied by name, looked up again in the registry
copyreg.pickle(VariantSpec, lambda spec: (get_variant, (spec.name,)))
_cache: dict = {}


def get_variant(name: str) -> VariantSpec:
    """The VariantSpec of ``name``; ValueError listing the known variants otherwise."""
    if name not in _ROWS:
        raise ValueError(f"unknown variant {name!r} (known: {', '.join(VARIANTS)})")
    if name not in _cache:
        family, row = _ROWS[name]
        offsets, obs_dim, obs_rows = row.layout
        _cache[name] = VariantSpec(name, family, row.options, row.n_players, family.N_ACTIONS, tuple(row.hand_sizes),
                                   row.stock_size, obs_dim, tuple(obs_rows), row.fixed, row.long_name,
                                   row.option_ranges)
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
