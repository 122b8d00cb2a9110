"""Exact decodes at the edges of their arithmetic, drawn by coded.testing's strategies.

The signed output of a GF(p) decode is ``lift``: residues above ``p // 2`` map to
negatives, so the results ``+-(p - 1)/2`` (and the input bound ``2 max|C| < p``)
are where an off-by-one would return a wrong answer. The CRT code of ExactCode has
the same edges for each prime count.
"""

import itertools
import math
import re

import galois
import numpy as np
import pytest
from _codes_support import assert_close_real, worker_results
from hypothesis import given, settings
from hypothesis import strategies as st

from coded.codes import ExactCode, MDSCode, PolynomialCode
from coded.codes._crt import exact_primes
from coded.testing import (
    boundary_operands,
    crt_boundary_operands,
    dynamic_range_matrices,
    exact_operands,
    field_boundaries,
    worst_erasure_patterns,
)

P = 65537
HALF = (P - 1) // 2  # 32768: 2 * HALF < P, the largest exact signed result
EDGES = [0, 1, -1, HALF - 1, -(HALF - 1), HALF, -HALF]


def _decode(code, A, B, survivors):
    encoded = code.encode_operands(A, B)
    return code.decode_results(encoded, worker_results(code, encoded, survivors))


@pytest.mark.parametrize("systematic", [True, False])
def test_signed_decode_returns_the_field_edges_exactly(systematic):
    # C = A @ [1] holds every edge of [-(p - 1)/2, (p - 1)/2]; d max|A| max|B| =
    # 32768 = (p - 1)/2 is the largest bound the code accepts
    code = MDSCode(5, 3, field=P, systematic=systematic)
    A = np.array([*EDGES, 0, 0], dtype=np.int64).reshape(-1, 1)  # 9 rows, 3 blocks
    for survivors in itertools.combinations(range(5), 3):
        C = _decode(code, A, np.array([1]), survivors)
        assert C.dtype == np.int64
        assert C.tolist() == [*EDGES, 0, 0], survivors


def test_signed_decode_of_a_product_at_the_edge():
    # 2 * 128 * 128 = 32768: an inner sum reaching (p - 1)/2 from both signs
    code = MDSCode(5, 3, field=P)
    A = np.array([[128, 128], [-128, -128], [128, -128]], dtype=np.int64)
    B = np.array([[128, -128], [128, -128]], dtype=np.int64)
    C = _decode(code, A, B, (0, 3, 4))
    assert C.tolist() == [[HALF, -HALF], [-HALF, HALF], [0, 0]]


def test_one_beyond_the_signed_range_is_refused():
    code = MDSCode(5, 3, field=P)
    with pytest.raises(
        ValueError, match=r"exact integer results need 2 \* max\|C\| < p"
    ):
        code.encode_operands(np.array([[HALF + 1]]), np.array([1]))
    with pytest.raises(
        ValueError, match=r"= 32769, so p must exceed 65538, got p=65537"
    ):
        code.encode_operands(np.array([[HALF + 1], [0], [0]]), np.array([1]))
    # the bound is d max|A| max|B|: 2 * 16384 is accepted, 2 * 16385 is not
    A = np.array([[16384, 16384]])
    assert _decode(code, A, np.array([1, 1]), (0, 1, 2)).tolist() == [HALF]
    with pytest.raises(ValueError, match=r"= 32770, so p must exceed 65540"):
        code.encode_operands(np.array([[16384, 16385]]), np.array([1, 1]))


def test_the_signed_bound_is_strict_at_p_2():
    # over GF(2) the only signed result is 0: |C| = 1 gives 2 max|C| = p, refused
    code = MDSCode(1, 1, field=2)
    assert _decode(code, np.array([[0]]), np.array([1]), (0,)).tolist() == [0]
    with pytest.raises(ValueError, match=r"p must exceed 2, got p=2"):
        code.encode_operands(np.array([[-1]]), np.array([1]))


@given(x=field_boundaries(P), data=st.data())
def test_any_signed_value_survives_any_k_of_n(x, data):
    code = MDSCode(4, 2, field=P)
    survivors = data.draw(st.permutations(range(4)))[:2]
    C = _decode(code, np.array([[x], [-x]]), np.array([1]), survivors)
    assert C.tolist() == [x, -x]


@given(pair=boundary_operands(P), data=st.data())
def test_mds_decodes_products_at_the_field_limit(pair, data):
    A, B = pair
    n = data.draw(st.integers(1, 6))
    code = MDSCode(n, data.draw(st.integers(1, n)), field=P)
    survivors = data.draw(st.permutations(range(n)))[: code.k]
    C = _decode(code, A, B, survivors)
    expected = A @ B
    assert abs(int(expected.flat[0])) == HALF
    assert C.tolist() == expected.tolist()


