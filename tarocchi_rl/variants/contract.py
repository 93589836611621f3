"""The family contract as a type: :class:`FamilyRules`, what every rule family module provides.

A family module (``variants/mineo.py``, ...) is checked against it by mypy where the registry lists it
(``FAMILIES: tuple[FamilyRules, ...]`` in :mod:`tarocchi_rl.variants`), and at run time by
``tests/core/test_variant_contract.py`` (:func:`missing_members`). Every member is read-only (a module's
constants and functions), so that a family's narrower types (``tuple[str, str]``) satisfy it.

Two kinds of member:

- Python: the rule tables' builder, the action vocabulary, the outcome and the facts, typed here exactly
  (``Callable[..., X]`` where the families' keyword options differ);
- Numba kernels (``KERNEL_HOOKS``): ``@njit`` functions that the shared kernels call for the family whose
  ``Tables`` they were given, through the generated family dispatch of :mod:`tarocchi_rl.variants.dispatch` (Numba
  types them when they are compiled, so their arguments are documented in ``KERNEL_HOOKS``, not annotated). A
  family with no use for a hook names a kernel of :mod:`tarocchi_rl.variants.defaults` after it.
"""

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from ..cards import Deck
from ..core.obs_layout import MAX_FAMILY_SECTIONS, SECTIONS
from ..core.phases import ENGINE_PHASES, Phase, check_phases
from ..core.tables import RuleTables

