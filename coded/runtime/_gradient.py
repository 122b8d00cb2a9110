"""Gradient steps on Dask: shares placed once, one pinned task per worker a step.

Each data partition is scattered once, to one of its holders; each worker then
assembles its share (its partitions, coefficients and ``grad``) in a pinned task
under an explicit key (``coded-<placement id>-share-<i>``); every step runs
through the one executor (:func:`coded.runtime.execute`) with those futures as
the placed left operands, so a step ships only the parameters, decodes from the
first decodable set of returns, cancels the rest cooperatively and raises
:class:`~coded.errors.NotEnoughResultsError` as soon as no decodable set can
arrive (at the latest at the timeout).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
from distributed import Client, Future, wait

from coded import MatmulResult
from coded.codes.interface import GradientScheme, WorkerShare
from coded.injection import FaultPlan
from coded.runtime._dask_helpers import (
    _await_forgotten,
    forget,
    new_call_id,
    scatter_to_workers,
)
from coded.runtime._executor import execute

__all__ = ["place_shares", "release_shares", "run_gradient_step"]


def _first_holders(shares: Sequence[WorkerShare]) -> dict[int, int]:
    """Give each partition to one of its holders, balancing their counts."""
    load = {share.worker: 0 for share in shares}
    owner: dict[int, int] = {}
    for j in sorted({j for share in shares for j in share.partitions}):
        holders = [share.worker for share in shares if j in share.partitions]
        owner[j] = min(holders, key=lambda i: (load[i], i))
        load[owner[j]] += 1
    return owner


def _assemble(*data: Any, share: WorkerShare) -> WorkerShare:
    """Worker side: the share with its partitions' data."""
    return dataclasses.replace(share, data=tuple(data))


def place_shares(
    client: Client,
    partitions: Sequence[Any],
    shares: Sequence[WorkerShare],
    addresses: Sequence[str],
) -> tuple[str, list[Future]]:
    """Place every worker's share on it; return the placement id and futures.

    Partition ``j`` is scattered once, to one of its holders
    (``coded-<id>-part-<j>``); each worker then assembles its share
    (``coded-<id>-share-<i>``) in a pinned task, fetching the partitions it lacks
    from their first holders, and the partition keys are dropped.
    """
    placement_id = new_call_id()
    part_key = f"coded-{placement_id}-part-{{}}".format
    owner = _first_holders(shares)
    per_worker: list[dict[str, Any]] = [{} for _ in addresses]
    for j, i in owner.items():
        per_worker[i][part_key(j)] = partitions[j]
    parts, lost = scatter_to_workers(client, per_worker, addresses)
    if lost:
        raise RuntimeError(f"placing the gradient data failed: {lost}.")
    futures = [
        client.submit(
            _assemble,
            *(parts[part_key(j)] for j in share.partitions),
            share=share,
            key=f"coded-{placement_id}-share-{share.worker}",
            workers=[addresses[share.worker]],
            allow_other_workers=False,
            pure=False,
        )
        for share in shares
    ]
    wait(futures)
    failed = [f.key for f in futures if f.status != "finished"]
    for future in parts.values():
        future.release()
    client.run_on_scheduler(_await_forgotten, keys=list(parts))
    if failed:
        forget(client, futures)
        raise RuntimeError(f"placing the gradient data failed on {failed}.")
    return placement_id, futures


def release_shares(client: Client, futures: Sequence[Future]) -> None:
    """Drop the placed shares; returns once the scheduler holds none of them."""
    placed = [future for future in futures if future is not None]
    if placed and client.status == "running":
        forget(client, placed)


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
    transport: str = "auto",
) -> MatmulResult:
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
    transport : {"auto", "resident", "tasks"}
        As :class:`coded.ExecutionOptions`' (``"auto"``: resident where the
        workers run resident servers).

    Returns
    -------
    MatmulResult
        ``product`` is the decoded gradient; ``transport`` is ``"resident"``
        where the workers run resident servers (one message per worker and
        step, no scheduler), else ``"tasks"``.
    """
    from coded.runtime._resident import serve_placements

    if transport == "grouped":
        raise ValueError(
            "`transport='grouped'` decodes the groups of a HierarchicalCode; a "
            "gradient code's step runs transport='auto', 'resident' or 'tasks'."
        )
    resident = transport != "tasks" and serve_placements(client)
    if transport == "resident" and not resident:
        raise ValueError(
            "`transport='resident'` needs resident servers on the workers, which "
            "refused them; use transport='auto' or 'tasks'."
        )
    counts = [len(partitions) for partitions in scheme.supports]
    encoded = scheme.encode_operands((), params)
    weights: list[Any] = [rows / c for rows, c in zip(worker_rows, counts, strict=True)]
    return execute(
        client,
        scheme,
        encoded,
        addresses=addresses,
        batches=scheme.batches,
        faults=faults,
        timeout=timeout,
        row_weights=weights,
        placed_lefts=futures,
        transport="resident" if resident else "tasks",
    )
