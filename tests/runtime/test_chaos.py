"""Chaos: real worker processes killed by their own pid, and a killed scheduler.

A lost worker is a straggler that never returns: with at most n - k lost (before
a call, during it, or while A is placed) the answer is correct; with one more, a
`NotEnoughResultsError` naming the lost workers and the tolerance arrives before
the timeout. A lost scheduler raises `SchedulerLostError`. Kills use the pid each
worker reports for itself (``client.run(os.getpid)``), never a broad kill.
"""

import collections
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from coded import (
    LocalCodedCluster,
    NotEnoughResultsError,
    SchedulerLostError,
    Stragglers,
    coded_matmul,
    place_operand,
)
from mapreduce import MapReduceOptions, MapReduceTaskError, run_mapreduce

pytestmark = [pytest.mark.runtime, pytest.mark.chaos]

N, K = 4, 2  # tolerates N - K = 2 lost workers
A = np.arange(240.0).reshape(40, 6) % 11 - 5
X = np.linspace(-1.0, 1.0, 6)
START_SECONDS = 240  # starting processes is slow on a loaded 2-core machine


def _stay_dead(dask_worker):
    """On a nanny: do not restart its worker when it dies (it closes instead)."""
    dask_worker.close_gracefully(reason="chaos test: a killed worker stays dead")


@pytest.fixture
def pclient():
    """A fresh cluster of N worker processes whose killed workers stay dead.

    Each test gets its own: no test waits for another's workers to restart.
    """
    with LocalCodedCluster(n_workers=N, processes=True) as running:
        client = running.client
        client.wait_for_workers(N, timeout=START_SECONDS)
        client.run(_stay_dead, nanny=True)
        yield client


def _kill(client, addresses):
    """SIGKILL the worker processes at `addresses` (each by its own pid)."""
    pids = client.run(os.getpid, workers=list(addresses))
    for pid in pids.values():
        os.kill(pid, signal.SIGKILL)


def _kill_later(client, addresses, delay):
    pids = client.run(os.getpid, workers=list(addresses))
    timer = threading.Timer(
        delay, lambda: [os.kill(p, signal.SIGKILL) for p in pids.values()]
    )
    timer.start()
    return timer


def _wait_until(condition, seconds=30.0):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.05)


def test_placed_calls_survive_n_minus_k_dead_workers_and_repair(pclient):
    with place_operand(A, n=N, k=K, client=pclient) as placed:
        assert placed.live == (0, 1, 2, 3)
        assert placed.tolerance_left == 2
        _kill(pclient, placed.addresses[:2])
        result = coded_matmul(placed, X, timeout=60)  # ships x to live workers only
        np.testing.assert_allclose(result.product, A @ X, atol=1e-9)
        assert set(result.used_workers) == {2, 3}
        _wait_until(lambda: placed.live == (2, 3))
        assert placed.tolerance_left == 0
        # rebuilt from shares 2 and 3, on their two workers: two shares each
        with pytest.warns(UserWarning, match="now tolerates 1 lost Dask worker"):
            assert placed.repair() == (0, 1)
        assert placed.live == (0, 1, 2, 3)
        assert placed.tolerance_left == 1  # workers, not shares
        result = coded_matmul(placed, -X, timeout=60)
        np.testing.assert_allclose(result.product, -(A @ X), atol=1e-9)


def test_n_minus_k_killed_during_a_placed_call(pclient):
    with place_operand(A, n=N, k=K, client=pclient) as placed:
        slow = Stragglers(delays=dict.fromkeys(range(N), 1.0))
        timer = _kill_later(pclient, placed.addresses[1:3], 0.3)
        result = coded_matmul(placed, X, stragglers=slow, timeout=60)
        timer.join()
        np.testing.assert_allclose(result.product, A @ X, atol=1e-9)
        assert set(result.used_workers) == {0, 3}


# the repair stacks the lost shares on the two workers left (and says so)
@pytest.mark.filterwarnings("ignore:repair\\(\\) found no spare Dask worker")
def test_n_minus_k_killed_while_placing(pclient):
    big = np.random.default_rng(0).standard_normal((4000, 200))  # 6.4 MB to ship
    victims = sorted(pclient.nthreads())[2:]  # shares 2 and 3
    timer = _kill_later(pclient, victims, 0.01)
    with place_operand(big, n=N, k=K, client=pclient, repair_margin=2) as placed:
        timer.join()
        result = coded_matmul(placed, X[:1].repeat(200), timeout=60)
        np.testing.assert_allclose(result.product, big.sum(axis=1) * X[0], atol=1e-8)


