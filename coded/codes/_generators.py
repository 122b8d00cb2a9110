r"""Generator matrices of the MDS codes and their certified worst-case conditioning.

Over the reals a decode from the survivor set S solves ``G_S Y = R_S``, which
amplifies relative errors by up to ``cond(G_S)``; the figure of merit of a generator
is the worst case over every survivor set, certified by :func:`worst_condition_number`
(``docs/theory/conditioning.md``).

A worker may hold ``ell`` consecutive rows of ``G`` (its *sub-blocks*): ``G`` is
``(ell n) x (ell k)`` and a survivor set of k workers selects ``ell k`` rows.

Real generators of ``MDSCode`` (non-systematic), by ``(n, k)``, ``s = n - k``:

- ``k = n``: the identity; ``k = 1``: a column of ones (every ``cond`` is 1);
- ``s = 1``: an orthonormal basis of the complement of the all-ones vector, whose
  worst ``cond`` is ``sqrt(n)``, the smallest any ``n x (n - 1)`` generator with
  orthonormal columns can have;
- otherwise the best *stored* construction: a complex frame (``ell = 2``, the real
  embedding of a complex code whose dual frame was optimised by
  ``scripts/search_frames.py``; ``coded/codes/data/complex_frames.npz``) or a
  scalar generator from ``coded/codes/data/real_mds.json`` (``n <= 16``), whichever
  has the smaller certified worst case;
- untabulated pairs with at most 2e4 survivor sets: the better (certified on the
  fly, cached) of the rotation-matrix embedding (Ramamoorthy & Tang 2021) and the
  real embedding of a seeded random complex orthonormal matrix; with more, the
  rotation embedding for ``s <= 4`` and the seeded complex matrix otherwise (the
  rotation embedding degrades fast with s: a lower bound of 9e11 at (64, 48),
  against 3e3).

GF(p) generators are exact: a Vandermonde matrix on the points ``1..N``
(non-systematic) or ``[I_K; C]`` with a Cauchy block ``C`` (systematic). Both are MDS
for every ``(N, K)`` with ``N <= p - 1``.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources

import numpy as np

from coded.codes import _fields as fields
from coded.codes._blas import one_blas_thread
from theory.rng import RngLike, as_generator
from theory.validation import check_int

__all__ = [
    "EXACT_LIMIT",
    "BlockGenerator",
    "WorstCondition",
    "block_generator",
    "complex_embedding",
    "frame_generator",
    "gf_generator",
    "real_generator",
    "rotation_generator",
    "survivor_condition_numbers",
    "worst_condition_number",
]

EXACT_LIMIT = 2_000_000
"""Up to this many survivor sets :func:`worst_condition_number` enumerates them all."""

_CHUNK_ENTRIES = 4_000_000  # float64 entries per batched SVD (32 MB)


@dataclass(frozen=True, slots=True)
class WorstCondition:
    """Worst condition number of ``G_S`` over the survivor sets S of a code.

    Parameters
    ----------
    value : float
        ``max_S cond_2(G_S)`` over the survivor sets evaluated (``inf`` if one is
        singular).
    exact : bool
        True when every survivor set was evaluated (then `value` is the worst
        case); False when the count exceeded the enumeration limit and `value` is
        a lower bound found by adversarial search (worst sampled sets, then
        swap-one local search).
    survivors : tuple of int
        A survivor set (worker indices) attaining `value`.
    evaluated : int
        Survivor sets evaluated.
    """

    value: float
    exact: bool
    survivors: tuple[int, ...]
    evaluated: int

    def __float__(self) -> float:
        return self.value


# -- evaluating survivor sets ------------------------------------------------------
class _Conditioning:
    """``cond(G_S)`` for batches of erasure sets E (the workers not in S).

    When ``G`` has orthonormal columns and at least as many survivor rows as erased
    ones, ``cond(G_S)`` follows from the small matrix ``H_E`` (rows E of an
    orthonormal basis H of the orthogonal complement of range(G)): the singular
    values of ``G_S`` are those of ``H_E`` (all at most 1) and, with more survivor
    rows than erased ones, ones; so ``cond(G_S) = 1 / sigma_min(H_E)``, or
    ``cond(H_E)`` when both counts are equal (``docs/theory/conditioning.md``).
    Otherwise ``G_S`` itself is decomposed.
    """

    def __init__(self, G: np.ndarray, ell: int, extra: int = 0):
        G = np.asarray(G, dtype=np.float64)
        N, K = G.shape
        self.G, self.ell = G, ell
        self.n, self.k = N // ell, K // ell + extra  # k: survivors
        orthonormal = np.allclose(G.T @ G, np.eye(K), rtol=0, atol=1e-12)
        self.H = None
        # G_S has singular values 1 besides those of H_E
        self.ones = 2 * K > N or extra > 0
        if orthonormal and 2 * K >= N and K < N:
            Q, _ = np.linalg.qr(G, mode="complete")
            self.H = np.ascontiguousarray(Q[:, K:])

    def _rows(self, workers: np.ndarray) -> np.ndarray:
        rows = workers[:, :, None] * self.ell + np.arange(self.ell)
        return rows.reshape(len(workers), -1)

    def __call__(self, erased: np.ndarray) -> np.ndarray:
        """``cond(G_S)`` for each row of `erased` (``(batch, n - k)`` workers).

        With ``extra`` survivors beyond the recovery threshold, ``G_S`` is tall and
        ``cond`` is the ratio of its extreme singular values (least squares).
        """
        erased = np.asarray(erased, dtype=np.int64).reshape(len(erased), -1)
        if self.H is not None:
            matrix, rows = self.H, self._rows(erased)
        else:
            keep = np.ones((len(erased), self.n), dtype=bool)
            keep[np.arange(len(erased))[:, None], erased] = False
            survivors = np.nonzero(keep)[1].reshape(len(erased), self.k)
            matrix, rows = self.G, self._rows(survivors)
        return _batched_cond(matrix, rows, unit_top=self.H is not None and self.ones)


def _batched_cond(
    matrix: np.ndarray, rows: np.ndarray, *, unit_top: bool
) -> np.ndarray:
    """``cond`` of ``matrix[rows[b]]`` per batch b (largest value 1: `unit_top`)."""
    size = rows.shape[1] * matrix.shape[1]
    chunk = max(1, _CHUNK_ENTRIES // max(size, 1))
    out = np.empty(len(rows))
    for start in range(0, len(rows), chunk):
        s = np.linalg.svd(matrix[rows[start : start + chunk]], compute_uv=False)
        top = 1.0 if unit_top else s[:, 0]
        with np.errstate(divide="ignore"):
            out[start : start + len(s)] = top / s[:, -1]
    return out


def survivor_condition_numbers(
    G: np.ndarray, survivors: np.ndarray, *, ell: int = 1
) -> np.ndarray:
    """Return ``cond_2(G_S)`` for each survivor set S (a row of `survivors`).

    Parameters
    ----------
    G : ndarray, shape (ell n, ell k)
        Generator; worker i holds rows ``ell i .. ell i + ell - 1``.
    survivors : array_like of int, shape (batch, k)
        Worker indices of each survivor set.
    ell : int
        Rows per worker.

    Returns
    -------
    ndarray, shape (batch,)
        ``inf`` for a singular ``G_S``.
    """
    survivors = np.asarray(survivors, dtype=np.int64)
    rows = (survivors[:, :, None] * ell + np.arange(ell)).reshape(len(survivors), -1)
    return _batched_cond(np.asarray(G, dtype=np.float64), rows, unit_top=False)


def _combination_chunks(n: int, s: int, chunk: int = 65_536) -> Iterator[np.ndarray]:
    combos = itertools.combinations(range(n), s)
    while True:
        block = np.fromiter(
            itertools.chain.from_iterable(itertools.islice(combos, chunk)),
            dtype=np.int64,
        )
        if block.size == 0:
            return
        yield block.reshape(-1, s)


def _survivors(erased: np.ndarray, n: int) -> tuple[int, ...]:
    return tuple(sorted(set(range(n)) - set(erased.tolist())))


def _swap_one_ascent(
    cond: _Conditioning, erased: np.ndarray, value: float, max_steps: int
) -> tuple[np.ndarray, float, int]:
    """Move to the best neighbour (one erased worker swapped for a survivor)."""
    evaluated = 0
    for _ in range(max_steps):
        survivors = np.array(_survivors(erased, cond.n), dtype=np.int64)
        s = erased.size
        out_pos = np.repeat(np.arange(s), survivors.size)
        incoming = np.tile(survivors, s)
        neighbours = np.repeat(erased[None, :], out_pos.size, axis=0)
        neighbours[np.arange(out_pos.size), out_pos] = incoming
        values = cond(neighbours)
        evaluated += len(values)
        best = int(np.argmax(values))
        if not values[best] > value:
            break
        erased, value = np.sort(neighbours[best]), float(values[best])
    return erased, value, evaluated


def worst_condition_number(
    G: np.ndarray,
    *,
    ell: int = 1,
    extra: int = 0,
    exact_limit: int = EXACT_LIMIT,
    samples: int = 20_000,
    starts: int = 8,
    rng: RngLike = 0,
) -> WorstCondition:
    r"""Worst ``cond_2(G_S)`` over the survivor sets S of k of the n workers.

    Exact (every one of the ``C(n, k)`` sets) when ``C(n, k) <= exact_limit``;
    otherwise a certified lower bound found by adversarial search: `samples`
    uniform erasure sets, then from each of the `starts` worst a swap-one local
    search (exchange one erased worker for a survivor while ``cond`` grows).

    Parameters
    ----------
    G : ndarray, shape (ell n, ell k)
        Real generator; worker i holds rows ``ell i .. ell i + ell - 1``.
    ell : int
        Rows (sub-blocks) per worker.
    extra : int
        Survivor sets of ``k + extra`` workers (the least-squares decode of the
        guard over extra results); default 0.
    exact_limit : int
        Largest number of survivor sets enumerated.
    samples, starts : int
        Adversarial search when not exact.
    rng : Generator, int or None
        Seed of the sampling.

    Returns
    -------
    WorstCondition
        ``value``, ``exact`` (False: `value` is a lower bound), a worst survivor
        set and the number of sets evaluated.

    Examples
    --------
    >>> import numpy as np
    >>> G = np.vstack([np.eye(2), [[1.0, 1.0]]])  # (3, 2): any 2 rows decode
    >>> w = worst_condition_number(G)
    >>> round(w.value, 6), w.exact, len(w.survivors)
    (2.618034, True, 2)
    """
    ell = check_int(ell, "ell", min_value=1)
    extra = check_int(extra, "extra", min_value=0)
    exact_limit = check_int(exact_limit, "exact_limit", min_value=1)
    samples = check_int(samples, "samples", min_value=1)
    starts = check_int(starts, "starts", min_value=1)
    G = np.asarray(G, dtype=np.float64)
    if G.ndim != 2 or G.shape[0] % ell or G.shape[1] % ell or G.shape[1] > G.shape[0]:
        raise ValueError(
            f"`G` must be a 2-D (ell n, ell k) matrix with k <= n and ell={ell} "
            f"dividing both sides, got shape {G.shape}."
        )
    if G.shape[1] // ell + extra > G.shape[0] // ell:
        raise ValueError(
            f"`extra` must be <= n - k = {(G.shape[0] - G.shape[1]) // ell}, "
            f"got extra={extra}."
        )
    cond = _Conditioning(G, ell, extra)
    n, s = cond.n, cond.n - cond.k
    if s == 0:  # every worker survives
        value = float(np.linalg.cond(G))
        return WorstCondition(value, True, tuple(range(n)), 1)
    count = math.comb(n, s)
    if count <= exact_limit:
        worst, where = -1.0, np.zeros(s, dtype=np.int64)
        for erased in _combination_chunks(n, s):
            values = cond(erased)
            i = int(np.argmax(values))
            if values[i] > worst:
                worst, where = float(values[i]), erased[i]
        return WorstCondition(worst, True, _survivors(where, n), count)
    generator = as_generator(rng)
    erased = np.sort(np.argsort(generator.random((samples, n)), axis=1)[:, :s], axis=1)
    values = cond(erased)
    evaluated = samples
    worst, where = -1.0, erased[0]
    for i in np.argsort(values)[::-1][:starts]:
        found, value, count_i = _swap_one_ascent(cond, erased[i], float(values[i]), 50)
        evaluated += count_i
        if value > worst:
            worst, where = value, found
    return WorstCondition(worst, False, _survivors(where, n), evaluated)


# -- constructions -----------------------------------------------------------------
def complex_embedding(M: np.ndarray) -> np.ndarray:
    r"""Real ``(2a, 2b)`` embedding of a complex ``(a, b)`` matrix.

    Entry ``z = x + i y`` becomes the 2 x 2 block ``[[x, -y], [y, x]]`` (a scaled
    rotation); products, adjoints and singular values (each doubled) carry over.
    """
    M = np.asarray(M, dtype=np.complex128)
    out = np.empty((2 * M.shape[0], 2 * M.shape[1]))
    out[0::2, 0::2], out[0::2, 1::2] = M.real, -M.imag
    out[1::2, 0::2], out[1::2, 1::2] = M.imag, M.real
    return out


def rotation_generator(n: int, k: int) -> np.ndarray:
    r"""Rotation-matrix embedding (Ramamoorthy & Tang 2021): ``(2n, 2k)``.

    Worker i holds the 2 x 2 blocks ``R^{i j} / sqrt(n)``, ``j < k``, with ``R`` the
    rotation by ``2 pi / n``: the real embedding of the Vandermonde matrix of the
    n-th roots of unity (the first k columns of the DFT), whose k x k submatrices
    are all invertible.
    """
    omega = np.exp(2j * np.pi * np.outer(np.arange(n), np.arange(k)) / n)
    return complex_embedding(omega / math.sqrt(n))


def frame_generator(H: np.ndarray) -> np.ndarray:
    """Complex-frame generator ``(2n, 2k)`` from a complex dual frame ``H`` (n x s).

    ``H`` is made orthonormal (polar factor); the code's complex generator is an
    orthonormal basis of the orthogonal complement of range(H), so that
    ``cond(G_S) = 1 / sigma_min(H_E)`` for the erased workers E.
    """
    U, _, Vh = np.linalg.svd(np.asarray(H, dtype=np.complex128), full_matrices=False)
    Q, _ = np.linalg.qr(U @ Vh, mode="complete")
    return complex_embedding(Q[:, H.shape[1] :])


def _seeded_frame(n: int, k: int) -> np.ndarray:
    """Real embedding of the orthonormal factor of a seeded complex Gaussian."""
    rng = np.random.default_rng([n, k, 2])
    Q, _ = np.linalg.qr(rng.standard_normal((n, k)) + 1j * rng.standard_normal((n, k)))
    return complex_embedding(Q)


def _ones_complement(n: int) -> np.ndarray:
    """Orthonormal basis (n x (n - 1)) of the complement of the all-ones vector."""
    Q, _ = np.linalg.qr(np.ones((n, 1)), mode="complete")
    return Q[:, 1:]


@functools.cache
def _table() -> dict[tuple[int, int, bool], tuple[float, np.ndarray]]:
    """Load the scalar real generators, keyed by ``(N, K, systematic)``."""
    path = resources.files("coded.codes.data").joinpath("real_mds.json")
    table: dict[tuple[int, int, bool], tuple[float, np.ndarray]] = {}
    for e in json.loads(path.read_text())["generators"]:
        G = np.array(e["generator"], dtype=np.float64)
        G.setflags(write=False)
        table[e["n"], e["k"], e["systematic"]] = (e["worst_condition_number"], G)
    return table


@functools.cache
def _frames() -> dict[tuple[int, int], tuple[float, np.ndarray]]:
    """Load the stored complex dual frames and certified worst cases by (n, k)."""
    path = resources.files("coded.codes.data").joinpath("complex_frames.npz")
    if not path.is_file():
        return {}
    with path.open("rb") as f, np.load(f) as data:
        index, frames, worst = data["index"], data["frames"], data["frame_worst"]
    out, offset = {}, 0
    for (n, k), value in zip(index.tolist(), worst.tolist(), strict=True):
        size = n * (n - k)
        out[n, k] = (value, frames[offset : offset + size].reshape(n, n - k))
        offset += size
    return out


def real_generator(N: int, K: int, *, systematic: bool) -> np.ndarray:
    """Scalar real MDS generator ``(N, K)`` (one row per unit): table or seeded.

    Parameters
    ----------
    N, K : int
        Coded and source units.
    systematic : bool
        Whether the first `K` rows must be the identity.

    Returns
    -------
    numpy.ndarray, shape (N, K)
        A stored generator (the better conditioned of two that qualify), else a
        seeded one.
    """
    flags = (True,) if systematic else (False, True)
    entries = [e for e in (_table().get((N, K, f)) for f in flags) if e is not None]
    if entries:  # non-systematic: the better of the two searches
        return min(entries, key=lambda e: e[0])[1]
    if K == N:
        return np.eye(N)
    rng = np.random.default_rng([N, K, int(systematic)])
    if systematic:
        return np.concatenate([np.eye(K), rng.standard_normal((N - K, K))], axis=0)
    with one_blas_thread():  # threads spinning on busy cores took 2-19 s for 450 x 300
        Q, _ = np.linalg.qr(rng.standard_normal((N, K)))
    return Q


@dataclass(frozen=True, slots=True)
class BlockGenerator:
    """A real generator whose workers hold `ell` consecutive rows each."""

    G: np.ndarray
    ell: int
    construction: str


def block_generator(n: int, k: int, *, systematic: bool) -> BlockGenerator:
    """Return the default real generator of ``MDSCode(n, k)`` (module docstring)."""
    if systematic:
        return BlockGenerator(real_generator(n, k, systematic=True), 1, "systematic")
    if k == n:
        return BlockGenerator(np.eye(n), 1, "identity")
    if k == 1:
        return BlockGenerator(np.ones((n, 1)), 1, "repetition")
    if n - k == 1:
        return BlockGenerator(_ones_complement(n), 1, "ones-complement")
    candidates = []  # (certified worst case, name, generator builder)
    frame = _frames().get((n, k))
    if frame is not None:
        H = frame[1]
        candidates.append((frame[0], "complex-frame", lambda: frame_generator(H)))
    scalar = [e for e in (_table().get((n, k, f)) for f in (False, True)) if e]
    if scalar:
        worst = min(e[0] for e in scalar)
        candidates.append(
            (worst, "scalar-table", lambda: real_generator(n, k, systematic=False))
        )
    cheap = math.comb(n, k) <= _ON_THE_FLY
    if cheap or (not candidates and n - k <= 4):
        worst = _rotation_worst(n, k)
        candidates.append((worst, "rotation", lambda: rotation_generator(n, k)))
    if not candidates or (cheap and frame is None):
        worst = _seeded_worst(n, k)
        candidates.append((worst, "seeded-complex", lambda: _seeded_frame(n, k)))
    _, name, build = min(candidates, key=lambda c: c[0])
    return BlockGenerator(build(), 1 if name == "scalar-table" else 2, name)


_ON_THE_FLY = 20_000
"""Untabulated pairs with at most this many survivor sets are certified on the fly."""


@functools.cache
def _rotation_worst(n: int, k: int) -> float:
    """Exact worst case of the rotation embedding when cheap, else +inf."""
    if math.comb(n, k) > _ON_THE_FLY:
        return math.inf
    return worst_condition_number(rotation_generator(n, k), ell=2).value


@functools.cache
def _seeded_worst(n: int, k: int) -> float:
    """Exact worst case of the seeded complex frame when cheap, else +inf."""
    if math.comb(n, k) > _ON_THE_FLY:
        return math.inf
    return worst_condition_number(_seeded_frame(n, k), ell=2).value


def gf_generator(N: int, K: int, p: int, *, systematic: bool) -> np.ndarray:
    """Exact MDS generator ``(N, K)`` over GF(p) (``N <= p - 1``)."""
    if systematic:
        return fields.cauchy_systematic(N, K, p)
    return fields.vandermonde(np.arange(1, N + 1), K, p)
