"""Coded TeraSort and word count on Dask against Dask's own shuffles.

One LocalCluster of K single-threaded worker processes. TeraSort of 100-byte
records: coded (r = 2, 3; unicast and forwarding delivery) and uncoded with the
same placement, against ``dask.dataframe.sort_values`` and ``shuffle`` (its p2p
shuffle; sorted on the key's first 8 bytes as uint64) and ``dask.bag.groupby``;
r = 2 coded and r = 1 with and without one mapper 5x slow. Word count: coded with a
combiner vs ``dask.bag.foldby``. For every run: stage times (map, pack, shuffle,
unpack, reduce), per-node wire bytes, and the shuffle time the two network models
predict from the plan's frames and a measured point-to-point bandwidth. Medians
over repeats; JSON to bench/results/mapreduce.json.

    python bench/mapreduce.py [--quick] [--records N] [--repeats R]
"""

from __future__ import annotations

import argparse
import functools
import platform
import statistics
import time

from _harness import import_project, write_results

import_project("mapreduce")  # this script is named like the package

import dask  # noqa: E402
import dask.bag as db  # noqa: E402
import dask.dataframe as dd  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from distributed import Client, LocalCluster, get_worker, wait  # noqa: E402

from mapreduce import (  # noqa: E402
    count_words,
    generate_records,
    place_li,
    plan_shuffle,
    plan_traffic,
    range_partition,
    run_mapreduce,
    run_terasort,
    sum_counts,
    terasort_map,
)
from theory import shuffle_seconds_multicast, shuffle_seconds_switched  # noqa: E402

SEED = 20261203
K = 8
SLOWDOWN = 5.0
dask.config.set({"dataframe.convert-string": False})  # keep bytes as bytes


def slow_map(address: str, blob: bytes):
    """terasort_map, 5x slower on the worker at `address` (sleeps between chunks)."""
    slow = get_worker().address == address
    chunk = time.perf_counter()
    for count, pair in enumerate(terasort_map(blob), 1):
        yield pair
        if slow and count % 500 == 0:
            time.sleep((SLOWDOWN - 1) * (time.perf_counter() - chunk))
            chunk = time.perf_counter()


def _make(nbytes: int) -> np.ndarray:
    return np.ones(nbytes, dtype=np.uint8)


def _size(array: np.ndarray) -> int:
    return array.size


def measure_bandwidth(client: Client, nbytes: int = 50_000_000) -> float:
    """Bytes/s of one worker-to-worker transfer (median of 3)."""
    a, b = sorted(client.nthreads())[:2]
    times = []
    for _ in range(3):
        src = client.submit(_make, nbytes, workers=[a], pure=False)
        wait(src)
        start = time.perf_counter()
        wait(client.submit(_size, src, workers=[b], pure=False))
        times.append(time.perf_counter() - start)
        del src
    return nbytes / statistics.median(times)


def _record_row(rec, bandwidth: float) -> dict:
    plan_like = {
        "map_seconds": rec.map_seconds,
        "pack_seconds": rec.pack_seconds,
        "shuffle_seconds": rec.shuffle_seconds,
        "unpack_seconds": rec.unpack_seconds,
        "reduce_seconds": rec.reduce_seconds,
        "total_seconds": rec.total_seconds,
        "load": float(rec.load),
        "wire_bytes": rec.wire_bytes,
        "max_upload_bytes": max(rec.upload_bytes),
        "max_download_bytes": max(rec.download_bytes),
        "max_origin_upload_bytes": max(rec.origin_upload_bytes),
        "upload_bytes": list(rec.upload_bytes),
        "download_bytes": list(rec.download_bytes),
        "stragglers": list(rec.stragglers),
        "is_coded": rec.is_coded,
        "delivery": rec.delivery,
    }
    frames = rec.packet_bytes + rec.frame_header_bytes
    plan_like["model_multicast_seconds"] = shuffle_seconds_multicast(
        [frames], bandwidth
    )
    plan_like["model_switched_seconds"] = shuffle_seconds_switched(
        rec.upload_bytes, rec.download_bytes, bandwidth
    )
    return plan_like


def terasort_case(client, records, r, coded, delivery, bandwidth, slow=None) -> dict:
    map_fn = None if slow is None else functools.partial(slow_map, slow)
    result = run_terasort(
        records,
        K=K,
        r=r,
        coded=coded,
        delivery=delivery,
        client=client,
        map_fn=map_fn,
    )
    assert result.records == sorted(records), "TeraSort output is not sorted"
    return _record_row(result.record, bandwidth)


def _frame(part: list) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "key64": np.array([int.from_bytes(k[:8], "big") for k, _ in part], "u8"),
            "key": [k for k, _ in part],
            "value": [v for _, v in part],
        }
    )


