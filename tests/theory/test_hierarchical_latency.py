"""Multi-level codes: exact latency, the simulator at scale, the cost model."""

import dataclasses
import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.integrate

from theory import (
    RuntimeCosts,
    call_overhead,
    expected_latency_hierarchical,
    expected_latency_mds,
    fit_runtime_costs,
    simulate_hierarchical,
)


@pytest.mark.parametrize(("n", "k"), [(1, 1), (8, 8), (10, 3), (64, 56), (500, 450)])
def test_one_level_is_the_mds_latency(n, k):
    got = expected_latency_hierarchical([(n, k)], a=0.7, mu=2.0)
    assert got == pytest.approx(expected_latency_mds(n, k, a=0.7, mu=2.0), rel=1e-9)


def test_two_groups_of_two_by_hand():
    # worker (1 + X)/2; a group needs both members, the job one group:
    # E[min of two maxima of two Exp(1)] = 2 - 4/3 + 1/4
    got = expected_latency_hierarchical([(2, 1), (2, 2)], a=1.0, mu=1.0)
    assert got == pytest.approx((1 + 2 - 4 / 3 + 1 / 4) / 2, rel=1e-10)


def test_exact_latency_by_integration_over_time():
    """Independent path: integrate P[T > t] of the nested order statistics in t."""
    levels, a, mu, K = [(4, 3), (3, 2)], 0.5, 1.5, 6

    def survival(t):
        q = 1 - math.exp(-mu * (K * t - a)) if K * t > a else 0.0
        for size, k in reversed(levels):
            q = sum(
                math.comb(size, j) * q**j * (1 - q) ** (size - j)
                for j in range(k, size + 1)
            )
        return 1 - q

    value = a / K + scipy.integrate.quad(survival, a / K, np.inf, limit=200)[0]
    got = expected_latency_hierarchical(levels, a=a, mu=mu)
    assert got == pytest.approx(value, rel=1e-8)


@pytest.mark.parametrize(
    ("levels", "trials"),
    [
        ([(8, 7), (8, 6)], 20_000),  # n = 64
        ([(16, 14), (16, 14), (16, 14)], 3_000),  # n = 4096
        ([(100, 90), (100, 90)], 300),  # n = 10^4
    ],
)
def test_simulator_matches_the_exact_latency(levels, trials):
    exact = expected_latency_hierarchical(levels, a=1.0, mu=0.5)
    sim = simulate_hierarchical(levels, a=1.0, mu=0.5, trials=trials, rng=7)
    assert abs(sim.mean - exact) <= 5 * sim.stderr
    assert sim.trials == trials


@pytest.mark.parametrize(
    ("levels", "worst"),
    [
        ([(4, 3), (3, 2)], 8),
        ([(3, 2), (4, 3)], 9),  # n_0 < n_1
        ([(2, 2), (3, 2)], 5),  # k_0 = n_0: every row needed
        ([(3, 2), (2, 2)], 5),  # k_1 = n_1: a row decodes only when whole
        ([(3, 2), (3, 2)], 6),
    ],
)
def test_product_decoding_latency_by_brute_force(levels, worst):
    """Same draws: the first prefix of finishers that the product decoder takes."""
    from coded import HierarchicalCode

    trials, seed = 40, 11
    n = levels[0][0] * levels[1][0]
    K = levels[0][1] * levels[1][1]
    code = HierarchicalCode(n, levels, 65537, decoding="product")
    X = np.random.default_rng(seed).standard_exponential((trials, n))
    times = (1.0 + X / 2.0) / K
    expected, needed = [], []
    for row in times:
        order = np.argsort(row)
        j = next(j for j in range(n) if code.is_decodable(order[: j + 1].tolist()))
        expected.append(row[order[j]])
        needed.append(j + 1)
    # the product code's distance d = prod (n_l - k_l + 1): any n - d + 1 decode;
    # all but the first draws reach that bound (the bisection's upper end)
    d = math.prod(size - k + 1 for size, k in levels)
    assert max(needed) == worst <= n - d + 1
    sim = simulate_hierarchical(
        levels, a=1.0, mu=2.0, trials=trials, rng=seed, decoding="product"
    )
    assert sim.mean == pytest.approx(np.mean(expected), rel=1e-12)
    assert sim.quantiles[0.9] == pytest.approx(np.quantile(expected, 0.9), rel=1e-12)


