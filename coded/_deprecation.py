"""Old spellings of public arguments, accepted for one release with a warning."""

from __future__ import annotations

from typing import Any

from theory.validation import warn_renamed

__all__ = ["data_first", "renamed_keyword"]


def renamed_keyword(
    fields: dict[str, Any], old: str, new: str, value: Any, *, default: Any, caller: str
) -> Any:
    """Return `value`, or the deprecated keyword `old` popped from `fields`.

    Parameters
    ----------
    fields : dict
        The caller's ``**keywords``; `old` is removed from it.
    old, new : str
        The deprecated keyword and the one that replaced it.
    value, default : object
        The caller's `new` argument and its default.
    caller : str
        The public function's name, for the messages.

    Raises
    ------
    TypeError
        Both `old` and `new` were given.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     renamed_keyword({"w0": 1}, "w0", "x0", None, default=None, caller="f")
    1
    >>> str(caught[0].message)
    'f(): `w0` is deprecated and will be removed in the next release; use `x0`.'
    """
    if old not in fields:
        return value
    given = value is not None if default is None else value != default
    if given:
        raise TypeError(f"{caller}() got both `{new}` and its old spelling `{old}`.")
    warn_renamed(f"`{old}`", f"`{new}`", caller, stacklevel=4)
    return fields.pop(old)


def data_first(
    data: Any, function: Any, *, old: str, new: str, caller: str
) -> tuple[Any, Any]:
    """Return ``(data, function)``, swapping the deprecated function-first order.

    A callable `data` with a non-callable `function` is the old order `old`
    (data sets are arrays or sequences, never callables): warn, then swap.

    Examples
    --------
    >>> data_first([1, 2], len, old="(f, xs)", new="(xs, f)", caller="g")
    ([1, 2], <built-in function len>)
    """
    if callable(data) and not callable(function):
        warn_renamed(f"the order {old}", new, caller, stacklevel=4)
        return function, data
    return data, function
