"""Coded TeraSort on an embedded Dask LocalCluster vs Dask's own shuffle.

For K = 4..6 and r = 1..3: the paper-model load of the plan, the measured load
(packet bytes over intermediate bytes), the bytes Dask moved between workers
(its transfer logs), shuffle and total seconds (medians over repeats). Baseline:
the same records range-partitioned with ``dask.bag.groupby(shuffle="tasks")`` and
sorted per partition. JSON goes to bench/results/mapreduce.json.

    .venv/bin/python bench/mapreduce.py [--quick] [--threads]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

from _harness import import_project, write_results

import_project("mapreduce")  # this script is named like the package

import dask  # noqa: E402
import dask.bag as db  # noqa: E402
from distributed import Client, LocalCluster, wait  # noqa: E402

from mapreduce import (  # noqa: E402
    generate_records,
    range_partition,
    run_terasort,
)

SEED = 20261202


def _incoming_bytes(dask_worker=None) -> int:
    return sum(entry["total"] for entry in dask_worker.transfer_incoming_log)


def _wire_total(client: Client) -> int:
    return sum(client.run(_incoming_bytes).values())


def _sort_partition(groups):
    return [(key, sorted(records)) for key, records in groups]


def _parse(blob: bytes) -> list:
    return [
        (blob[i : i + 10], blob[i + 10 : i + 100]) for i in range(0, len(blob), 100)
    ]


def run_baseline(client: Client, records, K: int) -> dict:
    """Dask bag: range-partition by key with a task shuffle, sort each partition.

    Each worker starts with one blob of records (as the coded runs do); the time
    runs until the sorted partitions sit on the workers (gathered afterwards, for
    the check only).
    """
    size = -(-len(records) // K)
    workers = sorted(client.nthreads())
    blobs = [
        b"".join(key + value for key, value in records[k * size : (k + 1) * size])
        for k in range(K)
    ]
    parts = [
        client.scatter(blob, workers=[address])
        for blob, address in zip(blobs, workers, strict=True)
    ]
    before = _wire_total(client)
    start = time.perf_counter()
    bag = db.from_delayed([dask.delayed(_parse)(part) for part in parts])
    grouped = bag.groupby(
        lambda record: range_partition(record[0], K), shuffle="tasks", npartitions=K
    )
    persisted = client.persist(grouped.map_partitions(_sort_partition))
    wait(persisted)
    seconds = time.perf_counter() - start
    wire = _wire_total(client) - before
    result = persisted.compute()
    flat = [rec for _, part in sorted(result) for rec in part]
    assert flat == sorted(records), "baseline output is not sorted"
    return {"total_seconds": seconds, "wire_bytes": wire}


def run_case(client: Client, records, K: int, r: int) -> dict:
    result = run_terasort(records, K=K, r=r, client=client)
    assert result.records == sorted(records), "coded TeraSort output is not sorted"
    rec = result.record
    return {
        "load": float(rec.load),
        "load_exact": str(rec.load),
        "unicast_load": float(rec.unicast_load),
        "measured_load": rec.measured_load,
        "wire_bytes": rec.wire_bytes,
        "packet_bytes": rec.packet_bytes,
        "intermediate_bytes": rec.intermediate_bytes,
        "map_seconds": rec.map_seconds,
        "shuffle_seconds": rec.shuffle_seconds,
        "reduce_seconds": rec.reduce_seconds,
        "total_seconds": rec.total_seconds,
    }


def _median(runs: list[dict]) -> dict:
    keys = [k for k, v in runs[0].items() if isinstance(v, (int, float))]
    out = {k: statistics.median(run[k] for run in runs) for k in keys}
    out.update({k: v for k, v in runs[0].items() if k not in keys})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small smoke run")
    parser.add_argument(
        "--threads", action="store_true", help="in-process workers (no TCP)"
    )
    args = parser.parse_args()
    n_records = 20_000 if args.quick else 200_000
    repeats = 1 if args.quick else 3
    Ks = (4,) if args.quick else (4, 5, 6)
    records = generate_records(n_records, rng=SEED)
    rows = []
    for K in Ks:
        with (
            LocalCluster(
                n_workers=K,
                threads_per_worker=1,
                processes=not args.threads,
                dashboard_address=":0",
            ) as cluster,
            Client(cluster) as client,
        ):
            for r in (1, 2, 3):
                runs = [run_case(client, records, K, r) for _ in range(repeats)]
                rows.append({"K": K, "r": r, "scheme": "coded", **_median(runs)})
            runs = [run_baseline(client, records, K) for _ in range(repeats)]
            rows.append({"K": K, "r": 1, "scheme": "dask.bag", **_median(runs)})

    header = (
        f"{'K':>2} {'r':>2} {'scheme':>9} {'L paper':>8} {'L meas':>7} "
        f"{'wire MB':>8} {'shuffle s':>9} {'total s':>8} {'vs bag':>7}"
    )
    print(f"{n_records} records of 100 bytes, median of {repeats}")
    print(header)
    for row in rows:
        base = next(
            b["total_seconds"]
            for b in rows
            if b["K"] == row["K"] and b["scheme"] == "dask.bag"
        )
        row["speedup_vs_bag"] = base / row["total_seconds"]
        print(
            f"{row['K']:>2} {row['r']:>2} {row['scheme']:>9} "
            f"{row.get('load', float('nan')):>8.4f} "
            f"{row.get('measured_load', float('nan')):>7.4f} "
            f"{row['wire_bytes'] / 1e6:>8.2f} "
            f"{row.get('shuffle_seconds', float('nan')):>9.3f} "
            f"{row['total_seconds']:>8.3f} {row['speedup_vs_bag']:>7.2f}"
        )
    write_results(
        "mapreduce",
        {
            "seed": SEED,
            "records": n_records,
            "repeats": repeats,
            "processes": not args.threads,
            "machine": platform.platform(),
            "rows": rows,
        },
        quick=args.quick,
    )


if __name__ == "__main__":
    main()
