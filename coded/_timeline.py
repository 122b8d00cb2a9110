"""Readable views of a run's record: a text summary, an HTML table, a timeline.

Everything here reads a :class:`coded.MatmulResult` alone (no cluster), so a stored
result can be inspected and drawn long after its run. matplotlib is imported only
when a timeline is drawn.
"""

from __future__ import annotations

import html
import math
from typing import Any

from theory.validation import check_installed

# ``result`` is a coded.MatmulResult throughout (not imported: _result imports this
# module lazily, and the import graph stays acyclic).

__all__ = ["plot_timeline", "summary_html", "summary_text", "worker_status"]

COLORS = {
    "used": "tab:blue",
    "unused": "lightsteelblue",
    "cancelled": "0.75",
    "failed": "tab:red",
}


def worker_status(result: Any, worker: int) -> str:
    """Return ``"used"``, ``"failed"`` or ``"cancelled"`` for one worker of a run.

    Parameters
    ----------
    result : MatmulResult
        The record.
    worker : int
        Worker index, ``0 <= worker < result.n``.

    Returns
    -------
    str
        ``"used"`` if a result of the worker reached the decoder, ``"failed"`` if
        its task raised or its Dask worker died, else ``"cancelled"`` (still
        running, or queued, when the product became decodable).
    """
    if worker in result.used_workers:
        return "used"
    if worker in result.failed_workers:
        return "failed"
    return "cancelled"


def _product_text(product: Any) -> str:
    shape = "x".join(map(str, getattr(product, "shape", ())))
    dtype = getattr(product, "dtype", type(product).__name__)
    return f"{dtype} ({shape})" if shape else str(dtype)


def _seconds(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.4f}"


def summary_text(result: Any) -> str:
    """Return a few lines describing a run: code, workers, finish times, stages.

    Parameters
    ----------
    result : MatmulResult
        The record.

    Returns
    -------
    str
    """
    used = " ".join(map(str, result.used_workers)) or "none"
    failed = " ".join(map(str, result.failed_workers)) or "none"
    finish = "  ".join(
        f"{i}:{_seconds(t)}" for i, t in enumerate(result.finish_seconds)
    )
    stages = "  ".join(f"{s} {v:.4f}" for s, v in result.stage_seconds.items())
    suspects = " ".join(map(str, result.suspect_workers)) or "none"
    extras = [f"verification: {result.verification}; suspect workers: {suspects}"]
    if not math.isnan(getattr(result, "condition_number", math.nan)):
        extras.append(f"decode condition number {result.condition_number:.3g}")
    if getattr(result, "predicted_seconds", None) is not None:
        extras.append(f"predicted {result.predicted_seconds:.4f} s")
    return "\n".join(
        [
            f"MatmulResult(scheme={result.scheme!r}, n={result.n}, k={result.k}, "
            f"product={_product_text(result.product)}, "
            f"latency={result.latency_seconds:.4f} s)",
            f"  used workers: {used} ({len(result.used_workers)} of {result.n}); "
            f"failed: {failed}; cancelled tasks: {result.cancelled_tasks}; "
            f"backup tasks: {result.backup_tasks}",
            f"  finish s (worker:seconds, - = none arrived): {finish}",
            f"  stages s: {stages}",
            *(f"  {extra}" for extra in extras),
        ]
    )


