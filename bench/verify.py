"""Wrong results: detect and correct against a corrupt worker; what checking costs.

On an embedded cluster of 8 single-threaded workers, with the default (8, 6) MDS
code: one worker (2) reports wrong numbers in every call (``Stragglers(corrupt=
{2: e})``: its largest entry off by the relative error ``e``: 1e-3, 1e-12, and a
flipped mantissa bit ``b`` drawn uniformly from 0..51, ``e = 2^(b - 52)``), over the
reals and GF(65537), on fresh and placed calls. Two other workers are 50 ms slow,
so the corrupt worker's result is among the first six in most calls. For every
call it records whether the product came back, whether it was right (within
``1e-9`` relative, or exact) and which workers the call named. A product that
came back wrong is *silently wrong*; the target is none with ``verify="detect"``
and every product right, the corrupt worker named, with ``verify="correct"``.
A call that returned without using or naming the corrupt worker never read its
result (it came after the product was decoded): ``named/read`` counts both.
For bit flips it also counts the calls named among the flips above the check's
detection floor over the reals (``FLOOR_BITS``; below it a flip is within an
honest worker's rounding and no check can name it).

Both ways of checking, each asked for by name: Freivalds checks
(``check="freivalds"``, what the default ``check="auto"`` runs: each result
against its secret projection as it arrives) and redundancy
(``check="redundancy"``: the results against each other, one more result waited
for, two to correct). Rows over the reals also give the median
``detection_floor`` the returned products' records state.

Then what checking costs in latency with one worker slow: fresh (8, 6) calls on
a 2400 x 100 A with worker 0 2 s slow (0.5 s with ``--quick``),
``verify="detect"``, ``verify="correct"`` (both the default check) and
``verify="correct", check="redundancy"`` (which waits for all 8), interleaved,
medians over the repeats; target: correct <= 1.15x detect. And with no faults:
a placed 20000 x 500 A, (8, 6) MDS, ``verify="detect"`` with each check against
``"off"``, interleaved, medians over the repeats.

    python bench/verify.py [--quick] [--calls N] [--repeats R]

Writes ``bench/results/verify.json`` (``verify_quick.json`` with ``--quick``).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
import warnings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one BLAS thread per worker

import numpy as np
from _harness import write_results

import coded

WRONG, SLOW = 2, {6: 0.05, 7: 0.05}
# Lowest flipped bit above each check's detection floor for this bench's data
# (docs/theory/verification.md, "The detection floor"): a flip of bit b is a
# relative error 2^(b - 52) of the largest entry; the redundancy residual with
# k + 2 results needs about 3000 u of it, a Freivalds check of a 400-row batch
# about 2^-36 (the records' detection_floor: the rows' median_floor).
FLOOR_BITS = {"redundancy": 11, "freivalds": 16}
ERRORS = {"1e-3": 1e-3, "1e-12": 1e-12, "bit flip": None}
FIELDS = {"reals": None, "GF(65537)": 65537}


def _operands(field, rng, m: int, d: int):
    if field is None:
        return rng.standard_normal((m, d)), rng.standard_normal(d)
    return rng.integers(-10, 10, (m, d)), rng.integers(-10, 10, d)


def _is_right(product, A, x, field) -> bool:
    if field is None:
        return bool(np.allclose(product, A @ x, rtol=1e-9, atol=1e-9))
    return bool(np.array_equal(product, A @ x))


def _one_call(client, target, A, x, field, verify, spec, check) -> dict:
    """Outcome of one call: returned, right, the workers it named."""
    kwargs = {"scheme": "mds", "k": 6, "field": field} if target is A else {}
    try:
        with warnings.catch_warnings():  # redundancy warns: it waits for all 8
            warnings.simplefilter("ignore", UserWarning)
            result = coded.coded_matmul(
                target,
                x,
                client=client,
                stragglers=spec,
                verify=verify,
                check=check,
                **kwargs,
            )
    except coded.InconsistentResultsError as error:
        named = error.suspect_workers
        return {"returned": False, "right": None, "named": named, "used": ()}
    return {
        "returned": True,
        "right": _is_right(result.product, A, x, field),
        "named": result.suspect_workers,
        "used": result.used_workers,
        "floor": result.detection_floor,
    }


def faults(client, calls: int, rng) -> list[dict]:
    """Detect and correct one corrupt worker: every error, field, path and check."""
    rows = []
    for field_name, field in FIELDS.items():
        A, x = _operands(field, rng, 2400, 100)
        with coded.place_operand(A, k=6, field=field, client=client) as placed:
            for error_name, error in ERRORS.items():
                for check, verify, path in _variants():
                    outcomes = []
                    for _ in range(calls):
                        bit = int(rng.integers(0, 52))
                        e = error or 2.0 ** (bit - 52)
                        spec = coded.Stragglers(corrupt={WRONG: e}, delays=SLOW)
                        target = A if path == "fresh" else placed
                        outcome = _one_call(
                            client, target, A, x, field, verify, spec, check
                        )
                        outcomes.append({**outcome, "bit": None if error else bit})
                    rows.append(
                        _summary(field_name, error_name, check, verify, path, outcomes)
                    )
    return rows


def _variants() -> list[tuple[str, str, str]]:
    """(check, verify, path): both checks, both verifies, fresh and placed."""
    return [
        (check, verify, path)
        for check in ("freivalds", "redundancy")
        for verify in ("detect", "correct")
        for path in ("fresh", "placed")
    ]


def _summary(field, error, check, verify, path, outcomes) -> dict:
    returned = [o for o in outcomes if o["returned"]]
    floors = [o["floor"] for o in returned if not np.isnan(o["floor"])]
    above = [
        o
        for o in outcomes
        if o["bit"] is not None and (field != "reals" or o["bit"] >= FLOOR_BITS[check])
    ]
    return {
        "field": field,
        "error": error,
        "check": check,
        "verify": verify,
        "path": path,
        "calls": len(outcomes),
        "silently_wrong": sum(not o["right"] for o in returned),
        "right": sum(bool(o["right"]) for o in returned),
        "refused": len(outcomes) - len(returned),
        "named_the_corrupt_worker": sum(WRONG in o["named"] for o in outcomes),
        # a call that returned without using or naming it never read its result
        "read_the_corrupt_result": sum(
            not o["returned"] or WRONG in (*o["used"], *o["named"]) for o in outcomes
        ),
        "flips_above_floor": len(above),
        "named_above_floor": sum(WRONG in o["named"] for o in above),
        "median_floor": statistics.median(floors) if floors else None,
    }


COST_MODES = {
    "freivalds": {"verify": "detect", "check": "freivalds"},
    "redundancy": {"verify": "detect", "check": "redundancy"},
    "off": {"verify": "off"},
}


SLOW_MODES = {
    "detect": {"verify": "detect"},
    "correct": {"verify": "correct"},
    "correct, redundancy": {"verify": "correct", "check": "redundancy"},
}


def slow_worker(client, repeats: int, delay: float) -> dict:
    """Median seconds of (8, 6) calls with worker 0 `delay` s slow, per mode."""
    rng = np.random.default_rng(2)
    A = rng.standard_normal((2400, 100))
    slow = coded.Stragglers(delays={0: delay})
    times = {mode: [] for mode in SLOW_MODES}
    used_slow = dict.fromkeys(SLOW_MODES, 0)
    for _ in range(repeats):
        x = rng.standard_normal(100)
        for mode, options in SLOW_MODES.items():
            began = time.perf_counter()
            with warnings.catch_warnings():  # redundancy warns: it waits for all 8
                warnings.simplefilter("ignore", UserWarning)
                result = coded.coded_matmul(
                    A, x, scheme="mds", k=6, client=client, stragglers=slow, **options
                )
            times[mode].append(time.perf_counter() - began)
            used_slow[mode] += 0 in result.used_workers
    medians = {mode: statistics.median(t) for mode, t in times.items()}
    return {
        "delay": delay,
        "repeats": repeats,
        "median_seconds": medians,
        "calls_that_used_the_slow_worker": used_slow,
        "correct_over_detect": medians["correct"] / medians["detect"],
        "redundancy_over_detect": medians["correct, redundancy"] / medians["detect"],
    }


def cost(client, repeats: int, m: int, d: int) -> dict:
    """Median seconds of placed calls checked either way and unchecked (no faults)."""
    rng = np.random.default_rng(1)
    A = rng.standard_normal((m, d))
    times = {mode: [] for mode in COST_MODES}
    with coded.place_operand(A, k=6, client=client) as placed:
        for _ in range(3):  # warm-up
            coded.coded_matmul(placed, rng.standard_normal(d))
        for _ in range(repeats):
            x = rng.standard_normal(d)
            for mode, options in COST_MODES.items():
                began = time.perf_counter()
                coded.coded_matmul(placed, x, **options)
                times[mode].append(time.perf_counter() - began)
    medians = {v: statistics.median(t) for v, t in times.items()}
    return {
        "m": m,
        "d": d,
        "repeats": repeats,
        "median_seconds": medians,
        "detect_over_off": medians["freivalds"] / medians["off"],
        "redundancy_over_off": medians["redundancy"] / medians["off"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small smoke run")
    parser.add_argument("--calls", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=None)
    args = parser.parse_args()
    calls = args.calls or (4 if args.quick else 100)
    repeats = args.repeats or (5 if args.quick else 40)
    m, d = (2000, 100) if args.quick else (20000, 500)
    rng = np.random.default_rng(0)
    load_before = os.getloadavg()
    with coded.LocalCodedCluster(n_workers=8) as cluster:
        rows = faults(cluster.client, calls, rng)
        slow = slow_worker(cluster.client, *((3, 0.5) if args.quick else (20, 2.0)))
        overhead = cost(cluster.client, repeats, m, d)
    print(f"one corrupt worker of 8, (8, 6) MDS, {calls} calls per row")
    print(
        f"{'field':<10} {'error':<9} {'check':<11} {'verify':<8} {'path':<7} "
        f"{'silent':>7} {'right':>6} {'refused':>8} {'named/read':>11} "
        f"{'floor':>8} {'named above floor':>18}"
    )
    for row in rows:
        print(
            f"{row['field']:<10} {row['error']:<9} {row['check']:<11} "
            f"{row['verify']:<8} {row['path']:<7} {row['silently_wrong']:>7} "
            f"{row['right']:>6} {row['refused']:>8} "
            f"{row['named_the_corrupt_worker']:>6}/{row['read_the_corrupt_result']:<4} "
            + (f"{row['median_floor']:>8.1e} " if row["median_floor"] else f"{'':>9}")
            + (
                f"{row['named_above_floor']:>9} of {row['flips_above_floor']:<5}"
                if row["error"] == "bit flip"
                else ""
            )
        )
    seconds = slow["median_seconds"]
    print(
        f"\n(8, 6) fresh calls, worker 0 {slow['delay']} s slow, median of "
        f"{slow['repeats']}: "
        + ", ".join(f"{mode} {1e3 * t:.1f} ms" for mode, t in seconds.items())
        + f"; correct / detect {slow['correct_over_detect']:.3f} (target <= 1.15),"
        f" redundancy / detect {slow['redundancy_over_detect']:.1f}"
    )
    medians = overhead["median_seconds"]
    print(
        f"\nplaced {m} x {d}, no faults, verify='detect': freivalds "
        f"{1e3 * medians['freivalds']:.1f} ms, redundancy "
        f"{1e3 * medians['redundancy']:.1f} ms, off {1e3 * medians['off']:.1f} ms; "
        f"freivalds / off {overhead['detect_over_off']:.3f} (target <= 1.15), "
        f"redundancy / off {overhead['redundancy_over_off']:.3f}"
    )
    print(f"load average before {load_before}, after {os.getloadavg()}")
    write_results(
        "verify",
        {
            "rows": rows,
            "slow_worker": slow,
            "cost": overhead,
            "machine": platform.platform(),
            "cpus": os.cpu_count(),
            "load_average": [load_before, os.getloadavg()],
        },
        quick=args.quick,
    )


if __name__ == "__main__":
    main()
