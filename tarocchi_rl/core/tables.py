"""Rule tables: a variant compiled into arrays that the kernels read (the NamedTuple :class:`RuleTables`, and
its subclass :class:`PlayRulesTables` for a family whose ``play_rules`` narrow the shared trick rules). Each family
subclasses one of them (its ``Tables``): a Numba type of its own, so that a kernel is compiled per family and
reaches that family's hooks alone (:mod:`tarocchi_rl.variants.dispatch`).

Variants differ by these tables and by small per-phase kernels, never by ``if variant == ...`` in the
shared trick kernel.

``card`` : int16[C, 4], per dense card id: columns CARD_SUIT (0..3 suit, 4 trump, 5 EX), CARD_WORD
(0 trumps and EX, 1 suits), CARD_BIT (bit in that word = strength order), CARD_VALUE (card-point value of a
special card, 0 for a scartina).
``pos_to_card`` : int16[128], word*64+bit -> dense card id (-1: no card).
``obs`` : int64[N_SECTIONS], the observation layout: offset of each section (-1: absent in this variant);
see :mod:`tarocchi_rl.engine.observation`.

``masks`` : uint64[N_MASKS, 2], named two-word card sets (rows a variant does not use stay zero)

| offset   | row                  | cards                                                                              |
|----------|----------------------|------------------------------------------------------------------------------------|
| 0 .. 3   | MK_SUIT + s          | the four suits                                                                     |
| 4        | MK_TRUMPS            | all trumps (not EX)                                                                |
| 5        | MK_EX                | the Fool                                                                           |
| 6        | MK_KINGS             | the kings                                                                          |
| 7        | MK_DISCARD_FORBIDDEN | never discardable                                                                  |
| 8        | MK_DISCARD_FALLBACK  | discardable when too few allowed cards remain                                      |
| 9 .. 15  | MK_FAMILY + k        | the family's own card sets: each family module names the rows it uses (its MK_*    |
|          |                      | aliases)                                                                           |
| 16 .. 23 | MK_VALUE + k         | the cards of the k-th distinct card value, value in params[P_VALUE + k]            |
| 24       | (unused)             |                                                                                    |
| 25       | MK_TRICK_HOOK        | the trumps whose trick the family's trick_won sees (the last trick it always sees) |
| 26       | MK_CAPTURE_BONUS     | the trumps whose capture from the other side scores its taker one bonus unit in    |
|          |                      | BONUS slot params[P_CAPTURE_BONUS] (a capture bonus)                               |
| 27       | (unused)             |                                                                                    |

``params`` : int64[N_PARAMS], named integers (entries a variant does not use stay zero)

| offset   | entry                    | value                                                                          |
|----------|--------------------------|--------------------------------------------------------------------------------|
| 0        | P_PLAYERS                | players                                                                        |
| 1        | P_CARDS                  | cards in the deck                                                              |
| 2        | P_HAND                   | cards per hand after the deal                                                  |
| 3        | P_STOCK                  | monte / talon / chien size                                                     |
| 4        | P_TRICKS                 | tricks per deal                                                                |
| 5        | P_DISCARDS               | cards the declarer discards                                                    |
| 6        | P_MUST_OVERTRUMP         | 1: a trump must beat the best trump in the trick when able                     |
| 7        | P_EX_LEAD_ANY            | 1: EX may be led at any time; 0: only when it is the last card                 |
| 8        | (unused)                 |                                                                                |
| 9        | P_FIRST_ROUND            | cards per seat dealt before the first decision (P_HAND, the default of         |
|          |                          | make_tables: the whole hand at once; fewer: the rest after the first round of  |
|          |                          | bidding)                                                                       |
| 10       | P_N_VALUES               | number of distinct card values (MK_VALUE rows in use)                          |
| 11       | P_FAMILY                 | rule family: its position in variants.FAMILIES (its FAMILY_ID; selects its     |
|          |                          | kernels)                                                                       |
| 12       | P_COUNT                  | COUNT_TRIPLETS (thirds: 3v-2 a special card, 1 a scartina) or COUNT_DIRECT     |
|          |                          | (the sum of the values: half points)                                           |
| 13       | P_EX_LAST                | who gets EX played to the last trick: one of the EX_LAST_* rules below         |
| 14       | P_EXCHANGE               | 1: the Excuse exchange (one scartina's value from the owner's side to the      |
|          |                          | winner's side)                                                                 |
| 15       | P_DEALER                 | seat of the dealer                                                             |
| 16 .. 23 | P_VALUE + k              | the value of the cards of masks row MK_VALUE + k                               |
| 24 .. 28 | P_FAMILY_PARAM + k       | the family's own integers (options, thresholds): each family module names the  |
|          |                          | entries it uses (its P_* aliases)                                              |
| 29       | P_N_SPECIAL              | number of non-card actions (pass, bids, commitments)                           |
| 30       | (unused)                 |                                                                                |
| 31       | P_BID_WORDS              | words a seat can say in the auction (observation width per seat)               |
| 32       | P_N_CONTRACTS            | contracts (observation one-hot width)                                          |
| 33       | P_TOTAL_POINTS           | card points in the deck (thirds or half points) for normalisation              |
| 34       | P_FIRST_CARD_PHASE       | the phase code a seat's first turn of the first trick enters before his card   |
|          |                          | (a family's declaration), -1: none                                             |
| 35       | P_OBS_HOOK               | 1: the family writes observation sections of its own (its observe_sections)    |
| 36       | P_CAPTURE_BONUS          | the BONUS slot (per side) that counts captures of masks[MK_CAPTURE_BONUS]      |
|          |                          | cards                                                                          |
| 37       | P_PLAY_HOOK              | 1: the family's play_rules narrows the cards legal by the shared trick rules;  |
|          |                          | its tables are then a PlayRulesTables, and the kernels read that type          |
|          |                          | (has_play_rules), not this                                                     |
| 38       | P_TRICK_HOOK_EVERY       | 1: the family's trick_won sees every trick before its cards are taken (it may  |
|          |                          | change any trick's winner, and end the deal)                                   |
| 39       | P_DISCARD_FALLBACK_EMPTY | 1: MK_DISCARD_FALLBACK cards become discardable only when no allowed card is   |
|          |                          | left (0: when fewer than the discards left)                                    |
| 40 .. 55 | P_PHASE_SLOT + p         | the observation's phase one-hot entry of phase code p (its Phase.shown_as)     |

**The family's own entries.** ``MK_FAMILY + k`` and ``P_FAMILY_PARAM + k`` belong to the family of
``params[P_FAMILY]``: each family module names the ones it uses (``MK_X = MK_FAMILY + 0``,
``P_Y = P_FAMILY_PARAM + 2``, ...) and only its own kernels read them, so a new family adds no row
here. (The entries the families moved out of keep their numbers as aliases where they could; the shared
entries never moved: a kernel cached by Numba before a change of this file still reads the right ones.)

The offsets and these two tables come from one declaration each (``MASKS_LAYOUT``, ``PARAMS_LAYOUT``;
:mod:`tarocchi_rl.core.offsets`): a table is ``LAYOUT.table()`` pasted, which ``tests/core/test_layouts.py``
checks.
"""

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
from numba import types
from numba.extending import overload

