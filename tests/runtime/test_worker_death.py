"""Workers that die mid-job: killed processes and injected deaths."""

import os
import re
import signal
import threading

import numpy as np
import pytest

from coded import (
    LocalCodedCluster,
    MDSCode,
    NotEnoughResultsError,
    Stragglers,
    coded_matmul,
)

pytestmark = pytest.mark.runtime

A = np.arange(36.0).reshape(12, 3) % 7
X = np.array([1.0, -2.0, 0.5])


@pytest.fixture(scope="module")
def process_cluster():
    with LocalCodedCluster(n_workers=4, processes=True) as running:
        yield running


@pytest.fixture
def pclient(process_cluster):
    client = process_cluster.client
    client.wait_for_workers(4, timeout=60)
    return client


def _kill_later(client, addresses, delay):
    pids = client.run(os.getpid, workers=addresses)

    def kill():
        for pid in pids.values():
            os.kill(pid, signal.SIGKILL)

    timer = threading.Timer(delay, kill)
    timer.start()
    return timer


def _first_workers(client, count):
    return sorted(client.nthreads())[:count]


def test_killed_worker_process_mid_job_still_decodes(pclient):
    stragglers = Stragglers(delays=dict.fromkeys(range(4), 1.0))
    timer = _kill_later(pclient, _first_workers(pclient, 1), 0.3)
    result = coded_matmul(
        A, X, scheme=MDSCode(4, 3), client=pclient, stragglers=stragglers
    )
    timer.join()
    np.testing.assert_allclose(result.product, A @ X, atol=1e-9)
    assert result.used_workers == (1, 2, 3)


def test_killing_n_minus_k_plus_one_processes_raises_before_timeout(pclient):
    stragglers = Stragglers(delays=dict.fromkeys(range(4), 30.0))
    timer = _kill_later(pclient, _first_workers(pclient, 2), 0.3)
    message = "no decodable set of results can still arrive: received 0 of the 3"
    with pytest.raises(NotEnoughResultsError, match=re.escape(message)):
        coded_matmul(
            A,
            X,
            scheme=MDSCode(4, 3),
            client=pclient,
            stragglers=stragglers,
            timeout=60.0,
        )
    timer.join()


def test_injected_process_death(pclient):
    result = coded_matmul(
        A,
        X,
        scheme=MDSCode(4, 2),
        client=pclient,
        stragglers=Stragglers(dying=[0, 3]),
    )
    np.testing.assert_allclose(result.product, A @ X, atol=1e-9)
    assert not {0, 3} & set(result.used_workers)


def test_injected_death_of_an_in_process_worker():
    with LocalCodedCluster(n_workers=3) as cluster:
        result = coded_matmul(
            A,
            X,
            scheme=MDSCode(3, 2),
            client=cluster.client,
            stragglers=Stragglers(dying=[1]),
        )
        np.testing.assert_allclose(result.product, A @ X, atol=1e-9)
        assert result.used_workers == (0, 2)
