"""Numba's on-disk cache made to see the package's own imports: a kernel's cache entry is stale when any module of
``tarocchi_rl`` that its module imports (directly or through others) has changed, not only its own file.

Numba keys a cached kernel by its own source file alone. A kernel that calls a kernel of another module has that
callee compiled into it, so after an edit of the callee's file the caller kept running the old code from the cache
(an edit of ``search/inference.py`` left ``search/ismcts.py``'s searches on the old tables). :func:`install` puts
:data:`_LOCATORS` first among Numba's cache locators for this package's files: the same
directories as Numba's own (``NUMBA_CACHE_DIR`` when set, else the ``__pycache__`` beside the file, else the user's
cache directory), with a source stamp that also covers every package module the file imports,
transitively (:func:`dependency_files`: ``from .x import``, ``from ..core.state import``, ``from . import engine``,
``import tarocchi_rl.y``, read from the sources as text, imports inside functions included). Files outside the
package keep Numba's own locators. Editing a module recompiles the kernels of the modules that import it, and
only those.
"""

from __future__ import annotations

import functools
import hashlib
import pickle
import re
from pathlib import Path
from typing import Any

from numba.core import caching

PACKAGE_ROOT = Path(__file__).resolve().parent
PACKAGE = PACKAGE_ROOT.name

# "from .x.y import a, b" / "from tarocchi_rl.x import (a, b)" / "import tarocchi_rl.x.y"; group 1 the module
# (leading dots for a relative one), group 2 the imported names (parenthesised lists may span lines)
_FROM = re.compile(r"^[ \t]*from[ \t]+([.\w]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]*)", re.M)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([\w.]+)", re.M)

# Numba's names moved between versions (0.59: _CacheImpl, _InTreeCacheLocator; later without the underscore)
_CACHE_IMPL: Any = caching.CacheImpl if hasattr(caching, "CacheImpl") else caching._CacheImpl
_IN_TREE: Any = caching.InTreeCacheLocator if hasattr(caching, "InTreeCacheLocator") else caching._InTreeCacheLocator
_USER_PROVIDED: Any = (caching.UserProvidedCacheLocator if hasattr(caching, "UserProvidedCacheLocator")
                       else caching._UserProvidedCacheLocator)
_USER_WIDE: Any = (caching.UserWideCacheLocator if hasattr(caching, "UserWideCacheLocator")
                   else caching._UserWideCacheLocator)


def _module_file(root: Path, parts: list[str]) -> Path | None:
    """The source file of the package module ``parts`` (names below ``root``), a module or a package."""
    base = root.joinpath(*parts) if parts else root
    for candidate in (base.with_suffix(".py") if parts else None, base / "__init__.py"):
        if candidate is not None and candidate.is_file():
            return candidate
    return None


def _imports(path: Path, root: Path, package: str) -> set[Path]:
    """The package files that ``path`` (a module below ``root``) imports, as written in its source."""
    text = path.read_text(encoding="utf-8", errors="replace")
    here = list(path.relative_to(root).with_suffix("").parts)
    if here[-1] == "__init__":
        here = here[:-1]
        own_package = here
    else:
        own_package = here[:-1]
    out: set[Path] = set()
    targets: list[tuple[list[str], str]] = []
    for module, names in _FROM.findall(text):
        if module.startswith("."):
            level = len(module) - len(module.lstrip("."))
            base = own_package[: len(own_package) - (level - 1)] if level - 1 <= len(own_package) else None
            if base is None:
                continue
            parts = base + [p for p in module.lstrip(".").split(".") if p]
        elif module == package or module.startswith(package + "."):
            parts = module.split(".")[1:]
        else:
            continue
        targets.append((parts, names))
    for module in _IMPORT.findall(text):
        if module == package or module.startswith(package + "."):
            targets.append((module.split(".")[1:], ""))
    for parts, names in targets:
        submodules = [_module_file(root, parts + [n]) for n in re.findall(r"\w+", names)]
        out.update(f for f in submodules if f is not None)  # "from . import engine": a submodule
        if not submodules or not all(submodules):  # a name the module itself defines
            f = _module_file(root, parts)
            if f is not None:
                out.add(f)
    out.discard(path)
    return out


@functools.cache
def _imports_cached(path: Path, root: Path, package: str, mtime_ns: int, size: int) -> frozenset[Path]:
    return frozenset(_imports(path, root, package))


