"""Properties every code shares: decodable sets decode, others raise, batches work."""

import re

import numpy as np
import pytest
from _codes_support import (
    assert_close_real,
    decoding_cond,
    exact_product,
    feed,
    units_of,
    worker_results,
)
from hypothesis import given
from hypothesis import strategies as st

from coded.codes import DEFAULT_PRIME, MDSCode, Piece, RowMDSCode
from coded.errors import DecodingError
from coded.testing import (
    batch_splits,
    codes,
    decodable_subsets,
    operands,
    undecodable_subsets,
)

BIG_PRIME = 2_147_483_647
FIELDS = [None, DEFAULT_PRIME]


def _operands_for(code, data, field):
    m = code.m if isinstance(code, RowMDSCode) else None
    return data.draw(operands(field=field, m=m, max_size=5), label="A, B")


def _check(code, C, A, B, units):
    exact = exact_product(A, B)
    assert C.shape == exact.shape
    if code.field is None:
        assert_close_real(C, exact, decoding_cond(code, units))
    else:
        assert C.dtype == np.int64
        np.testing.assert_array_equal(C, exact)


@pytest.mark.parametrize("field", FIELDS)
@given(data=st.data())
def test_any_decodable_set_decodes(field, data):
    code = data.draw(codes(max_n=8, field=field), label="code")
    A, B = _operands_for(code, data, field)
    workers = data.draw(decodable_subsets(code, minimal=False), label="workers")
    encoded = code.encode_operands(A, B)
    C = code.decode_results(encoded, worker_results(code, encoded, workers))
    _check(code, C, A, B, units_of(code, workers))


@pytest.mark.parametrize("field", FIELDS)
@given(data=st.data())
def test_undecodable_sets_raise_with_counts(field, data):
    code = data.draw(codes(max_n=8, field=field), label="code")
    A, B = _operands_for(code, data, field)
    workers = data.draw(undecodable_subsets(code), label="workers")
    encoded = code.encode_operands(A, B)
    decoder = code.decoder(encoded)
    for worker, value in worker_results(code, encoded, workers).items():
        decoder.add(Piece(worker=worker, start=0, stop=value.shape[0], value=value))
    assert not code.is_decodable(workers)
    assert not decoder.is_decodable
    got, needed = decoder.progress
    assert got < needed == code._G.shape[1] // code._units_per_result
    with pytest.raises(DecodingError, match=re.escape(f"={needed} ")) as info:
        decoder.decode()
    assert f"got {got}." in str(info.value)


@pytest.mark.parametrize("field", [None, DEFAULT_PRIME, BIG_PRIME])
@given(data=st.data())
def test_random_batches_decode_as_soon_as_every_row_is_covered(field, data):
    code = data.draw(
        codes(max_n=6, field=field, kinds=("mds", "row_mds", "polynomial")),
        label="code",
    )
    A, B = _operands_for(code, data, field)
    encoded = code.encode_operands(A, B)
    batches = [
        (i, start, stop)
        for i in range(code.n)
        for start, stop in data.draw(batch_splits(encoded.lefts[i].shape[0]))
    ]
    order = data.draw(st.permutations(batches), label="order")
    decoder = code.decoder(encoded)
    for batch in order:
        assert not decoder.is_decodable
        feed(decoder, code, encoded, [batch])
        if decoder.is_decodable:
            break
    assert decoder.is_decodable
    assert decoder.progress == (code._G.shape[1] // code._units_per_result,) * 2
    C = decoder.decode()
    exact = exact_product(A, B)
    if field is None:
        patterns = np.unique(decoder._received.T, axis=0)
        cond = max(decoding_cond(code, np.flatnonzero(p)) for p in patterns)
        assert_close_real(C, exact, cond)
    else:
        np.testing.assert_array_equal(C, exact)


@given(data=st.data())
def test_decoder_ignores_pieces_after_decodable(data):
    code = MDSCode(5, 3)
    A, B = data.draw(operands(max_size=4))
    encoded = code.encode_operands(A, B)
    decoder = code.decoder(encoded)
    results = worker_results(code, encoded)
    for i in (0, 1, 2):
        decoder.add(
            Piece(worker=i, start=0, stop=results[i].shape[0], value=results[i])
        )
    before = decoder.decode()
    garbage = np.full_like(results[3], 1e6)
    decoder.add(Piece(worker=3, start=0, stop=garbage.shape[0], value=garbage))
    np.testing.assert_array_equal(decoder.decode(), before)
    assert decoder.progress == (3, 3)
