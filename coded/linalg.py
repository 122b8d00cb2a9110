r"""Iterative solvers on one placement: every step one coded ``A @ x`` and ``A.T @ y``.

A is encoded and placed once (:func:`coded.place_operand`); each step multiplies by
A and by ``A.T`` through the same shares (``placed.T``), so both products tolerate
the same stragglers and A is held once. Each solver returns its iterate and a
per-step record (wall-clock time, objective, workers used), the data of a
convergence-against-time plot.

- :func:`lstsq_gd`: least squares ``min_x ||A x - b||^2 / 2`` by gradient descent,
  ``x <- x - eta A^T (A x - b)``, which converges for ``0 < eta < 2 / sigma_1^2``
  (the gradient is ``sigma_1^2``-Lipschitz); the default ``eta = 1 / sigma_1^2``
  estimates ``sigma_1`` by :func:`power_method` on the same placement.
- :func:`power_method`: the top right singular vector of A by
  ``v <- A^T (A v) / ||A^T (A v)||``; ``||A v|| -> sigma_1`` at the rate
  ``(sigma_2 / sigma_1)^{2t}``.

Both take the start point as ``x0`` (and ``lstsq_gd`` its step size as
``step_size``), like :func:`coded.gradient_descent`; the old spellings ``w0`` and
``v0`` are deprecated. Over GF(p) neither iteration is meaningful: the placement
must be over the reals.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Unpack

import numpy as np
from numpy.typing import ArrayLike

from coded._deprecation import renamed_keyword
from coded._dispatch import ExecutionOptions, execution_options
from coded._keywords import ExecutionKeywords
from coded._placed import PlacedOperand, matmul_placed
from coded._result import MatmulResult
from theory.rng import as_generator
from theory.validation import check_int, check_real, non_finite_message

__all__ = ["IterationRecord", "IterativeResult", "lstsq_gd", "power_method"]


@dataclass(frozen=True, slots=True, kw_only=True)
class IterationRecord:
    """One step of an iterative solver.

    Parameters
    ----------
    step : int
        Step index, from 1.
    elapsed_seconds : float
        Wall-clock seconds from the solver's start to the end of this step.
    objective : float
        ``||A x - b|| / ||b||`` after the step (least squares), or the estimate
        ``||A v||`` of ``sigma_1`` (power method).
    forward_workers, backward_workers : tuple of int
        Workers whose results decoded ``A @ x`` and ``A.T @ y`` in this step.
    """

    step: int
    elapsed_seconds: float
    objective: float
    forward_workers: tuple[int, ...]
    backward_workers: tuple[int, ...]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class IterativeResult:
    """The iterate of an iterative solver and its per-step record.

    Parameters
    ----------
    solution : numpy.ndarray
        The final iterate (least squares: ``x``; power method: the unit vector
        ``v``).
    value : float
        The final objective (relative residual, or the estimate of sigma_1).
    records : tuple of IterationRecord
        One per step.
    """

    solution: np.ndarray
    value: float
    records: tuple[IterationRecord, ...]

    @property
    def elapsed_seconds(self) -> np.ndarray:
        """Wall-clock seconds at the end of each step."""
        return np.array([r.elapsed_seconds for r in self.records])

    @property
    def objectives(self) -> np.ndarray:
        """Objective after each step."""
        return np.array([r.objective for r in self.records])


def _check_placed(A: object) -> PlacedOperand:
    if not isinstance(A, PlacedOperand):
        raise TypeError(
            "`A` must be a PlacedOperand (coded.place_operand(A, client=...)), got "
            f"{type(A).__name__}."
        )
    if A.is_transposed:
        raise ValueError("`A` must be the placement itself, got its transposed view.")
    if A.code.field is not None:
        raise ValueError(
            "iterative solvers need a placement over the reals, got one over "
            f"GF({A.code.p})."
        )
    return A


def _stepper(
    options: ExecutionOptions,
) -> Callable[[PlacedOperand, np.ndarray], MatmulResult]:
    """Return ``multiply(view, x)``: one coded product, delays drawn afresh.

    `options.rng` must be a Generator: every product draws from it in turn.
    """
    run = options

    def multiply(view: PlacedOperand, x: np.ndarray) -> MatmulResult:
        return matmul_placed(view, x, fixed={}, client=None, options=run)

    return multiply


def power_method(
    A: PlacedOperand,
    *,
    iterations: int = 50,
    x0: ArrayLike | None = None,
    options: ExecutionOptions | None = None,
    **option_fields: Unpack[ExecutionKeywords],
) -> IterativeResult:
    r"""Top right singular vector of a placed A by the power method on ``A^T A``.

    Each step computes ``u = A v`` and ``w = A^T u`` as coded products of the
    same placement and sets ``v = w / ||w||``; ``||A v||`` converges to the top
    singular value ``sigma_1`` at the rate ``(sigma_2 / sigma_1)^{2t}``.

    Parameters
    ----------
    A : PlacedOperand
        A placed over the reals by :func:`coded.place_operand` (a block code).
    iterations : int
        Number of steps, ``>= 1``.
    x0 : array_like, shape (d,), optional
        Starting vector (default: random normal from `rng`; the old spelling
        ``v0`` is deprecated).
    options : ExecutionOptions, optional
        Stragglers, timeout and rng of every product (the rng also draws `x0`).
    **option_fields
        Fields of :class:`coded.ExecutionOptions` as keywords; they override
        those of `options`:
    stragglers, timeout, rng, output, verify, check, transport : optional
        Keyword options of every product, as in :func:`coded.coded_matmul`.

    Returns
    -------
    IterativeResult
        ``solution`` is the unit vector v, ``value`` the estimate of sigma_1.

    Examples
    --------
    >>> import numpy as np
    >>> from coded import LocalCodedCluster, place_operand
    >>> A = np.diag([3.0, 1.0, 0.5])
    >>> with LocalCodedCluster(n_workers=3) as cluster:
    ...     with place_operand(A, k=2, client=cluster.client) as placed:
    ...         result = power_method(placed, iterations=12, rng=0)
    >>> round(result.value, 6), np.round(np.abs(result.solution), 6).tolist()
    (3.0, [1.0, 0.0, 0.0])
    """
    A = _check_placed(A)
    iterations = check_int(iterations, "iterations", min_value=1)
    x0 = renamed_keyword(
        option_fields, "v0", "x0", x0, default=None, caller="power_method"
    )
    options = _with_generator(execution_options(options, option_fields, "power_method"))
    d = A.shape[1]
    v = options.rng.standard_normal(d) if x0 is None else _vector(x0, "x0", d)
    v = v / np.linalg.norm(v)
    multiply = _stepper(options)
    began, records, sigma = time.perf_counter(), [], 0.0
    for step in range(1, iterations + 1):
        forward = multiply(A, v)
        backward = multiply(A.T, forward.product)
        sigma = float(np.linalg.norm(forward.product))
        norm = float(np.linalg.norm(backward.product))
        if norm == 0.0:
            raise ValueError("`x0` is orthogonal to A's row space: A x0 = 0.")
        v = backward.product / norm
        records.append(_record(step, began, sigma, forward, backward))
    return IterativeResult(solution=v, value=sigma, records=tuple(records))


def lstsq_gd(
    A: PlacedOperand,
    b: ArrayLike,
    *,
    steps: int = 50,
    step_size: float | None = None,
    x0: ArrayLike | None = None,
    options: ExecutionOptions | None = None,
    **option_fields: Unpack[ExecutionKeywords],
) -> IterativeResult:
    r"""Least squares ``min_x ||A x - b||^2 / 2`` by gradient descent on a placed A.

    Each step computes the residual ``r = A x - b`` and the gradient
    ``g = A^T r`` as coded products of the same placement, then
    ``x <- x - eta g``. With ``eta = 1 / sigma_1^2`` the error contracts by
    ``1 - (sigma_min / sigma_1)^2`` per step.

    Parameters
    ----------
    A : PlacedOperand, shape (m, d)
        A placed over the reals by :func:`coded.place_operand` (a block code).
    b : array_like, shape (m,)
        Right-hand side.
    steps : int
        Number of gradient steps, ``>= 1``.
    step_size : float, optional
        ``eta > 0``; default ``1 / sigma_1^2`` with sigma_1 estimated by 20 steps
        of :func:`power_method` on the same placement (not counted in `steps`).
    x0 : array_like, shape (d,), optional
        Starting point (default zeros; the old spelling ``w0`` is deprecated).
    options : ExecutionOptions, optional
        Stragglers, timeout and rng of every product.
    **option_fields
        Fields of :class:`coded.ExecutionOptions` as keywords; they override
        those of `options`:
    stragglers, timeout, rng, output, verify, check, transport : optional
        Keyword options of every product, as in :func:`coded.coded_matmul`.

    Returns
    -------
    IterativeResult
        ``solution`` is x, ``value`` the final ``||A x - b|| / ||b||``; each
        record's objective is that relative residual before the step's update.

    Examples
    --------
    >>> import numpy as np
    >>> from coded import LocalCodedCluster, place_operand
    >>> A = np.array([[1.0, 1.0], [1.0, -1.0], [0.0, 0.0]])  # A^T A = 2 I
    >>> b = np.array([-1.0, 3.0, 1.0])  # A x = b has no solution
    >>> with LocalCodedCluster(n_workers=3) as cluster:
    ...     with place_operand(A, k=2, client=cluster.client) as placed:
    ...         result = lstsq_gd(placed, b, steps=2, step_size=0.5)
    >>> np.round(result.solution, 9).tolist(), round(result.value, 9)
    ([1.0, -2.0], 0.301511345)
    """
    A = _check_placed(A)
    steps = check_int(steps, "steps", min_value=1)
    x0 = renamed_keyword(option_fields, "w0", "x0", x0, default=None, caller="lstsq_gd")
    options = _with_generator(execution_options(options, option_fields, "lstsq_gd"))
    m, d = A.shape
    b = _vector(b, "b", m)
    if step_size is None:
        sigma = power_method(A, iterations=20, options=options).value
        step_size = 1.0 / sigma**2
    step_size = check_real(step_size, "step_size", min_value=0.0, strict_min=True)
    x = np.zeros(d) if x0 is None else _vector(x0, "x0", d)
    scale = float(np.linalg.norm(b)) or 1.0
    multiply = _stepper(options)
    began, records = time.perf_counter(), []
    for step in range(1, steps + 1):
        forward = multiply(A, x)
        residual = forward.product - b
        backward = multiply(A.T, residual)
        x = x - step_size * backward.product
        objective = float(np.linalg.norm(residual)) / scale
        records.append(_record(step, began, objective, forward, backward))
    value = float(np.linalg.norm(multiply(A, x).product - b)) / scale
    return IterativeResult(solution=x, value=value, records=tuple(records))


def _with_generator(options: ExecutionOptions) -> ExecutionOptions:
    return dataclasses.replace(options, rng=as_generator(options.rng))


def _vector(value: Any, name: str, size: int) -> np.ndarray:
    array = np.asarray(value, dtype=np.float64)
    if array.shape != (size,):
        raise ValueError(f"`{name}` must have shape ({size},), got {array.shape}.")
    if not np.all(np.isfinite(array)):
        raise ValueError(non_finite_message(array, name))
    return array


def _record(
    step: int,
    began: float,
    objective: float,
    forward: MatmulResult,
    backward: MatmulResult,
) -> IterationRecord:
    return IterationRecord(
        step=step,
        elapsed_seconds=time.perf_counter() - began,
        objective=objective,
        forward_workers=forward.used_workers,
        backward_workers=backward.used_workers,
    )
