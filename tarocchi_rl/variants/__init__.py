"""The variants: a rule family module each (mineo, piedmont, french) and the registry of the five variants.

A ``VariantSpec`` gives everything the Python side needs: the family module (action strings, outcome), the
RuleTables factory with its options, sizes, the deal order and the observation layout. The kernels
themselves are shared (:mod:`tarocchi_rl.core.engine`).
"""

from dataclasses import dataclass
from types import ModuleType


@dataclass(frozen=True)
class VariantSpec:
    """A variant: family module, options (name -> (type, default)), sizes and deal order."""

    name: str
    rules: ModuleType
    options: dict
    n_players: int
    n_actions: int
    hand_sizes: tuple
    stock_size: int
    obs_dim: int
    obs_rows: tuple
    fixed: dict  # arguments of make_rule_tables that are not user options (the variant's name)

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
            if typ is int and (isinstance(v, bool) or not isinstance(v, int)):
                raise ValueError(f"option {k!r} of variant {self.name!r} must be an integer, got {v!r}")
            if typ is str and not isinstance(v, str):
                raise ValueError(f"option {k!r} of variant {self.name!r} must be a string, got {v!r}")
            out[k] = v
        return out

    def tables(self, options: dict):
        return self.rules.make_rule_tables(**self.fixed, **options)

    def __reduce__(self):  # pickle / deepcopy by name (the spec holds a module)
        return (get_variant, (self.name,))


def _mineo():
    from . import mineo

    return VariantSpec("mineo", mineo, {"early_solo": (bool, True)}, 4, mineo.N_ACTIONS, mineo.HAND_SIZES,
                       mineo.STOCK_SIZE, mineo.OBS_DIM, tuple(mineo.OBS_ROWS), {})


def _piedmont(name):
    from . import piedmont

    n, hand, stock, _, _ = piedmont.SHAPES[name]
    options = {"excuse_exchange": (bool, True)}
    if name == "piedmont3":
        options["honour_5"] = (str, "mondo")
    else:
        options["accuso"] = (bool, False)
        options["accuso_points"] = (int, 5)
    _, dim, rows = piedmont.layout(name)
    return VariantSpec(name, piedmont, options, n, piedmont.N_ACTIONS, (hand,) * n, stock, dim, tuple(rows),
                       {"variant": name})


def _french(name):
    from . import french

    n, hand, _, _ = french.SHAPES[name]
    _, dim, rows = french.layout(name)
    return VariantSpec(name, french, {}, n, french.N_ACTIONS, (hand,) * n, 6, dim, tuple(rows),
                       {"variant": name})


_FACTORIES = {
    "mineo": _mineo,
    "piedmont3": lambda: _piedmont("piedmont3"),
    "piedmont4": lambda: _piedmont("piedmont4"),
    "french3": lambda: _french("french3"),
    "french4": lambda: _french("french4"),
}
VARIANTS = tuple(_FACTORIES)
_cache: dict = {}


def get_variant(name: str) -> VariantSpec:
    """The VariantSpec of ``name``; ValueError listing the known variants otherwise."""
    if name not in _FACTORIES:
        raise ValueError(f"unknown variant {name!r} (known: {', '.join(VARIANTS)})")
    if name not in _cache:
        _cache[name] = _FACTORIES[name]()
    return _cache[name]
