import pytest

from coded import LocalCodedCluster

N_WORKERS = 6


@pytest.fixture(scope="session")
def cluster():
    """One in-process cluster of single-threaded workers for the runtime tests."""
    with LocalCodedCluster(n_workers=N_WORKERS) as running:
        yield running


@pytest.fixture
def client(cluster):
    yield cluster.client
    # every test must leave the scheduler empty: no task of any call survives
    assert cluster.client.run_on_scheduler(_scheduler_keys) == []


def _scheduler_keys(dask_scheduler):
    return [key for key in dask_scheduler.tasks if str(key).startswith("coded-")]


def scheduler_keys(client, call_id):
    """Keys of call `call_id` the scheduler still holds."""
    return [k for k in client.run_on_scheduler(_scheduler_keys) if call_id in str(k)]
