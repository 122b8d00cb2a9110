"""Secured clusters: every connection over TLS, products unchanged."""

import numpy as np
import pytest
from distributed import Security

import coded
from coded import LocalCodedCluster

pytestmark = pytest.mark.runtime


@pytest.mark.parametrize("processes", [False, True])
def test_fresh_and_placed_products_over_tls(processes):
    rng = np.random.default_rng(0)
    A, x = rng.standard_normal((60, 12)), rng.standard_normal(12)
    with LocalCodedCluster(n_workers=4, processes=processes, security=True) as cluster:
        client = cluster.client
        assert client.scheduler.address.startswith("tls://")
        assert all(a.startswith("tls://") for a in client.nthreads())
        assert cluster.security.require_encryption
        fresh = coded.coded_matmul(A, x, scheme="mds", k=3, client=client)
        with coded.place_operand(A, k=3, client=client) as placed:
            again = coded.coded_matmul(placed, 2 * x)
        tree = coded.HierarchicalCode(4, [(2, 1), (2, 2)])
        with coded.place_operand(A, scheme=tree, client=client) as placed:
            led = coded.coded_matmul(placed, 3 * x, transport="grouped")
    np.testing.assert_allclose(fresh.product, A @ x)
    np.testing.assert_allclose(again.product, 2 * (A @ x))
    np.testing.assert_allclose(led.product, 3 * (A @ x))
    assert (fresh.transport, again.transport) == ("tasks", "resident")
    assert led.transport == "grouped"  # the leaders' own connections are TLS too


def test_a_security_of_ones_own_is_used_as_given():
    own = Security.temporary()
    with LocalCodedCluster(n_workers=2, security=own) as cluster:
        assert cluster.security is own
        assert cluster.client.scheduler.address.startswith("tls://")


def test_plain_tcp_by_default_and_bad_security_named():
    assert LocalCodedCluster(n_workers=1).security is None
    with pytest.raises(TypeError, match="`security` must be a bool"):
        LocalCodedCluster(n_workers=1, security="tls")
