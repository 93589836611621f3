"""MkDocs hooks of the documentation site (``mkdocs.yml``: ``hooks``): pages made from files outside ``docs/``
at build time, and links to the repository turned into links the site can follow.

Generated pages (nothing is copied into ``docs/``):

| page | made from |
|---|---|
| ``index.md`` | ``README.md`` (the front door is the home page) |
| ``changelog.md`` | ``CHANGELOG.md`` |
| ``notebooks/index.md`` | ``notebooks/README.md`` |
| ``notebooks/NAME.md`` | ``notebooks/NAME.ipynb``, its committed outputs rendered by nbconvert |
| ``api/index.md`` | the list of modules of the package |
| ``api/MODULE.md`` | one module's docstrings (mkdocstrings: ``::: MODULE``) |

Generated text: ``<!-- agent-kinds -->`` in a page becomes the table of agent kinds and their arguments
(``tarocchi_rl.agents.specs.spec_table_markdown``, from the kinds' own declarations).

Links: a Markdown link from a page to a file of the repository outside ``docs/`` (``../tarocchi_rl/arena.py``,
``../notebooks/01_games.ipynb``, ``../CHANGELOG.md``) points at the page made from it; a module at its API page; any
other file becomes its path as code (the site does not serve the repository).
"""

from __future__ import annotations

import functools
import importlib.util
import posixpath
import re
from pathlib import Path
from types import ModuleType
from typing import Any

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent


@functools.cache
def installed_layers() -> ModuleType:
    """``tools/installed_layers.py`` (not a package): pyproject's package-dir and the installed layout."""
    spec = importlib.util.spec_from_file_location("installed_layers", ROOT / "tools" / "installed_layers.py")
    assert spec is not None and spec.loader is not None
    tools = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tools)
    return tools


#: Python packages documented in the API reference: (folder in the repository, dotted name), from package-dir
PACKAGES = tuple((folder.relative_to(ROOT).as_posix(), package)
                 for package, folder in installed_layers().package_dirs(ROOT).items())
LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")
LAID_OUT: list[Path] = []  # the temporary installed layouts made for mkdocstrings (removed after the build)
ORIGIN: dict[str, str] = {}  # generated page -> the repository file it is made from (for its relative links)


@functools.cache
def modules() -> tuple[str, ...]:
    """Every module of the package, dotted, sorted (``__init__`` as the package itself): the Python files whose
    folders are packages (an ``__init__.py`` in each: not, say, Alembic's migration scripts)."""
    out = set()
    for folder, dotted in PACKAGES:
        base = ROOT / folder
        for path in base.rglob("*.py"):
            rel = path.relative_to(base).with_suffix("")
            folders = [base.joinpath(*rel.parts[:k]) for k in range(1, len(rel.parts))]
            if "__pycache__" in rel.parts or not all((f / "__init__.py").is_file() for f in folders):
                continue
            parts = [p for p in rel.parts if p != "__init__"]
            out.add(".".join([dotted, *parts]))
    return tuple(sorted(out))


def module_of(repo_path: str) -> str | None:
    """The dotted module of a repository path (``tarocchi_rl/core/trick.py`` -> ``tarocchi_rl.core.trick``)."""
    for folder, dotted in PACKAGES:
        if repo_path.startswith(folder + "/") and repo_path.endswith(".py"):
            parts = [p for p in repo_path[len(folder) + 1:-3].split("/") if p != "__init__"]
            return ".".join([dotted, *parts])
        if repo_path.rstrip("/") == folder:
            return dotted
    return None


def target_page(repo_path: str) -> str | None:
    """The site page a repository file is shown as, or None."""
    if repo_path.startswith("docs/"):
        return repo_path[len("docs/"):]
    if repo_path == "CHANGELOG.md":
        return "changelog.md"
    if repo_path == "README.md":
        return "index.md"
    if repo_path in ("notebooks/README.md", "notebooks", "notebooks/"):
        return "notebooks/index.md"
    if repo_path.startswith("notebooks/") and repo_path.endswith(".ipynb"):
        return repo_path[:-len(".ipynb")] + ".md"
    module = module_of(repo_path)
    if module is not None and module in modules():
        return f"api/{module}.md"
    return None


