"""The frozen record of every run (:class:`MatmulResult`): products, gradients, maps."""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

if TYPE_CHECKING:
    from dask.array import Array as DaskArray
    from matplotlib.axes import Axes
    from numpy.typing import NDArray

__all__ = ["STAGES", "MatmulResult", "TaskRecord"]

STAGES = ("encode", "place", "compute", "wait", "decode", "release", "total")


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskRecord:
    """One task of a run: a batch of rows computed by one worker.

    Parameters
    ----------
    worker : int
        The code worker (share) that ran it.
    batch : int
        Its place in the worker's chain of batches (0 for a whole share).
    rows : tuple of (int, int)
        Row range ``[start, stop)`` of the worker's share that it computed.
    finish_seconds : float
        Seconds from submission until its result reached the decoder (NaN if it
        did not).
    status : {"used", "unused", "cancelled", "failed"}
        ``"used"``: its result reached the decoder; ``"unused"``: it finished
        once the product was already decodable, and was not read;
        ``"cancelled"``: still queued or running then, and cancelled;
        ``"failed"``: every copy raised or lost its Dask worker.
    copies : int
        Copies submitted (more than 1 with speculative backup tasks).
    """

    worker: int
    batch: int
    rows: tuple[int, int]
    finish_seconds: float
    status: str
    copies: int = 1


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class MatmulResult:
    """The product of a distributed coded run and its record.

    Parameters
    ----------
    product : numpy.ndarray or dask.array.Array
        ``A @ B`` (a vector when B is one; integers when computed over GF(p));
        a ``dask.array`` with ``output="dask"``.
    scheme : str
        The scheme's name (``"mds"``, ..., or the code's class name).
    n, k : int
        Workers used and the code's recovery threshold.
    call_id : str
        Identifier in every Dask key of the run (``coded-<call_id>-...``).
    finish_seconds : tuple of float, length n
        Seconds from submission until each worker's last piece arrived (NaN if
        none arrived before decoding).
    used_workers : tuple of int
        Workers whose pieces reached the decoder.
    failed_workers : tuple of int
        Workers whose tasks raised or whose Dask worker died.
    stage_seconds : mapping of str to float
        Wall-clock seconds per stage: ``encode`` (A and B, and the secret
        Freivalds checks a fresh call draws from its shares), ``place`` (scatter),
        ``compute`` (the longest real multiply inside a used task), ``wait``
        (submission until decodable), ``decode``, ``release`` (wake injected
        waits, cancel and release every key) and ``total`` (the whole call,
        without starting or closing an embedded cluster).
    cancelled_tasks : int
        Tasks (copies included) still pending or running when decoding became
        possible; they were cancelled.
    backup_tasks : int
        Speculative copies launched (``scheme="speculative"``).
    overlap_seconds : float
        How long this call's tasks queued behind still-running tasks of earlier
        calls (Dask cannot interrupt a running task).
    condition_number : float
        Condition number of the system the decoder solved (NaN for exact codes);
        above the code's ``max_condition`` the run waited for extra results and
        decoded by least squares over them (``docs/theory/conditioning.md``).
    units_used : int
        Coded units (rows of the generator) the decode used (0: not reported).
    predicted_seconds : float or None
        For a one-shot run with an ``allocation``: its predicted seconds
        (``Allocation.predicted_call_seconds``): the model's expected seconds
        from submission until decodable (``Allocation.expected_latency``) plus
        the fixed cost of a call and the predicted encoding when the allocation
        was solved on a fit of `coded.profile_workers` (then compare it with
        ``latency_seconds``; on a bare profile those are 0, compare with
        ``stage_seconds["wait"]``); None otherwise
        (docs/theory/overhead.md#the-whole-call).
    suspect_workers : tuple of int
        Workers whose results failed their check and were left out
        (``verify="correct"``; docs/theory/verification.md).
    verification : str
        How the results were checked: ``"freivalds"``, ``"redundancy"``
        (``check="redundancy"``), ``"off"``, or ``"unchecked: <why>"`` where no
        check applies.
    detection_floor : float
        The detection floor that applied: an error of one entry of a used
        result larger than this, relative to that result's largest entry (its
        coded unit's, with ``"redundancy"``), was certain to fail its check (the
        largest over the used results; docs/theory/verification.md). 0.0 over
        GF(p), where checks are exact; ``inf`` if a used result went unchecked;
        NaN when nothing was checked (``verification`` ``"off"`` or
        ``"unchecked: ..."``).
    tasks : tuple of TaskRecord
        Every task of the run, in submission order (what :meth:`plot_timeline`
        draws).
    transport : {"tasks", "resident"}
        How the call reached the workers: pinned tasks through the scheduler,
        or one message per worker to the resident servers of a placement
        (docs/guide/cluster.md#two-transports).

    Notes
    -----
    ``repr(result)`` and, in Jupyter, an HTML table summarise the record;
    :meth:`plot_timeline` draws it as a Gantt chart. Both read the record only,
    so a stored result can be inspected without a cluster.
    """

    product: NDArray[Any] | DaskArray
    scheme: str
    n: int
    k: int
    call_id: str
    finish_seconds: tuple[float, ...]
    used_workers: tuple[int, ...]
    failed_workers: tuple[int, ...]
    stage_seconds: Mapping[str, float]
    cancelled_tasks: int
    backup_tasks: int
    overlap_seconds: float
    condition_number: float = float("nan")
    units_used: int = 0
    predicted_seconds: float | None = None
    suspect_workers: tuple[int, ...] = ()
    verification: str = "off"
    detection_floor: float = float("nan")
    tasks: tuple[TaskRecord, ...] = ()
    transport: Literal["tasks", "resident"] = "tasks"

    def __post_init__(self) -> None:
        stages = dict(self.stage_seconds)
        ordered = {s: stages.pop(s) for s in STAGES if s in stages} | stages
        object.__setattr__(self, "stage_seconds", MappingProxyType(ordered))
        object.__setattr__(self, "tasks", tuple(self.tasks))
        if isinstance(self.product, np.ndarray):
            product = self.product.view()
            product.setflags(write=False)
            object.__setattr__(self, "product", product)

    @property
    def latency_seconds(self) -> float:
        """End-to-end seconds of the call (``stage_seconds["total"]``)."""
        return self.stage_seconds["total"]

    def __reduce__(self) -> tuple[Any, tuple[()]]:
        # the read-only stage mapping does not pickle; rebuild from a dict
        fields = {name: getattr(self, name) for name in self.__dataclass_fields__}
        fields["stage_seconds"] = dict(self.stage_seconds)
        return functools.partial(MatmulResult, **fields), ()

    def __repr__(self) -> str:
        from coded._timeline import summary_text

        return summary_text(self)

    def _repr_html_(self) -> str:
        from coded._timeline import summary_html

        return summary_html(self)

    def plot_timeline(
        self, ax: Axes | None = None, *, path: str | os.PathLike[str] | None = None
    ) -> Axes:
        """Draw each worker's tasks over time (a Gantt chart of the record).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw; a new figure by default.
        path : str or path-like, optional
            Also save the figure there (the format follows the suffix).

        Returns
        -------
        matplotlib.axes.Axes

        Notes
        -----
        Blue bars: results that reached the decoder; grey hatched: tasks
        cancelled once the product was decodable (dashed line); red: failed.
        See :func:`coded._timeline.plot_timeline`.
        """
        from coded._timeline import plot_timeline

        ax = plot_timeline(self, ax)
        if path is not None:
            ax.figure.savefig(path, bbox_inches="tight", dpi=120)
        return ax