def test_product_decoding_sits_between_the_group_rule_and_a_flat_code():
    kwargs = {"a": 1.0, "mu": 1.0, "trials": 3000, "rng": 5}
    groups = simulate_hierarchical([(8, 7), (8, 7)], **kwargs)
    product = simulate_hierarchical([(8, 7), (8, 7)], decoding="product", **kwargs)
    flat = simulate_hierarchical([(64, 49)], **kwargs)  # the same draws
    assert groups.mean > product.mean > flat.mean


def test_costs_on_the_critical_path_without_stragglers():
    """mu -> inf: every worker ends at a / K; a node's sends and receives queue."""
    s = 1e-3
    costs = RuntimeCosts(
        message_seconds=s, leader_message_seconds=s, byte_seconds=0, flop_seconds=0
    )
    flat = simulate_hierarchical(
        [(16, 12)], a=1.0, mu=1e12, trials=4, costs=costs, rng=0
    )
    # the k-th receipt: the first answer arrives after one send, then k receives
    assert flat.mean == pytest.approx(1 / 12 + 13 * s, rel=1e-6)
    two = simulate_hierarchical(
        [(4, 3), (4, 4)], a=1.0, mu=1e12, trials=4, costs=costs, rng=0
    )
    # a leader ends (k + 1) s = 5 s after it starts (as the flat case); the client's
    # first answer comes 1 send + 5 s in, then it takes k_0 = 3 receives
    assert two.mean == pytest.approx(1 / 12 + 5 * s + 4 * s, rel=1e-6)
    # the client's own work per worker and per call comes on top, once
    busy = dataclasses.replace(costs, worker_seconds=1e-5, call_seconds=2e-3)
    again = simulate_hierarchical(
        [(4, 3), (4, 4)], a=1.0, mu=1e12, trials=4, costs=busy, rng=0
    )
    assert again.mean == pytest.approx(two.mean + 16 * 1e-5 + 2e-3, rel=1e-9)
    # product_bytes defaults to 0: no byte costs, however dear
    dear_bytes = RuntimeCosts(
        message_seconds=s, leader_message_seconds=s, byte_seconds=1.0, flop_seconds=0
    )
    cheap = simulate_hierarchical(
        [(16, 12)], a=1.0, mu=1e12, trials=4, costs=dear_bytes, rng=0
    )
    assert cheap.mean == flat.mean


def test_call_overhead_counts():
    unit = RuntimeCosts(
        message_seconds=1, leader_message_seconds=1, byte_seconds=1, flop_seconds=1
    )
    P = 1000  # product elements
    flat = call_overhead([(10, 8)], unit, product_bytes=8 * P)
    flops = 2 / 3 * 8**3 + 2 * 8 * P
    np.testing.assert_allclose(flat.counts, [18, 0, 8 * P, flops, 10, 1])
    np.testing.assert_allclose(flat.client_counts, flat.counts)
    two = call_overhead([(5, 4), (6, 5)], unit, product_bytes=8 * P, right_bytes=2)
    client = 9 + (8 * P + 5 * 2) + (2 / 3 * 64 + 2 * 4 * P)
    leader = 11 + (8 * P / 4 + 6 * 2) + (2 / 3 * 125 + 2 * 5 * P / 4)
    assert two.client_seconds == pytest.approx(client)
    assert two.leader_seconds == pytest.approx(leader)
    assert two.total_seconds == pytest.approx(client + leader)
    assert two.client_counts[1] == 0
    assert two.counts[1] == 11
    # the client's per-worker and per-call work: n = 30 workers, one call
    busy = dataclasses.replace(unit, worker_seconds=2, call_seconds=7)
    again = call_overhead([(5, 4), (6, 5)], busy, product_bytes=8 * P, right_bytes=2)
    assert again.client_seconds == pytest.approx(client + 2 * 30 + 7)
    assert again.leader_seconds == pytest.approx(leader)


