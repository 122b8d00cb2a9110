"""The hypothesis strategies of coded.testing generate what they promise."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from coded.codes import Code, MDSCode, RowMDSCode
from coded.testing import (
    batch_splits,
    codes,
    decodable_subsets,
    matrices,
    mds_codes,
    operands,
    undecodable_subsets,
)


@given(code=codes(max_n=8))
def test_codes_are_valid_codes(code):
    assert isinstance(code, Code)
    assert 1 <= code.recovery_threshold <= code.n <= 8
    assert code.is_decodable(range(code.n))


@given(data=st.data())
def test_decodable_and_undecodable_subsets(data):
    code = data.draw(codes(max_n=8))
    good = data.draw(decodable_subsets(code))
    bad = data.draw(undecodable_subsets(code))
    assert code.is_decodable(good)
    assert not code.is_decodable(bad)
    assert len(bad) < code.recovery_threshold
    if isinstance(code, MDSCode):
        assert len(good) == code.k


@given(code=mds_codes(max_n=6, field=65537, systematic=True))
def test_mds_codes_respect_fixed_parameters(code):
    assert code.systematic
    assert code.field.characteristic == 65537


@given(pair=operands(field=65537, m=3, max_size=4, vector=True))
def test_operands_have_matching_shapes(pair):
    A, B = pair
    assert A.shape[0] == 3
    assert B.ndim == 1
    assert A.shape[1] == B.shape[0]
    assert A.dtype == B.dtype == np.int64


@given(X=matrices((2, 3), max_abs=4))
def test_matrices_are_integer_valued_floats(X):
    assert X.dtype == np.float64
    assert np.array_equal(X, np.round(X))
    assert np.abs(X).max() <= 4


@given(rows=st.integers(0, 9), data=st.data())
def test_batch_splits_partition_the_rows(rows, data):
    split = data.draw(batch_splits(rows, max_batches=3))
    assert len(split) <= 3
    covered = [r for start, stop in split for r in range(start, stop)]
    assert covered == list(range(rows))
    assert all(start < stop for start, stop in split)


def test_row_mds_codes_are_drawn():
    kinds = set()

    @given(code=codes(max_n=4, kinds=("row_mds",)))
    def collect(code):
        kinds.add(type(code))

    collect()
    assert kinds == {RowMDSCode}
