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

import dask
import numpy as np
import pandas as pd
from distributed import Client, Future, get_worker, wait

from mapreduce._errors import MapReduceTaskError
from mapreduce._examples import sort_records
from mapreduce._teravalidate import (
    RECORD_BYTES,
    RecordSummary,
    splitters_of,
    summarize_frame,
    summarize_records,
    teragen_partition,
)

__all__ = [
    "drop_kept",
    "frame_output",
    "frame_splitters",
    "generate_inputs",
    "keep_sorted",
    "keep_sorted_frame",
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


def _keep(token: str, k: int, value: Any) -> None:
    with _kept_lock:
        _kept[token, k] = value


def keep_sorted(token: str, k: int, blobs: list[bytes]) -> tuple[str, int]:
    """TeraSort reduce: sort reducer `k`'s records and keep them on this worker.

    Returns the worker's address and the number of records kept.
    """
    records = sort_records(b"".join(blobs))
    _keep(token, k, np.frombuffer(records, np.uint8).reshape(-1, RECORD_BYTES))
    return get_worker().address, len(records) // RECORD_BYTES


def keep_sorted_frame(
    token: str, by: str, k: int, frames: list[pd.DataFrame]
) -> tuple[str, int]:
    """Sort-by-column reduce: sort reducer `k`'s rows by `by` and keep them here."""
    frame = pd.concat(frames).sort_values(by, kind="stable")
    _keep(token, k, frame)
    return get_worker().address, len(frame)


def _take(token: str, k: int) -> Any:
    with _kept_lock:
        return _kept.pop((token, k))


def _empty(like: Any) -> Any:
    return like


def take_outputs(
    client: Client, token: str, where: dict[int, str], K: int, empty: Any
) -> list[Future]:
    """Futures of the K sorted partitions, each on the worker that reduced it.

    `where` maps a reducer to its worker; a reducer with no records (absent)
    gets `empty`. Once every partition is taken, nothing of the run is left in
    the workers' tables (a reducer run twice kept a second copy).
    """
    parts = [
        client.submit(
            _take, token, k, workers=[where[k]], allow_other_workers=False, pure=False
        )
        if k in where
        else client.submit(_empty, empty, pure=False)
        for k in range(K)
    ]
    wait(parts)
    drop_kept(client, token)
    for k, part in enumerate(parts):
        if part.status != "finished":
            raise MapReduceTaskError(
                f"the sorted partition {k} was lost on worker {where.get(k)} before "
                f"it was taken: {part.exception()!r}"
            )
    return parts


def _drop(token: str) -> None:
    with _kept_lock:
        for key in [key for key in _kept if key[0] == token]:
            del _kept[key]


def drop_kept(client: Client, token: str) -> None:
    """Forget a failed run's kept partitions on every worker."""
    client.run(_drop, token)


def _summarize(part: Any, by: str | None) -> RecordSummary:
    if by is not None:
        return summarize_frame(part, by)
    if isinstance(part, bytes):  # an input file
        part = np.frombuffer(pickle.loads(part), np.uint8).reshape(-1, RECORD_BYTES)
    return summarize_records(part)


def summarize(
    client: Client, parts: Sequence[Any], by: str | None = None
) -> list[RecordSummary]:
    """Summarize partitions where they are (futures or delayed objects).

    Input files or sorted outputs of records, or frames sorted by column `by`.
    """
    return client.gather(
        client.compute([dask.delayed(_summarize)(part, by) for part in parts])
    )


def _sample(frame: pd.DataFrame, by: str, size: int) -> np.ndarray:
    values = frame[by].to_numpy()
    if len(values) > size:
        values = values[np.linspace(0, len(values) - 1, size).astype(np.int64)]
    return values


def frame_splitters(client: Client, parts: Sequence[Any], by: str, K: int) -> Any:
    """K - 1 values of column `by` cutting a sample of the rows into K ranges."""
    samples = client.compute(
        [dask.delayed(_sample)(part, by, 100 * K) for part in parts], sync=True
    )
    return splitters_of(np.concatenate(samples), K)


def frame_output(partitions: list[Future], meta: pd.DataFrame) -> Any:
    """Return the sorted partitions as one dask.dataframe (they stay put)."""
    import dask.dataframe as dd

    return dd.from_delayed(partitions, meta=meta, verify_meta=False)
