"""The decoders' small dense solves, on one BLAS thread.

OpenBLAS splits a triangular solve's right-hand sides over its threads. The
decoders solve k x k systems (k up to a few hundred), where threads gain little;
on a machine whose cores are busy (the worker processes of a local cluster, 2
cores) waking them cost 10-16x the decode itself: an (8, 6) MDS decode of 7200
rows took 0.75 ms on one thread, 10-12 ms in about half the runs on OpenBLAS's
default two. ``threadpoolctl`` is the maintained way to set a native thread
pool's size at run time (for whichever BLAS numpy and scipy loaded).
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["apply_decoding", "one_blas_thread"]

_lock = threading.RLock()  # one limited region at a time in the process
_local = threading.local()  # whether this thread is inside one


@functools.cache
def _controller() -> Any:
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the body with BLAS on one thread; the original comes back after it.

    Regions run one at a time (a process has one BLAS thread pool, and
    threadpoolctl lets one thread at a time change it); a region nested in
    another of the same thread runs inside the outer one's limit.
    """
    with _lock:
        if getattr(_local, "inside", False):
            yield
            return
        _local.inside = True
        try:
            with _controller().limit(limits=1, user_api="blas"):
                yield
        finally:
            _local.inside = False


def apply_decoding(T: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Return ``T @ rhs`` (a decode's inverse applied to received rows).

    Overflow is not warned of here: the decoders check that the product is
    finite (`coded.codes._fields.lift` raises a named error when it is not).
    """
    with np.errstate(over="ignore", invalid="ignore"):
        return T @ rhs
