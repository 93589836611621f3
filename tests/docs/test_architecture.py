"""The architecture's rules, checked from the code's syntax trees rather than claimed: no function over 80 lines but
the kernels docs/architecture.md lists (with their current lengths), and no import circle between the package's
modules at run time (imports inside functions count; those under ``if TYPE_CHECKING:`` do not)."""

import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGES = ("tarocchi_rl", "agents", "envs")
MAX_LINES = 80
ARCHITECTURE = ROOT / "docs" / "architecture.md"


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_files() -> dict[str, pathlib.Path]:
    return {module_name(f): f for p in PACKAGES for f in sorted((ROOT / p).rglob("*.py"))}


def long_functions(files: dict[str, pathlib.Path]) -> dict[str, int]:
    """``path::name`` -> lines, for every function (or method) longer than :data:`MAX_LINES`."""
    out = {}
    for path in files.values():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_LINES:
                    out[f"{path.relative_to(ROOT).as_posix()}::{node.name}"] = lines
    return out


def _type_checking_blocks(tree: ast.AST) -> set[int]:
    """The ids of the import nodes under ``if TYPE_CHECKING:`` (annotations only: no import at run time)."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(n) for child in node.body for n in ast.walk(child)}
    return skipped


def import_graph(files: dict[str, pathlib.Path]) -> dict[str, set[str]]:
    """Module -> the package modules it imports at run time (at the top or inside functions)."""
    graph = {}
    for name, path in files.items():
        tree = ast.parse(path.read_text())
        skipped = _type_checking_blocks(tree)
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        deps = set()
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Import):
                deps |= {a.name for a in node.names if a.name in files}
            elif isinstance(node, ast.ImportFrom):
                base = package[: len(package) - node.level + 1] if node.level else []
                module = ".".join([*base, *node.module.split(".")] if node.module else base)
                for a in node.names:
                    deps.add(f"{module}.{a.name}" if f"{module}.{a.name}" in files else module)
        graph[name] = {d for d in deps if d in files and d != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def documented_long_kernels() -> dict[str, int]:
    """The table of docs/architecture.md's "Compiled kernels longer than 80 lines": ``path::name`` -> lines."""
    section = ARCHITECTURE.read_text().split("## Compiled kernels longer than 80 lines", 1)[1].split("\n## ", 1)[0]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^\| `([^`]+)` \| (\d+) \|", section, re.M)}


def test_no_function_is_over_80_lines_but_the_documented_kernels_at_their_documented_lengths():
    found, documented = long_functions(package_files()), documented_long_kernels()
    rows = "\n".join(f"| `{k}` | {n} |" for k, n in sorted(found.items()))
    assert found == documented, f"docs/architecture.md's table of long kernels should list exactly:\n{rows}"


def test_no_import_circle_between_modules_at_run_time():
    circles = cycles(import_graph(package_files()))
    assert not circles, f"modules that import each other (directly or around a circle): {circles}"


def test_the_checks_see_what_they_claim_to(tmp_path, monkeypatch):
    """The graph sees imports inside functions and relative ones, skips TYPE_CHECKING; lengths count every line."""
    files = {"pkg": tmp_path / "pkg" / "__init__.py", "pkg.a": tmp_path / "pkg" / "a.py",
             "pkg.b": tmp_path / "pkg" / "b.py", "pkg.c": tmp_path / "pkg" / "c.py"}
    (tmp_path / "pkg").mkdir()
    files["pkg"].write_text("")
    files["pkg.a"].write_text("def f():\n    from .b import g\n    return g\n")
    files["pkg.b"].write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .c import h\n"
                              "import pkg.a as alias\n")
    files["pkg.c"].write_text("from pkg import b\n" + "def long():\n" + "    x = 1\n" * MAX_LINES)
    graph = import_graph(files)
    assert graph == {"pkg": set(), "pkg.a": {"pkg.b"}, "pkg.b": {"pkg.a"}, "pkg.c": {"pkg.b"}}
    assert cycles(graph) == [["pkg.a", "pkg.b"]]
    monkeypatch.setattr(pathlib.Path, "relative_to", lambda self, other: pathlib.PurePosixPath(self.name))
    assert long_functions(files) == {"c.py::long": MAX_LINES + 1}


# Where a variant's name may be looked up (``get_variant``): the boundaries, where a name comes in from outside.
# Every layer below takes the VariantSpec (or a BatchEnv / config holding it) as a value.
VARIANT_BOUNDARIES = {
    "tarocchi_rl/variants/__init__.py": "the registry itself",
    "tarocchi_rl/batch.py": "BatchEnv(name): the batched core's entry (a spec is taken as it is)",
    "tarocchi_rl/game.py": "make(name): the game API's entry",
    "tarocchi_rl/records.py": "a record names its variant",
    "tarocchi_rl/bot.py": "a bot-protocol message names its variant",
    "tarocchi_rl/policies/onnx_policy.py": "a policy's manifest names its variant",
    "tarocchi_rl/rl/config.py": "a training or expert config names its variant (cfg.spec)",
    "tarocchi_rl/arena/runner.py": "run_arena(name): the arena's entry",
    "tarocchi_rl/arena/deals.py": "write_deals_file(name): the deals command",
    "tarocchi_rl/bench.py": "the bench command",
    "tarocchi_rl/warm.py": "the warm command",
    "tarocchi_rl/web/": "web requests and challenge files name their variant",
    "envs/": "the adapters' constructors (Gymnasium, PettingZoo, OpenSpiel) take a name",
}


def variant_lookups(files: dict[str, pathlib.Path]) -> list[str]:
    """``path:line`` of every call of ``get_variant`` in the packages' code."""
    out = []
    for path in files.values():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
                if name == "get_variant":
                    out.append(f"{path.relative_to(ROOT).as_posix()}:{node.lineno}")
    return out


def test_a_variant_is_looked_up_by_name_only_at_the_boundaries():
    lookups = variant_lookups(package_files())
    outside = [at for at in lookups if not any(at.startswith(b) for b in VARIANT_BOUNDARIES)]
    assert outside == [], f"get_variant below the boundaries (take the VariantSpec instead): {outside}"
    assert len(lookups) >= len(VARIANT_BOUNDARIES)  # the check sees the calls it claims to
