"""Lee et al.'s homogeneous latencies: closed forms, optimal k, simulator."""

import re
from decimal import Decimal, localcontext

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.special import lambertw

import theory
from theory import (
    expected_kth_completion,
    expected_latency_mds,
    expected_latency_mds_asymptotic,
    expected_latency_replication,
    expected_latency_uncoded,
    hcmm_lambda,
    optimal_k_mds,
    optimal_rate_asymptotic,
    simulate_homogeneous,
)


def _sig(x, digits=3):
    return float(f"{x:.{digits}g}")


# --- check values of docs/theory/stragglers.md ------------------------------


def test_check_values_n100_mu1_a1():
    k = optimal_k_mds(100, a=1.0, mu=1.0)
    assert k == 69
    assert _sig(expected_latency_mds(100, k, a=1.0, mu=1.0)) == 0.0313
    assert _sig(expected_latency_uncoded(100, a=1.0, mu=1.0)) == 0.0619
    assert _sig(100 * optimal_rate_asymptotic(a=1.0, mu=1.0)) == 68.2


def test_closed_forms_against_harmonic_sums():
    harmonic = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, 31))])
    n, a, mu = 30, 0.7, 2.5
    assert expected_latency_uncoded(n, a=a, mu=mu) == pytest.approx(
        (a + harmonic[n] / mu) / n, rel=1e-14
    )
    for r in (1, 2, 3, 5, 6, 10, 15, 30):
        assert expected_latency_replication(n, r, a=a, mu=mu) == pytest.approx(
            r / n * (a + harmonic[n // r] / (r * mu)), rel=1e-14
        )
    for k in range(1, n + 1):
        tail = harmonic[n] - harmonic[n - k]
        assert expected_latency_mds(n, k, a=a, mu=mu) == pytest.approx(
            (a + tail / mu) / k, rel=1e-13
        )
        assert expected_kth_completion(n, k, mu=mu, shift=a) == pytest.approx(
            a + tail / mu, rel=1e-13
        )


@pytest.mark.parametrize("n", [1, 2, 7, 64])
def test_special_cases_coincide(n):
    uncoded = expected_latency_uncoded(n, a=1.5, mu=0.5)
    assert expected_latency_mds(n, n, a=1.5, mu=0.5) == pytest.approx(uncoded)
    assert expected_latency_replication(n, 1, a=1.5, mu=0.5) == pytest.approx(uncoded)
    # r = n: every worker holds the whole job, done at the fastest of n
    assert expected_latency_replication(n, n, a=1.5, mu=0.5) == pytest.approx(
        expected_kth_completion(n, 1, mu=0.5, shift=1.5)
    )


# --- optimal k ----------------------------------------------------------------


def _brute_force_k(n, a, mu):
    latencies = [expected_latency_mds(n, k, a=a, mu=mu) for k in range(1, n + 1)]
    return int(np.argmin(latencies)) + 1, min(latencies)


@pytest.mark.parametrize(
    ("n", "a", "mu"),
    [(1, 1.0, 1.0), (10, 0.1, 3.0), (100, 1.0, 1.0), (250, 5.0, 0.2), (500, 0.01, 50)],
)
def test_optimal_k_matches_brute_force(n, a, mu):
    k, best = _brute_force_k(n, a, mu)
    assert optimal_k_mds(n, a=a, mu=mu) == k
    assert expected_latency_mds(n, k, a=a, mu=mu) == best


@given(
    n=st.integers(1, 60),
    a=st.floats(0.0, 20.0),
    mu=st.floats(0.01, 100.0),
)
def test_optimal_k_is_a_minimiser(n, a, mu):
    k = optimal_k_mds(n, a=a, mu=mu)
    _, best = _brute_force_k(n, a, mu)
    assert expected_latency_mds(n, k, a=a, mu=mu) == pytest.approx(best, rel=1e-12)


def test_zero_shift_optimum_is_k1():
    assert optimal_k_mds(50, a=0.0, mu=2.0) == 1
    assert optimal_rate_asymptotic(a=0.0, mu=2.0) == 0.0
    assert expected_latency_mds_asymptotic(50, a=0.0, mu=2.0) == pytest.approx(
        expected_latency_mds(50, 1, a=0.0, mu=2.0)
    )


@pytest.mark.parametrize("mu_a", [1e-3, 0.1, 1.0, 4.0, 30.0, 300.0])
def test_asymptotic_rate_matches_scipy_lambertw(mu_a):
    w = lambertw(-np.exp(-(1.0 + mu_a)), k=-1).real
    assert optimal_rate_asymptotic(a=mu_a, mu=1.0) == pytest.approx(
        1.0 + 1.0 / w, rel=1e-10
    )
    assert expected_latency_mds_asymptotic(10, a=mu_a / 2, mu=2.0) == pytest.approx(
        -w / 20.0, rel=1e-12
    )


def test_asymptotic_rate_stays_finite_beyond_exp_underflow():
    # e^{-(1 + 2000)} underflows; W_{-1}(-e^{-x}) ~ -(x + log x)
    rate = optimal_rate_asymptotic(a=2000.0, mu=1.0)
    assert rate == pytest.approx(1.0 - 1.0 / (2001.0 + np.log(2001.0)), rel=1e-6)
    assert rate < 1.0


def _lee_u(s):
    """u >= 0 with u - log(1 + u) = s, by Newton's method in 400 decimal digits."""
    with localcontext() as context:
        context.prec = 400
        target = Decimal(s)
        u = (2 * target).sqrt() if target < 1 else target + (1 + target).ln()
        for _ in range(100):
            step = (u - (1 + u).ln() - target) * (1 + u) / u
            u -= step
            if abs(step) <= u * Decimal(10) ** -40:
                return float(u)
    raise AssertionError("no convergence")


@pytest.mark.parametrize(
    ("mu_a", "rel"),
    [
        # below 1e-7 the branch-point series, its truncation below 2e-15
        *((mu_a, 5e-15) for mu_a in (1e-300, 1e-30, 1e-12, 9.9e-8)),
        # Newton's method, to the documented 1e-12
        *((mu_a, 1e-12) for mu_a in (1e-7, 2e-7, 1e-5, 0.5, 1.0, 2.0, 1e3)),
    ],
)
def test_lambert_forms_against_decimal_newton(mu_a, rel):
    # u = -1 - W_{-1}(-e^{-(1 + mu a)}); relative accuracy down to the branch point
    u = _lee_u(mu_a)
    rate = optimal_rate_asymptotic(a=mu_a, mu=1.0)
    assert rate == pytest.approx(u / (1.0 + u), rel=rel, abs=0.0)
    latency = expected_latency_mds_asymptotic(1, a=mu_a / 4.0, mu=4.0)
    assert latency == pytest.approx((1.0 + u) / 4.0, rel=rel, abs=0.0)
    lam = hcmm_lambda(theory.WorkerProfile(a=[mu_a / 2.0], mu=[2.0]))[0]
    assert lam == pytest.approx(u / 2.0, rel=rel, abs=0.0)


@pytest.mark.parametrize(("a", "mu"), [(1.0, 1.0), (0.2, 3.0), (3.0, 0.5)])
def test_exact_optimum_approaches_asymptote(a, mu):
    n = 20_000
    k = optimal_k_mds(n, a=a, mu=mu)
    assert k / n == pytest.approx(optimal_rate_asymptotic(a=a, mu=mu), abs=2e-3)
    assert expected_latency_mds(n, k, a=a, mu=mu) == pytest.approx(
        expected_latency_mds_asymptotic(n, a=a, mu=mu), rel=2e-3
    )


# --- properties ---------------------------------------------------------------


@st.composite
def _mds_case(draw):
    n = draw(st.integers(1, 200))
    k = draw(st.integers(1, n))
    a = draw(st.floats(0.0, 100.0))
    mu = draw(st.floats(1e-3, 1e3))
    return n, k, a, mu


@given(case=_mds_case(), factor=st.floats(1.01, 100.0))
def test_mds_latency_falls_as_mu_grows(case, factor):
    n, k, a, mu = case
    assert expected_latency_mds(n, k, a=a, mu=mu * factor) < expected_latency_mds(
        n, k, a=a, mu=mu
    )


@given(case=_mds_case(), delta=st.floats(1e-3, 100.0))
def test_mds_latency_rises_with_a(case, delta):
    n, k, a, mu = case
    assert expected_latency_mds(n, k, a=a + delta, mu=mu) > expected_latency_mds(
        n, k, a=a, mu=mu
    )


# --- closed form vs simulator -------------------------------------------------

_SIM_CASES = [
    pytest.param("uncoded", 1, {}, 1.0, 1.0, id="uncoded-n1"),
    pytest.param("uncoded", 20, {}, 0.5, 2.0, id="uncoded-n20"),
    pytest.param("replication", 12, {"r": 3}, 1.0, 1.0, id="rep-12-3"),
    pytest.param("replication", 12, {"r": 12}, 0.0, 0.5, id="rep-12-12"),
    pytest.param("mds", 10, {"k": 1}, 2.0, 1.0, id="mds-10-1"),
    pytest.param("mds", 100, {"k": 69}, 1.0, 1.0, id="mds-100-69"),
    pytest.param("mds", 50, {"k": 50}, 0.1, 10.0, id="mds-50-50"),
]


def _closed_form(scheme, n, params, a, mu):
    if scheme == "uncoded":
        return expected_latency_uncoded(n, a=a, mu=mu)
    if scheme == "replication":
        return expected_latency_replication(n, params["r"], a=a, mu=mu)
    return expected_latency_mds(n, params["k"], a=a, mu=mu)


@pytest.mark.parametrize(("scheme", "n", "params", "a", "mu"), _SIM_CASES)
def test_closed_form_within_5_standard_errors(scheme, n, params, a, mu):
    result = simulate_homogeneous(
        scheme, n, **params, a=a, mu=mu, trials=40_000, rng=20_180_301
    )
    expected = _closed_form(scheme, n, params, a, mu)
    assert result.trials == 40_000
    assert 0.0 < result.stderr < 0.02 * expected
    assert abs(result.mean - expected) < 5.0 * result.stderr
    assert result.quantiles[0.5] < result.quantiles[0.9] < result.quantiles[0.99]


@pytest.mark.slow
def test_large_n_mds_within_5_standard_errors():
    n, a, mu = 2_000, 1.0, 1.0
    k = optimal_k_mds(n, a=a, mu=mu)
    result = simulate_homogeneous("mds", n, k=k, a=a, mu=mu, trials=20_000, rng=7)
    expected = expected_latency_mds(n, k, a=a, mu=mu)
    assert abs(result.mean - expected) < 5.0 * result.stderr


def test_kth_completion_against_simulator():
    n, k, mu, shift = 15, 4, 3.0, 0.25
    result = simulate_homogeneous("mds", n, k=k, a=shift, mu=mu, trials=40_000, rng=3)
    expected = expected_kth_completion(n, k, mu=mu, shift=shift)
    # the MDS latency is the k-th completion of a 1/k share
    assert abs(k * result.mean - expected) < 5.0 * k * result.stderr


def test_simulator_is_seeded():
    def run(seed):
        return simulate_homogeneous(
            "mds", 30, k=20, a=1.0, mu=1.0, trials=500, rng=seed
        )

    assert run(5).mean == run(5).mean
    assert run(5).mean != run(6).mean
    generator = np.random.default_rng(5)
    assert (
        simulate_homogeneous(
            "mds", 30, k=20, a=1.0, mu=1.0, trials=500, rng=generator
        ).mean
        == run(5).mean
    )


def test_simulator_quantiles_match_order_statistic_law():
    # uncoded, n = 1: T = a + X/mu, so the q-quantile is a - log(1 - q)/mu
    result = simulate_homogeneous("uncoded", 1, a=1.0, mu=2.0, trials=200_000, rng=11)
    for q, value in result.quantiles.items():
        assert value == pytest.approx(1.0 - np.log1p(-q) / 2.0, rel=0.02)


# --- input validation ---------------------------------------------------------

SIM = {"a": 1.0, "mu": 1.0, "trials": 10}
_BAD = [
    (
        expected_latency_mds,
        (10, 3),
        {"a": 1.0, "mu": 0.0},
        "`mu` must be > 0.0, got mu=0.0.",
    ),
    (
        expected_latency_mds,
        (10, 3),
        {"a": -1.0, "mu": 1.0},
        "`a` must be >= 0.0, got a=-1.0.",
    ),
    (
        expected_latency_mds,
        (3, 4),
        {"a": 1.0, "mu": 1.0},
        "`k` must satisfy 1 <= k <= n, got k=4, n=3.",
    ),
    (
        expected_latency_uncoded,
        (0,),
        {"a": 1.0, "mu": 1.0},
        "`n` must be >= 1, got n=0.",
    ),
    (
        expected_latency_uncoded,
        (5,),
        {"a": 1.0, "mu": -2.0},
        "`mu` must be > 0.0, got mu=-2.0.",
    ),
    (
        expected_latency_replication,
        (10, 3),
        {"a": 1.0, "mu": 1.0},
        "`r` must divide `n`, got r=3, n=10.",
    ),
    (
        expected_latency_replication,
        (10, 20),
        {"a": 1.0, "mu": 1.0},
        "`r` must be <= 10, got r=20.",
    ),
    (
        expected_latency_replication,
        (10, 0),
        {"a": 1.0, "mu": 1.0},
        "`r` must be >= 1, got r=0.",
    ),
    (
        expected_kth_completion,
        (5, 6),
        {"mu": 1.0, "shift": 0.0},
        "`k` must satisfy 1 <= k <= n, got k=6, n=5.",
    ),
    (
        expected_kth_completion,
        (5, 2),
        {"mu": 1.0, "shift": -0.5},
        "`shift` must be >= 0.0, got shift=-0.5.",
    ),
    (optimal_k_mds, (10,), {"a": -0.1, "mu": 1.0}, "`a` must be >= 0.0, got a=-0.1."),
    (optimal_k_mds, (10,), {"a": 1.0, "mu": 0.0}, "`mu` must be > 0.0, got mu=0.0."),
    (
        optimal_rate_asymptotic,
        (),
        {"a": 1.0, "mu": -1.0},
        "`mu` must be > 0.0, got mu=-1.0.",
    ),
    (
        expected_latency_mds_asymptotic,
        (10,),
        {"a": -3.0, "mu": 1.0},
        "`a` must be >= 0.0, got a=-3.0.",
    ),
    (
        simulate_homogeneous,
        ("lt", 10),
        SIM,
        "`scheme` must be one of ('uncoded', 'replication', 'mds'), got 'lt'.",
    ),
    (
        simulate_homogeneous,
        ("mds", 10),
        SIM,
        "scheme='mds' needs the code dimension `k`.",
    ),
    (
        simulate_homogeneous,
        ("uncoded", 10),
        {**SIM, "k": 3},
        "`k` is only used by scheme='mds', got k=3.",
    ),
    (
        simulate_homogeneous,
        ("mds", 10),
        {**SIM, "r": 2, "k": 3},
        "`r` is only used by scheme='replication', got r=2.",
    ),
    (
        simulate_homogeneous,
        ("replication", 10),
        SIM,
        "scheme='replication' needs the replication factor `r`.",
    ),
    (
        simulate_homogeneous,
        ("replication", 10),
        {**SIM, "r": 4},
        "`r` must divide `n`, got r=4, n=10.",
    ),
    (
        simulate_homogeneous,
        ("mds", 10),
        {**SIM, "k": 11},
        "`k` must satisfy 1 <= k <= n, got k=11, n=10.",
    ),
    (
        simulate_homogeneous,
        ("mds", 10),
        {**SIM, "k": 5, "mu": 0.0},
        "`mu` must be > 0.0, got mu=0.0.",
    ),
    (
        simulate_homogeneous,
        ("mds", 10),
        {**SIM, "k": 5, "a": -1.0},
        "`a` must be >= 0.0, got a=-1.0.",
    ),
    (
        simulate_homogeneous,
        ("mds", 10),
        {**SIM, "k": 5, "trials": 0},
        "`trials` must be >= 1, got trials=0.",
    ),
    (
        simulate_homogeneous,
        ("uncoded", 0),
        SIM,
        "`n` must be >= 1, got n=0.",
    ),
    (
        expected_latency_replication,
        (0, 1),
        {"a": 1.0, "mu": 1.0},
        "`n` must be >= 1, got n=0.",
    ),
    (
        expected_latency_mds_asymptotic,
        (0,),
        {"a": 1.0, "mu": 1.0},
        "`n` must be >= 1, got n=0.",
    ),
    (optimal_k_mds, (0,), {"a": 1.0, "mu": 1.0}, "`n` must be >= 1, got n=0."),
]


@pytest.mark.parametrize(
    ("function", "args", "kwargs", "message"),
    _BAD,
    ids=[f"{case[0].__name__}-{i}" for i, case in enumerate(_BAD)],
)
def test_input_validation(function, args, kwargs, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        function(*args, **kwargs)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: expected_latency_mds(10.0, 3, a=1, mu=1), "`n` must be an integer"),
        (lambda: expected_latency_mds(10, 3, a="1", mu=1), "`a` must be a real number"),
        (lambda: optimal_k_mds(True, a=1, mu=1), "`n` must be an integer"),
    ],
)
def test_type_errors(call, message):
    with pytest.raises(TypeError, match=re.escape(message)):
        call()


