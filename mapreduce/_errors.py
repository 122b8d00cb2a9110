"""Errors raised by mapreduce."""

from __future__ import annotations

__all__ = [
    "MapReduceTaskError",
    "NotEnoughMappersError",
    "PlanVerificationError",
    "ValidationError",
]


class PlanVerificationError(ValueError):
    """A shuffle plan that does not deliver every missing value exactly once.

    The message names the packet or the (receiver, file) demand at fault.
    """


class MapReduceTaskError(RuntimeError):
    """A map or reduce task failed on a Dask worker.

    The original exception is chained as ``__cause__``; the message names the stage,
    the node and (for map tasks) the file.
    """


class NotEnoughMappersError(MapReduceTaskError):
    """More mappers were lost than the placement tolerates.

    Raised as soon as some file has lost every node that stores it (so no
    output can be complete), naming the file and the lost nodes.
    """


class ValidationError(ValueError):
    """Sorted output that TeraValidate rejects.

    The message starts with the check that failed (``order``, ``partition
    boundary``, ``record count``, ``checksum``) and names the partition.
    """
