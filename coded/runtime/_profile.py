"""Calibration: time small products on every worker and estimate its profile."""

from __future__ import annotations

from typing import Any

import numpy as np
from distributed import wait

from coded._injection import Stragglers, TaskFault
from coded.runtime._cluster import check_client, worker_addresses
from coded.runtime._executor import forget, new_call_id
from coded.runtime._worker import run_calibration
from theory import WorkerProfile
from theory._rng import RngLike, as_generator
from theory._validation import check_int, check_real

__all__ = ["profile_workers"]


def profile_workers(
    client: Any,
    *,
    n: int | None = None,
    rows: int = 256,
    d: int = 256,
    repeats: int = 5,
    stragglers: Stragglers | None = None,
    rng: RngLike = None,
    timeout: float = 60.0,
) -> WorkerProfile:
    r"""Estimate each worker's shifted-exponential profile from timed tasks.

    Every worker runs `repeats` calibration products of a random ``rows x d``
    matrix by a vector (pinned to it, all workers at once per repeat); the
    measured times feed :func:`allocation.estimate_profile`.

    Parameters
    ----------
    client : distributed.Client
        A running client.
    n : int, optional
        Profile the first `n` workers (sorted by address; default all).
    rows, d : int
        Size of each calibration product, ``>= 1``.
    repeats : int
        Timed tasks per worker, ``>= 2``.
    stragglers : Stragglers, optional
        Injected model applied to the calibration tasks (a fresh draw per
        repeat), so that the estimate can be checked against it.
    rng : Generator, SeedSequence, int or None
        Draws the injected delays and the operands' seeds.
    timeout : float
        Seconds each round of calibration tasks may take, ``> 0``.

    Returns
    -------
    theory.WorkerProfile
        ``a_i`` in seconds per row and ``mu_i`` in rows per second, worker ``i``
        being the ``i``-th address in sorted order (as in ``coded_matmul``).

    Notes
    -----
    With per-row times :math:`y = t / \text{rows}` the estimator is the MLE of
    docs/theory/model.md#estimating-a-profile, :math:`\hat a = \min y`,
    :math:`1/\hat\mu = \bar y - \hat a`,
    with the small-sample corrections of :func:`allocation.estimate_profile`.
    """
    from allocation import estimate_profile

    client = check_client(client)
    rows = check_int(rows, "rows", min_value=1)
    d = check_int(d, "d", min_value=1)
    repeats = check_int(repeats, "repeats", min_value=2)
    timeout = check_real(timeout, "timeout", min_value=0.0, strict_min=True)
    addresses = worker_addresses(client, None if n is None else check_int(n, "n"))
    generator = as_generator(rng)
    n = len(addresses)
    times = np.empty((n, repeats))
    for r in range(repeats):
        call_id = new_call_id()
        plan = (
            None
            if stragglers is None
            else stragglers.sample(len(addresses), rng=generator)
        )
        futures = [
            client.submit(
                run_calibration,
                rows=rows,
                d=d,
                fault=TaskFault() if plan is None else plan.task_fault(i, rows=rows),
                call_id=call_id,
                seed=int(generator.integers(2**32)),
                key=f"coded-{call_id}-calibrate-{i}",
                workers=[address],
                allow_other_workers=False,
            )
            for i, address in enumerate(addresses)
        ]
        try:
            try:
                wait(futures, timeout=timeout)
            except TimeoutError as exc:
                raise TimeoutError(
                    f"calibration round {r}: workers did not answer within "
                    f"timeout={timeout} s."
                ) from exc
            times[:, r] = client.gather(futures)
        finally:
            forget(client, futures)
    return estimate_profile(np.full(repeats, float(rows)), times)
