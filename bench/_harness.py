"""Shared pieces of the benchmark scripts (each runs as ``python bench/<name>.py``)."""

from __future__ import annotations

import importlib
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


PROJECT = ("coded", "allocation", "mapreduce", "theory")


def import_project(*names: str) -> tuple[ModuleType, ...]:
    """Import the project's packages, not the bench/*.py scripts of the same name.

    When a script runs, bench/ is sys.path[0], so ``import theory`` would find
    bench/theory.py. Import all four packages with bench/ off the path, then put
    bench/ back at the end: the packages are cached by then, and worker processes
    that Dask spawns (which re-run the script) still find this module.
    """
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
    modules = {name: importlib.import_module(name) for name in PROJECT}
    sys.path.append(str(HERE))
    return tuple(modules[name] for name in names)


def median_time(func: Callable[[], object], repeats: int) -> float:
    """Median wall-clock seconds of `repeats` calls of `func`."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def write_results(
    name: str, payload: object, *, quick: bool = False, indent: int = 2
) -> Path:
    """Write `payload` to bench/results/<name>[_quick].json and return the path."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"{name}{'_quick' if quick else ''}.json"
    out.write_text(json.dumps(payload, indent=indent, default=str))
    print(f"wrote {out}")
    return out
