"""The switched-network model with a rate per node, and links limited on upload only."""

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mapreduce import place_li, plan_shuffle, plan_traffic, predict_shuffle_seconds
from theory import shuffle_seconds_switched

sizes = st.integers(1, 6).flatmap(
    lambda n: st.tuples(
        *[st.lists(st.floats(0, 1e9), min_size=n, max_size=n) for _ in range(2)],
        st.lists(st.floats(1e3, 1e10), min_size=n, max_size=n),
    )
)


@given(sizes)
def test_each_node_takes_its_own_bytes_over_its_own_rates(case):
    up, down, rates = case
    busiest = max(max(u / b, d / b) for u, d, b in zip(up, down, rates, strict=True))
    assert shuffle_seconds_switched(up, down, rates) == pytest.approx(busiest)
    upload_only = max(u / b for u, b in zip(up, rates, strict=True))
    assert shuffle_seconds_switched(
        up, down, rates, download_bandwidth=math.inf
    ) == pytest.approx(upload_only)


@given(sizes)
def test_one_rate_for_all_is_that_rate_per_node(case):
    up, down, rates = case
    assert shuffle_seconds_switched(up, down, rates[0]) == pytest.approx(
        shuffle_seconds_switched(up, down, [rates[0]] * len(up))
    )


def test_a_slow_link_sets_the_shuffle_of_a_plan():
    plan = plan_shuffle(place_li(4, 2))
    traffic = plan_traffic(plan, "unicast", 1000)
    rates = [1e6, 1e6, 1e6, 2.5e5]  # node 3 at a quarter of the others
    predicted = predict_shuffle_seconds(
        plan, bandwidth=rates, download_bandwidth=math.inf, value_bytes=1000
    )
    assert predicted == pytest.approx(traffic.upload[3] / 2.5e5)


@pytest.mark.parametrize("bad", [[1e6] * 3, [1e6, 1e6, 0.0, 1e6], True, "fast"])
def test_rates_must_be_positive_and_one_per_node(bad):
    with pytest.raises(ValueError, match="`bandwidth` must be one rate > 0"):
        shuffle_seconds_switched([1, 2, 3, 4], [1, 2, 3, 4], bad)


def test_each_message_adds_the_latency_at_its_node():
    up, down, rate = [2e6, 1e6], [1e6, 1e6], 1e7  # 0.2 s and 0.1 s of bytes
    assert shuffle_seconds_switched(
        up, down, rate, messages=[1, 3], latency_seconds=0.1
    ) == pytest.approx(0.4)
    # messages without a latency cost nothing
    assert shuffle_seconds_switched(up, down, rate, messages=[1, 3]) == 0.2


def test_no_node_takes_no_time():
    assert shuffle_seconds_switched([], [], 1e7, latency_seconds=1.0) == 0.0


def test_exact_byte_counts_are_accepted():
    assert shuffle_seconds_switched([Fraction(3)], [Fraction(1)], 2.0) == 1.5
