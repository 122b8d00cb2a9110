"""Calibration: time each worker's kernel at several loads and fit its profile.

Every worker runs one calibration task that times the coded product's kernel
itself (a worker's clock, so neither the scheduler nor the other workers add
noise), and independently the client times round trips of empty tasks pinned to
each worker: what every real task pays besides computing. No worker waits for
another at any point.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from distributed import Client, as_completed, wait

from coded.codes import RowMDSCode, UncodedCode
from coded.codes.interface import encode_product, multiply_real, share_checks
from coded.injection import Stragglers, TaskFault
from coded.runtime._cluster import check_client, worker_addresses
from coded.runtime._dask_helpers import forget, new_call_id
from coded.runtime._executor import execute
from coded.runtime._worker import _finish_fault, wake_waits
from theory.rng import RngLike, as_generator
from theory.validation import check_int, check_real

if TYPE_CHECKING:
    from allocation import ProfileFit

__all__ = ["profile_workers"]

_RAMP = 4  # the probe load grows by this factor until a probe is slow enough
_MAX_PROBES = 12
_CONFIRM = 6  # repeats of the last probe
_SWITCH_SECONDS = 2e-4  # the interpreter's thread switch interval while timing
_ENCODE_SHAPE = (128, 256, 4096)  # parity blocks, source blocks, columns timed
_ENCODE_REPEATS = 5
_TIMER_RESOLUTION = 1e-6  # seconds: the least a timed rest of encoding counts
# A timed whole encode whose parity product is small (u = 8 source blocks of 1024
# rows, 4 parity blocks on 4 workers, 1280 columns), so that what it takes beyond
# F / R is mostly the rest of encoding: W is measured where it dominates. Its 40
# MiB of parity exceed glibc's largest mmap threshold (32 MiB), so that they are
# fresh pages in every repeat, as in the large calls where W matters
_WHOLE_ENCODE = (4, 3, 8, 1024, 1280)  # workers, blocks each, u, rows per block, d
_CHECK_SHAPE = (8192, 256)  # coded rows, columns of a timed Freivalds draw
_switching = threading.Lock()
_timing_calibrations = 0  # calibrations timing kernels in this process
_saved_switch_seconds = 0.0


def _check_loads(loads: object) -> tuple[int, ...]:
    if isinstance(loads, str) or not isinstance(loads, Sequence):
        raise TypeError(
            f"`loads` must be a sequence of ints, got {type(loads).__name__}."
        )
    values = tuple(check_int(v, "loads", min_value=1) for v in loads)
    if len(set(values)) < 2:
        raise ValueError(
            "`loads` must hold at least 2 distinct row counts (to separate the "
            f"per-task cost c from the per-row cost a), got {list(values)}."
        )
    return tuple(sorted(set(values)))


def _scaled_loads(
    loads: tuple[int, ...], fixed_seconds: float, row_seconds: float, target: float
) -> tuple[int, ...]:
    """Scale `loads` down so that a timed task lasts about `target` seconds.

    A task of ``l`` rows is taken to last ``fixed_seconds + l row_seconds``; when
    the fixed part alone exceeds `target`, the rows' part is made as long as it.
    """
    mean_load = sum(loads) / len(loads)
    budget = max(target - fixed_seconds, fixed_seconds)
    factor = min(1.0, budget / max(mean_load * row_seconds, 1e-12))
    scaled = [max(1, round(factor * load)) for load in loads]
    for k in range(1, len(scaled)):  # keep the loads distinct
        scaled[k] = max(scaled[k], scaled[k - 1] + 1)
    return tuple(scaled)


@dataclasses.dataclass(frozen=True, slots=True)
class _Injected:
    """One worker's injected delays (seconds).

    ``per_row`` holds a draw per timed kernel (the probes use the last ones);
    every ping waits out ``per_task`` and ``extra``, as every task of a coded
    product does.
    """

    per_task: float
    per_row: np.ndarray
    extra: float


def _ping(injected: _Injected, call_id: str) -> None:
    """Wait out the injected per-task cost: the round trip is the per-task cost."""
    _finish_fault(
        TaskFault(duration_seconds=injected.per_task, extra_seconds=injected.extra),
        call_id,
        0.0,
    )


@contextlib.contextmanager
def _fine_switching() -> Iterator[None]:
    """Let the interpreter switch threads every `_SWITCH_SECONDS` meanwhile.

    A thread waking from a wait needs the GIL back, and while another thread
    holds it the wake-up can be late by the switch interval (5 ms by default),
    as long as a short timed kernel. Calibrations in one process (in-process
    workers) share the setting; the last one to finish restores it.
    """
    global _timing_calibrations, _saved_switch_seconds
    with _switching:
        if _timing_calibrations == 0:
            _saved_switch_seconds = sys.getswitchinterval()
            sys.setswitchinterval(min(_saved_switch_seconds, _SWITCH_SECONDS))
        _timing_calibrations += 1
    try:
        yield
    finally:
        with _switching:
            _timing_calibrations -= 1
            if _timing_calibrations == 0:
                sys.setswitchinterval(_saved_switch_seconds)


def _ramp(
    probe: Callable[[int, int], np.ndarray],
    loads: tuple[int, ...],
    target_seconds: float,
) -> tuple[int, ...]:
    """Choose a worker's kernel loads: `loads`, scaled to `target_seconds` a kernel.

    Probes of 1, 4, 16, ... rows (``probe(rows, count)`` times `count` kernels)
    grow until the rows' part of a probe is at least half the target; the last
    load is then timed `_CONFIRM` more times for the mean, which sizes the loads.
    The ramp decides on minima: a rare long delay of the timer or the thread
    scheduler must not stop it at a load that the delay, not the rows, fills.
    """
    first = probe(1, 2).min()
    rows, seconds = 1, first
    for _ in range(_MAX_PROBES):
        if rows >= max(loads) or seconds - first >= max(first, target_seconds / 2):
            break
        rows = min(_RAMP * rows, max(loads))
        seconds = probe(rows, 2).min()
    mean = probe(rows, _CONFIRM).mean()  # the random part counts in the budget
    row_seconds = max(mean - first, 0.0) / max(rows - 1, 1)
    fixed = max(first - row_seconds, 0.0)  # the one-row probe's row is not fixed
    return _scaled_loads(loads, fixed, row_seconds, target_seconds)


def _rounds(
    timed: Callable[[int, int], float],
    plan: tuple[int, ...],
    repeats: int,
    budget_seconds: float,
) -> list[float]:
    """Time `repeats` rounds of kernels, one at each load of `plan`.

    Kernel ``j`` is ``timed(rows, j)``. Past `budget_seconds`, the rounds stop at
    the end of the current one (after two at least: the fit needs two kernels at
    each load).
    """
    times: list[float] = []
    deadline = time.perf_counter() + budget_seconds
    for j, rows in enumerate(plan * repeats):
        round_starts = j % len(plan) == 0
        if round_starts and j >= 2 * len(plan) and time.perf_counter() > deadline:
            break
        times.append(timed(rows, j))
    return times


def _calibrate(
    d: int,
    loads: tuple[int, ...],
    repeats: int,
    budget_seconds: float,
    per_row: np.ndarray,
    call_id: str,
) -> tuple[np.ndarray, np.ndarray]:
    """Run on a worker: time its kernel at each load; return (rows, seconds).

    A ramp of probes (`_ramp`, untimed for the fit) scales the loads down if the
    ``repeats * len(loads)`` kernels would take longer than `budget_seconds` in
    all; then `repeats` rounds of kernels (`_rounds`) are timed within it.
    Timed kernel ``j`` waits out the injected ``rows * per_row[j]`` (the probes
    use the last draws). The interpreter switches threads every
    `_SWITCH_SECONDS` meanwhile (`_fine_switching`).
    """
    left, x = np.ones((max(loads), d)), np.ones(d)  # the values do not matter
    start = 0  # each kernel reads the rows after the last one's, as a batch reads
    # its own share: rows still in cache from the previous kernel would be faster

    def timed(rows: int, draw: int) -> float:
        nonlocal start
        start = 0 if start + rows > len(left) else start
        began = time.perf_counter()
        multiply_real(left[start : start + rows], x)
        start += rows
        fault = TaskFault(duration_seconds=rows * per_row[draw])
        _finish_fault(fault, call_id, time.perf_counter() - began)
        return time.perf_counter() - began

    draws = iter(range(len(per_row) - 1, -1, -1))  # probes: the last draws

    def probe(rows: int, count: int) -> np.ndarray:
        return np.array([timed(rows, next(draws)) for _ in range(count)])

    with _fine_switching():
        plan = _ramp(probe, loads, budget_seconds / (repeats * len(loads)))
        times = _rounds(timed, plan, repeats, budget_seconds)
    rows = (plan * repeats)[: len(times)]
    return np.array(rows, dtype=np.float64), np.array(times)


def _round_trips(
    client: Any,
    addresses: list[str],
    injected: list[_Injected],
    pings: int,
    call_id: str,
    deadline: float,
) -> np.ndarray:
    """Seconds from submitting an empty pinned task to its result, per worker.

    Each worker's pings form an independent chain (the next is submitted when
    the previous returns), all chains at once.
    """
    n = len(addresses)
    seconds = np.empty((n, pings))
    sent: dict[str, tuple[int, int, float]] = {}
    futures = []

    def send(i: int, j: int) -> Any:
        future = client.submit(
            _ping,
            injected[i],
            call_id,
            key=f"coded-{call_id}-calibrate-ping-{i}-{j}",
            workers=[addresses[i]],
            allow_other_workers=False,
        )
        sent[future.key] = (i, j, time.perf_counter())
        futures.append(future)
        return future

    remaining = max(deadline - time.perf_counter(), 0.0)
    chains = as_completed([send(i, 0) for i in range(n)], timeout=remaining)
    try:
        for future in chains:
            arrived = time.perf_counter()
            future.result()
            i, j, began = sent.pop(future.key)
            seconds[i, j] = arrived - began
            if j + 1 < pings:
                chains.add(send(i, j + 1))
    finally:
        forget(client, futures)
    return seconds


def _median_se(values: np.ndarray) -> float:
    """Return the standard error of a median: ``sqrt(pi / 2)`` the mean's."""
    return float(np.sqrt(np.pi / 2) * values.std(ddof=1) / np.sqrt(values.size))


