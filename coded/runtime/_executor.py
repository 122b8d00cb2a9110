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

Every decision is the pure `RunState`'s (``_state.py``); this module is its
driver: it places operands, submits graphs, turns Dask's completions into the
state's events and carries out its actions, blocking or on an event loop.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Generator, Sequence
from typing import Any

from dask.highlevelgraph import HighLevelGraph, MaterializedLayer
from dask.utils import apply
from distributed import Client, Future, as_completed
from distributed.comm import CommClosedError

from coded import MatmulResult, TaskRecord
from coded.codes import Code, EncodedOperands
from coded.runtime._call import CallSpec, new_state, task_fault
from coded.runtime._dask_helpers import (
    live_addresses,
    live_addresses_async,
    new_call_id,
    scatter_to_workers_async,
    scheduler_lost,
)
from coded.runtime._remote import remote_product
from coded.runtime._state import (
    Action,
    Backup,
    BackupPolicy,
    BatchTask,
    Cancel,
    Cancelled,
    CopyKey,
    Decode,
    Retry,
    Started,
    Submit,
    TaskFailed,
    TaskFinished,
    TaskKey,
    Tick,
    WorkersLost,
)
from coded.runtime._worker import TaskOutput, project_output, run_batch, wake_waits

__all__ = [
    "BackupPolicy",
    "MatmulHandle",
    "execute",
    "submit_execution",
    "submit_execution_async",
]

_LIVENESS_SECONDS = 0.25
_IDLE_POLL_SECONDS = 0.25
_BACKUP_POLL_SECONDS = 0.01
_ASYNC_POLL_SECONDS = 0.002
EMBED_BYTES = 1 << 20  # a shared right operand up to 1 MiB travels in the tasks


