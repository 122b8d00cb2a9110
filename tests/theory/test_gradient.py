"""Step times of gradient coding: closed forms = exact integral = simulator."""

import itertools
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from theory import (
    WorkerProfile,
    expected_gradient_step_time,
    expected_order_statistics,
    gradient_loads,
    simulate_gradient_step_time,
)
from theory._gradient import GRADIENT_SCHEMES, _circular_cover


def H(k):
    return sum(1.0 / i for i in range(1, k + 1))


@given(
    n=st.integers(1, 9),
    data=st.data(),
    a=st.floats(0.0, 2.0),
    mu=st.floats(0.2, 5.0),
    rows=st.floats(0.5, 20.0),
)
def test_homogeneous_closed_forms(n, data, a, mu, rows):
    s = data.draw(st.integers(0, n - 1), label="s")
    p = WorkerProfile.homogeneous(n, a=a, mu=mu)
    l_coded, l_one = (s + 1) * rows / n, rows / n

    def exact(scheme):
        return expected_gradient_step_time(p, s, scheme=scheme, rows=rows)

    assert exact("coded") == pytest.approx(l_coded * (a + (H(n) - H(s)) / mu), 1e-8)
    assert exact("uncoded") == pytest.approx(l_one * (a + H(n) / mu), rel=1e-8)
    assert exact("ignore") == pytest.approx(l_one * (a + (H(n) - H(s)) / mu), 1e-8)
    if n % (s + 1) == 0:
        groups = n // (s + 1)
        expected = l_coded * (a + H(groups) / ((s + 1) * mu))
        assert exact("fractional") == pytest.approx(expected, rel=1e-8)
    # replication waits for a cover, which any n - s finished workers are;
    # partial returns only make each partition's copy arrive earlier
    assert exact("replication") <= exact("coded") * (1 + 1e-9)
    assert exact("partial") <= exact("replication") * (1 + 1e-9)


@pytest.mark.parametrize(("n", "s"), [(4, 0), (5, 1), (6, 2), (7, 3), (6, 5)])
def test_circular_cover_probability_matches_enumeration(n, s):
    p = np.random.default_rng(n * 10 + s).random(n)
    total = 0.0
    for finished in itertools.product([False, True], repeat=n):
        weight = np.prod(np.where(finished, p, 1 - p))
        covered = all(
            any(finished[(j - k) % n] for k in range(s + 1)) for j in range(n)
        )
        total += weight * covered
    assert _circular_cover(p[None, :], s)[0] == pytest.approx(total, abs=1e-14)


def _two_slow(n=8):
    return WorkerProfile(a=[0.2] * n, mu=[1.0] * (n - 2) + [0.2] * 2)


@pytest.mark.parametrize("scheme", GRADIENT_SCHEMES)
@pytest.mark.parametrize("profile", ["homogeneous", "two-slow"])
def test_simulator_agrees_with_the_exact_expectation(scheme, profile):
    n, s = (8, 1) if scheme == "fractional" else (8, 2)
    p = (
        WorkerProfile.homogeneous(n, a=0.2, mu=1.0)
        if profile == "homogeneous"
        else (_two_slow(n))
    )
    exact = expected_gradient_step_time(p, s, scheme=scheme, rows=8.0)
    simulated = simulate_gradient_step_time(
        p, s, scheme=scheme, rows=8.0, trials=40_000, rng=7
    )
    assert abs(simulated.mean - exact) <= 5 * simulated.stderr


def test_heterogeneous_coded_is_the_order_statistic():
    p = _two_slow()
    order = expected_order_statistics(p)
    coded = expected_gradient_step_time(p, 2, scheme="coded", rows=8.0)
    assert coded == pytest.approx(3.0 * order[8 - 2 - 1], rel=1e-8)
    uncoded = expected_gradient_step_time(p, 2, scheme="uncoded", rows=8.0)
    assert uncoded == pytest.approx(order[-1], rel=1e-8)


def test_loads():
    assert gradient_loads(8, 2, "replication", rows=80.0).tolist() == [30.0] * 8
    assert gradient_loads(8, 2, "ignore", rows=80.0).tolist() == [10.0] * 8
    assert gradient_loads(8, 2, "partial", rows=80.0).tolist() == [30.0] * 8


