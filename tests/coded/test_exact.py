import functools
import math
import pickle
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from coded.codes import MDSCode, Piece, PolynomialCode
from coded.codes._crt import (
    MAX_PRIMES,
    PRIME_LIMIT,
    crt_reconstruct,
    exact_primes,
    max_abs,
    primes_for_bound,
    product_bound,
    to_residues,
)
from coded.codes._exact import ExactCode, ExactContext, multiply_residues
from coded.codes._modular import matmul_mod
from coded.errors import DecodingError
from theory.validation import is_prime

INT64 = np.iinfo(np.int64)
EXTREMES = [INT64.min, INT64.min + 1, -1, 0, 1, INT64.max]


@functools.cache
def exact_mds(n, k):
    return ExactCode(lambda p: MDSCode(n, k, field=p))


@functools.cache
def exact_polynomial(n, p_a, p_b):
    return ExactCode(lambda p: PolynomialCode(n, p_a, p_b, field=p))


def big_product(A, B):
    return A.astype(object) @ B.astype(object)


@st.composite
def integer_operands(draw, max_rows=6, max_inner=6, vector=False):
    m = draw(st.integers(1, max_rows))
    d = draw(st.integers(1, max_inner))
    bits = draw(st.integers(1, 63))
    elements = st.one_of(
        st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1),
        st.sampled_from(EXTREMES),
    )
    A = draw(hnp.arrays(np.int64, (m, d), elements=elements))
    b_shape = (d,) if vector else (d, draw(st.integers(1, 4)))
    B = draw(hnp.arrays(np.int64, b_shape, elements=elements))
    return A, B


def assert_exact(result, A, B):
    expected = big_product(A, B)
    bound = product_bound(A, B)
    assert result.dtype == (np.int64 if bound < 2**63 else object)
    assert result.shape == expected.shape
    assert result.tolist() == expected.tolist()


# -- primes and CRT -----------------------------------------------------------------


def test_exact_primes_are_the_largest_below_the_limit():
    primes = exact_primes()
    assert len(primes) == MAX_PRIMES
    assert all(is_prime(p) and p < PRIME_LIMIT for p in primes)
    assert list(primes) == sorted(primes, reverse=True)
    skipped = [q for q in range(primes[-1], PRIME_LIMIT) if is_prime(q)]
    assert skipped == sorted(primes)


@given(bound=st.integers(0, 2**1000))
def test_primes_for_bound_is_minimal(bound):
    primes = primes_for_bound(bound)
    assert math.prod(primes) > 2 * bound
    assert math.prod(primes[:-1]) <= 2 * bound or len(primes) == 1
    assert primes == exact_primes(len(primes))


@given(data=st.data(), count=st.integers(1, 6))
def test_crt_reconstruct_recovers_integers_up_to_the_bound(data, count):
    primes = exact_primes(count)
    bound = (math.prod(primes) - 1) // 2  # the largest bound these primes allow
    values = data.draw(
        st.lists(
            st.one_of(st.integers(-bound, bound), st.sampled_from([-bound, 0, bound])),
            min_size=1,
            max_size=8,
        )
    )
    x = np.array(values, dtype=object)
    residues = [np.array([v % p for v in values], dtype=np.int64) for p in primes]
    result = crt_reconstruct(residues, primes, bound=bound)
    assert result.dtype == (np.int64 if bound < 2**63 else object)
    assert result.tolist() == x.tolist()


def test_output_type_at_the_int64_boundary():
    """int64 exactly while bound < 2^63: the largest int64 bound still gives int64."""
    assert max_abs(np.array([], dtype=np.int64)) == 0
    primes = exact_primes(4)  # product > 2^83
    values = [2**63 - 1, -(2**63 - 1), 0]
    residues = [np.array([v % p for v in values]) for p in primes]
    at = crt_reconstruct(residues, primes, bound=2**63 - 1)
    assert at.dtype == np.int64
    assert at.tolist() == values
    beyond = crt_reconstruct(residues, primes, bound=2**63)
    assert beyond.dtype == object
    assert beyond.tolist() == values


