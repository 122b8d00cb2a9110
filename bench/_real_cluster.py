"""Allocation on the embedded 8-worker cluster: profile it, solve, run, compare.

Part of ``bench/allocation.py`` (issue 15). Two settings:

(a) the strong injected profile: workers 0-1 ``(a, mu) = (0.05, 20)``, workers 2-7
    ``(1, 0.2)`` in model units, plus an injected per-task cost of
    `INJECTED_C_SECONDS`, as ``Stragglers(profile, time_unit)``; the time unit
    makes HCMM's design time about `TARGET_SECONDS`;
(b) no injection: the workers' natural speeds.

In each, ``profile_workers`` fits ``(c, a, mu)`` (timed, and compared with the
injected model in (a)); every solver is given the *fitted* profile; each
allocation runs `runs` times (the same seeds for every solver) and its median
measured submit-to-decodable time (``stage_seconds["wait"]``) is printed next to
its prediction (``MatmulResult.predicted_seconds``).
"""

from __future__ import annotations

import time

import numpy as np
from _harness import import_project

allocation, theory, coded = import_project("allocation", "theory", "coded")

N_WORKERS = 8
STRONG = theory.WorkerProfile(
    a=[0.05] * 2 + [1.0] * 6, mu=[20.0] * 2 + [0.2] * 6, c=[0.0] * 8
)
INJECTED_C_SECONDS = 0.05  # per-task cost injected in (a), on top of the natural one
M_A, D_A = 4000, 100
M_B, D_B = 100_000, 250
TARGET_SECONDS = {False: 1.0, True: 0.4}


def solvers(fit, m: int, l_max: float | None):
    hcmm = allocation.solve_hcmm(fit, m, l_max=l_max)
    return {
        "uniform_best": lambda: allocation.solve_uniform(fit, m),
        "uniform_hcmm_rows": lambda: allocation.solve_uniform(
            fit, m, n_rows=hcmm.total_rows
        ),
        "load_balanced": lambda: allocation.solve_load_balanced(fit, m),
        "hcmm": lambda: hcmm,
        "kim": lambda: allocation.solve_kim(fit, m, l_max=l_max),
        "bpcc": lambda: allocation.solve_bpcc(fit, m, l_max=l_max),
    }


def profile(client, stragglers, loads, d, repeats) -> tuple[object, float]:
    began = time.perf_counter()
    fit = coded.runtime.profile_workers(
        client, loads=loads, d=d, repeats=repeats, stragglers=stragglers, rng=1
    )
    return fit, time.perf_counter() - began


def fit_summary(fit, seconds: float) -> dict:
    return {
        "profiling_seconds": seconds,
        "c": fit.profile.c.tolist(),
        "a": fit.profile.a.tolist(),
        "mu": fit.profile.mu.tolist(),
        "c_se": fit.c_se.tolist(),
        "a_se": fit.a_se.tolist(),
        "mu_se": fit.mu_se.tolist(),
        "poor_fit": fit.poor_fit.tolist(),
        "reasons": list(fit.reasons),
    }


def run_setting(
    client, fit, *, m, d, stragglers, runs, l_max=None, reference=None
) -> dict:
    rng = np.random.default_rng(0)
    A, x = rng.standard_normal((m, d)), rng.standard_normal(d)
    expected = A @ x
    rows = {}
    for name, solve in solvers(fit, m, l_max).items():
        began = time.perf_counter()
        alloc = solve()
        solve_seconds = time.perf_counter() - began
        waits, totals, encodes, decodes, errors = [], [], [], [], []
        for run in range(runs):
            result = coded.coded_matmul(
                A, x, allocation=alloc, client=client, stragglers=stragglers, rng=run
            )
            waits.append(result.stage_seconds["wait"])
            totals.append(result.latency_seconds)
            encodes.append(result.stage_seconds["encode"])
            decodes.append(result.stage_seconds["decode"])
            errors.append(
                float(
                    np.linalg.norm(result.product - expected) / np.linalg.norm(expected)
                )
            )
        rows[name] = {
            "predicted_seconds": alloc.expected_latency,
            "reference_predicted_seconds": None
            if reference is None
            else theory.expected_allocation_latency(
                reference.per_block(alloc.block_rows),
                alloc.loads // alloc.block_rows,
                m=alloc.blocks,
                batches=alloc.batches,
            ),
            "measured_wait_median": float(np.median(waits)),
            "measured_wait_runs": waits,
            "measured_total_median": float(np.median(totals)),
            "encode_median": float(np.median(encodes)),
            "decode_median": float(np.median(decodes)),
            "measured_vs_predicted": float(np.median(waits)) / alloc.expected_latency,
            "solve_seconds": solve_seconds,
            "loads": alloc.loads.tolist(),
            "batches": alloc.batches.tolist(),
            "block_rows": alloc.block_rows,
            "max_relative_error": max(errors),
        }
    return rows


