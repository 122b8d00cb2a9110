"""Rateless (LT) codes: decoding overhead, drifting speeds, sparse A.

Three sections, side by side in one run, medians over the repeats:

1. **Overhead and decode** (codes level, no cluster): ``LTCode(8, m)`` of a dense
   m x 2000 A (m x 200 with ``--quick``) times a vector x; every worker's encoded
   rows in batches of ``m / 50`` fed to the decoder in a random order until it is
   decodable (and needs no more rows). A batch's values are ``G[rows] @ (A x)``:
   the products the workers return, up to rounding order (computing ``G A`` densely
   would need 2 GiB and adds nothing to what the decoder sees). Recorded: received
   rows / m, the time of the final ``decode()`` (the plan is made while feeding,
   where ``needs_more`` needs it), the feeding time, and, side by side, the time
   of one worker's share of the product on the same matrix (``A[:m/8] @ x``, one
   BLAS thread: the smallest share a worker computes, its m/8 rows of the 8-way
   split, not counting the LT overhead rows). Also the generator build time,
   cold and cached (a second ``LTCode`` with the same parameters).
2. **Unknown, drifting speeds** on the embedded 8-worker cluster: two workers
   4x slow (drawn from a seeded rng), injected as ``Stragglers(profile)`` with a
   nearly deterministic per-row time. The injection fixes the speeds for a whole
   call, so the drift is emulated *between* calls: HCMM's stale profile is built
   from the speeds before the drift, then the slow pair changes and every
   measured call runs with the new pair. Rateless, uncoded, (8, 6) MDS, HCMM with
   the true profile and HCMM with the stale one, against the ideal load-balanced
   time ``m * time_unit / sum(1 / a_i)`` of the true speeds; and rateless on A
   placed once (``rateless_placed``: its calls run on the resident servers, each
   worker's batches streamed back without the scheduler; target <= 1.1x ideal).
3. **Sparse A** (CSR, density 1e-5): rateless ``coded_matmul`` on 8 workers with
   one 5x straggler (the time unit the measured natural seconds per encoded row,
   so 5x means 5x its natural speed; uncoded and MDS refuse a sparse A), scipy
   ``A @ x`` in one process and ``dask.array`` with scipy.sparse row chunks (a
   ``map_blocks`` product whose first chunk sleeps 4x its compute time: the same
   5x straggler); beside them 2-replication and speculative backup tasks on the
   same sparse A (their time unit the natural seconds per source row). Also how
   many times the whole product one LT share costs (its rows sum about the mean
   degree of source rows each, so a sparse share has that many times the
   nonzeros of a source-row share).
   Correctness (allclose), that the LT shares stay sparse, and this process's
   peak RSS (the embedded workers are threads of it).

Latency of a coded call is ``stage_seconds["total"] - stage_seconds["encode"]``
(submit to decoded product); the total (with encoding A) is recorded too.

    python bench/rateless.py [--quick] [--repeats R]

Writes ``bench/results/rateless.json`` (``rateless_quick.json`` with ``--quick``).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one BLAS thread per worker

import numpy as np
import scipy.sparse
from _harness import median_time, write_results

import allocation
import coded
import theory
from coded.codes import Piece

N = 8
SIZES = {  # quick, full
    "overhead_m": {True: 10_000, False: 100_000},
    "drift_m": {True: 4_000, False: 20_000},
    "sparse_shape": {True: (10_000, 1_000), False: (1_000_000, 100_000)},
    "sparse_density": {True: 1e-3, False: 1e-5},
    "ideal_seconds": {True: 0.15, False: 1.0},
}
D_OVERHEAD = {True: 200, False: 2000}  # columns of A in section 1
D_DRIFT = 100
SLOW, STRAGGLER = 4.0, 5.0
MU = 1e3  # per-row exponential part 1/MU of a: speeds nearly deterministic


def _peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _stream_once(m: int, A: np.ndarray, x: np.ndarray, seed: int) -> dict:
    """Feed one code's batches in a random order; received / m and the times."""
    rng = np.random.default_rng(seed)
    began = time.perf_counter()
    code = coded.LTCode(N, m, rng=seed)
    built = time.perf_counter() - began
    began = time.perf_counter()
    code = coded.LTCode(N, m, rng=seed)
    cached = time.perf_counter() - began
    encoded = code.encode_operands(A[:, :1], x[:1])  # the decoder's context only
    product, G, step = A @ x, code.generator, m // 50
    pieces = [
        Piece(
            worker=w,
            start=s,
            stop=min(s + step, b - a),
            value=G[a + s : min(a + s + step, b)] @ product,
        )
        for w, (a, b) in enumerate(code.row_ranges)
        for s in range(0, b - a, step)
    ]
    decoder = code.decoder(encoded)
    began = time.perf_counter()
    for i in rng.permutation(len(pieces)):
        decoder.add(pieces[i])
        if decoder.is_decodable and not decoder.needs_more:
            break
    fed = time.perf_counter() - began
    began = time.perf_counter()
    decoded = decoder.decode()
    decode_seconds = time.perf_counter() - began
    error = np.linalg.norm(decoded - product) / np.linalg.norm(product)
    return {
        "received_over_m": decoder.progress[0] / m,
        "feed_seconds": fed,
        "decode_seconds": decode_seconds,
        "build_seconds": built,
        "build_cached_seconds": cached,
        "relative_error": float(error),
        "right": bool(error < 1e-9),
    }


