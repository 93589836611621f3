"""Files shipped with the package: the training configs and the trained bots.

| what            | in the repository            | in an installed wheel         | used by                         |
|-----------------|------------------------------|-------------------------------|---------------------------------|
| training config | ``configs/ppo_VARIANT.yaml`` | ``tarocchi_rl/configs/``      | ``tarocchi-rl train --variant`` |
| trained bot     | ``models/VARIANT/``          | ``tarocchi_rl/models/``       | the agent spec ``bot:VARIANT``  |

Both are package data (``pyproject.toml``: the packages ``tarocchi_rl.configs`` and ``tarocchi_rl.models`` are
the directories ``configs/`` and ``models/``); in the repository ``tarocchi_rl/configs`` and ``tarocchi_rl/models``
are links to them, so the same lookup works in a checkout, an editable install and a wheel.
"""

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
CONFIGS_DIR = PACKAGE_DIR / "configs"
MODELS_DIR = PACKAGE_DIR / "models"


def _available(directory: Path, pattern: str) -> list[str]:
    return sorted(p.name for p in directory.glob(pattern)) if directory.is_dir() else []


def shipped_config(variant: str) -> Path:
    """The shipped training config of ``variant`` (a ValueError naming the variants that have one)."""
    path = CONFIGS_DIR / f"ppo_{variant}.yaml"
    if not path.is_file():
        known = [n[len("ppo_"):-len(".yaml")] for n in _available(CONFIGS_DIR, "ppo_*.yaml")]
        raise ValueError(f"no shipped training config for variant {variant!r} (shipped: {', '.join(known) or 'none'})")
    return path


def shipped_bot(name: str) -> Path:
    """The directory of the shipped bot ``name`` (a variant: ``mineo``, ...; a ValueError naming the bots
    shipped)."""
    ok = 0 < len(name) <= 64 and all(c.isascii() and (c.isalnum() or c in "_-") for c in name)
    if not ok or not (MODELS_DIR / name / "manifest.json").is_file():
        known = [n for n in _available(MODELS_DIR, "*") if (MODELS_DIR / n / "manifest.json").is_file()]
        raise ValueError(f"no shipped bot {name[:80]!r} (shipped: {', '.join(known) or 'none'})")
    return MODELS_DIR / name
