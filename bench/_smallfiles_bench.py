"""Word count over many small files: ``run_mapreduce`` against ``dask.bag``.

A section of ``bench_mapreduce.py``: on its cluster (K single-threaded worker
processes), a corpus of small text files (1800 by default, about 1556 words and
10 KiB each, 2.8 M words in all: Zipf(1.2) over a 20,000-word vocabulary, lines
of 12 words, seed fixed), held by the client as a list of strings, one per
file. Cases, interleaved in every repeat after one warm-up run of each:

- ``dask.bag``: ``from_sequence`` into K and 2K partitions, a ``Counter`` per
  partition and a fold of the counters (``Bag.reduction``); the faster of the
  two is the reference;
- ``run_mapreduce`` with its defaults (the inputs grouped into files of
  ``MapReduceOptions.group_bytes``; ``sum_counts`` folds, so the job combines
  map-side), with ``combine=False``, and coded r = 2;
- the default and coded r = 2 with ``group_bytes=None`` (one map task per file
  and node, as before grouping), in the first repeat only unless
  ``--smallfiles-ungrouped``.

Every output is checked against ``collections.Counter`` of the corpus. Per case:
median wall time and CPU seconds (client and cluster processes: less noisy than
wall time on a shared machine), and for ``run_mapreduce`` the record's files, map tasks,
intermediate bytes (the pickled map outputs) and stage seconds; the ratios the
issue sets targets on (default over the best bag, coded r = 2 over default); the
load average before and after.
"""

from __future__ import annotations

import collections
import contextlib
import os
import statistics
import time

import dask.bag as db
import numpy as np
import psutil

from mapreduce import MapReduceOptions, count_words, run_mapreduce, sum_counts

SEED = 20261207
WORDS_PER_FILE = 1556  # 2.8 M words over 1800 files
VOCABULARY = 20_000
ZIPF = 1.2