def overhead(m: int, d: int, repeats: int) -> dict:
    rng = np.random.default_rng(0)
    A, x = rng.standard_normal((m, d)), rng.standard_normal(d)
    share = A[: m // N]
    share_seconds = median_time(lambda: share @ x, 20)
    runs = [_stream_once(m, A, x, seed) for seed in range(repeats)]
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0] if k != "right"}
    return {
        "m": m,
        "d": d,
        "repeats": repeats,
        "median": med,
        "share_seconds": share_seconds,
        "max_received_over_m": max(r["received_over_m"] for r in runs),
        "max_relative_error": max(r["relative_error"] for r in runs),
        "all_right": all(r["right"] for r in runs),
        "decode_over_share": med["decode_seconds"] / share_seconds,
    }


def _speeds(slow: list[int]) -> theory.WorkerProfile:
    a = [SLOW if w in slow else 1.0 for w in range(N)]
    return theory.WorkerProfile(a=a, mu=[MU / ai for ai in a], c=[0.0] * N)


def _latency(result) -> tuple[float, float]:
    stages = result.stage_seconds
    return stages["total"] - stages["encode"], stages["total"]


def drift(client, m: int, ideal_target: float, repeats: int, rng) -> dict:
    """The five schemes under a slow pair that moved after HCMM's profile."""
    before = sorted(rng.choice(N, 2, replace=False).tolist())
    after = sorted(rng.choice(np.setdiff1d(np.arange(N), before), 2, replace=False))
    after = [int(w) for w in after]
    true_a = np.array(_speeds(after).a)
    unit = ideal_target * float(np.sum(1.0 / true_a)) / m
    spec = coded.Stragglers(profile=_speeds(after), time_unit=unit)
    stale = coded.Stragglers(profile=_speeds(before), time_unit=unit)
    ideal = m * unit / float(np.sum(1.0 / true_a))
    A, x = rng.standard_normal((m, D_DRIFT)), rng.standard_normal(D_DRIFT)
    schemes = {
        "rateless": {"scheme": "rateless", "n": N},
        "uncoded": {"scheme": "uncoded", "n": N},
        "mds_8_6": {"scheme": "mds", "n": N, "k": 6},
        "hcmm_fresh": {"allocation": allocation.solve_hcmm(spec.profile_seconds, m)},
        "hcmm_stale": {"allocation": allocation.solve_hcmm(stale.profile_seconds, m)},
    }
    placed = coded.place_operand(A, client=client, scheme="rateless", n=N)
    schemes["rateless_placed"] = {}
    times = {name: [] for name in schemes}
    right = dict.fromkeys(schemes, True)
    try:
        for run in range(repeats + 1):  # the first round is a warm-up
            for name, kwargs in schemes.items():
                result = coded.coded_matmul(
                    placed if name == "rateless_placed" else A,
                    x,
                    client=None if name == "rateless_placed" else client,
                    stragglers=spec,
                    rng=run,
                    timeout=120,
                    **kwargs,
                )
                right[name] &= bool(np.allclose(result.product, A @ x, atol=1e-8))
                if run:
                    times[name].append(_latency(result))
    finally:
        placed.release()
    rows = {
        name: {
            "latency_seconds": statistics.median(t[0] for t in runs),
            "total_seconds": statistics.median(t[1] for t in runs),
            "right": right[name],
        }
        for name, runs in times.items()
    }
    return {
        "m": m,
        "d": D_DRIFT,
        "repeats": repeats,
        "slow_before_drift": before,
        "slow_after_drift": after,
        "time_unit_seconds": unit,
        "ideal_seconds": ideal,
        "rows": rows,
        "drift_emulation": "between calls: stale HCMM profile = speeds before drift",
        "rateless_over_ideal": rows["rateless"]["latency_seconds"] / ideal,
        "rateless_placed_over_ideal": rows["rateless_placed"]["latency_seconds"]
        / ideal,
        "rateless_over_hcmm_stale": rows["rateless"]["latency_seconds"]
        / rows["hcmm_stale"]["latency_seconds"],
    }


