"""Execute MapReduce on Dask workers (mapreduce's only Dask module).

Stages, each pinned (``workers=[address], allow_other_workers=False``, keys under
one job prefix): map every file on each node that stores it; once the nodes that
finished can stand in for the rest (``K - tolerance`` of them), give the others a
little slack and cancel them cooperatively; plan the shuffle on the maps that
finished; pack frames on their senders; deliver (unicast or forwarded along the
receivers); unpack on each receiver with its own map outputs; reduce. The plan
decides what is sent; this module only carries it out and measures it.
"""

from __future__ import annotations

import contextlib
import math
import pickle
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import CancelledError
from typing import Any

import numpy as np
from distributed import Client, Future, KilledWorker, wait

from coded.runtime import client_for_call
from coded.runtime.interface import cancel_signal, wake_waits
from mapreduce._coding import EncodedPacket, build_packet, decode_received
from mapreduce._errors import MapReduceTaskError, NotEnoughMappersError
from mapreduce._network import FRAME_HEADER_BYTES, frames_of
from mapreduce._placement import Placement
from mapreduce._plan import Packet, ShufflePlan, plan_shuffle, verify_plan
from mapreduce._records import MapReduceRecord, MapReduceResult, plan_record_fields

__all__ = ["collection_files", "execute_mapreduce", "to_output"]

Values = tuple[bytes, ...]  # one map output: a pickled list of pairs per reducer
_POLL_SECONDS = 0.2  # a wait returns as soon as a task finishes
_LIVENESS_SECONDS = 1.0  # asking the scheduler for its workers is a round trip
_CANCEL_EVERY = 64  # pairs between two looks at the cancel signal
_MIN_GRACE_SECONDS = 0.5  # task dispatch noise; short next to a real map stage

# ----------------------------------------------------------------- worker side

_seconds_lock = threading.Lock()
_seconds: dict[tuple[str, int, str], float] = defaultdict(float)


def _add_seconds(prefix: str, node: int, stage: str, seconds: float) -> None:
    with _seconds_lock:
        _seconds[prefix, node, stage] += seconds


def _pop_seconds(prefix: str, dask_worker: Any = None) -> dict:
    with _seconds_lock:
        keys = [key for key in _seconds if key[0] == prefix]
        return {key[1:]: _seconds.pop(key) for key in keys}


def _check_reducer(node: object, key: Hashable, K: int) -> int:
    if (
        isinstance(node, bool)
        or not isinstance(node, (int, np.integer))
        or not 0 <= node < K
    ):
        raise ValueError(
            f"`partition` returned {node!r} for key {key!r}; it must return an int "
            f"in range(K), K={K}."
        )
    return int(node)


def _combine(pairs: list, combine_fn: Callable) -> list:
    groups: dict[Hashable, list] = defaultdict(list)
    for key, value in pairs:
        groups[key].append(value)
    return [(key, combine_fn(key, values)) for key, values in groups.items()]


def _map_task(
    map_fn: Callable,
    partition: Callable,
    combine_fn: Callable | None,
    file: Any,
    K: int,
    signal: str,
) -> Values | None:
    """Map one file into K pickled buckets; None if cancelled on the way."""
    cancelled = cancel_signal(signal)
    if cancelled.is_set():
        return None
    buckets: list[list] = [[] for _ in range(K)]
    for count, (key, value) in enumerate(map_fn(file)):
        if count % _CANCEL_EVERY == _CANCEL_EVERY - 1 and cancelled.is_set():
            return None
        buckets[_check_reducer(partition(key, K), key, K)].append((key, value))
    if combine_fn is not None:
        buckets = [_combine(bucket, combine_fn) for bucket in buckets]
    return tuple(pickle.dumps(bucket, protocol=5) for bucket in buckets)


def _encode_frame(packets: tuple[Packet, ...], maps: dict[int, Values]) -> np.ndarray:
    """One frame: int64 header (count, segment lengths), then the payloads."""
    encoded = [build_packet(packet, maps) for packet in packets]
    header = [len(encoded), *(n for lengths, _ in encoded for n in lengths)]
    return np.concatenate(
        [np.asarray(header, dtype=np.int64).view(np.uint8)]
        + [payload for _, payload in encoded]
    )


