"""The notebooks of ``notebooks/`` run top to bottom (so that they never rot), and none is committed with outputs.

Each notebook is executed by nbclient in a fresh ``python3`` kernel of this interpreter (ipykernel installed in
the same environment: jupyter_client starts ``sys.executable -m ipykernel_launcher``; a first cell, added in
memory only, checks the kernel's interpreter), with ``MPLBACKEND=Agg`` (figures are drawn, not shown), a
per-cell timeout, and a temporary working directory. The notebooks write only to temporary directories.
"""

import os
import sys
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOKS_DIR = Path(__file__).resolve().parents[2] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
# Per cell. Generous: on a cold Numba cache a cell may compile kernels first; warm, every notebook runs in under
# half a minute on two cores.
CELL_TIMEOUT_S = 600

# Added in memory before the notebook's cells: the kernel must run this test's interpreter (the venv's), not
# another python3 kernel registered on the machine.
KERNEL_CHECK = f"""\
import os, sys
assert os.path.realpath(sys.prefix) == {os.path.realpath(sys.prefix)!r}, sys.executable
assert os.environ.get("MPLBACKEND") == "Agg"
"""


def test_the_notebooks_are_there():
    names = [p.name for p in NOTEBOOKS]
    assert names == ["01_games.ipynb", "02_batched_core.ipynb", "03_evaluating_agents.ipynb",
                     "04_training.ipynb", "05_search.ipynb", "06_export.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_committed_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    dirty = [k for k, cell in enumerate(nb.cells) if cell.cell_type == "code"
             and (cell.get("outputs") or cell.get("execution_count") is not None)]
    assert not dirty, (f"{path.name}: cells {dirty} hold outputs or execution counts; clear them before "
                       "committing (Jupyter: Edit > Clear Outputs of All Cells)")
    first = nb.cells[0]
    assert first.cell_type == "markdown" and "runs" in first.source.lower(), (
        f"{path.name}: the first cell must be markdown saying what the notebook shows and how long it runs")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, tmp_path, monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")  # the kernel inherits the environment (ipykernel keeps a set backend)
    monkeypatch.setenv("PYTHONHASHSEED", "0")
    nb = nbformat.read(path, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(KERNEL_CHECK))
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=CELL_TIMEOUT_S,
                                     resources={"metadata": {"path": str(tmp_path)}})
    t0 = time.perf_counter()
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as e:
        pytest.fail(f"{path.name} failed:\n{e}", pytrace=False)
    seconds = time.perf_counter() - t0
    print(f"{path.name}: {seconds:.1f} s")
    leftovers = sorted(p.name for p in tmp_path.iterdir())
    assert not leftovers, f"{path.name} wrote {leftovers} into its working directory (temp dirs only)"
