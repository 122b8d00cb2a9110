"""Group-local decoding: one message per outer group, its leader decodes the group.

The in-process cluster checks products, patterns and errors against the flat
resident path; tests/runtime/test_resident.py kills a group's leader mid-call
(worker processes).
"""

import re

import numpy as np
import pytest
from conftest import two_groups_of_three

from coded import (
    HierarchicalCode,
    NotEnoughResultsError,
    Stragglers,
    coded_matmul,
    place_operand,
)

pytestmark = pytest.mark.runtime

P = 65_537


@pytest.mark.parametrize("field", [None, P])
def test_grouped_and_flat_calls_give_the_same_product(client, field):
    rng = np.random.default_rng(0 if field is None else 1)
    A = rng.integers(-9, 10, size=(14, 5))
    B = rng.integers(-9, 10, size=(5, 3))
    if field is None:
        A, B = A.astype(float), B.astype(float)
    with place_operand(A, scheme=two_groups_of_three(field), client=client) as placed:
        grouped = coded_matmul(placed, B, transport="grouped")
        flat = coded_matmul(placed, B, transport="resident")
        vector = coded_matmul(placed, B[:, 0], transport="grouped")
    assert grouped.transport == "grouped"
    assert flat.transport == "resident"
    if field is None:
        np.testing.assert_allclose(grouped.product, A @ B, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(vector.product, A @ B[:, 0], atol=1e-10)
        assert 1.0 <= grouped.condition_number < 1e3
    else:
        np.testing.assert_array_equal(grouped.product, A @ B)
        np.testing.assert_array_equal(vector.product, A @ B[:, 0])
    used = grouped.used_workers  # two members of one group
    assert len(used) == 2
    assert len({w // 3 for w in used}) == 1
    assert {t.worker for t in grouped.tasks if t.status == "used"} == set(used)


@pytest.mark.parametrize(
    ("stragglers", "allowed"),
    [
        (Stragglers(failing=[0, 1, 4]), {3, 5}),  # group 0 cannot decode
        (Stragglers(failing=[3], delays={0: 30.0, 1: 30.0}), {4, 5}),
    ],
)
def test_lost_and_slow_members_leave_the_decode(client, stragglers, allowed):
    rng = np.random.default_rng(2)
    A, x = rng.standard_normal((12, 4)), rng.standard_normal(4)
    with place_operand(A, scheme=two_groups_of_three(), client=client) as placed:
        result = coded_matmul(
            placed, x, transport="grouped", stragglers=stragglers, timeout=20
        )
    np.testing.assert_allclose(result.product, A @ x, rtol=1e-10, atol=1e-10)
    assert set(result.used_workers) == allowed
    assert result.stage_seconds["total"] < 20


def test_groups_beyond_the_guarantee_raise_a_named_error(client):
    A, x = np.ones((6, 2)), np.ones(2)
    with (
        place_operand(A, scheme=two_groups_of_three(), client=client) as placed,
        pytest.raises(NotEnoughResultsError) as caught,
    ):
        coded_matmul(
            placed,
            x,
            transport="grouped",
            stragglers=Stragglers(failing=[0, 1, 4, 5]),
            timeout=60,
        )
    message = str(caught.value)
    assert "too many groups cannot answer" in message
    assert re.search(r"group 0: group 0 lost too many members: worker 0", message)
    assert re.search(r"group 1: .*worker 4 .*injected failure", message)
    assert set(caught.value.lost_workers) == {0, 1, 4, 5}


def test_silent_groups_end_at_the_timeout(client):
    A, x = np.ones((6, 2)), np.ones(2)
    slow = Stragglers(delays=dict.fromkeys(range(6), 30.0))
    with (
        place_operand(A, scheme=two_groups_of_three(), client=client) as placed,
        pytest.raises(NotEnoughResultsError, match=r"timeout after 1\.0 s"),
    ):
        coded_matmul(placed, x, transport="grouped", stragglers=slow, timeout=1.0)


def test_what_group_leaders_cannot_serve_is_refused_by_name(client):
    A, x = np.ones((6, 2)), np.ones(2)
    with pytest.raises(ValueError, match="serves the shares of a placed A"):
        coded_matmul(
            A, x, scheme=two_groups_of_three(), client=client, transport="grouped"
        )
    with (
        place_operand(A, client=client, k=4) as flat,
        pytest.raises(ValueError, match="HierarchicalCode of two levels"),
    ):
        coded_matmul(flat, x, transport="grouped")
    product = HierarchicalCode(6, [(2, 1), (3, 2)], P, decoding="product")
    with (
        place_operand(A.astype(int), scheme=product, client=client) as placed,
        pytest.raises(ValueError, match="decoding='groups'"),
    ):
        coded_matmul(placed, x.astype(int), transport="grouped")
