r"""The decoding machinery every code shares: coded *units* and an incremental decoder.

A code here has ``K`` source blocks ``X_0..X_{K-1}`` (each ``rows x width``) and a
generator ``G`` of shape ``(N, K)``: coded unit ``u`` is
``Y_u = sum_j G[u, j] X_j``. Worker ``i`` holds the consecutive units
``offsets[i] .. offsets[i + 1] - 1``, stacked, so row ``r`` of its product is row
``r % rows`` of unit ``offsets[i] + r // rows``.

- block codes (MDS, replication, uncoded): one unit per worker, ``rows = ceil(m / K)``;
- the row-MDS code of unequal loads: ``rows = 1``, ``K = m``, worker i holds
  ``loads[i]`` units;
- polynomial codes: one unit per worker, ``G`` is a Vandermonde matrix and the
  sources are the blocks ``A_j B_k``.

Encoding splits the rows of A into the K source blocks (zero-padding only the last
ones) and computes only the units that are not copies of a source, in one chunked
product ``G[parity] @ sources``; a worker whose units are consecutive sources gets a
read-only view of A's rows (uncoded, replication and the systematic part of MDS
codes copy nothing).

Row ``t`` of the sources is determined once, among the units whose row ``t`` has
arrived, the unit rows (``G[u] = e_j``) cover some sources and the other units are at
least as many as the sources still missing (every square submatrix of the
non-identity rows is assumed invertible: the MDS property). Rows with the same
arrival pattern are decoded together by one solve.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import warnings
from abc import abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.linalg

from coded.codes import _consistency as consistency
from coded.codes import _fields as fields
from coded.codes._base import Code, Decoder, EncodedOperands, Piece
from coded.codes._blas import apply_decoding, one_blas_thread
from coded.codes._consistency import Verify
from coded.errors import (
    DecodingError,
    IllConditionedWarning,
    InconsistentResultsError,
    NonFiniteResultError,
)
from theory.validation import check_int, is_sparse

if TYPE_CHECKING:
    from galois import FieldArray

__all__ = [
    "MAX_CONDITION",
    "UnitCode",
    "UnitContext",
    "UnitDecoder",
    "check_max_condition",
    "split_blocks",
]

MAX_CONDITION = 1e6
"""Default guard: a real decode whose system has a larger condition number waits for
more results (least squares over them) and warns if it must decode anyway; relative
errors then stay below about ``MAX_CONDITION * eps = 2.2e-10`` (times a small
factor)."""


def check_max_condition(value: object) -> float:
    """Validate a conditioning threshold: a real number > 1 (``inf`` disables)."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating):
        raise TypeError(
            f"`max_condition` must be a real number, got {type(value).__name__}."
        )
    value = float(value)
    if not value > 1:  # also rejects NaN
        raise ValueError(
            "`max_condition` must be > 1 (a condition number is >= 1), "
            f"got max_condition={value}."
        )
    return value


@dataclass(frozen=True, slots=True)
class _System:
    """Received units of one arrival pattern: source copies and the others."""

    known: np.ndarray
    positions: np.ndarray
    missing: np.ndarray
    others: np.ndarray


@dataclass(frozen=True, slots=True)
class _Plan:
    """How a decode solves: other units used per pattern, worst cond, units used."""

    rows: tuple[int, ...]
    condition: float
    units: int


