"""TeraGen and TeraValidate on numpy arrays: generated records, checked outputs.

Pure numpy (the Dask side is ``mapreduce._runtime_terasort``). A partition of
records is a ``uint8`` array of shape ``(n, 100)``: a 10-byte key, then a
90-byte value. Each input partition is generated from ``(seed, index)`` alone,
so a worker makes it without the client. A summary of a partition is all
TeraValidate needs: its record count, an order-independent checksum (the sum
mod ``2^64`` of a 64-bit hash of every record), its first and last keys, and
where its keys first go down, if they do.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from mapreduce._errors import ValidationError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "RecordSummary",
    "check_rows",
    "check_sort_column",
    "split_frame",
    "splitters_of",
    "summarize_frame",
    "summarize_records",
    "teragen_partition",
    "validate_sorted",
]

KEY_BYTES, RECORD_BYTES = 10, 100
_WORDS = RECORD_BYTES // 8  # 12 little-endian 64-bit words, then a 4-byte tail
_MASK = (1 << 64) - 1


def teragen_partition(seed: int, index: int, n: int) -> np.ndarray:
    """Generate input partition `index` of a TeraSort run: `n` random records.

    Parameters
    ----------
    seed : int
        Seed of the whole run, ``>= 0``.
    index : int
        Partition index, ``>= 0``; ``(seed, index)`` fixes the records.
    n : int
        Number of records, ``>= 0``.

    Returns
    -------
    numpy.ndarray
        ``uint8`` array of shape ``(n, 100)``, uniformly random bytes (keys
        and values), one record per row.

    Examples
    --------
    >>> rows = teragen_partition(1, 0, 3)
    >>> rows.shape, bool((rows == teragen_partition(1, 0, 3)).all())
    ((3, 100), True)
    """
    rng = np.random.default_rng([seed, index])
    return np.frombuffer(rng.bytes(n * RECORD_BYTES), np.uint8).reshape(n, RECORD_BYTES)


def check_rows(rows: object, name: str = "records") -> np.ndarray:
    """Return `rows` as a ``(n, 100)`` ``uint8`` array; raise naming `name`."""
    array = np.asarray(rows)
    if array.dtype != np.uint8 or array.ndim != 2 or array.shape[1] != RECORD_BYTES:
        raise ValueError(
            f"`{name}` must be a uint8 array of shape (n, {RECORD_BYTES}) (records "
            f"of {KEY_BYTES}-byte keys and {RECORD_BYTES - KEY_BYTES}-byte values), "
            f"got dtype {array.dtype} and shape {array.shape}."
        )
    return array


def _fmix(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finalizer, on a uint64 array."""
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return h


def record_hashes(rows: np.ndarray) -> np.ndarray:
    """Return a 64-bit hash of every record (row), as a uint64 array."""
    rows = np.ascontiguousarray(rows)
    words = rows[:, : 8 * _WORDS].copy().view("<u8")
    h = rows[:, 8 * _WORDS :].copy().view("<u4").ravel().astype(np.uint64)
    for i in range(_WORDS):
        h = _fmix(h ^ words[:, i])
    return h


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordSummary:
    """What TeraValidate keeps of one partition of records.

    Parameters
    ----------
    count : int
        Number of records.
    checksum : int
        Sum mod ``2^64`` of a 64-bit hash of every record: equal for any order
        of the same records.
    first_key, last_key : bytes or object
        Keys of the first and last records (``b""`` if there are none); for a
        dataframe, the sort column's first and last values (None if empty).
    unsorted_at : int or None
        The first ``i`` whose key is greater than the key of record ``i + 1``;
        None if the keys never go down.
    """

    count: int
    checksum: int
    first_key: Any
    last_key: Any
    unsorted_at: int | None


def summarize_records(rows: np.ndarray) -> RecordSummary:
    """Summarize a partition of records for :func:`validate_sorted`.

    Parameters
    ----------
    rows : numpy.ndarray
        ``uint8`` array of shape ``(n, 100)``, one record per row.

    Returns
    -------
    RecordSummary

    Raises
    ------
    ValueError
        If `rows` is not a ``uint8`` array of shape ``(n, 100)``.

    Examples
    --------
    >>> rows = teragen_partition(0, 0, 4)
    >>> a, b = summarize_records(rows), summarize_records(rows[::-1])
    >>> a.count, a.checksum == b.checksum
    (4, True)
    """
    rows = check_rows(rows)
    keys = np.ascontiguousarray(rows[:, :KEY_BYTES]).view(f"S{KEY_BYTES}").ravel()
    down = np.flatnonzero(keys[:-1] > keys[1:])
    return RecordSummary(
        count=len(rows),
        checksum=int(record_hashes(rows).sum(dtype=np.uint64)),
        first_key=rows[0, :KEY_BYTES].tobytes() if len(rows) else b"",
        last_key=rows[-1, :KEY_BYTES].tobytes() if len(rows) else b"",
        unsorted_at=int(down[0]) if len(down) else None,
    )


