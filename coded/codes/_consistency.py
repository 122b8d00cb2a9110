r"""Redundant results checked against each other: detect and locate wrong workers.

Received coded units ``Y_U = G_U S`` (``G_U``: the generator rows of the units in
``U``, ``|U| > K``) are *consistent* when one set of sources explains them all.
Over GF(p) the test is exact: solve ``S`` from ``K`` of the units and compare the
others. Over the reals it is the least-squares residual
``R = (I - Q Q^T) Y_U`` (``Q``: an orthonormal basis of ``G_U``'s columns), which
annihilates any ``G_U S`` and leaves only the workers' rounding errors ``eta``,
compared entry by entry: ``|R_vj| <= sum_w |P_vw| eta_wj`` (``P = I - Q Q^T``).
The tolerance adds the residual's own rounding, ``4 |U| u kappa(G_U) ||Y_j||_2``
(``u``: float64's unit roundoff; :func:`tolerance`).

The rounding error of each entry of a worker's result is bounded from the operands,
per coded row (``docs/theory/verification.md``, :func:`row_noise`):
``|fl(a . b) - a . b| <= gamma_d |a| . |b| <= gamma_d ||a||_2 ||b||_2`` with
``gamma_d = d u / (1 - d u)`` (any summation order, Higham's Theorem 3.5), and a
coded row ``a = sum_j G_uj a_j`` computed in floating point adds ``gamma_K``.

An (|U|, K) MDS code has distance ``|U| - K + 1``: ``e`` spare workers beyond a
decodable set detect up to ``e`` wrong ones and correct up to ``floor(e / 2)``;
:func:`locate` finds the smallest set of workers whose removal leaves the rest
consistent (over the reals, among several, the one leaving the smallest
:func:`discrepancy`), and refuses on a tie.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Literal

import numpy as np

from coded.codes import _fields as fields

__all__ = [
    "VERIFY_MODES",
    "Verify",
    "check_verify",
    "detection_floor",
    "discrepancy",
    "gamma",
    "is_consistent",
    "locate",
    "row_noise",
    "spare_workers",
    "tolerance",
]

Verify = Literal["off", "detect", "correct"]
VERIFY_MODES: tuple[Verify, ...] = ("off", "detect", "correct")
_UNIT_ROUNDOFF = np.finfo(np.float64).eps / 2


def check_verify(verify: object, wrong: object = 1) -> tuple[Verify, int]:
    """Validate the verification mode and the number of wrong workers it handles.

    Parameters
    ----------
    verify : {"off", "detect", "correct"}
        ``"detect"``: refuse a product whose results disagree; ``"correct"``:
        decode from the consistent results and name the wrong workers.
    wrong : int
        Wrong workers to detect or correct, ``wrong >= 1``.

    Returns
    -------
    tuple of (str, int)
    """
    if verify not in VERIFY_MODES:
        raise ValueError(f"`verify` must be one of {VERIFY_MODES}, got {verify!r}.")
    if isinstance(wrong, bool) or not isinstance(wrong, int | np.integer):
        raise TypeError(f"`wrong` must be an int, got {type(wrong).__name__}.")
    if wrong < 1:
        raise ValueError(f"`wrong` must be >= 1, got wrong={wrong}.")
    return verify, int(wrong)


def spare_workers(verify: Verify, wrong: int) -> int:
    """Return the spare workers needed: ``wrong`` to detect, ``2 wrong`` to correct."""
    return {"off": 0, "detect": wrong, "correct": 2 * wrong}[verify]


def row_noise(
    generator: np.ndarray,
    row_norms: np.ndarray,
    coded_norms: np.ndarray,
    d: int,
    dtype,
) -> np.ndarray:
    r"""Bound on each coded row's result entry's rounding, per unit norm of B's column.

    ``(1 + gamma_(d+2)) gamma_d ||a~_(u,t)||_2 + gamma_K sum_j |G_uj| ||a_(j,t)||_2``
    for row ``t`` of unit ``u`` in the workers' precision (`dtype`): the coded row
    ``a~ = fl(sum_j G_uj a_j)`` errs by at most ``gamma_K sum_j |G_uj| |a_j|``
    entrywise, and its product with B's column ``b`` by at most
    ``gamma_d |a~| . |b| <= gamma_d ||a~||_2 ||b||_2`` (Higham's Theorem 3.5 and
    Lemma 3.1); the computed norm of ``a~`` is within ``gamma_(d+2)`` of the exact
    one.

    Parameters
    ----------
    generator : array, shape (N, K)
        The code's real generator.
    row_norms : array, shape (m,)
        2-norm of every row of A (``m <= K rows``; the blocks are zero-padded).
    coded_norms : array, shape (N, rows)
        2-norm of every coded row of every unit.
    d : int
        Inner dimension of ``A @ B``.
    dtype : numpy dtype
        The workers' precision (float64, or float32 for float32 operands).

    Returns
    -------
    array, shape (N, rows)
    """
    u = float(np.finfo(dtype).eps) / 2  # gamma in float64, not in float32
    K, rows = generator.shape[1], coded_norms.shape[1]
    blocks = np.zeros(K * rows)
    blocks[: row_norms.size] = row_norms
    spread = np.abs(generator) @ blocks.reshape(K, rows)
    product = (1 + gamma(d + 2, u)) * gamma(d, u) * coded_norms
    return product + gamma(K, u) * spread


def gamma(terms: int | np.ndarray, u: float = _UNIT_ROUNDOFF) -> float | np.ndarray:
    """Higham's ``gamma_n = n u / (1 - n u)``: the relative error of n roundings."""
    return terms * u / (1 - terms * u)


