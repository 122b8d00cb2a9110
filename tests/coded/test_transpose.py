"""``A.T @ y`` decoded from the shares of a block code (``coded.codes._transpose``)."""

import itertools
import re

import galois
import numpy as np
import pytest
import scipy.sparse
from hypothesis import given
from hypothesis import strategies as st

from coded import MDSCode, ReplicationCode, RowMDSCode, UncodedCode
from coded.codes import Piece
from coded.codes._transpose import TransposedCode

P = 65_537


def _results(code, encoded, workers):
    return {i: code.multiply(encoded.lefts[i], encoded.right(i)) for i in workers}


@given(
    n=st.integers(2, 7),
    data=st.data(),
    m=st.integers(1, 15),
    d=st.integers(1, 4),
    c=st.integers(0, 2),
    seed=st.integers(0, 2**16),
)
def test_any_decodable_set_gives_a_t_y_over_the_reals(n, data, m, d, c, seed):
    k = data.draw(st.integers(1, n), label="k")
    code = TransposedCode(MDSCode(n, k))
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, d))
    y = rng.standard_normal(m if c == 0 else (m, c))
    encoded = code.encode_operands(A, y)
    workers = data.draw(st.permutations(range(n)), label="order")[:k]
    product = code.decode_results(encoded, _results(code, encoded, workers))
    np.testing.assert_allclose(product, A.T @ y, atol=1e-8 * (1 + np.abs(A).sum()))
    assert product.shape == (A.T @ y).shape


@given(
    n=st.integers(2, 6),
    data=st.data(),
    m=st.integers(1, 12),
    d=st.integers(1, 4),
    seed=st.integers(0, 2**16),
)
def test_any_k_workers_give_a_t_y_exactly_over_gf_p(n, data, m, d, seed):
    k = data.draw(st.integers(1, n), label="k")
    code = TransposedCode(MDSCode(n, k, field=P))
    rng = np.random.default_rng(seed)
    A, y = rng.integers(-50, 51, size=(m, d)), rng.integers(-50, 51, size=(m, 2))
    encoded = code.encode_operands(A, y)
    workers = data.draw(st.permutations(range(n)), label="order")[:k]
    product = code.decode_results(encoded, _results(code, encoded, workers))
    assert np.array_equal(product, A.T @ y)


@pytest.mark.parametrize(
    "inner", [ReplicationCode(6, 3), UncodedCode(4), MDSCode(5, 3)], ids=repr
)
def test_decodable_sets_match_the_inner_code(inner):
    code = TransposedCode(inner)
    A = np.arange(40.0).reshape(10, 4) % 7
    y = np.linspace(-1.0, 1.0, 10)
    encoded = code.encode_operands(A, y)
    for size in range(1, inner.n + 1):
        for workers in itertools.combinations(range(inner.n), size):
            assert code.is_decodable(workers) == inner.is_decodable(workers)
            if code.is_decodable(workers):
                product = code.decode_results(encoded, _results(code, encoded, workers))
                np.testing.assert_allclose(product, A.T @ y, atol=1e-9)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="needs a block code"):
        TransposedCode(RowMDSCode([2, 2], 3))
    code = TransposedCode(MDSCode(3, 2))
    with pytest.raises(ValueError, match=r"`y` must have A's m=4 rows"):
        code.encode_operands(np.ones((4, 2)), np.ones(3))
    encoded = code.encode_operands(np.ones((4, 2)), np.ones(4))
    decoder = code.decoder(encoded)
    with pytest.raises(ValueError, match="needs whole worker results"):
        decoder.add(Piece(worker=0, start=0, stop=1, value=np.ones((2, 2))))


def test_bad_input_messages_in_full():
    with pytest.raises(
        ValueError,
        match=re.escape(
            "`A.T @ y` needs a block code (MDS, replication, uncoded) that encodes "
            "A alone, got RowMDSCode; place A with one of those schemes "
            "(allocations' row-MDS codes are not supported)."
        ),
    ):
        TransposedCode(RowMDSCode([2, 2], 3))
    code = TransposedCode(MDSCode(3, 2))
    with pytest.raises(
        ValueError,
        match=re.escape("`y` must have A's m=4 rows for A.T @ y, got shape (3,)."),
    ):
        code.encode_operands(np.ones((4, 2)), np.ones(3))
    # a 1-D A is refused by the inner code's own check, not an IndexError here
    with pytest.raises(ValueError, match=re.escape("`A` must have ndim in (2,)")):
        code.encode_operands(np.ones(4), np.ones(4))


def test_a_single_worker_code_and_its_worker_count():
    code = TransposedCode(UncodedCode(1))
    assert code.n == 1
    assert TransposedCode(MDSCode(5, 3)).n == 5
    A, y = np.arange(6.0).reshape(3, 2), np.array([1.0, -2.0, 3.0])
    encoded = code.encode_operands(A, y)
    product = code.decode_results(encoded, _results(code, encoded, [0]))
    np.testing.assert_array_equal(product, [8.0, 10.0])  # 0 - 4 + 12, 1 - 6 + 15


