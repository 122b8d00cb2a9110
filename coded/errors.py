"""Errors and warnings raised by coded (numpy-free leaf module)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

__all__ = [
    "DecodingError",
    "GradientError",
    "IllConditionedWarning",
    "InconsistentResultsError",
    "NonFiniteResultError",
    "NotEnoughResultsError",
    "ResourceError",
    "SchedulerLostError",
]


class DecodingError(ValueError):
    """Too few (or inconsistent) results to decode.

    The message says how many results are needed and how many arrived.
    """


class InconsistentResultsError(DecodingError):
    """Workers' results disagree: no decode explains them all (a wrong result).

    Raised instead of returning a product that some worker's wrong result would
    have corrupted (a faulty core, a bad library build, a compromised host).

    Parameters
    ----------
    message : str
        What disagreed.
    suspect_workers : sequence of int
        The workers whose results may be wrong: exactly the wrong ones when the
        spare results locate them, else every worker of the disagreeing set.
    """

    def __init__(self, message: str, *, suspect_workers: Iterable[int] = ()) -> None:
        super().__init__(message)
        self.suspect_workers = tuple(sorted(int(w) for w in suspect_workers))


class NotEnoughResultsError(DecodingError):
    """A distributed run ended (failures or timeout) before the code could decode.

    Raised by the runtime as soon as it is certain that no decodable set of results
    can still arrive, and at the latest at the timeout. The message says how many
    results arrived and how many were needed, which workers were lost and why, and
    how many lost workers the code tolerates.

    Parameters
    ----------
    message : str
        What happened.
    lost_workers : mapping of int to str, optional
        Code worker -> why it was lost (its Dask worker left the cluster, its
        placed share was lost, its task raised, ...).
    tolerance : int, optional
        Lost code workers (shares) the code survives whichever they are
        (``n - k`` for an (n, k) MDS code); a Dask worker holding several
        shares loses them all.
    """

    def __init__(
        self,
        message: str,
        *,
        lost_workers: Mapping[int, str] | None = None,
        tolerance: int | None = None,
    ) -> None:
        super().__init__(message)
        self.lost_workers = MappingProxyType(dict(lost_workers or {}))
        self.tolerance = tolerance


class SchedulerLostError(ConnectionError):
    """The Dask scheduler became unreachable during a call: no result can arrive.

    Raised instead of waiting; the client cannot be used again until it
    reconnects.
    """


class ResourceError(MemoryError):
    """A call would not fit in memory (client RAM or a worker's memory limit).

    Raised before encoding or placing anything; the message gives the estimate
    and the limit it exceeds.
    """


class NonFiniteResultError(DecodingError):
    """A worker returned NaN or inf: decoding it would give a wrong product.

    Attributes
    ----------
    worker : int
        The worker whose result is not finite.
    """

    def __init__(self, message: str, *, worker: int):
        super().__init__(message)
        self.worker = worker


class IllConditionedWarning(RuntimeWarning):
    """A real-valued decode whose condition number makes the answer untrustworthy.

    Attributes
    ----------
    condition_number : float
        The 2-norm condition number of the system solved (NaN if not given).
    """

    def __init__(self, message: str = "", condition_number: float = float("nan")):
        super().__init__(message)
        self.condition_number = condition_number


class GradientError(ValueError):
    """A user's ``grad`` raised, or returned a wrong shape or non-finite values.

    The message names the worker and the data partition.
    """
