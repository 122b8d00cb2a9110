"""Allocation on the embedded 8-worker cluster: profile it, solve, run, compare.

Part of ``bench/bench_allocation.py`` (issue 15). Two settings:

(a) the strong injected profile: workers 0-1 ``(a, mu) = (0.05, 20)``, workers 2-7
    ``(1, 0.2)`` in model units, plus an injected per-task cost of
    `INJECTED_C_SECONDS`, as ``Stragglers(profile, time_unit)``; the time unit
    makes HCMM's design time about `TARGET_SECONDS`;
(b) no injection: the workers' natural speeds.

In each, ``profile_workers`` fits ``(c, a, mu)``. In (a) twice: a fast profile
(`FAST_PROFILE`, five times with different seeds for medians), timed and
compared with the injected model, and a long one (`LONG_PROFILE`: the ~600
kernels a worker that puts the standard error of ``mu``, ``mu / sqrt(K)``, near
4%), also compared, which the solvers use. Each profile's design is also fitted
on exact times (`statistical_floor`): what it reaches without the machine's
noise. The injected per-task cost is compared net of the natural one, measured
by a profile with the per-task wait alone injected, before and after the fast
profiles (how far it moves between them bounds how well ``c`` can be checked
at all). In (b) the workers may hold at most 3x their even share of rows
(``l_max``). Every solver is given the
*fitted* profile; the allocations run interleaved, `runs` times each (the same
seeds for every solver), and each one's median measured submit-to-decodable time
(``stage_seconds["wait"]``) is printed next to its prediction
(``MatmulResult.predicted_seconds``) and the simulated median.
"""

from __future__ import annotations

import contextlib
import time

import numpy as np

import allocation
import coded
import theory

N_WORKERS = 8
STRONG = theory.WorkerProfile(
    a=[0.05] * 2 + [1.0] * 6, mu=[20.0] * 2 + [0.2] * 6, c=[0.0] * 8
)
INJECTED_C_SECONDS = 0.05  # per-task cost injected in (a), on top of the natural one
M_A, D_A = 100_000, 100  # short rows, so that a profile's kernels can be many
M_B, D_B = 100_000, 250
QUICK_SHRINK = 20  # --quick: A has 20x fewer rows (a smoke run of seconds)
TARGET_SECONDS = {False: 3.0, True: 0.15}  # c is then a few percent of a job
SLOW_SECONDS, SLOW_RUNS = 10.0, 7  # fewer runs of allocations predicted this slow
# (a): the fast profile (repeated, to report medians) and the long one the
# solvers use; mu's standard error is mu / sqrt(K) over K = 2 repeats kernels
FAST_PROFILE = {"repeats": 60, "pings": 6, "budget_seconds": 0.9}
QUICK_PROFILE = {"repeats": 20, "pings": 4, "budget_seconds": 0.3}  # --quick
LONG_PROFILE = {"repeats": 300, "budget_seconds": 12.0, "timeout": 300.0}
NATURAL_PROFILE = {"repeats": 8, "pings": 16}  # (b)
FLOOR_SEEDS = 200  # simulated profiles per statistical floor


def solvers(fit, m: int, l_max: float | None):
    hcmm = allocation.solve_hcmm(fit, m, l_max=l_max)
    return {
        "uniform_best": lambda: allocation.solve_uniform(fit, m, l_max=l_max),
        "uniform_hcmm_rows": lambda: allocation.solve_uniform(
            fit, m, n_rows=hcmm.total_rows
        ),
        "load_balanced": lambda: allocation.solve_load_balanced(fit, m),
        "hcmm": lambda: hcmm,
        "kim": lambda: allocation.solve_kim(fit, m, l_max=l_max),
        "bpcc": lambda: allocation.solve_bpcc(fit, m, l_max=l_max),
    }


