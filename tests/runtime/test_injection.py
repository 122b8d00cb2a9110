"""The injection specs are pure data: seeded draws of docs/theory/model.md."""

import re

import numpy as np
import pytest

from coded import Stragglers
from coded.injection import TaskFault
from theory import WorkerProfile


def test_sample_follows_the_shifted_exponential_model():
    profile = WorkerProfile(a=[1.0, 0.5, 2.0], mu=[2.0, 1.0, 4.0])
    spec = Stragglers(profile=profile, time_unit=0.01, delays={1: 0.25})
    plan = spec.sample(3, rng=7)
    draws = np.random.default_rng(7).exponential(size=(2, 3))
    expected = (profile.a + draws[0] / profile.mu) * 0.01
    np.testing.assert_allclose(plan.seconds_per_row, expected)
    fault = plan.task_fault(2, rows=5)
    assert fault.duration_seconds == pytest.approx(5 * expected[2])
    assert plan.task_fault(1, rows=5).extra_seconds == 0.25
    backup = plan.task_fault(1, rows=4, backup=True)
    assert backup.duration_seconds == pytest.approx(
        4 * (0.5 + draws[1, 1] / 1.0) * 0.01
    )
    assert backup.extra_seconds == 0.0


def test_same_seed_same_plan_and_the_mean_matches_the_model():
    profile = WorkerProfile.homogeneous(4, a=1.0, mu=0.5)
    spec = Stragglers(profile=profile, time_unit=1.0)
    first, again = spec.sample(4, rng=3), spec.sample(4, rng=3)
    assert np.array_equal(first.seconds_per_row, again.seconds_per_row)
    rng = np.random.default_rng(11)
    samples = np.concatenate(
        [spec.sample(4, rng=rng).seconds_per_row for _ in range(2000)]
    )
    mean, stderr = samples.mean(), samples.std(ddof=1) / np.sqrt(samples.size)
    assert abs(mean - (1.0 + 1 / 0.5)) < 5 * stderr
    assert samples.min() >= 1.0


def test_failures_and_deaths_are_per_worker():
    plan = Stragglers(failing=[0], dying=[2]).sample(3, rng=0)
    assert [plan.task_fault(i, rows=1).raises for i in range(3)] == [True, False, False]
    assert [plan.task_fault(i, rows=1).dies for i in range(3)] == [False, False, True]
    assert not plan.task_fault(0, rows=1, backup=True).raises
    assert plan.task_fault(1, rows=9).is_noop
    assert not TaskFault(extra_seconds=1.0).is_noop


def test_corrupt_workers_report_one_entry_wrong_by_the_relative_error():
    plan = Stragglers(corrupt={1: 1e-3}).sample(3, rng=0)
    assert plan.task_fault(0, rows=1).corrupt == 0.0
    fault = plan.task_fault(1, rows=1)
    assert not fault.is_noop
    assert plan.task_fault(1, rows=1, backup=True).corrupt == 0.0
    value = np.array([[1.0, -4.0], [2.0, 0.5]])
    wrong = fault.corrupted(value)
    assert np.count_nonzero(wrong != value) == 1
    assert wrong[0, 1] == -4.0 + 1e-3 * 4.0
    assert value[0, 1] == -4.0  # the worker's own array is left alone
    residues = fault.corrupted(np.array([0, 5, 3], dtype=np.int64))
    assert residues.tolist() == [0, 4, 3]
    assert TaskFault().corrupted(value) is value


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (
            lambda: Stragglers(time_unit=0),
            ValueError,
            "`time_unit` must be > 0.0, got time_unit=0.0.",
        ),
        (
            lambda: Stragglers(profile=[1.0]),
            TypeError,
            "`profile` must be a theory.WorkerProfile or None, got list.",
        ),
        (
            lambda: Stragglers(delays={0: -1.0}),
            ValueError,
            "`delays[0]` must be >= 0.0, got delays[0]=-1.0.",
        ),
        (
            lambda: Stragglers(failing=[-1]),
            ValueError,
            "`failing` must be >= 0, got failing=-1.",
        ),
        (
            lambda: Stragglers(dying=[1.5]),
            TypeError,
            "`dying` must be an integer, got float 1.5.",
        ),
        (
            lambda: Stragglers(profile=WorkerProfile.homogeneous(2, a=1, mu=1)).sample(
                3
            ),
            ValueError,
            "`stragglers.profile` describes 2 workers, fewer than n=3: give a "
            "profile with one entry per worker, or run on 2 workers (`n`).",
        ),
        (
            lambda: Stragglers(dying=[4]).sample(3),
            ValueError,
            "`stragglers` names worker 4, but n=3.",
        ),
        (lambda: Stragglers().sample(0), ValueError, "`n` must be >= 1, got n=0."),
        (
            lambda: Stragglers(corrupt={0: 0.0}),
            ValueError,
            "`corrupt[0]` must be > 0.0, got corrupt[0]=0.0.",
        ),
        (
            lambda: Stragglers(corrupt={3: 1e-3}).sample(3),
            ValueError,
            "`stragglers` names worker 3, but n=3.",
        ),
    ],
)
def test_input_validation(build, error, message):
    with pytest.raises(error, match=re.escape(message)):
        build()
