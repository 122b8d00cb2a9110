"""Errors raised by mapreduce."""

from __future__ import annotations

__all__ = ["MapReduceTaskError", "PlanVerificationError"]


class PlanVerificationError(ValueError):
    """A shuffle plan that does not deliver every missing value exactly once.

    The message names the packet or the (receiver, file) demand at fault.
    """


class MapReduceTaskError(RuntimeError):
    """A map or reduce task failed on a Dask worker.

    The original exception is chained as ``__cause__``; the message names the stage,
    the node and (for map tasks) the file.
    """
