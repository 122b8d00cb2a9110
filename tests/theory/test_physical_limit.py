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
from theory._physical_limit import _NODES, _WEIGHTS, _log_laplace, _speed_quadrature

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


def _reference_laplace_integral(b, c):
    """int_0^inf e^{-x - c/(b + x)} dx by adaptive quadrature, split near 0."""

    def f(x):
        return np.exp(-x - c / (b + x))

    near = [1e-12, 1e-10, 1e-8, 1e-6, 1e-4, 1e-2]
    head = integrate.quad(f, 0, 1, points=near, epsabs=0, epsrel=1e-13, limit=500)
    tail = integrate.quad(f, 1, np.inf, epsabs=0, epsrel=1e-13, limit=500)
    return head[0] + tail[0]


def test_speed_quadrature_rule():
    x, w = _speed_quadrature()
    # the documented rule: 1024 nodes (16 x 64 panels) in (0, 60)
    assert x.shape == w.shape == (1024,)
    assert 0.0 < x.min() < 1e-16
    assert 59.0 < x.max() < 60.0
    np.testing.assert_array_equal(x, _NODES)
    np.testing.assert_array_equal(w, _WEIGHTS)
    # moments of Exp(1): 1, 1, 2
    assert w.sum() == pytest.approx(1.0, abs=1e-14)
    assert w @ x == pytest.approx(1.0, abs=1e-14)
    assert w @ x**2 == pytest.approx(2.0, abs=1e-14)
    # exp(-c / (b + x)) at the scales the graded panels resolve
    for b, c in [(1e-6, 1e-3), (1e-10, 1.0), (0.5, 2.0)]:
        value = w @ np.exp(-c / (b + x))
        assert value == pytest.approx(_reference_laplace_integral(b, c), rel=1e-13)


def test_log_laplace_near_zero_and_at_underflow():
    one = GroupProfile(N=[1], a=[1.0], mu=[1.0])
    # log E[e^{-t V}] = -t E[V] + O(t^2), E[V] = e E_1(1) for a = mu = 1
    assert _log_laplace(1e-12, one)[0] == pytest.approx(
        -1e-12 * np.e * exp1(1.0), rel=1e-9, abs=0.0
    )
    # the transform underflows to 0 at t = 1e6: log 0 = -inf, without a warning
    assert _log_laplace(1e6, one)[0] == -np.inf


@pytest.mark.parametrize(
    ("a", "mu"), [(1e-9, 1e3), (1e-6, 1e6), (5.0, 1e-4), (1e3, 1e3)]
)
def test_single_worker_at_extreme_scales(a, mu):
    # the outer integral's scale must follow 1 / (a + 1/mu) over 12 decades
    value = expected_physical_limit(WorkerProfile(a=[a], mu=[mu]), 1.0)
    assert value == pytest.approx(a + 1.0 / mu, rel=1e-9, abs=0.0)


def test_two_fast_exponentials():
    # as test_two_unit_exponentials_is_one_third, in units of 1/mu
    profile = WorkerProfile.homogeneous(2, a=0.0, mu=1e6)
    assert expected_physical_limit(profile, 1.0) == pytest.approx(
        1 / 3e6, rel=1e-8, abs=0.0
    )


@pytest.mark.parametrize("x", [499.5, 500.0, 500.5, 600.0])
def test_bound_on_both_sides_of_the_tricomi_switch(x):
    # E[1/(a + X)] = int e^{-t} / (a + t) dt (= e^a E_1(a), finite below 709)
    reference = integrate.quad(
        lambda t: np.exp(-t) / (x + t), 0, np.inf, epsabs=0, epsrel=1e-13
    )[0]
    assert reference == pytest.approx(np.exp(x) * exp1(x), rel=1e-12)
    bound = physical_limit_bound(WorkerProfile(a=[x], mu=[1.0]), 2.0)
    assert bound == pytest.approx(2.0 / reference, rel=1e-12)
