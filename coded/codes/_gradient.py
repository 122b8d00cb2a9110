r"""Gradient codes: the full gradient from any ``n - s`` of ``n`` workers.

The data is split into ``n`` partitions with partial gradients ``g_1 .. g_n``;
worker ``i`` holds the partitions in the support of row ``i`` of the encoding
matrix ``B`` (``n x n``, ``s + 1`` non-zeros a row) and returns
``y_i = sum_j B_ij g_j``. For every set ``S`` of ``n - s`` survivors there is a
decoding vector ``a`` with ``a^T B_S = 1^T``, so ``sum_i a_i y_i = sum_j g_j``
(Tandon, Lei, Dimakis & Karampatziakis 2017). See
``docs/theory/gradient_coding.md`` for the constructions and their conditioning.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from coded.errors import NotEnoughResultsError
from theory.validation import check_int

__all__ = ["CONSTRUCTIONS", "Conditioning", "Construction", "GradientCode"]

Construction = Literal["stable", "cyclic", "fractional"]
CONSTRUCTIONS: tuple[Construction, ...] = ("stable", "cyclic", "fractional")
_ENUMERATION_LIMIT = 20_000
_SAMPLED_SETS = 2_000
_SVD_CHUNK = 2_048


@dataclass(frozen=True, slots=True, kw_only=True)
class Conditioning:
    """Worst condition number of a gradient code's decoding over survivor sets.

    Parameters
    ----------
    kappa : float
        Largest ``kappa(S) = sigma_max(B_S) / sigma_min(B_S)`` found (``sigma_min``
        the smallest non-zero singular value) over sets ``S`` of ``n - s``
        survivors.
    survivors : tuple of int
        A survivor set attaining it.
    sets_checked : int
        Survivor sets examined.
    exact : bool
        True when all ``C(n, s)`` sets were enumerated (then `kappa` is the worst
        case); False when a seeded sample was examined (a lower bound).
    """

    kappa: float
    survivors: tuple[int, ...]
    sets_checked: int
    exact: bool


def _cyclic_mds_zeros(n: int, s: int, step: int) -> tuple[np.ndarray, bool]:
    """Zero frequencies ``Z`` of the cyclic code: an arithmetic progression.

    Real coefficients need ``Z = -Z (mod n)``: centred on ``n/2`` when ``n - s``
    is odd. Otherwise ``Z = {step, 2 step, .., s step}`` (complex coefficients).
    """
    if (n - s) % 2:
        offsets = step * (np.arange(s) - (s - 1) / 2)
        zeros = n / 2 + offsets
        if np.all(np.isclose(zeros, np.round(zeros))):
            return np.mod(np.round(zeros), n).astype(int), True
    return np.mod(step * np.arange(1, s + 1), n).astype(int), False


def _cyclic_mds_matrix(n: int, s: int, step: int) -> np.ndarray:
    """``B`` whose row ``i`` is ``x^i g(x) mod (x^n - 1)``, ``g`` of degree ``s``.

    ``g(x) = prod_{k in Z} (x - w^k)``, ``w = exp(2 pi i / n)``: the generator of
    a cyclic MDS code of dimension ``n - s`` containing ``1`` (Raviv, Tamo, Tandon &
    Dimakis 2018); with ``gcd(step, n) = 1``, ``Z`` is ``s`` consecutive powers
    of the primitive root ``w^step`` (BCH bound).
    """
    zeros, is_real = _cyclic_mds_zeros(n, s, step)
    roots = np.exp(2j * np.pi * zeros / n)
    g = np.atleast_1d(np.poly(roots))[::-1]  # low to high degree, monic
    g = g.real if is_real else g
    B = np.zeros((n, n), dtype=g.dtype)
    columns = (np.arange(n)[:, None] + np.arange(s + 1)[None, :]) % n
    B[np.arange(n)[:, None], columns] = g
    return B


def _fractional_matrix(n: int, s: int) -> np.ndarray:
    group = np.arange(n) // (s + 1)
    return (group[:, None] == group[None, :]).astype(float)


def _survivor_sets(
    n: int, s: int, limit: int, samples: int = _SAMPLED_SETS
) -> tuple[np.ndarray, bool]:
    """All ``C(n, s)`` survivor sets when at most `limit`, else a seeded sample."""
    if math.comb(n, s) <= limit:
        lost = np.array(list(itertools.combinations(range(n), s)), dtype=int)
        lost = lost.reshape(math.comb(n, s), s)  # s = 0: one empty set, (1, 0)
        exact = True
    else:
        generator = np.random.default_rng(0)
        windows = (np.arange(n)[:, None] + np.arange(s)[None, :]) % n
        sample = np.argsort(generator.random((samples, n)), axis=1)[:, :s]
        lost = np.vstack([windows, sample])
        exact = False
    keep = np.ones((len(lost), n), dtype=bool)
    keep[np.arange(len(lost))[:, None], lost] = False
    survivors = np.nonzero(keep)[1].reshape(len(lost), n - s)
    return survivors, exact


def _conditions(B: np.ndarray, survivors: np.ndarray, rank: int) -> np.ndarray:
    """``sigma_1 / sigma_rank`` of ``B_S`` for each row of `survivors`.

    ``inf`` where ``B_S`` has rank below `rank` (the rank of a decodable set).
    """
    if survivors.shape[1] < rank:  # fewer rows than the rank: every set deficient
        return np.full(len(survivors), np.inf)
    kappas = np.empty(len(survivors))
    for start in range(0, len(survivors), _SVD_CHUNK):
        chunk = survivors[start : start + _SVD_CHUNK]
        sv = np.linalg.svd(B[chunk], compute_uv=False)
        smallest = sv[:, rank - 1]
        deficient = smallest <= sv[:, 0] * max(B.shape) * np.finfo(float).eps
        kappas[start : start + len(chunk)] = np.where(
            deficient, np.inf, sv[:, 0] / np.where(deficient, 1.0, smallest)
        )
    return kappas


def _rank(n: int, s: int, construction: str) -> int:
    """Rank of ``B_S`` for a decodable survivor set of size ``n - s``."""
    return n // (s + 1) if construction == "fractional" else n - s


def _worst(
    B: np.ndarray, n: int, s: int, rank: int, limit: int, samples: int = _SAMPLED_SETS
) -> Conditioning:
    survivors, exact = _survivor_sets(n, s, limit, samples)
    kappas = _conditions(B, survivors, rank)
    worst = int(np.argmax(kappas))
    return Conditioning(
        kappa=float(kappas[worst]),
        survivors=tuple(int(i) for i in survivors[worst]),
        sets_checked=len(survivors),
        exact=exact,
    )


@functools.lru_cache(maxsize=64)
def _stable_step(n: int, s: int) -> int:
    """Return the step of the progression ``Z`` with the smallest worst kappa."""
    steps = [c for c in range(1, n // 2 + 1) if math.gcd(c, n) == 1]
    if (n - s) % 2 and n % 2:  # real code, n odd: the odd one of c, n - c
        steps = [c if c % 2 else n - c for c in steps]
    limit = _ENUMERATION_LIMIT // max(1, len(steps))
    kappas = [
        _worst(_cyclic_mds_matrix(n, s, c), n, s, n - s, limit, samples=256).kappa
        for c in steps
    ]
    return steps[int(np.argmin(kappas))]


def _encoding_matrix(n: int, s: int, construction: str) -> tuple[np.ndarray, int]:
    if construction == "fractional":
        return _fractional_matrix(n, s), 0
    step = 1 if construction == "cyclic" or s == 0 else _stable_step(n, s)
    return _cyclic_mds_matrix(n, s, step), step


class GradientCode:
    r"""An ``(n, s)`` gradient code: exact full gradients from any ``n - s`` workers.

    Parameters
    ----------
    n : int
        Number of workers and of data partitions, ``n >= 1``.
    s : int
        Stragglers tolerated, ``0 <= s < n``; each partition is held by ``s + 1``
        workers.
    construction : {"stable", "cyclic", "fractional"}
        ``"fractional"``: fractional repetition (``s + 1`` divides ``n``): ``n /
        (s + 1)`` groups of ``s + 1`` workers, all holding the same ``s + 1``
        partitions and returning their sum. ``"cyclic"``: cyclic repetition
        (worker ``i`` holds partitions ``i .. i + s mod n``) with the cyclic-MDS
        encoding of Raviv, Tamo, Tandon & Dimakis: zeros ``Z`` at ``s``
        consecutive frequencies. ``"stable"`` (default): the same support, with
        ``Z`` an arithmetic progression whose step (coprime to ``n``, so the code
        stays MDS) minimises the worst condition number of the decoding. The
        cyclic codes are real when ``n - s`` is odd and complex otherwise (the
        workers then return complex combinations; decoding returns the real
        gradient).

    Attributes
    ----------
    B : numpy.ndarray, shape (n, n)
        The encoding matrix (read-only); row ``i`` is worker ``i``'s combination.
    supports : tuple of tuple of int
        ``supports[i]``: the partitions worker ``i`` holds (the support of
        ``B[i]``), in the order ``i, i + 1, ..`` for the cyclic codes.
    step : int
        Step of the zero set ``Z`` (cyclic codes; 0 for fractional repetition).

    Notes
    -----
    Worker ``i`` returns :math:`y_i = \sum_j B_{ij} g_j`. For survivors ``S`` the
    decoder solves :math:`B_S^T a = \mathbf{1}` (least squares, minimum norm) and
    returns :math:`\sum_{i \in S} a_i y_i = \sum_j g_j`. Every row of the cyclic
    codes is a cyclic shift of the generator polynomial
    :math:`g(x) = \prod_{k \in Z}(x - \omega^k)`, so the rows span the cyclic code
    with zeros ``Z``, which contains :math:`\mathbf{1}` (``0 \notin Z``), and any
    ``n - s`` of them span it (``docs/theory/gradient_coding.md``).

    Examples
    --------
    >>> import numpy as np
    >>> code = GradientCode(6, 2, construction="fractional")
    >>> code.supports[4]
    (3, 4, 5)
    >>> partial = np.arange(12.0).reshape(6, 2)  # one partial gradient per row
    >>> returns = code.encode(partial)
    >>> survivors = {i: returns[i] for i in (0, 3, 4, 5)}  # workers 1, 2 straggle
    >>> gradient = code.decode(survivors)  # the sum, up to rounding
    >>> np.round(gradient, 9).tolist(), np.allclose(gradient, partial.sum(axis=0))
    ([30.0, 36.0], True)
    >>> GradientCode(30, 3).worst_condition().kappa < 1e3
    True
    """

    __slots__ = ("B", "_vectors", "construction", "n", "s", "step", "supports")

    def __init__(self, n: int, s: int, construction: Construction = "stable") -> None:
        n = check_int(n, "n", min_value=1)
        s = check_int(s, "s", min_value=0)
        if s >= n:
            raise ValueError(
                f"`s` (stragglers tolerated) must satisfy 0 <= s < n, got s={s}, n={n}."
            )
        if construction not in CONSTRUCTIONS:
            raise ValueError(
                f"`construction` must be one of {CONSTRUCTIONS}, got {construction!r}."
            )
        if construction == "fractional" and n % (s + 1):
            raise ValueError(
                "fractional repetition needs s + 1 to divide n, got "
                f"n={n}, s={s} (s + 1 = {s + 1}); use construction='stable'."
            )
        B, step = _encoding_matrix(n, s, construction)
        B.setflags(write=False)
        self.n, self.s, self.construction, self.B, self.step = (
            n,
            s,
            construction,
            B,
            step,
        )
        order = [(np.arange(s + 1) + i) % n for i in range(n)]
        if construction == "fractional":
            order = [np.flatnonzero(row) for row in B]
        self.supports = tuple(tuple(int(j) for j in part) for part in order)
        self._vectors: dict[tuple[int, ...], np.ndarray] = {}

    def __repr__(self) -> str:
        return (
            f"GradientCode(n={self.n}, s={self.s}, construction={self.construction!r})"
        )

    @property
    def is_real(self) -> bool:
        """Whether ``B`` (and the workers' returns) are real."""
        return not np.iscomplexobj(self.B)

    @property
    def recovery_threshold(self) -> int:
        """``n - s``: any that many workers always suffice."""
        return self.n - self.s

    def holders(self, partition: int) -> tuple[int, ...]:
        """Workers holding `partition` (``s + 1`` of them)."""
        partition = check_int(partition, "partition", min_value=0, max_value=self.n - 1)
        return tuple(int(i) for i in np.flatnonzero(self.B[:, partition]))

    def _survivors(self, workers: Iterable[int]) -> tuple[int, ...]:
        chosen = sorted({int(w) for w in workers})
        if chosen and not 0 <= chosen[0] <= chosen[-1] < self.n:
            raise ValueError(f"worker indices must lie in [0, {self.n}), got {chosen}.")
        return tuple(chosen)

    def is_decodable(self, workers: Iterable[int]) -> bool:
        """Whether the returns of `workers` determine the full gradient.

        Fractional repetition: one worker of every group. Cyclic codes: at least
        ``n - s`` workers (the guarantee of the MDS construction).
        """
        chosen = self._survivors(workers)
        if self.construction == "fractional":
            groups = {i // (self.s + 1) for i in chosen}
            return len(groups) == self.n // (self.s + 1)
        return len(chosen) >= self.n - self.s

    def decoding_vector(self, workers: Iterable[int]) -> np.ndarray:
        r"""Return ``a`` (length ``n``, zero off `workers`) with ``a^T B = 1^T``.

        Parameters
        ----------
        workers : iterable of int
            A decodable set of survivors.

        Returns
        -------
        numpy.ndarray, shape (n,)
            Minimum-norm solution of :math:`B_S^T a_S = \mathbf{1}`.

        Raises
        ------
        NotEnoughResultsError
            If `workers` is not decodable (says how many are needed).
        """
        chosen = self._survivors(workers)
        cached = self._vectors.get(chosen)
        if cached is not None:
            return cached
        if not self.is_decodable(chosen):
            need = (
                f"one worker of each of the {self.n // (self.s + 1)} groups"
                if self.construction == "fractional"
                else f"{self.n - self.s} workers"
            )
            raise NotEnoughResultsError(
                f"{len(chosen)} worker results cannot decode the gradient: the "
                f"({self.n}, {self.s}) {self.construction} code needs {need}, "
                f"got workers {list(chosen)}."
            )
        rows = list(chosen)
        solution = np.linalg.lstsq(self.B[rows].T, np.ones(self.n), rcond=None)[0]
        vector = np.zeros(self.n, dtype=self.B.dtype)
        vector[rows] = solution
        vector.setflags(write=False)
        self._vectors[chosen] = vector
        return vector

    def encode(self, partial_gradients: Any) -> np.ndarray:
        """Return every worker's return ``B @ G`` for partial gradients ``G``.

        Parameters
        ----------
        partial_gradients : array_like, shape (n, ...)
            Partial gradient of each partition.

        Returns
        -------
        numpy.ndarray, shape (n, ...)
        """
        G = np.asarray(partial_gradients)
        if G.ndim < 1 or G.shape[0] != self.n:
            raise ValueError(
                f"`partial_gradients` must have n={self.n} rows, got shape {G.shape}."
            )
        return np.tensordot(self.B, G, axes=1)

    def decode(self, returns: Mapping[int, Any]) -> np.ndarray:
        """Return the full gradient ``sum_j g_j`` from survivors' returns.

        Parameters
        ----------
        returns : mapping of int to array
            ``{worker: y_worker}`` for a decodable set of workers.

        Returns
        -------
        numpy.ndarray
            The full gradient (real).

        Raises
        ------
        NotEnoughResultsError
            Too few (or the wrong) workers.
        """
        a = self.decoding_vector(returns)
        total = sum(a[i] * np.asarray(y) for i, y in returns.items() if a[i] != 0)
        return np.real(total) if np.iscomplexobj(total) else np.asarray(total)

    def condition_number(self, workers: Iterable[int]) -> float:
        """``kappa(B_S)``: ``sigma_1 / sigma_r`` of ``B_S``, ``r`` its decodable rank.

        ``inf`` for a set whose ``B_S`` has lower rank than a decodable set's.
        """
        rows = np.array([self._survivors(workers)], dtype=int)
        rank = _rank(self.n, self.s, self.construction)
        return float(_conditions(self.B, rows, rank)[0])

    def worst_condition(self, *, limit: int = _ENUMERATION_LIMIT) -> Conditioning:
        """Worst ``kappa(B_S)`` over survivor sets of size ``n - s``.

        Parameters
        ----------
        limit : int
            Enumerate all ``C(n, s)`` sets when there are at most this many;
            otherwise examine the ``n`` sets losing ``s`` consecutive workers plus
            2000 seeded random sets (``exact=False``: a lower bound).

        Returns
        -------
        Conditioning
        """
        limit = check_int(limit, "limit", min_value=1)
        rank = _rank(self.n, self.s, self.construction)
        return _worst(self.B, self.n, self.s, rank, limit)
