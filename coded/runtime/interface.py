"""What coded's entry points and mapreduce use from the runtime.

Public within the project, beside the user-facing names of :mod:`coded.runtime`:
placing and releasing data on workers (NumPy and dask.array operands, gradient
shares, repaired shares), submitting a coded product, call ids and the worker-side
cancel signal that MapReduce tasks share with coded ones. Modules outside
:mod:`coded.runtime` import these names from here, never from its private modules.
"""

from __future__ import annotations

from coded.runtime._call import CallSpec
from coded.runtime._cluster import worker_addresses_async
from coded.runtime._dask_array import (
    check_dask_matrix,
    place_dask_lt,
    place_dask_rows,
    project_shares,
)
from coded.runtime._dask_helpers import drop, new_call_id, scatter_to_workers
from coded.runtime._executor import submit_call_async, submit_execution_async
from coded.runtime._gradient import place_shares, release_shares, run_gradient_step
from coded.runtime._remote import (
    ProductLayout,
    encode_right_remote,
    evaluate_remote_async,
)
from coded.runtime._repair import repair_shares
from coded.runtime._resident import serve_placements, served_calls
from coded.runtime._worker import cancel_signal, wake_waits

__all__ = [
    "CallSpec",
    "ProductLayout",
    "cancel_signal",
    "check_dask_matrix",
    "drop",
    "encode_right_remote",
    "evaluate_remote_async",
    "new_call_id",
    "place_dask_lt",
    "place_dask_rows",
    "place_shares",
    "project_shares",
    "release_shares",
    "repair_shares",
    "run_gradient_step",
    "scatter_to_workers",
    "serve_placements",
    "served_calls",
    "submit_call_async",
    "submit_execution_async",
    "wake_waits",
    "worker_addresses_async",
]
