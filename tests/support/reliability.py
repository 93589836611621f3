"""Helpers of the reliability tests: strategies for JSON-ish values and a check that nothing is written."""

import contextlib
import os
import tempfile
from collections.abc import Iterator

from hypothesis import strategies as st

#: any JSON value (what a record, a deals line or a YAML scalar can hold), nested a few levels
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner, max_size=5),
    max_leaves=20,
)


@contextlib.contextmanager
def in_empty_dir() -> Iterator[str]:
    """Run the body in a fresh empty working directory and check that it wrote nothing there."""
    old = os.getcwd()
    with tempfile.TemporaryDirectory() as d:
        os.chdir(d)
        try:
            yield d
            left = sorted(os.listdir(d))
            assert not left, f"files were written: {left}"
        finally:
            os.chdir(old)


def files_under(root: str) -> list[str]:
    """Every path under ``root`` (to check that a call created nothing)."""
    out = []
    for base, dirs, files in os.walk(root):
        out += [os.path.join(base, n) for n in dirs + files]
    return sorted(out)
