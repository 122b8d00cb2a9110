"""The profile conversions and the multicast shuffle time, against values by hand."""

import re
from fractions import Fraction

import numpy as np
import pytest

from theory import GroupProfile, WorkerProfile, shuffle_seconds_multicast


def _as_lists(profile):
    return (
        profile.a.tolist(),
        profile.mu.tolist(),
        np.broadcast_to(profile.c, profile.a.shape).tolist(),
    )


def test_homogeneous_profile():
    p = WorkerProfile.homogeneous(3, a=0.5, mu=2.0, c=0.1)
    assert _as_lists(p) == ([0.5] * 3, [2.0] * 3, [0.1] * 3)
    assert _as_lists(WorkerProfile.homogeneous(1, a=1.0, mu=1.0))[2] == [0.0]
    with pytest.raises(ValueError, match="`n` must be >= 1"):
        WorkerProfile.homogeneous(0, a=1.0, mu=1.0)


def test_homogeneous_takes_any_real_scalar_as_float_vectors():
    p = WorkerProfile.homogeneous(2, a=Fraction(1, 2), mu=Fraction(3, 2))
    assert (p.a.tolist(), p.mu.tolist()) == ([0.5, 0.5], [1.5, 1.5])


def test_a_scalar_overhead_is_a_read_only_vector():
    c = WorkerProfile(a=[1.0, 1.0], mu=[1.0, 1.0], c=0.5).c
    assert c.tolist() == [0.5, 0.5]
    with pytest.raises(ValueError, match="read-only"):
        c[0] = 0.0


def test_group_sizes_given_as_whole_floats_are_counts():
    g = GroupProfile(N=[2.0, 3.0], a=[0.0, 0.5], mu=[1.0, 1.0])
    assert (g.n, g.N.tolist(), g.a.tolist()) == (5, [2, 3], [0.0, 0.5])


@pytest.mark.parametrize(
    "field",
    [
        {"a": [0.0, 1e-9]},  # absolute differences near 0 separate at rtol = 0
        {"mu": [1e-9, 2e-9]},
        {"c": [0.0, 1e-9]},
        {"mu": [1.0, 1.5]},
        {"mu": [1.0, 1.000001]},  # relative differences too
        {"c": [1.0, 1.000001]},
    ],
)
def test_workers_differing_in_one_parameter_stay_apart(field):
    p = WorkerProfile(**{"a": [1.0, 1.0], "mu": [1.0, 1.0], **field})
    assert p.to_groups().N.tolist() == [1, 1]


def test_time_unit_and_block_conversions():
    p = WorkerProfile(a=[1.0, 2.0], mu=[4.0, 8.0], c=[0.5, 1.0])
    assert _as_lists(p.in_seconds(0.5)) == ([0.5, 1.0], [8.0, 16.0], [0.25, 0.5])
    assert _as_lists(p.per_block(4)) == ([4.0, 8.0], [1.0, 2.0], [0.5, 1.0])
    with pytest.raises(ValueError, match="`seconds_per_unit` must be > 0"):
        p.in_seconds(0.0)
    with pytest.raises(ValueError, match="`block_rows` must be >= 1"):
        p.per_block(0)


def test_workers_group_by_equal_parameters_within_rtol():
    p = WorkerProfile(
        a=[1.0, 2.0, 1.0, 1.001], mu=[4.0, 1.0, 4.0, 4.0], c=[0.0, 0.0, 0.0, 0.0]
    )
    exact = p.to_groups()
    assert exact.N.tolist() == [2, 1, 1]
    assert exact.a.tolist() == [1.0, 2.0, 1.001]
    loose = p.to_groups(rtol=1e-2)
    assert loose.N.tolist() == [3, 1]
    assert loose.a.tolist() == pytest.approx([(1.0 + 1.0 + 1.001) / 3, 2.0])
    assert loose.mu.tolist() == [4.0, 1.0]
    overhead = WorkerProfile(a=[1.0, 1.0], mu=[1.0, 1.0], c=[0.0, 1.0]).to_groups()
    assert overhead.N.tolist() == [1, 1]
    assert np.broadcast_to(overhead.c, (2,)).tolist() == [0.0, 1.0]
    round_trip = exact.to_workers()
    assert sorted(round_trip.a.tolist()) == sorted(p.a.tolist())


def test_scaled_groups():
    g = GroupProfile(N=[2, 1], a=[1.0, 2.0], mu=[4.0, 1.0], c=[0.5, 0.0])
    big = g.scaled(3)
    assert big.N.tolist() == [6, 3]
    assert (big.a.tolist(), big.mu.tolist()) == ([1.0, 2.0], [4.0, 1.0])
    assert np.broadcast_to(big.c, (2,)).tolist() == [0.5, 0.0]
    with pytest.raises(ValueError, match="`s` must be >= 1"):
        g.scaled(0)


def test_multicast_shuffle_time():
    assert shuffle_seconds_multicast([1e6, 3e6], 1e7) == pytest.approx(0.4)
    assert shuffle_seconds_multicast(
        [1e6, 3e6], 1e7, latency_seconds=0.01
    ) == pytest.approx(0.42)
    assert shuffle_seconds_multicast([], 1e7, latency_seconds=0.01) == 0.0
    with pytest.raises(ValueError, match=re.escape("`bandwidth` must be > 0")):
        shuffle_seconds_multicast([1.0], 0.0)
    with pytest.raises(ValueError, match=re.escape("`latency_seconds` must be >= 0")):
        shuffle_seconds_multicast([1.0], 1.0, latency_seconds=-1.0)
    with pytest.raises(ValueError, match="`transmission_bytes` must be a 1-D sequence"):
        shuffle_seconds_multicast([[1.0]], 1.0)
