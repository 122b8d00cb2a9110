"""Benchmark the codes: decode cost, GF(p) speed vs galois, certified conditioning.

Prints three side-by-side tables and writes ``bench/results/codes.json``:

1. real MDS (n, k = 3n/4): median decode time from the last k workers (every
   systematic one lost) vs one worker's share product (rows x d) @ (d x 8);
2. GF(65537) MDS encode + decode (ours: int64 residues through
   ``coded.codes.matmul_mod``) vs the same linear algebra on galois arrays;
3. conditioning (``docs/theory/conditioning.md``): for n in {8, 16, 20, 30, 32,
   40, 48, 50, 60, 64} and n - k in {1, 2, 3, 4, floor(n / 4)}, the worst condition
   number over the survivor sets (exact by enumeration up to 2e6 sets for the
   orthonormal generators, 2e4 for the others; beyond, a flagged lower bound by
   adversarial search) of our default ``MDSCode(n, k)``, of the same code decoded
   from k + 1 workers (least squares: what one extra result buys), of a seeded
   systematic Gaussian ``[I; P]``, of a real Vandermonde matrix on Chebyshev points
   and of the rotation-matrix embedding (Ramamoorthy & Tang 2021); and the worst
   relative error of decoding ``A @ x`` from the worst survivor set, plus the extra
   worker the guard waits for when the set exceeds ``max_condition``, in float64
   and with float32 operands (float32 shares and worker products, decoding in
   float64, a float32 product), against the float64 product;
4. real polynomial codes at (n; p_a, p_b) = (9; 2, 2), (12; 3, 3), (17; 4, 4),
   (20; 4, 4): exact worst condition number of the monomial, Chebyshev
   (orthogonal-polynomial) and default (stored product vectors) constructions, and
   the relative error of ``A @ B`` decoded from each one's worst survivor set in
   float64 and float32.

Medians over ``--repeats`` (default 7, >= 5) runs; seeded. Timings are noisy on a
shared machine.

Usage: ``python bench/codes.py [--quick] [--sections stability,polynomial]``.
"""

from __future__ import annotations

import argparse
import warnings
from functools import partial

import numpy as np
from _harness import median_time, write_results

from coded.codes import MDSCode, Piece, PolynomialCode, matmul_mod
from coded.codes import _generators as generators
from coded.codes._fields import inverse_mod
from coded.errors import IllConditionedWarning

P = 65_537


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


def _chebyshev_vandermonde(n, k):
    points = np.cos((2 * np.arange(n) + 1) * np.pi / (2 * n))
    return np.vander(points, k, increasing=True)


def _worst(G, ell, *, orthonormal, extra=0):
    """Certified worst case: exact when cheap, else adversarial (flagged)."""
    limit = generators.EXACT_LIMIT if orthonormal else 20_000
    starts = 8 if orthonormal else 2
    return generators.worst_condition_number(
        G, ell=ell, extra=extra, exact_limit=limit, samples=2_000, starts=starts
    )


def _decode_error(code, survivors, rng, dtype, d=64):
    """Relative error of the decoded ``A @ x`` from `survivors` vs float64.

    A and x are `dtype` end to end: float32 operands give float32 shares and
    worker products, a float64 decode and a float32 product, compared with the
    float64 product of the same (float32) operands.
    """
    A = rng.standard_normal((code.k * code.subblocks * 4, d)).astype(dtype)
    x = rng.standard_normal(d).astype(dtype)
    exact = A.astype(np.float64) @ x.astype(np.float64)
    encoded = code.encode_operands(A, x)
    decoder = code.decoder(encoded)
    for i in survivors:
        value = code.multiply(encoded.lefts[i], encoded.right(i))
        decoder.add(Piece(worker=i, start=0, stop=value.shape[0], value=value))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IllConditionedWarning)
        C = decoder.decode()
    assert C.dtype == dtype, C.dtype
    error = np.linalg.norm(C.astype(np.float64) - exact) / np.linalg.norm(exact)
    return float(error), decoder.units_used


def _guarded_survivors(code, worst):
    """The worst k workers plus, above the guard, the worst extra worker."""
    survivors = list(worst.survivors)
    if worst.value <= code.max_condition:
        return survivors
    ell, G = code.subblocks, code.generator
    rest = [i for i in range(code.n) if i not in survivors]
    sets = np.array([sorted([*survivors, i]) for i in rest])
    values = generators.survivor_condition_numbers(G, sets, ell=ell)
    return [*survivors, rest[int(np.argmax(values))]]