def check_sort_column(columns: Any, by: object) -> str:
    """Return `by` if it names one of `columns`; raise naming ``by`` otherwise."""
    if not isinstance(by, str) or by not in list(columns):
        raise ValueError(
            f"`by` must name a column of the dataframe, got {by!r}; its columns: "
            f"{list(columns)}."
        )
    return by


def summarize_frame(frame: pd.DataFrame, by: str) -> RecordSummary:
    """Summarize a partition of a dataframe sorted by column `by`.

    Parameters
    ----------
    frame : pandas.DataFrame
        One partition.
    by : str
        The sort column.

    Returns
    -------
    RecordSummary
        Its rows' count; the sum mod ``2^64`` of a 64-bit hash of every row
        (``pandas.util.hash_pandas_object`` of its values, index aside); the
        first and last values of `by`; where they first go down.

    Raises
    ------
    ValueError
        If `by` is not a column of `frame`.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"a": [1, 3, 2], "b": [0.5, 0.0, 1.0]})
    >>> summary = summarize_frame(frame, "a")
    >>> summary.count, summary.first_key, summary.last_key, summary.unsorted_at
    (3, 1, 2, 1)
    """
    import pandas as pd

    values = frame[check_sort_column(frame.columns, by)].to_numpy()
    down = np.flatnonzero(values[:-1] > values[1:])
    hashes = pd.util.hash_pandas_object(frame, index=False).to_numpy(np.uint64)
    return RecordSummary(
        count=len(frame),
        checksum=int(hashes.sum(dtype=np.uint64)),
        first_key=_plain(values[0]) if len(values) else None,
        last_key=_plain(values[-1]) if len(values) else None,
        unsorted_at=int(down[0]) if len(down) else None,
    )


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def splitters_of(sample: np.ndarray, K: int) -> np.ndarray:
    """Return the ``K - 1`` values cutting a sorted `sample` into `K` equal ranges."""
    ordered = np.sort(sample)
    if not len(ordered):
        return ordered
    return ordered[(np.arange(1, K) * len(ordered)) // K]


def split_frame(
    by: str, splitters: np.ndarray, K: int, frame: pd.DataFrame
) -> Iterator[tuple[int, pd.DataFrame]]:
    """Range-partition a partition by column `by`: ``(reducer, its rows)`` pairs.

    Reducer ``k`` gets the rows whose value is at least splitter ``k - 1`` and
    below splitter ``k``.
    """
    if not len(splitters):
        yield 0, frame
        return
    reducers = np.searchsorted(splitters, frame[by].to_numpy(), side="right")
    for k in np.unique(reducers).tolist():
        yield k, frame[reducers == k]


def validate_sorted(
    inputs: Sequence[RecordSummary], outputs: Sequence[RecordSummary]
) -> None:
    """Check sorted output partitions against the input, as TeraValidate does.

    Parameters
    ----------
    inputs : sequence of RecordSummary
        Summaries of the input partitions (any order).
    outputs : sequence of RecordSummary
        Summaries of the output partitions, in output order.

    Raises
    ------
    ValidationError
        Naming the check that failed and the partition: a partition whose keys
        go down, a partition whose last key is greater than the next non-empty
        partition's first key, or a record count or checksum of the output that
        differs from the input's.

    Examples
    --------
    >>> rows = teragen_partition(0, 0, 5)
    >>> ordered = rows[np.argsort(rows[:, 0], kind="stable")]
    >>> validate_sorted([summarize_records(rows)], [summarize_records(ordered)])
    >>> try:
    ...     validate_sorted([summarize_records(rows)], [summarize_records(ordered[1:])])
    ... except ValidationError as error:
    ...     print(error)
    record count: the output has 4 records, the input 5.
    """
    previous = None
    for i, part in enumerate(outputs):
        if part.unsorted_at is not None:
            raise ValidationError(
                f"order: output partition {i} is not sorted (the key of its record "
                f"{part.unsorted_at} is greater than the next one's)."
            )
        if part.count == 0:
            continue
        if previous is not None and outputs[previous].last_key > part.first_key:
            raise ValidationError(
                f"partition boundary: the last key of output partition {previous} "
                f"is greater than the first key of output partition {i}."
            )
        previous = i
    count = (sum(p.count for p in inputs), sum(p.count for p in outputs))
    if count[0] != count[1]:
        raise ValidationError(
            f"record count: the output has {count[1]} records, the input {count[0]}."
        )
    checksums = [sum(p.checksum for p in parts) & _MASK for parts in (inputs, outputs)]
    if checksums[0] != checksums[1]:
        raise ValidationError(
            "checksum: the output's records differ from the input's (same count, "
            "different sum of record hashes)."
        )
