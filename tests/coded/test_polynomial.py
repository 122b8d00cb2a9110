"""PolynomialCode: any p_a * p_b of n products decode A @ B; fewer do not."""

import itertools
import re

import galois
import numpy as np
import pytest
from _codes_support import assert_close_real, assert_worst_condition_search_options
from hypothesis import given
from hypothesis import strategies as st

from coded.codes import DEFAULT_PRIME, PolynomialCode
from coded.codes._polynomial import _chebyshev_worst, _stored_products
from coded.errors import DecodingError
from coded.testing import matrices, polynomial_codes

BIG_PRIME = 2_147_483_647


def _draw_instance(data, code, field):
    rows = data.draw(st.integers(1, 2))
    width = data.draw(st.integers(1, 2))
    d = data.draw(st.integers(1, 4))
    A = data.draw(matrices((code.p_a * rows, d), field=field))
    B = data.draw(matrices((d, code.p_b * width), field=field))
    return A, B


@pytest.mark.parametrize("field", [None, DEFAULT_PRIME, BIG_PRIME])
@given(data=st.data())
def test_any_threshold_subset_decodes(field, data):
    max_n = 6 if field == BIG_PRIME else 10
    code = data.draw(polynomial_codes(max_n=max_n, field=field), label="code")
    A, B = _draw_instance(data, code, field)
    K = code.recovery_threshold
    workers = sorted(data.draw(st.permutations(range(code.n)))[:K])
    pairs = code.encode(A, B)
    # residue products near 2^31 overflow int64: multiply modulo p
    C = code.decode({i: code.multiply(*pairs[i]) for i in workers})
    if field is None:
        assert_close_real(C, A @ B, np.linalg.cond(code.generator[workers]))
    else:
        assert C.dtype == np.int64
        np.testing.assert_array_equal(C, A @ B)


@pytest.mark.parametrize("field", [None, DEFAULT_PRIME])
@given(data=st.data())
def test_fewer_than_threshold_raise(field, data):
    code = data.draw(polynomial_codes(max_n=8, field=field), label="code")
    A, B = _draw_instance(data, code, field)
    K = code.recovery_threshold
    workers = data.draw(st.permutations(range(code.n)))[: K - 1]
    assert not code.is_decodable(workers)
    assert code.is_decodable(data.draw(st.permutations(range(code.n)))[:K])
    enc = code.encode_operands(A, B)
    results = {i: code.multiply(enc.lefts[i], enc.right(i)) for i in workers}
    with pytest.raises(
        DecodingError, match=re.escape(f"need p_a*p_b={K} results, got {K - 1}.")
    ):
        code.decode_results(enc, results)


@pytest.mark.parametrize(("n", "p_a", "p_b"), [(4, 2, 2), (5, 1, 3), (6, 3, 2)])
def test_every_subset_over_gf_exhaustive_with_padding(n, p_a, p_b):
    # odd shapes exercise the padding of encode_operands
    code = PolynomialCode(n, p_a, p_b, field=DEFAULT_PRIME)
    rng = np.random.default_rng(5)
    A, B = rng.integers(-20, 21, (5, 3)), rng.integers(-20, 21, (3, 4))
    enc = code.encode_operands(A, B)
    results = {i: code.multiply(enc.lefts[i], enc.right(i)) for i in range(n)}
    for K in range(1, n + 1):
        for workers in itertools.combinations(range(n), K):
            sub = {i: results[i] for i in workers}
            if p_a * p_b <= K:
                np.testing.assert_array_equal(code.decode_results(enc, sub), A @ B)
            else:
                with pytest.raises(DecodingError):
                    code.decode_results(enc, sub)


