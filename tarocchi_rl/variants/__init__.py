"""The variants: one rule module (tables, phase kernels, settlement) and one observation module each.

Every variant module exposes the same names (``N_PLAYERS``, ``N_ACTIONS``, ``DECK``, ``make_rule_tables``,
``reset_batch``, ``legal_mask_batch``, ``step_batch``, ``random_actions_batch``, ``rollout_random_batch``,
``first_illegal``, ``action_to_string``, ``string_to_action``, ...), so :class:`tarocchi_rl.BatchEnv` and the
single-game API are written once.
"""

from dataclasses import dataclass
from types import ModuleType


@dataclass(frozen=True)
class VariantSpec:
    """A variant: its rule module, observation module and options (name -> (type, default))."""

    name: str
    rules: ModuleType
    obs: ModuleType
    options: dict

    @property
    def n_players(self) -> int:
        return self.rules.N_PLAYERS

    @property
    def n_actions(self) -> int:
        return self.rules.N_ACTIONS

    @property
    def obs_dim(self) -> int:
        return self.obs.OBS_DIM

    @property
    def deck(self):
        return self.rules.DECK

    def resolve_options(self, options: dict) -> dict:
        """Defaults filled in; an unknown option or a value of the wrong type is a ValueError saying which."""
        out = {k: default for k, (_, default) in self.options.items()}
        for k, v in (options or {}).items():
            if k not in self.options:
                known = ", ".join(sorted(self.options)) or "none"
                raise ValueError(f"unknown option {k!r} for variant {self.name!r} (options: {known})")
            typ, _ = self.options[k]
            if typ is bool and not isinstance(v, bool):
                raise ValueError(f"option {k!r} of variant {self.name!r} must be true or false, got {v!r}")
            if typ is not bool and not isinstance(v, typ):
                raise ValueError(f"option {k!r} of variant {self.name!r} must be {typ.__name__}, got {v!r}")
            out[k] = v
        return out

    def tables(self, options: dict):
        return self.rules.make_rule_tables(**options)


def _mineo():
    from . import mineo, mineo_obs

    return VariantSpec("mineo", mineo, mineo_obs, {"early_solo": (bool, True)})


_FACTORIES = {"mineo": _mineo}
VARIANTS = tuple(_FACTORIES)
_cache: dict = {}


def get_variant(name: str) -> VariantSpec:
    """The VariantSpec of ``name``; ValueError listing the known variants otherwise."""
    if name not in _FACTORIES:
        raise ValueError(f"unknown variant {name!r} (known: {', '.join(VARIANTS)})")
    if name not in _cache:
        _cache[name] = _FACTORIES[name]()
    return _cache[name]
