"""The decoder's conditioning guard: wait for extra results, least squares, warn."""

import re
import warnings

import numpy as np
import pytest
from _codes_support import units_of
from hypothesis import assume, given
from hypothesis import strategies as st

from coded.codes import MDSCode, Piece
from coded.errors import IllConditionedWarning, NonFiniteResultError


def _fed_decoder(code, workers, rng, d=5):
    A = rng.standard_normal((code.k * code.subblocks * 3, d))
    x = rng.standard_normal(d)
    encoded = code.encode_operands(A, x)
    decoder = code.decoder(encoded)
    for i in workers:
        value = code.multiply(encoded.lefts[i], encoded.right(i))
        decoder.add(Piece(worker=i, start=0, stop=value.shape[0], value=value))
    return decoder, A @ x


def _cond(code, workers):
    return np.linalg.cond(code.generator[units_of(code, sorted(workers))])


@given(data=st.data())
def test_guard_triggers_exactly_above_the_threshold(data):
    n = data.draw(st.integers(3, 9))
    k = data.draw(st.integers(2, n - 1))
    survivors = data.draw(st.permutations(range(n)))[:k]
    kappa = _cond(MDSCode(n, k), survivors)
    threshold = kappa * data.draw(st.sampled_from([0.5, 0.999, 1.001, 2.0]))
    assume(threshold > 1)
    code = MDSCode(n, k, max_condition=threshold)
    decoder, exact = _fed_decoder(code, survivors, np.random.default_rng(n * k))
    assert decoder.is_decodable
    assert decoder.condition_number == pytest.approx(kappa, rel=1e-9)
    assert decoder.needs_more == (kappa > threshold)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        C = decoder.decode()
    assert any(issubclass(w.category, IllConditionedWarning) for w in caught) == (
        kappa > threshold
    )
    tol = 1e3 * np.finfo(float).eps * kappa * np.abs(exact).max()
    np.testing.assert_allclose(C, exact, rtol=0, atol=tol)


@given(data=st.data())
def test_least_squares_over_extra_results_equals_the_product(data):
    n = data.draw(st.integers(4, 9))
    k = data.draw(st.integers(2, n - 2))
    order = data.draw(st.permutations(range(n)))
    extra = data.draw(st.integers(1, n - k))
    code = MDSCode(n, k, max_condition=1.0 + 1e-9)  # square systems are above
    assume(_cond(code, order[:k]) > code.max_condition)  # (unless orthogonal)
    decoder, exact = _fed_decoder(code, order[: k + extra], np.random.default_rng(n))
    # extra results are taken while the system stays above the guard, and used
    # (least squares) when that lowers the condition number
    used, rest = divmod(decoder.units_used, code.subblocks)
    assert rest == 0
    assert k <= used <= k + extra
    kappa = decoder.condition_number
    assert kappa <= _cond(code, sorted(order[: k + extra])[:k]) * (1 + 1e-9)
    if used > k:
        assert kappa == pytest.approx(_cond(code, order[:used]), rel=1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IllConditionedWarning)
        C = decoder.decode()
    tol = 1e3 * np.finfo(float).eps * kappa * np.abs(exact).max()
    np.testing.assert_allclose(C, exact, rtol=0, atol=tol)


def test_the_warning_carries_the_condition_number():
    code = MDSCode(6, 4, max_condition=1.5)
    decoder, _ = _fed_decoder(code, [0, 1, 2, 3], np.random.default_rng(1))
    kappa = _cond(code, [0, 1, 2, 3])  # numpy's, not the decoder's own figure
    assert kappa > 1.5
    with pytest.warns(IllConditionedWarning, match="max_condition=1.5") as record:
        decoder.decode()
    assert record[0].message.condition_number == pytest.approx(kappa, rel=1e-9)


def test_one_extra_result_lowers_the_condition_number():
    code = MDSCode(8, 5, max_condition=2.0)
    worst = code.worst_condition_number()
    rng = np.random.default_rng(3)
    decoder, _ = _fed_decoder(code, worst.survivors, rng)
    rest = [i for i in range(8) if i not in worst.survivors]
    better, _ = _fed_decoder(code, [*worst.survivors, rest[0]], rng)
    assert decoder.condition_number == pytest.approx(worst.value, rel=1e-9)
    assert better.condition_number < decoder.condition_number


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        (1.0, ValueError, "`max_condition` must be > 1 (a condition number is >= 1)"),
        (0.5, ValueError, "`max_condition` must be > 1"),
        (float("nan"), ValueError, "`max_condition` must be > 1"),
        (True, TypeError, "`max_condition` must be a real number, got bool."),
        ("1e6", TypeError, "`max_condition` must be a real number, got str."),
    ],
)
def test_bad_thresholds_are_rejected(value, error, message):
    with pytest.raises(error, match=re.escape(message)):
        MDSCode(5, 3, max_condition=value)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_results_raise_a_named_error_naming_the_worker(bad):
    code = MDSCode(5, 3)
    encoded = code.encode_operands(np.ones((12, 2)), np.ones(2))
    decoder = code.decoder(encoded)
    value = code.multiply(encoded.lefts[2], encoded.right(2)).copy()
    value[1] = bad
    with pytest.raises(NonFiniteResultError, match="worker 2 returned") as info:
        decoder.add(Piece(worker=2, start=0, stop=value.shape[0], value=value))
    assert info.value.worker == 2


def test_guard_off_with_infinite_threshold():
    code = MDSCode(6, 3, max_condition=float("inf"))
    decoder, _ = _fed_decoder(code, [3, 4, 5], np.random.default_rng(2))
    assert not decoder.needs_more
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        decoder.decode()
