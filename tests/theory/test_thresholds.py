"""Recovery thresholds of MDS, polynomial, MatDot and entangled polynomial codes."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from theory import (
    recovery_threshold_entangled,
    recovery_threshold_matdot,
    recovery_threshold_mds,
    recovery_threshold_polynomial,
)


def test_values():
    assert recovery_threshold_mds(7) == 7
    assert recovery_threshold_polynomial(3, 4) == 12
    assert recovery_threshold_matdot(1) == 1
    assert recovery_threshold_matdot(4) == 7
    assert recovery_threshold_entangled(2, 3, 4) == 2 * 3 * 4 + 1
    assert recovery_threshold_entangled(3, 1, 1) == 5


@given(p=st.integers(1, 50), m=st.integers(1, 50), n=st.integers(1, 50))
def test_entangled_specialises_to_polynomial_and_matdot(p, m, n):
    # p = 1: polynomial code on m x n blocks; m = n = 1: MatDot with p inner blocks
    assert recovery_threshold_entangled(1, m, n) == recovery_threshold_polynomial(m, n)
    assert recovery_threshold_entangled(p, 1, 1) == recovery_threshold_matdot(p)
    # entangled never needs more than the polynomial code on the same p*m*n blocks
    assert recovery_threshold_entangled(p, m, n) <= p * m * n + p


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: recovery_threshold_mds(0), "`k` must be >= 1, got k=0."),
        (lambda: recovery_threshold_polynomial(0, 2), "`p_a` must be >= 1, got p_a=0."),
        (
            lambda: recovery_threshold_polynomial(2, -1),
            "`p_b` must be >= 1, got p_b=-1.",
        ),
        (lambda: recovery_threshold_matdot(0), "`m` must be >= 1, got m=0."),
        (lambda: recovery_threshold_entangled(0, 1, 1), "`p` must be >= 1, got p=0."),
        (lambda: recovery_threshold_entangled(1, 0, 1), "`m` must be >= 1, got m=0."),
        (lambda: recovery_threshold_entangled(1, 1, 0), "`n` must be >= 1, got n=0."),
    ],
)
def test_input_validation(call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call()


def test_type_error():
    with pytest.raises(TypeError, match=re.escape("`k` must be an integer")):
        recovery_threshold_mds(2.0)
