"""Shared pieces of the benchmark scripts (each runs as ``python bench/<name>.py``)."""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


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
