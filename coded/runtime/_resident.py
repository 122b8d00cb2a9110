"""The client side of the resident transport: calls on placed shares, no scheduler.

:func:`serve_placements` installs the worker plugin
(``_resident_server.ResidentServer``) once per client. A :class:`ResidentRun`
drives one call's pure :class:`~coded.runtime._state.RunState` as the task
driver does, with messages instead of tasks: `Submit` sends each worker its
batch chain on an idle channel (a connection of the client's own ``rpc`` pool,
kept open across calls and closed with the client; TLS clusters are served
alike), one reader per job turns the batches that stream back into
`TaskFinished` / `TaskFailed` events, `Cancel` writes the stop on the channels
still computing, `Backup` sends one batch to another worker (which fetches the
share for that call). A channel that closes (its worker died) fails that
worker's outstanding batches at once; one silent past the deadline (a stopped
process) is abandoned.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
import weakref
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from distributed import Client
from distributed.protocol.serialize import Serialized

from coded.codes.interface import (
    HierarchicalContext,
    RatelessContext,
    TransposedContext,
    UnitContext,
)
from coded.runtime._call import CallSpec, new_state, task_fault
from coded.runtime._channels import Channel, job_message, serve_job, shared
from coded.runtime._dask_helpers import live_addresses_async, scheduler_lost
from coded.runtime._resident_server import (
    PLUGIN_NAME,
    ResidentJob,
    ResidentServer,
)
from coded.runtime._state import (
    Action,
    Backup,
    BatchTask,
    Cancel,
    Cancelled,
    CopyKey,
    Decode,
    Event,
    Retry,
    Started,
    Submit,
    TaskFailed,
    TaskFinished,
    TaskKey,
    Tick,
    WorkersLost,
)

__all__ = ["PlacedRun", "ResidentRun", "serve_placements", "served_calls"]

_LIVENESS_SECONDS = 0.25
_IDLE_POLL_SECONDS = 0.25
_BACKUP_POLL_SECONDS = 0.01
_GRACE_SECONDS = 5.0  # a silent worker's connection outlives the deadline by this
_served: weakref.WeakSet[Client] = weakref.WeakSet()
# a client's idle channels per worker address: connections of its rpc pool that
# stay open (occupied) until the client closes them with the pool
_channels: weakref.WeakKeyDictionary[Client, dict[str, list[Any]]] = (
    weakref.WeakKeyDictionary()
)
_tokens = itertools.count()


def _idle_channels(client: Client) -> dict[str, list[Any]]:
    return _channels.setdefault(client, defaultdict(list))


def serve_placements(client: Client) -> bool:
    """Install the resident servers on `client`'s workers (once); whether they run.

    The plugin is registered with the scheduler, which also installs it on
    workers that join later. False (the task transport serves the placement)
    when a worker refuses it.
    """
    if client in _served:
        return True
    try:
        client.register_plugin(ResidentServer(), name=PLUGIN_NAME)
    except Exception:  # an old or foreign worker: the task path still serves
        return False
    _served.add(client)
    return True


def _served_calls(dask_worker: Any) -> dict[str, int] | None:
    plugin = dask_worker.plugins.get(PLUGIN_NAME)
    if plugin is None:
        return None
    return {
        "running": len(plugin.running),
        "channels": plugin.channels,
        "served": plugin.served,
        "shares": sum(1 for key in dask_worker.data if _is_share(key)),
    }


def _is_share(key: Any) -> bool:
    return str(key).startswith("coded-") and "-left-" in str(key)


def served_calls(client: Client) -> dict[str, dict[str, int] | None]:
    """Per worker, its resident server's state (None: a worker without one).

    ``running``: jobs in progress; ``channels``: clients' connections open to
    it; ``served``: jobs served so far; ``shares``: placed shares it holds.
    """
    return client.run(_served_calls)


@dataclass(slots=True, eq=False)
class _Stream:
    """One connection serving one job: the copies it still owes."""

    channel: Channel
    pending: dict[int, CopyKey]  # batch -> (task, copy)
    reader: Any = None  # the task sending the job and reading its replies


class PlacedRun:
    """What every call on placed shares starts with: the shares' keys, or lost.

    The drivers of the resident servers (:class:`ResidentRun`, and the group
    leaders' ``GroupedRun``) build on it; the same duck type as the task
    driver's run for :class:`MatmulHandle`.
    """

    def __init__(self, client: Client, spec: CallSpec, call_id: str) -> None:
        self.client, self.spec, self.call_id = client, spec, call_id
        self.code, self.encoded = spec.code, spec.encoded
        self.remembered_suspects = spec.suspects
        self.layout = None
        self.addresses = list(spec.addresses)
        self.n = len(self.addresses)
        self.lost: dict[int, str] = {}  # code worker -> why it never returns
        self.keys: list[str | None] = []
        self.arrived: list[Any] = []
        self.woken = asyncio.Event()
        self.cancelled = 0
        self.records: tuple[tuple[int, int, int, int, float, str, int], ...] = ()
        # coded's own row codes multiply plainly; another product may block
        products = (
            UnitContext | TransposedContext | RatelessContext | HierarchicalContext
        )
        self.plain = type(self.code).__module__.startswith("coded.codes") and (
            isinstance(self.encoded.context, products)
        )

    def _key(self, *parts: object) -> str:
        return "-".join(["coded", self.spec.label_or_default, *map(str, parts)])

    async def place_async(self) -> None:
        """Nothing to ship: note the shares lost since placement."""
        for i, share in enumerate(self.spec.placed_lefts or ()):
            if share is None or share.status != "finished":
                self.lost[i] = f"its placed share on {self.addresses[i]} was lost"
                self.keys.append(None)
            else:
                self.keys.append(share.key)

    def wait(self) -> None:
        """Wait (blocking) until decodable, or raise `NotEnoughResultsError`."""
        if not self.state.is_over:
            self.client.sync(self.wait_async)


class ResidentRun(PlacedRun):
    """One call on the resident servers (client side): the I/O around its state."""

    transport = "resident"

    def __init__(self, client: Client, spec: CallSpec, call_id: str) -> None:
        super().__init__(client, spec, call_id)
        self.state = new_state(spec)
        self.results: dict[TaskKey, Any] = {}
        self.inbox: list[Event] = []
        self.streams: set[_Stream] = set()
        self.rights: dict[int, Serialized] = {}  # right operands, serialized once
        self.hosts: dict[CopyKey, _Stream] = {}
        self.late: set[CopyKey] = set()

    def _job(self, chain: Sequence[BatchTask], host: int) -> ResidentJob:
        """Return the job of `chain` (one code worker's batches) on `host`'s server."""
        worker = chain[0].worker
        return ResidentJob(
            token=next(_tokens),
            call_id=self.call_id,
            key=self.keys[worker],
            holder=None if host == worker else self.addresses[worker],
            multiply=self.code.multiply,
            worker=worker,
            batches=tuple(
                (t.batch, t.start, t.stop, task_fault(self.spec, t, host))
                for t in chain
            ),
            submitted_at=time.time(),
            plain=self.plain,
        )

    def start(self) -> None:
        """Send every worker its chain (the state's first action)."""
        started = Started(now=time.perf_counter(), lost=self.lost)
        self._act(self.state.handle(started))

    # ---- carry out the state's actions -------------------------------------
    def _act(self, actions: list[Action]) -> None:
        for action in actions:
            if isinstance(action, Submit | Retry):
                copy = 0 if isinstance(action, Submit) else None
                self._send(action.tasks, copy)
            elif isinstance(action, Backup):
                self._send_to(action.host, [action.task], copy=None)
            elif isinstance(action, Cancel):
                self._cancel(action.copies)
            elif isinstance(action, Decode):
                self.arrived = [self.results[task] for task in action.tasks]
            elif self.client.status != "running":
                raise scheduler_lost(self.client, "during the call")
            else:
                raise action.error

    def _send(self, tasks: Sequence[BatchTask], copy: int | None) -> None:
        chains: dict[int, list[BatchTask]] = defaultdict(list)
        for task in tasks:
            chains[task.worker].append(task)
        for worker, chain in chains.items():
            self._send_to(worker, chain, copy)

    def _send_to(self, host: int, chain: list[BatchTask], copy: int | None) -> None:
        """Send `chain` (one code worker's batches) to code worker `host`'s server.

        `copy` None: the copy index is the latest the state gave the task.
        """
        worker = chain[0].worker
        latest = {t.key: len(self.state.tasks[t.key].hosts) - 1 for t in chain}
        copies = {
            t.batch: (t.key, latest[t.key] if copy is None else copy) for t in chain
        }
        job = self._job(chain, host)
        channel = Channel(self.addresses[host], self.call_id, job.token)
        stream = _Stream(channel=channel, pending=copies)
        self.streams.add(stream)
        for copy_key in copies.values():
            self.hosts[copy_key] = stream
        right = self._right(worker)
        stream.reader = asyncio.ensure_future(self._serve(stream, job, right))

    def _right(self, worker: int) -> Serialized:
        """Worker `worker`'s right operand, serialized once for all who share it."""
        right = self.encoded.right(worker)
        if id(right) not in self.rights:
            self.rights[id(right)] = shared(right)
        return self.rights[id(right)]

    async def _serve(
        self, stream: _Stream, job: ResidentJob, right: Serialized
    ) -> None:
        """Send `job` on an idle channel and turn its replies into events."""
        address = stream.channel.address
        message = job_message(job, right)

        def on_reply(reply: dict[str, Any]) -> None:
            if "batch" in reply:
                self._push(self._event(stream, reply))

        why = await serve_job(
            self.client.rpc.connect,
            _idle_channels(self.client)[address],
            stream.channel,
            message,
            self._patience(),
            on_reply,
        )
        self._ended(stream, why or "its chain stopped after a failed batch")
        self.streams.discard(stream)

    def _patience(self) -> float:
        """Seconds a job may take to answer: until past the call's deadline."""
        return max(0.0, self.state.deadline - time.perf_counter()) + _GRACE_SECONDS

    def _event(self, stream: _Stream, reply: dict[str, Any]) -> Event:
        task, copy = stream.pending.pop(reply["batch"])
        now = time.perf_counter()
        if "output" in reply:
            output = reply["output"]
            self.results.setdefault(task, output)
            return TaskFinished(task=task, copy=copy, now=now, piece=output.piece)
        why = f"on {stream.channel.address}: {reply['why']}"
        return TaskFailed(task=task, copy=copy, now=now, why=why)

    def _ended(self, stream: _Stream, why: str) -> None:
        """Fail the copies `stream` still owes (none when it was stopped)."""
        if not stream.channel.stopped:
            now = time.perf_counter()
            for task, copy in stream.pending.values():
                self._push(TaskFailed(task=task, copy=copy, now=now, why=why))
        stream.pending.clear()
        self.woken.set()

    def _push(self, event: Event) -> None:
        self.inbox.append(event)
        self.woken.set()

    def _cancel(self, copies: Sequence[CopyKey]) -> None:
        """Stop the connections computing `copies` (from any thread); count them."""
        streams = {self.hosts[copy] for copy in copies if copy in self.hosts}
        self.cancelled += sum(
            1 for copy in copies if copy in self.hosts and copy not in self.late
        )
        for stream in streams:
            if not stream.channel.stopped:
                stream.channel.stopped = True
                self.client.loop.add_callback(stream.channel.send_stop)

    # ---- wait --------------------------------------------------------------
    async def wait_async(self) -> None:
        """Take the replies as they arrive until the state decides."""
        poll = _IDLE_POLL_SECONDS if self.spec.policy is None else _BACKUP_POLL_SECONDS
        last_check = time.perf_counter()
        self._tick()  # lost before submission: fail at once
        while not self.state.is_over:
            if not self.inbox:
                self.woken.clear()
                remaining = max(0.0, self.state.deadline - time.perf_counter())
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.woken.wait(), min(poll, remaining))
            burst, self.inbox = self.inbox, []
            if burst:
                self._act(self.state.handle(*burst))
            if self.state.is_over:
                return
            if time.perf_counter() - last_check > _LIVENESS_SECONDS:
                alive = await live_addresses_async(self.client)
                gone = frozenset(self.addresses) - alive
                if gone:
                    lost = WorkersLost(addresses=gone, now=time.perf_counter())
                    self._act(self.state.handle(lost))
                last_check = time.perf_counter()
            self._tick()

    def _tick(self) -> None:
        if self.client.status != "running" and not self.state.decoder.is_decodable:
            raise scheduler_lost(self.client, "during the call")
        self._act(self.state.handle(Tick(now=time.perf_counter())))

    # ---- release -----------------------------------------------------------
    def release(self) -> int:
        """Stop what still runs, without waiting; count the cancelled copies."""
        late, self.inbox = self.inbox, []
        self.late |= {(e.task, e.copy) for e in late if isinstance(e, TaskFinished)}
        if not self.state.is_over:  # an error outside the state ended the call
            self._act(self.state.handle(Cancelled(now=time.perf_counter())))
        self.records = self.state.records(self.late)
        return self.cancelled
