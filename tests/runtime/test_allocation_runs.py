"""Unequal loads with BPCC batch streaming, and worker profiling (issue 6)."""

import re
import sys

import numpy as np
import pytest
from conftest import scheduler_keys

from allocation import Allocation
from coded import Stragglers, coded_matmul
from coded.runtime import profile_workers
from coded.runtime._profile import _ramp
from theory import WorkerProfile

pytestmark = pytest.mark.runtime


def _allocation(m=12):
    return Allocation(
        loads=[6, 4, 4, 2, 0, 0],
        batches=[3, 2, 1, 1, 1, 1],
        m=m,
        expected_latency=1.0,
        solver="manual",
    )


@pytest.mark.parametrize("with_stragglers", [False, True], ids=["plain", "stragglers"])
def test_allocation_streams_batches_and_decodes(client, with_stragglers):
    rng = np.random.default_rng(30)
    A = rng.integers(-9, 10, size=(12, 4)).astype(float)
    x = rng.integers(-9, 10, size=4).astype(float)
    stragglers = None
    if with_stragglers:
        profile = WorkerProfile(a=[0.1] * 6, mu=[2.0] * 3 + [0.05] * 3)
        stragglers = Stragglers(profile=profile, time_unit=0.01)
    result = coded_matmul(
        A, x, allocation=_allocation(), client=client, stragglers=stragglers, rng=1
    )
    np.testing.assert_allclose(result.product, A @ x, atol=1e-9)
    assert result.scheme == "allocation (manual)"
    assert not {4, 5} & set(result.used_workers)
    assert scheduler_keys(client, result.call_id) == []


def test_allocation_is_exact_over_gf_p(client):
    rng = np.random.default_rng(31)
    A = rng.integers(-20, 21, size=(12, 3))
    x = rng.integers(-20, 21, size=3)
    result = coded_matmul(A, x, allocation=_allocation(), field=65_537, client=client)
    assert np.array_equal(np.asarray(result.product), A @ x)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {
                "allocation": Allocation(
                    loads=[2] * 8,
                    batches=[1] * 8,
                    m=12,
                    expected_latency=1.0,
                    solver="manual",
                )
            },
            ValueError,
            "got n=8 (from `n`, the code or the allocation): add workers, or build "
            "the code or allocation for 6 workers (e.g. solve on "
            "`coded.profile_workers(client)`, which profiles every worker).",
        ),
        (
            {"allocation": [1, 2]},
            TypeError,
            "`allocation` must be an allocation.Allocation or None, got list.",
        ),
        (
            {"k": 3},
            ValueError,
            "`allocation` fixes the code (a row-MDS code of its loads): leave "
            "scheme='mds', k=None and r=None, got scheme='mds', k=3, r=None.",
        ),
        ({"n": 4}, ValueError, "`n` must equal allocation.n=6, got n=4."),
        (
            {"A": np.ones((10, 4))},
            ValueError,
            "`A` must have allocation.m=12 rows, got A.shape[0]=10.",
        ),
    ],
)
def test_allocation_input_validation(client, kwargs, error, message):
    kwargs = {"A": np.ones((12, 4)), "allocation": _allocation(), **kwargs}
    with pytest.raises(error, match=re.escape(message)):
        coded_matmul(kwargs.pop("A"), np.ones(4), client=client, **kwargs)


def test_profile_workers_times_real_tasks_at_two_loads(client):
    # deterministic: every measured time is at least the injected duration of
    # its task (task j of every worker uses the j-th draw), whatever the load
    n, loads, repeats, d = 3, (10, 40), 2, 8
    profile = WorkerProfile(a=[1.0, 2.0, 4.0], mu=[2.0, 1.0, 0.5], c=[5.0, 0.0, 1.0])
    stragglers = Stragglers(profile=profile, time_unit=1e-3)
    fit = profile_workers(
        client, n=n, loads=loads, d=d, repeats=repeats, stragglers=stragglers, rng=9
    )
    assert fit.n == n
    assert fit.loads.shape == fit.times.shape == (n, len(loads) * repeats)
    for rows in fit.loads:  # each worker alternates two loads, scaled down at most
        assert rows[0] < rows[1] <= 40
        assert rows.tolist() == rows[:2].tolist() * repeats
    generator = np.random.default_rng(9)
    for column in range(fit.times.shape[1]):
        plan = stragglers.sample(n, rng=generator)
        injected = [
            plan.task_fault(i, rows=fit.loads[i, column]).duration_seconds
            for i in range(n)
        ]
        assert np.all(fit.times[:, column] >= injected)
    assert np.all(np.isfinite(fit.profile.c))
    assert np.all(fit.c_se > 0)
    assert scheduler_keys(client, "calibrate") == []


