"""Execute MapReduce on Dask workers (mapreduce's only Dask module).

Tasks are pinned (``workers=[address], allow_other_workers=False``, keys under
one job prefix). A Dask collection's partitions are pickled where computed,
grouped or cut into the placement's files, and copied to every node that
stores them before any map starts. Then one map task per (file, node that
stores it), mapping, combining and partitioning the file into one byte string
per reducer; one pack task per sender, building one array per (sender,
receivers) frame of the plan; one bundle per (sender, receiver) and hop, the
frames Dask moves in one transfer (selected on the sender, or relayed by a
forwarding receiver); one reduce task per reducer, taking its local map
outputs and the list of bundles sent to it, decoding and reducing. Nothing is
fetched to the client but the reducers' outputs. The pure
:class:`mapreduce._state.JobState` decides when to submit the shuffle and
whether to cut straggling maps; the plan decides what is sent; this module only
carries them out and measures them.
"""

from __future__ import annotations

import contextlib
import itertools
import pickle
import queue
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence, Sized
from concurrent.futures import CancelledError, ThreadPoolExecutor
from typing import Any

import dask
import numpy as np
from dask.highlevelgraph import HighLevelGraph, MaterializedLayer
from distributed import Client, Future, KilledWorker, wait

from coded.runtime import client_for_call
from coded.runtime.interface import cancel_signal, wake_waits
from mapreduce._coding import EncodedPacket, build_packet, decode_received
from mapreduce._emulator import Link
from mapreduce._errors import MapReduceTaskError
from mapreduce._fold import reduce_pairs
from mapreduce._network import FRAME_HEADER_BYTES, frames_of, plan_traffic
from mapreduce._options import MapReduceOptions, worker_addresses
from mapreduce._partition import partition_keys
from mapreduce._placement import Placement
from mapreduce._plan import Packet, ShufflePlan
from mapreduce._records import MapReduceRecord, MapReduceResult, plan_record_fields
from mapreduce._state import (
    CancelMaps,
    CancelShuffle,
    Fail,
    Finish,
    JobState,
    MapDone,
    MapLost,
    NodesLost,
    ReduceDone,
    SubmitShuffle,
    TaskFailed,
    Tick,
    follow_data,
)

__all__ = ["StoredCopies", "execute_mapreduce", "to_output"]

Values = tuple[bytes, ...]  # one map output: per reducer, pickled (keys, values)
_POLL_SECONDS = 0.2  # a wait returns as soon as a task finishes
_LIVENESS_SECONDS = 1.0  # asking the scheduler for its workers is a round trip
_CANCEL_EVERY = 64  # pairs between two looks at the cancel signal
_RUN_PAIRS = 4096  # a made run up to this long is folded between two looks
_MIN_GRACE_SECONDS = 0.5  # task dispatch noise; short next to a real map stage


class StoredCopies:
    """An input file already stored on its nodes: node -> a future held there.

    Given as a file, each node maps its own copy; no map task waits for its
    input to move.

    Parameters
    ----------
    copies : dict of int to distributed.Future
        The file's copy on each node that stores it (by node index).
    """

    def __init__(self, copies: dict[int, Future]) -> None:
        self.copies = copies

    @property
    def first(self) -> Future:
        """One copy of the file (the lowest node's)."""
        return self.copies[min(self.copies)]


# ----------------------------------------------------------------- worker side

_seconds_lock = threading.Lock()
_seconds: dict[tuple[str, int, str], float] = defaultdict(float)


def _add_seconds(prefix: str, node: int, stage: str, seconds: float) -> None:
    with _seconds_lock:
        _seconds[prefix, node, stage] += seconds


def _close_job(prefix: str, dask_worker: Any = None) -> dict:
    """Forget job `prefix`'s links here; return its stage seconds."""
    with _seconds_lock:
        for key in [key for key in _links if key[0] == prefix]:
            del _links[key]
        keys = [key for key in _seconds if key[0] == prefix]
        return {key[1:]: _seconds.pop(key) for key in keys}


_links: dict[tuple[str, int, str], Link] = {}  # (job, node, "up" | "down")


def _link(prefix: str, node: int, direction: str, rate: float) -> Link:
    """Return the emulated link of `node` in one direction, for one job."""
    with _seconds_lock:
        link = _links.get((prefix, node, direction))
        if link is None:
            link = _links[prefix, node, direction] = Link(rate=rate)
        return link


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


def _map_task(
    map_runs: Callable,
    partition: Callable,
    combine_fn: Callable | None,
    file: bytes | list[bytes],
    K: int,
    signal: str,
) -> Values | None:
    """Map one (pickled) file into K pickled buckets; None if cancelled on the way.

    A file given as a list of pickled partitions is their concatenation.
    ``map_runs(file)`` gives its pairs in runs (``mapreduce._groups``).

    The combiner reduces the file's pairs by key (:func:`reduce_pairs`, folding
    them as they come when it is marked by ``fold_with``) before partitioning.
    `partition` is called once per distinct key (a key's node never changes).
    """
    cancelled = cancel_signal(signal)
    if cancelled.is_set():
        return None
    runs = _runs(map_runs(_load(file)), cancelled)
    try:
        if combine_fn is None:
            pairs = [pair for run in runs for pair in run]
            keys, values = [key for key, _ in pairs], [value for _, value in pairs]
        else:
            reduced = reduce_pairs(runs, combine_fn)
            keys, values = list(reduced), list(reduced.values())
    except _Cancelled:
        return None
    nodes = _reducer_nodes(partition, keys, K, distinct=combine_fn is not None)
    key_lists: list[list] = [[] for _ in range(K)]
    value_lists: list[list] = [[] for _ in range(K)]
    for key, value, node in zip(keys, values, nodes, strict=True):
        key_lists[node].append(key)
        value_lists[node].append(value)
    return tuple(
        pickle.dumps(bucket, protocol=5)
        for bucket in zip(key_lists, value_lists, strict=True)
    )


