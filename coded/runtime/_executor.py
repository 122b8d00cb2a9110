"""One executor for every scheme: place, submit pinned batch chains, decode early.

The executor knows a code only through ``encode_operands``' output, ``multiply``,
``decoder`` and ``is_decodable``. Worker ``i`` of the code runs on Dask worker
``addresses[i]``; its operands are scattered there, and its batch tasks run there
in order (batch ``j + 1`` depends on batch ``j``), each returning one Piece. A
uniform code is the one-batch case. Speculative backup tasks (the Spark baseline)
are an execution policy of the same loop.

Failure semantics: a worker that dies, disconnects, lost its placed share or whose
task raises is a straggler that never returns. Nothing more is shipped to it once
that is known; the call decodes from the others, or raises `NotEnoughResultsError`
(naming the lost workers and the code's tolerance) as soon as no decodable set can
still arrive, at the latest at `timeout`. A lost scheduler raises
`SchedulerLostError`.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

from dask._task_spec import Task, TaskRef
from dask.highlevelgraph import HighLevelGraph, MaterializedLayer
from distributed import Client, Future, as_completed
from distributed.comm import CommClosedError

from coded._injection import FaultPlan, TaskFault
from coded.codes import Code, EncodedOperands
from coded.errors import NotEnoughResultsError
from coded.runtime._dask_helpers import (
    live_addresses,
    live_addresses_async,
    new_call_id,
    scatter_to_workers_async,
    scheduler_lost,
)
from coded.runtime._remote import ProductLayout, remote_product
from coded.runtime._worker import TaskOutput, run_batch, wake_waits
from theory._validation import check_real

__all__ = [
    "BackupPolicy",
    "Execution",
    "PendingExecution",
    "execute",
    "submit_execution",
    "submit_execution_async",
    "tolerance",
]

_LIVENESS_SECONDS = 0.25
_IDLE_POLL_SECONDS = 0.25
_BACKUP_POLL_SECONDS = 0.01
_ASYNC_POLL_SECONDS = 0.002
EMBED_BYTES = 1 << 20  # a shared right operand up to 1 MiB travels in the tasks


@dataclass(frozen=True, slots=True, kw_only=True)
class BackupPolicy:
    """Speculative execution of stragglers (Spark's and Cubed's backup tasks).

    Parameters
    ----------
    quantile : float
        Start once this fraction of the tasks has finished, ``0 < quantile <= 1``.
    slowdown : float
        Back up every task running longer than ``slowdown`` times the median
        duration of the finished ones, ``slowdown >= 1``. The first copy to
        finish is used.
    """

    quantile: float = 0.75
    slowdown: float = 1.5

    def __post_init__(self) -> None:
        check_real(self.quantile, "quantile", min_value=0.0, strict_min=True)
        check_real(self.slowdown, "slowdown", min_value=1.0)
        if self.quantile > 1:
            raise ValueError(f"`quantile` must be <= 1, got quantile={self.quantile}.")


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Execution:
    """What one run produced: the product and its record (seconds throughout)."""

    product: Any
    call_id: str
    finish_seconds: tuple[float, ...]
    used_workers: tuple[int, ...]
    failed_workers: tuple[int, ...]
    stage_seconds: dict[str, float]
    cancelled_tasks: int
    backup_tasks: int
    overlap_seconds: float
    condition_number: float = float("nan")
    units_used: int = 0
    # per task: (worker, batch, start row, stop row, finish seconds or NaN,
    # "used" | "unused" | "cancelled" | "failed", copies)
    tasks: tuple[tuple[int, int, int, int, float, str, int], ...] = ()


@dataclass(slots=True, kw_only=True, eq=False)
class _Task:
    worker: int
    batch: int
    start: int
    stop: int
    copies: list[Future] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)
    failed_copies: set[int] = field(default_factory=set)
    is_done: bool = False
    finish: float = float("nan")

    @property
    def status(self) -> str:
        """used, failed, unused (finished once decodable, not read) or cancelled."""
        if self.is_done:
            return "used"
        if self.is_failed:
            return "failed"
        finished = any(copy.status == "finished" for copy in self.copies)
        return "unused" if finished else "cancelled"

    is_retried: bool = False

    @property
    def is_failed(self) -> bool:
        return not self.is_done and len(self.failed_copies) == len(self.copies)

    @property
    def is_outstanding(self) -> bool:
        return not self.is_done and not self.is_failed


def tolerance(code: Code) -> int:
    """Lost workers `code` survives whichever they are: ``n - k``."""
    return int(code.n) - int(code.recovery_threshold)


class _Run:
    """The mutable state of one call (client side); `execute` drives it."""

    def __init__(
        self,
        client: Client,
        code: Code,
        encoded: EncodedOperands,
        addresses: Sequence[str],
        faults: FaultPlan | None,
        call_id: str,
        row_weights: Sequence[float],
        placed_lefts: Sequence[Future | None] | None = None,
        label: str = "",
        timeout: float = 60.0,
        layout: ProductLayout | None = None,
    ) -> None:
        self.client, self.code, self.encoded = client, code, encoded
        self.layout = layout  # None: decode on the client; else on a worker
        self.arrived: list[Future] = []  # used results, in order (layout given)
        self.placed_lefts = None if placed_lefts is None else list(placed_lefts)
        self.lefts: list[Future | None] = []
        self.lost: dict[int, str] = {}  # code worker -> why it never returns
        self.collateral: set[int] = set()  # workers whose chains to resubmit
        self.timeout = timeout
        self.shared_right: Any = None
        self.addresses, self.faults, self.call_id = list(addresses), faults, call_id
        self.n = len(addresses)
        self.row_weights = list(row_weights)
        self.data: dict[str, Future] = {}
        self.tasks: dict[str, _Task] = {}
        self.decoder = code.decoder(encoded)
        self.fresh_decoder = None if layout is None else code.decoder(encoded)
        self.finish = [float("nan")] * self.n
        self.used: set[int] = set()
        self.durations: list[float] = []
        self.outputs: list[TaskOutput] = []
        self.backups = 0
        self.submitted_at = 0.0
        self.ac: as_completed | None = None
        self.label = label
        self.records: tuple[tuple[int, int, int, int, float, str, int], ...] = ()

    # ---- place and submit ------------------------------------------------
    def _key(self, *parts: object) -> str:
        """``coded-<label>-<parts>-<call id>``: the dashboard shows the scheme."""
        return "-".join(["coded", self.label, *map(str, parts), self.call_id])

    async def place_async(self) -> None:
        """Ship the operands: lefts once per worker, a shared right at most once.

        A shared right operand (row codes) of at most `EMBED_BYTES` travels inside
        the task messages (no round trip of its own); a larger one is scattered
        to every worker in one call. Per-worker rights are scattered together.
        Workers whose placed share was lost, or that cannot take their data, are
        recorded in `lost` and get no task.
        """
        for i, share in enumerate(self.placed_lefts or ()):
            if share is None or share.status != "finished":
                self.lost[i] = f"its placed share on {self.addresses[i]} was lost"
        live = [i for i in range(self.n) if i not in self.lost]
        per_worker: list[dict[str, Any]] = [{} for _ in live]
        if self.placed_lefts is None:
            for i, data in zip(live, per_worker, strict=True):
                data[self._key("left", i)] = self.encoded.lefts[i]
        if self.encoded.rights is not None:
            for i, data in zip(live, per_worker, strict=True):
                data[self._key("right", i)] = self.encoded.rights[i]
        if any(per_worker):
            placed, failed = await scatter_to_workers_async(
                self.client,
                per_worker,
                [self.addresses[i] for i in live],
                timeout=self.timeout,
            )
            self.data.update(placed)
            self.lost.update({live[j]: why for j, why in failed.items()})
        shared = self.encoded.shared_right
        if self.encoded.rights is None and _nbytes(shared) > EMBED_BYTES:
            self.shared_right = await self._broadcast(shared)
        else:
            self.shared_right = shared
        if self.placed_lefts is not None:
            self.lefts = list(self.placed_lefts)
        else:
            self.lefts = [self.data.get(self._key("left", i)) for i in range(self.n)]

    async def _broadcast(self, shared: Any) -> Future:
        """Scatter `shared` to every live worker; workers found dead become lost."""
        key = self._key("right")
        targets = [a for i, a in enumerate(self.addresses) if i not in self.lost]
        try:
            self.data.update(await self._scatter_to({key: shared}, targets))
        except (KeyError, OSError, CommClosedError):  # a worker left: skip it
            alive = await live_addresses_async(self.client)
            for i, address in enumerate(self.addresses):
                if address not in alive:
                    self.lost[i] = f"its Dask worker {address} left the cluster"
            live = [a for a in targets if a in alive]
            self.data.update(await self._scatter_to({key: shared}, live))
        return self.data[key]

    async def _scatter_to(self, data: dict[str, Any], workers: list[str]) -> Any:
        return await self.client.scatter(
            data, workers=workers, broadcast=True, hash=False, asynchronous=True
        )

    def _right(self, task: _Task) -> Any:
        if self.encoded.rights is None:
            return self.shared_right
        return self.data[self._key("right", task.worker)]

    def _fault(self, task: _Task, host: int) -> TaskFault:
        if self.faults is None:
            return TaskFault()
        rows = (task.stop - task.start) * self.row_weights[task.worker]
        return self.faults.task_fault(host, rows=rows, backup=host != task.worker)

    def _batch_task(
        self, task: _Task, host: int, key: str, previous: Any
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Arguments of ``run_batch`` for one copy of `task` on `host`."""
        args = (self.lefts[task.worker], self._right(task))
        kwargs = {
            "multiply": self.code.multiply,
            "worker": task.worker,
            "start": task.start,
            "stop": task.stop,
            "fault": self._fault(task, host),
            "call_id": self.call_id,
            "submitted_at": time.time(),
            "previous": previous,
        }
        return args, kwargs

    def _submit(self, task: _Task, host: int, key: str) -> Future:
        """Submit one more copy of `task` on `host` (a speculative backup)."""
        args, kwargs = self._batch_task(task, host, key, None)
        future = self.client.submit(
            run_batch,
            *args,
            **kwargs,
            key=key,
            workers=[self.addresses[host]],
            allow_other_workers=False,
            retries=0,
        )
        task.copies.append(future)
        task.hosts.append(self.addresses[host])
        return future

    def submit(self, batches: Sequence[Sequence[tuple[int, int]]]) -> list[Future]:
        """Submit every worker's batch chain as one graph (one scheduler message).

        Batch ``j + 1`` of a worker depends on its batch ``j``; each task is
        pinned to its worker by its layer's annotations.
        """
        self.submitted_at = time.perf_counter()
        for i, ranges in enumerate(batches):
            if i in self.lost:
                continue
            for j, (start, stop) in enumerate(ranges):
                key = self._key("share", i, f"b{j}")
                self.tasks[key] = _Task(worker=i, batch=j, start=start, stop=stop)
        return self._send(list(self.tasks.values()), suffix="")

    def _send(self, tasks: list[_Task], suffix: str) -> list[Future]:
        """Submit `tasks` (whole chains, in batch order) as one graph."""
        keys, layers, dependencies = [], {}, {}
        previous: dict[int, str] = {}  # worker -> key of its previous batch
        for task in tasks:
            i = task.worker
            key = self._key("share", i, f"b{task.batch}") + suffix
            before = previous.get(i)
            reference = None if before is None else TaskRef(before)
            args, kwargs = self._batch_task(task, i, key, reference)
            layers[key] = MaterializedLayer(
                {key: Task(key, run_batch, *args, **kwargs)},
                annotations={
                    "workers": [self.addresses[i]],
                    "allow_other_workers": False,
                    "retries": 0,
                },
            )
            dependencies[key] = set() if before is None else {before}
            keys.append(key)
            previous[i] = key
        graph = HighLevelGraph(layers, dependencies)
        futures = self.client.get(graph, keys, sync=False)
        for task, future in zip(tasks, futures, strict=True):
            task.copies.append(future)
            task.hosts.append(self.addresses[task.worker])
        return futures

    def _retry(self, workers: set[int]) -> None:
        """Resubmit the chains of `workers`, each as its own graph.

        A graph that names a lost placed share is cancelled whole by the
        scheduler ("lost dependencies"), the tasks of live workers included; each
        of those chains gets one more copy, alone, so a lost share can only
        cancel its own chain.
        """
        assert self.ac is not None
        for i in sorted(workers):
            chain = [t for t in self.tasks.values() if t.worker == i and not t.is_done]
            for task in chain:
                task.is_retried = True
            for future in self._send(chain, suffix="-retry"):
                self.ac.add(future)

    # ---- collect ---------------------------------------------------------
    def _is_collateral(self, task: _Task, future: Future) -> bool:
        """Whether `task` was cancelled with its graph while its own share lives."""
        left = self.lefts[task.worker]
        return (
            future.status == "cancelled"
            and not task.is_retried
            and self.client.status == "running"
            and left is not None
            and left.status == "finished"
        )

    def _receive(self, future: Future, result: Any) -> None:
        key = future.key.removesuffix("-backup").removesuffix("-retry")
        task = self.tasks[key]
        if task.is_done:
            return
        remote = self.layout is not None
        if future.status != "finished" or not (
            remote or isinstance(result, TaskOutput)
        ):
            keys = [copy.key for copy in task.copies]
            task.failed_copies.add(keys.index(future.key))
            if task.is_failed and self._is_collateral(task, future):
                self.collateral.add(task.worker)
            elif task.is_failed:
                self.lost[task.worker] = (
                    f"its task raised {type(result).__name__}: {result}"
                    if isinstance(result, BaseException)
                    else f"its task ended {future.status}"
                )
            return
        task.is_done = True
        now = time.perf_counter() - self.submitted_at
        task.finish = now
        self.finish[task.worker] = now
        self.durations.append(now)
        self.used.add(task.worker)
        if remote:  # the value stays on its worker: record its rows only
            self.arrived.append(future)
            self.decoder.mark(task.worker, task.start, task.stop)
        else:
            self.outputs.append(result)
            self.decoder.add(result.piece)

    def _mark_dead_hosts(self, alive: set[str]) -> None:
        for task in self.tasks.values():
            if task.is_outstanding:
                dead = {c for c, host in enumerate(task.hosts) if host not in alive}
                task.failed_copies |= dead
                if task.is_failed:
                    self.lost[task.worker] = (
                        f"its Dask worker {task.hosts[0]} left the cluster"
                    )

    def failed_workers(self) -> set[int]:
        failed = {t.worker for t in self.tasks.values() if t.is_failed}
        return failed | (set(self.lost) - self.used)

    def _check_possible(self) -> None:
        if self.client.status != "running":  # its futures were all cancelled
            raise scheduler_lost(self.client, "during the call")
        possible = self.used | {
            t.worker for t in self.tasks.values() if t.is_outstanding
        }
        if not self.code.is_decodable(possible):
            raise self._not_enough("no decodable set of results can still arrive")

    def _not_enough(self, why: str) -> NotEnoughResultsError:
        received, needed = self.decoder.progress
        failed = sorted(self.failed_workers())
        lost = {i: self.lost.get(i, "its task failed") for i in failed}
        tolerated = tolerance(self.code)
        details = "; ".join(f"worker {i}: {reason}" for i, reason in lost.items())
        return NotEnoughResultsError(
            f"{why}: received {received} of the {needed} results needed "
            f"(from workers {sorted(self.used)}; failed workers {failed}). "
            f"The code tolerates {tolerated} lost of {self.n} workers; lost "
            f"{len(lost)}{': ' + details if details else ''}.",
            lost_workers=lost,
            tolerance=tolerated,
        )

    def _launch_backups(self, policy: BackupPolicy) -> None:
        primaries = len(self.tasks)
        if len(self.durations) < policy.quantile * primaries:
            return
        elapsed = time.perf_counter() - self.submitted_at
        if elapsed <= policy.slowdown * statistics.median(self.durations):
            return
        busy = {h for t in self.tasks.values() if t.is_outstanding for h in t.hosts}
        idle = [
            i
            for i, address in enumerate(self.addresses)
            if address not in busy
            and i not in self.lost
            and not any(t.is_failed for t in self.tasks.values() if t.worker == i)
        ]
        for task in self.tasks.values():
            if not idle:
                return
            if task.is_outstanding and len(task.copies) == 1:
                key = f"{task.copies[0].key}-backup"
                assert self.ac is not None
                self.ac.add(self._submit(task, idle.pop(0), key))
                self.backups += 1

    def _steps(
        self, futures: list[Future], timeout: float, policy: Any
    ) -> Generator[float | None, set[str] | None, None]:
        """Run the wait loop without its I/O, yielding what the driver must do.

        Yields seconds to wait for results (the driver waits on `ac` at most
        that long and sends None) or None (the driver sends the scheduler's live
        worker addresses). :meth:`wait` and :meth:`wait_async` drive it.
        """
        ac = self.ac = as_completed(
            futures,
            with_results=self.layout is None,
            raise_errors=False,
            loop=self.client.loop,
        )
        deadline = self.submitted_at + timeout
        poll = _IDLE_POLL_SECONDS if policy is None else _BACKUP_POLL_SECONDS
        last_check = time.perf_counter()
        self._check_possible()  # lost before submission: raise at once
        while self._waiting():
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                if self.decoder.is_decodable:  # the guard's wait ends: decode, warn
                    return
                raise self._not_enough(f"timeout after {timeout} s")
            yield min(poll, remaining)
            for item in ac.next_batch(block=False):
                self._receive(*(item if self.layout is None else (item, None)))
            if not self._waiting():
                break
            if self.collateral:
                self._retry(self.collateral)
                self.collateral = set()
            if time.perf_counter() - last_check > _LIVENESS_SECONDS:
                alive = yield None
                assert alive is not None
                self._mark_dead_hosts(alive)
                last_check = time.perf_counter()
            if self.decoder.is_decodable:  # guard: stop once no result can come
                if not any(t.is_outstanding for t in self.tasks.values()):
                    return
                continue
            self._check_possible()
            if policy is not None:
                self._launch_backups(policy)

    def wait(self, futures: list[Future], *, timeout: float, policy: Any) -> None:
        """Wait (blocking) until decodable, or raise `NotEnoughResultsError`."""
        steps, reply = self._steps(futures, timeout, policy), None
        while True:
            try:
                request = steps.send(reply)
            except StopIteration:
                return
            if request is None:
                reply = live_addresses(self.client)
                continue
            ac, reply = self.ac, None
            assert ac is not None
            with ac.thread_condition:
                if not ac.has_ready():
                    ac.thread_condition.wait(timeout=request)

    async def wait_async(
        self, futures: list[Future], *, timeout: float, policy: Any
    ) -> None:
        """:meth:`wait` on the event loop of an asynchronous client."""
        steps, reply = self._steps(futures, timeout, policy), None
        while True:
            try:
                request = steps.send(reply)
            except StopIteration:
                return
            if request is None:
                reply = await live_addresses_async(self.client)
                continue
            ac, reply = self.ac, None
            assert ac is not None
            # poll: as_completed holds its thread lock while it takes its
            # asyncio condition, so waiting on that condition can deadlock
            deadline = time.perf_counter() + request
            while not ac.has_ready() and time.perf_counter() < deadline:
                await asyncio.sleep(_ASYNC_POLL_SECONDS)

    def _waiting(self) -> bool:
        """Not decodable yet, or decodable above the code's conditioning guard."""
        return not self.decoder.is_decodable or self.decoder.needs_more

    # ---- release ---------------------------------------------------------
    def release(self) -> int:
        """Drop every future and wake injected waits, without waiting; count cancels.

        Releasing the last reference to a key makes the scheduler forget it (and
        cancel it if it has not run); a running task cannot be interrupted, so its
        injected wait is woken by the call's cancel signal, sent fire-and-forget.
        """
        running = {
            host
            for t in self.tasks.values()
            for copy, host in zip(t.copies, t.hosts, strict=True)
            if not copy.done()
        }
        cancelled = sum(not f.done() for t in self.tasks.values() for f in t.copies)
        self.records = tuple(
            (t.worker, t.batch, t.start, t.stop, t.finish, t.status, len(t.copies))
            for t in self.tasks.values()
        )
        if self.ac is not None:
            self.ac.clear()
        for future in [f for t in self.tasks.values() for f in t.copies]:
            future.release()
        for future in self.data.values():
            future.release()
        if running and self.faults is not None:
            wake_waits(self.client, self.call_id, running)
        self.tasks.clear()
        self.data.clear()
        self.ac = None
        return cancelled


