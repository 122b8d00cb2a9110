"""A result's summary and timeline come from its record alone (no cluster)."""

import math
import pickle

import numpy as np
import pytest

from coded import MatmulResult
from coded._result import TaskRecord
from coded._timeline import summary_html, summary_text, worker_status

NAN = math.nan


def stored_result() -> MatmulResult:
    """A record as an (4, 2) MDS run with batches of 2 leaves it."""
    tasks = (
        TaskRecord(worker=0, batch=0, rows=(0, 2), finish_seconds=0.10, status="used"),
        TaskRecord(worker=0, batch=1, rows=(2, 4), finish_seconds=0.21, status="used"),
        TaskRecord(worker=1, batch=0, rows=(0, 2), finish_seconds=0.15, status="used"),
        TaskRecord(
            worker=1, batch=1, rows=(2, 4), finish_seconds=NAN, status="cancelled"
        ),
        TaskRecord(worker=2, batch=0, rows=(0, 2), finish_seconds=NAN, status="failed"),
        TaskRecord(
            worker=3,
            batch=0,
            rows=(0, 2),
            finish_seconds=NAN,
            status="cancelled",
            copies=2,
        ),
    )
    return MatmulResult(
        product=np.arange(8.0),
        scheme="mds",
        n=4,
        k=2,
        call_id="abc",
        finish_seconds=(0.21, 0.15, NAN, NAN),
        used_workers=(0, 1),
        failed_workers=(2,),
        stage_seconds={"encode": 0.01, "wait": 0.25, "decode": 0.002, "total": 0.3},
        cancelled_tasks=2,
        backup_tasks=1,
        overlap_seconds=0.0,
        tasks=tasks,
    )


def test_worker_status_from_the_record():
    result = stored_result()
    assert [worker_status(result, i) for i in range(4)] == [
        "used",
        "used",
        "failed",
        "cancelled",
    ]


def test_repr_summarises_code_workers_and_stages():
    text = repr(stored_result())
    assert text == summary_text(stored_result())
    assert text.startswith("MatmulResult(scheme='mds', n=4, k=2, product=float64 (8)")
    assert "used workers: 0 1 (2 of 4); failed: 2; cancelled tasks: 2" in text
    assert "0:0.2100  1:0.1500  2:-  3:-" in text
    assert "wait 0.2500" in text
    assert "verification: off; suspect workers: none" in text


def test_html_table_has_one_row_per_worker_and_stage():
    page = stored_result()._repr_html_()
    assert page == summary_html(stored_result())
    assert page.count("<tr><td>") == 4 + 4
    assert "<td>2</td><td>-</td><td>failed</td>" in page
    assert "<td>wait</td><td>0.2500</td>" in page
    assert "verification off, suspect workers none" in page


def test_timeline_draws_every_task_from_a_stored_record(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    result = pickle.loads(pickle.dumps(stored_result()))  # a stored record
    path = tmp_path / "timeline.png"
    ax = result.plot_timeline(path=path)
    assert path.stat().st_size > 1000
    bars = ax.patches
    assert len(bars) == len(result.tasks)
    by_position = sorted((b.get_y(), b.get_x()) for b in bars)
    lefts = [x for _, x in by_position]
    # batch 1 of worker 0 starts when batch 0 ended; cancelled bars end at "wait"
    assert lefts == pytest.approx([0.0, 0.10, 0.0, 0.15, 0.0, 0.0])
    ends = sorted(round(b.get_x() + b.get_width(), 6) for b in bars)
    assert ends == [0.1, 0.15, 0.21, 0.25, 0.25, 0.25]
    colours = {tuple(np.round(b.get_facecolor(), 3)) for b in bars}
    assert len(colours) == 3  # used, cancelled, failed
    matplotlib.pyplot.close("all")
