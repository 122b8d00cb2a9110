"""Example jobs: word count, and TeraSort on generated 100-byte records.

TeraSort follows Coded TeraSort (Li et al. 2017): 10-byte keys, 90-byte values,
``C(K, r)`` input files, a range partition of the key space, and a local sort at
each reducer; the concatenated reducer outputs are the sorted records.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mapreduce._job import run_mapreduce
from mapreduce._placement import place_li
from mapreduce._records import MapReduceRecord
from theory._rng import as_generator
from theory._validation import check_int

if TYPE_CHECKING:
    import numpy as np
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


def count_words(text: str) -> Iterator[tuple[str, int]]:
    """Word-count map: ``(word, 1)`` for every whitespace-separated word.

    Parameters
    ----------
    text : str
        One input file.

    Returns
    -------
    iterator of (str, int)

    Examples
    --------
    >>> list(count_words("a b a"))
    [('a', 1), ('b', 1), ('a', 1)]
    """
    return ((word, 1) for word in text.split())


def sum_counts(key: Hashable, counts: Sequence[int]) -> int:
    """Word-count reduce: the total count of `key`.

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


def _terasort_reduce(key: bytes, values: list[bytes]) -> list[bytes]:
    return sorted(values)


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
        value)`` pairs), e.g. to instrument it.
    **options
        Passed on to :func:`run_mapreduce` (``delivery``, ``straggler_slack``,
        ``timeout``, ``progress``).

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
    result = run_mapreduce(
        files,
        map_fn or terasort_map,
        _terasort_reduce,
        K=K,
        placement=placement,
        coded=coded,
        partition=range_partition,
        client=client,
        **options,
    )
    ordered = [(key, v) for key, values in result.output.items() for v in values]
    return TeraSortResult(records=ordered, record=result.record)
