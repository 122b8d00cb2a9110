"""The resource guard: memory estimates checked before anything is encoded."""

import numpy as np
import pytest

from coded import (
    LocalCodedCluster,
    MDSCode,
    PolynomialCode,
    ResourceError,
    RowMDSCode,
    coded_matmul,
    place_operand,
)
from coded._resources import (
    WORKER_FRACTION,
    MemoryEstimate,
    check_memory,
    estimate_memory,
    share_rows,
)


@pytest.mark.parametrize(
    ("code", "m"),
    [
        (MDSCode(4, 2), 10),
        (MDSCode(3, 2), 5),
        (MDSCode(6, 4), 37),
        (RowMDSCode([3, 2, 0], 4), 4),
    ],
)
def test_share_rows_match_the_encoding(code, m):
    lefts = code.encode_operands(np.ones((m, 3)), np.ones(3)).lefts
    assert share_rows(code, m) == tuple(np.shape(left)[0] for left in lefts)


def test_polynomial_shares_hold_a_block_of_a():
    assert share_rows(PolynomialCode(5, 2, 2), 9) == (5,) * 5  # ceil(9 / p_a)


def test_estimate_counts_shares_operands_and_results():
    code = MDSCode(4, 2)
    rows = share_rows(code, 10)
    estimate = estimate_memory(code, m=10, d=3, c=2)
    # each worker: rows x 3 share, 3 x 2 right operand, rows x 2 result
    assert estimate.worker_bytes == tuple((r * 3 + 6 + r * 2) * 8 for r in rows)
    # client: A, every share, the decode buffer and the product
    coded = sum(rows)
    assert estimate.client_bytes == (30 + coded * 3 + coded * 2 + 20) * 8


def test_check_memory_names_the_estimate_and_the_limit():
    estimate = MemoryEstimate(client_bytes=3 * 2**30, worker_bytes=(2**20, 2**29))
    with pytest.raises(ResourceError, match=r"client needs about 3,072\.0 MiB"):
        check_memory(estimate, client_available=2**30, worker_limits=[])
    with pytest.raises(ResourceError, match=r"worker 1 needs about 512\.0 MiB"):
        check_memory(estimate, client_available=None, worker_limits=[2**30, 2**29])
    fits = int(2**29 / WORKER_FRACTION) + 1
    check_memory(estimate, client_available=2**32, worker_limits=[None, fits])


@pytest.mark.runtime
def test_calls_that_cannot_fit_a_worker_raise_before_encoding():
    # (the workers themselves pause at 64 MiB: the refusal must come first)
    A = np.broadcast_to(np.float64(1.0), (40_000, 400))  # 128 MB, never allocated
    with LocalCodedCluster(n_workers=2, memory_limit="64 MiB") as cluster:
        with pytest.raises(ResourceError, match=r"memory_limit of 64\.0 MiB"):
            coded_matmul(A, np.ones(400), scheme="uncoded", client=cluster.client)
        with pytest.raises(ResourceError, match="worker 0 needs about"):
            place_operand(A, n=2, k=1, client=cluster.client)
