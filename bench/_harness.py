"""Shared pieces of the benchmark scripts (each runs as ``python bench/<name>.py``)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

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


LINKS_ENV = "CODED_BENCH_IN_NAMESPACE"  # set when the script runs in its namespace
_UNITS = {"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9}


def parse_links(text: str) -> list[float]:
    """``--links`` value: rates such as ``100mbit`` or ``1gbit``, comma-separated.

    One rate for every worker or one per worker; returned in bytes/s.
    """
    rates = []
    for item in text.lower().split(","):
        number = item.strip().rstrip("/s")
        unit = next(
            (u for u in sorted(_UNITS, key=len)[::-1] if number.endswith(u)), ""
        )
        try:
            value = float(number.removesuffix(unit)) * _UNITS.get(unit, 0) / 8
        except ValueError:
            value = 0.0
        if not value > 0:
            raise argparse.ArgumentTypeError(
                f"--links takes rates like 100mbit or 1gbit (comma-separated, one "
                f"or one per worker), got {item!r}"
            )
        rates.append(value)
    return rates


def add_links_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--links RATE``: kernel-shaped links (``coded.runtime.ShapedCluster``)."""
    parser.add_argument(
        "--links",
        type=parse_links,
        default=None,
        metavar="RATE",
        help="run on a cluster of processes at their own addresses whose uploads "
        "the kernel shapes at RATE (e.g. 100mbit; or one rate per worker, "
        "comma-separated); the script re-runs itself in a private network "
        "namespace",
    )


@contextlib.contextmanager
def cluster_client(args: argparse.Namespace, n_workers: int) -> Iterator[Any]:
    """The benchmark's client: `n_workers` single-threaded worker processes.

    Without ``--links`` a ``LocalCluster``; with it a ``ShapedCluster`` at the
    given rates, after re-running the script (from the start: call this before
    printing anything) inside a private network namespace. Adopt it in a
    benchmark with ``add_links_option(parser)`` and ``with cluster_client(args,
    n) as client:`` where it made its cluster.
    """
    from distributed import Client, LocalCluster

    from coded.runtime import ShapedCluster

    if args.links is None:
        with (
            LocalCluster(
                n_workers=n_workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",
            ) as cluster,
            Client(cluster) as client,
        ):
            yield client
        return
    enter_links_namespace()
    links = args.links[0] if len(args.links) == 1 else args.links
    with ShapedCluster(n_workers=n_workers, links=links) as shaped:
        print(
            "shaped links (Mbit/s, set / measured): "
            + ", ".join(
                f"{a} {shaped.rates[a] * 8e-6:.0f}/{m * 8e-6:.0f}"
                for a, m in shaped.measured.items()
            ),
            flush=True,
        )
        yield shaped.client


def enter_links_namespace() -> None:
    """Re-run this script inside a private network namespace, unless it is in one.

    ``os.execvpe``: the script becomes the namespace's ``unshare``, whose
    first process it runs; when that process ends (or ``unshare`` is killed)
    the kernel kills every process in the namespace.
    """
    from coded.runtime import NAMESPACE_COMMAND, shaped_links_unavailable

    if os.environ.get(LINKS_ENV):  # inside: in-process clusters need loopback
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
        return
    reason = shaped_links_unavailable()
    if reason is not None:
        raise SystemExit(f"--links needs a private network namespace: {reason}")
    print("--links: re-running inside a private network namespace", flush=True)
    env = {**os.environ, LINKS_ENV: "1"}
    argv = [*NAMESPACE_COMMAND, sys.executable, *sys.argv]
    os.execvpe(argv[0], argv, env)
