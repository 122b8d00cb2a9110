"""The shuffle model against the kernel: TeraSort shuffles on kernel-shaped links.

A section of ``bench_mapreduce.py --links`` (it runs in the script's private
network namespace). For every network (8 worker processes at their own
addresses, each upload shaped by the kernel: 100 and 400 Mbit/s per node, and
400 Mbit/s with node 0 at 100), K = 4 and 8 (the first K workers) and three
shuffles on Li's placement with r = 2 (uncoded, coded unicast, coded
forwarding), TeraSort of records generated on the workers:

- measured: the record's shuffle seconds (end of the map stage to the last
  frame's arrival), the shuffle submitted once the map stage ends
  (``speculate=False``: a speculative shuffle overlaps the maps);
- predicted: ``predict_shuffle_seconds`` of the plan (switched network, each
  node's upload at its rate, downloads unlimited: only egress is shaped; values
  of ``100 n / (N K)`` bytes) plus a fixed cost calibrated once per case before
  the measured runs, never fitted to them: the shuffle of the same job on
  ``n / 100`` records less its bytes term (median of 3, interleaved); and,
  with one fixed cost per network (the median over every case's calibration
  runs), a second prediction that calibrates a single constant;
- the in-process emulator on the same plans and rates (equal links only), on
  a cluster of the same processes with no shaping.

And the choice ``run_mapreduce(coded=None)`` makes (``model_prefers_coded``: the
model of the bytes alone, ties to uncoded) against the faster measured shuffle,
per network, K and delivery. Cases are interleaved across repeats; medians.
"""

from __future__ import annotations

import math
import os
import statistics

from coded.runtime import ShapedCluster
from mapreduce import (
    MapReduceOptions,
    model_prefers_coded,
    place_li,
    plan_shuffle,
    predict_shuffle_seconds,
    terasort,
)

SEED = 20261207
CALIBRATIONS = 3  # tiny runs per case for its fixed cost (median)
R = 2
KS = (4, 8)
N_WORKERS = 8
MODES = {  # name -> coded, delivery
    "uncoded": (False, "unicast"),
    "coded unicast": (True, "unicast"),
    "coded forward": (True, "forward"),
}
MBIT = 1e6 / 8  # bytes/s of 1 Mbit/s
NETWORKS = {  # name -> each worker's upload, bytes/s
    "100 Mbit/s": [100 * MBIT] * N_WORKERS,
    "400 Mbit/s": [400 * MBIT] * N_WORKERS,
    "400 Mbit/s, node 0 at 100": [100 * MBIT] + [400 * MBIT] * (N_WORKERS - 1),
}


def _predicted_bytes_seconds(n: int, K: int, mode: str, rates: list[float]) -> float:
    coded, delivery = MODES[mode]
    placement = place_li(K, R)
    return predict_shuffle_seconds(
        plan_shuffle(placement, coded=coded),
        delivery=delivery,
        bandwidth=rates[:K],
        download_bandwidth=math.inf,
        value_bytes=round(100 * n / (placement.N * K)),
    )


def _shuffle(client, n: int, K: int, mode: str, emulated: float | None = None):
    coded, delivery = MODES[mode]
    options = MapReduceOptions(  # the shuffle alone, as the model predicts it
        delivery=delivery,
        emulated_bandwidth=emulated,
        straggler_slack=math.inf,
        speculate=False,
    )
    run = terasort(n, client=client, K=K, r=R, coded=coded, seed=SEED, options=options)
    return run.record


