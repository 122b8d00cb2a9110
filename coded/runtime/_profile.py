"""Calibration: time real batch tasks at several loads and fit each worker's profile."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from distributed import as_completed, wait

from coded._injection import Stragglers, TaskFault
from coded.codes._fields import multiply_real
from coded.runtime._cluster import check_client, worker_addresses
from coded.runtime._executor import forget, new_call_id
from coded.runtime._worker import run_batch
from theory._rng import RngLike, as_generator
from theory._validation import check_int, check_real

__all__ = ["profile_workers"]


def _random_rows(rows: int, d: int, seed: int) -> np.ndarray:
    """Return the calibration operand, built on the worker that keeps it."""
    return np.random.default_rng(seed).standard_normal((rows, d))


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
    return values


def profile_workers(
    client: Any,
    *,
    n: int | None = None,
    loads: Sequence[int] = (1_000, 20_000),
    d: int = 256,
    repeats: int = 6,
    stragglers: Stragglers | None = None,
    rng: RngLike = None,
    timeout: float = 60.0,
) -> Any:
    r"""Measure each worker at two or more loads and fit its ``(c_i, a_i, mu_i)``.

    Every worker first builds a random ``max(loads) x d`` matrix that stays on
    it; then, `repeats` times for each load, every worker runs the same task as a
    coded product's batch (`coded.runtime` ``run_batch``: rows ``[0, l)`` of its
    matrix times a vector, with the injected fault if any), all workers at once.
    A task's time is measured on the client, from submission until its result
    has arrived, so it includes what a real batch pays besides computing:
    scheduling, transfer and deserialisation, the per-task cost ``c_i``.

    Parameters
    ----------
    client : distributed.Client
        A running client.
    n : int, optional
        Profile the first `n` workers (sorted by address; default all).
    loads : sequence of int
        Rows per timed task, at least two distinct values (e.g. the smallest
        and largest batch you expect).
    d : int
        Columns of the calibration matrix, ``>= 1``.
    repeats : int
        Timed tasks per worker and load, ``>= 2``.
    stragglers : Stragglers, optional
        Injected model applied to the calibration tasks (a fresh draw per
        round), so that the estimate can be checked against it.
    rng : Generator, SeedSequence, int or None
        Draws the injected delays and the operands' seeds.
    timeout : float
        Seconds each round of calibration tasks may take, ``> 0``.

    Returns
    -------
    allocation.ProfileFit
        The fitted profile in seconds, standard errors and poor-fit flags
        (`allocation.fit_profile`); worker ``i`` is the ``i``-th address in
        sorted order, as in ``coded_matmul``. Every solver accepts it.

    Raises
    ------
    TimeoutError
        If a round does not finish within `timeout`.

    Notes
    -----
    The fit separates ``c`` from ``a`` by the loads
    (docs/theory/overhead.md#estimating-c-a-and-mu). On a machine that other
    work keeps busy the estimates move with the load; the benchmark
    (``bench/allocation.py``) reports how close they come.
    """
    from allocation import fit_profile

    client = check_client(client)
    loads = _check_loads(loads)
    d = check_int(d, "d", min_value=1)
    repeats = check_int(repeats, "repeats", min_value=2)
    timeout = check_real(timeout, "timeout", min_value=0.0, strict_min=True)
    addresses = worker_addresses(client, None if n is None else check_int(n, "n"))
    generator = as_generator(rng)
    n = len(addresses)
    call_id = new_call_id()
    data = [
        client.submit(
            _random_rows,
            max(loads),
            d,
            int(generator.integers(2**32)),
            key=f"coded-{call_id}-calibrate-data-{i}",
            workers=[address],
            allow_other_workers=False,
        )
        for i, address in enumerate(addresses)
    ]
    x = generator.standard_normal(d)
    rounds = [(r, load) for r in range(repeats) for load in loads]
    times = np.empty((n, len(rounds)))
    try:
        wait(data, timeout=timeout)
        for column, (r, load) in enumerate(rounds):
            plan = None if stragglers is None else stragglers.sample(n, rng=generator)
            times[:, column] = _time_round(
                client, addresses, data, x, load, plan, call_id, f"{r}-{load}", timeout
            )
    except TimeoutError as exc:
        raise TimeoutError(
            f"calibration: workers did not answer within timeout={timeout} s."
        ) from exc
    finally:
        forget(client, data)
    load_matrix = np.tile([float(load) for _, load in rounds], (n, 1))
    return fit_profile(load_matrix, times)


def _time_round(client, addresses, data, x, load, plan, call_id, tag, timeout):
    """Submit one task per worker; return each one's seconds until its result."""
    began = time.perf_counter()
    futures = {
        client.submit(
            run_batch,
            data[i],
            x,
            multiply=multiply_real,
            worker=i,
            start=0,
            stop=load,
            fault=TaskFault() if plan is None else plan.task_fault(i, rows=load),
            call_id=call_id,
            submitted_at=time.time(),
            key=f"coded-{call_id}-calibrate-{tag}-{i}",
            workers=[address],
            allow_other_workers=False,
        ): i
        for i, address in enumerate(addresses)
    }
    seconds = np.empty(len(addresses))
    try:
        for future in as_completed(list(futures), timeout=timeout):
            future.result()
            seconds[futures[future]] = time.perf_counter() - began
    finally:
        forget(client, list(futures))
    return seconds
