"""No silent wrong numbers: every dtype, through every code and field.

The result equals the exact product (integers over GF(p) or ``field="exact"``),
is within a stated tolerance of it (reals), or a named error says why.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from coded.codes import (
    DEFAULT_PRIME,
    ExactCode,
    MDSCode,
    Piece,
    PolynomialCode,
    ReplicationCode,
    RowMDSCode,
    UncodedCode,
)

INTEGER_DTYPES = [np.int8, np.int16, np.int32, np.int64]
INTEGER_DTYPES += [np.uint8, np.uint16, np.uint32, np.uint64]
FLOAT_DTYPES = [np.float16, np.float32, np.float64]
BIG_PRIME = 2**31 - 1
FIELDS = [None, DEFAULT_PRIME, BIG_PRIME, "exact"]
REAL_TOLERANCE = {np.float64: 1e-9, np.float32: 1e-4}
"""Real codes: ``|C - A @ B| <= REAL_TOLERANCE * max(|A| @ |B|)`` entrywise, by the
working precision (float32 when both operands are float32, else float64)."""
UNDERFLOW = {np.float64: 1e-300, np.float32: 1e-35}
"""Absolute floor of the error: products below the normal range of the dtype."""
OVERFLOW = {np.float64: 1e300, np.float32: 1e30}
"""A refusal to decode ("overflow") is allowed only once magnitudes pass this."""

CODES = {
    "mds": lambda field, m: MDSCode(4, 2, field=field),
    "polynomial": lambda field, m: PolynomialCode(5, 2, 2, field=field),
    "replication": lambda field, m: ReplicationCode(4, 2, field=field),
    "uncoded": lambda field, m: UncodedCode(3, field=field),
    "row_mds": lambda field, m: RowMDSCode([m, m // 2 + 1, m // 2 + 1], m, field=field),
}


def _build(name, field, m):
    if field == "exact":
        return ExactCode(lambda p: CODES[name](p, m))
    return CODES[name](field, m)


@st.composite
def _arrays(draw, dtype, shape):
    """Arrays of `dtype` whose entries are often the dtype's limits."""
    if np.dtype(dtype).kind == "f":
        info = np.finfo(dtype)
        limits = [info.max, -info.max, info.tiny, 0.0, 1.0]
        anything = st.floats(
            -float(info.max), float(info.max), width=info.bits, allow_nan=False
        )
    else:
        info = np.iinfo(dtype)
        limits = [info.min, info.max, 0, 1]
        anything = st.integers(int(info.min), int(info.max))
    elements = st.one_of(st.sampled_from(limits), anything, st.integers(-3, 3))
    if np.dtype(dtype).kind == "u":
        elements = elements.filter(lambda value: value >= 0)
    return draw(hnp.arrays(dtype, shape, elements=elements))


def _decode(code, encoded):
    """Decode from the last workers first (parity shares before systematic ones)."""
    decoder = code.decoder(encoded)
    for worker in reversed(range(code.n)):
        if decoder.is_decodable:
            break
        left = encoded.lefts[worker]
        value = code.multiply(left, encoded.right(worker))
        decoder.add(Piece(worker=worker, start=0, stop=len(left), value=value))
    return decoder.decode()


def _max_abs(array):
    return max(abs(int(array.min())), abs(int(array.max()))) if array.size else 0


def _expected_error(field, A, B):
    """The (type, message) a correct implementation must raise, or None."""
    is_float = A.dtype.kind == "f" or B.dtype.kind == "f"
    if field is not None and is_float:
        return TypeError, "integer array"
    if field in (DEFAULT_PRIME, BIG_PRIME):
        bound = A.shape[1] * _max_abs(A) * _max_abs(B)
        if 2 * bound >= field:
            return ValueError, "p must exceed"
    return None


def _check_real(run, A, B):
    """Close to the float64 product, or a named error once values near overflow.

    The tolerance scales with ``max(|A| @ |B|)``, the largest magnitude any
    entry's sum of products reaches. float32 operands give a float32 product.
    """
    dtype = np.float32 if A.dtype == B.dtype == np.float32 else np.float64
    A64, B64 = A.astype(np.float64), B.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        scale = float((np.abs(A64) @ np.abs(B64)).max())
        try:
            C, refused = run(), None
        except ValueError as error:  # a coded share or piece left float64's range
            refused = str(error)
        reference = A64 @ B64
    if refused is not None:  # only near float64's limit, and saying so
        a_max, b_max = float(np.abs(A64).max()), float(np.abs(B64).max())
        assert max(a_max, b_max, a_max * b_max, scale) > OVERFLOW[dtype], refused
        assert "overflow" in refused
        return
    assert C.dtype == dtype
    if np.isfinite(scale):
        atol = REAL_TOLERANCE[dtype] * scale + UNDERFLOW[dtype]
        np.testing.assert_allclose(C, reference, rtol=0, atol=atol)
    else:  # numpy's own product overflows: same infinities, or a refusal
        np.testing.assert_allclose(C, reference, rtol=1e-9, equal_nan=True)


