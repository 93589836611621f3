"""Named offsets from one declaration: an ordered list of rows (label, width, texts) gives each name its offset,
the layout's total and the Markdown table that documents it.

A kernel module declares a layout once, binds each offset as a plain module-level ``int`` (Numba compiles a
global int into a kernel as a constant, exactly like a literal) and checks the bindings at import::

    META_LAYOUT = Layout("meta", ("column(s)", "field"), [
        ("PHASE", 1, "phase"),
        ("SIDE + s", 4, "per seat"),
        ("", 2),                          # unused entries
    ], total="N_META")
    PHASE = META_LAYOUT["PHASE"]          # 0
    SIDE = META_LAYOUT["SIDE"]            # 1
    N_META = META_LAYOUT.total            # 7
    META_LAYOUT.check_bound(globals())    # every name bound to its offset, N_META to the total

Its docstring shows ``META_LAYOUT.table()`` verbatim, and a test checks it (:func:`tables_missing_from`): the
table is generated, never edited by hand (print the new one after changing a row).

A row's label is its table's name cell: the constant's name, then optionally `` + `` and how an entry within it
is indexed (``SIDE + s``: entries SIDE .. SIDE + 3). An empty label marks unused entries. Offsets follow the
rows' order, so the layout is contiguous, without overlap, and ends at its total by construction.
"""

import re
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
_TABLE_WIDTH = 120  # the line length of the project (ruff)
_MIN_LAST_COLUMN = 20


class Field(NamedTuple):
    """One row of a layout: ``width`` entries from ``offset`` (``name`` "" for unused entries)."""

    name: str
    label: str
    offset: int
    width: int
    texts: tuple[str, ...]


class Layout:
    """An ordered declaration of named fields, their offsets (plain ints) and its Markdown table.

    ``name``: what the layout is called (in error messages); ``headers``: the table's label column and text
    columns; ``rows``: (label, width, *texts) in order, width an int >= 1, texts strings, at most one per text
    column; ``total``: the name of the constant bound to the layout's size. ValueError names a bad row.
    """

    def __init__(self, name: str, headers: Sequence[str], rows: Iterable[Sequence], total: str) -> None:
        self.name = name
        self.headers = tuple(headers)
        self.total_name = total
        if not self.headers:
            raise ValueError(f"layout {name}: no table headers (the label column's at least)")
        fields: list[Field] = []
        offset = 0
        for k, row in enumerate(rows):
            fields.append(self._field(k, row, offset))
            offset += fields[-1].width
        self.fields = tuple(fields)
        self.total = offset
        self._offsets: dict[str, int] = {}
        for f in self.fields:
            if f.name:
                if f.name in self._offsets or f.name == total:
                    raise ValueError(f"layout {name}: name {f.name} declared twice")
                self._offsets[f.name] = f.offset

    def _field(self, k: int, row: Sequence, offset: int) -> Field:
        where = f"layout {self.name}, row {k}"
        if len(row) < 2:
            raise ValueError(f"{where}: a row is (label, width, *texts), got {row!r}")
        label, width, texts = row[0], row[1], tuple(row[2:])
        name = str(label).split(" + ")[0].strip()
        if name and not _NAME.fullmatch(name):
            raise ValueError(f"{where}: label {label!r} does not start with an UPPER_CASE constant name")
        if not isinstance(width, int) or isinstance(width, bool) or width < 1:
            raise ValueError(f"{where} ({label!r}): width must be an int >= 1, got {width!r}")
        if not all(isinstance(t, str) for t in texts):
            raise ValueError(f"{where} ({label!r}): texts must be strings, got {texts!r}")
        if len(texts) > len(self.headers) - 1:
            raise ValueError(f"{where} ({label!r}): {len(texts)} texts for {len(self.headers) - 1} text columns")
        return Field(name, str(label), offset, width, texts)

    def __getitem__(self, name: str) -> int:
        """The offset of field ``name`` (a plain int)."""
        try:
            return self._offsets[name]
        except KeyError:
            raise KeyError(f"layout {self.name} declares no field {name!r}") from None

    def names(self) -> tuple[str, ...]:
        """The declared names, in order (unused rows left out)."""
        return tuple(self._offsets)

    def check_bound(self, namespace: Mapping[str, object]) -> None:
        """Raise if a declared name (or the total's name) is not bound in ``namespace`` to its value as an int."""
        wrong = [f"{n} (expected {v}, bound {repr(namespace[n]) if n in namespace else 'nothing'})"
                 for n, v in [*self._offsets.items(), (self.total_name, self.total)]
                 if type(namespace.get(n)) is not int or namespace.get(n) != v]
        if wrong:
            raise RuntimeError(f"layout {self.name}: module constants differ from the declaration: {', '.join(wrong)}")

    def table(self, max_width: int = _TABLE_WIDTH) -> str:
        """The layout as a Markdown table of at most ``max_width`` characters a line: offset(s), then the label
        and text columns; the last column's long texts wrap onto continuation rows (the other cells empty)."""
        head = ("offset", *self.headers)
        body: list[tuple[str, ...]] = []
        for f in self.fields:
            span = str(f.offset) if f.width == 1 else f"{f.offset} .. {f.offset + f.width - 1}"
            texts = f.texts + ("",) * (len(self.headers) - 1 - len(f.texts))
            body.append((span, f.label or "(unused)", *texts))
        widths = [max(len(r[c]) for r in (head, *body)) for c in range(len(head))]
        room = max_width - sum(widths[:-1]) - 3 * len(widths) - 1  # what the last column may take
        if room < _MIN_LAST_COLUMN:
            raise ValueError(f"layout {self.name}: the table does not fit in {max_width} characters a line")
        widths[-1] = min(widths[-1], room)
        rows = [head]
        for r in body:
            lines = textwrap.wrap(r[-1], room) or [""]
            rows.append((*r[:-1], lines[0]))
            rows += [("",) * (len(r) - 1) + (more,) for more in lines[1:]]

        def line(cells: Sequence[str]) -> str:
            return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

        rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
        return "\n".join([line(rows[0]), rule, *(line(r) for r in rows[1:])])


def tables_missing_from(doc: str | None, *layouts: Layout) -> list[str]:
    """The names of the layouts whose :meth:`Layout.table` is not in ``doc`` verbatim (a docstring, so that
    readers of the source and static documentation tools see the table a test checks against its declaration).
    """
    return [lay.name for lay in layouts if doc is None or lay.table() not in doc]
