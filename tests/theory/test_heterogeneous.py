"""HCMM, Kim et al. and BPCC (docs/theory/allocation.md) against independent solves."""

import itertools
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import optimize
from scipy.special import lambertw

from theory import (
    BPCCOptimum,
    GroupProfile,
    KimBound,
    WorkerProfile,
    best_loads_at,
    bpcc_optimum,
    bpcc_tau,
    expected_rows,
    hcmm_lambda,
    hcmm_latency,
    hcmm_loads,
    kim_bound,
    physical_limit_bound,
    waterfill_time,
)

THREE_GROUPS = GroupProfile(N=[20, 30, 50], a=[1, 1, 1], mu=[4, 2, 1])


def as_given(value, text):
    """Round `value` to the decimals of check value `text` (docs/theory/)."""
    decimals = len(text.split(".")[1]) if "." in text else 0
    return f"{value:.{decimals}f}"


@st.composite
def profiles(draw, max_n=6, min_n=1):
    n = draw(st.integers(min_n, max_n))
    a = draw(st.lists(st.floats(0.05, 3.0), min_size=n, max_size=n))
    mu = draw(st.lists(st.floats(0.1, 20.0), min_size=n, max_size=n))
    return WorkerProfile(a=a, mu=mu)


# ---------------------------------------------------------------- HCMM