def _pack(
    frames: list[tuple[int, tuple[Packet, ...]]],
    maps: dict[int, Values],
    prefix: str,
    node: int,
) -> dict[int, np.ndarray]:
    """Encode every frame this node sends: frame id -> frame."""
    began = time.perf_counter()
    out = {i: _encode_frame(packets, maps) for i, packets in frames}
    _add_seconds(prefix, node, "pack", time.perf_counter() - began)
    return out


def _bundle(held: list[dict[int, np.ndarray]], ids: list[int]) -> np.ndarray:
    """Concatenate the frames `ids` (held on this node) for one peer."""
    frames: dict[int, np.ndarray] = {}
    for part in held:
        frames.update(part)
    return np.concatenate([frames[i] for i in ids])


def _frame_bytes(packets: tuple[Packet, ...], data: np.ndarray, offset: int) -> int:
    entries = 1 + sum(len(p.segments) for p in packets)
    end = offset + FRAME_HEADER_BYTES * entries
    header = np.frombuffer(data[offset:end].tobytes(), np.int64)
    position, size = 1, end - offset
    for packet in packets:
        size += int(max(header[position : position + len(packet.segments)], default=0))
        position += len(packet.segments)
    return size


def _receive(
    bundles: list[tuple[list[int], list[tuple[Packet, ...]], np.ndarray]],
) -> dict[int, np.ndarray]:
    """Split the bundles a node received into frames: frame id -> frame."""
    frames = {}
    for ids, packet_lists, data in bundles:
        offset = 0
        for i, packets in zip(ids, packet_lists, strict=True):
            size = _frame_bytes(packets, data, offset)
            frames[i] = data[offset : offset + size]
            offset += size
    return frames


def _unframe(
    packets: tuple[Packet, ...], frame: np.ndarray
) -> list[tuple[Packet, EncodedPacket]]:
    entries = 1 + sum(len(p.segments) for p in packets)
    header = np.frombuffer(frame[: FRAME_HEADER_BYTES * entries].tobytes(), np.int64)
    position, offset, out = 1, FRAME_HEADER_BYTES * entries, []
    for packet in packets:
        count = len(packet.segments)
        lengths = tuple(int(n) for n in header[position : position + count])
        size = max(lengths, default=0)
        out.append((packet, (lengths, frame[offset : offset + size])))
        position, offset = position + count, offset + size
    return out


def _unpack(
    k: int,
    held: list[dict[int, np.ndarray]],
    frames: list[tuple[int, tuple[Packet, ...]]],
    maps: dict[int, Values],
    prefix: str,
) -> dict[int, bytes]:
    began = time.perf_counter()
    data: dict[int, np.ndarray] = {}
    for part in held:
        data.update(part)
    received = [entry for i, packets in frames for entry in _unframe(packets, data[i])]
    decoded = decode_received(k, received, maps)
    _add_seconds(prefix, k, "unpack", time.perf_counter() - began)
    return decoded


def _pick(values: Values, k: int) -> bytes:
    return values[k]


def _sorted_items(groups: dict) -> list:
    try:
        return sorted(groups.items(), key=lambda item: item[0])
    except TypeError:
        return list(groups.items())


def _reduce_task(
    k: int,
    reduce_fn: Callable,
    maps: dict[int, Values],
    received: dict[int, bytes],
    N: int,
) -> bytes:
    values = {f: v[k] for f, v in maps.items()} | received
    missing = sorted(set(range(N)) - set(values))
    if missing:
        raise RuntimeError(f"reducer {k} has no value of files {missing[:10]}.")
    groups: dict[Hashable, list[Any]] = defaultdict(list)
    for f in range(N):
        for key, value in pickle.loads(values[f]):
            groups[key].append(value)
    items = [(key, reduce_fn(key, vals)) for key, vals in _sorted_items(groups)]
    return pickle.dumps(items, protocol=5)


