"""Workers lost in-process: injected deaths and lost placed shares (repair).

Killed worker processes are in test_chaos.py.
"""

import re
import time

import numpy as np
import pytest

from coded import (
    LocalCodedCluster,
    MDSCode,
    NotEnoughResultsError,
    Stragglers,
    coded_matmul,
    place_operand,
)

pytestmark = pytest.mark.runtime

A = np.arange(36.0).reshape(12, 3) % 7
X = np.array([1.0, -2.0, 0.5])


def test_injected_death_of_an_in_process_worker():
    with LocalCodedCluster(n_workers=3) as cluster:
        result = coded_matmul(
            A,
            X,
            scheme=MDSCode(3, 2),
            client=cluster.client,
            stragglers=Stragglers(dying=[1]),
        )
        np.testing.assert_allclose(result.product, A @ X, atol=1e-9)
        assert result.used_workers == (0, 2)


def _drop_shares(client, placed, workers):
    """Lose the shares of `workers` (as a dead worker loses them), then wait."""
    client.cancel([placed.futures[i] for i in workers], force=True)
    deadline = time.monotonic() + 30
    while set(placed.live) & set(workers):
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_lost_shares_are_skipped_then_repaired_on_request(client):
    B = np.arange(12.0).reshape(3, 4)
    with place_operand(A, n=4, k=2, client=client) as placed:
        _drop_shares(client, placed, [0, 3])
        assert placed.live == (1, 2)
        assert placed.tolerance_left == 0
        result = coded_matmul(placed, B)
        np.testing.assert_allclose(result.product, A @ B, atol=1e-9)
        assert result.used_workers == (1, 2)
        assert set(result.failed_workers) == {0, 3}
        assert placed.repair() == (0, 3)
        assert placed.live == (0, 1, 2, 3)
        assert placed.tolerance_left == 2
        assert placed.repair() == ()  # nothing lost: nothing to do
        sources_fail = Stragglers(failing=[1, 2])  # decode from the rebuilt shares
        result = coded_matmul(placed, B, stragglers=sources_fail)
        np.testing.assert_allclose(result.product, A @ B, atol=1e-9)
        assert result.used_workers == (0, 3)


def test_a_repair_margin_heals_before_the_next_call(client):
    with place_operand(A, n=4, k=2, client=client, repair_margin=2) as placed:
        _drop_shares(client, placed, [2])
        assert placed.tolerance_left == 1
        result = coded_matmul(placed, X)
        np.testing.assert_allclose(result.product, A @ X, atol=1e-9)
        assert placed.live == (0, 1, 2, 3)


def test_a_repair_without_a_spare_worker_stacks_shares_and_counts_workers(client):
    with place_operand(A, n=6, k=4, client=client) as placed:  # on all 6 workers
        _drop_shares(client, placed, [0])
        assert placed.tolerance_left == 1
        with pytest.warns(UserWarning, match="now tolerates 1 lost Dask worker"):
            assert placed.repair() == (0,)
        host = placed.locations[0]
        stacked = [i for i in range(6) if placed.locations[i] == host]
        assert len(stacked) == 2
        assert placed.tolerance_left == 1  # two shares left to lose: one worker
        _drop_shares(client, placed, stacked)  # as its Dask worker's death would
        assert placed.tolerance_left == 0
        result = coded_matmul(placed, X)
        np.testing.assert_allclose(result.product, A @ X, atol=1e-9)


def test_too_few_shares_name_the_lost_workers_and_the_tolerance(client):
    with place_operand(A, n=4, k=3, client=client) as placed:
        _drop_shares(client, placed, [0, 2])
        message = (
            "The code tolerates 1 lost of 4 shares (one per code worker); lost 2: "
            "worker 0: its "
        )
        with pytest.raises(NotEnoughResultsError, match=re.escape(message)) as error:
            coded_matmul(placed, X, timeout=60)
        assert error.value.tolerance == 1
        assert set(error.value.lost_workers) == {0, 2}
        with pytest.raises(NotEnoughResultsError, match="Place A again"):
            placed.repair()
