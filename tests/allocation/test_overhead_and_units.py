"""Solvers with the per-task overhead, block rounding, and the one unit system."""

import numpy as np
import pytest

from allocation import (
    ProfileError,
    solve_bpcc,
    solve_hcmm,
    solve_kim,
    solve_load_balanced,
    solve_uniform,
)
from coded import Stragglers
from theory import GroupProfile, WorkerProfile, bpcc_tau, simulate_latency

PROFILE = GroupProfile(N=[2, 3], a=[0.5, 2.0], mu=[4.0, 0.5], c=[2.0, 0.5])
SOLVERS = {
    "uniform": lambda p, m: solve_uniform(p, m),
    "load_balanced": solve_load_balanced,
    "hcmm": solve_hcmm,
    "kim": solve_kim,
    "bpcc": lambda p, m: solve_bpcc(p, m, max_batches=4),
}


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_predictions_with_overhead_match_the_simulator(name):
    allocation = SOLVERS[name](PROFILE, 40)
    workers = PROFILE.to_workers()
    np.testing.assert_array_equal(allocation.overhead, workers.c)
    sim = simulate_latency(
        workers,
        allocation.loads,
        m=allocation.m,
        batches=allocation.batches,
        trials=20_000,
        rng=8,
    )
    assert abs(sim.mean - allocation.expected_latency) < 4 * sim.stderr


def test_bpcc_batch_count_falls_as_the_batch_cost_grows():
    counts = []
    for c in (0.0, 2.0, 50.0):
        profile = WorkerProfile(a=[0.5, 2.0], mu=[4.0, 0.5], c=c)
        counts.append(int(solve_bpcc(profile, 60, max_batches=8).batches.max()))
    assert counts[0] == 8  # no cost: as many batches as allowed
    assert counts == sorted(counts, reverse=True)
    assert counts[-1] == 1


def test_bpcc_chosen_batches_beat_every_fixed_count_in_design_time():
    profile = WorkerProfile(a=[0.2, 1.0, 1.0], mu=[5.0, 0.5, 0.5], c=[0.3, 0.2, 0.2])
    chosen = solve_bpcc(profile, 30, max_batches=4)
    own = bpcc_tau(profile, chosen.loads, m=30, batches=chosen.batches)
    for b in (1, 2, 3, 4):
        fixed = solve_bpcc(profile, 30, batches=b)
        assert own <= bpcc_tau(profile, fixed.loads, m=30, batches=b) * (1 + 1e-9)


@pytest.mark.parametrize("name", ["uniform", "load_balanced", "hcmm", "kim", "bpcc"])
def test_block_rounding_keeps_loads_whole_blocks(name):
    allocation = SOLVERS[name](PROFILE, 2000)
    v = allocation.block_rows
    assert v == 8  # default u = min(m, max(256, 16 n)) = 256 blocks
    assert allocation.blocks == 250
    assert np.all(allocation.loads % v == 0)
    assert np.all(allocation.batch_rows % v == 0)
    assert allocation.loads.sum() >= allocation.m


def test_block_rounding_loss_is_small():
    rows = solve_hcmm(PROFILE, 2000, blocks=2000).expected_latency
    blocks = solve_hcmm(PROFILE, 2000).expected_latency
    assert rows <= blocks <= 1.05 * rows


@pytest.mark.parametrize("solve", [solve_hcmm, solve_kim])
def test_hcmm_and_kim_honour_l_max(solve):
    free = solve(PROFILE, 100)
    cap = int(free.loads.max()) - 5
    capped = solve(PROFILE, 100, l_max=cap)
    assert capped.loads.max() <= cap
    assert capped.loads.sum() > 100
    if solve is solve_hcmm:  # HCMM's design time can only grow under a cap
        workers = PROFILE.to_workers()
        assert bpcc_tau(workers, capped.loads, m=100) >= bpcc_tau(
            workers, free.loads, m=100
        ) * (1 - 1e-9)


def test_uniform_search_honours_l_max():
    free = solve_uniform(PROFILE, 100)
    assert free.loads.max() > 40  # without a cap the best is heavy replication
    capped = solve_uniform(PROFILE, 100, l_max=40)
    assert capped.loads.max() <= 40
    assert len(set(capped.loads.tolist())) == 1
    assert capped.total_rows >= 100
    with pytest.raises(ValueError, match="`l_max` is too small for equal loads"):
        solve_uniform(PROFILE, 100, l_max=[19, 40, 40, 40, 40])
    with pytest.raises(ValueError, match="more than `l_max` allows"):
        solve_uniform(PROFILE, 100, n_rows=300, l_max=40)


def test_zero_shift_worker_needs_and_accepts_a_cap():
    profile = WorkerProfile(a=[0.0, 1.0], mu=[1.0, 1.0])
    with pytest.raises(ProfileError, match=r"workers \[0\] .* leave `l_max` at"):
        solve_hcmm(profile, 10, l_max=np.inf)
    default = solve_hcmm(profile, 10)  # capped at m rows a worker by default
    assert default.loads.tolist()[0] == 10
    allocation = solve_hcmm(profile, 10, l_max=12)
    assert allocation.loads[0] <= 12


def test_injection_and_profiles_share_one_conversion_to_seconds():
    model = WorkerProfile(a=[1.0, 2.0], mu=[4.0, 1.0], c=[3.0, 0.0])
    spec = Stragglers(profile=model, time_unit=0.01)
    seconds = spec.profile_seconds
    np.testing.assert_allclose(seconds.a, [0.01, 0.02])
    np.testing.assert_allclose(seconds.mu, [400.0, 100.0])
    np.testing.assert_allclose(seconds.c, [0.03, 0.0])
    plan = spec.sample(2, rng=0)
    draws = np.random.default_rng(0).exponential(size=(2, 2))
    expected = seconds.c + 10 * (seconds.a + draws[0] / seconds.mu)
    got = [plan.task_fault(i, rows=10).duration_seconds for i in range(2)]
    np.testing.assert_allclose(got, expected)
    assert Stragglers().profile_seconds is None
