"""Straggler and failure injection as pure, seeded data (numpy only).

A :class:`Stragglers` spec describes the distribution (a shifted-exponential
profile, fixed delays, failing tasks, dying workers); :meth:`Stragglers.sample`
draws one realisation for one coded product (:class:`FaultPlan`); the runtime asks
the plan for each task's :class:`TaskFault` and ships it with the task, where the
worker applies it. The profile is the same ``theory.WorkerProfile`` object the
simulator and the allocators read (docs/theory/model.md).
A public module, so that :mod:`coded.runtime` imports the plan and the faults
from here; users reach the spec as ``coded.Stragglers``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from theory import WorkerProfile
from theory.rng import RngLike, as_generator
from theory.validation import check_int, check_real

__all__ = ["FaultPlan", "InjectedFailure", "Stragglers", "TaskFault"]


class InjectedFailure(RuntimeError):
    """Raised inside a task that a :class:`Stragglers` spec told to fail."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskFault:
    """What one task does besides computing (applied on the worker).

    Parameters
    ----------
    duration_seconds : float
        Modelled duration of the task: after computing, the task waits
        (cooperatively) until this many seconds have passed since it started.
    extra_seconds : float
        Fixed delay added after that.
    raises : bool
        Raise :class:`InjectedFailure` instead of returning.
    dies : bool
        Kill the worker (its process, or the in-process worker object).
    corrupt : float
        Return a wrong result: its largest entry off by `corrupt` times its
        magnitude (integer residues: off by one); 0 returns the right one.
    """

    duration_seconds: float = 0.0
    extra_seconds: float = 0.0
    raises: bool = False
    dies: bool = False
    corrupt: float = 0.0

    @property
    def is_noop(self) -> bool:
        """Whether the task runs unmodified."""
        return not (
            self.duration_seconds
            or self.extra_seconds
            or self.raises
            or self.dies
            or self.corrupt
        )

    def corrupted(self, value: np.ndarray) -> np.ndarray:
        """Return `value` as this task reports it (wrong when `corrupt` is set).

        The entry of largest magnitude ``v`` becomes ``v + corrupt max(|v|, 1)``
        (a relative error of `corrupt` of the result's scale), or ``v -+ 1`` for
        integer residues (still a residue in ``[0, p)``).
        """
        if not self.corrupt or np.size(value) == 0:
            return value
        array = np.array(value, copy=True)
        flat = array.reshape(-1)
        entry = int(np.argmax(np.abs(flat)))
        if array.dtype.kind in "iu":
            flat[entry] += -1 if flat[entry] > 0 else 1
        else:
            flat[entry] += self.corrupt * max(abs(float(flat[entry])), 1.0)
        return array


def _worker_set(values: Iterable[int], name: str) -> frozenset[int]:
    return frozenset(check_int(w, name, min_value=0) for w in values)


