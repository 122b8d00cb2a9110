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
    model_prefers_coded,
    place_li,
    summarize_records,
    terasort,
    validate_sorted,
)
from mapreduce._runtime_terasort import generate_inputs, summarize
from theory import shuffle_seconds_switched

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
            "busiest_link_bytes": max(*record.upload_bytes, *record.download_bytes),
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
    ratios = _targets({row["scheme"]: row for row in rows})
    return {
        "records": n,
        "K": K,
        "repeats": repeats,
        "bandwidth": RATE,
        "rows": rows,
        "ratios": ratios,
    }


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


def _targets(by: dict[str, dict]) -> dict:
    """Issue targets against the floors the emulated links set.

    A node's links carry at most ``RATE`` bytes/s each way, and every receiver
    downloads each byte it lacks however the frames are coded or forwarded, so a
    shuffle takes at least its busiest link's bytes over ``RATE`` (the floor).
    Coding shortens the shuffle by at most the difference of the floors, and
    pays for it with ``r`` times the map.
    """
    uncoded = by["uncoded r=1, 200 Mbit/s emulated"]
    ratios = {
        "uncoded_over_dd_sort_values": by["uncoded r=1"]["sort_seconds"]
        / by["dd.sort_values (p2p)"]["sort_seconds"]
    }
    print(
        f"target uncoded <= 1.0x dd.sort_values: "
        f"{ratios['uncoded_over_dd_sort_values']:.2f}"
    )
    for r in (2, 3):
        coded = by[f"coded r={r} forward, 200 Mbit/s emulated"]
        floor_saving = (
            uncoded["busiest_link_bytes"] - coded["busiest_link_bytes"]
        ) / RATE
        extra_map = coded["map_seconds"] - uncoded["map_seconds"]
        ratios[f"coded_r{r}_over_uncoded"] = (
            coded["sort_seconds"] / uncoded["sort_seconds"]
        )
        print(
            f"target coded r={r} <= 1.0x uncoded (emulated): "
            f"{ratios[f'coded_r{r}_over_uncoded']:.2f}; its extra map {extra_map:.2f} s"
            f" against a shuffle shorter by at most {floor_saving:.2f} s"
        )
    coded = by["coded r=3 forward, 200 Mbit/s emulated"]
    ratios["shuffle_r3_over_uncoded"] = (
        coded["shuffle_seconds"] / uncoded["shuffle_seconds"]
    )
    ratios["shuffle_floor_r3_over_uncoded"] = (
        coded["busiest_link_bytes"] / uncoded["busiest_link_bytes"]
    )
    print(
        f"target coded r=3 shuffle <= 0.5x uncoded's (emulated): "
        f"{ratios['shuffle_r3_over_uncoded']:.2f}; the busiest link's bytes alone: "
        f"{ratios['shuffle_floor_r3_over_uncoded']:.2f}"
    )
    return ratios


MODEL_MBIT = (100.0, 400.0)  # the model check's emulated links, Mbit/s
MODEL_CASES = {  # name -> r, coded, delivery
    "uncoded r=1": (1, False, "unicast"),
    "coded r=2 unicast": (2, True, "unicast"),
    "coded r=2 forward": (2, True, "forward"),
    "uncoded r=3 (same placement)": (3, False, "unicast"),
    "coded r=3 unicast": (3, True, "unicast"),
    "coded r=3 forward": (3, True, "forward"),
}


def _shuffle(client, n: int, K: int, case: tuple, rate: float | None) -> tuple:
    """One generated TeraSort; its shuffle seconds and the switched model's bytes."""
    r, coded, delivery = case
    record = terasort(
        n,
        client=client,
        K=K,
        r=r,
        coded=coded,
        seed=SEED,
        options=MapReduceOptions(delivery=delivery, emulated_bandwidth=rate),
    ).record
    seconds = record.shuffle_seconds
    if rate is None:
        return seconds, 0.0
    return seconds, shuffle_seconds_switched(
        record.upload_bytes, record.download_bytes, rate
    )


