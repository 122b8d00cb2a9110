"""Search product evaluation vectors: real polynomial codes with a small worst cond.

Writes ``coded/codes/data/product_codes.npz``, the table ``PolynomialCode`` loads.
A polynomial code gives worker i the coded factors ``sum_j a_ij A_j`` and
``sum_k b_ik B_k``, so its product is ``sum_jk a_ij b_ik A_j B_k``: row i of the
generator is the Kronecker product ``b_i (x) a_i`` (``(p_b, p_a)`` flattened, the
order of the source blocks ``A_j B_k``). Evaluating polynomials (``a_ij = x_i^j``,
``b_ik = x_i^(k p_a)``, or an orthogonal basis) is one choice of the vectors; here
they are free, and the search minimises the worst ``cond(G_S)`` over all
``C(n, p_a p_b)`` survivor sets S (``docs/theory/conditioning.md``):

- start: the Chebyshev-basis polynomial code on Chebyshev points (seed 0 of the
  starts) or that code plus seeded Gaussian noise of size ``NOISE`` (the others);
- L-BFGS (scipy) on the soft maximum ``log sum_S cond(G_S)^q / q`` with
  ``q = 4, 16, 64, 256`` in turn and its exact gradient (``d sigma_i = u_i^T dM
  v_i`` on every survivor matrix); with more than ``ACTIVE`` survivor sets, on the
  ``ACTIVE`` worst ones, re-selected by a full evaluation every ``ROUND``
  iterations; the best start is kept.

Every survivor set is evaluated, so the figure stored with each entry is the exact
worst condition number of the generator rebuilt from the stored vectors (and finite:
every ``p_a p_b`` workers decode). Deterministic for a given ``--seed`` (iteration
counts, not time, bound the search).

Usage::

    python scripts/search_product_codes.py                 # the whole table
    python scripts/search_product_codes.py --only 12,3,3   # one code, not stored
"""

from __future__ import annotations

import argparse
import itertools
import math
import time
from pathlib import Path

import numpy as np
from numpy.polynomial import chebyshev
from scipy.optimize import minimize

from coded.codes import _generators as generators

OUT = Path(generators.__file__).resolve().parent / "data" / "product_codes.npz"
QS = (4.0, 16.0, 64.0, 256.0)
ITERATIONS = 400  # L-BFGS iterations per value of q
ROUND = 50  # iterations between re-selections of the active sets
ACTIVE = 500
STARTS = 2
NOISE = 0.3
TARGETS = ((9, 2, 2), (12, 3, 3), (17, 4, 4), (20, 4, 4))


