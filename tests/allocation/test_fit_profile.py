"""fit_profile recovers (c, a, mu) from simulated task times, with honest errors."""

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allocation import (
    CallCosts,
    ProfileError,
    ProfileFit,
    fit_profile,
    solve_bpcc,
    solve_hcmm,
    solve_kim,
    solve_load_balanced,
    solve_uniform,
)
from theory import WorkerProfile

LOADS = (100.0, 1000.0)


def simulate(c, a, mu, tasks, workers, rng):
    loads = np.repeat(LOADS, tasks)
    X = rng.standard_exponential((workers, loads.size))
    return loads, c + loads * (a + X / mu)


@settings(max_examples=30)
@given(
    c=st.floats(0.0, 0.05),
    a=st.floats(1e-6, 1e-3),
    noise=st.floats(0.1, 10.0),
    seed=st.integers(0, 2**16),
)
def test_recovers_known_parameters_within_their_standard_errors(c, a, noise, seed):
    mu = 1.0 / (noise * a)  # the random part is 0.1 - 10 times the shift
    loads, times = simulate(c, a, mu, 100, 1, np.random.default_rng(seed))
    fit = fit_profile(loads, times)
    for est, se, truth in (
        (fit.profile.c[0], fit.c_se[0], c),
        (fit.profile.a[0], fit.a_se[0], a),
        (fit.profile.mu[0], fit.mu_se[0], mu),
    ):
        assert abs(est - truth) <= 5 * se + 1e-12
    assert fit.mu_se[0] / mu < 0.15


@pytest.mark.parametrize("tasks", [20, 100])
def test_standard_errors_cover_the_truth_at_the_stated_rate(tasks):
    c, a, mu = 0.02, 1e-4, 2e4
    loads, times = simulate(c, a, mu, tasks, 2000, np.random.default_rng(tasks))
    fit = fit_profile(loads, times)
    for est, se, truth in (
        (fit.profile.c, fit.c_se, c),
        (fit.profile.a, fit.a_se, a),
        (fit.profile.mu, fit.mu_se, mu),
    ):
        coverage = np.mean(np.abs(est - truth) <= 1.96 * se)
        assert 0.90 <= coverage <= 0.98  # stated: 90-95% for 5-100 tasks a load
        assert abs(np.mean(est) / truth - 1) < 0.02  # unbiased


def test_flags_times_whose_noise_does_not_grow_with_the_load():
    rng = np.random.default_rng(5)
    loads = np.repeat(LOADS, 20)
    good = 0.02 + loads * (1e-4 + rng.standard_exponential((500, 40)) / 2e4)
    bad = 0.02 + 1e-4 * loads + 0.01 * rng.standard_exponential((500, 40))
    assert fit_profile(loads, good).poor_fit.mean() < 0.02
    flagged = fit_profile(loads, bad)
    assert flagged.poor_fit.mean() > 0.9
    assert (
        "does not grow with the load"
        in flagged.reasons[int(np.argmax(flagged.poor_fit))]
    )


def test_one_load_keeps_c_at_zero():
    rng = np.random.default_rng(6)
    loads = np.full(400, 50.0)
    fit = fit_profile(loads, loads * (0.5 + rng.standard_exponential((1, 400)) / 4.0))
    assert fit.profile.c.tolist() == [0.0]
    assert fit.c_se.tolist() == [0.0]
    assert abs(fit.profile.a[0] - 0.5) < 5 * fit.a_se[0]


def test_solvers_take_the_fit_directly():
    rng = np.random.default_rng(7)
    loads = np.repeat(LOADS, 10)
    slow = 0.02 + loads * (4e-4 + rng.standard_exponential((2, 20)) / 5e3)
    fast = 0.02 + loads * (1e-4 + rng.standard_exponential((2, 20)) / 2e4)
    fit = fit_profile(loads, np.vstack([fast, slow]))
    assert isinstance(fit, ProfileFit)
    assert fit.n == 4
    hcmm = solve_hcmm(fit, 2000)
    np.testing.assert_array_equal(hcmm.overhead, fit.profile.c)
    assert hcmm.loads[:2].min() > hcmm.loads[2:].max()
    assert solve_bpcc(fit, 2000, max_batches=4).batches.max() <= 4