@given(pair=boundary_operands(P, max_size=3), data=st.data())
def test_polynomial_code_decodes_products_at_the_field_limit(pair, data):
    A, B = pair
    code = PolynomialCode(5, 2, 2, field=P)
    survivors = data.draw(st.permutations(range(5)))[:4]
    assert _decode(code, A, B, survivors).tolist() == (A @ B).tolist()


def _big_product(A, B):
    return (A.astype(object) @ B.astype(object)).tolist()


@settings(max_examples=25)  # up to 7 primes per example
@given(pair=exact_operands(max_size=2), data=st.data())
def test_exact_code_decodes_int64_extremes(pair, data):
    A, B = pair
    code = ExactCode(lambda p: MDSCode(4, 2, field=p))
    survivors = data.draw(st.permutations(range(4)))[:2]
    assert _decode(code, A, B, survivors).tolist() == _big_product(A, B)


@given(pair=crt_boundary_operands())
def test_exact_code_decodes_at_each_crt_prime_count(pair):
    A, B = pair
    code = ExactCode(lambda p: MDSCode(3, 2, field=p))
    assert _decode(code, A, B, (0, 2)).tolist() == _big_product(A, B)


@pytest.mark.parametrize("primes", [1, 2, 3])
def test_exact_code_returns_the_end_of_the_balanced_range(primes):
    half = (math.prod(exact_primes(primes)) - 1) // 2
    code = ExactCode(lambda p: MDSCode(3, 2, field=p))
    for value in (half, -half, half + 1, -half - 1):
        C = _decode(code, np.array([[value]]), np.array([1]), (1, 2))
        assert C.tolist() == [value]


@settings(max_examples=25)
@given(data=st.data())
def test_real_decode_at_the_worst_erasure_pattern_and_dynamic_range(data):
    n, k = data.draw(st.sampled_from([(5, 3), (6, 4), (7, 5), (8, 5)]))
    code = MDSCode(n, k)
    survivors = data.draw(worst_erasure_patterns(code))
    A = data.draw(dynamic_range_matrices((2 * k, 3), max_exponent=40))
    B = data.draw(dynamic_range_matrices((3, 2), max_exponent=40))
    G = np.asarray(code.generator, dtype=np.float64)
    rows = [code.subblocks * i + r for i in survivors for r in range(code.subblocks)]
    cond = np.linalg.cond(G[rows])
    assert_close_real(_decode(code, A, B, survivors), A @ B, cond)


@pytest.mark.parametrize("dtype", [np.uint64, np.int64, np.uint8])
def test_unsigned_operands_map_to_their_exact_residues(dtype):
    # a zero B keeps the bound at 0, so A may hold any integer of its dtype: the
    # systematic shares are A's blocks, as exact residues (uint64 above 2^63 too)
    top = int(np.iinfo(dtype).max)
    code = MDSCode(3, 2, field=P, systematic=True)
    A = np.array([[top], [top - 1]], dtype=dtype)
    encoded = code.encode_operands(A, np.zeros(1, dtype=dtype))
    assert encoded.lefts[0].tolist() == [[top % P]]
    assert encoded.lefts[1].tolist() == [[(top - 1) % P]]
    shares = code.encode(A)
    assert shares[0].tolist() == [[top % P]]
    # int64 residues, as documented, whatever the integer dtype of A
    assert {s.dtype for s in [*shares, *encoded.lefts]} == {np.dtype(np.int64)}


def _decode_right(code, A, B, survivors):
    """Decode A @ B with B given to encode_right, after an all-zero first B."""
    encoded = code.encode_right(code.encode_operands(A, B[:, :1] * 0), B)
    return code.decode_results(encoded, worker_results(code, encoded, survivors))


def test_a_new_right_operand_is_signed_against_a_signed_a():
    code = MDSCode(5, 3, field=P)
    A = np.array([[128, 128], [-128, -128], [128, -128]], dtype=np.int64)
    B = np.array([[128, -128], [128, -128]], dtype=np.int64)
    C = _decode_right(code, A, B, (0, 3, 4))
    assert C.tolist() == [[HALF, -HALF], [-HALF, HALF], [0, 0]]
    beyond = np.array([[129, 0], [128, 0]], dtype=np.int64)  # 2 x 128 x 129 > HALF
    encoded = code.encode_operands(A, B[:, :1] * 0)
    with pytest.raises(ValueError, match=r"= 33024, so p must exceed 66048"):
        code.encode_right(encoded, beyond)