def product_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Generator rows ``b_i (x) a_i``: ``G[i, k p_a + j] = b_ik a_ij``."""
    n = a.shape[0]
    return (b[:, :, None] * a[:, None, :]).reshape(n, -1)


def chebyshev_start(n: int, p_a: int, p_b: int) -> tuple[np.ndarray, np.ndarray]:
    """The Chebyshev-basis polynomial code on the Chebyshev points."""
    x = np.cos((2 * np.arange(n) + 1) * np.pi / (2 * n))
    V = chebyshev.chebvander(x, p_a * p_b - 1)
    return V[:, :p_a], V[:, ::p_a][:, :p_b]


def _objective(sets: np.ndarray, n: int, p_a: int, p_b: int, q: float):
    """Soft maximum of ``log cond(G_S)`` over `sets`, and its gradient."""

    def value_and_gradient(flat: np.ndarray) -> tuple[float, np.ndarray]:
        a, b = flat[: n * p_a].reshape(n, p_a), flat[n * p_a :].reshape(n, p_b)
        G = product_rows(a, b)
        u, s, vh = np.linalg.svd(G[sets], full_matrices=False)
        logs = np.log(s[:, 0]) - np.log(s[:, -1])
        top = logs.max()
        weights = np.exp(q * (logs - top))
        total = weights.sum()
        weights /= total
        # d log cond / dM = u_1 v_1^T / s_1 - u_K v_K^T / s_K, weighted
        first = (weights / s[:, 0])[:, None, None] * (u[:, :, :1] * vh[:, :1, :])
        last = (weights / s[:, -1])[:, None, None] * (u[:, :, -1:] * vh[:, -1:, :])
        dG = np.zeros_like(G)
        np.add.at(dG, sets, first - last)
        dG = dG.reshape(n, p_b, p_a)
        da = np.einsum("ikj,ik->ij", dG, b)
        db = np.einsum("ikj,ij->ik", dG, a)
        value = top + math.log(total) / q
        return value, np.concatenate([da.ravel(), db.ravel()])

    return value_and_gradient


def _minimize(flat, sets, n, p_a, p_b, q):
    """L-BFGS on every set, or in rounds on the ``ACTIVE`` worst ones."""
    if len(sets) <= ACTIVE:
        objective = _objective(sets, n, p_a, p_b, q)
        options = {"maxiter": ITERATIONS}
        return minimize(objective, flat, jac=True, method="L-BFGS-B", options=options).x
    for _ in range(ITERATIONS // ROUND):
        a, b = flat[: n * p_a].reshape(n, p_a), flat[n * p_a :].reshape(n, p_b)
        s = np.linalg.svd(product_rows(a, b)[sets], compute_uv=False)
        active = sets[np.argsort(s[:, -1] / s[:, 0])[:ACTIVE]]
        objective = _objective(active, n, p_a, p_b, q)
        options = {"maxiter": ROUND}
        flat = minimize(objective, flat, jac=True, method="L-BFGS-B", options=options).x
    return flat


def worst(a: np.ndarray, b: np.ndarray, sets: np.ndarray) -> float:
    """Exact worst ``cond(G_S)`` over `sets` (inf if one is singular)."""
    s = np.linalg.svd(product_rows(a, b)[sets], compute_uv=False)
    with np.errstate(divide="ignore"):
        return float((s[:, 0] / s[:, -1]).max())


def search(n: int, p_a: int, p_b: int, *, seed: int, starts: int = STARTS):
    """Best product vectors ``(a, b)`` of `starts` seeded L-BFGS runs."""
    sets = np.array(list(itertools.combinations(range(n), p_a * p_b)))
    a0, b0 = chebyshev_start(n, p_a, p_b)
    best = (math.inf, a0, b0)
    for start in range(starts):
        rng = np.random.default_rng([seed, n, p_a, p_b, start])
        flat = np.concatenate([a0.ravel(), b0.ravel()])
        if start:
            flat = flat + NOISE * rng.standard_normal(flat.size)
        for q in QS:
            flat = _minimize(flat, sets, n, p_a, p_b, q)
        a, b = flat[: n * p_a].reshape(n, p_a), flat[n * p_a :].reshape(n, p_b)
        value = worst(a, b, sets)
        if value < best[0]:
            best = (value, a, b)
    return best


def _table_points() -> list[tuple[int, int, int]]:
    """The targets, then small two-sided codes (``p_a, p_b >= 2``)."""
    points = list(TARGETS)
    points += [(n, 2, 2) for n in (5, 6, 7, 8, 10, 11, 12)]
    points += [(n, p_a, 5 - p_a) for n in (7, 8, 9) for p_a in (2, 3)]
    return points


def _load(path: Path) -> dict[tuple[int, int, int], tuple]:
    if not path.exists():
        return {}
    with np.load(path) as data:
        keys = data["keys"]
        return {
            tuple(int(v) for v in key): (data[f"a{i}"], data[f"b{i}"], float(w))
            for i, (key, w) in enumerate(zip(keys, data["worst"], strict=True))
        }


def _save(path: Path, table: dict) -> None:
    keys = sorted(table)
    arrays = {"keys": np.array(keys, dtype=np.int64)}
    arrays["worst"] = np.array([table[key][2] for key in keys])
    for i, key in enumerate(keys):
        arrays[f"a{i}"], arrays[f"b{i}"] = table[key][0], table[key][1]
    np.savez_compressed(path, **arrays)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=20261203)
    parser.add_argument("--starts", type=int, default=STARTS)
    parser.add_argument("--only", type=str, default=None, help="n,p_a,p_b")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    points = [tuple(map(int, args.only.split(",")))] if args.only else None
    table = {} if args.only else _load(args.out)
    for n, p_a, p_b in points or _table_points():
        if (n, p_a, p_b) in table:
            continue
        began = time.perf_counter()
        value, a, b = search(n, p_a, p_b, seed=args.seed, starts=args.starts)
        sets = np.array(list(itertools.combinations(range(n), p_a * p_b)))
        baseline = worst(*chebyshev_start(n, p_a, p_b), sets)
        print(
            f"n={n:2d} p_a={p_a} p_b={p_b}: product {value:10.4g} chebyshev "
            f"{baseline:10.4g} ({time.perf_counter() - began:.1f} s)",
            flush=True,
        )
        if not args.only:
            table[n, p_a, p_b] = (a, b, value)
            _save(args.out, table)


if __name__ == "__main__":
    main()