def bench_stability(ns, rng, quick):
    """Worst condition numbers and decode errors per (n, n - k) of the issue."""
    out = []
    for n in ns:
        for s in sorted({1, 2, 3, 4, n // 4}):
            k = n - s
            if k < 2 or s < 1:
                continue
            code = MDSCode(n, k)
            ell = code.subblocks
            ours = _worst(code.generator, ell, orthonormal=True)
            one_more = _worst(code.generator, ell, orthonormal=True, extra=1)
            rng_sys = np.random.default_rng([n, k, 1])
            systematic = np.concatenate([np.eye(k), rng_sys.standard_normal((s, k))])
            baselines = {
                "systematic": _worst(systematic, 1, orthonormal=False),
                "vandermonde": _worst(
                    _chebyshev_vandermonde(n, k), 1, orthonormal=False
                ),
                "rotation": _worst(
                    generators.rotation_generator(n, k), 2, orthonormal=True
                ),
            }
            guarded = _guarded_survivors(code, ours)
            err64, units = _decode_error(code, guarded, rng, np.float64)
            err32, _ = _decode_error(code, guarded, rng, np.float32)
            row = {
                "n": n,
                "k": k,
                "construction": code.construction,
                "ours": ours.value,
                "ours_exact": ours.exact,
                "one_extra": one_more.value,
                "one_extra_exact": one_more.exact,
            }
            for name, worst in baselines.items():
                row[name] = worst.value
                row[f"{name}_exact"] = worst.exact
            row |= {
                "decode_units": units,
                "err_float64": err64,
                "err_float32": err32,
            }
            out.append(row)
            marks = "".join(
                "" if row[f"{c}_exact"] else f" ({c}: lower bound)"
                for c in ("ours", "one_extra", *baselines)
            )
            print(
                f"n={n:2d} k={k:2d} ours={row['ours']:9.3g} +1={row['one_extra']:9.3g}"
                f" sys={row['systematic']:9.3g} vdm={row['vandermonde']:9.3g}"
                f" rot={row['rotation']:9.3g} err64={err64:8.2g} err32={err32:8.2g}"
                f"{marks}",
                flush=True,
            )
    return out


POLYNOMIAL_POINTS = ((9, 2, 2), (12, 3, 3), (17, 4, 4), (20, 4, 4))


def _product_error(code, survivors, rng, dtype, d=32):
    """Relative error of ``A @ B`` decoded from `survivors` (operands in `dtype`)."""
    A = rng.standard_normal((code.p_a * 4, d)).astype(dtype)
    B = rng.standard_normal((d, code.p_b * 3)).astype(dtype)
    exact = A.astype(np.float64) @ B.astype(np.float64)
    encoded = code.encode_operands(A, B)
    results = {i: code.multiply(encoded.lefts[i], encoded.right(i)) for i in survivors}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IllConditionedWarning)
        C = code.decode_results(encoded, results)
    assert C.dtype == dtype, C.dtype
    return float(np.linalg.norm(C.astype(np.float64) - exact) / np.linalg.norm(exact))


def bench_polynomial(rng):
    """Worst condition numbers and decode errors of the real polynomial codes."""
    out = []
    for n, p_a, p_b in POLYNOMIAL_POINTS:
        for construction in ("monomial", "chebyshev", None):
            code = PolynomialCode(n, p_a, p_b, construction=construction)
            worst = code.worst_condition_number()
            survivors = list(worst.survivors)
            row = {
                "n": n,
                "p_a": p_a,
                "p_b": p_b,
                "construction": code.construction,
                "default": construction is None,
                "worst": worst.value,
                "exact": worst.exact,
                "err_float64": _product_error(code, survivors, rng, np.float64),
                "err_float32": _product_error(code, survivors, rng, np.float32),
            }
            out.append(row)
            print(
                f"(n={n}; {p_a}, {p_b}) {code.construction:>9s}"
                f"{' (default)' if construction is None else '          '}"
                f" worst={worst.value:9.4g}{'' if worst.exact else ' (lower bound)'}"
                f" err64={row['err_float64']:8.2g} err32={row['err_float32']:8.2g}",
                flush=True,
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
    parser.add_argument(
        "--sections",
        default="decode,gf,stability,polynomial",
        help="comma-separated subset of decode,gf,stability,polynomial",
    )
    args = parser.parse_args()
    sections = set(args.sections.split(","))
    rng = np.random.default_rng(args.seed)
    repeats = 5 if args.quick else max(args.repeats, 5)
    ns = [8, 16] if args.quick else [8, 12, 16, 24, 32]
    rows, d = (128, 512) if args.quick else (1024, 4096)
    stability_ns = (
        [8, 16, 20] if args.quick else [8, 16, 20, 30, 32, 40, 48, 50, 60, 64]
    )
    decode = gf = stability = polynomial = None
    if "decode" in sections:
        print(f"real MDS decode vs one worker's product (rows={rows}, d={d}, c=8)")
        decode = bench_decode(ns, repeats, rows, d, rng)
        _table(
            decode, ["n", "k", "systematic", "worker_product_s", "decode_s", "ratio"]
        )
    if "gf" in sections:
        gf = _bench_gf_table(ns, repeats, rows, d, rng)
    if "stability" in sections:
        print(
            "worst condition number over survivor sets (exact unless marked) and the "
            "worst relative decode error (guard on), matrix-vector"
        )
        stability = bench_stability(stability_ns, rng, args.quick)
    if "polynomial" in sections:
        print("real polynomial codes: exact worst condition number, decode error")
        polynomial = bench_polynomial(rng)
    payload = {
        "parameters": {
            "seed": args.seed,
            "repeats": repeats,
            "quick": args.quick,
            "rows": rows,
            "d": d,
            "prime": P,
            "sections": sorted(sections),
        },
        "decode": decode,
        "gf": gf,
        "stability": stability,
        "polynomial": polynomial,
    }
    write_results("codes", payload, quick=args.quick, indent=1)


def _bench_gf_table(ns, repeats, rows, d, rng):
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
    return gf


if __name__ == "__main__":
    main()
