"""Example jobs: word count, and TeraSort on generated 100-byte records.

TeraSort follows Coded TeraSort (Li et al. 2017): 10-byte keys, 90-byte values,
``C(K, r)`` input files, a range partition of the key space, and a local sort at
each reducer; the concatenated reducer outputs are the sorted records. Records
travel as arrays, not as pairs: a map splits its file by reducer at once, and a
reducer sorts its whole partition in one numpy sort.
"""

from __future__ import annotations

import collections
import functools
import math
import operator
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from mapreduce._fold import fold_with
from mapreduce._job import run_mapreduce
from mapreduce._placement import place_li
from mapreduce._records import MapReduceRecord
from theory.rng import as_generator
from theory.validation import check_int

if TYPE_CHECKING:
    from distributed import Client

__all__ = [
    "TeraSortResult",
    "count_words",
    "generate_records",
    "range_partition",
    "run_terasort",
    "sum_counts",
    "terasort_map",
]

KEY_BYTES, VALUE_BYTES = 10, 90


def count_words(text: str) -> Iterable[tuple[str, int]]:
    """Word-count map: ``(word, count)`` for every distinct word of `text`.

    The words are whitespace-separated and counted within the file first
    (``collections.Counter``: the in-mapper combining of Lin and Dyer), so the
    map emits one pair per distinct word rather than one per word.

    Parameters
    ----------
    text : str
        One input file.

    Returns
    -------
    iterable of (str, int)
        In order of first appearance.

    References
    ----------
    .. [1] J. Lin, C. Dyer, "Data-Intensive Text Processing with MapReduce",
       Morgan & Claypool, 2010, Sec. 3.1 (local aggregation).

    Examples
    --------
    >>> list(count_words("a b a"))
    [('a', 2), ('b', 1)]
    """
    return collections.Counter(text.split()).items()


@fold_with(operator.add)
def sum_counts(key: Hashable, counts: Sequence[int]) -> int:
    """Word-count reduce: the total count of `key` (a fold with ``+``).

    Marked by :func:`fold_with`, so a job with it combines map-side by
    default and folds the counts as they come.

    Parameters
    ----------
    key : hashable
        The word (unused).
    counts : sequence of int
        Its counts.

    Returns
    -------
    int

    Examples
    --------
    >>> sum_counts("a", [1, 1])
    2
    """
    return sum(counts)


def generate_records(
    n: int, *, rng: np.random.Generator | int | None = None
) -> list[tuple[bytes, bytes]]:
    """`n` random TeraSort records: 10-byte keys and 90-byte values.

    Parameters
    ----------
    n : int
        Number of records, ``n >= 0``.
    rng : numpy.random.Generator or int, optional
        Seed or generator.

    Returns
    -------
    list of (bytes, bytes)

    Examples
    --------
    >>> records = generate_records(3, rng=0)
    >>> [(len(k), len(v)) for k, v in records]
    [(10, 90), (10, 90), (10, 90)]
    """
    n = check_int(n, "n", min_value=0)
    raw = as_generator(rng).integers(0, 256, size=(n, KEY_BYTES + VALUE_BYTES))
    data = raw.astype("uint8")
    return [(bytes(row[:KEY_BYTES]), bytes(row[KEY_BYTES:])) for row in data]


def range_partition(key: bytes, K: int) -> int:
    """Reducer of a TeraSort key: the K equal ranges of its first 4 bytes.

    Parameters
    ----------
    key : bytes
        A record key.
    K : int
        Number of reducers.

    Returns
    -------
    int
        Reducer ``k`` gets keys in ``[k 2^32 / K, (k + 1) 2^32 / K)``, so reducer
        outputs in order are globally sorted.

    Examples
    --------
    >>> range_partition(bytes([0] * 10), 4), range_partition(bytes([255] * 10), 4)
    (0, 3)
    """
    return int.from_bytes(key[:4].ljust(4, b"\0"), "big") * K >> 32


RECORD_BYTES = KEY_BYTES + VALUE_BYTES


def terasort_map(blob: bytes) -> Iterator[tuple[bytes, bytes]]:
    """TeraSort map: parse concatenated 100-byte records into (key, value) pairs.

    Parameters
    ----------
    blob : bytes
        One file: records of a 10-byte key and a 90-byte value, back to back.

    Returns
    -------
    iterator of (bytes, bytes)

    Examples
    --------
    >>> [(len(k), len(v)) for k, v in terasort_map(bytes(200))]
    [(10, 90), (10, 90)]
    """
    for start in range(0, len(blob), RECORD_BYTES):
        yield (
            blob[start : start + KEY_BYTES],
            blob[start + KEY_BYTES : start + RECORD_BYTES],
        )


