"""Gradient coding on the cluster: exact gradients, baselines, errors, optimisers."""

import time

import numpy as np
import pytest

from coded import (
    ExecutionOptions,
    GradientError,
    NotEnoughResultsError,
    Stragglers,
    coded_gradient_descent,
    gradient_descent,
    place_gradient_data,
)

N = 6
RNG = np.random.default_rng(3)
X = RNG.standard_normal((60, 4))
Y = (RNG.random(60) < 0.5).astype(float)
W = np.array([0.3, -0.2, 0.1, 0.5])


def logistic_grad(part, w):
    Xp, yp = part
    return Xp.T @ (1.0 / (1.0 + np.exp(-Xp @ w)) - yp)


def least_squares_grad(part, w):
    Xp, yp = part
    return Xp.T @ (Xp @ w - yp)


FULL = logistic_grad((X, Y), W)


def _assert_full(gradient):
    np.testing.assert_allclose(gradient, FULL, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    ("scheme", "construction", "s", "lost"),
    [
        ("coded", "stable", 2, [1, 4]),
        ("coded", "cyclic", 1, [5]),
        ("coded", "fractional", 2, [0, 1]),
        ("coded", "stable", 3, [0, 2, 3]),
        ("replication", "stable", 2, [2, 3]),
        ("partial", "stable", 2, [0, 1]),
        ("uncoded", "stable", 2, []),
    ],
)
def test_up_to_s_lost_workers_give_the_exact_gradient(
    client, scheme, construction, s, lost
):
    with place_gradient_data(
        (X, Y),
        logistic_grad,
        client=client,
        scheme=scheme,
        s=s,
        construction=construction,
    ) as placed:
        step = placed.gradient(W, stragglers=Stragglers(failing=lost), timeout=30)
        again = placed.gradient(W)
    _assert_full(step.gradient)
    _assert_full(again.gradient)
    assert step.is_exact
    assert not set(lost) & set(step.used_workers)
    assert set(step.failed_workers) <= set(lost)
    assert step.missing_partitions == ()


@pytest.mark.parametrize(
    ("scheme", "s", "lost"),
    [
        ("coded", 1, [0, 3]),
        ("replication", 1, [2, 3]),
        ("partial", 1, [4, 5]),
        ("uncoded", 2, [4]),
    ],
)
def test_more_than_s_lost_workers_raise_before_the_timeout(client, scheme, s, lost):
    with place_gradient_data(
        (X, Y), logistic_grad, client=client, scheme=scheme, s=s
    ) as placed:
        began = time.perf_counter()
        with pytest.raises(NotEnoughResultsError, match="no decodable set"):
            placed.gradient(W, stragglers=Stragglers(failing=lost), timeout=60)
        assert time.perf_counter() - began < 60


def test_stragglers_are_not_waited_for_and_are_cancelled(client):
    slow = Stragglers(delays={0: 30.0, 3: 30.0})
    with place_gradient_data((X, Y), logistic_grad, client=client, s=2) as placed:
        step = placed.gradient(W, stragglers=slow, timeout=25)
    _assert_full(step.gradient)
    assert set(step.used_workers) == {1, 2, 4, 5}
    assert step.cancelled_tasks == 2
    assert np.isnan(step.finish_seconds[0])


def test_partial_returns_of_slow_workers_count(client):
    # worker 5 is slow but its first partition (5) arrives; workers 3 and 4 never
    # answer, so partition 5 (held by 3, 4, 5) can only come from worker 5
    slow = Stragglers(delays={5: 0.2}, failing=[3, 4])
    with place_gradient_data(
        (X, Y), logistic_grad, client=client, scheme="partial", s=2
    ) as placed:
        step = placed.gradient(W, stragglers=slow, timeout=25)
    _assert_full(step.gradient)
    assert 5 in step.used_workers
    assert step.is_exact


def test_ignore_stragglers_is_inexact_and_names_the_missing_partitions(client):
    slow = Stragglers(delays={1: 30.0, 2: 30.0})
    with place_gradient_data(
        (X, Y), logistic_grad, client=client, scheme="ignore", s=2
    ) as placed:
        step = placed.gradient(W, stragglers=slow, timeout=25)
    assert not step.is_exact
    assert step.missing_partitions == (1, 2)
    kept = np.r_[0:10, 30:60]
    expected = logistic_grad((X[kept], Y[kept]), W) * 60 / 40
    np.testing.assert_allclose(step.gradient, expected, rtol=1e-12)


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        (lambda part, w: np.ones(3), r"worker \d, partition \d: returned shape \(3,\)"),
        (lambda part, w: np.full(4, np.nan), r"partition \d: returned non-finite"),
        (lambda part, w: 1 / 0, r"`grad` failed on worker \d, partition \d"),
    ],
)
def test_a_misbehaving_grad_is_a_named_error(client, bad, match):
    with (
        place_gradient_data((X, Y), bad, client=client, s=1) as placed,
        pytest.raises(GradientError, match=match),
    ):
        placed.gradient(W, timeout=30)


def test_nan_on_one_partition_names_that_partition(client):
    def grad(part, w):
        Xp, _ = part
        return np.full(4, np.nan) if Xp[0, 0] == X[20, 0] else np.ones(4)

    with (
        place_gradient_data((X, Y), grad, client=client, s=1) as placed,
        pytest.raises(GradientError, match="partition 2: returned non-finite"),
    ):
        placed.gradient(W, timeout=30)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"s": 6}, ValueError, "0 <= s < n"),
        ({"s": 3, "construction": "fractional"}, ValueError, "s \\+ 1 to divide n"),
        ({"scheme": "mds"}, ValueError, "`scheme` must be one of"),
        ({"n": 9}, ValueError, "number of workers"),
        ({"grad": "f"}, TypeError, "`grad` must be callable"),
        ({"data": (X, Y[:5])}, ValueError, "same number of rows"),
        ({"data": X[:3]}, ValueError, "at least n=6 rows"),
    ],
)
def test_bad_input(client, kwargs, error, match):
    args = {"data": (X, Y), "grad": logistic_grad, "client": client, **kwargs}
    data, grad = args.pop("data"), args.pop("grad")
    with pytest.raises(error, match=match):
        place_gradient_data(data, grad, **args)


