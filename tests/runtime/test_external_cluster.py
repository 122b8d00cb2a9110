"""A real, separate cluster: `dask scheduler` and four `dask worker` processes."""

import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from coded import Stragglers, coded_matmul

pytestmark = pytest.mark.runtime

DASK = Path(sys.executable).parent / "dask"


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def address(tmp_path_factory):
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    logs = tmp_path_factory.mktemp("dask-logs")
    commands = [
        [
            DASK,
            "scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--dashboard-address",
            ":0",
        ],
        *(
            [
                DASK,
                "worker",
                address,
                "--host",
                "127.0.0.1",
                "--nthreads",
                "1",
                "--no-dashboard",
                "--no-nanny",
                "--name",
                f"w{i}",
            ]
            for i in range(4)
        ),
    ]
    processes = []
    try:
        for i, command in enumerate(commands):
            log = open(logs / f"{i}.log", "wb")  # noqa: SIM115 (closed below)
            processes.append((subprocess.Popen(command, stdout=log, stderr=log), log))
        yield address
    finally:
        # workers first (they say goodbye to the scheduler), then the scheduler
        for process, _ in processes[1:]:
            process.terminate()
        for process, log in [*processes[1:], *processes[:1]]:
            if process is processes[0][0]:
                process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            log.close()


def test_coded_matmul_on_a_separate_cluster(address):
    from distributed import Client

    with Client(address, timeout=60) as client:
        client.wait_for_workers(4, timeout=60)
    rng = np.random.default_rng(20)
    A = rng.standard_normal((40, 6))
    B = rng.standard_normal((6, 2))
    result = coded_matmul(
        A,
        B,
        scheme="mds",
        k=3,
        address=address,
        stragglers=Stragglers(delays={0: 30.0}),
    )
    np.testing.assert_allclose(result.product, A @ B, atol=1e-9)
    assert result.n == 4
    assert 0 not in result.used_workers


def test_placed_calls_run_resident_on_a_separate_cluster(address):
    from distributed import Client

    from coded import place_operand

    rng = np.random.default_rng(21)
    A, x = rng.standard_normal((40, 6)), rng.standard_normal(6)
    with Client(address, timeout=60) as client:
        client.wait_for_workers(4, timeout=60)
        with place_operand(A, client=client, k=3) as placed:
            result = coded_matmul(placed, x, stragglers=Stragglers(delays={1: 30.0}))
    np.testing.assert_allclose(result.product, A @ x, atol=1e-9)
    assert result.transport == "resident"
    assert 1 not in result.used_workers
