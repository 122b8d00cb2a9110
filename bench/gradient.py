"""Gradient coding vs uncoded, replication, partial returns, ignoring stragglers.

Logistic regression.

One embedded cluster of 8 single-threaded workers, ``s = 2``, and the straggler model
of ``docs/theory/gradient_coding.md`` injected inside the tasks: 6 workers with
per-row time ``a + X / mu`` and 2 (workers 6 and 7) five times slower (``5 a``,
``mu / 5``), i.e. persistently 5x slow. Each scheme places the data once and runs
the same number of plain gradient-descent steps from the same start, every scheme
seeing the same worker speeds at a step (common random numbers).

Reported (medians over repeats, ratios taken within a repeat):

- time to reach the uncoded run's final loss (coded, replication, partial, ignore);
- mean step seconds against the model's prediction
  (``theory.expected_gradient_step_time`` times ``time_unit``);
- the largest relative error of each exact scheme's gradient against the full
  gradient computed on the client, over every step;
- the step time with no stragglers (the runtime's per-step floor);
- the worst decoding condition number of each construction at a few (n, s).

Usage: ``python bench/gradient.py [--quick] [--rows M] [--steps T] [--repeats R]``.
Writes ``bench/results/gradient.json``.
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import statistics
import time

# one BLAS thread per worker thread: 8 in-process workers share 2 cores, and
# OpenBLAS's spinning threads slow every product ~10x on this loaded VM
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
from _harness import write_results

import coded
import theory

N, S, D = 8, 2, 100
SLOW = (6, 7)
SCHEMES = ("uncoded", "coded", "replication", "ignore", "partial")


def make_data(m: int, seed: int):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, D))
    w_true = rng.standard_normal(D) / np.sqrt(D) * 3.0
    y = (rng.random(m) < 1.0 / (1.0 + np.exp(-X @ w_true))).astype(float)
    return X, y


def make_grad(m: int):
    def grad(part, w):
        Xp, yp = part
        return Xp.T @ (1.0 / (1.0 + np.exp(-(Xp @ w))) - yp) / m

    return grad


def make_loss(X, y):
    def loss(w):
        z = X @ w
        return float(np.mean(np.logaddexp(0.0, z) - y * z))

    return loss


def profile_and_stragglers(theory, coded, m, step_seconds):
    """Model with the fast workers' coded step lasting about `step_seconds`."""
    a, mu = 1.0, 5.0
    slow = [5.0 if i in SLOW else 1.0 for i in range(N)]
    profile = theory.WorkerProfile(a=[a * f for f in slow], mu=[mu / f for f in slow])
    time_unit = step_seconds / ((S + 1) * m / N * (a + 1.0 / mu))
    return profile, coded.Stragglers(profile=profile, time_unit=time_unit)


KAPPA_CASES = ((8, 2), (12, 3), (30, 3), (30, 5), (64, 3))


def random_cyclic_kappa(n, s, seed=0):
    """Worst kappa of Tandon et al.'s random construction, all C(n, s) sets.

    H (s x n) Gaussian with H 1 = 0; row i of B spans the null space of H
    restricted to the support i .. i + s (one dimension).
    """
    rng = np.random.default_rng(seed)
    H = rng.standard_normal((s, n))
    H -= H.mean(axis=1, keepdims=True)
    B = np.zeros((n, n))
    for i in range(n):
        support = (i + np.arange(s + 1)) % n
        B[i, support] = np.linalg.svd(H[:, support])[2][-1]
    worst = 0.0
    for lost in itertools.combinations(range(n), s):
        sv = np.linalg.svd(np.delete(B, lost, axis=0), compute_uv=False)
        worst = max(worst, sv[0] / sv[n - s - 1])
    return float(worst)


def worst_kappas(coded):
    """Worst decoding kappa of each construction (exact when enumerable)."""
    table = {}
    for n, s in KAPPA_CASES:
        for construction in ("stable", "cyclic", "fractional"):
            if construction == "fractional" and n % (s + 1):
                continue
            code = coded.GradientCode(n, s, construction=construction)
            worst = code.worst_condition()
            table[f"n={n},s={s},{construction}"] = {
                "kappa": worst.kappa,
                "exact": worst.exact,
                "sets_checked": worst.sets_checked,
                "real": code.is_real,
            }
    table["n=30,s=3,random (Tandon et al.)"] = {
        "kappa": random_cyclic_kappa(30, 3),
        "exact": True,
        "sets_checked": 4060,
        "real": True,
    }
    return table


def time_to(losses, elapsed, target):
    reached = np.flatnonzero(losses <= target * (1 + 1e-9))
    return float(elapsed[reached[0]]) if reached.size else float("nan")