def _reducer_nodes(
    partition: Callable, keys: list[Hashable], K: int, distinct: bool
) -> list[int]:
    """Return the reducer node of each key, `partition` called once per distinct key.

    `distinct` says the keys are (a combined map output's), so that they need
    no deduplication.
    """
    unique = keys if distinct else list(dict.fromkeys(keys))
    found = partition_keys(partition, unique, K)
    if found and not (
        set(map(type, found)) <= {int} and 0 <= min(found) <= max(found) < K
    ):
        found = [_check_reducer(n, k, K) for k, n in zip(unique, found, strict=True)]
    if distinct:
        return found
    return list(map(dict(zip(unique, found, strict=True)).__getitem__, keys))


class _Cancelled(Exception):
    """The job cancelled a map task while it ran."""


def _runs(runs: Iterable[Iterable], cancelled: threading.Event) -> Iterator[Iterable]:
    """Yield the runs of pairs, the cancel signal looked at before each.

    A run that is a sized collection of at most `_RUN_PAIRS` pairs (already
    made: one input's pairs) is yielded as it is; any other is taken
    `_CANCEL_EVERY` pairs at a time (``islice``: no Python step per pair), so
    that a long or slow run still sees the signal.
    """
    for run in runs:
        if isinstance(run, Sized) and len(run) <= _RUN_PAIRS:
            if cancelled.is_set():
                raise _Cancelled
            yield run
            continue
        produced = iter(run)
        while chunk := list(itertools.islice(produced, _CANCEL_EVERY)):
            if cancelled.is_set():
                raise _Cancelled
            yield chunk


def _load(file: bytes | list[bytes]) -> Any:
    """Unpickle an input file: one partition, or the concatenation of several."""
    if isinstance(file, bytes):
        return pickle.loads(file)
    parts = [pickle.loads(part) for part in file]
    if len(parts) == 1:
        return parts[0]
    if hasattr(parts[0], "iloc"):  # pandas partitions of a dask.dataframe
        import pandas as pd

        return pd.concat(parts)
    return [item for part in parts for item in part]


