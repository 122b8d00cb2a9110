r"""The Monte Carlo simulator: one entry point for all loads.

See docs/theory/model.md#the-monte-carlo-simulator.

A job gives worker ``i`` ``l_i`` rows in ``b_i`` equal batches; batch ``j`` reaches the
decoder at :math:`T_{ij} = j (l_i/b_i)(a_i + X_i/\mu_i) + j c_i` and the decoder
finishes at the first time the rows received reach ``m``. Uniform MDS (equal loads,
one batch), HCMM, Kim et al. and BPCC are all instances.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from theory._heterogeneous import (
    _as_workers,
    _batches_vector,
    _overhead_vector,
)
from theory._models import GroupProfile, WorkerProfile
from theory._simulation_result import SimulationResult
from theory.rng import RngLike, as_generator
from theory.validation import check_int, check_real, check_real_vector

__all__ = ["simulate_latency", "simulate_physical_limit"]

_CHUNK_ELEMENTS = 2_000_000


def _check_trials(trials: object) -> int:
    return check_int(trials, "trials", min_value=1)


def _decode_times(
    X: np.ndarray,
    a: np.ndarray,
    mu: np.ndarray,
    loads: np.ndarray,
    b: np.ndarray,
    c: np.ndarray,
    m: float,
) -> np.ndarray:
    """Decode time of each row of `X` (shape (trials, n)) under the batch model."""
    worker = np.repeat(np.arange(a.shape[0]), b)
    j = np.concatenate([np.arange(1, bi + 1) for bi in b]).astype(np.float64)
    rows = (loads / b)[worker]
    period = (loads / b) * (a + X / mu) + c
    finish = period[:, worker] * j
    order = np.argsort(finish, axis=1)
    received = np.cumsum(rows[order], axis=1)
    first = np.argmax(received >= m * (1.0 - 1e-12), axis=1)
    sorted_finish = np.take_along_axis(finish, order, axis=1)
    return sorted_finish[np.arange(X.shape[0]), first]


def simulate_latency(
    profile: WorkerProfile | GroupProfile,
    loads: object,
    *,
    m: float,
    batches: object = None,
    overhead: object = None,
    trials: int = 10_000,
    rng: RngLike = None,
    quantiles: Sequence[float] = (0.5, 0.9, 0.99),
) -> SimulationResult:
    r"""Simulate the decoding latency of any row allocation under a profile.

    Parameters
    ----------
    profile : WorkerProfile or GroupProfile
        Per-worker ``(a_i, mu_i)`` (a GroupProfile is expanded in group order).
    loads : array_like, shape (n,)
        Rows per worker ``l_i >= 0`` (real allowed), ``sum_i l_i >= m``.
    m : float
        Rows the decoder needs, ``m > 0``.
    batches : int or array_like of int, optional
        Batches per worker ``b_i >= 1`` (default 1).
    overhead : float or array_like, optional
        Per-batch overhead ``c_i >= 0`` in seconds (default: the profile's ``c``).
    trials : int
        Number of simulated jobs.
    rng : numpy.random.Generator, int or None
        Seed or generator.
    quantiles : sequence of float
        Probabilities at which to report latency quantiles.

    Returns
    -------
    SimulationResult
        Mean decoding latency, its standard error and quantiles.

    Raises
    ------
    ValueError
        If ``m <= 0``, ``sum(loads) < m``, or the arguments are malformed.

    Notes
    -----
    Draws :math:`X` of shape ``(trials, n)`` (one speed per worker per job) and

    .. math::

        T_{ij} = j \frac{l_i}{b_i}\Big(a_i + \frac{X_i}{\mu_i}\Big) + j c_i, \qquad
        T = \min\Big\{t : \sum_{i,j} \frac{l_i}{b_i} 1[T_{ij} \le t] \ge m\Big\},

    by sorting every trial's batch finish times and accumulating their rows
    (docs/theory/allocation.md#bpcc). Trials are processed in chunks of about
    :math:`2 \times 10^6` batch times.

    Examples
    --------
    >>> p = WorkerProfile.homogeneous(4, a=1.0, mu=2.0)
    >>> r = simulate_latency(p, [1, 1, 1, 1], m=2, trials=2000, rng=1)
    >>> round(r.mean, 1)
    1.3
    """
    workers = _as_workers(profile)
    n = workers.n
    loads = check_real_vector(loads, "loads", min_value=0.0, length=n)
    m = check_real(m, "m", min_value=0.0, strict_min=True)
    if float(loads.sum()) < m:
        raise ValueError(
            f"`loads` must hold at least m={m:g} rows in total, got "
            f"sum(loads)={float(loads.sum()):g}."
        )
    b = _batches_vector(batches, n)
    c = _overhead_vector(overhead, workers)
    trials = _check_trials(trials)
    gen = as_generator(rng)
    active = loads > 0.0
    chunk = max(1, _CHUNK_ELEMENTS // int(b[active].sum()))
    samples = np.empty(trials)
    for start in range(0, trials, chunk):
        stop = min(trials, start + chunk)
        X = gen.standard_exponential((stop - start, n))[:, active]
        samples[start:stop] = _decode_times(
            X,
            workers.a[active],
            workers.mu[active],
            loads[active],
            b[active],
            c[active],
            m,
        )
    return SimulationResult.from_samples(samples, quantiles)


def simulate_physical_limit(
    profile: WorkerProfile | GroupProfile,
    m: float,
    *,
    trials: int = 10_000,
    rng: RngLike = None,
    quantiles: Sequence[float] = (0.5, 0.9, 0.99),
) -> SimulationResult:
    r"""Simulate the physical limit :math:`T_{ideal} = m / \sum_i 1/(a_i + X_i/\mu_i)`.

    Parameters
    ----------
    profile : WorkerProfile or GroupProfile
        Per-worker ``(a_i, mu_i)``.
    m : float
        Rows the job needs, ``m > 0``.
    trials : int
        Number of simulated jobs.
    rng : numpy.random.Generator, int or None
        Seed or generator.
    quantiles : sequence of float
        Probabilities at which to report quantiles.

    Returns
    -------
    SimulationResult
        Samples of the latency of a scheme that wastes no finished work (a perfect
        rateless code with free streaming, docs/theory/model.md#the-physical-limit).

    Raises
    ------
    ValueError
        If ``m <= 0``.

    Notes
    -----
    Worker ``i`` computes rows at speed :math:`1/(a_i + X_i/\mu_i)` in each job, so
    no allocation can finish before :math:`m / \sum_i 1/(a_i + X_i/\mu_i)`; see
    `theory.expected_physical_limit` for the exact expectation.

    Examples
    --------
    >>> p = WorkerProfile(a=[1.0, 1.0], mu=[1e9, 1e9])
    >>> round(simulate_physical_limit(p, 10.0, trials=10, rng=0).mean, 6)
    5.0
    """
    workers = _as_workers(profile)
    m = check_real(m, "m", min_value=0.0, strict_min=True)
    trials = _check_trials(trials)
    gen = as_generator(rng)
    chunk = max(1, _CHUNK_ELEMENTS // workers.n)
    samples = np.empty(trials)
    for start in range(0, trials, chunk):
        stop = min(trials, start + chunk)
        X = gen.standard_exponential((stop - start, workers.n))
        speed = 1.0 / (workers.a + X / workers.mu)
        samples[start:stop] = m / speed.sum(axis=1)
    return SimulationResult.from_samples(samples, quantiles)
