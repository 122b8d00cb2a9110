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
(``docs/theory/verification.md``): the worker's entries err by at most
``eta_j`` each (the code's per-column bound), so ``r . eta`` is a Rademacher sum,
``|r . eta| <= sqrt(2 ln(2 / delta)) ||eta||_2 <= z sqrt(rows) eta_j`` except with
probability ``delta`` (Hoeffding; ``z = 7.4`` for ``delta = 1e-12``); the client's
own dot products add ``gamma_rows |r| . |Y_j| + gamma_d (|c| + s) . |B_j|`` with
``s = |W|^T |r|`` (Higham, Thm. 3.5).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from coded.codes import _fields as fields
from coded.codes._base import Piece
from theory.rng import RngLike, as_generator

__all__ = ["FALSE_ALARM", "ShareChecks", "share_checks"]

FALSE_ALARM = 1e-12
"""Probability that an honest real piece fails its check (Hoeffding's bound)."""
_Z = float(np.sqrt(2 * np.log(2 / FALSE_ALARM)))
_U = np.finfo(np.float64).eps / 2


def _gamma(terms: int) -> float:
    return terms * _U / (1 - terms * _U)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class _Projection:
    r: np.ndarray  # (rows,): +-1, or residues over GF(p)
    c: np.ndarray  # (d,): W^T r
    s: np.ndarray  # (d,): |W|^T |r| (reals; empty over GF(p))


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

    def without(self, workers: Iterable[int]) -> ShareChecks:
        """Return the same checks, none for `workers` (shares that were rebuilt)."""
        dropped = set(workers)
        kept = {k: v for k, v in self.projections.items() if k[0] not in dropped}
        return ShareChecks(p=self.p, projections=kept)

    def passes(self, piece: Piece, right: Any, noise: Sequence[float] | None) -> bool:
        """Whether `piece` is ``W @ right`` for its batch ``W`` (see module doc).

        Parameters
        ----------
        piece : Piece
            A worker's claimed rows ``[start, stop)`` of its product.
        right : array, shape (d,) or (d, c)
            The right operand the worker multiplied (residues over GF(p)).
        noise : sequence of float or None
            Over the reals: bound on one entry's rounding error, per column.

        Returns
        -------
        bool
        """
        projection = self.projections[(piece.worker, piece.start, piece.stop)]
        value = np.asarray(piece.value)
        Y = value.reshape(value.shape[0], -1)
        if Y.dtype.kind == "f" and not np.all(np.isfinite(Y)):
            return True  # the decoder refuses it, naming the worker (overflow)
        B = np.asarray(right).reshape(np.shape(right)[0], -1)
        if self.p is not None:
            left = fields.matmul(projection.r[None, :], np.mod(Y, self.p), self.p)
            return bool(
                np.array_equal(left, fields.matmul(projection.c[None, :], B, self.p))
            )
        Y, B = Y.astype(np.float64), B.astype(np.float64)
        gap = np.abs(projection.r @ Y - projection.c @ B)
        eta = np.zeros(Y.shape[1]) if noise is None else np.asarray(noise)
        rows, d = Y.shape[0], B.shape[0]
        tolerance = (
            _Z * np.sqrt(rows) * eta
            + _gamma(rows) * (np.abs(Y).sum(axis=0))
            + _gamma(d) * ((np.abs(projection.c) + projection.s) @ np.abs(B))
        )
        return bool(np.all(gap <= tolerance))


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
            W = np.asarray(left[start:stop])
            projections[(worker, start, stop)] = _project(W, p, generator)
    return ShareChecks(p=p, projections=projections)


def _project(W: np.ndarray, p: int | None, generator: np.random.Generator):
    rows = W.shape[0]
    if p is not None:
        r = generator.integers(1, p, size=rows, dtype=np.int64)
        c = fields.matmul(r[None, :], W, p)[0]
        return _Projection(r=r, c=c, s=np.empty(0))
    r = generator.choice(np.array([-1.0, 1.0]), size=rows)
    W = W.astype(np.float64, copy=False)
    return _Projection(r=r, c=r @ W, s=np.abs(W).sum(axis=0))
