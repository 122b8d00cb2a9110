"""Heterogeneous load allocation, side by side (issue 6, docs/theory/allocation.md).

For each profile: uniform coded (best total redundancy by search, and at HCMM's
total rows), load-balanced uncoded, HCMM, Kim et al. (finite-N), BPCC-1 (8 batches
and batches by search) and BPCC-2 (per-batch overhead, batches by search), against
the physical limit. Columns: the solver's predicted E[T] (exact under the model),
the simulated mean (median over seeded repeats, with its standard error), ratios to
HCMM and to the physical limit, and the solve time.

Measured on Dask (`measure_on_dask`): a 100-worker cluster does not fit on two
cores, so each profile is *emulated* at scale 1/10: the same groups with N_j / 10
workers each and m / 10 rows (10 single-threaded in-process workers of one
``LocalCodedCluster``: (i) N = (2, 3, 5), (ii) N = (1, 9); m = 100). Every solver
is re-solved on the emulated profile, and its predicted E[T], simulated mean and
measured latency are printed side by side. Each measured run is
``coded_matmul(A, x, allocation=..., stragglers=Stragglers(profile, time_unit))``:
the tasks wait out shifted-exponential durations drawn from the same profile,
BPCC-2's per-batch overhead c_i is injected as a fixed delay per task, and the
time unit makes HCMM's expected run last ~2 s (0.1 s with ``--quick``). The
measured latency is the submit-to-decodable time (``stage_seconds["wait"]``) in
model units; all solvers see the same seeded worker speeds (common random
numbers), and each run is also replayed under the model on its own draws, so
``meas/replay`` isolates the runtime's overhead from Monte Carlo noise and
``corrected`` = predicted + mean(measured - replayed) is the control-variate
estimate of E[measured].

Then, on the embedded 8-worker cluster (``bench/_real_cluster.py``, issue 15):
the profile is *fitted* by ``profile_workers`` ((c, a, mu) with the per-task
overhead), (a) with the strong injected profile and (b) with no injection, and
every solver's predicted latency is printed next to the measured one.

    .venv/bin/python bench/bench_allocation.py [--quick] [--cluster-only]

Writes bench/results/allocation.json (allocation_cluster.json with
``--cluster-only``).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

if "--at-size" not in sys.argv:  # the encoding at size may use every core
    # one BLAS thread per worker thread, as Dask's nanny sets for worker
    # processes: eight in-process workers each running multi-threaded OpenBLAS
    # on two cores spend most of their time contending for them
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import _real_cluster as real_cluster
import numpy as np
from _harness import write_results

import allocation
import coded
import theory

Allocation = allocation.Allocation
GroupProfile, WorkerProfile = theory.GroupProfile, theory.WorkerProfile
solve_bpcc, solve_hcmm = allocation.solve_bpcc, allocation.solve_hcmm
solve_kim, solve_uniform = allocation.solve_kim, allocation.solve_uniform
solve_load_balanced = allocation.solve_load_balanced
expected_physical_limit = theory.expected_physical_limit
simulate_latency = theory.simulate_latency
simulate_physical_limit = theory.simulate_physical_limit

M = 1000
SCALE = 10  # emulation on Dask: N_j / SCALE workers per group, M / SCALE rows
D = 64  # columns of A in the measured runs (A @ x, x a vector)
HCMM_SECONDS = {False: 2.0, True: 0.1}  # time unit: E[T_HCMM] in seconds (--quick)
RUNS = {False: 8, True: 2}  # measured runs per solver (--quick)
PROFILES = {
    "i_mild": GroupProfile(N=[20, 30, 50], a=[1.0, 1.0, 1.0], mu=[4.0, 2.0, 1.0]),
    "ii_strong": GroupProfile(N=[10, 90], a=[0.05, 1.0], mu=[20.0, 0.2]),
}


def overhead_for(profile: WorkerProfile) -> np.ndarray:
    """BPCC-2's per-batch overhead: half a row's mean compute time per batch."""
    return 0.5 * (profile.a + 1.0 / profile.mu)


def solvers(profile: GroupProfile, m: int = M):
    workers = profile.to_workers()
    yield "uniform_best", lambda: solve_uniform(profile, m)
    yield (
        "uniform_hcmm_rows",
        lambda: solve_uniform(profile, m, n_rows=solve_hcmm(profile, m).total_rows),
    )
    yield "load_balanced", lambda: solve_load_balanced(profile, m)
    yield "hcmm", lambda: solve_hcmm(profile, m)
    yield "kim", lambda: solve_kim(profile, m)
    yield "bpcc1_b8", lambda: solve_bpcc(profile, m, batches=8)
    yield "bpcc1_search", lambda: solve_bpcc(profile, m)
    yield "bpcc2_search", lambda: solve_bpcc(profile, m, overhead=overhead_for(workers))


def max_emulated_workers() -> int:
    """Dask workers the emulation needs (the largest emulated profile)."""
    return max(int(emulated(p).N.sum()) for p in PROFILES.values())


def emulated(profile: GroupProfile) -> GroupProfile:
    """The profile emulated on Dask: the same groups with N_j / SCALE workers."""
    return GroupProfile(N=profile.N // SCALE, a=profile.a, mu=profile.mu)


def measure_on_dask(
    profile: WorkerProfile,
    alloc: Allocation,
    *,
    client,
    time_unit: float,
    runs: int,
) -> dict:
    """Measured Dask latency of `alloc` on workers injecting `profile`'s delays.

    Run ``r`` draws the worker speeds with seed ``r`` (the same for every
    solver). Latencies are in the profile's time unit (seconds / `time_unit`).
    """
    rng = np.random.default_rng(0)
    A, x = rng.standard_normal((alloc.m, D)), rng.standard_normal(D)
    expected = A @ x
    delays = {
        i: float(c) * time_unit
        for i, (c, load) in enumerate(zip(alloc.overhead, alloc.loads, strict=True))
        if c > 0 and load > 0
    }
    stragglers = coded.Stragglers(profile=profile, time_unit=time_unit, delays=delays)
    measured, replayed, seconds, errors = [], [], [], []
    for run in range(runs):
        result = coded.coded_matmul(
            A, x, allocation=alloc, client=client, stragglers=stragglers, rng=run
        )
        plan = stragglers.sample(alloc.n, rng=run)
        measured.append(result.stage_seconds["wait"] / time_unit)
        replayed.append(
            real_cluster.replay_latency(alloc, plan.seconds_per_row / time_unit)
        )
        seconds.append(result.latency_seconds)
        errors.append(
            np.linalg.norm(result.product - expected) / np.linalg.norm(expected)
        )
    measured, replayed = np.array(measured), np.array(replayed)
    mean = float(measured.mean())
    return {
        "runs": runs,
        "mean": mean,
        "stderr": float(measured.std(ddof=1) / np.sqrt(runs)) if runs > 1 else None,
        "median": float(np.median(measured)),
        "replayed_mean": float(replayed.mean()),
        "vs_replayed": float(np.median(measured / replayed)),
        "overhead_seconds": float(np.median(measured - replayed)) * time_unit,
        "vs_predicted": mean / alloc.expected_latency,
        "corrected": alloc.expected_latency + float(np.mean(measured - replayed)),
        "total_seconds": float(np.median(seconds)),
        "max_relative_error": float(max(errors)),
    }


def simulate(profile, alloc: Allocation, trials: int, repeats: int) -> dict:
    results = [
        simulate_latency(
            profile,
            alloc.loads,
            m=alloc.m,
            batches=alloc.batches,
            overhead=alloc.overhead,
            trials=trials,
            rng=seed,
        )
        for seed in range(repeats)
    ]
    means = [r.mean for r in results]
    k = int(np.argsort(means)[len(means) // 2])
    return {"mean": results[k].mean, "stderr": results[k].stderr}


def evaluate(profile: GroupProfile, m: int, trials: int, repeats: int, measure=None):
    """Solve, predict and simulate every solver on `profile` (and `measure` it)."""
    limit_sim = simulate_physical_limit(profile, m, trials=trials, rng=0)
    limit = expected_physical_limit(profile, m)
    rows = {}
    for label, solve in solvers(profile, m):
        start = time.perf_counter()
        alloc = solve()
        elapsed = time.perf_counter() - start
        rows[label] = {
            "predicted": alloc.expected_latency,
            "simulated": simulate(profile, alloc, trials, repeats),
            "measured": None if measure is None else measure(alloc),
            "total_rows": alloc.total_rows,
            "loads": sorted(set(alloc.loads.tolist())),
            "batches": sorted(set(alloc.batches.tolist())),
            "solve_seconds": elapsed,
        }
    hcmm = rows["hcmm"]["predicted"]
    for row in rows.values():
        row["vs_hcmm"] = row["predicted"] / hcmm
        row["vs_limit"] = row["predicted"] / limit
    return {
        "profile": {
            "N": profile.N.tolist(),
            "a": profile.a.tolist(),
            "mu": profile.mu.tolist(),
        },
        "m": m,
        "physical_limit": {
            "expected": limit,
            "simulated": limit_sim.mean,
            "stderr": limit_sim.stderr,
        },
        "rows": rows,
    }


def run_profile(
    profile: GroupProfile, trials: int, repeats: int, *, client, quick: bool
) -> dict:
    """The full profile (predicted, simulated) and its Dask emulation (measured)."""
    report = evaluate(profile, M, trials, repeats)
    small, m = emulated(profile), M // SCALE
    time_unit = HCMM_SECONDS[quick] / solve_hcmm(small, m).expected_latency
    workers = small.to_workers()

    def measure(alloc: Allocation) -> dict:
        return measure_on_dask(
            workers, alloc, client=client, time_unit=time_unit, runs=RUNS[quick]
        )

    report["emulated"] = evaluate(small, m, trials, repeats, measure)
    report["emulated"]["time_unit_seconds"] = time_unit
    report["emulated"]["scale"] = SCALE
    return report


def targets(report: dict) -> dict:
    strong, mild = report["ii_strong"]["rows"], report["i_mild"]["rows"]
    limit = report["i_mild"]["physical_limit"]["expected"]
    best_bpcc1 = min(mild["bpcc1_b8"]["predicted"], mild["bpcc1_search"]["predicted"])
    return {
        "ii: uniform_best / max(hcmm, kim) >= 3": strong["uniform_best"]["predicted"]
        / max(strong["hcmm"]["predicted"], strong["kim"]["predicted"]),
        "ii: uniform_hcmm_rows / max(hcmm, kim) >= 3": strong["uniform_hcmm_rows"][
            "predicted"
        ]
        / max(strong["hcmm"]["predicted"], strong["kim"]["predicted"]),
        "i: 1 - bpcc1_b8 / hcmm >= 0.25": 1.0
        - mild["bpcc1_b8"]["predicted"] / mild["hcmm"]["predicted"],
        "i: bpcc1_b8 / limit <= 1.10": mild["bpcc1_b8"]["predicted"] / limit,
        "i: best bpcc1 / limit <= 1.10": best_bpcc1 / limit,
    }


def measured_targets(report: dict) -> dict:
    """Measured (Dask, emulated profiles) against predicted, and the gains."""
    checks = {}
    for name, result in report.items():
        rows = result["emulated"]["rows"].values()
        mean = max(abs(row["measured"]["vs_predicted"] - 1.0) for row in rows)
        corrected = max(
            abs(row["measured"]["corrected"] / row["predicted"] - 1.0) for row in rows
        )
        checks[f"{name} emulated: max |measured / predicted - 1| <= 0.2"] = mean
        checks[f"{name} emulated: max |corrected / predicted - 1| <= 0.2"] = corrected
    mild = report["i_mild"]["emulated"]["rows"]
    strong = report["ii_strong"]["emulated"]["rows"]

    def measured(rows: dict, label: str) -> float:
        return rows[label]["measured"]["mean"]

    checks["i emulated, measured: 1 - bpcc1_b8 / hcmm"] = 1.0 - measured(
        mild, "bpcc1_b8"
    ) / measured(mild, "hcmm")
    checks["ii emulated, measured: uniform_best / max(hcmm, kim)"] = measured(
        strong, "uniform_best"
    ) / max(measured(strong, "hcmm"), measured(strong, "kim"))
    return checks


def print_table(name: str, result: dict) -> None:
    limit = result["physical_limit"]
    print(
        f"\n{name}: N={result['profile']['N']}, m={result['m']}, physical limit "
        f"E={limit['expected']:.3f} (sim {limit['simulated']:.3f} "
        f"+- {limit['stderr']:.3f})"
    )
    print(
        f"{'solver':<18}{'predicted':>10}{'simulated':>18}{'x HCMM':>8}"
        f"{'x limit':>9}{'rows':>7}{'solve s':>9}  loads / batches"
    )
    for label, row in result["rows"].items():
        sim = row["simulated"]
        print(
            f"{label:<18}{row['predicted']:>10.3f}"
            f"{sim['mean']:>11.3f} +-{sim['stderr']:.3f}"
            f"{row['vs_hcmm']:>8.3f}{row['vs_limit']:>9.3f}{row['total_rows']:>7}"
            f"{row['solve_seconds']:>9.2f}  {row['loads']} / {row['batches']}"
        )


def print_measured(name: str, result: dict) -> None:
    limit = result["physical_limit"]["expected"]
    runs = next(iter(result["rows"].values()))["measured"]["runs"]
    print(
        f"\n{name} on Dask, emulated at 1/{result['scale']}: "
        f"N={result['profile']['N']}, m={result['m']}, "
        f"time unit {result['time_unit_seconds']:.4f} s, "
        f"{runs} runs; physical limit E={limit:.3f} (model time units)"
    )
    print(
        f"{'solver':<18}{'predicted':>10}{'simulated':>10}{'measured':>16}"
        f"{'median':>8}{'corrected':>10}{'meas/pred':>10}{'corr/pred':>10}"
        f"{'meas/replay':>12}{'ovh ms':>7}{'x limit':>8}{'total s':>8}"
    )
    for label, row in result["rows"].items():
        meas = row["measured"]
        stderr = meas["stderr"] or 0.0
        print(
            f"{label:<18}{row['predicted']:>10.3f}{row['simulated']['mean']:>10.3f}"
            f"{meas['mean']:>9.3f} +-{stderr:<5.2f}{meas['median']:>8.3f}"
            f"{meas['corrected']:>10.3f}{meas['vs_predicted']:>10.3f}"
            f"{meas['corrected'] / row['predicted']:>10.3f}"
            f"{meas['vs_replayed']:>12.3f}{1e3 * meas['overhead_seconds']:>7.0f}"
            f"{meas['mean'] / limit:>8.3f}{meas['total_seconds']:>8.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fast smoke run")
    parser.add_argument(
        "--cluster-only",
        action="store_true",
        help="only the profiled 8-worker cluster runs (a) and (b)",
    )
    parser.add_argument(
        "--at-size",
        type=int,
        default=0,
        metavar="M",
        help="only HCMM and BPCC on an M x 250 A: encode/decode share, memory",
    )
    args = parser.parse_args()
    if args.at_size:
        big = real_cluster.at_size(args.at_size)
        print(big)
        write_results(f"allocation_at_{args.at_size}", big, quick=args.quick)
        return
    trials, repeats = (2000, 1) if args.quick else (20_000, 3)
    cluster_report = real_cluster.measure(args.quick)
    real_cluster.print_report(cluster_report)
    cluster_targets = real_cluster.targets(cluster_report)
    print("\ntargets on the profiled cluster (medians):")
    for label, value in cluster_targets.items():
        print(f"  {label}: {value:.3f}")
    if args.cluster_only:
        payload = {
            "params": {"quick": args.quick, "cluster_only": True},
            "machine": {
                "python": platform.python_version(),
                "cpus": os.cpu_count(),
                "load_average": os.getloadavg(),
            },
            "cluster": cluster_report,
            "targets": cluster_targets,
        }
        write_results("allocation_cluster", payload, quick=args.quick)
        return
    with coded.LocalCodedCluster(n_workers=max_emulated_workers()) as cluster:
        report = {
            name: run_profile(
                profile, trials, repeats, client=cluster.client, quick=args.quick
            )
            for name, profile in PROFILES.items()
        }
    for name, result in report.items():
        print_table(name, result)
        print_measured(name, result["emulated"])
    checks = {**targets(report), **measured_targets(report)}
    print("\ntargets (predicted E[T]; measured on the emulated profiles):")
    for label, value in checks.items():
        print(f"  {label}: {value:.4f}")
    payload = {
        "params": {
            "trials": trials,
            "repeats": repeats,
            "quick": args.quick,
            "scale": SCALE,
            "runs": RUNS[args.quick],
            "hcmm_seconds": HCMM_SECONDS[args.quick],
            "columns_of_A": D,
        },
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_average": os.getloadavg(),
        },
        "profiles": report,
        "targets": checks,
        "cluster": cluster_report,
        "cluster_targets": cluster_targets,
    }
    print()
    write_results("allocation", payload, quick=args.quick)


if __name__ == "__main__":
    main()
