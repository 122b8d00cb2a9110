r"""Rateless (LT / fountain) codes over the reals: sparse generators, peeling decoder.

Each encoded row is the sum of a few distinct source rows (its *degree* drawn from a
:class:`DegreeDistribution`), so the generator ``G`` is a 0/1 ``scipy.sparse`` CSR
matrix and a CSR A stays sparse in the shares. The decoder peels (a received row
with one unrecovered source row recovers it) on integer arrays and, when the ripple
of degree-one rows empties, inactivates a source row and peels on; the peeled rows
form a sparse unit triangular system (solved round by round) and the inactive rows a
small dense least-squares system. The decoded product is checked against the
whole received system (and refined), so a decode never returns a wrong product.
"""

from __future__ import annotations

import functools
import itertools
import math
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse
import scipy.sparse.linalg

from coded.codes import _fields as fields
from coded.codes._base import Code, Decoder, EncodedOperands, Piece
from coded.codes._fields import TRUST_LIMIT
from coded.errors import (
    DecodingError,
    IllConditionedWarning,
    NonFiniteResultError,
    NotEnoughResultsError,
)
from theory.rng import RngLike, as_generator
from theory.validation import check_finite_matrix, check_int, check_real

__all__ = ["DegreeDistribution", "LTCode"]

MAX_RESIDUAL = 2048
"""Most source rows the decoder inactivates when peeling stalls (fewer when
``m * MAX_RESIDUAL`` entries would exceed 256 MiB of float64)."""

MAX_AMPLIFICATION = 1e4
"""Default guard: a decodable rateless decoder asks for more rows while its solve
amplifies rounding errors more than this (the relative error is about the
amplification times eps, so about 1e-12 here)."""

_MAX_RESIDUAL_ENTRIES = 2**25  # dense residual system: 256 MiB of float64
_EPS = float(np.finfo(np.float64).eps)
_REFINEMENTS = 2
_INACTIVATION_STEP = 4  # columns inactivated together when peeling stalls
_RETRY_DIVISOR = 50  # a failed plan is retried after m / 50 more rows
_IDLE_QUERIES = 2  # ... or when asked this often with no new rows
_SUM_TOLERANCE = 1e-12


class DegreeDistribution:
    r"""Distribution of the degree (source rows summed) of an encoded row.

    Parameters
    ----------
    probabilities : sequence of float
        ``probabilities[d - 1]`` is the probability of degree ``d``: finite,
        nonnegative, summing to 1 within 1e-12.

    Raises
    ------
    ValueError
        If `probabilities` is empty, not 1-D, negative, not finite or does not
        sum to 1.

    Examples
    --------
    >>> dist = DegreeDistribution.robust_soliton(1000, c=0.03, delta=0.5)
    >>> round(float(dist.probabilities.sum()), 12), dist.max_degree <= 1000
    (1.0, True)
    >>> DegreeDistribution([0.5, 0.5]).mean
    1.5
    """

    def __init__(self, probabilities: Sequence[float] | np.ndarray):
        values = check_finite_matrix(probabilities, "probabilities", ndim=1)
        values = values.astype(np.float64)
        if values.size == 0 or (values < 0).any():
            raise ValueError(
                "`probabilities` must be a non-empty sequence of nonnegative "
                f"numbers, got {values.tolist()[:8]}."
            )
        total = float(values.sum())
        if abs(total - 1.0) > _SUM_TOLERANCE:
            raise ValueError(
                f"`probabilities` must sum to 1 (within {_SUM_TOLERANCE:g}), got "
                f"sum {total!r}."
            )
        values.setflags(write=False)
        self.probabilities = values

    @classmethod
    def robust_soliton(
        cls, m: int, *, c: float = 0.03, delta: float = 0.5
    ) -> DegreeDistribution:
        r"""Luby's robust soliton distribution on ``1..m``.

        With :math:`R = c \ln(m / \delta) \sqrt{m}`, the ideal soliton
        :math:`\rho(1) = 1/m`, :math:`\rho(d) = 1 / (d (d - 1))` plus
        :math:`\tau(d) = R / (d m)` for :math:`d < m / R` and
        :math:`\tau(m / R) = R \ln(R / \delta) / m`, normalised.

        Parameters
        ----------
        m : int
            Source rows, ``>= 1``.
        c : float
            Ripple constant, ``> 0``.
        delta : float
            Failure probability bound, ``0 < delta < 1``.

        Returns
        -------
        DegreeDistribution
        """
        m = check_int(m, "m", min_value=1)
        c = check_real(c, "c", min_value=0.0, strict_min=True)
        delta = check_real(
            delta, "delta", min_value=0.0, max_value=1.0, strict_min=True
        )
        if delta == 1.0:
            raise ValueError("`delta` must be < 1, got 1.0.")
        d = np.arange(1, m + 1, dtype=np.float64)
        rho = np.empty(m)
        rho[0] = 1.0 / m
        rho[1:] = 1.0 / (d[1:] * (d[1:] - 1.0))
        R = c * math.log(m / delta) * math.sqrt(m)
        spike = min(max(round(m / R), 1), m)
        tau = np.zeros(m)
        tau[: spike - 1] = R / (d[: spike - 1] * m)
        tau[spike - 1] = max(R * math.log(R / delta) / m, 0.0)
        mu = rho + tau
        return cls(mu / mu.sum())

    @classmethod
    def wave_soliton(cls, m: int) -> DegreeDistribution:
        r"""Return the wave soliton distribution of sparse codes (Wang, Liu, Shroff).

        :math:`p(1) = \tau / m`, :math:`p(2) = \tau / 70`,
        :math:`p(d) = \tau / (d (d - 1))` for ``3 <= d <= m``, with
        :math:`\tau = 35/18` (exact normalisation for ``m >= 3``; smaller m are
        renormalised).

        Parameters
        ----------
        m : int
            Source rows, ``>= 1``.

        Returns
        -------
        DegreeDistribution
        """
        m = check_int(m, "m", min_value=1)
        d = np.arange(1, m + 1, dtype=np.float64)
        p = np.empty(m)
        p[0] = 1.0 / m
        p[1:2] = 1.0 / 70.0
        p[2:] = 1.0 / (d[2:] * (d[2:] - 1.0))
        return cls(p / p.sum())

    @property
    def max_degree(self) -> int:
        """The largest degree with a nonzero probability."""
        return int(np.flatnonzero(self.probabilities)[-1]) + 1

    @property
    def mean(self) -> float:
        """Expected degree."""
        degrees = np.arange(1, self.probabilities.size + 1)
        return float(self.probabilities @ degrees)

    def sample(self, size: int, rng: RngLike = None) -> np.ndarray:
        """Draw `size` degrees.

        Parameters
        ----------
        size : int
            Number of degrees, ``>= 0``.
        rng : Generator, SeedSequence, int or None
            Random source.

        Returns
        -------
        numpy.ndarray of int64
        """
        size = check_int(size, "size", min_value=0)
        cdf = np.cumsum(self.probabilities)
        draws = as_generator(rng).random(size) * cdf[-1]
        return np.minimum(np.searchsorted(cdf, draws, side="right"), cdf.size - 1) + 1

    def __repr__(self) -> str:
        return f"DegreeDistribution(max_degree={self.max_degree}, mean={self.mean:.3f})"


