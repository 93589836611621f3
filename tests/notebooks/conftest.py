"""The notebooks run last: by then the rest of the suite has compiled the Numba kernels they use into the on-disk
cache (on a fresh checkout, compiling the search kernels alone takes minutes)."""

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    mine = [it for it in items if Path(str(it.fspath)).resolve().parent == HERE and "notebook_runs" in it.name]
    if mine:
        rest = [it for it in items if it not in mine]
        items[:] = rest + mine