def dataframe_case(client, records, how: str) -> dict:
    """dask.dataframe sort_values / shuffle (p2p) of the records, K partitions."""
    workers = sorted(client.nthreads())
    parts = [_frame(records[k::K]) for k in range(K)]
    futures = [
        client.scatter(p, workers=[w]) for p, w in zip(parts, workers, strict=True)
    ]
    frame = dd.from_delayed(futures, meta=parts[0].iloc[:0])
    start = time.perf_counter()
    if how == "sort_values":
        out = frame.sort_values("key64")
    else:
        out = frame.shuffle("key64", npartitions=K)
    persisted = client.persist(out)
    wait(persisted)
    seconds = time.perf_counter() - start
    if how == "sort_values":
        got = persisted.compute()
        assert got["key64"].is_monotonic_increasing
        assert len(got) == len(records)
    return {"total_seconds": seconds}


def _parse(blob: bytes) -> list:
    return list(terasort_map(blob))


def _sort_groups(groups):
    return [(key, sorted(records)) for key, records in groups]


def bag_case(client, records) -> dict:
    """dask.bag: range-partition by key with a task shuffle, sort each group."""
    workers = sorted(client.nthreads())
    size = -(-len(records) // K)
    blobs = [
        b"".join(k + v for k, v in records[i * size : (i + 1) * size]) for i in range(K)
    ]
    parts = [
        client.scatter(b, workers=[w]) for b, w in zip(blobs, workers, strict=True)
    ]
    start = time.perf_counter()
    bag = db.from_delayed([dask.delayed(_parse)(p) for p in parts])
    grouped = bag.groupby(
        lambda rec: range_partition(rec[0], K), shuffle="tasks", npartitions=K
    )
    persisted = client.persist(grouped.map_partitions(_sort_groups))
    wait(persisted)
    seconds = time.perf_counter() - start
    flat = [rec for _, part in sorted(persisted.compute()) for rec in part]
    assert flat == sorted(records), "dask.bag output is not sorted"
    return {"total_seconds": seconds}


def _texts(n_files: int, words: int, rng: np.random.Generator) -> list[str]:
    vocab = [f"w{i}" for i in range(2000)]
    picks = rng.zipf(1.3, size=(n_files, words)) % len(vocab)
    return [" ".join(vocab[i] for i in row) for row in picks]


def _count_partition(texts):
    return (pair for text in texts for pair in count_words(text))


def wordcount_cases(client, texts, bandwidth) -> list[dict]:
    expected = {}
    for text in texts:
        for word in text.split():
            expected[word] = expected.get(word, 0) + 1
    rows = []
    start = time.perf_counter()
    coded = run_mapreduce(
        db.from_sequence(texts, npartitions=len(texts)),
        _count_partition,
        sum_counts,
        K=K,
        r=2,
        coded=True,
        combine=True,
        client=client,
    )
    elapsed = time.perf_counter() - start
    assert coded.output == expected
    rows.append(
        {"scheme": "coded r=2 +combiner", **_record_row(coded.record, bandwidth)}
    )
    rows[-1]["end_to_end_seconds"] = elapsed
    bag = db.from_sequence(texts, npartitions=K).map(str.split).flatten()
    start = time.perf_counter()
    folded = bag.foldby(lambda w: w, lambda acc, _: acc + 1, 0, lambda a, b: a + b)
    result = dict(folded.compute())
    rows.append(
        {"scheme": "dask.bag.foldby", "total_seconds": time.perf_counter() - start}
    )
    assert result == expected
    return rows


def _progress(row: dict) -> None:
    """One line as soon as a case is done (a long run shows where it is)."""
    print(f"  done: {row['scheme']:<34} {row['total_seconds']:>7.2f} s", flush=True)


def median_rows(runs: list[dict]) -> dict:
    """Medians of the numeric fields over repeats; other fields from the first."""
    out = dict(runs[0])
    for key, value in runs[0].items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = statistics.median(run[key] for run in runs)
    return out


def _print_terasort(rows: list[dict], n: int, repeats: int, bandwidth: float) -> None:
    print(
        f"\nTeraSort, {n} records of 100 bytes, K={K}, median of {repeats}; "
        f"measured bandwidth {bandwidth / 1e6:.0f} MB/s"
    )
    print(
        f"{'scheme':<34} {'total':>6} {'map':>6} {'pack':>6} {'shuffle':>7} "
        f"{'unpack':>6} {'reduce':>6} {'wire MB':>7} {'up max':>7} "
        f"{'model a':>7} {'model b':>7} {'vs df':>6}"
    )
    df = next(r["total_seconds"] for r in rows if r["scheme"] == "dd.sort_values")
    for row in rows:
        cells = [f"{row['scheme']:<34}", f"{row['total_seconds']:>6.2f}"]
        for key in ("map", "pack", "shuffle", "unpack", "reduce"):
            value = row.get(f"{key}_seconds")
            cells.append(f"{value:>6.3f}" if value is not None else f"{'':>6}")
        wire = row.get("wire_bytes")
        up = row.get("max_upload_bytes")
        cells.append(f"{wire / 1e6:>7.2f}" if wire is not None else f"{'':>7}")
        cells.append(f"{up / 1e6:>7.2f}" if up is not None else f"{'':>7}")
        for key in ("model_multicast_seconds", "model_switched_seconds"):
            value = row.get(key)
            cells.append(f"{value:>7.3f}" if value is not None else f"{'':>7}")
        cells.append(f"{df / row['total_seconds']:>6.2f}")
        print(" ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small smoke run")
    parser.add_argument("--records", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=None)
    args = parser.parse_args()
    n = args.records or (10_000 if args.quick else 100_000)
    repeats = args.repeats or (1 if args.quick else 3)
    records = generate_records(n, rng=SEED)
    texts = _texts(2 * 28, 2_000 if args.quick else 20_000, np.random.default_rng(SEED))
    rows, words = [], []
    with (
        LocalCluster(
            n_workers=K, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        Client(cluster) as client,
    ):
        bandwidth = measure_bandwidth(client, 5_000_000 if args.quick else 50_000_000)
        slow = sorted(client.nthreads())[0]
        cases = [
            ("coded r=2 unicast", 2, True, "unicast", None),
            ("coded r=2 forward", 2, True, "forward", None),
            ("uncoded r=2 (same placement)", 2, False, "unicast", None),
            ("coded r=3 unicast", 3, True, "unicast", None),
            ("coded r=3 forward", 3, True, "forward", None),
            ("uncoded r=3 (same placement)", 3, False, "unicast", None),
            ("uncoded r=1", 1, False, "unicast", None),
            ("coded r=2, one mapper 5x slow", 2, True, "unicast", slow),
            ("uncoded r=1, one mapper 5x slow", 1, False, "unicast", slow),
        ]
        for name, r, coded, delivery, slow_at in cases:
            runs = [
                terasort_case(client, records, r, coded, delivery, bandwidth, slow_at)
                for _ in range(repeats)
            ]
            rows.append({"scheme": name, "r": r, **median_rows(runs)})
            _progress(rows[-1])
        for how in ("sort_values", "shuffle"):
            runs = [dataframe_case(client, records, how) for _ in range(repeats)]
            rows.append({"scheme": f"dd.{how}", **median_rows(runs)})
            _progress(rows[-1])
        runs = [bag_case(client, records) for _ in range(repeats)]
        rows.append({"scheme": "dask.bag groupby", **median_rows(runs)})
        _progress(rows[-1])
        for _ in range(repeats):
            words.append(wordcount_cases(client, texts, bandwidth))
    _print_terasort(rows, n, repeats, bandwidth)
    by = {row["scheme"]: row for row in rows}
    ratio = (
        by["coded r=2, one mapper 5x slow"]["total_seconds"]
        / by["coded r=2 unicast"]["total_seconds"]
    )
    print(f"\nr=2 coded with one 5x-slow mapper / without: {ratio:.2f}")
    plain = (
        by["uncoded r=1, one mapper 5x slow"]["total_seconds"]
        / by["uncoded r=1"]["total_seconds"]
    )
    print(f"r=1 uncoded with one 5x-slow mapper / without: {plain:.2f}")
    forward = by["coded r=3 forward"]["max_origin_upload_bytes"] / max(
        1, by["coded r=3 unicast"]["max_origin_upload_bytes"]
    )
    print(f"r=3 forward / unicast sender upload (busiest sender): {forward:.3f}")
    word_rows = [median_rows([run[i] for run in words]) for i in range(2)]
    print(f"\nword count, {len(texts)} files, median of {repeats}")
    for row in word_rows:
        print(f"{row['scheme']:<22} {row['total_seconds']:>7.2f} s")
    plan = plan_shuffle(place_li(K, 2))
    write_results(
        "mapreduce",
        {
            "seed": SEED,
            "records": n,
            "K": K,
            "repeats": repeats,
            "bandwidth_bytes_per_second": bandwidth,
            "machine": platform.platform(),
            "terasort": rows,
            "wordcount": word_rows,
            "straggler_ratio_r2_coded": ratio,
            "straggler_ratio_r1_uncoded": plain,
            "forward_over_unicast_sender_upload_r3": forward,
            "plan_r2_frames": len(plan_traffic(plan).transmission_bytes),
        },
        quick=args.quick,
    )


if __name__ == "__main__":
    main()