def _distinct_columns(
    degrees: np.ndarray, m: int, rng: np.random.Generator
) -> np.ndarray:
    """Column indices of every row (row-major, sorted): `degrees[i]` distinct each.

    A row of degree above ``m / 4`` (about one per code) draws without
    replacement; the others draw with replacement and redraw duplicates, re-sorting
    only the rows that had one, until none is left (each round keeps at most a
    quarter of them). Either way a row's set is uniform over the subsets.
    """
    starts = np.concatenate(([0], np.cumsum(degrees)))
    cols = np.empty(int(starts[-1]), dtype=np.int64)
    big = 4 * degrees > m
    for row in np.flatnonzero(big).tolist():
        drawn = rng.choice(m, size=int(degrees[row]), replace=False)
        cols[starts[row] : starts[row + 1]] = np.sort(drawn)
    small = np.repeat(~big, degrees)
    cols[small] = _redraw_duplicates(np.where(big, 0, degrees), m, rng)
    return cols


def _redraw_duplicates(
    degrees: np.ndarray, m: int, rng: np.random.Generator
) -> np.ndarray:
    rows = np.repeat(np.arange(degrees.size, dtype=np.int64), degrees)
    keys = np.sort(rows * m + rng.integers(m, size=rows.size))
    while True:
        dup = np.flatnonzero(keys[1:] == keys[:-1]) + 1
        if dup.size == 0:
            return keys - rows * m
        keys[dup] = rows[dup] * m + rng.integers(m, size=dup.size)
        touched = np.zeros(degrees.size, dtype=bool)
        touched[rows[dup]] = True
        where = np.flatnonzero(touched[rows])  # whole rows: sorting keeps order
        keys[where] = np.sort(keys[where])


def _lt_generator(
    rows: int, m: int, distribution: DegreeDistribution, rng: np.random.Generator
) -> scipy.sparse.csr_array:
    degrees = distribution.sample(rows, rng)
    cols = _distinct_columns(degrees, m, rng)
    indptr = np.concatenate(([0], np.cumsum(degrees)))
    data = np.ones(cols.size)
    return scipy.sparse.csr_array((data, cols, indptr), shape=(rows, m))


def _check_dense(A: Any) -> np.ndarray:
    if not isinstance(A, np.ndarray):
        raise TypeError(
            f"`A` must be a numpy array or a scipy.sparse CSR/CSC/COO matrix, got "
            f"{type(A).__name__} (convert it with np.asarray)."
        )
    return check_finite_matrix(A, "A", ndim=2).astype(np.float64, copy=False)


def multiply(left: Any, right: np.ndarray) -> np.ndarray:
    """Worker product ``left @ right`` (left dense or CSR), as a dense array.

    Parameters
    ----------
    left : numpy.ndarray or scipy.sparse CSR
        Encoded rows.
    right : numpy.ndarray
        Right operand.

    Returns
    -------
    numpy.ndarray
    """
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(left @ right)


