"""ReplicationCode and UncodedCode through the common interface."""

import re

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given
from hypothesis import strategies as st

from coded._resources import estimate_memory
from coded.codes import DEFAULT_PRIME, MDSCode, ReplicationCode, UncodedCode
from coded.errors import DecodingError
from coded.testing import matrices


@st.composite
def replication_codes(draw, max_n=12, field=None):
    n = draw(st.integers(1, max_n))
    r = draw(st.sampled_from([r for r in range(1, n + 1) if n % r == 0]))
    return ReplicationCode(n, r, field)


def _covers(code, workers):
    parts = code.n // code.r
    return {i % parts for i in workers} == set(range(parts))


@pytest.mark.parametrize("field", [None, DEFAULT_PRIME])
@given(data=st.data())
def test_decodes_exactly_from_any_covering_set(field, data):
    code = data.draw(replication_codes(field=field))
    parts = code.n // code.r
    workers = data.draw(st.sets(st.integers(0, code.n - 1), min_size=1))
    X = data.draw(matrices((2 * parts, 3), field=field))
    Y = data.draw(matrices((3, 2), field=field))
    shares = code.encode(X)
    results = {i: shares[i] @ Y for i in workers}
    assert code.is_decodable(workers) == _covers(code, workers)
    if _covers(code, workers):
        # replication copies: exact even over the reals
        np.testing.assert_array_equal(code.decode(results), X @ Y)
    else:
        covered = len({i % parts for i in workers})
        with pytest.raises(
            DecodingError,
            match=re.escape(f"need n/r={parts} distinct blocks, got {covered}."),
        ):
            code.decode(results)


@given(n=st.integers(1, 12), r_index=st.integers(0, 11))
def test_recovery_threshold_is_the_worst_case_covering_size(n, r_index):
    divisors = [r for r in range(1, n + 1) if n % r == 0]
    code = ReplicationCode(n, divisors[r_index % len(divisors)])
    parts = n // code.r
    # the largest non-covering set drops all r replicas of one part
    largest_bad = [i for i in range(n) if i % parts != 0]
    assert not code.is_decodable(largest_bad) or parts == 0
    assert len(largest_bad) == code.recovery_threshold - 1


@given(n=st.integers(1, 8), data=st.data())
def test_uncoded_needs_every_worker(n, data):
    code = UncodedCode(n)
    X = data.draw(matrices((n, 2)))
    shares = code.encode(X)
    np.testing.assert_array_equal(code.decode(dict(enumerate(shares))), X)
    missing = data.draw(st.integers(0, n - 1))
    with pytest.raises(
        DecodingError, match=re.escape(f"need n={n} results, got {n - 1}.")
    ):
        code.decode({i: s for i, s in enumerate(shares) if i != missing})


VALIDATION = [
    (lambda: ReplicationCode(6, 4), ValueError, "`r` must divide `n`, got r=4, n=6."),
    (lambda: ReplicationCode(6, 7), ValueError, "`r` must be <= 6, got r=7."),
    (lambda: ReplicationCode(0, 1), ValueError, "`n` must be >= 1, got n=0."),
    (lambda: ReplicationCode(4, 0), ValueError, "`r` must be >= 1, got r=0."),
    (lambda: UncodedCode(0), ValueError, "`n` must be >= 1, got n=0."),
    (
        lambda: ReplicationCode(4, 2, 10),
        ValueError,
        "`field` must be prime, got field=10.",
    ),
    (lambda: UncodedCode(2.5), TypeError, "`n` must be an integer, got float 2.5."),
    (
        lambda: UncodedCode(2).encode(np.ones((3, 2))),
        ValueError,
        "`X` must have a number of rows divisible by n=2, got X.shape=(3, 2).",
    ),
]


@pytest.mark.parametrize(
    ("make", "text"),
    [
        (lambda: ReplicationCode(6, 3), "ReplicationCode(n=6, r=3, field=None)"),
        (lambda: ReplicationCode(4, 2, 7), "ReplicationCode(n=4, r=2, field=7)"),
        (lambda: UncodedCode(3), "UncodedCode(n=3, field=None)"),
        (lambda: UncodedCode(2, 65537), "UncodedCode(n=2, field=65537)"),
    ],
)
def test_repr_names_the_field(make, text):
    assert repr(make()) == text  # built in the test, which then covers __init__