@dataclass(frozen=True, slots=True, kw_only=True)
class Stragglers:
    r"""Straggler and failure model of a distributed run (pure data).

    Parameters
    ----------
    profile : theory.WorkerProfile, optional
        Per-worker parameters ``(a_i, mu_i, c_i)`` in model time units of
        `time_unit` seconds (:attr:`profile_seconds` is the same profile in
        seconds, what the allocators and the predictions use).
    time_unit : float
        Seconds per model time unit, ``> 0`` (1.0: the profile is in seconds):
        a task of ``l`` rows lasts ``c_i + l (a_i + X_i / mu_i)`` time units.
    delays : mapping of int to float
        Fixed extra seconds for chosen workers (``{worker: seconds}``).
    failing : iterable of int
        Workers whose tasks raise :class:`InjectedFailure`.
    dying : iterable of int
        Workers that die while running their task.
    corrupt : mapping of int to float
        Workers that return wrong results (silent data corruption): each of
        their tasks reports its largest entry off by that relative error of the
        result's scale (``{worker: 1e-3}``; integer residues off by one). A
        flipped mantissa bit ``b`` is the relative error ``2^(b - 52)``.

    Notes
    -----
    Worker ``i`` draws one :math:`X_i \sim \mathrm{Exp}(1)` per product (a slow
    worker stays slow for all its batches) and a task of ``l`` rows lasts

    .. math:: T = \big(c_i + l \, (a_i + X_i / \mu_i)\big) \cdot \text{time\_unit}
              + \text{delays}_i \text{ seconds},

    the model of Lee et al. (docs/theory/model.md) with the per-task overhead
    ``c_i`` of docs/theory/overhead.md (every BPCC batch is a task and pays it).
    The real compute time counts towards ``T``: the task waits only for the
    rest, on a cancel signal, so a task the runtime no longer needs stops
    waiting at once. The load ``l`` of a task
    is its rows times the fraction of B's columns it multiplies by (``1/p_b`` for
    a polynomial code), i.e. its share of the product's work in rows. A
    speculative backup copy run by worker ``j`` uses an independent draw of
    worker ``j``'s parameters and never fails.

    Examples
    --------
    >>> from theory import WorkerProfile
    >>> spec = Stragglers(profile=WorkerProfile.homogeneous(2, a=1.0, mu=1.0),
    ...                   time_unit=0.01, failing=[1])
    >>> plan = spec.sample(2, rng=0)
    >>> fault = plan.task_fault(0, rows=10)
    >>> bool(fault.duration_seconds >= 0.1), plan.task_fault(1, rows=10).raises
    (True, True)
    """

    profile: WorkerProfile | None = None
    time_unit: float = 1e-3
    delays: Mapping[int, float] = field(default_factory=dict)
    failing: Collection[int] = frozenset()  # stored as a frozenset
    dying: Collection[int] = frozenset()
    corrupt: Mapping[int, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.profile is not None and not isinstance(self.profile, WorkerProfile):
            raise TypeError(
                "`profile` must be a theory.WorkerProfile or None, got "
                f"{type(self.profile).__name__}."
            )
        unit = check_real(self.time_unit, "time_unit", min_value=0.0, strict_min=True)
        delays = {
            check_int(w, "delays worker", min_value=0): check_real(
                s, f"delays[{w}]", min_value=0.0
            )
            for w, s in dict(self.delays).items()
        }
        object.__setattr__(self, "time_unit", unit)
        object.__setattr__(self, "delays", MappingProxyType(delays))
        object.__setattr__(self, "failing", _worker_set(self.failing, "failing"))
        object.__setattr__(self, "dying", _worker_set(self.dying, "dying"))
        corrupt = {
            check_int(w, "corrupt worker", min_value=0): check_real(
                e, f"corrupt[{w}]", min_value=0.0, strict_min=True
            )
            for w, e in dict(self.corrupt).items()
        }
        object.__setattr__(self, "corrupt", MappingProxyType(corrupt))

    @property
    def profile_seconds(self) -> WorkerProfile | None:
        """The injected profile in seconds (``profile.in_seconds(time_unit)``)."""
        if self.profile is None:
            return None
        return self.profile.in_seconds(self.time_unit)

    def max_worker(self) -> int:
        """Return the largest worker index the spec names (``-1`` if none)."""
        named = {*self.delays, *self.failing, *self.dying, *self.corrupt}
        return max(named, default=-1)

    def sample(self, n: int, *, rng: RngLike = None) -> FaultPlan:
        """Draw the faults of one product on `n` workers.

        Parameters
        ----------
        n : int
            Number of workers, at least the profile's and every named worker's.
        rng : Generator, SeedSequence, int or None
            Source of the exponential draws.

        Returns
        -------
        FaultPlan
        """
        n = check_int(n, "n", min_value=1)
        if self.profile is not None and self.profile.n < n:
            raise ValueError(
                f"`stragglers.profile` describes {self.profile.n} workers, "
                f"fewer than n={n}: give a profile with one entry per worker, "
                f"or run on {self.profile.n} workers (`n`)."
            )
        if self.max_worker() >= n:
            raise ValueError(
                f"`stragglers` names worker {self.max_worker()}, but n={n}."
            )
        generator = as_generator(rng)
        seconds = self.profile_seconds
        if seconds is None:
            zeros = np.zeros(n)
            per_row, backup_per_row, per_task = zeros, zeros, zeros
        else:
            a, mu = seconds.a[:n], seconds.mu[:n]
            draws = generator.exponential(size=(2, n))
            per_row = a + draws[0] / mu
            backup_per_row = a + draws[1] / mu
            per_task = seconds.c[:n]
        return FaultPlan(
            seconds_per_row=per_row,
            backup_seconds_per_row=backup_per_row,
            seconds_per_task=per_task,
            extra_seconds=np.array([self.delays.get(i, 0.0) for i in range(n)]),
            raises=np.array([i in self.failing for i in range(n)]),
            dies=np.array([i in self.dying for i in range(n)]),
            corrupt=np.array([self.corrupt.get(i, 0.0) for i in range(n)]),
        )


def _read_only(values: object, dtype: type) -> np.ndarray:
    array = np.array(values, dtype=dtype)
    array.setflags(write=False)
    return array


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class FaultPlan:
    """One realisation of a :class:`Stragglers` spec for ``n`` workers.

    Parameters
    ----------
    seconds_per_row : array_like, shape (n,)
        Modelled seconds per row of each worker, ``(a_i + X_i / mu_i) time_unit``.
    backup_seconds_per_row : array_like, shape (n,)
        Independent draws used when worker ``i`` runs a backup copy of a task.
    seconds_per_task : array_like, shape (n,), optional
        Modelled fixed seconds of every task of worker ``i``, ``c_i time_unit``
        (default zeros).
    extra_seconds : array_like, shape (n,)
        Fixed delay of each worker's tasks.
    raises, dies : array_like of bool, shape (n,)
        Whether each worker's tasks raise / kill the worker.
    corrupt : array_like, shape (n,), optional
        Relative error of each worker's results (0: right; default zeros).
    """

    seconds_per_row: np.ndarray
    backup_seconds_per_row: np.ndarray
    extra_seconds: np.ndarray
    raises: np.ndarray
    dies: np.ndarray
    seconds_per_task: np.ndarray | None = None
    corrupt: np.ndarray | None = None

    def __post_init__(self) -> None:
        for name in ("seconds_per_task", "corrupt"):
            if getattr(self, name) is None:
                object.__setattr__(self, name, np.zeros(len(self.seconds_per_row)))
        for name in (
            "seconds_per_row",
            "backup_seconds_per_row",
            "extra_seconds",
            "seconds_per_task",
            "corrupt",
        ):
            object.__setattr__(self, name, _read_only(getattr(self, name), float))
        for name in ("raises", "dies"):
            object.__setattr__(self, name, _read_only(getattr(self, name), bool))

    @property
    def n(self) -> int:
        """Number of workers."""
        return int(self.seconds_per_row.shape[0])

    def task_fault(
        self, worker: int, *, rows: float, backup: bool = False
    ) -> TaskFault:
        """Return the fault of a task of `rows` rows run by `worker`.

        Parameters
        ----------
        worker : int
            Index of the worker that runs the task.
        rows : float
            The task's load ``l`` in rows of the product (fractional for a
            two-sided code whose right operand holds part of B's columns).
        backup : bool
            The task is a speculative copy of another worker's task: use the
            independent backup draw and apply no failure or corruption.

        Returns
        -------
        TaskFault
        """
        per_row = self.backup_seconds_per_row if backup else self.seconds_per_row
        return TaskFault(
            duration_seconds=float(
                self.seconds_per_task[worker] + rows * per_row[worker]
            ),
            extra_seconds=0.0 if backup else float(self.extra_seconds[worker]),
            raises=False if backup else bool(self.raises[worker]),
            dies=False if backup else bool(self.dies[worker]),
            corrupt=0.0 if backup else float(self.corrupt[worker]),
        )