def block_rounding_loss(fit, m: int) -> dict:
    """Predicted latency of the block allocations against row-level ones."""
    out = {}
    for name, solve in (
        ("hcmm", allocation.solve_hcmm),
        ("bpcc", allocation.solve_bpcc),
    ):
        blocks = solve(fit, m, l_max=m)
        rows = solve(fit, m, l_max=m, blocks=m)
        out[name] = {
            "block_rows": blocks.block_rows,
            "blocks": blocks.blocks,
            "predicted_blocks": blocks.expected_latency,
            "predicted_rows": rows.expected_latency,
            "loss": blocks.expected_latency / rows.expected_latency - 1.0,
        }
    return out


def measure(quick: bool) -> dict:
    runs, repeats = (2, 4) if quick else (5, 8)
    report = {}
    with coded.LocalCodedCluster(n_workers=N_WORKERS) as cluster:
        client = cluster.client
        natural, natural_seconds = profile(
            client, None, (M_B // 64, M_B // 8), D_B, repeats
        )
        # (a) the strong injected profile, in seconds through one conversion
        unit = TARGET_SECONDS[quick] / theory.hcmm_latency(STRONG, M_A)
        model = theory.WorkerProfile(
            a=STRONG.a, mu=STRONG.mu, c=np.full(N_WORKERS, INJECTED_C_SECONDS / unit)
        )
        spec = coded.Stragglers(profile=model, time_unit=unit)
        fit_a, seconds_a = profile(client, spec, (M_A // 40, M_A // 8), D_A, repeats)
        truth = spec.profile_seconds
        report["a_strong_injected"] = {
            "m": M_A,
            "d": D_A,
            "time_unit_seconds": unit,
            "injected": {
                "c": truth.c.tolist(),
                "a": truth.a.tolist(),
                "mu": truth.mu.tolist(),
            },
            "natural_c_median": float(np.median(natural.profile.c)),
            "fit": fit_summary(fit_a, seconds_a),
            "fit_vs_injected": {
                "c_minus_natural": (
                    (fit_a.profile.c - np.median(natural.profile.c)) / truth.c
                ).tolist(),
                "a": (fit_a.profile.a / truth.a).tolist(),
                "mu": (fit_a.profile.mu / truth.mu).tolist(),
            },
            "rows": run_setting(
                client,
                fit_a,
                m=M_A,
                d=D_A,
                stragglers=spec,
                runs=runs,
                l_max=M_A,
                reference=theory.WorkerProfile(
                    a=truth.a, mu=truth.mu, c=truth.c + np.median(natural.profile.c)
                ),
            ),
            "block_rounding": block_rounding_loss(fit_a, M_A),
        }
        # (b) no injection: natural speeds
        report["b_natural"] = {
            "m": M_B,
            "d": D_B,
            "fit": fit_summary(natural, natural_seconds),
            "rows": run_setting(
                client, natural, m=M_B, d=D_B, stragglers=None, runs=runs, l_max=M_B
            ),
        }
    return report


def targets(report: dict) -> dict:
    a_rows = report["a_strong_injected"]["rows"]
    out = {}
    for setting, result in report.items():
        for name, row in result["rows"].items():
            out[f"{setting}: {name} measured/predicted"] = row["measured_vs_predicted"]
            ref = row["reference_predicted_seconds"]
            if ref is not None:
                out[f"{setting}: {name} measured/reference-predicted"] = (
                    row["measured_wait_median"] / ref
                )
    out["a: uniform_best / hcmm (measured, >= 3)"] = (
        a_rows["uniform_best"]["measured_wait_median"]
        / a_rows["hcmm"]["measured_wait_median"]
    )
    out["a: uniform_hcmm_rows / hcmm (measured)"] = (
        a_rows["uniform_hcmm_rows"]["measured_wait_median"]
        / a_rows["hcmm"]["measured_wait_median"]
    )
    out["a: hcmm / bpcc (measured, >= 1.25)"] = (
        a_rows["hcmm"]["measured_wait_median"] / a_rows["bpcc"]["measured_wait_median"]
    )
    out["a: profiling seconds (<= 2)"] = report["a_strong_injected"]["fit"][
        "profiling_seconds"
    ]
    out["b: profiling seconds (<= 2)"] = report["b_natural"]["fit"]["profiling_seconds"]
    return out


def print_report(report: dict) -> None:
    for setting, result in report.items():
        fit = result["fit"]
        print(
            f"\n{setting}: m={result['m']}, d={result['d']}, profiling "
            f"{fit['profiling_seconds']:.2f} s, fitted c (s) "
            f"{np.round(fit['c'], 4).tolist()}, poor fits {sum(fit['poor_fit'])}"
        )
        if "fit_vs_injected" in result:
            vs = result["fit_vs_injected"]
            print(f"  fitted / injected a: {np.round(vs['a'], 2).tolist()}")
            print(f"  fitted / injected mu: {np.round(vs['mu'], 2).tolist()}")
            print(
                "  (fitted c - natural c) / injected c: "
                f"{np.round(vs['c_minus_natural'], 2).tolist()}"
            )
        print(
            f"  {'solver':<18}{'predicted s':>12}{'ref pred s':>11}{'measured s':>11}"
            f"{'meas/pred':>10}{'encode s':>9}{'decode s':>9}{'total s':>8}"
            "  loads / batches"
        )
        for name, row in result["rows"].items():
            ref = row["reference_predicted_seconds"]
            print(
                f"  {name:<18}{row['predicted_seconds']:>12.3f}"
                f"{float('nan') if ref is None else ref:>11.3f}"
                f"{row['measured_wait_median']:>11.3f}"
                f"{row['measured_vs_predicted']:>10.2f}{row['encode_median']:>9.3f}"
                f"{row['decode_median']:>9.3f}{row['measured_total_median']:>8.3f}"
                f"  {row['loads']} / {row['batches']}"
            )
        for name, row in result.get("block_rounding", {}).items():
            print(
                f"  block rounding {name}: {row['blocks']} blocks of "
                f"{row['block_rows']} rows, predicted {row['predicted_blocks']:.3f} s "
                f"vs row-level {row['predicted_rows']:.3f} s "
                f"({100 * row['loss']:+.2f}%)"
            )


def at_size(m: int, d: int = 250, runs: int = 2) -> dict:
    """HCMM and BPCC at a large A (strong injected profile, known in seconds).

    Reports encode and decode against the whole call and the process's peak
    resident memory (the workers are threads of this process) against A.
    """
    import psutil

    process = psutil.Process()
    rng = np.random.default_rng(0)
    A, x = rng.standard_normal((m, d)), rng.standard_normal(d)
    unit = 2.0 / theory.hcmm_latency(STRONG, m)
    spec = coded.Stragglers(profile=STRONG, time_unit=unit)
    out = {"m": m, "d": d, "A_bytes": A.nbytes}
    with coded.LocalCodedCluster(n_workers=N_WORKERS) as cluster:
        for name, solve in (
            ("hcmm", allocation.solve_hcmm),
            ("bpcc", lambda p, mm: allocation.solve_bpcc(p, mm, max_batches=8)),
        ):
            alloc = solve(spec.profile_seconds, m)
            records = []
            for run in range(runs):
                before = process.memory_info().rss
                result = coded.coded_matmul(
                    A,
                    x,
                    allocation=alloc,
                    client=cluster.client,
                    stragglers=spec,
                    rng=run,
                )
                stages = result.stage_seconds
                records.append(
                    {
                        "encode": stages["encode"],
                        "decode": stages["decode"],
                        "total": stages["total"],
                        "rss_growth_bytes": process.memory_info().rss - before,
                        "ok": bool(np.allclose(result.product, A @ x, atol=1e-6)),
                    }
                )
            out[name] = {
                "blocks": alloc.blocks,
                "block_rows": alloc.block_rows,
                "coded_rows": alloc.total_rows,
                "runs": records,
                "encode_decode_share": float(
                    np.median(
                        [(r["encode"] + r["decode"]) / r["total"] for r in records]
                    )
                ),
            }
    return out
