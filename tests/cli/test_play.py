"""``tarocchi-rl play`` against bots: agent specs at the seats, variant options, forced moves, hint / help / quit,
end of input, and what the bots are shown. A scripted human stands in for the terminal."""

import json
import subprocess
import sys

import numpy as np
import pytest

from tarocchi_rl.cli import main
from tarocchi_rl.play import make_seat_agents, parse_options, parse_seats, play_game
from tarocchi_rl.policies import HeuristicAgent
from tarocchi_rl.records import replay
from tarocchi_rl.variants import VARIANTS, get_variant

SUBPROCESS_TIMEOUT = 300  # s: a bound against a hang; a first run in a fresh clone compiles the Numba kernels
# (over 60 s seen on 2 busy cores)


class Human:
    """Answers every prompt from ``script`` (then always the first legal move), remembering the prompts."""

    def __init__(self, *script):
        self.script = list(script)
        self.prompts = 0

    def __call__(self, prompt):
        self.prompts += 1
        return self.script.pop(0) if self.script else "0"


def _legal_names(line):
    """The action names of a ``legal: [0] a  [1] b`` line."""
    return [part.split("] ", 1)[1] for part in line[len("legal: "):].split("  ")]


def _seat_decisions(record, seat):
    """How many legal moves ``seat`` had at each of its decisions in the record."""
    from tarocchi_rl.game import make

    state = make(record["variant"], **record["options"]).state_from_deal(**record["deal"])
    counts = []
    for text in record["actions"]:
        if state.current_player() == seat:
            counts.append(len(state.legal_actions()))
        state.apply(text)
    return counts


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_whole_deal_with_bots_at_every_other_seat(variant):
    n = get_variant(variant).n_players
    bots = ["heuristic", "ismcts:iterations=4,seed=3", "random"][: n - 1]
    seats = parse_seats(",".join(["human", *bots]), n)
    assert seats == ["human", *bots]  # ismcts:iterations=4,seed=3 stays one seat
    out, human = [], Human()
    rec = play_game(variant, seats, seed=13, inp=human, out=out.append)  # a deal played out in every variant
    text = "\n".join(out)
    assert "=== deal over ===" in text and "result" in rec
    assert replay(rec).returns() == rec["result"]["payoffs"]
    # the human is asked exactly at his decisions with a choice; the others play themselves, said so
    counts = _seat_decisions(rec, 0)
    assert human.prompts == sum(c > 1 for c in counts)
    forced = sum(c == 1 for c in counts)
    assert text.count("(only legal move)") == forced
    # at least the last card, where the deal is played out (tarok's beggar and valat deals may end before it)
    assert forced >= 1 or replay(rec).hand(0)
    assert all(len(_legal_names(line)) > 1 for line in out if line.startswith("legal: "))
    for bot in bots:
        assert f"({bot}): " in text


def test_heuristic_seats_and_options_on_the_command_line(tmp_path):
    path = tmp_path / "g.json"
    r = subprocess.run([sys.executable, "-m", "tarocchi_rl.cli", "play", "--variant", "piedmont4", "--seats",
                        "human,heuristic,heuristic,heuristic", "--option", "accuso=true", "--option",
                        "accuso_points=3", "--seed", "5", "--record", str(path)],
                       input="0\n" * 40, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT)
    assert r.returncode == 0, r.stderr
    assert "=== deal over ===" in r.stdout and "record saved" in r.stdout
    rec = json.loads(path.read_text())
    assert rec["options"]["accuso"] is True and rec["options"]["accuso_points"] == 3
    assert replay(rec).returns() == rec["result"]["payoffs"]


def test_parse_options_reads_json_else_strings():
    assert parse_options(["a=true", "b=5", "c=mondo", "d=\"x y\"", "e=0.5"]) == {
        "a": True, "b": 5, "c": "mondo", "d": "x y", "e": 0.5}
    assert parse_options(None) == {}
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_options(["early_solo"])


