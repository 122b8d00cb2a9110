"""Multi-level codes: exact latency, the simulator at scale, the cost model."""

import dataclasses
import math

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


def test_product_decoding_latency_by_brute_force():
    """Same draws: the first prefix of finishers that the product decoder takes."""
    from coded import HierarchicalCode

    levels, trials, seed = [(4, 3), (3, 2)], 40, 11
    code = HierarchicalCode(12, levels, 65537, decoding="product")
    X = np.random.default_rng(seed).standard_exponential((trials, 12))
    times = (1.0 + X / 2.0) / 6
    expected = []
    for row in times:
        order = np.argsort(row)
        j = next(j for j in range(12) if code.is_decodable(order[: j + 1].tolist()))
        expected.append(row[order[j]])
    sim = simulate_hierarchical(
        levels, a=1.0, mu=2.0, trials=trials, rng=seed, decoding="product"
    )
    assert sim.mean == pytest.approx(np.mean(expected), rel=1e-12)


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


def test_fit_recovers_the_constants():
    true = RuntimeCosts(
        message_seconds=3e-4,
        leader_message_seconds=5e-5,
        byte_seconds=2e-9,
        flop_seconds=5e-11,
        worker_seconds=7e-5,
        call_seconds=1e-3,
    )
    layouts = [[(n, n - 2)] for n in (8, 16, 32, 64)]
    layouts += [[(2, 2), (4, 3)], [(4, 3), (4, 3)], [(8, 7), (8, 6)]]
    sizes = [1e6, 8e6, 2e6, 4e6, 8e6, 1e6, 2e6]
    overheads = [
        call_overhead(layout, true, product_bytes=b)
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
        assert getattr(fit, name) == pytest.approx(getattr(true, name), rel=1e-6)
        expected = 0.0 if name == "leader_message_seconds" else getattr(true, name)
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
