"""Every phase of every family in one table, by code: the engine's three (:mod:`tarocchi_rl.core.phases`) and
each family's ``PHASES``, gathered from the registry's ``FAMILIES`` (a new family's phases join by its line there).

Checked at import: codes unique (a phase two families share, such as the bidding of French tarot and tarok, is
the same record in both, but for its ``what``), kinds and observation slots valid. Read by the layers above the
engine: the names in records, views and errors, each decision's kind (the compose bot, the expert's search
budgets), which phases are bidding, declarations or trick phases (the web table).
``python -m tarocchi_rl.variants.phases`` prints the table.
"""

from ..core.phases import DECISION_KINDS, ENGINE_PHASES, Phase, check_phases
from . import FAMILIES
from .contract import FamilyRules


def _gather_phases(families: tuple[FamilyRules, ...] = FAMILIES) -> tuple[Phase | None, ...]:
    """The phase of each code (None: a code no family uses), from the engine's and ``families``' PHASES (the
    first family's row where two share one); ValueError where two give one code different phases."""
    by_code: dict[int, tuple[Phase, str]] = {}
    owners: list[tuple[str, tuple[Phase, ...]]] = [("the engine", tuple(ENGINE_PHASES))]
    owners += [(getattr(f, "__name__", repr(f)), tuple(f.PHASES)) for f in families]
    for owner, rows in owners:
        check_phases(rows, owner)
        for p in rows:
            if p.code in by_code and by_code[p.code][0]._replace(what="") != p._replace(what=""):
                raise ValueError(f"phase code {p.code} is {by_code[p.code][0].name!r} in {by_code[p.code][1]} "
                                 f"but {p.name!r} in {owner}")
            by_code.setdefault(p.code, (p, owner))
    return tuple(by_code[c][0] if c in by_code else None for c in range(max(by_code) + 1))


PHASES = _gather_phases()
PHASE_NAMES = tuple(p.name if p else f"phase{c}" for c, p in enumerate(PHASES))
# DECISION_KIND_OF_PHASE[code]: the index of the phase's kind in DECISION_KINDS (-1: no decision, or unused)
DECISION_KIND_OF_PHASE = tuple(DECISION_KINDS.index(p.kind) if p and p.kind else -1 for p in PHASES)
BIDDING_PHASES = tuple(c for c, p in enumerate(PHASES) if p and p.bidding)
# the commitments (calls, declarations): decisions of kind ``bid`` outside the auction
DECLARATION_PHASES = tuple(c for c, p in enumerate(PHASES) if p and p.kind == "bid" and not p.bidding)
TRICK_PHASES = tuple(c for c, p in enumerate(PHASES) if p and p.trick)  # a trick may lie on the table


def _phases_table() -> str:
    """The phases as a Markdown table (code, name, kind, who acts and what)."""
    lines = ["| code | phase | kind | who acts, what |", "|---|---|---|---|"]
    lines += [f"| {p.code} | {p.name} | {p.kind or '-'} | {p.what} |" for p in PHASES if p]
    return "\n".join(lines)


if __name__ == "__main__":
    print(_phases_table())
