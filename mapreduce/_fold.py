"""Reduce functions that fold their values, and the grouping of pairs by key.

Pure (no Dask). A reduce that folds its values with an associative and
commutative operation (a sum, a max, a set union) gives the same output when it
is applied map-side first (a combiner, Lin and Dyer's local aggregation), and it
needs no list of values per key: each pair is folded into its key's running
value as it comes. :func:`fold_with` marks such a reduce; :func:`reduce_pairs`
applies any reduce, the map task's combiner and the reducer alike.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable
from typing import Any, TypeVar

__all__ = ["fold_of", "fold_with", "reduce_pairs"]

_FOLD = "__mapreduce_fold__"  # the attribute fold_with sets on a reduce
_MISSING = object()

FoldOp = Callable[[Any, Any], Any]
Reduce = TypeVar("Reduce", bound=Callable[..., Any])


def fold_with(op: FoldOp) -> Callable[[Reduce], Reduce]:
    """Mark a reduce function as the fold of its values with `op`.

    Declares ``reduce_fn(key, values) == functools.reduce(op, values)`` for
    every key and non-empty `values`, with `op` associative and commutative. A
    job whose reduce is so marked combines map-side by default
    (``run_mapreduce(combine=None)``), and both sides fold each ``(key,
    value)`` pair into its key's running value as it comes, instead of listing
    the values of every key and calling the reduce on each list: the marked
    function's body is then never called, `op` does its work (with
    ``combine=False`` too).

    Parameters
    ----------
    op : callable
        ``op(a, b)``: a binary operation, associative and commutative
        (``operator.add``, ``max``, ``operator.or_`` of sets).

    Returns
    -------
    callable
        A decorator that marks its reduce function and returns it unchanged.

    Raises
    ------
    TypeError
        If `op` or the reduce function is not callable, or the reduce function
        takes no attributes (a builtin: wrap it in a ``def``).

    References
    ----------
    .. [1] J. Lin, C. Dyer, "Data-Intensive Text Processing with MapReduce",
       Morgan & Claypool, 2010, Sec. 3.1 (local aggregation).

    Examples
    --------
    >>> from mapreduce import fold_with, run_mapreduce
    >>> @fold_with(max)
    ... def longest(key, values):
    ...     return max(values)
    >>> def lengths(text):
    ...     return [(word[0], len(word)) for word in text.split()]
    >>> run_mapreduce(["ab abc", "b bcd"], lengths, longest, K=2).output
    {'a': 3, 'b': 3}
    """
    if not callable(op):
        raise TypeError(
            "`op` must be callable: a binary operation such as operator.add, max "
            f"or operator.or_, got {type(op).__name__}."
        )

    def mark(reduce_fn: Reduce) -> Reduce:
        if not callable(reduce_fn):
            raise TypeError(
                "fold_with marks a reduce function, reduce_fn(key, values); got "
                f"{type(reduce_fn).__name__}."
            )
        try:
            setattr(reduce_fn, _FOLD, op)
        except AttributeError:
            raise TypeError(
                f"fold_with cannot mark {reduce_fn!r}: it takes no attributes; "
                "wrap it in a def."
            ) from None
        return reduce_fn

    return mark


def fold_of(reduce_fn: Callable[..., Any]) -> FoldOp | None:
    """Return the operation `reduce_fn` was marked with by :func:`fold_with`, or None.

    Parameters
    ----------
    reduce_fn : callable
        A reduce function, ``reduce_fn(key, values)``.

    Returns
    -------
    callable or None
        Its fold's binary operation; None for a reduce not so marked.

    Examples
    --------
    >>> import operator
    >>> from mapreduce import sum_counts
    >>> fold_of(sum_counts) is operator.add, fold_of(print)
    (True, None)
    """
    return getattr(reduce_fn, _FOLD, None)


def reduce_pairs(
    runs: Iterable[Iterable[tuple[Hashable, Any]]], reduce_fn: Callable[..., Any]
) -> dict[Hashable, Any]:
    """Reduce runs of ``(key, value)`` pairs by key: key -> ``reduce_fn(key, values)``.

    A reduce marked by :func:`fold_with` folds each pair as it comes; any
    other is called once per key on its values, in the pairs' order. The
    keys come out in the order they first appear.

    Examples
    --------
    >>> from mapreduce import sum_counts
    >>> reduce_pairs([[("a", 1), ("b", 2)], [("a", 3)]], sum_counts)
    {'a': 4, 'b': 2}
    >>> reduce_pairs([[("a", 1), ("b", 2)], [("a", 3)]], lambda key, vs: vs)
    {'a': [1, 3], 'b': [2]}
    """
    op = fold_of(reduce_fn)
    if op is not None:
        folded: dict[Hashable, Any] = {}
        get = folded.get
        for run in runs:
            for key, value in run:
                old = get(key, _MISSING)
                folded[key] = value if old is _MISSING else op(old, value)
        return folded
    groups: dict[Hashable, list[Any]] = defaultdict(list)
    for run in runs:
        for key, value in run:
            groups[key].append(value)
    return {key: reduce_fn(key, values) for key, values in groups.items()}
