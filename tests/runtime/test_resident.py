"""The resident transport: placed calls served by worker plugins, no scheduler.

The two transports drive the same run state: they must agree on every product
and every named error. The worker-process tests kill, stop and disconnect for
real and read what the workers hold afterwards.
"""

import os
import signal
import time

import numpy as np
import pytest
from conftest import N_WORKERS
from distributed import Client
from hypothesis import given, settings
from hypothesis import strategies as st

from coded import (
    HierarchicalCode,
    InconsistentResultsError,
    LocalCodedCluster,
    NotEnoughResultsError,
    Stragglers,
    coded_matmul,
    place_operand,
    submit_matmul,
)
from coded.runtime.interface import served_calls

pytestmark = pytest.mark.runtime

P = 65_537
PLACEMENTS = {
    "mds": {"scheme": "mds", "k": N_WORKERS - 2},
    "mds-gf": {"scheme": "mds", "k": N_WORKERS - 2, "field": P},
    "replication": {"scheme": "replication", "r": 2},
    "uncoded": {"scheme": "uncoded"},
    "speculative": {"scheme": "speculative"},
    "rateless": {"scheme": "rateless"},
}


def _operands(draw_seed, m, d, columns, integer):
    rng = np.random.default_rng(draw_seed)
    A = rng.integers(-9, 10, size=(m, d))
    B = rng.integers(-9, 10, size=(d, columns) if columns else d)
    return (A, B) if integer else (A.astype(float), B.astype(float))


def _outcome(placed, B, **options):
    """The product and record fields a transport must agree on, or the error."""
    try:
        result = coded_matmul(placed, B, **options)
    except (NotEnoughResultsError, InconsistentResultsError) as error:
        return type(error).__name__, _named(error)
    return result.product, result.transport, result.suspect_workers, result


def _named(error):
    return sorted(
        getattr(error, "lost_workers", None) or getattr(error, "suspect_workers", {})
    )


