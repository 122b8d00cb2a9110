"""Search complex dual frames: real MDS codes with a small worst condition number.

Writes ``coded/codes/data/complex_frames.npz``, the table ``MDSCode`` loads. For an
``(n, k)`` code with ``s = n - k`` erasures the search optimises a complex
``n x s`` matrix H with orthonormal columns (the *dual frame*); the code's generator
is the real embedding of an orthonormal basis of the complement of range(H), and its
condition number on the survivor set S is ``1 / sigma_min(H_E)``, E the erased
workers (``docs/theory/conditioning.md``). So the search maximises the smallest
``sigma_min(H_E)`` over all ``C(n, s)`` erasure sets E:

- start: the polar factor of a seeded complex Gaussian ``n x s`` matrix;
- Riemannian gradient descent on the complex Stiefel manifold (polar retraction,
  backtracking step) of the soft maximum ``log sum_E sigma_min(H_E)^(-q) / q``, with
  ``q = 4, 16, 64`` in turn, on the ``ACTIVE`` worst sets, refreshed by a full
  evaluation every ``refresh`` steps; the best H of the full evaluations is kept.

Frames are stored as complex64; the figure recorded with each is the certified
(exact, every erasure set) worst condition number of the generator the package
builds from the stored complex64 frame (``coded.codes._generators.frame_generator``),
next to those of the rotation-matrix embedding and of the systematic generator.
Deterministic for a given ``--seed`` (step counts, not time, bound the search).

Usage::

    python scripts/search_frames.py                   # targets, then s = 2..4, n <= 64
    python scripts/search_frames.py --only 30,28      # one pair, printed, not stored
    python scripts/search_frames.py --add 32,28       # one pair, stored if it beats
                                                      # the rotation embedding
    python scripts/search_frames.py --figures         # recompute the figures table
"""

from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path

import numpy as np

from coded.codes import _generators as generators

OUT = Path(generators.__file__).resolve().parent / "data" / "complex_frames.npz"
ACTIVE = 1_500
STEPS = 100  # per value of q
QS = (4.0, 16.0, 64.0)
TARGETS = ((30, 28), (20, 16), (30, 26), (40, 36), (50, 47), (60, 57))


def _erasures(n: int, s: int) -> np.ndarray:
    return np.array(list(itertools.combinations(range(n), s)), dtype=np.int64)


def _sigma_min(H: np.ndarray, sets: np.ndarray) -> np.ndarray:
    out = np.empty(len(sets))
    for a in range(0, len(sets), 65_536):
        out[a : a + 65_536] = np.linalg.svd(H[sets[a : a + 65_536]], compute_uv=False)[
            :, -1
        ]
    return out


def _polar(B: np.ndarray) -> np.ndarray:
    U, _, Vh = np.linalg.svd(B, full_matrices=False)
    return U @ Vh


def _soft(sigma: np.ndarray, q: float) -> float:
    low = sigma.min()
    return float(-np.log(low) + np.log(np.sum((low / sigma) ** q)) / q)


def _direction(H: np.ndarray, sets: np.ndarray, q: float) -> np.ndarray:
    """Unit Riemannian direction that increases the small ``sigma_min(H_E)``."""
    U, S, Vh = np.linalg.svd(H[sets])
    sigma = S[:, -1]
    weight = (sigma.min() / sigma) ** q
    weight = weight / weight.sum() / sigma
    grad = weight[:, None, None] * (U[:, :, -1][:, :, None] * Vh[:, -1, :][:, None, :])
    G = np.zeros_like(H)
    np.add.at(G, sets.ravel(), grad.reshape(-1, H.shape[1]))
    A = H.conj().T @ G
    G = G - H @ ((A + A.conj().T) / 2)
    return G / np.linalg.norm(G)


def search(n: int, k: int, *, seed: int) -> np.ndarray:
    """Return the best dual frame found for ``(n, k)`` (complex ``n x (n - k)``)."""
    s = n - k
    rng = np.random.default_rng([seed, n, k])
    H = _polar(rng.standard_normal((n, s)) + 1j * rng.standard_normal((n, s)))
    sets = _erasures(n, s)
    refresh = 10 if len(sets) < 50_000 else 30
    best, best_value = H.copy(), _sigma_min(H, sets).min()
    for q in QS:
        step = 0.1
        for it in range(STEPS):
            if it % refresh == 0:
                sigma = _sigma_min(H, sets)
                if sigma.min() > best_value:
                    best, best_value = H.copy(), sigma.min()
                active = sets[np.argsort(sigma)[:ACTIVE]]
                value = _soft(_sigma_min(H, active), q)
            direction = _direction(H, active, q)
            while step > 1e-9:
                trial = _polar(H + step * direction)
                trial_value = _soft(_sigma_min(trial, active), q)
                if trial_value < value:
                    H, value, step = trial, trial_value, step * 1.5
                    break
                step *= 0.5
            else:
                step = 1e-3
    sigma = _sigma_min(H, sets)
    if sigma.min() > best_value:
        best = H
    return best.astype(np.complex64)


def _certify(G: np.ndarray, ell: int) -> generators.WorstCondition:
    return generators.worst_condition_number(G, ell=ell)


def _pairs(max_n: int, max_s: int) -> list[tuple[int, int]]:
    rest = [(n, n - s) for s in range(2, max_s + 1) for n in range(s + 2, max_n + 1)]
    return [*TARGETS, *(p for p in rest if p not in TARGETS)]


