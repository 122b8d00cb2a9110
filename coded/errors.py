"""Errors and warnings raised by coded (numpy-free leaf module)."""

from __future__ import annotations

__all__ = [
    "DecodingError",
    "GradientError",
    "IllConditionedWarning",
    "NonFiniteResultError",
    "NotEnoughResultsError",
]


class DecodingError(ValueError):
    """Too few (or inconsistent) results to decode.

    The message says how many results are needed and how many arrived.
    """


class NotEnoughResultsError(DecodingError):
    """A distributed run ended (failures or timeout) before the code could decode.

    Raised by the runtime as soon as it is certain that no decodable set of results
    can still arrive, and at the latest at the timeout. The message says how many
    results arrived and how many were needed.
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
