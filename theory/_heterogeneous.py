r"""Heterogeneous load allocation: HCMM, Kim et al. and BPCC.

The formulas and their derivations are in docs/theory/allocation.md.

Worker ``i`` given ``l_i`` rows in ``b_i`` equal batches finishes batch ``j`` at

.. math:: T_{ij} = j \frac{l_i}{b_i}\Big(a_i + \frac{X_i}{\mu_i}\Big) + j c_i,
   \qquad X_i \sim \mathrm{Exp}(1),

(one speed draw per worker per job, ``c_i`` the per-batch overhead; ``b_i = 1``,
``c_i = 0`` is the model of HCMM and Kim et al.). The allocators choose loads so
that the expected number of rows back by time ``tau``, ``E[S(tau)]``, reaches the
``m`` rows the decoder needs as early as possible.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from theory._homogeneous import _lambertw_lower_excess
from theory._models import GroupProfile, WorkerProfile
from theory.validation import check_int, check_real, check_real_vector

__all__ = [
    "BPCCOptimum",
    "KimBound",
    "best_loads_at",
    "bpcc_optimum",
    "bpcc_tau",
    "expected_rows",
    "hcmm_lambda",
    "hcmm_latency",
    "hcmm_loads",
    "kim_bound",
    "waterfill_time",
]

_GOLDEN = (np.sqrt(5.0) - 1.0) / 2.0
_GOLDEN_ITERS = 50
BATCH_CHOICES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)
"""Batch counts BPCC chooses among by default."""


def _as_workers(profile: object) -> WorkerProfile:
    """Return `profile` as one entry per worker."""
    if isinstance(profile, WorkerProfile):
        return profile
    if isinstance(profile, GroupProfile):
        return profile.to_workers()
    raise TypeError(
        "`profile` must be a WorkerProfile or GroupProfile, "
        f"got {type(profile).__name__}."
    )


def _check_m(m: object) -> float:
    return check_real(m, "m", min_value=0.0, strict_min=True)


def _positive_shift(a: np.ndarray, what: str) -> None:
    if np.any(a == 0.0):
        raise ValueError(
            f"{what} needs every shift `a` > 0 (with a = 0 the optimal load is "
            f"unbounded; cap it with `l_max`), got a={a.tolist()}."
        )


def waterfill_time(rates: object, c: object, m: float) -> float:
    r"""Smallest ``t`` with :math:`\sum_i r_i (t - c_i)_+ = m` [derived].

    The expected rows of the HCMM, Kim et al. and load-balanced allocations with a
    per-task overhead grow like this: worker ``i`` contributes at rate ``r_i``
    once its overhead ``c_i`` has passed (docs/theory/overhead.md).

    Parameters
    ----------
    rates : array_like, shape (n,)
        Rows per second of each worker once it has started, ``r_i > 0``.
    c : array_like, shape (n,)
        Overhead of each worker in seconds, ``c_i >= 0``.
    m : float
        Rows to reach, ``m > 0``.

    Returns
    -------
    float
        :math:`t^* = (m + \sum_{i \in A} r_i c_i) / \sum_{i \in A} r_i`, ``A`` the
        workers with :math:`c_i < t^*` (found over the ``c`` sorted ascending).

    Examples
    --------
    >>> waterfill_time([1.0, 1.0], [0.0, 0.0], 4.0)
    2.0
    >>> waterfill_time([1.0, 1.0], [0.0, 10.0], 4.0)
    4.0
    """
    r = check_real_vector(rates, "rates", min_value=0.0, strict_min=True)
    c = check_real_vector(c, "c", min_value=0.0, length=r.shape[0])
    m = _check_m(m)
    order = np.argsort(c, kind="stable")
    r, c = r[order], c[order]
    rate, offset = np.cumsum(r), np.cumsum(r * c)
    t = (m + offset) / rate
    nxt = np.append(c[1:], np.inf)
    return float(t[np.argmax(t <= nxt)])


def _batches_vector(batches: object, n: int) -> np.ndarray:
    """Return `batches` as an int64 array of length `n`, entries ``>= 1``."""
    if batches is None:
        return np.ones(n, dtype=np.int64)
    array = np.asarray(batches)
    if array.dtype.kind not in "iu":
        raise TypeError(f"`batches` must hold integers, got dtype {array.dtype}.")
    array = np.broadcast_to(array, (n,)) if array.ndim == 0 else array
    if array.shape != (n,):
        raise ValueError(f"`batches` must have length {n}, got shape {array.shape}.")
    if np.any(array < 1):
        raise ValueError(f"`batches` entries must be >= 1, got {array.tolist()}.")
    return array.astype(np.int64)


def _overhead_vector(overhead: object, workers: WorkerProfile) -> np.ndarray:
    """Return the per-batch overhead (length n): `overhead`, or the profile's ``c``."""
    if overhead is None:
        return workers.c
    n = workers.n
    values = check_real_vector(overhead, "overhead", min_value=0.0)
    if values.shape[0] == 1:
        return np.full(n, values[0])
    if values.shape[0] != n:
        raise ValueError(f"`overhead` must have length {n}, got {values.shape[0]}.")
    return values