from ..cards import EX_BIT, Deck
from .offsets import Layout
from .phases import ENGINE_PHASES, MAX_PHASES, Phase, check_phases

CARD_SUIT, CARD_WORD, CARD_BIT, CARD_VALUE = range(4)


class RuleTables(NamedTuple):
    """Arrays describing one variant with its options (see the module docstring)."""

    card: np.ndarray
    pos_to_card: np.ndarray
    masks: np.ndarray
    params: np.ndarray
    obs: np.ndarray


class PlayRulesTables(RuleTables):
    """The RuleTables of a family whose ``play_rules`` narrow the shared trick rules (params[P_PLAY_HOOK] = 1).

    A type of its own for Numba: the kernels are compiled apart for it, and :func:`has_play_rules` is a constant
    in each compile, so the kernels of the other families carry no trace of the hook (a call left in the shared
    legality code, even never taken, cost a random rollout of another family about a tenth of its speed)."""

    __slots__ = ()


def has_play_rules(tb: RuleTables) -> bool:
    """Whether the family of ``tb`` narrows the shared trick rules with its ``play_rules`` (in a kernel: a
    compile-time constant of the tables' type)."""
    return isinstance(tb, PlayRulesTables)


@overload(has_play_rules, inline="always")
def _has_play_rules_kernel(tb: types.Type) -> Callable[[types.Type], bool]:
    hooked = isinstance(tb, types.BaseNamedTuple) and issubclass(tb.instance_class, PlayRulesTables)

    def constant(tb: types.Type) -> bool:  # (the same parameters as above: Numba compares them)
        return hooked

    return constant


