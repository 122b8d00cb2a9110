"""``A.T @ y`` decoded from the shares of a block code (``coded.codes._transpose``)."""

import itertools

import numpy as np
import pytest
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
