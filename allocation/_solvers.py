r"""Allocation solvers: uniform coded, load-balanced uncoded, HCMM, Kim et al., BPCC.

Every solver is a pure function of a profile (docs/theory/model.md) and the number
``m`` of rows the decoder needs, and returns a frozen `Allocation` of whole rows
(and whole batches) per worker.

*Rounding.* The real-valued optimum of HCMM, Kim et al. and BPCC is rounded per
worker to the better of the two neighbouring whole batch sizes, judged by the
worker's expected rows at the design time ``tau`` (the objective the real optimum
maximises); ``tau`` is then recomputed for the integer loads and the choice
repeated. Integer loads always hold more than ``m`` rows, so the decoding
condition ``E[S(tau)] = m`` is met at a finite ``tau``.

*Predicted latency.* ``Allocation.expected_latency`` is the exact expected
decoding latency of the integer allocation under the model
(`theory.expected_allocation_latency`, quadrature to ~1e-9 relative); the
simulator's mean agrees with it within Monte Carlo error.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from allocation._types import Allocation
from theory import (
    GroupProfile,
    WorkerProfile,
    bpcc_optimum,
    bpcc_tau,
    expected_allocation_latency,
    expected_order_statistics,
    expected_rows,
    hcmm_latency,
    hcmm_loads,
    kim_bound,
)
from theory._validation import check_int, check_real

__all__ = [
    "solve_bpcc",
    "solve_hcmm",
    "solve_kim",
    "solve_load_balanced",
    "solve_uniform",
]

_BATCH_CANDIDATES = (1, 2, 4, 8, 16, 32, 64)
_ROUNDING_PASSES = 3


def _check_problem(profile: object, m: object) -> tuple[WorkerProfile, int]:
    """Validate the profile and ``m >= 1``; return the per-worker profile."""
    if isinstance(profile, GroupProfile):
        profile = profile.to_workers()
    if not isinstance(profile, WorkerProfile):
        raise TypeError(
            "`profile` must be a WorkerProfile or GroupProfile, "
            f"got {type(profile).__name__}."
        )
    return profile, check_int(m, "m", min_value=1)


def _finish(
    workers: WorkerProfile,
    m: int,
    loads: np.ndarray,
    solver: str,
    *,
    batches: np.ndarray | None = None,
    overhead: np.ndarray | None = None,
) -> Allocation:
    """Attach the exact expected latency and build the Allocation."""
    batches = np.ones(workers.n, dtype=np.int64) if batches is None else batches
    batches = np.where(loads > 0, batches, 1)
    overhead = np.zeros(workers.n) if overhead is None else overhead
    latency = expected_allocation_latency(
        workers, loads, m=m, batches=batches, overhead=overhead
    )
    return Allocation(
        loads=loads,
        batches=batches,
        m=m,
        expected_latency=latency,
        solver=solver,
        overhead=overhead,
    )


def _round(
    workers: WorkerProfile,
    m: int,
    tau: float,
    options: list[tuple[np.ndarray, np.ndarray, float]],
    *,
    overhead: np.ndarray,
    cap: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Round real loads to whole batches per worker; return (loads, batches).

    `options` holds ``(batches, real loads, tau of those loads)``; a worker's
    candidates are the floor and ceiling batch sizes of each option, rescaled to
    the current design time, judged by the worker's expected rows at that time.
    """
    candidates = []
    for b, loads, tau_b in options:
        size = loads / b * (tau / tau_b)
        top = np.floor(cap / b)
        for s in (np.floor(size), np.floor(size) + 1.0):
            candidates.append((np.minimum(s, top) * b, b))
    loads = batches = None
    for _ in range(_ROUNDING_PASSES):
        rows = np.stack(
            [
                expected_rows(
                    workers, cand, tau, batches=b, overhead=overhead, per_worker=True
                )
                for cand, b in candidates
            ]
        )
        best = np.argmax(rows, axis=0)
        pick = np.arange(workers.n)
        loads = np.stack([cand for cand, _ in candidates])[best, pick]
        batches = np.stack([b for _, b in candidates])[best, pick]
        loads, batches = _top_up(workers, m, tau, loads, batches, overhead, cap)
        tau = bpcc_tau(workers, loads, m=m, batches=batches, overhead=overhead)
    return loads.astype(np.int64), batches.astype(np.int64)


