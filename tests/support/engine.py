"""Small facts about the engine that many tests share: whether Numba's JIT is off, the oracles' spelling of an
action string, an outcome's bonuses per side and a variant's observation offsets."""

import os
from types import SimpleNamespace

from tarocchi_rl.variants import get_variant

#: the run has NUMBA_DISABLE_JIT=1 (the ``nojit`` subset): the slow tests shrink or skip
JIT_DISABLED = os.environ.get("NUMBA_DISABLE_JIT", "0") == "1"


def oracle_name(action_string: str) -> str:
    """The oracle's spelling of an engine action string (``bid:pass`` -> ``pass``)."""
    return action_string[4:] if action_string.startswith("bid:") else action_string


def bonuses_by_side(out: dict) -> list[dict]:
    """An outcome's itemised bonuses as one {name: points} dict per side (Mineo: the jochi of each side)."""
    sides: list[dict] = [{} for _ in range(max(2, len(out["sides"])))]
    for b in out["bonuses"]:
        sides[b["side"]][b["name"]] = b["points"]
    return sides


def obs_offsets(variant: str) -> SimpleNamespace:
    """OBS_<SECTION> offsets of a variant's observation (plus OBS_MONTE / OBS_AUCTION aliases, OBS_DIM)."""
    spec = get_variant(variant)
    ns = {f"OBS_{name.upper()}": off for off, _, name in spec.obs_rows}
    ns["OBS_MONTE"] = ns.get("OBS_STOCK")
    ns["OBS_AUCTION"] = ns.get("OBS_BIDS")
    ns["OBS_DIM"] = spec.obs_dim
    return SimpleNamespace(**ns)


MINEO_OBS = obs_offsets("mineo")
