"""RowMDSCode over blocks of rows: any u coded blocks decode, O(u^2) generator."""

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from coded.codes import DEFAULT_PRIME, Piece, RowMDSCode


@pytest.mark.parametrize("field", [None, DEFAULT_PRIME])
@given(data=st.data())
def test_any_u_coded_blocks_decode(field, data):
    v = data.draw(st.integers(1, 5), label="block_rows")
    blocks = data.draw(st.lists(st.integers(0, 4), min_size=1, max_size=4))
    if sum(blocks) == 0:
        blocks[0] = 1
    m = data.draw(st.integers(1, sum(blocks) * v), label="m")
    u = -(-m // v)
    code = RowMDSCode([b * v for b in blocks], m, field, block_rows=v)
    assert code.blocks == u
    assert code.generator.shape == (sum(blocks), u)
    chosen = sorted(data.draw(st.permutations(range(sum(blocks))))[:u])
    rng = np.random.default_rng(data.draw(st.integers(0, 99)))
    A = rng.integers(-9, 10, (m, 3))
    x = rng.integers(-9, 10, 3)
    if field is None:
        A, x = A.astype(float), x.astype(float)
    enc = code.encode_operands(A, x)
    decoder = code.decoder(enc)
    offsets = np.concatenate([[0], np.cumsum(blocks)])
    for block in chosen:
        worker = int(np.searchsorted(offsets, block, side="right") - 1)
        start = (block - offsets[worker]) * v
        value = code.multiply(enc.lefts[worker][start : start + v], enc.right(worker))
        decoder.add(Piece(worker=worker, start=start, stop=start + v, value=value))
    assert decoder.is_decodable
    C = decoder.decode()
    if field is None:
        np.testing.assert_allclose(C, A @ x, atol=1e-6 * max(1.0, np.abs(A @ x).max()))
    else:
        np.testing.assert_array_equal(C, A @ x)


def test_generator_grows_with_blocks_not_rows():
    m, v = 100_000, 1_000
    code = RowMDSCode([60_000, 60_000, 40_000, 40_000], m, block_rows=v)
    assert code.generator.shape == (200, 100)
    assert code.recovery_threshold == 3
    assert code.row_ranges[1] == (60_000, 120_000)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: RowMDSCode([3, 2], 4, block_rows=2),
            "`loads` must be multiples of block_rows=2, got [3, 2].",
        ),
        (
            lambda: RowMDSCode([2, 2], 5, block_rows=2),
            "`loads` must hold at least u=3 blocks of 2 rows (6 rows for m=5), "
            "got sum(loads)=4.",
        ),
        (
            lambda: RowMDSCode([6000, 6000], 6000),
            "the generator would be 12000 x 6000 coded blocks (> 2**24 entries): "
            "group rows into larger blocks with `block_rows` (got 1), e.g. as the "
            "allocation solvers do with `max_blocks`.",
        ),
        (lambda: RowMDSCode([], 1), "`loads` must be non-empty, got ()."),
        (lambda: RowMDSCode([2, 2], 0), "`m` must be >= 1, got m=0."),
        (
            lambda: RowMDSCode([2, 2], 2, block_rows=0),
            "`block_rows` must be >= 1, got block_rows=0.",
        ),
        (
            lambda: RowMDSCode([8, 6], 2, 7, block_rows=2),
            "`sum(loads) / block_rows` must be <= p - 1 = 6 (distinct nonzero "
            "evaluation points of GF(7)), got sum(loads) / block_rows=7.",
        ),
    ],
)
def test_block_validation(call, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):  # all of it
        call()


def test_the_generator_may_hold_exactly_the_entry_limit(monkeypatch):
    monkeypatch.setattr(RowMDSCode, "_MAX_GENERATOR", 12)  # 2**24 is 128 MB
    assert RowMDSCode([6], 2).generator.shape == (6, 2)  # 6 x 2 = 12 entries
    with pytest.raises(ValueError, match=re.escape("would be 7 x 2 coded blocks")):
        RowMDSCode([7], 2)