def split_blocks(X: np.ndarray, K: int, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Split `X` ``(m, d)`` into K flat row blocks, zero-padded to ``K * rows`` rows.

    Returns ``(full, tail)``: ``full`` ``(whole, rows * d)`` holds the blocks that lie
    entirely inside X (a view when X is C-contiguous), ``tail``
    ``(K - whole, rows * d)`` the rest, zero-padded (a small copy).
    """
    m, d = X.shape
    whole = min(m // rows, K)
    full = X[: whole * rows].reshape(whole, rows * d)
    tail = np.zeros((K - whole, rows * d), dtype=X.dtype)
    rest = X[whole * rows :]
    tail.reshape(-1)[: rest.size] = rest.reshape(-1)
    return full, tail


def _take(array: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``array[index]``, as a slice (a view) when `index` is a consecutive range."""
    if index.size and np.all(np.diff(index) == 1):
        return array[int(index[0]) : int(index[0]) + index.size]
    return array[index]


def _runs(kind: np.ndarray, index: np.ndarray) -> list[tuple[int, int, int]]:
    """Maximal runs ``(kind, start, stop)`` of consecutive indices of one kind."""
    if kind.size == 0:
        return [(2, 0, 0)]
    breaks = np.flatnonzero((np.diff(kind) != 0) | (np.diff(index) != 1)) + 1
    starts = np.concatenate([[0], breaks])
    stops = np.concatenate([breaks, [kind.size]])
    return [
        (int(kind[a]), int(index[a]), int(index[a]) + int(b - a))
        for a, b in zip(starts, stops, strict=True)
    ]


@dataclass(frozen=True, slots=True, kw_only=True)
class UnitContext:
    """What decoding needs besides the pieces (opaque to the runtime).

    Parameters
    ----------
    m, c : int
        Rows and columns of the product (before padding; ``c = 1`` for a vector).
    rows, width : int
        Shape of one source block / one coded unit.
    is_vector : bool
        Whether B was a vector (the product is then returned 1-D).
    output : {"real", "float32", "field", "signed", "residue"}
        How decoded residues are returned (see ``coded.codes._fields``).
    a_bound : int
        ``d max|A|`` for signed integers over GF(p) (bounds a new B in
        :meth:`UnitCode.encode_right`), else 0.
    left_noise : float or None
        Over the reals: bound on the rounding error of one entry of a worker's
        result per unit 2-norm of B's column (``coded.codes._consistency.row_noise``);
        None when unknown (GF(p), two-sided codes).
    noise : tuple of float or None
        Over the reals: that bound for each column of B (None when unknown); the
        tolerance of the Freivalds checks (``docs/theory/verification.md``).
    unit_noise : array, shape (N, rows), or None
        Over the reals: the bound per coded row of every unit, per unit 2-norm of
        B's column (its largest entry is `left_noise`); the per-entry tolerance of
        the redundancy check.
    right_norms : tuple of float or None
        2-norm of each column of B (with `unit_noise`).
    """

    m: int
    c: int
    rows: int
    width: int
    is_vector: bool
    output: fields.Output
    a_bound: int = 0
    left_noise: float | None = None
    noise: tuple[float, ...] | None = None
    unit_noise: np.ndarray | None = dataclasses.field(
        default=None, compare=False, repr=False
    )
    right_norms: tuple[float, ...] | None = None

    def with_right(self, B: np.ndarray) -> dict[str, Any]:
        """Return the noise fields for a right operand `B` (empty when unknown)."""
        if self.left_noise is None:
            return {}
        columns = B.reshape(B.shape[0], -1).astype(np.float64, copy=False)
        norms = np.linalg.norm(columns, axis=0)
        return {
            "noise": tuple((self.left_noise * norms).tolist()),
            "right_norms": tuple(norms.tolist()),
        }

    def entry_noise(self, units: np.ndarray, ts: np.ndarray) -> np.ndarray | None:
        """Per-entry rounding bound of rows `ts` of `units`, shape (|units|, |ts| c)."""
        if self.unit_noise is None or self.right_norms is None:
            return None if self.noise is None else np.tile(self.noise, ts.size)
        rows = self.unit_noise[np.ix_(units, ts)]
        return (rows[:, :, None] * np.asarray(self.right_norms)).reshape(units.size, -1)


def _row_norms(X: Any) -> np.ndarray:
    """2-norm of every row of `X` (float64; `X` dense or scipy.sparse)."""
    if is_sparse(X):
        return np.sqrt(np.asarray(X.multiply(X).sum(axis=1), np.float64).ravel())
    return np.sqrt(np.einsum("ij,ij->i", X, X, dtype=np.float64))


class UnitCode(Code):
    """Base of the codes built on coded units (see the module docstring).

    Subclasses set ``n``, ``_G`` (read-only, float64 or int64 residues), ``_p``,
    ``_offsets`` (length ``n + 1``) in ``__init__`` by calling :meth:`_setup`, and
    implement :meth:`encode_operands` (validation, then :meth:`_encode`),
    :meth:`_encode` and :meth:`_assemble`.
    """

    _threshold_name = "k"
    _unit_name = "results"
    _max_condition = MAX_CONDITION
    _units_per_result = 1  # units every worker holds, when progress counts results
    supports_verify = True

    @property
    def max_condition(self) -> float:
        """The decoder's conditioning guard (real codes; ``inf``: off)."""
        return self._max_condition

    @property
    def unit_offsets(self) -> np.ndarray:
        """Unit layout: each worker's first unit, then the total (length ``n + 1``).

        Worker ``i`` holds units ``unit_offsets[i]`` to ``unit_offsets[i + 1] - 1``
        (a read-only int64 array).
        """
        return self._offsets

    def _setup(self, n: int, G: np.ndarray, p: int | None, loads: Iterable[int]):
        self.n = n
        self._p = p
        G = np.array(G, dtype=np.float64 if p is None else np.int64)
        G.setflags(write=False)
        self._G = G
        self._offsets = np.concatenate([[0], np.cumsum(list(loads), dtype=np.int64)])
        self._offsets.setflags(write=False)
        is_unit = (np.count_nonzero(G, axis=1) == 1) & np.any(G == 1, axis=1)
        self._unit_source = np.where(is_unit, np.argmax(G, axis=1), -1)
        self._unit_source.setflags(write=False)

    # -- the Code interface ------------------------------------------------------
    @property
    def field(self) -> type[FieldArray] | None:
        """The galois field class GF(p), or ``None`` for the real numbers."""
        return None if self._p is None else fields.galois_field(self._p)

    @property
    def p(self) -> int | None:
        """The prime of GF(p), or ``None`` over the reals (does not load galois)."""
        return self._p

    @property
    def generator(self) -> np.ndarray:
        """The generator ``G`` (read-only; int64 residues over GF(p))."""
        return self._G

    @property
    def multiply(self):
        """Picklable worker-side product ``(left, right) -> left @ right``."""
        if self._p is None:
            return fields.multiply_real
        return functools.partial(fields.multiply_mod, p=self._p)

    def decoder(
        self, encoded: EncodedOperands, *, verify: Verify = "off", wrong: int = 1
    ) -> UnitDecoder:
        """Return a fresh incremental decoder for `encoded`.

        Parameters
        ----------
        encoded : EncodedOperands
            What :meth:`encode_operands` of this code returned.
        verify : {"off", "detect", "correct"}
            Check the results against each other before decoding (see
            :class:`UnitDecoder`).
        wrong : int
            Wrong workers to detect (``"detect"``) or correct (``"correct"``).

        Returns
        -------
        UnitDecoder
        """
        if not isinstance(encoded, EncodedOperands) or not isinstance(
            encoded.context, UnitContext
        ):
            raise TypeError(
                "`encoded` must be the EncodedOperands returned by this code's "
                f"encode_operands, got {type(encoded).__name__}."
            )
        return UnitDecoder(self, encoded.context, verify=verify, wrong=wrong)

    def is_decodable(self, workers: Iterable[int]) -> bool:
        """Whether whole results from `workers` suffice to decode.

        Parameters
        ----------
        workers : iterable of int
            Worker indices ``0 <= i < n``.

        Returns
        -------
        bool
        """
        received = np.zeros((self._G.shape[0], 1), dtype=bool)
        for worker in workers:
            i = self._check_worker(worker)
            received[self._offsets[i] : self._offsets[i + 1]] = True
        return bool(self._usable(received).min() >= self._G.shape[1])

    # -- helpers for subclasses ----------------------------------------------------
    def _check_worker(self, worker: object) -> int:
        return check_int(worker, "worker", min_value=0, max_value=self.n - 1)

    def _encode_workers(self, X: np.ndarray, rows: int) -> tuple[np.ndarray, ...]:
        """Per-worker coded rows (``(load * rows, d)``, read-only) of the blocks of X.

        X ``(m, d)`` is split into K blocks of `rows` rows (zero-padded); units equal
        to a source are views of X, the others come from one chunked product.
        """
        full, tail = split_blocks(X, self._G.shape[1], rows)
        source = self._unit_source
        parity = source < 0
        coded = fields.encode_product(self._G[parity], full, tail, self._p)
        # each unit is a row of one of three arrays: 0 full, 1 tail, 2 coded
        whole = full.shape[0]
        kind = np.where(parity, 2, (source >= whole).astype(np.int64))
        index = np.where(parity, np.cumsum(parity) - 1, source - whole * kind)
        arrays = (full, tail, coded)
        parts = []
        for i in range(self.n):
            a, b = self._offsets[i], self._offsets[i + 1]
            pieces = [
                arrays[k][start:stop] for k, start, stop in _runs(kind[a:b], index[a:b])
            ]
            part = pieces[0] if len(pieces) == 1 else np.concatenate(pieces)
            part = part.reshape(-1, X.shape[1])
            part.setflags(write=False)
            parts.append(part)
        return tuple(parts)

    def _row_context(
        self, ops: fields.Operands, lefts: tuple[np.ndarray, ...], *, m: int, rows: int
    ) -> UnitContext:
        """Context of a row code's product ``A @ B`` (A coded in blocks of `rows`).

        `lefts`: the workers' coded rows, whose norms enter the rounding bound.
        """
        c = 1 if ops.is_vector else ops.B.shape[1]
        context = UnitContext(
            m=m,
            c=c,
            rows=rows,
            width=c,
            is_vector=ops.is_vector,
            output=ops.output,
            a_bound=ops.a_bound,
        )
        if self._p is not None:
            return context
        A = ops.A
        coded = np.concatenate([_row_norms(left) for left in lefts]).reshape(-1, rows)
        unit_noise = consistency.row_noise(
            self._G, _row_norms(A), coded, A.shape[1], A.dtype
        )
        unit_noise.setflags(write=False)
        context = dataclasses.replace(
            context, left_noise=float(unit_noise.max()), unit_noise=unit_noise
        )
        return dataclasses.replace(context, **context.with_right(ops.B))

    @abstractmethod
    def _encode(self, ops: fields.Operands) -> EncodedOperands:
        """Encode validated operands (``encode_operands`` / ``encode_residues``)."""

    def encode_residues(self, A: Any, B: Any) -> EncodedOperands:
        """Encode ``A @ B`` for residues over GF(p), without galois.

        The entry point of the CRT code (:class:`~coded.codes.ExactCode`): operands
        are taken as field elements given by their residues, and decoding returns
        int64 residues in ``[0, p)`` (never a galois ``FieldArray``).

        Parameters
        ----------
        A : array_like of int, shape (m, d)
            Residues in ``[0, p)`` (int64 inputs are used without a copy).
        B : array_like of int, shape (d, c) or (d,)
            Residues in ``[0, p)``.

        Returns
        -------
        EncodedOperands
            As :meth:`encode_operands`.

        Raises
        ------
        ValueError
            If the code is over the reals, an entry lies outside ``[0, p)``, an
            operand is empty or the shapes do not chain.
        TypeError
            If an operand is not an integer array.
        """
        if self._p is None:
            raise ValueError(
                "`encode_residues` needs a code over GF(p), got a code over the "
                "reals (field=None)."
            )
        return self._encode(fields.prepare_residues(A, B, self._p))

    def encode_right(self, encoded: EncodedOperands, B: Any) -> EncodedOperands:
        """Encode a new right operand B against an already encoded A (row codes).

        A row code encodes only A and shares B, so ``A @ B`` for many B needs A
        encoded once: the result keeps the (same) ``lefts`` of `encoded` and
        holds the new B and the context of the new product.

        Parameters
        ----------
        encoded : EncodedOperands
            What :meth:`encode_operands` (or :meth:`encode_right`) of this code
            returned; its B is ignored.
        B : array_like, shape (d, c) or (d,)
            The new right operand, with the semantics of A's encoding (reals,
            field elements or signed integers over GF(p)).

        Returns
        -------
        EncodedOperands
            As :meth:`encode_operands` would return for ``(A, B)``.

        Raises
        ------
        ValueError
            For a two-sided code (polynomial: it encodes B too), or if B does not
            chain with A, is empty or breaks the exactness bound.
        TypeError
            If `encoded` is not this kind of code's, or B's type does not match.

        Examples
        --------
        >>> import numpy as np
        >>> from coded.codes import MDSCode
        >>> code, A = MDSCode(3, 2), np.arange(6.0).reshape(3, 2)
        >>> encoded = code.encode_right(code.encode_operands(A, np.zeros(2)), [1, 1])
        >>> results = {i: encoded.lefts[i] @ encoded.right(i) for i in (0, 2)}
        >>> np.round(code.decode_results(encoded, results), 9).tolist()
        [1.0, 5.0, 9.0]
        """
        self.decoder(encoded)  # checks the type of `encoded`
        if encoded.rights is not None:
            raise ValueError(
                f"{type(self).__name__} encodes B together with A (a two-sided "
                "code): it cannot reuse an encoded A; use a row code (MDS, "
                "replication, uncoded, row-MDS)."
            )
        context = encoded.context
        d = int(np.shape(encoded.lefts[0])[1])
        B_ = fields.prepare_right(B, self._p, context.output, d, context.a_bound)
        c = 1 if B_.ndim == 1 else B_.shape[1]
        B_ = B_.view()
        B_.setflags(write=False)
        return dataclasses.replace(
            encoded,
            shared_right=B_,
            context=dataclasses.replace(
                context,
                c=c,
                width=c,
                is_vector=B_.ndim == 1,
                **context.with_right(B_),
            ),
        )

    def repair(
        self, shares: Mapping[int, Any], workers: Iterable[int]
    ) -> dict[int, np.ndarray]:
        """Recompute the coded shares of `workers` from surviving shares.

        Erasure-code repair: the sources are solved from any decodable set of
        shares (``S``) and re-encoded, ``share_i = G_i G_S^{-1} shares_S``; A is
        never needed.

        Parameters
        ----------
        shares : mapping of int to array
            Surviving coded shares ``{worker: encoded.lefts[worker]}`` (int64
            residues over GF(p)); their workers must be a decodable set.
        workers : iterable of int
            The workers whose shares to rebuild.

        Returns
        -------
        dict of int to numpy.ndarray
            ``{worker: share}``, equal to ``encode_operands(A, B).lefts[worker]``
            (exactly over GF(p), to rounding over the reals).

        Raises
        ------
        DecodingError
            If the surviving workers are not a decodable set.

        Examples
        --------
        >>> import numpy as np
        >>> from coded.codes import MDSCode
        >>> code, A = MDSCode(4, 2, field=65537), np.arange(8).reshape(4, 2)
        >>> lefts = code.encode_operands(A, np.ones(2, dtype=int)).lefts
        >>> rebuilt = code.repair({1: lefts[1], 3: lefts[3]}, [0])
        >>> bool(np.array_equal(rebuilt[0], lefts[0]))
        True
        """
        survivors = sorted({self._check_worker(j) for j in shares})
        targets = [self._check_worker(i) for i in workers]
        if not self.is_decodable(survivors):
            raise DecodingError(
                f"cannot repair: the shares of workers {survivors} are not a "
                "decodable set."
            )
        offsets = self._offsets.tolist()
        arrays = {j: np.asarray(shares[j]) for j in survivors}
        loaded = [j for j in survivors if offsets[j + 1] > offsets[j]]
        sample = arrays[loaded[0]]
        rows = sample.shape[0] // (offsets[loaded[0] + 1] - offsets[loaded[0]])
        d = sample.shape[1]
        N, K = self._G.shape
        values = np.zeros((N, rows, d), dtype=sample.dtype)
        received = np.zeros((N, rows), dtype=bool)
        for j in loaded:
            values[offsets[j] : offsets[j + 1]] = arrays[j].reshape(-1, rows, d)
            received[offsets[j] : offsets[j + 1]] = True
        plan = self._plan(received)
        sources = self._solve_units(values, received, plan).reshape(K, rows * d)
        return {
            i: fields.matmul(
                self._G[offsets[i] : offsets[i + 1]], sources, self._p
            ).reshape(-1, d)
            for i in targets
        }

    def _usable(self, received: np.ndarray) -> np.ndarray:
        """Per source row: distinct sources covered + non-unit units received."""
        K = self._G.shape[1]
        unit = self._unit_source >= 0
        covered = np.zeros((K, received.shape[1]), dtype=bool)
        np.logical_or.at(covered, self._unit_source[unit], received[unit])
        return covered.sum(axis=0) + received[~unit].sum(axis=0)

    def _shortfall(self, got: int) -> str:
        K = self._G.shape[1] // self._units_per_result
        return f"need {self._threshold_name}={K} {self._unit_name}, got {got}."

    def _patterns(self, received: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """``(rows t, units received at those rows)`` per distinct arrival pattern."""
        if np.all(received == received[:, :1]):  # whole results: one pattern
            return [(np.arange(received.shape[1]), np.flatnonzero(received[:, 0]))]
        patterns, inverse = np.unique(received.T, axis=0, return_inverse=True)
        return [
            (np.flatnonzero(inverse.ravel() == index), np.flatnonzero(pattern))
            for index, pattern in enumerate(patterns)
        ]

    def _system(self, units: np.ndarray) -> _System:
        """Which received `units` decode: copies of sources, then the solved rest."""
        K = self._G.shape[1]
        source = self._unit_source[units]
        first: dict[int, int] = {}
        for position, j in enumerate(source.tolist()):
            if j >= 0:
                first.setdefault(j, position)
        known = np.array(sorted(first), dtype=np.int64)
        positions = np.array([first[j] for j in known.tolist()], dtype=np.int64)
        missing = np.setdiff1d(np.arange(K), known)
        others = np.flatnonzero(source < 0)
        return _System(known, positions, missing, others)

    def _condition(self, units: np.ndarray, system: _System, rows: int) -> float:
        """2-norm condition number of the system solved with `rows` other units."""
        if system.missing.size == 0:
            return 1.0
        M = self._G[units[system.others[:rows]]][:, system.missing]
        if rows == system.missing.size:
            return fields.condition_number(M)
        s = np.linalg.svd(M, compute_uv=False)
        return math.inf if s[-1] == 0 else float(s[0] / s[-1])

    def _plan(self, received: np.ndarray) -> _Plan:
        """Plan the solves: square, or least squares over every received unit.

        Least squares where the square system's condition number exceeds
        :attr:`max_condition` and it lowers it.
        """
        rows, conditions, units_used = [], [], 0
        for _, units in self._patterns(received):
            system = self._system(units)
            used = system.missing.size
            condition = math.nan
            if self._p is None:
                condition = self._condition(units, system, used)
                extra = system.others.size
                if condition > self._max_condition and extra > used:
                    least_squares = self._condition(units, system, extra)
                    if least_squares < condition:
                        condition, used = least_squares, extra
            rows.append(used)
            conditions.append(condition)
            units_used = max(units_used, system.known.size + used)
        return _Plan(tuple(rows), max(conditions), units_used)

    def _solve_units(
        self, values: np.ndarray, received: np.ndarray, plan: _Plan
    ) -> np.ndarray:
        """Solve the sources ``(K, rows, width)`` from units ``(N, rows, width)``."""
        K = self._G.shape[1]
        _, rows, width = values.shape
        patterns = self._patterns(received)
        if len(patterns) == 1:
            units = patterns[0][1]
            system = self._system(units)
            if self._p is None and system.missing.size and rows * width >= K:
                T = np.zeros((K, values.shape[0]))  # wide: one product, no copies
                T[:, units] = self._real_decoding(units, system, plan.rows[0])
                solved = apply_decoding(T, values.reshape(values.shape[0], -1))
                return solved.astype(values.dtype, copy=False).reshape(K, rows, width)
            rhs = _take(values, units).reshape(units.size, -1)
            solved = self._solve_pattern(units, rhs, plan.rows[0])
            return solved.reshape(K, rows, width)
        sources = np.zeros((K, rows, width), dtype=values.dtype)
        for (ts, units), used in zip(patterns, plan.rows, strict=True):
            rhs = values[units][:, ts, :].reshape(units.size, -1)
            sources[:, ts, :] = self._solve_pattern(units, rhs, used).reshape(
                K, ts.size, -1
            )
        return sources

    def _real_decoding(
        self, units: np.ndarray, system: _System, used: int
    ) -> np.ndarray:
        r"""Return ``T`` (``K x len(units)``): sources ``= T @`` the units' rows.

        Copies of sources are taken as they are; the missing sources ``S_m`` come
        from the first `used` other units ``R = G_m S_m + G_k S_k``:
        ``S_m = G_m^+ (R - G_k S_k)``, with ``G_m^+`` the inverse (a square
        system) or the pseudo-inverse (least squares, the conditioning guard).
        One product applies it: LAPACK's solve would first copy the wide right
        side to column order (3-5x slower); the forward error is the solve's
        order, cond(G_m) eps (Higham, *Accuracy and Stability of Numerical
        Algorithms*, 14.1).
        """
        known, positions, missing = system.known, system.positions, system.missing
        chosen = system.others[:used]
        G = self._G[units[chosen]]
        square = used == missing.size
        inverse = (np.linalg.inv if square else np.linalg.pinv)(G[:, missing])
        T = np.zeros((self._G.shape[1], units.size))
        T[known, positions] = 1.0
        T[np.ix_(missing, chosen)] = inverse
        T[np.ix_(missing, positions)] = -inverse @ G[:, known]
        return T

    def _solve_pattern(
        self, units: np.ndarray, rhs: np.ndarray, used: int
    ) -> np.ndarray:
        """Solve for the K sources from the received `units` (rows of `rhs`).

        Copies of sources are taken as they are; the missing sources come from the
        first `used` other units: a square solve, or least squares when `used`
        exceeds the number of missing sources (the conditioning guard).
        """
        K, p = self._G.shape[1], self._p
        system = self._system(units)
        known, missing = system.known, system.missing
        if missing.size == 0:  # known == 0..K-1: the sources arrived as they are
            return _take(rhs, system.positions)
        if p is None and rhs.shape[1] >= K:  # wide: one product, no copies
            solved = apply_decoding(self._real_decoding(units, system, used), rhs)
            return solved.astype(rhs.dtype, copy=False)
        # narrow (a few rows of partial results per pattern): solving the missing
        # sources costs less than building T
        out = np.zeros((K, rhs.shape[1]), dtype=rhs.dtype)
        out[known] = _take(rhs, system.positions)
        chosen = system.others[:used]
        G = self._G[units[chosen]]
        right = rhs[chosen]
        if known.size:
            right = right - fields.matmul(G[:, known], out[known], p)
            if p is not None:
                right = np.mod(right, p)
        if p is not None:
            out[missing] = fields.solve(G[:, missing], right, p)
        elif used == missing.size:
            lu = scipy.linalg.lu_factor(G[:, missing], check_finite=False)
            out[missing] = scipy.linalg.lu_solve(lu, right, check_finite=False)
        else:
            out[missing] = np.linalg.lstsq(G[:, missing], right, rcond=None)[0]
        return out

    @abstractmethod
    def _assemble(self, sources: np.ndarray, context: UnitContext) -> np.ndarray:
        """Product (in residues) from decoded sources ``(K, rows, width)``."""

    # -- the simple user-facing decode -----------------------------------------------
    def _decode_mapping(self, results: Mapping[int, Any]) -> Any:
        """Decode from whole results ``{worker: result}`` (shapes inferred)."""
        if not isinstance(results, Mapping):
            raise TypeError(
                "`results` must be a mapping {worker: result}, "
                f"got {type(results).__name__}."
            )
        if not results:
            raise DecodingError(self._shortfall(0))
        worker, value = next(iter(results.items()))
        context = self._context_from_result(self._check_worker(worker), value)
        decoder = UnitDecoder(self, context)
        for worker, value in results.items():
            i = self._check_worker(worker)
            stop = int(self._offsets[i + 1] - self._offsets[i]) * context.rows
            decoder.add(Piece(worker=i, start=0, stop=stop, value=value))
        return decoder.decode()

    def _context_from_result(self, worker: int, value: Any) -> UnitContext:
        array = np.asarray(
            value.view(np.ndarray) if fields.is_field_array(value) else value
        )
        if array.ndim not in (1, 2) or array.size == 0:
            raise ValueError(
                f"`results[{worker}]` must be a non-empty 1-D or 2-D array, "
                f"got shape {array.shape}."
            )
        load = int(self._offsets[worker + 1] - self._offsets[worker])
        if array.shape[0] % max(load, 1):
            raise ValueError(
                f"`results[{worker}]` must have a multiple of {load} rows, "
                f"got shape {array.shape}."
            )
        if self._p is None:
            output = fields.real_output(array)
        else:
            output = "field" if fields.is_field_array(value) else "signed"
        return self._simple_context(
            rows=array.shape[0] // max(load, 1),
            width=1 if array.ndim == 1 else array.shape[1],
            is_vector=array.ndim == 1,
            output=output,
        )

    def _simple_context(
        self, *, rows: int, width: int, is_vector: bool, output: fields.Output
    ) -> UnitContext:
        """Context of an unpadded product whose units are ``rows x width``."""
        return UnitContext(
            m=self._G.shape[1] * rows,
            c=width,
            rows=rows,
            width=width,
            is_vector=is_vector,
            output=output,
        )


class UnitDecoder(Decoder):
    """Incremental decoder of a :class:`UnitCode` (pure; no I/O).

    Pieces may cover any row range of a worker's product; a row of the product is
    decoded once enough units have delivered that row. Over the reals a decodable
    set whose system has a condition number above the code's ``max_condition``
    :attr:`needs_more` pieces: those added are used by least squares over every
    received unit (the guard, ``docs/theory/conditioning.md``); pieces added once
    the set is decodable and well conditioned are ignored.

    With verification on, the decoder also :attr:`needs_more` pieces until every
    row stays decodable without any ``wrong`` workers (``"detect"``) or any
    ``2 wrong`` (``"correct"``), and :meth:`decode` checks that one product
    explains every result it holds (exactly over GF(p), within the workers'
    rounding bound over the reals: ``docs/theory/verification.md``). A
    disagreement raises :class:`~coded.errors.InconsistentResultsError`
    (``"detect"``); ``"correct"`` decodes without the wrong workers and names
    them in :attr:`suspect_workers`.

    Parameters
    ----------
    code : UnitCode
        The code.
    context : UnitContext
        From the code's ``encode_operands``.
    verify : {"off", "detect", "correct"}
        Whether and how to check the results against each other.
    wrong : int
        Wrong workers to detect or correct.
    """

    def __init__(
        self,
        code: UnitCode,
        context: UnitContext,
        *,
        verify: Verify = "off",
        wrong: int = 1,
    ):
        self._code = code
        self._context = context
        self._verify, self._wrong = consistency.check_verify(verify, wrong)
        if self._verify != "off" and code._p is None and context.noise is None:
            raise ValueError(
                f"`verify={verify!r}` over the reals needs the operands' rounding "
                "bound, which only the row codes' encode_operands records; use "
                "verify='off' or a code over GF(p)."
            )
        self._spare = consistency.spare_workers(self._verify, self._wrong)
        N = code._G.shape[0]
        self._values: np.ndarray | None = None  # allocated by the first value
        self._is_marked = False  # some rows arrived without values (see mark)
        self._received = np.zeros((N, context.rows), dtype=bool)
        self._usable = np.zeros(context.rows, dtype=np.int64)
        self._cached_plan: _Plan | None = None
        self._cached_spares: bool | None = None
        self._suspects: tuple[int, ...] = ()
        self._floor = float("nan")

    def add(self, piece: Piece) -> None:
        """Record one piece (validated: worker, row range, shape, dtype, field).

        Parameters
        ----------
        piece : Piece
            ``(left_worker @ right_worker)[start:stop]``.

        Raises
        ------
        NonFiniteResultError
            If a real piece holds NaN or inf (naming the worker).
        """
        if not isinstance(piece, Piece):
            raise TypeError(f"`piece` must be a Piece, got {type(piece).__name__}.")
        worker, start, stop = self._check_range(piece.worker, piece.start, piece.stop)
        self._record(
            worker, start, stop, self._check_value(piece.value, stop - start, worker)
        )

    def mark(self, worker: int, start: int, stop: int) -> None:
        """Record that a piece arrived whose value is decoded elsewhere.

        The decoder then tracks :attr:`is_decodable`, :attr:`needs_more` and the
        conditioning of the pieces received (which depend on their rows only),
        so that a decoder on a Dask worker, fed the same pieces in the same
        order, decodes the product there; :meth:`decode` needs values.

        Parameters
        ----------
        worker, start, stop : int
            As the piece's fields.
        """
        self._record(*self._check_range(worker, start, stop), None)

    def _check_range(
        self, worker: object, start: object, stop: object
    ) -> tuple[int, int, int]:
        code = self._code
        worker = code._check_worker(worker)
        total = int(code._offsets[worker + 1] - code._offsets[worker])
        start = check_int(start, "piece.start", min_value=0)
        stop = check_int(
            stop, "piece.stop", min_value=start, max_value=total * self._context.rows
        )
        return worker, start, stop

    def _record(self, worker: int, start: int, stop: int, value: Any) -> None:
        if (self.is_decodable and not self.needs_more) or stop == start:
            return
        code, rows = self._code, self._context.rows
        base = int(code._offsets[worker]) * rows
        received = self._received.reshape(-1)[base + start : base + stop]
        if received.any():
            raise ValueError(
                f"`piece` repeats rows of worker {worker} that were already added "
                f"(rows {start}..{stop}); add each row of a result once."
            )
        if value is None:
            self._is_marked = True
        else:
            self._buffer()[base + start : base + stop] = value
        received[:] = True
        self._usable = code._usable(self._received)
        self._cached_plan = None
        self._cached_spares = None

    def _buffer(self) -> np.ndarray:
        if self._values is None:
            N, rows = self._received.shape
            dtype = np.float64 if self._code._p is None else np.int64
            self._values = np.zeros((N * rows, self._context.width), dtype=dtype)
        return self._values

    def _check_value(self, value: Any, count: int, worker: int) -> np.ndarray:
        p, width = self._code._p, self._context.width
        if fields.is_field_array(value):
            value = value.view(np.ndarray)
        array = np.asarray(value)
        if array.shape not in ((count, width),) + (((count,),) if width == 1 else ()):
            raise ValueError(
                f"`piece.value` must have shape ({count}, {width}), got {array.shape}."
            )
        if array.dtype == np.bool_ or array.dtype.kind not in "iuf":
            raise TypeError(f"`piece.value` must be numeric, got dtype {array.dtype}.")
        if p is None:
            if not np.all(np.isfinite(array)):
                bad = int(np.count_nonzero(~np.isfinite(array)))
                raise NonFiniteResultError(
                    f"worker {worker} returned a result with {bad} non-finite "
                    "entries (NaN or inf; from finite operands, its product "
                    f"overflowed {array.dtype}); refusing to decode a wrong product.",
                    worker=worker,
                )
        else:
            if array.dtype.kind == "f":
                raise TypeError(
                    "`piece.value` must hold integer residues over GF(p), "
                    f"got dtype {array.dtype}."
                )
            array = np.asarray(array, dtype=np.int64)
            if self._context.output == "field" and (
                array.size and (array.min() < 0 or array.max() >= p)
            ):
                raise ValueError(
                    f"`piece.value` entries must lie in the field [0, {p}), "
                    f"got min={array.min()}, max={array.max()}."
                )
            array = np.mod(array, p)
        return array.reshape(count, width)

    @property
    def is_decodable(self) -> bool:
        """Whether every row of the product is determined by the pieces so far."""
        return bool(self._usable.min() >= self._code._G.shape[1])

    @property
    def progress(self) -> tuple[int, int]:
        """``(received, needed)`` results, counted at the least-covered row.

        Units (rows) for codes with unequal loads.
        """
        K, per = self._code._G.shape[1], self._code._units_per_result
        return min(int(self._usable.min()), K) // per, K // per

    def _plan(self) -> _Plan:
        if self._cached_plan is None:
            self._cached_plan = self._code._plan(self._received)
        return self._cached_plan

    @property
    def condition_number(self) -> float:
        """Condition number of the system a decode would solve now.

        The worst over the arrival patterns (NaN over GF(p) or before decodable).
        """
        return self._plan().condition if self.is_decodable else math.nan

    @property
    def units_used(self) -> int:
        """Coded units (rows of G) a decode would use now (0 before decodable)."""
        return self._plan().units if self.is_decodable else 0

    @property
    def needs_more(self) -> bool:
        """Decodable, but above ``max_condition`` or short of spare workers.

        Never once every unit has arrived.
        """
        if not self.is_decodable or bool(self._received.all()):
            return False
        return self._plan().condition > self._code.max_condition or not self.has_spares

    @property
    def has_spares(self) -> bool:
        """Whether every row stays decodable without any of the spare workers.

        The spare workers are ``wrong`` (``"detect"``) or ``2 wrong``
        (``"correct"``); always true with verification off once decodable.
        """
        if self._spare == 0:  # verification off: nothing to spare
            return self.is_decodable
        if self._cached_spares is None:
            self._cached_spares = self.is_decodable and self._survives(self._spare)
        return self._cached_spares

    def _survives(self, lost: int) -> bool:
        """Whether every set of `lost` contributing workers leaves rows decodable."""
        code, K = self._code, self._code._G.shape[1]
        offsets = code._offsets
        contributing = [
            i
            for i in range(code.n)
            if self._received[offsets[i] : offsets[i + 1]].any()
        ]
        if len(contributing) < lost:
            return False
        for dropped in itertools.combinations(contributing, lost):
            received = self._received.copy()
            for i in dropped:
                received[offsets[i] : offsets[i + 1]] = False
            if code._usable(received).min() < K:
                return False
        return True

    @property
    def suspect_workers(self) -> tuple[int, ...]:
        """Workers whose wrong results the last ``"correct"`` decode left out."""
        return self._suspects

    @property
    def detection_floor(self) -> float:
        """Detection floor of the check the last verified decode's units passed.

        The smallest error of one entry, relative to its unit's largest entry,
        certain to fail the residual test of the units decoded from
        (:func:`coded.codes._consistency.detection_floor`; the largest over the
        row patterns); NaN before a decode or with ``verify="off"``.
        """
        return self._floor

    def _contributors(self) -> list[int]:
        offsets = self._code._offsets
        return [
            i
            for i in range(self._code.n)
            if self._received[offsets[i] : offsets[i + 1]].any()
        ]

    def _verified(self, values: np.ndarray) -> np.ndarray:
        """Return the units to decode from, once checked against each other.

        ``"detect"`` raises on a disagreement; ``"correct"`` leaves out the
        workers it locates (recorded in :attr:`suspect_workers`).
        """
        if self._verify == "off":
            return self._received
        code = self._code
        owners = np.repeat(np.arange(code.n), np.diff(code._offsets))
        received = self._received.copy()
        suspects: set[int] = set()
        floors = [0.0]
        for ts, units in code._patterns(self._received):
            G_U = code._G[units]
            Y = values[units][:, ts, :].reshape(units.size, -1)
            noise = self._context.entry_noise(units, ts) if code._p is None else None
            dropped: tuple[int, ...] | None = ()
            if self._verify == "correct" or not consistency.is_consistent(
                G_U, Y, code._p, noise
            ):
                dropped = consistency.locate(
                    G_U, Y, owners[units], code._p, wrong=self._wrong, noise=noise
                )
            if dropped is None or (self._verify == "detect" and dropped):
                raise self._disagreement(sorted(set(owners[units].tolist())), dropped)
            for i in dropped:
                received[code._offsets[i] : code._offsets[i + 1], ts] = False
            suspects.update(dropped)
            kept = ~np.isin(owners[units], dropped)
            if noise is not None and np.ndim(noise) == 2:
                noise = noise[kept]
            floors.append(
                consistency.detection_floor(G_U[kept], Y[kept], code._p, noise)
            )
        self._suspects = tuple(sorted(suspects))
        self._floor = max(floors)
        return received

    def _disagreement(
        self, workers: list[int], located: tuple[int, ...] | None
    ) -> InconsistentResultsError:
        suspects = workers if not located else list(located)
        if self._verify == "detect":
            remedy = (
                f"verify='correct' with {2 * self._wrong} spare workers decodes "
                "without the wrong ones."
            )
        else:
            remedy = f"more than wrong={self._wrong} of them are wrong."
        return InconsistentResultsError(
            f"the results of workers {workers} disagree: no product explains them "
            f"all (suspect workers {suspects}); {remedy}",
            suspect_workers=suspects,
        )

    def decode(self) -> Any:
        """Return the product; raise `DecodingError` if not yet decodable.

        Warns (:class:`~coded.errors.IllConditionedWarning`, carrying the
        condition number) when the system solved exceeds the code's
        ``max_condition`` even with every extra unit received.

        Returns
        -------
        array
            float64 over the reals (float32 when both operands were float32:
            decoded in float64, then rounded); over GF(p) a FieldArray (field
            inputs), int64 signed integers (integer inputs) or int64 residues in
            ``[0, p)`` (operands from ``encode_residues``).
        """
        if not self.is_decodable:
            raise DecodingError(self._code._shortfall(self.progress[0]))
        if not self.has_spares:
            raise DecodingError(
                f"verify={self._verify!r} needs every row decodable without any "
                f"{self._spare} of the workers, to check {self._wrong} wrong "
                f"result(s); results arrived from workers {self._contributors()}."
            )
        if self._is_marked:
            raise DecodingError(
                "pieces were marked without their values (mark); decode with a "
                "decoder that was given the pieces themselves."
            )
        context, code = self._context, self._code
        plan = self._plan()
        if plan.condition > code.max_condition:
            warnings.warn(
                IllConditionedWarning(
                    f"decoding solves a system with condition number "
                    f"{plan.condition:.3g} > max_condition={code.max_condition:g} "
                    f"from {plan.units} coded units; the decoded product may lose "
                    "that factor in relative accuracy.",
                    condition_number=plan.condition,
                ),
                stacklevel=2,
            )
        values = self._buffer().reshape(-1, context.rows, context.width)
        with one_blas_thread():
            received = self._verified(values)
            if received is not self._received:
                plan = code._plan(received)
            sources = code._solve_units(values, received, plan)
            product = code._assemble(sources, context)
        if np.may_share_memory(product, self._values):  # never hand out the buffer
            product = product.copy()
        if context.is_vector:
            product = product[:, 0]
        return fields.lift(product, context.output, code._p)
