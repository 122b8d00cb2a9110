"""The physical limit E[m / sum_i 1/(a_i + X_i/mu_i)]: quadrature, bound, simulator."""

import re

import numpy as np
import pytest
from scipy import integrate
from scipy.special import exp1

from theory import (
    GroupProfile,
    WorkerProfile,
    expected_physical_limit,
    physical_limit_bound,
    simulate_physical_limit,
)

KIM = GroupProfile(N=[20, 30, 50], a=[1, 1, 1], mu=[4, 2, 1])


def test_check_values_kim_profile():
    # docs/theory/allocation.md#bpcc: limit 14.705; Monte Carlo of E[T_ideal] ~ 14.715
    assert round(physical_limit_bound(KIM, 1000.0), 3) == 14.705
    exact = expected_physical_limit(KIM, 1000.0)
    assert float(f"{exact:.3g}") == 14.7
    assert physical_limit_bound(KIM, 1000.0) < exact < 14.72


@pytest.mark.slow
def test_kim_profile_against_monte_carlo():
    result = simulate_physical_limit(KIM, 1000.0, trials=100_000, rng=2020)
    exact = expected_physical_limit(KIM, 1000.0)
    assert abs(result.mean - exact) < 5.0 * result.stderr
    assert result.stderr < 2e-3


@pytest.mark.parametrize(
    "profile",
    [
        pytest.param(WorkerProfile(a=[0.0, 3.0], mu=[1.0, 0.2]), id="a0-mixed"),
        pytest.param(WorkerProfile(a=[0.5, 0.1, 2.0], mu=[1, 10, 0.5]), id="three"),
        pytest.param(GroupProfile(N=[3, 1], a=[1e-6, 1.0], mu=[1e3, 1.0]), id="tiny-a"),
    ],
)
def test_against_monte_carlo(profile):
    result = simulate_physical_limit(profile, 10.0, trials=100_000, rng=7)
    exact = expected_physical_limit(profile, 10.0)
    assert abs(result.mean - exact) < 5.0 * result.stderr


@pytest.mark.parametrize(("a", "mu"), [(0.0, 2.0), (1.0, 2.0), (5.0, 0.1)])
def test_single_worker_is_exact(a, mu):
    # one worker: T_ideal = m (a + X/mu)
    assert expected_physical_limit(WorkerProfile(a=[a], mu=[mu]), 3.0) == pytest.approx(
        3.0 * (a + 1.0 / mu), rel=1e-8
    )


@pytest.mark.slow
def test_against_nested_adaptive_quadrature():
    a, mu = np.array([0.5, 0.0, 2.0]), np.array([1.0, 3.0, 0.25])

    def laplace(t):
        def integrand(x):
            return np.exp(-x - t * mu / np.maximum(mu * a + x, 1e-300))

        return integrate.quad_vec(integrand, 0.0, np.inf, epsrel=1e-12)[0]

    reference, _ = integrate.quad(
        lambda t: np.prod(laplace(t)), 0.0, np.inf, epsrel=1e-10, limit=200
    )
    exact = expected_physical_limit(WorkerProfile(a=a, mu=mu), 1.0)
    assert exact == pytest.approx(reference, rel=1e-8)


def test_two_unit_exponentials_is_one_third():
    # a = 0, mu = 1: X1 X2 / (X1 + X2) = S U (1 - U), S ~ Gamma(2), U ~ U(0, 1)
    profile = WorkerProfile.homogeneous(2, a=0.0, mu=1.0)
    assert expected_physical_limit(profile, 1.0) == pytest.approx(1 / 3, rel=1e-8)


def test_worker_and_group_profiles_agree():
    workers = GroupProfile(N=[2, 3], a=[1.0, 0.5], mu=[4.0, 1.0]).to_workers()
    shuffled = WorkerProfile(a=workers.a[::-1], mu=workers.mu[::-1])
    groups = GroupProfile(N=[2, 3], a=[1.0, 0.5], mu=[4.0, 1.0])
    value = expected_physical_limit(groups, 5.0)
    assert expected_physical_limit(shuffled, 5.0) == pytest.approx(value, rel=1e-12)
    assert physical_limit_bound(shuffled, 5.0) == pytest.approx(
        physical_limit_bound(groups, 5.0), rel=1e-14
    )


def test_exact_value_approaches_bound_as_n_grows():
    gaps = [
        expected_physical_limit(KIM.scaled(s), 1000.0 * s)
        / physical_limit_bound(KIM.scaled(s), 1000.0 * s)
        - 1.0
        for s in (1, 10, 100)
    ]
    assert all(gap > 0 for gap in gaps)
    assert gaps[0] > gaps[1] > gaps[2]
    assert gaps[2] < 1e-5


@pytest.mark.parametrize(("a", "mu"), [(1.0, 4.0), (0.01, 1.0), (3.0, 0.5), (1, 50)])
def test_bound_matches_exponential_integral(a, mu):
    profile = WorkerProfile(a=[a, 2 * a], mu=[mu, mu])
    speeds = [mu * np.exp(mu * x) * exp1(mu * x) for x in (a, 2 * a)]
    assert physical_limit_bound(profile, 7.0) == pytest.approx(
        7.0 / sum(speeds), rel=1e-12
    )


def test_bound_for_huge_shift_does_not_overflow():
    # E[1/(a + X)] ~ 1/(a + 1) for a >> 1 (exp(800) overflows)
    value = physical_limit_bound(WorkerProfile(a=[800.0], mu=[1.0]), 1.0)
    assert value == pytest.approx(801.0, rel=1e-5)


def test_bound_is_zero_with_a_zero_shift():
    assert physical_limit_bound(WorkerProfile(a=[0.0, 1.0], mu=[1, 1]), 5.0) == 0.0


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda: expected_physical_limit(KIM, 0.0),
            ValueError,
            "`m` must be > 0.0, got m=0.0.",
        ),
        (
            lambda: physical_limit_bound(KIM, -1.0),
            ValueError,
            "`m` must be > 0.0, got m=-1.0.",
        ),
        (
            lambda: expected_physical_limit([1.0, 2.0], 1.0),
            TypeError,
            "`profile` must be a WorkerProfile or GroupProfile, got list.",
        ),
        (
            lambda: physical_limit_bound(WorkerProfile(a=[-1.0], mu=[1.0]), 1.0),
            ValueError,
            "`a` entries must be >= 0.0, got [-1.0].",
        ),
        (
            lambda: physical_limit_bound(WorkerProfile(a=[1.0], mu=[0.0]), 1.0),
            ValueError,
            "`mu` entries must be > 0.0, got [0.0].",
        ),
    ],
)
def test_input_validation(call, error, message):
    with pytest.raises(error, match=re.escape(message)):
        call()
