"""Theory benchmark: Monte Carlo throughput and closed-form / solver times.

Targets (issue 4):
1. The homogeneous MDS simulator draws >= 10^7 worker-trials per second on this
   2-core machine.
2. HCMM and Kim et al. solves for 10^4 workers take <= 50 ms (measured only when
   ``theory`` exports ``hcmm_*`` / ``kim_*``; otherwise reported as missing).

Usage: ``python bench/bench_theory.py [--quick] [--repeats R]``; prints tables and
writes ``bench/results/theory.json``. Timings are medians over repeats, seeded.
"""

from __future__ import annotations

import argparse
import os
import platform

import numpy as np
from _harness import median_time, write_results

import theory

SEED = 20_180_301
THROUGHPUT_TARGET = 1e7
SOLVE_TARGET_S = 0.05


def bench_simulators(worker_trials: int, repeats: int) -> list[dict]:
    rows = []
    cases = [("mds", n) for n in (10, 100, 1000)]
    cases += [("uncoded", 100), ("replication", 100)]
    for scheme, n in cases:
        k = theory.optimal_k_mds(n, a=1.0, mu=1.0)
        params = {"mds": {"k": k}, "replication": {"r": 4}}.get(scheme, {})
        trials = worker_trials // n
        seconds = median_time(
            lambda scheme=scheme, n=n, params=params, trials=trials: (
                theory.simulate_homogeneous(
                    scheme, n, **params, a=1.0, mu=1.0, trials=trials, rng=SEED
                )
            ),
            repeats,
        )
        rows.append(
            {
                "simulator": "simulate_homogeneous",
                "scheme": scheme,
                "n": n,
                **params,
                "trials": trials,
                "seconds": seconds,
                "worker_trials_per_s": trials * n / seconds,
            }
        )
    if "simulate_latency" in theory.__all__:
        rows.extend(bench_general_simulator(worker_trials, repeats))
    return rows


def bench_general_simulator(worker_trials: int, repeats: int) -> list[dict]:
    """The general any-allocation simulator on the same uniform MDS case."""
    rows = []
    for n in (100, 1000):
        k = theory.optimal_k_mds(n, a=1.0, mu=1.0)
        profile = theory.WorkerProfile.homogeneous(n, a=1.0, mu=1.0)
        loads = np.full(n, 1.0 / k)
        trials = worker_trials // (10 * n)
        seconds = median_time(
            lambda profile=profile, loads=loads, trials=trials: theory.simulate_latency(
                profile, loads, m=1.0, trials=trials, rng=SEED
            ),
            repeats,
        )
        rows.append(
            {
                "simulator": "simulate_latency",
                "scheme": "mds (uniform loads)",
                "n": n,
                "k": k,
                "trials": trials,
                "seconds": seconds,
                "worker_trials_per_s": trials * n / seconds,
            }
        )
    return rows


def _timed(name: str, func, repeats: int, **info) -> dict:
    func()  # warm up
    return {"solver": name, "seconds": median_time(func, repeats), **info}


def bench_closed_forms(repeats: int, quick: bool) -> list[dict]:
    rng = np.random.default_rng(SEED)
    kim = theory.GroupProfile(N=[20, 30, 50], a=[1, 1, 1], mu=[4, 2, 1])
    distinct = 20 if quick else 100
    mixed = theory.WorkerProfile(
        a=rng.uniform(0.1, 2.0, distinct), mu=rng.uniform(0.5, 5.0, distinct)
    )
    big_n = 10**5 if quick else 10**6
    return [
        _timed(
            "optimal_k_mds",
            lambda: theory.optimal_k_mds(big_n, a=1.0, mu=1.0),
            repeats,
            workers=big_n,
        ),
        _timed(
            "optimal_rate_asymptotic",
            lambda: theory.optimal_rate_asymptotic(a=1.0, mu=1.0),
            repeats,
            workers=None,
        ),
        _timed(
            "expected_physical_limit (3 groups)",
            lambda: theory.expected_physical_limit(kim, 1000.0),
            repeats,
            workers=kim.n,
        ),
        _timed(
            f"expected_physical_limit ({distinct} distinct)",
            lambda: theory.expected_physical_limit(mixed, 1000.0),
            repeats,
            workers=distinct,
        ),
    ]