@pytest.mark.parametrize("args, message", [
    (["--option", "early_solo=maybe"], "early_solo"),
    (["--option", "bogus=1"], "unknown option 'bogus'"),
    (["--option", "early_solo"], "expected KEY=VALUE"),
    (["--seats", "human,alphazero,random,random"], "seat 1: unknown seat kind 'alphazero'"),
    (["--seats", "human,ismcts:iterations=0,random,random"], "seat 1: bad agent spec 'ismcts:iterations=0'"),
    (["--seats", "human,ismcts:iterations=5,seed=3,random"], "needs 4"),
    (["--seats", "human,foo:bar,random,random"], "unknown seat kind 'foo:bar'"),
    (["--hint", "alphazero"], "--hint: unknown agent spec 'alphazero'"),
])
def test_bad_specs_and_options_are_one_line_and_exit_2(args, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["play", *args]) == 2
    cap = capsys.readouterr()
    assert cap.out == ""
    assert cap.err.startswith("error: ") and cap.err.count("\n") == 1 and message in cap.err
    assert not (tmp_path / "game.json").exists()


def test_option_accepted_in_process():
    out = []
    rec = play_game("mineo", ["random"] * 4, seed=2, out=out.append, options={"early_solo": False})
    assert rec["options"] == {"early_solo": False} and "'early_solo': False" in out[0]
    with pytest.raises(ValueError, match="early_solo"):
        play_game("mineo", ["random"] * 4, seed=2, out=out.append, options={"early_solo": "maybe"})


def test_hint_names_a_legal_move_and_changes_nothing():
    seats = ["human", "heuristic", "random", "heuristic"]
    plain = play_game("mineo", seats, seed=7, inp=Human(), out=lambda s: None)
    out, human = [], Human("hint", "hint", "?", "help", "0", "hint")
    hinted = play_game("mineo", seats, seed=7, inp=human, out=out.append, hint="ismcts:iterations=4")
    assert hinted == plain  # same deal, same bots, same moves: asking changed nothing
    hints = [k for k, line in enumerate(out) if line.startswith("hint (ismcts:iterations=4): ")]
    assert len(hints) == 3
    for k in hints:  # the move named is one of the legal moves listed just before
        legal = [line for line in out[:k] if line.startswith("legal: ")][-1]
        assert out[k].split(": ", 1)[1] in _legal_names(legal)
    # nothing was played between the two hints and the help of the first decision
    first = out.index(next(line for line in out if line.startswith("hint (")))
    assert not any(line.startswith("seat ") for line in out[first:first + 4])
    assert sum(line.startswith("commands: ") and "hint" in line and "quit" in line for line in out) == 2


class ProbabilityBot(HeuristicAgent):
    """The heuristic with made-up probabilities (as ppo: agents have): the first legal move is the likeliest."""

    name = "probbot"

    def probabilities(self, obs, mask, env):
        assert obs is not None and mask is not None
        p = np.where(mask, 1.0, 0.0)
        first = mask[0].argmax()
        p[0, first] = 10.0
        return p / p.sum(axis=1, keepdims=True)


def test_hint_shows_the_top_probabilities_when_the_bot_has_them():
    out = []
    play_game("french3", ["human", "random", "random"], seed=3, inp=Human("hint", "quit"), out=out.append,
              hint=ProbabilityBot())
    k = next(k for k, line in enumerate(out) if line.startswith("hint (probbot): "))
    legal = _legal_names([line for line in out[:k] if line.startswith("legal: ")][-1])
    assert out[k + 1].startswith(f"  probabilities: {legal[0]} ")
    shown = [item.rsplit(" ", 1) for item in out[k + 1].split(": ", 1)[1].split(", ")]
    assert len(shown) == min(5, len(legal)) and all(name in legal for name, _ in shown)
    assert [float(p) for _, p in shown] == sorted((float(p) for _, p in shown), reverse=True)


