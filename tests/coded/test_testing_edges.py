"""coded.testing's edge-heavy strategies draw the edges they promise."""

import math

import numpy as np
import pytest
from hypothesis import find, given
from hypothesis import strategies as st

from coded.codes import MDSCode
from coded.codes._crt import exact_primes, primes_for_bound
from coded.testing import (
    boundary_operands,
    crt_boundary_operands,
    dynamic_range_matrices,
    exact_operands,
    field_boundaries,
    worst_erasure_patterns,
)


@pytest.mark.parametrize("p", [7, 23, 65537, 2**31 - 1])
def test_field_boundaries_stay_in_the_signed_range_and_reach_its_ends(p):
    h = (p - 1) // 2
    for edge in (h, -h, h - 1, 0, 1, -1):
        assert find(field_boundaries(p), lambda x, edge=edge: x == edge) == edge

    @given(x=field_boundaries(p))
    def check(x):
        assert -h <= x <= h

    check()


@pytest.mark.parametrize("p", [7, 23, 65537, 2**31 - 1])  # (p - 1)/2: 3, 11, 2^15, odd
@given(data=st.data())
def test_boundary_operands_sit_exactly_at_the_exact_bound(p, data):
    A, B = data.draw(boundary_operands(p, m=2, max_size=4))
    B2 = B.reshape(B.shape[0], -1)
    d = A.shape[1]
    bound = d * int(np.abs(A).max()) * int(np.abs(B2).max())
    assert bound == (p - 1) // 2  # 2 bound = p - 1 < p: accepted, and the largest
    C = A.astype(object) @ B2.astype(object)
    assert abs(C[0, 0]) == (p - 1) // 2
    assert A.shape[0] == 2


@given(pair=crt_boundary_operands())
def test_crt_boundary_operands_straddle_a_prime_count(pair):
    A, B = pair
    bound = abs(int(A[0, 0])) * abs(int(B[0]))
    halves = [(math.prod(exact_primes(j)) - 1) // 2 for j in range(1, 7)]
    # within sqrt of the largest bound of some prime count: j or j + 1 primes
    assert any(abs(bound - half) <= math.isqrt(half) + 1 for half in halves)
    j = len(primes_for_bound(bound))
    assert 2 * bound < math.prod(exact_primes(j))
    assert j == 1 or 2 * bound >= math.prod(exact_primes(j - 1))


@given(pair=exact_operands(m=3, max_size=3))
def test_exact_operands_are_int64(pair):
    A, B = pair
    assert A.dtype == B.dtype == np.int64
    assert A.shape[0] == 3
    assert A.shape[1] == B.shape[0]


@pytest.mark.parametrize(("n", "k"), [(6, 4), (7, 5), (8, 5)])
def test_worst_erasure_pattern_is_the_certified_worst(n, k):
    code = MDSCode(n, k)
    worst = code.worst_condition_number()
    assert worst.exact

    @given(survivors=worst_erasure_patterns(code, top=1))
    def check(survivors):
        assert tuple(survivors) == tuple(worst.survivors)

    check()


@given(X=dynamic_range_matrices((3, 4), max_exponent=30))
def test_dynamic_range_entries_are_signed_powers_of_two(X):
    nonzero = np.abs(X[X != 0])
    exponents = np.log2(nonzero)
    assert np.array_equal(exponents, np.round(exponents))
    assert np.all(np.abs(exponents) <= 30)
