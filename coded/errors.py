"""Errors and warnings raised by coded (numpy-free leaf module)."""

from __future__ import annotations

__all__ = [
    "DecodingError",
    "GradientError",
    "IllConditionedWarning",
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


class IllConditionedWarning(RuntimeWarning):
    """A real-valued decode whose condition number makes the answer untrustworthy."""


class GradientError(ValueError):
    """A user's ``grad`` raised, or returned a wrong shape or non-finite values.

    The message names the worker and the data partition.
    """