@settings(max_examples=8)
@given(
    name=st.sampled_from(sorted(PLACEMENTS)),
    m=st.integers(12, 40),
    d=st.integers(1, 6),
    columns=st.sampled_from([0, 1, 3]),
    transposed=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_resident_and_task_paths_agree_on_products(
    cluster, name, m, d, columns, transposed, seed
):
    client = cluster.client
    options = PLACEMENTS[name]
    transposed = transposed and name in ("mds", "mds-gf", "replication", "uncoded")
    m = 20 * m if name == "rateless" else m  # an LT code needs rows to decode
    A, B = _operands(seed, m, d, columns, integer="field" in options)
    if transposed:
        B = _operands(seed + 1, d, m, columns, integer="field" in options)[1]
    with place_operand(A, client=client, **options) as placed:
        view = placed.T if transposed else placed
        resident = coded_matmul(view, B)
        tasks = coded_matmul(view, B, transport="tasks")
    assert (resident.transport, tasks.transport) == ("resident", "tasks")
    expected = (A.T if transposed else A) @ B
    if "field" in options:  # exact: equal residues (signed representatives)
        np.testing.assert_array_equal(np.asarray(resident.product) % P, expected % P)
        np.testing.assert_array_equal(np.asarray(tasks.product) % P, expected % P)
    else:
        np.testing.assert_allclose(resident.product, expected, atol=1e-8)
        np.testing.assert_allclose(tasks.product, expected, atol=1e-8)


@settings(max_examples=8)
@given(
    name=st.sampled_from(["mds", "mds-gf", "replication", "uncoded"]),
    fault=st.sampled_from(["failing", "too-many", "corrupt", "corrupt-correct"]),
    seed=st.integers(0, 2**16),
)
def test_resident_and_task_paths_agree_on_named_errors(cluster, name, fault, seed):
    client = cluster.client
    options = PLACEMENTS[name]
    A, B = _operands(seed, 24, 4, 0, integer="field" in options)
    spare = {"mds": 2, "mds-gf": 2, "replication": 1, "uncoded": 0}[name]
    if fault == "failing":
        stragglers = Stragglers(failing={1})
    elif fault == "too-many":
        stragglers = Stragglers(failing=set(range(spare + 1)))
    else:  # the others wait: worker 2's corrupt piece is always checked
        late = {i: 0.3 for i in range(N_WORKERS) if i != 2}
        stragglers = Stragglers(corrupt={2: 0.5}, delays=late)
    verify = "correct" if fault == "corrupt-correct" and spare else "detect"
    call = {"stragglers": stragglers, "verify": verify, "check": "freivalds"}
    with place_operand(A, client=client, **options) as placed:
        resident = _outcome(placed, B, **call)
        tasks = _outcome(placed, B, **call, transport="tasks")
    if isinstance(resident[0], str):  # the same error, naming the same workers
        assert resident == tasks
        return
    assert not isinstance(tasks[0], str)
    np.testing.assert_allclose(resident[0], tasks[0], atol=1e-8)
    assert (resident[1], tasks[1]) == ("resident", "tasks")
    assert resident[2] == tasks[2] == ((2,) if verify == "correct" else ())
    for result in (resident[3], tasks[3]):  # checked alike, with a detection floor
        assert result.verification == "freivalds"
        if "field" in options:
            assert result.detection_floor == 0.0  # exact over GF(p)
        else:
            assert 0 < result.detection_floor < 1e-9


def test_stragglers_batches_and_cancel_on_resident_servers(client):
    """BPCC-like chains stream; a straggler's wait is cut short by the stop."""
    A, B = _operands(3, 40, 5, 0, integer=False)
    with place_operand(A, client=client, scheme="rateless") as placed:
        slow = Stragglers(delays={0: 30.0})
        result = coded_matmul(placed, B, stragglers=slow, rng=0)
    np.testing.assert_allclose(result.product, A @ B, atol=1e-8)
    assert result.transport == "resident"
    assert len({t.batch for t in result.tasks}) > 1  # several batches a worker
    assert any(t.status == "cancelled" for t in result.tasks if t.worker == 0)
    _wait_until_idle(client)


def test_speculative_backups_fetch_the_share_for_the_call(client):
    A, B = _operands(5, 30, 4, 0, integer=False)
    with place_operand(A, client=client, scheme="speculative") as placed:
        slow = Stragglers(delays={1: 3.0})
        result = coded_matmul(placed, B, stragglers=slow, rng=0)
    np.testing.assert_allclose(result.product, A @ B, atol=1e-8)
    assert result.transport == "resident"
    assert result.backup_tasks >= 1
    _wait_until_idle(client)


def test_explicit_transports_and_their_refusals(client):
    A, B = _operands(1, 12, 3, 0, integer=False)
    with pytest.raises(ValueError, match="`transport='resident'` serves the shares"):
        coded_matmul(A, B, client=client, transport="resident")
    with pytest.raises(ValueError, match="`transport` must be 'auto'"):
        coded_matmul(A, B, client=client, transport="rpc")
    with place_operand(A, client=client, k=N_WORKERS - 1) as placed:
        with pytest.raises(ValueError, match="output='dask' decodes on a worker"):
            coded_matmul(placed, B, output="dask", transport="resident")
        assert coded_matmul(placed, B, output="dask").transport == "tasks"
        handles = [submit_matmul(placed, c * B) for c in (1.0, 2.0)]
        for c, handle in zip((1.0, 2.0), handles, strict=True):
            np.testing.assert_allclose(handle.result().product, c * (A @ B))


def _wait_until_idle(client, seconds=10.0):
    """Poll the servers until no call runs on any worker; return their state."""
    deadline = time.monotonic() + seconds
    while True:
        state = served_calls(client)
        if all(not served or served["running"] == 0 for served in state.values()):
            return state
        assert time.monotonic() < deadline, f"calls still running: {state}"
        time.sleep(0.05)


def _channels(client):
    return sum(served["channels"] for served in served_calls(client).values() if served)


def _shares(client):
    """Placed shares the workers hold (read from each worker's memory)."""
    return sum(served["shares"] for served in served_calls(client).values() if served)


# ---- real worker processes ---------------------------------------------------
@pytest.fixture(scope="module")
def processes():
    with LocalCodedCluster(n_workers=4, processes=True) as running:
        yield running


def _pids(client):
    return client.run(os.getpid)


def _spare(client, placed):
    """Workers holding no share of `placed` (nor having held one)."""
    return set(client.scheduler_info()["workers"]) - set(placed.locations)


@pytest.mark.chaos
def test_sigkill_within_the_tolerance_is_a_straggler(processes):
    client = processes.client
    A, B = _operands(7, 24, 4, 0, integer=False)
    with place_operand(A, client=client, k=3) as placed:
        victim = placed.locations[0]
        handle = submit_matmul(placed, B, stragglers=Stragglers(delays={0: 30.0}))
        os.kill(_pids(client)[victim], signal.SIGKILL)
        result = handle.result()
        np.testing.assert_allclose(result.product, A @ B, atol=1e-8)
        assert 0 not in result.used_workers
        assert result.transport == "resident"
        deadline = time.monotonic() + 60
        while 0 in placed.live or not _spare(client, placed):
            # the client learns the share is gone; the nanny's new worker joins
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert placed.repair() == (0,)
        repaired = coded_matmul(placed, B, stragglers=Stragglers(delays={1: 30.0}))
    np.testing.assert_allclose(repaired.product, A @ B, atol=1e-8)
    assert repaired.transport == "resident"
    assert 0 in repaired.used_workers  # the rebuilt share served the call


@pytest.mark.chaos
def test_sigkill_beyond_the_tolerance_fails_at_once(processes):
    client = processes.client
    client.wait_for_workers(4, timeout=60)
    A, B = _operands(8, 24, 4, 0, integer=False)
    with place_operand(A, client=client, k=3) as placed:
        slow = Stragglers(delays=dict.fromkeys(range(4), 30.0))
        handle = submit_matmul(placed, B, stragglers=slow, timeout=50)
        pids = _pids(client)
        for victim in placed.locations[:2]:
            os.kill(pids[victim], signal.SIGKILL)
        with pytest.raises(NotEnoughResultsError, match="closed the connection"):
            handle.result()


@pytest.mark.chaos
def test_a_stopped_worker_is_a_straggler(processes):
    client = processes.client
    client.wait_for_workers(4, timeout=60)
    A, B = _operands(9, 24, 4, 0, integer=False)
    with place_operand(A, client=client, k=3) as placed:
        pid = _pids(client)[placed.locations[3]]
        os.kill(pid, signal.SIGSTOP)
        try:
            result = coded_matmul(placed, B)
        finally:
            os.kill(pid, signal.SIGCONT)
    np.testing.assert_allclose(result.product, A @ B, atol=1e-8)
    assert 3 not in result.used_workers


@pytest.mark.chaos
def test_disconnect_and_release_leave_nothing_on_the_workers(processes):
    client = processes.client
    client.wait_for_workers(4, timeout=60)
    A, B = _operands(10, 24, 4, 0, integer=False)
    channels = _channels(client)
    other = Client(client.scheduler.address)
    placed = place_operand(A, client=other, k=3)
    assert _shares(client) == 4
    handle = submit_matmul(placed, B, stragglers=Stragglers(delays={0: 30.0, 1: 30.0}))
    deadline = time.monotonic() + 10
    while not any(s and s["running"] for s in served_calls(client).values()):
        assert time.monotonic() < deadline, "the call never reached the servers"
        time.sleep(0.02)
    other.close()  # mid-call: the servers stop, the scheduler drops the shares
    del handle
    _wait_until_idle(client)
    deadline = time.monotonic() + 10
    while _channels(client) != channels:  # the other client's channels closed
        assert time.monotonic() < deadline, (_channels(client), channels)
        time.sleep(0.05)
    deadline = time.monotonic() + 10
    while _shares(client):
        assert time.monotonic() < deadline, served_calls(client)
        time.sleep(0.05)
    with place_operand(A, client=client, k=3) as placed:
        assert coded_matmul(placed, B).transport == "resident"
        assert _shares(client) == 4
    deadline = time.monotonic() + 10
    while _shares(client):
        assert time.monotonic() < deadline, served_calls(client)
        time.sleep(0.05)


# group leaders (transport="grouped", tests/runtime/test_grouped.py) on processes
def _kill_leader_of_group_0(client, placed):
    pid = client.run(os.getpid)[placed.locations[0]]
    os.kill(pid, signal.SIGKILL)


@pytest.mark.chaos
def test_a_killed_leader_is_replaced_by_the_next_member(processes):
    client = processes.client
    client.wait_for_workers(4, timeout=60)
    rng = np.random.default_rng(3)
    A, x = rng.standard_normal((8, 3)), rng.standard_normal(3)
    code = HierarchicalCode(4, [(2, 1), (2, 1)])  # any member decodes its group
    with place_operand(A, scheme=code, client=client) as placed:
        # group 1 fails; group 0's members are slow, so it answers only after
        # its leader (worker 0) was killed, through worker 1 leading
        faults = Stragglers(failing=[2, 3], delays={0: 60.0, 1: 1.0})
        handle = submit_matmul(placed, x, transport="grouped", stragglers=faults)
        _kill_leader_of_group_0(client, placed)
        result = handle.result()
    np.testing.assert_allclose(result.product, A @ x, rtol=1e-10, atol=1e-10)
    assert result.used_workers == (1,)
    assert 0 in result.failed_workers


@pytest.mark.chaos
def test_a_killed_leader_without_a_successor_fails_at_once(processes):
    client = processes.client
    client.wait_for_workers(4, timeout=60)
    A, x = np.ones((8, 3)), np.ones(3)
    code = HierarchicalCode(4, [(2, 1), (2, 2)])  # a group needs both members
    with place_operand(A, scheme=code, client=client) as placed:
        faults = Stragglers(failing=[2], delays={0: 60.0})
        handle = submit_matmul(
            placed, x, transport="grouped", stragglers=faults, timeout=50
        )
        _kill_leader_of_group_0(client, placed)
        with pytest.raises(NotEnoughResultsError, match="closed the connection"):
            handle.result()


def test_gradient_steps_and_iterations_run_resident(client):
    from coded import place_gradient_data
    from coded.linalg import power_method

    rng = np.random.default_rng(12)
    X, y = rng.standard_normal((36, 3)), rng.standard_normal(36)

    def grad(part, w):
        Xp, yp = part
        return Xp.T @ (Xp @ w - yp)

    w = rng.standard_normal(3)
    with place_gradient_data((X, y), grad, client=client, s=1) as placed:
        step = placed.gradient(w, stragglers=Stragglers(delays={0: 30.0}))
        as_tasks = placed.gradient(w, transport="tasks")
    np.testing.assert_allclose(as_tasks.gradient, step.gradient, atol=1e-9)
    assert as_tasks.transport == "tasks"
    np.testing.assert_allclose(step.gradient, X.T @ (X @ w - y), atol=1e-9)
    assert step.transport == "resident"
    assert 0 not in step.used_workers
    A = np.diag([3.0, 1.0, 0.5])
    with place_operand(A, client=client, k=N_WORKERS - 2) as placed:
        result = power_method(placed, iterations=12, rng=0)
        tasks = power_method(placed, iterations=12, rng=0, transport="tasks")
    np.testing.assert_allclose(result.solution, tasks.solution, atol=1e-9)
    assert result.value == pytest.approx(3.0, abs=1e-6)
    _wait_until_idle(client)
