r"""Freivalds checks of every worker's result: a secret projection of its coded rows.

For worker ``i`` and each of its batches (rows ``[s, t)`` of its coded share
``W = Atilde_i[s:t]``), the client draws a secret random vector ``r`` and keeps
``c = W^T r``. A claimed piece ``Y = W B`` is then checked in ``O(rows + d)`` per
column: ``r . Y_j == c . B_j`` [Freivalds 1977]. The check needs no extra result
and names the worker whose piece fails it.

Over GF(p) ``r`` is uniform on the nonzero residues and the test is exact: a piece
wrong in one entry always fails, and one wrong in several passes with probability
at most ``1/(p - 1)`` per column. Over the reals ``r`` has independent
random signs and the test allows for rounding **[derived]**
(``docs/theory/verification.md``), so its reach grows with the rows it sums: the
batch is split into groups of ``GROUP_ROWS`` consecutive rows, each checked on its
own (``c_g = W_g^T r_g``: ``d`` numbers kept per group). Within a group of ``n``
rows the worker's entries err by at most ``eta_j`` each (the code's per-column
bound), so ``r_g . eta`` is a Rademacher sum,
``|r_g . eta| <= sqrt(2 ln(2 / delta)) ||eta||_2 <= z sqrt(n) eta_j`` except with
probability ``delta`` (Hoeffding; ``z = 7.4`` for ``delta = 1e-12``); the client's
``fl(c_g)`` errs by at most ``gamma_n s_g`` (``s_g = |W_g|^T |r_g|``) and its own
dot products add ``gamma_n |r_g| . |Y_gj| + gamma_d (|c_g| + s_g) . |B_j|``
(Higham, Thm. 3.5). Without the code's bound (``noise`` None: shares encoded on
the cluster, ``A.T @ y``) the worker's rounding enters deterministically instead,
``gamma_d(u_w) s_g . |B_j|`` in the workers' unit roundoff ``u_w``.

``A.T @ y`` on the same shares (``coded.codes.TransposedCode``) is checked from the
other side: worker i returns ``Y_i^T Yb`` for its share ``Y_i`` and y's blocks
``Yb``, so ``r`` has ``d`` entries (per unit) and ``c = Y_i r``
(:func:`transposed_checks`).
A piece may be projected where it lives (:func:`project_piece`, for products
decoded on a worker): only ``r . Y`` and ``|Y|``'s column sums and maxima travel.

A check reports its *detection floor* (:class:`Verdict`): one entry of a piece
off by more than twice its column's tolerance fails the check (``r`` is +-1 on
every row, so the error moves ``r . Y_j`` by all of it, while the honest rounding
and the client's own stay within the tolerance, the former except with
probability ``FALSE_ALARM``), stated relative to the largest entry of the piece;
0 over GF(p), where any one wrong entry fails.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse

from coded.codes import _fields as fields
from coded.codes._base import Piece
from coded.codes._consistency import gamma
from coded.codes._transpose import transposed_units
from theory.rng import RngLike, as_generator
from theory.validation import is_sparse

__all__ = [
    "FALSE_ALARM",
    "GROUP_ROWS",
    "Expected",
    "Projected",
    "ShareChecks",
    "Verdict",
    "draw_vectors",
    "project_piece",
    "project_share",
    "share_checks",
    "transposed_checks",
]

FALSE_ALARM = 1e-12
"""Probability that one group of an honest real piece fails (Hoeffding's bound)."""
GROUP_ROWS = 64
"""Rows per checked group over the reals: the floor grows as their square root,
the client keeps ``d`` numbers per group (``1/GROUP_ROWS`` of the share) and
computes ``c_g . B`` for each, ``1/GROUP_ROWS`` of the rows' product."""
_Z = float(np.sqrt(2 * np.log(2 / FALSE_ALARM)))
_U = np.finfo(np.float64).eps / 2
_EMPTY = np.empty(0)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class _Projection:
    r: np.ndarray  # (rows,): +-1, or residues over GF(p)
    c: np.ndarray  # (groups, d): W_g^T r_g
    s: np.ndarray  # (groups, d): |W_g|^T |r_g| (reals; empty over GF(p))


def _groups(r: np.ndarray) -> scipy.sparse.csr_array:
    """Return `r` split into groups of ``GROUP_ROWS``: a (groups, rows) matrix."""
    rows = r.size
    indptr = np.minimum(np.arange(0, rows + GROUP_ROWS, GROUP_ROWS), rows)
    return scipy.sparse.csr_array(
        (r, np.arange(rows), np.asarray(indptr)), shape=(len(indptr) - 1, rows)
    )


def _group_sums(weights: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """``sum_i weights_i Y_i`` over each group of ``GROUP_ROWS`` rows: (groups, c).

    The dense twin of ``_groups(r, None) @ Y`` (no sparse matrix to build: 5x
    faster on a piece of a thousand rows).
    """
    if not weights.size:
        return np.zeros((0, Y.shape[1]))
    starts = np.arange(0, weights.size, GROUP_ROWS)
    return np.add.reduceat(weights[:, None] * Y, starts, axis=0)


def _group_sizes(projection: _Projection) -> np.ndarray:
    """Rows of each group, as a column (broadcasts over B's columns)."""
    sizes = np.full(projection.c.shape[0], GROUP_ROWS)
    if sizes.size:  # the last group holds the rest (one group: every row)
        sizes[-1] = projection.r.size - GROUP_ROWS * (sizes.size - 1)
    return sizes[:, None]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Projected:
    """A piece ``Y`` seen through its secret vector: what its check reads.

    Attributes
    ----------
    ry : numpy.ndarray, shape (groups, c)
        ``r_g . Y_gj`` per group and column (residues over GF(p)).
    size : numpy.ndarray, shape (groups, c)
        ``|Y_gj|_1`` per group and column (reals; empty over GF(p)).
    peak : numpy.ndarray, shape (c,)
        ``max_k |Y_kj|`` per column (reals; empty over GF(p)).
    u : float
        Unit roundoff of ``Y``'s dtype (the worker's arithmetic).
    finite : bool
        Whether every entry of ``Y`` is finite.
    """

    ry: np.ndarray
    size: np.ndarray
    peak: np.ndarray
    u: float
    finite: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """A piece's check: whether it passed, and the detection floor that applied.

    Attributes
    ----------
    passed : bool
        Whether the piece is taken as right (also ``bool(verdict)``).
    floor : float
        An error of one of its entries larger than this, relative to the
        piece's largest entry, was certain to fail the check: 0.0 over GF(p);
        ``inf`` for a piece nothing checked.
    """

    passed: bool
    floor: float

    def __bool__(self) -> bool:
        return self.passed


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Expected:
    """What a check compares a piece with: its projection ``c`` times B.

    Attributes
    ----------
    cb : numpy.ndarray, shape (groups, c)
        ``c_g . B_j`` (residues over GF(p)).
    cb_abs, sb_abs : numpy.ndarray, shape (groups, c)
        ``|c_g| . |B_j|`` and ``s_g . |B_j|`` (reals; empty over GF(p)).
    d : int
        Rows of B.
    """

    cb: np.ndarray
    cb_abs: np.ndarray
    sb_abs: np.ndarray
    d: int


def _expect(projection: _Projection, right: Any, p: int | None) -> Expected:
    B = np.asarray(right).reshape(np.shape(right)[0], -1)
    if p is not None:
        cb = fields.matmul(projection.c, B, p)
        return Expected(cb=cb, cb_abs=_EMPTY, sb_abs=_EMPTY, d=B.shape[0])
    B = B.astype(np.float64)
    size = np.abs(B)
    return Expected(
        cb=projection.c @ B,
        cb_abs=np.abs(projection.c) @ size,
        sb_abs=projection.s @ size,
        d=B.shape[0],
    )


def project_piece(value: Any, r: np.ndarray, p: int | None) -> Projected:
    """Return :class:`Projected` of a piece's rows `value` (may run on a worker).

    Examples
    --------
    >>> import numpy as np
    >>> project_piece(np.array([[1, 2], [3, 4]]), np.array([1, 2]), 5).ry.tolist()
    [[2, 0]]
    """
    value = np.asarray(value)
    Y = value.reshape(value.shape[0], int(np.prod(value.shape[1:])))  # rows may be 0
    if p is not None:
        ry = fields.matmul(r[None, :], np.mod(Y, p), p)
        return Projected(ry=ry, size=_EMPTY, peak=_EMPTY, u=0.0, finite=True)
    if Y.dtype.kind == "f" and not np.all(np.isfinite(Y)):
        return Projected(ry=_EMPTY, size=_EMPTY, peak=_EMPTY, u=0.0, finite=False)
    u = float(np.finfo(Y.dtype).eps / 2) if Y.dtype.kind == "f" else _U
    Y = Y.astype(np.float64)
    magnitude = np.abs(Y)
    return Projected(
        ry=_group_sums(r, Y),
        size=_group_sums(np.abs(r), magnitude),
        peak=magnitude.max(axis=0, initial=0.0),
        u=max(u, _U),
        finite=True,
    )


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ShareChecks:
    """The client's secret projections of every worker's batches (see module doc).

    Attributes
    ----------
    p : int or None
        The field's prime, or None over the reals.
    """

    p: int | None
    projections: dict[tuple[int, int, int], _Projection]

    def covers(self, worker: int, start: int, stop: int) -> bool:
        """Whether the batch ``[start, stop)`` of `worker` has a projection."""
        return (worker, start, stop) in self.projections

    def updated(self, other: ShareChecks) -> ShareChecks:
        """Return these checks with `other`'s workers' projections replacing theirs.

        For shares rebuilt by a repair (over the reals a rebuilt share differs
        from the original by rounding, so its old projection no longer applies).
        """
        renewed = {worker for worker, _, _ in other.projections}
        kept = {k: v for k, v in self.projections.items() if k[0] not in renewed}
        return ShareChecks(p=self.p, projections={**kept, **other.projections})

    def vector(self, worker: int, start: int, stop: int) -> np.ndarray:
        """Return the secret vector ``r`` of a batch (to project its piece remotely)."""
        return self.projections[(worker, start, stop)].r

    def passes(self, piece: Piece, right: Any, noise: Sequence[float] | None) -> bool:
        """Whether `piece` is ``W @ right`` for its batch (:meth:`verdict`)."""
        return self.verdict(piece, right, noise).passed

    def verdict(
        self, piece: Piece, right: Any, noise: Sequence[float] | None
    ) -> Verdict:
        """Check `piece` against ``W @ right`` for its batch ``W`` (see module doc).

        Parameters
        ----------
        piece : Piece
            A worker's claimed rows ``[start, stop)`` of its product; its value
            may be already :class:`Projected` (on the worker that holds it).
        right : array, shape (d,) or (d, c), or Expected
            The right operand the worker multiplied (residues over GF(p)), or
            its batch's entry of :meth:`expected`.
        noise : sequence of float or None
            Over the reals: bound on one entry's rounding error, per column
            (None: the worker's rounding enters deterministically).

        Returns
        -------
        Verdict
        """
        projection = self.projections[(piece.worker, piece.start, piece.stop)]
        seen = piece.value
        if not isinstance(seen, Projected):
            seen = project_piece(seen, projection.r, self.p)
        if not seen.finite:  # the decoder refuses it, naming the worker (overflow)
            return Verdict(passed=True, floor=np.inf)
        if not isinstance(right, Expected):
            right = _expect(projection, right, self.p)
        if self.p is not None:
            return Verdict(passed=bool(np.array_equal(seen.ry, right.cb)), floor=0.0)
        gap = np.abs(seen.ry - right.cb)
        n, d = _group_sizes(projection), right.d
        gamma_n = gamma(n)
        if noise is None:  # the worker's rounding, bounded by s
            worker = gamma(d, seen.u) * right.sb_abs
        else:
            worker = _Z * np.sqrt(n) * np.asarray(noise)
        tolerance = (
            worker
            + gamma_n * (right.sb_abs + seen.size)  # fl(c_g), and r_g . Y_g
            + gamma(d) * (right.cb_abs + right.sb_abs)  # c_g . B_j
        )
        # one entry off by e moves r_g . Y_gj by e and the tolerance by gamma_n e,
        # while the honest part and the client's rounding stay within the
        # tolerance: caught once (1 - gamma_n) e > 2 tolerance
        reach = 2 * float(np.max(tolerance, initial=0.0)) / (1 - gamma(GROUP_ROWS))
        peak = float(np.max(seen.peak, initial=0.0))
        floor = reach / peak if peak > 0 else (np.inf if reach > 0 else 0.0)
        return Verdict(passed=bool(np.all(gap <= tolerance)), floor=float(floor))

    def expected(self, right: Any) -> dict[tuple[int, int, int], Expected]:
        """Return every batch's :class:`Expected` for a shared right operand.

        For a right operand the client does not hold (a dask.array B encoded on
        the cluster): this runs where it lives, and :meth:`passes` takes the
        batch's entry as its `right`.
        """
        return {
            key: _expect(projection, right, self.p)
            for key, projection in self.projections.items()
        }


def share_checks(
    lefts: Sequence[Any],
    batches: Sequence[Sequence[tuple[int, int]]],
    p: int | None,
    *,
    rng: RngLike = None,
) -> ShareChecks:
    """Draw the secret projections of every worker's batches.

    Parameters
    ----------
    lefts : sequence of array, length n
        The workers' coded rows (``EncodedOperands.lefts``; residues over GF(p)).
    batches : sequence of sequences of (int, int), length n
        Each worker's row ranges.
    p : int or None
        The field's prime, or None over the reals.
    rng : None, int or numpy.random.Generator
        Source of the secret vectors (keep it secret from the workers).

    Returns
    -------
    ShareChecks
    """
    generator = as_generator(rng)
    projections = {}
    for worker, (left, ranges) in enumerate(zip(lefts, batches, strict=True)):
        if left is None:
            continue
        for start, stop in ranges:
            W = left[start:stop]
            r = draw_vectors([W.shape[0]], p, generator)[0]
            projections[(worker, start, stop)] = project_share(W, r, p)
    return ShareChecks(p=p, projections=projections)


def transposed_checks(
    lefts: Sequence[Any], rows: int, p: int | None, *, rng: RngLike = None
) -> ShareChecks:
    r"""Draw the projections that check ``A.T @ y`` on the same shares.

    Worker i returns ``L_i Yb``, ``L_i`` its units ``Y_u^T`` stacked; its check
    is keyed by its whole batch ``(i, 0, len(left_i))``, as the transposed code
    runs it.

    Parameters
    ----------
    lefts : sequence of array, length n
        The workers' coded rows (units of `rows` rows each).
    rows : int
        Rows of one unit.
    p : int or None
        The field's prime, or None over the reals.
    rng : None, int or numpy.random.Generator
        Source of the secret vectors.

    Returns
    -------
    ShareChecks

    Examples
    --------
    >>> import numpy as np
    >>> from coded.codes._base import Piece
    >>> Y = np.arange(6).reshape(3, 2) % 7
    >>> checks = transposed_checks([Y], 3, 7, rng=0)
    >>> yb = np.array([[1], [2], [3]])
    >>> right = Piece(worker=0, start=0, stop=3, value=(Y.T @ yb) % 7)
    >>> wrong = Piece(worker=0, start=0, stop=3, value=(Y.T @ yb + 1) % 7)
    >>> checks.passes(right, yb, None), checks.passes(wrong, yb, None)
    (True, False)
    """
    generator = as_generator(rng)
    projections = {}
    for worker, left in enumerate(lefts):
        if left is None:
            continue
        height = int(np.shape(left)[0])
        r = draw_vectors([height // rows * np.shape(left)[1]], p, generator)[0]
        projections[(worker, 0, height)] = project_share(left, r, p, unit_rows=rows)
    return ShareChecks(p=p, projections=projections)


def draw_vectors(
    lengths: Sequence[int], p: int | None, rng: RngLike = None
) -> list[np.ndarray]:
    """Draw secret vectors: uniform nonzero residues over GF(p), else random signs."""
    generator = as_generator(rng)
    if p is not None:
        return [generator.integers(1, p, size=n, dtype=np.int64) for n in lengths]
    return [generator.choice(np.array([-1.0, 1.0]), size=n) for n in lengths]


def project_share(
    W: Any, r: np.ndarray, p: int | None, *, unit_rows: int | None = None
) -> _Projection:
    """Return the projection ``c = W^T r`` of rows `W` (may run on a worker).

    `unit_rows`: project for ``A.T @ y`` instead: ``W`` is the share's units of
    that many rows, transposed and stacked.
    """
    if is_sparse(W):  # CSR rows of a sparse A (real codes only)
        groups = _groups(r)
        c, s = groups @ W, abs(groups) @ abs(W)
        return _Projection(r=r, c=c.toarray(), s=s.toarray())
    W = np.asarray(W)
    if unit_rows is not None:
        units = transposed_units(W, unit_rows)
        W = units[0] if len(units) == 1 else np.concatenate(units)
    if p is not None:
        c = fields.matmul(r[None, :], np.mod(W, p), p)
        return _Projection(r=r, c=c, s=_EMPTY)
    W = W.astype(np.float64, copy=False)
    return _Projection(r=r, c=_group_sums(r, W), s=_group_sums(np.abs(r), np.abs(W)))
