"""Erasure repair: lost shares rebuilt from any decodable set of surviving ones."""

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from coded._placed import _workers_tolerated
from coded.codes import DEFAULT_PRIME, MDSCode, RowMDSCode
from coded.errors import DecodingError
from coded.testing import codes, decodable_subsets, matrices

ROW_CODES = ("mds", "replication", "uncoded", "row_mds")


@pytest.mark.parametrize("field", [None, DEFAULT_PRIME])
@given(data=st.data())
def test_repair_rebuilds_every_share_from_any_decodable_set(field, data):
    code = data.draw(codes(max_n=8, field=field, kinds=ROW_CODES), label="code")
    m = code.m if isinstance(code, RowMDSCode) else data.draw(st.integers(1, 9))
    A = data.draw(matrices(shape=(m, data.draw(st.integers(1, 4))), field=field))
    lefts = code.encode_operands(A, np.zeros(A.shape[1], dtype=A.dtype)).lefts
    survivors = data.draw(decodable_subsets(code, minimal=False), label="survivors")
    rebuilt = code.repair({j: lefts[j] for j in survivors}, range(code.n))
    for i in range(code.n):
        if field is None:
            scale = max(1.0, float(np.abs(lefts[i]).max(initial=0.0)))
            np.testing.assert_allclose(rebuilt[i], lefts[i], atol=1e-8 * scale)
        else:
            np.testing.assert_array_equal(rebuilt[i], lefts[i])


def test_repair_from_too_few_shares_raises():
    code = MDSCode(4, 3)
    lefts = code.encode_operands(np.ones((6, 2)), np.ones(2)).lefts
    with pytest.raises(DecodingError, match=r"workers \[1, 2\] are not a decodable"):
        code.repair({1: lefts[1], 2: lefts[2]}, [0])


@given(
    shares=st.lists(st.integers(1, 4), min_size=1, max_size=7),
    budget=st.integers(-2, 8),
)
def test_workers_tolerated_is_the_largest_any_loss_of_that_many_survives(
    shares, budget
):
    tolerated = _workers_tolerated(shares, budget)
    if budget < 0:
        assert tolerated == budget
        return

    def survives(w):  # every set of w workers holds at most `budget` shares
        return all(sum(c) <= budget for c in itertools.combinations(shares, w))

    assert survives(tolerated)
    assert tolerated == len(shares) or not survives(tolerated + 1)
