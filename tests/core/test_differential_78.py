"""Differential tests of the 78-card variants: the Numba core against the independent oracles
(tests/oracles/oracle_piedmont.py, tests/oracles/oracle_french.py), over random deals played with random legal actions.

At every decision both must agree on the player to act and the exact set of legal actions; at the end on
the payoffs and the card points.
"""

import numpy as np
import pytest

import tarocchi_rl
from tests.oracles.oracle_french import FrenchOracle
from tests.oracles.oracle_piedmont import PiedmontOracle
from tests.support.engine import JIT_DISABLED, oracle_name

# deals per case in make test (the oracles are slow Python); make verify plays 100,000 per variant
N_FAST = 40 if JIT_DISABLED else 600


class Policy:
    """Random legal actions, preferring the rare ones (bids, chelem, poignee, accuso) so they get tested."""

    def __init__(self, seed, prefer=()):
        self.rng = np.random.default_rng(seed)
        self.prefer = prefer

    def choose(self, names):
        for p in self.prefer:
            hits = [k for k, n in enumerate(names) if n.startswith(p)]
            if hits and self.rng.random() < 0.5:
                return int(self.rng.choice(hits))
        return int(self.rng.integers(len(names)))


def french_preferences(seed):
    """A third of the deals random, a third low bids and poignees (discards, petit au bout), a third high."""
    return [(), ("poignee", "bid:prise", "bid:garde", "bid:pass"), ("bid:garde", "poignee", "chelem")][seed % 3]


def play_both(variant, seed, oracle_factory, policy, **options):
    state = tarocchi_rl.make(variant, **options).new_state(seed)
    deal = state.deal()
    oracle = oracle_factory(deal)
    steps = 0
    while not state.is_terminal():
        assert not oracle.is_terminal(), f"{variant} seed {seed}: oracle ended first"
        assert state.current_player() == oracle.current_player(), f"{variant} seed {seed} step {steps}: player"
        legal = state.legal_actions()
        names = [oracle_name(state.action_to_string(a)) for a in legal]
        assert set(names) == oracle.legal_actions(), f"{variant} seed {seed} step {steps}: legal sets differ"
        k = policy.choose(names)
        oracle.apply(names[k])
        state.apply(legal[k])
        steps += 1
    assert oracle.is_terminal(), f"{variant} seed {seed}: core ended first"
    assert state.returns() == oracle.returns(), f"{variant} seed {seed}: payoffs differ"
    return state, oracle


def _piedmont(variant, **options):
    return lambda deal: PiedmontOracle(deal["hands"], deal["stock"], variant=variant, **options)


def _french(n, **options):
    return lambda deal: FrenchOracle(deal["hands"], deal["stock"], n_players=n, **options)


def _excuse_changed_camp(state, oracle):
    """The deal where the two readings of excuse_last_trick differ: a defender's EX in the last trick, won by
    another defender."""
    last = oracle.tricks[-1]
    owner = next((seat for seat, card in last["plays"] if card == "EX"), None)
    return owner is not None and owner != oracle.taker and last["winner"] not in (owner, oracle.taker)


@pytest.mark.nojit
@pytest.mark.parametrize(
    "variant,options",
    [
        ("piedmont3", {}),
        ("piedmont3", {"honour_5": "angelo", "excuse_exchange": False}),
        ("piedmont4", {}),
        ("piedmont4", {"accuso": True, "accuso_points": 7}),
    ],
)
def test_piedmont_matches_oracle(variant, options):
    n = N_FAST if not options else N_FAST // 4
    for seed in range(n):
        state, oracle = play_both(variant, seed, _piedmont(variant, **options), Policy(seed, ("accuso",)),
                                  **options)
        out = state.outcome()
        with_bonus = [u + sum(b["points"] for b in out["bonuses"] if b["side"] == k)
                      for k, u in enumerate(out["card_point_units"])]
        assert with_bonus == oracle.points_thirds(), f"seed {seed}: thirds"
        assert sum(out["card_point_units"]) == (231 if variant == "piedmont3" else 243), f"seed {seed}: deck total"


@pytest.mark.nojit
@pytest.mark.parametrize("excuse_last_trick", ["other_side", "trick_winner"])
@pytest.mark.parametrize("variant,n", [("french3", 3), ("french4", 4)])
def test_french_matches_oracle(variant, n, excuse_last_trick):
    opts = {"excuse_last_trick": excuse_last_trick}
    changed = 0
    for seed in range(N_FAST):
        state, oracle = play_both(variant, seed, _french(n, **opts), Policy(seed, french_preferences(seed)), **opts)
        out = state.outcome()
        if oracle.score()["taker"] >= 0:
            assert out["card_point_units"][0] == oracle.taker_half_points(), f"seed {seed}: half points"
            assert out["details"]["score"] == oracle.score()["T"], f"seed {seed}: score"
            changed += _excuse_changed_camp(state, oracle)
    assert JIT_DISABLED or changed > 0  # the deals where the two readings differ were played


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["piedmont3", "piedmont4", "french3", "french4"])
def test_78_card_variants_match_oracles_many_deals(variant):
    for seed in range(50_000, 60_000):
        if variant.startswith("piedmont"):
            opts = {"accuso": bool(seed % 2)} if variant == "piedmont4" else {}
            play_both(variant, seed, _piedmont(variant, **opts), Policy(seed, ("accuso",)), **opts)
        else:
            opts = {"excuse_last_trick": ("other_side", "trick_winner")[seed % 2]}
            play_both(variant, seed, _french(int(variant[-1]), **opts), Policy(seed, french_preferences(seed)),
                      **opts)
