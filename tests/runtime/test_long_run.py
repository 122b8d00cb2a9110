"""The embedded cluster is configured to stay flat over a long run (issue 29)."""

import dask.config
import numpy as np
import pytest

from coded import LocalCodedCluster, coded_matmul
from coded.runtime._cluster import LONG_RUN_CONFIG

pytestmark = pytest.mark.runtime

LOG_LENGTH = LONG_RUN_CONFIG["distributed.admin.low-level-log-length"]
HISTORY = LONG_RUN_CONFIG["distributed.diagnostics.computations.max-history"]


def _scheduler_state(dask_scheduler):
    return {
        "spans": "spans" in dask_scheduler.extensions,
        "stealing": "stealing" in dask_scheduler.extensions,
        "transition_log": dask_scheduler.transition_log.maxlen,
        "computations": dask_scheduler.computations.maxlen,
        "events": dask_scheduler._broker._topics["all"].events.maxlen,
        "streams": sorted(
            {
                bs.recent_message_log.maxlen
                for comms in (dask_scheduler.stream_comms, dask_scheduler.client_comms)
                for bs in comms.values()
            }
        ),
    }


def _worker_state(dask_worker):
    span_ids = {k[1] for k in dask_worker.digests_total if k[0] == "execute"}
    return {
        "spans": "spans" in dask_worker.extensions,
        "log": dask_worker.state.log.maxlen,
        "stimulus_log": dask_worker.state.stimulus_log.maxlen,
        "stream": dask_worker.batched_stream.recent_message_log.maxlen,
        "config": dask.config.get("distributed.admin.low-level-log-length"),
        "span_ids": span_ids,
    }


def _run_a_few(client):
    A, x = np.arange(24.0).reshape(12, 2), np.array([1.0, -2.0])
    for _ in range(3):
        result = coded_matmul(A, x, scheme="mds", k=2, client=client)
        assert np.allclose(result.product, A @ x)


@pytest.mark.parametrize("processes", [False, True])
def test_long_run_settings_are_in_force(processes):
    with LocalCodedCluster(n_workers=3, processes=processes) as cluster:
        client = cluster.client
        _run_a_few(client)
        scheduler = client.run_on_scheduler(_scheduler_state)
        workers = client.run(_worker_state)
        stream = client.scheduler_comm.recent_message_log.maxlen
    assert scheduler == {
        "spans": False,
        "stealing": True,
        "transition_log": LOG_LENGTH,
        "computations": HISTORY,
        "events": LOG_LENGTH,
        "streams": [LOG_LENGTH],
    }
    assert stream == LOG_LENGTH
    assert len(workers) == 3
    # a worker process runs with the settings (later comms get them too); an
    # in-process worker shares this process's configuration, left unchanged
    config = (
        LOG_LENGTH
        if processes
        else dask.config.get("distributed.admin.low-level-log-length")
    )
    for state in workers.values():
        # fine metrics are kept per task prefix, not per call's span
        assert state == {
            "spans": False,
            "log": LOG_LENGTH,
            "stimulus_log": LOG_LENGTH,
            "stream": LOG_LENGTH,
            "config": config,
            "span_ids": {None},
        }


def test_settings_do_not_leak_into_the_caller():
    before = dask.config.get("distributed.admin.low-level-log-length")
    with LocalCodedCluster(n_workers=1):
        assert dask.config.get("distributed.admin.low-level-log-length") == before
    assert before != LOG_LENGTH


def test_spans_can_be_kept():
    with LocalCodedCluster(n_workers=2, spans=True) as cluster:
        _run_a_few(cluster.client)
        scheduler = cluster.client.run_on_scheduler(_scheduler_state)
        workers = cluster.client.run(_worker_state)
    assert scheduler["spans"]
    assert all(state["spans"] for state in workers.values())
    assert all(None not in state["span_ids"] for state in workers.values())


def test_explicit_extensions_win():
    with LocalCodedCluster(
        n_workers=2, scheduler_kwargs={"extensions": {}}, extensions={}
    ) as cluster:
        _run_a_few(cluster.client)
        scheduler = cluster.client.run_on_scheduler(_scheduler_state)
    assert scheduler["spans"] is False
    assert scheduler["stealing"] is False