_TRUE = RuntimeCosts(
    message_seconds=3e-4,
    leader_message_seconds=5e-5,
    byte_seconds=2e-9,
    flop_seconds=5e-11,
    worker_seconds=2e-5,
    call_seconds=1e-3,
)


def test_fit_recovers_the_constants():
    layouts = [[(n, n - 2)] for n in (8, 16, 32, 64)]
    layouts += [[(2, 2), (4, 3)], [(4, 3), (4, 3)], [(8, 7), (8, 6)]]
    sizes = [1e6, 8e6, 2e6, 4e6, 8e6, 1e6, 2e6]
    overheads = [
        call_overhead(layout, _TRUE, product_bytes=b)
        for layout, b in zip(layouts, sizes, strict=True)
    ]
    fit = fit_runtime_costs(
        layouts, [o.total_seconds for o in overheads], product_bytes=sizes
    )
    client = fit_runtime_costs(
        layouts,
        [o.client_seconds for o in overheads],
        product_bytes=sizes,
        part="client",
    )
    for name in RuntimeCosts.__dataclass_fields__:
        assert getattr(fit, name) == pytest.approx(getattr(_TRUE, name), rel=1e-6)
        expected = 0.0 if name == "leader_message_seconds" else getattr(_TRUE, name)
        assert getattr(client, name) == pytest.approx(expected, rel=1e-6, abs=1e-15)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: expected_latency_hierarchical([(8, 9)], a=1, mu=1), "k_l <= n_l"),
        (
            lambda: expected_latency_hierarchical([(2, 1)] * 3 + [(1, 1)], a=1, mu=1),
            "levels",
        ),
        (lambda: simulate_hierarchical([(4, 2)], a=1, mu=0), "mu"),
        (
            lambda: simulate_hierarchical([(4, 2)], a=1, mu=1, decoding="product"),
            "two-level",
        ),
        (lambda: fit_runtime_costs([[(4, 2)]], [1.0], product_bytes=1.0), "at least 6"),
        (
            lambda: fit_runtime_costs(
                [[(4, 2)]] * 6, [1.0] * 6, product_bytes=1.0, part="leaders"
            ),
            "`part` must be 'total' or 'client'",
        ),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def _queue(ready, k, send, receive, decode):
    """A gathering node, event by event: send to members in turn, answers in order."""
    arrivals = sorted(t + send * (j + 1) for j, t in enumerate(ready))[:k]
    done = -math.inf
    for t in arrivals:
        done = max(done, t) + receive  # one answer at a time
    return done + decode