def _load(path: Path) -> dict[tuple[int, int], tuple[np.ndarray, float]]:
    if not path.is_file():
        return {}
    with np.load(path) as data:
        index, frames, worst = data["index"], data["frames"], data["frame_worst"]
    out, offset = {}, 0
    for (n, k), value in zip(index.tolist(), worst.tolist(), strict=True):
        size = n * (n - k)
        out[n, k] = (frames[offset : offset + size].reshape(n, n - k), value)
        offset += size
    return out


def _save(path: Path, table: dict, figures: np.ndarray | None) -> None:
    keys = sorted(table)
    index = np.array(keys, dtype=np.int64).reshape(-1, 2)
    frames = np.concatenate([table[key][0].ravel() for key in keys]).astype(
        np.complex64
    )
    worst = np.array([table[key][1] for key in keys])
    extra = {} if figures is None else {"figures": figures}
    np.savez_compressed(path, index=index, frames=frames, frame_worst=worst, **extra)


def figures_of(path: Path) -> np.ndarray | None:
    """The stored comparison table, if any."""
    with np.load(path) as data:
        return data.get("figures")


def _stored_systematic(path: Path) -> dict[tuple[int, int], float]:
    """Systematic figures of an earlier pass (that generator never changes)."""
    if not path.is_file():
        return {}
    with np.load(path) as data:
        if "figures" not in data:
            return {}
        rows = data["figures"]
    return {(int(r[0]), int(r[1])): float(r[4]) for r in rows}


def figures(max_n: int, systematic_max_s: int, path: Path) -> np.ndarray:
    """Certified worst cases ``(n, k, default, rotation, systematic)`` per pair."""
    known = _stored_systematic(path)
    generators._frames.cache_clear()
    rows = []
    for s in range(1, systematic_max_s + 1):
        for n in range(s + 2, max_n + 1):
            k = n - s
            default = generators.block_generator(n, k, systematic=False)
            ours = _certify(default.G, default.ell).value
            rotation = _certify(generators.rotation_generator(n, k), 2).value
            systematic = known.get((n, k))
            if systematic is None:
                G = generators.real_generator(n, k, systematic=True)
                systematic = _certify(G, 1).value
            rows.append((n, k, ours, rotation, systematic))
            print(
                f"n={n:2d} k={k:2d} default={ours:10.2f} rotation={rotation:10.2f} "
                f"systematic={systematic:10.4g}",
                flush=True,
            )
    return np.array(rows)


def _add(table: dict, pairs: list[tuple[int, int]], args: argparse.Namespace) -> None:
    """Search `pairs`; store each frame that beats the rotation embedding."""
    for n, k in pairs:
        start = time.perf_counter()
        H = search(n, k, seed=args.seed)
        worst = _certify(generators.frame_generator(H), 2).value
        rotation = _certify(generators.rotation_generator(n, k), 2).value
        stored = worst < rotation
        print(
            f"n={n:2d} k={k:2d}: frame {worst:10.2f} rotation {rotation:10.2f} "
            f"({time.perf_counter() - start:.1f} s){' stored' if stored else ''}",
            flush=True,
        )
        if stored:
            table[n, k] = (H, worst)
            _save(args.out, table, figures_of(args.out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-n", type=int, default=64)
    parser.add_argument("--max-s", type=int, default=4)
    parser.add_argument("--seed", type=int, default=20261203)
    parser.add_argument("--only", type=str, default=None, help="n,k (not stored)")
    parser.add_argument(
        "--add", action="append", default=[], help="n,k (stored if better)"
    )
    parser.add_argument("--figures", action="store_true")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    if args.only:
        n, k = map(int, args.only.split(","))
        start = time.perf_counter()
        H = search(n, k, seed=args.seed)
        worst = _certify(generators.frame_generator(H), 2)
        rotation = _certify(generators.rotation_generator(n, k), 2)
        print(
            f"n={n} k={k}: frame {worst.value:.2f} rotation {rotation.value:.2f} "
            f"({time.perf_counter() - start:.1f} s)"
        )
        return
    table = _load(args.out)
    if args.add:
        _add(table, [tuple(map(int, pair.split(","))) for pair in args.add], args)
        return
    if args.figures:  # re-certify every stored frame, then the comparison table
        table = {
            key: (H, _certify(generators.frame_generator(H), 2).value)
            for key, (H, _) in table.items()
        }
        known = figures_of(args.out)
        _save(args.out, table, known)
        _save(args.out, table, figures(args.max_n, 3, args.out))
        return
    for n, k in _pairs(args.max_n, args.max_s):
        if (n, k) in table:
            continue
        start = time.perf_counter()
        H = search(n, k, seed=args.seed)
        worst = _certify(generators.frame_generator(H), 2)
        table[n, k] = (H, worst.value)
        rotation = _certify(generators.rotation_generator(n, k), 2).value
        print(
            f"n={n:2d} k={k:2d}: frame {worst.value:10.2f} rotation {rotation:10.2f} "
            f"({time.perf_counter() - start:.1f} s)",
            flush=True,
        )
        _save(args.out, table, figures_of(args.out))  # incremental
    print(f"wrote {len(table)} frames to {args.out}")


if __name__ == "__main__":
    main()
