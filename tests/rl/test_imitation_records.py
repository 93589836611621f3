"""Learning from people: ``imitation.records`` (the warm start on recorded games, people's seats by default) and
``eval --deals-file`` on records of the kind ``tarocchi-rl games export`` writes (with their ``stored`` block).

The records are made here: deals of the Game API where seat 0, the "person", always takes the lowest legal action
and the bots the highest, written as ``tarocchi-record/1`` lines with a ``stored`` block that says so.
"""

import json
import re

import numpy as np
import pytest
import torch

from tarocchi_rl import make
from tarocchi_rl.cli import main
from tarocchi_rl.rl.checkpoint import load_checkpoint
from tarocchi_rl.rl.config import ConfigError, load_config
from tarocchi_rl.rl.imitation import imitate
from tarocchi_rl.rl.network import build_network
from tarocchi_rl.rl.record_imitation import check_records, record_chunks
from tests.support.checkpoints import TINY_RUN_MINEO, train_tiny

PERSON = 0  # the person's seat in every record made here


def _play(seed: int, variant: str = "mineo") -> tuple[dict, list[tuple[int, int]]]:
    """A finished deal (seat 0 lowest legal action, the others the highest) as a record with a ``stored`` block,
    and its (seat, action) decisions."""
    state = make(variant).new_state(seed=seed)
    decisions = []
    while not state.is_terminal():
        seat, legal = state.current_player(), state.legal_actions()
        action = legal[0] if seat == PERSON else legal[-1]
        decisions.append((seat, action))
        state.apply(action)
    record = state.to_record()
    seats = [{"kind": "person", "name": "p-7f3a"} if s == PERSON else {"kind": "bot", "name": "heuristic"}
             for s in range(state.game.num_players)]
    record["stored"] = {"id": seed + 1, "created": "2025-01-02T10:00:00Z", "finished": "2025-01-02T10:03:00Z",
                        "seats": seats}
    return record, decisions