MASKS_LAYOUT = Layout("masks", ("row", "cards"), [
    ("MK_SUIT + s", 4, "the four suits"),
    ("MK_TRUMPS", 1, "all trumps (not EX)"),
    ("MK_EX", 1, "the Fool"),
    ("MK_KINGS", 1, "the kings"),
    ("MK_DISCARD_FORBIDDEN", 1, "never discardable"),
    ("MK_DISCARD_FALLBACK", 1, "discardable when too few allowed cards remain"),
    ("MK_FAMILY + k", 7, "the family's own card sets: each family module names the rows it uses (its MK_* aliases)"),
    ("MK_VALUE + k", 8, "the cards of the k-th distinct card value, value in params[P_VALUE + k]"),
    ("", 1),
    ("MK_TRICK_HOOK", 1, "the trumps whose trick the family's trick_won sees (the last trick it always sees)"),
    ("MK_CAPTURE_BONUS", 1, "the trumps whose capture from the other side scores its taker one bonus unit in BONUS "
                            "slot params[P_CAPTURE_BONUS] (a capture bonus)"),
    ("", 1),
], total="N_MASKS")
PARAMS_LAYOUT = Layout("params", ("entry", "value"), [
    ("P_PLAYERS", 1, "players"),
    ("P_CARDS", 1, "cards in the deck"),
    ("P_HAND", 1, "cards per hand after the deal"),
    ("P_STOCK", 1, "monte / talon / chien size"),
    ("P_TRICKS", 1, "tricks per deal"),
    ("P_DISCARDS", 1, "cards the declarer discards"),
    ("P_MUST_OVERTRUMP", 1, "1: a trump must beat the best trump in the trick when able"),
    ("P_EX_LEAD_ANY", 1, "1: EX may be led at any time; 0: only when it is the last card"),
    ("", 1),
    ("P_FIRST_ROUND", 1, "cards per seat dealt before the first decision (P_HAND, the default of make_tables: the "
                         "whole hand at once; fewer: the rest after the first round of bidding)"),
    ("P_N_VALUES", 1, "number of distinct card values (MK_VALUE rows in use)"),
    ("P_FAMILY", 1, "rule family: its position in variants.FAMILIES (its FAMILY_ID; selects its kernels)"),
    ("P_COUNT", 1, "COUNT_TRIPLETS (thirds: 3v-2 a special card, 1 a scartina) or COUNT_DIRECT (the sum of the "
                   "values: half points)"),
    ("P_EX_LAST", 1, "who gets EX played to the last trick: one of the EX_LAST_* rules below"),
    ("P_EXCHANGE", 1, "1: the Excuse exchange (one scartina's value from the owner's side to the winner's side)"),
    ("P_DEALER", 1, "seat of the dealer"),
    ("P_VALUE + k", 8, "the value of the cards of masks row MK_VALUE + k"),
    ("P_FAMILY_PARAM + k", 5, "the family's own integers (options, thresholds): each family module names the "
                              "entries it uses (its P_* aliases)"),
    ("P_N_SPECIAL", 1, "number of non-card actions (pass, bids, commitments)"),
    ("", 1),
    ("P_BID_WORDS", 1, "words a seat can say in the auction (observation width per seat)"),
    ("P_N_CONTRACTS", 1, "contracts (observation one-hot width)"),
    ("P_TOTAL_POINTS", 1, "card points in the deck (thirds or half points) for normalisation"),
    ("P_FIRST_CARD_PHASE", 1, "the phase code a seat's first turn of the first trick enters before his card (a "
                              "family's declaration), -1: none"),
    ("P_OBS_HOOK", 1, "1: the family writes observation sections of its own (its observe_sections)"),
    ("P_CAPTURE_BONUS", 1, "the BONUS slot (per side) that counts captures of masks[MK_CAPTURE_BONUS] cards"),
    ("P_PLAY_HOOK", 1, "1: the family's play_rules narrows the cards legal by the shared trick rules; its tables "
                       "are then a PlayRulesTables, and the kernels read that type (has_play_rules), not this"),
    ("P_TRICK_HOOK_EVERY", 1, "1: the family's trick_won sees every trick before its cards are taken (it may change "
                              "any trick's winner, and end the deal)"),
    ("P_DISCARD_FALLBACK_EMPTY", 1, "1: MK_DISCARD_FALLBACK cards become discardable only when no allowed card is "
                                    "left (0: when fewer than the discards left)"),
    ("P_PHASE_SLOT + p", MAX_PHASES, "the observation's phase one-hot entry of phase code p (its Phase.shown_as)"),
], total="N_PARAMS")