def _least_squares():
    A = np.random.default_rng(5).standard_normal((48, 3))
    b = A @ np.array([1.0, -2.0, 0.5]) + 0.01 * np.arange(48) / 48
    return A, b, np.linalg.lstsq(A, b, rcond=None)[0]


@pytest.mark.parametrize(
    ("momentum", "nesterov"), [(0.0, False), (0.5, False), (0.5, True)]
)
def test_gradient_descent_converges_with_exact_coded_gradients(
    client, momentum, nesterov
):
    A, b, solution = _least_squares()
    seen = []
    result = coded_gradient_descent(
        (A, b),
        least_squares_grad,
        np.zeros(3),
        client=client,
        s=2,
        steps=20,
        step_size=1.0 / np.linalg.norm(A, 2) ** 2,
        momentum=momentum,
        nesterov=nesterov,
        loss=lambda w: 0.5 * np.sum((A @ w - b) ** 2),
        callback=lambda record, w: seen.append(record.step),
        stragglers=Stragglers(failing=[2]),
        rng=0,
    )
    assert seen == list(range(20))
    assert len(result.records) == 20
    np.testing.assert_allclose(result.params, solution, atol=1e-3)
    assert result.losses[-1] < result.initial_loss
    assert all(r.is_exact and 2 not in r.used_workers for r in result.records)
    assert np.all(np.diff(result.elapsed_seconds) > 0)


def test_coded_and_uncoded_iterates_agree_and_hooks_work(client):
    A, b, _ = _least_squares()
    rate = 0.5 / np.linalg.norm(A, 2) ** 2
    results = {}
    for scheme in ("coded", "uncoded", "replication"):
        with place_gradient_data(
            (A, b), least_squares_grad, client=client, scheme=scheme, s=1
        ) as placed:
            results[scheme] = gradient_descent(
                placed, np.zeros(3), steps=5, step_size=rate
            )
            own = gradient_descent(
                placed,
                np.zeros(3),
                steps=10,
                update=lambda w, g, t: w - rate * g,
                callback=lambda record, w: record.step == 2,
            )
    np.testing.assert_allclose(
        results["coded"].params, results["uncoded"].params, rtol=1e-10
    )
    np.testing.assert_allclose(
        results["replication"].params, results["uncoded"].params, rtol=1e-10
    )
    assert len(own.records) == 3
    with pytest.raises(ValueError, match="pass momentum=0"):
        gradient_descent(placed, np.zeros(3), update=lambda w, g, t: w, momentum=0.5)


def _keys_of(dask_scheduler, placement_id):
    return [str(k) for k in dask_scheduler.tasks if placement_id in str(k)]


def test_a_released_placement_refuses_steps(client):
    placed = place_gradient_data((X, Y), logistic_grad, client=client, s=1)
    keys = client.run_on_scheduler(_keys_of, placement_id=placed.placement_id)
    assert len(keys) == N
    placed.release()
    with pytest.raises(ValueError, match="was released"):
        placed.gradient(W)


def test_old_spellings_warn_and_give_the_same_iterates(client):
    A, b, _ = _least_squares()
    rate = 0.5 / np.linalg.norm(A, 2) ** 2
    common = {"client": client, "s": 1, "steps": 3, "stragglers": Stragglers()}
    new = coded_gradient_descent(
        (A, b),
        least_squares_grad,
        np.zeros(3),
        **common,
        step_size=rate,
        options=ExecutionOptions(rng=4),
    )
    with pytest.warns(DeprecationWarning, match=r"use \(data, grad, x0\)"):
        old_order = coded_gradient_descent(
            least_squares_grad, (A, b), np.zeros(3), **common, step_size=rate, rng=4
        )
    with pytest.warns(
        DeprecationWarning, match="`learning_rate` is deprecated.*`step_size`"
    ):
        old_name = coded_gradient_descent(
            (A, b), least_squares_grad, np.zeros(3), **common, learning_rate=rate
        )
    np.testing.assert_allclose(old_order.params, new.params, rtol=1e-12)
    np.testing.assert_allclose(old_name.params, new.params, rtol=1e-12)


def test_gradient_steps_take_execution_options_they_can_honour(client):
    with place_gradient_data((X, Y), logistic_grad, client=client, s=1) as placed:
        step = placed.gradient(
            W, options=ExecutionOptions(stragglers=Stragglers(failing=[3]), rng=0)
        )
        _assert_full(step.gradient)
        assert 3 not in step.used_workers
        with pytest.raises(ValueError, match="`output` must be 'numpy'"):
            placed.gradient(W, output="dask")
        with pytest.raises(ValueError, match="gradient steps have none"):
            gradient_descent(placed, W, verify="correct")
        with pytest.raises(ValueError, match="decodes the groups of a Hierarchical"):
            placed.gradient(W, transport="grouped")
        with pytest.raises(TypeError, match="unexpected keyword arguments \\['lr'\\]"):
            gradient_descent(placed, W, lr=0.1)
        with pytest.raises(TypeError, match=r"both `step_size` and .* `learning_rate`"):
            gradient_descent(placed, W, step_size=0.2, learning_rate=0.1)
