"""Group leaders: a resident server gathers and decodes its group's results.

A call with ``transport="grouped"`` on a placed two-level (or deeper) code sends
one message per outer group, ``{"job": GroupJob, "right": B}``, to one member's
resident server: the group's leader. The leader sends every other member its
batch chain (a :class:`~coded.runtime._resident_server.ResidentJob`) on a channel
of its own worker's ``rpc`` pool, as the client does for a flat call, runs its own
chain in its server, and feeds the pieces to the code's decoder. Once the group
decodes (every level below the outer code, :meth:`decode_group` of the code's
decoder) it sends one answer onward, ``{"group": g, "decoded": DecodedGroup,
"members": report, "done": token}``, and stops the members still computing. A
member whose batch fails or whose channel closes is lost; once the group can no
longer decode, or at the job's deadline, the answer is ``{"group": g, "why": ...,
"members": report, "done": token}``. A stop from the client stops the members
and ends the job with a bare done.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from distributed.protocol import Serialize, to_serialize

from coded.codes import EncodedOperands
from coded.injection import FaultPlan
from coded.runtime._channels import Channel, job_message, serve_job, shared

__all__ = ["GroupJob", "MemberReport", "lead"]

MemberReport = dict[int, tuple[float, str]]
"""Per member (code worker): ``(finish, status)``, finish in wall-clock seconds
since the call's submission (NaN if it never finished), status ``"used"``,
``"unused"``, ``"failed"`` or ``"cancelled"``, as a task record's."""


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class GroupJob:
    """One outer group's part of a call, sent to its leader.

    Parameters
    ----------
    token : int
        The job's number on its client (its stop and its done name it).
    call_id : str
        The call's id.
    group : int
        The outer group.
    code : Code
        The call's code: its decoder decodes a group (``decode_group``).
    encoded : EncodedOperands
        The decoding context only (no operand).
    members : tuple of (str, int, str, int)
        Per member with a placed share: its Dask worker's address, its code
        worker, its share's key and the token of its chain's job.
    batches : tuple of tuple of (int, int)
        Per member (in the order of `members`): its batches' row ranges.
    faults : FaultPlan or None
        The injected faults of the group's workers, worker ``first`` first.
    first : int
        The group's first code worker.
    plain : bool
        As :attr:`ResidentJob.plain`.
    patience : float
        Seconds from the job's arrival until the leader gives up on its group.
    submitted_at : float
        Wall-clock time the client sent the call.

    The leader builds its members' jobs (their faults drawn from `faults`):
    the client's work per worker stays a few tuples.
    """

    token: int
    call_id: str
    group: int
    code: Any
    encoded: EncodedOperands
    members: tuple[tuple[str, int, str, int], ...]
    batches: tuple[tuple[tuple[int, int], ...], ...]
    faults: FaultPlan | None
    first: int
    plain: bool
    patience: float
    submitted_at: float


_running: set[asyncio.Future] = set()  # the members' streams, until they end


def _spawn(work: Awaitable[None]) -> None:
    """Run `work` in the background (kept referenced until it ends)."""
    future = asyncio.ensure_future(work)
    _running.add(future)
    future.add_done_callback(_running.discard)


class _Inbox:
    """The leader's own chain writes its replies here (as to a channel)."""

    def __init__(self, queue: asyncio.Queue, worker: int) -> None:
        self.queue, self.worker = queue, worker

    async def write(self, reply: dict[str, Any]) -> None:
        self.queue.put_nowait((self.worker, reply))