def test_costs_on_the_critical_path_by_events():
    """Random draws, four nonzero constants, n_0 != n_1: an event-by-event oracle."""
    (n0, k0), (n1, k1) = levels = [(4, 3), (3, 2)]
    a, mu, trials, seed, P = 1.0, 2.0, 5, 3, 1000.0
    s, leader_s, byte_s, flop_s = 0.02, 0.01, 1e-6, 1e-6
    costs = RuntimeCosts(
        message_seconds=s,
        leader_message_seconds=leader_s,
        byte_seconds=byte_s,
        flop_seconds=flop_s,
    )
    X = np.random.default_rng(seed).standard_exponential((trials, n0 * n1))
    ready = (a + X / mu) / (k0 * k1)
    # a node at depth l takes k_l blocks of P / (k_0 ... k_l) elements (8 bytes
    # each) and applies a k_l x k_l inverse (LU: 2/3 k_l^3) to them
    block0, block1 = P / k0, P / (k0 * k1)
    leader = (
        leader_s + byte_s * 8 * block1,
        flop_s * (2 / 3 * k1**3 + 2 * k1 * k1 * block1),
    )
    client = (s + byte_s * 8 * block0, flop_s * (2 / 3 * k0**3 + 2 * k0 * k0 * block0))
    expected = [
        _queue(
            [
                _queue(row[g * n1 : (g + 1) * n1], k1, leader_s, *leader)
                for g in range(n0)
            ],
            k0,
            s,
            *client,
        )
        for row in ready
    ]
    sim = simulate_hierarchical(
        levels, a=a, mu=mu, trials=trials, costs=costs, product_bytes=8 * P, rng=seed
    )
    assert sim.mean == pytest.approx(np.mean(expected), rel=1e-12)
    assert sim.quantiles[0.5] == pytest.approx(np.median(expected), rel=1e-12)
    assert sim.stderr == pytest.approx(np.std(expected, ddof=1) / trials**0.5)


_UNIT = {
    "message_seconds": 1.0,
    "leader_message_seconds": 1.0,
    "byte_seconds": 1.0,
    "flop_seconds": 1.0,
    "worker_seconds": 1.0,
    "call_seconds": 1.0,
}
_LAYOUTS6 = [
    [(8, 6)],
    [(16, 14)],
    [(4, 3), (4, 3)],
    [(8, 7), (8, 6)],
    [(32, 20)],
    [(2, 2), (4, 3)],
]


@pytest.mark.parametrize("name", list(_UNIT))
def test_runtime_costs_refuse_a_negative_constant(name):
    assert getattr(RuntimeCosts(**dict(_UNIT, **{name: 0.0})), name) == 0.0
    with pytest.raises(ValueError, match=rf"^`{name}` must be >= 0.0, got {name}=-1"):
        RuntimeCosts(**dict(_UNIT, **{name: -1e-9}))


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (
            lambda: call_overhead([(4, 2)], "fast", product_bytes=1.0),
            TypeError,
            r"^`costs` must be a RuntimeCosts, got str\.$",
        ),
        (
            lambda: call_overhead([(4, 2)], RuntimeCosts(**_UNIT), product_bytes=-1.0),
            ValueError,
            r"^`product_bytes` must be >= 0.0, got product_bytes=-1.0\.$",
        ),
        (
            lambda: call_overhead(
                [(4, 2)], RuntimeCosts(**_UNIT), product_bytes=1.0, right_bytes=-1.0
            ),
            ValueError,
            r"^`right_bytes` must be >= 0.0, got right_bytes=-1.0\.$",
        ),
        (
            lambda: fit_runtime_costs(None, [1.0] * 4, product_bytes=1.0),
            TypeError,
            r"^`layouts` must be a sequence of layouts\.$",
        ),
        (
            lambda: fit_runtime_costs("abcd", [1.0] * 4, product_bytes=1.0),
            TypeError,
            r"^`layouts` must be a sequence of layouts\.$",
        ),
        (
            lambda: fit_runtime_costs(_LAYOUTS6, 1.0, product_bytes=1.0),
            ValueError,
            r"got 0 times for 6 layouts; measure more layouts\.$",
        ),
        (
            lambda: fit_runtime_costs(_LAYOUTS6, [1.0] * 3, product_bytes=1.0),
            ValueError,
            r"got 3 times for 6 layouts; measure more layouts\.$",
        ),
        (
            lambda: fit_runtime_costs(_LAYOUTS6[:5], [1.0] * 5, product_bytes=1.0),
            ValueError,
            r"at least 6 calls \(one per constant\), got 5 times for 5 layouts",
        ),
    ],
)
def test_cost_model_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_call_overhead_below_one_byte():
    """Sizes in (0, 1) are legal: P = 1/16 element, bytes 8 P, flops 2/3 k^3 + 2 k P."""
    unit = RuntimeCosts(**_UNIT)
    flat = call_overhead([(10, 8)], unit, product_bytes=0.5, right_bytes=0.25)
    np.testing.assert_allclose(
        flat.counts,
        [18, 0, 0.5 + 10 * 0.25, 2 / 3 * 8**3 + 2 * 8 / 16, 10, 1],
        rtol=1e-15,
    )


