r"""Multi-level (hierarchical) codes: expected latency, simulator and a cost model.

A layout ``levels = ((n_0, k_0), ..., (n_{L-1}, k_{L-1}))`` (outermost first) puts
``n = prod_l n_l`` workers in nested groups; a group at level l finishes when
``k_l`` of its ``n_l`` members have, the job when the root has
(``docs/theory/hierarchical.md``). Each worker computes ``1 / K`` of the job,
``K = prod_l k_l``, so under the shifted-exponential model its time is
``T_i = (a + X_i / mu) / K`` in job units, ``X_i ~ Exp(1)``.

Exact expectation [derived, nested order statistics as in Park et al. 2018 and
Kiani et al.]: with ``p = P[T_i <= t]`` and
``phi_l(q) = P[Bin(n_l, q) >= k_l]`` (a group's probability of having finished
when each member has with probability q, members independent; computed on the
complements ``1 - q`` to avoid cancellation),

.. math:: \mathbb{E}[T] = \frac{1}{K}\Big(a + \frac{J}{\mu}\Big), \qquad
          J = \int_0^1 \frac{1 - \phi_0(\phi_1(\cdots\phi_{L-1}(p)))}{1 - p}\,dp,

which for one level is ``H_n - H_{n-k}`` (Lee et al. 2018).

The cost model charges each node that gathers results (the client at the root, a
group's leader below it) per message sent and received, per byte received and per
decode flop; :func:`call_overhead` gives the per-call cost of a layout,
:func:`fit_runtime_costs` calibrates the constants from measured calls, and
:func:`simulate_hierarchical` draws job times with the costs on the critical path.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.integrate
import scipy.optimize
import scipy.stats

from theory._homogeneous import _check_a_mu
from theory._simulation_result import SimulationResult
from theory.rng import RngLike, as_generator
from theory.validation import check_int, check_levels, check_real

__all__ = [
    "CallOverhead",
    "RuntimeCosts",
    "call_overhead",
    "expected_latency_hierarchical",
    "fit_runtime_costs",
    "simulate_hierarchical",
]

_CHUNK = 1 << 21  # worker draws per simulated chunk (16 MB of float64)


def _layout(levels: object) -> tuple[tuple[int, int], ...]:
    """Validate `levels` against the workers its sizes imply."""
    if isinstance(levels, str) or not isinstance(levels, Sequence) or not levels:
        raise TypeError(
            "`levels` must be a non-empty sequence of (n_l, k_l) pairs, outermost "
            f"first, got {levels!r}."
        )
    sizes = []
    for i, pair in enumerate(levels):
        if isinstance(pair, str) or not isinstance(pair, Sequence) or len(pair) != 2:
            raise TypeError(f"`levels[{i}]` must be an (n_l, k_l) pair, got {pair!r}.")
        sizes.append(check_int(pair[0], f"levels[{i}][0] (n_l)", min_value=1))
    return check_levels(math.prod(sizes), levels)


def _unfinished(layout: tuple[tuple[int, int], ...], u: float) -> float:
    """P[the job has not finished] when each worker has not with probability u.

    ``1 - phi_l(1 - r) = P[Bin(n_l, r) > n_l - k_l]``, composed from the deepest
    level up: complements throughout, so no cancellation near ``u = 0``.
    """
    r = u
    for size, k in reversed(layout):
        r = float(scipy.stats.binom.sf(size - k, size, r))
    return r


def expected_latency_hierarchical(
    levels: Sequence[tuple[int, int]], *, a: float, mu: float
) -> float:
    r"""Return the exact expected latency of a multi-level code (job units).

    Parameters
    ----------
    levels : sequence of (int, int)
        ``(n_l, k_l)`` per level, outermost first (one level: an MDS code).
    a : float
        Shift of a whole job on one worker, ``a >= 0``.
    mu : float
        Straggling rate, ``mu > 0``.

    Returns
    -------
    float
        :math:`\mathbb{E}[T] = (a + J / \mu) / K`, ``K = prod_l k_l``, with ``J``
        the integral of the module docstring (adaptive quadrature, relative
        error below 1e-10).

    Examples
    --------
    >>> from theory import expected_latency_mds
    >>> flat = expected_latency_hierarchical([(100, 69)], a=1.0, mu=1.0)
    >>> bool(abs(flat - expected_latency_mds(100, 69, a=1.0, mu=1.0)) < 1e-12)
    True
    >>> round(expected_latency_hierarchical([(8, 7), (8, 7)], a=1.0, mu=1.0), 5)
    0.06741
    """
    layout = _layout(levels)
    a, mu = _check_a_mu(a, mu)
    K = math.prod(k for _, k in layout)

    def tail(u: float) -> float:  # u = 1 - p, the integrand of J in u
        return _unfinished(layout, u) / u

    # smooth, bounded (~ u^(prod (n_l - k_l + 1) - 1) at 0); mass near u = 0 for
    # high-rate layouts, so the pieces shrink there
    edges = (0.0, 1e-4, 1e-3, 1e-2, 0.1, 0.5, 1.0)
    J = sum(
        scipy.integrate.quad(tail, lo, hi, epsabs=1e-15, epsrel=1e-11, limit=200)[0]
        for lo, hi in itertools.pairwise(edges)
    )
    return (a + J / mu) / K


_CONSTANTS = (
    "message_seconds",
    "leader_message_seconds",
    "byte_seconds",
    "flop_seconds",
    "worker_seconds",
    "call_seconds",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class RuntimeCosts:
    """Constants of the per-call cost model (seconds; calibrate them, see below).

    Parameters
    ----------
    message_seconds : float
        The client's CPU per message it sends or receives.
    leader_message_seconds : float
        A group leader's CPU per message it sends or receives.
    byte_seconds : float
        Per byte a node receives (deserialisation and copies).
    flop_seconds : float
        Per floating-point operation of a decode.
    worker_seconds : float
        The client's CPU per worker of the call, whatever the layout (each
        worker's injected faults, batch chain and record are the client's
        bookkeeping even when a leader talks to it). Default 0.
    call_seconds : float
        The client's fixed CPU per call. Default 0.

    Notes
    -----
    :func:`fit_runtime_costs` estimates them from measured calls at small n;
    nothing here is a measurement.
    """

    message_seconds: float
    leader_message_seconds: float
    byte_seconds: float
    flop_seconds: float
    worker_seconds: float = 0.0
    call_seconds: float = 0.0

    def __post_init__(self) -> None:
        for name in _CONSTANTS:
            check_real(getattr(self, name), name, min_value=0.0)


@dataclass(frozen=True, slots=True)
class CallOverhead:
    """Per-call cost of a layout, by node (seconds).

    Parameters
    ----------
    client_seconds : float
        The client's messages, bytes, outer decode, workers and fixed cost.
    leader_seconds : float
        One leader per level below the root, summed (the critical path).
    counts : numpy.ndarray, shape (6,)
        The counts the constants of :class:`RuntimeCosts` multiply, in its
        order: client messages, leader messages, bytes received (client and
        leaders), decode flops, workers, 1 (the call).
    client_counts : numpy.ndarray, shape (6,)
        The same for the client alone (no leader message; its own bytes and
        flops): ``client_seconds`` is their product with the constants.
    """

    client_seconds: float
    leader_seconds: float
    counts: np.ndarray
    client_counts: np.ndarray

    @property
    def total_seconds(self) -> float:
        """``client_seconds + leader_seconds``."""
        return self.client_seconds + self.leader_seconds


def _level_counts(
    layout: tuple[tuple[int, int], ...], product_bytes: float, right_bytes: float
) -> list[tuple[float, float, float]]:
    """Per depth: (messages, bytes received, decode flops) of one node there.

    A node at depth l sends the right operand to its ``n_l`` members, receives
    ``k_l`` messages of ``P / prod_{j <= l} k_j`` elements (P = product
    elements), factors a ``k_l x k_l`` system and applies it to them.
    """
    P = product_bytes / 8.0
    out, above = [], 1
    for size, k in layout:
        above *= k
        received = P / above * k  # elements
        flops = 2.0 / 3.0 * k**3 + 2.0 * k * received
        out.append((float(size + k), 8.0 * received + size * right_bytes, flops))
    return out


def call_overhead(
    levels: Sequence[tuple[int, int]],
    costs: RuntimeCosts,
    *,
    product_bytes: float,
    right_bytes: float = 0.0,
) -> CallOverhead:
    r"""Return the per-call runtime cost of a layout under the cost model.

    Parameters
    ----------
    levels : sequence of (int, int)
        ``(n_l, k_l)`` per level, outermost first (one level: a flat code).
    costs : RuntimeCosts
        The constants.
    product_bytes : float
        Bytes of the product ``A @ B`` (float64).
    right_bytes : float
        Bytes of the right operand each node sends to each member (0: B is
        placed already).

    Returns
    -------
    CallOverhead

    Notes
    -----
    A node at depth l (the client at l = 0) handles ``n_l + k_l`` messages,
    receives ``8 P / prod_{j < l} k_j`` bytes and spends
    ``(2/3) k_l^3 + 2 k_l P / prod_{j < l} k_j`` decode flops (LU of the
    ``k_l x k_l`` system, then its solve on the received blocks; P product
    elements). A flat (n, k) code: ``n + k`` messages and
    ``(2/3) k^3 + 2 k P`` flops at the client. The client also pays
    ``worker_seconds`` per worker (``n = prod_l n_l``) and ``call_seconds``.

    Examples
    --------
    >>> costs = RuntimeCosts(message_seconds=1e-4, leader_message_seconds=1e-4,
    ...                      byte_seconds=0.0, flop_seconds=0.0)
    >>> round(call_overhead([(64, 56)], costs, product_bytes=8e6).client_seconds, 4)
    0.012
    >>> two = call_overhead([(8, 7), (8, 7)], costs, product_bytes=8e6)
    >>> round(two.client_seconds, 4), round(two.leader_seconds, 4)
    (0.0015, 0.0015)
    """
    layout = _layout(levels)
    if not isinstance(costs, RuntimeCosts):
        raise TypeError(f"`costs` must be a RuntimeCosts, got {type(costs).__name__}.")
    product_bytes = check_real(product_bytes, "product_bytes", min_value=0.0)
    right_bytes = check_real(right_bytes, "right_bytes", min_value=0.0)
    counts = _level_counts(layout, product_bytes, right_bytes)
    (messages, received, flops), below = counts[0], counts[1:]
    n = math.prod(size for size, _ in layout)
    client = np.array([messages, 0.0, received, flops, n, 1.0])
    totals = np.array(
        [
            messages,
            sum(m for m, _, _ in below),
            sum(b for _, b, _ in counts),
            sum(f for _, _, f in counts),
            n,
            1.0,
        ]
    )
    constants = np.array([getattr(costs, name) for name in _CONSTANTS])
    client_seconds = float(client @ constants)
    return CallOverhead(
        client_seconds, float(totals @ constants) - client_seconds, totals, client
    )


def fit_runtime_costs(
    layouts: Sequence[Sequence[tuple[int, int]]],
    seconds: Sequence[float],
    *,
    product_bytes: float | Sequence[float],
    right_bytes: float = 0.0,
    part: Literal["total", "client"] = "total",
) -> RuntimeCosts:
    """Calibrate :class:`RuntimeCosts` from measured per-call overheads (NNLS).

    Parameters
    ----------
    layouts : sequence of layouts
        The layout of each measured call (flat ``[(n, k)]`` or multi-level).
    seconds : sequence of float
        Each call's measured overhead (its time minus the workers' compute), or
        with ``part="client"`` the client's CPU time per call.
    product_bytes : float or sequence of float
        Product size of each call (one value: all calls).
    right_bytes : float
        As in :func:`call_overhead`.
    part : {"total", "client"}
        Fit ``total_seconds`` (default) or ``client_seconds`` (then
        ``leader_message_seconds`` is 0: the client's CPU does not show it).

    Returns
    -------
    RuntimeCosts
        The non-negative least-squares fit of the six constants.

    Examples
    --------
    >>> true = RuntimeCosts(message_seconds=2e-4, leader_message_seconds=1e-4,
    ...                     byte_seconds=1e-9, flop_seconds=1e-10)
    >>> layouts = [[(n, n - 2)] for n in (8, 16, 32, 64)] + [[(4, 3), (4, 3)],
    ...            [(8, 7), (8, 6)], [(8, 6), (4, 3)]]
    >>> sizes = [1e6, 4e6, 2e6, 8e6, 1e6, 4e6, 3e6]
    >>> seconds = [call_overhead(l, true, product_bytes=b).total_seconds
    ...            for l, b in zip(layouts, sizes)]
    >>> fit = fit_runtime_costs(layouts, seconds, product_bytes=sizes)
    >>> round(fit.message_seconds / true.message_seconds, 6)
    1.0
    """
    if isinstance(layouts, str) or not isinstance(layouts, Sequence):
        raise TypeError("`layouts` must be a sequence of layouts.")
    if part not in ("total", "client"):
        raise ValueError(f"`part` must be 'total' or 'client', got {part!r}.")
    y = np.asarray(seconds, dtype=np.float64)
    if y.shape != (len(layouts),) or len(layouts) < len(_CONSTANTS):
        raise ValueError(
            f"`seconds` must give one time per layout and at least "
            f"{len(_CONSTANTS)} calls (one per constant), got "
            f"{y.shape[0] if y.ndim else 0} times for {len(layouts)} layouts; "
            "measure more layouts."
        )
    sizes = np.broadcast_to(np.asarray(product_bytes, dtype=np.float64), y.shape)
    unit = RuntimeCosts(**dict.fromkeys(_CONSTANTS, 1.0))
    overheads = [
        call_overhead(layout, unit, product_bytes=b, right_bytes=right_bytes)
        for layout, b in zip(layouts, sizes.tolist(), strict=True)
    ]
    X = np.array([o.counts if part == "total" else o.client_counts for o in overheads])
    scale = np.where(X.max(axis=0) > 0, X.max(axis=0), 1.0)
    coef, _ = scipy.optimize.nnls(X / scale, y)
    return RuntimeCosts(**dict(zip(_CONSTANTS, (coef / scale).tolist(), strict=True)))


def _gather(
    ready: np.ndarray, k: int, send: float, receive: float, decode: float
) -> np.ndarray:
    """Finish times of nodes gathering their members' ready times (last axis).

    The node sends to its members one after the other (member j starts at
    ``(j + 1) send``), takes their answers one at a time (``receive`` each, in
    arrival order) and decodes after the k-th.
    """
    size = ready.shape[-1]
    arrival = np.sort(ready + send * np.arange(1, size + 1), axis=-1)[..., :k]
    steps = np.arange(k)
    # processed_i = max_{j <= i} (arrival_j + (i - j + 1) receive)
    processed = np.maximum.accumulate(arrival - steps * receive, axis=-1)
    return processed[..., -1] + k * receive + decode


def _product_decodable(
    known: np.ndarray, layout: tuple[tuple[int, int], ...]
) -> np.ndarray:
    """Tell per trial whether known cells ``(trials, n_0, n_1)`` decode (peeling)."""
    (n0, k0), (n1, k1) = layout
    for _ in range(n0 + n1 + 1):  # each round fills a row or a column, or stops
        rows = known.sum(axis=2) >= k1
        cols = known.sum(axis=1) >= k0
        grown = known | rows[:, :, None] | cols[:, None, :]
        if (grown == known).all():
            break
        known = grown
    return (known.sum(axis=2) >= k1).sum(axis=1) >= k0


def _product_finish(
    times: np.ndarray, layout: tuple[tuple[int, int], ...]
) -> np.ndarray:
    """Finishing time of product decoding per trial (rows of `times`, ``(t, n)``)."""
    trials, n = times.shape
    order = np.argsort(times, axis=1)
    rank = np.empty_like(order)
    rank[np.arange(trials)[:, None], order] = np.arange(n)
    (n0, _), (n1, _) = layout
    K = math.prod(k for _, k in layout)
    low = np.full(trials, K - 1)  # fewer than K results never decode
    high = np.full(trials, n - 1 - math.prod(s - k + 1 for s, k in layout) + 1)
    while (low < high).any():  # smallest j: the first j + 1 finishers decode
        mid = (low + high) // 2
        known = (rank <= mid[:, None]).reshape(trials, n0, n1)
        ok = _product_decodable(known, layout)
        high = np.where(ok, mid, high)
        low = np.where(ok, low, mid + 1)
    return np.take_along_axis(np.sort(times, axis=1), low[:, None], axis=1)[:, 0]


def simulate_hierarchical(
    levels: Sequence[tuple[int, int]],
    *,
    a: float,
    mu: float,
    trials: int = 10_000,
    costs: RuntimeCosts | None = None,
    product_bytes: float = 0.0,
    decoding: Literal["groups", "product"] = "groups",
    rng: RngLike = None,
) -> SimulationResult:
    """Monte Carlo latency of a multi-level code, with the runtime's costs if given.

    Parameters
    ----------
    levels : sequence of (int, int)
        ``(n_l, k_l)`` per level, outermost first.
    a, mu : float
        Shifted-exponential model (a whole job on one worker: ``a + X / mu``).
    trials : int
        Simulated jobs.
    costs : RuntimeCosts, optional
        Adds each gathering node's sequential sends, receives and decode (as
        :func:`call_overhead` counts them) on its path, and the client's work
        per worker and per call; ``None``: the coding latency alone, whose mean
        is :func:`expected_latency_hierarchical`.
    product_bytes : float
        Product size for the costs.
    decoding : {"groups", "product"}
        ``"product"`` (two levels, no costs): the job ends when the finished
        workers decode by rows and columns of the grid (the product-code
        decoder of ``coded.HierarchicalCode(..., decoding="product")``), found
        per job by bisection over its sorted finishing times.
    rng : Generator, int or None
        Seed.

    Returns
    -------
    SimulationResult

    Examples
    --------
    >>> sim = simulate_hierarchical([(8, 7), (8, 7)], a=1.0, mu=1.0, rng=0)
    >>> exact = expected_latency_hierarchical([(8, 7), (8, 7)], a=1.0, mu=1.0)
    >>> bool(abs(sim.mean - exact) < 5 * sim.stderr)
    True
    """
    layout = _layout(levels)
    a, mu = _check_a_mu(a, mu)
    trials = check_int(trials, "trials", min_value=2)
    if costs is not None and not isinstance(costs, RuntimeCosts):
        raise TypeError(f"`costs` must be a RuntimeCosts, got {type(costs).__name__}.")
    product_bytes = check_real(product_bytes, "product_bytes", min_value=0.0)
    if decoding not in ("groups", "product"):
        raise ValueError(f"`decoding` must be 'groups' or 'product', got {decoding!r}.")
    if decoding == "product" and (len(layout) != 2 or costs is not None):
        raise ValueError(
            "`decoding='product'` simulates a two-level code without costs, got "
            f"{len(layout)} level(s){' and costs' if costs is not None else ''}; "
            "use decoding='groups'."
        )
    sizes = [size for size, _ in layout]
    n, K = math.prod(sizes), math.prod(k for _, k in layout)
    steps = []  # (k, send, receive per message, decode) per depth
    counts = _level_counts(layout, product_bytes, 0.0)
    for depth, (_, received, flops) in enumerate(counts):
        k = layout[depth][1]
        if costs is None:
            steps.append((k, 0.0, 0.0, 0.0))
            continue
        per_message = (
            costs.message_seconds if depth == 0 else costs.leader_message_seconds
        )
        receive = per_message + costs.byte_seconds * received / k
        steps.append((k, per_message, receive, costs.flop_seconds * flops))
    generator = as_generator(rng)
    rows = max(1, _CHUNK // n)
    out = np.empty(trials)
    for start in range(0, trials, rows):
        stop = min(trials, start + rows)
        ready = (a + generator.standard_exponential((stop - start, n)) / mu) / K
        if decoding == "product":
            out[start:stop] = _product_finish(ready, layout)
            continue
        ready = ready.reshape([stop - start, *sizes])
        for k, send, receive, decode in reversed(steps):
            if costs is None:
                ready = np.partition(ready, k - 1, axis=-1)[..., k - 1]
            else:
                ready = _gather(ready, k, send, receive, decode)
        out[start:stop] = ready
    if costs is not None:  # the client's own work per worker and per call
        out += costs.worker_seconds * n + costs.call_seconds
    return SimulationResult.from_samples(out)
