import functools
import re

import galois
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from coded.codes._modular import limb_bound, matmul_mod, matmul_mod_into, modular_plan

# Largest primes below 2^21, just below / above the direct-path limit, near 2^31,
# the largest below 2^32 (split path) and a Mersenne prime (object path).
PRIMES = [2, 3, 65537, 2**21 - 9, 8388593, 2**23 + 9, 2**29 - 3, 2**31 - 1, 4294967291]
BIG_PRIME = 2**61 - 1


@functools.cache
def field(p):
    return galois.GF(p)


def reference(A, B, p):
    return np.asarray(A.astype(object) @ B.astype(object) % p, dtype=np.int64)


def residue_matrices(p, max_inner=40):
    edges = sorted({0, 1, p - 1, (p - 1) // 2, (p + 1) // 2 % p})
    elements = st.one_of(st.sampled_from(edges), st.integers(0, p - 1))
    dims = st.tuples(st.integers(1, 6), st.integers(1, max_inner), st.integers(1, 6))
    return dims.flatmap(
        lambda s: st.tuples(
            hnp.arrays(np.int64, (s[0], s[1]), elements=elements),
            hnp.arrays(np.int64, (s[1], s[2]), elements=elements),
        )
    )


@given(data=st.data(), p=st.sampled_from(PRIMES))
def test_equals_python_integers(data, p):
    A, B = data.draw(residue_matrices(p))
    result = matmul_mod(A, B, p)
    assert result.dtype == np.int64
    np.testing.assert_array_equal(result, reference(A, B, p))


# galois compiles its kernels once per field (seconds each): a few fields suffice.
@given(data=st.data(), p=st.sampled_from([65537, 2**31 - 1, 4294967291]))
def test_equals_galois(data, p):
    A, B = data.draw(residue_matrices(p))
    GF = field(p)
    expected = (GF(A) @ GF(B)).view(np.ndarray)
    np.testing.assert_array_equal(matmul_mod(A, B, p), expected)


@given(data=st.data())
def test_object_path_equals_python_integers(data):
    A, B = data.draw(residue_matrices(BIG_PRIME, max_inner=8))
    assert modular_plan(BIG_PRIME).path == "object"
    np.testing.assert_array_equal(
        matmul_mod(A, B, BIG_PRIME), reference(A, B, BIG_PRIME)
    )


# direct (blocks 8192 and 512), two limbs (block 8191), three limbs (8191, 4095)
@pytest.mark.parametrize("p", [2**21 - 9, 8388593, 268435459, 2**31 - 1, 4294967291])
@pytest.mark.parametrize("blocks", [1, 2, 3])
def test_worst_case_magnitudes_across_inner_blocks(p, blocks):
    # Every entry at the largest symmetric magnitude: each block sum is as large
    # as the exactness bound allows; extra columns add other residues.
    block = modular_plan(p).block
    d = blocks * block + (blocks > 1)
    rng = np.random.default_rng(7)
    half = (p - 1) // 2
    A = np.full((3, d), half, dtype=np.int64)
    A[1] = half + 1
    A[2] = rng.integers(0, p, d)
    B = np.full((d, 3), half + 1, dtype=np.int64)
    B[:, 1] = half
    B[:, 2] = rng.integers(0, p, d)
    np.testing.assert_array_equal(matmul_mod(A, B, p), reference(A, B, p))


@pytest.mark.parametrize(
    "p", [3, 65537, 2**21 - 9, 8388593, 2**23 + 9, 2**29 - 3, 2**31 - 1, 4294967291]
)
def test_plan_block_is_the_largest_exact_block(p):
    plan = modular_plan(p)
    half = (p - 1) // 2
    if plan.path == "direct":
        per_term = half * half
        assert (plan.limbs, plan.w) == (1, 0)
    else:
        assert plan.path == "split"
        assert plan.limbs in (2, 3)
        assert plan.block >= 2048
        per_term = limb_bound(half, plan.limbs, plan.w) * half
        assert p * 2**plan.w + p <= 2**53  # Horner recombination stays exact
    assert plan.block * per_term + 2 * p <= 2**53
    assert (plan.block + 1) * per_term + 2 * p > 2**53


def split_limbs(c, limbs, w):
    out = []
    for _ in range(limbs - 1):
        lo = ((c + 2 ** (w - 1)) % 2**w) - 2 ** (w - 1)
        out.append(lo)
        c = (c - lo) // 2**w
    return [*out, c]


@given(
    half=st.integers(1, 2**31),
    limbs=st.integers(2, 3),
    w=st.integers(1, 16),
    offset=st.integers(0, 2**10),
)
def test_limb_bound_bounds_every_limb(half, limbs, w, offset):
    bound = limb_bound(half, limbs, w)
    for c in {half, -half, max(half - offset, 0), -max(half - offset, 0)}:
        parts = split_limbs(c, limbs, w)
        assert sum(part * 2 ** (w * i) for i, part in enumerate(parts)) == c
        assert max(abs(part) for part in parts) <= bound


def test_paths_by_prime_size():
    assert modular_plan(2**21 - 9).block >= 8192
    assert [modular_plan(p).path for p in (65537, 2**31 - 1, BIG_PRIME)] == [
        "direct",
        "split",
        "object",
    ]


@pytest.mark.parametrize(
    ("a_shape", "b_shape", "out_shape"),
    [
        ((5,), (5,), ()),
        ((5,), (5, 3), (3,)),
        ((4, 5), (5,), (4,)),
        ((2, 4, 5), (5, 3), (2, 4, 3)),
        ((0, 5), (5, 3), (0, 3)),
        ((4, 0), (0, 3), (4, 3)),
        ((4, 5), (5, 0), (4, 0)),
    ],
)
@pytest.mark.parametrize("p", [65537, 2**31 - 1, BIG_PRIME])
def test_shapes_follow_numpy(a_shape, b_shape, out_shape, p):
    rng = np.random.default_rng(3)
    A = rng.integers(0, min(p, 2**62), a_shape)
    B = rng.integers(0, min(p, 2**62), b_shape)
    result = matmul_mod(A, B, p)
    assert result.shape == out_shape
    expected = A.astype(object) @ B.astype(object) % p
    np.testing.assert_array_equal(result, np.asarray(expected, dtype=np.int64))


@pytest.mark.parametrize("p", [65537, 2**31 - 1])
def test_strided_inputs_dtypes_and_output_view(p):
    rng = np.random.default_rng(11)
    base_A = rng.integers(0, p, (9, 14))
    base_B = rng.integers(0, p, (6, 20))
    A, B = base_A[::2, 1::2], base_B[:, ::3].T  # non-contiguous views
    expected = reference(A, B, p)
    np.testing.assert_array_equal(matmul_mod(A, B, p), expected)
    np.testing.assert_array_equal(
        matmul_mod(A.astype(np.uint32), B.astype(np.int32), p), expected
    )
    out = np.zeros((A.shape[0], 2, B.shape[1]), dtype=np.int64)
    matmul_mod_into(A, B, p, out[:, 1])
    np.testing.assert_array_equal(out[:, 1], expected)
    assert not out[:, 0].any()


def test_field_array_inputs():
    GF = field(65537)
    A, B = GF([[1, 65536]]), GF([[3], [2]])
    np.testing.assert_array_equal(matmul_mod(A, B, 65537), (A @ B).view(np.ndarray))


OUTSIDE = "`{}` must hold residues in [0, p), got entries outside [0, {})."


@pytest.mark.parametrize(
    ("A", "B", "p", "error", "message"),
    [
        ([[1.0]], [[1]], 7, TypeError,
         "`A` must hold integer residues, got dtype float64."),
        ([[1]], [[True]], 7, TypeError,
         "`B` must hold integer residues, got dtype bool."),
        (3, [[1]], 7, ValueError, "`A` must have ndim >= 1, got shape ()."),
        ([[1]], np.ones((1, 1, 1), int), 7, ValueError,
         "`B` must have ndim 1 or 2, got shape (1, 1, 1)."),
        ([[1, 2]], [[1, 2]], 7, ValueError,
         "`A` and `B` must have matching inner dimensions, "
         "got shapes (1, 2) and (1, 2)."),
        ([[1]], [[1]], 8, ValueError, "`p` must be prime, got p=8."),
        ([[1]], [[1]], 1, ValueError, "`p` must be >= 2, got p=1."),
        ([[1]], [[1]], 7.0, TypeError, "`p` must be an integer, got float 7.0"),
        ([[7]], [[1]], 7, ValueError, OUTSIDE.format("A", 7)),
        ([[1]], [[-1]], 7, ValueError, OUTSIDE.format("B", 7)),
        ([[2**31 - 1]], [[1]], 2**31 - 1, ValueError, OUTSIDE.format("A", 2**31 - 1)),
        ([[1]], [[-5]], 2**31 - 1, ValueError, OUTSIDE.format("B", 2**31 - 1)),
        ([[-1]], [[1]], BIG_PRIME, ValueError, OUTSIDE.format("A", BIG_PRIME)),
        (np.array([[2**63]], dtype=np.uint64), [[1]], 7, ValueError,
         OUTSIDE.format("A", 7)),
    ],
)  # fmt: skip
def test_input_validation(A, B, p, error, message):
    with pytest.raises(error, match=re.escape(message)):
        matmul_mod(A, B, p)


def test_gf_codes_encode_multiply_and_decode_through_matmul_mod(monkeypatch):
    from coded.codes import MDSCode, _modular

    calls = []
    original = _modular.matmul_mod_into  # every GF(p) product ends here

    def counting(A, B, p, out):
        calls.append(p)
        original(A, B, p, out)

    monkeypatch.setattr(_modular, "matmul_mod_into", counting)
    rng = np.random.default_rng(2)
    A = rng.integers(-50, 50, (6, 4))
    B = rng.integers(-50, 50, (4, 2))
    code = MDSCode(5, 3, field=65537)
    encoded = code.encode_operands(A, B)
    encode_calls = len(calls)
    assert encode_calls >= 1
    survivors = (2, 3, 4)  # systematic blocks 0 and 1 must be solved for
    results = {i: code.multiply(encoded.lefts[i], encoded.right(i)) for i in survivors}
    assert len(calls) == encode_calls + 3
    np.testing.assert_array_equal(code.decode_results(encoded, results), A @ B)
    assert len(calls) > encode_calls + 3
    assert set(calls) == {65537}
