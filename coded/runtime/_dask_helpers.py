"""Dask helpers every runtime module shares: scheduler queries, placement, release.

Each helper talks to the cluster through a client's public API and raises
`SchedulerLostError` once the scheduler is unreachable, never waiting more
than ``_SCHEDULER_SECONDS`` on one query.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Sequence
from typing import Any

from distributed import Client, Future
from distributed.comm import CommClosedError

from coded.errors import SchedulerLostError

__all__ = [
    "drop",
    "forget",
    "live_addresses",
    "live_addresses_async",
    "new_call_id",
    "on_scheduler",
    "on_scheduler_async",
    "scatter_to_workers",
    "scatter_to_workers_async",
    "scheduler_lost",
]

_FORGET_POLLS = 5_000  # 10 s at 2 ms
_SCHEDULER_SECONDS = 30.0  # longest wait for one scheduler query (forget: 10 s)


def new_call_id() -> str:
    """Return a unique call id ending in this process's id."""
    return f"{uuid.uuid4().hex[:12]}-{os.getpid()}"


def _alive_workers(dask_scheduler: Any) -> list[str]:
    return list(dask_scheduler.workers)


def scheduler_lost(client: Client, when: str) -> SchedulerLostError:
    """Return the error of a call whose scheduler became unreachable `when`."""
    return SchedulerLostError(
        f"the Dask scheduler became unreachable {when} (client status "
        f"{client.status!r}); no result can arrive."
    )


async def on_scheduler_async(client: Client, function: Any, **kwargs: Any) -> Any:
    """Run `function` on the scheduler, or raise `SchedulerLostError`.

    Never waits more than ``_SCHEDULER_SECONDS`` for an unreachable scheduler.
    """
    if client.status != "running":
        raise scheduler_lost(client, "before a query")
    try:
        return await asyncio.wait_for(
            client.run_on_scheduler(function, asynchronous=True, **kwargs),
            _SCHEDULER_SECONDS,
        )
    except (OSError, CommClosedError) as error:
        raise SchedulerLostError(
            f"the Dask scheduler is unreachable: {type(error).__name__}: {error}"
        ) from error


def on_scheduler(client: Client, function: Any, **kwargs: Any) -> Any:
    """:func:`on_scheduler_async` from synchronous code (a blocking client)."""
    return client.sync(on_scheduler_async, client, function, **kwargs)


async def live_addresses_async(client: Client) -> set[str]:
    """Addresses of the workers the scheduler knows now."""
    return set(await on_scheduler_async(client, _alive_workers))


def live_addresses(client: Client) -> set[str]:
    """:func:`live_addresses_async` from synchronous code."""
    return client.sync(live_addresses_async, client)


async def _await_forgotten(dask_scheduler: Any, keys: list[str]) -> list[str]:
    """Wait (on the scheduler) until it holds none of `keys`; return live workers."""
    for _ in range(_FORGET_POLLS):
        if not any(k in dask_scheduler.tasks for k in keys):
            break
        await asyncio.sleep(0.002)
    return list(dask_scheduler.workers)


def forget(client: Client, futures: Sequence[Future]) -> set[str]:
    """Cancel `futures`, wait until the scheduler holds none of their keys.

    ``Client.cancel`` travels on the batched stream; the wait makes sure that no
    task of a finished call survives it on the scheduler. Returns the addresses
    of the live workers.
    """
    if client.status != "running":  # nothing to forget on a lost scheduler
        return set()
    if futures:
        client.cancel(list(futures), force=True)
    keys = [f.key for f in futures]
    return set(on_scheduler(client, _await_forgotten, keys=keys))


async def _await_freed(dask_scheduler: Any, keys: list[str]) -> None:
    """Wait (on the scheduler) until none of `keys` holds data or will run.

    A key some product still derives from (a dask.array decoded on the
    cluster) stays in the graph, released, as that product's lineage.
    """
    for _ in range(_FORGET_POLLS):
        states = (dask_scheduler.tasks.get(k) for k in keys)
        if all(ts is None or ts.state in ("released", "erred") for ts in states):
            return
        await asyncio.sleep(0.002)


def drop(client: Client, futures: Sequence[Future]) -> None:
    """Release `futures` and wait until the cluster holds none of their data.

    Unlike :func:`forget` nothing is cancelled (a cancel would cascade to the
    keys derived from these, whose data Dask keeps until they are released).
    """
    for future in futures:
        future.release()
    if futures and client.status == "running":
        on_scheduler(client, _await_freed, keys=[f.key for f in futures])


async def scatter_to_workers_async(
    client: Client,
    per_worker: Sequence[dict[str, Any]],
    addresses: Sequence[str],
    *,
    timeout: float = _SCHEDULER_SECONDS,
) -> tuple[dict[str, Future], dict[int, str]]:
    """Scatter ``per_worker[i]`` (key -> data) to ``addresses[i]``, all at once.

    Returns the futures of every key that arrived, and ``i -> why`` for the
    workers that could not take their data (dead, gone, or not within `timeout`
    seconds); a worker's failure never stops the others.
    """

    async def scatter_one(data: dict[str, Any], address: str) -> dict[str, Future]:
        return await asyncio.wait_for(
            client.scatter(data, workers=[address], asynchronous=True), timeout
        )

    if client.status != "running":
        raise scheduler_lost(client, "before shipping operands")
    outcomes = await asyncio.gather(
        *(
            scatter_one(data, address)
            for data, address in zip(per_worker, addresses, strict=True)
        ),
        return_exceptions=True,
    )
    placed: dict[str, Future] = {}
    failed: dict[int, str] = {}
    for i, outcome in enumerate(outcomes):
        if isinstance(outcome, BaseException):
            why = f"{type(outcome).__name__}: {outcome}".rstrip(": ")
            failed[i] = f"shipping its operands to {addresses[i]} failed ({why})"
        else:
            placed.update(outcome)
    if client.status != "running":
        raise scheduler_lost(client, "while shipping operands")
    return placed, failed


def scatter_to_workers(
    client: Client,
    per_worker: Sequence[dict[str, Any]],
    addresses: Sequence[str],
    *,
    timeout: float = _SCHEDULER_SECONDS,
) -> tuple[dict[str, Future], dict[int, str]]:
    """:func:`scatter_to_workers_async` from synchronous code."""
    if client.status != "running":
        raise scheduler_lost(client, "before shipping operands")
    return client.sync(
        scatter_to_workers_async, client, per_worker, addresses, timeout=timeout
    )
