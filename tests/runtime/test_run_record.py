"""A run's record: one TaskRecord per task, and Dask keys that name the scheme."""

import math

import numpy as np
import pytest
from conftest import N_WORKERS
from distributed import get_task_stream

from coded import Stragglers, coded_matmul
from coded._result import STAGES
from theory import WorkerProfile

pytestmark = pytest.mark.runtime


def test_task_records_agree_with_the_run(client):
    A = np.arange(48.0).reshape(12, 4)
    x = np.ones(4)
    stragglers = Stragglers(
        profile=WorkerProfile.homogeneous(N_WORKERS, a=0.2, mu=0.5), time_unit=0.005
    )
    result = coded_matmul(
        A, x, scheme="mds", k=3, client=client, stragglers=stragglers, rng=7
    )
    assert np.allclose(result.product, A @ x)
    assert sorted(t.worker for t in result.tasks) == list(range(N_WORKERS))
    used = {t.worker for t in result.tasks if t.status == "used"}
    assert used == set(result.used_workers)
    for task in result.tasks:
        arrived = not math.isnan(task.finish_seconds)
        assert arrived == (task.status == "used")
        if arrived:
            assert task.finish_seconds == result.finish_seconds[task.worker]
    cancelled = sum(t.copies for t in result.tasks if t.status == "cancelled")
    assert cancelled == result.cancelled_tasks
    assert {t.status for t in result.tasks} <= {"used", "unused", "cancelled"}
    assert "used workers:" in repr(result)


def test_task_keys_name_the_scheme_and_the_share(client):
    A, x = np.arange(24.0).reshape(6, 4), np.ones(4)
    with get_task_stream(client) as stream:
        result = coded_matmul(A, x, scheme="mds", n=4, k=3, client=client)
    keys = {str(record["key"]) for record in stream.data}
    shares = {k for k in keys if k.startswith("coded-mds-4-3-share-")}
    assert {k.split("-share-")[1].split("-")[0] for k in shares} <= set("0123")
    assert len({k.split("-share-")[1].split("-")[0] for k in shares}) >= 3
    assert all(k.endswith(result.call_id) for k in shares)


def test_every_run_returns_one_record_through_one_handle(client):
    import coded
    import coded.runtime

    A = np.arange(24.0).reshape(8, 3)
    with coded.place_operand(A, k=2, client=client) as placed:
        handle = coded.submit_matmul(placed, np.ones(3))
        assert type(handle) is coded.MatmulHandle is coded.runtime.MatmulHandle
        result = handle.result()
    assert type(result) is coded.MatmulResult
    np.testing.assert_allclose(result.product, A @ np.ones(3))
    assert tuple(result.stage_seconds) == STAGES  # in order
    assert all(isinstance(t, coded.TaskRecord) for t in result.tasks)
    with pytest.warns(DeprecationWarning, match=r"use coded\.MatmulResult"):
        old = coded.runtime.Execution
    assert old is coded.MatmulResult