def _top_up(workers, m, tau, loads, batches, overhead, cap):
    """Add whole batches where they gain most until the loads exceed ``m`` rows."""
    loads = loads.copy()
    while loads.sum() <= m:
        room = loads + batches <= cap
        if not room.any():
            raise ValueError(
                f"the storage cap `l_max` is too small to hold more than m={m} rows "
                f"in whole batches, got at most {int(loads.sum())}."
            )
        gain = expected_rows(
            workers,
            loads + batches,
            tau,
            batches=batches,
            overhead=overhead,
            per_worker=True,
        ) - expected_rows(
            workers, loads, tau, batches=batches, overhead=overhead, per_worker=True
        )
        i = int(np.argmax(np.where(room, gain, -np.inf)))
        loads[i] += batches[i]
    return loads, batches


def solve_uniform(
    profile: WorkerProfile | GroupProfile,
    m: int,
    *,
    n_rows: int | None = None,
    redundancy: float | None = None,
) -> Allocation:
    r"""Uniform coded allocation: equal rows per worker, decode at any ``m`` rows.

    Parameters
    ----------
    profile : WorkerProfile or GroupProfile
        Per-worker ``(a_i, mu_i)``.
    m : int
        Rows the decoder needs, ``m >= 1``.
    n_rows : int, optional
        Total coded rows ``>= m``, split as evenly as possible (loads differ by at
        most one row).
    redundancy : float, optional
        Total rows as a multiple of ``m`` (``>= 1``), rounded up. Give at most one
        of `n_rows` and `redundancy`; with neither, the best equal load is found by
        search.

    Returns
    -------
    Allocation
        ``solver="uniform"``.

    Raises
    ------
    ValueError
        If ``m < 1``, ``n_rows < m``, ``redundancy < 1`` or both are given.

    Notes
    -----
    With equal loads ``l`` the decoder waits for the ``k = ceil(m/l)`` fastest
    workers, :math:`E[T] = l\,E[Y_{(k:n)}]`, :math:`Y_i = a_i + X_i/\mu_i`. The
    search evaluates every ``k = 1..n`` with ``l = ceil(m/k)`` from the exact
    order statistics (`theory.expected_order_statistics`) and keeps the best: the
    uniform code at its best total redundancy (Lee et al. 2018 for identical
    workers, where the order statistic is :math:`a + (H_n - H_{n-k})/\mu`).

    References
    ----------
    .. [1] K. Lee, M. Lam, R. Pedarsani, D. Papailiopoulos, K. Ramchandran,
       "Speeding Up Distributed Machine Learning Using Codes", IEEE Trans. Inf.
       Theory 64(3), 2018.

    Examples
    --------
    >>> p = WorkerProfile.homogeneous(4, a=1.0, mu=1.0)
    >>> solve_uniform(p, 8, n_rows=12).loads.tolist()
    [3, 3, 3, 3]
    """
    workers, m = _check_problem(profile, m)
    n = workers.n
    if n_rows is not None and redundancy is not None:
        raise ValueError("give at most one of `n_rows` and `redundancy`, got both.")
    if redundancy is not None:
        redundancy = check_real(redundancy, "redundancy", min_value=1.0)
        n_rows = math.ceil(redundancy * m - 1e-9)
    if n_rows is None:
        order = expected_order_statistics(workers)
        k = np.arange(1, n + 1)
        rows = np.ceil(m / k)
        needed = np.ceil(m / rows).astype(np.int64)
        loads = np.full(n, int(rows[np.argmin(rows * order[needed - 1])]))
    else:
        n_rows = check_int(n_rows, "n_rows", min_value=m)
        loads = np.full(n, n_rows // n) + (np.arange(n) < n_rows % n)
    return _finish(workers, m, loads.astype(np.int64), "uniform")


def solve_load_balanced(profile: WorkerProfile | GroupProfile, m: int) -> Allocation:
    r"""Load-balanced uncoded allocation: ``m`` rows split by expected speed.

    Parameters
    ----------
    profile : WorkerProfile or GroupProfile
        Per-worker ``(a_i, mu_i)``.
    m : int
        Rows of the job, ``m >= 1``; the decoder waits for all of them.

    Returns
    -------
    Allocation
        ``solver="load_balanced"``, ``sum(loads) == m``.

    Raises
    ------
    ValueError
        If ``m < 1``.

    Notes
    -----
    .. math:: l_i \propto \frac{1}{a_i + 1/\mu_i}, \qquad \sum_i l_i = m,

    rounded by largest remainders; :math:`E[T] = E[\max_i l_i Y_i]`.

    References
    ----------
    .. [1] A. Reisizadeh, S. Prakash, R. Pedarsani, A. S. Avestimehr, "Coded
       Computation over Heterogeneous Clusters", IEEE Trans. Inf. Theory 65(7),
       2019 (the load-balanced uncoded baseline).

    Examples
    --------
    >>> p = WorkerProfile(a=[1.0, 1.0], mu=[1e6, 1e6])
    >>> solve_load_balanced(p, 7).loads.tolist()
    [4, 3]
    """
    workers, m = _check_problem(profile, m)
    speed = 1.0 / (workers.a + 1.0 / workers.mu)
    share = m * speed / speed.sum()
    loads = np.floor(share).astype(np.int64)
    extra = m - int(loads.sum())
    loads[np.argsort(-(share - loads), kind="stable")[:extra]] += 1
    return _finish(workers, m, loads, "load_balanced")


def solve_hcmm(profile: WorkerProfile | GroupProfile, m: int) -> Allocation:
    r"""HCMM: loads that make the expected rows reach ``m`` soonest.

    Parameters
    ----------
    profile : WorkerProfile or GroupProfile
        Per-worker ``(a_i > 0, mu_i)``.
    m : int
        Rows the decoder needs, ``m >= 1``.

    Returns
    -------
    Allocation
        ``solver="hcmm"``; the integer rounding of :math:`l_i^* = \tau^*/\lambda_i`.

    Raises
    ------
    ValueError
        If ``m < 1`` or some ``a_i = 0``.

    Notes
    -----
    .. math::

        \lambda_i = -\frac{1 + W_{-1}(-e^{-(1 + \mu_i a_i)})}{\mu_i}, \quad
        \tau^* = \frac{m}{\sum_i \mu_i/(1 + \mu_i\lambda_i)}, \quad
        l_i^* = \frac{\tau^*}{\lambda_i}

    (`theory.hcmm_loads`), rounded as described in the module notes.

    References
    ----------
    .. [1] A. Reisizadeh, S. Prakash, R. Pedarsani, A. S. Avestimehr, "Coded
       Computation over Heterogeneous Clusters", IEEE Trans. Inf. Theory 65(7),
       2019.

    Examples
    --------
    >>> g = GroupProfile(N=[2, 2], a=[1.0, 2.0], mu=[4.0, 1.0])
    >>> solve_hcmm(g, 100).loads.tolist()
    [42, 42, 18, 18]
    """
    workers, m = _check_problem(profile, m)
    tau = hcmm_latency(workers, m)
    ones = np.ones(workers.n, dtype=np.int64)
    loads, _ = _round(
        workers,
        m,
        tau,
        [(ones, hcmm_loads(workers, m), tau)],
        overhead=np.zeros(workers.n),
        cap=np.full(workers.n, np.inf),
    )
    return _finish(workers, m, loads, "hcmm")


def solve_kim(
    groups: GroupProfile | WorkerProfile, m: int, *, exact: bool = True
) -> Allocation:
    r"""Kim et al.'s group allocation (finite-N exact or large-N closed form).

    Parameters
    ----------
    groups : GroupProfile or WorkerProfile
        Groups of identical workers (a WorkerProfile is grouped by exact equality
        of ``(a, mu)``; loads are returned in its worker order, otherwise in the
        order of ``groups.to_workers()``).
    m : int
        Rows the decoder needs, ``m >= 1``.
    exact : bool
        Use the finite-N program over integer ``k_j`` (default) or the large-N
        closed form (``solver="kim_large_n"``).

    Returns
    -------
    Allocation
        ``solver="kim"`` or ``"kim_large_n"``.

    Raises
    ------
    ValueError
        If ``m < 1``, or ``exact=False`` with some ``a_j = 0``.

    Notes
    -----
    Minimises the lower bound :math:`\max_j l_j(a_j + (H_{N_j} - H_{N_j-k_j})/\mu_j)`
    subject to :math:`\sum_j k_j l_j \ge m` (`theory.kim_bound`); the per-group
    loads are rounded per worker as described in the module notes. The decoder
    then uses any ``m`` rows (at least as fast as waiting for ``k_j`` per group).

    References
    ----------
    .. [1] D. Kim, H. Park, J. K. Choi, "Optimal Load Allocation for Coded
       Distributed Computation in Heterogeneous Clusters", IEEE Trans. Commun.,
       2020 (arXiv:1904.09496).

    Examples
    --------
    >>> g = GroupProfile(N=[2, 2], a=[1.0, 2.0], mu=[4.0, 1.0])
    >>> solve_kim(g, 100).solver
    'kim'
    """
    if isinstance(groups, WorkerProfile):
        pairs, member = np.unique(
            np.column_stack([groups.a, groups.mu]), axis=0, return_inverse=True
        )
        member = member.reshape(-1)
        grouped = GroupProfile(N=np.bincount(member), a=pairs[:, 0], mu=pairs[:, 1])
    elif isinstance(groups, GroupProfile):
        grouped = groups
        member = np.repeat(np.arange(groups.num_groups), groups.N.astype(np.int64))
    else:
        raise TypeError(
            f"`groups` must be a GroupProfile, got {type(groups).__name__}."
        )
    workers, m = _check_problem(
        WorkerProfile(a=grouped.a[member], mu=grouped.mu[member]), m
    )
    bound = kim_bound(grouped, m, exact=exact)
    ones = np.ones(workers.n, dtype=np.int64)
    loads, _ = _round(
        workers,
        m,
        bound.latency,
        [(ones, bound.loads[member], bound.latency)],
        overhead=np.zeros(workers.n),
        cap=np.full(workers.n, np.inf),
    )
    return _finish(workers, m, loads, "kim" if exact else "kim_large_n")


def _overhead_array(overhead: object, n: int) -> np.ndarray:
    if isinstance(overhead, numbers.Real) and not isinstance(overhead, bool):
        return np.full(n, check_real(overhead, "overhead", min_value=0.0))
    values = np.asarray(overhead, dtype=np.float64)
    if values.shape != (n,) or np.any(~np.isfinite(values)) or np.any(values < 0):
        raise ValueError(
            f"`overhead` must be a finite value >= 0 or {n} of them, got "
            f"{np.atleast_1d(values).tolist()}."
        )
    return values


def solve_bpcc(
    profile: WorkerProfile | GroupProfile,
    m: int,
    *,
    batches: int | np.ndarray | None = None,
    overhead: float | np.ndarray = 0.0,
    l_max: float | np.ndarray | None = None,
) -> Allocation:
    r"""BPCC: loads and batches so that streamed partial work reaches ``m`` soonest.

    Parameters
    ----------
    profile : WorkerProfile or GroupProfile
        Per-worker ``(a_i, mu_i)``.
    m : int
        Rows the decoder needs, ``m >= 1``.
    batches : int, array_like of int, or None
        Batches per worker; None chooses each worker's count among
        1, 2, 4, ..., 64 by search.
    overhead : float or array_like
        Per-batch overhead ``c_i >= 0`` in seconds: 0 is BPCC-1, ``c_i > 0``
        BPCC-2.
    l_max : float or array_like, optional
        Storage cap on rows per worker (default ``m``).

    Returns
    -------
    Allocation
        ``solver="bpcc"``; each load a whole number of equal batches.

    Raises
    ------
    ValueError
        If ``m < 1``, the cap is too small to reach ``m``, or the arguments are
        malformed.

    Notes
    -----
    Minimises :math:`\tau` subject to :math:`E[S(\tau)] \ge m` and
    :math:`l_i \le l_{max}` with
    :math:`T_{ij} = j (l_i/b_i)(a_i + X_i/\mu_i) + j c_i` (`theory.bpcc_optimum`;
    with ``c = 0`` by the scaling argument, otherwise by bisection on
    :math:`\tau`), then rounds each worker to whole batches as described in the
    module notes; with ``batches=None`` the rounding chooses among the candidate
    counts too. ``batches=1`` gives HCMM's allocation.

    References
    ----------
    .. [1] B. Wang, J. Xie, K. Lu, Y. Wan, S. Fu, "On Batch-Processing Based Coded
       Computing for Heterogeneous Distributed Computing Systems", IEEE Trans.
       Netw. Sci. Eng. 8(3), 2021.

    Examples
    --------
    >>> g = GroupProfile(N=[2, 2], a=[1.0, 2.0], mu=[4.0, 1.0])
    >>> solve_bpcc(g, 100, batches=2).batches.tolist()
    [2, 2, 2, 2]
    """
    workers, m = _check_problem(profile, m)
    n = workers.n
    c = _overhead_array(overhead, n)
    optimum = bpcc_optimum(workers, m, batches=batches, overhead=c, l_max=l_max)
    cap = np.broadcast_to(
        np.full(n, float(m)) if l_max is None else np.asarray(l_max, float), (n,)
    )
    if batches is None:
        options = []
        for b in _BATCH_CANDIDATES:
            fixed = bpcc_optimum(workers, m, batches=b, overhead=c, l_max=l_max)
            options.append((fixed.batches, fixed.loads, fixed.latency))
    else:
        options = [(optimum.batches, optimum.loads, optimum.latency)]
    loads, chosen = _round(workers, m, optimum.latency, options, overhead=c, cap=cap)
    return _finish(workers, m, loads, "bpcc", batches=chosen, overhead=c)