def bench_allocation_solvers(repeats: int) -> tuple[list[dict], list[str]]:
    """HCMM / Kim solves for 10^4 workers, if the theory package exports them."""
    rng = np.random.default_rng(SEED + 1)
    n = 10_000
    workers = theory.WorkerProfile(
        a=rng.uniform(0.5, 2.0, n), mu=rng.uniform(0.5, 5, n)
    )
    groups = theory.GroupProfile(N=[2000, 3000, 5000], a=[1, 1, 1], mu=[4, 2, 1])
    calls = {
        "hcmm_loads": lambda: theory.hcmm_loads(workers, 100.0 * n),
        "hcmm_latency": lambda: theory.hcmm_latency(workers, 100.0 * n),
        "kim_bound (exact, 3 groups)": lambda: theory.kim_bound(groups, 10.0 * n),
        "kim_bound (large N)": lambda: theory.kim_bound(groups, 10.0 * n, exact=False),
    }
    rows, missing = [], []
    for name, call in calls.items():
        if name.split()[0] in theory.__all__:
            rows.append(_timed(name, call, repeats, workers=n))
        else:
            missing.append(name)
    return rows, missing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument("--repeats", type=int, default=None)
    args = parser.parse_args()
    repeats = args.repeats or (3 if args.quick else 7)
    worker_trials = 10**6 if args.quick else 10**7

    simulators = bench_simulators(worker_trials, repeats)
    closed = bench_closed_forms(repeats, args.quick)
    solvers, missing = bench_allocation_solvers(repeats)

    print(
        f"Simulator throughput ({worker_trials:.0e} worker-trials, median of "
        f"{repeats}; target >= {THROUGHPUT_TARGET:.0e}/s for homogeneous MDS)"
    )
    print(
        f"{'simulator':>22} {'scheme':>20} {'n':>6} {'trials':>8} "
        f"{'ms':>8} {'M worker-trials/s':>18} {'x target':>9}"
    )
    for row in simulators:
        print(
            f"{row['simulator']:>22} {row['scheme']:>20} {row['n']:>6} "
            f"{row['trials']:>8} {row['seconds'] * 1e3:8.1f} "
            f"{row['worker_trials_per_s'] / 1e6:18.1f} "
            f"{row['worker_trials_per_s'] / THROUGHPUT_TARGET:9.1f}"
        )
    print(
        f"\nClosed forms and solvers (median of {repeats}; allocation target "
        f"<= {SOLVE_TARGET_S * 1e3:.0f} ms for 10^4 workers)"
    )
    print(f"{'function':>40} {'workers':>9} {'ms':>10}")
    for row in closed + solvers:
        workers = "-" if row["workers"] is None else row["workers"]
        print(f"{row['solver']:>40} {workers!s:>9} {row['seconds'] * 1e3:10.3f}")
    if missing:
        print(f"not exported by theory (skipped): {', '.join(missing)}")

    homogeneous_mds = [
        r
        for r in simulators
        if r["simulator"] == "simulate_homogeneous" and r["scheme"] == "mds"
    ]
    targets = {
        "mds_throughput_ge_1e7": min(r["worker_trials_per_s"] for r in homogeneous_mds)
        >= THROUGHPUT_TARGET,
    }
    if solvers:
        targets["allocation_solves_le_50ms"] = (
            max(r["seconds"] for r in solvers) <= SOLVE_TARGET_S
        )
    print(f"\ntargets: {targets}")

    results = {
        "benchmark": "theory",
        "quick": args.quick,
        "repeats": repeats,
        "seed": SEED,
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "cpus": os.cpu_count(),
            "load_average_1min": os.getloadavg()[0],
        },
        "simulators": simulators,
        "closed_forms": closed,
        "allocation_solvers": solvers,
        "allocation_solvers_missing": missing,
        "targets": targets,
    }
    write_results("theory", results, quick=args.quick)


if __name__ == "__main__":
    main()
