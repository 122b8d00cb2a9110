"""The decoder's conditioning guard on Dask: wait for extra results, or warn."""

import numpy as np
import pytest

from coded import IllConditionedWarning, MDSCode, Stragglers, coded_matmul
from coded.errors import NonFiniteResultError

RNG = np.random.default_rng(16)
A, X = RNG.standard_normal((24, 5)), RNG.standard_normal(5)


def test_guard_waits_for_extra_results_and_decodes_by_least_squares(client):
    # every square system is above this threshold: the run waits for all six
    # results, and least squares over them has condition number 1
    code = MDSCode(6, 3, max_condition=1.0 + 1e-9)
    slow = Stragglers(delays={4: 0.3, 5: 0.3})
    result = coded_matmul(A, X, scheme=code, client=client, stragglers=slow)
    np.testing.assert_allclose(result.product, A @ X, rtol=1e-12, atol=1e-12)
    assert result.used_workers == (0, 1, 2, 3, 4, 5)
    assert result.units_used == 6 * code.subblocks
    assert result.condition_number == pytest.approx(1.0)


def test_default_guard_decodes_from_the_first_k_results(client):
    code = MDSCode(6, 3)
    slow = Stragglers(delays={4: 30.0, 5: 30.0})
    result = coded_matmul(A, X, scheme=code, client=client, stragglers=slow)
    np.testing.assert_allclose(result.product, A @ X, rtol=1e-10, atol=1e-10)
    assert not {4, 5} & set(result.used_workers)  # the stragglers were not awaited
    assert result.units_used == 3 * code.subblocks
    assert 1 <= result.condition_number <= code.worst_condition_number().value


def test_guard_decodes_and_warns_at_the_timeout(client):
    code = MDSCode(6, 3, max_condition=1.0 + 1e-9)
    slow = Stragglers(delays={5: 30.0})
    with pytest.warns(IllConditionedWarning, match="max_condition") as record:
        result = coded_matmul(
            A, X, scheme=code, client=client, stragglers=slow, timeout=2.0
        )
    np.testing.assert_allclose(result.product, A @ X, rtol=1e-10, atol=1e-10)
    assert 5 not in result.used_workers
    kappa = record[0].message.condition_number
    assert kappa == pytest.approx(result.condition_number)
    assert kappa > code.max_condition


def test_float32_operands_give_a_float32_product(client):
    code = MDSCode(6, 3)
    A32, X32 = A.astype(np.float32), X.astype(np.float32)
    assert {share.dtype for share in code.encode_operands(A32, X32).lefts} == {
        np.dtype(np.float32)
    }
    result = coded_matmul(A32, X32, scheme=code, client=client)
    assert result.product.dtype == np.float32
    exact = A32.astype(np.float64) @ X32.astype(np.float64)
    scale = (np.abs(A32) @ np.abs(X32)).max()
    tol = 100 * result.condition_number * np.finfo(np.float32).eps * scale
    np.testing.assert_allclose(result.product, exact, rtol=0, atol=tol)


def test_a_worker_product_that_overflows_raises_naming_the_worker(client):
    # finite float32 operands whose products exceed float32: inf on the workers
    A32 = np.full((6, 2), 1e30, dtype=np.float32)
    x32 = np.full(2, 1e10, dtype=np.float32)
    with pytest.raises(NonFiniteResultError, match=r"worker \d returned") as info:
        coded_matmul(A32, x32, scheme=MDSCode(6, 3), client=client, timeout=30)
    assert 0 <= info.value.worker < 6