MK_SUIT = MASKS_LAYOUT["MK_SUIT"]
MK_TRUMPS = MASKS_LAYOUT["MK_TRUMPS"]
MK_EX = MASKS_LAYOUT["MK_EX"]
MK_KINGS = MASKS_LAYOUT["MK_KINGS"]
MK_DISCARD_FORBIDDEN = MASKS_LAYOUT["MK_DISCARD_FORBIDDEN"]
MK_DISCARD_FALLBACK = MASKS_LAYOUT["MK_DISCARD_FALLBACK"]
MK_FAMILY = MASKS_LAYOUT["MK_FAMILY"]
MK_VALUE = MASKS_LAYOUT["MK_VALUE"]
MK_TRICK_HOOK = MASKS_LAYOUT["MK_TRICK_HOOK"]
MK_CAPTURE_BONUS = MASKS_LAYOUT["MK_CAPTURE_BONUS"]
N_MASKS = MASKS_LAYOUT.total

P_PLAYERS = PARAMS_LAYOUT["P_PLAYERS"]
P_CARDS = PARAMS_LAYOUT["P_CARDS"]
P_HAND = PARAMS_LAYOUT["P_HAND"]
P_STOCK = PARAMS_LAYOUT["P_STOCK"]
P_TRICKS = PARAMS_LAYOUT["P_TRICKS"]
P_DISCARDS = PARAMS_LAYOUT["P_DISCARDS"]
P_MUST_OVERTRUMP = PARAMS_LAYOUT["P_MUST_OVERTRUMP"]
P_EX_LEAD_ANY = PARAMS_LAYOUT["P_EX_LEAD_ANY"]
P_FIRST_ROUND = PARAMS_LAYOUT["P_FIRST_ROUND"]
P_N_VALUES = PARAMS_LAYOUT["P_N_VALUES"]
P_FAMILY = PARAMS_LAYOUT["P_FAMILY"]
P_COUNT = PARAMS_LAYOUT["P_COUNT"]
P_EX_LAST = PARAMS_LAYOUT["P_EX_LAST"]
P_EXCHANGE = PARAMS_LAYOUT["P_EXCHANGE"]
P_DEALER = PARAMS_LAYOUT["P_DEALER"]
P_VALUE = PARAMS_LAYOUT["P_VALUE"]
P_N_SPECIAL = PARAMS_LAYOUT["P_N_SPECIAL"]
P_BID_WORDS = PARAMS_LAYOUT["P_BID_WORDS"]
P_N_CONTRACTS = PARAMS_LAYOUT["P_N_CONTRACTS"]
P_TOTAL_POINTS = PARAMS_LAYOUT["P_TOTAL_POINTS"]
P_FIRST_CARD_PHASE = PARAMS_LAYOUT["P_FIRST_CARD_PHASE"]
P_OBS_HOOK = PARAMS_LAYOUT["P_OBS_HOOK"]
P_CAPTURE_BONUS = PARAMS_LAYOUT["P_CAPTURE_BONUS"]
P_PLAY_HOOK = PARAMS_LAYOUT["P_PLAY_HOOK"]
P_TRICK_HOOK_EVERY = PARAMS_LAYOUT["P_TRICK_HOOK_EVERY"]
P_DISCARD_FALLBACK_EMPTY = PARAMS_LAYOUT["P_DISCARD_FALLBACK_EMPTY"]
P_FAMILY_PARAM = PARAMS_LAYOUT["P_FAMILY_PARAM"]
P_PHASE_SLOT = PARAMS_LAYOUT["P_PHASE_SLOT"]
N_PARAMS = PARAMS_LAYOUT.total

