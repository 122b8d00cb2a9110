"""Where the per-call time of a placed ``A @ x`` goes, with no stragglers.

A (20000 x 500) placed with (8, 6) MDS on 8 single-threaded in-process workers;
prints the median of each stage of ``MatmulResult.stage_seconds`` over the repeats
next to one trivial ``client.submit(...).result()`` round trip and dask.array's
``(A @ x).compute()`` on the same chunks persisted, all measured in the same run,
and writes ``bench/results/floor.json``.

Usage: ``python bench/floor.py [--quick] [--repeats R]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

# one BLAS thread per worker thread, as Dask's nanny sets for worker processes:
# eight in-process workers each running multi-threaded OpenBLAS on two cores
# spend most of their time contending for them
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
from _harness import write_results


def _noop():
    return None


def measure(client, A, x, repeats):
    """Median seconds: trivial round trip, dask.array, and each coded stage.

    A is placed with (8, 6) MDS and persisted as dask.array row chunks on the
    same workers; the three calls are interleaved, after two warm-up rounds.
    """
    import dask.array as da

    import coded

    A_da = client.persist(da.from_array(A, chunks=(-(-A.shape[0] // 8), -1)))
    with coded.place_operand(A, client=client, n=8, k=6) as placed:
        calls = {
            "trivial": lambda: client.submit(_noop, pure=False).result(),
            "coded": lambda: coded.coded_matmul(placed, x),
            "dask_array": lambda: (A_da @ x).compute(),
        }
        times = {name: [] for name in calls}
        results = []
        for repeat in range(repeats + 2):
            for name, call in calls.items():
                began = time.perf_counter()
                value = call()
                if repeat >= 2:
                    times[name].append(time.perf_counter() - began)
                    if name == "coded":
                        results.append(value)
    assert np.allclose(results[-1].product, A @ x)
    row = {
        "trivial_round_trip": statistics.median(times["trivial"]),
        "dask_array": statistics.median(times["dask_array"]),
        "coded_total": statistics.median(times["coded"]),
    }
    for stage in results[0].stage_seconds:
        row[f"stage_{stage}"] = statistics.median(
            r.stage_seconds[stage] for r in results
        )
    row["coded_vs_trivial"] = row["coded_total"] / row["trivial_round_trip"]
    row["coded_vs_dask_array"] = row["coded_total"] / row["dask_array"]
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=40)
    args = parser.parse_args(argv)
    import coded

    m, d = (4000, 200) if args.quick else (20000, 500)
    repeats = 5 if args.quick else args.repeats
    rng = np.random.default_rng(0)
    A, x = rng.standard_normal((m, d)), rng.standard_normal(d)
    with coded.LocalCodedCluster(n_workers=8) as cluster:
        row = measure(cluster.client, A, x, repeats)
    print(
        " ".join(
            f"{name}={1e3 * value:.1f}ms"
            for name, value in row.items()
            if not name.startswith("coded_vs")
        )
    )
    print(
        f"coded / trivial round trip = {row['coded_vs_trivial']:.1f}x, "
        f"coded / dask.array = {row['coded_vs_dask_array']:.2f}x"
    )
    write_results(
        "floor", {"shape": [m, d], "repeats": repeats, **row}, quick=args.quick
    )
    return row


if __name__ == "__main__":
    main()
