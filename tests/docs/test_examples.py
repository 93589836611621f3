"""Every ```python block of README.md and of the documentation pages runs as written (the examples are tested,
not just shown)."""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCKS = [(page.relative_to(ROOT), k, block) for page in PAGES
          for k, block in enumerate(re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S))]


def test_readme_and_pages_have_examples():
    assert sum(1 for page, _, _ in BLOCKS if page.name == "README.md") >= 1
    assert len({page for page, _, _ in BLOCKS}) >= 4


@pytest.mark.parametrize("page, k, block", BLOCKS, ids=[f"{p}:{k}" for p, k, _ in BLOCKS])
def test_example_runs(page, k, block, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(block, f"{page} python block {k}", "exec"), {"__name__": "__docs__"})
