r"""The job API: ``run_mapreduce`` and its frozen result.

The pure part (placement, plan, verification, partitioning) lives here; the Dask
execution is ``mapreduce._runtime``, imported inside the call (so that
``import mapreduce`` does not load Dask).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from mapreduce._fold import fold_of
from mapreduce._groups import group_inputs, map_file, map_inputs
from mapreduce._network import Delivery, model_prefers_coded
from mapreduce._options import MapReduceOptions, check_flag, mapreduce_options
from mapreduce._partition import PartitionFn, hash_partition
from mapreduce._placement import Placement, place_li
from mapreduce._plan import plan_shuffle, verify_plan
from mapreduce._records import MapReduceResult
from theory.validation import check_int

if TYPE_CHECKING:
    from distributed import Client

__all__ = [
    "concatenate_values",
    "hash_partition",
    "run_coded_maps",
    "run_mapreduce",
    "split_input",
]

MapFn = Callable[[Any], Iterable[tuple[Hashable, Any]]]
ReduceFn = Callable[[Hashable, list[Any]], Any]


def split_input(items: Sequence[Any], N: int) -> list[list[Any]]:
    """Cut `items` into `N` contiguous files whose sizes differ by at most one.

    Parameters
    ----------
    items : sequence
        Records, in order.
    N : int
        Number of files, ``N >= 1``.

    Returns
    -------
    list of list
        ``numpy.array_split`` sizes (the first ``len(items) % N`` files are one
        longer); joined in order they give `items` back.

    Examples
    --------
    >>> split_input(list("abcde"), 3)
    [['a', 'b'], ['c', 'd'], ['e']]
    """
    N = check_int(N, "N", min_value=1)
    items = list(items)
    base, extra = divmod(len(items), N)
    bounds = [f * base + min(f, extra) for f in range(N + 1)]
    return [items[bounds[f] : bounds[f + 1]] for f in range(N)]


def _is_collection(data: object) -> bool:
    """Tell a Dask bag or dataframe by duck typing (this module cannot import dask)."""
    return hasattr(data, "to_delayed") and hasattr(data, "npartitions")


def _resolve_placement(
    files: Any, K: object, r: object, placement: object, split: bool
) -> Placement:
    K = check_int(K, "K", min_value=1)
    if placement is not None:
        if r is not None:
            raise ValueError("pass at most one of `r` and `placement`, got both.")
        if not isinstance(placement, Placement):
            raise TypeError(
                f"`placement` must be a Placement, got {type(placement).__name__}."
            )
        count = placement.N if split or _is_collection(files) else len(files)
        if placement.K != K or count != placement.N:
            raise ValueError(
                f"`placement` must have K={K} nodes and N={count} files (one per "
                f"input file), got K={placement.K}, N={placement.N}."
            )
        return placement
    r = 1 if r is None else check_int(r, "r", min_value=1)
    if r > K:
        raise ValueError(f"`r` must satisfy 1 <= r <= K, got r={r}, K={K}.")
    batches = math.comb(K, r)
    if _is_collection(files):
        N = batches * max(1, round(files.npartitions / batches))
    else:
        N = batches if split else len(files)
    return place_li(K, r, N=N)


def run_mapreduce(
    files: Any,
    map_fn: MapFn,
    reduce_fn: ReduceFn,
    *,
    K: int,
    r: int | None = None,
    placement: Placement | None = None,
    coded: bool | None = None,
    combine: bool | None = None,
    partition: PartitionFn = hash_partition,
    split: bool = False,
    client: Client | None = None,
    options: MapReduceOptions | None = None,
    **deprecated: Any,
) -> MapReduceResult:
    r"""Run a MapReduce job on Dask with a (coded) shuffle.

    Parameters
    ----------
    files : sequence, dask.bag.Bag or dask.dataframe.DataFrame
        The input files (any picklable objects). Many small ones are grouped
        into files of about the options' `group_bytes` (16 MiB by default;
        ``record.inputs_per_file``), each mapped by calling `map_fn` on its
        inputs one by one. A Dask collection's partitions are the files (a list
        of elements, a pandas DataFrame), repartitioned to what the placement
        needs.
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
        Any placement with ``K`` nodes and one file per input file (the inputs
        are then not grouped).
    coded : bool, optional
        Coded multicasts or plain unicasts of whole values. Default: whichever
        the switched-network model (:func:`mapreduce.model_prefers_coded`)
        predicts faster for the options' `delivery`, uncoded on a tie. Dask has
        no multicast, so the coded shuffle's gain in the papers' load does not
        show in Dask's wire bytes (docs/theory/network.md).
    combine : bool, optional
        Apply `reduce_fn` map-side to each file's values of a key, then again to
        the partial results. Declare it only for a `reduce_fn` that is
        associative and commutative and returns a value of the kind it takes
        (sums, counts, max); with any other it silently changes the output.
        Default: combine when `reduce_fn` is marked by :func:`fold_with` (as
        :func:`sum_counts` is), which also makes both sides fold the pairs as
        they come.
    partition : callable
        ``partition(key, K)`` gives the reducer node of a key, an int in
        ``range(K)`` (default :func:`hash_partition`; a range partition makes the
        output sorted).
    split : bool
        Treat a sequence `files` as records and cut them into the placement's
        ``N`` files (:func:`split_input`; ``N = C(K, r)`` for Li's placement).
    client : distributed.Client, optional
        A client with at least ``K`` workers; without one, an embedded
        ``LocalCluster`` of ``K`` single-threaded workers is started and closed.
    options : MapReduceOptions, optional
        How the job runs: `delivery`, `output`, `timeout`, `straggler_slack`,
        `progress`, `emulated_bandwidth`, `group_bytes` and `speculate`
        (:class:`MapReduceOptions`; default: its defaults).
    **deprecated
        The fields of :class:`MapReduceOptions` as keywords, the old spelling:
        accepted for one release with a :class:`DeprecationWarning`.

    Returns
    -------
    MapReduceResult
        The output (equal to an uncoded run) and the record.

    Raises
    ------
    ValueError
        For bad `K`, `r` (``r < 1`` or ``r > K``), an empty `files`, a placement
        that does not fit, bad options (:class:`MapReduceOptions`), or a client
        with fewer than `K` workers.
    TypeError
        If a function argument is not callable, `combine` or `coded` is not a
        bool or None, `placement` is not a :class:`Placement`, `options` is not a
        :class:`MapReduceOptions`, a keyword is unknown, or `client` is not a
        ``distributed.Client``.
    MapReduceTaskError
        If `map_fn`, `partition` or `reduce_fn` raises on a worker (chained),
        `partition` returns a node outside ``range(K)``, a stage exceeds the
        options' `timeout`, or a node is lost after the map stage.
    NotEnoughMappersError
        As soon as some file has lost every node that stores it (more lost
        mappers than ``placement.tolerance``).

    Notes
    -----
    Node ``k`` maps every file it stores, producing one value (a byte string) per
    reducer node. The map output of a file comes from whichever of its holders
    finish; up to ``placement.tolerance`` slow or lost nodes are cut (recorded in
    ``record.stragglers`` and ``record.lost_nodes``), and a lost node's reduce
    runs on another node. The senders XOR segments of these values into packets
    (:func:`plan_shuffle`), each receiver cancels the segments it mapped itself,
    and reduces. Every plan is checked by :func:`verify_plan` before it runs.

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
    >>> result = run_mapreduce(files, count_words, sum_counts, K=3, r=2, coded=True)
    >>> result.output == {"a": 3, "b": 2, "c": 3}, result.record.load
    (True, Fraction(1, 6))
    """
    if not _is_collection(files):
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
    combine_fn = reduce_fn if _combines(combine, reduce_fn) else None
    coded = check_flag(coded, "coded", none="the network model picks")
    options = mapreduce_options(options, deprecated, "run_mapreduce")
    sequence = not split and not _is_collection(files)  # files as given
    grouped = sequence and placement is None and options.group_bytes is not None
    placement = _resolve_placement(files, K, r, placement, split)
    inputs_per_file = (1,) * len(files) if sequence else None
    if grouped:  # Li's placement over the grouped files
        batches = math.comb(placement.K, int(placement.r))
        files, inputs_per_file = group_inputs(files, batches, options.group_bytes)
        placement = place_li(placement.K, int(placement.r), N=len(files))
    if coded is None:
        coded = model_prefers_coded(placement, delivery=options.delivery)
    plan = verify_plan(plan_shuffle(placement, coded=bool(coded)))
    from mapreduce._runtime import execute_mapreduce

    if split and not _is_collection(files):
        files = split_input(files, placement.N)
    result = execute_mapreduce(
        files,
        functools.partial(map_inputs if grouped else map_file, map_fn),
        reduce_fn,
        plan=plan,
        partition=partition,
        combine_fn=combine_fn,
        client=client,
        options=options,
    )
    record = dataclasses.replace(result.record, inputs_per_file=inputs_per_file)
    return MapReduceResult(output=result.output, record=record)


def _combines(combine: object, reduce_fn: ReduceFn) -> bool:
    meaning = "combine when `reduce_fn` is marked by fold_with"
    flag = check_flag(combine, "combine", none=meaning)
    return fold_of(reduce_fn) is not None if flag is None else flag


def concatenate_values(j: int, values: list[Any]) -> Any:
    """Default reduce of :func:`run_coded_maps`: the files' values end to end.

    Parameters
    ----------
    j : int
        Reduce function (unused: every function concatenates).
    values : list of array_like
        The files' values of function `j`, in file order.

    Returns
    -------
    numpy.ndarray
        ``concatenate(values)`` (a block-row product's column ``j``).

    Examples
    --------
    >>> import numpy as np
    >>> concatenate_values(0, [np.array([1.0]), np.array([2.0, 3.0])])
    array([1., 2., 3.])
    """
    import numpy as np

    return np.concatenate([np.atleast_1d(v) for v in values])


def _check_linear_files(files: Any) -> list:
    import numpy as np

    files = list(files)
    if not files:
        raise ValueError("`files` must hold at least one file, got 0.")
    try:
        arrays = [np.asarray(f, dtype=np.float64) for f in files]
    except (TypeError, ValueError) as error:
        raise TypeError(
            f"`files` must be real numeric arrays (linear maps combine them): {error}"
        ) from error
    shapes = sorted({a.shape for a in arrays})
    if len(shapes) != 1:
        raise ValueError(f"`files` must all have one shape, got shapes {shapes}.")
    return arrays


def run_coded_maps(
    files: Sequence[Any],
    map_fn: Callable[[Any], Any],
    reduce_fn: Callable[[int, list[Any]], Any] = concatenate_values,
    *,
    K: int,
    r: int,
    q: int,
    delivery: Delivery = "unicast",
    client: Client | None = None,
    timeout: float = 600.0,
    progress: bool = False,
) -> MapReduceResult:
    r"""Run a MapReduce job with coded map tasks: any `q` of `K` nodes suffice.

    The unified scheme of Li, Maddah-Ali and Avestimehr for *linear* map
    functions: the ``M`` files (padded with zero files to ``N``, a multiple of
    the scheme's least ``N``) are encoded by a real MDS code into ``N K / q``
    coded files, ``r`` copies of each by Li's placement. The first `q` nodes to
    map all their coded files go on; the others are cancelled. The ``Q`` reduce
    functions are split among those `q` nodes (``array_split``, in node order);
    each receives the coded values it lacks by a coded shuffle of load
    :func:`theory.load_straggling` ``L(r, q)``, decodes its functions' values of
    the ``M`` files, and reduces.

    Parameters
    ----------
    files : sequence of array_like
        ``M >= 1`` real arrays of one shape.
    map_fn : callable
        ``map_fn(file)`` returns an array of shape ``(Q, ...)``, row ``j`` the
        intermediate value of reduce function ``j``. It must be linear,
        ``map_fn(a x + b y) = a map_fn(x) + b map_fn(y)`` (a product with a
        fixed matrix, a sum, a projection): it is applied to coded files, and a
        non-linear `map_fn` silently gives a wrong output (the user's to declare).
    reduce_fn : callable
        ``reduce_fn(j, values)`` with `values` the ``M`` files' values of
        function ``j`` in file order (default: :func:`concatenate_values`).
    K, r, q : int
        Nodes (Dask workers used), copies of each coded file, nodes waited
        for: ``1 <= r <= K``, ``1 <= q <= K``. Up to ``K - q`` slow or lost
        mappers are tolerated.
    delivery : {"unicast", "forward"}
        As in :func:`run_mapreduce`.
    client : distributed.Client, optional
        A client with at least ``K`` workers; without one, an embedded cluster.
    timeout : float
        Seconds each stage may take, ``> 0``.
    progress : bool
        Show a progress bar per stage.

    Returns
    -------
    MapReduceResult
        ``output`` maps ``j`` to ``reduce_fn(j, values)`` for ``j < Q``; the
        record's `load` is the plan's load over ``Q N T`` (equal to
        ``L(r, q)``), `tolerance` is ``K - q``, `stragglers` the cancelled nodes.

    Raises
    ------
    ValueError
        For bad `K`, `r`, `q` (``r > K``, ``q > K``), empty `files`, files of
        different shapes, or a bad `delivery` or `timeout`.
    TypeError
        If a file is not a real numeric array, or a function is not callable.
    NotEnoughMappersError
        As soon as fewer than `q` nodes can finish (more than ``K - q`` lost).
    MapReduceTaskError
        If a task raises (chained), or a stage exceeds `timeout` (more than
        ``K - q`` slow nodes).

    References
    ----------
    .. [1] S. Li, M. A. Maddah-Ali, A. S. Avestimehr, "A Unified Coding
       Framework for Distributed Computing with Straggling Servers", IEEE
       Globecom Workshops, 2016.

    Examples
    --------
    >>> import numpy as np
    >>> A, X = np.arange(12.0).reshape(6, 2), np.array([[1.0, 0.0], [1.0, 2.0]])
    >>> blocks = [A[i : i + 2] for i in (0, 2, 4)]
    >>> result = run_coded_maps(blocks, lambda a: (a @ X).T, K=3, r=1, q=2)
    >>> np.allclose(np.stack([result.output[j] for j in (0, 1)]).T, A @ X)
    True
    >>> result.record.load, result.record.tolerance
    (Fraction(1, 2), 1)
    """
    for name, fn in (("map_fn", map_fn), ("reduce_fn", reduce_fn)):
        if not callable(fn):
            raise TypeError(f"`{name}` must be callable, got {type(fn).__name__}.")
    K = check_int(K, "K", min_value=1)
    r, q = check_int(r, "r", min_value=1), check_int(q, "q", min_value=1)
    for name, value in (("r", r), ("q", q)):
        if value > K:
            raise ValueError(
                f"`{name}` must satisfy 1 <= {name} <= K, got {name}={value}, K={K}."
            )
    options = MapReduceOptions(delivery=delivery, timeout=timeout, progress=progress)
    arrays = _check_linear_files(files)
    from mapreduce._runtime_linear import execute_coded_maps

    return execute_coded_maps(
        arrays, map_fn, reduce_fn, K=K, r=r, q=q, client=client, options=options
    )
