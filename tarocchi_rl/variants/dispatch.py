"""The family dispatch: for each Numba hook of the contract, one kernel that calls the hook of the family in
``params[P_FAMILY]``, so that the shared kernels (engine, observation, search, heuristic) never name a family.

Numba cannot look a function up at run time, so each dispatcher is generated once, at import, from the
registry's ``FAMILIES`` (family id = position): a chain ``if fam == 0: return mineo.hook(...) elif fam == 1:
... else: return <last family>.hook(...)``, compiled ``inline="always"``: inlined into its caller, it is the
same code as a chain written there by hand (no call through a pointer, one compile per caller). A new family
needs no change here: its line in ``FAMILIES`` adds a branch to every dispatcher.

The generated source is compiled with this file's name (Numba's cache needs a file) and each dispatcher's name
carries a digest of its source and of the families' names, so that a changed registry never meets an old
cache entry of a dispatcher. (A kernel that inlines a dispatcher is recompiled when the registry or a family
changes: its cache entry is stamped with the sources of the package modules its module imports,
``tarocchi_rl/kernel_cache.py``.)

``dispatch_source(hook)`` gives the generated text (for reading and for the tests).
"""

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

from numba import njit

from ..core.tables import P_FAMILY
from . import FAMILIES
from .contract import KERNEL_HOOKS, FamilyRules


def dispatch_source(hook: str, families: Sequence[FamilyRules] = FAMILIES) -> tuple[str, str]:
    """(function name, Python source) of the dispatcher of ``hook`` over ``families``."""
    if hook not in KERNEL_HOOKS:
        raise ValueError(f"unknown family hook {hook!r} (hooks: {', '.join(KERNEL_HOOKS)})")
    if not families:
        raise ValueError("no family to dispatch to")
    args = ", ".join(KERNEL_HOOKS[hook][0])
    body = [f"    fam = tb.params[{P_FAMILY}]"]
    for k in range(len(families) - 1):
        body += [f"    {'if' if k == 0 else 'elif'} fam == {k}:", f"        return _family_{k}({args})"]
    body.append(f"    return _family_{len(families) - 1}({args})")
    names = ",".join(getattr(f, "__name__", repr(f)) for f in families)
    digest = hashlib.sha256(("\n".join(body) + names).encode()).hexdigest()[:12]
    name = f"{hook}_dispatch_{digest}"
    return name, "\n".join([f"def {name}({args}):", *body]) + "\n"


def _family_dispatch(hook: str, families: Sequence[FamilyRules] = FAMILIES) -> Callable[..., Any]:
    """The Numba dispatcher of ``hook`` (a name of KERNEL_HOOKS) over ``families``."""
    lacking = [getattr(f, "__name__", repr(f)) for f in families if not hasattr(f, hook)]
    if lacking:
        raise ImportError(f"family {', '.join(lacking)} lacks the contract's hook {hook!r} (its arguments: "
                          "variants/contract.py KERNEL_HOOKS; the do-nothing kernels: variants/defaults.py)")
    name, src = dispatch_source(hook, families)
    namespace: dict[str, Any] = {"__name__": __name__}
    namespace.update({f"_family_{k}": getattr(f, hook) for k, f in enumerate(families)})
    exec(compile(src, __file__, "exec"), namespace)  # noqa: S102 (source generated above from the registry)
    return njit(cache=True, inline="always")(namespace[name])


start_row = _family_dispatch("start_row")
legal_flags = _family_dispatch("legal_flags")
step_special = _family_dispatch("step_special")
after_discard = _family_dispatch("after_discard")
settle = _family_dispatch("settle")
stock_in_hand = _family_dispatch("stock_in_hand")
stock_places_known = _family_dispatch("stock_places_known")
cards_dealt = _family_dispatch("cards_dealt")
hand_cap = _family_dispatch("hand_cap")
sample_fixes = _family_dispatch("sample_fixes")
sample_rejected = _family_dispatch("sample_rejected")
fix_sample = _family_dispatch("fix_sample")
heuristic_special = _family_dispatch("heuristic_special")
heuristic_reserved = _family_dispatch("heuristic_reserved")
heuristic_attack = _family_dispatch("heuristic_attack")
heuristic_ex_dump = _family_dispatch("heuristic_ex_dump")
sides_known = _family_dispatch("sides_known")
trick_won = _family_dispatch("trick_won")
observe_sections = _family_dispatch("observe_sections")
play_rules = _family_dispatch("play_rules")
play_exclusions = _family_dispatch("play_exclusions")
