"""scheme="rateless" on the embedded cluster: dense and CSR A, one straggler."""

import numpy as np
import pytest
import scipy.sparse
from conftest import N_WORKERS

from coded import Stragglers, coded_matmul, place_operand
from coded.errors import NotEnoughResultsError

M = 2000


def _sparse(seed):
    rng = np.random.default_rng(seed)
    return scipy.sparse.random_array(
        (M, 40), density=0.05, format="csr", rng=seed, data_sampler=rng.normal
    )


@pytest.mark.parametrize("output", ["numpy", "dask"])
@pytest.mark.parametrize("sparse", [False, True])
def test_rateless_decodes_without_the_straggler(client, sparse, output):
    # output="dask": the client tracks the rows alone, a worker decodes
    rng = np.random.default_rng(3)
    A = _sparse(3) if sparse else rng.normal(size=(M, 40))
    x = rng.normal(size=(40, 2))
    result = coded_matmul(
        A,
        x,
        scheme="rateless",
        client=client,
        n=N_WORKERS,
        timeout=30,
        stragglers=Stragglers(delays={2: 60.0}),
        output=output,
    )
    product = result.product if output == "numpy" else result.product.compute()
    expected = A @ x
    assert np.linalg.norm(product - expected) <= 1e-11 * np.linalg.norm(expected)
    assert 2 not in result.used_workers


@pytest.mark.parametrize(
    ("scheme", "extra"),
    [("uncoded", {}), ("replication", {"r": 2}), ("speculative", {})],
)
def test_schemes_that_copy_rows_take_a_sparse_a(client, scheme, extra):
    A, x = _sparse(5), np.random.default_rng(5).normal(size=40)
    straggler = {"stragglers": Stragglers(delays={2: 60.0})} if extra else {}
    result = coded_matmul(
        A,
        x,
        scheme=scheme,
        client=client,
        n=N_WORKERS,
        timeout=30,
        **extra,
        **straggler,
    )
    expected = A @ x
    assert np.linalg.norm(result.product - expected) <= 1e-12 * np.linalg.norm(expected)
    assert result.verification == "freivalds"
    if straggler:
        assert 2 not in result.used_workers


@pytest.mark.parametrize("sparse", [False, True])
def test_a_placed_rateless_a_serves_many_products_despite_a_straggler(client, sparse):
    rng = np.random.default_rng(6)
    A = _sparse(6) if sparse else rng.normal(size=(M, 40))
    with place_operand(A, scheme="rateless", client=client, n=N_WORKERS) as placed:
        assert placed.scheme == "rateless"
        assert placed.shape == (M, 40)
        for B in (rng.normal(size=40), rng.normal(size=(40, 3))):
            result = coded_matmul(
                placed, B, timeout=30, stragglers=Stragglers(delays={2: 60.0})
            )
            expected = A @ B
            error = np.linalg.norm(result.product - expected)
            assert error <= 1e-11 * np.linalg.norm(expected)
            assert 2 not in result.used_workers
        with pytest.raises(ValueError, match="not repaired"):
            placed.repair()
        with pytest.raises(ValueError, match="needs a block code"):
            placed.T  # noqa: B018
    with pytest.raises(ValueError, match="needs none"):
        place_operand(A, scheme="rateless", client=client, repair_margin=1)


def test_a_dask_array_a_is_encoded_where_its_chunks_are(client):
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(8)
    A, x = rng.normal(size=(M, 40)), rng.normal(size=(40, 2))
    lazy = da.from_array(A, chunks=(300, 15))
    result = coded_matmul(
        lazy,
        x,
        scheme="rateless",
        client=client,
        n=N_WORKERS,
        timeout=30,
        stragglers=Stragglers(delays={2: 60.0}),
    )
    expected = A @ x
    assert np.linalg.norm(result.product - expected) <= 1e-11 * np.linalg.norm(expected)
    A[7, 3] = np.nan
    with pytest.raises(ValueError, match="must be finite"):
        coded_matmul(
            da.from_array(A, chunks=(300, 40)), x, scheme="rateless", client=client
        )


def test_rateless_raises_when_too_few_rows_can_arrive(client):
    A, x = np.ones((M, 3)), np.ones(3)
    with pytest.raises(NotEnoughResultsError, match=r"timeout after 1\.0 s"):
        coded_matmul(
            A,
            x,
            scheme="rateless",
            client=client,
            n=N_WORKERS,
            timeout=1.0,
            stragglers=Stragglers(delays={0: 60.0, 1: 60.0}),
        )


def test_mds_refuses_sparse_a_and_names_rateless(client):
    with pytest.raises(TypeError, match="scheme='rateless'"):
        coded_matmul(_sparse(0), np.ones(40), scheme="mds", client=client)


def test_rateless_takes_no_k_r_or_field(client):
    with pytest.raises(ValueError, match="scheme='rateless' has no `k`"):
        coded_matmul(np.ones((M, 3)), np.ones(3), scheme="rateless", k=3, client=client)
