r"""Exact expected latencies of integer row allocations (no Monte Carlo).

For a fixed time ``t`` the rows a worker has returned take the values
``0, r_i, 2 r_i, ..., b_i r_i`` (``r_i = l_i/b_i`` rows per batch) with known
probabilities, and workers are independent, so the distribution of the total
rows :math:`S(t)` (capped at ``m``) follows by convolution. Then

.. math:: E[T] = \int_0^\infty P[S(t) < m]\,dt,

integrated by adaptive Gauss-Legendre quadrature.
"""

from __future__ import annotations

import numpy as np

from theory._heterogeneous import _as_workers, _batches_vector, _overhead_vector
from theory._models import GroupProfile, WorkerProfile
from theory.validation import check_int, check_real_vector

__all__ = ["expected_allocation_latency", "expected_order_statistics"]

_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(8)
_TAIL = 1e-12


def _count_pmf(t: np.ndarray, a, mu, r, b, c) -> np.ndarray:
    """P[worker has finished exactly j batches at t], shape (len(t), b + 1)."""
    j = np.arange(1, b + 1, dtype=np.float64)
    slack = (t[:, None] / j - c) / r - a
    done = -np.expm1(-mu * np.maximum(slack, 0.0))
    at_least = np.concatenate(
        [np.ones((t.shape[0], 1)), done, np.zeros((t.shape[0], 1))], axis=1
    )
    return at_least[:, :-1] - at_least[:, 1:]


def _capped_convolve(x: np.ndarray, y: np.ndarray, m: int) -> np.ndarray:
    """Distribution of ``min(X + Y, m)`` from those of ``min(X, m)``, ``min(Y, m)``.

    Row-wise (one row per time) FFT convolution; capping commutes with addition of
    non-negative counts, so the result is exact up to rounding.
    """
    size = 1 << int(np.ceil(np.log2(2 * m + 1)))
    full = np.fft.irfft(np.fft.rfft(x, size) * np.fft.rfft(y, size), size)
    out = np.maximum(full[:, : m + 1], 0.0)
    out[:, m] += np.maximum(full[:, m + 1 : 2 * m + 1], 0.0).sum(axis=1)
    return out


def _add_worker(state, pmf, r: int, m: int) -> np.ndarray:
    """Convolve `state` with one worker returning ``j * r`` rows w.p. ``pmf[:, j]``."""
    tail = np.cumsum(state[:, ::-1], axis=1)[:, ::-1]
    new = state * pmf[:, :1]
    for j in range(1, pmf.shape[1]):
        shift = j * r
        if shift >= m:
            new[:, m] += pmf[:, j] * tail[:, 0]
            continue
        new[:, shift:m] += pmf[:, j : j + 1] * state[:, : m - shift]
        new[:, m] += pmf[:, j] * tail[:, m - shift]
    return new