def _value_lengths(maps: dict[int, Values], files: list[int]) -> dict[int, list[int]]:
    return {f: [len(v) for v in maps[f]] for f in files}


def _rounds(frames, delivery: str) -> list[dict[tuple[int, int], list[int]]]:
    """Per round, (source, target) -> ids of the frames that hop between them."""
    hops = [frame.hops(delivery) for frame in frames]
    count = 1 if delivery == "unicast" else max((len(h) for h in hops), default=0)
    rounds: list[dict[tuple[int, int], list[int]]] = [
        defaultdict(list) for _ in range(count)
    ]
    for i, frame_hops in enumerate(hops):
        for h, pair in enumerate(frame_hops):
            rounds[0 if delivery == "unicast" else h][pair].append(i)
    return rounds


def _transfers(prefix: str, dask_worker: Any = None) -> list[tuple[str, str, int]]:
    """(peer, key, bytes) of every job key this worker fetched from a peer."""
    return [
        (entry["who"], str(key), nbytes)
        for entry in dask_worker.transfer_incoming_log
        for key, nbytes in entry["keys"].items()
        if str(key).startswith(prefix)
    ]


# ----------------------------------------------------------------- client side


def _raise_failure(future: Future, stage: str, where: str) -> None:
    error = future.exception()
    raise MapReduceTaskError(f"{stage} failed {where}: {error!r}") from error


