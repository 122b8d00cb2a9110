r"""Generator matrices of the MDS codes and their numerical-stability metric.

Real generators come from ``coded/codes/data/real_mds.json`` (precomputed by the
seeded local search of ``scripts/search_generators.py``, which minimises the
worst-case condition number; every N <= 16 and (N, K) = (20, 15)) when the table
has the ``(N, K, systematic)`` entry, and from a seeded construction otherwise:

- non-systematic: the orthonormal factor ``Q`` of a Gaussian ``N x K`` matrix;
- systematic: ``[I_K; P]`` with ``P`` Gaussian.

GF(p) generators are exact: a Vandermonde matrix on the points ``1..N``
(non-systematic) or ``[I_K; C]`` with a Cauchy block ``C`` (systematic). Both are MDS
for every ``(N, K)`` with ``N <= p - 1``.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
from importlib import resources

import numpy as np

from coded.codes import _fields as fields
from theory._rng import RngLike, as_generator
from theory._validation import check_int

__all__ = [
    "EXACT_LIMIT",
    "gf_generator",
    "real_generator",
    "subset_condition_numbers",
    "worst_condition_number",
]

EXACT_LIMIT = 16
"""Up to this many rows the worst case runs over every K-subset; above, it samples."""


@functools.cache
def _table() -> dict[tuple[int, int, bool], np.ndarray]:
    """Load the precomputed real generators, keyed by ``(N, K, systematic)``."""
    path = resources.files("coded.codes.data").joinpath("real_mds.json")
    if not path.is_file():
        return {}
    table: dict[tuple[int, int, bool], tuple[float, np.ndarray]] = {}
    for e in json.loads(path.read_text())["generators"]:
        G = np.array(e["generator"], dtype=np.float64)
        G.setflags(write=False)
        worst = e["worst_condition_number"]
        table[e["n"], e["k"], e["systematic"]] = (worst, G)
        # the stability-optimised variant is the best generator found, systematic
        # or not (the searches are heuristic; either may win at a given (n, k))
        best = table.get((e["n"], e["k"], False))
        if best is None or worst < best[0]:
            table[e["n"], e["k"], False] = (worst, G)
    return {key: G for key, (_, G) in table.items()}


def real_generator(N: int, K: int, *, systematic: bool) -> np.ndarray:
    """Real MDS generator ``(N, K)``: precomputed if tabulated, else constructed."""
    table = _table().get((N, K, systematic))
    if table is not None:
        return table
    if K == N:
        return np.eye(N)
    rng = np.random.default_rng([N, K, int(systematic)])
    if systematic:
        return np.concatenate([np.eye(K), rng.standard_normal((N - K, K))], axis=0)
    Q, _ = np.linalg.qr(rng.standard_normal((N, K)))
    return Q


def gf_generator(N: int, K: int, p: int, *, systematic: bool) -> np.ndarray:
    """Exact MDS generator ``(N, K)`` over GF(p) (``N <= p - 1``)."""
    if systematic:
        return fields.cauchy_systematic(N, K, p)
    return fields.vandermonde(np.arange(1, N + 1), K, p)


def subset_condition_numbers(G: np.ndarray, subsets: np.ndarray) -> np.ndarray:
    """Return ``cond_2(G[S])`` for each row S of `subsets` (inf if singular)."""
    out = np.empty(len(subsets))
    for start in range(0, len(subsets), 4096):
        chunk = subsets[start : start + 4096]
        s = np.linalg.svd(G[chunk], compute_uv=False)
        with np.errstate(divide="ignore"):
            out[start : start + len(chunk)] = s[:, 0] / s[:, -1]
    return out


def worst_condition_number(
    G: np.ndarray, *, samples: int = 20_000, rng: RngLike = 0
) -> float:
    r"""Worst condition number of ``G[S]`` over the K-row subsets S of ``G``.

    Exact over all ``C(N, K)`` subsets when ``N <= EXACT_LIMIT`` or when there are
    at most `samples` subsets; otherwise the maximum over `samples` uniform random
    subsets (a lower bound on the true worst case).
    """
    samples = check_int(samples, "samples", min_value=1)
    N, K = G.shape
    if N <= EXACT_LIMIT or math.comb(N, K) <= samples:
        subsets = np.array(list(itertools.combinations(range(N), K)), dtype=np.int64)
    else:
        generator = as_generator(rng)
        subsets = np.sort(
            np.argsort(generator.random((samples, N)), axis=1)[:, :K], axis=1
        )
    return float(subset_condition_numbers(G, subsets).max())
