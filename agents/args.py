"""The arguments of agent specs: each declared once, as an :class:`Arg` (name, type, range, default, help), which
reads it from a spec (:meth:`Arg.parse`), checks a value given from Python (:meth:`Arg.check`) and describes it
for the spec help and the docs (:meth:`Arg.type_text`, :meth:`Arg.default_text`).

| type       | a spec's text                        | value                                                    |
|------------|--------------------------------------|----------------------------------------------------------|
| ``int``    | ``5``, ``1e6`` (an integral number)  | an int in [lo, hi]                                       |
| ``number`` | ``0.7``, ``1e-3``                    | a finite float in [lo, hi] (``above``: (lo, hi])         |
| ``bool``   | ``true``, ``false``, ``1``, ``0``    | a bool                                                   |
| ``choice`` | one of ``choices``                   | that string                                              |
| ``seed``   | ``0`` ... ``2**63 - 1``              | an int (:func:`tarocchi_rl.bits.parse_seed`)             |
| ``path``   | a file or directory (quotes optional)| the path, one the system can look up (:func:`check_spec_path`) |
| ``text``   | anything (quotes optional)           | the string                                               |
| ``spec``   | an agent spec (``compose:play=SPEC``)| the string, with the pieces after it that are no key of the kind |

Every refusal is a one-line ValueError naming where (``ismcts spec: iterations``), what is allowed and what was
given.
"""

import math
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from tarocchi_rl.bits import SEED_MAX, check_seed, parse_seed
from tarocchi_rl.keyvalue import unquote

__all__ = ["GREEDY", "SEED", "Arg", "check_spec_path", "defaults"]

TYPES = ("int", "number", "bool", "choice", "seed", "path", "text", "spec")
TRUE, FALSE = ("true", "1"), ("false", "0")


def _fmt(x: float) -> str:
    return "2**63-1" if x == SEED_MAX else f"{x:g}" if isinstance(x, float) else str(x)


@dataclass(frozen=True)
class Arg:
    """One argument of a spec kind.

    ``default`` is the value when the spec does not give it (None: not given, the kind decides; ``seed``
    arguments left out take the seed the spec is built with). ``positional``: the spec's bare piece is this
    argument (``ppo:PATH``; ``path=PATH`` works too), shown as ``metavar``; ``required``: a spec without it is
    refused, saying ``needs {help}``."""

    name: str
    type: str
    help: str
    default: Any = None
    lo: float | None = None
    hi: float | None = None
    above: bool = False
    choices: tuple[str, ...] = ()
    positional: bool = False
    required: bool = False
    metavar: str = ""

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"argument {self.name}: type must be one of {', '.join(TYPES)}, got {self.type!r}")
        if self.type in ("int", "number") and self.lo is None:
            raise ValueError(f"argument {self.name}: a number needs its range (lo, hi)")

    # -- reading and checking ----------------------------------------------------------------------------------
    def parse(self, kind: str, text: str) -> Any:
        """The value of ``key=text`` in a ``kind`` spec (a ValueError ``{kind} spec: {name} must be ...``)."""
        where = f"{kind} spec: {self.name}"
        text = text.strip()
        if self.type in ("int", "number"):
            return self.check(where, _number(where, text, self.type == "int"), shown=text)
        if self.type == "bool":
            if text.lower() not in TRUE + FALSE:
                raise ValueError(f"{where} must be true or false, got {text!r}")
            return text.lower() in TRUE
        if self.type == "seed":
            return parse_seed(where, text)
        if self.type == "path":
            return check_spec_path(kind, unquote(text))
        return self.check(where, text if self.type == "spec" else unquote(text))

    def check(self, where: str, value: Any, shown: str | None = None) -> Any:
        """``value`` given from Python (an agent's constructor), checked against the type and range: the value
        (an int or a float for numbers), or a ValueError ``{where} must be ..., got {shown}``."""
        shown = repr(value) if shown is None else shown
        if self.type in ("int", "number"):
            return self._check_number(where, value, shown)
        if self.type == "choice" and value not in self.choices:
            raise ValueError(f"{where} must be {' or '.join(self.choices)}, got {shown}")
        if self.type == "seed":
            return check_seed(where, value)
        return value

    def _check_number(self, where: str, value: Any, shown: str) -> int | float:
        integer = self.type == "int"
        span = self.span()
        what = "an integer" if integer else "a number"
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ValueError(f"{where} must be {what} {span}, got {shown}")
        x: int | float = float(value) if isinstance(value, (float, np.floating)) else int(value)
        if isinstance(x, float) and not math.isfinite(x):
            raise ValueError(f"{where} must be a finite number {span}, got {shown}")
        if integer and isinstance(x, float):
            if not x.is_integer():
                raise ValueError(f"{where} must be {what} {span}, got {shown}")
            x = int(x)
        assert self.lo is not None  # __post_init__
        if not (self.lo < x if self.above else self.lo <= x) or (self.hi is not None and not x <= self.hi):
            raise ValueError(f"{where} must be {span}, got {shown}")
        return x if integer else float(x)

    # -- describing --------------------------------------------------------------------------------------------
    def span(self) -> str:
        """The range in words: ``>= 1 and <= 256``, ``> 0 and <= 3600``."""
        assert self.lo is not None
        low = f"{'>' if self.above else '>='} {_fmt(self.lo)}"
        return low if self.hi is None else f"{low} and <= {_fmt(self.hi)}"

    def type_text(self) -> str:
        """The type and range for the spec help: ``int 1..256``, ``number (0, 3600]``, ``random|heuristic``."""
        if self.type in ("int", "number"):
            hi = "" if self.hi is None else _fmt(self.hi)
            if self.type == "int":
                return f"int {_fmt(self.lo or 0)}..{hi}"
            return f"number {'(' if self.above else '['}{_fmt(self.lo or 0)}, {hi}]"
        if self.type == "choice":
            return "|".join(self.choices)
        if self.type == "seed":
            return f"int 0..{_fmt(SEED_MAX)}"
        return {"bool": "true|false", "spec": "agent spec"}.get(self.type, self.type)

    def default_text(self) -> str:
        """The default for the spec help: ``required``, ``-`` (not set) or the value."""
        if self.required:
            return "required"
        if self.default is None:
            return "-"
        return str(self.default).lower() if isinstance(self.default, bool) else _fmt(self.default)

    @property
    def shown_name(self) -> str:
        """How the help names it: the metavar of a positional argument, else its key."""
        return (self.metavar or self.name.upper()) if self.positional else self.name


def _number(where: str, text: str, integer: bool) -> int | float:
    """A number written as text: an int when it is one, else a float (``1e6`` too, checked integral later)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{where} must be {'an integer' if integer else 'a number'}, got {text!r}") from None


def check_spec_path(kind: str, path: str) -> str:
    """A spec's file or directory path, refused (a ValueError naming it) when the system cannot even look it up:
    a NUL character, a name too long, ... (a path that does not exist is left to the loader, which says so)."""
    try:
        os.stat(path)
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as e:
        shown = path if len(path) <= 80 else path[:77] + "..."
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise ValueError(f"{kind} spec: cannot use the path {shown!r}: {why}") from None
    return path


def defaults(args: tuple[Arg, ...]) -> dict[str, Any]:
    """{name: default} of a kind's arguments (an agent constructor's defaults, read from the one declaration)."""
    return {a.name: a.default for a in args}


# arguments that several kinds share
GREEDY = Arg("greedy", "bool", "play the most probable action (false: sample from the policy)", default=True)
SEED = Arg("seed", "seed", "the agent's random seed (left out: the seed it is built with)")