def _piece(part: bytes, j: int, n: int) -> bytes:
    """Piece `j` of `n` consecutive, near-equal pieces of a pickled partition."""
    items = pickle.loads(part)
    cut = slice(j * len(items) // n, (j + 1) * len(items) // n)
    return _dumps(items.iloc[cut] if hasattr(items, "iloc") else list(items)[cut])


def _copy(parts: list[bytes]) -> list[bytes]:
    return parts


def _dumps(file: Any) -> bytes:
    """Pickle an input file, so that it moves between workers as one byte string.

    A list of many small objects (lines of text) moves far slower as it is.
    """
    return pickle.dumps(file, protocol=5)


def _encode_frame(packets: tuple[Packet, ...], maps: dict[int, Values]) -> np.ndarray:
    """One frame: int64 header (count, segment lengths), then the payloads."""
    encoded = [build_packet(packet, maps) for packet in packets]
    header = [len(encoded), *(n for lengths, _ in encoded for n in lengths)]
    return np.concatenate(
        [np.asarray(header, dtype=np.int64).view(np.uint8)]
        + [payload for _, payload in encoded]
    )


# a frame, (start, end) of its last hop's uplink per target, arrival per node
Sent = tuple[np.ndarray, dict[int, tuple[float, float]], dict[int, float]]


def _build_frame(
    packets: tuple[Packet, ...], maps: dict[int, Values], prefix: str, node: int
) -> tuple[np.ndarray, float]:
    """Build one frame on its sender; return it and when it was ready (wall clock)."""
    began = time.perf_counter()
    frame = _encode_frame(packets, maps)
    _add_seconds(prefix, node, "pack", time.perf_counter() - began)
    return frame, time.time()


def _rotated(
    transfers: list[tuple[int, int]], node: int, K: int
) -> list[tuple[int, int]]:
    """Order a sender's (frame, target) transfers round-robin over the targets.

    Targets take turns, starting after the sender's index (node ``s`` first
    sends to ``s + 1``, then ``s + 2``, ...), so that at any moment the senders
    load different receivers' downlinks: sending every frame to node 0 first
    would queue all senders on node 0's downlink while the others idle.
    """
    queues: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for transfer in transfers:
        queues[transfer[1]].append(transfer)
    order = sorted(queues, key=lambda t: _turn(node, t, K))
    rounds = max((len(q) for q in queues.values()), default=0)
    return [queues[t][j] for j in range(rounds) for t in order if j < len(queues[t])]


def _turn(source: int, target: int, K: int) -> tuple[int, int]:
    """Sort key of a hop: every source's targets in turn after it (see _rotated)."""
    return (target - source) % K, source


def _pack_task(
    frames: list[tuple[int, tuple[Packet, ...], tuple[int, ...]]],
    maps: dict[int, Values],
    prefix: str,
    node: int,
    rate: float | None,
    K: int,
) -> dict[int, Sent]:
    """Build every frame a sender sends: frame id -> (frame, uplink per target, {}).

    Each frame is one array, moved whole to each receiver. Emulated, the
    sender's uplink carries the frames to the targets it sends to itself, in
    the order of :func:`_rotated`, each no earlier than its frame was built;
    the hops give when the uplink starts and ends each (empty without
    emulation); no arrival times yet.
    """
    built = {i: _build_frame(packets, maps, prefix, node) for i, packets, _ in frames}
    hops: dict[int, dict[int, tuple[float, float]]] = defaultdict(dict)
    if rate is not None:
        transfers = [(i, t) for i, _, targets in frames for t in targets]
        for i, t in _rotated(transfers, node, K):
            frame, ready = built[i]
            hops[i] |= _send(prefix, node, (t,), frame.nbytes, rate, ready)
    return {i: (frame, hops[i], {}) for i, (frame, _) in built.items()}


def _select(packed: dict[int, Sent], ids: list[int]) -> list[Sent]:
    """Return the frames `ids` a sender sends to one node: one bundle, one transfer."""
    return [packed[i] for i in ids]


def _send(
    prefix: str,
    node: int,
    targets: tuple[int, ...],
    nbytes: int,
    rate: float,
    ready: float,
) -> dict[int, tuple[float, float]]:
    """Book `nbytes` to each target on `node`'s uplink: target -> (start, end)."""
    uplink = _link(prefix, node, "up", rate)
    hops = {}
    for t in targets:
        end = uplink.reserve(nbytes, ready=ready)
        hops[t] = (end - nbytes / rate, end)
    return hops


def _relay(
    items: list[tuple[Any, int | None]],
    prefix: str,
    node: int,
    target: int,
    rate: float | None,
) -> list[Sent]:
    """Keep the frames a receiver forwards to `target` in one hop, as one bundle.

    `items` are what the node received of each frame (a frame, or a bundle and
    a position in it). Emulated, each frame arrives through this node's
    downlink and leaves through its uplink toward `target`.
    """
    out = []
    for frame, hops, _ in (_at(payload, position) for payload, position in items):
        if rate is None:
            out.append((frame, {}, {}))
            continue
        start, end = hops[node]
        downlink = _link(prefix, node, "down", rate)
        arrived = downlink.reserve(frame.nbytes, ready=start, after=end)
        onward = _send(prefix, node, (target,), frame.nbytes, rate, arrived)
        out.append((frame, onward, {node: arrived}))
    return out


def _targets(frame: Any, delivery: str) -> tuple[int, ...]:
    """Return the nodes a frame's sender sends it to itself."""
    return tuple(t for s, t in frame.hops(delivery) if s == frame.sender)


def _at(payload: Any, position: int | None) -> Sent:
    return payload if position is None else payload[position]


def _resolve(incoming: list[tuple[tuple[Packet, ...], Any, int | None]]) -> Received:
    """Turn (packets, frame or bundle, position) items into (packets, Sent)."""
    return [
        (packets, _at(payload, position)) for packets, payload, position in incoming
    ]


def _arrive(k: int, received: list, prefix: str, rate: float | None) -> float:
    """Wait until every frame sent to `k` passed its emulated downlink.

    Returns the wall-clock time the last one arrived (now, without emulation).
    """
    if rate is None:
        return time.time()
    downlink = _link(prefix, k, "down", rate)
    last = time.time()
    for _, (frame, hops, arrived) in sorted(
        received, key=lambda item: item[1][2].get(k, item[1][1].get(k, (0.0,))[0])
    ):
        if k in arrived:
            last = max(last, arrived[k])
            continue
        start, end = hops[k]
        last = max(last, downlink.reserve(frame.nbytes, ready=start, after=end))
    time.sleep(max(0.0, last - time.time()))
    return last


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


Received = list[tuple[tuple[Packet, ...], Sent]]  # (a frame's packets, what came)


def _decode_frames(
    k: int, received: Received, maps: dict[int, Values], prefix: str
) -> dict[int, bytes]:
    """Reducer `k`'s values of the files it lacks, from the frames it received."""
    began = time.perf_counter()
    entries = [e for packets, sent in received for e in _unframe(packets, sent[0])]
    decoded = decode_received(k, entries, maps)
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
    received: Received,
    picks: dict[int, bytes],
    N: int,
    prefix: str,
    rate: float | None,
) -> tuple[bytes, list[int], float]:
    """Receive and decode reducer `k`'s frames, reduce.

    Returns the pickled items, the byte length of `k`'s value of every file,
    and when the last frame arrived (wall clock).
    """
    received = _resolve(received)
    arrived = _arrive(k, received, prefix, rate)
    values = {f: v[k] for f, v in maps.items()}
    values |= _decode_frames(k, received, maps, prefix) | picks
    missing = sorted(set(range(N)) - set(values))
    if missing:
        raise RuntimeError(f"reducer {k} has no value of files {missing[:10]}.")
    reduced = reduce_pairs(
        (zip(*pickle.loads(values[f]), strict=True) for f in range(N)), reduce_fn
    )
    return (
        pickle.dumps(_sorted_items(reduced), protocol=5),
        [len(values[f]) for f in range(N)],
        arrived,
    )