def _call_cost(
    client: Any,
    fit: Any,
    addresses: Sequence[str],
    d: int,
    calls: int,
    deadline: float,
    stragglers: Any,
) -> tuple[float, float]:
    """Seconds a whole call adds to its tasks, and the standard error.

    `calls` products of one row per worker (an uncoded code: every worker
    needed, nothing to encode) through the executor, after one untimed, each
    starting with the scheduler query of the live workers that every
    ``coded_matmul`` makes: the median of their seconds to the decoded product,
    less the model's expected latency of that allocation under `fit` (the
    per-task cost ``c`` and the rows). Injected `stragglers` apply to these
    calls too, as to the pings: `fit` holds them.
    """
    from theory import expected_allocation_latency

    n = len(addresses)
    ones = np.ones(n, dtype=np.int64)
    model = expected_allocation_latency(fit.profile, ones, m=n, batches=ones)
    code = UncodedCode(n)
    encoded = code.encode_operands(np.ones((n, d)), np.ones(d))
    seconds = []
    for j in range(calls + 1):
        faults = None if stragglers is None else stragglers.sample(n, rng=j)
        began = time.perf_counter()
        worker_addresses(client, n)
        execute(
            client,
            code,
            encoded,
            addresses=addresses,
            batches=[[(0, 1)]] * n,
            faults=faults,
            timeout=max(deadline - began, 1e-3),
            label="profile-call",
        )
        if j:  # the first call warms the path up
            seconds.append(time.perf_counter() - began)
    seconds = np.array(seconds)
    cost = max(float(np.median(seconds)) - model, 0.0)
    return cost, float(np.hypot(_median_se(seconds), np.max(fit.c_se)))