def _cap_vector(l_max: object, n: int, m: float) -> np.ndarray:
    """Return the storage cap per worker (``inf`` allowed), default ``m``."""
    if l_max is None:
        return np.full(n, m)
    caps = np.array(np.atleast_1d(np.asarray(l_max, dtype=np.float64)))
    if caps.ndim != 1 or caps.shape[0] not in (1, n):
        raise ValueError(f"`l_max` must be a scalar or length {n}, got {caps.shape}.")
    if np.any(np.isnan(caps)) or np.any(caps <= 0.0):
        raise ValueError(f"`l_max` entries must be > 0, got {caps.tolist()}.")
    return np.broadcast_to(caps, (n,)).copy()


def _rows(t, a, mu, v, b, c) -> np.ndarray:
    r"""Per-worker expected rows by time `t` with batch size `v` (broadcast arrays).

    ``v * sum_{j <= b} P[j v (a + X/mu) + j c <= t]``; the trailing axis of the
    result runs over workers.
    """
    v = np.asarray(v, dtype=np.float64)
    j = np.arange(1, int(np.max(b)) + 1, dtype=np.float64)
    safe = np.where(v > 0.0, v, 1.0)[..., None]
    slack = (np.asarray(t)[..., None] / j - np.asarray(c)[..., None]) / safe
    slack = slack - np.asarray(a)[..., None]
    done = -np.expm1(-np.asarray(mu)[..., None] * np.maximum(slack, 0.0))
    done = np.where(j <= np.asarray(b)[..., None], done, 0.0)
    return v * done.sum(axis=-1)


def _best_rows(t, a, mu, b, c, cap) -> tuple[np.ndarray, np.ndarray]:
    r"""Maximise each worker's expected rows by `t` over its load ``l <= cap``.

    In the batch size ``v = l/b`` the objective is concave on each piece between
    the points ``V_k = (t/k - c)/a`` beyond which batch ``k`` cannot finish (the
    active batches are fixed on a piece), so a golden-section search on every
    piece followed by the best piece finds the global maximum. Returns
    ``(rows, loads)``, one entry per worker.
    """
    n = a.shape[0]
    t = np.broadcast_to(np.asarray(t, dtype=np.float64), (n,))[:, None]
    k = np.arange(1, int(b.max()) + 1, dtype=np.float64)
    a2, c2, b2 = a[:, None], c[:, None], b[:, None].astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        v_hi = np.where(a2 > 0.0, (t / k - c2) / a2, np.inf)
        v_lo = np.where((k < b2) & (a2 > 0.0), (t / (k + 1.0) - c2) / a2, 0.0)
    hi = np.minimum(v_hi, cap[:, None] / b2)
    lo = np.maximum(v_lo, 0.0)
    usable = (hi > lo) & (k <= b2)
    lo, hi = np.where(usable, lo, 0.0), np.where(usable, hi, 0.0)

    # _rows(t, a2, mu, v, b2, c2) with its v-free part, t/j - c, computed once
    # (-inf for batches j > b, which then add nothing)
    reach = np.where(k <= b2[..., None], t[..., None] / k - c2[..., None], -np.inf)
    rate = mu[:, None, None]

    def f(v):
        safe = np.where(v > 0.0, v, 1.0)[..., None]
        slack = np.maximum(reach / safe - a2[..., None], 0.0)
        return v * (-np.expm1(-rate * slack)).sum(axis=-1)

    x1, x2 = hi - _GOLDEN * (hi - lo), lo + _GOLDEN * (hi - lo)
    f1, f2 = f(x1), f(x2)
    for _ in range(_GOLDEN_ITERS):  # one new probe per piece and step
        left = f1 >= f2
        lo, hi = np.where(left, lo, x1), np.where(left, x2, hi)
        x1_new = np.where(left, hi - _GOLDEN * (hi - lo), x2)
        x2_new = np.where(left, x1, lo + _GOLDEN * (hi - lo))
        probe = f(np.where(left, x1_new, x2_new))
        f1, f2 = np.where(left, probe, f2), np.where(left, f1, probe)
        x1, x2 = x1_new, x2_new
    v = np.where(f1 >= f2, x1, x2)
    value = np.where(usable, f(v), -np.inf)
    best = np.argmax(value, axis=1)
    rows = np.maximum(value[np.arange(n), best], 0.0)
    loads = np.where(rows > 0.0, v[np.arange(n), best] * b, 0.0)
    return rows, loads


