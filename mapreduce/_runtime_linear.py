r"""Execute the unified scheme's coded map tasks on Dask (linear map functions).

The client encodes the ``N`` data files into ``N K / q`` coded files by a real MDS
code placed by Li's placement (:func:`mapreduce._straggling.encode_files`); each
node maps all its coded files in one task; when ``q`` nodes are done the rest are
cancelled cooperatively; the shuffle planned among
those ``q`` (:func:`mapreduce._straggling.plan_finishers`) runs as in
``mapreduce._runtime``; each finisher decodes its reduce functions' ``N`` values
from the ``N`` coded values it then holds, and reduces
(docs/theory/mapreduce_straggling.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
from distributed import Client, Future, KilledWorker

from coded.runtime import client_for_call
from coded.runtime.interface import cancel_signal, wake_waits
from mapreduce._options import MapReduceOptions
from mapreduce._placement import Placement
from mapreduce._plan import ShufflePlan
from mapreduce._records import MapReduceRecord, MapReduceResult, plan_record_fields
from mapreduce._runtime import _POLL_SECONDS, Values, _Job, _raise_failure, _wait_any
from mapreduce._state import (
    CancelMaps,
    Fail,
    NodeMapped,
    NodesLost,
    Quorum,
    QuorumState,
    Tick,
)
from mapreduce._straggling import encode_files, plan_finishers

__all__ = ["execute_coded_maps"]

# ----------------------------------------------------------------- worker side


def _map_coded(
    map_fn: Callable, files: list[np.ndarray], signal: str
) -> list[np.ndarray] | None:
    """Map every coded file of a node; None if cancelled on the way."""
    cancelled = cancel_signal(signal)
    out = []
    for file in files:
        if cancelled.is_set():
            return None
        out.append(np.asarray(map_fn(file), dtype=np.float64))
    shapes = {a.shape for a in out}
    if len(shapes) != 1 or out[0].ndim == 0:
        raise ValueError(
            "`map_fn` must return arrays of one shape (Q, ...) whose first axis "
            f"indexes the reduce functions, got shapes {sorted(shapes)}."
        )
    return out


def _functions_of(Q: int, finishers: tuple[int, ...]) -> dict[int, np.ndarray]:
    """Reduce functions of each finisher: ``array_split(range(Q), q)`` in order."""
    parts = np.array_split(np.arange(Q), len(finishers))
    return dict(zip(finishers, parts, strict=True))


def _by_reducer(
    outputs: list[np.ndarray], position: dict[int, int], finishers: tuple, K: int
) -> dict[int, Values]:
    """Plan file -> one value per node: the rows of that node's reduce functions."""
    functions = _functions_of(outputs[0].shape[0], finishers)
    empty = np.empty(0)
    return {
        f: tuple(
            outputs[i][functions[k]].tobytes() if k in functions else empty.tobytes()
            for k in range(K)
        )
        for f, i in position.items()
    }


def _decode_reduce(
    k: int,
    reduce_fn: Callable,
    maps: dict[int, Values],
    received: dict[int, bytes],
    outputs: list[np.ndarray],
    rows: list[int],
    generator: np.ndarray,
    finishers: tuple[int, ...],
    M: int,
) -> list[tuple[int, Any]]:
    """Decode node `k`'s functions' values of the ``M`` data files; reduce them.

    `rows` are the plan files whose coded values `k` holds (its own and those it
    received), `generator` their rows of the MDS generator.
    """
    values = [received[f] if f in received else maps[f][k] for f in rows]
    coded = np.stack([np.frombuffer(v, dtype=np.float64) for v in values])
    decoded = np.linalg.solve(generator, coded)
    functions = _functions_of(outputs[0].shape[0], finishers)[k]
    shape = (len(rows), len(functions), *outputs[0].shape[1:])
    decoded = decoded.reshape(shape)
    return [
        (int(j), reduce_fn(int(j), list(decoded[:M, i])))
        for i, j in enumerate(functions)
    ]


# ----------------------------------------------------------------- client side


