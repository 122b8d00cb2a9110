"""Group many small input files into the placement's files (map units).

Pure (no Dask). One map task per file and node costs Dask a few milliseconds of
scheduling whatever the file holds, so a job over many small inputs spends its
time scheduling: ``run_mapreduce`` groups consecutive inputs into files of about
``MapReduceOptions.group_bytes`` bytes, as ``dask.bag.read_text`` groups them
into partitions (``blocksize``, ``files_per_partition``). The placement, the
shuffle plan and its verifier then work on the grouped files, so ``N`` is the
number of groups; ``map_fn`` still sees one input at a time
(:func:`map_inputs`), and its pairs reach the map task as one run per input.
"""

from __future__ import annotations

import bisect
import itertools
import math
import pickle
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence, Sized
from typing import Any

__all__ = ["group_bounds", "group_count", "group_inputs", "map_file", "map_inputs"]

Group = tuple[int, tuple[bytes, ...]]  # index of its first input, pickled inputs


def group_count(sizes: Sequence[int], batches: int, group_bytes: int) -> int:
    """Return the number of files for inputs of byte `sizes`: a multiple of `batches`.

    ``N = batches * g`` with ``g = ceil(sum(sizes) / (batches * group_bytes))``
    files per batch (at least one), so that the files average at most
    `group_bytes` and every batch of the placement gets as many files, as Li's
    load formula assumes. When that asks for more files than there are inputs
    (inputs of about `group_bytes` or more), or there are fewer inputs than
    batches, one file per input (``len(sizes)``).

    Examples
    --------
    >>> group_count([10] * 100, batches=4, group_bytes=300)
    4
    >>> group_count([10] * 100, batches=4, group_bytes=100)
    12
    >>> group_count([10] * 3, batches=4, group_bytes=100)
    3
    >>> group_count([500] * 10, batches=4, group_bytes=100)
    10
    """
    N = batches * max(1, math.ceil(sum(sizes) / (batches * group_bytes)))
    return min(N, len(sizes))


def group_bounds(sizes: Sequence[int], N: int) -> list[int]:
    """Cut inputs of byte `sizes` into `N` consecutive runs of near-equal bytes.

    Returns ``N + 1`` strictly increasing bounds from 0 to ``len(sizes)``: run ``f`` is
    ``[bounds[f], bounds[f + 1])``. Run ``f`` ends where the running total of
    bytes first reaches ``(f + 1) / N`` of the whole, kept at least one input
    long and leaving one input for each later run (``1 <= N <= len(sizes)``).

    Examples
    --------
    >>> group_bounds([5, 1, 1, 1, 1, 1], 2)
    [0, 1, 6]
    >>> group_bounds([1, 1, 1], 3)
    [0, 1, 2, 3]
    """
    M = len(sizes)
    running = list(itertools.accumulate(sizes))
    total = running[-1] if running else 0
    bounds = [0]
    for f in range(1, N):
        cut = bisect.bisect_left(running, total * f / N) + 1
        bounds.append(min(max(cut, bounds[-1] + 1), M - (N - f)))
    return [*bounds, M]


def group_inputs(
    inputs: Sequence[Any], batches: int, group_bytes: int
) -> tuple[list[Group], tuple[int, ...]]:
    """Group `inputs` into files of about `group_bytes` pickled bytes.

    Returns the files (each the index of its first input and its inputs,
    pickled one by one: they travel as they are, without a second pickling)
    and the number of inputs in each (:func:`group_count`,
    :func:`group_bounds`).
    """
    blobs = [pickle.dumps(item, protocol=5) for item in inputs]
    N = group_count([len(blob) for blob in blobs], batches, group_bytes)
    bounds = group_bounds([len(blob) for blob in blobs], N)
    groups = [(a, tuple(blobs[a:b])) for a, b in itertools.pairwise(bounds)]
    return groups, tuple(len(blobs) for _, blobs in groups)


def map_inputs(
    map_fn: Callable[[Any], Iterable[tuple[Hashable, Any]]], group: Group
) -> Iterator[Iterable[tuple[Hashable, Any]]]:
    """Map one grouped file: ``map_fn`` on each of its inputs, in order.

    Yields each input's pairs as one run, as ``map_fn`` returned them (a run
    of pairs is iterated once). An error of ``map_fn`` gets a note naming the
    input it raised on, also when it raises while its pairs are iterated.
    """
    first, blobs = group
    for i, blob in enumerate(blobs):
        try:
            pairs = map_fn(pickle.loads(blob))
        except Exception as error:
            error.add_note(f"(map_fn raised on input file {first + i})")
            raise
        yield pairs if isinstance(pairs, Sized) else _noted(pairs, first + i)


def map_file(
    map_fn: Callable[[Any], Iterable[tuple[Hashable, Any]]], file: Any
) -> tuple[Iterable[tuple[Hashable, Any]]]:
    """Map one file that is not grouped: its pairs as one run."""
    return (map_fn(file),)


def _noted(
    pairs: Iterable[tuple[Hashable, Any]], index: int
) -> Iterator[tuple[Hashable, Any]]:
    try:
        yield from pairs
    except Exception as error:
        error.add_note(f"(map_fn raised on input file {index})")
        raise
