"""Which reducer node gets each intermediate key: the default hash partition.

Pure (no Dask): ``hash_partition`` is the default ``partition`` of
``run_mapreduce``, and :func:`partition_keys` applies any partition to all the
keys of one map output at once.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

__all__ = ["PartitionFn", "hash_partition", "partition_keys"]

PartitionFn = Callable[[Hashable, int], int]


def hash_partition(key: Hashable, K: int) -> int:
    """Reducer node of `key`: a process-independent hash of its bytes, mod `K`.

    Parameters
    ----------
    key : hashable
        Intermediate key.
    K : int
        Number of reducer nodes.

    Returns
    -------
    int
        ``fmix64(h) % K`` with ``h = sum_j (b_j + 1) P**j mod 2**64`` over the
        bytes ``b_0 b_1 ...`` of the key (the UTF-8 encoding of a ``str``, a
        ``bytes`` key itself, the pickle of any other key), ``P`` the 64-bit FNV
        prime and ``fmix64`` MurmurHash3's finalizer (it spreads every input bit
        to the low bits that ``% K`` keeps). Python's ``hash`` of ``str`` differs
        between processes, so it cannot place keys across Dask workers; this
        polynomial is computed for all the keys of a map output at once, in numpy
        (:func:`partition_keys`).

    Examples
    --------
    >>> hash_partition("coded", 4) == hash_partition("coded", 4)
    True
    """
    return partition_keys(hash_partition, [key], K)[0]


_P = 0x100000001B3  # the 64-bit FNV prime: odd, so invertible mod 2**64
_FMIX = (np.uint64(0xFF51AFD7ED558CCD), np.uint64(0xC4CEB9FE1A85EC53))
_powers: list[np.ndarray] = [np.ones(0, np.uint64), np.ones(0, np.uint64)]


def _powers_up_to(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``P**j`` and ``P**-j`` mod 2**64 for ``j < n`` (cached, grown by doubling)."""
    powers, inverses = _powers
    if len(powers) < n:
        size = max(n, 2 * len(powers), 1024)
        bases = np.empty((2, size), np.uint64)
        bases[0], bases[1] = np.uint64(_P), np.uint64(pow(_P, -1, 2**64))
        bases[:, 0] = 1
        powers, inverses = np.cumprod(bases, axis=1)
        _powers[:] = powers, inverses
    return powers, inverses


def _key_bytes(key: Hashable) -> bytes:
    if type(key) is str:
        return key.encode("utf-8", "surrogatepass")
    if type(key) is bytes:
        return key
    return pickle.dumps(key, protocol=4)


def _concatenated(keys: Sequence[Hashable]) -> tuple[bytes, np.ndarray]:
    """Return the keys' bytes end to end, and the length of each."""
    if set(map(type, keys)) == {str}:
        text = "".join(keys)  # type: ignore[arg-type]
        if text.isascii():  # one byte a character: no encoding per key
            lengths = np.fromiter(map(len, keys), np.int64, len(keys))  # type: ignore[arg-type]
            return text.encode("ascii"), lengths
    encoded = [_key_bytes(key) for key in keys]
    return b"".join(encoded), np.fromiter(map(len, encoded), np.int64, len(keys))


def _hashes(keys: Sequence[Hashable]) -> np.ndarray:
    """``fmix64`` of each key's polynomial hash (see :func:`hash_partition`)."""
    data, lengths = _concatenated(keys)
    powers, inverses = _powers_up_to(len(data) + 1)
    prefix = np.zeros(len(data) + 1, np.uint64)
    terms = np.frombuffer(data, np.uint8).astype(np.uint64) + np.uint64(1)
    np.cumsum(terms * powers[: len(data)], out=prefix[1:])
    ends = np.cumsum(lengths)
    starts = ends - lengths
    h = (prefix[ends] - prefix[starts]) * inverses[starts]  # shifted to power 0
    for multiplier in _FMIX:
        h ^= h >> np.uint64(33)
        h *= multiplier
    return h ^ (h >> np.uint64(33))


def partition_keys(
    partition: PartitionFn, keys: Sequence[Hashable], K: int
) -> list[Any]:
    """``partition(key, K)`` of each key, with :func:`hash_partition` vectorized.

    The default partition hashes all the keys at once in numpy (4x faster than
    a Python call per word key); any other is called once per key. The nodes
    are returned as the function gave them, unchecked.

    Examples
    --------
    >>> partition_keys(hash_partition, ["a", b"b", 3], 4) == [
    ...     hash_partition(key, 4) for key in ["a", b"b", 3]
    ... ]
    True
    >>> partition_keys(lambda key, K: len(key) % K, ["a", "bb"], 4)
    [1, 2]
    """
    if partition is not hash_partition:
        return [partition(key, K) for key in keys]
    if not keys:
        return []
    return (_hashes(keys) % np.uint64(K)).tolist()
