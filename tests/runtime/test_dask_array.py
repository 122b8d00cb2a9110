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


def _irregular(client, seed, integer=False, scale=1):
    """A (90 x 12 times `scale`) generated on the workers, chunked irregularly."""
    rng = da.random.default_rng(seed)
    chunks = tuple(tuple(scale * c for c in axis) for axis in ((7, 33, 20, 30), (5, 7)))
    m, d = (sum(axis) for axis in chunks)
    if integer:
        A = rng.integers(-50, 51, size=(m, d), chunks=chunks)
    else:
        A = rng.standard_normal((m, d), chunks=chunks)
    return client.persist(A)


def _values(product):
    return product.compute() if isinstance(product, da.Array) else product


@pytest.mark.parametrize("output", ["numpy", "dask"])
@pytest.mark.parametrize("scheme", ["mds", "replication", "uncoded"])
def test_products_equal_numpy_and_a_stays_on_the_cluster(client, scheme, output):
    A = _irregular(client, 1, scale=5)
    rng = np.random.default_rng(1)
    x, Y = rng.standard_normal(60), rng.standard_normal((450, 2))
    with received_bytes() as counted:
        one_shot = coded_matmul(A, x, scheme=scheme, client=client, output=output)
        with place_operand(A, scheme=scheme, client=client) as placed:
            forward = coded_matmul(placed, da.from_array(x, chunks=5), output=output)
            backward = coded_matmul(placed.T, Y, output=output)
    # numpy: only the products and the checks came back; dask: the records and
    # the checks' projections (O(d + m / k) a share, O(1) a piece column)
    assert counted[0] < (A.nbytes / 2 if output == "numpy" else A.nbytes / 16)
    A_np = A.compute()
    np.testing.assert_allclose(_values(one_shot.product), A_np @ x, atol=1e-9)
    np.testing.assert_allclose(_values(forward.product), A_np @ x, atol=1e-9)
    np.testing.assert_allclose(_values(backward.product), A_np.T @ Y, atol=1e-9)
    assert one_shot.stage_seconds["encode"] > 0
    if output == "dask":
        assert isinstance(forward.product, da.Array)
        assert forward.product.shape == (450,)
        assert backward.product.shape == (60, 2)


def test_dask_products_chain_on_the_cluster(client):
    A = _irregular(client, 5, scale=5)
    B = client.persist(da.random.default_rng(6).random((60, 450), chunks=(25, 250)))
    x = np.linspace(0.0, 1.0, 450)
    with (
        received_bytes() as counted,
        place_operand(A, client=client) as left,
        place_operand(B, k=3, client=client) as right,
    ):
        inner = coded_matmul(right, x, output="dask")
        outer = coded_matmul(left, inner.product, output="dask")
        back = coded_matmul(left.T, outer.product, stragglers=Stragglers(failing=[2]))
    # the last product (60 floats) and the checks' projections came back
    assert counted[0] < A.nbytes / 16
    A_np, B_np = A.compute(), B.compute()
    expected = A_np @ (B_np @ x)
    np.testing.assert_allclose(outer.product.compute(), expected, atol=1e-9)
    np.testing.assert_allclose(back.product, A_np.T @ expected, atol=1e-8)


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


def test_in_memory_operands_decode_on_the_cluster(client):
    rng = np.random.default_rng(7)
    A, B = rng.standard_normal((30, 8)), rng.standard_normal((8, 3))
    result = coded_matmul(
        A,
        B,
        scheme="polynomial",
        k=4,
        client=client,
        output="dask",
        stragglers=Stragglers(failing=[1]),
    )
    assert result.product.chunks[1] == (3,)
    np.testing.assert_allclose(result.product.compute(), A @ B, atol=1e-9)
    with pytest.raises(ValueError, match="use output='numpy'"):
        coded_matmul(
            A.astype(int), np.ones(8, int), field="exact", client=client, output="dask"
        )


def test_integer_dask_array_is_exact_over_gf_p(client):
    A = _irregular(client, 3, integer=True)
    x = np.arange(-6, 6)
    y = np.arange(90) % 7 - 3
    result = coded_matmul(A, x, field=P, k=5, client=client)
    remote = coded_matmul(A, x, field=P, k=5, client=client, output="dask")
    A_np = A.compute()
    assert np.array_equal(result.product, A_np @ x)
    assert remote.product.dtype == np.int64
    assert np.array_equal(remote.product.compute(), A_np @ x)
    with place_operand(A, field=P, client=client) as placed:
        assert np.array_equal(coded_matmul(placed.T, y).product, A_np.T @ y)
        transposed = coded_matmul(placed.T, da.from_array(y, chunks=40), output="dask")
        assert np.array_equal(transposed.product.compute(), A_np.T @ y)
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


def test_bad_right_operands_of_a_placement_are_named(client):
    A = _irregular(client, 8, integer=True)
    unknown = da.ones(12, chunks=5)
    unknown = unknown[unknown > 0]
    with place_operand(A, field=P, client=client) as placed:
        with pytest.raises(TypeError, match=r"float64.*encoded over GF\(65537\)"):
            coded_matmul(placed, np.ones(12))
        with pytest.raises(TypeError, match=r"encoded over GF\(65537\)"):
            coded_matmul(placed, da.ones(12, chunks=5))
        with pytest.raises(ValueError, match=r"`B`.*unknown chunk sizes"):
            coded_matmul(placed, unknown)
    with (
        place_operand(A.astype(float), client=client) as placed,
        pytest.raises(TypeError, match=r"complex128.*encoded over the reals"),
    ):
        coded_matmul(placed.T, np.ones(90) + 1j)
