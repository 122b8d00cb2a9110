"""Execute a verified MapReduce shuffle plan on Dask workers (mapreduce's runtime).

Stages, each pinned (``workers=[address], allow_other_workers=False``, explicit
keys): map every file on each node that stores it; build every packet on its
sender; decode on each receiver from its packets and its own map outputs; reduce.
Only the packets cross between workers. The plan decides what is sent; this module
only carries it out and measures it.
"""

from __future__ import annotations

import pickle
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any

from distributed import Client, Future, wait

from coded.runtime._cluster import client_for_call
from mapreduce._coding import build_packet, decode_received, packet_payload_bytes
from mapreduce._errors import MapReduceTaskError
from mapreduce._plan import ShufflePlan
from mapreduce._records import MapReduceRecord, MapReduceResult, plan_record_fields

__all__ = ["execute_mapreduce"]

Values = tuple[bytes, ...]  # one map output: a pickled list of pairs per reducer


def _map_task(map_fn: Callable, partition: Callable, file: bytes, K: int) -> Values:
    buckets: list[list[tuple[Hashable, Any]]] = [[] for _ in range(K)]
    for key, value in map_fn(pickle.loads(file)):
        buckets[partition(key, K)].append((key, value))
    return tuple(pickle.dumps(bucket, protocol=5) for bucket in buckets)


def _sorted_items(groups: dict) -> list:
    try:
        return sorted(groups.items(), key=lambda item: item[0])
    except TypeError:
        return list(groups.items())


def _reduce_task(
    k: int,
    reduce_fn: Callable,
    maps: dict[int, Values],
    decoded: dict[int, bytes],
    N: int,
) -> bytes:
    values = {f: v[k] for f, v in maps.items()} | decoded
    missing = sorted(set(range(N)) - set(values))
    if missing:
        raise RuntimeError(f"reducer {k} has no value of files {missing[:10]}.")
    groups: dict[Hashable, list[Any]] = defaultdict(list)
    for f in range(N):
        for key, value in pickle.loads(values[f]):
            groups[key].append(value)
    items = [(key, reduce_fn(key, vals)) for key, vals in _sorted_items(groups)]
    return pickle.dumps(items, protocol=5)


def _transferred_bytes(prefix: str, dask_worker: Any = None) -> int:
    """Bytes of this job's keys this worker fetched from peers (Dask's log)."""
    return sum(
        nbytes
        for entry in dask_worker.transfer_incoming_log
        for key, nbytes in entry["keys"].items()
        if str(key).startswith(prefix)
    )


def _raise_failures(futures: dict[Any, Future], stage: str, what: Callable) -> None:
    for label, future in futures.items():
        if future.status == "error":
            error = future.exception()
            raise MapReduceTaskError(f"{stage} failed {what(label)}: {error!r}") from (
                error
            )
        if future.status != "finished":
            raise MapReduceTaskError(f"{stage} {what(label)} ended as {future.status}.")


