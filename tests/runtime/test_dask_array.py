"""dask.array operands: encoded where their chunks live, never on the client."""

import contextlib
import re

import dask.array as da
import numpy as np
import pytest
from dask.sizeof import sizeof
from distributed import Client

from coded import NotEnoughResultsError, Stragglers, coded_matmul, place_operand

pytestmark = pytest.mark.runtime

P = 65_537


@contextlib.contextmanager
def received_bytes():
    """Count the bytes of every result the client gathers inside the block."""
    counted = [0]
    gather = Client._gather

    async def counting(self, *args, **kwargs):
        result = await gather(self, *args, **kwargs)
        counted[0] += sizeof(result)
        return result

    Client._gather = counting
    try:
        yield counted
    finally:
        Client._gather = gather


def _irregular(client, seed, m=90, d=12, integer=False):
    """A generated on the workers, chunked irregularly along both axes."""
    rng = da.random.default_rng(seed)
    if integer:
        A = rng.integers(-50, 51, size=(m, d), chunks=((7, 33, 20, 30), (5, 7)))
    else:
        A = rng.standard_normal((m, d), chunks=((7, 33, 20, 30), (5, 7)))
    return client.persist(A)


@pytest.mark.parametrize("scheme", ["mds", "replication", "uncoded"])
def test_products_equal_numpy_and_a_stays_on_the_cluster(client, scheme):
    A = _irregular(client, 1)
    rng = np.random.default_rng(1)
    x, Y = rng.standard_normal(12), rng.standard_normal((90, 2))
    with received_bytes() as counted:
        one_shot = coded_matmul(A, x, scheme=scheme, client=client)
        with place_operand(A, scheme=scheme, client=client) as placed:
            forward = coded_matmul(placed, da.from_array(x, chunks=5))
            backward = coded_matmul(placed.T, Y)
    assert counted[0] < A.nbytes / 2  # only the products came back
    A_np = A.compute()
    np.testing.assert_allclose(one_shot.product, A_np @ x, atol=1e-9)
    np.testing.assert_allclose(forward.product, A_np @ x, atol=1e-9)
    np.testing.assert_allclose(backward.product, A_np.T @ Y, atol=1e-9)
    assert one_shot.stage_seconds["encode"] > 0


def test_dask_array_tolerates_n_minus_k_lost_workers(client):
    A = _irregular(client, 2)
    x = np.linspace(-1.0, 1.0, 12)
    with place_operand(A, k=4, client=client) as placed:
        lost = Stragglers(failing=[0, 5])
        np.testing.assert_allclose(
            coded_matmul(placed, x, stragglers=lost).product,
            A.compute() @ x,
            atol=1e-9,
        )
        with pytest.raises(NotEnoughResultsError):
            coded_matmul(
                placed.T, np.ones(90), stragglers=Stragglers(failing=[0, 1, 5])
            )


def test_integer_dask_array_is_exact_over_gf_p(client):
    A = _irregular(client, 3, integer=True)
    x = np.arange(-6, 6)
    y = np.arange(90) % 7 - 3
    result = coded_matmul(A, x, field=P, k=5, client=client)
    A_np = A.compute()
    assert np.array_equal(result.product, A_np @ x)
    with place_operand(A, field=P, client=client) as placed:
        assert np.array_equal(coded_matmul(placed.T, y).product, A_np.T @ y)
    with place_operand(A, field=P, client=client) as placed:
        message = "exact integer results need 2 * max|C| < p"
        with pytest.raises(ValueError, match=re.escape(message)):
            coded_matmul(placed, np.full(12, 10**6))


def test_columns_only_chunking_is_rechunked_on_the_cluster(client):
    A = client.persist(da.ones((20, 9), chunks=(20, 2)))
    result = coded_matmul(A, np.arange(9.0), client=client)
    np.testing.assert_allclose(result.product, np.full(20, 36.0))


def test_bad_dask_arrays_are_named(client):
    A = _irregular(client, 4)
    unknown = A[A[:, 0] > 0]
    with pytest.raises(ValueError, match=r"unknown chunk sizes.*compute_chunk_sizes"):
        coded_matmul(unknown, np.ones(12), client=client)
    with pytest.raises(ValueError, match="row block code"):
        coded_matmul(A, np.ones(12), scheme="polynomial", client=client)
    with pytest.raises(TypeError, match=r"`A` must hold integers over GF\(65537\)"):
        place_operand(A, field=P, client=client)
    with pytest.raises(ValueError, match=r"`A` must be finite"):
        coded_matmul(A * np.nan, np.ones(12), client=client)
