"""``await coded_matmul_async``: the same results as the blocking form."""

import asyncio

import dask.array as da
import numpy as np
import pytest
from distributed import Client

from coded import (
    NotEnoughResultsError,
    Stragglers,
    coded_matmul,
    coded_matmul_async,
    place_operand,
)

pytestmark = pytest.mark.runtime

P = 65_537


def _run(cluster, body):
    """Run ``body(async_client)`` on a fresh event loop, on the test cluster."""

    async def main():
        address = cluster.client.scheduler.address
        async with Client(address, asynchronous=True) as client:
            return await body(client)

    return asyncio.run(main())


CASES = {
    "mds, one failing": ({"k": 4, "stragglers": Stragglers(failing=[1])}, False),
    "polynomial": ({"scheme": "polynomial", "k": 4}, False),
    "gf(p)": ({"field": P, "k": 5}, True),
    "replication, decoded on a worker": (
        {"scheme": "replication", "output": "dask"},
        False,
    ),
}


@pytest.mark.parametrize(("kwargs", "integer"), CASES.values(), ids=CASES)
def test_async_form_gives_the_sync_result(cluster, client, kwargs, integer):
    rng = np.random.default_rng(3)
    if integer:
        A, B = rng.integers(-9, 10, (40, 6)), rng.integers(-9, 10, (6, 2))
    else:
        A, B = rng.standard_normal((40, 6)), rng.standard_normal((6, 2))

    async def body(async_client):
        result = await coded_matmul_async(A, B, client=async_client, rng=0, **kwargs)
        product = result.product
        if isinstance(product, da.Array):
            product = await async_client.compute(product)
        return result, product

    result, product = _run(cluster, body)
    expected = coded_matmul(A, B, client=client, rng=0, **kwargs)
    assert result.k == expected.k
    assert result.scheme == expected.scheme
    if integer:
        assert np.array_equal(product, A @ B)
        assert np.array_equal(expected.product, product)
    else:
        np.testing.assert_allclose(product, A @ B, atol=1e-9)
        np.testing.assert_allclose(_values(expected.product), product, atol=1e-12)


def _values(product):
    return product.compute() if isinstance(product, da.Array) else product


def test_several_products_in_flight_match_the_sync_ones(cluster, client):
    rng = np.random.default_rng(4)
    A = rng.standard_normal((30, 5))
    xs = [rng.standard_normal(5) for _ in range(4)]
    stragglers = Stragglers(failing=[0])

    async def body(async_client):
        return await asyncio.gather(
            *(
                coded_matmul_async(
                    A, x, k=4, client=async_client, stragglers=stragglers
                )
                for x in xs
            )
        )

    results = _run(cluster, body)
    for x, result in zip(xs, results, strict=True):
        expected = coded_matmul(A, x, k=4, client=client, stragglers=stragglers)
        np.testing.assert_allclose(result.product, expected.product, atol=1e-12)
        assert 0 not in result.used_workers
    assert len({r.call_id for r in results}) == len(xs)


def test_async_errors_are_those_of_the_sync_form(cluster, client):
    A = np.ones((12, 3))

    async def body(async_client):
        with pytest.raises(NotEnoughResultsError):
            await coded_matmul_async(
                A,
                np.ones(3),
                k=4,
                client=async_client,
                stragglers=Stragglers(failing=[0, 1, 2]),
            )
        with (
            place_operand(A, client=client) as placed,
            pytest.raises(TypeError, match="in-memory `A`"),
        ):
            await coded_matmul_async(placed, np.ones(3), client=async_client)
        return True

    assert _run(cluster, body)
    with pytest.raises(TypeError, match="must be asynchronous"):
        asyncio.run(coded_matmul_async(A, np.ones(3), client=client))


def test_the_async_twin_has_the_blocking_signature():
    import inspect

    from coded import coded_matmul

    assert inspect.signature(coded_matmul_async) == inspect.signature(coded_matmul)
    with pytest.raises(TypeError, match="not an `address`"):
        asyncio.run(coded_matmul_async(np.eye(2), np.ones(2), address="tcp://x:1"))
    with pytest.raises(TypeError, match=r"unexpected keyword arguments \['kk'\]"):
        asyncio.run(coded_matmul_async(np.eye(2), np.ones(2), kk=1))
