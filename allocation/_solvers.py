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

*Blocks.* Loads are whole blocks of ``v = ceil(m / u)`` rows, ``u`` source
blocks (`blocks`; default ``m`` up to ``m = 1024``, the papers' row model exactly,
and ``min(m, max(256, 16 n))`` beyond, so the generator and the encoding stay
small at any ``m``): the solvers work in block units (a worker's per-block shift
``v a_i``, rate ``mu_i / v`` and the same ``c_i``, ``u`` blocks to decode) and
return rows. Rounding to blocks costs what rounding each worker to whole blocks
costs (at least ~16 blocks per worker by default); the benchmark measures it
against the row-level allocation (docs/theory/overhead.md#blocks-of-rows).

*Predicted latency.* ``Allocation.expected_latency`` is the exact expected
decoding latency of the integer allocation under the model
(`theory.expected_allocation_latency`, quadrature to ~1e-9 relative); the
simulator's mean agrees with it within Monte Carlo error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from allocation._estimate import ProfileError, ProfileFit
from allocation._types import Allocation, CallCosts
from theory import (
    BATCH_CHOICES,
    GroupProfile,
    WorkerProfile,
    best_loads_at,
    bpcc_optimum,
    bpcc_tau,
    expected_allocation_latency,
    expected_order_statistics,
    expected_rows,
    hcmm_latency,
    hcmm_loads,
    kim_bound,
    waterfill_time,
)
from theory.validation import check_int, check_real

__all__ = [
    "solve_bpcc",
    "solve_hcmm",
    "solve_kim",
    "solve_load_balanced",
    "solve_uniform",
]

_ROUNDING_PASSES = 3
_ROW_LEVEL_MAX = 1024
_MIN_BLOCKS = 256
_BLOCKS_PER_WORKER = 16


def _check_problem(profile: object, m: object) -> tuple[WorkerProfile, int]:
    """Validate the profile and ``m >= 1``; return the per-worker profile."""
    if isinstance(profile, ProfileFit):
        profile = profile.profile
    if isinstance(profile, GroupProfile):
        profile = profile.to_workers()
    if not isinstance(profile, WorkerProfile):
        raise TypeError(
            "`profile` must be a WorkerProfile, GroupProfile or ProfileFit, "
            f"got {type(profile).__name__}."
        )
    return profile, check_int(m, "m", min_value=1)


@dataclass(frozen=True, slots=True)
class _Grain:
    """The block units a solver works in: ``u`` blocks of ``v`` rows for m rows."""

    workers: WorkerProfile  # per-block parameters (v a_i, mu_i / v)
    m: int  # rows of A
    u: int  # source blocks the decoder needs
    v: int  # rows per block
    costs: CallCosts = field(default_factory=CallCosts)  # a fit's whole-call costs


def _costs(profile: object) -> CallCosts:
    """Return a fit's costs of a whole call (unknown for a bare profile)."""
    return profile.costs if isinstance(profile, ProfileFit) else CallCosts()


def _grain(
    workers: WorkerProfile,
    m: int,
    blocks: object,
    costs: CallCosts | None = None,
) -> _Grain:
    """Choose ``v = ceil(m / blocks)`` rows per block and the per-block profile."""
    if blocks is None:
        blocks = (
            m
            if m <= _ROW_LEVEL_MAX
            else min(m, max(_MIN_BLOCKS, _BLOCKS_PER_WORKER * workers.n))
        )
    blocks = check_int(blocks, "blocks", min_value=1, max_value=m)
    v = -(-m // blocks)
    if v == 1:
        return _Grain(workers, m, m, 1, costs or CallCosts())
    return _Grain(workers.per_block(v), m, -(-m // v), v, costs or CallCosts())


def _finish(
    grain: _Grain,
    loads: np.ndarray,
    solver: str,
    *,
    batches: np.ndarray | None = None,
    overhead: np.ndarray | None = None,
) -> Allocation:
    """Attach the exact expected latency and build the Allocation (loads in blocks)."""
    n = grain.workers.n
    batches = np.ones(n, dtype=np.int64) if batches is None else batches
    batches = np.where(loads > 0, batches, 1)
    overhead = grain.workers.c if overhead is None else overhead
    latency = expected_allocation_latency(
        grain.workers, loads, m=grain.u, batches=batches, overhead=overhead
    )
    return Allocation(
        loads=loads * grain.v,
        batches=batches,
        m=grain.m,
        expected_latency=latency,
        solver=solver,
        overhead=overhead,
        block_rows=grain.v,
        costs=grain.costs,
    )


def _round(
    grain: _Grain,
    tau: float,
    options: list[tuple[np.ndarray, np.ndarray, float]],
    *,
    overhead: np.ndarray,
    cap: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Round real loads to whole batches per worker; return (loads, batches).

    `options` holds ``(batches, real loads, tau of those loads)``; a worker's
    candidates are the floor and ceiling batch sizes of each option, rescaled to
    the current design time, judged by the worker's expected rows at that time
    (all in blocks).
    """
    workers, m = grain.workers, grain.u
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
                f"`l_max` is too small: the workers hold at most "
                f"{int(loads.sum())} blocks in whole batches, the decoder needs more "
                f"than u={m}; raise `l_max`, fix fewer `batches`, or add workers."
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


def _caps(l_max: object, grain: _Grain, *, default: float) -> np.ndarray:
    """Validate ``l_max`` (rows) and return it in whole blocks; `default` if None."""
    n = grain.workers.n
    if l_max is None:
        return np.full(n, float(default))
    caps = np.atleast_1d(np.asarray(l_max, dtype=np.float64))
    if caps.ndim != 1 or caps.shape[0] not in (1, n):
        raise ValueError(
            f"`l_max` must be a scalar or have one entry per worker ({n}), got "
            f"shape {caps.shape}."
        )
    if np.any(np.isnan(caps)) or np.any(caps <= 0.0):
        raise ValueError(f"`l_max` entries must be > 0 rows, got {caps.tolist()}.")
    return np.floor(np.broadcast_to(caps, (n,)) / grain.v)


def _cap_blocks(l_max: object, grain: _Grain, *, default: float) -> np.ndarray:
    """Return the per-worker cap ``l_max`` (rows) in whole blocks; `default` if None.

    A coded allocation needs room for more than ``u`` blocks.
    """
    blocks = _caps(l_max, grain, default=default)
    if float(blocks.sum()) <= grain.u:
        raise ValueError(
            f"`l_max` is too small: the workers hold at most {int(blocks.sum())} "
            f"blocks of {grain.v} rows, the decoder needs more than u={grain.u} "
            f"(m={grain.m} rows); raise `l_max` or add workers."
        )
    return blocks


def _check_bounded(a: np.ndarray, cap: np.ndarray, solver: str) -> None:
    """Raise ProfileError if a worker with ``a = 0`` has no finite load cap."""
    unbounded = np.flatnonzero((a == 0.0) & np.isinf(cap))
    if unbounded.size:
        raise ProfileError(
            f"{solver}: workers {unbounded.tolist()} have per-row cost a = 0 (not "
            "identified by the profile) and `l_max` is infinite, so their optimal "
            "load is unbounded; leave `l_max` at its default (m rows), give a "
            "finite `l_max`, or profile with larger `loads` so that a is measured."
        )


def _check_batches(batches: object) -> object:
    if batches is None or np.ndim(batches) == 0:
        return batches
    return np.asarray(batches)


def solve_uniform(
    profile: WorkerProfile | GroupProfile,
    m: int,
    *,
    n_rows: int | None = None,
    redundancy: float | None = None,
    blocks: int | None = None,
    l_max: float | None = None,
) -> Allocation:
    r"""Uniform coded allocation: equal loads per worker, decode at any ``u`` blocks.

    Parameters
    ----------
    profile : WorkerProfile, GroupProfile or ProfileFit
        Per-worker ``(a_i, mu_i, c_i)`` in seconds.
    m : int
        Rows of A, ``m >= 1``.
    n_rows : int, optional
        Total coded rows ``>= m``, split as evenly as possible in whole blocks
        (loads differ by at most one block).
    redundancy : float, optional
        Total rows as a multiple of ``m`` (``>= 1``), rounded up. Give at most one
        of `n_rows` and `redundancy`; with neither, the best equal load is found by
        search.
    blocks : int, optional
        Source blocks ``u`` (see the module notes; default ``m`` up to 1024
        rows, else ``min(m, max(256, 16 n))``).
    l_max : float, optional
        Rows a worker can hold (memory cap, scalar or per worker; the equal
        load is at most the smallest); default unlimited.

    Returns
    -------
    Allocation
        ``solver="uniform"``.

    Raises
    ------
    ValueError
        If ``m < 1``, ``n_rows < m``, ``redundancy < 1`` or both are given, or
        equal loads within `l_max` cannot hold ``m`` rows.

    Notes
    -----
    With equal loads ``L`` (blocks) the decoder waits for the ``k = ceil(u/L)``
    fastest workers, :math:`E[T] = c + L\,E[Y_{(k:n)}]`, :math:`Y_i = a_i +
    X_i/\mu_i` per block, when every ``c_i = c`` (otherwise the search uses the
    mean ``c``; the reported latency is exact either way). The search evaluates
    every ``k = 1..n`` with ``L = ceil(u/k)`` from the exact order statistics
    (`theory.expected_order_statistics`) and keeps the best: the uniform code at
    its best total redundancy (Lee et al. 2018 for identical workers, where the
    order statistic is :math:`a + (H_n - H_{n-k})/\mu`).

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
    grain = _grain(workers, m, blocks, _costs(profile))
    n, u = workers.n, grain.u
    if n_rows is not None and redundancy is not None:
        raise ValueError("give at most one of `n_rows` and `redundancy`, got both.")
    if redundancy is not None:
        redundancy = check_real(redundancy, "redundancy", min_value=1.0)
        n_rows = math.ceil(redundancy * m - 1e-9)
    cap = float(_cap_blocks(l_max, grain, default=np.inf).min())
    if n * cap < u:
        raise ValueError(
            f"`l_max` is too small for equal loads: {n} workers of at most "
            f"{int(cap)} blocks of {grain.v} rows hold fewer than u={u} blocks "
            f"(m={m} rows); raise `l_max`, add workers, or use solve_hcmm, which "
            "loads the workers unequally."
        )
    if n_rows is None:
        order = expected_order_statistics(grain.workers)
        k = np.arange(1, n + 1)
        size = np.ceil(u / k)
        needed = np.ceil(u / size).astype(np.int64)
        predicted = grain.workers.c.mean() + size * order[needed - 1]
        predicted[size > cap] = np.inf
        loads = np.full(n, int(size[np.argmin(predicted)]))
    else:
        n_rows = check_int(n_rows, "n_rows", min_value=m)
        total = max(u, -(-n_rows // grain.v))
        loads = np.full(n, total // n) + (np.arange(n) < total % n)
        if loads.max() > cap:
            raise ValueError(
                f"`n_rows`={n_rows} puts {int(loads.max()) * grain.v} rows on a "
                f"worker, more than `l_max` allows; lower `n_rows` or raise `l_max`."
            )
    return _finish(grain, loads.astype(np.int64), "uniform")


def solve_load_balanced(
    profile: WorkerProfile | GroupProfile,
    m: int,
    *,
    l_max: float | np.ndarray | None = None,
    blocks: int | None = None,
) -> Allocation:
    r"""Load-balanced uncoded allocation: ``m`` rows split by expected speed.

    Parameters
    ----------
    profile : WorkerProfile, GroupProfile or ProfileFit
        Per-worker ``(a_i, mu_i, c_i)`` in seconds.
    m : int
        Rows of the job, ``m >= 1``; the decoder waits for all of them.
    l_max : float or array_like, optional
        Memory cap: rows each worker can hold (scalar or per worker; default
        ``m``, which never binds); a capped worker keeps its cap and the others
        share the rest by the same rule.
    blocks : int, optional
        Source blocks ``u`` (see the module notes).

    Returns
    -------
    Allocation
        ``solver="load_balanced"``, ``sum(loads) == u * block_rows`` (``m`` when
        a block is a row).

    Raises
    ------
    ValueError
        If ``m < 1``, or `l_max` holds fewer than ``m`` rows in all (an
        uncoded job needs every row computed).

    Notes
    -----
    Equal expected finish times :math:`c_i + l_i (a_i + 1/\mu_i) = T`:

    .. math:: l_i = (T - c_i)_+ s_i, \quad s_i = \frac{1}{a_i + 1/\mu_i},
       \quad \sum_i l_i = m

    (`theory.waterfill_time`; with ``c = 0``, :math:`l_i \propto s_i`), rounded
    by largest remainders; :math:`E[T] = E[\max_i (c_i + l_i Y_i)]`.

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
    >>> q = WorkerProfile(a=[1.0, 3.0], mu=[1e6, 1e6])
    >>> solve_load_balanced(q, 8).loads.tolist()
    [6, 2]
    >>> solve_load_balanced(q, 8, l_max=5).loads.tolist()
    [5, 3]
    """
    workers, m = _check_problem(profile, m)
    grain = _grain(workers, m, blocks, _costs(profile))
    per_block, u = grain.workers, grain.u
    cap = _uncoded_cap(l_max, grain)
    speed = 1.0 / (per_block.a + 1.0 / per_block.mu)
    if np.any(per_block.c):
        share = np.maximum(waterfill_time(speed, per_block.c, u) - per_block.c, 0.0)
        share = share * speed
    else:
        share = u * speed / speed.sum()
    if np.any(share > cap):
        share = _capped_shares(speed, per_block.c, u, cap)
    loads = np.floor(share).astype(np.int64)
    extra = u - int(loads.sum())
    loads[np.argsort(-(share - loads), kind="stable")[:extra]] += 1
    return _finish(grain, loads, "load_balanced")


def _uncoded_cap(l_max: object, grain: _Grain) -> np.ndarray:
    """Return the cap in blocks for an uncoded split (it needs all u blocks)."""
    blocks = _caps(l_max, grain, default=grain.u)
    if float(blocks.sum()) < grain.u:
        raise ValueError(
            f"`l_max` is too small: the workers hold at most {int(blocks.sum())} "
            f"blocks of {grain.v} rows, an uncoded job needs all u={grain.u} "
            f"(m={grain.m} rows); raise `l_max` or add workers."
        )
    return blocks


def _capped_shares(
    speed: np.ndarray, c: np.ndarray, u: int, cap: np.ndarray
) -> np.ndarray:
    """Equal finish times under caps: ``min(cap_i, (T - c_i)_+ s_i)`` sums to u.

    The sum grows with ``T``, so ``T`` follows by bisection.
    """

    def shares(t: float) -> np.ndarray:
        return np.minimum(cap, np.maximum(t - c, 0.0) * speed)

    low, high = 0.0, float(np.max(c + cap / speed))
    for _ in range(200):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if shares(mid).sum() < u else (low, mid)
    share = shares(high)
    return share * (u / share.sum()) if share.sum() > u else share


def solve_hcmm(
    profile: WorkerProfile | GroupProfile,
    m: int,
    *,
    l_max: float | np.ndarray | None = None,
    blocks: int | None = None,
) -> Allocation:
    r"""HCMM: loads that make the expected rows reach ``m`` soonest.

    Parameters
    ----------
    profile : WorkerProfile, GroupProfile or ProfileFit
        Per-worker ``(a_i, mu_i, c_i)`` in seconds (the overhead ``c_i`` of
        `allocation.estimate_profile` / `coded.runtime.profile_workers`).
    m : int
        Rows of A, ``m >= 1``.
    l_max : float or array_like, optional
        Memory cap: rows each worker can hold (scalar or per worker; default
        ``m``: more rows on one worker never help a decoder that needs ``m``;
        ``numpy.inf`` for none).
    blocks : int, optional
        Source blocks ``u`` (see the module notes).

    Returns
    -------
    Allocation
        ``solver="hcmm"``; the rounding of :math:`l_i^* = (\tau^* - c_i)_+/\lambda_i`.

    Raises
    ------
    ProfileError
        If some ``a_i = 0`` (not identified by the profile) and ``l_max=inf``:
        the load would be unbounded (the message gives the remedy).
    ValueError
        If ``m < 1`` or `l_max` holds too few rows.

    Notes
    -----
    .. math::

        \lambda_i = -\frac{1 + W_{-1}(-e^{-(1 + \mu_i a_i)})}{\mu_i}, \quad
        \sum_i (\tau^* - c_i)_+ \frac{\mu_i}{1 + \mu_i\lambda_i} = m, \quad
        l_i^* = \frac{(\tau^* - c_i)_+}{\lambda_i}

    (`theory.hcmm_loads`; ``c = 0`` is the paper's closed form, the overhead is
    [derived] in docs/theory/overhead.md). When `l_max` binds, the capped
    problem is solved numerically (`theory.bpcc_optimum` with one batch). Loads
    are then rounded as described in the module notes.

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
    grain = _grain(workers, m, blocks, _costs(profile))
    per_block, u = grain.workers, grain.u
    cap = _cap_blocks(l_max, grain, default=u)
    ones = np.ones(workers.n, dtype=np.int64)
    if np.all(per_block.a > 0.0):
        tau, real = hcmm_latency(per_block, u), hcmm_loads(per_block, u)
    if not np.all(per_block.a > 0.0) or np.any(real > cap):
        _check_bounded(per_block.a, cap, "solve_hcmm")
        optimum = bpcc_optimum(per_block, u, batches=1, l_max=cap)
        tau, real = optimum.latency, optimum.loads
    loads, _ = _round(grain, tau, [(ones, real, tau)], overhead=per_block.c, cap=cap)
    return _finish(grain, loads, "hcmm")


def _grouped(groups: object) -> tuple[GroupProfile, np.ndarray]:
    """Return groups of identical workers and each worker's group (worker order)."""
    if isinstance(groups, ProfileFit):
        groups = groups.profile
    if isinstance(groups, WorkerProfile):
        pairs, member = np.unique(
            np.column_stack([groups.a, groups.mu, groups.c]),
            axis=0,
            return_inverse=True,
        )
        member = member.reshape(-1)
        grouped = GroupProfile(
            N=np.bincount(member), a=pairs[:, 0], mu=pairs[:, 1], c=pairs[:, 2]
        )
        return grouped, member
    if isinstance(groups, GroupProfile):
        return groups, np.repeat(np.arange(groups.num_groups), groups.N.astype(int))
    raise TypeError(
        "`groups` must be a GroupProfile or WorkerProfile, got "
        f"{type(groups).__name__}."
    )


def solve_kim(
    groups: GroupProfile | WorkerProfile,
    m: int,
    *,
    exact: bool = True,
    l_max: float | np.ndarray | None = None,
    blocks: int | None = None,
) -> Allocation:
    r"""Kim et al.'s group allocation (finite-N exact or large-N closed form).

    Parameters
    ----------
    groups : GroupProfile or WorkerProfile
        Groups of identical workers (a WorkerProfile is grouped by exact equality
        of ``(a, mu, c)``; loads are returned in its worker order, otherwise in
        the order of ``groups.to_workers()``).
    m : int
        Rows of A, ``m >= 1``.
    exact : bool
        Use the finite-N program over integer ``k_j`` (default) or the large-N
        closed form (``solver="kim_large_n"``).
    l_max : float or array_like, optional
        Memory cap: rows each worker can hold (default ``m``; ``numpy.inf`` for
        none); loads above it are cut to it and the rounding tops the others
        up.
    blocks : int, optional
        Source blocks ``u`` (see the module notes).

    Returns
    -------
    Allocation
        ``solver="kim"`` or ``"kim_large_n"``.

    Raises
    ------
    ProfileError
        If ``exact=False`` and some ``a_j = 0`` (the large-N closed form needs
        ``a > 0``; the message gives the remedy).
    ValueError
        If ``m < 1`` or `l_max` holds too few rows.

    Notes
    -----
    Minimises the lower bound :math:`\max_j c_j + l_j(a_j + (H_{N_j} -
    H_{N_j-k_j})/\mu_j)` subject to :math:`\sum_j k_j l_j \ge m`
    (`theory.kim_bound`; the overhead ``c_j`` is [derived] in
    docs/theory/overhead.md); the per-group loads are rounded per worker as
    described in the module notes. The decoder then uses any ``u`` blocks (at
    least as fast as waiting for ``k_j`` per group).

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
    grouped, member = _grouped(groups)
    workers = WorkerProfile(
        a=grouped.a[member], mu=grouped.mu[member], c=grouped.c[member]
    )
    workers, m = _check_problem(workers, m)
    grain = _grain(workers, m, blocks, _costs(groups))
    v = grain.v
    if not exact and np.any(grouped.a == 0.0):
        zero = np.flatnonzero(grouped.a == 0.0).tolist()
        raise ProfileError(
            "solve_kim(exact=False): the large-N closed form needs every a > 0, got "
            f"a = 0 (not identified) in groups {zero}; use exact=True (the "
            "default) or profile with larger `loads` so that a is measured."
        )
    per_group = GroupProfile(
        N=grouped.N, a=grouped.a * v, mu=grouped.mu / v, c=grouped.c
    )
    bound = kim_bound(per_group, grain.u, exact=exact)
    cap = _cap_blocks(l_max, grain, default=grain.u)
    ones = np.ones(workers.n, dtype=np.int64)
    real = np.minimum(bound.loads[member], cap)
    tau = bound.latency
    loads, _ = _round(
        grain, tau, [(ones, real, tau)], overhead=grain.workers.c, cap=cap
    )
    return _finish(grain, loads, "kim" if exact else "kim_large_n")


def solve_bpcc(
    profile: WorkerProfile | GroupProfile,
    m: int,
    *,
    batches: int | np.ndarray | None = None,
    max_batches: int = 64,
    overhead: float | np.ndarray | None = None,
    l_max: float | np.ndarray | None = None,
    blocks: int | None = None,
) -> Allocation:
    r"""BPCC: loads and batches so that streamed partial work reaches ``m`` soonest.

    Parameters
    ----------
    profile : WorkerProfile, GroupProfile or ProfileFit
        Per-worker ``(a_i, mu_i, c_i)`` in seconds; ``c_i`` is the cost of each
        batch (0: BPCC-1, ``> 0``: BPCC-2).
    m : int
        Rows of A, ``m >= 1``.
    batches : int, array_like of int, or None
        Batches per worker; None (default) chooses each worker's count among
        1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64 (up to `max_batches`) by
        minimising the predicted design time with the per-batch cost included.
    max_batches : int
        Largest count the search considers, ``>= 1``.
    overhead : float or array_like, optional
        Per-batch cost in seconds overriding the profile's ``c``.
    l_max : float or array_like, optional
        Memory cap: rows each worker can hold (default ``m``).
    blocks : int, optional
        Source blocks ``u`` (see the module notes).

    Returns
    -------
    Allocation
        ``solver="bpcc"``; each load a whole number of equal batches of whole
        blocks.

    Raises
    ------
    ValueError
        If ``m < 1``, `l_max` holds too few rows, or the arguments are
        malformed.

    Notes
    -----
    Minimises :math:`\tau` subject to :math:`E[S(\tau)] \ge m` and
    :math:`l_i \le l_{max}` with
    :math:`T_{ij} = j (l_i/b_i)(a_i + X_i/\mu_i) + j c_i` (`theory.bpcc_optimum`;
    with ``c = 0`` by the scaling argument, otherwise by bisection on
    :math:`\tau`). For a fixed :math:`\tau` every worker's expected rows depend
    on its own ``(l_i, b_i)`` only, so choosing each worker's best count
    minimises :math:`\tau` over all count vectors. Each worker is then rounded
    to whole batches of whole blocks as described in the module notes.
    ``batches=1`` gives HCMM's allocation.

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
    >>> slow = GroupProfile(N=[2, 2], a=[1.0, 2.0], mu=[4.0, 1.0], c=20.0)
    >>> solve_bpcc(slow, 100).batches.tolist()
    [1, 1, 1, 1]
    """
    workers, m = _check_problem(profile, m)
    if overhead is not None:
        workers = WorkerProfile(a=workers.a, mu=workers.mu, c=overhead)
    grain = _grain(workers, m, blocks, _costs(profile))
    per_block, u = grain.workers, grain.u
    c = per_block.c
    cap = _cap_blocks(l_max, grain, default=u)
    max_batches = check_int(max_batches, "max_batches", min_value=1)
    if batches is None:
        choices = tuple(b for b in BATCH_CHOICES if b <= max_batches)
        tau = bpcc_optimum(
            per_block, u, batches=None, batch_choices=choices, l_max=cap
        ).latency
        options = [
            (
                np.full(workers.n, b),
                best_loads_at(per_block, tau, batches=b, l_max=cap),
                tau,
            )
            for b in choices
        ]
    else:
        fixed = bpcc_optimum(per_block, u, batches=_check_batches(batches), l_max=cap)
        options, tau = [(fixed.batches, fixed.loads, fixed.latency)], fixed.latency
    loads, chosen = _round(grain, tau, options, overhead=c, cap=cap)
    return _finish(grain, loads, "bpcc", batches=chosen, overhead=c)
