"""Profiles from measured task times (docs/theory/model.md#estimating-a-profile)."""

import re

import numpy as np
import pytest

from allocation import estimate_profile
from theory import WorkerProfile

TRUE = WorkerProfile(a=[0.5, 1.0, 2.0], mu=[4.0, 1.0, 0.2])


def draw_times(profile, loads, rng):
    X = rng.standard_exponential(loads.shape)
    return loads * (profile.a[:, None] + X / profile.mu[:, None])


def test_estimates_within_ten_percent():
    rng = np.random.default_rng(31337)
    loads = rng.integers(5, 50, size=(3, 400)).astype(float)
    est = estimate_profile(loads, draw_times(TRUE, loads, rng))
    np.testing.assert_allclose(est.a, TRUE.a, rtol=0.1)
    np.testing.assert_allclose(est.mu, TRUE.mu, rtol=0.1)


def test_unbiased_scale_and_shift_on_small_samples():
    rng = np.random.default_rng(2718)
    reps, s = 4000, 5
    loads = np.ones((reps, s))
    profile = WorkerProfile(a=np.full(reps, 1.0), mu=np.full(reps, 2.0))
    times = draw_times(profile, loads, rng)
    for unbiased, scale_ok in ((True, True), (False, False)):
        est = estimate_profile(loads, times, unbiased=unbiased)
        scale = 1.0 / est.mu
        se = scale.std() / np.sqrt(reps)
        assert bool(abs(scale.mean() - 0.5) <= 5 * se) is scale_ok
    est = estimate_profile(loads, times)
    assert abs(est.a.mean() - 1.0) <= 5 * est.a.std() / np.sqrt(reps)


def test_shared_loads_and_grouping():
    rng = np.random.default_rng(7)
    profile = WorkerProfile(a=[1.0, 1.0, 3.0, 3.0], mu=[2.0, 2.0, 0.5, 0.5])
    loads = np.full(3000, 10.0)
    est = estimate_profile(loads, draw_times(profile, np.tile(loads, (4, 1)), rng))
    groups = est.to_groups(rtol=0.15)
    assert groups.N.tolist() == [2.0, 2.0]
    np.testing.assert_allclose(groups.a, [1.0, 3.0], rtol=0.05)


BAD = [
    (
        lambda: estimate_profile([1.0, 1.0], [[1.0, 2.0, 3.0]]),
        ValueError,
        "`loads` of shape (2,) does not match `times` of shape (1, 3)",
    ),
    (
        lambda: estimate_profile([0.0, 1.0], [[1.0, 2.0]]),
        ValueError,
        "`loads` entries must be > 0",
    ),
    (
        lambda: estimate_profile([1.0, 1.0], [[-1.0, 2.0]]),
        ValueError,
        "`times` entries must be >= 0",
    ),
    (
        lambda: estimate_profile([1.0], [[1.0]]),
        ValueError,
        "each worker needs at least 2 timed tasks, got s=1",
    ),
    (
        lambda: estimate_profile([1.0, 1.0], [[1.0, 1.0]]),
        ValueError,
        "the times of worker 0 show no spread at some load, so mu is unbounded",
    ),
    (
        lambda: estimate_profile([1.0, 1.0], [1.0, 2.0]),
        ValueError,
        "`times` must have ndim in (2,)",
    ),
    (
        lambda: estimate_profile([1.0, 1.0], [[np.nan, 2.0]]),
        ValueError,
        "`times` must be finite",
    ),
]


@pytest.mark.parametrize(("call", "error", "message"), BAD)
def test_input_validation(call, error, message):
    with pytest.raises(error, match=re.escape(message)):
        call()