_CHUNK_RECORDS = 64  # records a user's map_fn yields between two bucketings


def partition_records(rows: np.ndarray, K: int) -> Iterator[tuple[int, bytes]]:
    """Range-partition records at once: ``(reducer, its records end to end)``.

    Parameters
    ----------
    rows : numpy.ndarray
        ``uint8`` array of shape ``(n, 100)``, one record per row.
    K : int
        Number of reducers.

    Returns
    -------
    iterator of (int, bytes)
        For every reducer ``k`` with records, in ``k`` order: its records (file
        order kept) as one byte string; ``k`` is :func:`range_partition` of the
        key, computed on the first 4 bytes of every row as a big-endian uint32.

    Examples
    --------
    >>> rows = np.zeros((3, RECORD_BYTES), dtype=np.uint8)
    >>> rows[1, 0] = 255
    >>> [(k, len(blob)) for k, blob in partition_records(rows, 2)]
    [(0, 200), (1, 100)]
    """
    prefix = np.ascontiguousarray(rows[:, :4]).view(">u4").ravel()
    reducers = (prefix.astype(np.uint64) * np.uint64(K)) >> np.uint64(32)
    # the narrowest type: a stable argsort of small ints is a radix sort
    order = np.argsort(reducers.astype(np.min_scalar_type(K)), kind="stable")
    bounds = np.cumsum(np.bincount(reducers, minlength=K))
    grouped = np.take(rows, order, axis=0)  # far faster than rows[order]
    start = 0
    for k, end in enumerate(bounds.tolist()):
        if end > start:
            yield k, grouped[start:end].tobytes()
        start = end


def _rows(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype=np.uint8).reshape(-1, RECORD_BYTES)


def _map_partitions(K: int, blob: bytes) -> Iterator[tuple[int, bytes]]:
    """Map a TeraSort file to one ``(reducer, records)`` pair per reducer."""
    return partition_records(_rows(blob), K)


def _map_user_partitions(
    map_fn: Callable[[bytes], Iterable[tuple[bytes, bytes]]], K: int, blob: bytes
) -> Iterator[tuple[int, bytes]]:
    """Run a user's pair-wise parser, bucketing every ``_CHUNK_RECORDS`` records.

    Chunks keep the runtime's cooperative cancel responsive: it looks at the
    cancel signal between the pairs yielded here.
    """
    chunk: list[bytes] = []
    for key, value in map_fn(blob):
        chunk.append(_check_record(key, value))
        if len(chunk) == _CHUNK_RECORDS:
            yield from partition_records(_rows(b"".join(chunk)), K)
            chunk = []
    if chunk:
        yield from partition_records(_rows(b"".join(chunk)), K)


def sort_records(blob: bytes) -> bytes:
    """Sort concatenated 100-byte records by key, then value, in one go.

    Parameters
    ----------
    blob : bytes
        Records back to back.

    Returns
    -------
    bytes
        The records in ``sorted`` order of their ``(key, value)`` pairs (bytewise
        order of the whole record): an argsort of the first 8 bytes as a
        big-endian uint64 when those are distinct, else a sort of the records as
        100-byte strings.

    Examples
    --------
    >>> sort_records(bytes([2] * 100) + bytes([1] * 100)) == bytes([1] * 100) + bytes(
    ...     [2] * 100
    ... )
    True
    """
    return sort_rows(_rows(blob)).tobytes()


def sort_rows(rows: np.ndarray) -> np.ndarray:
    """Sort 100-byte records (rows of a ``uint8`` array) as :func:`sort_records`.

    Parameters
    ----------
    rows : numpy.ndarray
        ``uint8`` array of shape ``(n, 100)``, one record per row.

    Returns
    -------
    numpy.ndarray
        A new ``(n, 100)`` array of the rows in bytewise order.

    Examples
    --------
    >>> rows = np.array([[2] * 100, [1] * 100], dtype=np.uint8)
    >>> sort_rows(rows)[:, 0].tolist()
    [1, 2]
    """
    # the key's first 8 bytes as a native uint64: numpy sorts those far faster
    # than big-endian ones; with no ties, any sort gives the one order
    prefix = np.ascontiguousarray(rows[:, :8]).view(">u8").ravel().astype(np.uint64)
    order = np.argsort(prefix)
    ordered = prefix[order]
    if np.any(ordered[1:] == ordered[:-1]):  # ties: compare whole records
        whole = np.sort(np.ascontiguousarray(rows).view(f"S{RECORD_BYTES}").ravel())
        return whole.view(np.uint8).reshape(-1, RECORD_BYTES)
    return np.take(rows, order, axis=0)  # far faster than rows[order]