def _write(path, records: list[dict]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


@pytest.fixture(scope="module")
def games(tmp_path_factory):
    """(path of a JSON-lines file of 6 exported-style records, the records, their decisions)."""
    played = [_play(seed) for seed in range(6)]
    path = _write(tmp_path_factory.mktemp("games") / "games.jsonl", [r for r, _ in played])
    return path, [r for r, _ in played], [d for _, d in played]


def _cfg(*sets: str):
    return load_config(None, [*TINY_RUN_MINEO, *sets])


def _samples(cfg) -> dict:
    chunks = list(record_chunks(cfg))
    return {k: np.concatenate([c[k] for c in chunks]) for k in chunks[0]}


def test_people_seats_by_default_each_as_the_seat_saw_it(games, tmp_path):
    path, records, decisions = games
    cfg = _cfg(f"imitation.records={path}", "imitation.decisions=100000")
    assert cfg.imitation.records == [path] and cfg.imitation.record_seats == "people"
    s = _samples(cfg)
    person = [(k, seat, a) for k, d in enumerate(decisions) for seat, a in d if seat == PERSON]
    assert len(s["action"]) == len(person) and (s["action"] == [a for _, _, a in person]).all()
    # the observation of the person's first decision is the seat's own view, rebuilt from the deal
    state = make("mineo").state_from_deal(**records[0]["deal"])
    for seat, action in decisions[0]:
        if seat == PERSON:
            break
        state.apply(action)
    assert np.array_equal(s["obs"][0], state.observation(PERSON)) and np.array_equal(s["mask"][0], state.legal_mask())
    assert s["mask"][np.arange(len(s["action"])), s["action"]].all()  # every action legal where it was taken
    payoff = records[0]["result"]["payoffs"][PERSON]
    assert s["ret"][0] == pytest.approx(payoff / cfg.payoff_scale)
    hidden = next(record_chunks(cfg, privileged=True))["hidden"]  # critic: perfect's input, beside the view
    assert len(hidden) == len(s["action"]) and np.array_equal(hidden[0], state.privileged_observation(PERSON))
    assert check_records(cfg) == {"files": [path], "records": 6, "decisions": len(person)}

    every = sum(len(d) for d in decisions)
    assert len(_samples(_cfg(f"imitation.records={path}", "imitation.decisions=100000",
                             "imitation.record_seats=all"))["action"]) == every
    bare = _write(tmp_path / "bare.jsonl", [{k: v for k, v in r.items() if k != "stored"} for r in records])
    assert len(_samples(_cfg(f"imitation.records=[{bare}, {path}]", "imitation.decisions=100000"))["action"]) \
        == every + len(person)  # a record without stored: every seat
    assert len(_samples(_cfg(f"imitation.records={path}", "imitation.decisions=10"))["action"]) == 10  # the cap


@pytest.fixture
def one_thread():
    """One torch thread, as the trainer's learner has (torch_threads: 1): many threads on a busy machine crawl."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _mean_log_prob(net, s: dict) -> float:
    with torch.no_grad():
        logits, _ = net(torch.from_numpy(s["obs"]), torch.from_numpy(s["mask"]))
        logp = torch.log_softmax(logits, dim=1)
        return float(logp[torch.arange(len(s["action"])), torch.from_numpy(s["action"])].mean())


def test_the_warm_start_learns_the_people_not_the_bots(games, one_thread):
    path, _, _ = games
    cfg = _cfg(f"imitation.records={path}", "imitation.decisions=100000", "imitation.epochs=20",
               "imitation.minibatch_size=32")
    people = _samples(cfg)
    bots = _samples(_cfg(f"imitation.records={path}", "imitation.decisions=100000", "imitation.record_seats=all"))
    bots = {k: v[bots["action"] != bots["mask"].argmax(axis=1)] for k, v in bots.items()}  # bots' non-lowest picks
    torch.manual_seed(0)
    net = build_network(cfg, people["obs"].shape[1], people["mask"].shape[1])
    before_people, before_bots = _mean_log_prob(net, people), _mean_log_prob(net, bots)
    stats = imitate(net, cfg, record_chunks(cfg), torch.Generator().manual_seed(0))
    assert stats["decisions"] == len(people["action"]) and stats["accuracy"] > 0.8, stats
    assert _mean_log_prob(net, people) > before_people + 0.5
    assert _mean_log_prob(net, bots) < before_bots  # the bots' highest-legal choices were not imitated


@pytest.mark.parametrize("critic", ["seat", "perfect"])
def test_training_on_records_and_the_checkpoint_says_so(games, tmp_path, critic):
    path, _, _ = games
    r = train_tiny(tmp_path / "run", f"imitation.records={path}", "imitation.decisions=100000", "max_updates=1",
                   "imitation.epochs=5", f"critic={critic}")
    st = r["imitation"]
    assert st["records"] == [path] and st["record_seats"] == "people" and st["records_read"] == 6
    assert "teacher" not in st and st["decisions"] > 0
    assert (st.get("critic_value_loss", 0) > 0) == (critic == "perfect")  # the critic fitted beside the policy
    final = load_checkpoint(tmp_path / "run/checkpoints/final.pt")  # the safe loader: plain values only
    assert final["config"]["imitation"]["records"] == [path] and final["imitated"]
    assert final["imitation"]["records"] == [path]


def _train_cli(tmp_path, records: str, *sets: str) -> int:
    out = tmp_path / "run"
    args = ["train", "--out", str(out), "--no-progress"]
    for s in [*TINY_RUN_MINEO, "max_updates=1", f"imitation.records={records}", "imitation.decisions=1000", *sets]:
        args += ["--set", s]
    code = main(args)
    assert not out.exists()  # refused before anything is written
    return code


@pytest.mark.parametrize("case, expected", [
    ("not json", r"bad.jsonl: line 2: not valid JSON"),
    ("illegal", r"bad.jsonl: line 2: action 0 \(\S+\) is illegal for seat"),
    ("variant", r"bad.jsonl: line 2: a record of variant 'french3', the run trains mineo"),
    ("options", r"bad.jsonl: line 2: options .* differ from the run's"),
    ("stored", r"bad.jsonl: line 2: stored.seats\[1\].kind must be one of person, bot"),
    ("payoffs", r"bad.jsonl: line 2: result.payoffs .* disagree with the engine"),
    ("missing", r"cannot read .*bad.jsonl"),
])
def test_a_bad_records_file_is_one_line_naming_file_and_line(games, tmp_path, capsys, case, expected):
    _, records, _ = games
    good = json.dumps(records[1])
    bad = dict(records[2])
    if case == "illegal":
        bad["actions"] = [f"play:{bad['deal']['hands'][0][0]}", *bad["actions"][1:]]  # a card in the auction
    elif case == "variant":
        bad = _play(0, "french3")[0]
    elif case == "options":
        bad["options"] = {"early_solo": False}
    elif case == "stored":
        bad["stored"] = {**bad["stored"], "seats": [{"kind": "person"}, {"kind": "alien"}, {}, {}]}
    elif case == "payoffs":
        bad["result"] = {"payoffs": [9, 9, 9, 9]}
    path = tmp_path / "bad.jsonl"
    if case != "missing":
        path.write_text(good + "\n" + ("{not json" if case == "not json" else json.dumps(bad)) + "\n")
    assert _train_cli(tmp_path, str(path)) == 2
    err = capsys.readouterr().err
    last = err.splitlines()[-1]  # after "training mineo in DIR"
    assert last.startswith("error: imitation.records: ") and err.count("error") == 1 and "Traceback" not in err, err
    assert re.search(expected, last), err


def test_records_need_a_decision_cap_and_a_known_seat_choice(games, tmp_path, capsys):
    path, records, _ = games
    with pytest.raises(ConfigError, match="imitation.records: needs imitation.decisions > 0"):
        _cfg(f"imitation.records={path}")
    with pytest.raises(ConfigError, match="imitation.record_seats: must be one of people, all"):
        _cfg(f"imitation.records={path}", "imitation.decisions=10", "imitation.record_seats=bots")
    only_bots = [{**r, "stored": {**r["stored"], "seats": [{"kind": "bot", "name": "b"}] * 4}} for r in records]
    assert _train_cli(tmp_path, _write(tmp_path / "bots.jsonl", only_bots)) == 2
    assert "no decisions of people in" in capsys.readouterr().err


def test_eval_deals_file_takes_exported_records(games, capsys):
    path, _, _ = games
    assert main(["eval", "--variant", "mineo", "--agents", "random,heuristic", "--deals-file", path, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["deals"] == 6, result


def test_the_model_card_says_whose_games_were_imitated():
    from tarocchi_rl.rl.model_card import start_phrase

    cfg = _cfg("imitation.records=games.jsonl", "imitation.decisions=5000").to_dict()
    assert start_phrase({"imitation_warm_start": True}, cfg) == (
        "a warm start imitating people's decisions in the recorded games of `games.jsonl` on at most 5,000 "
        "decisions, then ")