async def lead(
    job: GroupJob,
    chains: Sequence[tuple[str, Any]],
    right: Any,
    *,
    address: str,
    connect: Callable[[str], Any],
    idle: dict[str, list[Any]],
    run_own: Callable[[_Inbox, Any, Any], Awaitable[None]],
    stop_own: Callable[[], None],
    inbox: asyncio.Queue,
) -> dict[str, Any]:
    """Gather and decode group `job.group`; return the answer to send onward.

    Parameters
    ----------
    job : GroupJob
    chains : sequence of (str, ResidentJob)
        Its members' addresses and jobs.
    right : array
        The right operand, forwarded to the members.
    address : str
        This worker's address (its own member's chain runs here).
    connect, idle
        The worker's rpc pool's connect and its idle channels per address.
    run_own, stop_own
        Run this worker's chain into an inbox; stop it.
    inbox : asyncio.Queue
        Where the members' replies arrive, ``(worker, reply)``; ``None`` is the
        client's stop.

    Returns
    -------
    dict
        The answer (``decoded`` or ``why``, and ``members``); ``{}`` if stopped.
    """
    decoder = job.code.decoder(job.encoded)
    forwarded = shared(right)
    group, deadline = job.group, time.perf_counter() + job.patience
    channels: dict[int, Channel] = {}
    outstanding = {member.worker for _, member in chains}
    report: MemberReport = dict.fromkeys(outstanding, (math.nan, "cancelled"))
    for member_address, member in chains:
        if member_address == address:
            own = _Inbox(inbox, member.worker)
            _spawn(run_own(own, member, right))
            continue
        channel = Channel(member_address, job.call_id, member.token)
        channels[member.worker] = channel
        _spawn(
            _member(
                member, forwarded, channel, connect, idle[member_address], inbox, job
            )
        )
    try:
        why = await _gather(job, decoder, outstanding, report, inbox, deadline)
    finally:
        stop_own()
        for worker in outstanding:
            if worker in channels:
                channel = channels[worker]
                channel.stopped = True
                _spawn(channel.send_stop())
    if why is None:
        decoded = decoder.decode_group(group)
        for worker in decoded.used:
            report[worker] = (report[worker][0], "used")
        return {"group": group, "decoded": to_serialize(decoded), "members": report}
    if why == "stopped":
        return {}
    return {"group": group, "why": why, "members": report}


async def _member(
    member: Any,
    right: Any,
    channel: Channel,
    connect: Callable[[str], Any],
    idle: list[Any],
    inbox: asyncio.Queue,
    job: GroupJob,
) -> None:
    """Send a member its chain; its replies (and its end) go to `inbox`."""
    message = job_message(member, right)
    why = await serve_job(
        connect,
        idle,
        channel,
        message,
        max(0.0, job.patience),
        lambda reply: inbox.put_nowait((member.worker, reply)),
    )
    if why is not None:
        inbox.put_nowait((member.worker, {"why": why, "done": member.token}))


async def _gather(
    job: GroupJob,
    decoder: Any,
    outstanding: set[int],
    report: MemberReport,
    inbox: asyncio.Queue,
    deadline: float,
) -> str | None:
    """Feed the members' pieces to `decoder` until the group decodes.

    Returns None once it decodes, ``"stopped"`` on the client's stop, else why
    the group cannot decode.
    """
    code, group, done = job.code, job.group, set()
    lost: dict[int, str] = {}
    while not decoder.group_is_decodable(group):
        if not code.group_decodes(group, done | outstanding):
            return f"group {group} lost too many members: " + "; ".join(
                f"worker {w} {why}" for w, why in sorted(lost.items())
            )
        remaining = deadline - time.perf_counter()
        try:
            async with asyncio.timeout(max(0.0, remaining)):
                item = await inbox.get()
        except TimeoutError:
            waiting = sorted(outstanding)
            return f"workers {waiting} of group {group} did not answer in time"
        if item is None:
            return "stopped"
        worker, reply = item
        if "output" in reply:
            output = _unwrap(reply["output"])
            report[worker] = (time.time() - job.submitted_at, "unused")
            decoder.add(output.piece)
            if "done" in reply:
                outstanding.discard(worker)
                done.add(worker)
        elif worker in outstanding and ("why" in reply or "done" in reply):
            outstanding.discard(worker)
            lost[worker] = reply.get("why", "stopped before its last batch")
            report[worker] = (math.nan, "failed")
    return None


def _unwrap(value: Any) -> Any:
    """Return a reply field's object (a local reply keeps its Serialize wrapper)."""
    return value.data if isinstance(value, Serialize) else value
