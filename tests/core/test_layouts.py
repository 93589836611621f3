"""The hand-free layouts: the batch state's columns, the rule tables' mask rows and parameters and the
determinizer's plan come from one declaration each (:mod:`tarocchi_rl.core.offsets`). Their offsets are
contiguous, end at the declared totals, are bound as plain module ints (what Numba compiles as constants),
keep the numbers that records and checkpoints were written with, and the module docstrings show their tables."""

import numpy as np
import pytest
from numba import njit

import tarocchi_rl.core.state as state
import tarocchi_rl.core.tables as tables
import tarocchi_rl.search.determinize as determinize
import tarocchi_rl.search.inference as inference
from tarocchi_rl.core.offsets import Layout, tables_missing_from

pytestmark = pytest.mark.nojit

LAYOUTS = [
    (state, state.META_LAYOUT), (state, state.CARDS_LAYOUT),
    (tables, tables.MASKS_LAYOUT), (tables, tables.PARAMS_LAYOUT),
    (determinize, determinize.PLAN_INTS), (determinize, determinize.PILE_RECORD),
    (determinize, determinize.CLASS_RECORD), (determinize, determinize.LAYER_RECORD),
    (determinize, determinize.PLAN_MASKS),
    (inference, inference.BELIEF_INTS), (inference, inference.BELIEF_CARD),
]
IDS = [f"{module.__name__.rsplit('.', 1)[1]}.{layout.name}" for module, layout in LAYOUTS]

# The numbers as they were numbered by hand before the layouts were derived (issue 32): a saved batch state,
# a record or a checkpoint's tables depend on them, so a change here is a format change, never a refactoring.
# (Issue 54 made the family columns the family's own: FAMILY_META + k at 72, where the French poignee and the
# Piedmontese accuso were, Mineo's early words moved there from 24; P_FIRST_CARD_PHASE took entry 34. No record,
# checkpoint or store holds a state or tables array: records are actions, checkpoints weights.)
PINNED = {
    "state.meta": ({
        "PHASE": 0, "CUR": 1, "DECLARER": 2, "CONTRACT": 3, "MULT": 4, "CALLED": 5, "PARTNER": 6,
        "STOCK_SHOWN": 7, "DISCARDS_LEFT": 8, "TURN": 9, "TRICK_LEADER": 10, "TRICK_COUNT": 11, "LED_SUIT": 12,
        "BEST_SEAT": 13, "BEST_TRUMP": 14, "BEST_BIT": 15, "TRICK_NUM": 16, "EX_PLAYER": 17, "EX_TRICK_WINNER": 18,
        "EX_LAST": 19, "LAST_WINNER": 20, "BID_WORD": 28, "SIDE": 32, "COMMIT": 36, "TRICK": 40,
        "TRICKS_WON": 44, "POINTS": 48, "BONUS": 52, "PAYOFF": 68, "FAMILY_META": 72,
    }, 80),
    "state.cards": ({
        "HAND": 0, "PLAYED": 4, "WON": 8, "STOCK": 12, "DISCARDED": 13, "SHOWN": 14, "SHOWN_BY": 15, "EXCLUDED": 20,
    }, 24),
    "tables.masks": ({
        "MK_SUIT": 0, "MK_TRUMPS": 4, "MK_EX": 5, "MK_KINGS": 6, "MK_DISCARD_FORBIDDEN": 7, "MK_DISCARD_FALLBACK": 8,
        "MK_FAMILY": 9, "MK_VALUE": 16, "MK_TRICK_HOOK": 25,
        "MK_CAPTURE_BONUS": 26,
    }, 28),
    "tables.params": ({
        "P_PLAYERS": 0, "P_CARDS": 1, "P_HAND": 2, "P_STOCK": 3, "P_TRICKS": 4, "P_DISCARDS": 5,
        "P_MUST_OVERTRUMP": 6, "P_EX_LEAD_ANY": 7, "P_FIRST_ROUND": 9, "P_N_VALUES": 10,
        "P_FAMILY": 11, "P_COUNT": 12, "P_EX_LAST": 13, "P_EXCHANGE": 14, "P_DEALER": 15, "P_VALUE": 16,
        "P_FAMILY_PARAM": 24, "P_N_SPECIAL": 29,
        "P_BID_WORDS": 31, "P_N_CONTRACTS": 32, "P_TOTAL_POINTS": 33, "P_FIRST_CARD_PHASE": 34, "P_OBS_HOOK": 35,
        "P_CAPTURE_BONUS": 36, "P_PLAY_HOOK": 37, "P_TRICK_HOOK_EVERY": 38, "P_DISCARD_FALLBACK_EMPTY": 39,
        "P_PHASE_SLOT": 40,
    }, 56),
    "determinize.ints": ({
        "I_STATUS": 0, "I_P": 1, "I_K": 2, "I_KB": 3, "I_NF": 4, "I_FLAGS": 5, "I_OBS": 6, "I_UNIV": 7, "I_FIX": 8,
        "I_PILE": 16, "I_CLS": 48, "I_LAY": 176,
    }, 1904),
    "determinize.pile": ({"PILE_KIND": 0, "PILE_SEAT": 1, "PILE_ROOM": 2, "PILE_CAP": 3}, 4),
    "determinize.class": ({"CLS_SIZE": 0, "CLS_PILES": 1}, 2),
    "determinize.layer": ({"LAY_OFF": 0, "LAY_DROP": 1, "LAY_LEFT": 2, "LAY_LO": 3, "LAY_HI": 11, "LAY_STRIDE": 19},
                          27),
    "determinize.masks": ({"M_PILE": 0, "M_FIX": 16, "M_CLS": 32, "M_U": 160}, 162),
    "inference.belief ints": ({"B_MODE": 0, "B_M": 1, "B_K": 2, "B_KB": 3, "B_NF": 4, "B_CARD": 8, "B_LAY": 264}, 3747),
    "inference.belief card": ({"CARD_POS": 0, "CARD_PILES": 1}, 2),
}