def test_gf_coded_factors_match_the_polynomial_definition():
    GF = galois.GF(DEFAULT_PRIME)
    code = PolynomialCode(5, 2, 2, field=GF)
    rng = np.random.default_rng(9)
    A = GF(rng.integers(0, DEFAULT_PRIME, (4, 3)))
    B = GF(rng.integers(0, DEFAULT_PRIME, (3, 2)))
    pairs = code.encode(A, B)
    for i, (A_i, B_i) in enumerate(pairs):
        x = GF(int(code.points[i]))
        assert np.array_equal(A_i, A[:2] + A[2:] * x)
        assert np.array_equal(B_i, B[:, :1] + B[:, 1:] * x**2)
    C = code.decode({i: pairs[i][0] @ pairs[i][1] for i in (4, 0, 2, 1)})
    assert type(C) is GF
    assert np.array_equal(C, A @ B)


def test_real_points_are_chebyshev():
    code = PolynomialCode(6, 2, 3, construction="chebyshev")
    expected = np.cos((2 * np.arange(6) + 1) * np.pi / 12)
    np.testing.assert_allclose(code.points, expected)
    T = np.polynomial.chebyshev.chebvander(expected, 5)
    # worker i multiplies sum_j T_j(x_i) A_j by sum_k T_(2k)(x_i) B_k
    np.testing.assert_allclose(code.generator[:, 3], T[:, 1] * T[:, 2])
    assert PolynomialCode(9, 2, 2, construction="product").points is None


STORED = sorted(_stored_products())


def test_targets_worst_case_is_at_most_half_the_orthogonal_polynomial_code():
    # orthogonal-polynomial (Fahim & Cadambe) figures: 617, 2521, 36.5, 4.9e5
    targets = {(9, 2, 2): 308, (12, 3, 3): 1260, (17, 4, 4): 18, (20, 4, 4): 2.45e5}
    for (n, p_a, p_b), target in targets.items():
        code = PolynomialCode(n, p_a, p_b)
        worst = code.worst_condition_number()
        assert code.construction == "product"
        assert worst.exact
        assert worst.value <= target, (n, p_a, p_b, worst.value)


def test_stored_product_codes_match_their_certified_worst_case():
    for n, p_a, p_b in STORED:
        code = PolynomialCode(n, p_a, p_b, construction="product")
        worst = code.worst_condition_number()
        assert worst.exact
        stored = _stored_products()[n, p_a, p_b][0]
        assert worst.value == pytest.approx(stored, rel=1e-9)
        chebyshev = PolynomialCode(n, p_a, p_b, construction="chebyshev")
        default = PolynomialCode(n, p_a, p_b)
        assert default.worst_condition_number().value <= min(
            worst.value, chebyshev.worst_condition_number().value
        )


@given(data=st.data())
def test_any_threshold_subset_of_a_stored_product_code_decodes(data):
    n, p_a, p_b = data.draw(st.sampled_from(STORED), label="code")
    code = PolynomialCode(n, p_a, p_b, construction="product")
    A, B = _draw_instance(data, code, None)
    workers = sorted(data.draw(st.permutations(range(n)))[: p_a * p_b])
    pairs = code.encode(A, B)
    C = code.decode({i: code.multiply(*pairs[i]) for i in workers})
    assert_close_real(C, A @ B, np.linalg.cond(code.generator[workers]))


