"""An import-linter contract type: the layers contract checked on the package as pip installs it.

``pyproject.toml`` installs top-level folders into the package (``[tool.setuptools.package-dir]``: ``agents/`` as
``tarocchi_rl.agents``, ``envs/`` as ``tarocchi_rl.envs``), one mechanism for editable installs and wheels. The
import graph that lint-imports builds from the checkout alone has no ``tarocchi_rl.agents``: this contract type
lays the package out as installed (the mapped folders' Python files copied under the package, in a temporary
folder) and checks its layers, with every option of the built-in ``layers`` type, on that graph.

    [tool.importlinter]
    contract_types = ["installed_layers: tools.installed_layers.InstalledLayersContract"]

lint-imports runs from the project root (where ``pyproject.toml`` is), which it puts on ``sys.path``.
"""

import importlib
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import grimp
from importlinter.contracts.layers import LayersContract
from importlinter.domain.contract import ContractCheck

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover  (import-linter depends on tomli there)
    import tomli as tomllib

PYPROJECT = "pyproject.toml"


def _tool(root: Path) -> dict[str, Any]:
    with open(root / PYPROJECT, "rb") as f:
        tool: dict[str, Any] = tomllib.load(f)["tool"]
    return tool


def package_dirs(root: Path) -> dict[str, Path]:
    """``[tool.setuptools.package-dir]`` of ``root/pyproject.toml``: {package: its folder}, parents first."""
    mapping = _tool(root)["setuptools"]["package-dir"]
    return {package: root / folder for package, folder in sorted(mapping.items(), key=lambda kv: kv[0].count("."))}


def lay_out(root: Path, target: Path) -> None:
    """The Python files of every mapped package of ``root`` copied to where an install puts them, under ``target``."""
    def not_python(folder: str, names: list[str]) -> list[str]:
        return [n for n in names if not n.endswith(".py") and not (Path(folder) / n).is_dir() or n == "__pycache__"]

    for package, folder in package_dirs(root).items():
        if any(folder.rglob("*.py")):
            shutil.copytree(folder, target.joinpath(*package.split(".")), ignore=not_python, dirs_exist_ok=True,
                            symlinks=True)


def installed_graph(root: Path) -> grimp.ImportGraph:
    """The import graph of the root packages of ``[tool.importlinter]``, laid out as installed from the project at
    ``root``."""
    config = _tool(root)["importlinter"]
    roots = config.get("root_packages") or [config["root_package"]]
    with tempfile.TemporaryDirectory(prefix="installed-layers-") as tmp:
        lay_out(root, Path(tmp))
        sys.path.insert(0, tmp)
        importlib.invalidate_caches()
        try:
            return grimp.build_graph(*roots, cache_dir=None)
        finally:
            sys.path.remove(tmp)
            importlib.invalidate_caches()


class InstalledLayersContract(LayersContract):
    """The built-in layers contract, on the graph of the package as installed (module docstring)."""

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        return super().check(installed_graph(Path.cwd()), verbose)
