"""The Dask runtime: the only package of coded that imports ``dask.distributed``.

It places coded operands on their workers, submits pinned tasks, streams pieces back
to an incremental decoder, cancels what is no longer needed, and records the run.
It also profiles workers (``profile_workers``). Coded MapReduce runs on Dask
through ``mapreduce._runtime``, which uses this package's client helpers; nothing
here imports ``mapreduce``. What coded's entry points and mapreduce need beyond
these names is in :mod:`coded.runtime.interface`.
"""

from __future__ import annotations

from coded.runtime._cluster import (
    LocalCodedCluster,
    check_client,
    client_for_call,
    memory_limits,
    worker_addresses,
)
from coded.runtime._executor import BackupPolicy, Execution, execute
from coded.runtime._profile import profile_workers

__all__ = [
    "BackupPolicy",
    "Execution",
    "LocalCodedCluster",
    "check_client",
    "client_for_call",
    "execute",
    "memory_limits",
    "profile_workers",
    "worker_addresses",
]
