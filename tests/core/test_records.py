"""Game records: round trips through to_record -> replay, and every kind of malformed record rejected with
an error that names the field or the action index."""

import copy
import json
import subprocess
import sys

import numpy as np
import pytest

import tarocchi_rl
from tarocchi_rl.records import FORMAT, RecordError, load, replay
from tarocchi_rl.variants import mineo
from tests.support.engine import JIT_DISABLED


def random_game(seed, **options):
    state = tarocchi_rl.make("mineo", **options).new_state(seed)
    rng = np.random.default_rng(seed)
    while not state.is_terminal():
        state.apply(int(rng.choice(state.legal_actions())))
    return state


@pytest.fixture(scope="module")
def record():
    return random_game(5).to_record()


@pytest.mark.nojit
def test_round_trip_gives_the_same_payoffs():
    for seed in range(5 if JIT_DISABLED else 200):
        state = random_game(seed, early_solo=seed % 3 != 0)
        rec = json.loads(json.dumps(state.to_record()))
        assert rec["format"] == FORMAT
        again = replay(rec)
        assert again.returns() == state.returns() == rec["result"]["payoffs"]
        assert again.history == state.history
        assert again.outcome() == state.outcome()


@pytest.mark.nojit
@pytest.mark.parametrize(
    "variant,options",
    # a pick: the 78-card variants, the Piedmontese with a non-default option (Mineo: the test above; every
    # variant at its defaults and with non-default options: tests/core/test_variant_contract.py)
    [("piedmont3", {"honour_5": "angelo"}), ("piedmont4", {"accuso": True}), ("french3", {}), ("french4", {})],
)
def test_round_trip_every_variant(variant, options, tmp_path):
    for seed in range(3 if JIT_DISABLED else 40):
        state = tarocchi_rl.make(variant, **options).new_state(seed)
        rng = np.random.default_rng(seed)
        while not state.is_terminal():
            state.apply(int(rng.choice(state.legal_actions())))
        rec = json.loads(json.dumps(state.to_record()))
        assert rec["variant"] == variant and rec["options"] == state.game.options
        again = replay(rec)
        assert again.returns() == state.returns() == rec["result"]["payoffs"]
        assert again.outcome() == state.outcome()
    f = tmp_path / "game.json"
    f.write_text(json.dumps(rec))
    r = _cli("replay", str(f))
    assert r.returncode == 0, r.stderr
    assert f"payoffs: {rec['result']['payoffs']}" in r.stdout


def test_record_fields(record):
    assert record["variant"] == "mineo"
    assert record["options"] == {"early_solo": True}
    assert [len(h) for h in record["deal"]["hands"]] == [15, 15, 15, 15]
    assert len(record["deal"]["stock"]) == 3
    assert record["actions"][0] in ("bid:pass", "bid:solo")


def _broken(record, path, value):
    rec = copy.deepcopy(record)
    obj = rec
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value
    return rec


def test_wrong_format_variant_option(record):
    with pytest.raises(RecordError, match="format"):
        replay(_broken(record, ["format"], "tarocchi-record/0"))
    with pytest.raises(RecordError, match="unknown variant 'chess'"):
        replay(_broken(record, ["variant"], "chess"))
    with pytest.raises(RecordError, match="unknown option 'speed'"):
        replay(_broken(record, ["options"], {"speed": 1}))
    with pytest.raises(RecordError, match="early_solo.*true or false"):
        replay(_broken(record, ["options"], {"early_solo": "yes"}))
    rec = copy.deepcopy(record)
    del rec["actions"]
    with pytest.raises(RecordError, match="missing field 'actions'"):
        replay(rec)


def test_malformed_deal(record):
    hands = record["deal"]["hands"]
    with pytest.raises(RecordError, match=r"deal.hands\[1\] must hold 15 cards, got 14"):
        replay(_broken(record, ["deal", "hands", 1], hands[1][:14]))
    with pytest.raises(RecordError, match=r"deal.hands\[2\]\[3\]: unknown card 'ZZ'"):
        replay(_broken(record, ["deal", "hands", 2, 3], "ZZ"))
    with pytest.raises(RecordError, match=r"unknown card 'T21'"):  # no T21 in the Mineo deck
        replay(_broken(record, ["deal", "hands", 0, 0], "T21"))
    dup = hands[0][0]
    with pytest.raises(RecordError, match=rf"card {dup} is dealt twice"):
        replay(_broken(record, ["deal", "hands", 3, 0], dup))
    with pytest.raises(RecordError, match="deal.stock must hold 3 cards"):
        replay(_broken(record, ["deal", "stock"], record["deal"]["stock"][:2]))


def test_illegal_and_unknown_actions_name_their_index(record):
    # a card the player does not hold, at the first play
    k = next(i for i, a in enumerate(record["actions"]) if a.startswith("play:"))
    state = tarocchi_rl.records.replay({**record, "actions": record["actions"][:k]}, require_finished=False)
    held = state.hand(state.current_player())
    foreign = next(c for c in tarocchi_rl.make("mineo").deck.names if c not in held)
    with pytest.raises(RecordError, match=rf"action {k} \(play:{foreign}\) is illegal.*legal: ") as e:
        replay(_broken(record, ["actions", k], f"play:{foreign}"))
    assert e.value.action_index == k
    with pytest.raises(RecordError, match="action 0: unknown action 'bid:double'") as e:
        replay(_broken(record, ["actions", 0], "bid:double"))
    assert e.value.action_index == 0
    with pytest.raises(RecordError, match="action 1: must be a string"):
        replay(_broken(record, ["actions", 1], 7))
    with pytest.raises(RecordError, match="the deal is already over"):
        replay(_broken(record, ["actions"], record["actions"] + ["pass"]))
    with pytest.raises(RecordError, match="ends after 5 actions before the deal is over"):
        replay(_broken(record, ["actions"], record["actions"][:5]))


def test_result_that_disagrees(record):
    wrong = [p + (1 if i == 0 else -1 if i == 1 else 0) for i, p in enumerate(record["result"]["payoffs"])]
    with pytest.raises(RecordError, match="disagree with the engine"):
        replay(_broken(record, ["result", "payoffs"], wrong))


def test_load_errors(tmp_path):
    with pytest.raises(RecordError, match="cannot read record file"):
        load(str(tmp_path / "missing.json"))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(RecordError, match="not valid JSON"):
        load(str(bad))


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "tarocchi_rl.cli", *args], capture_output=True, text=True)


def test_cli_replay_prints_payoffs_points_jochi(record, tmp_path):
    f = tmp_path / "game.json"
    f.write_text(json.dumps(record))
    r = _cli("replay", str(f))
    assert r.returncode == 0, r.stderr
    assert f"payoffs: {record['result']['payoffs']}" in r.stdout
    assert "card points" in r.stdout and "jochi" in r.stdout
    r = _cli("replay", str(f), "--json")
    out = json.loads(r.stdout)
    assert out["payoffs"] == record["result"]["payoffs"]
    assert sum(out["card_point_units"]) == 327
    assert {b["name"] for b in out["bonuses"]} <= set(mineo.BONUS_NAMES)


def test_cli_replay_rejects_an_illegal_record_with_nonzero_exit(record, tmp_path):
    rec = _broken(record, ["actions", 0], "play:KC")
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(rec))
    r = _cli("replay", str(f))
    assert r.returncode != 0
    assert "action 0 (play:KC) is illegal" in r.stderr
