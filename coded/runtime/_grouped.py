"""The client side of group-local decoding: one message per outer group.

A :class:`GroupedRun` drives a call on a placed multi-level code
(:class:`~coded.codes.HierarchicalCode`) through group leaders
(:mod:`coded.runtime._leader`): it sends each outer group's jobs to one member's
resident server, which gathers and decodes its group, and decodes only the outer
code from the groups' answers. A leader whose connection closes or that stops
answering is replaced by the group's next member (the members' own chains are
sent again from there); a group that cannot decode (too many members lost)
counts as missing, as an outer straggler. The call fails with
`NotEnoughResultsError` once fewer than ``k_0`` groups can still answer, at the
latest at its timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from distributed import Client

from coded.codes import EncodedOperands
from coded.errors import NotEnoughResultsError
from coded.injection import FaultPlan
from coded.runtime._call import CallSpec
from coded.runtime._channels import Channel, job_message, serve_job, shared
from coded.runtime._leader import GroupJob, MemberReport
from coded.runtime._resident import (
    _GRACE_SECONDS,
    PlacedRun,
    _idle_channels,
    _tokens,
)
from coded.runtime._state import tolerance

__all__ = ["GroupedRun"]

_POLL_SECONDS = 0.25
_LEADER_GRACE = 1.0  # a leader waits this long past the call's deadline: the
# client decides the timeout, naming the groups still computing


@dataclass(slots=True, eq=False)
class _Group:
    """One outer group: its members, the leaders tried, its outcome."""

    members: tuple[int, ...]
    tried: list[int]
    channel: Channel | None = None  # the current leader's, while it runs
    answered: bool = False
    why: str = ""  # why it cannot answer (empty while it may)


class GroupState:
    """What the call's handle reads: the outer decoder and the members' record."""

    def __init__(self, spec: CallSpec, decoder: Any) -> None:
        self.code, self.decoder = spec.code, decoder
        self.n, self.timeout = len(spec.addresses), spec.timeout
        self.submitted_at = time.perf_counter()
        self.finish = [math.nan] * self.n
        self.report: MemberReport = {}
        self.lost: dict[int, str] = {}  # worker -> why
        self.used: dict[int, tuple[int, ...]] = {}  # group -> workers its decode used
        self.suspects: dict[int, str] = {}
        self.backups = 0
        self.detection_floor = math.nan
        self.is_over = False

    @property
    def deadline(self) -> float:
        return self.submitted_at + self.timeout

    @property
    def used_workers(self) -> tuple[int, ...]:
        """Workers whose results the decoded groups used."""
        chosen = sorted(self.used)[: self.code.levels[0][1]]
        return tuple(sorted(w for g in chosen for w in self.used[g]))

    def failed_workers(self) -> set[int]:
        failed = {w for w, (_, status) in self.report.items() if status == "failed"}
        return failed | set(self.lost)

    def record(self, report: MemberReport) -> None:
        """Take a leader's report of its members (finish since submission)."""
        self.report.update(report)
        for worker, (finish, _) in report.items():
            self.finish[worker] = finish

    def not_enough(self, why: str, groups: dict[int, _Group]) -> NotEnoughResultsError:
        missing = "; ".join(
            f"group {g}: {group.why or 'still computing'}"
            for g, group in groups.items()
            if not group.answered
        )
        needed = self.code.levels[0][1]
        lost = {w: self.lost.get(w, "its task failed") for w in self.failed_workers()}
        return NotEnoughResultsError(
            f"{why}: {len(self.used)} of the {needed} outer groups needed decoded "
            f"(groups {sorted(self.used)}); {missing}. The "
            f"code tolerates {tolerance(self.code)} lost of {self.n} shares, and "
            f"{len(groups) - needed} missing groups.",
            lost_workers=lost,
            tolerance=tolerance(self.code),
        )