def test_partial_cover_with_all_or_nothing_returns_is_replication():
    # s = 0: one partition a worker, partial returns change nothing
    p = WorkerProfile(a=[0.5, 1.0, 0.2, 0.7], mu=[1.0, 2.0, 0.5, 3.0])
    assert expected_gradient_step_time(p, 0, scheme="partial") == pytest.approx(
        expected_gradient_step_time(p, 0, scheme="uncoded"), rel=1e-9
    )


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"s": 4}, ValueError, "0 <= s < n"),
        ({"s": 1, "scheme": "mds"}, ValueError, "`scheme` must be one of"),
        ({"s": 2, "scheme": "fractional"}, ValueError, "s \\+ 1 to divide n"),
        ({"s": 1, "rows": 0.0}, ValueError, "`rows` must be > 0"),
    ],
)
def test_bad_input(kwargs, error, match):
    p = WorkerProfile.homogeneous(4, a=1.0, mu=1.0)
    with pytest.raises(error, match=match):
        expected_gradient_step_time(p, **kwargs)
    with pytest.raises(TypeError, match="WorkerProfile"):
        expected_gradient_step_time("p", 1)


def test_nearly_deterministic_workers_by_hand():
    # mu = 1e12: T_i = l_i a_i; n = 3, s = 1, m = 3 rows: l = 2 (1 uncoded)
    p = WorkerProfile(a=[1.0, 4.0, 2.0], mu=[1e12] * 3)  # T = (2, 8, 4)
    expected = {
        # each partition's first finished holder: (2, 2, 4)
        "replication": 4.0,
        # worker h does h then h + 1, T_h / 2 each: partitions ready at
        # min(1, 4), min(4, 2), min(2, 8)
        "partial": 2.0,
        "coded": 4.0,  # second of (2, 4, 8)
        "uncoded": 4.0,  # last of (1, 4, 2)
    }
    for scheme, value in expected.items():
        exact = expected_gradient_step_time(p, 1, scheme=scheme, rows=3.0)
        assert exact == pytest.approx(value, rel=1e-9), scheme
        simulated = simulate_gradient_step_time(
            p, 1, scheme=scheme, rows=3.0, trials=3, rng=0
        )
        assert simulated.mean == pytest.approx(value, rel=1e-9), scheme


def test_fast_workers_with_no_shift():
    # a = 0, mu = 1e6: the whole mass lies below 1e-5; coded l (H_5 - H_2) / mu
    p = WorkerProfile.homogeneous(5, a=0.0, mu=1e6)
    exact = expected_gradient_step_time(p, 2, rows=5.0)
    assert exact == pytest.approx(3.0 * (H(5) - H(2)) / 1e6, rel=1e-9, abs=0.0)


def test_defaults_are_coded_and_one_row():
    p = WorkerProfile.homogeneous(4, a=1.0, mu=1.0)
    # l = 2/4, coded: l (a + H_4 - H_1) = (1 + 13/12) / 2
    assert expected_gradient_step_time(p, 1) == pytest.approx(25 / 24, rel=1e-9)
    assert gradient_loads(4, 1, "coded").tolist() == [0.5] * 4
    default = simulate_gradient_step_time(p, 1, rng=3)
    explicit = simulate_gradient_step_time(
        p, 1, scheme="coded", rows=1.0, trials=10_000, rng=3
    )
    assert default.trials == 10_000
    assert default.mean == explicit.mean
    assert dict(default.quantiles) == dict(explicit.quantiles)


def test_simulation_follows_its_seed_and_quantiles():
    p = _two_slow()
    first = simulate_gradient_step_time(p, 2, trials=50, rng=11, quantiles=(0.25,))
    again = simulate_gradient_step_time(
        p, 2, trials=50, rng=np.random.default_rng(11), quantiles=(0.25,)
    )
    other = simulate_gradient_step_time(p, 2, trials=50, rng=12)
    assert first.mean == again.mean != other.mean
    assert list(first.quantiles) == [0.25]
    # one trial is the least valid count
    assert simulate_gradient_step_time(p, 2, trials=1, rng=0).trials == 1


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda: expected_gradient_step_time("p", 1),
            TypeError,
            "`profile` must be a theory.WorkerProfile, got str.",
        ),
        (
            lambda: expected_gradient_step_time(_two_slow(), -1),
            ValueError,
            "`s` must be >= 0, got s=-1.",
        ),
        (
            lambda: simulate_gradient_step_time(_two_slow(), 1, trials=0),
            ValueError,
            "`trials` must be >= 1, got trials=0.",
        ),
    ],
)
def test_messages(call, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        call()
