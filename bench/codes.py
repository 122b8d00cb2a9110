"""Benchmark the codes: decode cost, GF(p) speed vs galois, numerical stability.

Prints three side-by-side tables and writes ``bench/results/codes.json``:

1. real MDS (n, k = 3n/4): median decode time from the last k workers (every
   systematic one lost) vs one worker's share product (rows x d) @ (d x 8);
2. GF(65537) MDS encode + decode (ours: int64 residues through
   ``coded._modular.matmul_mod``) vs the same linear algebra on galois arrays;
3. stability (Das, Ramamoorthy, Vaswani 2021): worst condition number of G[S] over
   the survivor sets (exact for n <= 16, 20,000 samples above) and the error
   percentage 100 ||C_hat - C||_F^2 / ||C||_F^2 with Gaussian noise added to the
   worker results at a stated SNR, for the real MDS code (both variants) and the
   real polynomial code (p_a p_b = k, i.e. a Chebyshev Vandermonde generator),
   matrix-vector; a reference row for a seeded random systematic Gaussian code.

Medians over ``--repeats`` (default 7, >= 5) runs; seeded. Timings are noisy on a
shared machine.

Usage: ``python bench/codes.py [--quick]``.
"""

from __future__ import annotations

import argparse
import itertools
import math
import warnings
from functools import partial

import numpy as np
from _harness import median_time, write_results

from coded._modular import matmul_mod
from coded.codes import MDSCode, PolynomialCode
from coded.codes._fields import inverse_mod
from coded.codes._generators import subset_condition_numbers
from coded.errors import IllConditionedWarning

P = 65_537
SNR_DB = 80.0


def bench_decode(ns, repeats, rows, d, rng, c=8):
    """Decode time from the last k workers vs one worker's (rows x d) @ (d x c).

    Decoding cost does not depend on d, so the decoder gets synthetic results of
    the right shape and only one worker's product is materialised.
    """
    out = []
    left, right = rng.standard_normal((rows, d)), rng.standard_normal((d, c))
    for n in ns:
        k = 3 * n // 4
        for systematic in (False, True):
            code = MDSCode(n, k, systematic=systematic)
            enc = code.encode_operands(np.zeros((k * rows, 1)), np.zeros((1, c)))
            survivors = range(n - k, n)  # the systematic workers are lost
            results = {i: rng.standard_normal((rows, c)) for i in survivors}
            worker = median_time(partial(code.multiply, left, right), repeats)
            decode = median_time(partial(code.decode_results, enc, results), repeats)
            out.append(
                {
                    "n": n,
                    "k": k,
                    "systematic": systematic,
                    "worker_product_s": worker,
                    "decode_s": decode,
                    "ratio": decode / worker,
                }
            )
    return out


def _gf_ours(code, A, x, survivors):
    enc = code.encode_operands(A, x)
    results = {i: code.multiply(enc.lefts[i], enc.right(i)) for i in survivors}
    return code.decode_results(enc, results)


def _gf_galois(G, A, x, survivors):
    n, k = G.shape
    shares = (G @ A.reshape(k, -1)).reshape(n, -1, A.shape[1])
    R = type(G)(np.stack([shares[i] @ x for i in survivors]).reshape(k, -1))
    return np.linalg.solve(G[survivors], R)


def _solve_ours(M, R):
    return matmul_mod(inverse_mod(M, P), R, P)


def bench_gf(ns, repeats, rows, d, rng):
    import galois

    GF = galois.GF(P)
    out = []
    for n in ns:
        k = 3 * n // 4
        code = MDSCode(n, k, P, systematic=False)
        A = rng.integers(0, P, (k * rows, d))
        x = rng.integers(0, P, (d, 4))
        survivors = list(range(n - k, n))
        G = code.generator

        Gf, Af, xf = GF(G), GF(A), GF(x)
        ours = partial(_gf_ours, code, Af, xf, survivors)
        reference = partial(_gf_galois, Gf, Af, xf, survivors)
        assert np.array_equal(ours(), reference().reshape(k * rows, 4))
        t_ours = median_time(ours, repeats)
        t_ref = median_time(reference, repeats)
        # decode-only comparison: the k x k solve applied to the results
        R = matmul_mod(G[survivors], rng.integers(0, P, (k, rows * 4)), P)
        t_inv = median_time(partial(_solve_ours, G[survivors], R), repeats)
        t_inv_ref = median_time(partial(np.linalg.solve, Gf[survivors], GF(R)), repeats)
        out.append(
            {
                "n": n,
                "k": k,
                "ours_encode_decode_s": t_ours,
                "galois_encode_decode_s": t_ref,
                "speedup": t_ref / t_ours,
                "ours_solve_s": t_inv,
                "galois_solve_s": t_inv_ref,
            }
        )
    return out


