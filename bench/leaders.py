"""Group leaders against a flat code: the client's costs per call as n grows.

For each n in ``--workers`` (default 8, 16, 32, 64 worker processes on this
machine, memory-limited, one thread each, a cluster of its own for each n;
``--quick``: n = 4, in-process) a flat
real ``MDSCode(n, k)`` and a two-level ``HierarchicalCode`` of the same
redundancy (``LAYOUTS``) are placed on the same workers, and these calls on
them are interleaved, ``--repeats`` times each, under the same injected
stragglers (one slow worker in every other group, within both codes'
guarantees):

- ``flat``: the flat code, ``transport="resident"`` (one message per worker,
  the client decodes a ``k x k`` system);
- ``two_level``: the two-level code, ``transport="resident"`` (one message per
  worker, the client decodes group by group);
- ``grouped``: the two-level code, ``transport="grouped"`` (one message per
  group; leaders decode their groups, the client only the outer code).

Per call: the wall-clock latency, the client's CPU time (``time.process_time``
of this process, in which only the client runs: the scheduler and the workers
are processes of their own) and its decode (``stage_seconds["decode"]``);
every product is checked against ``A @ B``. Every n runs two product sizes
(``ROWS`` rows of A per source block), so that the client's cost per byte and
per worker can be told apart. The cost model of
``docs/theory/hierarchical.md`` (:func:`theory.fit_runtime_costs`) is
calibrated once on the medians at n = 8, 16 and 64 (flat and grouped, both sizes:
twelve calls, six constants), for the client's CPU and for the latency, and
predicts every n; the client's constants then project its CPU per call to the
layouts of ``PROJECTED`` (n = 64 and 10^4, at the smaller n = 64 product).

Before its calls, each cluster's idle CPU is measured (the cores its processes use
doing nothing, over 5 s). Prints medians and ratios (grouped / flat), writes
``bench/results/leaders.json``.
The full run needs a private network namespace (it starts ``dask scheduler``
and ``dask worker`` processes, :class:`coded.runtime.ShapedCluster` without
shaping) and about 10 GiB of memory at n = 64.

Usage: ``python bench/leaders.py [--quick] [--repeats R] [--workers N ...]``.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import statistics
import time

# one BLAS thread per process, as Dask's nanny sets for worker processes
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
from _harness import enter_links_namespace, write_results

from coded import HierarchicalCode, MDSCode, Stragglers, coded_matmul, place_operand
from theory import call_overhead, fit_runtime_costs

LAYOUTS = {  # n: two-level layout; the flat code has the same n and prod k_l
    4: [(2, 1), (2, 2)],
    8: [(2, 2), (4, 3)],
    16: [(4, 3), (4, 3)],
    32: [(4, 3), (8, 7)],
    64: [(8, 7), (8, 7)],
}
D, C = 100, 16  # columns of A, of B
# rows of A per source block: two product sizes at every n, so that the model
# can tell the client's cost per byte from its cost per worker (with one size
# the product grows with n and the two are proportional)
ROWS = (60, 240)
# the layouts the measured constants project to (product of the n = 64 calls)
PROJECTED = {
    64: {"flat": [(64, 49)], "grouped": [(8, 7), (8, 7)]},
    10_000: {"flat": [(10_000, 7_921)], "grouped": [(100, 89), (100, 89)]},
}
DELAY = 0.2  # seconds of an injected straggler
VARIANTS = ("flat", "two_level", "grouped")


def _stragglers(levels) -> Stragglers:
    """One slow member in every other outer group (within both guarantees)."""
    groups, size = levels[0][0], levels[1][0]
    slow = {g * size + g % size: DELAY for g in range(0, groups, 2)}
    return Stragglers(delays=slow)


def _call(placed, B, expected, transport, stragglers) -> dict:
    cpu, began = time.process_time(), time.perf_counter()
    result = coded_matmul(
        placed, B, transport=transport, stragglers=stragglers, timeout=60
    )
    wall, cpu = time.perf_counter() - began, time.process_time() - cpu
    if not np.allclose(result.product, expected, rtol=1e-9, atol=1e-9):
        raise AssertionError(f"{transport}: a wrong product")
    return {"wall": wall, "cpu": cpu, "decode": result.stage_seconds["decode"]}


def measure(client, n: int, rows: int, repeats: int, rng) -> dict:
    levels = LAYOUTS[n]
    k = int(np.prod([k for _, k in levels]))
    A = rng.standard_normal((k * rows, D))
    B = rng.standard_normal((D, C))
    expected = A @ B
    stragglers = _stragglers(levels)
    calls = {v: [] for v in VARIANTS}
    with (
        place_operand(A, scheme=MDSCode(n, k), client=client) as flat,
        place_operand(A, scheme=HierarchicalCode(n, levels), client=client) as tree,
    ):
        runs = {
            "flat": lambda: _call(flat, B, expected, "resident", stragglers),
            "two_level": lambda: _call(tree, B, expected, "resident", stragglers),
            "grouped": lambda: _call(tree, B, expected, "grouped", stragglers),
        }
        for name in VARIANTS:  # warm: imports, channels, factorisations
            runs[name]()
        for _ in range(repeats):
            for name in VARIANTS:
                calls[name].append(runs[name]())
    row = {"n": n, "flat_k": k, "levels": levels, "product_bytes": 8 * k * rows * C}
    for name in VARIANTS:
        for field in ("wall", "cpu", "decode"):
            row[f"{name}_{field}"] = statistics.median(c[field] for c in calls[name])
    for field in ("wall", "cpu", "decode"):
        row[f"ratio_{field}"] = row[f"grouped_{field}"] / row[f"flat_{field}"]
    return row


CALIBRATION = (8, 16, 64)  # the n whose calls calibrate the model, once


def model(rows: list[dict]) -> dict:
    """Calibrate the cost model once on the calls at `CALIBRATION`; predict all n.

    Two fits of the same model: the client's CPU per call against
    ``client_seconds`` (``part="client"``), and the latency against
    ``total_seconds``.
    """
    calibration = [row for row in rows if row["n"] in CALIBRATION]
    if {row["n"] for row in calibration} != set(CALIBRATION):
        return {}
    right = 8 * D * C

    def layouts(row):
        return {"flat": [(row["n"], row["flat_k"])], "grouped": row["levels"]}

    out: dict = {"calibrated_on": list(CALIBRATION)}
    for part, field in (("client", "cpu"), ("total", "wall")):
        shapes, seconds, sizes = [], [], []
        for row in calibration:
            for name, layout in layouts(row).items():
                shapes.append(layout)
                seconds.append(row[f"{name}_{field}"])
                sizes.append(row["product_bytes"])
        costs = fit_runtime_costs(
            shapes, seconds, product_bytes=sizes, right_bytes=right, part=part
        )
        predictions = []
        for row in rows:
            for name, layout in layouts(row).items():
                overhead = call_overhead(
                    layout, costs, product_bytes=row["product_bytes"], right_bytes=right
                )
                predicted = getattr(overhead, f"{part}_seconds")
                measured = row[f"{name}_{field}"]
                predictions.append(
                    {
                        "n": row["n"],
                        "product_bytes": row["product_bytes"],
                        "layout": name,
                        "measured": measured,
                        "predicted": predicted,
                        "error": predicted / measured - 1,
                    }
                )
        out[part] = {"costs": dataclasses.asdict(costs), "predictions": predictions}
        if part == "client":
            out["projection"] = _projection(costs, rows, right)
    return out


def _projection(costs, rows: list[dict], right: float) -> dict:
    """The client's CPU per call at n = 64 and 10^4 under the measured constants.

    At the product size of the smaller n = 64 calls, for the flat and the
    two-level layouts of `PROJECTED`; and the growth from 64 to 10^4 workers.
    """
    size = min(row["product_bytes"] for row in rows if row["n"] == 64)
    seconds = {
        (n, name): call_overhead(
            layout, costs, product_bytes=size, right_bytes=right
        ).client_seconds
        for n, layouts in PROJECTED.items()
        for name, layout in layouts.items()
    }
    out = {f"{name} n={n} seconds": value for (n, name), value in seconds.items()}
    for name in ("flat", "grouped"):
        out[f"{name} 10^4 / 64"] = seconds[10_000, name] / seconds[64, name]
    return out


def idle_cores(seconds: float = 5.0) -> float:
    """Cores the idle cluster (this process's children: its scheduler, workers) uses.

    Only the cluster's own processes: other jobs of the machine may start and
    end meanwhile, and their CPU would be counted or lost.
    """
    import psutil

    others = psutil.Process().children(recursive=True)

    def used() -> float:
        total = 0.0
        for process in others:
            with contextlib.suppress(psutil.Error):
                total += sum(process.cpu_times()[:2])
        return total

    before, began = used(), time.perf_counter()
    time.sleep(seconds)
    return (used() - before) / (time.perf_counter() - began)


@contextlib.contextmanager
def _cluster(quick: bool, n_workers: int):
    if quick:
        from coded import LocalCodedCluster

        with LocalCodedCluster(n_workers=n_workers) as cluster:
            yield cluster.client
        return
    from coded.runtime import ShapedCluster

    options = ("--memory-limit", "400MiB")
    with ShapedCluster(
        n_workers=n_workers, links=None, worker_options=options, start_timeout=300
    ) as shaped:
        yield shaped.client


def _print_row(row: dict) -> None:
    n, load, idle = row["n"], row["load_before"], row["idle_cores"]
    print(
        f"n={n:3d} {row['levels']} vs ({n}, {row['flat_k']}), product "
        f"{row['product_bytes'] / 1e3:.0f} kB: "
        + "  ".join(
            f"{v} wall {row[v + '_wall'] * 1e3:.1f} ms cpu "
            f"{row[v + '_cpu'] * 1e3:.1f} ms decode "
            f"{row[v + '_decode'] * 1e3:.2f} ms"
            for v in VARIANTS
        )
        + f"  grouped/flat: cpu {row['ratio_cpu']:.2f}x decode "
        f"{row['ratio_decode']:.2f}x wall {row['ratio_wall']:.2f}x "
        f"(load {load:.1f}"
        + ("" if idle is None else f"; the idle cluster used {idle:.2f} cores")
        + ")",
        flush=True,
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--workers", type=int, nargs="+", default=None)
    args = parser.parse_args(argv)
    ns = args.workers or ([4] if args.quick else [8, 16, 32, 64])
    repeats = args.repeats or (2 if args.quick else 15)
    if not args.quick:
        enter_links_namespace()
    rng = np.random.default_rng(0)
    rows = []
    for n in sorted(ns):  # n workers each: no idle process loads the machine
        with _cluster(args.quick, n) as client:
            load = os.getloadavg()[0]
            idle = None if args.quick else idle_cores()
            for size in ROWS:
                row = measure(client, n, size, repeats, rng)
                row["idle_cores"] = idle
                row["load_before"] = load
                rows.append(row)
                _print_row(row)
    fitted = model(rows)
    for label, value in fitted.get("projection", {}).items():
        print(f"projection (client CPU, measured constants): {label}: {value:.4g}")
    for part, what in (("client", "client CPU"), ("total", "latency")):
        for p in fitted.get(part, {}).get("predictions", []):
            print(
                f"model ({what}) n={p['n']:3d} {p['layout']:8s} "
                f"{p['product_bytes'] / 1e3:5.0f} kB measured "
                f"{p['measured'] * 1e3:.1f} ms predicted {p['predicted'] * 1e3:.1f} "
                f"ms ({p['error']:+.0%})"
            )
    write_results(
        "leaders",
        {"quick": args.quick, "rows": rows, "model": fitted, "repeats": repeats},
        quick=args.quick,
    )


if __name__ == "__main__":
    main()
