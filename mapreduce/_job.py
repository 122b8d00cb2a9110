r"""The job API: ``run_mapreduce`` and its frozen result.

The pure part (placement, plan, verification, partitioning) lives here; the Dask
execution is ``mapreduce._runtime``, imported inside the call (so that
``import mapreduce`` does not load Dask).
"""

from __future__ import annotations

import pickle
import zlib
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from mapreduce._placement import Placement, place_li
from mapreduce._plan import plan_shuffle, verify_plan
from mapreduce._records import MapReduceResult
from theory._validation import check_int, check_real

if TYPE_CHECKING:
    from distributed import Client

__all__ = ["hash_partition", "run_mapreduce"]

MapFn = Callable[[Any], Iterable[tuple[Hashable, Any]]]
ReduceFn = Callable[[Hashable, list[Any]], Any]
PartitionFn = Callable[[Hashable, int], int]


def hash_partition(key: Hashable, K: int) -> int:
    """Reducer node of `key`: a process-independent hash of its pickle, mod `K`.

    Parameters
    ----------
    key : hashable
        Intermediate key.
    K : int
        Number of reducer nodes.

    Returns
    -------
    int
        ``crc32(pickle(key)) % K`` (Python's ``hash`` of ``str`` differs between
        processes, so it cannot place keys across Dask workers).

    Examples
    --------
    >>> hash_partition("coded", 4) == hash_partition("coded", 4)
    True
    """
    return zlib.crc32(pickle.dumps(key, protocol=4)) % K


def _resolve_placement(
    n_files: int, K: object, r: object, placement: object
) -> Placement:
    K = check_int(K, "K", min_value=1)
    if placement is not None:
        if r is not None:
            raise ValueError("pass at most one of `r` and `placement`, got both.")
        if not isinstance(placement, Placement):
            raise TypeError(
                f"`placement` must be a Placement, got {type(placement).__name__}."
            )
        if placement.K != K or n_files != placement.N:
            raise ValueError(
                f"`placement` must have K={K} nodes and N={n_files} files (one per "
                f"input file), got K={placement.K}, N={placement.N}."
            )
        return placement
    return place_li(K, 1 if r is None else r, N=n_files)


def run_mapreduce(
    files: Sequence[Any],
    map_fn: MapFn,
    reduce_fn: ReduceFn,
    *,
    K: int,
    r: int | None = None,
    placement: Placement | None = None,
    coded: bool = True,
    partition: PartitionFn = hash_partition,
    client: Client | None = None,
    timeout: float = 600.0,
) -> MapReduceResult:
    r"""Run a MapReduce job on Dask with a (coded) shuffle.

    Parameters
    ----------
    files : sequence
        The ``N`` input files (any picklable objects).
    map_fn : callable
        ``map_fn(file)`` returns an iterable of ``(key, value)`` pairs.
    reduce_fn : callable
        ``reduce_fn(key, values)`` returns the output for `key`; `values` lists
        every mapped value of `key`, in file order.
    K : int
        Number of nodes (Dask workers used), ``K >= 1``.
    r : int, optional
        Computation load of Li's placement, ``1 <= r <= K`` (default 1, i.e.
        uncoded). Exclusive with `placement`.
    placement : Placement, optional
        Any placement with ``K`` nodes and ``len(files)`` files.
    coded : bool
        Coded multicasts (default) or plain unicasts of whole values.
    partition : callable
        ``partition(key, K)`` gives the reducer node of a key (default
        :func:`hash_partition`; a range partition makes the output sorted).
    client : distributed.Client, optional
        A client with at least ``K`` workers; without one, an embedded
        ``LocalCluster`` of ``K`` single-threaded workers is started and closed.
    timeout : float
        Seconds each stage (map, shuffle, reduce) may take, ``> 0``; a stage
        still running then (a lost worker, a hung function) raises
        :class:`MapReduceTaskError` instead of waiting forever.

    Returns
    -------
    MapReduceResult
        The output (equal to an uncoded run) and the record.

    Raises
    ------
    ValueError
        For bad `K`, `r` (``r < 1`` or ``r > K``), an empty `files`, a placement
        that does not fit, or a client with fewer than `K` workers.
    TypeError
        If a function argument is not callable, `placement` is not a
        :class:`Placement`, or `client` is not a ``distributed.Client``.
    MapReduceTaskError
        If `map_fn` or `reduce_fn` raises on a worker, or a stage exceeds
        `timeout`.

    Notes
    -----
    Node ``k`` maps every file it stores, producing one value (a byte string) per
    reducer node; the senders XOR segments of these values into packets
    (:func:`plan_shuffle`), each receiver cancels the segments it mapped itself,
    and reduces. The plan is checked by :func:`verify_plan` before anything runs.

    References
    ----------
    .. [1] S. Li, M. A. Maddah-Ali, Q. Yu, A. S. Avestimehr, "A Fundamental
       Tradeoff Between Computation and Communication in Distributed Computing",
       IEEE Trans. Inf. Theory 64(1), 2018.
    .. [2] S. Li, S. Supittayapornpong, M. A. Maddah-Ali, A. S. Avestimehr,
       "Coded TeraSort", IEEE IPDPSW, 2017.

    Examples
    --------
    >>> from mapreduce import count_words, sum_counts
    >>> files = ["a b a", "b c", "a c c"]
    >>> result = run_mapreduce(files, count_words, sum_counts, K=3, r=2)
    >>> result.output == {"a": 3, "b": 2, "c": 3}, result.record.load
    (True, Fraction(1, 6))
    """
    files = list(files)
    if not files:
        raise ValueError("`files` must hold at least one file, got 0.")
    for name, fn in (
        ("map_fn", map_fn),
        ("reduce_fn", reduce_fn),
        ("partition", partition),
    ):
        if not callable(fn):
            raise TypeError(f"`{name}` must be callable, got {type(fn).__name__}.")
    timeout = check_real(timeout, "timeout", min_value=0.0, strict_min=True)
    placement = _resolve_placement(len(files), K, r, placement)
    plan = verify_plan(plan_shuffle(placement, coded=coded))
    from mapreduce._runtime import execute_mapreduce

    return execute_mapreduce(
        files,
        map_fn,
        reduce_fn,
        plan=plan,
        partition=partition,
        client=client,
        timeout=timeout,
    )
