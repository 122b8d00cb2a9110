"""The per-task overhead model (docs/theory/overhead.md): closed forms against
independent numerical solves and Monte Carlo."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize

from theory import (
    GroupProfile,
    WorkerProfile,
    bpcc_optimum,
    expected_allocation_latency,
    expected_rows,
    hcmm_latency,
    hcmm_loads,
    kim_bound,
    simulate_latency,
    waterfill_time,
)

TWO = {"N": [5, 5], "a": [1.0, 2.0], "mu": [4.0, 1.0]}
THREE = {"N": [20, 30, 50], "a": [1.0, 1.0, 1.0], "mu": [4.0, 2.0, 1.0]}


@st.composite
def overhead_profiles(draw, max_n=5):
    n = draw(st.integers(1, max_n))
    a = draw(st.lists(st.floats(0.05, 3.0), min_size=n, max_size=n))
    mu = draw(st.lists(st.floats(0.1, 20.0), min_size=n, max_size=n))
    c = draw(st.lists(st.floats(0.0, 50.0), min_size=n, max_size=n))
    return WorkerProfile(a=a, mu=mu, c=c)


def test_zero_overhead_reproduces_the_papers_values():
    for c in (None, 0.0):
        extra = {} if c is None else {"c": c}
        two = GroupProfile(**TWO, **extra)
        three = GroupProfile(**THREE, **extra)
        assert round(hcmm_latency(two, 1000.0), 2) == 250.44
        assert round(kim_bound(three, 1000.0).latency, 3) == 24.156
        assert round(kim_bound(three, 1000.0, exact=False).latency, 3) == 24.544
        assert round(bpcc_optimum(three, 1000.0, batches=8).latency, 2) == 16.04


def test_equal_overhead_shifts_every_closed_form_by_c():
    for c in (0.5, 10.0):
        two = GroupProfile(**TWO, c=c)
        three = GroupProfile(**THREE, c=c)
        base_two, base_three = GroupProfile(**TWO), GroupProfile(**THREE)
        assert hcmm_latency(two, 1e3) == pytest.approx(hcmm_latency(base_two, 1e3) + c)
        assert kim_bound(three, 1e3).latency == pytest.approx(
            kim_bound(base_three, 1e3).latency + c
        )
        # one batch pays c once: BPCC with b = 1 is HCMM with the overhead
        assert bpcc_optimum(three, 1e3, batches=1).latency == pytest.approx(
            hcmm_latency(three, 1e3), rel=1e-9
        )


@given(
    rates=st.lists(st.floats(0.01, 100.0), min_size=1, max_size=8),
    data=st.data(),
    m=st.floats(0.1, 1e4),
)
def test_waterfill_time_solves_its_equation(rates, data, m):
    c = data.draw(
        st.lists(st.floats(0.0, 1e3), min_size=len(rates), max_size=len(rates))
    )
    t = waterfill_time(rates, c, m)
    total = np.sum(np.asarray(rates) * np.maximum(t - np.asarray(c), 0.0))
    assert total == pytest.approx(m, rel=1e-9)


def _numerical_hcmm(profile, m):
    """max_l l P[c + l(a + X/mu) <= t] per worker by bounded search; root in t."""

    def best(t):
        total = 0.0
        for a, mu, c in zip(profile.a, profile.mu, profile.c, strict=True):
            if t <= c:
                continue
            s = t - c

            def minus(load, a=a, mu=mu, s=s):
                return -load * -np.expm1(-mu * max(s / load - a, 0.0))

            found = optimize.minimize_scalar(
                minus,
                bounds=(1e-9 * s / a, s / a),
                method="bounded",
                options={"xatol": 1e-12 * s / a},
            )
            total += -found.fun
        return total

    hi = 1.0
    while best(hi) < m:
        hi *= 2.0
    return optimize.brentq(lambda t: best(t) - m, 0.0, hi, rtol=1e-12)


@settings(max_examples=25)
@given(profile=overhead_profiles(), m=st.floats(1.0, 1e3))
def test_hcmm_with_overhead_matches_a_numerical_optimisation(profile, m):
    assert hcmm_latency(profile, m) == pytest.approx(
        _numerical_hcmm(profile, m), rel=1e-6
    )


def test_hcmm_with_overhead_expected_rows_match_monte_carlo():
    profile = GroupProfile(**TWO, c=[10.0, 30.0]).to_workers()
    tau, loads = hcmm_latency(profile, 1000.0), hcmm_loads(profile, 1000.0)
    assert float(expected_rows(profile, loads, tau)) == pytest.approx(1000.0)
    # independent Monte Carlo of S(tau): rows of the workers done by tau
    X = np.random.default_rng(3).standard_exponential((200_000, profile.n))
    done = profile.c + loads * (profile.a + X / profile.mu) <= tau
    rows = (done * loads).sum(axis=1)
    assert abs(rows.mean() - 1000.0) < 4 * rows.std() / np.sqrt(rows.size)


@pytest.mark.parametrize("batches", [1, 3])
def test_exact_latency_with_overhead_matches_the_simulator(batches):
    profile = WorkerProfile(
        a=[1.0, 1.0, 2.0, 2.0], mu=[4.0, 4.0, 1.0, 1.0], c=[3.0, 3.0, 8.0, 0.0]
    )
    loads = [12, 12, 6, 6]
    exact = expected_allocation_latency(profile, loads, m=20, batches=batches)
    sim = simulate_latency(profile, loads, m=20, batches=batches, trials=40_000, rng=4)
    assert abs(sim.mean - exact) < 4 * sim.stderr
    # c enters: without it the latency is smaller
    zero = WorkerProfile(a=profile.a, mu=profile.mu)
    assert exact > expected_allocation_latency(zero, loads, m=20, batches=batches)


def test_kim_with_overhead_equalises_the_bound_and_beats_perturbations():
    groups = GroupProfile(N=[2, 3], a=[1.0, 2.0], mu=[4.0, 1.0], c=[5.0, 1.0])
    bound = kim_bound(groups, 100.0)
    k = bound.k.astype(int)

    def cost(j, kj):
        N = int(groups.N[j])
        tail = np.sum(1.0 / np.arange(N - kj + 1, N + 1))
        return groups.a[j] + tail / groups.mu[j]

    finish = [groups.c[j] + bound.loads[j] * cost(j, k[j]) for j in range(2)]
    np.testing.assert_allclose(finish, bound.latency, rtol=1e-12)
    assert np.dot(k, bound.loads) == pytest.approx(100.0)
    # no other (k, l) with sum k_j l_j >= m has a smaller max_j bound
    for k1, k2 in itertools.product(range(1, 3), range(1, 4)):
        for share in np.linspace(0.01, 0.99, 99):
            l1, l2 = share * 100.0 / k1, (1 - share) * 100.0 / k2
            worst = max(groups.c[0] + l1 * cost(0, k1), groups.c[1] + l2 * cost(1, k2))
            assert worst >= bound.latency * (1 - 1e-12)


def test_bpcc_batch_choice_minimises_tau_over_all_count_vectors():
    profile = WorkerProfile(a=[0.2, 1.0], mu=[5.0, 0.5], c=[0.3, 0.1])
    choices = (1, 2, 3, 4)
    chosen = bpcc_optimum(profile, 30.0, batches=None, batch_choices=choices)
    brute = min(
        bpcc_optimum(profile, 30.0, batches=np.array(vector)).latency
        for vector in itertools.product(choices, repeat=2)
    )
    assert chosen.latency == pytest.approx(brute, rel=1e-9)
    # the per-batch cost bounds the useful count: b_i <= tau / c_i
    assert np.all(chosen.batches <= np.maximum(chosen.latency / profile.c, 1))
