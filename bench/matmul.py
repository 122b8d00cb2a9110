"""Coded matmul vs uncoded, dask.array, replication and speculative backup tasks.

One embedded cluster of 8 single-threaded workers. Two injected straggler models
(docs/theory/model.md, applied inside the tasks):

- ``homogeneous``: 8 i.i.d. shifted-exponential workers (Lee et al.'s model); the
  prediction is Lee et al.'s closed form (docs/theory/stragglers.md);
- ``two-slow``: 6 workers as above and 2 persistently slow ones (mu 5x smaller); the
  prediction is a Monte Carlo of the same ``Stragglers`` spec (no closed form).

For each: medians (and means) over repeats of ``A @ x`` for uncoded, dask.array with
the same chunks and the same injected delays, 2-replication, speculative backup
tasks and (8, 6) MDS, every scheme seeing the same worker speeds in a repeat
(common random numbers); then the no-straggler overhead of ``coded_matmul`` vs
dask.array on a real ``A @ B``: one-shot (A encoded and shipped by every call) and
repeated (A fixed: encoded and placed once by ``coded.place_operand`` against
dask.array with A persisted on the workers, same chunks, a new B every repeat, as
in iterative methods). Prints a table and writes
``bench/results/matmul.json`` (``matmul_quick.json`` with ``--quick``).

Usage: ``python bench/matmul.py [--quick] [--repeats R] [--seed S] [--dask-gib G]
[--links RATE]`` (``--links``: the ``--dask-gib`` section on kernel-shaped links,
and placed calls on them, ``_links_placed``).
"""

from __future__ import annotations

import argparse
import platform
import time
import warnings

import numpy as np
from _harness import add_links_option, enter_links_namespace, write_results
from _links_placed import placed_call_section

# the dask.array baseline embeds A in its graph, as `da.from_array` users do
warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)

N = 8
K = 6


def profiles():
    from theory import WorkerProfile

    return {
        "homogeneous": WorkerProfile.homogeneous(N, a=0.2, mu=1.0),
        "two-slow": WorkerProfile(a=[0.2] * N, mu=[1.0] * 6 + [0.2] * 2),
    }


def predicted_seconds(name, spec, m, rng):
    """Expected latency (s) of uncoded and (8, 6) MDS under `spec`."""
    import theory

    scale = m * spec.time_unit
    if name == "homogeneous":
        a, mu = float(spec.profile.a[0]), float(spec.profile.mu[0])
        return {
            "uncoded": theory.expected_latency_uncoded(N, a=a, mu=mu) * scale,
            "mds": theory.expected_latency_mds(N, K, a=a, mu=mu) * scale,
        }
    per_row = np.array([spec.sample(N, rng=rng).seconds_per_row for _ in range(20_000)])
    uncoded = (m / N) * per_row.max(axis=1)
    mds = (m / K) * np.sort(per_row, axis=1)[:, K - 1]
    return {"uncoded": float(uncoded.mean()), "mds": float(mds.mean())}


def _sleep_then_multiply(block, x, *, seconds_per_row, block_info=None):
    began = time.perf_counter()
    value = block @ x
    index = block_info[0]["chunk-location"][0]
    duration = block.shape[0] * seconds_per_row[index]
    time.sleep(max(0.0, duration - (time.perf_counter() - began)))
    return value


