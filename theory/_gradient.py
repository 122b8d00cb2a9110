r"""Expected step time of gradient coding and its baselines (shifted-exponential).

A step of distributed gradient descent over ``n`` data partitions of ``m / n``
rows each: worker ``i`` processes ``l_i`` rows and finishes at
:math:`T_i = l_i (a_i + X_i / \mu_i)`, :math:`X_i \sim \mathrm{Exp}(1)`
independent. Each scheme's step time is a function of the :math:`T_i`:

========================  ===================  ==================================
scheme                    load ``l_i``         step time
========================  ===================  ==================================
``"coded"`` (cyclic MDS)  ``(s + 1) m / n``    :math:`T_{(n-s:n)}`
``"fractional"``          ``(s + 1) m / n``    max over groups of the group's min
``"replication"``         ``(s + 1) m / n``    first time every partition is held
                                               by a finished worker
``"uncoded"``             ``m / n``            :math:`T_{(n:n)}`
``"ignore"``              ``m / n``            :math:`T_{(n-s:n)}` (inexact)
``"partial"``             ``(s + 1) m / n``    as replication, a worker's partial
                                               gradients counted one by one
========================  ===================  ==================================

Since the :math:`T_i` are independent, each step time has an exact CDF ``F``
(Poisson-binomial counts, products over groups, a transfer matrix around the
circle for replication) and :math:`E[T] = \int_0^\infty (1 - F(t))\,dt`
(``docs/theory/gradient_coding.md``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from theory._exact_latency import _integrate, _window
from theory._models import WorkerProfile
from theory._simulation_result import SimulationResult
from theory.rng import RngLike, as_generator
from theory.validation import check_int, check_real

__all__ = [
    "GRADIENT_SCHEMES",
    "GradientSchemeName",
    "expected_gradient_step_time",
    "gradient_loads",
    "simulate_gradient_step_time",
]

GradientSchemeName = Literal[
    "coded", "fractional", "replication", "uncoded", "ignore", "partial"
]
GRADIENT_SCHEMES: tuple[GradientSchemeName, ...] = (
    "coded",
    "fractional",
    "replication",
    "uncoded",
    "ignore",
    "partial",
)


def _check(profile: object, s: object, scheme: object, rows: object):
    if not isinstance(profile, WorkerProfile):
        raise TypeError(
            f"`profile` must be a theory.WorkerProfile, got {type(profile).__name__}."
        )
    n = profile.n
    s = check_int(s, "s", min_value=0)
    if s >= n:
        raise ValueError(f"`s` must satisfy 0 <= s < n, got s={s}, n={n}.")
    if scheme not in GRADIENT_SCHEMES:
        raise ValueError(f"`scheme` must be one of {GRADIENT_SCHEMES}, got {scheme!r}.")
    if scheme == "fractional" and n % (s + 1):
        raise ValueError(
            f"fractional repetition needs s + 1 to divide n, got n={n}, s={s}."
        )
    rows = check_real(rows, "rows", min_value=0.0, strict_min=True)
    return n, s, rows


def gradient_loads(n: int, s: int, scheme: str, *, rows: float = 1.0) -> np.ndarray:
    """Rows each worker processes in one step of `scheme`.

    Parameters
    ----------
    n, s : int
        Workers (= partitions) and stragglers tolerated.
    scheme : {"coded", "fractional", "replication", "uncoded", "ignore", "partial"}
        The scheme.
    rows : float
        Rows ``m`` of the whole data set.

    Returns
    -------
    numpy.ndarray, shape (n,)
        ``(s + 1) m / n`` for the schemes that hold ``s + 1`` partitions a
        worker, ``m / n`` for uncoded and ignore-stragglers.

    Examples
    --------
    >>> gradient_loads(8, 2, "coded", rows=8.0).tolist()[:2]
    [3.0, 3.0]
    """
    n, s, rows = _check(WorkerProfile.homogeneous(n, a=1.0, mu=1.0), s, scheme, rows)
    per = 1 if scheme in ("uncoded", "ignore") else s + 1
    return np.full(n, per * rows / n)


def _finished(t: np.ndarray, profile: WorkerProfile, loads: np.ndarray) -> np.ndarray:
    """``P[T_i <= t]``, shape ``(len(t), n)``."""
    excess = t[:, None] / loads[None, :] - profile.a[None, :]
    return -np.expm1(-profile.mu[None, :] * np.maximum(excess, 0.0))


def _at_least(p: np.ndarray, k: int) -> np.ndarray:
    """P[at least k of the independent events with probabilities p], per row."""
    counts = np.zeros((p.shape[0], p.shape[1] + 1))
    counts[:, 0] = 1.0
    for i in range(p.shape[1]):
        pi = p[:, i : i + 1]
        counts[:, 1:] = counts[:, 1:] * (1 - pi) + counts[:, :-1] * pi
        counts[:, 0] *= 1 - pi[:, 0]
    return counts[:, k:].sum(axis=1)


def _circular_cover(p: np.ndarray, s: int) -> np.ndarray:
    """P[no s + 1 circularly consecutive workers are all unfinished], per row.

    [derived] The state is the length (0..s) of the current run of unfinished
    workers; ``trace(prod_i M_i)`` sums the closed walks, one per configuration.
    """
    states = s + 1
    product = np.broadcast_to(np.eye(states), (p.shape[0], states, states)).copy()
    for i in range(p.shape[1]):
        step = np.zeros((p.shape[0], states, states))
        step[:, :, 0] = p[:, i : i + 1]
        for r in range(s):
            step[:, r, r + 1] = 1 - p[:, i]
        product = product @ step
    return np.trace(product, axis1=1, axis2=2)


def _partial_cover(t: np.ndarray, profile: WorkerProfile, s: int, rows: float):
    """P[every partition has a computed copy] when partial gradients stream back.

    [derived] Worker ``h`` computes partitions ``h, h + 1, .., h + s`` in turn,
    ``T_h / (s + 1)`` each, so by ``t`` it has done ``c_h`` of them with
    ``P[c_h >= k] = P[k T_h / (s + 1) <= t]``. The state before position ``j``
    is the number ``r`` of positions from ``j`` on that earlier workers covered;
    position ``j`` is covered iff ``max(r, c_j) >= 1`` and the next state is
    ``max(r, c_j) - 1``. As for replication, ``trace(prod_j M_j)`` counts each
    configuration once (a start state is forgotten after ``s`` positions).
    """
    n, states = profile.n, s + 1
    per_partition = np.full(n, rows / n)
    at_least = np.ones((len(t), n, s + 3))
    for k in range(1, s + 2):
        at_least[:, :, k] = _finished(t / k, profile, per_partition)
    at_least[:, :, s + 2] = 0.0
    pmf = at_least[:, :, :-1] - at_least[:, :, 1:]  # P[c_h = k], k = 0..s+1
    product = np.broadcast_to(np.eye(states), (len(t), states, states)).copy()
    for j in range(n):
        step = np.zeros((len(t), states, states))
        for r in range(states):
            for c in range(s + 2):
                if max(r, c) >= 1:
                    step[:, r, max(r, c) - 1] += pmf[:, j, c]
        product = product @ step
    return np.trace(product, axis1=1, axis2=2)


def _step_cdf(t: np.ndarray, profile: WorkerProfile, s: int, scheme: str, rows: float):
    n = profile.n
    if scheme == "partial":
        return _partial_cover(t, profile, s, rows)
    p = _finished(t, profile, gradient_loads(n, s, scheme, rows=rows))
    if scheme == "uncoded":
        return p.prod(axis=1)
    if scheme in ("coded", "ignore"):
        return _at_least(p, n - s)
    if scheme == "fractional":
        groups = p.reshape(len(t), n // (s + 1), s + 1)
        return (1 - (1 - groups).prod(axis=2)).prod(axis=1)
    return _circular_cover(p, s)


def expected_gradient_step_time(
    profile: WorkerProfile,
    s: int,
    *,
    scheme: GradientSchemeName = "coded",
    rows: float = 1.0,
) -> float:
    r"""Exact expected step time of a gradient-coding scheme.

    Parameters
    ----------
    profile : WorkerProfile
        Per-worker ``(a_i, mu_i)`` of the ``n`` workers, per row.
    s : int
        Stragglers tolerated, ``0 <= s < n``.
    scheme : {"coded", "fractional", "replication", "uncoded", "ignore", "partial"}
        ``"coded"``: any ``n - s`` workers decode (the cyclic constructions).
    rows : float
        Rows ``m`` of the data set (the time is in the profile's units per row
        times rows; multiply by ``Stragglers.time_unit`` for seconds).

    Returns
    -------
    float
        :math:`E[T] = \int_0^\infty (1 - F(t))\,dt`, ``F`` the step time's CDF.

    Raises
    ------
    ValueError
        ``s >= n``, an unknown scheme, fractional repetition with ``s + 1`` not
        dividing ``n``.

    Notes
    -----
    For identical workers (``a``, ``mu``) and ``l = (s + 1) m / n``:
    coded :math:`l\,(a + (H_n - H_s)/\mu)`; fractional
    :math:`l\,(a + H_{n/(s+1)} / ((s + 1)\mu))`; uncoded
    :math:`\frac{m}{n}(a + H_n/\mu)`; ignore :math:`\frac{m}{n}(a + (H_n -
    H_s)/\mu)`. Replication has no closed form; its CDF is a transfer-matrix
    trace [derived] (``docs/theory/gradient_coding.md``).

    Examples
    --------
    >>> p = WorkerProfile.homogeneous(4, a=1.0, mu=1.0)
    >>> round(expected_gradient_step_time(p, 1, scheme="coded"), 6)  # (1 + 13/12) / 2
    1.041667
    """
    n, s, rows = _check(profile, s, scheme, rows)
    loads = gradient_loads(n, s, scheme, rows=rows)
    start = float(np.min(loads * profile.a))
    scale = float(np.max(loads * (profile.a + 1.0 / profile.mu)))

    def survival(t: np.ndarray) -> np.ndarray:
        return (1.0 - _step_cdf(t, profile, s, scheme, rows))[:, None]

    end = _window(lambda t: survival(t)[:, 0], start, scale)
    return float(start + _integrate(survival, start, end)[0])


def _cover_times(T: np.ndarray, s: int, *, partial: bool = False) -> np.ndarray:
    """Per trial: the time every partition ``j`` has a finished holder.

    Partition ``j`` is held by workers ``j - s .. j`` (mod n), at position ``k``
    of worker ``j - k``'s order; with `partial` returns, that copy is ready at
    ``(k + 1) T / (s + 1)``, else at ``T``.
    """
    n = T.shape[1]
    holders = (np.arange(n)[:, None] - np.arange(s + 1)[None, :]) % n
    ready = T[:, holders]
    if partial:
        ready = ready * (np.arange(1, s + 2) / (s + 1))
    return ready.min(axis=2).max(axis=1)


def simulate_gradient_step_time(
    profile: WorkerProfile,
    s: int,
    *,
    scheme: GradientSchemeName = "coded",
    rows: float = 1.0,
    trials: int = 10_000,
    rng: RngLike = None,
    quantiles: Sequence[float] = (0.5, 0.9, 0.99),
) -> SimulationResult:
    """Monte Carlo of one step's time under `profile` (independent of the CDFs).

    Parameters
    ----------
    profile, s, scheme, rows
        As in :func:`expected_gradient_step_time`.
    trials : int
        Simulated steps.
    rng : Generator, SeedSequence, int or None
        Seed or generator.
    quantiles : sequence of float
        Probabilities at which to report quantiles.

    Returns
    -------
    SimulationResult

    Examples
    --------
    >>> p = WorkerProfile.homogeneous(4, a=1.0, mu=1.0)
    >>> r = simulate_gradient_step_time(p, 1, trials=20_000, rng=0)
    >>> abs(r.mean - expected_gradient_step_time(p, 1)) < 5 * r.stderr
    True
    """
    n, s, rows = _check(profile, s, scheme, rows)
    trials = check_int(trials, "trials", min_value=1)
    loads = gradient_loads(n, s, scheme, rows=rows)
    X = as_generator(rng).exponential(size=(trials, n))
    T = loads * (profile.a + X / profile.mu)
    if scheme == "uncoded":
        times = T.max(axis=1)
    elif scheme in ("coded", "ignore"):
        times = np.sort(T, axis=1)[:, n - s - 1]
    elif scheme == "fractional":
        times = T.reshape(trials, n // (s + 1), s + 1).min(axis=2).max(axis=1)
    else:
        times = _cover_times(T, s, partial=scheme == "partial")
    return SimulationResult.from_samples(times, quantiles)