def _label(code: Code) -> str:
    name = type(code).__name__.removesuffix("Code").lower() or "code"
    return f"{name}-{code.n}-{code.recovery_threshold}"


def _nbytes(value: Any) -> int:
    return int(getattr(value, "nbytes", 0))


def execute(
    client: Client,
    code: Code,
    encoded: EncodedOperands,
    *,
    addresses: Sequence[str],
    batches: Sequence[Sequence[tuple[int, int]]],
    faults: FaultPlan | None = None,
    timeout: float = 60.0,
    policy: BackupPolicy | None = None,
    row_weights: Sequence[float] | None = None,
    placed_lefts: Sequence[Future | None] | None = None,
    label: str | None = None,
) -> Execution:
    """Run one coded product on the cluster and decode it as early as possible.

    Parameters
    ----------
    client : distributed.Client
        A running client.
    code : Code
        The scheme (only its encoded operands, ``multiply`` and decoder are used).
    encoded : EncodedOperands
        ``code.encode_operands(A, B)``.
    addresses : sequence of str, length n
        Dask worker of each code worker.
    batches : sequence of sequences of (int, int), length n
        Row ranges of each worker's batch chain, in order.
    faults : FaultPlan, optional
        Injected delays and failures.
    timeout : float
        Seconds to wait for a decodable set of results.
    policy : BackupPolicy, optional
        Launch speculative backup copies of slow tasks.
    row_weights : sequence of float, optional
        Work of one row of each worker's left operand, in rows of the full
        product (the fraction of B's columns its right operand holds; default 1).
        A task of ``r`` rows gets the injected duration of ``r * row_weights[i]``
        rows.
    placed_lefts : sequence of Future or None, optional
        ``encoded.lefts`` already on their workers (one future per worker, from
        :func:`coded.place_operand`; None for a share that was never placed):
        only the right operands are shipped, and the call never releases these.
        A worker whose share was lost gets no task.
    label : str, optional
        Names the run in its Dask keys, ``coded-<label>-share-<i>-b<j>-<id>``,
        so that the dashboard's task stream shows the scheme and the share
        (default: the code's class, n and threshold, e.g. ``mds-8-6``).

    Returns
    -------
    Execution

    Raises
    ------
    NotEnoughResultsError
        As soon as no decodable set can still arrive, at the latest at `timeout`;
        it lists the lost workers and the code's tolerance.
    SchedulerLostError
        The scheduler became unreachable.
    """
    return submit_execution(
        client,
        code,
        encoded,
        addresses=addresses,
        batches=batches,
        faults=faults,
        timeout=timeout,
        policy=policy,
        row_weights=row_weights,
        placed_lefts=placed_lefts,
        label=label,
    ).result()