def _terasort_reduce(k: int, blobs: list[bytes]) -> bytes:
    return sort_records(b"".join(blobs))


def _check_record(key: bytes, value: bytes) -> bytes:
    if not isinstance(key, bytes) or not isinstance(value, bytes):
        raise TypeError(
            "TeraSort records must be (bytes, bytes) pairs, got "
            f"({type(key).__name__}, {type(value).__name__})."
        )
    if len(key) != KEY_BYTES or len(value) != VALUE_BYTES:
        raise ValueError(
            f"TeraSort records need {KEY_BYTES}-byte keys and {VALUE_BYTES}-byte "
            f"values, got {len(key)} and {len(value)} bytes."
        )
    return key + value


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class TeraSortResult:
    """Sorted records of a TeraSort run and its record.

    Parameters
    ----------
    records : list of (bytes, bytes)
        Every input record, sorted by key then value.
    record : MapReduceRecord
        Loads, bytes and stage times.
    """

    records: list[tuple[bytes, bytes]]
    record: MapReduceRecord


def run_terasort(
    records: Sequence[tuple[bytes, bytes]],
    *,
    K: int,
    r: int = 1,
    coded: bool = True,
    client: Client | None = None,
    map_fn: Callable[[bytes], Iterable[tuple[bytes, bytes]]] | None = None,
    **options: Any,
) -> TeraSortResult:
    """Sort records with (coded) TeraSort on Dask.

    Parameters
    ----------
    records : sequence of (bytes, bytes)
        Records of a 10-byte key and a 90-byte value (e.g. from
        :func:`generate_records`).
    K : int
        Number of nodes.
    r : int
        Computation load, ``1 <= r <= K``; the records are cut into ``C(K, r)``
        files (byte strings of concatenated records) placed as in Li et al.
    coded : bool
        Coded (default) or uncoded shuffle.
    client : distributed.Client, optional
        See :func:`run_mapreduce`.
    map_fn : callable, optional
        Replaces the record parser (a file of concatenated records -> ``(key,
        value)`` pairs), e.g. to instrument it. Its pairs are checked and
        range-partitioned every 64 records, which is slower than the built-in
        parser (one numpy pass over the file).
    **options
        Passed on to :func:`run_mapreduce` (``options``, a
        :class:`MapReduceOptions`).

    Returns
    -------
    TeraSortResult

    Raises
    ------
    ValueError
        For bad `K` or `r`, or a record whose key is not 10 bytes or whose value
        is not 90 bytes.
    TypeError
        If a key or value is not ``bytes``.

    Notes
    -----
    Each map emits one ``(k, records)`` pair per reducer ``k``: its file's
    records of reducer ``k`` (:func:`range_partition`) end to end, split by one
    argsort (``partition_records``). The shuffle codes these byte strings;
    reducer ``k`` joins the ``N`` files' strings and sorts them in one go
    (``sort_records``), so no step runs per record in Python but the
    conversion to and from ``(key, value)`` pairs on the client.

    References
    ----------
    .. [1] S. Li, S. Supittayapornpong, M. A. Maddah-Ali, A. S. Avestimehr,
       "Coded TeraSort", IEEE IPDPSW, 2017.

    Examples
    --------
    >>> result = run_terasort(generate_records(50, rng=1), K=3, r=2)
    >>> result.records == sorted(generate_records(50, rng=1))
    True
    """
    placement = place_li(K, r)
    N = placement.N
    blob = b"".join(_check_record(key, value) for key, value in records)
    size = math.ceil(len(blob) // RECORD_BYTES / N) * RECORD_BYTES
    files = [blob[f * size : (f + 1) * size] for f in range(N)]
    if map_fn is None:
        mapper = functools.partial(_map_partitions, K)
    else:
        mapper = functools.partial(_map_user_partitions, map_fn, K)
    result = run_mapreduce(
        files,
        mapper,
        _terasort_reduce,
        K=K,
        placement=placement,
        coded=coded,
        partition=_own_reducer,
        client=client,
        **options,
    )
    return TeraSortResult(
        records=[
            (blob[i : i + KEY_BYTES], blob[i + KEY_BYTES : i + RECORD_BYTES])
            for blob in (result.output.get(k, b"") for k in range(K))
            for i in range(0, len(blob), RECORD_BYTES)
        ],
        record=result.record,
    )


def _own_reducer(k: int, K: int) -> int:
    return k