def small_files(n_files: int, seed: int = SEED) -> list[str]:
    """Return `n_files` texts of about ``WORDS_PER_FILE`` Zipf words (0.5-1.5x)."""
    rng = np.random.default_rng(seed)
    vocabulary = np.array([f"w{i}" for i in range(VOCABULARY)])
    sizes = rng.integers(WORDS_PER_FILE // 2, 3 * WORDS_PER_FILE // 2, n_files)
    words = vocabulary[rng.zipf(ZIPF, size=int(sizes.sum())) % VOCABULARY]
    texts, at = [], 0
    for n in sizes:
        chunk = words[at : at + n]
        texts.append("\n".join(" ".join(chunk[i : i + 12]) for i in range(0, n, 12)))
        at += n
    return texts


def _count_texts(texts) -> collections.Counter:
    counts: collections.Counter = collections.Counter()
    for text in texts:
        counts.update(text.split())
    return counts


def _add_counters(counters) -> collections.Counter:
    total: collections.Counter = collections.Counter()
    for counts in counters:
        total.update(counts)
    return total


def _bag(client, texts, npartitions: int) -> tuple[dict, dict]:
    bag = db.from_sequence(texts, npartitions=npartitions)
    counts = bag.reduction(_count_texts, _add_counters).compute()
    return counts, {}


def _mr(client, texts, K: int, **kwargs) -> tuple[dict, dict]:
    result = run_mapreduce(texts, count_words, sum_counts, K=K, client=client, **kwargs)
    rec = result.record
    return result.output, {
        "files": rec.N,
        "map_tasks": int(rec.N * rec.r),
        "intermediate_bytes": rec.intermediate_bytes,
        "map_seconds": rec.map_seconds,
        "shuffle_seconds": rec.shuffle_seconds,
        "reduce_seconds": rec.reduce_seconds,
    }


BAGS = {"dask.bag, K partitions": 1, "dask.bag, 2K partitions": 2}  # x K
EACH_FILE = MapReduceOptions(group_bytes=None)
RUNS = {  # name -> run_mapreduce keywords
    "run_mapreduce default": {},
    "run_mapreduce combine=False": {"combine": False},
    "coded r=2": {"r": 2, "coded": True},
}
UNGROUPED = {
    "ungrouped default": {"options": EACH_FILE},
    "ungrouped coded r=2": {"r": 2, "coded": True, "options": EACH_FILE},
}


def _case(client, name: str, texts: list[str], K: int) -> tuple[dict, dict]:
    if name in BAGS:
        return _bag(client, texts, BAGS[name] * K)
    return _mr(client, texts, K, **(RUNS | UNGROUPED)[name])


def _cpu_seconds() -> float:
    """CPU seconds of this process and its children (the LocalCluster's)."""
    total = 0.0
    me = psutil.Process()
    for process in [me, *me.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess):
            times = process.cpu_times()
            total += times.user + times.system
    return total


def _run(client, name: str, texts: list[str], K: int, expected) -> dict:
    load = os.getloadavg()
    cpu, start = _cpu_seconds(), time.perf_counter()
    output, fields = _case(client, name, texts, K)
    seconds, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
    assert output == expected, f"{name}: wrong counts"
    print(
        f"  small files: {name:<34} {seconds:7.2f} s, CPU {cpu:6.2f} s, load "
        f"{load[0]:.1f}",
        flush=True,
    )
    return {
        "total_seconds": seconds,
        "cpu_seconds": cpu,
        "load_average_before": load,
        **fields,
    }


def smallfiles_section(
    client, n_files: int, K: int, repeats: int, ungrouped_every_repeat: bool = False
) -> dict:
    """Run every case `repeats` times, interleaved; medians, ratios, raw runs."""
    texts = small_files(n_files)
    expected = collections.Counter(word for text in texts for word in text.split())
    start = time.process_time()
    assert _count_texts(texts) == expected
    one_core = time.process_time() - start
    load_before = os.getloadavg()
    names = [*BAGS, *RUNS]
    for name in names:  # warm-up, not counted
        _case(client, name, texts[: max(K, n_files // 20)], K)
    runs: dict[str, list[dict]] = {name: [] for name in [*names, *UNGROUPED]}
    for repeat in range(repeats):
        ungrouped = list(UNGROUPED) if repeat == 0 or ungrouped_every_repeat else []
        for name in [*names, *ungrouped]:
            runs[name].append(_run(client, name, texts, K, expected))
    load_after = os.getloadavg()
    rows = [_median_row(name, cases) for name, cases in runs.items() if cases]
    by = {row["scheme"]: row for row in rows}
    best_bag = min(BAGS, key=lambda name: by[name]["total_seconds"])

    def ratio(name: str, over: str, key: str = "total_seconds") -> float:
        return by[name][key] / by[over][key]

    default = "run_mapreduce default"
    ratios = {
        "best_bag": best_bag,
        "default_over_best_bag": ratio(default, best_bag),
        "no_combiner_over_best_bag": ratio("run_mapreduce combine=False", best_bag),
        "coded_r2_over_default": ratio("coded r=2", default),
        "ungrouped_over_default": ratio("ungrouped default", default),
        "ungrouped_coded_r2_over_default": ratio("ungrouped coded r=2", default),
        "cpu_default_over_best_bag": ratio(default, best_bag, "cpu_seconds"),
        "cpu_coded_r2_over_default": ratio("coded r=2", default, "cpu_seconds"),
    }
    words = sum(expected.values())
    _print(rows, ratios, n_files, words, K, repeats, one_core, load_before, load_after)
    return {
        "files": n_files,
        "words": words,
        "bytes": sum(len(text) for text in texts),
        "K": K,
        "repeats": repeats,
        "one_core_counter_seconds": one_core,
        "load_average_before": load_before,
        "load_average_after": load_after,
        "rows": rows,
        "ratios": ratios,
        "targets": {
            "default_over_best_bag_at_most": 1.2,
            "coded_r2_over_default_at_most": 2.0,
        },
    }


def _median_row(name: str, cases: list[dict]) -> dict:
    median = {
        key: statistics.median(case[key] for case in cases)
        for key in cases[0]
        if not key.startswith("load")
    }
    return {
        "scheme": name,
        **median,
        "total_seconds_per_run": [case["total_seconds"] for case in cases],
        "load_average_per_run": [case["load_average_before"][0] for case in cases],
    }


def _print(rows, ratios, n_files, words, K, repeats, one_core, before, after) -> None:
    print(
        f"\nword count over {n_files} small files ({words} words), K={K}, median "
        f"of {repeats} (ungrouped: of their runs); one core, Counter: "
        f"{one_core:.2f} s CPU"
    )
    print(
        f"{'scheme':<34} {'total':>7} {'CPU':>6} {'runs':>4} {'files':>5} {'maps':>5} "
        f"{'inter MB':>8} {'map':>6} {'shuffle':>7} {'reduce':>6}"
    )
    for row in rows:
        cells = [
            f"{row['scheme']:<34}",
            f"{row['total_seconds']:>7.2f}",
            f"{row['cpu_seconds']:>6.2f}",
            f"{len(row['total_seconds_per_run']):>4}",
        ]
        if "files" in row:
            cells += [
                f"{row['files']:>5.0f}",
                f"{row['map_tasks']:>5.0f}",
                f"{row['intermediate_bytes'] / 1e6:>8.2f}",
                f"{row['map_seconds']:>6.2f}",
                f"{row['shuffle_seconds']:>7.2f}",
                f"{row['reduce_seconds']:>6.2f}",
            ]
        print(" ".join(cells))
    print(
        f"default / best bag ({ratios['best_bag']}): "
        f"{ratios['default_over_best_bag']:.2f} (target <= 1.2); combine=False "
        f"{ratios['no_combiner_over_best_bag']:.2f}; coded r=2 / default: "
        f"{ratios['coded_r2_over_default']:.2f} (target <= 2); ungrouped / default: "
        f"{ratios['ungrouped_over_default']:.1f}, coded r=2 "
        f"{ratios['ungrouped_coded_r2_over_default']:.1f}"
    )
    print(
        "CPU seconds: default / best bag "
        f"{ratios['cpu_default_over_best_bag']:.2f}, coded r=2 / default "
        f"{ratios['cpu_coded_r2_over_default']:.2f}"
    )
    print(f"load average before {before}, after {after} (2 cores, shared)")
