"""TeraSort's Dask side: records generated, kept and summarized on the workers.

The sort itself is ``run_mapreduce``'s; this module generates each input
partition on a node that stores it (a task pinned there, from the run's seed and
the partition index), keeps each sorted output partition on the worker that
reduced it, and summarizes partitions where they are (``summarize_records``), so
that the client receives only summaries. A reducer cannot return its records
without their travelling to the client, so it keeps them in a worker-local table
under the run's token and returns where they are; a task pinned to that worker
then takes them out as its own result (a future that stays there).
"""

from __future__ import annotations

import pickle
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
from distributed import Client, Future, get_worker

from mapreduce._examples import sort_records
from mapreduce._teravalidate import (
    RECORD_BYTES,
    RecordSummary,
    summarize_records,
    teragen_partition,
)

__all__ = [
    "drop_kept",
    "generate_inputs",
    "keep_sorted",
    "summarize",
    "take_outputs",
]

_kept_lock = threading.Lock()
_kept: dict[tuple[str, int], bytes] = {}  # (run token, reducer) -> sorted records


def _generate(seed: int, index: int, n: int) -> bytes:
    """One input file as ``run_mapreduce``'s map tasks take it (pickled bytes)."""
    return pickle.dumps(teragen_partition(seed, index, n).tobytes(), protocol=5)


def generate_inputs(
    client: Client, addresses: Sequence[str], seed: int, sizes: Sequence[int]
) -> list[Future]:
    """Generate input file ``f`` (``sizes[f]`` records) on ``addresses[f]``."""
    return [
        client.submit(
            _generate, seed, f, n, workers=[address], allow_other_workers=False
        )
        for f, (n, address) in enumerate(zip(sizes, addresses, strict=True))
    ]


def keep_sorted(token: str, k: int, blobs: list[bytes]) -> tuple[str, int]:
    """TeraSort reduce: sort reducer `k`'s records and keep them on this worker.

    Returns the worker's address and the number of records kept.
    """
    records = sort_records(b"".join(blobs))
    with _kept_lock:
        _kept[token, k] = records
    return get_worker().address, len(records) // RECORD_BYTES


def _take(token: str, k: int) -> np.ndarray:
    with _kept_lock:
        records = _kept.pop((token, k))
    return np.frombuffer(records, np.uint8).reshape(-1, RECORD_BYTES)


def _empty() -> np.ndarray:
    return np.empty((0, RECORD_BYTES), np.uint8)


def take_outputs(
    client: Client, token: str, where: dict[int, str], K: int
) -> list[Future]:
    """Futures of the K sorted partitions, each on the worker that reduced it.

    `where` maps a reducer to its worker; a reducer with no records (absent)
    gets an empty partition.
    """
    return [
        client.submit(
            _take, token, k, workers=[where[k]], allow_other_workers=False, pure=False
        )
        if k in where
        else client.submit(_empty, pure=False)
        for k in range(K)
    ]


def _drop(token: str) -> None:
    with _kept_lock:
        for key in [key for key in _kept if key[0] == token]:
            del _kept[key]


def drop_kept(client: Client, token: str) -> None:
    """Forget a failed run's kept partitions on every worker."""
    client.run(_drop, token)


def _summarize(part: Any) -> RecordSummary:
    if isinstance(part, bytes):  # an input file
        part = np.frombuffer(pickle.loads(part), np.uint8).reshape(-1, RECORD_BYTES)
    return summarize_records(part)


def summarize(client: Client, parts: Sequence[Future]) -> list[RecordSummary]:
    """Summarize partitions (input files or sorted outputs) where they are."""
    return client.gather([client.submit(_summarize, part) for part in parts])