MASKS_LAYOUT.check_bound(globals())
PARAMS_LAYOUT.check_bound(globals())

COUNT_TRIPLETS, COUNT_DIRECT = 0, 1
# P_EX_LAST values (the Excuse / Fuggitivo / Matto played to the last trick):
# EX_LAST_IF_LED     to the trick's winner only if EX led that trick, else its owner's side keeps it
# EX_LAST_ALWAYS     to the trick's winner
# EX_LAST_OTHER_SIDE to the camp opposite its owner, unless that side won every other trick
EX_LAST_IF_LED, EX_LAST_ALWAYS, EX_LAST_OTHER_SIDE = 0, 1, 2


def make_tables(deck: Deck, card_value: Sequence[int] | np.ndarray, masks: dict[int, Any], params: dict[int, int],
                obs: np.ndarray, phases: Sequence[Phase] = (),
                tables_type: type[RuleTables] = RuleTables) -> RuleTables:
    """Compile a deck, card values, named masks {MK_*: [names]}, params {P_*: int}, an observation layout
    (int64[N_SECTIONS] offsets) and the family's ``phases`` (beside the engine's) into a ``tables_type``: a family
    passes its own subclass (its Numba type, for which the kernels are compiled apart), a PlayRulesTables exactly
    where params[P_PLAY_HOOK] is 1."""
    mk = np.zeros((N_MASKS, 2), dtype=np.uint64)
    for row, names in masks.items():
        mk[row] = deck.mask_of(names)
    for c in range(deck.n_cards):
        s = int(deck.suit[c])
        if s < 4:
            mk[MK_SUIT + s, 1] |= np.uint64(1) << np.uint64(deck.bit[c])
    pr = np.zeros(N_PARAMS, dtype=np.int64)
    for k, v in params.items():
        pr[k] = int(v)
    if P_FIRST_ROUND not in params:
        pr[P_FIRST_ROUND] = pr[P_HAND]
    if P_FIRST_CARD_PHASE not in params:
        pr[P_FIRST_CARD_PHASE] = -1
    check_phases(list(phases), "make_tables")
    for p in ENGINE_PHASES + tuple(phases):
        pr[P_PHASE_SLOT + p.code] = p.shown_as
    values = sorted({int(v) for v in card_value})
    assert len(values) <= 8
    pr[P_N_VALUES] = len(values)
    for k, v in enumerate(values):
        pr[P_VALUE + k] = v
        mk[MK_VALUE + k] = deck.mask_of([c for c in range(deck.n_cards) if int(card_value[c]) == v])
    assert not (mk[MK_TRUMPS, 0] & (np.uint64(1) << np.uint64(EX_BIT)))
    card = np.stack([deck.suit, deck.word, deck.bit, np.asarray(card_value)], axis=1).astype(np.int16)
    if not issubclass(tables_type, RuleTables):
        raise TypeError(f"make_tables: tables_type {tables_type!r} is not a RuleTables")
    if issubclass(tables_type, PlayRulesTables) != bool(pr[P_PLAY_HOOK]):
        raise ValueError(f"make_tables: params[P_PLAY_HOOK] is {pr[P_PLAY_HOOK]} but tables_type "
                         f"{tables_type.__qualname__} {'is' if issubclass(tables_type, PlayRulesTables) else 'is not'}"
                         " a PlayRulesTables")
    return tables_type(
        card=card, pos_to_card=deck.pos_to_card.copy(), masks=mk, params=pr, obs=np.asarray(obs, np.int64)
    )
