"""The worker side of the resident transport: a plugin that serves placed shares.

Distributed's P2P shuffle moves data worker to worker through a worker plugin
that registers its own comm handlers, the scheduler only coordinating; this
plugin does the same for calls on placed operands. A placed share stays where
``place_operand`` scattered it (the worker's ``data``, under its Dask key: the
scheduler still owns its lifetime, so a release or a client that disconnects
drops it as before); the plugin keeps nothing of a placement between calls.

A client talks to a server over channels: connections of its own ``rpc`` pool
that it keeps open (and that close with the client), opened by
:data:`CHANNEL_OP`. One call is one message per worker on an idle channel
(``{"job": ResidentJob, "right": B}``: the share's key, the right operand and the
batch chain). The server computes the batches in order in its own thread (the
event loop stays free for heartbeats and the stop), writes each result as it
finishes (``{"batch": j, "output": TaskOutput}``, or ``{"batch": j, "why": ...}``
for a batch that raised, after which the chain stops), and ``{"done": token}``
(with the last batch's result, or alone after a failure or a stop); the channel
is then idle again. ``{"stop": token, "call": call_id}`` cancels the
batches not yet started and wakes the call's injected waits; a stop for a job
already done is ignored, and a channel that closes (the client left) stops its
job. A batch that raises is named in its message, never a hang.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import defaultdict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
from distributed.comm import CommClosedError
from distributed.core import Status
from distributed.diagnostics.plugin import WorkerPlugin
from distributed.protocol import to_serialize

from coded.injection import TaskFault
from coded.runtime import _worker
from coded.runtime._channels import CHANNEL_OP, read_job
from coded.runtime._leader import GroupJob, lead

__all__ = ["PLUGIN_NAME", "ResidentJob", "ResidentServer"]

PLUGIN_NAME = "coded-resident"
INLINE_WORK = 2**22
"""Multiply-adds of a batch computed on the event loop itself (about 2-4 ms).

Handing a small product to a thread and back costs two thread switches, which
on a busy machine cost more than the product; a larger one, one with an
injected fault (a wait) or one of a code defined outside coded (whose product
may block) runs in the server's thread."""


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ResidentJob:
    """One worker's part of a call: the batch chain of code worker `worker`.

    Parameters
    ----------
    token : int
        The job's number on its client (its stop and its done name it).
    call_id : str
        The call's id (ends in the client's process id).
    key : str
        Dask key of code worker `worker`'s placed share.
    holder : str or None
        Address of the Dask worker holding `key` when it is not this one (a
        speculative backup fetches the share from there for this call only).
    multiply : callable
        The code's product ``(left, right) -> left @ right``.
    worker : int
        Code worker whose rows these batches are.
    batches : tuple of (int, int, int, TaskFault)
        ``(batch, start, stop, fault)`` in chain order.
    plain : bool
        `multiply` is one of coded's own products (no wait, no lock): a small
        batch of it may run on the event loop (see :data:`INLINE_WORK`).
    submitted_at : float
        Wall-clock time the client sent the call.
    """

    token: int
    call_id: str
    key: str
    holder: str | None
    multiply: Any
    worker: int
    batches: tuple[tuple[int, int, int, TaskFault], ...]
    submitted_at: float
    plain: bool = False