# The Numba hooks: name -> (arguments, what it does). The dispatch passes the arguments through unchanged.
KERNEL_HOOKS: dict[str, tuple[tuple[str, ...], str]] = {
    "start_row": (("st", "i", "tb"), "after the deal: enter the family's first phase"),
    "legal_flags": (("st", "i", "tb"), "the legal special actions (bids, calls, commitments) as bit flags (int)"),
    "step_special": (("st", "i", "k", "tb"), "apply special action k"),
    "after_discard": (("st", "i", "tb"), "the discard is complete"),
    "settle": (("st", "i", "tb"), "the last trick is resolved: count, score, payoffs"),
    # the determinizer's hooks (search/determinize.py: what a seat knows of the hidden cards)
    "stock_in_hand": (("st", "i", "tb"), "whether the declarer's hand holds the stock (bool): his dealt hand is then "
                      "his cards held, played and discarded less the stock (meta[STOCK] says which), and no seat "
                      "needs to place the stock; false: the stock is a pile of its own, hidden while "
                      "meta[STOCK_SHOWN] != 1. Default stock_taken_when_shown (meta[STOCK_SHOWN] == 1); "
                      "Piedmontese: always (the dealer takes it unseen)"),
    "stock_places_known": (("st", "i", "tb"), "how many of the stock's places in the deal (deck[n h ..], in order) "
                           "are public as dealt (int): a sample keeps them and writes its own stock cards after "
                           "them. Default no_stock_places_known (0: the stock's order tells nothing); tarok: the "
                           "talon once shown, klop's cards given to the first tricks"),
    "cards_dealt": (("st", "i", "tb"), "the cards per seat handed out so far (int): seat s holds deck[h s : h s + "
                    "k] of its block deck[h s : h s + h] (h = params[P_HAND]), the rest is still to come and hidden "
                    "from every seat, its own too. Default whole_hand_dealt (h); Mineo's early round: "
                    "params[P_FIRST_ROUND]"),
    "hand_cap": (("st", "i", "s", "tb"), "what the public knows of the count of a category of cards in seat s's "
                 "hidden hand: (cap int64, c0 uint64, c1 uint64), at most cap cards of the two-word set (c0, c1) "
                 "(cap -1: nothing known). Default no_hand_cap; Piedmontese: an accuso of the honours alone "
                 "proves fewer than ten trumps"),
    "sample_fixes": (("st", "i", "p", "tb"), "what a determinization of game i for seat p must fix after its "
                     "cards are drawn: the family's own bits (int, 0: nothing; passed back to sample_rejected and "
                     "fix_sample). Default no_sample_fixes; Mineo: the partnership while p does not know it; "
                     "Piedmontese: which of the dealer's cards were the stock; French: the petit-sec check"),
    "sample_rejected": (("st", "j", "fixes", "tb"), "whether sample j (its hands drawn) is impossible and must "
                        "be drawn again (bool; exact rejection: the constraints' uniform draw restricted to the "
                        "deals that pass). Called where fixes != 0 only. Default sample_never_rejected; French: a "
                        "petit sec dealt"),
    "fix_sample": (("st", "j", "p", "fixes", "tb", "rng"), "fix the hidden meta of sample j from its cards "
                   "(fixes != 0 only; before the deal, st.deck, is rewritten from the cards); returns the RNG state "
                   "(uint64, SplitMix64: core.bits.splitmix_next) after any draw. Default sample_unchanged; Mineo: "
                   "PARTNER, SIDE and the pigliata bonuses; Piedmontese: STOCK, uniformly among the dealer's cards"),
    # the heuristic's hooks (policies/heuristic.py: the family's own rules of the rule-based player)
    "heuristic_special": (("st", "i", "tb", "flags"), "the special action k (bid, call, commitment) the heuristic "
                          "says for the seat to act, flags the legal ones (bit k); -1 or an illegal k: the lowest "
                          "legal one. Default special_lowest (-1)"),
    "heuristic_reserved": (("st", "i", "tb", "h0", "out_tr", "hand_n"), "the trumps (uint64, word 0) the seat to "
                           "play keeps back while anything else is legal (h0: its hand's word 0, out_tr: the trumps "
                           "it cannot place, hand_n: its cards, > 1). Default reserve_nothing; French: the Petit "
                           "(petit au bout); Mineo: the master trump once a rivanto is said"),
    "heuristic_attack": (("st", "i", "p", "allies", "tb"), "whether seat p, leading, plays as the attacking side "
                         "(draws trumps with its master trump; allies: the seats it knows on its side, a bit "
                         "each). Default attack_declarer_side; Piedmontese: every seat"),
    "heuristic_ex_dump": (("st", "i", "hand_n", "tb"), "whether the seat, playing cheap, throws EX away "
                          "(hand_n: its cards). Default never_dump_ex; Mineo: in the second half of the deal (EX "
                          "not led stays with its side)"),
    "sides_known": (("st", "i", "viewer", "tb"), "whether seat viewer knows the sides (bool; Mineo: the hidden "
                    "partnership); also called from Python (the web table)"),
    "trick_won": (("st", "i", "winner", "last", "tb"), "the trick is complete and seat winner beats it by its cards "
                  "(last: it is the deal's last trick): the family's own trick rules (French: the chelem's "
                  "Excuse, petit au bout); returns the seat that takes the trick, which only the last "
                  "trick may change. Called for the last trick (before its cards are taken) and, after the cards "
                  "are taken, for the tricks holding a trump of the family's masks[MK_TRICK_HOOK] only; never "
                  "where that mask is empty. Where params[P_TRICK_HOOK_EVERY] is 1: called for every trick, "
                  "before its cards are taken; it may then change any trick's winner, and end the deal before its "
                  "last trick by setting meta[PHASE] to DONE (the engine then settles)"),
    "play_rules": (("st", "i", "l0", "l1", "tb"), "the two-word set (l0, l1) of cards the shared trick rules allow "
                   "the seat to act (core.trick.legal_cards): returns the family's legal set, (l0, l1) narrowed or "
                   "a card the shared rules would not allow (which then tells nothing about the hand); called "
                   "where params[P_PLAY_HOOK] is 1 only"),
    "play_exclusions": (("st", "i", "card", "tb"), "the seat to act plays dense ``card`` (not yet in the trick): "
                        "returns (e0, e1), the cards its play shows it cannot hold by the family's own play rules "
                        "(a must-beat followed with a lower card: no higher one), beside the shared rules' "
                        "exclusions; called where params[P_PLAY_HOOK] is 1 only"),
    "observe_sections": (("st", "i", "viewer", "tb", "out"), "write the family's own observation sections of "
                         "game i seen by viewer into out (float32[obs_dim], already cleared and filled with the "
                         "shared sections); called where the family's tables set params[P_OBS_HOOK] only"),
}