def summary_html(result: Any) -> str:
    """Return an HTML table of a run (Jupyter's rich display of a result).

    Parameters
    ----------
    result : MatmulResult
        The record.

    Returns
    -------
    str
    """
    head = (
        f"<b>MatmulResult</b>: scheme <code>{html.escape(result.scheme)}</code>, "
        f"n = {result.n}, k = {result.k}, product "
        f"{html.escape(_product_text(result.product))}, latency "
        f"{result.latency_seconds:.4f} s, {result.cancelled_tasks} cancelled "
        f"task(s), {result.backup_tasks} backup task(s), verification "
        f"{html.escape(result.verification)}, suspect workers "
        f"{', '.join(map(str, result.suspect_workers)) or 'none'}"
    )
    rows = "".join(
        f"<tr><td>{i}</td><td>{_seconds(t)}</td>"
        f"<td>{worker_status(result, i)}</td></tr>"
        for i, t in enumerate(result.finish_seconds)
    )
    stages = "".join(
        f"<tr><td>{html.escape(s)}</td><td>{v:.4f}</td></tr>"
        for s, v in result.stage_seconds.items()
    )
    return (
        f"<div><p>{head}</p>"
        "<table style='display:inline-table;margin-right:2em'>"
        "<thead><tr><th>worker</th><th>finish (s)</th><th>status</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
        "<table style='display:inline-table'>"
        "<thead><tr><th>stage</th><th>seconds</th></tr></thead>"
        f"<tbody>{stages}</tbody></table></div>"
    )


def _bars(result: Any, decodable: float) -> list[tuple[Any, float]]:
    """Each task with the time it started: when the previous one of its worker ended.

    Tasks of one worker run one after the other (a batch chain), so a task starts
    when the worker's previous task finished (the submission for the first one).
    """
    bars, previous = [], {}
    for task in sorted(result.tasks, key=lambda t: (t.worker, t.batch)):
        start = previous.get(task.worker, 0.0)
        end = task.finish_seconds if task.status == "used" else decodable
        bars.append((task, start))
        previous[task.worker] = max(start, end)
    return bars


def plot_timeline(result: Any, ax: Any = None, *, title: str | None = None):
    """Draw each worker's tasks as a Gantt chart (the picture of Dask's task stream).

    One row per worker, one bar per task (per batch when loads are batched): blue
    bars end when the task's result reached the decoder; light blue bars
    finished once the product was decodable and were not read; grey hatched
    bars were still running or queued then and were cancelled; red bars failed.
    The dashed line marks the moment the product became decodable (the ``wait``
    stage); bars whose end the record does not hold stop there.

    Parameters
    ----------
    result : MatmulResult
        The record (no cluster needed).
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure by default.
    title : str, optional
        Axes title (default: the scheme, n and k).

    Returns
    -------
    matplotlib.axes.Axes
    """
    check_installed(
        ["matplotlib"],
        extra="notebooks",
        needed_by="`result.plot_timeline()`",
        instead="print(result) for the record as text",
    )
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    if ax is None:
        _, ax = plt.subplots(figsize=(8, 1.0 + 0.35 * result.n))
    decodable = result.stage_seconds.get("wait", result.latency_seconds)
    for task, start in _bars(result, decodable):
        end = task.finish_seconds if task.status == "used" else decodable
        ax.barh(
            task.worker,
            max(end - start, 0.0),
            left=start,
            height=0.6,
            color=COLORS[task.status],
            edgecolor="black" if task.status == "used" else "0.4",
            hatch="//" if task.status == "cancelled" else None,
            linewidth=0.6,
        )
    ax.axvline(decodable, color="black", ls="--", lw=1)
    ends = [t.finish_seconds for t in result.tasks if t.status == "used"]
    ax.set_xlim(0.0, 1.18 * max([decodable, *ends]))  # room for the labels
    for worker in range(result.n):
        late = sum(t.worker == worker and t.status == "cancelled" for t in result.tasks)
        if late:
            ax.annotate(
                f" {late} cancelled",
                (decodable, worker),
                va="center",
                fontsize=7,
                color="0.3",
            )
    ax.set(
        xlabel="seconds since submission",
        ylabel="worker",
        yticks=range(result.n),
        ylim=(result.n - 0.5, -0.5),
        title=title or f"{result.scheme}, n = {result.n}, k = {result.k}",
    )
    ax.legend(
        handles=[
            Patch(color=COLORS["used"], label="used"),
            Patch(color=COLORS["unused"], label="finished, not needed"),
            Patch(facecolor=COLORS["cancelled"], hatch="//", label="cancelled"),
            Patch(color=COLORS["failed"], label="failed"),
            plt.Line2D([], [], color="black", ls="--", label="decodable"),
        ],
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        fontsize=8,
    )
    return ax