def rewrite_links(markdown: str, origin: str, page: str) -> str:
    """Links of ``markdown`` (written in the repository file ``origin``, shown as the site page ``page``) that
    leave ``docs/``: to the page made from their target, else their target's path as code."""
    origin_dir = posixpath.dirname(origin)

    def one(m: re.Match[str]) -> str:
        bang, text, target = m.groups()
        if "://" in target or target.startswith(("#", "mailto:")):
            return m.group(0)
        path, _, anchor = target.partition("#")
        repo_path = posixpath.normpath(posixpath.join(origin_dir, path)) if path else origin
        if repo_path.startswith("docs/") and origin.startswith("docs/"):
            return m.group(0)  # between pages of docs/: MkDocs checks these
        new = target_page(repo_path)
        if new is None:
            return m.group(0) if bang else (text if text.startswith("`") else f"{text} (`{repo_path}`)")
        rel = posixpath.relpath(new, posixpath.dirname(page) or ".")
        return f"{bang}[{text}]({rel}{'#' + anchor if anchor else ''})"

    return LINK.sub(one, markdown)


def notebook_page(path: Path) -> str:
    """A notebook as a page: its cells and committed outputs as HTML (nbconvert's basic template)."""
    import nbconvert
    import nbformat

    body, _ = nbconvert.HTMLExporter(template_name="basic").from_notebook_node(nbformat.read(path, as_version=4))
    title = path.stem.replace("_", " ")
    return f"# {title}\n\n`notebooks/{path.name}`, as committed (run by `make test`).\n\n{body}\n"


def api_index(names: list[str]) -> str:
    rows = "\n".join(f"- [`{n}`]({n}.md)" for n in names)
    return ("# API reference\n\nFrom the docstrings of every module, in the order of the layers "
            "(see [the architecture](../architecture.md)).\n\n" + rows + "\n")


def add(files: Files, config: Any, uri: str, content: str, origin: str) -> None:
    ORIGIN[uri] = origin
    files.append(File.generated(config, uri, content=content))


def on_files(files: Files, config: Any) -> Files:
    add(files, config, "index.md", (ROOT / "README.md").read_text(), "README.md")
    add(files, config, "changelog.md", (ROOT / "CHANGELOG.md").read_text(), "CHANGELOG.md")
    add(files, config, "notebooks/index.md", (ROOT / "notebooks" / "README.md").read_text(), "notebooks/README.md")
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        add(files, config, f"notebooks/{nb.stem}.md", notebook_page(nb), f"notebooks/{nb.name}")
    names = modules()
    add(files, config, "api/index.md", api_index(names), "docs/api/index.md")
    for n in names:
        add(files, config, f"api/{n}.md", f"# `{n}`\n\n::: {n}\n", f"docs/api/{n}.md")
    return files


AGENT_KINDS = "<!-- agent-kinds -->"  # in a page: replaced by the table of agent kinds, from their declarations


def agent_kinds_table() -> str:
    from tarocchi_rl.agents.specs import spec_table_markdown

    return spec_table_markdown()


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    uri = page.file.src_uri
    if AGENT_KINDS in markdown:
        markdown = markdown.replace(AGENT_KINDS, agent_kinds_table())
    return rewrite_links(markdown, ORIGIN.get(uri, f"docs/{uri}"), uri)


@event_priority(100)  # before mkdocstrings reads its handler's paths
def on_config(config: Any) -> Any:
    """mkdocstrings reads the package as it is installed: ``agents/`` and ``envs/`` laid out under ``tarocchi_rl/``
    (pyproject's package-dir), in a temporary folder, by the same code the layers contract uses."""
    import tempfile

    tree = Path(tempfile.mkdtemp(prefix="tarocchi-api-"))
    LAID_OUT.append(tree)
    installed_layers().lay_out(ROOT, tree)
    config["plugins"]["mkdocstrings"].config["handlers"]["python"]["paths"] = [str(tree)]
    return config


def on_shutdown() -> None:
    import shutil

    while LAID_OUT:
        shutil.rmtree(LAID_OUT.pop(), ignore_errors=True)
