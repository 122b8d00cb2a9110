"""TeraSort of records generated on the workers (``mapreduce.terasort``).

A section of ``bench_mapreduce.py``: on its cluster, every case generates the
same records on the workers (seed fixed), sorts them and validates the output
there (TeraValidate). Cases: uncoded r = 1 against ``dd.sort_values`` (its p2p
shuffle) on the same 8 partitions, moved into a dataframe of numeric columns
(the 8-byte key prefix as uint64, the other 92 bytes as words: 100 bytes a row),
and, on an emulated 200 Mbit/s network (a token bucket per node and direction),
uncoded r = 1 and coded r = 2, 3 with forwarding delivery. Reported per case:
the sort's wall time (generation and validation apart), the record's map,
shuffle and reduce stages (``dd.sort_values``: its whole sort is the shuffle),
and the load average before and after it. After one small warm-up run of
every case, cases are interleaved across repeats.
"""

from __future__ import annotations

import os
import pickle
import statistics
import time

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
from distributed import wait

from mapreduce import (
    MapReduceOptions,
    summarize_records,
    terasort,
    validate_sorted,
)
from mapreduce._runtime_terasort import generate_inputs, summarize

RATE = 25e6  # bytes/s: 200 Mbit/s, emulated
SEED = 20261205
CASES: dict[str, dict | None] = {
    "uncoded r=1": {"r": 1, "coded": False},
    "dd.sort_values (p2p)": None,
    "uncoded r=1, 200 Mbit/s emulated": {
        "r": 1,
        "coded": False,
        "emulated_bandwidth": RATE,
    },
    "coded r=2 forward, 200 Mbit/s emulated": {
        "r": 2,
        "coded": True,
        "delivery": "forward",
        "emulated_bandwidth": RATE,
    },
    "coded r=3 forward, 200 Mbit/s emulated": {
        "r": 3,
        "coded": True,
        "delivery": "forward",
        "emulated_bandwidth": RATE,
    },
}
_WORDS = [f"w{i}" for i in range(12)]


def _to_frame(file: bytes) -> pd.DataFrame:
    """An input file (pickled records) as numeric columns: key, then 92 bytes."""
    rows = np.frombuffer(pickle.loads(file), np.uint8).reshape(-1, 100)
    key = np.ascontiguousarray(rows[:, :8]).view(">u8").ravel().astype(np.uint64)
    rest = np.ascontiguousarray(rows[:, 8:96]).view("<u8")
    tail = np.ascontiguousarray(rows[:, 96:]).view("<u4").ravel()
    columns = {"key": key} | {w: rest[:, i] for i, w in enumerate(_WORDS[:11])}
    return pd.DataFrame(columns | {_WORDS[11]: tail})


def _frame_summary(frame: pd.DataFrame):
    """TeraValidate's summary of a sorted dataframe partition, from its rows."""
    rows = np.empty((len(frame), 100), np.uint8)
    rows[:, :8] = frame["key"].to_numpy(">u8").view(np.uint8).reshape(-1, 8)
    words = np.stack([frame[w].to_numpy("<u8") for w in _WORDS[:11]], axis=1)
    rows[:, 8:96] = np.ascontiguousarray(words).view(np.uint8).reshape(-1, 88)
    rows[:, 96:] = frame[_WORDS[11]].to_numpy("<u4").view(np.uint8).reshape(-1, 4)
    return summarize_records(rows)


def _dask_sort(client, n: int, K: int) -> dict:
    """dd.sort_values on the uncoded run's K input partitions, validated."""
    workers = sorted(client.nthreads())[:K]
    sizes = [len(part) for part in np.array_split(np.arange(n), K)]
    files = generate_inputs(client, workers, SEED, sizes)
    inputs = summarize(client, files)
    parts = [client.submit(_to_frame, f) for f in files]
    meta = _to_frame(pickle.dumps(b""))
    frame = client.persist(dd.from_delayed(parts, meta=meta, verify_meta=False))
    wait(frame)
    start = time.perf_counter()
    with dask.config.set({"dataframe.shuffle.method": "p2p"}):
        out = client.persist(frame.sort_values("key"))
    wait(out)
    seconds = time.perf_counter() - start
    summaries = client.compute(
        [dask.delayed(_frame_summary)(part) for part in out.to_delayed()], sync=True
    )
    validate_sorted(inputs, summaries)
    return {"sort_seconds": seconds, "shuffle_seconds": seconds}


def _case(client, name: str, n: int, K: int) -> dict:
    load = os.getloadavg()
    options = CASES[name]
    if options is None:
        row = _dask_sort(client, n, K)
    else:
        run = terasort(
            n,
            client=client,
            K=K,
            r=options["r"],
            coded=options["coded"],
            seed=SEED,
            options=MapReduceOptions(
                delivery=options.get("delivery", "unicast"),
                emulated_bandwidth=options.get("emulated_bandwidth"),
                straggler_slack=float("inf"),
            ),
        )
        record = run.record
        row = {
            "sort_seconds": run.sort_seconds,
            "generate_seconds": run.generate_seconds,
            "validate_seconds": run.validate_seconds,
            "map_seconds": record.map_seconds,
            "shuffle_seconds": record.shuffle_seconds,
            "reduce_seconds": record.reduce_seconds,
            "upload_bytes": sum(record.upload_bytes),
        }
    return row | {"load_average_before": load, "load_average_after": os.getloadavg()}


def terasort_section(client, n: int, K: int, repeats: int) -> dict:
    """Run every case `repeats` times, interleaved; medians and the raw runs."""
    runs: dict[str, list[dict]] = {name: [] for name in CASES}
    for name in CASES:  # warm-up, not counted
        _case(client, name, max(1_000, n // 100), K)
    for repeat in range(repeats):
        for name in CASES:
            runs[name].append(_case(client, name, n, K))
            row = runs[name][-1]
            print(
                f"  teragen repeat {repeat}: {name:<40} sort {row['sort_seconds']:7.2f}"
                f" s, shuffle {row['shuffle_seconds']:6.2f} s, load "
                f"{row['load_average_before'][0]:.1f}",
                flush=True,
            )
    rows = []
    for name, cases in runs.items():
        median = {
            key: statistics.median(case[key] for case in cases)
            for key in cases[0]
            if not key.startswith("load")
        }
        rows.append({"scheme": name, **median, "runs": cases})
    _print(rows, n, K, repeats)
    return {"records": n, "K": K, "repeats": repeats, "bandwidth": RATE, "rows": rows}


def _print(rows: list[dict], n: int, K: int, repeats: int) -> None:
    by = {row["scheme"]: row for row in rows}
    print(
        f"\nTeraSort generated on the workers, {n} records, K={K}, median of "
        f"{repeats}; emulated: {RATE * 8 / 1e6:.0f} Mbit/s per node and direction"
    )
    for row in rows:
        over = row["sort_seconds"] / by["dd.sort_values (p2p)"]["sort_seconds"]
        print(
            f"{row['scheme']:<40} sort {row['sort_seconds']:7.2f} s "
            f"({over:4.2f}x dd.sort_values), shuffle {row['shuffle_seconds']:6.2f} s"
        )
