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
import sys
import time
from pathlib import Path

# one BLAS thread per worker thread, as Dask's nanny sets for worker processes:
# eight in-process workers each running multi-threaded OpenBLAS on two cores
# spend most of their time contending for them
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

_HERE = Path(__file__).resolve().parent
sys.path = [p for p in sys.path if Path(p or ".").resolve() != _HERE]


def _noop():
    return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=40)
    args = parser.parse_args(argv)
    import dask.array as da

    import coded

    m, d = (4000, 200) if args.quick else (20000, 500)
    repeats = 5 if args.quick else args.repeats
    rng = np.random.default_rng(0)
    A, x = rng.standard_normal((m, d)), rng.standard_normal(d)
    with coded.LocalCodedCluster(n_workers=8) as cluster:
        client = cluster.client
        A_da = client.persist(da.from_array(A, chunks=(-(-m // 8), d)))
        with coded.place_operand(A, client=client, n=8, k=6) as placed:
            calls = {
                "trivial": lambda: client.submit(_noop, pure=False).result(),
                "coded": lambda: coded.coded_matmul(placed, x),
                "dask_array": lambda: (A_da @ x).compute(),
            }
            times = {name: [] for name in calls}
            results = []
            for repeat in range(repeats + 2):  # interleaved; two warm-up rounds
                for name, call in calls.items():
                    began = time.perf_counter()
                    value = call()
                    if repeat >= 2:
                        times[name].append(time.perf_counter() - began)
                        if name == "coded":
                            results.append(value)
    assert np.allclose(results[-1].product, A @ x)
    stages = {
        s: statistics.median(r.stage_seconds[s] for r in results)
        for s in results[0].stage_seconds
    }
    trivial, dask_array = (
        statistics.median(times[n]) for n in ("trivial", "dask_array")
    )
    stages["measured_total"] = statistics.median(times["coded"])
    row = {"trivial_round_trip": trivial, "dask_array": dask_array, **stages}
    print(" ".join(f"{name}={1e3 * value:.1f}ms" for name, value in row.items()))
    print(
        f"coded / trivial round trip = {stages['measured_total'] / trivial:.1f}x, "
        f"coded / dask.array = {stages['measured_total'] / dask_array:.2f}x"
    )
    return row


if __name__ == "__main__":
    main()