@given(operands=integer_operands())
def test_crt_of_modular_products_equals_big_integer_matmul(operands):
    A, B = operands
    primes = primes_for_bound(product_bound(A, B))
    residues = [matmul_mod(to_residues(A, p), to_residues(B, p), p) for p in primes]
    assert_exact(crt_reconstruct(residues, primes, bound=product_bound(A, B)), A, B)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint16, np.uint64, np.int64])
def test_to_residues_for_every_integer_dtype(dtype):
    info = np.iinfo(dtype)
    X = np.array([info.min, 0, 1, info.max], dtype=dtype)
    for p in (3, 2**21 - 9):
        assert to_residues(X, p).tolist() == [int(v) % p for v in X.tolist()]
        assert to_residues(X, p).dtype == np.int64
        # the float pass (all |x| + p <= 2^53) and the integer pass agree
        small = np.arange(-50, 50, dtype=dtype) if info.min < 0 else X[1:3]
        assert to_residues(small, p).tolist() == [int(v) % p for v in small.tolist()]


# -- the exact code ---------------------------------------------------------------


@given(
    operands=integer_operands(),
    n=st.integers(1, 6),
    data=st.data(),
)
def test_any_k_of_n_decode_exactly(operands, n, data):
    A, B = operands
    k = data.draw(st.integers(1, n))
    survivors = data.draw(st.permutations(range(n)))[:k]
    code = exact_mds(n, k)
    encoded = code.encode_operands(A, B)
    results = {i: code.multiply(encoded.lefts[i], encoded.right(i)) for i in survivors}
    assert code.is_decodable(survivors)
    assert_exact(code.decode_results(encoded, results), A, B)


@given(operands=integer_operands(), data=st.data())
def test_polynomial_code_decodes_from_any_p_a_p_b_results(operands, data):
    A, B = operands
    p_a = data.draw(st.integers(1, 3))
    p_b = data.draw(st.integers(1, 2))
    n = data.draw(st.integers(p_a * p_b, 6))
    survivors = data.draw(st.permutations(range(n)))[: p_a * p_b]
    code = exact_polynomial(n, p_a, p_b)
    encoded = code.encode_operands(A, B)
    assert encoded.rights is not None
    results = {i: code.multiply(encoded.lefts[i], encoded.right(i)) for i in survivors}
    assert_exact(code.decode_results(encoded, results), A, B)


@given(operands=integer_operands(max_rows=9, vector=True), data=st.data())
def test_row_range_pieces_decode_a_vector_product(operands, data):
    A, x = operands
    code = exact_mds(4, 3)
    encoded = code.encode_operands(A, x)
    decoder = code.decoder(encoded)
    rows = encoded.lefts[0].shape[0]
    workers = data.draw(st.permutations(range(4)))
    for worker in workers:
        cut = data.draw(st.integers(0, rows))
        for start, stop in ((0, cut), (cut, rows)):
            if start < stop and not decoder.is_decodable:
                left = encoded.lefts[worker][start:stop]
                value = code.multiply(left, encoded.right(worker))
                piece = Piece(worker=worker, start=start, stop=stop, value=value)
                decoder.add(piece)
    assert decoder.is_decodable
    assert_exact(decoder.decode(), A, x)


def test_number_of_primes_follows_the_bound():
    code = exact_mds(3, 2)
    A16 = np.full((4, 1024), -(2**15), dtype=np.int16)
    B16 = np.full((1024, 2), -(2**15), dtype=np.int16)
    context = code.encode_operands(A16, B16).context
    assert isinstance(context, ExactContext)
    assert context.bound == 1024 * 2**30
    assert context.primes == exact_primes(2)
    wide = code.encode_operands(np.array([[INT64.min]]), np.array([[INT64.min]]))
    assert wide.context.primes == primes_for_bound(2**126)
    assert len(wide.context.primes) == 7


def test_two_prime_product_at_16_bits_is_exact():
    rng = np.random.default_rng(5)
    A = rng.integers(-(2**15), 2**15, (12, 300))
    B = rng.integers(-(2**15), 2**15, (300, 7))
    A[0], B[:, 0] = -(2**15), -(2**15)  # attains the bound's sign pattern
    code = exact_mds(8, 6)
    encoded = code.encode_operands(A, B)
    results = {
        i: code.multiply(encoded.lefts[i], encoded.right(i)) for i in range(2, 8)
    }
    np.testing.assert_array_equal(code.decode_results(encoded, results), A @ B)