@pytest.mark.parametrize("field", FIELDS, ids=str)
@pytest.mark.parametrize("name", sorted(CODES))
@given(data=st.data())
def test_every_dtype_is_exact_close_or_a_named_error(name, field, data):
    dtype = data.draw(st.sampled_from(INTEGER_DTYPES + FLOAT_DTYPES), label="dtype")
    m, d = data.draw(st.integers(1, 5), label="m"), data.draw(st.integers(1, 3))
    vector = name != "polynomial" and data.draw(st.booleans(), label="vector")
    A = data.draw(_arrays(dtype, (m, d)), label="A")
    B = data.draw(_arrays(dtype, (d,) if vector else (d, 2)), label="B")
    placed = (
        name != "polynomial"
        and field != "exact"
        and data.draw(st.booleans(), label="placed")
    )
    code = _build(name, field, m)
    expected = _expected_error(field, A, B)

    def run():
        if not placed:
            return _decode(code, code.encode_operands(A, B))
        placeholder = np.zeros(d, dtype=np.int64 if field else B.dtype)
        if field is not None and dtype in FLOAT_DTYPES:
            placeholder = B  # A's own check must name the dtype
        encoded = code.encode_operands(A, placeholder)
        return _decode(code, code.encode_right(encoded, B))

    if expected is not None:
        with pytest.raises(expected[0], match=expected[1]):
            run()
        return
    if field is None:
        _check_real(run, A, B)
        return
    C = run()
    exact = A.astype(object) @ B.astype(object)
    assert C.shape == exact.shape
    assert (np.asarray(C).astype(object) == exact).all(), (C, exact)


@pytest.mark.parametrize("field", [DEFAULT_PRIME, BIG_PRIME])
@pytest.mark.parametrize(
    ("dtype", "value"),
    [
        (np.uint64, 2**63),
        (np.uint64, 2**64 - 1),
        (np.int64, -(2**63)),
        (np.int64, 2**63 - 1),
    ],
)
def test_integers_beyond_the_prime_are_refused_not_wrapped(dtype, value, field):
    A = np.full((4, 3), value, dtype=dtype)
    B = np.ones(3, dtype=dtype)
    with pytest.raises(ValueError, match="p must exceed"):
        MDSCode(3, 2, field=field).encode_operands(A, B)
    exact_code = ExactCode(lambda p: MDSCode(3, 2, field=p))
    C = _decode(exact_code, exact_code.encode_operands(A, B))
    assert C.tolist() == [3 * value] * 4


@pytest.mark.parametrize(
    ("dtype", "value"), [(np.uint64, 2**64 - 1), (np.int64, -(2**63))]
)
def test_single_operand_encoding_reduces_limits_exactly(dtype, value):
    code = MDSCode(3, 2, field=DEFAULT_PRIME)
    shares = code.encode(np.full((2, 2), value, dtype=dtype))
    # systematic shares of a signed-integer A hold its residues mod p
    assert int(shares[0][0, 0]) == value % DEFAULT_PRIME


def _float32_code(name, data):
    if name == "mds":
        n = data.draw(st.integers(2, 10), label="n")
        return MDSCode(n, data.draw(st.integers(1, n), label="k"))
    p_a, p_b = data.draw(st.integers(1, 3), label="p_a"), data.draw(st.integers(1, 3))
    return PolynomialCode(p_a * p_b + data.draw(st.integers(0, 3)), p_a, p_b)


@pytest.mark.parametrize("name", ["mds", "polynomial"])
@given(data=st.data())
def test_float32_stays_float32_on_workers_and_decodes_in_float64(name, data):
    code = _float32_code(name, data)
    K = code.recovery_threshold
    workers = sorted(data.draw(st.permutations(range(code.n)), label="order")[:K])
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    rows, d = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 4))
    if name == "mds":
        p_a, p_b = K * code.subblocks, 1
    else:
        p_a, p_b = code.p_a, code.p_b
    A = rng.standard_normal((p_a * rows, d)).astype(np.float32)
    B = rng.standard_normal((d, 2 * p_b)).astype(np.float32)
    encoded = code.encode_operands(A, B)
    assert {left.dtype for left in encoded.lefts} == {np.dtype(np.float32)}
    assert encoded.right(0).dtype == np.float32
    products = {i: code.multiply(encoded.lefts[i], encoded.right(i)) for i in workers}
    assert {value.dtype for value in products.values()} == {np.dtype(np.float32)}
    decoder = code.decoder(encoded)
    for i, value in products.items():
        decoder.add(Piece(worker=i, start=0, stop=value.shape[0], value=value))
    C = decoder.decode()
    assert C.dtype == np.float32
    # float64 decoding: the float32 result is the float64 decode of the same
    # float32 pieces, rounded once (a float32 solve would differ in low bits)
    wide = code.decode({i: value.astype(np.float64) for i, value in products.items()})
    assert wide.dtype == np.float64
    np.testing.assert_array_equal(C, wide.astype(np.float32))
    exact = A.astype(np.float64) @ B.astype(np.float64)
    scale = float((np.abs(A).astype(np.float64) @ np.abs(B)).max())
    kappa = max(decoder.condition_number, 1.0)
    tol = 100 * kappa * np.finfo(np.float32).eps * scale
    np.testing.assert_allclose(C, exact, rtol=0, atol=tol)