def test_y_blocks_are_read_only_and_a_new_y_reuses_the_encoding():
    code = TransposedCode(MDSCode(4, 2))
    A = np.arange(12.0).reshape(4, 3)
    first = code.encode_operands(A, np.ones(4))
    assert not first.shared_right.flags.writeable
    # encode_right accepts the transposed encoding itself (its forward context)
    y = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 0.0], [0.0, -1.0]])
    second = code.encode_right(first, y)
    assert second.lefts is first.lefts
    product = code.decode_results(second, _results(code, second, [1, 3]))
    np.testing.assert_allclose(product, A.T @ y, atol=1e-12)


def test_signed_integers_at_the_exactness_bound():
    # 2 m max|A| max|y| < p: m = 4, max|A| = 8, so max|y| = 1024 is the largest
    # y; A.T @ y then reaches +-(p - 1) / 2 = +-32768, the ends of the lift
    code = TransposedCode(MDSCode(3, 2, field=P))
    A = np.full((4, 2), 8)
    y = np.array([[1024, -1024]] * 4)
    encoded = code.encode_operands(A, y)
    product = code.decode_results(encoded, _results(code, encoded, [0, 2]))
    assert product.dtype == np.int64
    np.testing.assert_array_equal(product, [[32768, -32768], [32768, -32768]])
    with pytest.raises(
        ValueError,
        match=re.escape(
            "exact integer results need 2 * max|C| < p; the inputs only guarantee "
            "max|C| <= d * max|A| * max|B| = 32800, so p must exceed 65600, got "
            "p=65537."
        ),
    ):
        code.encode_right(encoded, np.full(4, 1025))
    # a zero A bounds nothing: any y gives the exact zero product
    zero = code.encode_operands(np.zeros((4, 2), dtype=np.int64), np.full(4, 10**6))
    product = code.decode_results(zero, _results(code, zero, [1, 2]))
    np.testing.assert_array_equal(product, [0, 0])


def test_field_arrays_in_give_a_field_array_out():
    GF = galois.GF(7)
    code = TransposedCode(MDSCode(3, 2, field=7))
    A, y = GF([[1, 2], [6, 3], [5, 4]]), GF([6, 2, 3])
    encoded = code.encode_operands(A, y)
    decoder = code.decoder(encoded)
    for i in (2, 0):  # pieces as FieldArrays too
        value = GF(code.multiply(encoded.lefts[i], encoded.right(i)))
        decoder.add(Piece(worker=i, start=0, stop=2, value=value))
    product = decoder.decode()
    assert isinstance(product, GF)
    # by hand: 6 + 12 + 15 = 33 = 5 and 12 + 6 + 12 = 30 = 2 (mod 7)
    np.testing.assert_array_equal(product.view(np.ndarray), [5, 2])


def test_residue_operands_decode_to_residues():
    code = TransposedCode(MDSCode(4, 2, field=7))
    A = np.array([[1, 6], [2, 3], [4, 5]])
    y = np.array([3, 4, 6])
    encoded = code.encode_right(code.inner.encode_residues(A, np.zeros(2, int)), y)
    product = code.decode_results(encoded, _results(code, encoded, [3, 1]))
    # A.T @ y = [3 + 8 + 24, 18 + 12 + 30] = [35, 60] = [0, 4] mod 7
    assert product.dtype == np.int64
    np.testing.assert_array_equal(product, [0, 4])


def test_a_sparse_a_under_replication_gives_a_t_y():
    code = TransposedCode(ReplicationCode(4, 2))
    A = scipy.sparse.csr_array(np.array([[0.0, 2.0], [1.0, 0.0], [0.0, 0.0]]))
    y = np.array([1.0, -1.0, 5.0])
    encoded = code.encode_operands(A, y)
    assert encoded.lefts[0].format == "csr"
    product = code.decode_results(encoded, _results(code, encoded, [2, 1]))
    np.testing.assert_array_equal(product, [-1.0, 2.0])


def test_marked_whole_results_track_decodability():
    code = TransposedCode(MDSCode(4, 2))
    encoded = code.encode_operands(np.ones((4, 3)), np.ones(4))
    decoder = code.decoder(encoded)
    decoder.mark(3, 0, 2)
    assert not decoder.is_decodable
    assert decoder.progress == (1, 2)
    decoder.mark(0, 0, 2)
    assert decoder.is_decodable
    assert decoder.progress == (2, 2)
    with pytest.raises(ValueError, match=re.escape("rows 0..2), got the row range")):
        code.decoder(encoded).mark(1, 0, 1)
    with pytest.raises(ValueError, match=re.escape("range [1, 2) of worker 1.")):
        code.decoder(encoded).mark(1, 1, 2)


def test_a_real_decode_that_overflows_raises():
    # every piece is finite (1.7e308); the solve of a non-systematic (4, 2) code
    # from workers 2 and 3 is not: the inner decoder refuses it, no inf returned
    code = TransposedCode(MDSCode(4, 2))
    encoded = code.encode_operands(np.ones((2, 1)), np.ones(2))
    decoder = code.decoder(encoded)
    for w in (2, 3):
        value = np.full(8, 1.7e308 * (-1) ** w)  # 2 units of d x K = 1 x 4
        stop = encoded.lefts[w].shape[0]
        decoder.add(Piece(worker=w, start=0, stop=stop, value=value))
    with pytest.raises(ValueError, match=r"^decoding overflows float64"):
        decoder.decode()
