"""Clients: an embedded cluster for many calls, and the client of one call."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import dask.config
from distributed import Client, LocalCluster, Security
from distributed.scheduler import DEFAULT_EXTENSIONS as SCHEDULER_EXTENSIONS
from distributed.worker import DEFAULT_EXTENSIONS as WORKER_EXTENSIONS

from theory.validation import check_int

__all__ = [
    "LONG_RUN_CONFIG",
    "LocalCodedCluster",
    "check_client",
    "client_for_call",
    "memory_limits",
    "worker_addresses",
    "worker_addresses_async",
]


LONG_RUN_CONFIG: dict[str, int] = {
    "distributed.admin.low-level-log-length": 100,
    "distributed.diagnostics.computations.max-history": 10,
}
"""Dask settings that keep a long-lived embedded cluster's memory flat.

Every Dask server keeps its last ``low-level-log-length`` messages and events
(default 1000: the batched comms' recent messages, the scheduler's transition
log and event topics, the worker's state-machine logs) and the scheduler its
last ``computations.max-history`` computations (default 100). Full at their
defaults, these hold tens of MiB; a coded call sends a handful of messages, so
at 100 they are full within a few dozen calls and stay that size.
"""


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
    spans : bool
        Keep Dask's spans extension (default off). The scheduler opens a span
        for every call that finds the cluster idle and never forgets it
        (dask/distributed#7977), and every worker keeps fine metrics per span:
        memory that grows with every call. Without spans Dask keeps the same
        metrics per task prefix; only the dashboard's per-span breakdown is lost.
    security : bool or distributed.Security, optional
        Encrypt and authenticate every connection with TLS (``tls://``
        addresses). ``True``: a self-signed certificate made in memory for this
        cluster alone (``distributed.Security.temporary``; needs the ``tls``
        extra, ``pip install "coded-computing[tls]"``). A ``Security`` of your
        own (your CA's certificates) is used as given; the client always gets
        the cluster's. Default: plain TCP.
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
    security : distributed.Security or None
        The TLS settings in force (None: plain TCP).

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
        spans: bool = False,
        security: bool | Security | None = None,
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
        if not spans:
            _drop_spans(cluster_kwargs)
        self.security = _security(security)
        if self.security is not None:
            cluster_kwargs["security"] = self.security
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
        # the scheduler, the client and each worker (through its nanny) read
        # these settings when they start
        with dask.config.set(LONG_RUN_CONFIG):
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


def _security(security: object) -> Security | None:
    """Return the TLS settings `security` asks for (True: a temporary certificate)."""
    if security is None or security is False:
        return None
    if isinstance(security, Security):
        return security
    if security is not True:
        raise TypeError(
            "`security` must be a bool or a distributed.Security, got "
            f"{type(security).__name__}."
        )
    try:
        return Security.temporary()
    except ImportError as error:
        raise ImportError(
            "LocalCodedCluster(security=True) makes a temporary TLS certificate "
            'with `cryptography`: pip install "coded-computing[tls]".'
        ) from error


def _drop_spans(cluster_kwargs: dict[str, Any]) -> None:
    """Start the scheduler and the workers without the spans extension.

    Both or neither: a worker with it reports span metrics in its heartbeats,
    which a scheduler without it cannot take. Extensions given explicitly win.
    """
    scheduler_kwargs = dict(cluster_kwargs.get("scheduler_kwargs") or {})
    if "extensions" not in scheduler_kwargs:
        extensions = dict(SCHEDULER_EXTENSIONS)
        del extensions["spans"]
        if not dask.config.get("distributed.scheduler.work-stealing"):
            extensions.pop("stealing", None)
        scheduler_kwargs["extensions"] = extensions
    cluster_kwargs["scheduler_kwargs"] = scheduler_kwargs
    cluster_kwargs.setdefault(
        "extensions", {k: v for k, v in WORKER_EXTENSIONS.items() if k != "spans"}
    )


def check_client(client: object) -> Client:
    """Return `client` if it is a running ``distributed.Client``.

    Parameters
    ----------
    client : object
        What the caller passed as its client.

    Returns
    -------
    distributed.Client

    Raises
    ------
    TypeError
        If `client` is not a ``distributed.Client``.
    ValueError
        If it is closed (or not yet running).
    """
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
    """Yield the client of one call: the given one, one for `address`, or embedded.

    Parameters
    ----------
    client : distributed.Client or None
        A running client, used as it is (not closed).
    address : str or None
        A scheduler's address: a client is opened for the call and closed.
    n_workers : int
        Workers of the embedded cluster started (and closed) when neither is
        given.

    Yields
    ------
    distributed.Client
    """
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
    """Each worker's Dask ``memory_limit`` in bytes (None or 0: unlimited or unknown).

    An asynchronous client cannot be blocked on: its limits are unknown (None).

    Parameters
    ----------
    client : distributed.Client
        A running client.
    addresses : list of str
        The workers asked about.

    Returns
    -------
    list of int or None
    """
    if client.asynchronous:  # cannot block here: the limits stay unknown
        return [None] * len(addresses)
    # asked directly: Client.scheduler_info returns a cache that the client's
    # periodic refresh (without per-worker details) may overwrite in between
    workers = client.sync(client.scheduler.identity, n_workers=-1)["workers"]
    return [workers.get(address, {}).get("memory_limit") for address in addresses]


def worker_addresses(client: Client, n: int | None) -> list[str]:
    """Return the addresses of the first `n` workers (all when `n` is None).

    Parameters
    ----------
    client : distributed.Client
        A running client.
    n : int or None
        How many, in sorted address order; more than the cluster has raises.

    Returns
    -------
    list of str
    """
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