def test_quit_and_ctrl_c_end_the_deal_saving_nothing(tmp_path):
    path = tmp_path / "g.json"
    out = []
    rec = play_game("mineo", ["human", "heuristic", "heuristic", "heuristic"], seed=1, record_path=path,
                    inp=Human("0", "quit"), out=out.append)
    assert "result" not in rec and not path.exists()
    assert out[-1].startswith("game abandoned (quit)") and "no record saved" in out[-1]

    def interrupt(prompt):
        raise KeyboardInterrupt

    out.clear()
    rec = play_game("mineo", ["human", "random", "random", "random"], seed=1, record_path=path, inp=interrupt,
                    out=out.append)
    assert "result" not in rec and not path.exists() and out[-1].startswith("game abandoned (interrupted)")


def test_end_of_input_mid_game_exits_0_without_a_traceback(tmp_path):
    r = subprocess.run([sys.executable, "-m", "tarocchi_rl.cli", "play", "--seats", "human,heuristic,random,heuristic",
                        "--seed", "4"], input="0\nhint\n0\n", capture_output=True, text=True,
                       timeout=SUBPROCESS_TIMEOUT, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout
    assert "game abandoned (input closed)" in r.stdout and "hint (heuristic): " in r.stdout
    assert not (tmp_path / "game.json").exists()


class Spy:
    """An agent that checks it is shown only its own seat's view, then plays the first legal move."""

    legal_by_construction = False

    def __init__(self, seat, needs_obs=True):
        self.seat, self.needs_obs, self.needs_mask = seat, needs_obs, True
        self.calls = 0

    def act(self, obs, mask, env, idx):
        self.calls += 1
        assert list(idx) == [0] and env.batch_size == 1 and env.current_player()[0] == self.seat
        assert np.array_equal(mask, env.legal_mask())
        if self.needs_obs:
            assert np.array_equal(obs, env.observe(np.array([self.seat])))
        else:
            assert obs is None
        return mask.argmax(axis=1)


def test_bots_are_driven_as_in_the_arena_with_their_own_view():
    spies = [Spy(1), Spy(2, needs_obs=False), Spy(3)]
    rec = play_game("french4", ["human", *spies], seed=9, inp=Human(), out=lambda s: None)
    assert "result" in rec
    for spy in spies:
        assert spy.calls == len(_seat_decisions(rec, spy.seat))


def test_an_illegal_bot_move_is_an_error_naming_it():
    class Cheat(Spy):
        def act(self, obs, mask, env, idx):
            return (~mask).argmax(axis=1)

    with pytest.raises(ValueError, match=r"illegal action \d+ .* for seat 1 \(Cheat\)"):
        play_game("mineo", ["random", Cheat(1), "random", "random"], seed=1, out=lambda s: None)


def test_make_seat_agents_builds_every_kind():
    agents = make_seat_agents(parse_seats("human,heuristic,ismcts:iterations=3,c=0.5,RANDOM", 4), seed=1)
    assert agents[0] is None
    assert [type(a).__name__ for a in agents[1:]] == ["HeuristicAgent", "ISMCTSAgent", "RandomAgent"]
    assert agents[2].iterations == 3 and agents[2].c == 0.5


def test_the_piedmontese_stock_is_not_shown_to_anyone():
    """Regression: STOCK_SHOWN is -1 in the Piedmontese games (never shown), which must not read as shown: the
    dealer's stock, taken face down, appeared in every seat's description."""
    from tarocchi_rl.core.state import STOCK
    from tarocchi_rl.game import make
    from tarocchi_rl.play import describe

    for variant in ("piedmont3", "piedmont4"):
        state = make(variant).new_state(5)
        stock = state.game.deck.cards_of(state._env.state.cards[0, STOCK])
        names = [state.game.deck.names[c] for c in stock]
        for viewer in range(state.game.num_players):
            text = describe(state, viewer)
            assert "stock (shown)" not in text
            if viewer != state.current_player():  # the dealer holds the stock in his hand
                hand_line = [line for line in text.splitlines() if "your hand" in line]
                assert not any(n in " ".join(hand_line).split() for n in names)
