"""The general simulator and the exact allocation latencies.

See docs/theory/model.md#the-monte-carlo-simulator.
"""

import itertools
import re

import numpy as np
import pytest

from theory import (
    GroupProfile,
    WorkerProfile,
    bpcc_optimum,
    expected_allocation_latency,
    expected_kth_completion,
    expected_order_statistics,
    expected_physical_limit,
    hcmm_latency,
    physical_limit_bound,
    simulate_latency,
    simulate_physical_limit,
)
from theory._exact_latency import _rows_distribution

THREE_GROUPS = GroupProfile(N=[20, 30, 50], a=[1, 1, 1], mu=[4, 2, 1])


def within(result, value, k=5.0):
    return abs(result.mean - value) <= k * result.stderr


@pytest.mark.parametrize(("n", "k", "rows"), [(10, 7, 3), (30, 20, 5), (5, 5, 2)])
def test_uniform_mds_matches_order_statistic(n, k, rows):
    profile = WorkerProfile.homogeneous(n, a=0.5, mu=2.0)
    result = simulate_latency(profile, np.full(n, rows), m=k * rows, rng=11)
    exact = rows * expected_kth_completion(n, k, mu=2.0, shift=0.5)
    assert within(result, exact)
    assert expected_allocation_latency(
        profile, np.full(n, rows), m=k * rows
    ) == pytest.approx(exact, rel=1e-9)


def test_order_statistics_homogeneous_closed_form():
    profile = WorkerProfile.homogeneous(40, a=1.0, mu=0.7)
    exact = [expected_kth_completion(40, k, mu=0.7, shift=1.0) for k in range(1, 41)]
    np.testing.assert_allclose(expected_order_statistics(profile), exact, rtol=1e-9)


def test_order_statistics_heterogeneous_against_simulation():
    profile = WorkerProfile(a=[0.1, 1.0, 0.5, 2.0], mu=[5.0, 0.3, 1.0, 9.0])
    X = np.random.default_rng(4242).standard_exponential((200_000, 4))
    Y = np.sort(profile.a + X / profile.mu, axis=1)
    exact = expected_order_statistics(profile)
    assert np.all(np.abs(Y.mean(axis=0) - exact) < 5 * Y.std(axis=0) / np.sqrt(2e5))


@pytest.mark.parametrize(
    ("loads", "batches", "overhead", "m"),
    [
        ([6, 4, 9], [3, 2, 1], [0.0, 0.0, 0.0], 12),
        ([6, 4, 9], [3, 2, 3], [0.2, 0.5, 0.1], 15),
        ([8, 0, 5], [4, 1, 5], [1.0, 0.0, 0.0], 9),
    ],
)
def test_exact_latency_against_simulator(loads, batches, overhead, m):
    profile = WorkerProfile(a=[0.3, 1.0, 0.5], mu=[2.0, 0.5, 4.0])
    result = simulate_latency(
        profile, loads, m=m, batches=batches, overhead=overhead, trials=40_000, rng=3
    )
    exact = expected_allocation_latency(
        profile, loads, m=m, batches=batches, overhead=overhead
    )
    assert within(result, exact)