class _Run:
    """One call on the cluster (client side): the I/O around its `RunState`.

    It places the operands, submits the graphs, turns Dask's completions into
    the state's events and carries out the actions the state returns.
    """

    transport = "tasks"

    def __init__(self, client: Client, spec: CallSpec, call_id: str) -> None:
        self.client, self.spec, self.call_id = client, spec, call_id
        self.code, self.encoded = spec.code, spec.encoded
        self.remembered_suspects = spec.suspects  # a placement's memory, if any
        self.layout = spec.layout  # None: decode on the client; else on a worker
        # a product decoded on a worker is checked through projections made
        # where its pieces live: Dask key of a projection -> its piece's future
        check = None if self.layout is None else spec.check
        self.projector = None if check is None else check.projector
        self.held: dict[str, Future] = {}
        lefts = spec.placed_lefts
        self.placed_lefts = None if lefts is None else list(lefts)
        self.lefts: list[Future | None] = []
        self.lost: dict[int, str] = {}  # placement: code worker -> why
        self.timeout, self.policy = spec.timeout, spec.policy
        self.shared_right: Any = None
        self.addresses = list(spec.addresses)
        self.n = len(self.addresses)
        self.label = spec.label_or_default
        self.data: dict[str, Future] = {}
        self.state = new_state(spec)
        self.copies: dict[TaskKey, list[Future]] = {}
        self.copy_of: dict[str, CopyKey] = {}  # Dask key -> (task, copy)
        self.results: dict[TaskKey, Any] = {}  # first finished copy's value
        self.arrived: list[Any] = []  # the used results, in order
        self.late: set[CopyKey] = set()  # finished copies, found at their cancel
        self.cancelled = 0
        self.ac: as_completed | None = None
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

    def _right(self, worker: int) -> Any:
        if self.encoded.rights is None:
            return self.shared_right
        return self.data[self._key("right", worker)]

    def _batch_arguments(
        self, task: BatchTask, host: int
    ) -> tuple[list[Any], dict[str, Any]]:
        """Arguments of ``run_batch`` for one copy of `task` on `host`."""
        args = [self.lefts[task.worker], self._right(task.worker)]
        kwargs = {
            "multiply": self.code.multiply,
            "worker": task.worker,
            "start": task.start,
            "stop": task.stop,
            "fault": task_fault(self.spec, task, host),
            "call_id": self.call_id,
            "submitted_at": time.time(),
        }
        return args, kwargs

    def _task_key(self, task: BatchTask, suffix: str = "") -> str:
        return self._key("share", task.worker, f"b{task.batch}") + suffix

    def _track(
        self, task: BatchTask, future: Future, check: Future | None = None
    ) -> None:
        """Record `future` as the next copy of `task` (and wait for it).

        With a `check` (the projection of a piece that stays on its worker),
        the copy is that future, and `future` is held for the decode.
        """
        if check is not None:
            self.held[check.key], future = future, check
        copies = self.copies.setdefault(task.key, [])
        self.copy_of[future.key] = (task.key, len(copies))
        copies.append(future)
        if self.ac is not None:
            self.ac.add(future)

    def start(self) -> None:
        """Submit every worker's batch chain (one graph, one scheduler message)."""
        started = Started(now=time.perf_counter(), lost=self.lost)
        self._act(self.state.handle(started))

    def _send(self, tasks: Sequence[BatchTask], suffix: str) -> None:
        """Submit `tasks` (whole chains, in batch order) as one graph.

        Batch ``j + 1`` of a worker depends on its batch ``j``; each task is
        pinned to its worker by its layer's annotations. The tasks are tuples
        of Dask's graph specification (``apply`` carries the keyword
        arguments, a key among them is the dependency).
        """
        keys, layers, dependencies = [], {}, {}
        previous: dict[int, str] = {}  # worker -> key of its previous batch
        for task in tasks:
            key, before = self._task_key(task, suffix), previous.get(task.worker)
            args, kwargs = self._batch_arguments(task, task.worker)
            kwargs["previous"] = before
            spec = (apply, run_batch, args, (dict, [[k, v] for k, v in kwargs.items()]))
            layers[key] = MaterializedLayer(
                {key: spec},
                annotations={
                    "workers": [self.addresses[task.worker]],
                    "allow_other_workers": False,
                    "retries": 0,
                },
            )
            dependencies[key] = set() if before is None else {before}
            keys.append(key)
            previous[task.worker] = key
            if self.projector is not None:
                spec = (project_output, key, self._projector(task))
                layers[f"{key}-check"] = MaterializedLayer(
                    {f"{key}-check": spec}, annotations=layers[key].annotations
                )
                dependencies[f"{key}-check"] = {key}
        graph = HighLevelGraph(layers, dependencies)
        checks = [f"{key}-check" for key in keys] if self.projector else []
        futures = self.client.get(graph, keys + checks, sync=False)
        outputs, projections = futures[: len(keys)], futures[len(keys) :]
        for task, output, check in itertools.zip_longest(tasks, outputs, projections):
            self._track(task, output, check)

    def _backup(self, task: BatchTask, host: int) -> None:
        """Submit one more copy of `task` on `host` (a speculative backup)."""
        args, kwargs = self._batch_arguments(task, host)
        pinned = {"workers": [self.addresses[host]], "allow_other_workers": False}
        key = self._task_key(task, "-backup")
        future = self.client.submit(
            run_batch, *args, **kwargs, key=key, retries=0, **pinned
        )
        if self.projector is None:
            self._track(task, future)
            return
        check = self.client.submit(
            project_output, future, self._projector(task), key=f"{key}-check", **pinned
        )
        self._track(task, future, check)

    def _projector(self, task: BatchTask) -> Any:
        assert self.projector is not None
        return self.projector(task.worker, task.start, task.stop)

    # ---- carry out the state's actions -------------------------------------
    def _act(self, actions: list[Action]) -> None:
        for action in actions:
            if isinstance(action, Submit):
                self._send(action.tasks, suffix="")
            elif isinstance(action, Retry):
                self._send(action.tasks, suffix="-retry")
            elif isinstance(action, Backup):
                self._backup(action.task, action.host)
            elif isinstance(action, Cancel):
                self._cancel(action.copies)
            elif isinstance(action, Decode):
                self.arrived = [self.results[task] for task in action.tasks]
            elif self.client.status != "running":  # its futures were all cancelled
                raise scheduler_lost(self.client, "during the call")
            else:
                raise action.error

    def _cancel(self, copies: Sequence[CopyKey]) -> None:
        """Release `copies` and wake their injected waits; count the cancels.

        Releasing the last reference to a key makes the scheduler forget it (and
        cancel it if it has not run); a running task cannot be interrupted, so its
        injected wait is woken by the call's cancel signal, sent fire-and-forget.
        """
        futures = {copy: self.copies[copy[0]][copy[1]] for copy in copies}
        self.late |= {c for c, f in futures.items() if f.status == "finished"}
        running = [f for f in futures.values() if not f.done()]
        self.cancelled += len(running)
        for future in futures.values():
            future.release()
            if future.key in self.held:
                self.held.pop(future.key).release()
        if running and self.spec.faults is not None:
            hosts = {self._host(future) for future in running}
            wake_waits(self.client, self.call_id, hosts)

    def _host(self, future: Future) -> str:
        """Address of the Dask worker a copy is pinned to."""
        return self.state.address(self.copy_of[future.key])

    # ---- collect ---------------------------------------------------------
    def _event(self, future: Future, result: Any) -> TaskFinished | TaskFailed:
        """Return the state's event for a completed copy."""
        task, copy = self.copy_of[future.key]
        now, remote = time.perf_counter(), self.layout is not None
        held = self.held.get(future.key)
        if future.status == "finished" and (
            (remote and held is None) or isinstance(result, TaskOutput)
        ):
            self.results.setdefault(
                task, (future if remote else result) if held is None else held
            )
            piece = None if remote and held is None else result.piece
            return TaskFinished(
                task=task, copy=copy, now=now, piece=piece, held=held is not None
            )
        why = (
            f"its task raised {type(result).__name__}: {result}"
            if isinstance(result, BaseException)
            else f"its task ended {future.status}"
        )
        collateral = self._is_collateral(task[0], future)
        return TaskFailed(task=task, copy=copy, now=now, why=why, collateral=collateral)

    def _is_collateral(self, worker: int, future: Future) -> bool:
        """Whether `future` was cancelled with its graph while its share lives."""
        left = self.lefts[worker]
        return (
            future.status == "cancelled"
            and self.client.status == "running"
            and left is not None
            and left.status == "finished"
        )

    def _tick(self) -> None:
        if self.client.status != "running" and not self.state.decoder.is_decodable:
            raise scheduler_lost(self.client, "during the call")
        self._act(self.state.handle(Tick(now=time.perf_counter())))

    def _steps(self) -> Generator[float | None, set[str] | None, None]:
        """Run the wait loop without its waits, yielding what the driver must do.

        Yields seconds to wait for results (the driver waits on `ac` at most
        that long and sends None) or None (the driver sends the scheduler's live
        worker addresses). :meth:`wait` and :meth:`wait_async` drive it.
        """
        ac = self.ac = as_completed(
            [f for copies in self.copies.values() for f in copies],
            with_results=self.layout is None or self.projector is not None,
            raise_errors=False,
            loop=self.client.loop,
        )
        poll = _IDLE_POLL_SECONDS if self.policy is None else _BACKUP_POLL_SECONDS
        last_check = time.perf_counter()
        self._tick()  # lost before submission: fail at once
        while not self.state.is_over:
            yield min(poll, max(0.0, self.state.deadline - time.perf_counter()))
            burst = [
                self._event(*(item if ac.with_results else (item, None)))
                for item in ac.next_batch(block=False)
            ]
            if burst:
                self._act(self.state.handle(*burst))
            if self.state.is_over:  # decided: no liveness query on the way out
                return
            if time.perf_counter() - last_check > _LIVENESS_SECONDS:
                alive = yield None
                assert alive is not None
                gone = frozenset(self.addresses) - alive
                if gone:  # an empty event would only query the decoder once more
                    self._act(
                        self.state.handle(
                            WorkersLost(addresses=gone, now=time.perf_counter())
                        )
                    )
                last_check = time.perf_counter()
            self._tick()

    def wait(self) -> None:
        """Wait (blocking) until decodable, or raise `NotEnoughResultsError`."""
        steps, reply = self._steps(), None
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

    async def wait_async(self) -> None:
        """:meth:`wait` on the event loop of an asynchronous client."""
        steps, reply = self._steps(), None
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

    # ---- release ---------------------------------------------------------
    def release(self) -> int:
        """Cancel what still runs, drop every future, without waiting; count cancels."""
        if not self.state.is_over:  # an error outside the state ended the call
            self._act(self.state.handle(Cancelled(now=time.perf_counter())))
        futures = [f for copies in self.copies.values() for f in copies]
        finished = {self.copy_of[f.key] for f in futures if f.status == "finished"}
        self.records = self.state.records(self.late | finished)
        if self.ac is not None:
            self.ac.clear()
        for future in [*futures, *self.data.values(), *self.held.values()]:
            future.release()
        self.copies.clear()
        self.data.clear()
        self.held.clear()
        self.ac = None
        return self.cancelled