def _check_rate() -> float:
    """Entries per second the client draws Freivalds checks at (median of a few)."""
    rows, columns = _CHECK_SHAPE
    share = np.random.default_rng(0).standard_normal((rows, columns))
    seconds = []
    for _ in range(_ENCODE_REPEATS):
        began = time.perf_counter()
        share_checks([share], [[(0, rows)]], None, rng=0)
        seconds.append(time.perf_counter() - began)
    return rows * columns / float(np.median(seconds))


def _encode_seconds(G: np.ndarray, full: np.ndarray) -> float:
    """Seconds of one parity product ``G @ full`` (the encoding kernel)."""
    began = time.perf_counter()
    encode_product(G, full, np.empty((0, full.shape[1])), None)
    return time.perf_counter() - began


def _encode_rates() -> tuple[float, float]:
    """Return the client's encoding rates: ``R`` (flops/s) and ``W`` (entries/s).

    ``R`` times the parity product alone, on a product large enough to run at
    the kernel's speed. ``W`` times a whole encode whose parity product is small
    (`_WHOLE_ENCODE`): validating A, the row norms of the reals' tolerance,
    allocating, writing and checking the parity rows; what it takes beyond its
    product's ``F / R``, per coded entry. Medians of interleaved repeats, so
    that both rates see the same moments of a busy machine.
    """
    from allocation import Allocation

    parity, sources, columns = _ENCODE_SHAPE
    rng = np.random.default_rng(0)
    G = rng.standard_normal((parity, sources))
    full = rng.standard_normal((sources, columns))
    n, blocks, u, v, d = _WHOLE_ENCODE
    plan = Allocation(
        loads=[blocks * v] * n,
        batches=[1] * n,
        m=u * v,
        block_rows=v,
        expected_latency=0.0,
        solver="profile",
    )
    code = RowMDSCode(plan.loads, plan.m, block_rows=v)
    A, x = rng.standard_normal((plan.m, d)), np.ones(d)
    flops = 2.0 * parity * sources * columns
    rates, rests = [], []
    for _ in range(_ENCODE_REPEATS):
        rate = flops / _encode_seconds(G, full)
        began = time.perf_counter()
        code.encode_operands(A, x)
        rests.append(time.perf_counter() - began - plan.encode_flops(d) / rate)
        rates.append(rate)
    rest = max(float(np.median(rests)), _TIMER_RESOLUTION)
    return float(np.median(rates)), plan.total_rows * d / rest