def unidentified_fit() -> ProfileFit:
    """Four workers whose per-task cost swamps the rows: a cannot be told from 0."""
    rng = np.random.default_rng(3)
    loads, times = simulate(0.02, 1e-9, 2e6, 8, 4, rng)
    return fit_profile(loads, times)


def test_unidentified_a_is_flagged_not_flagged_as_poor():
    fit = unidentified_fit()
    assert fit.a_identified.tolist() == [False] * 4
    assert fit.unidentified == (0, 1, 2, 3)
    assert np.all(fit.profile.a <= 1.96 * fit.a_se)
    rng = np.random.default_rng(4)
    loads, times = simulate(0.02, 1e-4, 1e5, 20, 2, rng)
    assert fit_profile(loads, times).a_identified.tolist() == [True, True]


def test_every_solver_accepts_a_fit_with_unidentified_a():
    fit = unidentified_fit()
    m = 500
    solved = {
        "hcmm": solve_hcmm(fit, m),
        "bpcc": solve_bpcc(fit, m),
        "kim": solve_kim(fit, m),
        "uniform": solve_uniform(fit, m),
        "load_balanced": solve_load_balanced(fit, m),
    }
    for name, alloc in solved.items():
        assert alloc.loads.max() <= m, name  # no worker beyond the rows needed
        assert alloc.total_rows >= m, name
        assert np.isfinite(alloc.expected_latency), name
        assert alloc.expected_latency > 0.02, name  # the per-task cost is paid


def test_unusable_unidentified_profile_raises_the_remedy():
    fit = unidentified_fit()
    zero = WorkerProfile(a=np.zeros(4), mu=fit.profile.mu, c=fit.profile.c)
    with pytest.raises(ProfileError, match="leave `l_max` at its default"):
        solve_hcmm(zero, 500, l_max=np.inf)
    with pytest.raises(ProfileError, match="use exact=True"):
        solve_kim(zero, 500, exact=False)
    assert issubclass(ProfileError, ValueError)


def test_a_fit_carries_its_call_costs_into_the_allocation():
    costs = CallCosts(
        call_seconds=0.03,
        encode_flops_per_second=1e9,
        encode_entries_per_second=2e8,
        check_entries_per_second=4e8,
    )
    fit = dataclasses.replace(unidentified_fit(), costs=costs)
    alloc = solve_bpcc(fit, 500)
    assert alloc.costs == costs
    flops = 2.0 * (alloc.total_rows - 500) * 500 * 10
    assert alloc.encode_flops(10) == flops
    entries = alloc.total_rows * 10
    assert alloc.predicted_call_seconds(10) == pytest.approx(
        alloc.expected_latency + 0.03 + flops / 1e9 + entries / 2e8
    )
    assert alloc.predicted_call_seconds(10, checked=True) == pytest.approx(
        alloc.predicted_call_seconds(10) + alloc.total_rows * 10 / 4e8
    )
    bare = solve_bpcc(fit.profile, 500)
    assert bare.costs == CallCosts()
    assert bare.predicted_call_seconds(10, checked=True) == bare.expected_latency


@pytest.mark.parametrize(
    "field",
    [
        "call_seconds",
        "call_se",
        "encode_flops_per_second",
        "encode_entries_per_second",
        "check_entries_per_second",
    ],
)
def test_call_costs_are_finite_and_nonnegative(field):
    with pytest.raises(ValueError, match=f"`{field}`"):
        CallCosts(**{field: -1.0})
    with pytest.raises(ValueError, match=f"`{field}`"):
        CallCosts(**{field: np.inf})
    with pytest.raises(TypeError, match="`costs` must be a CallCosts"):
        dataclasses.replace(unidentified_fit(), costs=(0.0, 0.0))
