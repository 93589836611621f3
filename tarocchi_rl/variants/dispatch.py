"""The family dispatch: for each Numba hook of the contract, one function that the shared kernels (engine,
observation, search, heuristic) call, and that reaches the hook of the family whose rule tables they were given,
so that they never name a family.

Each family's tables have a Numba type of their own (its ``Tables``, a RuleTables subclass). In a compiled kernel
a dispatcher is an ``@overload``, inlined into its caller, that picks the family's hook from the type of ``tb`` when
the caller is compiled: a kernel compiled for the French tables holds French code alone, and a command that plays
one variant compiles one family (a chain over every family would compile them all, in every kernel). What is
inlined is the hook's body where the family compiles the hook ``inline="always"``, else a call to it (``_call_k``),
the code a call written in the caller would give. (Numba's SSA pass warns, harmlessly, where an overload inlines a
body that redefines a variable in a loop: such a hook is better compiled as a function of its own, as the
families' ``legal_flags`` are.) Called from
Python (``NUMBA_DISABLE_JIT=1``, or the web's ``sides_known``), a dispatcher reads ``params[P_FAMILY]``: a chain
``if fam == 0: return _family_0(...) elif ...``.

The dispatchers are generated once, at import, from the registry's ``FAMILIES`` (family id = position) and the
arguments of ``KERNEL_HOOKS``: a new family needs no change here. The generated source is compiled with this file's
name (Numba's cache and inliner need a file), and each dispatcher's name carries a digest of its source and of the
families' names. (A kernel that inlines a dispatcher is recompiled when the registry or a family changes: its cache
entry is stamped with the sources of the package modules its module imports, ``tarocchi_rl/kernel_cache.py``.)

``dispatch_source(hook)`` gives the generated text (for reading and for the tests); ``family_of(tables_type)``
the family that a dispatcher picks for a tables type.
"""

import hashlib
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

from ..core.tables import P_FAMILY, RuleTables
from . import FAMILIES
from .contract import KERNEL_HOOKS, FamilyRules


def dispatch_source(hook: str, families: Sequence[FamilyRules] = FAMILIES) -> tuple[str, str]:
    """(function name, Python source) of the dispatcher of ``hook`` over ``families``: the run-time chain
    on params[P_FAMILY] (Python), a ``_call_k`` per family, and ``_compiled``, the overload that returns the
    ``_call_k`` of the tables' family."""
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
    calls = [line for k in range(len(families))
             for line in (f"def _call_{k}({args}):", f"    return _family_{k}({args})", "", "")]
    compiled = [f"def _compiled({args}):", "    return _calls[_family_of(tb)]"]
    return name, "\n".join([f"def {name}({args}):", *body, "", "", *calls, *compiled]) + "\n"


def family_of(tables_type: type, families: Sequence[FamilyRules] = FAMILIES) -> FamilyRules:
    """The family whose ``Tables`` is ``tables_type`` (or a base of it); TypeError naming the families otherwise."""
    for family in families:
        if isinstance(tables_type, type) and issubclass(tables_type, family.Tables):
            return family
    names = ", ".join(getattr(f, "__name__", repr(f)) for f in families)
    raise TypeError(f"rule tables of type {getattr(tables_type, '__qualname__', tables_type)!r} belong to no family "
                    f"(a family's tables are its Tables: {names})")


def _family_dispatch(hook: str, families: Sequence[FamilyRules] = FAMILIES) -> Callable[..., Any]:
    """The dispatcher of ``hook`` (a name of KERNEL_HOOKS) over ``families``: a Python function, overloaded for the
    compiled kernels by the family of the tables' type."""
    lacking = [getattr(f, "__name__", repr(f)) for f in families if not hasattr(f, hook)]
    if lacking:
        raise ImportError(f"family {', '.join(lacking)} lacks the contract's hook {hook!r} (its arguments: "
                          "variants/contract.py KERNEL_HOOKS; the do-nothing kernels: variants/defaults.py)")

    def position_of(tb: types.Type) -> int:
        if not (isinstance(tb, types.BaseNamedTuple) and issubclass(tb.instance_class, RuleTables)):
            raise TypingError(f"the family hook {hook!r} needs rule tables, not {tb}")
        try:
            return list(families).index(family_of(tb.instance_class, families))
        except TypeError as e:
            raise TypingError(str(e)) from None

    name, src = dispatch_source(hook, families)
    namespace: dict[str, Any] = {"__name__": __name__, "_family_of": position_of}
    namespace.update({f"_family_{k}": getattr(f, hook) for k, f in enumerate(families)})
    exec(compile(src, __file__, "exec"), namespace)  # noqa: S102 (source generated above from the registry)
    namespace["_calls"] = [_inlined_body(f, hook) or namespace[f"_call_{k}"] for k, f in enumerate(families)]
    run_time = namespace[name]
    overload(run_time, inline="always")(namespace["_compiled"])
    return run_time


def _inlined_body(family: FamilyRules, hook: str) -> Callable[..., Any] | None:
    """The Python source function of the family's ``hook`` where the family compiles it ``inline="always"`` (the
    dispatch then inlines its body, as a call written in the caller would), else None (the dispatch inlines a call
    to it, ``_call_k``). Its arguments must carry the contract's names (Numba matches them by name)."""
    kernel = getattr(family, hook)
    if getattr(kernel, "targetoptions", {}).get("inline") != "always":
        return None
    names = tuple(inspect.signature(kernel.py_func).parameters)
    if names != KERNEL_HOOKS[hook][0]:
        raise ImportError(f"{getattr(family, '__name__', family)}.{hook} takes {names}, the contract's hook "
                          f"{KERNEL_HOOKS[hook][0]} (variants/contract.py KERNEL_HOOKS)")
    py_func: Callable[..., Any] = kernel.py_func
    return py_func


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