class ResidentServer(WorkerPlugin):
    """Serve calls on the placed shares this worker holds (see module docs).

    Registered once per client by ``coded.place_operand`` (idempotent: one per
    worker, shared by every client); workers that join later get it from the
    scheduler. ``running`` counts the calls in progress (tests read it).
    """

    name = PLUGIN_NAME
    idempotent = True

    def setup(self, worker: Any) -> None:
        self.worker = worker
        self.running: dict[tuple[str, int], threading.Event] = {}  # job -> its stop
        self.inboxes: dict[tuple[str, int], asyncio.Queue] = {}  # a leader's replies
        self.idle: dict[str, list[Any]] = defaultdict(list)  # a leader's channels
        self.channels = 0
        self.served = 0
        self.executor = ThreadPoolExecutor(1, thread_name_prefix="coded-resident")
        worker.handlers[CHANNEL_OP] = self.channel

    def teardown(self, worker: Any) -> None:
        worker.handlers.pop(CHANNEL_OP, None)
        for cancelled in self.running.values():
            cancelled.set()
        self.executor.shutdown(wait=False)

    async def channel(self, comm: Any, job: bytes, right: Any) -> Status:
        """Serve the jobs of one channel until it closes (:data:`CHANNEL_OP`)."""
        self.channels += 1
        serving = None
        try:
            job = read_job(job)
            while True:
                serving = asyncio.ensure_future(self._job(comm, job, right))
                while True:
                    message = await comm.read()
                    if "stop" not in message:
                        break
                    self._stop((message["call"], message["stop"]))
                await serving  # the client sends a job once the last is done
                job, right = read_job(message["job"]), message["right"]
        except (OSError, CommClosedError):  # the client left: stop its job
            if serving is not None and not serving.done():
                self._stop((job.call_id, job.token))
        finally:
            self.channels -= 1
        return Status.dont_reply

    def _stop(self, key: tuple[str, int]) -> None:
        """Stop job `key` if it runs (a leader stops its members too)."""
        cancelled = self.running.get(key)
        if cancelled is not None:
            _stop(_signal(*key), cancelled)
        inbox = self.inboxes.get(key)
        if inbox is not None:
            inbox.put_nowait(None)

    async def _job(self, comm: Any, job: ResidentJob | GroupJob, right: Any) -> None:
        """Compute and answer one job; its stop is in ``running`` meanwhile."""
        key = (job.call_id, job.token)
        cancelled = self.running[key] = threading.Event()
        try:
            if isinstance(job, GroupJob):
                answer = await self._lead(job, right, key)
                cancelled.set()
                await comm.write({**answer, "done": job.token})
            elif not await self._serve(comm, job, right, cancelled):
                cancelled.set()  # a stop from now on only meets a finished chain
                await comm.write({"done": job.token})
        except (OSError, CommClosedError):  # the client left: nothing to answer
            pass
        finally:
            del self.running[key]
            self.inboxes.pop(key, None)
            self.served += 1

    async def _lead(
        self, job: GroupJob, right: Any, key: tuple[str, int]
    ) -> dict[str, Any]:
        """Lead group ``job.group`` (:mod:`coded.runtime._leader`); its answer."""
        inbox = self.inboxes[key] = asyncio.Queue()
        chains = _member_jobs(job)
        # the members whose shares this worker holds: a stop of its own per chain
        own = {
            m.token: threading.Event()
            for address, m in chains
            if address == self.worker.address
        }

        def stop_own() -> None:
            for token, cancelled in own.items():
                _stop(_signal(job.call_id, token), cancelled)

        async def run_own(comm: Any, member: ResidentJob, right: Any) -> None:
            cancelled = own[member.token]
            if not await self._serve(comm, member, right, cancelled):
                cancelled.set()
                await comm.write({"done": member.token})

        return await lead(
            job,
            chains,
            right,
            address=self.worker.address,
            connect=self.worker.rpc.connect,
            idle=self.idle,
            run_own=run_own,
            stop_own=stop_own,
            inbox=inbox,
        )

    async def _serve(
        self, comm: Any, job: ResidentJob, right: Any, cancelled: threading.Event
    ) -> bool:
        """Compute and write the chain's batches until it ends or is cancelled.

        Returns whether the done went with the last batch's result (one message
        less per call for a chain that ends as planned).
        """
        try:
            left = await self._share(job)
        except KeyError as error:
            await comm.write({"batch": job.batches[0][0], "why": error.args[0]})
            return False
        loop = asyncio.get_running_loop()
        last = job.batches[-1][0]
        for batch, start, stop, fault in job.batches:
            if cancelled.is_set():
                return False
            rows = (start, stop, fault)
            try:
                small = _work(left, right, start, stop) <= INLINE_WORK
                if job.plain and fault.is_noop and small:
                    output = _compute(left, right, job, rows, self.worker)
                else:
                    output = await loop.run_in_executor(
                        self.executor, _compute, left, right, job, rows, self.worker
                    )
            except Exception as error:  # a named failure of this worker
                why = f"its batch raised {type(error).__name__}: {error}"
                await comm.write({"batch": batch, "why": why})
                return False
            reply = {"batch": batch, "output": to_serialize(output)}
            if batch == last:
                cancelled.set()  # a stop from now on only meets a finished chain
                reply["done"] = job.token
            await comm.write(reply)
        return True

    async def _share(self, job: ResidentJob) -> Any:
        """Return the share of `job` (fetched from its holder for a backup)."""
        data = self.worker.data
        if job.key in data:
            return data[job.key]
        if job.holder is None or job.holder == self.worker.address:
            raise KeyError(
                f"its placed share {job.key} is not on {self.worker.address}"
            )
        from distributed.worker import get_data_from_worker

        response = await get_data_from_worker(
            self.worker.rpc, [job.key], job.holder, who=self.worker.address
        )
        if response.get("status") != "OK" or job.key not in response["data"]:
            raise KeyError(
                f"its share {job.key} could not be fetched from {job.holder}"
            )
        return response["data"][job.key]