@pytest.mark.parametrize("n", [10, 100, 1000])
def test_hcmm_check_value(n):
    g = GroupProfile(N=[n // 2, n // 2], a=[1, 2], mu=[4, 1])
    assert round(hcmm_latency(g, 100 * n), 2) == 250.44


@given(profile=profiles())
def test_hcmm_lambda_solves_its_equation_brentq(profile):
    lam = hcmm_lambda(profile)
    for a, mu, value in zip(profile.a, profile.mu, lam, strict=True):
        # e^{mu (lam - a)} = 1 + mu lam, written in logs for a stable root.
        def f(x, a=a, mu=mu):
            return mu * (x - a) - np.log1p(mu * x)

        hi = a + 1.0
        while f(hi) <= 0:
            hi *= 2
        root = optimize.brentq(f, a + 1e-15, hi, xtol=1e-15, rtol=1e-13)
        assert value == pytest.approx(root, rel=1e-9)
        assert value > a


@given(profile=profiles())
def test_hcmm_tau_against_bounded_maximisation(profile):
    m = 1000.0
    best = 0.0
    for a, mu in zip(profile.a, profile.mu, strict=True):
        res = optimize.minimize_scalar(
            lambda u, a=a, mu=mu: -u * -np.expm1(-mu * (1.0 / u - a)),
            bounds=(1e-12, 1.0 / a),
            method="bounded",
            options={"xatol": 1e-12},
        )
        best += -res.fun
    assert hcmm_latency(profile, m) == pytest.approx(m / best, rel=1e-7)
    loads = hcmm_loads(profile, m)
    assert float(expected_rows(profile, loads, hcmm_latency(profile, m))) == (
        pytest.approx(m, rel=1e-10)
    )


# ---------------------------------------------------------------- Kim et al.


@pytest.mark.parametrize("s", [1, 10, 100])
def test_kim_large_n_check_values(s):
    bound = kim_bound(THREE_GROUPS.scaled(s), 1000 * s, exact=False)
    assert as_given(bound.latency, "24.544") == "24.544"
    assert [as_given(x, "0.00") for x in bound.loads] == ["16.54", "14.00", "11.44"]


def test_kim_finite_n_approaches_large_n():
    large = kim_bound(THREE_GROUPS, 1000, exact=False)
    gaps = [
        abs(kim_bound(THREE_GROUPS.scaled(s), 1000 * s).latency - large.latency)
        for s in (1, 10, 100)
    ]
    assert gaps[0] > gaps[1] > gaps[2]
    assert gaps[2] / large.latency < 2e-3


@pytest.mark.parametrize(
    ("N", "a", "mu"),
    [([2, 3, 4], [1.0, 0.5, 2.0], [4.0, 1.0, 0.5]), ([5, 1], [0.0, 1.0], [1.0, 9.0])],
)
def test_kim_exact_against_brute_force_over_k(N, a, mu):
    g = GroupProfile(N=N, a=a, mu=mu)
    m = 100.0
    best = np.inf
    for ks in itertools.product(*(range(1, n + 1) for n in N)):
        cost = [
            aj + sum(1.0 / i for i in range(nj - kj + 1, nj + 1)) / muj
            for nj, kj, aj, muj in zip(N, ks, a, mu, strict=True)
        ]
        # LP in (l_1..l_G, T): min T s.t. l_j c_j <= T, sum_j k_j l_j >= m.
        G = len(N)
        A = np.zeros((G + 1, G + 1))
        for j in range(G):
            A[j, j], A[j, G] = cost[j], -1.0
        A[G, :G] = -np.array(ks)
        res = optimize.linprog(
            np.eye(G + 1)[G], A_ub=A, b_ub=np.r_[np.zeros(G), -m], method="highs"
        )
        best = min(best, res.fun)
    assert kim_bound(g, m).latency == pytest.approx(best, rel=1e-9)


@given(profile=profiles(max_n=4))
def test_kim_large_n_loads_are_hcmm_loads(profile):
    groups = profile.to_groups()
    bound = kim_bound(groups, 500.0, exact=False)
    assert bound.latency == pytest.approx(hcmm_latency(profile, 500.0), rel=1e-12)
    expanded = np.repeat(bound.loads, groups.N.astype(int))
    np.testing.assert_allclose(expanded, hcmm_loads(groups, 500.0), rtol=1e-12)


@given(profile=profiles(max_n=3))
def test_kim_finite_n_loads_approach_hcmm(profile):
    groups = profile.to_groups()
    hcmm = hcmm_loads(groups.to_workers(), 1.0)[np.cumsum(groups.N.astype(int)) - 1]
    errors = [
        np.max(np.abs(kim_bound(groups.scaled(s), s).loads / hcmm - 1.0))
        for s in (1, 1000)
    ]
    assert errors[1] <= errors[0] + 1e-12
    assert errors[1] < 0.02


# ---------------------------------------------------------------- BPCC


@pytest.mark.parametrize(
    ("b", "expected"),
    [
        (1, "24.544"),
        (2, "19.85"),
        (4, "17.34"),
        (8, "16.04"),
        (16, "15.38"),
        (32, "15.04"),
    ],
)
def test_bpcc_check_values(b, expected):
    tau = bpcc_optimum(THREE_GROUPS, 1000.0, batches=b, l_max=np.inf).latency
    assert as_given(tau, expected) == expected


def test_bpcc_approaches_the_large_n_physical_limit():
    limit = physical_limit_bound(THREE_GROUPS, 1000.0)
    assert round(limit, 3) == 14.705
    taus = [
        bpcc_optimum(THREE_GROUPS, 1000.0, batches=b, l_max=np.inf).latency
        for b in (1, 4, 16, 64, 256)
    ]
    assert all(x > y for x, y in itertools.pairwise(taus))
    assert limit < taus[-1] < 1.003 * limit


def _g(u, a, mu, b):
    j = np.arange(1, b + 1)
    return u / b * np.sum(-np.expm1(-mu * np.maximum(b / (j * u) - a, 0.0)))


@pytest.mark.parametrize("b", [2, 5])
def test_bpcc_u_star_against_bounded_maximisation(b):
    profile = WorkerProfile(a=[1.0, 0.3, 2.0], mu=[4.0, 0.5, 10.0])
    m = 1000.0
    total = 0.0
    for a, mu in zip(profile.a, profile.mu, strict=True):
        grid = np.linspace(1e-6, 1.0 / a, 20001)
        values = np.array([_g(u, a, mu, b) for u in grid])
        k = int(np.argmax(values))
        res = optimize.minimize_scalar(
            lambda u, a=a, mu=mu: -_g(u, a, mu, b),
            bounds=(grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]),
            method="bounded",
            options={"xatol": 1e-13},
        )
        total += -res.fun
    opt = bpcc_optimum(profile, m, batches=b, l_max=np.inf)
    assert opt.latency == pytest.approx(m / total, rel=1e-9)


def test_bpcc_with_overhead_is_a_per_worker_optimum():
    profile = WorkerProfile(a=[1.0, 0.5], mu=[2.0, 0.5])
    c = np.array([0.3, 1.0])
    opt = bpcc_optimum(profile, 50.0, batches=[4, 3], overhead=c)
    tau = opt.latency
    assert float(
        expected_rows(profile, opt.loads, tau, batches=[4, 3], overhead=c)
    ) == pytest.approx(50.0, rel=1e-9)
    grid = np.linspace(1e-3, 50.0, 50001)
    for i, b in enumerate((4, 3)):
        clones = WorkerProfile(
            a=np.full(grid.size, profile.a[i]), mu=np.full(grid.size, profile.mu[i])
        )
        rows = expected_rows(
            clones, grid, tau, batches=b, overhead=c[i], per_worker=True
        )
        single = WorkerProfile(a=[profile.a[i]], mu=[profile.mu[i]])
        best = float(
            expected_rows(single, [opt.loads[i]], tau, batches=b, overhead=c[i])
        )
        assert best >= rows.max() - 1e-9


def test_bpcc_overhead_makes_batch_search_interior():
    opt = bpcc_optimum(THREE_GROUPS, 1000.0, batches=None, overhead=1.0)
    assert opt.batches.min() > 1
    assert opt.batches.max() < 64
    fixed = [
        bpcc_optimum(THREE_GROUPS, 1000.0, batches=b, overhead=1.0).latency
        for b in (1, 2, 4, 8, 16, 32, 64)
    ]
    assert opt.latency <= min(fixed) * (1 + 1e-9)


@given(profile=profiles(min_n=2))
def test_bpcc_with_one_batch_is_hcmm(profile):
    opt = bpcc_optimum(profile, 300.0, batches=1, l_max=np.inf)
    assert opt.latency == pytest.approx(hcmm_latency(profile, 300.0), rel=1e-9)
    np.testing.assert_allclose(opt.loads, hcmm_loads(profile, 300.0), rtol=1e-6)


@given(profile=profiles(min_n=2, max_n=3), b=st.integers(1, 4))
def test_bpcc_tau_inverts_expected_rows(profile, b):
    opt = bpcc_optimum(profile, 100.0, batches=b)
    assert np.all(opt.loads <= 100.0 * (1 + 1e-12))
    tau = bpcc_tau(profile, opt.loads, m=100.0, batches=opt.batches)
    assert tau == pytest.approx(opt.latency, rel=1e-8)


def test_expected_rows_against_monte_carlo():
    profile = WorkerProfile(a=[1.0, 0.5], mu=[2.0, 0.5])
    loads, b, c, t = np.array([6.0, 4.0]), np.array([3, 2]), np.array([0.2, 0.0]), 5.0
    X = np.random.default_rng(20260).standard_exponential((200_000, 2))
    period = loads / b * (profile.a + X / profile.mu) + c
    rows = sum(
        loads[i] / b[i] * np.minimum(b[i], np.floor(t / period[:, i])) for i in range(2)
    )
    expected = float(expected_rows(profile, loads, t, batches=b, overhead=c))
    assert abs(rows.mean() - expected) < 5 * rows.std() / np.sqrt(rows.size)


BAD = [
    (
        lambda: hcmm_lambda(WorkerProfile(a=[0.0], mu=[1.0])),
        ValueError,
        "HCMM needs every shift `a` > 0 (with a = 0 the optimal load is unbounded; "
        "cap it with `l_max`), got a=[0.0].",
    ),
    (
        lambda: hcmm_latency(THREE_GROUPS, 0.0),
        ValueError,
        "`m` must be > 0.0, got m=0.0.",
    ),
    (
        lambda: hcmm_latency([1, 2], 1.0),
        TypeError,
        "`profile` must be a WorkerProfile or GroupProfile, got list.",
    ),
    (
        lambda: kim_bound(GroupProfile(N=[2], a=[0.0], mu=[1.0]), 5.0, exact=False),
        ValueError,
        "Kim et al.'s large-N form needs every shift `a` > 0 (with a = 0 the optimal "
        "load is unbounded; cap it with `l_max`), got a=[0.0].",
    ),
    (
        lambda: kim_bound("x", 5.0),
        TypeError,
        "`groups` must be a GroupProfile, got str.",
    ),
    (
        lambda: bpcc_optimum(WorkerProfile(a=[1.0, 1.0], mu=[1, 1]), 5.0, batches=0),
        ValueError,
        "`batches` entries must be >= 1, got [0, 0].",
    ),
    (
        lambda: bpcc_optimum(THREE_GROUPS, 1000.0, batches=1.5),
        TypeError,
        "`batches` must hold integers, got dtype float64.",
    ),
    (
        lambda: bpcc_optimum(THREE_GROUPS, 1000.0, overhead=-1.0),
        ValueError,
        "`overhead` entries must be >= 0.0, got [-1.0].",
    ),
    (
        lambda: bpcc_optimum(THREE_GROUPS, 1000.0, l_max=10.0),
        ValueError,
        "`l_max` is too small: the expected rows reach m=1000 only if sum(l_max) "
        "> m, got sum(l_max)=1000.",
    ),
    (
        lambda: bpcc_optimum(THREE_GROUPS, 1000.0, l_max=-1.0),
        ValueError,
        "`l_max` entries must be > 0, got [-1.0].",
    ),
    (
        lambda: bpcc_optimum(
            WorkerProfile(a=[0.0, 1.0], mu=[1.0, 1.0]), 5.0, l_max=np.inf
        ),
        ValueError,
        "a worker with a = 0 takes unbounded load; set a finite `l_max`, got "
        "a=[0.0, 1.0].",
    ),
    (
        lambda: bpcc_tau(THREE_GROUPS, np.full(100, 10.0), m=1000.0),
        ValueError,
        "`loads` must hold more than m=1000 rows for E[S] to reach m, got "
        "sum(loads)=1000.",
    ),
    (
        lambda: expected_rows(THREE_GROUPS, np.ones(99), 1.0),
        ValueError,
        "`loads` must have length 100, got 99.",
    ),
    (
        lambda: expected_rows(THREE_GROUPS, np.ones(100), -1.0),
        ValueError,
        "`t` must be finite and >= 0, got -1.0.",
    ),
]


@pytest.mark.parametrize(("call", "error", "message"), BAD)
def test_input_validation(call, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        call()


def _rows_by_definition(load, t, a, mu, b, c):
    """v sum_j P[j v (a + X/mu) + j c <= t], v = load / b (vectorised over load)."""
    v = np.asarray(load, dtype=float)[:, None] / b
    j = np.arange(1, b + 1)
    slack = mu * ((t / j - c) / v - a)
    return (v * -np.expm1(-np.maximum(slack, 0.0))).sum(axis=1)


def test_best_loads_at_one_batch_is_hcmm_load():
    # b = 1, c = 0: l (1 - e^{-mu (t/l - a)}) peaks at HCMM's l = t / lambda
    p = WorkerProfile(a=[1.0, 0.5, 2.0], mu=[4.0, 1.0, 0.3])
    loads = best_loads_at(p, 7.0, batches=1)
    np.testing.assert_allclose(loads, 7.0 / hcmm_lambda(p), rtol=1e-7)
    # a cap below the optimum binds (the objective is unimodal); a scalar cap too
    capped = best_loads_at(p, 7.0, batches=1, l_max=[2.0, 100.0, 1.0])
    np.testing.assert_allclose(capped, [2.0, loads[1], 1.0], rtol=1e-7)
    np.testing.assert_allclose(
        best_loads_at(p, 7.0, batches=[1, 1, 1], l_max=2.0),
        np.minimum(loads, 2.0),
        rtol=1e-7,
    )


@pytest.mark.parametrize("b", [1, 3])
def test_best_loads_at_beats_a_dense_grid(b):
    p = WorkerProfile(a=[1.0, 0.5, 2.0], mu=[4.0, 1.0, 0.3], c=[0.2, 0.0, 0.5])
    t = 7.0
    loads = best_loads_at(p, t, batches=b)
    for i in range(3):
        a, mu, c = p.a[i], p.mu[i], p.c[i]
        grid = np.linspace(1e-6, b * t / a, 100_001)  # beyond b t / a nothing ends
        values = _rows_by_definition(grid, t, a, mu, b, c)
        best = _rows_by_definition([loads[i]], t, a, mu, b, c)[0]
        assert best >= values.max() * (1 - 1e-12)
        assert best <= values.max() * (1 + 1e-6)  # the grid comes within 1e-6
        assert loads[i] == pytest.approx(grid[np.argmax(values)], rel=1e-3)


# nearly deterministic workers (large mu) with an overhead c: the expected rows
# by t are a saw-tooth in the load (a tooth where each batch stops finishing),
# so a search on the wrong piece of it, or one that leaves its piece, lands on a
# lower tooth; caps cut a tooth (2.2) or a piece's middle (9.0)
SHARP = WorkerProfile(a=[0.5, 2.0, 1.0], mu=[200.0, 60.0, 500.0], c=[0.3, 0.1, 0.45])


@pytest.mark.parametrize(
    ("b", "l_max"), [(3, None), (4, None), (4, [2.2, 9.0, 12.0]), (2, [30.0, 2.2, 9.0])]
)
def test_best_loads_at_finds_the_top_tooth_of_a_dense_grid(b, l_max):
    t = 7.0
    loads = best_loads_at(SHARP, t, batches=b, l_max=l_max)
    caps = np.full(3, np.inf) if l_max is None else np.asarray(l_max)
    for i in range(3):
        a, mu, c = SHARP.a[i], SHARP.mu[i], SHARP.c[i]
        grid = np.linspace(1e-6, min(caps[i], b * t / a), 200_001)
        values = _rows_by_definition(grid, t, a, mu, b, c)
        best = _rows_by_definition([loads[i]], t, a, mu, b, c)[0]
        # within the golden-section search's tolerance (0.618^50 of a piece)
        assert best >= values.max() * (1 - 1e-10)
        assert best <= values.max() * (1 + 1e-4)  # the grid comes within that
        assert loads[i] <= caps[i]
        assert loads[i] == pytest.approx(grid[np.argmax(values)], rel=1e-3)


@pytest.mark.parametrize(
    ("a", "mu", "c", "b", "t", "l_max"),
    [
        # the maximum where all 3 batches can end (v = l/b < (t/3 - c)/a), a
        # lower one past that end: each piece (batches 1..k can end) is searched
        # alone, up to its own end
        (0.3, 3.5, 0.43, 3, 5.5, None),
        # the cap binds where batches 1..3 of 6 can end: that piece's lower end,
        # (t/4 - c)/a, must be exact
        (0.25, 0.2, 2.1, 6, 8.6, 2.0),
        # the cap binds where batch 1 of 4 alone can end; a lower maximum where 2
        # can
        (3.0, 0.75, 2.3, 4, 6.2, 1.8),
    ],
)
def test_best_loads_at_against_a_dense_grid_per_piece(a, mu, c, b, t, l_max):
    p = WorkerProfile(a=[a], mu=[mu], c=[c])
    load = best_loads_at(p, t, batches=b, l_max=l_max)[0]
    grid = np.linspace(1e-6, min(l_max or np.inf, b * t / a), 200_001)
    values = _rows_by_definition(grid, t, a, mu, b, c)
    best = _rows_by_definition([load], t, a, mu, b, c)[0]
    assert best >= values.max() * (1 - 1e-10)
    assert load == pytest.approx(grid[np.argmax(values)], rel=1e-3)


def test_best_loads_at_is_zero_where_nothing_can_finish():
    # the first batch alone costs c > t (a > 0: no piece; a = 0: a flat 0)
    p = WorkerProfile(a=[1.0, 0.0, 1.0], mu=[2.0, 2.0, 2.0], c=[3.0, 3.0, 0.5])
    loads = best_loads_at(p, 2.0, batches=[1, 2, 1], l_max=5.0)
    assert loads[:2].tolist() == [0.0, 0.0]
    assert loads[2] > 0.0


def test_best_loads_at_of_a_zero_shift_takes_the_cap_without_warnings():
    # a = 0: rows v sum_j (1 - exp(-mu (t/j - c)/v)) grow with v = l/b, so the cap
    # is the maximiser; t/2 = c exactly (batch 2 ends at t) must raise no 0/0
    # warning (the suite turns warnings into errors)
    p = WorkerProfile(a=[0.0], mu=[1.5], c=[1.0])
    loads = best_loads_at(p, 2.0, batches=2, l_max=6.0)
    grid = np.linspace(1e-3, 6.0, 6001)
    values = _rows_by_definition(grid, 2.0, 0.0, 1.5, 2, 1.0)
    assert np.argmax(values) == grid.size - 1
    assert loads[0] == pytest.approx(6.0, rel=1e-9)


PAIR = WorkerProfile(a=[0.1, 1.0], mu=[1.0, 2.0])


@pytest.mark.parametrize("c1", [40.0, 30.0])
def test_kim_large_n_form_against_scipy_lambertw(c1):
    # u_j = -1 - W_{-1}(-e^{-(1 + mu_j a_j)}); group j returns N_j mu_j / (1 + u_j)
    # rows a second once its overhead c_j has passed
    g = GroupProfile(N=[5, 3], a=[1.0, 2.0], mu=[4.0, 1.0], c=[0.0, c1])
    u = -1.0 - lambertw(-np.exp(-(1.0 + g.mu * g.a)), k=-1).real
    rate = g.N * g.mu / (1.0 + u)
    alone = 100.0 / rate[0]  # 34.68: below c1 = 40, above c1 = 30
    latency = alone if alone <= c1 else (100.0 + rate[1] * c1) / rate.sum()
    bound = kim_bound(g, 100.0, exact=False)
    assert bound.latency == pytest.approx(latency, rel=1e-12)
    loads = np.maximum(latency - g.c, 0.0) * g.mu / u
    np.testing.assert_allclose(bound.loads, loads, rtol=1e-12)
    assert (bound.loads[1] == 0.0) == (c1 == 40.0)
    np.testing.assert_allclose(bound.k, g.N * u / (1.0 + u), rtol=1e-12)
    # a WorkerProfile is grouped first
    workers = kim_bound(g.to_workers(), 100.0, exact=False)
    assert workers.latency == pytest.approx(bound.latency, rel=1e-12)


def test_bpcc_tau_of_one_loaded_worker():
    # 4 rows at a = mu = 1, the other idle: 4 (1 - e^{-(t/4 - 1)}) = 2 at 4 (1 + ln 2)
    p = WorkerProfile(a=[1.0, 1.0], mu=[1.0, 1.0])
    tau = bpcc_tau(p, [0.0, 4.0], m=2.0)
    assert tau == pytest.approx(4.0 * (1.0 + np.log(2.0)), rel=1e-12)
    # an overhead of 1 s (given, not the profile's 0) delays it by 1
    late = bpcc_tau(p, [0.0, 4.0], m=2.0, overhead=1.0)
    assert late == pytest.approx(1.0 + 4.0 * (1.0 + np.log(2.0)), rel=1e-12)
    # tau below 1 s (the bracket's first end): 4 (0.01 + ln 2 / 100)
    fast = WorkerProfile(a=[0.01, 0.01], mu=[100.0, 100.0])
    tau = bpcc_tau(fast, [0.0, 4.0], m=2.0)
    assert tau == pytest.approx(4.0 * (0.01 + np.log(2.0) / 100.0), rel=1e-12)


def test_bpcc_default_is_one_batch_hcmm():
    # one batch, no overhead, loads below the default cap m: HCMM's closed form
    p = WorkerProfile(a=[0.5, 1.0], mu=[2.0, 1.0])
    default = bpcc_optimum(p, 10.0)
    assert default.batches.tolist() == [1, 1]
    assert default.latency == pytest.approx(hcmm_latency(p, 10.0), rel=1e-9)
    np.testing.assert_allclose(default.loads, hcmm_loads(p, 10.0), rtol=1e-6)


@pytest.mark.parametrize("b", [1, 2])
def test_bpcc_with_a_zero_shift_under_a_cap_meets_m(b):
    # the a = 0 worker takes its whole cap; tau is where the expected rows reach m
    p = WorkerProfile(a=[0.0, 1.0], mu=[1.0, 2.0])
    best = bpcc_optimum(p, 5.0, l_max=4.0, batches=b)
    assert best.loads[0] == pytest.approx(4.0, rel=1e-9)
    assert best.loads[1] < 4.0
    rows = expected_rows(p, best.loads, best.latency, batches=best.batches)
    assert float(rows) == pytest.approx(5.0, rel=1e-9)


def test_bpcc_optimum_record_converts_and_freezes():
    record = BPCCOptimum(latency=1.0, loads=[0.5, 0.0], batches=[1.0, 2.0])
    assert record.loads.tolist() == [0.5, 0.0]
    assert record.batches.dtype == np.int64
    assert record.batches.tolist() == [1, 2]
    assert not record.batches.flags.writeable


def test_expected_rows_by_hand_at_several_times():
    # one row at a = 0.1, mu = 1: 1 - e^{-(t - 0.1)} after 0.1; the idle worker adds 0
    p = WorkerProfile(a=[0.1, 1.0], mu=[1.0, 2.0])
    rows = expected_rows(p, [1.0, 0.0], [0.0, 0.5, 1.0])
    assert rows.shape == (3,)
    np.testing.assert_allclose(rows, [0.0, -np.expm1(-0.4), -np.expm1(-0.9)])


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda: waterfill_time([0.0, 1.0], [0.0, 0.0], 4.0),
            ValueError,
            "`rates` entries must be > 0.0, got [0.0, 1.0].",
        ),
        (
            lambda: waterfill_time([1.0, 1.0], [0.0, -1.0], 4.0),
            ValueError,
            "`c` entries must be >= 0.0, got [0.0, -1.0].",
        ),
        (
            lambda: waterfill_time([1.0, 1.0], [0.0, 0.0, 0.0], 4.0),
            ValueError,
            "`c` must have length 2, got 3.",
        ),
        (
            lambda: bpcc_tau(THREE_GROUPS, [-1.0] + [20.0] * 99, m=1.0),
            ValueError,
            "`loads` entries must be >= 0.0, got " + str([-1.0] + [20.0] * 99) + ".",
        ),
        (
            lambda: hcmm_latency(WorkerProfile(a=[0.0], mu=[1.0]), 1.0),
            ValueError,
            "HCMM needs every shift `a` > 0 (with a = 0 the optimal load is unbounded; "
            "cap it with `l_max`), got a=[0.0].",
        ),
        (
            lambda: expected_rows(PAIR, [-1.0, 1.0], 1.0),
            ValueError,
            "`loads` entries must be >= 0.0, got [-1.0, 1.0].",
        ),
        (
            lambda: expected_rows(PAIR, [1.0, 1.0], np.inf),
            ValueError,
            "`t` must be finite and >= 0, got inf.",
        ),
        (
            lambda: BPCCOptimum(latency="1", loads=[1.0], batches=[1]),
            TypeError,
            "`latency` must be a real number, got str.",
        ),
        (
            lambda: BPCCOptimum(latency=1.0, loads=[-1.0], batches=[1]),
            ValueError,
            "`loads` entries must be >= 0.0, got [-1.0].",
        ),
        (
            lambda: bpcc_optimum(PAIR, 10.0, batches=None, batch_choices=(0,)),
            ValueError,
            "`batch_choices` must be >= 1, got batch_choices=0.",
        ),
        (
            lambda: bpcc_optimum(PAIR, 5.0, l_max=np.nan),
            ValueError,
            "`l_max` entries must be > 0, got [nan].",
        ),
        (
            lambda: bpcc_optimum(PAIR, 5.0, l_max=0.0),
            ValueError,
            "`l_max` entries must be > 0, got [0.0].",
        ),
        (
            lambda: KimBound(latency="1", loads=[1.0], k=[1.0]),
            TypeError,
            "`latency` must be a real number, got str.",
        ),
        (
            lambda: KimBound(latency=1.0, loads="ab", k=[1.0]),
            TypeError,
            "`loads` must hold real numbers, got dtype <U2.",
        ),
        (
            lambda: KimBound(latency=1.0, loads=[1.0], k=[np.nan]),
            ValueError,
            "`k` must be finite, got [nan].",
        ),
    ],
)
def test_more_messages(call, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        call()