def run_dask_array(client, A, x, seconds_per_row):
    import dask.array as da

    Ad = da.from_array(A, chunks=(A.shape[0] // N, A.shape[1]))
    if seconds_per_row is None:
        product = Ad @ x
    else:
        product = Ad.map_blocks(
            _sleep_then_multiply,
            x,
            seconds_per_row=seconds_per_row,
            drop_axis=1 if x.ndim == 1 else None,
            dtype=float,
        )
    began = time.perf_counter()
    value = client.compute(product).result()
    return time.perf_counter() - began, value


SCHEMES = {
    "uncoded": {"scheme": "uncoded"},
    "dask.array": None,
    "2-replication": {"scheme": "replication", "r": 2},
    "speculative": {"scheme": "speculative"},
    "(8,6) MDS": {"scheme": "mds", "k": K},
}


def run_scenario(client, name, spec, A, x, repeats, rng):
    from coded import coded_matmul

    samples = {label: [] for label in SCHEMES}
    waits = {label: [] for label in SCHEMES}
    errors = dict.fromkeys(SCHEMES, 0.0)
    for options in SCHEMES.values():  # warm up (imports, first graphs)
        if options is None:
            run_dask_array(client, A, x, None)
        else:
            coded_matmul(A, x, client=client, **options)
    for _ in range(repeats):
        # common random numbers: every scheme sees the same worker speeds
        seed = int(rng.integers(2**32))
        for label, options in SCHEMES.items():
            if options is None:
                plan = spec.sample(N, rng=seed)
                seconds, value = run_dask_array(client, A, x, plan.seconds_per_row)
            else:
                result = coded_matmul(
                    A, x, client=client, stragglers=spec, rng=seed, **options
                )
                seconds, value = result.latency_seconds, result.product
                waits[label].append(result.stage_seconds["wait"])
            samples[label].append(seconds)
            errors[label] = max(errors[label], float(np.abs(value - A @ x).max()))
    predicted = predicted_seconds(name, spec, A.shape[0], rng)
    rows = {}
    uncoded = np.median(samples["uncoded"])
    for label, values in samples.items():
        rows[label] = {
            "median_s": float(np.median(values)),
            "mean_s": float(np.mean(values)),
            "vs_uncoded": float(np.median(values) / uncoded),
            "max_abs_error": errors[label],
            "samples_s": [float(v) for v in values],
        }
    measured_mean_ratio = rows["(8,6) MDS"]["mean_s"] / rows["uncoded"]["mean_s"]
    wait_ratio = np.mean(waits["(8,6) MDS"]) / np.mean(waits["uncoded"])
    predicted_ratio = predicted["mds"] / predicted["uncoded"]
    return {
        "rows": rows,
        "predicted_s": predicted,
        "predicted_ratio": predicted_ratio,
        "measured_mean_ratio": measured_mean_ratio,
        "ratio_error": abs(measured_mean_ratio / predicted_ratio - 1),
        "measured_wait_ratio": float(wait_ratio),
        "mds_median_vs_uncoded": rows["(8,6) MDS"]["vs_uncoded"],
        "mds_below_speculative": rows["(8,6) MDS"]["median_s"]
        < rows["speculative"]["median_s"],
    }


def run_overhead(client, repeats, rng, quick):
    from coded import coded_matmul

    m, d, c = (2000, 500, 50) if quick else (4000, 1000, 100)
    A = rng.standard_normal((m, d))
    B = rng.standard_normal((d, c))
    samples = {
        "dask.array": [],
        "coded uncoded": [],
        "coded (8,6) MDS": [],
        "uncoded w/o encode": [],
        "MDS w/o encode": [],
    }
    for _ in range(repeats + 1):  # the first round warms up
        seconds, _ = run_dask_array(client, A, B, None)
        samples["dask.array"].append(seconds)
        for label, short, options in (
            ("coded uncoded", "uncoded", {"scheme": "uncoded"}),
            ("coded (8,6) MDS", "MDS", {"scheme": "mds", "k": K}),
        ):
            result = coded_matmul(A, B, client=client, **options)
            samples[label].append(result.latency_seconds)
            runtime = result.latency_seconds - result.stage_seconds["encode"]
            samples[f"{short} w/o encode"].append(runtime)
    base = np.median(samples["dask.array"][1:])
    return {
        "shape": {"A": [m, d], "B": [d, c]},
        "rows": {
            label: {
                "median_s": float(np.median(v[1:])),
                "vs_dask_array": float(np.median(v[1:]) / base),
            }
            for label, v in samples.items()
        },
    }


def run_repeated(client, repeats, rng, quick):
    """A fixed, B new every repeat: placed coded A vs dask.array with A persisted."""
    import dask.array as da
    from distributed import wait

    from coded import coded_matmul, place_operand

    m, d, c = (2000, 500, 50) if quick else (4000, 1000, 100)
    A = rng.standard_normal((m, d))
    Bs = [rng.standard_normal((d, c)) for _ in range(repeats + 1)]
    Ad = da.from_array(A, chunks=(m // N, d)).persist()
    wait(Ad)
    placed = {
        "placed uncoded": place_operand(A, scheme="uncoded", client=client),
        "placed (8,6) MDS": place_operand(A, scheme="mds", k=K, client=client),
    }
    samples = {"dask.array persisted": [], **{label: [] for label in placed}}
    errors = dict.fromkeys(samples, 0.0)
    try:
        for B in Bs:  # the first round warms up
            began = time.perf_counter()
            value = client.compute(Ad @ B).result()
            samples["dask.array persisted"].append(time.perf_counter() - began)
            errors["dask.array persisted"] = max(
                errors["dask.array persisted"], float(np.abs(value - A @ B).max())
            )
            for label, handle in placed.items():
                result = coded_matmul(handle, B)
                samples[label].append(result.latency_seconds)
                error = float(np.abs(result.product - A @ B).max())
                errors[label] = max(errors[label], error)
        once = {
            label: handle.stage_seconds["encode"] + handle.stage_seconds["place"]
            for label, handle in placed.items()
        }
    finally:
        for handle in placed.values():
            handle.release()
        client.cancel(Ad)
    base = np.median(samples["dask.array persisted"][1:])
    return {
        label: {
            "median_s": float(np.median(v[1:])),
            "vs_dask_array": float(np.median(v[1:]) / base),
            "max_abs_error": errors[label],
            "encode_and_place_once_s": once.get(label, 0.0),
        }
        for label, v in samples.items()
    }


def _sample_peak_rss(stop, peak):
    import psutil

    process = psutil.Process()
    while not stop.wait(0.005):
        peak[0] = max(peak[0], process.memory_info().rss)


def run_dask_rss(gib, links=None):
    """A dask.array A of `gib` GiB generated on 8 worker processes times x, (8, 6)
    MDS: the client's peak RSS growth during the call (sampled every 5 ms), and
    the call's seconds against dask.array's own ``A @ x``. With `links` (bytes/s,
    one or one per worker) the workers are processes at their own addresses on
    kernel-shaped links (``coded.runtime.ShapedCluster``).

    A is generated in the code's K row blocks, so that the cluster holds A once
    (any other row chunking is rechunked on the cluster into a second copy) and
    its shares ((n / k) |A|), within 4 GiB per worker (beyond: Dask pauses it).
    """
    import threading

    import dask.array as da
    import psutil
    from distributed import wait

    from coded import LocalCodedCluster, MDSCode, coded_matmul
    from coded.runtime import ShapedCluster

    d = 1024
    m = int(gib * 2**30) // (8 * d)
    x = np.random.default_rng(1).standard_normal(d)
    blocks = MDSCode(N, K).generator.shape[1]
    rows = -(-m // blocks)
    chunks = (rows,) * (m // rows) + ((m % rows,) if m % rows else ())
    if links is None:
        cluster = LocalCodedCluster(n_workers=N, processes=True, memory_limit="4GiB")
    else:
        limit = ("--memory-limit", "4GiB")
        cluster = ShapedCluster(n_workers=N, links=links, worker_options=limit)
    with cluster:
        client = cluster.client
        A = da.random.default_rng(0).standard_normal((m, d), chunks=(chunks, d))
        A = client.persist(A)
        wait(A)
        began = time.perf_counter()
        expected = (A @ x).compute()  # dask's own product, for the check
        dask_seconds = time.perf_counter() - began
        base = psutil.Process().memory_info().rss
        peak, stop = [base], threading.Event()
        sampler = threading.Thread(target=_sample_peak_rss, args=(stop, peak))
        sampler.start()
        began = time.perf_counter()
        try:
            result = coded_matmul(A, x, k=K, client=client, timeout=600.0)
        finally:
            stop.set()
            sampler.join()
        seconds = time.perf_counter() - began
    return {
        "A_gib": m * d * 8 / 2**30,
        "shape": [m, d],
        "client_rss_growth_mib": (peak[0] - base) / 2**20,
        "seconds": seconds,
        "dask_array_seconds": dask_seconds,
        "links_mbit": None if links is None else (np.ravel(links) * 8e-6).tolist(),
        "stage_seconds": dict(result.stage_seconds),
        "max_abs_error_vs_dask": float(np.abs(result.product - expected).max()),
    }


def print_targets(report):
    rss = report.get("dask_rss")
    if rss:
        print(
            f"== dask.array A {rss['shape']} ({rss['A_gib']:.2f} GiB) @ x: "
            f"{rss['seconds']:.1f} s (dask.array's A @ x "
            f"{rss['dask_array_seconds']:.1f} s), client peak RSS growth "
            f"{rss['client_rss_growth_mib']:.1f} MiB, max error vs dask "
            f"{rss['max_abs_error_vs_dask']:.1e}"
        )


def print_tables(report):
    for name, scenario in report["scenarios"].items():
        print(f"\n== {name}: {scenario['description']}")
        print(
            f"{'scheme':<16}{'median s':>10}{'mean s':>9}{'vs uncoded':>12}"
            f"{'max err':>10}"
        )
        for label, row in scenario["rows"].items():
            print(
                f"{label:<16}{row['median_s']:>10.3f}{row['mean_s']:>9.3f}"
                f"{row['vs_uncoded']:>11.2f}x{row['max_abs_error']:>10.1e}"
            )
        print(
            f"MDS/uncoded mean ratio: measured {scenario['measured_mean_ratio']:.3f}, "
            f"predicted {scenario['predicted_ratio']:.3f} "
            f"(off by {100 * scenario['ratio_error']:.1f}%; wait stage only "
            f"{scenario['measured_wait_ratio']:.3f}); predicted E[T] "
            f"uncoded {scenario['predicted_s']['uncoded']:.3f} s, "
            f"MDS {scenario['predicted_s']['mds']:.3f} s"
        )
    overhead = report["no_stragglers"]
    print(
        f"\n== no stragglers: A {overhead['shape']['A']} @ B {overhead['shape']['B']}"
    )
    for label, row in overhead["rows"].items():
        print(f"{label:<18}{row['median_s']:>10.3f} s{row['vs_dask_array']:>8.2f}x")
    print(
        "\n== no stragglers, repeated products (A fixed and placed once, "
        "B new each repeat)"
    )
    print(f"{'':<22}{'median':>10}{'vs dask':>9}{'max err':>10}{'A once':>10}")
    for label, row in overhead["repeated"].items():
        print(
            f"{label:<22}{row['median_s']:>8.3f} s{row['vs_dask_array']:>8.2f}x"
            f"{row['max_abs_error']:>10.1e}{row['encode_and_place_once_s']:>8.3f} s"
        )


def main():
    from coded import LocalCodedCluster, Stragglers

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--dask-gib",
        type=float,
        default=0.0,
        help="also encode a dask.array A of this many GiB on 8 worker processes "
        "and report the client's peak RSS growth (the issue's target: 4)",
    )
    parser.add_argument(
        "--targets-only",
        action="store_true",
        help=(
            "run only the shaped-links and dask.array RSS sections "
            "(a placed call's per-call floor is bench/floor.py)"
        ),
    )
    add_links_option(parser)  # --dask-gib and placed calls on shaped links
    args = parser.parse_args()
    if args.links:
        enter_links_namespace()
    links = args.links and (args.links[0] if len(args.links) == 1 else args.links)
    repeats = args.repeats or (3 if args.quick else 25)
    m, d = (480, 40) if args.quick else (2400, 100)
    time_unit = (0.25e-3 if args.quick else 1e-3) * 2400 / m
    rng = np.random.default_rng(args.seed)
    A = rng.standard_normal((m, d))
    x = rng.standard_normal(d)
    report = {
        "parameters": {
            "n": N,
            "k": K,
            "m": m,
            "d": d,
            "repeats": repeats,
            "seed": args.seed,
            "time_unit_s": time_unit,
            "quick": args.quick,
            "machine": platform.platform(),
            "python": platform.python_version(),
        },
        "scenarios": {},
    }
    began = time.perf_counter()
    if args.targets_only:
        if links:
            report["placed_links"] = placed_call_section(links, repeats)
        if args.dask_gib:
            report["dask_rss"] = run_dask_rss(args.dask_gib, links)
        print_targets(report)
        write_results("matmul_targets", report, quick=args.quick, indent=1)
        return
    with LocalCodedCluster(n_workers=N) as cluster:
        client = cluster.client
        for name, profile in profiles().items():
            spec = Stragglers(profile=profile, time_unit=time_unit)
            scenario = run_scenario(client, name, spec, A, x, repeats, rng)
            scenario["description"] = (
                f"a = {profile.a.tolist()}, mu = {profile.mu.tolist()}, "
                f"time unit {time_unit * 1e3:g} ms"
            )
            report["scenarios"][name] = scenario
        report["no_stragglers"] = run_overhead(client, repeats, rng, args.quick)
        report["no_stragglers"]["repeated"] = run_repeated(
            client, repeats, rng, args.quick
        )
    if links:
        report["placed_links"] = placed_call_section(links, repeats)
    if args.dask_gib:
        report["dask_rss"] = run_dask_rss(args.dask_gib, links)
    report["seconds"] = time.perf_counter() - began
    print_tables(report)
    print_targets(report)
    write_results("matmul", report, quick=args.quick, indent=1)


if __name__ == "__main__":
    main()