@pytest.mark.parametrize(("module", "layout"), LAYOUTS, ids=IDS)
def test_offsets_are_contiguous_and_end_at_the_total(module, layout):
    end = 0
    for field in layout.fields:
        assert field.offset == end, f"{layout.name}: {field.label or '(unused)'} starts at {field.offset}, not {end}"
        assert field.width >= 1
        end += field.width
    assert end == layout.total == getattr(module, layout.total_name)


@pytest.mark.parametrize(("module", "layout"), LAYOUTS, ids=IDS)
def test_every_name_is_a_module_int_at_its_offset(module, layout):
    assert layout.names(), f"{layout.name} declares no name"
    for field in layout.fields:
        if field.name:
            value = getattr(module, field.name)
            assert type(value) is int, f"{field.name} is a {type(value).__name__}, not an int (Numba constant)"
            assert value == field.offset == layout[field.name]


@pytest.mark.parametrize(("module", "layout"), LAYOUTS, ids=IDS)
def test_offsets_keep_the_numbers_records_were_written_with(module, layout):
    offsets, total = PINNED[f"{module.__name__.rsplit('.', 1)[1]}.{layout.name}"]
    assert {name: layout[name] for name in layout.names()} == offsets
    assert layout.total == total


@pytest.mark.parametrize(("module", "layout"), LAYOUTS, ids=IDS)
def test_module_docstring_shows_the_declared_table(module, layout):
    assert not tables_missing_from(module.__doc__, layout), (
        f"paste the table of layout {layout.name!r}, generated from its declaration, into {module.__name__}'s "
        f"docstring:\n{layout.table()}")
    table = layout.table()
    for field in layout.fields:
        if field.name:
            assert f"| {field.label} " in table
    assert max(len(line) for line in table.split("\n")) <= 120


def test_a_kernel_reads_the_offsets_as_constants():
    @njit(cache=False)
    def read(meta):
        return meta[state.PAYOFF + 3] + state.N_META + determinize.I_LAY + determinize.LAY_W

    meta = np.arange(state.N_META, dtype=np.int64)
    assert read(meta) == 71 + 80 + 176 + 27


def test_table_spans_labels_and_unused_rows():
    layout = Layout("demo", ("column", "meaning"), [("A", 1, "first"), ("", 2), ("B + s", 3, "per seat")], total="N")
    assert (layout["A"], layout["B"], layout.total) == (0, 3, 6)
    assert layout.table().split("\n") == [
        "| offset | column   | meaning  |",
        "|--------|----------|----------|",
        "| 0      | A        | first    |",
        "| 1 .. 2 | (unused) |          |",
        "| 3 .. 5 | B + s    | per seat |",
    ]


@pytest.mark.parametrize(("rows", "message"), [
    ([("A", 1), ("A", 2)], "A declared twice"),
    ([("A", 1), ("N", 1)], "N declared twice"),
    ([("A", 0)], "width must be an int >= 1"),
    ([("A", 2.0)], "width must be an int >= 1"),
    ([("a_lower", 1)], "UPPER_CASE constant name"),
    ([("A",)], "a row is (label, width, *texts)"),
    ([("A", 1, "one", "two")], "2 texts for 1 text columns"),
    ([("A", 1, 3)], "texts must be strings"),
])
def test_bad_declarations_name_the_row(rows, message):
    with pytest.raises(ValueError, match="layout demo") as err:
        Layout("demo", ("column", "meaning"), rows, total="N")
    assert message in str(err.value)


def test_check_bound_names_what_differs():
    layout = Layout("demo", ("column",), [("A", 1), ("B", 2)], total="N")
    layout.check_bound({"A": 0, "B": 1, "N": 3})
    with pytest.raises(RuntimeError, match=r"B \(expected 1, bound 2\)"):
        layout.check_bound({"A": 0, "B": 2, "N": 3})
    with pytest.raises(RuntimeError, match=r"N \(expected 3, bound nothing\)"):
        layout.check_bound({"A": 0, "B": 1})
    with pytest.raises(RuntimeError, match="A"):
        layout.check_bound({"A": 0.0, "B": 1, "N": 3})
    with pytest.raises(KeyError, match="no field 'C'"):
        layout["C"]


def test_long_texts_wrap_onto_continuation_rows():
    layout = Layout("demo", ("column", "meaning"), [("A", 1, "one two three four five six"), ("B", 1, "short")],
                    total="N")
    assert layout.table(max_width=42).split("\n") == [
        "| offset | column | meaning              |",
        "|--------|--------|----------------------|",
        "| 0      | A      | one two three four   |",
        "|        |        | five six             |",
        "| 1      | B      | short                |",
    ]
    with pytest.raises(ValueError, match="does not fit in 30 characters"):
        layout.table(max_width=30)


def test_tables_missing_from_names_the_absent_tables():
    a = Layout("a", ("column",), [("A", 1)], total="N")
    b = Layout("b", ("column",), [("B", 2)], total="N")
    doc = "Intro.\n\n" + a.table() + "\n\nEnd."
    assert tables_missing_from(doc, a) == []
    assert tables_missing_from(doc, a, b) == ["b"]
    assert tables_missing_from(None, a) == ["a"]
