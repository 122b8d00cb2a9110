"""The state of one MapReduce job without Dask or a clock: events in, actions out.

A :class:`JobState` follows one ``run_mapreduce`` job, built like
``coded.runtime``'s run state: the driver (``mapreduce._runtime``) submits the
map of every (file, node) of the placement, turns what Dask reports into events
(a map finished, a map's worker died, nodes left, a reducer finished, a task
raised, time passed) and carries out the actions the state returns (submit the
shuffle and the reduces, cancel straggling maps, finish, fail). Time comes in
with every event, so any order of events can be replayed in a test.

When the placement tolerates no lost mapper (``r = 1``), nothing the maps do can
change the shuffle, so it is submitted with the maps and Dask runs map, shuffle
and reduce as one graph. Otherwise the planned shuffle may still be submitted
with the maps, *speculatively*: each sender packs as soon as its own maps are
done, and the reducers start as soon as the last map is. Once the nodes that
finished hold every file, a node still mapping is waited for only while its pace
predicts it done within the slack; then its maps are cancelled, and so is the
speculative shuffle (also when a node is lost), and the shuffle is planned on
the maps that finished.

:class:`QuorumState` is its sibling for ``run_coded_maps`` (one map task per
node, any ``q`` of ``K`` nodes suffice), driven by ``mapreduce._runtime_linear``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from coded.events import Tick, TimedEvent
from mapreduce._errors import MapReduceTaskError, NotEnoughMappersError
from mapreduce._placement import Placement
from mapreduce._plan import ShufflePlan, plan_shuffle, verify_plan

__all__ = [
    "Action",
    "CancelMaps",
    "CancelShuffle",
    "Event",
    "Fail",
    "Finish",
    "JobState",
    "MapDone",
    "MapLost",
    "NodeMapped",
    "NodesLost",
    "Quorum",
    "QuorumState",
    "ReduceDone",
    "SubmitShuffle",
    "TaskFailed",
    "Tick",
    "follow_data",
]

MIN_GRACE_SECONDS = 0.5  # task dispatch noise; short next to a real map stage


# ---- events (coded.events: ``now`` on the driver's clock) ----------------
@dataclass(frozen=True, slots=True, kw_only=True)
class MapDone(TimedEvent):
    """Node `node` finished mapping file `file`."""

    file: int
    node: int


@dataclass(frozen=True, slots=True, kw_only=True)
class MapLost(TimedEvent):
    """The map of `file` at `node` died with its worker."""

    file: int
    node: int


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeMapped(TimedEvent):
    """Node `node` finished its one map task (all its coded files)."""

    node: int


@dataclass(frozen=True, slots=True, kw_only=True)
class NodesLost(TimedEvent):
    """The workers of `nodes` left the cluster."""

    nodes: frozenset[int]


@dataclass(frozen=True, slots=True, kw_only=True)
class ReduceDone(TimedEvent):
    """Reducer `reducer` returned its output."""

    reducer: int


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class TaskFailed(TimedEvent):
    """A task raised `error`; `stage` and `where` name it in the message."""

    stage: str
    where: str
    error: BaseException


Event = MapDone | MapLost | NodeMapped | NodesLost | ReduceDone | TaskFailed | Tick


# ---- actions -----------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class SubmitShuffle:
    """Submit `plan`'s shuffle and every reducer's task on node ``hosts[k]``.

    A `speculative` one goes with the maps, on the guess that every map
    finishes; :class:`CancelShuffle` voids it.
    """

    plan: ShufflePlan
    hosts: tuple[int, ...]
    speculative: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class CancelShuffle:
    """Cancel the speculative shuffle: a map was cut, or a node lost."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CancelMaps:
    """Cancel these unfinished maps (file, node) of the straggling `nodes`."""

    maps: tuple[tuple[int, int], ...]
    nodes: tuple[int, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Quorum:
    """The first `q` nodes are done: plan the shuffle among `finishers`."""

    finishers: tuple[int, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Finish:
    """Every reducer is done: gather the outputs."""


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Fail:
    """Raise `error`."""

    error: MapReduceTaskError


Action = SubmitShuffle | CancelShuffle | CancelMaps | Quorum | Finish | Fail


def _task_error(event: TaskFailed) -> MapReduceTaskError:
    """Return the error a failed task ends a job with, chained to the task's own."""
    error = MapReduceTaskError(f"{event.stage} failed {event.where}: {event.error!r}")
    error.__cause__ = event.error
    return error


def follow_data(plan: ShufflePlan, holders: Sequence[int | None]) -> ShufflePlan:
    """Move each file of a one-copy placement to the node that already holds it.

    With ``r = 1`` which node maps a file changes nothing but where its input
    must travel, so a file held by node ``holders[f]`` (None: by no node of the
    job) is stored there instead; the plan is rebuilt and verified.
    """
    storers = plan.placement.storers
    if any(len(nodes) != 1 for nodes in storers):
        return plan
    moved = tuple(
        nodes if k is None else frozenset({k})
        for nodes, k in zip(storers, holders, strict=True)
    )
    if moved == storers:
        return plan
    placement = Placement(
        K=plan.placement.K, storers=moved, name=f"{plan.placement.name} (local)"
    )
    return verify_plan(plan_shuffle(placement, coded=plan.is_coded))


class JobState:
    """One job's bookkeeping and decisions: :meth:`handle` an event, get actions.

    Parameters
    ----------
    plan : ShufflePlan
        The verified plan of the whole placement.
    slack : float
        ``straggler_slack`` of :class:`mapreduce.MapReduceOptions` (``inf``: wait
        for every map).
    timeout : float
        Seconds the map stage, and then shuffle and reduce together, may take.
    start : float
        When the maps were submitted (the driver's clock).
    speculate : bool
        Whether to submit the planned shuffle with the maps when some map may
        still be cut (``r >= 2``).
    """

    def __init__(
        self,
        plan: ShufflePlan,
        *,
        slack: float,
        timeout: float,
        start: float,
        speculate: bool = False,
    ) -> None:
        self.plan, self.placement = plan, plan.placement
        self.slack, self.timeout, self.start = slack, timeout, start
        self.speculation: SubmitShuffle | None = None
        self.speculate = speculate
        self.pending = {
            (f, k) for k in range(self.placement.K) for f in self.placement.files_of(k)
        }
        self.maps = len(self.pending)
        self.finished: set[tuple[int, int]] = set()
        self.lost: set[int] = set()
        self.stragglers: tuple[int, ...] = ()
        self.cancelled_maps = 0
        self.quorum_at: float | None = None
        self.map_end: float | None = None
        self.shuffle: SubmitShuffle | None = None
        self.shuffle_at = start
        self.reduced: set[int] = set()
        self.is_over = False

    @property
    def is_eager(self) -> bool:
        """Whether the shuffle goes with the maps (no map can be cut)."""
        return self.placement.tolerance == 0

    def begin(self) -> list[Action]:
        """Actions right after the maps were submitted."""
        if self.is_eager:
            return [self._submit(self.plan, self.start)]
        actions = self._settle(self.start)
        if self.speculate and not (self.is_over or self.shuffle or self.lost):
            hosts = tuple(range(self.placement.K))
            self.speculation = SubmitShuffle(
                plan=self.plan, hosts=hosts, speculative=True
            )
            actions.append(self.speculation)
        return actions

    def handle(self, event: Event) -> list[Action]:
        """Take one event; return what the driver must do now."""
        if self.is_over:
            return []
        if isinstance(event, TaskFailed) and event.stage == "map_fn":
            return self._fail(_task_error(event))
        if isinstance(event, TaskFailed) and self.shuffle is None:
            # a task of the speculative shuffle (its maps lost, or it was
            # cancelled): the shuffle planned at the map stage's end redoes it
            return self._void_speculation() + self._settle(event.now)
        if isinstance(event, TaskFailed):
            return self._fail(_task_error(event))
        actions: list[Action] = []
        if isinstance(event, MapDone) and (event.file, event.node) in self.pending:
            self.pending.discard((event.file, event.node))
            self.finished.add((event.file, event.node))
        elif isinstance(event, MapLost):
            self.pending.discard((event.file, event.node))
            actions = self._lose({event.node})
        elif isinstance(event, NodesLost):
            actions = self._lose(set(event.nodes))
        elif isinstance(event, ReduceDone):
            self.reduced.add(event.reducer)
        return actions if self.is_over else actions + self._settle(event.now)

    # -- decisions

    def _settle(self, now: float) -> list[Action]:
        actions: list[Action] = []
        if not self.pending and self.map_end is None:
            self.map_end = now
        if self.shuffle is None:
            actions += self._map_stage(now)
        elif len(self.reduced) == self.placement.K:
            return actions + self._end(Finish())
        deadline = (self.shuffle_at if self.shuffle else self.start) + self.timeout
        if not self.is_over and now >= deadline:
            if self.pending:
                stage, left, total = "map", len(self.pending), self.maps
            else:
                stage, total = "reduce_fn", self.placement.K
                left = total - len(self.reduced)
            actions += self._fail(
                MapReduceTaskError(
                    f"{stage}: {left} of {total} tasks did not finish within "
                    f"timeout={self.timeout} s."
                )
            )
        return actions

    def _map_stage(self, now: float) -> list[Action]:
        busy = {k for _, k in self.pending}
        need = self.placement.K - self.placement.tolerance
        if self.quorum_at is None and self.placement.K - len(busy | self.lost) >= need:
            self.quorum_at = now
        if not busy:
            self.map_end = now if self.map_end is None else self.map_end
            return self._shuffle(now)
        if self.quorum_at is None or self._worth_waiting(busy, now):
            return []
        cut = tuple(sorted(self.pending))
        self.stragglers = tuple(sorted(busy - self.lost))
        self.cancelled_maps = len(cut)
        self.pending.clear()
        self.map_end = now
        return [
            *self._void_speculation(),
            CancelMaps(maps=cut, nodes=self.stragglers),
            *self._shuffle(now),
        ]

    def _shuffle(self, now: float) -> list[Action]:
        """Submit the shuffle of the maps that finished, or keep the speculative one."""
        action = self._submit(self._effective_plan(), now)
        speculation, self.speculation = self.speculation, None
        if speculation is not None and (speculation.plan, speculation.hosts) == (
            action.plan,
            action.hosts,
        ):
            self.shuffle = speculation
            return []
        return [*([CancelShuffle()] if speculation is not None else []), action]

    def _void_speculation(self) -> list[Action]:
        speculation, self.speculation = self.speculation, None
        return [] if speculation is None else [CancelShuffle()]

    def _worth_waiting(self, busy: set[int], now: float) -> bool:
        """Whether some busy node looks set to finish by the slack's limit.

        The limit is ``(1 + slack)`` times the time the quorum took (at least
        half a second after the quorum). A node that mapped ``m >= 1`` of its
        ``M`` files in ``t`` seconds is predicted to finish at ``t M / (m + 1)``
        (optimistic: its current map almost done); a node with no map done yet
        is waited for up to the limit.
        """
        if math.isinf(self.slack):
            return True
        assert self.quorum_at is not None
        elapsed, quorum = now - self.start, self.quorum_at - self.start
        limit = quorum + max(self.slack * quorum, MIN_GRACE_SECONDS)
        if elapsed >= limit:
            return False
        for k in busy:
            total = len(self.placement.files_of(k))
            done = sum(1 for _, node in self.finished if node == k)
            if done == 0 or elapsed * total / (done + 1) <= limit:
                return True
        return False

    def _lose(self, nodes: set[int]) -> list[Action]:
        new = nodes - self.lost
        self.lost |= new
        if not new:
            return []
        self.pending = {(f, k) for f, k in self.pending if k not in self.lost}
        for f, storers in enumerate(self.placement.storers):
            if storers <= self.lost:
                return self._fail(
                    NotEnoughMappersError(
                        f"nodes {sorted(self.lost)} were lost; file {f} was stored "
                        f"only at {sorted(storers)}, so no output can be complete "
                        f"(the placement tolerates {self.placement.tolerance} lost "
                        "mappers)."
                    )
                )
        if self.shuffle is not None:
            return self._fail(
                MapReduceTaskError(
                    f"nodes {sorted(self.lost)} were lost after the shuffle was "
                    "submitted; no output is returned."
                )
            )
        return self._void_speculation()

    def _submit(self, plan: ShufflePlan, now: float) -> SubmitShuffle:
        live = [k for k in range(self.placement.K) if k not in self.lost]
        hosts = tuple(
            k if k not in self.lost else live[k % len(live)]
            for k in range(self.placement.K)
        )
        self.shuffle, self.shuffle_at = SubmitShuffle(plan=plan, hosts=hosts), now
        return self.shuffle

    @property
    def stored(self) -> tuple[frozenset[int], ...]:
        """The nodes whose map of each file finished (and that are alive)."""
        if self.is_eager:
            return self.placement.storers
        return tuple(
            frozenset(k for k in nodes if (f, k) in self.finished) - self.lost
            for f, nodes in enumerate(self.placement.storers)
        )

    def _effective_plan(self) -> ShufflePlan:
        """Return the planned shuffle, or a new one on the maps that finished."""
        stored = self.stored
        if stored == self.placement.storers and not self.lost:
            return self.plan
        placement = Placement(
            K=self.placement.K,
            storers=stored,
            name=f"{self.placement.name} (finished maps)",
        )
        reducers = tuple(k for k in range(self.placement.K) if k not in self.lost)
        return verify_plan(
            plan_shuffle(placement, coded=self.plan.is_coded, reducers=reducers)
        )

    def _fail(self, error: MapReduceTaskError) -> list[Action]:
        return self._end(Fail(error=error))

    def _end(self, action: Finish | Fail) -> list[Action]:
        self.is_over = True
        return [action]


class QuorumState:
    """The map stage of ``run_coded_maps``: the first `q` of `K` nodes win.

    A sibling of :class:`JobState` for the unified scheme, where each node maps
    all its coded files in one task and any `q` finished nodes suffice. Events
    in (:class:`NodeMapped`, :class:`NodesLost`, :class:`TaskFailed`,
    :class:`Tick`), actions out: once `q` nodes are done, cancel the others
    (:class:`CancelMaps`) and plan among the first `q` (:class:`Quorum`); a
    lost node beyond ``K - q``, a failed task or the timeout ends it with
    :class:`Fail`.

    Parameters
    ----------
    K : int
        Nodes, one map task each.
    q : int
        Nodes that must finish, ``1 <= q <= K``.
    timeout : float
        Seconds the map stage may take.
    start : float
        When the maps were submitted (the driver's clock).
    """

    def __init__(self, K: int, q: int, *, timeout: float, start: float) -> None:
        self.K, self.q, self.timeout, self.start = K, q, timeout, start
        self.finished: list[int] = []
        self.lost: set[int] = set()
        self.stragglers: tuple[int, ...] = ()
        self.is_over = False

    def begin(self) -> list[Action]:
        """Actions right after the maps were submitted."""
        return self._settle(self.start)

    def handle(self, event: Event) -> list[Action]:
        """Take one event; return what the driver must do now."""
        if self.is_over:
            return []
        if isinstance(event, TaskFailed):
            return self._end(Fail(error=_task_error(event)))
        if isinstance(event, NodeMapped):
            if event.node not in self.lost and event.node not in self.finished:
                self.finished.append(event.node)
        elif isinstance(event, NodesLost):
            self.lost |= set(event.nodes) - set(self.finished)
        return self._settle(event.now)

    def _settle(self, now: float) -> list[Action]:
        if len(self.finished) >= self.q:
            finishers = tuple(sorted(self.finished[: self.q]))
            done = set(self.finished) | self.lost
            self.stragglers = tuple(k for k in range(self.K) if k not in done)
            cancel = CancelMaps(maps=(), nodes=self.stragglers)
            return [cancel, *self._end(Quorum(finishers=finishers))]
        if self.K - len(self.lost) < self.q:
            return self._end(
                Fail(
                    error=NotEnoughMappersError(
                        f"nodes {sorted(self.lost)} were lost; fewer than "
                        f"q={self.q} of K={self.K} nodes can finish their coded "
                        "map tasks."
                    )
                )
            )
        if now >= self.start + self.timeout:
            return self._end(
                Fail(
                    error=MapReduceTaskError(
                        f"map: {self.K - len(self.finished) - len(self.lost)} of "
                        f"{self.K} tasks did not finish within "
                        f"timeout={self.timeout} s (q={self.q} needed)."
                    )
                )
            )
        return []

    def _end(self, action: Quorum | Fail) -> list[Action]:
        self.is_over = True
        return [action]
