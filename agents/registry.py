"""The agent kinds in one registry: each kind (``random``, ``ppo``, ``ismcts``, ...) declares its spec arguments
once (:class:`~.args.Arg`) and how its agent is built; one parser reads every spec (:func:`make_agent`); the spec
help (``tarocchi-rl agents``) and the docs table (:func:`spec_table_markdown`) are written from the same
declarations.

A spec is ``KIND`` or ``KIND:ARGS``, ARGS being comma-separated pieces (commas inside double quotes kept): ``key=value``
pieces, and one bare piece for the kind's positional argument (``ppo:PATH``, ``cmd:"PROGRAM ARGS"``). After a
nested spec (an argument of type ``spec``: ``compose:play=ismcts:iterations=50,c=0.7,rest=random``) the pieces
whose key is not one of the kind's own belong to that spec.

Adding a kind is one module of ``agents/`` (plus its tests): it calls :func:`register_kind` when imported, and the
registry imports every module of the package the first time it is read::

    register_kind(AgentKind("mykind", "what it plays", build=lambda values, seed, label: MyAgent(values["x"]),
                            args=(Arg("x", "int", "how much", default=0, lo=0, hi=10),)))

``make_agent("mykind:x=3")`` builds it, and ``tarocchi-rl agents`` lists it with its arguments.
"""

import importlib
import itertools
import pkgutil
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tarocchi_rl.keyvalue import pair_of, split_outside_quotes
from tarocchi_rl.policies import AgentLike, make_baseline

from .args import Arg

__all__ = ["AgentKind", "Arg", "agent_kinds", "known_specs", "make_agent", "register_kind", "spec_help",
           "spec_table_markdown", "unregister_kind"]

#: (values of every argument by name, the seed the spec is built with, the agent's name) -> the agent
Build = Callable[[dict[str, Any], int, str], AgentLike]


@dataclass(frozen=True)
class AgentKind:
    """One kind of agent spec: its name (the spec's ``KIND``), a one-line summary, its arguments and its builder.
    ``pair_form`` names a piece in error messages (``key=value``; compose: ``kind=SPEC``)."""

    name: str
    summary: str
    build: Build
    args: tuple[Arg, ...] = ()
    pair_form: str = "key=value"

    def __post_init__(self) -> None:
        names = [a.name for a in self.args]
        if not self.name.isidentifier() or self.name != self.name.lower():
            raise ValueError(f"agent kind {self.name!r}: a kind's name is a lower-case identifier")
        if len(set(names)) != len(names) or sum(a.positional for a in self.args) > 1:
            raise ValueError(f"agent kind {self.name!r}: argument names must differ, one positional at most")

    def arg(self, name: str) -> Arg | None:
        return next((a for a in self.args if a.name == name), None)

    @property
    def positional(self) -> Arg | None:
        return next((a for a in self.args if a.positional), None)

    def usage(self) -> str:
        """``ppo:PATH[,key=value...]``, ``ismcts[:key=value,...]``, ``random``."""
        p = self.positional
        if p is not None:
            rest = "[,key=value...]" if len(self.args) > 1 else ""
            return f"{self.name}:{p.shown_name}{rest}" if p.required else f"{self.name}[:{p.shown_name}{rest}]"
        return f"{self.name}:{self.pair_form}[,...]" if self.args else self.name

    def parse(self, text: str) -> dict[str, Any]:
        """The value of every argument of ``KIND:text``: those given, read and checked; the others their default
        (None: not given). A ValueError names the spec kind, the argument and what it accepts."""
        given: dict[str, str] = {}
        nested: str | None = None  # the last spec-valued argument: pieces not of this kind continue it
        for piece in (p.strip() for p in split_outside_quotes(text, f"{self.name} spec")):
            if not piece:
                continue
            pair = pair_of(piece)
            arg = self.arg(pair[0]) if pair is not None else None
            if arg is None and nested is not None:
                given[nested] += "," + piece
                continue
            if arg is None and pair is None:
                arg = self.positional
            if arg is None:
                raise self._unknown(pair[0] if pair is not None else piece)
            if arg.name in given:
                raise ValueError(f"{self.name} spec: {arg.name} given twice")
            given[arg.name] = piece if pair is None else pair[1]
            nested = arg.name if arg.type == "spec" else None
        values: dict[str, Any] = {}
        for a in self.args:
            if a.name in given:
                values[a.name] = a.parse(self.name, given[a.name])
            elif a.required:
                raise ValueError(f"{self.name} spec needs {a.help}: {self.usage()}")
            else:
                values[a.name] = a.default
        return values

    def _unknown(self, piece: str) -> ValueError:
        shown = piece if len(piece) <= 40 else piece[:37] + "..."
        if not self.args:
            return ValueError(f"{self.name} spec: unknown argument {shown!r} ({self.name} takes no arguments)")
        known = ", ".join(a.shown_name for a in self.args)
        return ValueError(f"{self.name} spec: unknown argument {shown!r} (expected {self.pair_form}; known: {known})")