@pytest.mark.parametrize("construction", ["chebyshev", "monomial"])
@given(data=st.data())
def test_polynomial_constructions_decode_from_any_threshold_subset(construction, data):
    n = data.draw(st.integers(1, 9), label="n")
    p_a = data.draw(st.integers(1, n), label="p_a")
    p_b = data.draw(st.integers(1, n // p_a), label="p_b")
    code = PolynomialCode(n, p_a, p_b, construction=construction)
    A, B = _draw_instance(data, code, None)
    workers = sorted(data.draw(st.permutations(range(n)))[: p_a * p_b])
    pairs = code.encode(A, B)
    C = code.decode({i: code.multiply(*pairs[i]) for i in workers})
    assert_close_real(C, A @ B, np.linalg.cond(code.generator[workers]))


def test_vector_right_operand():
    code = PolynomialCode(4, 3, 1)
    A, x = np.arange(12.0).reshape(6, 2), np.array([1.0, -2.0])
    enc = code.encode_operands(A, x)
    assert enc.rights[0].shape == (2,)
    results = {i: code.multiply(enc.lefts[i], enc.right(i)) for i in (0, 1, 3)}
    C = code.decode_results(enc, results)
    assert C.shape == (6,)
    np.testing.assert_allclose(C, A @ x, atol=1e-10)


VALIDATION = [
    (
        lambda: PolynomialCode(3, 2, 2),
        ValueError,
        "`p_a * p_b` must be <= n, got p_a=2, p_b=2, n=3.",
    ),
    (lambda: PolynomialCode(3, 0, 1), ValueError, "`p_a` must be >= 1, got p_a=0."),
    (
        lambda: PolynomialCode(4, 2, 2, construction="legendre"),
        ValueError,
        "`construction` must be one of ('product', 'chebyshev', 'monomial') or None, "
        "got 'legendre'.",
    ),
    (
        lambda: PolynomialCode(4, 1, 3, construction="product"),
        ValueError,
        '`construction="product"` has no stored vectors for (n, p_a, p_b) = (4, 1, 3)',
    ),
    (
        lambda: PolynomialCode(4, 2, 2, 65537, construction="chebyshev"),
        ValueError,
        "`construction` applies to real codes (field=None)",
    ),
    (lambda: PolynomialCode(3, 1, 1.5), TypeError, "`p_b` must be an integer"),
    (
        lambda: PolynomialCode(8, 2, 2, 7),
        ValueError,
        "`n` must be <= p - 1 = 6 (distinct nonzero evaluation points of GF(7)), "
        "got n=8.",
    ),
    (
        lambda: PolynomialCode(4, 2, 2).encode(np.ones((3, 2)), np.ones((2, 2))),
        ValueError,
        "`A` rows must be divisible by p_a=2 and `B` columns by p_b=2",
    ),
    (
        lambda: PolynomialCode(4, 2, 2).encode(np.ones((2, 2)), np.ones(2)),
        ValueError,
        "(a vector B needs p_b=1)",
    ),
    (
        lambda: PolynomialCode(4, 2, 2).encode_operands(
            np.ones((2, 2)), np.ones((3, 1))
        ),
        ValueError,
        "`A` and `B` must have matching inner dimensions",
    ),
    (
        lambda: PolynomialCode(4, 2, 2, 65537).encode(np.ones((2, 2)), np.ones((2, 2))),
        TypeError,
        "`A` must be an integer array or a galois FieldArray",
    ),
    (
        lambda: PolynomialCode(4, 2, 2).decode({}),
        DecodingError,
        "need p_a*p_b=4 results, got 0.",
    ),
]


@pytest.mark.parametrize(("call", "error", "message"), VALIDATION)
def test_input_validation(call, error, message):
    with pytest.raises(error, match=re.escape(message)):
        call()


@pytest.mark.parametrize(("n", "p_a", "p_b"), [(9, 2, 2), (7, 3, 1), (12, 3, 3)])
def test_worst_condition_number_is_exact_against_brute_force(n, p_a, p_b):
    code = PolynomialCode(n, p_a, p_b)
    K = p_a * p_b
    brute = max(
        np.linalg.cond(code.generator[list(rows)])
        for rows in itertools.combinations(range(n), K)
    )
    worst = code.worst_condition_number()
    assert worst.exact
    assert worst.value == pytest.approx(brute, rel=1e-9)
    searched = code.worst_condition_number(exact_limit=1, samples=50)
    assert not searched.exact
    assert searched.value <= worst.value * (1 + 1e-12)


def test_worst_condition_number_needs_a_real_code():
    with pytest.raises(ValueError, match="defined for real codes"):
        PolynomialCode(5, 2, 2, field=65537).worst_condition_number()


def _whole(message):
    return f"^{re.escape(message)}$"


def test_chebyshev_worst_is_the_brute_force_worst_of_the_chebyshev_products():
    # default_construction's certificate, computed afresh (it is cached per code)
    n, p_a, p_b = 7, 2, 3
    theta = np.arccos(np.cos((2 * np.arange(n) + 1) * np.pi / (2 * n)))
    a = np.cos(np.outer(theta, np.arange(p_a)))  # T_j(x_i)
    b = np.cos(np.outer(theta, p_a * np.arange(p_b)))  # T_(k p_a)(x_i)
    G = np.stack([b[:, k] * a[:, j] for k in range(p_b) for j in range(p_a)], axis=1)
    brute = max(
        np.linalg.cond(G[list(rows)])
        for rows in itertools.combinations(range(n), p_a * p_b)
    )
    assert _chebyshev_worst(n, p_a, p_b) == pytest.approx(brute, rel=1e-9)


def test_coded_factors_and_points_are_read_only():
    code = PolynomialCode(5, 2, 2, construction="chebyshev")
    enc = code.encode_operands(np.ones((4, 3)), np.ones((3, 2)))
    for array in (enc.lefts[0], enc.rights[4], code.points):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 1.0


def test_float32_operands_give_float32_factors():
    code = PolynomialCode(5, 2, 2)
    enc = code.encode_operands(
        np.ones((4, 3), dtype=np.float32), np.ones((3, 2), dtype=np.float32)
    )
    assert enc.lefts[0].dtype == enc.rights[0].dtype == np.float32


def test_encode_and_decode_a_vector_right_operand_over_gf():
    code = PolynomialCode(5, 2, 1, field=DEFAULT_PRIME)
    A, x = np.array([[1, -2], [3, 4], [-5, 6], [7, 8]]), np.array([2, -3])
    pairs = code.encode(A, x)
    assert all(right.shape == (2,) for _, right in pairs)
    products = {i: code.multiply(*pairs[i]) for i in (1, 4)}
    C = code.decode(products)
    assert C.shape == (4,)
    np.testing.assert_array_equal(C, [8, -6, -28, -10])


def test_gf_code_reports_its_construction():
    code = PolynomialCode(5, 2, 2, field=DEFAULT_PRIME)
    assert code.construction == "vandermonde"
    assert repr(code) == "PolynomialCode(n=5, p_a=2, p_b=2, field=65537)"
    assert repr(PolynomialCode(4, 2, 2, construction="monomial")) == (
        "PolynomialCode(n=4, p_a=2, p_b=2, field=None, construction='monomial')"
    )


WHOLE_MESSAGES = [
    (lambda: PolynomialCode(0, 1, 1), ValueError, "`n` must be >= 1, got n=0."),
    (lambda: PolynomialCode(3, 1, 0), ValueError, "`p_b` must be >= 1, got p_b=0."),
    (
        lambda: PolynomialCode(4, 2, 2, DEFAULT_PRIME, construction="chebyshev"),
        ValueError,
        "`construction` applies to real codes (field=None); a code over GF(65537) "
        "uses monomials at 1..n, got construction='chebyshev'.",
    ),
    (
        lambda: PolynomialCode(5, 2, 2, field=DEFAULT_PRIME).worst_condition_number(),
        ValueError,
        "`worst_condition_number` is defined for real codes (field=None), got a code "
        "over GF(65537).",
    ),
    (
        lambda: PolynomialCode(4, 2, 2).encode(np.ones((2, 2)), np.ones((2, 3))),
        ValueError,
        "`A` rows must be divisible by p_a=2 and `B` columns by p_b=2 (a vector B "
        "needs p_b=1), got A.shape=(2, 2), B.shape=(2, 3).",
    ),
]


@pytest.mark.parametrize(("call", "error", "message"), WHOLE_MESSAGES)
def test_whole_messages(call, error, message):
    with pytest.raises(error, match=_whole(message)):
        call()


def test_worst_condition_number_runs_the_generators_search_with_its_options():
    code = PolynomialCode(200, 1, 1)  # one column of ones: every cond is 1
    assert_worst_condition_search_options(code)
