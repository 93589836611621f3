"""The gate of a round: its network against the one it would replace, and against plain search, on fixed deals.

Both are duplicate matches of the arena (:mod:`tarocchi_rl.arena`: every deal replayed with the seats rotated),
the networks playing alone (one forward pass a decision, the most probable legal move), on the run's gate deals:
``gate.deals`` deals dealt from ``gate.seed``, never the frozen benchmark deals. Head to head = the first agent's
score minus the second's, mean per deal, with its 95% bootstrap CI.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from ..agents.specs import make_agent
from ..arena import head_to_head_of, random_decks, run_arena
from ..rl.policy import PPOAgent
from .config import ExpertConfig


def gate_decks(cfg: ExpertConfig) -> NDArray[np.int16]:
    """int16[gate.deals, C]: the run's gate deals."""
    return random_decks(cfg.variant, cfg.gate.deals, cfg.gate.seed, **cfg.options)


def _result(mean: float, lo: float, hi: float, deals: int) -> dict[str, Any]:
    return {"mean": round(mean, 4), "ci95": [round(lo, 4), round(hi, 4)], "deals": deals}


def head_to_head(cfg: ExpertConfig, a: PPOAgent | Any, b: PPOAgent | Any, decks: NDArray[np.int16],
                 seed: int = 0) -> dict[str, Any]:
    """Agent ``a``'s score minus ``b``'s on ``decks`` (``{"mean", "ci95", "deals"}``); the agents' labels differ."""
    result = run_arena(cfg.variant, [a, b], decks=decks, options=cfg.options, seed=seed, make_agent=make_agent)
    found = head_to_head_of(result, a.name, b.name)
    assert found is not None  # the arena plays the one pair
    return _result(*found, len(decks))


def network_agent(net: torch.nn.Module, cfg: ExpertConfig, label: str) -> PPOAgent:
    """The network alone as an arena agent (greedy), on the learner's threads."""
    return PPOAgent(net=net, variant=cfg.variant, greedy=True, label=label, threads=cfg.torch_threads)


def gate_round(cfg: ExpertConfig, new: torch.nn.Module, old: torch.nn.Module, decks: NDArray[np.int16],
               round_: int) -> dict[str, Any]:
    """The round's gate: ``vs_previous`` (new minus old on every gate deal), ``kept`` (its mean above
    ``gate.margin``) and, when ``gate.search_deals`` > 0, ``vs_search`` (the new network minus ``gate.search`` on
    the first ``search_deals`` gate deals)."""
    out: dict[str, Any] = {}
    vs_old = head_to_head(cfg, network_agent(new, cfg, f"round {round_}"),
                          network_agent(old, cfg, "previous"), decks, seed=round_)
    out["vs_previous"] = vs_old
    out["kept"] = bool(vs_old["mean"] > cfg.gate.margin)
    if cfg.gate.search_deals > 0:
        search = make_agent(cfg.gate.search, seed=cfg.gate.seed)
        out["vs_search"] = head_to_head(cfg, network_agent(new, cfg, f"round {round_}"), search,
                                        decks[: cfg.gate.search_deals], seed=round_)
        out["search"] = cfg.gate.search
    return out