def _sparse_operands(shape, density, seed):
    rng = np.random.default_rng(seed)
    A = scipy.sparse.random_array(
        shape, density=density, format="csr", rng=seed, data_sampler=rng.normal
    )
    return A, rng.standard_normal(shape[1])


def _seconds_per_row(left, x) -> float:
    return median_time(lambda: left @ x, 5) / left.shape[0]


def _dask_sparse(client, A, x, straggler_factor: float) -> tuple[float, np.ndarray]:
    """dask.array of scipy.sparse row chunks times x; chunk 0 runs 5x slow."""
    import dask.array as da

    chunk = -(-A.shape[0] // N)
    dA = da.from_array(A, chunks=(chunk, A.shape[1]), asarray=False)

    def product(block, block_info=None):
        began = time.perf_counter()
        out = np.asarray(block @ x)
        if block_info[0]["chunk-location"][0] == 0:
            time.sleep((straggler_factor - 1) * (time.perf_counter() - began))
        return out

    y = dA.map_blocks(product, drop_axis=1, dtype=np.float64)
    began = time.perf_counter()
    out = client.compute(y).result()
    return time.perf_counter() - began, out


def sparse(client, shape, density, repeats: int, rng) -> dict:
    rss_before = _peak_rss_bytes()
    A, x = _sparse_operands(shape, density, 7)
    expected = A @ x
    straggler = int(rng.integers(N))
    code = coded.LTCode(N, shape[0])
    encoded = code.encode_operands(A, x)
    assert all(scipy.sparse.issparse(s) for s in encoded.lefts), "a dense LT share"
    per_row = _seconds_per_row(encoded.lefts[0], x)
    share_rows = encoded.lefts[0].shape[0]
    del encoded
    out = {"shape": list(shape), "density": density, "nnz": int(A.nnz)}
    out["straggler"] = straggler
    out["shares_sparse"] = True
    out["mean_degree"] = code.distribution.mean
    a = [STRAGGLER if w == straggler else 1.0 for w in range(N)]
    profile = theory.WorkerProfile(a=a, mu=[MU] * N, c=[0.0] * N)
    specs = {  # each scheme's time unit: the natural seconds of one of its rows
        "rateless": coded.Stragglers(profile=profile, time_unit=per_row),
        "source": coded.Stragglers(
            profile=profile, time_unit=_seconds_per_row(A[: shape[0] // N], x)
        ),
    }
    coded_schemes = {
        "rateless": {"scheme": "rateless"},
        "replication_2": {"scheme": "replication", "r": 2},
        "speculative": {"scheme": "speculative"},
    }
    times = {
        name: [] for name in (*coded_schemes, "rateless_total", "scipy", "dask_array")
    }
    right = dict.fromkeys((*coded_schemes, "scipy", "dask_array"), True)
    for run in range(repeats + 1):
        for name, kwargs in coded_schemes.items():
            spec = specs["rateless" if name == "rateless" else "source"]
            result = coded.coded_matmul(
                A, x, n=N, client=client, stragglers=spec, rng=run, **kwargs
            )
            right[name] &= bool(np.allclose(result.product, expected))
            if run:
                times[name].append(_latency(result)[0])
                if name == "rateless":
                    times["rateless_total"].append(_latency(result)[1])
        began = time.perf_counter()
        product = A @ x
        scipy_seconds = time.perf_counter() - began
        right["scipy"] &= bool(np.allclose(product, expected))
        dask_seconds, product = _dask_sparse(client, A, x, STRAGGLER)
        right["dask_array"] &= bool(np.allclose(product, expected))
        if run:
            times["scipy"].append(scipy_seconds)
            times["dask_array"].append(dask_seconds)
    out["median_seconds"] = {k: statistics.median(v) for k, v in times.items()}
    out["lt_share_over_product"] = per_row * share_rows / out["median_seconds"]["scipy"]
    out["right"] = right
    out["peak_rss_bytes"] = {"before": rss_before, "after": _peak_rss_bytes()}
    out["A_csr_bytes"] = int(A.data.nbytes + A.indices.nbytes + A.indptr.nbytes)
    out["A_dense_bytes_would_be"] = int(shape[0]) * int(shape[1]) * 8
    return out


def _met(ok: bool) -> str:
    return "met" if ok else "NOT met"


def report(result: dict) -> None:
    ov = result["overhead"]
    med = ov["median"]
    print(
        f"1. overhead, m={ov['m']} x {ov['d']} dense, {ov['repeats']} codes: "
        f"received/m median {med['received_over_m']:.3f} (max "
        f"{ov['max_received_over_m']:.3f}), decode {1e3 * med['decode_seconds']:.1f} "
        f"ms, feeding {1e3 * med['feed_seconds']:.1f} ms, one share (m/8 rows x "
        f"{ov['d']}) {1e3 * ov['share_seconds']:.2f} ms, decode/share "
        f"{ov['decode_over_share']:.2f}, max relative error "
        f"{ov['max_relative_error']:.1e}, all right {ov['all_right']}; generator "
        f"{1e3 * med['build_seconds']:.0f} ms cold, "
        f"{1e3 * med['build_cached_seconds']:.2f} ms cached"
    )
    print(f"   target received/m <= 1.1: {_met(med['received_over_m'] <= 1.1)}")
    print(f"   target decode <= one share: {_met(ov['decode_over_share'] <= 1.0)}")
    dr = result["drift"]
    print(
        f"2. drifting speeds, m={dr['m']} x {dr['d']}: slow pair "
        f"{dr['slow_before_drift']} -> {dr['slow_after_drift']} ({SLOW:g}x); drift "
        "emulated between the profile and the measured calls (the injection fixes "
        "speeds per call)"
    )
    print(f"   {'scheme':<16}{'latency s':>10}{'total s':>9}{'/ideal':>8}  right")
    for name, row in dr["rows"].items():
        print(
            f"   {name:<16}{row['latency_seconds']:>10.3f}{row['total_seconds']:>9.3f}"
            f"{row['latency_seconds'] / dr['ideal_seconds']:>8.2f}  {row['right']}"
        )
    print(f"   {'ideal':<16}{dr['ideal_seconds']:>10.3f}")
    print(
        f"   target rateless/ideal <= 1.2: {dr['rateless_over_ideal']:.2f} "
        f"{_met(dr['rateless_over_ideal'] <= 1.2)}"
    )
    placed = dr["rateless_placed_over_ideal"]
    print(
        f"   target rateless placed (resident)/ideal <= 1.1: {placed:.2f} "
        f"{_met(placed <= 1.1)}"
    )
    print(
        f"   target rateless/HCMM-stale <= 0.8: {dr['rateless_over_hcmm_stale']:.2f} "
        f"{_met(dr['rateless_over_hcmm_stale'] <= 0.8)}"
    )
    sp = result["sparse"]
    secs = sp["median_seconds"]
    print(
        f"3. sparse CSR {sp['shape'][0]} x {sp['shape'][1]}, nnz {sp['nnz']}, one "
        f"{STRAGGLER:g}x straggler (worker {sp['straggler']}): "
        + ", ".join(f"{k} {1e3 * v:.1f} ms" for k, v in secs.items())
    )
    print(
        f"   right {sp['right']}; LT shares sparse {sp['shares_sparse']}; peak RSS "
        f"{sp['peak_rss_bytes']['after'] / 2**20:.0f} MiB (before the section "
        f"{sp['peak_rss_bytes']['before'] / 2**20:.0f} MiB; A as CSR "
        f"{sp['A_csr_bytes'] / 2**20:.1f} MiB, dense it would be "
        f"{sp['A_dense_bytes_would_be'] / 2**30:.1f} GiB)"
    )
    print(
        f"   an LT share (rows summing {sp['mean_degree']:.1f} source rows on average)"
        f" costs {sp['lt_share_over_product']:.1f}x the whole product A @ x in scipy"
    )
    best = min(secs["dask_array"], secs["scipy"])
    print(
        f"   target rateless faster than dask.array (and scipy): "
        f"{secs['rateless'] / secs['dask_array']:.2f}x dask.array, "
        f"{secs['rateless'] / secs['scipy']:.2f}x scipy: "
        f"{_met(secs['rateless'] < best)}"
    )
    print(
        f"load average before {result['load_average'][0]}, after "
        f"{result['load_average'][1]}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small smoke run")
    parser.add_argument("--repeats", type=int, default=None)
    args = parser.parse_args()
    q = args.quick
    repeats = args.repeats or (2 if q else 7)
    rng = np.random.default_rng(0)
    load_before = os.getloadavg()
    result = {"overhead": overhead(SIZES["overhead_m"][q], D_OVERHEAD[q], repeats)}
    with coded.LocalCodedCluster(n_workers=N) as cluster:
        result["drift"] = drift(
            cluster.client, SIZES["drift_m"][q], SIZES["ideal_seconds"][q], repeats, rng
        )
        result["sparse"] = sparse(
            cluster.client,
            SIZES["sparse_shape"][q],
            SIZES["sparse_density"][q],
            repeats,
            rng,
        )
    result["load_average"] = [load_before, os.getloadavg()]
    result["machine"] = platform.platform()
    result["cpus"] = os.cpu_count()
    report(result)
    write_results("rateless", result, quick=q)


if __name__ == "__main__":
    main()