@dataclass(frozen=True, slots=True)
class RatelessContext:
    """What a rateless decode needs besides the pieces (opaque to the runtime).

    Parameters
    ----------
    m : int
        Rows of A.
    is_vector : bool
        Whether B was a vector.
    c : int
        Columns of B (1 for a vector).
    scale : float
        ``||A||_F ||B||_F``: the scale of the workers' rounding errors.
    a_norm : float
        ``||A||_F`` (for a new B against the same encoded A).
    """

    m: int
    is_vector: bool
    c: int
    scale: float
    a_norm: float


class LTCode(Code):
    r"""LT (fountain) code of A's rows: n workers share ``ceil(overhead m)`` rows.

    Encoded row i is the sum of ``degree_i`` distinct rows of A chosen uniformly,
    ``degree_i`` drawn from `distribution`; worker w gets the consecutive encoded
    rows ``row_ranges[w]`` (an even split). Any set of received rows whose
    generator rows have full column rank decodes; with the robust soliton
    distribution a little more than m rows usually suffice, from whichever
    workers sent them, so a straggler's finished rows are kept.

    Parameters
    ----------
    n : int
        Number of workers.
    m : int
        Rows of A.
    overhead : float
        Encoded rows per source row, ``>= 1`` (default 1.3).
    distribution : {"robust", "wave"} or DegreeDistribution
        Degrees: the robust soliton (``c = 0.03``, ``delta = 0.5``), the wave
        soliton, or a given distribution on ``1..m``.
    rng : Generator, SeedSequence, int or None
        Draws the generator (default 0: reproducible).
    max_amplification : float
        The decoder's guard, ``>= 1`` (default :data:`MAX_AMPLIFICATION`;
        1e300 turns it off): while the estimated error amplification of a decode exceeds
        it, the decoder asks for more rows (:attr:`Decoder.needs_more`); a
        decode with no more rows to come proceeds, and warns
        (`IllConditionedWarning`) above ``1e-6 / eps``.

    Raises
    ------
    ValueError
        ``overhead < 1``, fewer encoded rows than workers, a distribution with
        degrees above m or an unknown name, ``max_amplification < 1``.

    Notes
    -----
    The generator ``G`` (:attr:`generator`) is a 0/1 CSR matrix; ``G @ A`` keeps a
    CSR A sparse (the encoded nonzeros are at most the degree-weighted sum of the
    source rows' nonzeros) and a dense A dense. Decoding peels degree-one rows
    and, if the ripple empties, inactivates source rows (at most
    :data:`MAX_RESIDUAL`) and peels on; the peeled rows are one sparse triangular
    solve, the inactive ones a small dense least-squares solve (rank checked
    against ``eps``); the result is refined and checked against the whole received
    system. Generators of a named distribution and an integer `rng` are built once
    and cached (codes are immutable). See ``docs/theory/rateless.md``.

    Examples
    --------
    >>> import numpy as np
    >>> code = LTCode(4, m=200, rng=1)
    >>> A, x = np.random.default_rng(0).normal(size=(200, 3)), np.ones(3)
    >>> encoded = code.encode_operands(A, x)
    >>> results = {w: code.multiply(encoded.lefts[w], x) for w in range(4)}
    >>> np.allclose(code.decode_results(encoded, results), A @ x)
    True
    """

    sparse_generator = True
    """Shares are rows of ``G @ A`` with G sparse (memory estimates by nonzeros)."""

    def __init__(
        self,
        n: int,
        m: int,
        *,
        overhead: float = 1.3,
        distribution: str | DegreeDistribution = "robust",
        rng: RngLike = 0,
        max_amplification: float = MAX_AMPLIFICATION,
    ):
        self.n = check_int(n, "n", min_value=1)
        self.max_amplification = check_real(
            max_amplification, "max_amplification", min_value=1.0
        )
        self.m = check_int(m, "m", min_value=1)
        self.overhead = check_real(overhead, "overhead", min_value=1.0)
        rows = math.ceil(self.overhead * self.m)
        if rows < self.n:
            raise ValueError(
                f"`overhead` * m = {rows} encoded rows must be at least n={self.n}."
            )
        self.distribution, self._pattern = _pattern(rows, self.m, distribution, rng)
        sizes = np.full(self.n, rows // self.n)
        sizes[: rows % self.n] += 1
        self._offsets = np.concatenate(([0], np.cumsum(sizes)))

    @property
    def generator(self) -> scipy.sparse.csr_array:
        """The ``ceil(overhead m) x m`` 0/1 CSR generator (read it, do not edit)."""
        return self._pattern.G

    @property
    def loads(self) -> tuple[int, ...]:
        """Encoded rows per worker."""
        return tuple(int(s) for s in np.diff(self._offsets))

    @property
    def row_ranges(self) -> tuple[tuple[int, int], ...]:
        """Global encoded rows ``(start, stop)`` held by each worker."""
        bounds = self._offsets.tolist()
        return tuple(itertools.pairwise(bounds))

    @property
    def recovery_threshold(self) -> int:
        """``n``: no smaller number of whole results always suffices.

        Rateless decodability depends on which rows arrive; :meth:`is_decodable`
        and the decoder check the actual rows.
        """
        return self.n

    def encode_operands(self, A: Any, B: Any) -> EncodedOperands:
        """Encode ``A @ B``: worker w gets its encoded rows ``(G @ A)[row_ranges[w]]``.

        Parameters
        ----------
        A : numpy.ndarray or scipy.sparse CSR/CSC/COO, shape (m, d)
            Left operand; a sparse A gives CSR shares (never densified), a dense A
            dense float64 shares.
        B : array_like, shape (d, c) or (d,)
            Dense right operand, shared by every worker.

        Returns
        -------
        EncodedOperands
        """
        sparse = fields.as_csr(A)
        left = _check_dense(A) if sparse is None else sparse
        if left.shape[0] != self.m:
            raise ValueError(f"`A` must have m={self.m} rows, got shape {left.shape}.")
        right = self._right(B, left.shape[1])  # before the product G @ A
        coded = self._pattern.G @ left
        norm = (
            float(scipy.sparse.linalg.norm(left))
            if sparse is not None
            else float(np.linalg.norm(left))
        )
        lefts = tuple(coded[a:b] for a, b in self.row_ranges)
        return self._encoded(lefts, right, norm)

    def encode_right(self, encoded: EncodedOperands, B: Any) -> EncodedOperands:
        """Encode a new B against the encoded A of `encoded` (A's rows stay put).

        Parameters
        ----------
        encoded : EncodedOperands
            What :meth:`encode_operands` returned.
        B : array_like, shape (d, c) or (d,)
            The new right operand.

        Returns
        -------
        EncodedOperands
        """
        right = self._right(B, int(np.shape(encoded.lefts[0])[1]))
        return self._encoded(encoded.lefts, right, encoded.context.a_norm)

    def _right(self, B: Any, d: int) -> np.ndarray:
        """B checked (finite, 1-D or 2-D, ``d`` rows) as float64."""
        right = check_finite_matrix(B, "B", ndim=(1, 2)).astype(np.float64, copy=False)
        if right.shape[0] != d:
            raise ValueError(
                f"`A` and `B` do not chain: A.shape={(self.m, d)}, "
                f"B.shape={right.shape}."
            )
        return right

    def _encoded(
        self, lefts: tuple[Any, ...], right: np.ndarray, a_norm: float
    ) -> EncodedOperands:
        context = RatelessContext(
            m=self.m,
            is_vector=right.ndim == 1,
            c=1 if right.ndim == 1 else right.shape[1],
            scale=a_norm * float(np.linalg.norm(right)),
            a_norm=a_norm,
        )
        return EncodedOperands(
            lefts=lefts, rights=None, shared_right=right, context=context
        )

    def decoder(self, encoded: EncodedOperands) -> LTDecoder:
        """Return a fresh peeling decoder for `encoded`.

        Parameters
        ----------
        encoded : EncodedOperands
            What :meth:`encode_operands` returned.

        Returns
        -------
        Decoder
        """
        return LTDecoder(self, encoded.context)

    @property
    def multiply(self) -> Callable[[Any, Any], Any]:
        """Picklable worker product ``(left, right) -> left @ right`` (dense out)."""
        return multiply

    def is_decodable(self, workers: Iterable[int]) -> bool:
        """Whether whole results from `workers` determine the product.

        Parameters
        ----------
        workers : iterable of int
            Workers whose whole results arrived.

        Returns
        -------
        bool
        """
        peel = _Peeler(self._pattern)
        for w in set(workers):
            w = check_int(w, "workers[i]", min_value=0, max_value=self.n - 1)
            peel.add_rows(np.arange(self._offsets[w], self._offsets[w + 1]))
        if not peel.unknown:
            return True
        solver = _plan(peel)
        return solver is not None and solver.full_rank

    def __repr__(self) -> str:
        return (
            f"LTCode(n={self.n}, m={self.m}, overhead={self.overhead}, "
            f"distribution={self.distribution!r})"
        )


def _resolve_distribution(distribution: object, m: int) -> DegreeDistribution:
    if isinstance(distribution, DegreeDistribution):
        if distribution.max_degree > m:
            raise ValueError(
                f"`distribution` has degrees up to {distribution.max_degree}, above "
                f"m={m} source rows."
            )
        return distribution
    if distribution == "robust":
        return DegreeDistribution.robust_soliton(m)
    if distribution == "wave":
        return DegreeDistribution.wave_soliton(m)
    raise ValueError(
        "`distribution` must be 'robust', 'wave' or a DegreeDistribution, got "
        f"{distribution!r}."
    )


@dataclass(frozen=True, slots=True)
class _Pattern:
    """Index arrays of a 0/1 generator: its rows (CSR) and its columns (CSC)."""

    G: scipy.sparse.csr_array
    col_ptr: np.ndarray
    col_rows: np.ndarray
    degree: np.ndarray
    index_sum: np.ndarray  # per row, the sum of its column indices

    @classmethod
    def of(cls, G: scipy.sparse.csr_array) -> _Pattern:
        csc = G.tocsc()
        degree = np.diff(G.indptr)
        index_sum = np.zeros(G.shape[0], dtype=np.int64)
        nonempty = degree > 0
        starts = G.indptr[:-1][nonempty]
        index_sum[nonempty] = np.add.reduceat(G.indices.astype(np.int64), starts)
        return cls(G, csc.indptr, csc.indices, degree, index_sum)


@functools.lru_cache(maxsize=8)
def _cached_pattern(rows: int, m: int, distribution: str, seed: int) -> _Pattern:
    """Build (once) the pattern of a named distribution and an integer seed."""
    dist = _resolve_distribution(distribution, m)
    return _Pattern.of(_lt_generator(rows, m, dist, as_generator(seed)))


def _pattern(
    rows: int, m: int, distribution: object, rng: RngLike
) -> tuple[DegreeDistribution, _Pattern]:
    dist = _resolve_distribution(distribution, m)
    seeded = isinstance(rng, int | np.integer) and not isinstance(rng, bool)
    if seeded and isinstance(distribution, str):
        return dist, _cached_pattern(rows, m, distribution, int(rng))
    return dist, _Pattern.of(_lt_generator(rows, m, dist, as_generator(rng)))


def _gather(
    indptr: np.ndarray, indices: np.ndarray, picks: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Entries of the compressed rows `picks`: (indices, position in `picks`)."""
    starts = indptr[picks]
    lengths = indptr[picks + 1] - starts
    owner = np.repeat(np.arange(picks.size), lengths)
    shift = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
    return indices[np.arange(owner.size) + shift], owner


def _distinct(values: np.ndarray) -> np.ndarray:
    """Return ``np.unique(values)`` of integers, by sorting.

    NumPy's hash-based ``unique`` is 5 to 20 times slower on these index arrays.
    """
    ordered = np.sort(values)
    first = np.ones(ordered.size, dtype=bool)
    first[1:] = ordered[1:] != ordered[:-1]
    return ordered[first]


class _Peeler:
    """Structural peeling of received generator rows, on index arrays.

    Per received row it keeps the number of unrecovered columns and their sum (with
    one left, the sum is that column). ``steps`` lists, in order, the (rows,
    columns) recovered together: each row had exactly one unrecovered column, the
    one beside it. :meth:`inactivate` declares columns unknown-but-known (their
    values come from a small dense solve) until peeling resolves every column.
    """

    def __init__(self, pattern: _Pattern):
        self.pattern = pattern
        rows, m = pattern.G.shape
        self.received = np.zeros(rows, dtype=bool)
        self.recovered = np.zeros(m, dtype=bool)
        self.remaining = np.zeros(rows, dtype=np.int64)  # unrecovered columns per row
        self.unknown_sum = np.zeros(rows, dtype=np.int64)  # sum of their indices
        self.used = np.zeros(rows, dtype=bool)
        self.steps: list[tuple[np.ndarray, np.ndarray]] = []
        self.inactive = np.zeros(0, dtype=np.int64)
        self.count = 0
        self.unknown = m

    def record(self, rows: np.ndarray) -> np.ndarray:
        """Mark `rows` received without peeling them; return the new ones.

        A peeler that recorded rows this way no longer tracks peeling: only
        :meth:`record` may follow.
        """
        rows = _distinct(rows[~self.received[rows]])
        self.received[rows] = True
        self.count += rows.size
        return rows

    def add_rows(self, rows: np.ndarray) -> None:
        rows = self.record(rows)
        if rows.size == 0:
            return
        self.remaining[rows] = self.pattern.degree[rows]
        self.unknown_sum[rows] = self.pattern.index_sum[rows]
        if self.unknown < self.recovered.size:  # subtract the recovered columns
            G = self.pattern.G
            cols, owner = _gather(G.indptr, G.indices, rows)
            known = self.recovered[cols]
            owner, cols = owner[known], cols[known]
            self.remaining[rows] -= np.bincount(owner, minlength=rows.size)
            np.subtract.at(self.unknown_sum, rows[owner], cols)
        self._peel(rows[self.remaining[rows] == 1])

    def _peel(self, ripple: np.ndarray) -> None:
        while ripple.size:
            ripple = ripple[np.argsort(self.pattern.degree[ripple], kind="stable")]
            cols, first = np.unique(self.unknown_sum[ripple], return_index=True)
            rows = ripple[first]
            self.used[rows] = True
            self.steps.append((rows, cols))
            ripple = self._resolve(cols)

    def _resolve(self, cols: np.ndarray) -> np.ndarray:
        """Mark `cols` known; return the unused rows left with one unknown."""
        self.recovered[cols] = True
        self.unknown -= cols.size
        touched, owner = _gather(self.pattern.col_ptr, self.pattern.col_rows, cols)
        keep = self.received[touched]
        touched = touched[keep]
        np.subtract.at(self.remaining, touched, 1)
        np.subtract.at(self.unknown_sum, touched, cols[owner[keep]])
        ready = touched[(self.remaining[touched] == 1) & ~self.used[touched]]
        return _distinct(ready)

    def _most_shared_columns(self, pending: np.ndarray) -> np.ndarray:
        """Return the unknown columns in most of the lowest-degree pending rows.

        Up to :data:`_INACTIVATION_STEP` at once: a few more inactive columns
        (each also shortens the peeling chains, so the solve amplifies less) for
        several times fewer peeling restarts.
        """
        degree = self.remaining[pending]
        rows = pending[degree == degree.min()]
        G = self.pattern.G
        cols, _ = _gather(G.indptr, G.indices, rows)
        counts = np.bincount(cols[~self.recovered[cols]])
        step = min(_INACTIVATION_STEP, int(np.count_nonzero(counts)))
        return np.argsort(-counts, kind="stable")[:step].astype(np.int64)

    def inactivate(self, limit: int) -> bool:
        """Inactivate columns until all are resolved (False: more than `limit`)."""
        inactive = [self.inactive]
        total = self.inactive.size
        while self.unknown:
            pending = np.flatnonzero(self.received & ~self.used & (self.remaining > 1))
            if pending.size:
                cols = self._most_shared_columns(pending)
            else:  # in no received row: rank deficient
                cols = np.flatnonzero(~self.recovered)
            total += cols.size
            if total > limit:
                return False
            inactive.append(cols)
            self._peel(self._resolve(cols))
        self.inactive = np.concatenate(inactive).astype(np.int64)
        return True


def _inactivation_limit(m: int) -> int:
    return max(1, min(MAX_RESIDUAL, _MAX_RESIDUAL_ENTRIES // m))


def _fresh(peel: _Peeler) -> _Peeler:
    """One global peel of the received rows: shorter chains than arrival order."""
    fresh = _Peeler(peel.pattern)
    fresh.add_rows(np.flatnonzero(peel.received))
    return fresh


def _plan(peel: _Peeler, *, any_count: bool = False) -> _Solver | None:
    """Plan the solve of the received rows (None: too few rows, too many inactive)."""
    m = peel.pattern.G.shape[1]
    if peel.count < m and not any_count:
        return None
    fresh = _fresh(peel)
    if not fresh.inactivate(_inactivation_limit(m)):
        return None
    return _Solver(fresh)


def _round_blocks(
    pivots: scipy.sparse.csr_array, bounds: np.ndarray
) -> list[scipy.sparse.csr_array]:
    """Return views of each peeling round's pivot rows (``bounds[k]:bounds[k+1]``)."""
    indptr, m = pivots.indptr, pivots.shape[1]
    return [
        scipy.sparse.csr_array(
            (
                pivots.data[indptr[a] : indptr[b]],
                pivots.indices[indptr[a] : indptr[b]],
                indptr[a : b + 1] - indptr[a],
            ),
            shape=(b - a, m),
        )
        for a, b in itertools.pairwise(bounds)
    ]


class _Solver:
    """The linear map received values -> source values (symbolic plan).

    The peeled (row, column) pairs, in peeling order, form a unit lower
    triangular matrix ``T``, solved by forward substitution one peeling round at
    a time (a round's rows depend only on columns of earlier rounds, so each
    round is one sparse product, and planning costs no factorization); the
    inactive columns ``I`` are solved from the unused received rows by least
    squares on their Schur complement ``S = G_eI - G_eP T^-1 G_pI``.
    ``amplification`` estimates how much the map amplifies errors in the received
    values: ``||solve(e)|| / ||e||`` for a fixed random e.
    """

    def __init__(self, peel: _Peeler):
        G = peel.pattern.G
        self.m = G.shape[1]
        self._G = G
        self.rows = np.flatnonzero(peel.received)
        self.count = self.rows.size
        self.received_nnz = int(peel.pattern.degree[self.rows].sum())
        empty = np.zeros(0, dtype=np.int64)
        self.pivot_rows = np.concatenate([empty, *(r for r, _ in peel.steps)])
        self.pivot_cols = np.concatenate([empty, *(c for _, c in peel.steps)])
        self.extra_rows = np.flatnonzero(peel.received & ~peel.used)
        self.inactive = peel.inactive
        pivots = G[self.pivot_rows]
        bounds = np.cumsum([0, *(r.size for r, _ in peel.steps)])
        blocks = _round_blocks(pivots, bounds)
        self._rounds = list(zip(itertools.pairwise(bounds), blocks, strict=True))
        self.rank = self.m - self.inactive.size
        self._extra = G[self.extra_rows]
        self._extra_at = np.searchsorted(self.rows, self.extra_rows)
        if self.inactive.size:
            self._schur(self._extra, pivots)
        self.full_rank = self.rank == self.m
        self.amplification = math.inf
        if self.full_rank:
            probe = np.zeros((G.shape[0], 1))
            draws = np.random.default_rng(0).standard_normal(self.count)
            probe[self.rows, 0] = draws
            self.amplification = float(
                np.linalg.norm(self(probe)) / np.linalg.norm(draws)
            )

    def _schur(self, extra: scipy.sparse.csr_array, pivots: Any) -> None:
        self._extra_pivots = extra[:, self.pivot_cols]
        self._XB = self._triangular(pivots[:, self.inactive].toarray())
        S = extra[:, self.inactive].toarray() - self._extra_pivots @ self._XB
        if S.shape[0] == 0:
            return
        Q, R, order = scipy.linalg.qr(S, mode="economic", pivoting=True)
        diagonal = np.abs(np.diag(R))
        if diagonal.size == 0 or diagonal[0] == 0:
            return
        kept = int((diagonal > diagonal[0] * max(S.shape) * _EPS).sum())
        self.rank += kept
        self._least_squares = (Q, R, order)

    def residual(self, received: np.ndarray, X: np.ndarray) -> np.ndarray:
        """Return ``received - G[rows] @ X`` where it can be more than rounding.

        With no inactive column every pivot row holds by construction (its
        source value is its received value less a sum of known ones), so only
        the unused received rows are checked. Otherwise all of ``G @ X``, then
        the received rows: cheaper than gathering them.
        """
        if not self.inactive.size:
            return received[self._extra_at] - self._extra @ X
        return received - (self._G @ X)[self.rows]

    def _triangular(self, rhs: np.ndarray) -> np.ndarray:
        """``T^-1 rhs`` (`rhs` rows in pivot order), one peeling round at a time."""
        X = np.zeros((self.m, rhs.shape[1]))
        for (a, b), block in self._rounds:
            X[self.pivot_cols[a:b]] = rhs[a:b] - block @ X
        return X[self.pivot_cols]

    def __call__(self, Y: np.ndarray) -> np.ndarray:
        X = np.empty((self.m, Y.shape[1]))
        pivoted = self._triangular(Y[self.pivot_rows])
        if self.inactive.size:
            rhs = Y[self.extra_rows] - self._extra_pivots @ pivoted
            Q, R, order = self._least_squares
            solved = np.empty((order.size, rhs.shape[1]))
            solved[order] = scipy.linalg.solve_triangular(R, Q.T @ rhs)
            X[self.inactive] = solved
            pivoted -= self._XB @ solved
        X[self.pivot_cols] = pivoted
        return X


class LTDecoder(Decoder):
    """Peeling + inactivation decoder of an :class:`LTCode` (rows of any workers).

    Peeling is tracked from the rows alone as they arrive (structure only). The
    solve of the received rows is planned once per received set: peeling order
    (degree-one rows of the lowest degree first, in rounds, which keeps error
    propagation short), inactivation of a few columns when peeling stalls, a
    sparse triangular solve by rounds and a small dense least-squares solve for the
    inactive columns; a decode applies it and checks the product against the
    received rows (the unused ones when nothing was inactivated: the used ones
    hold by construction). While the estimated error amplification of that
    solve exceeds the code's ``max_amplification``, :attr:`needs_more` asks for
    more rows.

    Parameters
    ----------
    code : LTCode
        The code.
    context : RatelessContext
        From the encoded operands.
    """

    def __init__(self, code: LTCode, context: RatelessContext):
        self._code = code
        self._context = context
        self._peel = _Peeler(code._pattern)
        self._blocks: list[tuple[np.ndarray, np.ndarray]] = []
        self._solver: _Solver | None = None
        # failed plans are retried after `_retry_rows` more rows (or when idle)
        self._retry_rows = code.m // _RETRY_DIVISOR
        self._tried = code.m
        self._queried = -1
        self._idle_queries = 0

    def _rows(self, worker: int, start: int, stop: int) -> np.ndarray:
        w = check_int(worker, "piece.worker", min_value=0, max_value=self._code.n - 1)
        a, b = self._code.row_ranges[w]
        if not 0 <= start <= stop <= b - a:
            raise ValueError(
                f"piece rows [{start}, {stop}) are outside worker {w}'s {b - a} rows."
            )
        return np.arange(a + start, a + stop)

    def mark(self, worker: int, start: int, stop: int) -> None:
        """Record that rows ``[start, stop)`` of `worker` arrived (structure only).

        Parameters
        ----------
        worker, start, stop : int
            The piece's worker and row range.
        """
        self._receive(self._rows(worker, start, stop))

    def add(self, piece: Piece) -> None:
        """Record one piece (its rows and values).

        Parameters
        ----------
        piece : Piece
            A row range of a worker's product.
        """
        rows = self._rows(piece.worker, piece.start, piece.stop)
        if rows.size == 0:
            return
        value = np.asarray(piece.value, dtype=np.float64)
        if value.shape[:1] != (rows.size,):
            raise ValueError(
                f"piece of worker {piece.worker} must have {rows.size} rows, got "
                f"shape {value.shape}."
            )
        if not np.isfinite(value).all():
            raise NonFiniteResultError(
                f"worker {piece.worker} returned NaN or inf.", worker=piece.worker
            )
        self._blocks.append((rows, value.reshape(rows.size, -1)))
        self._receive(rows)

    def _receive(self, rows: np.ndarray) -> None:
        """Peel `rows` as they arrive until plans take over.

        From ``m + m / 50`` rows on, every decision comes from a plan (its own
        global peel), so arrival-order peeling would only delay it.
        """
        if self._peel.count < self._code.m + self._retry_rows:
            self._peel.add_rows(rows)
        else:
            self._peel.record(rows)

    def _current_solver(self, *, exact: bool = False) -> _Solver | None:
        """Return the plan of the received rows.

        A full-rank plan is kept until 1% of m more rows arrived (its rows still
        determine the product, and more rows only lower the amplification). A
        plan that failed (or the first one, from m rows on) is tried again once
        ``m / 50`` more rows arrived since, when `exact`, or when asked
        :data:`_IDLE_QUERIES` times with no new rows: near m rows a plan costs a
        global peel, many inactive columns and a dense solve, and the
        conditioning guard would wait for more rows anyway.
        """
        count, solver = self._peel.count, self._solver
        self._idle_queries = self._idle_queries + 1 if count == self._queried else 0
        self._queried = count
        if solver is not None and solver.count == count:
            return solver
        if solver is not None and solver.full_rank:
            stale = count - solver.count >= max(1, self._code.m // 100)
        else:
            stale = (
                exact
                or not self._peel.unknown  # full rank: the guard needs the plan
                or self._idle_queries >= _IDLE_QUERIES
                or count >= self._tried + self._retry_rows
            )
        if stale:
            self._solver = solver = _plan(self._peel)
            if solver is None or not solver.full_rank:
                self._tried = count
        return solver

    @property
    def is_decodable(self) -> bool:
        """Whether the received rows have full column rank (peeled or solved).

        Exact for fewer than 50 source rows, when peeling in arrival order
        resolves every row (it runs until ``1.02 m`` rows), and when asked again
        with no new rows (twice, for instance by a waiting run's polls). While
        rows keep arriving, a received set that failed is tested again once
        ``m / 50`` more rows arrived (the first test at ``1.02 m``): a rank test
        near m costs far more than its rows, and the conditioning guard would
        wait for more rows anyway.
        """
        if self._peel.count >= self._code.m and not self._peel.unknown:
            return True
        solver = self._current_solver()
        return solver is not None and solver.full_rank

    @property
    def progress(self) -> tuple[int, int]:
        """``(received rows, m)``."""
        return self._peel.count, self._code.m

    @property
    def needs_more(self) -> bool:
        """Decodable, but the solve would amplify rounding more than allowed."""
        return self.condition_number > self._code.max_amplification

    @property
    def condition_number(self) -> float:
        """Estimated error amplification of the decode (NaN: not decodable yet)."""
        solver = self._current_solver()
        if solver is None or not solver.full_rank:
            return float("nan")
        return solver.amplification

    def decode(self) -> np.ndarray:
        """Return the product from the received rows.

        Returns
        -------
        numpy.ndarray
            ``A @ B`` (a vector for a vector B).

        Raises
        ------
        NotEnoughResultsError
            The received rows do not have full column rank (the message gives the
            rank reached).
        DecodingError
            The decoded product does not satisfy the received rows.
        """
        solver = self._current_solver(exact=True)
        if solver is None or not solver.full_rank:
            raise NotEnoughResultsError(self._shortfall())
        Y = np.empty((self._code.generator.shape[0], self._blocks[0][1].shape[1]))
        for rows, value in self._blocks:
            Y[rows] = value
        X = self._refined(solver, Y)
        if solver.amplification * _EPS > TRUST_LIMIT:
            warnings.warn(
                IllConditionedWarning(
                    f"the rateless decode amplifies rounding errors by about "
                    f"{solver.amplification:.3g}; the product may be inaccurate.",
                    solver.amplification,
                ),
                stacklevel=2,
            )
        return X[:, 0] if self._context.is_vector else X

    def _refined(self, solver: _Solver, Y: np.ndarray) -> np.ndarray:
        """Solve, refine while the residual shrinks, check the received rows.

        The plan is exact in exact arithmetic, but with inactive columns its
        intermediate values (the triangular solve before the inactive columns are
        known) may be large, so a refinement step on the residual recovers the
        accuracy the map allows. Without them each source value is one sum of
        received and earlier values, and there is nothing to refine.
        """
        received = Y[solver.rows]
        X = solver(Y)
        residual = solver.residual(received, X)
        tolerance = self._tolerance(solver, X, received)
        for _ in range(_REFINEMENTS if solver.inactive.size else 0):
            if float(np.linalg.norm(residual)) <= tolerance / 1024:
                break
            Y[solver.rows] = residual
            X = X + solver(Y)
            residual = solver.residual(received, X)
        norm = float(np.linalg.norm(residual))
        if norm > tolerance:
            raise DecodingError(
                f"the decoded product does not satisfy the {solver.rows.size} "
                f"received rows (residual {norm:.3g} > tolerance "
                f"{tolerance:.3g}): a worker returned a wrong result or the system "
                "is too ill-conditioned."
            )
        return X

    def _tolerance(self, solver: _Solver, X: np.ndarray, Y: np.ndarray) -> float:
        """``1024 eps sqrt(rows)`` times the scale of the received system."""
        scale = (
            math.sqrt(solver.received_nnz) * float(np.linalg.norm(X))
            + float(np.linalg.norm(Y))
            + self._context.scale
        )
        return 1024 * _EPS * math.sqrt(solver.rows.size) * scale

    def _shortfall(self) -> str:
        peel, m = self._peel, self._code.m
        solver = _plan(peel, any_count=True)
        if solver is None:
            unknown = _fresh(peel).unknown
            return (
                f"peeling stopped with {unknown} of m={m} source rows unknown "
                f"(more than the {_inactivation_limit(m)} the decoder inactivates) "
                f"after {peel.count} received rows: rank at least {m - unknown} "
                "reached; wait for more rows."
            )
        return (
            f"the {peel.count} received rows have rank {solver.rank} < m={m}: need "
            "more encoded rows (any rows, from any worker)."
        )