class _LinearJob(_Job):
    """A job whose map outputs are one task per node (all its coded files)."""

    def __init__(
        self, dask: Client, placement: Placement, options: MapReduceOptions
    ) -> None:
        super().__init__(dask, placement, options)
        self.outputs: dict[int, Future] = {}
        self.values: dict[int, Future] = {}

    def local_maps(self, k: int, files) -> Future:
        """Node `k`'s values of every plan file it holds (a superset of `files`)."""
        return self.values[k]

    def run_coded_maps(self, coded_files: list[np.ndarray], map_fn: Callable, q: int):
        """Map on every node; return the first `q` nodes done, in order.

        A thin driver of :class:`mapreduce._state.QuorumState`.
        """
        for k in range(self.placement.K):
            local = [coded_files[f] for f in self.placement.files_of(k)]
            if data := self.scatter(k, [local]):
                self.outputs[k] = self.submit(
                    _map_coded,
                    map_fn,
                    data[0],
                    f"{self.prefix}{k}",
                    key=f"map-{k}",
                    node=k,
                )
        state = QuorumState(
            self.placement.K,
            q,
            timeout=self.options.timeout,
            start=time.perf_counter(),
        )
        state.lost |= self.lost  # lost while their files were sent
        actions, pending = state.begin(), dict(self.outputs)
        with self.progress("map", q) as bar:
            while not (done := self._act(state, actions, pending)):
                _wait_any(list(pending.values()), _POLL_SECONDS)
                now = time.perf_counter()
                events = self._events(pending, now)
                if not events and (lost := self.newly_lost()):
                    events.append(NodesLost(nodes=frozenset(lost), now=now))
                bar.update(sum(isinstance(e, NodeMapped) for e in events))
                events.append(Tick(now=now))
                actions = [a for event in events for a in state.handle(event)]
        self.lost |= state.lost
        return done

    def _act(
        self, state: QuorumState, actions: list, pending: dict[int, Future]
    ) -> tuple[int, ...] | None:
        """Carry out `actions`; return the finishers once the quorum is reached."""
        for action in actions:
            if isinstance(action, Fail):
                raise action.error
            if isinstance(action, CancelMaps):
                self.stragglers = set(action.nodes)
                self.cancelled_maps = len(pending)
                for k in action.nodes:  # a straggler may have died since
                    wake_waits(self.dask, f"{self.prefix}{k}", [self.addresses[k]])
                for future in pending.values():
                    future.cancel()
            elif isinstance(action, Quorum):
                self.needed = set(action.finishers)
                return action.finishers
        return None

    def _events(self, pending: dict[int, Future], now: float) -> list:
        """Turn what Dask reports of the pending maps into events (done ones leave)."""
        events: list = []
        for k, future in sorted(pending.items()):
            if future.status == "finished":
                events.append(NodeMapped(node=k, now=now))
            elif future.status == "cancelled" or (  # cancelled: its input was lost
                future.status == "error"
                and isinstance(future.exception(), KilledWorker)
            ):
                events.append(NodesLost(nodes=frozenset({k}), now=now))
            elif future.status == "error":
                _raise_failure(future, "map_fn", f"on the coded files of node {k}")
            else:
                continue
            del pending[k]
        return events

    def use_plan(self, plan: ShufflePlan, kept: tuple[int, ...], finishers: tuple):
        """Turn each finisher's map outputs into values by plan file and node."""
        self.stored = plan.placement.storers
        local = {k: self.placement.files_of(k) for k in finishers}
        for k in finishers:
            position = {
                f: local[k].index(c) for f, c in enumerate(kept) if k in self.stored[f]
            }
            self.values[k] = self.submit(
                _by_reducer,
                self.outputs[k],
                position,
                finishers,
                self.placement.K,
                key=f"values-{k}",
                node=k,
            )

    def run_decode_reduce(
        self,
        plan: ShufflePlan,
        kept: tuple[int, ...],
        generator: np.ndarray,
        decoded: dict[int, Future],
        reduce_fn: Callable,
        M: int,
    ) -> dict[int, Any]:
        finishers, N = plan.receivers, generator.shape[1]
        reduced = {}
        for k in finishers:
            held = set(self.files_of(k)) | {f for j, f in plan.demands or () if j == k}
            rows = sorted(held)[:N]  # r >= q: more than N held, any N decode
            reduced[k] = self.submit(
                _decode_reduce,
                k,
                reduce_fn,
                self.values[k],
                decoded.get(k, {}),
                self.outputs[k],
                rows,
                generator[[kept[f] for f in rows]],
                finishers,
                M,
                key=f"reduce-{k}",
                node=k,
            )
        self.wait_stage(reduced, "reduce_fn", lambda k: f"at node {k}")
        pairs = [p for part in self.dask.gather(list(reduced.values())) for p in part]
        return dict(sorted(pairs))


def execute_coded_maps(
    files: list[np.ndarray],
    map_fn: Callable,
    reduce_fn: Callable,
    *,
    K: int,
    r: int,
    q: int,
    client: Client | None,
    options: MapReduceOptions,
) -> MapReduceResult:
    """Run the unified scheme on Dask and return the outputs and the record.

    Parameters
    ----------
    files : list of numpy.ndarray
        ``M`` data files of one shape (float64).
    map_fn, reduce_fn : callable
        As in :func:`mapreduce.run_coded_maps`.
    K, r, q : int
        Nodes, copies of each coded file, nodes waited for.
    client : distributed.Client or None
        Client with at least ``K`` workers, or None for an embedded cluster.
    options : MapReduceOptions
        ``timeout``, ``delivery`` and ``progress`` (the others do not apply).

    Returns
    -------
    MapReduceResult
        ``output`` maps reduce function ``j`` to ``reduce_fn(j, values)``.
    """
    coded, N, generator, coded_files = encode_files(files, K, r, q)
    with client_for_call(client, None, K) as dask:
        job = _LinearJob(dask, coded, options)
        start = time.perf_counter()
        finishers = job.run_coded_maps(coded_files, map_fn, q)
        map_end = time.perf_counter()
        plan, kept = plan_finishers(coded, N, finishers)
        job.use_plan(plan, kept, finishers)
        decoded = job.run_shuffle(plan)
        shuffle_end = time.perf_counter()
        output = job.run_decode_reduce(
            plan, kept, generator, decoded, reduce_fn, len(files)
        )
        reduce_end = time.perf_counter()
        measured = job.measure(plan, job.value_lengths(), [])
    scale = Fraction(plan.placement.K * plan.placement.N, q * N)
    fields = plan_record_fields(plan) | {
        "N": N,
        "r": Fraction(r),
        "load": plan.load * scale,
        "unicast_load": plan.unicast_load * scale,
    }
    record = MapReduceRecord(
        **fields,
        **measured,
        delivery=options.delivery,
        tolerance=K - q,
        stragglers=tuple(sorted(job.stragglers)),
        lost_nodes=tuple(sorted(job.lost)),
        cancelled_maps=job.cancelled_maps,
        map_seconds=map_end - start,
        shuffle_seconds=shuffle_end - map_end,
        reduce_seconds=reduce_end - shuffle_end,
    )
    return MapReduceResult(output=output, record=record)