class _Job:
    """One job on one client: pinned submission under a unique key prefix."""

    def __init__(self, dask: Client, placement: Placement, options: dict) -> None:
        K = placement.K
        addresses = sorted(dask.nthreads())
        if len(addresses) < K:
            raise ValueError(
                f"the client must have at least K={K} workers, got {len(addresses)}."
            )
        self.dask, self.placement, self.addresses = dask, placement, addresses[:K]
        self.options = options
        self.prefix = f"mr-{uuid.uuid4().hex[:10]}-"
        self.maps: dict[tuple[int, int], Future] = {}
        self.stored: tuple[frozenset[int], ...] = placement.storers
        self.lost: set[int] = set()
        self.stragglers: set[int] = set()
        self.cancelled_maps = 0
        self._checked_at = 0.0

    # -- submission and liveness

    def submit(self, fn: Callable, *args: Any, key: str, node: int) -> Future:
        return self.dask.submit(
            fn,
            *args,
            key=self.prefix + key,
            workers=[self.addresses[node]],
            allow_other_workers=False,
            pure=False,
        )

    def newly_lost(self) -> set[int]:
        """Nodes whose worker left the cluster since the last look.

        Asked only when a stage made no progress, at most once a second.
        """
        now = time.perf_counter()
        if now - self._checked_at < _LIVENESS_SECONDS:
            return set()
        self._checked_at = now
        alive = set(self.dask.nthreads())
        gone = {k for k, a in enumerate(self.addresses) if a not in alive}
        new = gone - self.lost
        self.lost |= new
        return new

    def wait_stage(self, futures: dict[Any, Future], stage: str, where: Callable):
        """Wait for `futures` at most `timeout` s; fail fast on errors or lost nodes."""
        deadline = time.perf_counter() + self.options["timeout"]
        pending = list(futures.items())
        with self.progress(stage, len(pending)) as bar:
            while pending:
                self._poll([f for _, f in pending], deadline, stage, len(futures))
                still = []
                for label, future in pending:
                    if future.status == "error":
                        _raise_failure(future, stage, where(label))
                    if future.status == "cancelled":
                        self.newly_lost()
                        raise MapReduceTaskError(
                            f"{stage}: a task {where(label)} was cancelled (nodes "
                            f"lost: {sorted(self.lost)}); no output is returned."
                        )
                    if future.status != "finished":
                        still.append((label, future))
                progressed = len(pending) - len(still)
                bar.update(progressed)
                pending = still
                if pending and not progressed and self.newly_lost():
                    raise MapReduceTaskError(
                        f"{stage}: nodes {sorted(self.lost)} (workers "
                        f"{[self.addresses[k] for k in sorted(self.lost)]}) were lost "
                        "after the map stage; no output is returned."
                    )

    def _poll(self, futures: list[Future], deadline: float, stage: str, total: int):
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            raise MapReduceTaskError(
                f"{stage}: {len(futures)} of {total} tasks did not finish within "
                f"timeout={self.options['timeout']} s."
            )
        with contextlib.suppress(TimeoutError, CancelledError):  # lost: seen next
            wait(
                futures,
                timeout=min(_POLL_SECONDS, remaining),
                return_when="FIRST_COMPLETED",
            )

    def progress(self, stage: str, total: int):
        from tqdm.auto import tqdm

        return tqdm(
            total=total, desc=stage, unit="task", disable=not self.options["progress"]
        )

    # -- map stage

    def scatter_files(self, files: Sequence[Any]) -> dict[tuple[int, int], Any]:
        """Put each file on its storers (futures of a Dask collection move there).

        A node whose worker dies while its files are sent counts as lost (up to
        the placement's tolerance; beyond it, :class:`NotEnoughMappersError`).
        """
        inputs = {}
        for k in range(self.placement.K):
            local = self.placement.files_of(k)
            if local and isinstance(files[0], Future):
                inputs |= {(f, k): files[f] for f in local}
            elif local and (data := self.scatter(k, [files[f] for f in local])):
                inputs |= dict(zip(((f, k) for f in local), data, strict=True))
        self._check_coverage()
        return inputs

    def scatter(self, k: int, data: list) -> list[Future] | None:
        """Scatter `data` to node `k`; None (and `k` lost) if its worker died."""
        try:
            return self.dask.scatter(data, workers=[self.addresses[k]], hash=False)
        except (OSError, KeyError):  # CommClosedError, or a worker already gone
            self.lost.add(k)
            return None

    def run_maps(self, files: Sequence[Any], map_fn: Callable, partition: Callable):
        K = self.placement.K
        inputs = self.scatter_files(files)  # before any map starts: a fair start
        position = {(f, k): self.placement.files_of(k).index(f) for f, k in inputs}
        for (f, k), file in sorted(inputs.items(), key=lambda i: position[i[0]]):
            self.maps[f, k] = self.submit(
                _map_task,
                map_fn,
                partition,
                self.options["combine_fn"],
                file,
                K,
                f"{self.prefix}{k}",
                key=f"map-{f}-{k}",
                node=k,
            )
        finished = self._await_maps()
        self.stored = tuple(
            frozenset(k for k in nodes if (f, k) in finished and k not in self.lost)
            for f, nodes in enumerate(self.placement.storers)
        )

    def _await_maps(self) -> set[tuple[int, int]]:
        """Wait until every node is done, or enough are and the rest are slow."""
        start = time.perf_counter()
        deadline = start + self.options["timeout"]
        pending, finished = dict(self.maps), set()
        need = self.placement.K - self.placement.tolerance
        quorum_at = None
        with self.progress("map", len(pending)) as bar:
            while pending:
                self._poll(list(pending.values()), deadline, "map", len(self.maps))
                progressed = self._collect_maps(pending, finished)
                bar.update(progressed)
                if not progressed and self.newly_lost():
                    self._check_coverage()
                    for fk in [fk for fk in pending if fk[1] in self.lost]:
                        del pending[fk]
                busy = {k for _, k in pending}
                if (
                    quorum_at is None
                    and self.placement.K - len(busy | self.lost) >= need
                ):
                    quorum_at = time.perf_counter()
                if (
                    busy
                    and quorum_at is not None
                    and not self._worth_waiting(busy, finished, start, quorum_at)
                ):
                    self._cancel(pending)
                    break
        return finished

    def _worth_waiting(
        self, busy: set[int], finished: set, start: float, quorum_at: float
    ) -> bool:
        """Whether some busy node looks set to finish by the slack's limit.

        The limit is ``(1 + slack)`` times the time the quorum took (at least
        half a second after the quorum). A node that mapped ``m >= 1`` of its
        ``M`` files in ``t`` seconds is predicted to finish at ``t M / (m + 1)``
        (optimistic: its current map almost done); a node with no map done yet
        is waited for up to the limit.
        """
        if math.isinf(self.options["slack"]):
            return True
        now = time.perf_counter() - start
        quorum = quorum_at - start
        limit = quorum + max(self.options["slack"] * quorum, _MIN_GRACE_SECONDS)
        if now >= limit:
            return False
        for k in busy:
            total = len(self.placement.files_of(k))
            done = sum(1 for _, node in finished if node == k)
            if done == 0 or now * total / (done + 1) <= limit:
                return True
        return False

    def _collect_maps(self, pending: dict, finished: set) -> int:
        done = 0
        for (f, k), future in list(pending.items()):
            if future.status == "finished":
                finished.add((f, k))
            elif future.status == "error" and isinstance(
                future.exception(), KilledWorker
            ):
                self.lost.add(k)
                self._check_coverage()
            elif future.status == "error":
                _raise_failure(future, "map_fn", f"on file {f} at node {k}")
            else:
                continue
            del pending[f, k]
            done += 1
        return done

    def _check_coverage(self) -> None:
        for f, nodes in enumerate(self.placement.storers):
            if nodes <= self.lost:
                raise NotEnoughMappersError(
                    f"nodes {sorted(self.lost)} were lost; file {f} was stored only "
                    f"at {sorted(nodes)}, so no output can be complete (the "
                    f"placement tolerates {self.placement.tolerance} lost mappers)."
                )

    def _cancel(self, pending: dict) -> None:
        self.stragglers = {k for _, k in pending} - self.lost
        for k in self.stragglers:  # a straggler may have died since
            wake_waits(self.dask, f"{self.prefix}{k}", [self.addresses[k]])
        for future in pending.values():
            future.cancel()
        self.cancelled_maps = len(pending)

    # -- shuffle and reduce

    def local_maps(self, k: int, files) -> dict[int, Future]:
        """Node `k`'s own map outputs of `files` (never fetched from a peer)."""
        return {f: self.maps[f, k] for f in sorted(set(files))}

    def files_of(self, k: int) -> list[int]:
        return [f for f, nodes in enumerate(self.stored) if k in nodes]

    def run_shuffle(self, plan: ShufflePlan) -> dict[int, Future]:
        """Pack on senders, move bundles round by round, unpack on receivers.

        Frames that go from one node to another in the same round travel as one
        bundle (one transfer); unicast is one round, forwarding one round per
        hop of the longest chain.
        """
        frames = frames_of(plan)
        delivery = self.options["delivery"]
        held: dict[int, list[Future]] = defaultdict(list)
        for s in sorted({frame.sender for frame in frames}):
            mine = [(i, f.packets) for i, f in enumerate(frames) if f.sender == s]
            files = {seg.file for _, ps in mine for p in ps for seg in p.segments}
            held[s].append(
                self.submit(
                    _pack,
                    mine,
                    self.local_maps(s, files),
                    self.prefix,
                    s,
                    key=f"pack-{s}",
                    node=s,
                )
            )
        for h, pairs in enumerate(_rounds(frames, delivery)):
            incoming: dict[int, list] = defaultdict(list)
            for (src, dst), ids in sorted(pairs.items()):
                bundle = self.submit(
                    _bundle,
                    list(held[src]),
                    ids,
                    key=f"bundle-{h}-{src}-{dst}",
                    node=src,
                )
                incoming[dst].append((ids, [frames[i].packets for i in ids], bundle))
            for dst, items in sorted(incoming.items()):
                held[dst].append(
                    self.submit(_receive, items, key=f"inbox-{h}-{dst}", node=dst)
                )
        decoded = {
            k: self.submit(
                _unpack,
                k,
                list(held[k]),
                [(i, f.packets) for i, f in enumerate(frames) if k in f.receivers],
                self.local_maps(k, self.files_of(k)),
                self.prefix,
                key=f"unpack-{k}",
                node=k,
            )
            for k in plan.receivers
        }
        self.wait_stage(decoded, "shuffle", lambda k: f"at node {k}")
        return decoded

    def run_reduce(self, reduce_fn: Callable, decoded: dict[int, Future]) -> list:
        K, N = self.placement.K, self.placement.N
        hosts = sorted(set(range(K)) - self.lost)
        reduced = {}
        for k in range(K):
            host = k if k not in self.lost else hosts[k % len(hosts)]
            received = decoded[k] if k in decoded else self.pick_values(k, host)
            reduced[k] = self.submit(
                _reduce_task,
                k,
                reduce_fn,
                self.local_maps(host, self.files_of(host)),
                received,
                N,
                key=f"reduce-{k}",
                node=host,
            )
        host_of = {
            k: k if k not in self.lost else hosts[k % len(hosts)] for k in reduced
        }
        self.wait_stage(
            reduced, "reduce_fn", lambda k: f"at node {host_of[k]} (reducer {k})"
        )
        return [
            pickle.loads(items) for items in self.dask.gather(list(reduced.values()))
        ]

    def pick_values(self, k: int, host: int) -> dict[int, Future]:
        """Reducer `k`'s values that `host` lacks, each from one holder (uncoded)."""
        return {
            f: self.submit(
                _pick, self.maps[f, min(nodes)], k, key=f"pick-{f}-{k}", node=min(nodes)
            )
            for f, nodes in enumerate(self.stored)
            if host not in nodes
        }

    # -- measurement

    def measure(self, plan: ShufflePlan) -> dict[str, Any]:
        """Intermediate, payload and frame bytes; per-node wire bytes; CPU seconds."""
        sized = {}
        for k in sorted({min(nodes) for nodes in self.stored}):
            files = [f for f in self.files_of(k) if min(self.stored[f]) == k]
            sized[k] = self.submit(
                _value_lengths,
                self.local_maps(k, files),
                files,
                key=f"sizes-{k}",
                node=k,
            )
        self.wait_stage(sized, "measurement", lambda k: f"at node {k}")
        lengths = {
            f: v
            for part in self.dask.gather(list(sized.values()))
            for f, v in part.items()
        }
        frames = frames_of(plan)
        payload = sum(frame.nbytes(lengths) - frame.header_bytes for frame in frames)
        live = [a for k, a in enumerate(self.addresses) if k not in self.lost]
        node_of = {a: k for k, a in enumerate(self.addresses)}
        K = self.placement.K
        up, down, origin = [0] * K, [0] * K, [0] * K
        for address, entries in self.dask.run(
            _transfers, self.prefix, workers=live
        ).items():
            for peer, key, nbytes in entries:
                down[node_of[address]] += nbytes
                if peer in node_of:
                    up[node_of[peer]] += nbytes
                    if key.startswith(self.prefix + "bundle-0-"):
                        origin[node_of[peer]] += nbytes
        seconds: dict = {}
        for part in self.dask.run(_pop_seconds, self.prefix, workers=live).values():
            seconds |= part
        busiest = {
            stage: max(
                (s for (_, name), s in seconds.items() if name == stage), default=0.0
            )
            for stage in ("pack", "unpack")
        }
        return {
            "intermediate_bytes": sum(sum(v) for v in lengths.values()),
            "packet_bytes": payload,
            "frame_header_bytes": sum(frame.header_bytes for frame in frames),
            "upload_bytes": tuple(up),
            "download_bytes": tuple(down),
            "origin_upload_bytes": tuple(origin),
            "pack_seconds": busiest["pack"],
            "unpack_seconds": busiest["unpack"],
        }

    def effective_plan(self, planned: ShufflePlan) -> ShufflePlan:
        """Return the planned shuffle, or a new one on the maps that finished."""
        reducers = tuple(k for k in range(self.placement.K) if k not in self.lost)
        if self.stored == self.placement.storers and not self.lost:
            return planned
        placement = Placement(
            K=self.placement.K,
            storers=self.stored,
            name=f"{self.placement.name} (finished maps)",
        )
        return verify_plan(
            plan_shuffle(placement, coded=planned.is_coded, reducers=reducers)
        )


