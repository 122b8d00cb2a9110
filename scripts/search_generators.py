"""Search real MDS generators with a small worst-case condition number (offline).

Writes ``coded/codes/data/real_mds.json``, the table ``MDSCode`` and ``RowMDSCode``
load for ``n <= 16``. For every ``(n, k)`` with ``2 <= k <= n - 1`` and both variants

- non-systematic: ``G`` (n x k) is free, started from the orthonormal factor of a
  seeded Gaussian matrix;
- systematic: ``G = [I_k; P]`` with ``P`` ((n - k) x k) free, started from a seeded
  Gaussian ``P``;

a seeded local search (a (1+1) evolution strategy with a 1/5th-style step rule)
perturbs one free row at a time by Gaussian noise and keeps the change when the
soft maximum ``(sum_S cond(G[S])^q)^(1/q)`` (q = 16) over all ``C(n, k)`` survivor
sets S does not increase; only the subsets containing the changed row are
recomputed. The run keeps the generator with the smallest exact worst-case condition
number seen and records that number. ``k = 1`` and ``k = n`` need no search (a
column of ones / the identity have condition number 1). Each pair gets at most
``EVALUATIONS`` subset condition numbers (about 10,000 steps for n = 15, k = 13).
Besides every ``n <= 16`` the table holds ``EXTRA_PAIRS``; for pairs with more than
``POOL`` subsets (``--only 24,18``) the search samples subsets, which we found does
not beat the seeded fallback of ``coded.codes._generators`` on fresh samples, so
none is shipped. Deterministic for a given ``--seed`` and budget.

Usage::

    python scripts/search_generators.py            # full table (~25 min, 1 core)
    python scripts/search_generators.py --only 15,13 --iterations 4000
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import time
from pathlib import Path

import numpy as np

from coded.codes._generators import subset_condition_numbers

OUT = Path(__file__).resolve().parents[1] / "coded" / "codes" / "data" / "real_mds.json"
Q = 16.0
ACTIVE = 1200
REFRESH = 250
EVALUATIONS = 1_000_000
POOL = 20_000
HALL = 2_000
EXTRA_PAIRS = ((20, 15),)  # C(20, 15) = 15,504 subsets: still exact


def _soft_max(conds: np.ndarray) -> float:
    top = conds.max()
    return float(top * (np.sum((conds / top) ** Q) ** (1 / Q)))


def _members(subsets: np.ndarray, n: int) -> list[np.ndarray]:
    return [np.flatnonzero((subsets == r).any(axis=1)) for r in range(n)]


def _sample(count: int, n: int, k: int, rng: np.random.Generator) -> np.ndarray:
    return np.sort(np.argsort(rng.random((count, n)), axis=1)[:, :k], axis=1)


def search(n: int, k: int, *, systematic: bool, iterations: int, seed: int):
    """Return ``(G, worst_cond)`` after `iterations` local-search steps.

    With more than ``ACTIVE`` subsets the steps are judged on an active set (the
    ``ACTIVE // 2`` worst subsets of the last full evaluation plus as many random
    ones), refreshed by a full evaluation every ``REFRESH`` steps. Above
    ``C(n, k) = POOL`` the "full" evaluation runs on a pool re-drawn at every
    refresh (``POOL`` fresh random subsets plus the ``HALL`` worst seen so far), the
    last generator is kept, and its worst case is the maximum over a final fresh
    sample of ``4 * POOL`` subsets and the hall (a lower bound).
    """
    rng = np.random.default_rng([seed, n, k, int(systematic)])
    sampled = math.comb(n, k) > POOL
    pool_rng = np.random.default_rng([seed, n, k, 7])
    if sampled:
        subsets = hall = _sample(POOL, n, k, pool_rng)
    else:
        subsets = np.array(list(itertools.combinations(range(n), k)), dtype=np.int64)
    if systematic:
        G = np.concatenate([np.eye(k), rng.standard_normal((n - k, k))])
        free = np.arange(k, n)
    else:
        G, _ = np.linalg.qr(rng.standard_normal((n, k)))
        free = np.arange(n)
    best, best_worst, step = G.copy(), math.inf, 0.3
    for done in range(0, iterations, REFRESH):
        if sampled:
            fresh = _sample(POOL, n, k, pool_rng)
            subsets = np.unique(np.concatenate([hall, fresh]), axis=0)
        full = subset_condition_numbers(G, subsets)
        if sampled:
            hall = subsets[np.argsort(full)[-HALL:]]
        elif full.max() < best_worst:
            best, best_worst = G.copy(), float(full.max())
        if len(subsets) <= ACTIVE:
            active = np.arange(len(subsets))
        else:
            worst = np.argsort(full)[-ACTIVE // 2 :]
            active = np.union1d(worst, rng.choice(len(subsets), ACTIVE // 2))
        chosen = subsets[active]
        members = _members(chosen, n)
        conds = full[active]
        score = _soft_max(conds)
        for _ in range(min(REFRESH, iterations - done)):
            row = rng.choice(free)
            old = G[row].copy()
            scale = step * np.linalg.norm(old) / math.sqrt(k)
            G[row] = old + scale * rng.standard_normal(k)
            trial = conds.copy()
            trial[members[row]] = subset_condition_numbers(G, chosen[members[row]])
            trial_score = _soft_max(trial)
            if trial_score <= score:
                conds, score = trial, trial_score
                step = min(step * 1.5, 1.0)
            else:
                G[row] = old
                step = max(step * 0.9, 1e-4)
    if sampled:
        final = np.concatenate([hall, _sample(4 * POOL, n, k, pool_rng)])
        return G, float(subset_condition_numbers(G, final).max())
    full = subset_condition_numbers(G, subsets)
    if full.max() < best_worst:
        best, best_worst = G.copy(), float(full.max())
    return best, best_worst


def _budget(n: int, k: int, iterations: int) -> int:
    """Fewer steps when a step evaluates many subsets (bounded cost per pair)."""
    per_step = min(math.comb(n, k), ACTIVE) * k / n
    return max(REFRESH, min(iterations, int(EVALUATIONS / per_step)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-n", type=int, default=16)
    parser.add_argument("--iterations", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=20261202)
    parser.add_argument("--only", type=str, default=None, help="n,k (no file written)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--extras-only",
        action="store_true",
        help="only the sampled EXTRA_PAIRS, merged into the existing --out file",
    )
    args = parser.parse_args()
    if args.only:
        n, k = map(int, args.only.split(","))
        for systematic in (False, True):
            start = time.perf_counter()
            _, worst = search(
                n, k, systematic=systematic, iterations=args.iterations, seed=args.seed
            )
            elapsed = time.perf_counter() - start
            print(f"n={n} k={k} systematic={systematic}: {worst:.1f} ({elapsed:.1f} s)")
        return
    pairs = [(n, k) for n in range(3, args.max_n + 1) for k in range(2, n)]
    entries: list[dict] = []
    if args.extras_only:
        entries = json.loads(args.out.read_text())["generators"]
        pairs = []
    for n, k in [*pairs, *EXTRA_PAIRS]:
        for systematic in (False, True):
            steps = _budget(n, k, args.iterations)
            G, worst = search(
                n, k, systematic=systematic, iterations=steps, seed=args.seed
            )
            entries.append(
                {
                    "n": n,
                    "k": k,
                    "systematic": systematic,
                    "exact": math.comb(n, k) <= POOL,
                    "iterations": steps,
                    "worst_condition_number": worst,
                    "generator": G.tolist(),
                }
            )
            print(f"n={n:2d} k={k:2d} systematic={systematic!s:5}: {worst:9.2f}")
            _write(args, entries)  # incremental: a long run keeps what it found
    print(f"wrote {len(entries)} generators to {args.out}")


def _write(args: argparse.Namespace, entries: list[dict]) -> None:
    payload = {
        "description": (
            "Real MDS generators (n x k) minimising the worst condition number over "
            "all k-row subsets; produced by scripts/search_generators.py."
        ),
        "seed": args.seed,
        "iterations": args.iterations,
        "evaluations_per_pair": EVALUATIONS,
        "generators": entries,
    }
    args.out.write_text(json.dumps(payload))


if __name__ == "__main__":
    main()