def test_profile_workers_scales_a_slow_workers_loads_to_its_budget(client):
    # worker 1 takes at least 20 ms a row (injected), so 16 tasks of up to 1000
    # rows cannot fit in 0.2 s: its loads shrink; the ratio between them stays
    slow = Stragglers(profile=WorkerProfile(a=[0.0, 20.0], mu=[1e6, 1e6]))
    fit = profile_workers(
        client, n=2, loads=(100, 1000), repeats=2, budget_seconds=0.2, stragglers=slow
    )
    assert fit.loads[1, 1] < 100
    assert fit.loads[1, 0] < fit.loads[1, 1]
    assert np.all(fit.times[1] >= 20e-3 * fit.loads[1])


def test_profile_workers_stops_timing_at_the_budget_in_whole_rounds(client):
    # worker 1's kernels last at least 20 ms a row (injected) at the smallest
    # loads (1, 2): two rounds already spend the 0.1 s budget, so it stops there,
    # and worker 0's twenty kernels are cut to the same four
    slow = Stragglers(profile=WorkerProfile(a=[0.0, 20.0], mu=[1e6, 1e6]))
    switch_seconds = sys.getswitchinterval()
    fit = profile_workers(
        client, n=2, loads=(1, 2), repeats=10, budget_seconds=0.1, stragglers=slow
    )
    assert fit.loads.tolist() == [[1.0, 2.0, 1.0, 2.0]] * 2
    assert np.all(fit.times[1] >= 20e-3 * fit.loads[1])
    assert sys.getswitchinterval() == switch_seconds  # restored after timing


@pytest.mark.parametrize("late", [None, 2, 4], ids=["clean", "late-4-rows", "late-16"])
def test_profile_ramp_is_not_stopped_by_one_late_kernel(late):
    # kernels of l rows take 10 us + l * 10 us; kernel number `late` (a probe of
    # the ramp 1, 4, 16, ... rows, two kernels each) wakes 10 ms late: the ramp
    # decides on each probe's minimum, so the loads come out as without it
    calls = []

    def probe(rows: int, count: int) -> np.ndarray:
        times = []
        for _ in range(count):
            times.append(1e-5 * (1 + rows) + (1e-2 if len(calls) == late else 0.0))
            calls.append(rows)
        return np.array(times)

    plan = _ramp(probe, (1000, 2000), target_seconds=2e-3)
    assert calls[:10:2] == [1, 4, 16, 64, 256]  # the ramp, then the last repeated
    assert plan == (133, 265)  # 2 ms less the 10 us fixed part, at 10 us a row


def test_profile_workers_times_out_with_a_clear_error(client):
    slow = Stragglers(delays={0: 5.0})
    with pytest.raises(TimeoutError, match=re.escape("within timeout=0.3 s")):
        profile_workers(client, n=2, loads=(1, 2), stragglers=slow, timeout=0.3)
    assert scheduler_keys(client, "calibrate") == []


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"repeats": 1}, ValueError, "`repeats` must be >= 2, got"),
        ({"loads": (5, 5)}, ValueError, "`loads` must hold at least 2 distinct"),
        ({"loads": 5}, TypeError, "`loads` must be a sequence of ints, got int."),
        ({"pings": 1}, ValueError, "`pings` must be >= 2, got"),
        ({"budget_seconds": 0.0}, ValueError, "`budget_seconds` must be > 0"),
    ],
)
def test_profile_workers_input_validation(client, kwargs, error, message):
    with pytest.raises(error, match=re.escape(message)):
        profile_workers(client, **kwargs)


def test_allocation_result_carries_its_prediction(client):
    from allocation import solve_hcmm

    allocation = solve_hcmm(WorkerProfile(a=[0.1] * 6, mu=[2.0] * 6), 12)
    A = np.arange(48.0).reshape(12, 4)
    result = coded_matmul(A, np.ones(4), allocation=allocation, client=client)
    assert result.predicted_seconds == allocation.expected_latency
    plain = coded_matmul(A, np.ones(4), n=6, client=client)
    assert plain.predicted_seconds is None


@pytest.mark.parametrize("solver", ["hcmm", "bpcc"])
def test_block_allocation_runs_and_decodes(client, solver):
    from allocation import solve_bpcc, solve_hcmm

    profile = WorkerProfile(a=[0.1] * 3 + [0.5] * 3, mu=[2.0] * 3 + [0.5] * 3)
    solve = solve_hcmm if solver == "hcmm" else solve_bpcc
    allocation = solve(profile, 1200)
    assert allocation.block_rows == 5
    assert allocation.blocks == 240
    rng = np.random.default_rng(32)
    A, x = rng.standard_normal((1200, 5)), rng.standard_normal(5)
    result = coded_matmul(A, x, allocation=allocation, client=client)
    np.testing.assert_allclose(result.product, A @ x, atol=1e-8)
    assert scheduler_keys(client, result.call_id) == []


def test_in_process_workers_may_use_the_machines_memory(client):
    # they share this process: a per-worker share of the machine would pause
    # them all as soon as the process holds a large operand
    import psutil

    from coded.runtime import memory_limits, worker_addresses

    limits = memory_limits(client, worker_addresses(client, None))
    assert limits == [psutil.virtual_memory().total] * len(limits)
