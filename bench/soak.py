"""Soak: many fresh and placed calls; memory and scheduler tasks must not creep.

Runs ``--calls`` fresh ``coded_matmul`` calls and as many calls on one placement
on an embedded cluster of worker processes, after a warm-up, and prints at start
and end: the client's RSS (the scheduler runs in this process), each worker's RSS
and stored bytes, and the tasks the scheduler holds. Targets: no task left beyond
the placement's shares, and memory growth <= 16 MiB per 1000 calls after warm-up,
client and each worker. The full run soaks twice: on a ``LocalCodedCluster``
(configured for long runs) and, as the baseline, on a plain Dask ``LocalCluster``
of the same shape with Dask's defaults (``--no-baseline`` skips it). Then times
erasure repair of lost shares against placing A again from scratch (medians over
``--repeats``).

    python bench/soak.py            # 1000 + 1000 calls, twice
    python bench/soak.py --quick    # 50 + 50 calls, LocalCodedCluster only (smoke)
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import time

import numpy as np
from _harness import write_results
from distributed import Client, LocalCluster

import coded

TARGET_MIB_PER_1000 = 16.0
N_WORKERS = 6


def _scheduler_tasks(dask_scheduler) -> int:
    return len(dask_scheduler.tasks)


def _worker_memory(dask_worker) -> tuple[int, int]:
    import psutil

    stored = sum(int(getattr(v, "nbytes", 0)) for v in dask_worker.data.values())
    return psutil.Process().memory_info().rss, stored


def snapshot(client) -> dict:
    """Client RSS, per-worker RSS and stored bytes, scheduler task count."""
    import psutil

    gc.collect()
    workers = client.run(_worker_memory)
    return {
        "client_rss_mib": psutil.Process().memory_info().rss / 2**20,
        "worker_rss_mib": {a: rss / 2**20 for a, (rss, _) in sorted(workers.items())},
        "worker_stored_kib": {
            a: stored / 2**10 for a, (_, stored) in sorted(workers.items())
        },
        "scheduler_tasks": client.run_on_scheduler(_scheduler_tasks),
    }


def _growth_per_1000(start: dict, end: dict, calls: int) -> dict:
    """MiB of RSS growth per 1000 calls: the client and each worker."""
    client = (end["client_rss_mib"] - start["client_rss_mib"]) * 1000 / calls
    workers = {
        a: (end["worker_rss_mib"][a] - start["worker_rss_mib"][a]) * 1000 / calls
        for a in start["worker_rss_mib"]
        if a in end["worker_rss_mib"]
    }
    return {
        "client_mib": client,
        "worker_mib": workers,
        "max_worker_mib": max(workers.values(), default=0.0),
    }


def _print(label: str, snap: dict) -> None:
    rss = ", ".join(f"{v:.0f}" for v in snap["worker_rss_mib"].values())
    stored = ", ".join(f"{v:.0f}" for v in snap["worker_stored_kib"].values())
    print(
        f"{label:>14}: client RSS {snap['client_rss_mib']:.1f} MiB | worker RSS "
        f"[{rss}] MiB | stored [{stored}] KiB | scheduler tasks "
        f"{snap['scheduler_tasks']}"
    )


def soak(client, calls: int, warmup: int, rng) -> dict:
    """Fresh and placed calls; snapshots after warm-up and at the end."""
    A = rng.standard_normal((400, 100))
    xs = rng.standard_normal((8, 100))
    results = {}
    for mode in ("fresh", "placed"):
        placed = (
            coded.place_operand(A, k=3, client=client) if mode == "placed" else None
        )
        operand = A if placed is None else placed
        kwargs = {"client": client, "k": 3} if placed is None else {}
        for i in range(warmup):
            coded.coded_matmul(operand, xs[i % 8], **kwargs)
        start = snapshot(client)
        began = time.perf_counter()
        for i in range(calls):
            product = coded.coded_matmul(operand, xs[i % 8], **kwargs).product
        seconds = time.perf_counter() - began
        assert np.allclose(product, A @ xs[(calls - 1) % 8])
        end = snapshot(client)
        placement_keys = 0 if placed is None else placed.n
        if placed is not None:
            placed.release()
        after = client.run_on_scheduler(_scheduler_tasks)
        _print(f"{mode} start", start)
        _print(f"{mode} end", end)
        growth = _growth_per_1000(start, end, calls)
        leftover = end["scheduler_tasks"] - placement_keys
        print(
            f"{mode:>14}: {calls} calls in {seconds:.1f} s "
            f"({1e3 * seconds / calls:.1f} ms/call); growth per 1000 calls: client "
            f"{growth['client_mib']:+.1f} MiB, worker max "
            f"{growth['max_worker_mib']:+.1f} MiB (target <= {TARGET_MIB_PER_1000}); "
            f"tasks beyond the placement: {leftover}, after release: {after}"
        )
        results[mode] = {
            "calls": calls,
            "seconds": seconds,
            "start": start,
            "end": end,
            "growth_per_1000_calls": growth,
            "leftover_tasks": leftover,
            "tasks_after_release": after,
            "meets_target": leftover == 0
            and after == 0
            and max(growth["client_mib"], growth["max_worker_mib"])
            <= TARGET_MIB_PER_1000,
        }
    return results


def repair_vs_replace(client, repeats: int, rng, rows: int, d: int) -> dict:
    """Median seconds: repair 2 lost shares of a (6, 4) placement vs place again."""
    A = rng.standard_normal((rows, d))
    replace_times, repair_times = [], []
    for _ in range(repeats):
        began = time.perf_counter()
        placed = coded.place_operand(A, n=6, k=4, client=client)
        replace_times.append(time.perf_counter() - began)
        client.cancel([placed.futures[0], placed.futures[5]], force=True)
        while set(placed.live) & {0, 5}:
            time.sleep(0.005)
        began = time.perf_counter()
        placed.repair()
        repair_times.append(time.perf_counter() - began)
        x = rng.standard_normal(d)
        assert np.allclose(coded.coded_matmul(placed, x).product, A @ x)
        placed.release()
    out = {
        "shape": [rows, d],
        "place_seconds_median": statistics.median(replace_times),
        "repair_seconds_median": statistics.median(repair_times),
    }
    out["repair_over_place"] = (
        out["repair_seconds_median"] / out["place_seconds_median"]
    )
    print(
        f"repair 2 of 6 shares of a {rows} x {d} A: "
        f"{out['repair_seconds_median']:.3f} s vs place again "
        f"{out['place_seconds_median']:.3f} s (ratio "
        f"{out['repair_over_place']:.2f}; medians of {repeats})"
    )
    return out


def baseline(calls: int, warmup: int) -> dict:
    """The soak on a plain Dask ``LocalCluster``: Dask's defaults, spans kept."""
    print("baseline: a plain Dask LocalCluster of the same shape, Dask's defaults")
    with (
        LocalCluster(
            n_workers=N_WORKERS,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
        ) as cluster,
        Client(cluster) as client,
    ):
        return soak(client, calls, warmup, np.random.default_rng(0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="50 + 50 calls")
    parser.add_argument(
        "--no-baseline", action="store_true", help="skip the plain Dask cluster"
    )
    args = parser.parse_args()
    calls, warmup = (50, 10) if args.quick else (args.calls, args.warmup)
    rng = np.random.default_rng(0)
    print(f"soak on {N_WORKERS} worker processes ({os.cpu_count()} cores here)")
    print("LocalCodedCluster (configured for long runs)")
    with coded.LocalCodedCluster(n_workers=N_WORKERS, processes=True) as cluster:
        client = cluster.client
        results = {"soak": soak(client, calls, warmup, rng)}
        results["repair"] = repair_vs_replace(
            client, 2 if args.quick else args.repeats, rng, 8000, 500
        )
    if not (args.quick or args.no_baseline):
        results["baseline_dask_defaults"] = baseline(calls, warmup)
    write_results("soak", results, quick=args.quick)


if __name__ == "__main__":
    main()