def test_names_exported():
    for name in (
        "expected_kth_completion",
        "expected_latency_mds",
        "expected_latency_mds_asymptotic",
        "expected_latency_replication",
        "expected_latency_uncoded",
        "optimal_k_mds",
        "optimal_rate_asymptotic",
        "simulate_homogeneous",
    ):
        assert name in theory.__all__


@pytest.mark.parametrize(
    ("scheme", "params", "reduce", "parts"),
    [
        ("uncoded", {}, lambda x: x.max(axis=1), 6),
        ("mds", {"k": 4}, lambda x: np.sort(x, axis=1)[:, 3], 4),
        # groups of r = 2 consecutive workers: (0, 1), (2, 3), (4, 5)
        (
            "replication",
            {"r": 2},
            lambda x: np.maximum.reduce(
                [x[:, 2 * g : 2 * g + 2].min(axis=1) for g in range(3)]
            ),
            3,
        ),
    ],
)
def test_simulator_reproduces_its_draws(scheme, params, reduce, parts):
    # trials x n standard exponentials from the seeded generator, one row a job
    x = np.random.default_rng(5).standard_exponential((3, 6))
    samples = (0.5 + reduce(x) / 2.0) / parts
    result = simulate_homogeneous(scheme, 6, a=0.5, mu=2.0, trials=3, rng=5, **params)
    assert result.trials == 3
    assert result.mean == pytest.approx(samples.mean(), rel=1e-15)
    one = simulate_homogeneous(scheme, 6, a=0.5, mu=2.0, trials=1, rng=5, **params)
    assert one.mean == pytest.approx(samples[0], rel=1e-15)