class _Job:
    """One job on one client: pinned submission under a unique key prefix."""

    def __init__(self, dask: Client, plan: ShufflePlan, timeout: float) -> None:
        K = plan.placement.K
        addresses = sorted(dask.nthreads())
        if len(addresses) < K:
            raise ValueError(
                f"the client must have at least K={K} workers, got {len(addresses)}."
            )
        self.dask, self.plan, self.addresses = dask, plan, addresses[:K]
        self.prefix = f"mr-{uuid.uuid4().hex[:10]}-"
        self.maps: dict[tuple[int, int], Future] = {}
        self.timeout = timeout

    def wait(self, futures: Sequence[Future], stage: str) -> None:
        """Wait for `futures`, at most `timeout` seconds: never hang on a lost node."""
        try:
            wait(list(futures), timeout=self.timeout)
        except TimeoutError as exc:
            late = sum(future.status == "pending" for future in futures)
            raise MapReduceTaskError(
                f"{stage}: {late} of {len(futures)} tasks did not finish "
                f"within timeout={self.timeout} s."
            ) from exc

    def submit(self, fn: Callable, *args: Any, key: str, node: int) -> Future:
        return self.dask.submit(
            fn,
            *args,
            key=self.prefix + key,
            workers=[self.addresses[node]],
            allow_other_workers=False,
            pure=False,
        )

    def local_maps(self, k: int, files: Iterable[int]) -> dict[int, Future]:
        """Node `k`'s own map outputs of `files` (never fetched from a peer)."""
        return {f: self.maps[f, k] for f in sorted(set(files))}

    def run_maps(self, files: Sequence[Any], map_fn: Callable, partition: Callable):
        placement = self.plan.placement
        for k, address in enumerate(self.addresses):
            local = placement.files_of(k)
            data = self.dask.scatter(
                [pickle.dumps(files[f], protocol=5) for f in local],
                workers=[address],
                hash=False,
            )
            for f, future in zip(local, data, strict=True):
                self.maps[f, k] = self.submit(
                    _map_task,
                    map_fn,
                    partition,
                    future,
                    placement.K,
                    key=f"map-{f}-{k}",
                    node=k,
                )
        self.wait(list(self.maps.values()), "map")
        _raise_failures(
            self.maps, "map_fn", lambda fk: f"on file {fk[0]} at node {fk[1]}"
        )

    def run_shuffle(self) -> list[Future]:
        packets = self.plan.packets
        encoded = [
            self.submit(
                build_packet,
                packet,
                self.local_maps(packet.sender, (s.file for s in packet.segments)),
                key=f"packet-{i}",
                node=packet.sender,
            )
            for i, packet in enumerate(packets)
        ]
        inbox: dict[int, list] = defaultdict(list)
        for packet, future in zip(packets, encoded, strict=True):
            for k in packet.receivers:
                inbox[k].append((packet, future))
        decoded = [
            self.submit(
                decode_received,
                k,
                inbox[k],
                self.local_maps(k, self.plan.placement.files_of(k)),
                key=f"decode-{k}",
                node=k,
            )
            for k in range(len(self.addresses))
        ]
        self.wait(decoded, "shuffle")
        _raise_failures(dict(enumerate(decoded)), "decoding", lambda k: f"at node {k}")
        return decoded

    def run_reduce(self, reduce_fn: Callable, decoded: list[Future]) -> list:
        placement = self.plan.placement
        reduced = [
            self.submit(
                _reduce_task,
                k,
                reduce_fn,
                self.local_maps(k, placement.files_of(k)),
                decoded[k],
                placement.N,
                key=f"reduce-{k}",
                node=k,
            )
            for k in range(placement.K)
        ]
        self.wait(reduced, "reduce")
        _raise_failures(dict(enumerate(reduced)), "reduce_fn", lambda k: f"at node {k}")
        return [pickle.loads(items) for items in self.dask.gather(reduced)]

    def measure_bytes(self) -> dict[str, int]:
        """Intermediate and payload bytes (from value sizes) and wire bytes.

        Only value lengths travel to the client; packet payloads follow from the
        plan (fetching them again could itself move bytes between workers).
        """
        placement = self.plan.placement
        sized = [
            self.submit(
                _value_lengths,
                {
                    f: self.maps[f, k]
                    for f in placement.files_of(k)
                    if min(placement.storers[f]) == k
                },
                key=f"sizes-{k}",
                node=k,
            )
            for k in range(placement.K)
        ]
        self.wait(sized, "measurement")
        wire = self.dask.run(_transferred_bytes, self.prefix)
        lengths = {f: v for part in self.dask.gather(sized) for f, v in part.items()}
        return {
            "intermediate_bytes": sum(sum(v) for v in lengths.values()),
            "packet_bytes": sum(
                packet_payload_bytes(p, lengths) for p in self.plan.packets
            ),
            "wire_bytes": sum(wire.values()),
        }


def _value_lengths(maps: dict[int, Values]) -> dict[int, list[int]]:
    return {f: [len(v) for v in values] for f, values in maps.items()}


def execute_mapreduce(
    files: Sequence[Any],
    map_fn: Callable,
    reduce_fn: Callable,
    *,
    plan: ShufflePlan,
    partition: Callable,
    client: Client | None,
    timeout: float,
) -> MapReduceResult:
    """Run `plan` (already verified) on Dask and return the output and record.

    Parameters
    ----------
    files : sequence
        Input files, ``len(files) == plan.placement.N``.
    map_fn, reduce_fn, partition : callable
        As in :func:`mapreduce.run_mapreduce`.
    plan : ShufflePlan
        A verified plan.
    client : distributed.Client or None
        Client with at least ``K`` workers (the first ``K`` by address are
        used), or None for an embedded cluster.
    timeout : float
        Seconds each stage may take.

    Returns
    -------
    MapReduceResult
        `map_seconds` includes placing the input files on their storers.
    """
    with client_for_call(client, None, plan.placement.K) as dask:
        job = _Job(dask, plan, timeout)
        start = time.perf_counter()
        job.run_maps(files, map_fn, partition)
        map_end = time.perf_counter()
        decoded = job.run_shuffle()
        shuffle_end = time.perf_counter()
        outputs = job.run_reduce(reduce_fn, decoded)
        reduce_end = time.perf_counter()
        measured = job.measure_bytes()
    record = MapReduceRecord(
        **plan_record_fields(plan),
        **measured,
        map_seconds=map_end - start,
        shuffle_seconds=shuffle_end - map_end,
        reduce_seconds=reduce_end - shuffle_end,
    )
    output = {key: value for items in outputs for key, value in items}
    return MapReduceResult(output=output, record=record)