def test_multiply_residues_matches_per_prime_products():
    rng = np.random.default_rng(9)
    primes = exact_primes(3)
    left = np.stack([rng.integers(0, p, (5, 4)) for p in primes], axis=-1)
    right = np.stack([rng.integers(0, p, (4, 2)) for p in primes], axis=-1)
    out = multiply_residues(left, right)
    assert out.shape == (5, 2, 3)
    vector = multiply_residues(left, right[:, 0])
    assert vector.shape == (5, 3)
    for j, p in enumerate(primes):
        expected = matmul_mod(left[..., j], right[..., j], p)
        np.testing.assert_array_equal(out[..., j], expected)
        np.testing.assert_array_equal(vector[:, j], expected[:, 0])


def test_code_interface_and_pickling():
    code = exact_mds(5, 3)
    assert (code.n, code.recovery_threshold) == (5, 3)
    assert code.is_decodable([0, 2, 4])
    assert not code.is_decodable([1, 3])
    assert pickle.loads(pickle.dumps(code.multiply)) is multiply_residues
    encoded = code.encode_operands(np.eye(3, dtype=int), np.arange(3))
    decoder = code.decoder(encoded)
    assert decoder.progress == (0, 3)
    with pytest.raises(DecodingError, match=re.escape("received 0, need 3")):
        decoder.decode()


def test_too_few_results_raise():
    code = exact_mds(4, 3)
    encoded = code.encode_operands(np.ones((3, 2), dtype=int), np.ones((2, 2), int))
    results = {i: code.multiply(encoded.lefts[i], encoded.right(i)) for i in (0, 3)}
    with pytest.raises(DecodingError):
        code.decode_results(encoded, results)


def not_a_code(p):
    return "code"


def real_code(p):
    return MDSCode(3, 2)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: ExactCode(3), TypeError,
         "`make_code` must be callable (p -> Code), got int."),
        (lambda: ExactCode(not_a_code), TypeError,
         "`make_code(2097143)` must return a Code, got str."),
        (lambda: ExactCode(real_code), TypeError,
         "`make_code(2097143)` must return a coded.codes code over GF(2097143) "
         "(MDSCode, RowMDSCode, PolynomialCode, ReplicationCode or UncodedCode), "
         "got MDSCode(n=3, k=2, field=None, systematic=False)."),
        (lambda: exact_mds(3, 2).encode_operands([[1.5]], [[1]]), TypeError,
         "`A` must be an integer array for an ExactCode, got dtype float64."),
        (lambda: exact_mds(3, 2).encode_operands([[1]], [[[1]]]), ValueError,
         "`B` must have ndim in (1, 2), got shape (1, 1, 1)."),
        (lambda: exact_mds(3, 2).encode_operands(np.ones((2, 0), int), [[]]),
         ValueError, "`A` must be non-empty, got shape (2, 0)."),
        (lambda: exact_mds(3, 2).encode_operands([[1, 2]], [[1, 2]]), ValueError,
         "`A` and `B` must have matching inner dimensions, "
         "got A.shape=(1, 2), B.shape=(1, 2)."),
        (lambda: exact_mds(3, 2).decoder("x"), TypeError,
         "`encoded` must be the EncodedOperands returned by "
         "ExactCode.encode_operands, got str."),
        (lambda: multiply_residues(np.ones((2, 2), int), np.ones((1, 2), int)),
         ValueError, "`left` must have shape (rows, d, P) and `right` (d, c, P) or "
         "(d, P), got (2, 2) and (1, 2)."),
        (lambda: multiply_residues(np.ones((2, 3, 1), int), np.ones((3, 2), int)),
         ValueError, "`right` must have shape (3, ..., 1) to match `left` (2, 3, 1), "
         "got (3, 2)."),
        (lambda: multiply_residues(np.full((1, 1, 1), -1), np.ones((1, 1), int)),
         ValueError, "`A` must hold residues in [0, p), got entries outside "
         "[0, 2097143)."),
        (lambda: primes_for_bound(2**1400), ValueError, "`bound` must be < "),
        (lambda: primes_for_bound(-1), ValueError,
         "`bound` must be >= 0, got bound=-1."),
        (lambda: exact_primes(0), ValueError, "`count` must be >= 1, got count=0."),
        (lambda: crt_reconstruct([np.zeros(2)], (3, 5), bound=1), ValueError,
         "`residues` and `primes` must have the same nonzero length, got 1 and 2."),
        (lambda: crt_reconstruct([np.zeros(2)], (3,), bound=2), ValueError,
         "`primes` must have a product > 2 * bound = 4, got 3."),
        (lambda: crt_reconstruct([np.zeros(2)], (2**31 - 1,), bound=2), ValueError,
         "`primes` must be odd primes below 2^26, got (2147483647,)."),
        (lambda: crt_reconstruct([np.zeros(2), np.zeros(3)], (3, 5), bound=2),
         ValueError, "`residues` must all have the same shape, got [(2,), (3,)]."),
    ],
)  # fmt: skip
def test_input_validation(call, error, message):
    with pytest.raises(error, match=re.escape(message)):
        call()


