"""Benchmarks run as documented: every ``bench/*.py --quick`` exits 0 from a shell.

Each script runs in a subprocess exactly as the README shows it (``python
bench/<name>.py``, from the repository's root), so bench/ is the script's
``sys.path[0]``: a script named like one of the packages would shadow it.
Timings are printed by the scripts, never asserted here.
"""

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
    assert all(Path(path).is_file() for path in written)
