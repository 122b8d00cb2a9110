"""Dask clients of the mapreduce runtime tests: four in-process workers."""

import pytest


def _four_worker_client():
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=4, threads_per_worker=1, processes=False, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


@pytest.fixture(scope="module")
def client():
    """One cluster per module (jobs leave no state behind)."""
    yield from _four_worker_client()


@pytest.fixture
def fresh_client():
    """A cluster of its own, for tests that kill workers."""
    yield from _four_worker_client()
