"""Lagrange coded computing: exact f over GF(p) from any R results, wrong ones fixed,
any T workers see uniformly random shares."""

import itertools
import re

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


def _whole(message):
    return f"^{re.escape(message)}$"


def test_real_points_are_chebyshev_and_an_asymmetric_set_decodes():
    code = LagrangeCode(6, K=2, degree=2, field=None)
    np.testing.assert_allclose(code.betas, np.cos(np.pi * np.array([0.25, 0.75])))
    np.testing.assert_allclose(code.alphas, np.cos(np.pi * np.arange(6) / 5))
    np.testing.assert_allclose(
        LagrangeCode(2, K=1, degree=1, field=None).alphas, [1, -1]
    )
    rng = np.random.default_rng(2)
    parts = [rng.standard_normal((2, 2)) for _ in range(2)]
    shares = code.encode(parts)
    # u(z) = X_1 + (X_2 - X_1) (z - beta_1) / (beta_2 - beta_1), a line
    b1, b2 = code.betas
    for alpha, share in zip(code.alphas, shares, strict=True):
        line = parts[0] + (parts[1] - parts[0]) * (alpha - b1) / (b2 - b1)
        np.testing.assert_allclose(share, line, atol=1e-12)
    results = {i: code.evaluate(lambda X: X @ X, shares[i]) for i in (0, 1, 2, 4)}
    for part, got in zip(parts, code.decode(results), strict=True):
        np.testing.assert_allclose(got, part @ part, atol=1e-9)


def test_gf_points_follow_the_data_points():
    code = LagrangeCode(4, K=2, degree=1, T=1, field=P)
    assert code.betas.tolist() == [1, 2, 3]
    assert code.alphas.tolist() == [4, 5, 6, 7]
    assert len(code.encode([np.ones(2, dtype=int)] * 2, rng=0)) == 4


def test_points_fit_gf_p_up_to_its_last_nonzero_element():
    assert LagrangeCode(4, K=2, degree=1, field=7).alphas.tolist() == [3, 4, 5, 6]
    message = (
        "`n + K + T` must be <= p - 1 = 6 (distinct nonzero evaluation points of "
        "GF(7)), got n + K + T=7."
    )
    with pytest.raises(ValueError, match=_whole(message)):
        LagrangeCode(5, K=2, degree=1, field=7)


def test_repr_names_every_parameter():
    assert repr(LagrangeCode(8, K=2, degree=2, T=1, field=P)) == (
        "LagrangeCode(n=8, K=2, degree=2, T=1, field=65537)"
    )
    assert repr(LagrangeCode(3, K=2, degree=1, field=None)) == (
        "LagrangeCode(n=3, K=2, degree=1, T=0, field=None)"
    )


def test_tolerance_counts_two_workers_per_wrong_result():
    code = LagrangeCode(12, K=2, degree=2, field=P)  # R = 3
    assert code.tolerance() == 9
    assert code.tolerance(wrong=2) == 5


def test_padding_is_drawn_from_the_given_seed():
    code = LagrangeCode(5, K=1, degree=1, T=2, field=P)
    parts = [np.arange(6).reshape(2, 3)]
    first, again = code.encode(parts, rng=5), code.encode(parts, rng=5)
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
    other = code.encode(parts, rng=6)
    assert any(not np.array_equal(a, b) for a, b in zip(first, other, strict=True))


def test_evaluate_returns_float64_or_int64_residues():
    real = LagrangeCode(3, K=1, degree=1, field=None)
    share = real.encode([np.ones(2)])[0]
    assert real.evaluate(lambda X: np.ones(X.shape, dtype=int), share).dtype == (
        np.float64
    )
    code = LagrangeCode(3, K=1, degree=1, field=P)  # galois stores GF(P) in uint32
    value = code.evaluate(lambda X: X * X, code.encode([np.array([3, P - 1])])[0])
    assert value.dtype == np.int64


def test_field_array_results_decode():
    code = LagrangeCode(5, K=2, degree=2, field=P)
    parts = [np.array([[1, 2], [3, 4]]), np.array([[5, -6], [7, 8]])]
    shares = code.encode(parts)
    GF = galois_field(P)
    results = {i: GF(code.evaluate(lambda X: X @ X, shares[i])) for i in (0, 2, 4)}
    decoded = code.decode(results)
    for part, got in zip(parts, decoded, strict=True):
        np.testing.assert_array_equal(got, np.mod(part @ part, P))


def test_decode_needs_two_more_results_per_wrong_one():
    code = LagrangeCode(7, K=2, degree=1, field=P)  # R = 2
    shares = code.encode([np.ones(2, dtype=int)] * 2)
    results = {i: code.evaluate(lambda X: X, shares[i]) for i in range(3)}
    message = (
        "need (K + T - 1) degree + 1 + 2 wrong = 4 results, got 3 (from workers "
        "[0, 1, 2])."
    )
    with pytest.raises(DecodingError, match=_whole(message)):
        code.decode(results, wrong=1)


WHOLE_MESSAGES = [
    (lambda: LagrangeCode(0, K=1, degree=1), "`n` must be >= 1, got n=0."),
    (lambda: LagrangeCode(3, K=0, degree=1), "`K` must be >= 1, got K=0."),
    (lambda: LagrangeCode(3, K=1, degree=0), "`degree` must be >= 1, got degree=0."),
    (lambda: LagrangeCode(3, K=1, degree=1, T=-1), "`T` must be >= 0, got T=-1."),
    (
        lambda: LagrangeCode(3, K=1, degree=1, T=1, field=None),
        "`T` must be 0 over the reals, got T=1: random real padding does not hide "
        "the data information-theoretically; use a prime `field` for privacy.",
    ),
    (
        lambda: LagrangeCode(3, K=2, degree=1).encode([np.ones(2)]),
        "`parts` must be a sequence of K=2 arrays, got list of length 1.",
    ),
    (
        lambda: LagrangeCode(3, K=2, degree=1).encode(np.ones((2, 2), dtype=int)),
        "`parts` must be a sequence of K=2 arrays, got ndarray of length 2.",
    ),
    (
        lambda: LagrangeCode(3, K=2, degree=1).encode([np.ones(2), np.ones(3)]),
        "`parts` must be non-empty arrays of one shape, got shapes [(2,), (3,)].",
    ),
    (
        lambda: LagrangeCode(3, K=1, degree=1).encode([np.ones(2)]),
        "`parts` must be integer arrays over GF(p).",
        TypeError,
    ),
    (
        lambda: LagrangeCode(3, K=1, degree=1).decode({0: 1, 1: 1}, wrong=-1),
        "`wrong` must be >= 0, got wrong=-1.",
    ),
    (
        lambda: LagrangeCode(3, K=1, degree=1, field=None).decode({0: 1}, wrong=1),
        "`wrong` > 0 needs a code over GF(p): over the reals the rounding of a "
        "user's f has no bound to check against.",
    ),
    (
        lambda: LagrangeCode(3, K=1, degree=1).decode({0: 1, 3: 1}),
        "`worker` must be <= 2, got worker=3.",
    ),
    (
        lambda: LagrangeCode(3, K=1, degree=1).decode({-1: 1, 0: 1}),
        "`worker` must be >= 0, got worker=-1.",
    ),
]


@pytest.mark.parametrize("case", WHOLE_MESSAGES)
def test_whole_messages(case):
    call, message, *error = case  # ValueError unless named
    with pytest.raises(error[0] if error else ValueError, match=_whole(message)):
        call()