def execute_mapreduce(
    files: Sequence[Any],
    map_fn: Callable,
    reduce_fn: Callable,
    *,
    plan: ShufflePlan,
    partition: Callable,
    client: Client | None,
    options: dict[str, Any],
) -> MapReduceResult:
    """Run `plan` (already verified) on Dask and return the output and record.

    Parameters
    ----------
    files : sequence
        Input files (objects, or futures of a Dask collection's partitions),
        ``len(files) == plan.placement.N``.
    map_fn, reduce_fn, partition : callable
        As in :func:`mapreduce.run_mapreduce`.
    plan : ShufflePlan
        A verified plan of the whole placement (replanned on the maps that
        finished when stragglers were cut or nodes lost).
    client : distributed.Client or None
        Client with at least ``K`` workers (the first ``K`` by address are
        used), or None for an embedded cluster.
    options : dict
        ``timeout``, ``slack``, ``delivery``, ``combine_fn``, ``progress`` and
        ``output`` as validated by :func:`mapreduce.run_mapreduce`.

    Returns
    -------
    MapReduceResult
        `map_seconds` includes placing the input files on their storers.
    """
    with client_for_call(client, None, plan.placement.K) as dask:
        job = _Job(dask, plan.placement, options)
        start = time.perf_counter()
        job.run_maps(files, map_fn, partition)
        map_end = time.perf_counter()
        ran = job.effective_plan(plan)
        decoded = job.run_shuffle(ran)
        shuffle_end = time.perf_counter()
        outputs = job.run_reduce(reduce_fn, decoded)
        reduce_end = time.perf_counter()
        measured = job.measure(ran)
    record = MapReduceRecord(
        **plan_record_fields(ran),
        **measured,
        delivery=options["delivery"],
        tolerance=plan.placement.tolerance,
        stragglers=tuple(sorted(job.stragglers)),
        lost_nodes=tuple(sorted(job.lost)),
        cancelled_maps=job.cancelled_maps,
        map_seconds=map_end - start,
        shuffle_seconds=shuffle_end - map_end,
        reduce_seconds=reduce_end - shuffle_end,
    )
    output = to_output(outputs, options["output"])
    return MapReduceResult(output=output, record=record)