def _tiny(n: int) -> int:
    """Records of the calibration runs of a check on `n` records."""
    return max(1_000, n // 100)


def _network_rows(cluster, name, rates, n, repeats) -> list[dict]:
    client = cluster.client
    tiny = _tiny(n)
    cases = [(K, mode) for K in KS for mode in MODES]
    tiny_runs: dict = {case: [] for case in cases}
    for _ in range(CALIBRATIONS):  # interleaved: a burst of load hits every case
        for K, mode in cases:
            tiny_runs[K, mode].append(_shuffle(client, tiny, K, mode).shuffle_seconds)
    fixed = {  # calibrated once, before the runs it predicts
        (K, mode): max(
            0.0,
            statistics.median(times) - _predicted_bytes_seconds(tiny, K, mode, rates),
        )
        for (K, mode), times in tiny_runs.items()
    }
    runs: dict = {case: [] for case in cases}
    for repeat in range(repeats):
        for K, mode in cases:
            sent = cluster.link_bytes()
            record = _shuffle(client, n, K, mode)
            after = cluster.link_bytes()
            wire = [after[a] - sent[a] for a in cluster.addresses[:K]]
            runs[K, mode].append(
                {
                    "shuffle_seconds": record.shuffle_seconds,
                    "max_upload_bytes": max(record.upload_bytes),
                    "upload_bytes": list(record.upload_bytes),
                    # the whole job's bytes through each worker's shaped link
                    "wire_upload_bytes": wire,
                    "load_average": os.getloadavg()[0],
                }
            )
            print(
                f"  kernel {name} K={K} {mode:<14} repeat {repeat}: shuffle "
                f"{record.shuffle_seconds:6.2f} s, busiest upload "
                f"{max(record.upload_bytes) / 1e6:6.1f} MB (on the wire, whole "
                f"job: {max(wire) / 1e6:6.1f} MB)",
                flush=True,
            )
    rows = []
    for (K, mode), measured in runs.items():
        bytes_seconds = _predicted_bytes_seconds(n, K, mode, rates)
        shuffle = statistics.median(run["shuffle_seconds"] for run in measured)
        predicted = fixed[K, mode] + bytes_seconds
        rows.append(
            {
                "network": name,
                "rates_mbit": [rate / MBIT for rate in rates[:K]],
                "K": K,
                "scheme": mode,
                "shuffle_seconds": shuffle,
                "bytes_model_seconds": bytes_seconds,
                "fixed_seconds": fixed[K, mode],
                "predicted_seconds": predicted,
                "measured_over_predicted": shuffle / predicted,
                "measured_over_bytes_model": shuffle / bytes_seconds,
                "calibration_runs": tiny_runs[K, mode],
                "runs": measured,
            }
        )
    return rows


def add_single_fixed(out: dict) -> None:
    """Predict every row with one fixed cost per network, calibrated once.

    The constant is the median, over every case's calibration runs on that
    network, of the run's shuffle less its bytes term; rows gain
    ``fixed_once_seconds``, ``predicted_once_seconds`` and
    ``measured_over_predicted_once``, `out` gains ``within_25pct_once``.
    """
    tiny = _tiny(out["records"])
    for name in {row["network"] for row in out["rows"]}:
        rows = [row for row in out["rows"] if row["network"] == name]
        once = max(
            0.0,
            statistics.median(
                seconds
                - _predicted_bytes_seconds(
                    tiny, row["K"], row["scheme"], NETWORKS[name]
                )
                for row in rows
                for seconds in row["calibration_runs"]
            ),
        )
        for row in rows:
            row["fixed_once_seconds"] = once
            row["predicted_once_seconds"] = once + row["bytes_model_seconds"]
            row["measured_over_predicted_once"] = (
                row["shuffle_seconds"] / row["predicted_once_seconds"]
            )
    out["within_25pct_once"] = sum(
        abs(row["measured_over_predicted_once"] - 1) <= 0.25 for row in out["rows"]
    )


def _emulated_rows(client, n: int, repeats: int, networks) -> list[dict]:
    """The in-process emulator on the same plans, at the equal networks' rates."""
    rows = []
    for name in networks:
        rates = NETWORKS[name]
        if len(set(rates)) > 1:
            continue  # the emulator has one rate for every node
        for K in KS:
            for mode in MODES:
                seconds = [
                    _shuffle(client, n, K, mode, emulated=rates[0]).shuffle_seconds
                    for _ in range(repeats)
                ]
                rows.append(
                    {
                        "network": name,
                        "K": K,
                        "scheme": mode,
                        "emulated_shuffle_seconds": statistics.median(seconds),
                        "runs": seconds,
                    }
                )
                print(
                    f"  emulated {name} K={K} {mode:<14}: shuffle "
                    f"{statistics.median(seconds):6.2f} s",
                    flush=True,
                )
    return rows


def _choices(rows: list[dict]) -> list[dict]:
    """coded=None's choice (model, ties to uncoded) against the faster measured.

    ``choice``: the model given each node's rate; ``run_mapreduce_choice``: the
    one ``run_mapreduce(coded=None)`` makes, which knows no rates (equal links).
    """
    by = {(row["network"], row["K"], row["scheme"]): row for row in rows}
    out = []
    for name, rates in NETWORKS.items():
        for K in KS:
            plain = by.get((name, K, "uncoded"))
            for delivery in ("unicast", "forward"):
                coded = by.get((name, K, f"coded {delivery}"))
                if plain is None or coded is None:
                    continue
                prefers = model_prefers_coded(
                    place_li(K, R),
                    delivery=delivery,
                    bandwidth=rates[:K],
                    download_bandwidth=math.inf,
                )
                faster = coded["shuffle_seconds"] < plain["shuffle_seconds"]
                out.append(
                    {
                        "network": name,
                        "K": K,
                        "delivery": delivery,
                        "choice": "coded" if prefers else "uncoded",
                        "run_mapreduce_choice": "coded"
                        if model_prefers_coded(place_li(K, R), delivery=delivery)
                        else "uncoded",
                        "measured_faster": "coded" if faster else "uncoded",
                        "coded_over_uncoded": coded["shuffle_seconds"]
                        / plain["shuffle_seconds"],
                    }
                )
    return out


def kernel_model_section(n: int, repeats: int, networks: tuple[str, ...]) -> dict:
    """Every network's shuffles on kernel-shaped links, then the emulator's."""
    load_before = os.getloadavg()
    rows, links = [], {}
    for name in networks:
        with ShapedCluster(n_workers=N_WORKERS, links=NETWORKS[name]) as cluster:
            links[name] = {a: v / MBIT for a, v in cluster.measured.items()}
            print(
                f"  kernel links {name}: measured Mbit/s "
                + ", ".join(f"{v:.0f}" for v in links[name].values()),
                flush=True,
            )
            rows += _network_rows(cluster, name, NETWORKS[name], n, repeats)
    with ShapedCluster(n_workers=N_WORKERS) as unshaped:
        emulated = _emulated_rows(unshaped.client, n, repeats, networks)
    for row in rows:
        twin = next(
            (
                e
                for e in emulated
                if (e["network"], e["K"], e["scheme"])
                == (row["network"], row["K"], row["scheme"])
            ),
            None,
        )
        if twin is not None:
            row["emulated_shuffle_seconds"] = twin["emulated_shuffle_seconds"]
    choices = _choices(rows)
    within = [abs(row["measured_over_predicted"] - 1) <= 0.25 for row in rows]
    out = {
        "records": n,
        "r": R,
        "repeats": repeats,
        "measured_links_mbit": links,
        "rows": rows,
        "emulated": emulated,
        "choices": choices,
        "within_25pct": sum(within),
        "cases": len(rows),
        "choice_right": sum(c["choice"] == c["measured_faster"] for c in choices),
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
    }
    add_single_fixed(out)
    _print(out)
    return out


def _print(out: dict) -> None:
    print(
        f"\nShuffle model against kernel-shaped links: TeraSort of {out['records']} "
        f"records, r={R}, median of {out['repeats']}; load average "
        f"{out['load_average_before'][0]:.1f} before, "
        f"{out['load_average_after'][0]:.1f} after"
    )
    print(
        f"{'network':<27}{'K':>2} {'scheme':<14}{'shuffle':>8}{'bytes/B':>8}"
        f"{'fixed':>7}{'pred':>7}{'meas/pred':>10}{'/1 fixed':>9}{'emulated':>9}"
    )
    for row in out["rows"]:
        emulated = row.get("emulated_shuffle_seconds")
        print(
            f"{row['network']:<27}{row['K']:>2} {row['scheme']:<14}"
            f"{row['shuffle_seconds']:>8.2f}{row['bytes_model_seconds']:>8.2f}"
            f"{row['fixed_seconds']:>7.2f}{row['predicted_seconds']:>7.2f}"
            f"{row['measured_over_predicted']:>10.2f}"
            f"{row['measured_over_predicted_once']:>9.2f}"
            + (f"{emulated:>9.2f}" if emulated is not None else f"{'':>9}")
        )
    for choice in out["choices"]:
        print(
            f"coded=None at {choice['network']}, K={choice['K']}, "
            f"{choice['delivery']}: model picks {choice['choice']} "
            f"(run_mapreduce: {choice['run_mapreduce_choice']}), measured faster "
            f"{choice['measured_faster']} (coded/uncoded "
            f"{choice['coded_over_uncoded']:.2f})"
        )
    print(
        f"within 25% of the model: {out['within_25pct']} of {out['cases']} "
        f"(one fixed cost per network: {out['within_25pct_once']}); "
        f"coded=None right: {out['choice_right']} of {len(out['choices'])}"
    )