def _member_jobs(job: GroupJob) -> list[tuple[str, ResidentJob]]:
    """Return a group's members' jobs: their chains, with their injected faults."""
    chains: list[tuple[str, ResidentJob]] = []
    faults = job.faults
    for (address, worker, key, token), ranges in zip(
        job.members, job.batches, strict=True
    ):
        batches = tuple(
            (
                j,
                start,
                stop,
                TaskFault()
                if faults is None
                else faults.task_fault(worker - job.first, rows=stop - start),
            )
            for j, (start, stop) in enumerate(ranges)
        )
        member = ResidentJob(
            token=token,
            call_id=job.call_id,
            key=key,
            holder=None,
            multiply=job.code.multiply,
            worker=worker,
            batches=batches,
            submitted_at=job.submitted_at,
            plain=job.plain,
        )
        chains.append((address, member))
    return chains


def _compute(
    left: Any, right: Any, job: ResidentJob, rows: tuple[int, int, TaskFault], host: Any
) -> Any:
    """One batch, by the task path's own function (looked up: patches apply)."""
    start, stop, fault = rows
    with _as_task_of(host):
        return _worker.run_batch(
            left,
            right,
            multiply=job.multiply,
            worker=job.worker,
            start=start,
            stop=stop,
            fault=fault,
            call_id=job.call_id,
            submitted_at=job.submitted_at,
            signal=_signal(job.call_id, job.token),
        )


def _work(left: Any, right: Any, start: int, stop: int) -> int:
    """Multiply-adds of rows ``[start, stop)`` of ``left @ right`` (dense bound)."""
    columns = 1 if np.ndim(right) < 2 else int(np.shape(right)[1])
    inner = int(np.shape(left)[1]) if np.ndim(left) == 2 else 1
    return (stop - start) * inner * columns


def _signal(call_id: str, token: int) -> str:
    """Key of job `token`'s cancel signal (its injected waits wait on it)."""
    return f"{call_id}#{token}"


def _stop(signal: str, cancelled: threading.Event) -> None:
    """End the chain on the client's stop (or its leaving); wake its waits.

    After the chain's last batch (`cancelled` already set) a stop changes
    nothing; before, it also wakes the job's injected waits (`signal`).
    """
    if not cancelled.is_set():
        cancelled.set()
        _worker.cancel_signal(signal).set()


@contextlib.contextmanager
def _as_task_of(host: Any) -> Iterator[None]:
    """Let the code's ``multiply`` call ``distributed.get_worker()`` as in a task.

    Distributed keeps the running task's worker in a context variable that
    only its task executor sets; it is set here for the server's thread too.
    """
    import distributed.worker

    current = getattr(distributed.worker, "_worker_cvar", None)
    token = None if current is None else current.set(host)
    try:
        yield
    finally:
        if token is not None:
            current.reset(token)