def _words_dying_once(marker):
    """A map function whose first call on a file with "die" kills its own worker."""

    def words(text):
        time.sleep(0.05)
        if "die" in text:
            with contextlib.suppress(FileExistsError):
                os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
                os.kill(os.getpid(), signal.SIGKILL)  # this worker's own pid
        return [(word, 1) for word in text.split()]

    return words


def _count(word, values):
    return sum(values)


def test_a_worker_killed_during_coded_mapreduce_never_gives_partial_output(
    pclient, tmp_path
):
    files = [f"a b c {i % 3} {i % 5}" for i in range(11)] + ["die a"]
    expected = collections.Counter(w for f in files for w in f.split())
    words = _words_dying_once(str(tmp_path / "died"))
    try:
        result = run_mapreduce(
            files,
            words,
            _count,
            K=N,
            r=2,
            client=pclient,
            options=MapReduceOptions(timeout=60),
        )
    except MapReduceTaskError:  # a named error is fine (NotEnoughMappersError, ...)
        result = None
    assert (tmp_path / "died").exists()  # a mapper's worker did die mid-stage
    if result is not None:  # never partial output presented as complete
        assert dict(result.output) == dict(expected)


def test_fresh_calls_survive_a_killed_and_an_injected_death(pclient):
    slow = Stragglers(delays=dict.fromkeys(range(N), 1.0), dying=[0])
    timer = _kill_later(pclient, sorted(pclient.nthreads())[3:], 0.3)
    result = coded_matmul(A, X, n=N, k=K, client=pclient, stragglers=slow)
    timer.join()
    np.testing.assert_allclose(result.product, A @ X, atol=1e-9)
    assert result.used_workers == (1, 2)
    assert set(result.failed_workers) == {0, 3}


def test_one_more_than_tolerated_raises_the_named_error_before_the_timeout(pclient):
    with place_operand(A, n=N, k=K, client=pclient) as placed:
        slow = Stragglers(delays=dict.fromkeys(range(N), 30.0))
        timer = _kill_later(pclient, placed.addresses[:3], 0.3)
        began = time.monotonic()
        with pytest.raises(NotEnoughResultsError, match="tolerates 2 lost of 4"):
            coded_matmul(A, X, n=N, k=K, client=pclient, stragglers=slow, timeout=60)
        assert time.monotonic() - began < 30  # a fresh call, killed mid-flight
        timer.join()
        with pytest.raises(NotEnoughResultsError, match="tolerates 2 lost") as error:
            coded_matmul(placed, X, timeout=60)  # a placed call, after the kill
        assert set(error.value.lost_workers) == {0, 1, 2}
        assert error.value.tolerance == 2
        with pytest.raises(NotEnoughResultsError, match="Place A again"):
            placed.repair()


@pytest.fixture
def separate_scheduler(tmp_path):
    """A scheduler and two workers in processes this test starts (and kills)."""
    from distributed import Client

    file = tmp_path / "scheduler.json"
    python = [sys.executable, "-m"]
    started = [
        subprocess.Popen(
            [*python, "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
             "--port", "0", "--dashboard-address", ":0", "--scheduler-file", str(file)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
    ]  # fmt: skip
    _wait_until(lambda: file.exists() and json.loads(file.read_text() or "{}"), 120)
    for _ in range(2):
        started.append(
            subprocess.Popen(
                [*python, "distributed.cli.dask_worker", "--scheduler-file",
                 str(file), "--no-nanny", "--nthreads", "1",
                 "--dashboard-address", ":0"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
        )  # fmt: skip
    client = Client(scheduler_file=str(file), timeout=120)
    try:
        client.wait_for_workers(2, timeout=120)
        yield client, started[0]
    finally:
        for process in started:  # only the processes this fixture started
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            process.wait(timeout=30)
        with contextlib.suppress(Exception):
            client.close(timeout=5)


def test_a_killed_scheduler_raises_scheduler_lost(separate_scheduler):
    client, scheduler = separate_scheduler
    warm = coded_matmul(A, X, n=2, k=1, client=client)
    np.testing.assert_allclose(warm.product, A @ X, atol=1e-9)
    assert client.run_on_scheduler(os.getpid) == scheduler.pid
    threading.Timer(0.5, os.kill, (scheduler.pid, signal.SIGKILL)).start()
    began = time.monotonic()
    with pytest.raises(SchedulerLostError, match=r"scheduler (became|is) unreachable"):
        coded_matmul(
            A,
            X,
            n=2,
            k=1,
            client=client,
            stragglers=Stragglers(delays={0: 30.0, 1: 30.0}),
            timeout=60,
        )
    assert time.monotonic() - began < 30
