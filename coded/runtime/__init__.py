"""The Dask runtime: the only package of coded that imports ``dask.distributed``.

It places coded operands on their workers, submits pinned tasks, streams pieces back
to an incremental decoder, cancels what is no longer needed, and records the run:
every run is a :class:`MatmulHandle` in flight whose ``result()`` is the one record
of a run, :class:`coded.MatmulResult` (coded products, gradient steps, Lagrange
maps alike).
It also profiles workers (``profile_workers``) and runs a cluster of processes at
their own addresses whose links the kernel shapes (``ShapedCluster``, in a private
network namespace: ``run_in_namespace``). Coded MapReduce runs on Dask
through ``mapreduce._runtime``, which uses this package's client helpers; nothing
here imports ``mapreduce``. What coded's entry points and mapreduce need beyond
these names is in :mod:`coded.runtime.interface`.
"""

from __future__ import annotations

import warnings
from typing import Any

from coded.runtime._cluster import (
    LocalCodedCluster,
    check_client,
    client_for_call,
    memory_limits,
    worker_addresses,
)
from coded.runtime._executor import BackupPolicy, MatmulHandle, execute
from coded.runtime._profile import profile_workers
from coded.runtime._shaped import (
    NAMESPACE_COMMAND,
    LinkRateError,
    ShapedCluster,
    check_links,
    run_in_namespace,
    shaped_links_unavailable,
)

__all__ = [
    "NAMESPACE_COMMAND",
    "BackupPolicy",
    "LinkRateError",
    "LocalCodedCluster",
    "MatmulHandle",
    "ShapedCluster",
    "check_client",
    "check_links",
    "client_for_call",
    "execute",
    "memory_limits",
    "profile_workers",
    "run_in_namespace",
    "shaped_links_unavailable",
    "worker_addresses",
]


def __getattr__(name: str) -> Any:
    if name == "Execution":  # every run returns the one record
        warnings.warn(
            "coded.runtime.Execution is deprecated and will be removed in the next "
            "release; use coded.MatmulResult (what every run returns).",
            DeprecationWarning,
            stacklevel=2,
        )
        from coded import MatmulResult

        return MatmulResult
    raise AttributeError(f"module 'coded.runtime' has no attribute {name!r}")