@pytest.mark.parametrize(
    ("layouts", "right_bytes"),
    [
        (_LAYOUTS6, 0.0),  # six calls: the fewest accepted
        ([*_LAYOUTS6, [(2, 2), (4, 3)]], 1e5),  # each member receives B
    ],
)
def test_fit_from_the_fewest_calls_and_with_a_right_operand(layouts, right_bytes):
    sizes = [1e6, 8e6, 2e6, 4e6, 8e6, 3e6, 5e6][: len(layouts)]
    seconds = [
        call_overhead(
            layout, _TRUE, product_bytes=b, right_bytes=right_bytes
        ).total_seconds
        for layout, b in zip(layouts, sizes, strict=True)
    ]
    fit = fit_runtime_costs(
        layouts, seconds, product_bytes=sizes, right_bytes=right_bytes
    )
    for name in _UNIT:
        assert getattr(fit, name) == pytest.approx(getattr(_TRUE, name), rel=1e-6)


def test_fit_of_flat_calls_only_has_no_leader_cost():
    """Flat layouts count no leader message: that constant's column is all zero."""
    layouts = [[(8, 6)], [(16, 9)], [(32, 28)], [(64, 40)], [(128, 100)], [(20, 10)]]
    sizes = [1e6, 8e6, 2e6, 4e6, 1e6, 3e6]
    seconds = [
        call_overhead(layout, _TRUE, product_bytes=b).total_seconds
        for layout, b in zip(layouts, sizes, strict=True)
    ]
    fit = fit_runtime_costs(layouts, seconds, product_bytes=sizes)
    assert fit.leader_message_seconds == 0.0
    for name in _UNIT.keys() - {"leader_message_seconds"}:
        assert getattr(fit, name) == pytest.approx(getattr(_TRUE, name), rel=1e-6)


@pytest.mark.parametrize(
    ("levels", "error", "match"),
    [
        ([], TypeError, r"^`levels` must be a non-empty sequence of \(n_l, k_l\) "),
        ("ab", TypeError, r"outermost first, got 'ab'\.$"),
        (
            ["ab"],
            TypeError,
            r"^`levels\[0\]` must be an \(n_l, k_l\) pair, got 'ab'\.$",
        ),
        ([5], TypeError, r"^`levels\[0\]` must be an \(n_l, k_l\) pair, got 5\.$"),
        ([(0, 0)], ValueError, r"^`levels\[0\]\[0\] \(n_l\)` must be >= 1, got "),
    ],
)
def test_layout_bad_input(levels, error, match):
    with pytest.raises(error, match=match):
        expected_latency_hierarchical(levels, a=1.0, mu=1.0)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"trials": 1}, ValueError, r"^`trials` must be >= 2, got trials=1\.$"),
        (
            {"product_bytes": -1.0},
            ValueError,
            r"^`product_bytes` must be >= 0.0, got product_bytes=-1.0\.$",
        ),
        ({"costs": "x"}, TypeError, r"^`costs` must be a RuntimeCosts, got str\.$"),
        (
            {"decoding": "rows"},
            ValueError,
            r"^`decoding` must be 'groups' or 'product', got 'rows'\.$",
        ),
        (
            {"levels": [(2, 1)] * 3, "decoding": "product"},
            ValueError,
            r"^`decoding='product'` simulates a two-level code without costs, got 3 "
            r"level\(s\); use decoding='groups'\.$",
        ),
        (
            {"decoding": "product", "costs": RuntimeCosts(**_UNIT)},
            ValueError,
            r"without costs, got 2 level\(s\) and costs; use decoding='groups'\.$",
        ),
    ],
)
def test_simulate_bad_input(kwargs, error, match):
    kwargs = {"levels": [(2, 1), (2, 1)], "a": 1.0, "mu": 1.0, **kwargs}
    with pytest.raises(error, match=match):
        simulate_hierarchical(**kwargs)


