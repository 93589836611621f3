"""Differential tests of the 78-card variants: the Numba core against the independent oracles
(tests/oracles/oracle_piedmont.py, tests/oracles/oracle_french.py), over random deals played with random legal actions.

At every decision both must agree on the player to act and the exact set of legal actions; at the end on
the payoffs and the card points.
"""

import pytest

from tests.oracles.differential import (
    Policy,
    excuse_changed_camp,
    french_oracle,
    french_preferences,
    piedmont_oracle,
    play_both,
)
from tests.support.engine import JIT_DISABLED

# deals per case in make test (the oracles are slow Python); make verify plays 100,000 per variant
N_FAST = 40 if JIT_DISABLED else 600


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
        state, oracle = play_both(variant, seed, piedmont_oracle(variant, **options), Policy(seed, ("accuso",)),
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
        policy = Policy(seed, french_preferences(seed))
        state, oracle = play_both(variant, seed, french_oracle(n, **opts), policy, **opts)
        out = state.outcome()
        if oracle.score()["taker"] >= 0:
            assert out["card_point_units"][0] == oracle.taker_half_points(), f"seed {seed}: half points"
            assert out["details"]["score"] == oracle.score()["T"], f"seed {seed}: score"
            changed += excuse_changed_camp(state, oracle)
    assert JIT_DISABLED or changed > 0  # the deals where the two readings differ were played


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["piedmont3", "piedmont4", "french3", "french4"])
def test_78_card_variants_match_oracles_many_deals(variant):
    for seed in range(50_000, 60_000):
        if variant.startswith("piedmont"):
            opts = {"accuso": bool(seed % 2)} if variant == "piedmont4" else {}
            play_both(variant, seed, piedmont_oracle(variant, **opts), Policy(seed, ("accuso",)), **opts)
        else:
            opts = {"excuse_last_trick": ("other_side", "trick_winner")[seed % 2]}
            play_both(variant, seed, french_oracle(int(variant[-1]), **opts), Policy(seed, french_preferences(seed)),
                      **opts)
