"""``experiments/checks/check_openspiel_tarok.py``: the tarok oracle and the batched engine (``--engine core``: tarok3,
tarok4) in lockstep with OpenSpiel's ``tarok`` on a few hundred deals of each player count, OpenSpiel's valat
readings on the engine, the mapping table against OpenSpiel's card names, a divergence found and reported,
and bad arguments refused in one line. Skipped where pyspiel (OpenSpiel's Python package) is not installed."""

from __future__ import annotations

import pytest

from experiments.checks import check_openspiel_tarok as lockstep
from tests.oracles.oracle_tarok import TarokOracle, strength

from .scripts import ok, run_script

pyspiel = pytest.importorskip("pyspiel", reason="OpenSpiel's pyspiel is not installed")


@pytest.mark.parametrize("variant", ["tarok3", "tarok4"])
def test_the_oracle_agrees_with_openspiel_on_300_deals(variant):
    done = ok(run_script("check_openspiel_tarok", "--variant", variant, "--deals", "300", "--seed", "5",
                         timeout=120))
    lines = done.stdout.strip().splitlines()
    assert lines[-1] == "300 deals, 0 divergences"
    assert lines[-2].startswith(f"{variant}: ") and "klop" in lines[-2] and "two" in lines[-2], lines[-2]


@pytest.mark.parametrize("variant", ["tarok3", "tarok4"])
def test_the_engine_agrees_with_openspiel_on_300_deals(variant):
    done = ok(run_script("check_openspiel_tarok", "--variant", variant, "--deals", "300", "--seed", "6",
                         "--engine", "core", timeout=300))
    lines = done.stdout.strip().splitlines()
    assert lines[-1] == "300 deals, 0 divergences"
    assert lines[-2].startswith(f"{variant}: ") and "klop" in lines[-2] and "two" in lines[-2], lines[-2]


def test_the_mapping_table_is_openspiels():
    lockstep.check_card_names(pyspiel.load_game("tarok(players=4,rng_seed=1)"))
    assert len(set(lockstep.CARD_NAMES)) == 54
    assert lockstep.CARD_NAMES[0] == "T1" and lockstep.CARD_NAMES[20] == "T21" and lockstep.CARD_NAMES[21] == "T22"
    assert [lockstep.CARD_NAMES[a] for a in (29, 37, 45, 53)] == ["KH", "KD", "KS", "KC"]


def test_a_dealt_state_reads_back_as_the_deck():
    game = pyspiel.load_game("tarok(players=3,rng_seed=7)")
    state = game.new_initial_state()
    state.apply_action(0)
    deck = lockstep.dealt_deck(state, 3)
    assert len(set(deck)) == 54
    assert deck[48:] == [lockstep.CARD_NAMES[c] for c in state.talon()]
    oracle = TarokOracle(3, deck)
    assert oracle.hands[1] == [lockstep.CARD_NAMES[c] for c in state.player_cards(1)]


class _WrongReturns(TarokOracle):
    def returns(self):
        return [r + 1 for r in super().returns()]


class _NoPass(TarokOracle):
    def legal_actions(self):
        return super().legal_actions() - {"bid:pass"}


@pytest.mark.parametrize(("engine", "where"), [(_WrongReturns, "returns: OpenSpiel"), (_NoPass, "step 0 (BIDDING)")])
def test_a_divergence_is_reported_with_its_deal_and_step(engine, where):
    lines: list[str] = []
    code = lockstep.run("tarok4", 5, 3, lambda variant, deck: engine(4, deck), out=lines.append)
    assert code == 1
    assert lines[0].startswith("divergence in deal 0 of tarok4 (rng_seed 3)") and where in lines[0], lines
    assert lines[1].startswith("  deck (hands of seats 0..3, then the talon): ") and len(lines[1].split()) == 54 + 8
    assert lines[2].startswith("  actions before it: ")