class GroupedRun(PlacedRun):
    """One call through group leaders (client side)."""

    transport = "grouped"

    def __init__(self, client: Client, spec: CallSpec, call_id: str) -> None:
        super().__init__(client, spec, call_id)
        self.state = GroupState(spec, self.code.decoder(self.encoded))
        self.lost = self.state.lost  # the shares lost since placement, and leaders
        n0 = self.code.levels[0][0]
        size = self.n // n0
        self.groups = {
            g: _Group(tuple(range(g * size, (g + 1) * size)), []) for g in range(n0)
        }
        self.inbox: list[tuple[int, dict[str, Any] | str]] = []
        self.readers: set[asyncio.Future] = set()
        self.right = shared(self.encoded.right(0))  # a row code's one B
        self.light = EncodedOperands(
            lefts=(), rights=None, shared_right=None, context=self.encoded.context
        )

    def start(self) -> None:
        """Send every group's jobs to its leader."""
        self.state.submitted_at = time.perf_counter()
        for g in self.groups:
            self._lead(g)

    # ---- leaders -------------------------------------------------------------
    def _lead(self, g: int) -> None:
        """Send group `g` to its next leader, or mark it missing if none is left."""
        group, state = self.groups[g], self.state
        placed = [w for w in group.members if w not in state.lost]
        candidates = [w for w in placed if w not in group.tried]
        whole = len(placed) == len(group.members)
        if not candidates or not (whole or self.code.group_decodes(g, placed)):
            tried = ", ".join(f"worker {w}: {state.lost[w]}" for w in group.tried)
            group.why = group.why or f"no member left to lead it ({tried or 'none'})"
            return
        leader = candidates[0]
        group.tried.append(leader)
        first = group.members[0]
        job = GroupJob(
            token=next(_tokens),
            call_id=self.call_id,
            group=g,
            code=self.code,
            encoded=self.light,
            members=tuple(
                (self.addresses[w], w, self.keys[w], next(_tokens)) for w in placed
            ),
            batches=tuple(tuple(self.spec.batches[w]) for w in placed),
            faults=_window(self.spec.faults, first, first + len(group.members)),
            first=first,
            plain=self.plain,
            patience=max(0.0, state.deadline - time.perf_counter()) + _LEADER_GRACE,
            submitted_at=time.time(),
        )
        group.channel = Channel(self.addresses[leader], self.call_id, job.token)
        reader = asyncio.ensure_future(self._serve(g, leader, job, group.channel))
        self.readers.add(reader)
        reader.add_done_callback(self.readers.discard)

    async def _serve(
        self, g: int, leader: int, job: GroupJob, channel: Channel
    ) -> None:
        message = job_message(job, self.right)
        why = await serve_job(
            self.client.rpc.connect,
            _idle_channels(self.client)[channel.address],
            channel,
            message,
            job.patience + _GRACE_SECONDS,
            lambda reply: self._push(g, reply),
        )
        if why is not None:
            self.state.lost[leader] = f"led group {g}: {why}"
            self._push(g, why)

    def _push(self, g: int, item: dict[str, Any] | str) -> None:
        self.inbox.append((g, item))
        self.woken.set()

    # ---- decisions -----------------------------------------------------------
    def _take(self, g: int, item: dict[str, Any] | str) -> None:
        """Record a leader's answer, or replace a leader that was lost."""
        group, state = self.groups[g], self.state
        if isinstance(item, str):  # the leader was lost: the next member leads
            if not group.answered and not group.why:
                self._lead(g)
            return
        state.record(item.get("members", {}))
        if "decoded" in item:
            decoded = item["decoded"]
            group.answered = True
            state.used[g] = decoded.used
            if not state.decoder.is_decodable:
                state.decoder.add_group(decoded)
        elif "why" in item:
            group.why = item["why"]
        if "done" in item:
            group.channel = None

    def _decision(self) -> NotEnoughResultsError | None:
        state = self.state
        if state.decoder.is_decodable:
            return None
        possible = sum(1 for group in self.groups.values() if not group.why)
        if possible < self.code.levels[0][1]:
            return state.not_enough("too many groups cannot answer", self.groups)
        if time.perf_counter() >= state.deadline:
            return state.not_enough(f"timeout after {state.timeout} s", self.groups)
        return None

    # ---- wait ----------------------------------------------------------------
    async def wait_async(self) -> None:
        """Take the leaders' answers as they arrive until the outer code decodes."""
        state = self.state
        while True:
            burst, self.inbox = self.inbox, []
            for g, item in burst:
                self._take(g, item)
            error = self._decision()
            if error is not None or state.decoder.is_decodable:
                state.is_over = True
                if error is not None:
                    raise error
                return
            if not self.inbox:
                self.woken.clear()
                remaining = max(0.0, state.deadline - time.perf_counter())
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(
                        self.woken.wait(), min(_POLL_SECONDS, remaining)
                    )

    # ---- release -------------------------------------------------------------
    def release(self) -> int:
        """Stop the leaders still running; count the member batches not computed."""
        self.state.is_over = True
        for group in self.groups.values():
            if group.channel is not None and not group.channel.stopped:
                group.channel.stopped = True
                self.client.loop.add_callback(group.channel.send_stop)
        self.records = tuple(self._records())
        self.cancelled = sum(1 for record in self.records if record[5] == "cancelled")
        return self.cancelled

    def _records(self) -> Iterator[tuple[int, int, int, int, float, str, int]]:
        report, used = self.state.report, set(self.state.used_workers)
        for worker, ranges in enumerate(self.spec.batches):
            finish, status = report.get(worker, (math.nan, "cancelled"))
            if worker in self.state.lost and worker not in report:
                status = "failed"
            elif status == "used" and worker not in used:  # its group was spare
                status = "unused"
            for j, (start, stop) in enumerate(ranges):
                yield worker, j, start, stop, finish, status, 1


def _window(plan: FaultPlan | None, start: int, stop: int) -> FaultPlan | None:
    """Return the faults of code workers ``start ... stop - 1`` (a group), in order."""
    if plan is None:
        return None
    rows = {f.name: getattr(plan, f.name)[start:stop] for f in dataclasses.fields(plan)}
    return dataclasses.replace(plan, **rows)
