"""Files shipped with the package: the training configs and the trained bots.

| what            | in the repository            | in an installed wheel         | used by                         |
|-----------------|------------------------------|-------------------------------|---------------------------------|
| training config | ``configs/ppo_VARIANT.yaml`` | ``tarocchi_rl/configs/``      | ``tarocchi-rl train --variant`` |
| trained bot     | ``models/VARIANT/``          | ``tarocchi_rl/models/``       | the agent spec ``bot:VARIANT``  |

Both are package data: ``pyproject.toml`` installs the folders ``configs/`` and ``models/`` as the packages
``tarocchi_rl.configs`` and ``tarocchi_rl.models`` (``[tool.setuptools.package-dir]``, for an editable install and
a wheel alike), and they are found where the import system finds those packages.
"""

import importlib.util
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def _package_folder(package: str) -> Path:
    """The folder of an installed data package (a subpackage of this one), wherever the install put it; where it
    is not installed (a checkout without ``pip install -e .``), the folder a wheel would hold, which is missing."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return Path(__file__).resolve().parent / package.rpartition(".")[2]
    return Path(next(iter(spec.submodule_search_locations)))


CONFIGS_DIR = _package_folder("tarocchi_rl.configs")
MODELS_DIR = _package_folder("tarocchi_rl.models")


def bot_exported_on(variant: str, models: Path = MODELS_DIR) -> str:
    """The day (YYYY-MM-DD) the shipped bot of ``variant`` was exported (its manifest's ``exported_at``): a result
    dated before it was played with the bot it replaced."""
    manifest = json.loads((models / variant / "manifest.json").read_text())
    return str(manifest["provenance"]["exported_at"])[:10]


def played_before_the_bot(result: Mapping[str, Any], models: Path = MODELS_DIR) -> bool:
    """Whether a result file (a leaderboard, a match: it has ``variant`` and ``date``) was played before its
    variant's shipped bot was exported: then its ``bot:V`` rows (and those of the agents reading ``models/V``) are
    the previous bot's."""
    return str(result["date"]) < bot_exported_on(str(result["variant"]), models)


def _available(directory: Path, pattern: str) -> list[str]:
    return sorted(p.name for p in directory.glob(pattern)) if directory.is_dir() else []


def shipped_config(variant: str) -> Path:
    """The shipped training config of ``variant`` (a ValueError naming the variants that have one)."""
    path = CONFIGS_DIR / f"ppo_{variant}.yaml"
    if not path.is_file():
        known = [n[len("ppo_"):-len(".yaml")] for n in _available(CONFIGS_DIR, "ppo_*.yaml")]
        raise ValueError(f"no shipped training config for variant {variant!r} (shipped: {', '.join(known) or 'none'})")
    return path


def shipped_bots() -> list[str]:
    """The names of the shipped bots (variants with a ``models/VARIANT/manifest.json``), sorted."""
    return [n for n in _available(MODELS_DIR, "*") if (MODELS_DIR / n / "manifest.json").is_file()]


def shipped_bot(name: str) -> Path:
    """The directory of the shipped bot ``name`` (a variant: ``mineo``, ...; a ValueError naming the bots
    shipped)."""
    ok = 0 < len(name) <= 64 and all(c.isascii() and (c.isalnum() or c in "_-") for c in name)
    if not ok or not (MODELS_DIR / name / "manifest.json").is_file():
        raise ValueError(f"no shipped bot {name[:80]!r} (shipped: {', '.join(shipped_bots()) or 'none'})")
    return MODELS_DIR / name


def bot_directory(spec: str) -> Path | None:
    """The bot directory an agent spec names: ``bot:NAME`` a shipped bot (:func:`shipped_bot`: a ValueError naming
    those shipped when there is none), ``onnx:DIR`` the path DIR as given (its reader checks it); None for a spec of
    another kind. The spec's text after the colon is the name or the path, whole (no options)."""
    kind, colon, rest = spec.strip().partition(":")
    kind = kind.strip().lower()
    if not colon or kind not in ("bot", "onnx"):
        return None
    return shipped_bot(rest.strip()) if kind == "bot" else Path(rest.strip())
