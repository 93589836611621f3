"""Shared test helpers: run the core and the oracle side by side.

Layout: ``tests/<area>/`` (core, mineo, piedmont, french, agents, envs, rl, search, cli); the independent slow
oracles live in ``tests/oracles/`` and are importable by name (``from oracle_mineo import MineoOracle``).
"""

import os
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from tarocchi_rl.variants import get_variant

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracles"))

JIT_DISABLED = os.environ.get("NUMBA_DISABLE_JIT", "0") == "1"


def oracle_name(action_string: str) -> str:
    """The oracle's spelling of an engine action string (``bid:pass`` -> ``pass``)."""
    return action_string[4:] if action_string.startswith("bid:") else action_string


def bonuses_by_side(out: dict) -> list[dict]:
    """An outcome's itemised bonuses as one {name: points} dict per side (Mineo: the jochi of each side)."""
    sides = [{} for _ in range(max(2, len(out["sides"])))]
    for b in out["bonuses"]:
        sides[b["side"]][b["name"]] = b["points"]
    return sides


def bonus_totals(out: dict) -> list[int]:
    """Sum of the bonuses of each side."""
    return [sum(d.values()) for d in bonuses_by_side(out)]


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


def obs_offsets(variant: str) -> SimpleNamespace:
    """OBS_<SECTION> offsets of a variant's observation (plus OBS_MONTE / OBS_AUCTION aliases, OBS_DIM)."""
    spec = get_variant(variant)
    ns = {f"OBS_{name.upper()}": off for off, _, name in spec.obs_rows}
    ns["OBS_MONTE"] = ns.get("OBS_STOCK")
    ns["OBS_AUCTION"] = ns.get("OBS_BIDS")
    ns["OBS_DIM"] = spec.obs_dim
    return SimpleNamespace(**ns)


MINEO_OBS = obs_offsets("mineo")
