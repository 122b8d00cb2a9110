"""A placed call on kernel-shaped links: what one slow link does to it.

A section of ``matmul.py --links RATE[,RATE...]`` (it runs in the script's
private network namespace, on a ``ShapedCluster`` of 8 workers at those
rates). A (m x d) is placed once uncoded (k = 8) and with (8, 6) MDS; each call
ships B (d x c) to the 8 workers and each worker sends back its share's
product, ``m c / k`` doubles. Measured: the call's seconds (medians of
interleaved repeats) and its transport. Predicted, the switched model of
``docs/theory/network.md`` with every node's upload at its rate and downloads
unlimited (only egress is shaped). On the resident transport (the default for a
placed operand) each worker streams its product straight to the client, which
needs the first ``k``:

    T = fixed + n |B| / B_client + k-th smallest over workers i of s / B_i

On the task transport a client outside the cluster gathers results through the
scheduler (Dask's default, ``direct_to_workers=False``), so every share's
product crosses the scheduler's link as well, and all ``n`` are fetched (they
finish together):

    T = fixed + n |B| / B_client
        + max(k-th smallest over workers i of s / B_i, n s / B_scheduler)

with ``s`` the bytes of a share's product and ``fixed`` calibrated once per
scheme before the measured calls, never fitted to them: the median call with
a single column of B (its bytes term subtracted). ``d`` is small, so the
multiplies are milliseconds and the bytes dominate.
"""

from __future__ import annotations

import os
import statistics
import time

import numpy as np

N, M, D, COLUMNS = 8, 24_000, 16, 400
SCHEMES = {"placed uncoded": ("uncoded", N), "placed (8,6) MDS": ("mds", 6)}
CALIBRATIONS = 5


def _bytes_seconds(
    k: int, columns: int, rates: list[float], top: float, transport: str
) -> float:
    """The bytes term; `top`: the client's and the scheduler's links (bytes/s)."""
    share = -(-M // k) * columns * 8
    first_k = sorted(share / rate for rate in rates)[k - 1]
    relayed = N * share / top if transport == "tasks" else 0.0
    return N * D * columns * 8 / top + max(first_k, relayed)


def _call(placed, B) -> tuple[float, dict, str]:
    """The call's seconds, its stages and its transport."""
    from coded import coded_matmul

    began = time.perf_counter()
    result = coded_matmul(placed, B, timeout=300.0)
    return time.perf_counter() - began, dict(result.stage_seconds), result.transport


def placed_call_section(links: float | list[float], repeats: int) -> dict:
    """Uncoded and (8, 6) MDS placed calls on a ShapedCluster at `links`."""
    from coded import coded_matmul, place_operand
    from coded.runtime import ShapedCluster

    rng = np.random.default_rng(5)
    A = rng.standard_normal((M, D))
    B = rng.standard_normal((D, COLUMNS))
    load_before = os.getloadavg()
    with ShapedCluster(n_workers=N, links=links) as cluster:
        rates = cluster.worker_rates
        top = max(rates)  # the client's and the scheduler's links (the default)
        client = cluster.client
        placed = {
            label: place_operand(A, scheme=scheme, k=k, client=client)
            for label, (scheme, k) in SCHEMES.items()
        }
        column = B[:, :1]
        fixed, transports = {}, {}
        for label, handle in placed.items():
            transports[label] = _call(handle, column)[2]  # warm-up
            tiny = [_call(handle, column)[0] for _ in range(CALIBRATIONS)]
            k = SCHEMES[label][1]
            fixed[label] = max(
                0.0,
                statistics.median(tiny)
                - _bytes_seconds(k, 1, rates, top, transports[label]),
            )
        samples: dict = {label: [] for label in placed}
        stages: dict = {label: [] for label in placed}
        for _ in range(repeats):  # interleaved
            for label, handle in placed.items():
                seconds, stage_seconds, _ = _call(handle, B)
                samples[label].append(seconds)
                stages[label].append(stage_seconds)
        check = coded_matmul(placed["placed (8,6) MDS"], B).product
        error = float(np.abs(check - A @ B).max())
        for handle in placed.values():
            handle.release()
    rows = {}
    for label, seconds in samples.items():
        k = SCHEMES[label][1]
        bytes_seconds = _bytes_seconds(k, COLUMNS, rates, top, transports[label])
        measured = statistics.median(seconds)
        predicted = fixed[label] + bytes_seconds
        rows[label] = {
            "k": k,
            "transport": transports[label],
            "seconds": measured,
            "runs": seconds,
            "stage_seconds": {
                stage: statistics.median(run[stage] for run in stages[label])
                for stage in stages[label][0]
            },
            "bytes_model_seconds": bytes_seconds,
            "fixed_seconds": fixed[label],
            "predicted_seconds": predicted,
            "measured_over_predicted": measured / predicted,
        }
    out = {
        "shape": {"A": [M, D], "B": [D, COLUMNS]},
        "links_mbit": [rate * 8e-6 for rate in rates],
        "client_and_scheduler_link_mbit": top * 8e-6,
        "measured_links_mbit": {a: v * 8e-6 for a, v in cluster.measured.items()},
        "repeats": repeats,
        "rows": rows,
        "max_abs_error": error,
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
    }
    _print(out)
    return out


def _print(out: dict) -> None:
    links = ", ".join(f"{v:.0f}" for v in out["links_mbit"])
    print(
        f"\n== placed A {out['shape']['A']} @ B {out['shape']['B']} on kernel-shaped "
        f"links ({links} Mbit/s), median of {out['repeats']}; load average "
        f"{out['load_average_before'][0]:.1f} before, "
        f"{out['load_average_after'][0]:.1f} after"
    )
    print(
        f"{'scheme (transport)':<29}{'call s':>8}{'bytes/B':>8}{'fixed':>7}"
        f"{'pred':>7}{'ratio':>7}"
    )
    for label, row in out["rows"].items():
        print(
            f"{label + ' (' + row['transport'] + ')':<29}{row['seconds']:>8.3f}"
            f"{row['bytes_model_seconds']:>8.3f}"
            f"{row['fixed_seconds']:>7.3f}{row['predicted_seconds']:>7.3f}"
            f"{row['measured_over_predicted']:>7.2f}  stages "
            + ", ".join(f"{k} {v:.2f}" for k, v in row["stage_seconds"].items())
        )