@pytest.mark.parametrize("args", [
    ["--variant", "tarok5", "--deals", "3", "--seed", "1"],
    ["--variant", "tarok3", "--deals", "0", "--seed", "1"],
    ["--variant", "tarok3", "--deals", "3", "--seed", "-1"],
    ["--variant", "tarok3", "--deals", "three", "--seed", "1"],
    ["--variant", "tarok3", "--deals", "3"],
    ["--variant", "tarok3", "--deals", "3", "--seed", "1", "--engine", "numba"],
])
def test_bad_arguments_are_one_line_and_exit_2(args):
    done = run_script("check_openspiel_tarok", *args, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and done.stderr.startswith("check_openspiel_tarok: ")


def _power(card: str) -> int:
    return (100 if card.startswith("T") else 0) + strength(card)


def _greedy_deal(players: int, seed: int, deal: int, opening: list[str]) -> tuple[list[float], TarokOracle]:
    """Deal ``deal`` of ``tarok(players, rng_seed=seed)`` played on OpenSpiel and the oracle: the ``opening``
    actions, then the first legal action (sorted) outside play, and in play the declarer's side its strongest
    card, the others their weakest. OpenSpiel's returns and the finished oracle."""
    game = pyspiel.load_game(f"tarok(players={players},rng_seed={seed})")
    for _ in range(deal):
        game.new_initial_state().apply_action(0)
    state = game.new_initial_state()
    state.apply_action(0)
    oracle = TarokOracle(players, lockstep.dealt_deck(state, players))
    actions = iter(opening)
    while not oracle.is_terminal():
        legal = sorted(oracle.legal_actions())
        text = next(actions, None)
        if text is None and oracle.phase == "play":
            cards = [a.removeprefix("play:") for a in legal]
            pick = max if oracle.current_player() in oracle.team() else min
            text = "play:" + pick(cards, key=_power)
        text = text or legal[0]
        [action] = [a for a in state.legal_actions() if lockstep.openspiel_action_string(state, a) == text]
        oracle.apply(text)
        state.apply_action(action)
    assert state.is_terminal()
    return state.returns(), oracle


def test_openspiel_valat_is_a_pile_of_48_cards():
    """OpenSpiel's silent valat counts the cards of the declarer's piles, discards included: in tarok3's "three"
    (3 discards) 15 tricks of 16 make 48 cards and score 250, all 16 make 51 and score the difference; in tarok4 the
    team's piles never hold exactly 48 cards."""
    three = ["bid:pass", "bid:pass", "bid:three", "talon:0"]
    returns, oracle = _greedy_deal(3, 99, 479, three)
    assert sum(t["winner"] == 0 for t in oracle.tricks) == 15 and oracle.score_parts()["valat"] == 1
    assert returns == [230, 0, 0] == oracle.returns()  # 250, and the Mond penalty of the declarer
    returns, oracle = _greedy_deal(3, 99, 2107, three)
    assert all(t["winner"] == 0 for t in oracle.tricks) and oracle.score_parts()["valat"] == 0
    assert returns == [39, 0, 0] == oracle.returns()
    returns, oracle = _greedy_deal(4, 99, 1232, ["bid:pass", "bid:pass", "bid:pass", "bid:solo_one", "talon:0"])
    assert all(t["winner"] == 0 for t in oracle.tricks) and len(oracle.tricks) == 12
    assert returns == [93, 0, 0, 0] == oracle.returns()  # 68 points: 68 - 35 + 60, no valat


@pytest.mark.parametrize(("players", "deal", "opening", "expected"), [
    (3, 479, ["bid:pass", "bid:pass", "bid:three", "talon:0"], [230, 0, 0]),
    (3, 2107, ["bid:pass", "bid:pass", "bid:three", "talon:0"], [39, 0, 0]),
    (4, 1232, ["bid:pass", "bid:pass", "bid:pass", "bid:solo_one", "talon:0"], [93, 0, 0, 0]),
])
def test_openspiels_valat_readings_on_the_engine(players, deal, opening, expected):
    """The three deals above, replayed on the batched engine with the oracle's actions: the same returns and
    OpenSpiel's valat reading in the outcome."""
    _, oracle = _greedy_deal(players, 99, deal, opening)
    deck = [c for hand in oracle.initial_hands for c in hand] + oracle.initial_talon
    engine = lockstep.core_engine(f"tarok{players}", deck)
    for _, action in oracle.history:
        engine.apply(action)
    assert engine.is_terminal() and engine.returns() == expected
    valat = engine.state.outcome()["bonuses"]
    assert ({"name": "valat", "side": 0, "points": 250} in valat) == (expected[0] == 230)
