import gc
import time

import pytest

from coded import HierarchicalCode, LocalCodedCluster

N_WORKERS = 6


def two_groups_of_three(field=None):
    """HierarchicalCode on the N_WORKERS = 6 workers: two groups of three.

    One group (two of its members) suffices to decode.
    """
    return HierarchicalCode(N_WORKERS, [(2, 1), (3, 2)], field)


@pytest.fixture(scope="session")
def cluster():
    """One in-process cluster of single-threaded workers for the runtime tests."""
    with LocalCodedCluster(n_workers=N_WORKERS) as running:
        yield running


@pytest.fixture
def client(cluster):
    yield cluster.client
    # every test must leave the scheduler empty: no task of any call survives
    # (dask.array products are released when collected: collect the cycles)
    gc.collect()
    assert scheduler_keys(cluster.client, "") == []


def _scheduler_keys(dask_scheduler):
    return [key for key in dask_scheduler.tasks if str(key).startswith("coded-")]


def scheduler_keys(client, call_id, *, settle_seconds=5.0):
    """Keys of call `call_id` the scheduler still holds once releases settled.

    A call releases its keys without waiting for the scheduler to forget them;
    poll until none is left or `settle_seconds` have passed.
    """
    deadline = time.monotonic() + settle_seconds
    while True:
        keys = [
            k for k in client.run_on_scheduler(_scheduler_keys) if call_id in str(k)
        ]
        if not keys or time.monotonic() > deadline:
            return keys
        time.sleep(0.01)


@pytest.fixture(scope="session")
def namespace():
    """`coded.runtime.run_in_namespace`, or a skip where no namespace can be made.

    A shaped cluster needs unprivileged user and network namespaces (``unshare``)
    and the ``htb`` qdisc (``tc``) inside them.
    """
    from coded.runtime import run_in_namespace, shaped_links_unavailable

    reason = shaped_links_unavailable()
    if reason is not None:
        pytest.skip(f"no shaped links here: {reason}")
    return run_in_namespace