def model_check_section(
    client, n: int, K: int, repeats: int, names: tuple[str, ...] = tuple(MODEL_CASES)
) -> dict:
    """Measured emulated shuffle against the switched model, at two bandwidths.

    Calibrations of their own, never fitted to the runs they predict, per case:
    ``fixed``, the shuffle of the same job on ``n // 100`` records at the same
    emulated rate less its bytes term; ``native``, the shuffle of the same job
    on ``n`` records without emulation (what the machine itself takes). Two
    predictions: ``additive`` (fixed + bytes / B) and ``overlap`` (max(native,
    bytes / B): the emulated links and Dask's own transfers run at once, and
    a reducer waits for both). `names` (of ``MODEL_CASES``) interleaved, medians
    over `repeats`.
    """
    runs: dict = {}
    for repeat in range(repeats):
        for mbit in MODEL_MBIT:
            rate = mbit * 1e6 / 8
            for name in names:
                case = MODEL_CASES[name]
                tiny, tiny_bytes = _shuffle(client, max(1_000, n // 100), K, case, rate)
                native, _ = _shuffle(client, n, K, case, None)
                seconds, model = _shuffle(client, n, K, case, rate)
                runs.setdefault((mbit, name), []).append(
                    {
                        "shuffle_seconds": seconds,
                        "bytes_model_seconds": model,
                        "fixed_seconds": max(0.0, tiny - tiny_bytes),
                        "native_seconds": native,
                        "load_average": os.getloadavg()[0],
                    }
                )
                print(
                    f"  model check {repeat}: {mbit:.0f} Mbit/s {name:<30} shuffle "
                    f"{seconds:6.2f} s, bytes/B {model:6.2f} s, native "
                    f"{native:5.2f} s",
                    flush=True,
                )
    rows = [_model_row(mbit, name, cases) for (mbit, name), cases in runs.items()]
    choices = _model_choices(rows)
    _print_model(rows, choices, n, K, repeats)
    return {"records": n, "K": K, "repeats": repeats, "rows": rows} | choices


def _model_row(mbit: float, name: str, cases: list[dict]) -> dict:
    row: dict = {"network": f"emulated {mbit:.0f} Mbit/s", "mbit": mbit}
    row |= {"scheme": name, "runs": cases}
    row |= {key: statistics.median(c[key] for c in cases) for key in cases[0]}
    row["additive_model_seconds"] = row["fixed_seconds"] + row["bytes_model_seconds"]
    row["overlap_model_seconds"] = max(
        row["native_seconds"], row["bytes_model_seconds"]
    )
    for model in ("bytes", "additive", "overlap"):
        row[f"measured_over_{model}_model"] = row["shuffle_seconds"] / max(
            row[f"{model}_model_seconds"], 1e-12
        )
    return row


def _model_choices(rows: list[dict]) -> dict:
    """Per bandwidth: the fastest shuffle by each model and as measured.

    And at r = 3 the choice ``run_mapreduce(coded=None)`` makes on one
    placement (coded only if the switched model of its bytes says strictly
    faster, ``model_prefers_coded``) against the faster one measured.
    """
    out: dict = {"fastest": {}, "r3_choice": {}}
    for mbit in MODEL_MBIT:
        mine = {row["scheme"]: row for row in rows if row["mbit"] == mbit}
        keys = ("shuffle", "bytes_model", "additive_model", "overlap_model")
        out["fastest"][f"{mbit:.0f} Mbit/s"] = {
            key: min(mine.values(), key=lambda row: row[f"{key}_seconds"])["scheme"]
            for key in keys
        }
        if (
            "coded r=3 unicast" not in mine
            or "uncoded r=3 (same placement)" not in mine
        ):
            continue
        coded, plain = mine["coded r=3 unicast"], mine["uncoded r=3 (same placement)"]
        out["r3_choice"][f"{mbit:.0f} Mbit/s"] = {
            "model_choice": "coded"
            if model_prefers_coded(place_li(8, 3))
            else "uncoded",
            "measured_faster": "coded"
            if coded["shuffle_seconds"] < plain["shuffle_seconds"]
            else "uncoded",
            "coded_over_uncoded_shuffle": coded["shuffle_seconds"]
            / plain["shuffle_seconds"],
        }
    return out


def _print_model(rows: list[dict], choices: dict, n: int, K: int, repeats: int):
    print(
        f"\nShuffle model check: TeraSort of {n} records generated on the workers, "
        f"K={K}, median of {repeats}; emulated links (token buckets)"
    )
    print(
        f"{'network':<22} {'scheme':<30} {'shuffle':>7} {'bytes/B':>7} "
        f"{'fixed':>6} {'native':>6} {'/bytes':>6} {'/add':>6} {'/overlap':>8}"
    )
    for row in rows:
        print(
            f"{row['network']:<22} {row['scheme']:<30} {row['shuffle_seconds']:7.2f} "
            f"{row['bytes_model_seconds']:7.2f} {row['fixed_seconds']:6.2f} "
            f"{row['native_seconds']:6.2f} {row['measured_over_bytes_model']:6.2f} "
            f"{row['measured_over_additive_model']:6.2f} "
            f"{row['measured_over_overlap_model']:8.2f}"
        )
    for network, choice in choices["r3_choice"].items():
        print(f"r=3 on one placement at {network}: {choice}")
    for network, fastest in choices["fastest"].items():
        print(
            f"fastest shuffle at {network}: "
            + ", ".join(f"{k}={v}" for k, v in fastest.items())
        )
