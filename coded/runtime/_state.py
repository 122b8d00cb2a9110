"""The state of one coded run without Dask or a clock: events in, actions out.

A :class:`RunState` follows one product: worker ``i`` of the code runs its batch
chain (row ranges, in order) on Dask worker ``addresses[i]``. The driver
(``_executor.py``) turns what Dask reports into events (a task finished or
failed, Dask workers left, time passed) and carries out the actions the state
returns (submit chains, retry or back up tasks, cancel copies, decode, fail).
Time is read by the driver and passed in with every event, so any order of
events can be replayed in a test.

A worker whose task fails, whose Dask worker leaves or whose operands never
arrived is a straggler that never returns. The run decodes from the first
decodable set of pieces (waiting for more while the decoder's conditioning
guard asks for them), fails with `NotEnoughResultsError` as soon as no decodable
set can still arrive, and at the latest at its timeout.

With a `check` of the pieces (Freivalds checks of each worker's result), every
piece is checked as it arrives and a piece that fails is never decoded:
``verify="detect"`` ends the run with `InconsistentResultsError` naming its
worker, ``verify="correct"`` drops that worker as lost (a straggler that returned
garbage) and decodes from the others. A run whose pieces all pass therefore
decodes from the first decodable set, as an unchecked one would: spare results
are waited for only once a piece has failed. The largest detection floor of the
used pieces' checks is :attr:`RunState.detection_floor`.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from coded.codes import Code, Decoder, Piece
from coded.codes.interface import Verdict
from coded.errors import DecodingError, InconsistentResultsError, NotEnoughResultsError
from coded.events import Tick, TimedEvent
from theory.validation import check_real

__all__ = [
    "Action",
    "Backup",
    "BackupPolicy",
    "BatchTask",
    "Cancel",
    "Cancelled",
    "CopyKey",
    "Decode",
    "Event",
    "Fail",
    "Retry",
    "RunState",
    "Started",
    "Submit",
    "TaskFailed",
    "TaskFinished",
    "TaskKey",
    "Tick",
    "WorkersLost",
    "tolerance",
]

TaskKey = tuple[int, int]  # (code worker, batch)
CopyKey = tuple[TaskKey, int]  # (task, copy): copy 0 is the first submission
TaskRecord = tuple[int, int, int, int, float, str, int]


def tolerance(code: Code) -> int:
    """Lost code workers (shares) `code` survives whichever they are: ``n - k``."""
    return int(code.n) - int(code.recovery_threshold)


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


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchTask:
    """Rows ``[start, stop)`` of code worker `worker`'s product, batch `batch`."""

    worker: int
    batch: int
    start: int
    stop: int

    @property
    def key(self) -> TaskKey:
        """``(worker, batch)``."""
        return (self.worker, self.batch)


