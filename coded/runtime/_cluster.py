"""Clients: an embedded cluster for many calls, and the client of one call."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from distributed import Client, LocalCluster

from theory.validation import check_int

__all__ = [
    "LocalCodedCluster",
    "check_client",
    "client_for_call",
    "memory_limits",
    "worker_addresses",
    "worker_addresses_async",
]


class LocalCodedCluster:
    """An embedded Dask ``LocalCluster`` kept open for many ``coded_matmul`` calls.

    Parameters
    ----------
    n_workers : int
        Number of workers, ``>= 1``; each has `threads_per_worker` threads.
    processes : bool
        Run workers in separate processes (default: threads of this process,
        which starts in well under a second).
    threads_per_worker : int
        Threads per worker, ``>= 1``; coded workers are single-threaded by
        default so that one straggling task occupies its worker.
    **cluster_kwargs
        Passed on to ``distributed.LocalCluster``. In-process workers get
        ``memory_limit`` = the machine's memory unless it is given: they share
        this process, whose memory Dask's per-worker monitor would otherwise
        compare with a per-worker share of the machine, pausing every worker
        as soon as the process holds a large operand.

    Attributes
    ----------
    client : distributed.Client
        The client to pass to ``coded_matmul(..., client=cluster.client)``.

    Examples
    --------
    >>> import numpy as np
    >>> from coded import LocalCodedCluster, coded_matmul
    >>> with LocalCodedCluster(n_workers=2) as cluster:
    ...     results = [coded_matmul(np.eye(2), np.full(2, float(c)),
    ...                             scheme="uncoded", client=cluster.client)
    ...                for c in (1, 2)]
    >>> [r.product.tolist() for r in results]
    [[1.0, 1.0], [2.0, 2.0]]
    """

    def __init__(
        self,
        n_workers: int = 8,
        *,
        processes: bool = False,
        threads_per_worker: int = 1,
        **cluster_kwargs: Any,
    ) -> None:
        self.n_workers = check_int(n_workers, "n_workers", min_value=1)
        self.threads_per_worker = check_int(
            threads_per_worker, "threads_per_worker", min_value=1
        )
        self.processes = bool(processes)
        if not processes:
            import psutil

            cluster_kwargs.setdefault("memory_limit", psutil.virtual_memory().total)
        self.cluster_kwargs = {"dashboard_address": ":0", **cluster_kwargs}
        self._cluster: LocalCluster | None = None
        self._client: Client | None = None

    @property
    def client(self) -> Client:
        """The running client (raises ``RuntimeError`` outside the ``with``)."""
        if self._client is None:
            raise RuntimeError("LocalCodedCluster is not running; use it in `with`.")
        return self._client

    def __enter__(self) -> LocalCodedCluster:
        self._cluster = LocalCluster(
            n_workers=self.n_workers,
            threads_per_worker=self.threads_per_worker,
            processes=self.processes,
            **self.cluster_kwargs,
        )
        self._client = Client(self._cluster)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the client and the cluster."""
        if self._client is not None:
            self._client.close()
        if self._cluster is not None:
            self._cluster.close()
        self._client = self._cluster = None


def check_client(client: object) -> Client:
    """Return `client` if it is a running ``distributed.Client``."""
    if not isinstance(client, Client):
        raise TypeError(
            f"`client` must be a distributed.Client, got {type(client).__name__}."
        )
    if client.status != "running":
        raise ValueError(
            f"`client` must be running, got a client with status={client.status!r}."
        )
    return client


@contextlib.contextmanager
def client_for_call(
    client: Client | None, address: str | None, n_workers: int
) -> Iterator[Client]:
    """Yield the client of one call: the given one, one for `address`, or embedded."""
    if client is not None and address is not None:
        raise ValueError("pass at most one of `client` and `address`, got both.")
    if client is not None:
        yield check_client(client)
    elif address is not None:
        if not isinstance(address, str):
            raise TypeError(f"`address` must be a str, got {type(address).__name__}.")
        with Client(address) as own:
            yield own
    else:
        with LocalCodedCluster(n_workers=n_workers) as cluster:
            yield cluster.client


def memory_limits(client: Client, addresses: list[str]) -> list[int | None]:
    """Each worker's Dask ``memory_limit`` in bytes (None or 0: unlimited)."""
    workers = client.scheduler_info(n_workers=-1)["workers"]
    return [workers.get(address, {}).get("memory_limit") for address in addresses]


def worker_addresses(client: Client, n: int | None) -> list[str]:
    """Return the addresses of the first `n` workers (all when `n` is None)."""
    return _first_workers(sorted(client.nthreads()), n)


async def worker_addresses_async(client: Client, n: int | None) -> list[str]:
    """:func:`worker_addresses` with an asynchronous client."""
    return _first_workers(sorted(await client.nthreads()), n)


def _first_workers(addresses: list[str], n: int | None) -> list[str]:
    if n is None:
        if not addresses:
            raise ValueError("the cluster has no workers.")
        return addresses
    if n > len(addresses):
        raise ValueError(
            f"`n` must be <= the number of workers of the cluster "
            f"({len(addresses)}), got n={n} (from `n`, the code or the "
            "allocation): add workers, or build the code or allocation for "
            f"{len(addresses)} workers (e.g. solve on "
            "`coded.profile_workers(client)`, which profiles every worker)."
        )
    return addresses[:n]