def submit_execution(
    client: Client, code: Code, encoded: EncodedOperands, **kwargs: Any
) -> PendingExecution:
    """Place and submit one coded product; return before its results arrive.

    Keyword arguments are those of :func:`execute`, and `layout`: decode on a
    Dask worker into a dask.array of that layout (None: decode on the client).
    Several products may be in flight at once: each
    :meth:`PendingExecution.result` waits for its own results only (no thread
    per product), with its timeout counted from submission.

    Returns
    -------
    PendingExecution
    """
    if client.asynchronous:
        raise TypeError(
            "`client` is asynchronous: await submit_execution_async instead."
        )
    return client.sync(submit_execution_async, client, code, encoded, **kwargs)


async def submit_execution_async(
    client: Client,
    code: Code,
    encoded: EncodedOperands,
    *,
    addresses: Sequence[str],
    batches: Sequence[Sequence[tuple[int, int]]],
    faults: FaultPlan | None = None,
    timeout: float = 60.0,
    policy: BackupPolicy | None = None,
    row_weights: Sequence[float] | None = None,
    placed_lefts: Sequence[Future | None] | None = None,
    label: str | None = None,
    layout: ProductLayout | None = None,
) -> PendingExecution:
    """:func:`submit_execution` on the event loop of `client` (any client).

    Await :meth:`PendingExecution.result_async` of the returned product with an
    asynchronous client.
    """
    weights = [1.0] * len(addresses) if row_weights is None else row_weights
    run = _Run(
        client,
        code,
        encoded,
        addresses,
        faults,
        new_call_id(),
        weights,
        placed_lefts=placed_lefts,
        label=label or _label(code),
        timeout=timeout,
        layout=layout,
    )
    try:
        began = time.perf_counter()
        await run.place_async()
        place_seconds = time.perf_counter() - began
        futures = run.submit(batches)
    except BaseException:
        run.release()
        raise
    return PendingExecution(run, futures, place_seconds, timeout, policy)