def _unpack_task(
    k: int, received: Received, maps: dict[int, Values], prefix: str
) -> dict[int, bytes]:
    return _decode_frames(k, _resolve(received), maps, prefix)


def _value_lengths(maps: dict[int, Values], files: list[int]) -> dict[int, list[int]]:
    return {f: [len(v) for v in maps[f]] for f in files}


# ----------------------------------------------------------------- client side


def _raise_failure(future: Future, stage: str, where: str) -> None:
    error = future.exception()
    raise MapReduceTaskError(f"{stage} failed {where}: {error!r}") from error


class _Job:
    """One job on one client: pinned submission under a unique key prefix."""

    def __init__(
        self, dask: Client, placement: Placement, options: MapReduceOptions
    ) -> None:
        K = placement.K
        self.dask, self.placement = dask, placement
        self.addresses = worker_addresses(dask, K)
        self.options = options
        self.prefix = f"mr-{uuid.uuid4().hex[:10]}-"
        self.maps: dict[tuple[int, int], Future] = {}
        self.stored: tuple[frozenset[int], ...] = placement.storers
        self.lost: set[int] = set()
        self.stragglers: set[int] = set()
        self.cancelled_maps = 0
        self._checked_at = 0.0
        # nodes whose loss after the map stage ends the job (a cut straggler's
        # does not)
        self.needed: set[int] = set(range(K))
        self._batch: defaultdict[int, dict[str, tuple]] | None = None
        self.attempt = ""  # then "replanned-": a cancelled shuffle's keys stay unused

    # -- submission and liveness

    def submit(self, fn: Callable, *args: Any, key: str, node: int) -> Future:
        """Run ``fn(*args)`` on `node` (inside :meth:`batch`: once the batch ends)."""
        key = self.prefix + self.attempt + key
        if self._batch is None:
            return self.dask.submit(
                fn,
                *args,
                key=key,
                workers=[self.addresses[node]],
                allow_other_workers=False,
                pure=False,
            )
        self._batch[node][key] = (fn, *args)
        return Future(key, self.dask)

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Send the tasks submitted inside to the scheduler in one message.

        One graph whose layers hold each node's tasks, pinned there by the
        layer's annotations: for 120 tasks it takes the client about 5 ms to
        send, against 70 ms for one ``submit`` per task (and half the time to
        run them all). The futures returned inside may be arguments of later
        tasks of the batch.

        Each task is a tuple ``(fn, *args)``, whose arguments Dask reads as it
        reads a graph: a tuple in them that starts with a callable would be a
        task, and a string equal to a key of the graph that task's result. The
        runtime's arguments hold neither: the user's objects are top-level
        arguments (functions) or travel pickled, and every key carries the
        job's random prefix.
        """
        self._batch = defaultdict(dict)
        try:
            yield
            layers = {
                f"{self.prefix}node-{node}": MaterializedLayer(
                    tasks,
                    annotations={
                        "workers": [self.addresses[node]],
                        "allow_other_workers": False,
                    },
                )
                for node, tasks in self._batch.items()
            }
            if layers:
                graph = HighLevelGraph(layers, {name: set() for name in layers})
                keys = [key for tasks in self._batch.values() for key in tasks]
                self.dask.get(graph, keys, sync=False)  # their state is the futures'
        finally:
            self._batch = None

    def newly_lost(self) -> set[int]:
        """Nodes whose worker left the cluster since the last look.

        Asked only when nothing progressed, at most once a second.
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
        deadline = time.perf_counter() + self.options.timeout
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
                if pending and not progressed and self.newly_lost() & self.needed:
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
                f"timeout={self.options.timeout} s."
            )
        _wait_any(futures, min(_POLL_SECONDS, remaining))

    def progress(self, stage: str, total: int):
        from tqdm.auto import tqdm

        return tqdm(
            total=total, desc=stage, unit="task", disable=not self.options.progress
        )

    # -- inputs

    def scatter_files(self, files: Sequence[Any]) -> dict[tuple[int, int], Any]:
        """Put each file, pickled, on its storers (a collection's futures move there).

        A node whose worker dies while its files are sent counts as lost (up to
        the placement's tolerance; beyond it, the run state names the file).
        """
        inputs = {}
        nodes = [k for k in range(self.placement.K) if self.placement.files_of(k)]
        for k in nodes:
            local = self.placement.files_of(k)
            if isinstance(files[0], StoredCopies):
                inputs |= {
                    (f, k): files[f].copies[k] for f in local if k in files[f].copies
                }
            elif isinstance(files[0], Future):
                inputs |= {(f, k): files[f] for f in local}
        if isinstance(files[0], StoredCopies | Future):
            return inputs

        def send(k: int) -> list[Future] | None:
            local = self.placement.files_of(k)
            return self.scatter(k, [_dumps(files[f]) for f in local])

        with ThreadPoolExecutor(len(nodes)) as pool:  # the nodes' round trips overlap
            for k, data in zip(nodes, pool.map(send, nodes), strict=True):
                if data:
                    local = self.placement.files_of(k)
                    inputs |= dict(zip(((f, k) for f in local), data, strict=True))
        return inputs

    def scatter(self, k: int, data: list) -> list[Future] | None:
        """Scatter `data` to node `k`; None (and `k` lost) if its worker died."""
        try:
            return self.dask.scatter(data, workers=[self.addresses[k]], hash=False)
        except (OSError, KeyError):  # CommClosedError, or a worker already gone
            self.lost.add(k)
            return None

    def compute_partitions(self, collection: Any) -> list[list[Future]]:
        """Return a collection's partitions, pickled where computed, as N files.

        One graph, one call, and only byte strings move afterwards: with ``P >=
        N`` partitions, file ``f`` is a run of consecutive partitions (as
        ``repartition`` groups them); with fewer, each partition is cut where
        it is into consecutive pieces, one file each.
        """
        N = self.placement.N
        parts = collection.to_delayed()
        blobs = self.dask.compute([dask.delayed(_dumps)(part) for part in parts])
        if len(blobs) >= N:
            bounds = np.linspace(0, len(blobs), N + 1).astype(int)
            return [blobs[a:b] for a, b in itertools.pairwise(bounds)]
        pieces = np.diff(np.linspace(0, N, len(blobs) + 1).astype(int))
        return [
            [self.dask.submit(_piece, blob, j, n, key=f"{self.prefix}piece-{p}-{j}")]
            for p, (blob, n) in enumerate(zip(blobs, pieces, strict=True))
            for j in range(n)
        ]

    def locate(self, files: list[list[Future]]) -> dict[Future, set[int]]:
        """Wait for the files' parts; return the job's nodes holding each."""
        parts = [part for file in files for part in file]
        wait(parts, timeout=self.options.timeout)
        node_of = {a: k for k, a in enumerate(self.addresses)}
        who_has = self.dask.who_has(parts)
        return {
            part: {node_of[a] for a in who_has.get(part.key, ()) if a in node_of}
            for part in parts
        }

    def follow_partitions(
        self, files: list[list[Future]], held: dict[Future, set[int]], plan: ShufflePlan
    ) -> ShufflePlan:
        """With one copy of each file, map each file where its first part is."""
        if plan.placement.tolerance > 0:
            return plan
        holders = [min(held[file[0]], default=None) for file in files]
        plan = follow_data(plan, holders)
        self.placement = plan.placement
        self.stored = plan.placement.storers
        return plan

    def store_copies(
        self, files: list[list[Future]], held: dict[Future, set[int]]
    ) -> list[StoredCopies]:
        """Put every file on each node that stores it before any map starts.

        A worker running a map holds the GIL and serves its peers' fetches
        late, so inputs moved while maps run stretch the map stage (a 10^6-line
        word count at r = 2: 11 to 13 s, against 7 to 8 s with the copies made
        first). A node lost on the way is left to the run state (up to the
        tolerance).
        """
        copies: dict[tuple[int, int], Future | list[Future]] = {}
        moving: dict[tuple[int, int], Future] = {}
        for f, file in enumerate(files):
            for k in self.stored[f]:
                if all(k in held[part] for part in file):
                    copies[f, k] = file
                else:
                    copies[f, k] = moving[f, k] = self.submit(
                        _copy, file, key=f"input-{f}-{k}", node=k
                    )
        deadline = time.perf_counter() + self.options.timeout
        while moving:
            self._poll(list(moving.values()), deadline, "inputs", len(moving))
            lost = self.lost | self.newly_lost()
            for (f, k), future in list(moving.items()):
                if future.status == "error":
                    _raise_failure(future, "inputs", f"copying file {f} to node {k}")
                if future.status == "finished" or k in lost:
                    del moving[f, k]
        return [
            StoredCopies(
                {k: copies[f, k] for k in self.stored[f] if k not in self.lost}
            )
            for f in range(len(files))
        ]

    # -- shuffle

    def local_maps(self, k: int, files) -> dict[int, Future]:
        """Node `k`'s own map outputs of `files` (never fetched from a peer)."""
        return {f: self.maps[f, k] for f in sorted(set(files))}

    def files_of(self, k: int) -> list[int]:
        return [f for f, nodes in enumerate(self.stored) if k in nodes]

    def submit_frames(self, plan: ShufflePlan) -> dict[int, list]:
        """Build every frame on its sender; return what each receiver fetches.

        A frame is one array per (sender, receivers) of the plan; one pack task
        per sender builds all of its frames. The frames a node sends to one
        other node in one hop travel as one bundle (a list of arrays, one
        transfer): a select task on the sender for the first hop, a relay task
        on the forwarding receiver for the next ones. Each receiver gets
        ``(packets, bundle, position)`` per frame.
        """
        incoming: dict[int, list] = defaultdict(list)
        self.frames = {}
        delivery, rate = self.options.delivery, self.options.emulated_bandwidth
        frames = frames_of(plan)
        first: dict[tuple[int, int], list[int]] = defaultdict(list)
        for i, frame in enumerate(frames):
            for target in _targets(frame, delivery):
                first[frame.sender, target].append(i)
        for s in sorted({frame.sender for frame in frames}):
            mine = [i for i, frame in enumerate(frames) if frame.sender == s]
            files = {
                seg.file for i in mine for p in frames[i].packets for seg in p.segments
            }
            packed = self.submit(
                _pack_task,
                [(i, frames[i].packets, _targets(frames[i], delivery)) for i in mine],
                self.local_maps(s, files),
                self.prefix,
                s,
                rate,
                plan.placement.K,
                key=f"pack-{s}",
                node=s,
            )
            self.frames[f"frames of node {s}", s] = packed
        held = {}  # frame -> (bundle, position) of its copy at its chain's node
        for (source, target), ids in sorted(first.items()):
            bundle = self.submit(
                _select,
                self.frames[f"frames of node {source}", source],
                ids,
                key=f"bundle-0-{source}-{target}",
                node=source,
            )
            self.frames[f"a bundle to node {target}", source] = bundle
            for position, i in enumerate(ids):
                held[i, target] = (bundle, position)
        if delivery == "unicast":
            for i, frame in enumerate(frames):
                for k in frame.receivers:
                    incoming[k].append((frame.packets, *held[i, k]))
            return incoming
        chains = {i: frame.chain for i, frame in enumerate(frames)}
        held = {i: held[i, chain[0]] for i, chain in chains.items()}
        K = self.placement.K
        for h in range(1, max((len(c) for c in chains.values()), default=0)):
            hops: dict[tuple[int, int], list[int]] = defaultdict(list)
            for i, chain in chains.items():
                if len(chain) > h:
                    hops[chain[h - 1], chain[h]].append(i)
            for (source, target), ids in sorted(
                hops.items(), key=lambda h: _turn(*h[0], K)
            ):
                bundle = self.submit(
                    _relay,
                    [held[i] for i in ids],
                    self.prefix,
                    source,
                    target,
                    rate,
                    key=f"relay-{h}-{source}-{target}",
                    node=source,
                )
                self.frames[f"relays of hop {h} to node {target}", source] = bundle
                for position, i in enumerate(ids):
                    incoming[source].append((frames[i].packets, bundle, position))
                    held[i] = (bundle, position)
        for i, chain in chains.items():
            incoming[chain[-1]].append((frames[i].packets, *held[i]))
        return incoming

    def run_shuffle(self, plan: ShufflePlan) -> dict[int, Future]:
        """Frames on senders, then each receiver's values decoded (a task each)."""
        incoming = self.submit_frames(plan)
        decoded = {
            k: self.submit(
                _unpack_task,
                k,
                incoming[k],
                self.local_maps(k, self.files_of(k)),
                self.prefix,
                key=f"unpack-{k}",
                node=k,
            )
            for k in plan.receivers
        }
        self.wait_stage(decoded, "shuffle", lambda k: f"at node {k}")
        return decoded

    # -- measurement

    def measure(
        self, plan: ShufflePlan, lengths: dict[int, list[int]], extra: list
    ) -> dict[str, Any]:
        """Record fields of bytes (from the values' lengths) and CPU seconds.

        `extra` lists ``(source, target, bytes)`` moved outside the plan (values
        picked for a lost node's reducer).
        """
        traffic = plan_traffic(plan, self.options.delivery, lengths)
        up, down = list(traffic.upload), list(traffic.download)
        for source, target, nbytes in extra:
            up[source] += nbytes
            down[target] += nbytes
        frames = frames_of(plan)
        header = sum(frame.header_bytes for frame in frames)
        alive = set(self.dask.nthreads())
        live = [a for k, a in enumerate(self.addresses) if k not in self.lost]
        live = [a for a in live if a in alive]
        seconds: dict = {}
        for part in self.dask.run(_close_job, self.prefix, workers=live).values():
            seconds |= part
        busiest = {
            stage: max(
                (s for (_, name), s in seconds.items() if name == stage), default=0.0
            )
            for stage in ("pack", "unpack")
        }
        return {
            "intermediate_bytes": sum(sum(v) for v in lengths.values()),
            "packet_bytes": sum(traffic.transmission_bytes) - header,
            "frame_header_bytes": header,
            "upload_bytes": tuple(up),
            "download_bytes": tuple(down),
            "origin_upload_bytes": traffic.origin_upload,
            "pack_seconds": busiest["pack"],
            "unpack_seconds": busiest["unpack"],
        }

    def value_lengths(self) -> dict[int, list[int]]:
        """Byte length of every map output value, from one holder of each file."""
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
        return {
            f: v
            for part in self.dask.gather(list(sized.values()))
            for f, v in part.items()
        }


