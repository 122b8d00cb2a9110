"""Benchmarks run as documented: every ``bench/*.py --quick`` exits 0 from a shell.

Each script runs in a subprocess exactly as the README shows it (``python
bench/<name>.py``, from the repository's root), so bench/ is the script's
``sys.path[0]``: a script named like one of the packages would shadow it.
Timings are printed by the scripts, never asserted here.
"""

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py") if not p.name.startswith("_"))
PACKAGES = ("coded", "allocation", "mapreduce", "theory")


def _readme_scripts() -> set[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.partition("## Benchmarks")[2].partition("\n## ")[0]
    return set(re.findall(r"python bench/(\w+\.py)", section))


def test_no_script_shadows_a_package():
    assert not {Path(s).stem for s in SCRIPTS} & set(PACKAGES)


def test_the_readme_lists_every_script():
    assert _readme_scripts() == set(SCRIPTS)


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS)
def test_quick_run_exits_0(script):
    run = subprocess.run(
        [sys.executable, f"bench/{script}", "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    written = re.findall(r"wrote (\S+_quick\.json)", run.stdout)
    assert written, f"{script} --quick wrote no results file"
    for path in written:
        _check_results(json.loads(Path(path).read_text(encoding="utf-8")), path)


def _leaves(node):
    if isinstance(node, dict):
        node = list(node.values())
    if isinstance(node, list):
        for item in node:
            yield from _leaves(item)
    else:
        yield node


def _quick_flags(node):
    if isinstance(node, dict):
        yield from (value for key, value in node.items() if key == "quick")
        node = list(node.values())
    if isinstance(node, list):
        for item in node:
            yield from _quick_flags(item)


def _check_results(payload, path):
    """A quick run's record: non-empty, with a measured value, marked quick."""
    assert isinstance(payload, dict), f"{path}: {payload!r}"
    assert payload, f"{path} is empty"
    numbers = [
        x
        for x in _leaves(payload)
        if isinstance(x, int | float) and not isinstance(x, bool)
    ]
    assert any(math.isfinite(x) and x > 0 for x in numbers), f"{path} measured nothing"
    assert all(flag is True for flag in _quick_flags(payload)), f"{path} is not quick"


def test_results_check_refuses_empty_unmeasured_or_full_runs():
    _check_results({"quick": True, "seconds": {"median": 0.25}}, "ok.json")
    for bad in (
        {},
        {"seconds": [0.0, float("nan")]},
        {"params": {"quick": False}, "t": 1},
    ):
        with pytest.raises(AssertionError):
            _check_results(bad, "bad.json")