def _nbytes(value: Any) -> int:
    return int(getattr(value, "nbytes", 0))


def execute(
    client: Client, code: Code, encoded: EncodedOperands, **submission: Any
) -> MatmulResult:
    """Run one coded product on the cluster and decode it as early as possible.

    :func:`submit_execution_async` with a blocking client, then
    :meth:`MatmulHandle.result`.

    Parameters
    ----------
    client : distributed.Client
        A blocking client.
    code : Code
        The code that encoded the operands.
    encoded : EncodedOperands
        Its encoding of the product.
    **submission
        The keywords of :func:`submit_execution_async`.

    Returns
    -------
    MatmulResult
    """
    return submit_execution(client, code, encoded, **submission).result()


def submit_execution(
    client: Client, code: Code, encoded: EncodedOperands, **submission: Any
) -> MatmulHandle:
    """:func:`submit_execution_async` with a blocking client: returns at once.

    Returns
    -------
    MatmulHandle
    """
    if client.asynchronous:
        raise TypeError(
            "`client` is asynchronous: await submit_execution_async instead."
        )
    return client.sync(submit_execution_async, client, code, encoded, **submission)


async def submit_execution_async(
    client: Client, code: Code, encoded: EncodedOperands, **settings: Any
) -> MatmulHandle:
    """Place and submit one coded product; return before its results arrive.

    The one signature of a run: :func:`submit_execution` and :func:`execute`
    take the same keywords, the fields of one frozen
    :class:`~coded.runtime._call.CallSpec` that travels to the run's driver.
    Several products may be in flight at once: each :meth:`MatmulHandle.result`
    waits for its own results only (no thread per product), with its timeout
    counted from submission.

    Parameters
    ----------
    client : distributed.Client
        A running client (blocking or asynchronous).
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
    layout : ProductLayout, optional
        Decode on a Dask worker into a dask.array of that layout (default:
        decode on the client).
    check : callable, optional
        ``check(piece) -> bool`` tests every piece before it is decoded; one
        that fails ends the run with `InconsistentResultsError`
        (``verify="detect"``) or drops its worker (``"correct"``, see
        :class:`~coded.runtime._state.RunState`).
    verify : {"detect", "correct", "off"}
        What a failed check does.
    redundancy : {"off", "detect", "correct"}
        Check the results against each other instead: the decoder waits for
        one (``"detect"``) or two (``"correct"``) results beyond a decodable set
        and decodes only if they agree (codes with ``supports_verify``).
    suspects : dict of int to str, optional
        A placement's memory of suspect workers: the workers the decoder
        locates with ``redundancy="correct"`` are recorded in it.
    scheme, verification : str
        The record's scheme name (default: the code's class) and how the
        results were checked.
    began : float, optional
        ``time.perf_counter()`` at the start of the call (default: now), from
        which ``stage_seconds["total"]`` counts.
    encode_seconds : float
        The record's ``encode`` stage, spent before this call.
    transport : {"tasks", "resident", "grouped"}
        ``"tasks"`` (default): pinned batch chains through the scheduler.
        ``"resident"``: one message per worker to the resident servers that
        hold `placed_lefts` (registered by :func:`coded.place_operand`); the
        results stream back without the scheduler (``layout`` must be None).
        ``"grouped"``: the same servers, one message per outer group of a
        multi-level code to a leader that decodes its group.

    Returns
    -------
    MatmulHandle

    Raises
    ------
    NotEnoughResultsError
        (From :meth:`MatmulHandle.result`.) As soon as no decodable set can still
        arrive, at the latest at `timeout`; it lists the lost workers and the
        code's tolerance.
    SchedulerLostError
        The scheduler became unreachable.
    """
    return await submit_call_async(
        client, CallSpec(code=code, encoded=encoded, **settings)
    )