def run_scheme(coded, placement, X, y, args, stragglers, rng, check):
    m = X.shape[0]
    errors = []

    def update(w, gradient, step):
        if check:
            full = X.T @ (1.0 / (1.0 + np.exp(-(X @ w))) - y) / m
            errors.append(float(np.linalg.norm(gradient - full) / np.linalg.norm(full)))
        return w - args.step_size * gradient

    result = coded.gradient.gradient_descent(
        placement,
        np.zeros(D),
        steps=args.steps,
        update=update,
        loss=make_loss(X, y),
        stragglers=stragglers,
        rng=rng,
        timeout=120.0,
    )
    return result, (max(errors) if errors else float("nan"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rows", type=int, default=None)
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--step-size", type=float, default=2.0)
    parser.add_argument("--coded-step-seconds", type=float, default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    m = args.rows or (20_000 if args.quick else 1_000_000)
    args.steps = args.steps or (4 if args.quick else 30)
    repeats = args.repeats or (1 if args.quick else 3)
    coded_step = args.coded_step_seconds or (0.15 if args.quick else 0.6)

    X, y = make_data(m, args.seed)
    profile, stragglers = profile_and_stragglers(theory, coded, m, coded_step)
    predicted = {
        scheme: theory.expected_gradient_step_time(profile, S, scheme=scheme, rows=m)
        * stragglers.time_unit
        for scheme in SCHEMES
    }
    runs = {scheme: [] for scheme in SCHEMES}
    with coded.LocalCodedCluster(n_workers=N) as cluster:
        placements = {
            scheme: coded.place_gradient_data(
                (X, y), make_grad(m), client=cluster.client, scheme=scheme, s=S
            )
            for scheme in SCHEMES
        }
        floor = [
            placements["coded"].gradient(np.zeros(D)).step_seconds for _ in range(10)
        ]
        for repeat in range(repeats):
            shift = repeat % len(SCHEMES)
            order = SCHEMES[shift:] + SCHEMES[:shift]
            for scheme in order:
                began = time.perf_counter()
                result, error = run_scheme(
                    coded,
                    placements[scheme],
                    X,
                    y,
                    args,
                    stragglers,
                    rng=args.seed + 1000 * repeat,
                    check=scheme != "ignore",
                )
                runs[scheme].append((result, error))
                print(
                    f"repeat {repeat} {scheme:12s} final loss {result.losses[-1]:.6f} "
                    f"mean step {result.step_seconds.mean():.3f} s "
                    f"({time.perf_counter() - began:.1f} s wall)",
                    flush=True,
                )
        for placement in placements.values():
            placement.release()

    per_repeat = []
    for r in range(repeats):
        target = runs["uncoded"][r][0].losses[-1]
        times = {
            s: time_to(runs[s][r][0].losses, runs[s][r][0].elapsed_seconds, target)
            for s in SCHEMES
        }
        per_repeat.append(times)
    med = statistics.median

    def ratio(a, b):
        return med([t[a] / t[b] for t in per_repeat])

    summary = {
        "rows": m,
        "d": D,
        "n": N,
        "s": S,
        "slow_workers": list(SLOW),
        "steps": args.steps,
        "repeats": repeats,
        "step_size": args.step_size,
        "time_unit_seconds": stragglers.time_unit,
        "machine": f"{platform.node()} ({platform.processor() or 'cpu'}), shared",
        "time_to_uncoded_final_loss_seconds": {
            s: med([t[s] for t in per_repeat]) for s in SCHEMES
        },
        "ratio_coded_over_uncoded": ratio("coded", "uncoded"),
        "ratio_coded_over_replication": ratio("coded", "replication"),
        "ratio_replication_over_uncoded": ratio("replication", "uncoded"),
        "ratio_partial_over_uncoded": ratio("partial", "uncoded"),
        "ignore_reached_target": [not np.isnan(t["ignore"]) for t in per_repeat],
        "ignore_final_loss_over_uncoded": med(
            [
                runs["ignore"][r][0].losses[-1] / runs["uncoded"][r][0].losses[-1]
                for r in range(repeats)
            ]
        ),
        "mean_step_seconds_measured": {
            s: med([float(run.step_seconds.mean()) for run, _ in runs[s]])
            for s in SCHEMES
        },
        "mean_step_seconds_model": predicted,
        "no_straggler_step_seconds_median": med(floor),
        "max_relative_gradient_error": {
            s: max(e for _, e in runs[s]) for s in SCHEMES if s != "ignore"
        },
        "model_bound_coded_over_uncoded": (S + 1) / 5,
        "worst_kappa": worst_kappas(coded),
    }
    print()
    for key in (
        "time_to_uncoded_final_loss_seconds",
        "ratio_coded_over_uncoded",
        "ratio_coded_over_replication",
        "ratio_partial_over_uncoded",
        "mean_step_seconds_measured",
        "mean_step_seconds_model",
        "no_straggler_step_seconds_median",
        "max_relative_gradient_error",
        "ignore_final_loss_over_uncoded",
        "worst_kappa",
    ):
        print(f"{key}: {summary[key]}")
    write_results("gradient", summary, quick=args.quick)


if __name__ == "__main__":
    main()