def profile_workers(
    client: Client,
    *,
    n: int | None = None,
    loads: Sequence[int] = (1_000, 20_000),
    d: int = 256,
    repeats: int = 8,
    pings: int = 8,
    calls: int = 12,
    budget_seconds: float = 1.0,
    stragglers: Stragglers | None = None,
    rng: RngLike = None,
    timeout: float = 60.0,
) -> ProfileFit:
    r"""Measure each worker at two or more loads and fit its ``(c_i, a_i, mu_i)``.

    Two measurements, neither of which makes one worker wait for another:

    1. *Per-task cost.* The client times `pings` round trips of an empty task
       pinned to each worker (submission to result), one chain per worker, all
       chains at once: the scheduling, messaging and result handling that every
       batch of a coded product pays besides computing.
    2. *Kernel.* One task per worker builds a ``max(loads) x d`` matrix and
       times, on the worker's clock, the kernel of a coded product's batch
       (``l`` rows times a vector, each kernel the rows after the previous
       one's) `repeats` times at each load, in turns.
       A short ramp of probes first scales the loads down, for this worker
       only, if its kernels would take more than `budget_seconds` in all (a slow
       worker is timed on fewer rows).
    3. *Whole call.* `calls` one-shot ``coded_matmul`` calls of one row per
       worker: their median seconds (besides encoding) less the model's
       expected latency of that allocation is ``fit.costs.call_seconds``, the fixed
       cost of a call (graph submission, dispatch, gather, decode, release),
       with its standard error ``fit.costs.call_se``; and the client times its
       encoding kernel and a whole encode (``fit.costs``, an
       `allocation.CallCosts`). A solver passes them on to its
       `allocation.Allocation`, and ``MatmulResult.predicted_seconds``
       then predicts the whole call
       (docs/theory/overhead.md#the-whole-call).

    Each worker's kernel times plus its median round trip go to
    `allocation.fit_profile`: ``c_i`` (round trip plus the kernel's fixed
    cost), ``a_i`` and ``mu_i`` in seconds, with standard errors (the median
    round trip's, ``sqrt(pi / 2)`` times the mean's, is added to ``c_i``'s in
    quadrature). The median, because a pause of the whole process (a garbage
    collection, which on in-process workers stops every worker at once) can
    hold one ping back by a hundred milliseconds, and it is not a per-task cost
    of one worker.

    Parameters
    ----------
    client : distributed.Client
        A running client.
    n : int, optional
        Profile the first `n` workers (sorted by address; default all).
    loads : sequence of int
        Rows per timed kernel, at least two distinct values (e.g. the smallest
        and largest batch you expect); the largest a worker is timed at.
    d : int
        Columns of the calibration matrix, ``>= 1``.
    repeats : int
        Timed kernels per worker and load, ``>= 2`` (at most: see
        `budget_seconds`). The standard error of ``mu_i`` is about
        ``mu_i / sqrt(K)`` over the ``K = repeats * len(loads)`` kernels,
        whatever their length: 10% needs about 100.
    pings : int
        Timed empty tasks per worker, ``>= 2``.
    calls : int
        Timed whole calls for the fixed cost of a call, ``>= 2`` (one more,
        untimed, warms up).
    budget_seconds : float
        Seconds a worker's timed kernels may take in all, ``> 0`` (the loads of
        a slower worker are scaled down to fit; the probes add up to about a
        third more). Kernels run in rounds, one at each load; a worker whose
        kernels run long stops at the end of the first round past the budget
        (after two rounds at least), and every worker's fit then uses as many
        rounds as the worker that timed the fewest. A worker whose fixed kernel
        cost alone exceeds its share of the budget gets kernels whose rows'
        part is as long as the fixed part, so that ``a`` stays measurable.
    stragglers : Stragglers, optional
        Injected model applied to the calibration (delays only: no failure or
        death), so that the estimate can be checked against it: every ping
        waits out the per-task cost ``c`` and extra delay, as every task of a
        coded product does, and every timed kernel of ``l`` rows ``l`` times a
        fresh draw of the per-row time.
    rng : Generator, SeedSequence, int or None
        Draws the injected delays.
    timeout : float
        Seconds the whole calibration may take, ``> 0``.

    Returns
    -------
    allocation.ProfileFit
        The fitted profile in seconds, standard errors and poor-fit flags;
        ``fit.loads`` and ``fit.times`` hold each worker's loads and kernel
        times plus median round trip. Worker ``i`` is the ``i``-th address in
        sorted order, as in ``coded_matmul``. Every solver accepts it:
        workers whose ``a`` the kernels cannot tell from 0 are listed in
        ``fit.unidentified`` (``fit.a_identified`` False), and the solvers
        cap their loads at ``m`` rows unless `l_max` says otherwise.

    Raises
    ------
    TimeoutError
        If the calibration does not finish within `timeout`.

    Notes
    -----
    The fit separates ``c`` from ``a`` by the loads
    (docs/theory/overhead.md#estimating-c-a-and-mu). On a machine that other work
    keeps busy the estimates move with the load; the benchmark
    (``bench/bench_allocation.py``) reports how close they come and how long
    profiling takes.

    Examples
    --------
    >>> from coded import LocalCodedCluster
    >>> with LocalCodedCluster(n_workers=2) as cluster:
    ...     fit = profile_workers(cluster.client, loads=(100, 1000), d=16)
    >>> fit.n, fit.loads.shape, fit.profile.c.shape, fit.a_identified.shape
    (2, (2, 16), (2,), (2,))
    >>> bool(fit.costs.call_se > 0.0 and fit.costs.encode_flops_per_second > 0.0)
    True
    """
    from allocation import CallCosts, fit_profile

    client = check_client(client)
    loads = _check_loads(loads)
    d = check_int(d, "d", min_value=1)
    repeats = check_int(repeats, "repeats", min_value=2)
    pings = check_int(pings, "pings", min_value=2)
    calls = check_int(calls, "calls", min_value=2)
    budget = check_real(
        budget_seconds, "budget_seconds", min_value=0.0, strict_min=True
    )
    timeout = check_real(timeout, "timeout", min_value=0.0, strict_min=True)
    addresses = worker_addresses(client, None if n is None else check_int(n, "n"))
    draws = repeats * len(loads) + 2 * (_MAX_PROBES + 1) + _CONFIRM
    injected = _injected(stragglers, len(addresses), draws, as_generator(rng))
    deadline = time.perf_counter() + timeout
    call_id = new_call_id()
    try:
        trips = _round_trips(client, addresses, injected, pings, call_id, deadline)
        tasks = [
            client.submit(
                _calibrate,
                d,
                loads,
                repeats,
                budget,
                injected[i].per_row,
                call_id,
                key=f"coded-{call_id}-calibrate-{i}",
                workers=[address],
                allow_other_workers=False,
            )
            for i, address in enumerate(addresses)
        ]
        try:
            wait(tasks, timeout=max(deadline - time.perf_counter(), 0.0))
            results = [task.result() for task in tasks]
        finally:
            forget(client, tasks)
    except BaseException as exc:  # wake the injected waits, so the workers free up
        wake_waits(client, call_id, addresses)
        if isinstance(exc, TimeoutError):
            raise TimeoutError(
                f"calibration: workers did not answer within timeout={timeout} s."
            ) from exc
        raise
    trip = np.median(trips, axis=1)
    kernels = min(times.size for _, times in results)  # whole rounds on every worker
    fit = fit_profile(
        np.array([rows[:kernels] for rows, _ in results]),
        np.array([times[:kernels] for _, times in results]) + trip[:, None],
    )
    trip_se = np.sqrt(np.pi / 2) * trips.std(axis=1, ddof=1) / np.sqrt(pings)
    fit = dataclasses.replace(fit, c_se=np.sqrt(fit.c_se**2 + trip_se**2))
    call, call_se = _call_cost(client, fit, addresses, d, calls, deadline, stragglers)
    flops_rate, entries_rate = _encode_rates()
    costs = CallCosts(
        call_seconds=call,
        call_se=call_se,
        encode_flops_per_second=flops_rate,
        encode_entries_per_second=entries_rate,
        check_entries_per_second=_check_rate(),
    )
    return dataclasses.replace(fit, costs=costs)


def _injected(
    stragglers: Stragglers | None, n: int, draws: int, generator: np.random.Generator
) -> list[_Injected]:
    """Each worker's injected seconds per task and per row, and extra delay."""
    if stragglers is None:
        return [_Injected(0.0, np.zeros(draws), 0.0)] * n
    plans = [stragglers.sample(n, rng=generator) for _ in range(draws)]
    per_row = np.column_stack([plan.seconds_per_row for plan in plans])
    first = plans[0]
    return [
        _Injected(
            float(first.seconds_per_task[i]), per_row[i], float(first.extra_seconds[i])
        )
        for i in range(n)
    ]