@pytest.mark.parametrize(("call", "error", "message"), VALIDATION)
def test_input_validation(call, error, message):
    with pytest.raises(error, match=re.escape(message)):
        call()


@pytest.mark.parametrize("code", [UncodedCode(4), ReplicationCode(4, 2)])
@pytest.mark.parametrize("m", [8, 7, 1])
def test_encode_hands_out_views_of_a_and_pads_only_the_last_block(code, m):
    A = np.arange(m * 3, dtype=np.float64).reshape(m, 3)
    x = np.ones(3)
    encoded = code.encode_operands(A, x)
    parts = code.n // getattr(code, "r", 1)
    rows = -(-m // parts)
    padded = np.zeros((parts * rows, 3))
    padded[:m] = A
    for i, left in enumerate(encoded.lefts):
        block = i % parts
        assert not left.flags.writeable
        np.testing.assert_array_equal(left, padded[block * rows : (block + 1) * rows])
        # a block inside A is a view of A; a padded one is a copy
        assert np.shares_memory(left, A) == ((block + 1) * rows <= m)
    assert A.flags.writeable
    results = {i: code.multiply(encoded.lefts[i], x) for i in range(code.n)}
    np.testing.assert_array_equal(code.decode_results(encoded, results), A @ x)
    assert not np.shares_memory(code.decode_results(encoded, results), A)


@given(data=st.data())
def test_a_sparse_a_gives_csr_shares_that_decode_from_any_covering_set(data):
    code = data.draw(
        st.one_of(replication_codes(max_n=8), st.builds(UncodedCode, st.integers(1, 8)))
    )
    r = getattr(code, "r", 1)
    m, d, seed = data.draw(st.integers(1, 30)), data.draw(st.integers(1, 6)), 7
    A = scipy.sparse.random_array(
        (m, d),
        density=0.3,
        format=data.draw(st.sampled_from(["csr", "csc", "coo"])),
        rng=data.draw(st.integers(0, 2**16)),
    )
    B = np.random.default_rng(seed).normal(size=(d, 2))
    encoded = code.encode_operands(A, B)
    assert all(left.format == "csr" for left in encoded.lefts)  # never densified
    assert sum(left.nnz for left in encoded.lefts) == r * A.nnz
    workers = data.draw(st.sets(st.integers(0, code.n - 1), min_size=1))
    results = {i: encoded.lefts[i] @ B for i in workers}
    if not code.is_decodable(workers):
        with pytest.raises(DecodingError):
            code.decode_results(encoded, results)
        return
    expected = A.toarray() @ B
    decoded = code.decode_results(encoded, results)
    np.testing.assert_allclose(decoded, expected, rtol=1e-12, atol=1e-12)


def test_codes_that_sum_blocks_refuse_a_sparse_a_and_name_the_ones_that_keep_it():
    A = scipy.sparse.random_array((6, 3), density=0.5, format="csr", rng=0)
    with pytest.raises(TypeError, match="scheme='rateless'"):
        MDSCode(4, 2).encode_operands(A, np.ones(3))
    with pytest.raises(TypeError, match="over the reals only"):
        UncodedCode(2, field=DEFAULT_PRIME).encode_operands(A, np.ones(3))
    with pytest.raises(ValueError, match="non-empty"):
        UncodedCode(2).encode_operands(scipy.sparse.csr_array((0, 3)), np.ones(3))


def test_memory_estimate_of_a_sparse_a_counts_its_nonzeros():
    code = ReplicationCode(4, 2)
    dense = estimate_memory(code, 10_000, 1000, 1)
    sparse = estimate_memory(code, 10_000, 1000, 1, nnz=10_000)
    # a share holds its block's rows: nnz / m nonzeros each, 12 bytes a nonzero
    assert sparse.client_bytes < dense.client_bytes / 50
    assert max(sparse.worker_bytes) < max(dense.worker_bytes) / 50
