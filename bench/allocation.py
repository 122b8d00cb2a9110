"""Heterogeneous load allocation, side by side (issue 6, theory.md section 4).

For each profile: uniform coded (best total redundancy by search, and at HCMM's
total rows), load-balanced uncoded, HCMM, Kim et al. (finite-N), BPCC-1 (8 batches
and batches by search) and BPCC-2 (per-batch overhead, batches by search), against
the physical limit. Columns: the solver's predicted E[T] (exact under the model),
the simulated mean (median over seeded repeats, with its standard error), ratios to
HCMM and to the physical limit, and the solve time. The Dask-measured column is
filled by `measure_on_dask` (runtime layer, added later).

    .venv/bin/python bench/allocation.py [--quick]

Writes bench/results/allocation.json.
"""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np


def _import_packages():
    """Import the `allocation` and `theory` packages, not bench/*.py namesakes."""
    here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    for name in ("allocation", "theory"):
        sys.modules.pop(name, None)
    return importlib.import_module("allocation"), importlib.import_module("theory")


allocation, theory = _import_packages()
Allocation = allocation.Allocation
GroupProfile, WorkerProfile = theory.GroupProfile, theory.WorkerProfile
solve_bpcc, solve_hcmm = allocation.solve_bpcc, allocation.solve_hcmm
solve_kim, solve_uniform = allocation.solve_kim, allocation.solve_uniform
solve_load_balanced = allocation.solve_load_balanced
expected_physical_limit = theory.expected_physical_limit
simulate_latency = theory.simulate_latency
simulate_physical_limit = theory.simulate_physical_limit

M = 1000
PROFILES = {
    "i_mild": GroupProfile(N=[20, 30, 50], a=[1.0, 1.0, 1.0], mu=[4.0, 2.0, 1.0]),
    "ii_strong": GroupProfile(N=[10, 90], a=[0.05, 1.0], mu=[20.0, 0.2]),
}


def overhead_for(profile: WorkerProfile) -> np.ndarray:
    """BPCC-2's per-batch overhead: half a row's mean compute time per batch."""
    return 0.5 * (profile.a + 1.0 / profile.mu)


def solvers(profile: GroupProfile):
    workers = profile.to_workers()
    yield "uniform_best", lambda: solve_uniform(profile, M)
    yield (
        "uniform_hcmm_rows",
        lambda: solve_uniform(profile, M, n_rows=solve_hcmm(profile, M).total_rows),
    )
    yield "load_balanced", lambda: solve_load_balanced(profile, M)
    yield "hcmm", lambda: solve_hcmm(profile, M)
    yield "kim", lambda: solve_kim(profile, M)
    yield "bpcc1_b8", lambda: solve_bpcc(profile, M, batches=8)
    yield "bpcc1_search", lambda: solve_bpcc(profile, M)
    yield "bpcc2_search", lambda: solve_bpcc(profile, M, overhead=overhead_for(workers))


def measure_on_dask(profile: WorkerProfile, allocation: Allocation, **kwargs):
    """HOOK for the runtime helper: measured Dask latency of `allocation`.

    Runs `allocation` on a LocalCluster whose workers inject delays drawn from
    `profile` (time unit scaled so a run takes seconds) and returns the median
    measured latency in the profile's unit. Not implemented yet: the bench
    reports ``measured: null`` until the runtime layer provides it.
    """
    raise NotImplementedError("measured column: added with the runtime (issue 6)")


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


def run_profile(name: str, profile: GroupProfile, trials: int, repeats: int) -> dict:
    limit_sim = simulate_physical_limit(profile, M, trials=trials, rng=0)
    limit = expected_physical_limit(profile, M)
    rows = {}
    for label, solve in solvers(profile):
        start = time.perf_counter()
        alloc = solve()
        elapsed = time.perf_counter() - start
        try:
            measured = measure_on_dask(profile.to_workers(), alloc)
        except NotImplementedError:
            measured = None
        rows[label] = {
            "predicted": alloc.expected_latency,
            "simulated": simulate(profile, alloc, trials, repeats),
            "measured": measured,
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
        "m": M,
        "physical_limit": {
            "expected": limit,
            "simulated": limit_sim.mean,
            "stderr": limit_sim.stderr,
        },
        "rows": rows,
    }


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


def print_table(name: str, result: dict) -> None:
    limit = result["physical_limit"]
    print(
        f"\n{name}: m={result['m']}, physical limit E={limit['expected']:.3f} "
        f"(sim {limit['simulated']:.3f} +- {limit['stderr']:.3f})"
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fast smoke run")
    args = parser.parse_args()
    trials, repeats = (2000, 1) if args.quick else (20_000, 3)
    report = {
        name: run_profile(name, profile, trials, repeats)
        for name, profile in PROFILES.items()
    }
    for name, result in report.items():
        print_table(name, result)
    checks = targets(report)
    print("\ntargets (predicted E[T]):")
    for label, value in checks.items():
        print(f"  {label}: {value:.4f}")
    out = Path(__file__).parent / "results" / "allocation.json"
    out.parent.mkdir(exist_ok=True)
    payload = {
        "params": {"trials": trials, "repeats": repeats, "quick": args.quick},
        "machine": {"python": platform.python_version(), "cpus": 2},
        "profiles": report,
        "targets": checks,
    }
    out.write_text(json.dumps(payload, indent=2))
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