def dependency_files(path: Path, root: Path = PACKAGE_ROOT, package: str = PACKAGE) -> list[Path]:
    """``path`` and every file of the package below ``root`` it imports, directly or not, sorted."""
    seen = {path}
    todo = [path]
    while todo:
        f = todo.pop()
        st = f.stat()
        for g in _imports_cached(f, root, package, st.st_mtime_ns, st.st_size):
            if g not in seen:
                seen.add(g)
                todo.append(g)
    return sorted(seen)


@functools.cache
def _file_digest(path: Path, mtime_ns: int, size: int) -> bytes:
    return hashlib.sha256(path.read_bytes()).digest()


def dependency_stamp(path: Path, root: Path = PACKAGE_ROOT, package: str = PACKAGE) -> str:
    """A digest of the contents of ``path`` and of every package file it imports (hex str): equal stamps, equal
    sources."""
    h = hashlib.sha256()
    for f in dependency_files(path, root, package):
        st = f.stat()
        h.update(str(f.relative_to(root)).encode() + b"\0" + _file_digest(f, st.st_mtime_ns, st.st_size))
    return h.hexdigest()


class _DependencyStamped:
    """A Numba locator's stamp made :func:`dependency_stamp`, for this package's files only."""

    _py_file: str
    _stamps: dict[Path, str] = {}  # per process: the package's files do not change under a running program

    def get_source_stamp(self) -> str:
        path = Path(self._py_file).resolve()
        if path not in self._stamps:
            self._stamps[path] = "deps:" + dependency_stamp(path, PACKAGE_ROOT, PACKAGE)
        return self._stamps[path]

    @classmethod
    def from_function(cls, py_func: Any, py_file: str) -> Any:
        try:
            Path(py_file).resolve().relative_to(PACKAGE_ROOT)
        except ValueError:
            return None  # not ours: Numba's own locators
        return super().from_function(py_func, py_file)  # type: ignore[misc]


class DependencyAwareLocator(_DependencyStamped, _IN_TREE):
    """Numba's in-tree locator (the ``__pycache__`` beside the file), dependency-stamped."""


class _DependencyAwareUserDirLocator(_DependencyStamped, _USER_PROVIDED):
    """Numba's locator of ``NUMBA_CACHE_DIR`` (when set, it comes first, as in Numba), dependency-stamped."""


class _DependencyAwareUserWideLocator(_DependencyStamped, _USER_WIDE):
    """Numba's user-wide locator (a package installed where ``__pycache__`` is not writable), dependency-stamped."""


_LOCATORS = (_DependencyAwareUserDirLocator, DependencyAwareLocator, _DependencyAwareUserWideLocator)


_NUMBA_LOAD_DATA = caching.IndexDataCacheFile._load_data


def _load_data_or_miss(self: Any, name: str) -> Any:
    """Numba's read of a cache entry's data, a damaged entry (cut short, not a pickle) turned into the OSError that
    Numba takes for a miss: the kernel is compiled again and its entry rewritten, where Numba itself would fail every
    process that loads it until the cache is deleted."""
    try:
        return _NUMBA_LOAD_DATA(self, name)
    except (pickle.UnpicklingError, EOFError, ValueError) as e:
        raise OSError(f"damaged Numba cache entry {name}: {e}") from None


_NUMBA_LOAD_INDEX = caching.IndexDataCacheFile._load_index


def _load_index_or_empty(self: Any) -> Any:
    """Numba's read of a kernel's cache index, an index it cannot read taken as an empty one (every entry a miss, the
    index rewritten at the next save): a damaged index, or one whose kernel signatures name a class that no longer
    exists (a type renamed in the source: Numba unpickles the index before it compares the source stamp, and would
    fail every process that loads it until the cache is deleted)."""
    try:
        return _NUMBA_LOAD_INDEX(self)
    except (pickle.UnpicklingError, EOFError, ValueError, AttributeError, ImportError) as e:
        caching._cache_log("[cache] unreadable index %r: %s", self._index_path, e)
        return {}


def install() -> None:
    """Put :data:`_LOCATORS` first among the locators Numba tries, and read damaged entries and indexes as misses
    (once per process)."""
    classes = _CACHE_IMPL._locator_classes
    for k, locator in enumerate(_LOCATORS):
        if locator not in classes:
            classes.insert(k, locator)
    caching.IndexDataCacheFile._load_data = _load_data_or_miss
    caching.IndexDataCacheFile._load_index = _load_index_or_empty


def uninstall() -> None:
    """Numba's own locators and reads alone again (tests)."""
    classes = _CACHE_IMPL._locator_classes
    classes[:] = [c for c in classes if c not in _LOCATORS]
    caching.IndexDataCacheFile._load_data = _NUMBA_LOAD_DATA
    caching.IndexDataCacheFile._load_index = _NUMBA_LOAD_INDEX