def best_loads_at(
    profile: WorkerProfile | GroupProfile,
    t: float,
    *,
    batches: object,
    l_max: object = None,
) -> np.ndarray:
    """Return each worker's real load maximising its expected rows by time `t`.

    Parameters
    ----------
    profile : WorkerProfile or GroupProfile
        Per-worker ``(a_i, mu_i, c_i)``.
    t : float
        Design time ``> 0``.
    batches : int or array_like of int
        Batches per worker.
    l_max : float or array_like, optional
        Cap on each worker's rows (default none).

    Returns
    -------
    numpy.ndarray, shape (n,)
        The maximisers of `expected_rows` per worker (0 where nothing can finish).
    """
    workers = _as_workers(profile)
    n = workers.n
    t = _check_m(t)
    caps = np.full(n, np.inf) if l_max is None else _cap_vector(l_max, n, np.inf)
    b = _batches_vector(batches, n)
    return _best_rows(t, workers.a, workers.mu, b, workers.c, caps)[1]


def _best_over_batches(t, a, mu, candidates, c, cap):
    """Best expected rows per worker over candidate batch counts (list of arrays).

    Each candidate is searched in its own vectorised call (its cost grows as the
    square of its largest count, so padding every candidate to the largest would
    multiply the work); ties (to 1e-12 relative) go to the earliest candidate,
    i.e. the fewest batches.
    """
    n = a.shape[0]
    searched = [_best_rows(t, a, mu, b, c, cap) for b in candidates]
    rows = np.stack([found[0] for found in searched])
    loads = np.stack([found[1] for found in searched])
    first = np.argmax(rows >= rows.max(axis=0) * (1.0 - 1e-12), axis=0)
    pick = np.arange(n)
    return [rows[first, pick], loads[first, pick], np.stack(candidates)[first, pick]]


