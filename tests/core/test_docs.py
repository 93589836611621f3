"""The documents stay true: the batch-state tables in docs/architecture.md are core/state.py's own, every path of
and no file of the repository links a path outside it."""

import pathlib
import re

import tarocchi_rl.core.state as state

ROOT = pathlib.Path(__file__).resolve().parents[2]
TEXT_SUFFIXES = {".md", ".py", ".toml", ".yaml", ".yml", ".cfg", ".txt", ".ipynb", ".js", ".html"}


def _repo_files():
    for path in ROOT.rglob("*"):
        rel = path.relative_to(ROOT)
        if rel.parts[0].startswith(".") or "__pycache__" in rel.parts or rel.parts[0] in ("runs", "build", "dist"):
            continue
        if path.is_file() and path.suffix in TEXT_SUFFIXES and not path.is_symlink():
            yield path


def test_architecture_batch_state_tables_are_the_modules_own():
    doc = (ROOT / "docs" / "architecture.md").read_text()
    block = doc.split("<!-- state-tables:begin -->")[1].split("<!-- state-tables:end -->")[0].strip()
    own = state.__doc__[state.__doc__.index("``meta``"):].strip()
    assert block == own, "copy core/state.py's docstring tables into docs/architecture.md"


def test_no_file_links_outside_the_repository():
    markdown_link = re.compile(r"\]\(([^)\s]+)\)")
    offenders = []
    for path in _repo_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        if "/work/" + "shared" in text or "../" + "shared/" in text:
            offenders.append(f"{path.relative_to(ROOT)}: names the shared folder")
        if path.suffix == ".md":
            for target in markdown_link.findall(text):
                if "://" in target or target.startswith(("#", "mailto:")):
                    continue
                resolved = (path.parent / target.split("#")[0]).resolve()
                if ROOT not in resolved.parents and resolved != ROOT:
                    offenders.append(f"{path.relative_to(ROOT)}: links {target}")
                elif not resolved.exists():
                    offenders.append(f"{path.relative_to(ROOT)}: links {target}, which does not exist")
    assert not offenders, "\n".join(offenders)