def is_consistent(
    G_U: np.ndarray, Y: np.ndarray, p: int | None, noise: np.ndarray | None = None
) -> bool:
    """Whether one set of sources explains every received unit.

    Parameters
    ----------
    G_U : array, shape (|U|, K)
        Generator rows of the received units (full column rank).
    Y : array, shape (|U|, J)
        Their values (residues in ``[0, p)`` over GF(p)).
    p : int or None
        The field's prime, or None over the reals.
    noise : array, shape (J,) or (|U|, J), optional
        Over the reals: bound on each entry's rounding error (one per column, or
        one per entry).

    Returns
    -------
    bool
    """
    return discrepancy(G_U, Y, p, noise) <= 1.0


def discrepancy(
    G_U: np.ndarray, Y: np.ndarray, p: int | None, noise: np.ndarray | None = None
) -> float:
    """How far the received units are from agreeing, in units of their tolerance.

    Over the reals the largest ``|R_uj| / tol_uj`` (:func:`tolerance`); over
    GF(p) 0 or infinity. Units agree when it is at most 1.

    Parameters
    ----------
    G_U, Y, p, noise
        As :func:`is_consistent`.

    Returns
    -------
    float
    """
    K = G_U.shape[1]
    if G_U.shape[0] <= K:
        return 0.0
    if p is not None:
        basis = _pivot_rows(G_U, p)
        sources = fields.solve(G_U[basis], Y[basis], p)
        return 0.0 if np.array_equal(fields.matmul(G_U, sources, p), Y) else np.inf
    Q, _ = np.linalg.qr(G_U)
    residual = np.abs(Y - Q @ (Q.T @ Y))
    bound = tolerance(G_U, Y, noise)
    ratio = np.divide(
        residual, bound, out=np.where(residual > 0, np.inf, 0.0), where=bound > 0
    )
    return float(ratio.max(initial=0.0))


def tolerance(
    G_U: np.ndarray, Y: np.ndarray, noise: np.ndarray | None = None
) -> np.ndarray:
    r"""Largest least-squares residual of honest real results, per entry.

    ``|I - Q Q^T| eta + 4 |U| u kappa(G_U) ||Y_j||_2``: the workers' rounding
    (``eta``, per entry, passed through the orthogonal projector entrywise) plus
    the residual's own rounding (backward stable QR: ``u kappa`` relative to the
    column ``Y_j``, a bound on the column's norm and so on each of its entries).

    Parameters
    ----------
    G_U, Y, noise
        As :func:`is_consistent`.

    Returns
    -------
    array, shape (|U|, J)
    """
    size = G_U.shape[0]
    Q, _ = np.linalg.qr(G_U)
    projector = np.abs(np.eye(size) - Q @ Q.T)
    singular = np.linalg.svd(G_U, compute_uv=False)
    kappa = singular[0] / singular[-1]
    eta = np.zeros(Y.shape) if noise is None else np.broadcast_to(noise, Y.shape)
    rounding = 4 * size * _UNIT_ROUNDOFF * kappa * np.linalg.norm(Y, axis=0)
    return projector @ eta + rounding