class FamilyRules(Protocol):
    """A rule family module (see the table in :mod:`tarocchi_rl.variants`)."""

    # -- identity ---------------------------------------------------------------------------------------------
    @property
    def FAMILY_ID(self) -> int:
        """Its position in the registry's ``FAMILIES``: the value of ``params[P_FAMILY]`` in its rule tables."""

    @property
    def VARIANT_ROWS(self) -> Mapping[str, Any]:
        """The family's variants: name -> :class:`tarocchi_rl.variants.spec.VariantRow` (the registry builds each
        one's VariantSpec; a new variant of a family is a new row)."""

    @property
    def PHASES(self) -> Sequence[Phase]:
        """The family's own phases (beside the engine's discard, play, done), codes unique across the registry
        (:mod:`tarocchi_rl.variants.phases`); its kernels drive them."""

    @property
    def FAMILY_SECTIONS(self) -> Sequence[str]:
        """The family's own observation sections (entries S_FAMILY + k of the layout, :mod:`tarocchi_rl.core.
        obs_layout`), which its ``observe_sections`` writes; empty: none."""

    # -- the variant's tables ---------------------------------------------------------------------------------
    @property
    def Tables(self) -> type[RuleTables]:  # noqa: N802 (a class)
        """The type of its rule tables: a RuleTables subclass of its own (a PlayRulesTables where its play_rules
        narrow the trick rules), so that the kernels are compiled per family and reach its hooks alone
        (:mod:`tarocchi_rl.variants.dispatch`)."""

    @property
    def make_rule_tables(self) -> Callable[..., RuleTables]:
        """``make_rule_tables(**fixed, **options)``: the family's ``Tables`` of a variant of the family."""

    # -- the action vocabulary --------------------------------------------------------------------------------
    @property
    def DECK(self) -> Deck: ...

    @property
    def N_ACTIONS(self) -> int: ...

    @property
    def SPECIAL_ACTION_NAMES(self) -> Sequence[str]:
        """Action id 2C + k is ``SPECIAL_ACTION_NAMES[k]`` (C cards in the deck)."""

    def action_to_string(self, a: int, phase: int) -> str: ...

    def string_to_action(self, text: str) -> int: ...

    # -- the outcome and the facts ----------------------------------------------------------------------------
    @property
    def outcome(self) -> Callable[..., dict[str, Any]]:
        """``outcome(st, i, tb=None)``: a finished deal in the one schema (``OUTCOME_FIELDS``)."""

    @property
    def ONE_IN_EVERY_HAND(self) -> Sequence[int]:
        """Dense ids of the cards of which every hand must hold one (empty: every deal may be played). The
        engine's own random deals are dealt again in ``start_row`` until they do; a deal given by a caller that
        does not is refused (``VariantSpec.refused_hand``: never silently replaced), and the OpenSpiel
        adapter's chance nodes deal only such deals."""

    @property
    def STOCK_IN_ORDER(self) -> bool:
        """Whether the stock, once shown, is seen in the order dealt and that order matters (tarok: the talon's
        sets are its consecutive slices): the views then list it in deal order (``stock:``), else by dense id
        (its order tells nothing: a monte, a chien)."""

    @property
    def ZERO_SUM(self) -> bool:
        """Whether every finished deal's payoffs add up to 0 (the invariant tests read it here)."""

    @property
    def utility_bounds(self) -> Callable[..., tuple[int, int]]:
        """``utility_bounds(**fixed, **options)``: (min, max) payoff of any seat in any deal."""

    @property
    def max_game_length(self) -> Callable[..., int]:
        """``max_game_length(**fixed, **options)``: the most player decisions in one deal."""

    @property
    def PAYOFF_SCALE(self) -> float:
        """Rewards are payoff / PAYOFF_SCALE."""

    @property
    def BONUS_UNIT(self) -> str: ...

    @property
    def CARD_POINT_UNITS(self) -> int:
        """Card points are counted in 1 / CARD_POINT_UNITS of a point."""

    @property
    def DECLARER_ROLE(self) -> str:
        """What the outcome's ``declarer`` is called: declarer, taker, dealer."""

    @property
    def OUTCOME_DETAILS(self) -> dict[str, str]: ...

    @property
    def CARD_POINT_UNIT_NAME(self) -> str:
        """The counting unit's name: thirds, half points."""

    @property
    def BID_WORDS(self) -> Sequence[str]:
        """The words a seat can say in the bidding (``meta[BID_WORD + s]`` and the like); empty: no bidding."""

    @property
    def BID_ROUNDS(self) -> Sequence[tuple[int, str, str]]:
        """The bidding rounds in the order of the deal: (the meta column of each seat's word, the round's name,
        the prefix of its words in the arena's counts); empty: no bidding."""

    @property
    def STRING_OPTION_CHOICES(self) -> Mapping[str, Sequence[str]]:
        """The values each string option of the family's variants may take (the web API offers them)."""

    @property
    def CONTRACT_NAMES(self) -> Sequence[str] | None:
        """``meta[CONTRACT]`` -> the contract's name; None: the game has no contract."""

    # -- the score sheet (web/score_sheet.py) -----------------------------------------------------------------
    def score_sheet_rows(self, out: dict[str, Any], options: dict[str, Any]) -> tuple[str, list[dict[str, str]]]:
        """A finished deal in words from its outcome (``out``, with sides) and the variant's options: the headline
        (one sentence) and the rows (``{term, text}`` in order, the payoffs last; ``variants.words`` has the
        shared wording)."""

    @property
    def END_COUNT_TEXT(self) -> str:
        """What the family counts only at the end of the deal, not in the tricks (the table's running tally): the
        discard, a card kept by its owner's side, a last trick's points."""

    def tally_note(self, final_units: int) -> str:
        """What the tally adds to a side's final card points (in 1 / CARD_POINT_UNITS) after its sum; "" for
        nothing."""

    # -- the Numba hooks (KERNEL_HOOKS) -----------------------------------------------------------------------
    @property
    def start_row(self) -> Callable[..., Any]: ...

    @property
    def legal_flags(self) -> Callable[..., Any]: ...

    @property
    def step_special(self) -> Callable[..., Any]: ...

    @property
    def after_discard(self) -> Callable[..., Any]: ...

    @property
    def settle(self) -> Callable[..., Any]: ...

    @property
    def stock_in_hand(self) -> Callable[..., Any]: ...

    @property
    def stock_places_known(self) -> Callable[..., Any]: ...

    @property
    def cards_dealt(self) -> Callable[..., Any]: ...

    @property
    def hand_cap(self) -> Callable[..., Any]: ...

    @property
    def sample_fixes(self) -> Callable[..., Any]: ...

    @property
    def sample_rejected(self) -> Callable[..., Any]: ...

    @property
    def fix_sample(self) -> Callable[..., Any]: ...

    @property
    def heuristic_special(self) -> Callable[..., Any]: ...

    @property
    def heuristic_reserved(self) -> Callable[..., Any]: ...

    @property
    def heuristic_attack(self) -> Callable[..., Any]: ...

    @property
    def heuristic_ex_dump(self) -> Callable[..., Any]: ...

    @property
    def sides_known(self) -> Callable[..., Any]: ...

    @property
    def trick_won(self) -> Callable[..., Any]: ...

    @property
    def observe_sections(self) -> Callable[..., Any]: ...

    @property
    def play_rules(self) -> Callable[..., Any]: ...

    @property
    def play_exclusions(self) -> Callable[..., Any]: ...


