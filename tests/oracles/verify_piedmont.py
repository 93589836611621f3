"""The Piedmontese driver of ``make verify`` (experiments/checks/verify_rules.py): one deal on the engine and on
tests/oracles/oracle_piedmont.py, by the 78-card differential test's ``play_both`` (tests/core/test_differential_78.py).

Cases by seed: piedmont3 honour_5 mondo / angelo  x  excuse_exchange true / false (uniform random); piedmont4
accuso false / true (accuso_points 5 / 7)  x  excuse_exchange true / false  x  uniform random (1 in 4) / preferring
accuso. At every decision both agree on the player to act and the exact legal set; at the end on the payoffs, and
each side's thirds of card points with the bonuses and the deck's total agree with the oracle's."""

from typing import Any

from tests.oracles import differential as d78

DECK_THIRDS = {"piedmont3": 231, "piedmont4": 243}


def case(variant: str, seed: int) -> tuple[dict[str, Any], str]:
    """(options, policy name) of deal ``seed``."""
    if variant == "piedmont3":
        return {"honour_5": ("mondo", "angelo")[seed % 2], "excuse_exchange": seed // 2 % 2 == 0}, "uniform"
    options: dict[str, Any] = {"accuso": seed % 2 == 1, "excuse_exchange": seed // 2 % 2 == 0}
    if options["accuso"] and seed // 4 % 2:
        options["accuso_points"] = 7
    return options, ("uniform", "prefer_accuso", "prefer_accuso", "prefer_accuso")[seed // 8 % 4]


def play(variant: str, seed: int, options: dict[str, Any], policy_name: str, counted: Any) -> tuple[Any, dict]:
    """One deal on both; ``counted(inner)`` wraps the policy (the harness's counter). Returns it and no extra
    figures."""
    policy = counted(d78.Policy(seed, ("accuso",) if policy_name == "prefer_accuso" else ()))
    state, oracle = d78.play_both(variant, seed, d78.piedmont_oracle(variant, **options), policy, **options)
    out = state.outcome()
    with_bonus = [u + sum(b["points"] for b in out["bonuses"] if b["side"] == k)
                  for k, u in enumerate(out["card_point_units"])]
    assert with_bonus == oracle.points_thirds(), f"{variant} seed {seed}: thirds {with_bonus} vs " \
                                                 f"{oracle.points_thirds()}"
    assert sum(out["card_point_units"]) == DECK_THIRDS[variant], f"{variant} seed {seed}: deck total"
    return policy, {}