def detection_floor(
    G_U: np.ndarray, Y: np.ndarray, p: int | None, noise: np.ndarray | None = None
) -> float:
    r"""Smallest error of one received entry certain to fail the residual test.

    Relative to the largest entry of the entry's unit; the largest over the
    units. An error ``e`` at entry ``(v, j)`` moves ``R_vj`` by ``P_vv e``
    (``P = I - Q Q^T``) and the tolerance's rounding term by at most
    ``rho e`` (``rho = 4 |U| u kappa(G_U)``), while the honest residual and the
    residual's own rounding stay within the tolerance, so the test fails once
    **[derived]**

    ``(P_vv - 2 rho) e > 2 tol_vj``.

    Over GF(p) the test is exact: 0 once every unit has a spare (``|U| > K``).

    Parameters
    ----------
    G_U, Y, p, noise
        As :func:`is_consistent`.

    Returns
    -------
    float
        ``inf`` where some unit has no spare (``P_vv <= 2 rho``).

    Examples
    --------
    >>> G = np.vstack([np.eye(2), np.ones((1, 2))])
    >>> Y = G @ np.array([[1.0], [2.0]])
    >>> bool(0 < detection_floor(G, Y, None, noise=np.full(1, 1e-15)) < 1e-13)
    True
    >>> detection_floor(G[:2], Y[:2], None)  # no spare: nothing is checked
    inf
    """
    size, K = G_U.shape
    if size <= K:
        return np.inf
    if p is not None:
        return 0.0
    Q, _ = np.linalg.qr(G_U)
    diagonal = 1.0 - np.einsum("ij,ij->i", Q, Q)
    singular = np.linalg.svd(G_U, compute_uv=False)
    rho = 4 * size * _UNIT_ROUNDOFF * singular[0] / singular[-1]
    margin = diagonal - 2 * rho
    reach = 2 * tolerance(G_U, Y, noise).max(axis=1, initial=0.0)
    peak = np.abs(Y).max(axis=1, initial=0.0)
    if np.any(margin <= 0) or np.any((peak == 0) & (reach > 0)):
        return np.inf
    floors = np.divide(reach / margin, peak, out=np.zeros(size), where=peak > 0)
    return float(floors.max(initial=0.0))


def _pivot_rows(G_U: np.ndarray, p: int) -> np.ndarray:
    """``K`` linearly independent rows of `G_U` modulo `p` (elimination on ``G_U^T``).

    Rows may repeat (replication), so the first ``K`` need not be independent.
    """
    work = np.mod(G_U.T, p)
    pivots: list[int] = []
    for column in range(work.shape[1]):
        row = len(pivots)
        if row == work.shape[0]:
            break
        nonzero = np.flatnonzero(work[row:, column])
        if nonzero.size == 0:
            continue
        swap = row + nonzero[0]
        work[[row, swap]] = work[[swap, row]]
        work[row] = work[row] * pow(int(work[row, column]), -1, p) % p
        factors = work[:, column].copy()
        factors[row] = 0
        work = (work - np.outer(factors, work[row]) % p) % p
        pivots.append(column)
    return np.array(pivots, dtype=np.int64)


def locate(
    G_U: np.ndarray,
    Y: np.ndarray,
    owners: Sequence[int],
    p: int | None,
    *,
    wrong: int,
    noise: np.ndarray | None = None,
) -> tuple[int, ...] | None:
    """Find the smallest set of at most `wrong` workers whose removal leaves agreement.

    Parameters
    ----------
    G_U, Y, p, noise
        As :func:`is_consistent`.
    owners : sequence of int, length |U|
        The worker that returned each unit.
    wrong : int
        Largest set to try.

    Returns
    -------
    tuple of int or None
        ``()`` if the units are consistent; else, among the sets of the smallest
        size whose removal leaves the rest consistent, the one leaving the
        smallest :func:`discrepancy`; None if no set of at most `wrong` workers
        works or several tie (the wrong workers cannot be told apart: always
        over GF(p), where every consistent remainder is exact).
    """
    owners = np.asarray(owners)
    K = G_U.shape[1]
    workers = sorted(set(owners.tolist()))
    for size in range(wrong + 1):
        found = {}
        for dropped in itertools.combinations(workers, size):
            keep = ~np.isin(owners, dropped)
            if np.count_nonzero(keep) > K:
                left = discrepancy(G_U[keep], Y[keep], p, _rows(noise, keep))
                if left <= 1.0:
                    found[dropped] = left
        if found:
            best = min(found.values())
            closest = [dropped for dropped, left in found.items() if left == best]
            return closest[0] if len(closest) == 1 else None
    return None


def _rows(noise: np.ndarray | None, keep: np.ndarray) -> np.ndarray | None:
    """Return the rows `keep` of a per-entry `noise` (a per-column one: all)."""
    if noise is None or np.ndim(noise) < 2:
        return noise
    return np.asarray(noise)[keep]