def test_decoder_rejects_pieces_without_the_prime_axis():
    code = exact_mds(3, 2)
    encoded = code.encode_operands(np.ones((2, 2), int), np.ones((2, 2), int))
    decoder = code.decoder(encoded)
    message = "`piece.value` must have shape (rows, ..., 1) with a trailing prime"
    with pytest.raises(ValueError, match=re.escape(message)):
        decoder.add(Piece(worker=0, start=0, stop=1, value=np.zeros((1, 2))))
    with pytest.raises(TypeError, match=re.escape("`piece` must be a Piece, got int.")):
        decoder.add(3)


@pytest.mark.runtime
def test_coded_matmul_field_exact_on_dask():
    from coded import LocalCodedCluster, coded_matmul

    rng = np.random.default_rng(13)
    A = rng.integers(INT64.min, INT64.max, (12, 5), endpoint=True)
    B = rng.integers(INT64.min, INT64.max, (5, 3), endpoint=True)
    A16 = rng.integers(-(2**15), 2**15, (12, 5))
    x16 = rng.integers(-(2**15), 2**15, 5)
    with LocalCodedCluster(n_workers=4) as cluster:
        for scheme in ("mds", "polynomial"):
            result = coded_matmul(
                A, B, scheme=scheme, field="exact", client=cluster.client
            )
            assert_exact(result.product, A, B)
        result = coded_matmul(A16, x16, field="exact", client=cluster.client)
        assert_exact(result.product, A16, x16)


def test_exact_path_never_imports_galois():
    script = textwrap.dedent(
        """
        import sys
        import numpy as np
        import coded
        from coded.codes import MDSCode, PolynomialCode, RowMDSCode, UncodedCode
        A = np.arange(-12, 12, dtype=np.int64).reshape(6, 4) * 2**40
        B = np.arange(8, dtype=np.int16).reshape(4, 2) - 3
        for make in (
            lambda p: MDSCode(4, 3, field=p),
            lambda p: PolynomialCode(5, 2, 2, field=p),
            lambda p: RowMDSCode([3, 2, 2], 6, field=p),
            lambda p: UncodedCode(3, field=p),
        ):
            code = coded.ExactCode(make)
            encoded = code.encode_operands(A, B)
            results = {
                i: code.multiply(encoded.lefts[i], encoded.right(i))
                for i in range(code.n)
            }
            product = code.decode_results(encoded, results)
            assert product.tolist() == (A.astype(object) @ B.astype(object)).tolist()
        assert "galois" not in sys.modules, "the exact path imported galois"
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr


def test_galois_fields_of_the_crt_primes_keep_their_default_mode():
    import galois

    code = exact_mds(3, 2)
    A = np.array([[2**40, -1], [3, 4]])
    encoded = code.encode_operands(A, A)
    results = {i: code.multiply(encoded.lefts[i], encoded.right(i)) for i in (0, 2)}
    assert_exact(code.decode_results(encoded, results), A, A)
    GF = galois.GF(encoded.context.primes[0])
    assert GF.ufunc_mode == GF.default_ufunc_mode
