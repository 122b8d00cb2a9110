"""`is_decodable` against oracles that do not share its code: ranks and truth tables.

coded.testing's subset strategies are built from `is_decodable`, so they cannot
test it; here the decodable sets come from linear algebra (numpy's and galois'
matrix_rank of the workers' generator rows) and from tables written by hand.
"""

import numpy as np
import pytest
from _codes_support import units_of
from hypothesis import given, settings
from hypothesis import strategies as st

from coded.codes import (
    MDSCode,
    PolynomialCode,
    ReplicationCode,
    RowMDSCode,
    TransposedCode,
    UncodedCode,
)
from coded.codes._fields import galois_field
from coded.testing import codes, decodable_subsets, undecodable_subsets

UNIT_KINDS = ("mds", "replication", "uncoded", "row_mds")


def _rank_decodable(code, workers):
    """Whether the generator rows of `workers` have full column rank."""
    G = np.asarray(code.generator)
    rows = G[units_of(code, sorted(workers))]
    if rows.shape[0] == 0:
        return False
    if code.p is None:
        rank = np.linalg.matrix_rank(rows.astype(np.float64))
    else:
        rank = np.linalg.matrix_rank(galois_field(code.p)(rows % code.p))
    return rank == G.shape[1]


@settings(max_examples=30)  # galois' rank over GF(p) is slow on its first calls
@given(data=st.data())
def test_is_decodable_iff_the_generator_rows_have_full_rank(data):
    field = data.draw(st.sampled_from([None, 65537]))
    code = data.draw(codes(max_n=7, field=field, kinds=UNIT_KINDS))
    workers = data.draw(st.sets(st.integers(0, code.n - 1)))
    assert code.is_decodable(workers) == _rank_decodable(code, workers)


@given(data=st.data())
def test_transposed_code_is_decodable_iff_the_inner_rows_have_full_rank(data):
    inner = data.draw(codes(max_n=6, kinds=("mds", "replication", "uncoded")))
    workers = data.draw(st.sets(st.integers(0, inner.n - 1)))
    assert TransposedCode(inner).is_decodable(workers) == _rank_decodable(
        inner, workers
    )


@given(data=st.data())
def test_subset_strategies_agree_with_the_rank_oracle(data):
    code = data.draw(codes(max_n=7, field=65537, kinds=UNIT_KINDS))
    good = data.draw(decodable_subsets(code))
    bad = data.draw(undecodable_subsets(code))
    assert _rank_decodable(code, good)
    assert not _rank_decodable(code, bad)
    # a shortest decodable prefix needs its last worker; a longest undecodable one
    # becomes decodable with the next
    assert any(not _rank_decodable(code, set(good) - {w}) for w in good)
    rest = set(range(code.n)) - set(bad)
    assert any(_rank_decodable(code, {*bad, w}) for w in rest)


@pytest.mark.parametrize(
    ("code", "decodable", "not_decodable"),
    [
        (MDSCode(5, 3), [(0, 2, 4), (1, 2, 3), (0, 1, 2, 3, 4)], [(), (1, 3), (4,)]),
        (MDSCode(4, 2, field=7), [(0, 3), (1, 2)], [(2,), ()]),
        # worker i holds block i mod 2
        (ReplicationCode(6, 3), [(0, 1), (4, 5), (2, 3, 4)], [(0, 2, 4), (1, 3, 5)]),
        (UncodedCode(3), [(0, 1, 2)], [(0, 1), (1, 2), (0, 2)]),
        (PolynomialCode(6, 2, 2), [(0, 1, 2, 3), (2, 3, 4, 5)], [(0, 1, 2), (5,)]),
        # 2 blocks of 2 rows; worker 0 holds 2 coded rows, worker 1 none, worker 2 four
        (RowMDSCode([2, 0, 4], 4), [(2,), (0, 2), (0, 1, 2)], [(0,), (0, 1), (1,)]),
    ],
    ids=repr,
)
def test_is_decodable_truth_table(code, decodable, not_decodable):
    for workers in decodable:
        assert code.is_decodable(workers), workers
    for workers in not_decodable:
        assert not code.is_decodable(workers), workers