async def submit_call_async(client: Client, spec: CallSpec) -> MatmulHandle:
    """Start the call `spec` on its transport; return its handle."""
    from coded.runtime._grouped import GroupedRun
    from coded.runtime._resident import ResidentRun

    began = time.perf_counter() if spec.began is None else spec.began
    run_type = {"resident": ResidentRun, "grouped": GroupedRun}.get(
        spec.transport, _Run
    )
    run = run_type(client, spec, new_call_id())
    try:
        placing = time.perf_counter()
        await run.place_async()
        place_seconds = time.perf_counter() - placing
        run.start()
    except BaseException:
        run.release()
        raise
    return MatmulHandle(
        run,
        scheme=spec.scheme or type(spec.code).__name__,
        verification=spec.verification,
        began=began,
        stage_seconds={"encode": spec.encode_seconds, "place": place_seconds},
    )


class MatmulHandle:
    """A coded product in flight; `MatmulHandle.result` gives its `MatmulResult`.

    Returned by :func:`coded.submit_matmul`. The product's tasks are already on
    the cluster; several handles may be outstanding at once, each waiting only
    for its own results when :meth:`result` is called (no thread per product).
    """

    def __init__(
        self,
        run: _Run,
        *,
        scheme: str,
        verification: str,
        began: float,
        stage_seconds: dict[str, float],
    ) -> None:
        self._run, self._scheme, self._verification = run, scheme, verification
        self._began, self._stages = began, stage_seconds
        self._result: MatmulResult | None = None
        self._error: BaseException | None = None
        self._decided = False  # decide_async ran: result() waits no more
        self._failure: BaseException | None = None  # what the wait raised

    async def decide_async(self) -> None:
        """Wait on the event loop until the run decided, keeping any error.

        A blocking call that starts and waits in one hop to the event loop
        (``client.sync``) calls it there; :meth:`result` then decodes (or
        raises) without a second hop.
        """
        try:
            await self._run.wait_async()
        except BaseException as error:
            self._failure = error
        self._decided = True

    def _wait(self) -> None:
        if self._failure is not None:
            raise self._failure
        if not self._decided:
            self._run.wait()

    @property
    def call_id(self) -> str:
        """Identifier in every Dask key of the product."""
        return self._run.call_id

    def result(self) -> MatmulResult:
        """Wait for a decodable set of results, decode and release (once).

        Returns
        -------
        MatmulResult
            ``stage_seconds["total"]`` runs from the start of the call to the
            end of this method's first call.

        Raises
        ------
        NotEnoughResultsError
            Failures left no decodable set, or the timeout (counted from
            submission) expired first.
        """
        if self._result is None and self._error is None:
            try:
                self._wait()
            except BaseException as error:
                self._settle(error)
            self._settle(None)
        return self._outcome()

    async def result_async(self) -> MatmulResult:
        """:meth:`result` for a handle of an asynchronous client (``await``).

        ``await handle`` is the same.
        """
        if self._result is None and self._error is None:
            try:
                await self._run.wait_async()
            except BaseException as error:
                self._settle(error)
            self._settle(None)
        return self._outcome()

    def __await__(self) -> Generator[Any, None, MatmulResult]:
        return self.result_async().__await__()

    def __repr__(self) -> str:
        state = "done" if self._result is not None else "in flight"
        return (
            f"MatmulHandle(scheme={self._scheme!r}, call_id={self.call_id!r}, {state})"
        )

    def _outcome(self) -> MatmulResult:
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result

    def _settle(self, error: BaseException | None) -> None:
        """Release the call; record `error` (and re-raise it) or the product."""
        run, stages = self._run, self._stages
        state = run.state
        if error is None:
            stages["wait"] = time.perf_counter() - state.submitted_at
        began = time.perf_counter()
        product = None
        if error is None and run.layout is not None:  # before the release
            product = remote_product(
                run.client,
                run.code.decoder(run.encoded),
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
            product = state.decoder.decode()
            decode_seconds = time.perf_counter() - began
        stages["decode"] = decode_seconds
        outputs = run.arrived if run.layout is None else []
        stages["compute"] = max(
            (o.compute_seconds for o in outputs),
            default=0.0 if run.layout is None else float("nan"),
        )
        stages["total"] = time.perf_counter() - self._began
        located = getattr(state.decoder, "suspect_workers", ())
        if run.remembered_suspects is not None:
            for worker in located:
                run.remembered_suspects[worker] = "inconsistent with the other results"
        suspects = {*state.suspects, *located}
        self._result = MatmulResult(
            product=product,
            scheme=self._scheme,
            n=run.n,
            k=int(run.code.recovery_threshold),
            call_id=run.call_id,
            finish_seconds=tuple(state.finish),
            used_workers=tuple(i for i in state.used_workers if i not in suspects),
            failed_workers=tuple(sorted(state.failed_workers())),
            stage_seconds=stages,
            cancelled_tasks=cancelled,
            backup_tasks=state.backups,
            overlap_seconds=max((o.blocked_seconds for o in outputs), default=0.0),
            condition_number=state.decoder.condition_number,
            units_used=state.decoder.units_used,
            suspect_workers=tuple(sorted(suspects)),
            verification=self._verification,
            transport=run.transport,
            detection_floor=state.detection_floor,
            tasks=tuple(
                TaskRecord(
                    worker=worker,
                    batch=batch,
                    rows=(start, stop),
                    finish_seconds=finish,
                    status=status,
                    copies=copies,
                )
                for worker, batch, start, stop, finish, status, copies in run.records
            ),
        )