def contract_members() -> tuple[str, ...]:
    """The names every family module must define: the members of :class:`FamilyRules`."""
    return tuple(k for k in vars(FamilyRules) if not k.startswith("_"))


def missing_members(family: object) -> list[str]:
    """The contract's members that ``family`` (a module) lacks, or whose hooks are not callable."""
    missing = [k for k in contract_members() if not hasattr(family, k)]
    return missing + [f"{k} (not callable)" for k in KERNEL_HOOKS if hasattr(family, k) and
                      not callable(getattr(family, k))]


def check_family(family: object) -> list[str]:
    """What the family module ``family`` gets wrong against the contract (empty: nothing), as Pgx's api_test
    checks an environment: the members it lacks (or hooks not callable), phases that are invalid or take an
    engine phase's code, observation sections of its own beyond MAX_FAMILY_SECTIONS or named as shared ones, and
    a ``Tables`` that is not a RuleTables subclass of its own. The contract test calls it for every registered
    family."""
    problems = missing_members(family)
    name = getattr(family, "__name__", repr(family))
    phases = tuple(getattr(family, "PHASES", ()))
    try:
        check_phases(phases, name)
    except ValueError as e:
        problems.append(str(e))
    engine_codes = {p.code for p in ENGINE_PHASES}
    problems += [f"phase {p.name!r} takes the engine's code {p.code}" for p in phases if p.code in engine_codes]
    if len({p.code for p in phases}) != len(phases):
        problems.append("two of its phases share a code")
    sections = tuple(getattr(family, "FAMILY_SECTIONS", ()))
    if len(sections) > MAX_FAMILY_SECTIONS:
        problems.append(f"{len(sections)} observation sections of its own, more than {MAX_FAMILY_SECTIONS}")
    problems += [f"its section {s!r} is a shared section's name" for s in sections if s in SECTIONS]
    tables = getattr(family, "Tables", None)
    if tables is not None and not (isinstance(tables, type) and issubclass(tables, RuleTables)
                                   and tables.__name__ not in ("RuleTables", "PlayRulesTables")):
        problems.append(f"its Tables {tables!r} is not a RuleTables subclass of its own")
    return problems


def check_registry(families: Sequence[object]) -> list[str]:
    """What the registry's ``families`` get wrong together (empty: nothing): each family's ``Tables`` needs a class
    name of its own, since Numba tells two named-tuple types with the same fields apart by their class name only
    (two families' tables of one name would share their compiled kernels, each family's hooks compiled in)."""
    seen: dict[str, str] = {}
    problems = []
    for family in families:
        name = getattr(getattr(family, "Tables", None), "__name__", None)
        if name is not None and name in seen:
            problems.append(f"{getattr(family, '__name__', family)}.Tables has the class name {name!r} of "
                            f"{seen[name]}.Tables")
        elif name is not None:
            seen[name] = getattr(family, "__name__", repr(family))
    return problems