def _unique_workers(*columns: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Deduplicate rows of parameter columns: returns (table, inverse, counts)."""
    table = np.column_stack([np.asarray(col, dtype=np.float64) for col in columns])
    unique, inverse, counts = np.unique(
        table, axis=0, return_inverse=True, return_counts=True
    )
    return unique, inverse.reshape(-1), counts


def hcmm_lambda(profile: WorkerProfile | GroupProfile) -> np.ndarray:
    r"""Return HCMM's per-row time constant :math:`\lambda_i` for every worker.

    Parameters
    ----------
    profile : WorkerProfile or GroupProfile
        Shifts ``a_i > 0`` and rates ``mu_i``.

    Returns
    -------
    numpy.ndarray, shape (n,)
        :math:`\lambda_i > a_i`, seconds per row; the HCMM load is
        :math:`\tau^*/\lambda_i`.

    Raises
    ------
    ValueError
        If some ``a_i = 0`` (the load would be unbounded).

    Notes
    -----
    For fixed :math:`t`, :math:`l\,P[l(a + X/\mu) \le t]` is maximised by
    :math:`l = t/\lambda`, where :math:`\lambda > a` solves
    :math:`e^{\mu\lambda} = e^{\mu a}(1 + \mu\lambda)`:

    .. math:: \lambda_i = -\frac{1 + W_{-1}(-e^{-(1 + \mu_i a_i)})}{\mu_i}.

    References
    ----------
    .. [1] A. Reisizadeh, S. Prakash, R. Pedarsani, A. S. Avestimehr, "Coded
       Computation over Heterogeneous Clusters", IEEE Trans. Inf. Theory 65(7),
       2019.

    Examples
    --------
    >>> round(float(hcmm_lambda(WorkerProfile(a=[1.0], mu=[4.0]))[0]), 4)
    1.4842
    """
    workers = _as_workers(profile)
    _positive_shift(workers.a, "HCMM")
    return _lambertw_lower_excess(workers.mu * workers.a) / workers.mu


def hcmm_latency(profile: WorkerProfile | GroupProfile, m: float) -> float:
    r"""Return HCMM's optimal time :math:`\tau^*` with :math:`E[S(\tau^*)] = m`.

    Parameters
    ----------
    profile : WorkerProfile or GroupProfile
        Shifts ``a_i > 0`` and rates ``mu_i``.
    m : float
        Rows the decoder needs, ``m > 0``.

    Returns
    -------
    float
        :math:`\tau^*`, the smallest time at which the optimally loaded workers
        return ``m`` rows in expectation (``E[T_HCMM] / tau* -> 1`` as ``n`` grows).

    Raises
    ------
    ValueError
        If ``m <= 0`` or some ``a_i = 0``.

    Notes
    -----
    With :math:`W_i = W_{-1}(-e^{-(1 + \mu_i a_i)})` each worker returns at most
    :math:`t\,\mu_i/(-W_i)` rows in expectation by time :math:`t`, so

    .. math:: \tau^* = \frac{m}{\sum_i \mu_i / (-W_i)}.

    With the profile's per-task overhead ``c_i`` a task of ``l`` rows lasts
    ``c_i + l (a_i + X_i/mu_i)``: worker ``i`` returns at most
    :math:`(t - c_i)_+ \mu_i/(-W_i)` rows by ``t`` and :math:`\tau^*` solves
    :math:`\sum_i (\tau - c_i)_+ \mu_i/(-W_i) = m` (`waterfill_time`; [derived],
    docs/theory/overhead.md); ``c = 0`` gives the paper's value.

    References
    ----------
    .. [1] A. Reisizadeh, S. Prakash, R. Pedarsani, A. S. Avestimehr, "Coded
       Computation over Heterogeneous Clusters", IEEE Trans. Inf. Theory 65(7),
       2019.

    Examples
    --------
    >>> g = GroupProfile(N=[5, 5], a=[1, 2], mu=[4, 1])
    >>> round(hcmm_latency(g, 1000.0), 2)
    250.44
    """
    workers = _as_workers(profile)
    m = _check_m(m)
    _positive_shift(workers.a, "HCMM")
    rates = workers.mu / (1.0 + _lambertw_lower_excess(workers.mu * workers.a))
    if not np.any(workers.c):
        return m / float(np.sum(rates))
    return waterfill_time(rates, workers.c, m)


def hcmm_loads(profile: WorkerProfile | GroupProfile, m: float) -> np.ndarray:
    r"""Return HCMM's real-valued loads :math:`l_i^* = \tau^*/\lambda_i`.

    Parameters
    ----------
    profile : WorkerProfile or GroupProfile
        Shifts ``a_i > 0`` and rates ``mu_i``.
    m : float
        Rows the decoder needs, ``m > 0``.

    Returns
    -------
    numpy.ndarray, shape (n,)
        Rows per worker (not rounded).

    Raises
    ------
    ValueError
        If ``m <= 0`` or some ``a_i = 0``.

    Notes
    -----
    .. math:: l_i^* = \frac{(\tau^* - c_i)_+}{\lambda_i}, \qquad
       \sum_i l_i^* P[T_i \le \tau^*] = m

    (``c_i = 0`` in the paper; with an overhead, [derived] in
    docs/theory/overhead.md).

    References
    ----------
    .. [1] A. Reisizadeh, S. Prakash, R. Pedarsani, A. S. Avestimehr, "Coded
       Computation over Heterogeneous Clusters", IEEE Trans. Inf. Theory 65(7),
       2019.

    Examples
    --------
    >>> g = GroupProfile(N=[20, 30, 50], a=[1, 1, 1], mu=[4, 2, 1])
    >>> np.round(hcmm_loads(g, 1000.0)[[0, 20, 50]], 2).tolist()
    [16.54, 14.0, 11.44]
    """
    workers = _as_workers(profile)
    tau = hcmm_latency(workers, m)
    return np.maximum(tau - workers.c, 0.0) / hcmm_lambda(workers)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class KimBound:
    """Kim et al.'s minimised latency lower bound and its per-group loads.

    Parameters
    ----------
    latency : float
        The minimised lower bound ``T*`` (seconds).
    loads : numpy.ndarray, shape (G,)
        Rows per worker of each group (real).
    k : numpy.ndarray, shape (G,)
        Workers the bound waits for in each group (integers for the finite-N
        program, ``N_j (1 + 1/W_j)`` for the large-N closed form).
    """

    latency: float
    loads: np.ndarray
    k: np.ndarray

    def __post_init__(self) -> None:
        object.__setattr__(self, "latency", check_real(self.latency, "latency"))
        object.__setattr__(self, "loads", check_real_vector(self.loads, "loads"))
        object.__setattr__(self, "k", check_real_vector(self.k, "k"))


def kim_bound(groups: GroupProfile, m: float, *, exact: bool = True) -> KimBound:
    r"""Minimise Kim et al.'s lower bound on the latency of a group allocation.

    Parameters
    ----------
    groups : GroupProfile
        ``N_j`` workers of ``(a_j, mu_j)`` per group (a WorkerProfile is grouped
        by exact equality).
    m : float
        Rows the decoder needs, ``m > 0``.
    exact : bool
        Solve the finite-N program over integer ``k_j`` (default) or return the
        large-N closed form (needs every ``a_j > 0``).

    Returns
    -------
    KimBound
        ``T*``, the per-group loads ``l_j`` and the ``k_j``.

    Raises
    ------
    ValueError
        If ``m <= 0``, or ``exact=False`` with some ``a_j = 0``.

    Notes
    -----
    The master waits for the :math:`k_j` fastest of group :math:`j`
    (:math:`\sum_j k_j l_j \ge m`), and
    :math:`E[T] \ge \max_j l_j (a_j + (H_{N_j} - H_{N_j - k_j})/\mu_j)`.
    Equalising the groups and maximising each term:

    .. math::

        T^*_{LB} = \frac{m}{\sum_j \max_{1 \le k \le N_j} k / c_j(k)}, \quad
        c_j(k) = a_j + \frac{H_{N_j} - H_{N_j - k}}{\mu_j}, \quad
        l_j = \frac{T^*_{LB}}{c_j(k_j^*)}.

    As :math:`N_j \to \infty`, :math:`k_j^*/N_j \to 1 + 1/W_j`,
    :math:`T^* = m / \sum_j N_j \mu_j/(-W_j)` and
    :math:`l_j^* = T^* \mu_j / (-(1 + W_j))`, with
    :math:`W_j = W_{-1}(-e^{-(1 + \mu_j a_j)})`: HCMM's loads (the paper states
    the model and the claim, the formulas are derived here). With per-task
    overheads ``c_j`` the bound of group ``j`` is ``c_j + l_j c_j(k)``, so ``T``
    solves :math:`\sum_j (T - c_j)_+ R_j = m` with the same maximised ratios
    :math:`R_j = \max_k k/c_j(k)` (`waterfill_time`) and
    :math:`l_j = (T - c_j)_+/c_j(k_j^*)` ([derived], docs/theory/overhead.md).

    References
    ----------
    .. [1] D. Kim, H. Park, J. K. Choi, "Optimal Load Allocation for Coded
       Distributed Computation in Heterogeneous Clusters", IEEE Trans. Commun.,
       2020 (arXiv:1904.09496).

    Examples
    --------
    >>> g = GroupProfile(N=[20, 30, 50], a=[1, 1, 1], mu=[4, 2, 1])
    >>> round(kim_bound(g, 1000.0).latency, 3)
    24.156
    >>> large = kim_bound(g, 1000.0, exact=False)
    >>> round(large.latency, 3), np.round(large.loads, 2).tolist()
    (24.544, [16.54, 14.0, 11.44])
    """
    if isinstance(groups, WorkerProfile):
        groups = groups.to_groups()
    if not isinstance(groups, GroupProfile):
        raise TypeError(
            f"`groups` must be a GroupProfile, got {type(groups).__name__}."
        )
    m = _check_m(m)
    if not exact:
        _positive_shift(groups.a, "Kim et al.'s large-N form")
        u = _lambertw_lower_excess(groups.mu * groups.a)
        latency = waterfill_time(groups.N * groups.mu / (1.0 + u), groups.c, m)
        return KimBound(
            latency=latency,
            loads=np.maximum(latency - groups.c, 0.0) * groups.mu / u,
            k=groups.N * u / (1.0 + u),
        )
    best_ratio, best_k, best_c = [], [], []
    for N, a, mu in zip(groups.N.astype(np.int64), groups.a, groups.mu, strict=True):
        tail = np.cumsum(1.0 / np.arange(N, 0, -1, dtype=np.float64))
        cost = a + tail / mu
        ratio = np.arange(1, N + 1) / cost
        k = int(np.argmax(ratio))
        best_ratio.append(ratio[k])
        best_k.append(k + 1)
        best_c.append(cost[k])
    latency = waterfill_time(best_ratio, groups.c, m)
    loads = np.maximum(latency - groups.c, 0.0) / np.array(best_c)
    return KimBound(latency=latency, loads=loads, k=best_k)


def expected_rows(
    profile: WorkerProfile | GroupProfile,
    loads: object,
    t: object,
    *,
    batches: object = None,
    overhead: object = None,
    per_worker: bool = False,
) -> np.ndarray:
    r"""Return :math:`E[S(t)]`, the expected rows returned by time `t`.

    Parameters
    ----------
    profile : WorkerProfile or GroupProfile
        Per-worker ``(a_i, mu_i)``.
    loads : array_like, shape (n,)
        Rows per worker ``l_i >= 0`` (real allowed).
    t : float or array_like
        Time(s) ``>= 0``.
    batches : int or array_like of int, optional
        Batches per worker ``b_i >= 1`` (default 1: no batching).
    overhead : float or array_like, optional
        Per-batch overhead ``c_i >= 0`` in seconds (default: the profile's ``c``).
    per_worker : bool
        Return each worker's term (trailing axis of length ``n``) instead of the
        sum.

    Returns
    -------
    numpy.ndarray
        :math:`E[S(t)]` with the shape of `t` (plus a trailing worker axis if
        `per_worker`).

    Raises
    ------
    ValueError
        On negative loads or times, or mismatched lengths.

    Notes
    -----
    .. math::

        E[S(t)] = \sum_i \frac{l_i}{b_i} \sum_{j=1}^{b_i}
        \Big(1 - e^{-\mu_i\left((t/j - c_i)\, b_i/l_i - a_i\right)}\Big)_+ .

    With ``b_i = 1``, ``c_i = 0`` this is HCMM's objective [1]_; with batches it
    is the BPCC objective of docs/theory/allocation.md#bpcc [2]_ (our
    formulation: one speed draw per worker per job).

    References
    ----------
    .. [1] A. Reisizadeh, S. Prakash, R. Pedarsani, A. S. Avestimehr, "Coded
       Computation over Heterogeneous Clusters", IEEE Trans. Inf. Theory 65(7),
       2019.
    .. [2] B. Wang, J. Xie, K. Lu, Y. Wan, S. Fu, "On Batch-Processing Based Coded
       Computing for Heterogeneous Distributed Computing Systems", IEEE Trans.
       Netw. Sci. Eng. 8(3), 2021.

    Examples
    --------
    >>> p = WorkerProfile(a=[1.0], mu=[1.0])
    >>> round(float(expected_rows(p, [1.0], 2.0)), 4)
    0.6321
    """
    workers = _as_workers(profile)
    n = workers.n
    loads = check_real_vector(loads, "loads", min_value=0.0, length=n)
    b = _batches_vector(batches, n)
    c = _overhead_vector(overhead, workers)
    times = np.asarray(t, dtype=np.float64)
    if np.any(~np.isfinite(times)) or np.any(times < 0.0):
        raise ValueError(f"`t` must be finite and >= 0, got {times.tolist()}.")
    terms = _rows(times[..., None], workers.a, workers.mu, loads / b, b, c)
    return terms if per_worker else terms.sum(axis=-1)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class BPCCOptimum:
    """The BPCC allocation that minimises ``tau`` subject to ``E[S(tau)] >= m``.

    Parameters
    ----------
    latency : float
        ``tau*`` in seconds.
    loads : numpy.ndarray, shape (n,)
        Real rows per worker.
    batches : numpy.ndarray of int64, shape (n,)
        Batches per worker.
    """

    latency: float
    loads: np.ndarray
    batches: np.ndarray

    def __post_init__(self) -> None:
        object.__setattr__(self, "latency", check_real(self.latency, "latency"))
        object.__setattr__(
            self, "loads", check_real_vector(self.loads, "loads", min_value=0.0)
        )
        batches = np.array(self.batches, dtype=np.int64)
        batches.setflags(write=False)
        object.__setattr__(self, "batches", batches)


def _bisect_tau(value_at, m: float) -> float:
    """Smallest ``tau`` with ``value_at(tau) >= m`` (``value_at`` continuous, rising).

    Brackets by doubling, then Brent's method to relative ``1e-13``.
    """
    lo, hi = 0.0, 1.0
    for _ in range(2000):
        if value_at(hi) >= m:
            break
        lo, hi = hi, 2.0 * hi
    else:  # pragma: no cover - guarded by the cap checks
        raise ValueError(f"expected rows never reach m={m}.")
    return float(
        optimize.brentq(lambda t: value_at(t) - m, lo, hi, xtol=1e-300, rtol=1e-13)
    )


def bpcc_tau(
    profile: WorkerProfile | GroupProfile,
    loads: object,
    *,
    m: float,
    batches: object = None,
    overhead: object = None,
) -> float:
    r"""Return the smallest ``tau`` with ``E[S(tau)] >= m`` for given loads.

    Parameters
    ----------
    profile : WorkerProfile or GroupProfile
        Per-worker ``(a_i, mu_i)``.
    loads : array_like, shape (n,)
        Rows per worker, ``sum_i l_i > m``.
    m : float
        Rows the decoder needs, ``m > 0``.
    batches : int or array_like of int, optional
        Batches per worker (default 1).
    overhead : float or array_like, optional
        Per-batch overhead ``c_i >= 0`` in seconds (default: the profile's ``c``).

    Returns
    -------
    float
        The design time of the allocation (HCMM's and BPCC's objective), found by
        bisection to relative ``1e-14``.

    Raises
    ------
    ValueError
        If ``sum(loads) <= m`` (``E[S(t)] < m`` for every finite ``t``).

    Notes
    -----
    :math:`\tau = \min\{t : E[S(t)] \ge m\}` with :math:`E[S(t)]` of
    `expected_rows`; for HCMM's loads it equals `hcmm_latency`.

    Examples
    --------
    >>> g = GroupProfile(N=[5, 5], a=[1, 2], mu=[4, 1])
    >>> round(bpcc_tau(g, hcmm_loads(g, 1000.0), m=1000.0), 2)
    250.44
    """
    m = _check_m(m)
    total = float(np.sum(check_real_vector(loads, "loads", min_value=0.0)))
    if total <= m:
        raise ValueError(
            f"`loads` must hold more than m={m:g} rows for E[S] to reach m, got "
            f"sum(loads)={total:g}."
        )
    return _bisect_tau(
        lambda t: float(
            expected_rows(profile, loads, t, batches=batches, overhead=overhead)
        ),
        m,
    )


def bpcc_optimum(
    profile: WorkerProfile | GroupProfile,
    m: float,
    *,
    batches: object = 1,
    overhead: object = None,
    l_max: object = None,
    batch_choices: Sequence[int] = BATCH_CHOICES,
) -> BPCCOptimum:
    r"""Minimise BPCC's ``tau`` subject to ``E[S(tau)] >= m`` over loads (and batches).

    Parameters
    ----------
    profile : WorkerProfile or GroupProfile
        Per-worker ``(a_i, mu_i)``.
    m : float
        Rows the decoder needs, ``m > 0``.
    batches : int, array_like of int, or None
        Batches per worker ``b_i >= 1`` (default 1, which is HCMM), or None to
        choose each worker's count among `batch_choices` by search.
    overhead : float or array_like, optional
        Per-batch overhead ``c_i >= 0`` in seconds (default: the profile's
        ``c``; 0 is BPCC-1, > 0 BPCC-2).
    l_max : float or array_like, optional
        Storage cap on each worker's rows (default ``m``; ``numpy.inf`` for none).
    batch_choices : sequence of int
        Counts searched when ``batches=None`` (default
        1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64). For a fixed ``tau`` each
        worker's expected rows depend on its own ``(l_i, b_i)`` only, so the
        per-worker best count minimises ``tau`` over all count vectors.

    Returns
    -------
    BPCCOptimum
        ``tau*``, the real loads and the batch counts.

    Raises
    ------
    ValueError
        If ``m <= 0``, if ``sum_i l_max_i <= m`` (the expected rows never reach
        ``m``), or if some ``a_i = 0`` with no cap.

    Notes
    -----
    With :math:`c_i = 0` the problem scales (docs/theory/allocation.md#bpcc):
    :math:`E[S_i(\tau)] = \tau\, g_i(l_i/\tau)`,

    .. math::

        g_i(u) = \frac{u}{b_i}\sum_{j=1}^{b_i}
        \Big(1 - e^{-\mu_i(b_i/(j u) - a_i)}\Big)_+, \qquad
        \tau^* = \frac{m}{\sum_i g_i(u_i^*)}, \quad l_i^* = \tau^* u_i^*,

    :math:`u_i^* = \arg\max g_i`; if a cap binds, or :math:`c_i > 0`, ``tau`` is
    found by bisection on :math:`\max_{l \le l_{max}} E[S(\tau)] \ge m`. Each
    worker's maximum is a golden-section search on every piece between the loads
    at which one more batch can no longer finish (the objective is concave on each
    piece), so multiple local maxima are handled. ``b_i = 1`` reproduces HCMM; as
    ``b_i`` grows (no cap) ``tau*`` tends to
    :math:`m / \sum_i \mu_i e^{\mu_i a_i} E_1(\mu_i a_i)`
    (`theory.physical_limit_bound`).

    References
    ----------
    .. [1] B. Wang, J. Xie, K. Lu, Y. Wan, S. Fu, "On Batch-Processing Based Coded
       Computing for Heterogeneous Distributed Computing Systems", IEEE Trans.
       Netw. Sci. Eng. 8(3), 2021.

    Examples
    --------
    >>> g = GroupProfile(N=[20, 30, 50], a=[1, 1, 1], mu=[4, 2, 1])
    >>> round(bpcc_optimum(g, 1000.0, batches=8).latency, 2)
    16.04
    """
    workers = _as_workers(profile)
    n = workers.n
    m = _check_m(m)
    c = _overhead_vector(overhead, workers)
    cap = _cap_vector(l_max, n, m)
    if float(np.sum(cap)) <= m:
        raise ValueError(
            f"`l_max` is too small: the expected rows reach m={m:g} only if "
            f"sum(l_max) > m, got sum(l_max)={float(np.sum(cap)):g}."
        )
    if np.any((workers.a == 0.0) & np.isinf(cap)):
        raise ValueError(
            "a worker with a = 0 takes unbounded load; set a finite `l_max`, got "
            f"a={workers.a.tolist()}."
        )
    if batches is None:
        choices = [check_int(b, "batch_choices", min_value=1) for b in batch_choices]
        if not choices:
            raise ValueError("`batch_choices` must not be empty, got ().")
        candidates = [np.full(n, b, dtype=np.int64) for b in choices]
    else:
        candidates = [_batches_vector(batches, n)]
    stack = [workers.a, workers.mu, c, cap, *candidates]
    table, inverse, counts = _unique_workers(*stack)
    a_u, mu_u, c_u, cap_u = table[:, 0], table[:, 1], table[:, 2], table[:, 3]
    cands_u = [table[:, 4 + i].astype(np.int64) for i in range(len(candidates))]

    def solve_at(tau: float, caps: np.ndarray):
        return _best_over_batches(tau, a_u, mu_u, cands_u, c_u, caps)

    tau = None
    if np.all(c_u == 0.0) and np.all(a_u > 0.0):
        g, u, b_u = solve_at(1.0, np.full(a_u.shape[0], np.inf))
        tau = m / float(np.sum(counts * g))
        loads_u = tau * u
        if np.any(loads_u > cap_u * (1.0 + 1e-12)):
            tau = None
    if tau is None:
        tau = _bisect_tau(lambda s: float(np.sum(counts * solve_at(s, cap_u)[0])), m)
        _, loads_u, b_u = solve_at(tau, cap_u)
    return BPCCOptimum(latency=tau, loads=loads_u[inverse], batches=b_u[inverse])
