"""Every notebook in notebooks/ executes, and those that plot draw their figures.

The notebooks execute once per session, inside the Sphinx build (myst-nb raises on
the first error of a cell, which fails the build); these tests read the built pages
and the build's messages about each notebook.
"""

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


def _code(path: Path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join(
        "".join(cell["source"]) for cell in cells if cell["cell_type"] == "code"
    )


@pytest.mark.slow
@pytest.mark.timeout(1800)  # the first one waits for the docs build
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes_and_draws(path, docs_build):
    problems = [
        line
        for line in docs_build.log.splitlines()
        if f"notebooks/{path.stem}" in line and ("WARNING" in line or "ERROR" in line)
    ]
    assert problems == []
    page = docs_build.page(f"notebooks/{path.stem}")
    assert "cell_output" in page  # executed: the page holds the cells' outputs
    assert "Traceback" not in page
    if "plt." in _code(path):
        assert "<img" in page, f"{path.name} plots but its page shows no figure"
