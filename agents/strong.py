"""``strong:NAME``: the strongest bot the package ships for a variant, at a fixed time a decision.

The shipped network of ``bot:NAME`` and the search it guides: ISMCTS (:mod:`.ismcts`) with the network's policy as
the PUCT prior at the root and heuristic rollouts, as many iterations as ``time`` seconds a decision allow (the
cost measured as it plays; forced moves are not searched). Its recipe (:data:`RECIPE`) is what the expert
iteration's searches use, the teacher the shipped networks learn from (docs/expert.md); its strength and latency
are on the results pages.
"""

from typing import Any

from tarocchi_rl.policies import AgentLike
from tarocchi_rl.shipped import shipped_bot

from .args import SEED, Arg
from .ismcts import MAX_TIME, ISMCTSAgent
from .registry import AgentKind, register_kind

__all__ = ["DEFAULT_TIME", "RECIPE", "STRONG"]

DEFAULT_TIME = 0.05  # seconds a decision
#: the search around the shipped network (ISMCTSAgent's keywords; the prior and the time come from the spec)
RECIPE: dict[str, Any] = {"rollout": "heuristic", "c": 0.7, "c_prior": 2.0}


def _build(values: dict[str, Any], seed: int, label: str) -> AgentLike:
    name = str(values["name"]).strip()
    shipped_bot(name)  # a ValueError naming the shipped bots when there is none of that name
    return ISMCTSAgent(prior=f"bot:{name}", time_budget=values["time"], seed=values["seed"], label=label,
                       **RECIPE)


STRONG = register_kind(AgentKind(
    "strong", "the shipped network of bot:NAME guiding ISMCTS (its policy the root's prior, heuristic rollouts) at a "
    "fixed time a decision", build=_build,
    args=(Arg("name", "text", "the name of a shipped bot (a variant)", positional=True, required=True,
              metavar="NAME"),
          Arg("time", "number", "seconds a decision (the search's iterations follow its measured cost)",
              default=DEFAULT_TIME, lo=0.0, hi=MAX_TIME, above=True),
          SEED)))