def to_output(outputs: list[list[tuple[Hashable, Any]]], kind: str) -> Any:
    """Return the reducers' ``(key, value)`` lists as a dict, bag or dataframe."""
    if kind == "dict":
        return {key: value for items in outputs for key, value in items}
    if kind == "bag":
        import dask.bag as db

        return db.from_delayed([_delayed_list(items) for items in outputs])
    import dask.dataframe as dd
    import pandas as pd

    frames = [
        pd.DataFrame({"key": [k for k, _ in items], "value": [v for _, v in items]})
        for items in outputs
    ]
    dtypes = pd.concat(frames, ignore_index=True).dtypes.to_dict()
    parts = [_delayed_list(frame.astype(dtypes)) for frame in frames]
    meta = frames[0].astype(dtypes).iloc[:0]
    return dd.from_delayed(parts, meta=meta, verify_meta=False)


def _delayed_list(items: list) -> Any:
    import dask

    return dask.delayed(items, traverse=False)


def collection_files(collection: Any, N: int, client: Client | None) -> list[Any]:
    """Partitions of a ``dask.bag``/``dask.dataframe`` as `N` files.

    Repartitioned to `N` partitions when needed. With a client the partitions
    are computed on its cluster and returned as futures (they move to their
    storers there); without one they are computed here.
    """
    import dask

    if collection.npartitions != N:
        collection = collection.repartition(npartitions=N)
    parts = collection.to_delayed()
    if client is not None:
        return client.compute(parts)
    return list(dask.compute(*parts, scheduler="sync"))
