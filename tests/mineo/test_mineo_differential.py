"""Differential test: the Numba core against the independent oracle (tests/oracles/oracle_mineo.py).

Random deals are played with uniformly random legal actions; at every decision both must agree on the player
to act and the exact set of legal actions, and at the end on the payoffs, the card points and the jochi.
"""

import numpy as np
import pytest

import tarocchi_rl
from tests.oracles.oracle_mineo import MineoOracle
from tests.support.engine import JIT_DISABLED, oracle_name

N_FAST = 60 if JIT_DISABLED else 2000


def play_both(seed: int, early_solo: bool = True, policy_rng=None):
    game = tarocchi_rl.make("mineo", early_solo=early_solo)
    state = game.new_state(seed)
    deal = state.deal()
    oracle = MineoOracle(deal["hands"], deal["stock"], early_solo=early_solo)
    rng = policy_rng or np.random.default_rng(seed)
    steps = 0
    while not state.is_terminal():
        assert not oracle.is_terminal(), f"seed {seed}: oracle ended first"
        assert state.current_player() == oracle.current_player(), f"seed {seed} step {steps}: player"
        legal = state.legal_actions()
        mine = {oracle_name(state.action_to_string(a)) for a in legal}
        assert mine == oracle.legal_actions(), f"seed {seed} step {steps}: legal sets differ"
        a = int(rng.choice(legal))
        oracle.apply(oracle_name(state.action_to_string(a)))
        state.apply(a)
        steps += 1
    assert oracle.is_terminal(), f"seed {seed}: core ended first"
    assert state.returns() == oracle.returns(), f"seed {seed}: payoffs differ"
    out = state.outcome()
    if out["declarer"] is not None:
        assert tuple(out["card_point_units"]) == tuple(oracle.side_thirds()), f"seed {seed}: thirds"
        for side in range(2):
            theirs = {k: v for k, v in oracle.jochi()[side].items() if v}
            if "arie_giove" in theirs:
                theirs["arie"] = theirs.pop("arie_giove")
            ours = {b["name"]: b["points"] for b in out["bonuses"] if b["side"] == side}
            assert ours == theirs, f"seed {seed}: jochi of side {side}"
    return state


def _biased_rng(seed):
    """A policy RNG; the deals themselves come from the engine seed."""
    return np.random.default_rng(seed + 1_000_003)


@pytest.mark.nojit
def test_core_matches_oracle_on_random_deals():
    for seed in range(N_FAST):
        play_both(seed)


@pytest.mark.nojit
def test_core_matches_oracle_without_early_solo():
    for seed in range(N_FAST // 4):
        play_both(10_000 + seed, early_solo=False)


class _PreferCommitments:
    """Random legal play that picks call / scommessa / rivanto whenever legal, to reach the rare branches."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def choice(self, legal):
        # action ids: 126 pass, 127 solo, 128 call, 129 scommessa, 130 rivanto
        for preferred in (129, 130):
            if preferred in legal and self.rng.random() < 0.7:
                return preferred
        if 128 in legal and self.rng.random() < 0.6:
            return 128
        if 127 in legal and self.rng.random() < 0.9:
            return 126
        return self.rng.choice(legal)


def test_core_matches_oracle_on_calls_and_commitments():
    n = 40 if JIT_DISABLED else 1000
    for seed in range(n):
        play_both(20_000 + seed, policy_rng=_PreferCommitments(seed))


@pytest.mark.slow
def test_core_matches_oracle_many_deals():
    for seed in range(100_000, 120_000):
        play_both(seed, policy_rng=_PreferCommitments(seed) if seed % 2 else None)
