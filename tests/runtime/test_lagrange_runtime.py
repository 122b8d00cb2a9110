"""Lagrange coded computing on Dask: stragglers, lost and wrong workers at once."""

import numpy as np
import pytest

from coded import InconsistentResultsError, LocalCodedCluster, Stragglers, lagrange_map
from coded.codes._fields import galois_field

pytestmark = pytest.mark.runtime
P = 65537


def _gram(X):
    return X.T @ X + 2 * X


def _expected(parts):
    GF = galois_field(P)
    return [np.asarray(_gram(GF(np.mod(x, P))).view(np.ndarray)) for x in parts]


@pytest.fixture(scope="module")
def twelve():
    with LocalCodedCluster(n_workers=12) as cluster:
        yield cluster.client


def test_k4_t1_degree2_on_12_tolerates_a_straggler_and_an_adversary(twelve):
    rng = np.random.default_rng(0)
    parts = [rng.integers(-30, 30, (3, 3)) for _ in range(4)]
    faults = Stragglers(delays={5: 2.0}, corrupt={8: 1e-3})
    result = lagrange_map(
        parts, _gram, degree=2, T=1, wrong=1, client=twelve, stragglers=faults
    )
    assert result.recovery_threshold == 9
    for got, want in zip(result.values, _expected(parts), strict=True):
        np.testing.assert_array_equal(got, want)


def test_a_lost_worker_is_a_straggler_that_never_returns(twelve):
    parts = [np.full((2, 2), j) for j in range(4)]
    result = lagrange_map(
        parts, _gram, degree=2, T=1, client=twelve, stragglers=Stragglers(dying=[0])
    )
    for got, want in zip(result.values, _expected(parts), strict=True):
        np.testing.assert_array_equal(got, want)


def test_more_wrong_results_than_declared_are_refused(twelve):
    parts = [np.full((2, 2), j) for j in range(4)]
    faults = Stragglers(corrupt={1: 1e-3, 2: 1e-3, 3: 1e-3, 4: 1e-3})
    with pytest.raises(InconsistentResultsError):
        lagrange_map(
            parts, _gram, degree=2, T=1, wrong=1, client=twelve, stragglers=faults
        )


def test_a_degree_the_workers_cannot_meet_is_named(twelve):
    parts = [np.ones((2, 2), dtype=int)] * 4
    with pytest.raises(ValueError, match="at least the recovery threshold"):
        lagrange_map(parts, _gram, degree=4, T=1, client=twelve)
    with pytest.raises(ValueError, match=r"n >= \(K \+ T - 1\) degree \+ 1 \+ 2 wrong"):
        lagrange_map(parts, _gram, degree=2, T=1, wrong=2, client=twelve)


def test_the_old_function_first_order_warns(twelve):
    parts = [np.full((2, 2), j) for j in range(4)]
    with pytest.warns(DeprecationWarning, match=r"use \(parts, f\)"):
        result = lagrange_map(_gram, parts, degree=2, client=twelve)
    for got, want in zip(result.values, _expected(parts), strict=True):
        np.testing.assert_array_equal(got, want)
