"""records.load / replay: whatever the input, a record (a State) or a RecordError, quickly, writing nothing."""

import copy
import json
import os

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tarocchi_rl
from tarocchi_rl.records import RecordError, load, replay
from tests.support.reliability import JSON, in_empty_dir


def _finished(variant, seed, **options):
    state = tarocchi_rl.make(variant, **options).new_state(seed)
    rng = np.random.default_rng(seed)
    while not state.is_terminal():
        state.apply(int(rng.choice(state.legal_actions())))
    return state.to_record()


RECORDS = [_finished("mineo", 3), _finished("piedmont4", 4, accuso=True), _finished("french3", 5)]


def _paths(obj, prefix=()):
    """Every path (tuple of keys / indices) into a JSON value."""
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for k, v in enumerate(obj):
            yield from _paths(v, (*prefix, k))


PATHS = [list(_paths(r))[1:] for r in RECORDS]


@st.composite
def mutated_records(draw):
    """A valid record with one value (anywhere in it) replaced by an arbitrary JSON value, or deleted."""
    k = draw(st.integers(0, len(RECORDS) - 1))
    rec = copy.deepcopy(RECORDS[k])
    path = draw(st.sampled_from(PATHS[k]))
    node = rec
    for key in path[:-1]:
        node = node[key]
    if draw(st.booleans()) and isinstance(node, dict):
        del node[path[-1]]
    else:
        node[path[-1]] = draw(JSON)
    return rec


def _replay_or_record_error(rec):
    try:
        state = replay(rec)
    except RecordError:
        return None
    assert state.is_terminal()
    return state


@given(mutated_records())
def test_replay_of_a_damaged_record(rec):
    with in_empty_dir():
        _replay_or_record_error(rec)


@given(JSON)
def test_replay_of_any_json_value(value):
    with in_empty_dir():
        with pytest.raises(RecordError):
            replay(value)


@given(st.dictionaries(st.sampled_from(["format", "variant", "options", "deal", "actions", "result"]), JSON))
def test_replay_of_any_object_with_the_record_keys(rec):
    rec.setdefault("format", "tarocchi-record/1")
    with in_empty_dir():
        with pytest.raises(RecordError):
            replay(rec)


@given(st.text(max_size=200))
def test_load_of_any_json_text(text):
    with in_empty_dir():
        try:
            rec = load("{" + text)
        except RecordError:
            return
        assert isinstance(rec, dict)
        _replay_or_record_error(rec)


@given(st.binary(max_size=300) | st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_load_of_any_file(content):
    with in_empty_dir():
        with open("r.json", "wb") as f:
            f.write(content)
        try:
            rec = load("r.json")
        except RecordError:
            rec = None
        os.remove("r.json")
        if rec is not None:
            assert isinstance(rec, dict)
            _replay_or_record_error(rec)


@given(st.integers() | st.floats() | st.none() | st.binary() | st.lists(st.integers(), max_size=3)
       | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
def test_load_refuses_what_is_neither_a_path_nor_text(value):
    with in_empty_dir():
        with pytest.raises(RecordError, match="file path or JSON text"):
            load(value)


def test_load_of_2_is_not_a_file_descriptor():
    os.fstat(2)
    with pytest.raises(RecordError, match="got int"):
        load(2)
    os.fstat(2)  # stderr is still open


@pytest.mark.parametrize("opening,closing", [('{"a":', "}"), ('{"a":[', "]}")])
def test_a_record_nested_100000_deep(tmp_path, opening, closing):
    f = tmp_path / "deep.json"
    f.write_text(opening * 100_000 + "1" + closing * 100_000)
    with pytest.raises(RecordError, match="nested too deeply"):
        load(str(f))
    with pytest.raises(RecordError, match="nested too deeply"):
        load(f.read_text())


def test_the_observed_record_bugs():
    rec = copy.deepcopy(RECORDS[0])
    with pytest.raises(RecordError, match=r"variant must be a string, got \[\]"):
        replay({**rec, "variant": []})
    with pytest.raises(RecordError, match="result.payoffs must be a list of integers.*got 5"):
        replay({**rec, "result": {"payoffs": 5}})
    with pytest.raises(RecordError, match="result must be an object"):
        replay({**rec, "result": [1, 2]})
    with pytest.raises(RecordError, match="result.payoffs must be a list of integers"):
        replay({**rec, "result": {"payoffs": [True, False, 0, 0]}})
    with pytest.raises(RecordError, match="a record must be a JSON object, got list"):
        replay([rec])
    assert replay(json.loads(json.dumps(rec))).returns() == rec["result"]["payoffs"]


def test_an_accuso_points_record_that_would_overflow_is_refused():
    rec = copy.deepcopy(RECORDS[1])
    for points in (2**31, 2**40 + 7, -1):
        rec["options"]["accuso_points"] = points
        with pytest.raises(RecordError, match=r"accuso_points.*must be in \[0, 10000\]"):
            replay(rec)
