"""One signature for a blocking entry point and its ``await``-able twin."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

__all__ = ["same_parameters"]

P = ParamSpec("P")
R = TypeVar("R")


def same_parameters(
    blocking: Callable[P, R],
) -> Callable[
    [Callable[..., Coroutine[Any, Any, R]]], Callable[P, Coroutine[Any, Any, R]]
]:
    """Give an ``async`` twin the parameters of `blocking`, declared once there.

    Type checkers check a call of the twin against `blocking`'s parameters, and
    ``inspect.signature`` (so the API reference) shows them; the twin takes
    ``**keywords`` and binds them with ``inspect.signature(blocking).bind``.

    Parameters
    ----------
    blocking : callable
        The entry point whose parameters the twin takes.

    Returns
    -------
    callable
        The decorator.

    Examples
    --------
    >>> def add(a: int, *, b: int = 1) -> int:
    ...     return a + b
    >>> @same_parameters(add)
    ... async def add_async(*args, **keywords):
    ...     return add(*args, **keywords)
    >>> list(inspect.signature(add_async).parameters)
    ['a', 'b']
    """

    def decorate(
        twin: Callable[..., Coroutine[Any, Any, R]],
    ) -> Callable[P, Coroutine[Any, Any, R]]:
        twin.__signature__ = inspect.signature(blocking)  # type: ignore[attr-defined]
        return twin

    return decorate