def test_simulate_defaults_and_fewest_trials():
    assert simulate_hierarchical([(2, 1)], a=1.0, mu=1.0, rng=0).trials == 10_000
    two = simulate_hierarchical([(2, 1)], a=1.0, mu=1.0, trials=2, rng=0)
    X = np.random.default_rng(0).standard_exponential((2, 2))
    assert two.mean == pytest.approx(np.mean(1.0 + X.min(axis=1)), rel=1e-15)


def test_group_decoding_takes_each_groups_kth_finisher():
    """Large groups (numpy selects, it does not sort): sorted() as the oracle.

    With seed 4, np.partition around a group's 299th finisher leaves its 300th
    out of place: only a selection around the 300th itself gives it.
    """
    (n0, k0), (n1, k1) = levels = [(3, 2), (400, 300)]
    trials, seed, K = 6, 4, k0 * k1
    X = np.random.default_rng(seed).standard_exponential((trials, n0 * n1))
    ready = (1.0 + X / 3.0) / K
    expected = [
        sorted(sorted(row[g * n1 : (g + 1) * n1])[k1 - 1] for g in range(n0))[k0 - 1]
        for row in ready
    ]
    sim = simulate_hierarchical(levels, a=1.0, mu=3.0, trials=trials, rng=seed)
    assert sim.mean == pytest.approx(np.mean(expected), rel=1e-15)
    assert sim.quantiles[0.9] == pytest.approx(np.quantile(expected, 0.9), rel=1e-15)


def test_one_level_to_the_harmonic_numbers():
    """a = 0, mu = 1, one level: E[T] K = H_n - H_{n-k}, exact as a fraction."""
    J = sum(Fraction(1, i) for i in range(51, 501))
    got = expected_latency_hierarchical([(500, 450)], a=0.0, mu=1.0)
    assert got * 450 == pytest.approx(float(J), rel=1e-13)


def _peeled(known, levels):
    """Product decoding of one grid of known cells: fill rows, then columns, repeat."""
    (n0, k0), (n1, k1) = levels
    known = [list(row) for row in known]
    while True:
        full_rows = [i for i in range(n0) if sum(known[i]) >= k1]
        columns = [j for j in range(n1) if sum(row[j] for row in known) >= k0]
        before = sum(map(sum, known))
        for i in full_rows:
            known[i] = [True] * n1
        for j in columns:
            for i in range(n0):
                known[i][j] = True
        if sum(map(sum, known)) == before:
            return sum(sum(row) >= k1 for row in known) >= k0


def test_product_decoding_over_more_than_one_chunk():
    """2^21 draws per chunk: trial rows + 1 is the first of the second chunk."""
    (n0, _), (n1, _) = levels = [(10, 9), (10, 9)]
    n, seed = n0 * n1, 1
    rows = 2**21 // n
    kwargs = {"a": 1.0, "mu": 1.0, "rng": seed, "decoding": "product"}
    first = simulate_hierarchical(levels, trials=rows, **kwargs)
    both = simulate_hierarchical(levels, trials=rows + 1, **kwargs)
    last = both.mean * (rows + 1) - first.mean * rows
    times = (
        1.0 + np.random.default_rng(seed).standard_exponential((rows + 1, n))[-1]
    ) / 81
    order = np.argsort(times)
    j = next(
        j
        for j in range(n)
        if _peeled(np.isin(np.arange(n), order[: j + 1]).reshape(n0, n1), levels)
    )
    assert last == pytest.approx(times[order[j]], rel=1e-9)
