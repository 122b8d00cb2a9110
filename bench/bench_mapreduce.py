"""Coded TeraSort and word count on Dask against Dask's own shuffles.

One LocalCluster of K single-threaded worker processes. TeraSort of 100-byte
records: coded (r = 2, 3; unicast and forwarding delivery) and uncoded with the
same placement, against ``dask.dataframe.sort_values`` and ``shuffle`` (its p2p
shuffle; sorted on the key's first 8 bytes as uint64) and ``dask.bag.groupby``;
r = 2 coded and r = 1 with and without one mapper whose whole map task is 5x
slower (``slow_map``, a pair parser; its reference runs the same parser with no
slow worker), and the r = 2, 3 coded job through the generic per-key reduce
(every record its own key; what TeraSort did before its array path). Word
count (10^6 lines of Zipf text by default, 4 K partitions of one ``dask.bag``):
``run_mapreduce`` with its defaults (uncoded, r = 1) and a combiner, coded r = 2
with a combiner, and ``dask.bag.foldby``, interleaved in every repeat. For every
TeraSort run: stage times (map, pack, shuffle, unpack, reduce, and the shuffle's
transfer part, shuffle - pack - unpack), per-node wire bytes, and the shuffle time
the network models predict: (a) multicast and (b) switched from the measured
bytes and a separately measured point-to-point bandwidth, and (b+lat) adding a
per-bundle latency measured by its own calibration (``measure_latency``), never
fitted to the runs it predicts. Cases are interleaved within each repeat (after
one warm-up run); medians over repeats; the load average before and after; JSON
to bench/results/<name>.json.

    python bench/bench_mapreduce.py [--quick] [--records N] [--repeats R] [--only "a;b"]
        [--lines L] [--no-wordcount] [--teragen-records N] [--teragen-repeats R]
        [--no-teragen] [--model-records N] [--model-repeats R] [--no-model-check]
        [--smallfiles N] [--smallfiles-repeats R] [--smallfiles-ungrouped]
        [--no-smallfiles] [--links RATE]

(``--only none`` runs the word count alone; ``--only none --no-wordcount`` the
TeraSort generated on the workers alone, ``_teragen_bench.py``: 10^7 records by
default, uncoded against ``dd.sort_values`` and coded r = 2, 3 on an emulated
200 Mbit/s network.) The shuffle model check (``_teragen_bench.model_check_section``,
10^6 records by default) runs uncoded and coded r = 2, 3 on emulated 100 and
400 Mbit/s links and compares each measured shuffle with the switched model plus
its separately calibrated fixed cost, and the model's choice with the measured
fastest. The small-files word count (``_smallfiles_bench.smallfiles_section``,
1800 files of about 10 KiB by default) runs ``run_mapreduce`` (grouped inputs,
default and coded r = 2; one map task per file in the first repeat) against a
``dask.bag`` Counter per partition and a fold.
fastest. With ``--links RATE`` (e.g. ``100mbit``) everything runs on worker
processes at their own addresses whose uploads the kernel shapes
(``coded.runtime.ShapedCluster``), and the model check is ``_links_bench``'s:
kernel-shaped 100 and 400 Mbit/s links (and one slow link), against the model
and the emulator.
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import platform
import statistics
import time
import uuid

import dask
import dask.bag as db
import dask.dataframe as dd
import numpy as np
import pandas as pd
from _harness import add_links_option, cluster_client, write_results
from _links_bench import NETWORKS, kernel_model_section
from _smallfiles_bench import smallfiles_section
from _teragen_bench import model_check_section, terasort_section
from distributed import Client, get_worker, wait

from mapreduce import (
    MapReduceOptions,
    count_words,
    generate_records,
    place_li,
    plan_shuffle,
    range_partition,
    run_mapreduce,
    run_terasort,
    sum_counts,
    terasort_map,
)
from mapreduce._network import frames_of
from theory import shuffle_seconds_multicast, shuffle_seconds_switched

SEED = 20261203
K = 8
SLOWDOWN = 5.0
dask.config.set({"dataframe.convert-string": False})  # keep bytes as bytes


def _lag(marks: dict, token: str) -> None:
    """Sleep ``SLOWDOWN - 1`` times the wall time since this worker's last sleep.

    The clock (`marks`, kept on the worker) runs across the job's map tasks on
    this worker (per `token`), so the time between two tasks (the runtime's
    partitioning and pickling, task dispatch) is slowed down too: the worker's
    whole map phase, from its first map call on, takes ``SLOWDOWN`` times as
    long, as on a 5x slower machine.
    """
    now = time.perf_counter()
    time.sleep((SLOWDOWN - 1) * (now - marks.get(token, now)))
    marks[token] = time.perf_counter()


def slow_map(address: str, token: str, blob: bytes):
    """terasort_map on a worker 5x slower at `address` (see ``_lag``).

    It sleeps every 64 pairs (the runtime's cancel-check period), so the
    runtime's cooperative cancel stops it between two chunks. (This script's
    functions travel by value, so the clock lives on the worker object.)
    """
    worker = get_worker()
    slow = worker.address == address
    if slow:
        if not hasattr(worker, "bench_slow_marks"):
            worker.bench_slow_marks = {}
        marks = worker.bench_slow_marks
        marks.setdefault(token, time.perf_counter())
    for count, pair in enumerate(terasort_map(blob), 1):
        yield pair
        if slow and count % 64 == 0:
            _lag(marks, token)
    if slow:
        _lag(marks, token)


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


def _tiny() -> np.ndarray:
    return np.zeros(8, dtype=np.uint8)


def measure_latency(client: Client, repeats: int = 21) -> float:
    """Seconds of one dependent hop: a task on worker b using a tiny array on a.

    A calibration of its own (median of `repeats`), never fitted to the runs it
    predicts: submit to result of a task that fetches 8 bytes from a peer, which
    is what each bundle of the runtime's shuffle costs besides its bytes.
    """
    a, b = sorted(client.nthreads())[:2]
    times = []
    for _ in range(repeats):
        src = client.submit(_tiny, workers=[a], pure=False)
        wait(src)
        start = time.perf_counter()
        wait(client.submit(_size, src, workers=[b], pure=False))
        times.append(time.perf_counter() - start)
        del src
    return statistics.median(times)


def calibrate_fixed_seconds(
    client: Client, r: int, coded: bool, delivery: str
) -> float:
    """The shuffle's fixed cost: its transfer part on 200 records (median of 3).

    The same job (placement, plan, tasks, bundles) on a few kilobytes, so the
    bytes term is negligible; a calibration of its own, not a fit to the runs
    it predicts.
    """
    tiny = generate_records(200, rng=SEED + 1)
    times = []
    for _ in range(3):
        options = MapReduceOptions(delivery=delivery)
        rec = run_terasort(
            tiny, K=K, r=r, coded=coded, client=client, options=options
        ).record
        times.append(
            max(0.0, rec.shuffle_seconds - rec.pack_seconds - rec.unpack_seconds)
        )
    return statistics.median(times)


def bundle_messages(r: int, coded: bool, delivery: str) -> list[int]:
    """Bundles each node sends or receives in the runtime's shuffle (no straggler).

    Frames between one pair of nodes in one round travel as one bundle.
    """
    frames = frames_of(plan_shuffle(place_li(K, r), coded=coded))
    hops = [frame.hops(delivery) for frame in frames]
    rounds = {
        (0 if delivery == "unicast" else h, pair)
        for frame_hops in hops
        for h, pair in enumerate(frame_hops)
    }
    messages = [0] * K
    for _, (source, target) in rounds:
        messages[source] += 1
        messages[target] += 1
    return messages


def _record_row(
    rec, bandwidth: float, latency: float, messages: list[int], fixed: float = 0.0
) -> dict:
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
    plan_like["model_switched_latency_seconds"] = shuffle_seconds_switched(
        rec.upload_bytes,
        rec.download_bytes,
        bandwidth,
        messages=messages,
        latency_seconds=latency,
    )
    plan_like["model_switched_calibrated_seconds"] = (
        fixed + plan_like["model_switched_seconds"]
    )
    plan_like["transfer_seconds"] = max(
        0.0, rec.shuffle_seconds - rec.pack_seconds - rec.unpack_seconds
    )
    return plan_like


def terasort_case(
    client, records, r, coded, delivery, net, slow=None, bandwidth=None
) -> dict:
    """One run_terasort; `slow`: None (array parser), "" or a slow worker's address.

    With `slow` a string the pair parser ``slow_map`` runs on every node (slowed
    down on that worker only), so ``""`` is the no-straggler reference of a slow
    case. With `bandwidth` (bytes/s) the shuffle runs on the emulated network,
    and the row adds the switched model's time at that bandwidth.
    """
    token = uuid.uuid4().hex
    map_fn = None if slow is None else functools.partial(slow_map, slow, token)
    result = run_terasort(
        records,
        K=K,
        r=r,
        coded=coded,
        client=client,
        map_fn=map_fn,
        options=MapReduceOptions(delivery=delivery, emulated_bandwidth=bandwidth),
    )
    assert result.records == sorted(records), "TeraSort output is not sorted"
    messages = bundle_messages(r, coded, delivery)
    fixed = net["fixed"][r, coded, delivery]
    row = _record_row(result.record, net["bandwidth"], net["latency"], messages, fixed)
    if bandwidth is not None:
        rec = result.record
        row["network"] = f"emulated {bandwidth * 8 / 1e6:.0f} Mbit/s"
        row["model_switched_emulated_seconds"] = shuffle_seconds_switched(
            rec.upload_bytes, rec.download_bytes, bandwidth
        )
    return row


def _sort_values(key: bytes, values: list[bytes]) -> list[bytes]:
    return sorted(values)


def per_record_case(client, records, r: int, net: dict) -> dict:
    """TeraSort through the generic per-key reduce (every record its own key).

    What run_terasort did before records moved as arrays: the reference that
    shows what the array path saves.
    """
    placement = place_li(K, r)
    blob = b"".join(k + v for k, v in records)
    size = math.ceil(len(records) / placement.N) * 100
    files = [blob[f * size : (f + 1) * size] for f in range(placement.N)]
    result = run_mapreduce(
        files,
        terasort_map,
        _sort_values,
        K=K,
        placement=placement,
        coded=True,
        partition=range_partition,
        client=client,
    )
    got = [(k, v) for k, values in result.output.items() for v in values]
    assert got == sorted(records), "per-record TeraSort output is not sorted"
    messages = bundle_messages(r, True, "unicast")
    fixed = net["fixed"].get((r, True, "unicast"), 0.0)
    return _record_row(result.record, net["bandwidth"], net["latency"], messages, fixed)


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
        client.scatter(p, workers=[w], hash=False)
        for p, w in zip(parts, workers, strict=True)
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
        client.scatter(b, workers=[w], hash=False)
        for b, w in zip(blobs, workers, strict=True)
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


def _lines(n: int, rng: np.random.Generator) -> list[str]:
    """`n` lines of 8 Zipf(1.3) words over a 5,000-word vocabulary."""
    vocab = np.array([f"w{i}" for i in range(5000)])
    picks = rng.zipf(1.3, size=(n, 8)) % len(vocab)
    return [" ".join(row) for row in vocab[picks]]


def _count_partition(texts):
    return (pair for text in texts for pair in count_words(text))


def _wordcount_mr(client, bag, **kwargs):
    start = time.perf_counter()
    result = run_mapreduce(
        bag, _count_partition, sum_counts, K=K, combine=True, client=client, **kwargs
    )
    return result.output, time.perf_counter() - start


def _wordcount_foldby(client, bag):
    start = time.perf_counter()
    words = bag.map(str.split).flatten()
    folded = words.foldby(lambda w: w, lambda acc, _: acc + 1, 0, lambda a, b: a + b)
    output = dict(folded.compute())
    return output, time.perf_counter() - start


WORDCOUNT = {  # name -> run(client, bag) -> (output, seconds)
    "run_mapreduce default +combiner": _wordcount_mr,
    "coded r=2 +combiner": functools.partial(_wordcount_mr, r=2, coded=True),
    "dask.bag.foldby": _wordcount_foldby,
}


def wordcount_cases(client, lines: list[str], npartitions: int) -> list[dict]:
    """One run of every word-count case on the same bag, each checked."""
    expected: dict[str, int] = {}
    for line in lines:
        for word in line.split():
            expected[word] = expected.get(word, 0) + 1
    rows = []
    for name, run in WORDCOUNT.items():
        output, seconds = run(client, db.from_sequence(lines, npartitions=npartitions))
        assert output == expected, f"{name}: wrong counts"
        rows.append({"scheme": name, "total_seconds": seconds})
        print(f"  word count: {name:<34} {seconds:>7.2f} s", flush=True)
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


def _print_terasort(rows: list[dict], n: int, repeats: int, net: dict) -> None:
    print(
        f"\nTeraSort, {n} records of 100 bytes, K={K}, median of {repeats}; "
        f"measured bandwidth {net['bandwidth'] / 1e6:.0f} MB/s, "
        f"per-hop latency {net['latency'] * 1e3:.1f} ms"
    )
    print(
        f"{'scheme':<34} {'total':>6} {'map':>6} {'pack':>6} {'shuffle':>7} "
        f"{'unpack':>6} {'reduce':>6} {'xfer':>6} {'wire MB':>7} {'up max':>7} "
        f"{'model a':>7} {'model b':>7} {'b+lat':>7} {'b+fix':>7} {'vs df':>6}"
    )
    df = next(
        (r["total_seconds"] for r in rows if r["scheme"] == "dd.sort_values"), None
    )
    for row in rows:
        cells = [f"{row['scheme']:<34}", f"{row['total_seconds']:>6.2f}"]
        for key in ("map", "pack", "shuffle", "unpack", "reduce", "transfer"):
            value = row.get(f"{key}_seconds")
            cells.append(f"{value:>6.3f}" if value is not None else f"{'':>6}")
        wire = row.get("wire_bytes")
        up = row.get("max_upload_bytes")
        cells.append(f"{wire / 1e6:>7.2f}" if wire is not None else f"{'':>7}")
        cells.append(f"{up / 1e6:>7.2f}" if up is not None else f"{'':>7}")
        for key in ("multicast", "switched", "switched_latency", "switched_calibrated"):
            value = row.get(f"model_{key}_seconds")
            cells.append(f"{value:>7.3f}" if value is not None else f"{'':>7}")
        ratio = df / row["total_seconds"] if df else math.nan
        cells.append(f"{ratio:>6.2f}")
        print(" ".join(cells))


CASES = [  # name, r, coded, delivery, slow mapper (None: array parser, no)
    ("coded r=2 unicast", 2, True, "unicast", None),
    ("coded r=2, pair parser", 2, True, "unicast", False),
    ("coded r=2, one mapper 5x slow", 2, True, "unicast", True),
    ("coded r=2 forward", 2, True, "forward", None),
    ("uncoded r=2 (same placement)", 2, False, "unicast", None),
    ("coded r=3 unicast", 3, True, "unicast", None),
    ("coded r=3 forward", 3, True, "forward", None),
    ("uncoded r=3 (same placement)", 3, False, "unicast", None),
    ("uncoded r=1", 1, False, "unicast", None),
    ("uncoded r=1, pair parser", 1, False, "unicast", False),
    ("uncoded r=1, one mapper 5x slow", 1, False, "unicast", True),
]
EMULATED_MBIT = 200.0  # the emulated cases' links, Mbit/s per node and direction
EMULATED = {  # name -> r, coded, delivery on the emulated network
    "uncoded r=1, emulated": (1, False, "unicast"),
    "uncoded r=2 (same placement), emulated": (2, False, "unicast"),
    "coded r=2 forward, emulated": (2, True, "forward"),
    "coded r=3 forward, emulated": (3, True, "forward"),
}
PER_RECORD = {"coded r=2 per-record reduce": 2, "coded r=3 per-record reduce": 3}
BASELINES = ("dd.sort_values", "dd.shuffle", "dask.bag groupby")
QUICK = ("coded r=2 unicast", "uncoded r=1", "dd.sort_values")  # --quick: a smoke run


def _run_case(client, records, name: str, net: dict, slow: str) -> dict:
    for case, r, coded, delivery, is_slow in CASES:
        if case == name:
            address = None if is_slow is None else (slow if is_slow else "")
            return terasort_case(client, records, r, coded, delivery, net, address)
    if name in EMULATED:
        r, coded, delivery = EMULATED[name]
        bandwidth = EMULATED_MBIT * 1e6 / 8
        return terasort_case(client, records, r, coded, delivery, net, None, bandwidth)
    if name in PER_RECORD:
        return per_record_case(client, records, PER_RECORD[name], net)
    if name == "dask.bag groupby":
        return bag_case(client, records)
    return dataframe_case(client, records, name.removeprefix("dd."))


def _ratio(by: dict, numerator: str, denominator: str, key: str) -> float | None:
    if numerator in by and denominator in by:
        return by[numerator][key] / max(by[denominator][key], 1e-12)
    return None


def _over_model(rows: list[dict], seconds: str, model: str) -> dict[str, float]:
    """Per scheme: measured `seconds` over the `model` seconds, where a row has them."""
    return {row["scheme"]: row[seconds] / row[model] for row in rows if row.get(model)}


def _summary(rows: list[dict]) -> dict:
    by = {row["scheme"]: row for row in rows}
    out = {
        "straggler_ratio_r2_coded": _ratio(
            by,
            "coded r=2, one mapper 5x slow",
            "coded r=2, pair parser",
            "total_seconds",
        ),
        "straggler_ratio_r1_uncoded": _ratio(
            by,
            "uncoded r=1, one mapper 5x slow",
            "uncoded r=1, pair parser",
            "total_seconds",
        ),
        "forward_over_unicast_sender_upload_r3": _ratio(
            by, "coded r=3 forward", "coded r=3 unicast", "max_origin_upload_bytes"
        ),
        "forward_over_unicast_sender_upload_r2": _ratio(
            by, "coded r=2 forward", "coded r=2 unicast", "max_origin_upload_bytes"
        ),
        "transfer_over_model_b_latency": _over_model(
            rows, "transfer_seconds", "model_switched_latency_seconds"
        ),
        "transfer_over_model_b_calibrated": _over_model(
            rows, "transfer_seconds", "model_switched_calibrated_seconds"
        ),
        "emulated_shuffle_over_switched_model": _over_model(
            rows, "shuffle_seconds", "model_switched_emulated_seconds"
        ),
        "emulated_total_over_uncoded_r1": {
            row["scheme"]: row["total_seconds"]
            / by["uncoded r=1, emulated"]["total_seconds"]
            for row in rows
            if "emulated" in row["scheme"] and "uncoded r=1, emulated" in by
        },
        "dd_sort_values_over_scheme": {
            row["scheme"]: by["dd.sort_values"]["total_seconds"] / row["total_seconds"]
            for row in rows
            if "dd.sort_values" in by
        },
    }
    for key, value in out.items():
        if isinstance(value, float):
            print(f"{key}: {value:.3f}")
        elif isinstance(value, dict):
            print(f"{key}: " + ", ".join(f"{k}={v:.2f}" for k, v in value.items()))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small smoke run")
    parser.add_argument("--records", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument(
        "--only", default="", help="semicolon-separated substrings of the cases to run"
    )
    parser.add_argument("--no-wordcount", action="store_true")
    parser.add_argument(
        "--lines", type=int, default=None, help="word-count lines (default 10^6)"
    )
    parser.add_argument("--name", default="mapreduce", help="results file name")
    parser.add_argument(
        "--teragen-records",
        type=int,
        default=None,
        help="records of the TeraSort generated on the workers (default 10^7)",
    )
    parser.add_argument("--teragen-repeats", type=int, default=None)
    parser.add_argument("--no-teragen", action="store_true")
    parser.add_argument(
        "--model-records",
        type=int,
        default=None,
        help="records of the shuffle model check (default 10^6)",
    )
    parser.add_argument("--model-repeats", type=int, default=None)
    parser.add_argument("--no-model-check", action="store_true")
    parser.add_argument("--smallfiles", type=int, default=None, help="default 1800")
    parser.add_argument("--smallfiles-repeats", type=int, default=None)
    parser.add_argument("--smallfiles-ungrouped", action="store_true")
    parser.add_argument("--no-smallfiles", action="store_true")
    add_links_option(parser)  # and then the model check on kernel-shaped links
    args = parser.parse_args()
    n = args.records or (2_000 if args.quick else 100_000)
    repeats = args.repeats or (1 if args.quick else 3)
    wanted = [w for w in args.only.split(";") if w] or (
        list(QUICK) if args.quick else []
    )
    names = [
        name
        for name in [c[0] for c in CASES]
        + list(EMULATED)
        + list(PER_RECORD)
        + list(BASELINES)
        if not wanted or any(w in name for w in wanted)
    ]
    records = generate_records(n, rng=SEED)
    lines = _lines(
        args.lines or (2_000 if args.quick else 1_000_000), np.random.default_rng(SEED)
    )
    runs: dict[str, list[dict]] = {name: [] for name in names}
    words = []
    load_before = os.getloadavg()
    with cluster_client(args, K) as client:
        net = {
            "bandwidth": measure_bandwidth(
                client, 5_000_000 if args.quick else 50_000_000
            ),
            "latency": measure_latency(client),
            "fixed": {},
        }
        shapes = {c[0]: c[1:4] for c in CASES} | EMULATED
        for key in {shapes[name] for name in names if name in shapes}:
            net["fixed"][key] = calibrate_fixed_seconds(client, *key)
        slow = sorted(client.nthreads())[0]
        if names:
            _run_case(client, records, names[0], net, slow)  # warm-up, not counted
        if not args.no_wordcount:
            wordcount_cases(client, lines[: len(lines) // 10], 4 * K)  # warm-up
        for repeat in range(repeats):  # interleaved: drift in load hits every case
            for name in names:
                runs[name].append(_run_case(client, records, name, net, slow))
                run = runs[name][-1]
                print(
                    f"  repeat {repeat}: {name:<34} {run['total_seconds']:>7.2f} s"
                    + (
                        f" (map {run['map_seconds']:.2f} s)"
                        if "map_seconds" in run
                        else ""
                    )
                    + (f" cut: {run['stragglers']}" if run.get("stragglers") else ""),
                    flush=True,
                )
            if not args.no_wordcount:
                words.append(wordcount_cases(client, lines, 4 * K))
        model_check = None
        if not args.no_model_check and not args.links:
            model_check = model_check_section(
                client,
                args.model_records or (20_000 if args.quick else 1_000_000),
                K,
                args.model_repeats or (1 if args.quick else 2),
                *([("uncoded r=1", "coded r=2 unicast")] if args.quick else []),
            )
        teragen = None
        if not args.no_teragen:
            teragen = terasort_section(
                client,
                args.teragen_records or (20_000 if args.quick else 10_000_000),
                K,
                args.teragen_repeats or (1 if args.quick else 2),
            )
        smallfiles = None
        if not args.no_smallfiles:
            smallfiles = smallfiles_section(
                client,
                args.smallfiles or (90 if args.quick else 1800),
                K,
                args.smallfiles_repeats or (1 if args.quick else 5),
                args.smallfiles_ungrouped,
            )
    if not args.no_model_check and args.links:  # its own clusters, one by one
        model_check = kernel_model_section(
            args.model_records or (20_000 if args.quick else 1_000_000),
            args.model_repeats or (1 if args.quick else 2),
            tuple(NETWORKS)[:1] if args.quick else tuple(NETWORKS),
        )
    load_after = os.getloadavg()
    rows = [
        {
            "scheme": name,
            **median_rows(runs[name]),
            "stragglers_per_run": [run.get("stragglers") for run in runs[name]],
            "total_seconds_per_run": [run["total_seconds"] for run in runs[name]],
        }
        for name in names
    ]
    _print_terasort(rows, n, repeats, net)
    print(f"load average before {load_before}, after {load_after} (2 cores, shared)")
    summary = _summary(rows)
    word_rows = [
        {
            "scheme": name,
            "total_seconds": statistics.median(
                run[i]["total_seconds"] for run in words
            ),
            "total_seconds_per_run": [run[i]["total_seconds"] for run in words],
        }
        for i, name in enumerate(WORDCOUNT)
        if words
    ]
    word_ratios = {}
    if word_rows:
        fold = word_rows[-1]["total_seconds"]
        print(
            f"\nword count, {len(lines)} lines in {4 * K} partitions, K={K}, median "
            f"of {repeats} (interleaved)"
        )
        for row in word_rows:
            word_ratios[row["scheme"]] = row["total_seconds"] / fold
            print(
                f"{row['scheme']:<34} {row['total_seconds']:>7.2f} s "
                f"{word_ratios[row['scheme']]:>5.2f}x foldby"
            )
    write_results(
        args.name,
        {
            "seed": SEED,
            "records": n,
            "K": K,
            "repeats": repeats,
            "bandwidth_bytes_per_second": net["bandwidth"],
            "latency_seconds": net["latency"],
            "fixed_shuffle_seconds": {str(k): v for k, v in net["fixed"].items()},
            "load_average_before": load_before,
            "load_average_after": load_after,
            "machine": platform.platform(),
            "terasort": rows,
            "wordcount_lines": len(lines),
            "wordcount": word_rows,
            "wordcount_over_foldby": word_ratios,
            "teragen": teragen,
            "shuffle_model_check": model_check,
            "smallfiles": smallfiles,
            **summary,
        },
        quick=args.quick,
    )


if __name__ == "__main__":
    main()
