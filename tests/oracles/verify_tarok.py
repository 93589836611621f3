"""Tarok's driver of ``make verify`` (experiments/checks/verify_rules.py): one deal on the engine and on
tests/oracles/oracle_tarok.py in lockstep, by tests/support/tarok.py's ``Both`` (every query asserts that the two
agree): the player, the legal actions at every decision, the end and the returns.

Cases by seed: uniform random / passive (``bid:pass`` 3 times in 4 where legal, so that the low contracts, klop,
three and two, are met as often as the high ones). The deck: a shuffle in which every hand holds a tarok."""

from typing import Any

import numpy as np

import tarocchi_rl
from tests.support.tarok import Both


def case(variant: str, seed: int) -> tuple[dict[str, Any], str]:
    """(options, policy name) of deal ``seed``."""
    return {}, ("uniform", "passive")[seed % 2]


class _Policy:
    """Random legal strings (sorted, so that the seed fixes the choice); ``passive``: ``bid:pass`` 3 times in 4."""

    def __init__(self, seed: int, passive: bool) -> None:
        self.rng = np.random.default_rng(seed)
        self.passive = passive

    def choose(self, names: list[str]) -> int:
        if self.passive and "bid:pass" in names and self.rng.random() < 0.75:
            return names.index("bid:pass")
        return int(self.rng.integers(len(names)))


def play(variant: str, seed: int, options: dict[str, Any], policy_name: str, counted: Any) -> tuple[Any, dict]:
    """One deal on both; ``counted(inner)`` wraps the policy (the harness's counter). Returns it and no extra
    figures."""
    players = int(variant[-1])
    h = {3: 16, 4: 12}[players]
    rng = np.random.default_rng(seed)
    names = list(tarocchi_rl.make(variant).deck.names)
    while True:
        deck = [names[c] for c in rng.permutation(len(names))]
        if all(any(c.startswith("T") for c in deck[h * s: h * (s + 1)]) for s in range(players)):
            break
    policy = counted(_Policy(seed, policy_name == "passive"))
    both = Both(players, deck)
    while not both.done():
        both.player()
        legal = sorted(both.legal())
        both.apply(legal[policy.choose(legal)])
    both.returns()
    return policy, {}