@pytest.mark.slow
@pytest.mark.parametrize(("n", "rel"), [(10, 2e-2), (100, 3e-3), (1000, 1e-3)])
def test_hcmm_expected_latency_approaches_tau(n, rel):
    g = GroupProfile(N=[n // 2, n // 2], a=[1, 2], mu=[4, 1])
    m = 100 * n
    tau = hcmm_latency(g, m)
    opt = bpcc_optimum(g, m, batches=1, l_max=np.inf)
    trials = 4000 if n < 1000 else 400
    result = simulate_latency(g, opt.loads, m=m, trials=trials, rng=n)
    # docs/theory/allocation.md#hcmm: simulated 252.9 (n=10), 250.8 (n=100),
    # 250.56 (n=1000).
    assert result.mean > tau - 5 * result.stderr
    assert abs(result.mean - tau) / tau < rel + 5 * result.stderr / tau


@pytest.mark.slow
@pytest.mark.parametrize("b", [1, 8])
def test_bpcc_allocation_simulated_vs_exact(b):
    opt = bpcc_optimum(THREE_GROUPS, 1000.0, batches=b)
    loads = np.maximum(np.round(opt.loads / b), 1) * b
    result = simulate_latency(
        THREE_GROUPS, loads, m=1000, batches=b, trials=6000, rng=7
    )
    exact = expected_allocation_latency(THREE_GROUPS, loads, m=1000, batches=b)
    assert within(result, exact)
    assert exact > opt.latency


def test_physical_limit_against_exact_expectation():
    result = simulate_physical_limit(THREE_GROUPS, 1000.0, trials=20_000, rng=5)
    assert within(result, expected_physical_limit(THREE_GROUPS, 1000.0))
    assert result.mean > physical_limit_bound(THREE_GROUPS, 1000.0)


def test_seeded_and_chunk_independent():
    profile = WorkerProfile(a=[0.3, 1.0], mu=[2.0, 0.5])
    first = simulate_latency(profile, [3, 4], m=5, batches=[3, 2], trials=500, rng=9)
    again = simulate_latency(
        profile, [3, 4], m=5, batches=[3, 2], trials=500, rng=np.random.default_rng(9)
    )
    assert first.mean == again.mean
    assert first.quantiles == again.quantiles
    assert first.trials == 500


def test_real_loads_and_quantiles_ordered():
    profile = WorkerProfile(a=[1.0, 1.0, 1.0], mu=[3.0, 1.0, 0.5])
    result = simulate_latency(profile, [2.5, 2.0, 1.5], m=3.2, trials=3000, rng=1)
    q = result.quantiles
    assert q[0.5] <= q[0.9] <= q[0.99]
    assert result.mean > 0


PROFILE = WorkerProfile(a=[0.3, 1.0], mu=[2.0, 0.5])
BAD = [
    (
        lambda: simulate_latency(PROFILE, [1, 1], m=0),
        ValueError,
        "`m` must be > 0.0, got m=0.0.",
    ),
    (
        lambda: simulate_latency(PROFILE, [1, 1], m=3),
        ValueError,
        "`loads` must hold at least m=3 rows in total, got sum(loads)=2.",
    ),
    (
        lambda: simulate_latency(PROFILE, [1, -1], m=1),
        ValueError,
        "`loads` entries must be >= 0.0, got [1.0, -1.0].",
    ),
    (
        lambda: simulate_latency(PROFILE, [1], m=1),
        ValueError,
        "`loads` must have length 2, got 1.",
    ),
    (
        lambda: simulate_latency(PROFILE, [2, 2], m=1, batches=[1, 0]),
        ValueError,
        "`batches` entries must be >= 1, got [1, 0].",
    ),
    (
        lambda: simulate_latency(PROFILE, [2, 2], m=1, overhead=-0.1),
        ValueError,
        "`overhead` entries must be >= 0.0, got [-0.1].",
    ),
    (
        lambda: simulate_latency(PROFILE, [2, 2], m=1, trials=0),
        ValueError,
        "`trials` must be >= 1, got trials=0.",
    ),
    (
        lambda: simulate_latency(PROFILE, [2, 2], m=1, rng="x"),
        TypeError,
        "`rng` must be a numpy Generator, SeedSequence, int or None, got str.",
    ),
    (
        lambda: simulate_physical_limit(PROFILE, -1.0),
        ValueError,
        "`m` must be > 0.0, got m=-1.0.",
    ),
    (
        lambda: expected_allocation_latency(PROFILE, [1.5, 2], m=1),
        ValueError,
        "`loads` must be whole rows, got [1.5, 2.0].",
    ),
    (
        lambda: expected_allocation_latency(PROFILE, [3, 2], m=1, batches=[2, 1]),
        ValueError,
        "every load must split into whole batches (l_i % b_i == 0), "
        "got loads=[3, 2], batches=[2, 1].",
    ),
    (
        lambda: expected_allocation_latency(PROFILE, [1, 2], m=4),
        ValueError,
        "`loads` must hold at least m=4 rows in total, got 3.",
    ),
    (
        lambda: expected_order_statistics([1.0]),
        TypeError,
        "`profile` must be a WorkerProfile or GroupProfile, got list.",
    ),
]


@pytest.mark.parametrize(("call", "error", "message"), BAD)
def test_input_validation(call, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        call()


def test_fractional_and_zero_loads_by_hand():
    # mu = 1e12: T_i = l_i a_i. Loads 0.5 and 1 (real rows), a third worker idle
    profile = WorkerProfile(a=[4.0, 1.0, 1.0], mu=[1e12] * 3)
    both = simulate_latency(profile, [0.5, 1.0, 0.0], m=1.5, trials=1, rng=0)
    assert both.trials == 1
    assert both.mean == pytest.approx(2.0, rel=1e-9)  # waits for 0.5 x 4
    one = simulate_latency(profile, [0.5, 1.0, 0.0], m=1.0, trials=1, rng=0)
    assert one.mean == pytest.approx(1.0, rel=1e-9)


def test_latency_samples_are_the_seeded_draws_across_chunks():
    # 100_000 workers of one row: 20 trials a chunk of 2e6 batch times, 21 trials
    # take two; trial t decodes at the k-th smallest a + X[t, i] / mu
    n, k = 100_000, 5
    profile = WorkerProfile.homogeneous(n, a=0.5, mu=2.0)
    result = simulate_latency(profile, np.ones(n), m=k, trials=21, rng=9)
    X = np.random.default_rng(9).standard_exponential((21, n))
    samples = np.partition(0.5 + X / 2.0, k - 1, axis=1)[:, k - 1]
    assert result.trials == 21
    assert result.mean == pytest.approx(samples.mean(), rel=1e-14)
    assert result.stderr == pytest.approx(samples.std(ddof=1) / np.sqrt(21), rel=1e-9)


def test_physical_limit_samples_are_the_seeded_draws_across_chunks():
    n = 100_000  # 20 trials a chunk, so 21 trials take two
    profile = WorkerProfile(a=np.linspace(0.1, 1.0, n), mu=np.full(n, 3.0))
    result = simulate_physical_limit(profile, 7.0, trials=21, rng=4)
    X = np.random.default_rng(4).standard_exponential((21, n))
    samples = 7.0 / (1.0 / (profile.a + X / 3.0)).sum(axis=1)
    assert result.trials == 21
    assert result.mean == pytest.approx(samples.mean(), rel=1e-14)
    again = simulate_physical_limit(profile, 7.0, trials=21, rng=4)
    assert again.mean == result.mean


def test_simulators_default_trials_and_pass_quantiles():
    assert simulate_latency(PROFILE, [2, 2], m=2, rng=0).trials == 10_000
    assert simulate_physical_limit(PROFILE, 2.0, rng=0).trials == 10_000
    for result in (
        simulate_latency(PROFILE, [2, 2], m=2, trials=5, rng=0, quantiles=(0.25,)),
        simulate_physical_limit(PROFILE, 2.0, trials=5, rng=0, quantiles=(0.25,)),
    ):
        assert list(result.quantiles) == [0.25]
    one = simulate_physical_limit(WorkerProfile(a=[1.0], mu=[1e12]), 3.0, trials=1)
    assert one.mean == pytest.approx(3.0, rel=1e-9)  # m / speed, speed 1/a


def _rows_pmf_by_enumeration(t, workers, m):
    """P[min(S(t), m) = s], s = 0..m, over every combination of finished batches."""
    per_worker = []
    for a, mu, r, b, c in workers:
        j = np.arange(1, b + 1)
        at_least = -np.expm1(-mu * np.maximum((t / j - c) / r - a, 0.0))
        at_least = np.concatenate([[1.0], at_least, [0.0]])
        per_worker.append(at_least[:-1] - at_least[1:])
    pmf = np.zeros(m + 1)
    for counts in itertools.product(*(range(len(p)) for p in per_worker)):
        rows = sum(j * w[2] for j, w in zip(counts, workers, strict=True))
        chance = [p[j] for p, j in zip(per_worker, counts, strict=True)]
        pmf[min(rows, m)] += np.prod(chance)
    return pmf


@pytest.mark.parametrize("m", [2, 3, 5])
def test_rows_distribution_against_enumeration(m):
    # (a, mu, r rows a batch, b batches, c): three lone workers, whose batches
    # reach or pass m, and groups of 3 and 2 identical ones (an FFT power each)
    workers = [
        (0.5, 1.0, 1, 2, 0.0),
        (0.2, 2.0, 2, 2, 0.1),
        (1.0, 0.5, 3, 2, 0.0),
        *[(0.3, 1.5, 1, 2, 0.05)] * 3,
        *[(0.1, 3.0, 2, 1, 0.0)] * 2,
    ]
    a, mu, r, b, c = (np.array(column) for column in zip(*workers, strict=True))
    t = np.array([0.3, 0.8, 1.5, 3.0])
    state = _rows_distribution(t, a, mu, r, b, c, m)
    for row, time in zip(state, t, strict=True):
        np.testing.assert_allclose(
            row, _rows_pmf_by_enumeration(time, workers, m), rtol=1e-12, atol=1e-15
        )


def test_order_statistics_of_fast_and_of_unequal_workers():
    # a = 0, mu = 1e6: the whole mass lies below 1e-4; a + (H_3 - H_{3-k}) / mu
    fast = expected_order_statistics(WorkerProfile.homogeneous(3, a=0.0, mu=1e6))
    np.testing.assert_allclose(fast, np.array([1 / 3, 5 / 6, 11 / 6]) / 1e6, rtol=1e-9)
    # Exp(1) and Exp(1e-3): E[min] = 1/1.001, E[max] = 1 + 1000 - 1/1.001; the
    # maximum's tail outlasts the minimum's by a factor 1000
    # (the minimum's mass lay between the nodes of equal starting panels: 1.2e-7)
    unequal = WorkerProfile(a=[0.0, 0.0], mu=[1.0, 1e-3])
    exact = [1 / 1.001, 1001 - 1 / 1.001]
    np.testing.assert_allclose(expected_order_statistics(unequal), exact, rtol=1e-9)
    for m in (1, 2):
        latency = expected_allocation_latency(unequal, [1, 1], m=m)
        assert latency == pytest.approx(exact[m - 1], rel=1e-9)


def test_one_worker_allocation_latency_by_hand():
    # T = l (a + X/mu) + c per batch; every X = 0 gives the start, E[X] = 1/mu
    one = WorkerProfile(a=[0.5], mu=[1.0])
    assert expected_allocation_latency(one, [1], m=1) == pytest.approx(1.5, rel=1e-9)
    # two batches of one row, the first suffices: 1 (0.5 + X) + 0.1
    first = expected_allocation_latency(one, [2], m=1, batches=2, overhead=0.1)
    assert first == pytest.approx(1.6, rel=1e-9)
    # both needed: the second ends at 2 (0.5 + X + 0.1), overhead from the profile
    with_c = WorkerProfile(a=[0.5], mu=[1.0], c=[0.1])
    both = expected_allocation_latency(with_c, [2], m=2, batches=2)
    assert both == pytest.approx(3.2, rel=1e-9)
    # an overhead far above the compute time: 5 + 0.1 (a) + 0.1 (1/mu)
    slow_start = WorkerProfile(a=[0.1], mu=[10.0], c=[5.0])
    latency = expected_allocation_latency(slow_start, [1], m=1)
    assert latency == pytest.approx(5.2, rel=1e-9)
    # fast workers without shift: the second of three at (H_3 - H_1) / mu
    fast = WorkerProfile.homogeneous(3, a=0.0, mu=1e6)
    second = expected_allocation_latency(fast, [1, 1, 1], m=2)
    assert second == pytest.approx((1 / 2 + 1 / 3) / 1e6, rel=1e-9, abs=0.0)


@pytest.mark.parametrize(
    ("loads", "m", "message"),
    [
        ([2, 2], 0, "`m` must be >= 1, got m=0."),
        ([-1, 3], 1, "`loads` entries must be >= 0.0, got [-1.0, 3.0]."),
        ([1, 2, 3], 1, "`loads` must have length 2, got 3."),
    ],
)
def test_allocation_latency_messages(loads, m, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        expected_allocation_latency(PROFILE, loads, m=m)