def _group_distribution(pmf: np.ndarray, count: int, r: int, m: int) -> np.ndarray:
    """Capped rows of `count` i.i.d. workers with batch-count pmf `pmf` (P, b + 1).

    The batch counts add up by an FFT power in the count domain; each batch
    carries `r` rows.
    """
    top = count * (pmf.shape[1] - 1)
    size = 1 << int(np.ceil(np.log2(top + 1)))
    total = np.fft.irfft(np.fft.rfft(pmf, size) ** count, size)[:, : top + 1]
    total = np.maximum(total, 0.0)
    below = min(top + 1, -(-m // r))
    out = np.zeros((pmf.shape[0], m + 1))
    out[:, np.arange(below) * r] = total[:, :below]
    out[:, m] += total[:, below:].sum(axis=1)
    return out


def _rows_distribution(t, a, mu, r, b, c, m: int) -> np.ndarray:
    """Distribution of rows received by each time in `t`, capped at `m`.

    Returns shape (len(t), m + 1); the last column is ``P[S(t) >= m]``. A lone
    worker is added by direct shifts, a group of identical workers by an FFT power
    of its batch counts and one capped FFT convolution.
    """
    table = np.column_stack([a, mu, r, b, c]).astype(np.float64)
    types, counts = np.unique(table, axis=0, return_counts=True)
    state = np.zeros((t.shape[0], m + 1))
    state[:, 0] = 1.0
    for (a_i, mu_i, r_i, b_i, c_i), count in zip(types, counts, strict=True):
        r_i, b_i = int(r_i), int(b_i)
        pmf = _count_pmf(t, a_i, mu_i, r_i, b_i, c_i)
        if count == 1:
            state = _add_worker(state, pmf, r_i, m)
        else:
            group = _group_distribution(pmf, int(count), r_i, m)
            state = _capped_convolve(state, group, m)
    return state


def _integrate(survival, lo: float, hi: float, *, tol: float = 1e-10) -> np.ndarray:
    """Adaptive Gauss-Legendre integral of vector-valued `survival` over [lo, hi].

    `survival` maps times (shape (P,)) to values (shape (P, d)). An interval is
    accepted when its 8-point estimate and the sum of its halves' differ by at
    most its share of ``tol * (hi - lo)``; otherwise the halves are refined. The
    16 starting panels are graded geometrically from ``1e-6 (hi - lo)`` after
    `lo`: a survival that falls within a small fraction of the window (a fast
    worker beside a slow one) would otherwise fall between the nodes of equal
    panels, whose estimate and halves then agree on 0.
    """

    def panels(left, right):
        half = 0.5 * (right - left)
        nodes = (0.5 * (left + right))[:, None] + half[:, None] * _NODES
        values = survival(nodes.reshape(-1)).reshape(*nodes.shape, -1)
        return np.einsum("kqd,q,k->kd", values, _WEIGHTS, half)

    edges = lo + (hi - lo) * np.concatenate([[0.0], np.geomspace(1e-6, 1.0, 16)])
    left, right = edges[:-1], edges[1:]
    whole = panels(left, right)
    total = 0.0
    for _ in range(60):
        mid = 0.5 * (left + right)
        halves = panels(np.concatenate([left, mid]), np.concatenate([mid, right]))
        first, second = np.split(halves, 2)
        error = np.max(np.abs(whole - first - second), axis=1)
        done = error <= tol * (right - left) + 1e-15
        total = total + (first[done] + second[done]).sum(axis=0)
        keep = ~done
        left, right = (
            np.concatenate([left[keep], mid[keep]]),
            np.concatenate([mid[keep], right[keep]]),
        )
        whole = np.concatenate([first[keep], second[keep]])
        if left.size == 0:
            break
    else:  # pragma: no cover - 60 halvings reach float resolution first
        total = total + whole.sum(axis=0)
    return np.atleast_1d(total)


def _window(survival_last, t_lo: float, scale: float) -> float:
    """Return a time after which ``survival_last`` is below 1e-12."""
    step = scale
    for _ in range(200):
        if survival_last(np.array([t_lo + step]))[0] < _TAIL:
            return t_lo + step
        step *= 2.0
    raise RuntimeError("the decoding time has no finite upper tail")  # pragma: no cover


def _deterministic_start(a, r, b, c, m: int) -> float:
    """Earliest possible decode time (every ``X_i = 0``)."""
    worker = np.repeat(np.arange(a.shape[0]), b)
    j = np.concatenate([np.arange(1, bi + 1) for bi in b]).astype(np.float64)
    finish = j * (r * a + c)[worker]
    order = np.argsort(finish)
    reached = np.cumsum(r[worker][order]) >= m
    return float(finish[order][np.argmax(reached)])


def expected_allocation_latency(
    profile: WorkerProfile | GroupProfile,
    loads: object,
    *,
    m: int,
    batches: object = None,
    overhead: object = None,
) -> float:
    r"""Return the exact expected decoding latency of an integer row allocation.

    Parameters
    ----------
    profile : WorkerProfile or GroupProfile
        Per-worker ``(a_i, mu_i)``.
    loads : array_like of int, shape (n,)
        Rows per worker, ``sum >= m``; each ``l_i`` divisible by ``b_i``.
    m : int
        Rows the decoder needs, ``m >= 1``.
    batches : int or array_like of int, optional
        Batches per worker ``b_i >= 1`` (default 1).
    overhead : float or array_like, optional
        Per-batch overhead ``c_i >= 0`` in seconds (default: the profile's ``c``).

    Returns
    -------
    float
        :math:`E[T]` under the model of `theory.simulate_latency`, to about
        ``1e-9`` relative accuracy.

    Raises
    ------
    ValueError
        If loads are not whole rows, not divisible into whole batches, or sum to
        less than `m`.

    Notes
    -----
    Worker ``i`` has finished at least ``j`` batches by ``t`` with probability
    :math:`1 - e^{-\mu_i((t/j - c_i)/r_i - a_i)_+}`, ``r_i = l_i/b_i``; convolving
    the workers' row counts (capped at ``m``) gives :math:`P[S(t) \ge m]` and

    .. math:: E[T] = \int_0^\infty P[S(t) < m]\,dt.

    Cost: ``O(sum_i b_i * m)`` per quadrature node.

    Examples
    --------
    >>> p = WorkerProfile.homogeneous(4, a=1.0, mu=2.0)
    >>> round(expected_allocation_latency(p, [1, 1, 1, 1], m=2), 6)
    1.291667
    """
    workers = _as_workers(profile)
    n = workers.n
    m = check_int(m, "m", min_value=1)
    values = check_real_vector(loads, "loads", min_value=0.0, length=n)
    if np.any(values != np.round(values)):
        raise ValueError(f"`loads` must be whole rows, got {values.tolist()}.")
    rows = values.astype(np.int64)
    b = _batches_vector(batches, n)
    c = _overhead_vector(overhead, workers)
    if np.any(rows % b):
        raise ValueError(
            "every load must split into whole batches (l_i % b_i == 0), got "
            f"loads={rows.tolist()}, batches={b.tolist()}."
        )
    if rows.sum() < m:
        raise ValueError(
            f"`loads` must hold at least m={m} rows in total, got {int(rows.sum())}."
        )
    keep = rows > 0
    a, mu, b, c = workers.a[keep], workers.mu[keep], b[keep], c[keep]
    r = rows[keep] // b

    def survival(t: np.ndarray) -> np.ndarray:
        return 1.0 - _rows_distribution(t, a, mu, r, b, c, m)[:, -1:]

    start = _deterministic_start(a, r, b, c, m)
    scale = float(np.max(b * (r * (a + 1.0 / mu) + c)))
    end = _window(lambda t: survival(t)[:, 0], start, scale)
    return start + float(_integrate(survival, start, end)[0])


def expected_order_statistics(profile: WorkerProfile | GroupProfile) -> np.ndarray:
    r"""Return :math:`E[Y_{(k:n)}]`, ``k = 1..n``, for ``Y_i = a_i + X_i/\mu_i``.

    Parameters
    ----------
    profile : WorkerProfile or GroupProfile
        Per-worker ``(a_i, mu_i)``, not necessarily identical.

    Returns
    -------
    numpy.ndarray, shape (n,)
        Expected ``k``-th smallest per-row time; with equal loads ``l`` and
        decoding at ``k`` workers the latency is ``l`` times entry ``k - 1``.

    Raises
    ------
    TypeError
        If `profile` is not a profile.

    Notes
    -----
    .. math::

        E[Y_{(k:n)}] = \int_0^\infty P\big[\#\{i : Y_i \le y\} < k\big]\,dy,

    the count being Poisson-binomial (computed by convolution). For identical
    workers this is :math:`a + (H_n - H_{n-k})/\mu` (Lee et al. 2018). Cost per
    quadrature node: ``O(n)`` per distinct worker, FFT-sized per group of identical
    ones, so thousands of all-distinct workers are slow.

    Examples
    --------
    >>> p = WorkerProfile.homogeneous(3, a=1.0, mu=1.0)
    >>> np.round(expected_order_statistics(p), 6).tolist()
    [1.333333, 1.833333, 2.833333]
    """
    workers = _as_workers(profile)
    n = workers.n
    ones = np.ones(n, dtype=np.int64)

    def survival(t: np.ndarray) -> np.ndarray:
        counts = _rows_distribution(t, workers.a, workers.mu, ones, ones, 0 * ones, n)
        return np.cumsum(counts[:, :n], axis=1)

    start = float(workers.a.min())
    scale = float(np.max(workers.a + 1.0 / workers.mu))
    end = _window(lambda t: survival(t)[:, -1], start, scale)
    return start + _integrate(survival, start, end)
