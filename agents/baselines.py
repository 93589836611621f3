"""``random`` and ``heuristic``: the two agents without weights (:mod:`tarocchi_rl.policies`) as spec kinds."""

from typing import Any

from tarocchi_rl.policies import AgentLike, make_baseline

from .registry import AgentKind, register_kind


def _baseline(name: str) -> Any:
    def build(values: dict[str, Any], seed: int, label: str) -> AgentLike:
        return make_baseline(name, seed)

    return build


RANDOM = register_kind(AgentKind("random", "uniformly random legal actions (tarocchi_rl.policies.RandomAgent)",
                                 build=_baseline("random")))
HEURISTIC = register_kind(AgentKind("heuristic", "the rule-based bot (tarocchi_rl.policies.heuristic)",
                                    build=_baseline("heuristic")))
