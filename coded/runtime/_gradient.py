"""Gradient steps on Dask: shares placed once, one pinned task per worker a step.

The shares (each worker's data partitions, coefficients and ``grad``) are
scattered once to their workers under explicit keys
(``coded-<placement id>-share-<i>``); every step runs through the one executor
(:func:`coded.runtime.execute`) with those futures as the placed left operands,
so a step ships only the parameters, decodes from the first decodable set of
returns, cancels the rest cooperatively and raises
:class:`~coded.errors.NotEnoughResultsError` as soon as no decodable set can
arrive (at the latest at the timeout).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from distributed import Client, Future

from coded._injection import FaultPlan
from coded.codes._gradient_schemes import GradientScheme, WorkerShare
from coded.runtime._executor import (
    Execution,
    execute,
    forget,
    new_call_id,
    scatter_to_workers,
)

__all__ = ["place_shares", "release_shares", "run_gradient_step"]


def place_shares(
    client: Client, shares: Sequence[WorkerShare], addresses: Sequence[str]
) -> tuple[str, list[Future]]:
    """Scatter share ``i`` to ``addresses[i]``; return the placement id, futures."""
    placement_id = new_call_id()
    keys = [f"coded-{placement_id}-share-{i}" for i in range(len(shares))]
    placed = scatter_to_workers(
        client,
        [{key: share} for key, share in zip(keys, shares, strict=True)],
        addresses,
    )
    return placement_id, [placed[key] for key in keys]


def release_shares(client: Client, futures: Sequence[Future]) -> None:
    """Drop the placed shares; returns once the scheduler holds none of them."""
    if futures and client.status == "running":
        forget(client, futures)


def run_gradient_step(
    client: Client,
    scheme: GradientScheme,
    params: np.ndarray,
    *,
    futures: Sequence[Future],
    addresses: Sequence[str],
    worker_rows: Sequence[int],
    faults: FaultPlan | None,
    timeout: float,
) -> Execution:
    """One step: ship `params`, run ``combine`` on every worker, decode early.

    Parameters
    ----------
    client : distributed.Client
        The client the shares were placed with.
    scheme : GradientScheme
        The scheme (its decoder and ``combine``).
    params : numpy.ndarray
        The current parameters.
    futures : sequence of Future
        The placed shares, one per worker.
    addresses : sequence of str
        The Dask worker of each share.
    worker_rows : sequence of int
        Data rows each worker processes (the load the injected model scales).
    faults : FaultPlan, optional
        Injected delays and failures of this step.
    timeout : float
        Seconds to wait for a decodable set of returns.

    Returns
    -------
    Execution
        ``product`` is the decoded gradient.
    """
    counts = [len(partitions) for partitions in scheme.supports]
    encoded = scheme.encode_operands((), params)
    weights: list[Any] = [rows / c for rows, c in zip(worker_rows, counts, strict=True)]
    return execute(
        client,
        scheme,
        encoded,
        addresses=addresses,
        batches=[[(0, c)] for c in counts],
        faults=faults,
        timeout=timeout,
        row_weights=weights,
        placed_lefts=futures,
    )
