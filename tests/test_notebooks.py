"""The researcher notebooks run offline on the shared sample, and none is committed with stale outputs."""

from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_stale_outputs_committed(path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, f"{path.name} has saved outputs"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes(path, indexed_home, monkeypatch):
    from nbclient import NotebookClient

    monkeypatch.setenv("CPQA_HOME", str(indexed_home))
    monkeypatch.setenv("CPQA_PROFILE", "offline")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("CPQA_NOTEBOOK_QUICK", "1")  # notebooks that run evaluations use a small subset
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
