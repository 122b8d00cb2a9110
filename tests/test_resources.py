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
    ("code", "m", "rows"),
    [
        (MDSCode(4, 2), 10, (5, 5, 5, 5)),
        (MDSCode(3, 2), 5, (3, 3, 3)),  # blocks of ceil(5 / 2) rows
        (RowMDSCode([3, 2, 0], 4), 4, (3, 2, 0)),
        (PolynomialCode(5, 2, 2), 9, (5,) * 5),  # ceil(9 / p_a)
    ],
)
def test_share_rows_follow_the_code(code, m, rows):
    assert share_rows(code, m) == rows


def test_estimate_counts_shares_operands_and_results():
    estimate = estimate_memory(MDSCode(4, 2), m=10, d=3, c=2)
    # each worker: 5 x 3 share, 3 x 2 right operand, 5 x 2 result
    assert estimate.worker_bytes == ((15 + 6 + 10) * 8,) * 4
    # client: A (30), shares (60), decode buffer (40), product (20)
    assert estimate.client_bytes == (30 + 60 + 40 + 20) * 8


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
