"""The French driver of ``make verify`` (experiments/checks/verify_rules.py): one deal on the engine and on
tests/oracles/oracle_french.py, by the 78-card differential test's ``play_both`` (tests/core/test_differential_78.py).

Cases by seed: excuse_last_trick other_side / trick_winner  x  ``french_preferences`` (random / low bids and
poignees / garde, poignee, chelem). At every decision both agree on the player to act and the exact legal set; at
the end on the payoffs, and where there was a taker, on his half points and the score. Extra figure:
``excuse_changed_camp``, the deals where the two readings of excuse_last_trick differ."""

from typing import Any

from tests.oracles import differential as d78


def case(variant: str, seed: int) -> tuple[dict[str, Any], str]:
    """(options, policy name) of deal ``seed``."""
    return {"excuse_last_trick": ("other_side", "trick_winner")[seed % 2]}, ("random", "low", "high")[seed % 3]


def play(variant: str, seed: int, options: dict[str, Any], policy_name: str, counted: Any) -> tuple[Any, dict]:
    """One deal on both; ``counted(inner)`` wraps the policy (the harness's counter). Returns it and the extra
    figures."""
    policy = counted(d78.Policy(seed, d78.french_preferences(seed)))
    state, oracle = d78.play_both(variant, seed, d78.french_oracle(int(variant[-1]), **options), policy, **options)
    out = state.outcome()
    extra = {}
    if oracle.score()["taker"] >= 0:
        assert out["card_point_units"][0] == oracle.taker_half_points(), f"{variant} seed {seed}: half points"
        assert out["details"]["score"] == oracle.score()["T"], f"{variant} seed {seed}: score"
        extra["excuse_changed_camp"] = int(d78.excuse_changed_camp(state, oracle))
    return policy, extra