def profile(
    client, stragglers, loads, d, rng: int = 1, **options
) -> tuple[object, float]:
    began = time.perf_counter()
    fit = coded.runtime.profile_workers(
        client, loads=loads, d=d, stragglers=stragglers, rng=rng, **options
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


def replay_latency(alloc, per_row: np.ndarray, overhead=None) -> float:
    """Model latency of `alloc` for one draw of per-row times.

    The model is BPCC's, docs/theory/allocation.md#bpcc. Batch j of worker i
    ends at ``j (l_i / b_i) per_row_i + j c_i`` (``c`` = `overhead`, default the
    allocation's); the decoder finishes when the rows received reach m (whole
    blocks, so when u blocks have arrived).
    """
    overhead = alloc.overhead if overhead is None else overhead
    finish, rows = [], []
    for load, b, c, s in zip(
        alloc.loads.tolist(), alloc.batches.tolist(), overhead, per_row, strict=True
    ):
        size = load // b
        if size:
            finish += [j * (size * s + c) for j in range(1, b + 1)]
            rows += [size] * b
    order = np.argsort(finish)
    received = np.cumsum(np.array(rows)[order])
    return float(np.array(finish)[order][np.searchsorted(received, alloc.m)])


def _call(A, x, alloc, client, stragglers, run: int) -> dict:
    result = coded.coded_matmul(
        A, x, allocation=alloc, client=client, stragglers=stragglers, rng=run
    )
    return {
        "wait": result.stage_seconds["wait"],
        "total": result.latency_seconds,
        "encode": result.stage_seconds["encode"],
        "decode": result.stage_seconds["decode"],
        "product": result.product,
    }


def run_setting(
    client, fit, *, m, d, stragglers, runs, l_max=None, reference=None
) -> dict:
    """Solve every allocation on `fit`, run them interleaved, compare with the model.

    Run ``r`` calls every solver once in turn (seed ``r``: the same injected
    draws for every solver), so that a drift of the machine over the runs
    touches every solver alike; allocations predicted to take longer than
    `SLOW_SECONDS` stop after `SLOW_RUNS` runs. Without injection one warm-up
    call per solver comes first and is not counted.
    """
    rng = np.random.default_rng(0)
    A, x = rng.standard_normal((m, d)), rng.standard_normal(d)
    expected = A @ x
    allocs, solve_seconds = {}, {}
    for name, solve in solvers(fit, m, l_max).items():
        began = time.perf_counter()
        allocs[name] = solve()
        solve_seconds[name] = time.perf_counter() - began
    wanted = {
        name: min(runs, SLOW_RUNS) if alloc.expected_latency > SLOW_SECONDS else runs
        for name, alloc in allocs.items()
    }
    if stragglers is None:
        for alloc in allocs.values():
            _call(A, x, alloc, client, None, runs)
    calls = {name: [] for name in allocs}
    for run in range(runs):
        for name, alloc in allocs.items():
            if run < wanted[name]:
                calls[name].append(_call(A, x, alloc, client, stragglers, run))
    return {
        name: _summary(allocs[name], calls[name], fit, stragglers, reference, expected)
        | {"solve_seconds": solve_seconds[name]}
        for name in allocs
    }


def _summary(alloc, calls, fit, stragglers, reference, expected) -> dict:
    """Measured against predicted (and replayed on each run's own draws)."""
    waits = [call["wait"] for call in calls]
    replays = []
    if reference is not None:  # the model on each run's own draws
        for run in range(len(calls)):
            plan = stragglers.sample(alloc.n, rng=run)
            replays.append(replay_latency(alloc, plan.seconds_per_row, reference.c))
    model = fit.profile.per_block(alloc.block_rows)
    simulated = theory.simulate_latency(
        model,
        alloc.loads // alloc.block_rows,
        m=alloc.blocks,
        batches=alloc.batches,
        overhead=alloc.overhead,
        trials=20_000,
        rng=0,
    )
    errors = [
        float(np.linalg.norm(call["product"] - expected) / np.linalg.norm(expected))
        for call in calls
    ]
    return {
        "predicted_seconds": alloc.expected_latency,
        "predicted_median_seconds": simulated.quantiles[0.5],
        "measured_wait_mean": float(np.mean(waits)),
        "measured_wait_stderr": float(np.std(waits, ddof=1) / np.sqrt(len(waits))),
        "median_vs_predicted_median": float(np.median(waits))
        / simulated.quantiles[0.5],
        "mean_vs_predicted": float(np.mean(waits)) / alloc.expected_latency,
        "reference_predicted_seconds": None
        if reference is None
        else theory.expected_allocation_latency(
            reference.per_block(alloc.block_rows),
            alloc.loads // alloc.block_rows,
            m=alloc.blocks,
            batches=alloc.batches,
        ),
        "measured_wait_median": float(np.median(waits)),
        "measured_vs_replayed_median": float(np.median(np.divide(waits, replays)))
        if replays
        else None,
        "measured_wait_runs": waits,
        "measured_total_median": float(np.median([c["total"] for c in calls])),
        "encode_median": float(np.median([c["encode"] for c in calls])),
        "decode_median": float(np.median([c["decode"] for c in calls])),
        "loads": alloc.loads.tolist(),
        "batches": alloc.batches.tolist(),
        "block_rows": alloc.block_rows,
        "max_relative_error": max(errors),
    }


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


def accuracy(fit, truth, natural_c: np.ndarray) -> dict:
    """Fitted over injected (c net of the natural per-task cost), per worker."""
    return {
        "c_minus_natural": ((fit.profile.c - natural_c) / truth.c).tolist(),
        "a": (fit.profile.a / truth.a).tolist(),
        "mu": (fit.profile.mu / truth.mu).tolist(),
    }


def statistical_floor(fit, truth, seeds: int = FLOOR_SEEDS) -> dict:
    """What `fit`'s design reaches on exact times: no timer, no scheduler.

    Each worker's kernels at the loads `fit` timed them at, their times drawn
    from the injected ``(a, mu)`` alone (``t = l (a + X / mu)``), fitted by
    ``fit_profile`` as the profile fits its measured ones, `seeds` times: the
    median worst error over the workers and the share of seeds whose every
    worker is within 10%.
    """
    rng = np.random.default_rng(0)
    a, mu = truth.a[:, None], truth.mu[:, None]
    worst = {"a": [], "mu": []}
    for _ in range(seeds):
        times = fit.loads * (a + rng.exponential(size=fit.loads.shape) / mu)
        estimate = allocation.fit_profile(fit.loads, times).profile
        worst["a"].append(worst_error(estimate.a / truth.a))
        worst["mu"].append(worst_error(estimate.mu / truth.mu))
    return {
        key: {
            "median_worst_error": float(np.median(errors)),
            "share_within_10pct": float(np.mean(np.array(errors) <= 0.1)),
        }
        for key, errors in worst.items()
    }


def measure(quick: bool) -> dict:
    runs = 2 if quick else 11
    shrink = QUICK_SHRINK if quick else 1
    m_a, m_b = M_A // shrink, M_B // shrink
    l_max_b = 3 * m_b // N_WORKERS  # (b): a worker holds at most 3x the even share
    report = {}
    with coded.LocalCodedCluster(n_workers=N_WORKERS) as cluster:
        client = cluster.client
        # a throwaway profile first: the first tasks of a fresh cluster are slower.
        # Its fit is discarded, so two equal timings of its one- and two-row
        # tasks (a fit with no spread, refused) do not matter.
        with contextlib.suppress(ValueError):
            profile(client, None, (1, 2), 8, repeats=2, budget_seconds=0.05)
        # (a) the strong injected profile, in seconds through one conversion
        unit = TARGET_SECONDS[quick] / theory.hcmm_latency(STRONG, m_a)
        model = theory.WorkerProfile(
            a=STRONG.a, mu=STRONG.mu, c=np.full(N_WORKERS, INJECTED_C_SECONDS / unit)
        )
        spec = coded.Stragglers(profile=model, time_unit=unit)
        truth = spec.profile_seconds
        loads_a = (m_a // 16, m_a // 8)
        # the natural per-task cost as the pings of (a) pay it: the same injected
        # wait on the worker, no injected kernels
        only_c = coded.Stragglers(
            delays=dict.fromkeys(range(N_WORKERS), INJECTED_C_SECONDS)
        )
        # twice, before and after the fast profiles: how far it moves between
        # two identical profiles bounds how well c can be checked at all
        fast_profile = QUICK_PROFILE if quick else FAST_PROFILE
        plain = [profile(client, only_c, loads_a, D_A, **fast_profile)[0]]
        fast = [
            profile(client, spec, loads_a, D_A, rng=seed, **fast_profile)
            for seed in range(1, 2 if quick else 6)
        ]
        plain.append(profile(client, only_c, loads_a, D_A, **fast_profile)[0])
        natural_c = plain[0].profile.c - INJECTED_C_SECONDS
        natural_c_drift = plain[1].profile.c - plain[0].profile.c
        long = fast_profile if quick else LONG_PROFILE
        fit_a, seconds_a = profile(client, spec, loads_a, D_A, **long)
        report["a_strong_injected"] = {
            "m": m_a,
            "d": D_A,
            "time_unit_seconds": unit,
            "injected": {
                "c": truth.c.tolist(),
                "a": truth.a.tolist(),
                "mu": truth.mu.tolist(),
            },
            "natural_c": natural_c.tolist(),
            "natural_c_drift_seconds": natural_c_drift.tolist(),
            "fast_fits": [fit_summary(fit, seconds) for fit, seconds in fast],
            "fast_fits_vs_injected": [
                accuracy(fit, truth, natural_c) for fit, _ in fast
            ],
            "fast_fits_floor": [statistical_floor(fit, truth) for fit, _ in fast],
            "coverage": coverage(
                [fit_summary(f, t) for f, t in [*fast, (fit_a, seconds_a)]], truth
            ),
            "fit": fit_summary(fit_a, seconds_a),
            "fit_vs_injected": accuracy(fit_a, truth, natural_c),
            "fit_floor": statistical_floor(fit_a, truth),
            "rows": run_setting(
                client,
                fit_a,
                m=m_a,
                d=D_A,
                stragglers=spec,
                runs=runs,
                l_max=m_a,
                reference=theory.WorkerProfile(
                    a=truth.a, mu=truth.mu, c=truth.c + natural_c
                ),
            ),
            "block_rounding": block_rounding_loss(fit_a, m_a),
        }
        # (b) no injection: natural speeds, memory cap l_max_b rows a worker
        natural, natural_seconds = profile(
            client, None, (l_max_b // 3, l_max_b), D_B, **NATURAL_PROFILE
        )
        report["b_natural"] = {
            "m": m_b,
            "d": D_B,
            "l_max": l_max_b,
            "fit": fit_summary(natural, natural_seconds),
            "rows": run_setting(
                client,
                natural,
                m=m_b,
                d=D_B,
                stragglers=None,
                runs=runs,
                l_max=l_max_b,
            ),
        }
        report["whole_call"] = whole_call(client, quick)
    return report


WHOLE_CALL_SIZES = {False: (4000, 40000), True: (4000,)}
WHOLE_CALL_D = 400
WHOLE_CALL_RUNS = {False: 7, True: 3}


def whole_call(client, quick: bool) -> dict:
    """``predicted_seconds`` against the measured median of fresh one-shot calls.

    Natural speeds (no injection): a profile with ``d = 400``, then HCMM, BPCC
    (up to 8 batches: the batch search beyond is slow to solve) and uniform at
    each size, every call encoding A afresh; one warm-up call per allocation is
    not counted. The ratio is ``predicted_seconds / median(latency_seconds)``.
    """
    fit, seconds = profile(client, None, (500, 5_000), WHOLE_CALL_D, repeats=8)
    out = {
        "fit": fit_summary(fit, seconds),
        "call_seconds": fit.costs.call_seconds,
        "call_se": fit.costs.call_se,
        "encode_gflops": fit.costs.encode_flops_per_second / 1e9,
        "encode_gentries": fit.costs.encode_entries_per_second / 1e9,
        "unidentified": list(fit.unidentified),
        "sizes": {},
    }
    rng = np.random.default_rng(0)
    for m in WHOLE_CALL_SIZES[quick]:
        A = rng.standard_normal((m, WHOLE_CALL_D))
        x = rng.standard_normal(WHOLE_CALL_D)
        plans = {
            "hcmm": allocation.solve_hcmm(fit, m),
            "bpcc": allocation.solve_bpcc(fit, m, max_batches=8),
            "uniform": allocation.solve_uniform(fit, m),
        }
        rows = {}
        for name, plan in plans.items():
            results = [
                coded.coded_matmul(A, x, allocation=plan, client=client)
                for _ in range(WHOLE_CALL_RUNS[quick] + 1)
            ][1:]
            total = float(np.median([r.latency_seconds for r in results]))
            rows[name] = {
                "predicted_seconds": results[0].predicted_seconds,
                "model_seconds": plan.expected_latency,
                "measured_median_seconds": total,
                "ratio": results[0].predicted_seconds / total,
                "encode_predicted": plan.costs.seconds(
                    flops=plan.encode_flops(WHOLE_CALL_D),
                    coded_entries=plan.total_rows * WHOLE_CALL_D,
                    checked=True,
                )
                - plan.costs.call_seconds,
                "encode_median": float(
                    np.median([r.stage_seconds["encode"] for r in results])
                ),
                "wait_median": float(
                    np.median([r.stage_seconds["wait"] for r in results])
                ),
            }
        out["sizes"][str(m)] = rows
    return out


def coverage(fits: list, truth) -> dict:
    """Share of (profile, worker) estimates whose +-1.96 SE interval holds the truth.

    For ``a`` and ``mu``, the injected values (``c`` holds the natural per-task
    cost too, which is not known independently).
    """
    out = {}
    for key, se_key in (("a", "a_se"), ("mu", "mu_se")):
        hits = [
            abs(est - true) <= 1.96 * se
            for fit in fits
            for est, se, true in zip(
                fit[key], fit[se_key], getattr(truth, key), strict=True
            )
        ]
        out[key] = float(np.mean(hits))
    out["count"] = len(fits) * truth.n
    return out


def print_whole_call(result: dict) -> None:
    print(
        f"\nwhole call (natural speeds, d={WHOLE_CALL_D}): fixed cost "
        f"{1e3 * result['call_seconds']:.1f} +- {1e3 * result['call_se']:.1f} ms, "
        f"encoding {result['encode_gflops']:.1f} Gflop/s and "
        f"{result['encode_gentries']:.2f} G entries/s, a unidentified on "
        f"workers {result['unidentified']}"
    )
    print(
        f"  {'m':>6} {'solver':<8}{'model s':>9}{'predicted':>10}{'measured':>10}"
        f"{'ratio':>7}{'enc pred':>9}{'enc med':>9}{'wait med':>9}"
    )
    for m, rows in result["sizes"].items():
        for name, row in rows.items():
            print(
                f"  {m:>6} {name:<8}{row['model_seconds']:>9.4f}"
                f"{row['predicted_seconds']:>10.4f}"
                f"{row['measured_median_seconds']:>10.4f}{row['ratio']:>7.2f}"
                f"{row['encode_predicted']:>9.4f}{row['encode_median']:>9.4f}"
                f"{row['wait_median']:>9.4f}"
            )


def worst_error(ratios: list[float]) -> float:
    """The largest relative error over the workers, ``max |fitted / true - 1|``."""
    return float(np.max(np.abs(np.array(ratios) - 1.0)))


def targets(report: dict) -> dict:
    a_rows = report["a_strong_injected"]["rows"]
    out = {}
    for setting, result in report.items():
        if setting == "whole_call":
            for m, rows in result["sizes"].items():
                for name, row in rows.items():
                    label = f"whole call {m} x {WHOLE_CALL_D} {name}"
                    out[f"{label}: predicted/measured (0.75-1.25)"] = row["ratio"]
            continue
        for name, row in result["rows"].items():
            out[f"{setting}: {name} median measured/predicted median"] = row[
                "median_vs_predicted_median"
            ]
            out[f"{setting}: {name} mean measured/predicted E[T]"] = row[
                "mean_vs_predicted"
            ]
            ref = row["reference_predicted_seconds"]
            if row["measured_vs_replayed_median"] is not None:
                out[f"{setting}: {name} median measured/replayed (own draws)"] = row[
                    "measured_vs_replayed_median"
                ]
            if ref is not None:
                out[f"{setting}: {name} mean measured/reference E[T]"] = (
                    row["measured_wait_mean"] / ref
                )
    out["a: uniform_best / hcmm (measured medians)"] = (
        a_rows["uniform_best"]["measured_wait_median"]
        / a_rows["hcmm"]["measured_wait_median"]
    )
    out["a: uniform_hcmm_rows / hcmm (measured medians, >= 3)"] = (
        a_rows["uniform_hcmm_rows"]["measured_wait_median"]
        / a_rows["hcmm"]["measured_wait_median"]
    )
    out["a: hcmm / bpcc (measured medians, >= 1.25)"] = (
        a_rows["hcmm"]["measured_wait_median"] / a_rows["bpcc"]["measured_wait_median"]
    )
    result = report["a_strong_injected"]
    fast = result["fast_fits"]
    out["a: profiling seconds, fast profile (<= 2; median of 5)"] = float(
        np.median([fit["profiling_seconds"] for fit in fast])
    )
    out["a: profiling seconds, long profile"] = result["fit"]["profiling_seconds"]
    for key in ("c_minus_natural", "a", "mu"):
        worst = [worst_error(vs[key]) for vs in result["fast_fits_vs_injected"]]
        out[
            f"a: fast profile {key}: max |fitted / injected - 1| (<= 0.1; median of 5)"
        ] = float(np.median(worst))
        out[f"a: long profile {key}: max |fitted / injected - 1| (<= 0.1)"] = (
            worst_error(result["fit_vs_injected"][key])
        )
    for key in ("a", "mu"):
        floors = [
            floor[key]["median_worst_error"] for floor in result["fast_fits_floor"]
        ]
        out[
            f"a: fast profile {key} on exact times: median worst error (median of 5)"
        ] = float(np.median(floors))
        out[f"a: long profile {key} on exact times: median worst error"] = result[
            "fit_floor"
        ][key]["median_worst_error"]
    out["a: natural c, max |drift| between two identical profiles / injected c"] = (
        float(np.max(np.abs(result["natural_c_drift_seconds"]))) / INJECTED_C_SECONDS
    )
    out["b: profiling seconds (<= 2)"] = report["b_natural"]["fit"]["profiling_seconds"]
    for key in ("a", "mu"):
        out[f"a: truth within +-1.96 SE, {key} (>= 0.9 of profiles x workers)"] = (
            result["coverage"][key]
        )
    for m, rows in report["whole_call"]["sizes"].items():
        for name, row in rows.items():
            out[
                f"whole call {m} x 400 {name}: predicted / measured median (0.75-1.25)"
            ] = row["ratio"]
    return out


def print_report(report: dict) -> None:
    for setting, result in report.items():
        if setting == "whole_call":
            print_whole_call(result)
            continue
        fit = result["fit"]
        print(
            f"\n{setting}: m={result['m']}, d={result['d']}, profiling "
            f"{fit['profiling_seconds']:.2f} s, fitted c (s) "
            f"{np.round(fit['c'], 4).tolist()}, poor fits {sum(fit['poor_fit'])}"
        )
        if "fit_vs_injected" in result:
            summaries = [*result["fast_fits"], fit]
            errors = [*result["fast_fits_vs_injected"], result["fit_vs_injected"]]
            floors = [*result["fast_fits_floor"], result["fit_floor"]]
            drift = np.array(result["natural_c_drift_seconds"]) * 1e3
            print(
                "  natural c moved by (ms) between two identical profiles: "
                f"{np.round(drift, 1).tolist()}"
            )
        else:
            summaries = errors = floors = []
        for summary, vs, floor in zip(summaries, errors, floors, strict=True):
            print(
                f"  profile of {summary['profiling_seconds']:.2f} s (on exact times, "
                f"median worst error: a {floor['a']['median_worst_error']:.2f}, "
                f"mu {floor['mu']['median_worst_error']:.2f}):"
            )
            print(f"    fitted / injected a: {np.round(vs['a'], 2).tolist()}")
            print(f"    fitted / injected mu: {np.round(vs['mu'], 2).tolist()}")
            print(
                "    (fitted c - natural c) / injected c: "
                f"{np.round(vs['c_minus_natural'], 2).tolist()}"
            )
        print(
            f"  {'solver':<18}{'E[T] s':>8}{'ref E[T]':>9}{'mean s':>14}"
            f"{'mean/E':>7}{'pred med':>9}{'median':>8}{'med/med':>8}"
            f"{'encode s':>9}{'decode s':>9}{'total s':>8}  loads / batches"
        )
        for name, row in result["rows"].items():
            ref = row["reference_predicted_seconds"]
            print(
                f"  {name:<18}{row['predicted_seconds']:>8.3f}"
                f"{float('nan') if ref is None else ref:>9.3f}"
                f"{row['measured_wait_mean']:>8.3f}+-{row['measured_wait_stderr']:<4.2f}"
                f"{row['mean_vs_predicted']:>7.2f}"
                f"{row['predicted_median_seconds']:>9.3f}"
                f"{row['measured_wait_median']:>8.3f}"
                f"{row['median_vs_predicted_median']:>8.2f}"
                f"{row['encode_median']:>9.3f}"
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


def _held_bytes(dask_worker) -> int:
    """Bytes of the arrays a worker holds (views of the client's A included)."""
    return int(sum(getattr(v, "nbytes", 0) for v in dask_worker.data.values()))


def encode_flops(alloc) -> dict:
    """Flops of encoding A against those of the product A @ x [derived].

    The parity blocks are ``G_parity @ blocks``: ``2 (N_u - u) u v d`` flops for
    ``N_u`` coded and ``u`` source blocks of ``v`` rows (the systematic blocks
    are A's own); the product costs ``2 N_u v d`` on the workers.
    """
    u, v = alloc.blocks, alloc.block_rows
    coded_blocks = alloc.total_rows // v
    return {
        "coded_blocks": coded_blocks,
        "parity_blocks": coded_blocks - u,
        "encode_over_product": (coded_blocks - u) * u / coded_blocks,
    }


def at_size(m: int, d: int = 250, runs: int = 2) -> dict:
    """HCMM and BPCC at a large A (strong injected profile, known in seconds).

    One-shot ``coded_matmul(A, x)`` (A encoded on every call) and a placed A
    (``place_operand`` once, then ``coded_matmul(placed, x)``): encode and decode
    against the whole call, the bytes each worker holds against its share of
    coded rows, and the flop model of the encoding (`encode_flops`).
    """
    import psutil

    process = psutil.Process()
    rng = np.random.default_rng(0)
    A, x = rng.standard_normal((m, d)), rng.standard_normal(d)
    expected = A @ x
    unit = 2.0 / theory.hcmm_latency(STRONG, m)
    spec = coded.Stragglers(profile=STRONG, time_unit=unit)
    out = {"m": m, "d": d, "A_bytes": A.nbytes}
    with coded.LocalCodedCluster(n_workers=N_WORKERS) as cluster:
        client = cluster.client
        for name, solve in (
            ("hcmm", allocation.solve_hcmm),
            ("bpcc", lambda p, mm: allocation.solve_bpcc(p, mm, max_batches=8)),
        ):
            alloc = solve(spec.profile_seconds, m)

            def record(result, before):
                stages = result.stage_seconds
                return {
                    "encode": stages["encode"],
                    "decode": stages["decode"],
                    "wait": stages["wait"],
                    "total": stages["total"],
                    "rss_growth_bytes": process.memory_info().rss - before,
                    "ok": bool(np.allclose(result.product, expected, atol=1e-6)),
                }

            one_shot = []
            for run in range(runs):
                before = process.memory_info().rss
                result = coded.coded_matmul(
                    A, x, allocation=alloc, client=client, stragglers=spec, rng=run
                )
                one_shot.append(record(result, before))
            began = time.perf_counter()
            placed = coded.place_operand(A, client=client, allocation=alloc)
            place_seconds = time.perf_counter() - began
            held = client.run(_held_bytes)
            addresses = sorted(held)
            share = alloc.loads * d * 8
            placed_runs = []
            for run in range(runs):
                before = process.memory_info().rss
                result = coded.coded_matmul(placed, x, stragglers=spec, rng=run)
                placed_runs.append(record(result, before))
            placed.release()

            def share_of(records):
                return float(
                    np.median(
                        [(r["encode"] + r["decode"]) / r["total"] for r in records]
                    )
                )

            out[name] = {
                "blocks": alloc.blocks,
                "block_rows": alloc.block_rows,
                "coded_rows": alloc.total_rows,
                "loads": alloc.loads.tolist(),
                "batches": alloc.batches.tolist(),
                "predicted_seconds": alloc.expected_latency,
                "flops": encode_flops(alloc),
                "one_shot": one_shot,
                "encode_decode_share": share_of(one_shot),
                "placed": {
                    "place_seconds": place_seconds,
                    "place_stages": dict(placed.stage_seconds),
                    "runs": placed_runs,
                    "encode_decode_share": share_of(placed_runs),
                    "held_over_share": [
                        held[a] / s if s else None
                        for a, s in zip(addresses, share.tolist(), strict=True)
                    ],
                },
            }
    return out
