"""A HierarchicalCode runs through coded_matmul as a flat assignment."""

import re

import numpy as np
import pytest
from conftest import two_groups_of_three

from coded import (
    NotEnoughResultsError,
    Stragglers,
    coded_matmul,
    place_operand,
)

pytestmark = pytest.mark.runtime


@pytest.mark.parametrize("failing", [[], [0, 4], [3, 4, 5]])
def test_group_losses_within_the_guarantee_decode(client, failing):
    rng = np.random.default_rng(len(failing))
    A, x = rng.standard_normal((10, 4)), rng.standard_normal(4)
    result = coded_matmul(
        A,
        x,
        scheme=two_groups_of_three(),
        client=client,
        stragglers=Stragglers(failing=failing),
    )
    np.testing.assert_allclose(result.product, A @ x, rtol=1e-10, atol=1e-10)
    assert not set(result.used_workers) & set(failing)


def test_exact_over_gf_p(client):
    A, B = np.arange(24).reshape(8, 3) - 9, np.arange(6).reshape(3, 2)
    result = coded_matmul(A, B, scheme=two_groups_of_three(65537), client=client)
    np.testing.assert_array_equal(result.product, A @ B)


def test_a_pattern_beyond_the_guarantee_raises_before_the_timeout(client):
    A, x = np.ones((6, 2)), np.ones(2)
    message = "no decodable set of results can still arrive"
    with pytest.raises(NotEnoughResultsError, match=re.escape(message)):
        coded_matmul(
            A,
            x,
            scheme=two_groups_of_three(),
            client=client,
            timeout=120.0,
            stragglers=Stragglers(failing=[0, 1, 4, 5]),
        )


def test_a_placed_operand_serves_several_products(client):
    rng = np.random.default_rng(5)
    A = rng.standard_normal((9, 3))
    with place_operand(A, scheme=two_groups_of_three(), client=client) as placed:
        for seed in range(2):
            x = np.random.default_rng(seed).standard_normal(3)
            result = coded_matmul(placed, x, client=client)
            np.testing.assert_allclose(result.product, A @ x, rtol=1e-10, atol=1e-10)