HELP_WIDTH = 118  # characters of a line of the spec help
_KINDS: dict[str, AgentKind] = {}
_ORDER: dict[str, tuple[str, int]] = {}  # kind -> (its module, registration count): a stable listing order
_COUNT = itertools.count()
_LOADED: list[bool] = []  # [True] once every module of the package has been imported


def register_kind(kind: AgentKind) -> AgentKind:
    """Add ``kind`` to the registry (a ValueError when another kind has its name); returns it."""
    if _KINDS.get(kind.name, kind) is not kind:
        raise ValueError(f"agent kind {kind.name!r} is registered already")
    _KINDS[kind.name] = kind
    _ORDER[kind.name] = (getattr(kind.build, "__module__", "") or "", next(_COUNT))
    return kind


def unregister_kind(name: str) -> None:
    """Remove the kind ``name`` (a test's own kind, for instance); nothing when there is none."""
    _KINDS.pop(name, None)
    _ORDER.pop(name, None)


def agent_kinds() -> dict[str, AgentKind]:
    """Every registered kind by name, in a stable order (by module, then as registered); the first call imports
    every module of this package, so that the built-in kinds are registered."""
    if not _LOADED:
        _LOADED.append(True)
        package = __name__.rpartition(".")[0]
        for info in pkgutil.iter_modules(sys.modules[package].__path__):
            importlib.import_module(f"{package}.{info.name}")
    return {name: _KINDS[name] for name in sorted(_KINDS, key=_ORDER.__getitem__)}


def make_agent(spec: str | AgentLike, seed: int = 0) -> AgentLike:
    """The agent of ``spec`` (an agent object is returned as it is); ``seed`` seeds it unless the spec says
    ``seed=N``. An unknown kind or a bad argument is a ValueError naming it."""
    if not isinstance(spec, str):
        return make_baseline(spec, seed)
    name, _, text = spec.strip().partition(":")
    kind = agent_kinds().get(name.strip().lower())
    if kind is None:
        raise ValueError(f"unknown agent spec {spec!r} (known: {known_specs()})")
    values = kind.parse(text)
    if kind.arg("seed") is not None and values["seed"] is None:
        values["seed"] = seed
    return kind.build(values, seed, f"{kind.name}:{text}" if text else kind.name)


def known_specs() -> str:
    """Every kind in short (``random, ..., ppo:PATH, ismcts:key=value``), for error messages."""
    short = [k.usage().split("[")[0] for k in agent_kinds().values()]
    return ", ".join(short) + " (tarocchi-rl agents: every kind and its arguments)"


def spec_help() -> str:
    """The spec help: every kind, its summary and its arguments (type and range, default, meaning)."""
    lines = ["Agent specs: KIND or KIND:ARGS, ARGS comma-separated key=value pieces (double quotes keep commas",
             "inside a value); a bare piece is the kind's positional argument. Several specs: separated by commas.", ""]
    for kind in agent_kinds().values():
        lines += [kind.usage(), *textwrap.wrap(kind.summary, HELP_WIDTH, initial_indent="    ",
                                                subsequent_indent="    ")]
        for a in kind.args:
            head = f"    {a.shown_name:<15} {a.type_text():<20} {a.default_text():<9}"
            lines += textwrap.wrap(a.help, HELP_WIDTH, initial_indent=f"{head} ", subsequent_indent=" " * 51)
    return "\n".join(lines)


def spec_table_markdown() -> str:
    """The spec kinds and their arguments as one Markdown table (for the docs)."""
    rows = ["| spec | argument | type and range | default | meaning |", "|---|---|---|---|---|"]
    for kind in agent_kinds().values():
        rows.append(f"| `{kind.usage()}` | | | | {_cell(kind.summary)} |")
        for a in kind.args:
            cells = (f"`{a.shown_name}`", a.type_text(), a.default_text(), a.help)
            rows.append("| | " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(rows) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")