def _subsets(n, k, rng, samples=20_000):
    if n <= 16 or math.comb(n, k) <= samples:
        return np.array(list(itertools.combinations(range(n), k)))
    return np.sort(np.argsort(rng.random((samples, n)), axis=1)[:, :k], axis=1)


def _error_percent(G, rows, rng, trials):
    """Mean 100 ||C_hat - C||^2 / ||C||^2 decoding from `rows` at SNR_DB."""
    k = G.shape[1]
    errors = []
    for _ in range(trials):
        A, x = rng.standard_normal((k, 64)), rng.standard_normal(64)
        C = A @ x
        R = G[rows] @ C
        noise = rng.standard_normal(R.shape)
        noise *= np.linalg.norm(R) / np.linalg.norm(noise) / 10 ** (SNR_DB / 20)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", IllConditionedWarning)
            C_hat = np.linalg.solve(G[rows], R + noise)
        errors.append(100 * np.sum((C_hat - C) ** 2) / np.sum(C**2))
    return float(np.mean(errors))


def bench_stability(pairs, rng, trials):
    out = []
    for n, k in pairs:
        gaussian = np.concatenate([np.eye(k), rng.standard_normal((n - k, k))])
        candidates = {
            "mds_stable": MDSCode(n, k).generator,
            "mds_systematic": MDSCode(n, k, systematic=True).generator,
            "polynomial_chebyshev": PolynomialCode(n, k, 1).generator,
            "random_systematic_gaussian": gaussian,
        }
        subsets = _subsets(n, k, rng)
        for name, G in candidates.items():
            conds = subset_condition_numbers(G, subsets)
            worst = subsets[int(np.argmax(conds))].tolist()
            typical = subsets[rng.integers(len(subsets))].tolist()
            out.append(
                {
                    "n": n,
                    "k": k,
                    "code": name,
                    "exact": n <= 16,
                    "worst_condition_number": float(conds.max()),
                    "median_condition_number": float(np.median(conds)),
                    "snr_db": SNR_DB,
                    "error_percent_worst_set": _error_percent(G, worst, rng, trials),
                    "error_percent_random_set": _error_percent(G, typical, rng, trials),
                }
            )
    return out


def _table(rows, columns):
    widths = [max(len(c), 12) for c in columns]
    print("  ".join(c.rjust(w) for c, w in zip(columns, widths, strict=True)))
    for row in rows:
        cells = []
        for c, w in zip(columns, widths, strict=True):
            v = row[c]
            text = f"{v:.3g}" if isinstance(v, float) else str(v)
            cells.append(text.rjust(w))
        print("  ".join(cells))
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description="Benchmark the codes.")
    parser.add_argument("--quick", action="store_true", help="small smoke run")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--seed", type=int, default=20261202)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    repeats = 5 if args.quick else max(args.repeats, 5)
    ns = [8, 16] if args.quick else [8, 12, 16, 24, 32]
    rows, d = (128, 512) if args.quick else (1024, 4096)
    stability_pairs = (
        [(15, 13), (8, 6)]
        if args.quick
        else [(15, 13), (8, 6), (12, 9), (16, 12), (24, 18), (32, 24)]
    )
    trials = 3 if args.quick else 20
    print(f"real MDS decode vs one worker's product (rows={rows}, d={d}, c=8)")
    decode = bench_decode(ns, repeats, rows, d, rng)
    _table(decode, ["n", "k", "systematic", "worker_product_s", "decode_s", "ratio"])
    print(
        f"GF({P}) MDS encode + decode: ours vs galois (rows={rows // 16}, d={d // 16})"
    )
    gf = bench_gf(ns, repeats, rows // 16, d // 16, rng)
    _table(
        gf,
        [
            "n",
            "k",
            "ours_encode_decode_s",
            "galois_encode_decode_s",
            "speedup",
            "ours_solve_s",
            "galois_solve_s",
        ],
    )
    print(f"stability, matrix-vector, worker noise at SNR {SNR_DB:g} dB")
    stability = bench_stability(stability_pairs, rng, trials)
    _table(
        stability,
        [
            "n",
            "k",
            "code",
            "worst_condition_number",
            "median_condition_number",
            "error_percent_worst_set",
            "error_percent_random_set",
        ],
    )
    payload = {
        "parameters": {
            "seed": args.seed,
            "repeats": repeats,
            "quick": args.quick,
            "rows": rows,
            "d": d,
            "snr_db": SNR_DB,
            "prime": P,
        },
        "decode": decode,
        "gf": gf,
        "stability": stability,
    }
    write_results("codes", payload, quick=args.quick, indent=1)


if __name__ == "__main__":
    main()