class _Completions:
    """Futures reported as they finish, err or are cancelled: one queue.

    ``distributed.wait(..., return_when="FIRST_COMPLETED")`` costs the client's
    event loop a coroutine per future it is given; called once per poll on
    every map of a job it made the map stage quadratic in the number of maps
    (1800 one-file maps: 71 s of waits for 6 s of tasks, on 2 cores). A done
    callback per future costs one coroutine in all.
    """

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[Future] = queue.SimpleQueue()

    def watch(self, future: Future) -> None:
        future.add_done_callback(self._queue.put)

    def wait(self, seconds: float) -> list[Future]:
        """Return the futures reported since the last call; wait up to `seconds`."""
        try:
            done = [self._queue.get(timeout=seconds)]
        except queue.Empty:
            return []
        while not self._queue.empty():
            done.append(self._queue.get_nowait())
        return done


def _wait_any(futures: list[Future], seconds: float) -> None:
    with contextlib.suppress(TimeoutError, CancelledError):  # lost: seen next
        wait(futures, timeout=seconds, return_when="FIRST_COMPLETED")


class _MapReduceJob(_Job):
    """``run_mapreduce``'s job: a thin driver of :class:`JobState`."""

    def submit_maps(
        self,
        inputs: dict,
        map_runs: Callable,
        partition: Callable,
        combine_fn: Callable | None,
    ) -> None:
        position = {(f, k): self.placement.files_of(k).index(f) for f, k in inputs}
        for (f, k), file in sorted(inputs.items(), key=lambda i: position[i[0]]):
            self.maps[f, k] = self.submit(
                _map_task,
                map_runs,
                partition,
                combine_fn,
                file,
                self.placement.K,
                f"{self.prefix}{k}",
                key=f"map-{f}-{k}",
                node=k,
            )

    def drive(self, state: JobState, actions: list, reduce_fn: Callable) -> list:
        """Carry out actions and feed events until the state finishes or fails.

        The reduce stage's bar starts when the map stage ends (every map done or
        the stragglers cut), so that its rate counts reduce time only.
        """
        self.completions = _Completions()
        self.watched: dict[Future, tuple] = {}
        # reported, in order; one lost with its worker stays until it settles
        self.unsettled: dict[Future, None] = {}
        for (f, k), future in self.maps.items():
            self.watch(future, ("map", f, k))
        self.reduced: dict[int, Future] = {}
        self.reduces_done = 0
        bars = {"map": self.progress("map", len(self.maps))}
        try:
            while not self._batched_act(state, actions, reduce_fn):
                done = self.completions.wait(_POLL_SECONDS)
                now = time.perf_counter()
                events = self._events(done, now, bars)
                if not events and (lost := self.newly_lost()):
                    events.append(NodesLost(nodes=frozenset(lost), now=now))
                events.append(Tick(now=now))
                actions = [a for event in events for a in state.handle(event)]
                if state.map_end is not None and "reduce" not in bars:
                    bars["reduce"] = self.progress("reduce_fn", self.placement.K)
                    bars["reduce"].update(self.reduces_done)
        finally:
            for bar in bars.values():
                bar.close()
        self.lost |= state.lost
        return self.dask.gather([self.reduced[k] for k in range(self.placement.K)])

    def watch(self, future: Future, label: tuple) -> None:
        """Report `future` to the drive loop once it finishes, errs or is cancelled."""
        self.watched[future] = label
        self.completions.watch(future)

    def _batched_act(self, state: JobState, actions: list, reduce_fn: Callable) -> bool:
        with self.batch():
            return self._act(state, actions, reduce_fn)

    def _act(self, state: JobState, actions: list, reduce_fn: Callable) -> bool:
        for action in actions:
            if isinstance(action, Fail):
                raise action.error
            if isinstance(action, CancelMaps):
                self._cancel(action)
            elif isinstance(action, CancelShuffle):
                self._cancel_shuffle()
            elif isinstance(action, SubmitShuffle):
                self.stored = action.plan.placement.storers
                self._submit_shuffle(action, reduce_fn)
            elif isinstance(action, Finish):
                return True
        return False

    def _cancel(self, action: CancelMaps) -> None:
        self.stragglers = set(action.nodes)
        for k in action.nodes:  # a straggler may have died since
            wake_waits(self.dask, f"{self.prefix}{k}", [self.addresses[k]])
        self._forget([self.maps[fk] for fk in action.maps])
        self.cancelled_maps = len(action.maps)

    def _cancel_shuffle(self) -> None:
        self._forget([*self.frames.values(), *self.reduced.values()])
        self.frames, self.reduced = {}, {}
        self.attempt = "replanned-"

    def _forget(self, futures: list[Future]) -> None:
        """Stop watching `futures` and cancel them."""
        for future in futures:
            self.watched.pop(future, None)
            self.unsettled.pop(future, None)
        self.dask.cancel(futures)

    def _submit_shuffle(self, action: SubmitShuffle, reduce_fn: Callable) -> None:
        self.plan = action.plan
        incoming = self.submit_frames(action.plan)
        for (i, s), future in self.frames.items():
            self.watch(future, ("frame", i, s))
        self.picks: list[tuple[int, int, int, int]] = []  # (file, reducer, from, to)
        for k, host in enumerate(action.hosts):
            picks = {} if host == k else self._pick_values(k, host)
            self.reduced[k] = self.submit(
                _reduce_task,
                k,
                reduce_fn,
                self.local_maps(host, self.files_of(host)),
                incoming[k] if host == k else [],
                picks,
                self.placement.N,
                self.prefix,
                self.options.emulated_bandwidth,
                key=f"reduce-{k}",
                node=host,
            )
            self.watch(self.reduced[k], ("reduce", k, host))

    def _pick_values(self, k: int, host: int) -> dict[int, Future]:
        """Reducer `k`'s values that `host` lacks, each from one holder (uncoded)."""
        picks = {}
        for f, nodes in enumerate(self.stored):
            if host not in nodes:
                source = min(nodes)
                picks[f] = self.submit(
                    _pick, self.maps[f, source], k, key=f"pick-{f}-{k}", node=source
                )
                self.picks.append((f, k, source, host))
        return picks

    def _events(self, done: list[Future], now: float, bars: dict) -> list:
        events: list = []
        self.unsettled |= dict.fromkeys(f for f in done if f in self.watched)
        for future in list(self.unsettled):
            if future.status in ("pending", "lost"):
                continue  # lost with its worker: recomputed, or seen by newly_lost
            del self.unsettled[future]
            kind, *where = self.watched.pop(future)
            if future.status == "finished":
                events += self._finished(kind, where, now, bars)
            elif kind == "map" and (
                future.status == "cancelled"
                or isinstance(future.exception(), KilledWorker)
            ):
                events.append(MapLost(file=where[0], node=where[1], now=now))
            else:
                events.append(self._failed(future, kind, where, now))
        return events

    def _finished(self, kind: str, label: list, now: float, bars: dict) -> list:
        if kind == "map":
            bars["map"].update(1)
            return [MapDone(file=label[0], node=label[1], now=now)]
        if kind == "frame":
            return []
        self.reduces_done += 1
        if "reduce" in bars:
            bars["reduce"].update(1)
        return [ReduceDone(reducer=label[0], now=now)]

    def _failed(self, future: Future, kind: str, label: list, now: float):
        error = (
            future.exception()
            if future.status == "error"
            else CancelledError(f"cancelled (nodes lost: {sorted(self.lost)})")
        )
        stage, where = {
            "map": ("map_fn", lambda f, k: f"on file {f} at node {k}"),
            "frame": ("shuffle", lambda i, s: f"sending {i} at node {s}"),
            "reduce": ("reduce_fn", lambda k, h: f"at node {h} (reducer {k})"),
        }[kind]
        return TaskFailed(stage=stage, where=where(*label), error=error, now=now)

    def record_fields(self, outputs: list) -> dict[str, Any]:
        lengths: dict[int, list[int]] = defaultdict(lambda: [0] * self.placement.K)
        for k, (_, values, _) in enumerate(outputs):
            for f, n in enumerate(values):
                lengths[f][k] = n
        extra = [(s, t, lengths[f][k]) for f, k, s, t in self.picks]
        return self.measure(self.plan, dict(lengths), extra)


