"""Mineo's driver of ``make verify`` (experiments/checks/verify_rules.py): one deal on the engine and on
tests/oracles/oracle_mineo.py, by the differential test's ``play_both`` (tests/mineo/test_mineo_differential.py).

Cases by seed: early_solo true / false  x  uniform random / ``_PreferCommitments`` (call, scommessa, rivanto). At
every decision both agree on the player to act and the exact legal set; at the end on the payoffs, the thirds of card
points and the jochi of each side."""

from typing import Any

import numpy as np

from tests.oracles import differential as md


def case(variant: str, seed: int) -> tuple[dict[str, Any], str]:
    """(options, policy name) of deal ``seed``."""
    return {"early_solo": seed % 2 == 0}, ("uniform", "commitments")[seed // 2 % 2]


def play(variant: str, seed: int, options: dict[str, Any], policy_name: str, counted: Any) -> tuple[Any, dict]:
    """One deal on both; ``counted(inner)`` wraps the policy (the harness's counter). Returns it and no
    extra figures."""
    inner = md.PreferCommitments(seed) if policy_name == "commitments" else np.random.default_rng(seed)
    policy = counted(inner)
    md.play_mineo_both(seed, policy_rng=policy, **options)
    return policy, {}