# ---- events (coded.events: ``now`` on the driver's clock) ----------------
@dataclass(frozen=True, slots=True, kw_only=True)
class Started(TimedEvent):
    """The chains are about to be submitted; `lost` never got their operands."""

    lost: Mapping[int, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskFinished(TimedEvent):
    """Copy `copy` of `task` returned; `piece` None: its value stays on its worker.

    `held`: the value stays on its worker and `piece` carries only what its
    check reads (its projection).
    """

    task: TaskKey
    copy: int
    piece: Piece | None = None
    held: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskFailed(TimedEvent):
    """Copy `copy` of `task` raised or was cancelled (`why`, for the error).

    `collateral`: it was cancelled with its graph while its own worker's
    operands live (another share of the graph was lost); the chain is retried once.
    """

    task: TaskKey
    copy: int
    why: str
    collateral: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkersLost(TimedEvent):
    """The Dask workers at `addresses` left the cluster."""

    addresses: frozenset[str]


@dataclass(frozen=True, slots=True, kw_only=True)
class Cancelled(TimedEvent):
    """The run ends without a decision (an error outside the state)."""


Event = Started | TaskFinished | TaskFailed | WorkersLost | Tick | Cancelled


# ---- actions -----------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class Submit:
    """Submit every chain as one graph (batch ``j + 1`` after batch ``j``)."""

    tasks: tuple[BatchTask, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Retry:
    """Submit one more copy of one worker's unfinished chain, as its own graph."""

    tasks: tuple[BatchTask, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Backup:
    """Submit one more copy of `task` on code worker `host`'s Dask worker."""

    task: BatchTask
    host: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Cancel:
    """Cancel these copies ``(task, copy)``: no result of theirs is needed."""

    copies: tuple[CopyKey, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Decode:
    """Decode from the pieces of `tasks` (in arrival order)."""

    tasks: tuple[TaskKey, ...]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Fail:
    """Raise `error`: no decodable set can arrive, or a result was wrong."""

    error: DecodingError


Action = Submit | Retry | Backup | Cancel | Decode | Fail


@dataclass(slots=True, kw_only=True, eq=False)
class _Task:
    """What the state knows of one task: its copies' hosts and outcomes."""

    task: BatchTask
    hosts: list[int] = field(default_factory=list)
    failed: set[int] = field(default_factory=set)
    finished: set[int] = field(default_factory=set)
    is_done: bool = False
    is_retried: bool = False
    finish: float = float("nan")

    @property
    def is_failed(self) -> bool:
        return not self.is_done and len(self.failed) == len(self.hosts)

    @property
    def is_outstanding(self) -> bool:
        return not self.is_done and not self.is_failed

    def status(self, finished: set[CopyKey]) -> str:
        """Return used, failed, unused (finished, not read) or cancelled."""
        if self.is_done:
            return "used"
        if self.is_failed:
            return "failed"
        copies = self.finished | {c for t, c in finished if t == self.task.key}
        return "unused" if copies else "cancelled"


class RunState:
    """One run's bookkeeping and decisions: :meth:`handle` an event, get actions.

    Parameters
    ----------
    code : Code
        The scheme (its `is_decodable` and tolerance).
    decoder : Decoder
        A fresh decoder of the run's encoded operands; the state feeds it.
    addresses : sequence of str, length n
        Dask worker of each code worker.
    batches : sequence of sequences of (int, int), length n
        Row ranges of each worker's batch chain, in order.
    timeout : float
        Seconds after `Started` by which a decodable set must have arrived.
    policy : BackupPolicy, optional
        Back up slow tasks on idle workers.
    check : callable, optional
        ``check(piece) -> bool`` or a :class:`~coded.codes.interface.Verdict`
        (which also gives the detection floor that applied): whether a piece
        is right (None: every piece is taken as it comes).
    verify : {"detect", "correct"}
        What a piece that fails `check` does: end the run with
        `InconsistentResultsError` (``"detect"``), or drop its worker as lost and
        decode from the others (``"correct"``).
    """

    def __init__(
        self,
        code: Code,
        decoder: Decoder,
        addresses: Sequence[str],
        batches: Sequence[Sequence[tuple[int, int]]],
        *,
        timeout: float,
        policy: BackupPolicy | None = None,
        check: Callable[[Piece], bool | Verdict] | None = None,
        verify: str = "detect",
    ) -> None:
        self.code, self.decoder = code, decoder
        self.check, self.verify = check, verify
        self.floors: list[float] = []  # detection floor of each used piece
        self.suspects: dict[int, str] = {}  # code worker -> its wrong piece
        self._decodable_possible: frozenset[int] | None = None  # last checked
        self.addresses, self.batches = list(addresses), batches
        self.timeout, self.policy = timeout, policy
        self.submitted_at = 0.0
        self.lost: dict[int, str] = {}  # code worker -> why it never returns
        self.tasks: dict[TaskKey, _Task] = {}
        self.finish = [float("nan")] * len(self.addresses)
        self.used_tasks: list[TaskKey] = []  # in arrival order
        self.durations: list[float] = []
        self.backups = 0
        self.is_over = False
        self._collateral: set[int] = set()  # workers whose chains to retry

    @property
    def deadline(self) -> float:
        """When the run fails unless decodable (the driver's clock)."""
        return self.submitted_at + self.timeout

    @property
    def used_workers(self) -> tuple[int, ...]:
        """Workers with at least one used piece."""
        return tuple(sorted({worker for worker, _ in self.used_tasks}))

    @property
    def detection_floor(self) -> float:
        """Largest detection floor among the used pieces' checks.

        An error of one entry of a used piece larger than this, relative to the
        piece's largest entry, was certain to fail its check
        (:class:`~coded.codes.interface.Verdict`); ``inf`` if a used piece went
        unchecked. Without a check, the decoder's own (its results compared
        with each other: ``detection_floor`` of a decoder that verifies, once it
        decoded); NaN if neither gave one.
        """
        if self.check is None:
            return float(getattr(self.decoder, "detection_floor", math.nan))
        if not self.floors or any(map(math.isnan, self.floors)):
            return math.nan
        return max(self.floors)

    def address(self, copy: CopyKey) -> str:
        """Address of the Dask worker that runs `copy`."""
        task, index = copy
        return self.addresses[self.tasks[task].hosts[index]]

    def failed_workers(self) -> set[int]:
        """Workers with a failed task, or lost without a used piece."""
        failed = {t.task.worker for t in self.tasks.values() if t.is_failed}
        return failed | (set(self.lost) - set(self.used_workers))

    def records(self, finished: Iterable[CopyKey] = ()) -> tuple[TaskRecord, ...]:
        """Per task: (worker, batch, start, stop, finish, status, copies).

        `finished`: copies Dask reports finished whose result never reached
        the state (they count as "unused", not "cancelled").
        """
        done = set(finished)
        return tuple(
            (
                *(t.task.worker, t.task.batch, t.task.start, t.task.stop),
                t.finish,
                t.status(done),
                len(t.hosts),
            )
            for t in self.tasks.values()
        )

    # ---- events ------------------------------------------------------------
    def handle(self, *events: Event) -> list[Action]:
        """Record `events`; return what the driver must do, in order.

        Several events are a burst that arrived together: all are recorded
        before one decision, so a decoder is not asked (an LT decoder may plan
        its solve) once per result of the burst.
        """
        actions: list[Action] = []
        recorded = False
        for event in events:
            if self.is_over:
                if isinstance(event, TaskFinished):  # late: recorded, never decoded
                    self.tasks[event.task].finished.add(event.copy)
            elif isinstance(event, Started):
                actions += self._start(event)
            elif isinstance(event, Cancelled):
                actions += self._end()
            else:
                self._record(event)
                recorded = True
        if recorded and not self.is_over:
            actions += self._settle(events[-1].now)
        return actions

    def _record(self, event: Event) -> None:
        if isinstance(event, TaskFinished):
            self._finished(event)
        elif isinstance(event, TaskFailed):
            self._failed(event)
        elif isinstance(event, WorkersLost):
            self._workers_lost(event.addresses)

    def _start(self, event: Started) -> list[Action]:
        self.submitted_at = event.now
        self.lost.update(event.lost)
        for i, ranges in enumerate(self.batches):
            if i in self.lost:
                continue
            for j, (start, stop) in enumerate(ranges):
                task = BatchTask(worker=i, batch=j, start=start, stop=stop)
                self.tasks[task.key] = _Task(task=task, hosts=[i])
        return [Submit(tasks=tuple(t.task for t in self.tasks.values()))]

    def _finished(self, event: TaskFinished) -> None:
        task = self.tasks[event.task]
        task.finished.add(event.copy)
        if task.is_done or task.task.worker in self.suspects:
            return
        piece = event.piece
        floor = math.inf  # unchecked
        if piece is not None and self.check is not None:
            verdict = self.check(piece)
            if not verdict:
                self._wrong(task.task)
                return
            floor = verdict.floor if isinstance(verdict, Verdict) else math.nan
        self.floors.append(floor)
        task.is_done = True
        task.finish = self.finish[task.task.worker] = event.now - self.submitted_at
        self.durations.append(task.finish)
        self.used_tasks.append(event.task)
        if piece is None or event.held:  # decoded elsewhere: its rows only
            self.decoder.mark(task.task.worker, task.task.start, task.task.stop)
        else:
            self.decoder.add(piece)

    def _wrong(self, task: BatchTask) -> None:
        """Make `task`'s worker a suspect: none of its pending pieces is decoded."""
        why = f"its result for rows {task.start}..{task.stop} failed its check"
        self.suspects[task.worker] = self.lost[task.worker] = why
        for other in self.tasks.values():
            if other.task.worker == task.worker and not other.is_done:
                other.failed = set(range(len(other.hosts)))

    def _failed(self, event: TaskFailed) -> None:
        task = self.tasks[event.task]
        if task.is_done:
            return
        task.failed.add(event.copy)
        if not task.is_failed:
            return
        if event.collateral and not task.is_retried:
            self._collateral.add(task.task.worker)
        else:
            self.lost[task.task.worker] = event.why

    def _workers_lost(self, addresses: frozenset[str]) -> None:
        for task in self.tasks.values():
            if not task.is_outstanding:
                continue
            hosts = [self.addresses[h] for h in task.hosts]
            task.failed |= {c for c, host in enumerate(hosts) if host in addresses}
            if task.is_failed:
                self.lost[task.task.worker] = (
                    f"its Dask worker {hosts[0]} left the cluster"
                )

    # ---- decisions ----------------------------------------------------------
    def _settle(self, now: float) -> list[Action]:
        """Decide after an event: decode, fail, retry, back up, or wait."""
        if self.suspects and self.verify == "detect":
            return self._end(Fail(error=self._inconsistent()))
        decodable = self.decoder.is_decodable
        outstanding = any(t.is_outstanding for t in self.tasks.values())
        if decodable and not (self.decoder.needs_more and outstanding):
            return self._end(Decode(tasks=tuple(self.used_tasks)))
        if now >= self.deadline:  # the guard's wait ends: decode (and warn)
            if decodable:
                return self._end(Decode(tasks=tuple(self.used_tasks)))
            return self._end(
                Fail(error=self._not_enough(f"timeout after {self.timeout} s"))
            )
        actions: list[Action] = self._retries()
        if decodable:  # the guard waits for more pieces
            return actions
        if not self._can_still_decode():
            why = "no decodable set of results can still arrive"
            error = self._inconsistent() if self.suspects else self._not_enough(why)
            return actions + self._end(Fail(error=error))
        return actions + self._backups(now)

    def _end(self, decision: Decode | Fail | None = None) -> list[Action]:
        """End the run: cancel every copy still running, then `decision`."""
        self.is_over = True
        running = tuple(
            (key, c)
            for key, task in self.tasks.items()
            for c in range(len(task.hosts))
            if c not in task.failed and c not in task.finished
        )
        actions: list[Action] = [Cancel(copies=running)] if running else []
        return actions if decision is None else [*actions, decision]

    def _retries(self) -> list[Action]:
        """Resubmit the chains that were cancelled with another worker's graph."""
        actions: list[Action] = []
        for worker in sorted(self._collateral):
            chain = [
                t
                for t in self.tasks.values()
                if t.task.worker == worker and not t.is_done
            ]
            for task in chain:
                task.is_retried = True
                task.hosts.append(worker)
            actions.append(Retry(tasks=tuple(t.task for t in chain)))
        self._collateral.clear()
        return actions

    def _can_still_decode(self) -> bool:
        """Whether the workers whose results may still arrive decode (memoised).

        A code's check can be costly (an LT code peels all its rows), and the
        set of possible workers changes only when tasks fail or workers leave.
        """
        possible = frozenset(self._possible())
        if possible != self._decodable_possible:
            if not self.code.is_decodable(possible):
                return False
            self._decodable_possible = possible
        return True

    def _possible(self) -> set[int]:
        """Workers whose results may still arrive (or already did)."""
        outstanding = {t.task.worker for t in self.tasks.values() if t.is_outstanding}
        return set(self.used_workers) | outstanding

    def _backups(self, now: float) -> list[Action]:
        """Back up the slow tasks (one copy each) on idle workers."""
        policy = self.policy
        if policy is None or not self.durations:
            return []
        if len(self.durations) < policy.quantile * len(self.tasks):
            return []
        if now - self.submitted_at <= policy.slowdown * statistics.median(
            self.durations
        ):
            return []
        idle = self._idle_workers()
        actions: list[Action] = []
        for task in self.tasks.values():
            if not idle:
                break
            if task.is_outstanding and len(task.hosts) == 1:
                host = idle.pop(0)
                task.hosts.append(host)
                self.backups += 1
                actions.append(Backup(task=task.task, host=host))
        return actions

    def _idle_workers(self) -> list[int]:
        """Live workers whose Dask worker runs no outstanding copy."""
        busy = {
            self.addresses[h]
            for t in self.tasks.values()
            if t.is_outstanding
            for h in t.hosts
        }
        failed = {t.task.worker for t in self.tasks.values() if t.is_failed}
        return [
            i
            for i, address in enumerate(self.addresses)
            if address not in busy and i not in self.lost and i not in failed
        ]

    def _inconsistent(self) -> InconsistentResultsError:
        details = "; ".join(f"worker {i}: {why}" for i, why in self.suspects.items())
        remedy = (
            "verify='correct' decodes without them while the code tolerates it"
            if self.verify == "detect"
            else f"too many to decode without them ({self._not_enough('').args[0]})"
        )
        return InconsistentResultsError(
            f"wrong results: {details}; {remedy}.",
            suspect_workers=self.suspects,
        )

    def _not_enough(self, why: str) -> NotEnoughResultsError:
        received, needed = self.decoder.progress
        failed = sorted(self.failed_workers())
        lost = {i: self.lost.get(i, "its task failed") for i in failed}
        tolerated, n = tolerance(self.code), len(self.addresses)
        hosts = len(set(self.addresses))
        held = f" on {hosts} Dask workers" if hosts < n else ""
        details = "; ".join(f"worker {i}: {reason}" for i, reason in lost.items())
        return NotEnoughResultsError(
            f"{why}: received {received} of the {needed} results needed "
            f"(from workers {list(self.used_workers)}; failed workers {failed}). "
            f"The code tolerates {tolerated} lost of {n} shares (one per code "
            f"worker{held}); lost {len(lost)}{': ' + details if details else ''}.",
            lost_workers=lost,
            tolerance=tolerated,
        )