def execute_mapreduce(
    files: Any,
    map_runs: Callable,
    reduce_fn: Callable,
    *,
    plan: ShufflePlan,
    partition: Callable,
    combine_fn: Callable | None,
    client: Client | None,
    options: MapReduceOptions,
) -> MapReduceResult:
    """Run `plan` (already verified) on Dask and return the output and record.

    Parameters
    ----------
    files : sequence, dask.bag.Bag or dask.dataframe.DataFrame
        Input files (any picklable objects), ``len(files) == plan.placement.N``,
        or a collection of ``plan.placement.N`` partitions (each computed on a
        node that stores it).
    map_runs : callable
        ``map_runs(file)`` gives the file's pairs in runs: the user's `map_fn`
        on each input of a grouped file (``mapreduce._groups``).
    reduce_fn, partition : callable
        As in :func:`mapreduce.run_mapreduce`.
    combine_fn : callable or None
        Applied map-side to each file's values of a key (`reduce_fn` when the
        job combines), or None.
    plan : ShufflePlan
        A verified plan of the whole placement (replanned on the maps that
        finished when stragglers were cut or nodes lost).
    client : distributed.Client or None
        Client with at least ``K`` workers (the first ``K`` by address are
        used), or None for an embedded cluster.
    options : MapReduceOptions
        How the job runs (validated).

    Returns
    -------
    MapReduceResult
        `map_seconds` includes placing the input files on their storers.
    """
    with client_for_call(client, None, plan.placement.K) as dask:
        job = _MapReduceJob(dask, plan.placement, options)
        start = time.perf_counter()
        wall = time.time() - start  # wall clock - perf_counter, on this machine
        if hasattr(files, "to_delayed"):
            parts = job.compute_partitions(files)
            held = job.locate(parts)
            plan = job.follow_partitions(parts, held, plan)
            files = job.store_copies(parts, held)
        inputs = job.scatter_files(files)
        state = JobState(
            plan,
            slack=options.straggler_slack,
            timeout=options.timeout,
            start=start,
            # emulated links keep their bookings: a cancelled shuffle's would stay
            speculate=options.speculate and options.emulated_bandwidth is None,
        )
        actions = (
            state.handle(NodesLost(nodes=frozenset(job.lost), now=start))
            if job.lost
            else []
        )
        if not any(isinstance(a, Fail) for a in actions):
            with job.batch():
                job.submit_maps(inputs, map_runs, partition, combine_fn)
            actions += state.begin()
        outputs = job.drive(state, actions, reduce_fn)
        end = time.perf_counter()
        measured = job.record_fields(outputs)
    map_end = state.map_end if state.map_end is not None else end
    received = max((at for _, _, at in outputs), default=end) - wall
    shuffle_end = min(max(received, map_end), end)
    record = MapReduceRecord(
        **plan_record_fields(job.plan),
        **measured,
        delivery=options.delivery,
        emulated_bandwidth=options.emulated_bandwidth,
        tolerance=plan.placement.tolerance,
        stragglers=state.stragglers,
        lost_nodes=tuple(sorted(job.lost)),
        cancelled_maps=state.cancelled_maps,
        map_seconds=map_end - start,
        shuffle_seconds=shuffle_end - map_end,
        reduce_seconds=end - shuffle_end,
    )
    output = to_output([pickle.loads(items) for items, *_ in outputs], options.output)
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
