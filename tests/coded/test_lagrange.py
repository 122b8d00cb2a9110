"""Lagrange coded computing: exact f over GF(p) from any R results, wrong ones fixed,
any T workers see uniformly random shares."""

import itertools

import numpy as np
import pytest
import scipy.stats
from hypothesis import given
from hypothesis import strategies as st

from coded.codes import DEFAULT_PRIME, LagrangeCode
from coded.codes._fields import galois_field, inverse_mod
from coded.errors import DecodingError, InconsistentResultsError

P = DEFAULT_PRIME


def _polynomial(degree):
    """A polynomial of exactly `degree` in the entries (and a matrix product)."""
    if degree == 2:
        return lambda X: X.T @ X + 3 * X.T
    return lambda X: X**degree + 2 * X


@st.composite
def lagrange_setups(draw):
    K = draw(st.integers(1, 3))
    T = draw(st.integers(0, 2))
    degree = draw(st.integers(1, 3))
    S = draw(st.integers(0, 2))
    A = draw(st.integers(0, 2))
    threshold = (K + T - 1) * degree + 1
    code = LagrangeCode(threshold + S + 2 * A, K=K, degree=degree, T=T, field=P)
    shape = (draw(st.integers(1, 3)),) * 2  # square: X.T @ X keeps the shape
    seed = draw(st.integers(0, 2**32 - 1))
    return code, S, A, shape, seed


@given(setup=lagrange_setups(), data=st.data())
def test_f_is_decoded_exactly_despite_stragglers_and_wrong_workers(setup, data):
    code, S, A, shape, seed = setup
    rng = np.random.default_rng(seed)
    parts = [rng.integers(-50, 50, size=shape) for _ in range(code.K)]
    f = _polynomial(code.degree)
    shares = code.encode(parts, rng=rng)
    stragglers = data.draw(
        st.lists(st.integers(0, code.n - 1), max_size=S, unique=True), label="S"
    )
    kept = [i for i in range(code.n) if i not in stragglers]
    wrong = data.draw(
        st.lists(st.sampled_from(kept), max_size=A, unique=True), label="wrong"
    )
    results = {i: code.evaluate(f, shares[i]) for i in kept}
    for i in wrong:
        results[i] = (results[i] + 1 + rng.integers(0, P - 1, size=shape)) % P
    decoded = code.decode(results, wrong=A)
    GF = galois_field(P)
    for part, got in zip(parts, decoded, strict=True):
        expected = np.asarray(f(GF(np.mod(part, P))).view(np.ndarray))
        np.testing.assert_array_equal(got, expected)


def test_recovery_threshold_matches_the_paper():
    code = LagrangeCode(12, K=4, degree=2, T=1, field=P)
    assert code.recovery_threshold == (4 + 1 - 1) * 2 + 1
    assert code.tolerance(wrong=1) == 12 - 9 - 2  # S = 1 straggler with A = 1


def test_fewer_than_the_threshold_raise_with_counts():
    code = LagrangeCode(6, K=2, degree=2, field=P)
    shares = code.encode([np.ones((2, 2), dtype=np.int64)] * 2, rng=0)
    results = {i: code.evaluate(lambda X: X @ X, shares[i]) for i in range(2)}
    with pytest.raises(DecodingError, match=r"need .* = 3 results, got 2"):
        code.decode(results)


def test_too_many_wrong_results_are_refused_not_miscorrected():
    code = LagrangeCode(7, K=2, degree=1, field=P)  # R = 2: distance 6
    shares = code.encode([np.arange(4).reshape(2, 2)] * 2, rng=0)
    results = {i: code.evaluate(lambda X: X, shares[i]) for i in range(7)}
    for i in (0, 1, 2):  # three wrong, wrong=1 claimed, 2 + 2 + 3 <= 7
        results[i] = (results[i] + i + 1) % P
    with pytest.raises(InconsistentResultsError) as info:
        code.decode(results, wrong=1)
    assert set(info.value.suspect_workers) >= {0, 1, 2}


def test_any_t_workers_padding_block_is_invertible():
    """Privacy, executable: u(alpha_W) = data + M_W Z with M_W invertible."""
    code = LagrangeCode(9, K=2, degree=2, T=3, field=P)
    padding = code._encoder[:, code.K :]
    for workers in itertools.combinations(range(code.n), code.T):
        inverse_mod(padding[list(workers)], P)  # raises if singular


def test_t_workers_shares_are_uniform_whatever_the_data():
    """Chi-square over GF(13): one worker's share of two datasets, 4000 encodings."""
    p, draws = 13, 4000
    code = LagrangeCode(3, K=1, degree=1, T=1, field=p)
    rng = np.random.default_rng(0)
    for value in (0, 7):
        data = [np.array([value])]
        shares = np.array([code.encode(data, rng=rng)[2][0] for _ in range(draws)])
        counts = np.bincount(shares, minlength=p)
        assert scipy.stats.chisquare(counts).pvalue > 1e-3


def test_reals_decode_close_and_refuse_privacy_and_correction():
    code = LagrangeCode(6, K=2, degree=2, field=None)
    rng = np.random.default_rng(1)
    parts = [rng.standard_normal((3, 3)) for _ in range(2)]
    shares = code.encode(parts)
    results = {i: code.evaluate(lambda X: X.T @ X, shares[i]) for i in (0, 2, 3, 5)}
    decoded = code.decode(results)
    for part, got in zip(parts, decoded, strict=True):
        np.testing.assert_allclose(got, part.T @ part, atol=1e-9)
    with pytest.raises(ValueError, match="`wrong` > 0 needs a code over GF"):
        code.decode(results, wrong=1)
    with pytest.raises(ValueError, match="`T` must be 0 over the reals"):
        LagrangeCode(6, K=2, degree=1, T=1, field=None)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"n": 2, "K": 2, "degree": 2}, ValueError, "at least the recovery threshold"),
        ({"n": 4, "K": 2, "degree": 0}, ValueError, "degree"),
        ({"n": 10, "K": 2, "degree": 1, "field": 7}, ValueError, "n \\+ K \\+ T"),
    ],
)
def test_bad_parameters_are_named(kwargs, error, match):
    with pytest.raises(error, match=match):
        LagrangeCode(**kwargs)


def test_parts_must_be_k_arrays_of_one_shape():
    code = LagrangeCode(5, K=2, degree=1)
    with pytest.raises(ValueError, match="K=2 arrays"):
        code.encode([np.ones(2)])
    with pytest.raises(ValueError, match="one shape"):
        code.encode([np.ones(2, dtype=int), np.ones(3, dtype=int)])
    with pytest.raises(TypeError, match="integer arrays"):
        code.encode([np.ones(2), np.ones(2)])
