"""``key=value`` text, read one way everywhere: agent specs (``ismcts:iterations=200,c=0.7``), ``--set KEY=VALUE``
(training configs), ``--option KEY=VALUE`` (variant options), ``serve --agents NAME=SPEC``.

- :func:`split_outside_quotes`: a comma-separated list, commas inside double quotes kept (``cmd:"prog a,b"``)
- :func:`pair_of`: a piece as ``(KEY, VALUE)`` when it is ``KEY=VALUE`` with an identifier KEY, else None
- :func:`key_value` / :func:`key_values`: ``KEY=VALUE`` arguments, a ValueError naming the option otherwise
- :func:`unquote`: a value written in double quotes, without them

What a value means (a number, a JSON value, a YAML value, an agent spec) is for the reader of each key to say.
"""

from collections.abc import Iterable

__all__ = ["key_value", "key_values", "pair_of", "split_outside_quotes", "unquote"]

SHOWN_CHARS = 40  # of a malformed argument, quoted in an error message


def split_outside_quotes(text: str, what: str) -> list[str]:
    """``text`` split on the commas outside double quotes (the quotes stay in the pieces); an unclosed quote is a
    ValueError naming ``what`` (``'cmd:"prog --a x,y",heuristic'`` -> ``['cmd:"prog --a x,y"', 'heuristic']``)."""
    pieces, start, quoted = [], 0, False
    for k, ch in enumerate(text):
        if ch == '"':
            quoted = not quoted
        elif ch == "," and not quoted:
            pieces.append(text[start:k])
            start = k + 1
    if quoted:
        raise ValueError(f"unclosed double quote in {what} {text!r}")
    pieces.append(text[start:])
    return pieces


def pair_of(piece: str) -> tuple[str, str] | None:
    """``(KEY, VALUE)`` of a piece ``KEY=VALUE`` whose KEY is an identifier (both stripped); None for anything else
    (a bare value such as a path or a quoted command line, which may hold ``=`` too)."""
    key, eq, value = piece.partition("=")
    return (key.strip(), value.strip()) if eq and key.strip().isidentifier() else None


def key_value(text: str, what: str, form: str = "key=value") -> tuple[str, str]:
    """``KEY=VALUE`` -> (KEY, VALUE), both stripped (KEY may be dotted: ``ppo.lr=1e-4``); anything else is a
    ValueError ``{what} 'TEXT': expected {form}``."""
    key, eq, value = text.partition("=")
    if not eq or not key.strip():
        raise ValueError(f"{what} {text[:SHOWN_CHARS]!r}: expected {form}")
    return key.strip(), value.strip()


def key_values(texts: Iterable[str], what: str, form: str = "key=value") -> dict[str, str]:
    """Repeated ``KEY=VALUE`` arguments -> {KEY: VALUE} (a later KEY replaces an earlier one), by :func:`key_value`."""
    return dict(key_value(t, what, form) for t in texts)


def unquote(value: str) -> str:
    """``"TEXT"`` -> ``TEXT``; any other value as it is."""
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else value