def test_a_new_right_operand_over_the_field_stays_in_the_field():
    GF = galois.GF(7)
    code = MDSCode(5, 3, field=7)
    A, B = GF([[1, 2], [3, 4], [5, 6]]), GF([[6, 5], [4, 3]])
    C = _decode_right(code, A, B, (1, 2, 4))
    assert isinstance(C, galois.FieldArray)
    assert C.tolist() == (A @ B).tolist()


def test_a_new_right_operand_takes_the_precision_of_a():
    code = MDSCode(3, 2)
    A = np.arange(6, dtype=np.float32).reshape(3, 2)
    encoded = code.encode_right(
        code.encode_operands(A, np.zeros(2, np.float32)), [1.0, 2.0]
    )
    assert encoded.right(0).dtype == np.float32
    C = code.decode_results(encoded, worker_results(code, encoded, (0, 2)))
    assert C.dtype == np.float32
    np.testing.assert_allclose(C, [2.0, 8.0, 14.0], rtol=1e-6)


@pytest.mark.parametrize(
    ("field", "B", "message"),
    [
        (
            None,
            np.ones(3),
            "`B` must have 2 rows to match the encoded A (d=2), got B.shape=(3,).",
        ),
        (
            P,
            np.ones(3, np.int64),
            "`B` must have 2 rows to match the encoded A (d=2), got B.shape=(3,).",
        ),
        (
            None,
            np.ones((2, 1, 1)),
            "`B` must have ndim in (1, 2), got shape (2, 1, 1).",
        ),
        (
            P,
            np.ones((2, 1, 1), np.int64),
            "`B` must have ndim in (1, 2), got shape (2, 1, 1).",
        ),
        (
            7,
            galois.GF(7)(np.ones((2, 1, 1), np.int64)),
            "`B` must have ndim in (1, 2), got shape (2, 1, 1).",
        ),
        (None, np.ones((2, 0)), "`B` must be non-empty"),
    ],
)
def test_a_bad_right_operand_is_named(field, B, message):
    code = MDSCode(3, 2, field=field)
    A = np.ones((2, 2), np.int64) if field else np.ones((2, 2))
    if field == 7:
        A = galois.GF(7)(A)
    encoded = code.encode_operands(A, np.ones(2, np.int64) if field else np.ones(2))
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        code.encode_right(encoded, B)


@pytest.mark.parametrize(("size", "norm"), [(256, None), (257, 1), (300, 1)])
def test_condition_number_exact_up_to_256_then_lapack_1_norm(size, norm):
    from coded.codes._fields import condition_number

    M = np.eye(size)
    M[:, 0] = 1.0  # column sums up to `size`, row sums 2: the norms differ
    assert condition_number(M) == pytest.approx(np.linalg.cond(M, norm), rel=1e-9)


def test_condition_number_of_a_singular_large_system_is_infinite():
    import warnings

    import scipy.linalg

    from coded.codes._fields import condition_number

    M = np.eye(300)
    M[5, 5] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
        assert condition_number(M) == math.inf


@pytest.mark.parametrize(
    ("a_dtype", "b_dtype", "work"),
    [
        (np.float32, np.float64, np.float64),
        (np.float64, np.float32, np.float64),
        (np.float32, np.float32, np.float32),
    ],
)
def test_real_operands_work_in_float32_only_when_both_are(a_dtype, b_dtype, work):
    code = MDSCode(3, 2)
    encoded = code.encode_operands(np.ones((2, 2), a_dtype), np.ones(2, b_dtype))
    assert (encoded.lefts[0].dtype, encoded.right(0).dtype) == (work, work)


def test_mixed_operands_take_the_wider_semantics():
    GF7 = galois.GF(7)
    code = MDSCode(3, 2, field=7)
    encoded = code.encode_operands(np.array([[1, 2], [3, 4]]), GF7([1, 1]))
    C = code.decode_results(encoded, worker_results(code, encoded, (0, 1)))
    assert isinstance(C, galois.FieldArray)
    assert C.tolist() == [3, 0]  # 1 + 2, 3 + 4 = 7 = 0 in GF(7)


def test_a_real_worker_product_overflows_to_inf_and_nan_silently():
    # the decoder's finiteness check reports them; the product itself must not warn
    # (the suite turns warnings into errors)
    code = MDSCode(3, 2)
    huge = code.multiply(np.full((1, 2), 1e300), np.full(2, 1e300))
    assert np.isposinf(huge).all()
    assert np.isnan(code.multiply(np.full((1, 2), np.inf), np.zeros(2))).all()
