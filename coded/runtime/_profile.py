"""Calibration: time each worker's kernel at several loads and fit its profile.

Every worker runs one calibration task that times the coded product's kernel
itself (a worker's clock, so neither the scheduler nor the other workers add
noise), and independently the client times round trips of empty tasks pinned to
each worker: what every real task pays besides computing. No worker waits for
another at any point.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from distributed import as_completed, wait

from coded._injection import Stragglers, TaskFault
from coded.codes._fields import multiply_real
from coded.runtime._cluster import check_client, worker_addresses
from coded.runtime._executor import forget, new_call_id
from coded.runtime._worker import _finish_fault, signal_cancel
from theory._rng import RngLike, as_generator
from theory._validation import check_int, check_real

__all__ = ["profile_workers"]

_RAMP = 4  # the probe load grows by this factor until a probe is slow enough
_MAX_PROBES = 12


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


def _ping() -> None:
    """Do nothing: the round trip of this task is the per-task cost."""


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


def _calibrate(
    d: int,
    loads: tuple[int, ...],
    repeats: int,
    target_seconds: float,
    seconds_per_task: float,
    seconds_per_row: np.ndarray,
    extra_seconds: float,
    call_id: str,
) -> tuple[np.ndarray, np.ndarray]:
    """Run on a worker: time its kernel at each load; return (rows, seconds).

    A ramp of probes (1, 4, 16, ... rows, untimed for the fit) finds the fixed
    and the per-row time of a task; the loads are scaled down if their tasks
    would take longer than `target_seconds` on average. Task ``j`` applies the
    injected duration ``seconds_per_task + rows * seconds_per_row[j]`` (its
    ``j``-th draw; the probes use the last ones) plus `extra_seconds`.
    """
    left, x = np.ones((max(loads), d)), np.ones(d)  # the values do not matter

    def timed(rows: int, draw: int) -> float:
        began = time.perf_counter()
        multiply_real(left[:rows], x)
        fault = TaskFault(
            duration_seconds=seconds_per_task + rows * seconds_per_row[draw],
            extra_seconds=extra_seconds,
        )
        _finish_fault(fault, call_id, time.perf_counter() - began)
        return time.perf_counter() - began

    draws = iter(range(len(seconds_per_row) - 1, -1, -1))  # probes: the last draws

    def probe(rows: int) -> float:  # the mean of two draws of the random part
        return (timed(rows, next(draws)) + timed(rows, next(draws))) / 2.0

    first = probe(1)
    rows, seconds = 1, first
    for _ in range(_MAX_PROBES):
        if rows >= max(loads) or seconds - first >= max(first, target_seconds / 2):
            break
        rows = min(_RAMP * rows, max(loads))
        seconds = probe(rows)
    row_seconds = max(seconds - first, 0.0) / max(rows - 1, 1)
    plan = _scaled_loads(loads, first, row_seconds, target_seconds)
    schedule = np.array(plan * repeats)
    times = np.array([timed(int(r), j) for j, r in enumerate(schedule)])
    return schedule.astype(np.float64), times


def _round_trips(client, addresses, pings, call_id, deadline) -> np.ndarray:
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


def profile_workers(
    client: Any,
    *,
    n: int | None = None,
    loads: Sequence[int] = (1_000, 20_000),
    d: int = 256,
    repeats: int = 8,
    pings: int = 8,
    budget_seconds: float = 1.0,
    stragglers: Stragglers | None = None,
    rng: RngLike = None,
    timeout: float = 60.0,
) -> Any:
    r"""Measure each worker at two or more loads and fit its ``(c_i, a_i, mu_i)``.

    Two measurements, neither of which makes one worker wait for another:

    1. *Per-task cost.* The client times `pings` round trips of an empty task
       pinned to each worker (submission to result), one chain per worker, all
       chains at once: the scheduling, messaging and result handling that every
       batch of a coded product pays besides computing.
    2. *Kernel.* One task per worker builds a ``max(loads) x d`` matrix and
       times, on the worker's clock, the kernel of a coded product's batch
       (rows ``[0, l)`` times a vector) `repeats` times at each load, with the
       injected duration of `stragglers` if given. A short ramp of probes first
       scales the loads down, for this worker only, if its tasks would take more
       than `budget_seconds` in all (a slow worker is timed on fewer rows).

    Each worker's times are its kernel times plus its mean round trip; the fit
    (`allocation.fit_profile`) gives ``c_i`` (round trip plus the kernel's fixed
    cost), ``a_i`` and ``mu_i`` in seconds, with standard errors (the round
    trip's own standard error is added to ``c_i``'s in quadrature).

    Parameters
    ----------
    client : distributed.Client
        A running client.
    n : int, optional
        Profile the first `n` workers (sorted by address; default all).
    loads : sequence of int
        Rows per timed task, at least two distinct values (e.g. the smallest
        and largest batch you expect); the largest a worker is timed at.
    d : int
        Columns of the calibration matrix, ``>= 1``.
    repeats : int
        Timed tasks per worker and load, ``>= 2``.
    pings : int
        Timed empty tasks per worker, ``>= 2``.
    budget_seconds : float
        Seconds a worker's timed tasks may take in all, ``> 0`` (the loads of a
        slower worker are scaled down to fit; the probes add up to about a
        third more). A worker whose fixed per-task cost alone exceeds its share
        of the budget overruns it: the rows' part of its tasks is then made as
        long as the fixed part, so that ``a`` stays measurable.
    stragglers : Stragglers, optional
        Injected model applied to the timed tasks (a fresh draw per task, delays
        only: no failure or death), so that the estimate can be checked against it.
    rng : Generator, SeedSequence, int or None
        Draws the injected delays.
    timeout : float
        Seconds the whole calibration may take, ``> 0``.

    Returns
    -------
    allocation.ProfileFit
        The fitted profile in seconds, standard errors and poor-fit flags;
        ``fit.loads`` and ``fit.times`` hold each worker's loads and kernel
        times plus mean round trip. Worker ``i`` is the ``i``-th address in
        sorted order, as in ``coded_matmul``. Every solver accepts it.

    Raises
    ------
    TimeoutError
        If the calibration does not finish within `timeout`.

    Notes
    -----
    The fit separates ``c`` from ``a`` by the loads
    (docs/theory/overhead.md#estimating-c-a-and-mu). On a machine that other work
    keeps busy the estimates move with the load; the benchmark
    (``bench/allocation.py``) reports how close they come and how long
    profiling takes.

    Examples
    --------
    >>> from coded import LocalCodedCluster
    >>> with LocalCodedCluster(n_workers=2) as cluster:
    ...     fit = profile_workers(cluster.client, loads=(100, 1000), d=16)
    >>> fit.n, fit.loads.shape, fit.profile.c.shape
    (2, (2, 16), (2,))
    """
    from allocation import fit_profile

    client = check_client(client)
    loads = _check_loads(loads)
    d = check_int(d, "d", min_value=1)
    repeats = check_int(repeats, "repeats", min_value=2)
    pings = check_int(pings, "pings", min_value=2)
    budget = check_real(
        budget_seconds, "budget_seconds", min_value=0.0, strict_min=True
    )
    timeout = check_real(timeout, "timeout", min_value=0.0, strict_min=True)
    addresses = worker_addresses(client, None if n is None else check_int(n, "n"))
    generator = as_generator(rng)
    n = len(addresses)
    draws = repeats * len(loads) + 2 * (_MAX_PROBES + 1)
    per_task, per_row, extra = _injected(stragglers, n, draws, generator)
    deadline = time.perf_counter() + timeout
    call_id = new_call_id()
    target = budget / (repeats * len(loads))
    try:
        trips = _round_trips(client, addresses, pings, call_id, deadline)
        tasks = [
            client.submit(
                _calibrate,
                d,
                loads,
                repeats,
                target,
                float(per_task[i]),
                per_row[i],
                float(extra[i]),
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
        except BaseException:  # wake the injected waits, so the workers free up
            client.run(
                signal_cancel, call_id, workers=addresses, wait=False, on_error="ignore"
            )
            raise
        finally:
            forget(client, tasks)
    except TimeoutError as exc:
        raise TimeoutError(
            f"calibration: workers did not answer within timeout={timeout} s."
        ) from exc
    trip = trips.mean(axis=1)
    fit = fit_profile(
        np.array([rows for rows, _ in results]),
        np.array([times for _, times in results]) + trip[:, None],
    )
    trip_se = trips.std(axis=1, ddof=1) / np.sqrt(pings)
    return dataclasses.replace(fit, c_se=np.sqrt(fit.c_se**2 + trip_se**2))


def _injected(
    stragglers: Stragglers | None, n: int, draws: int, generator: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-task seconds, per-row seconds (one draw per task) and extra delays."""
    if stragglers is None:
        return np.zeros(n), np.zeros((n, draws)), np.zeros(n)
    plans = [stragglers.sample(n, rng=generator) for _ in range(draws)]
    per_row = np.column_stack([plan.seconds_per_row for plan in plans])
    return plans[0].seconds_per_task, per_row, plans[0].extra_seconds