class PendingExecution:
    """A submitted coded product (see :func:`submit_execution`)."""

    def __init__(
        self,
        run: _Run,
        futures: list[Future],
        place_seconds: float,
        timeout: float,
        policy: BackupPolicy | None,
    ) -> None:
        self._run, self._futures = run, futures
        self._stages = {"place": place_seconds}
        self._timeout, self._policy = timeout, policy
        self._execution: Execution | None = None
        self._error: BaseException | None = None

    @property
    def call_id(self) -> str:
        """Identifier in every Dask key of the product."""
        return self._run.call_id

    def result(self) -> Execution:
        """Wait until decodable, release, decode (once; later calls return it).

        Raises
        ------
        NotEnoughResultsError
            As :func:`execute`.
        """
        if self._execution is None and self._error is None:
            try:
                self._run.wait(
                    self._futures, timeout=self._timeout, policy=self._policy
                )
            except BaseException as error:
                self._settle(error)
            self._settle(None)
        return self._outcome()

    async def result_async(self) -> Execution:
        """:meth:`result` on the event loop of an asynchronous client."""
        if self._execution is None and self._error is None:
            try:
                await self._run.wait_async(
                    self._futures, timeout=self._timeout, policy=self._policy
                )
            except BaseException as error:
                self._settle(error)
            self._settle(None)
        return self._outcome()

    def _outcome(self) -> Execution:
        if self._error is not None:
            raise self._error
        assert self._execution is not None
        return self._execution

    def _settle(self, error: BaseException | None) -> None:
        """Release the call; record `error` (and re-raise it) or the product."""
        run, stages = self._run, self._stages
        if error is None:
            stages["wait"] = time.perf_counter() - run.submitted_at
        self._futures = []
        began = time.perf_counter()
        product = None
        if error is None and run.layout is not None:  # before the release
            product = remote_product(
                run.client,
                run.fresh_decoder,
                run.arrived,
                run.layout,
                name=run._key("product"),
            )
        decode_seconds = time.perf_counter() - began
        began = time.perf_counter()
        cancelled = run.release()
        stages["release"] = time.perf_counter() - began
        if error is not None:
            self._error = error
            raise error
        if product is None:
            began = time.perf_counter()
            product = run.decoder.decode()
            decode_seconds = time.perf_counter() - began
        stages["decode"] = decode_seconds
        stages["compute"] = max(
            (o.compute_seconds for o in run.outputs),
            default=0.0 if run.layout is None else float("nan"),
        )
        self._execution = Execution(
            product=product,
            call_id=run.call_id,
            finish_seconds=tuple(run.finish),
            used_workers=tuple(sorted(run.used)),
            failed_workers=tuple(sorted(run.failed_workers())),
            stage_seconds=stages,
            cancelled_tasks=cancelled,
            backup_tasks=run.backups,
            overlap_seconds=max((o.blocked_seconds for o in run.outputs), default=0.0),
            condition_number=run.decoder.condition_number,
            units_used=run.decoder.units_used,
            tasks=run.records,
        )
