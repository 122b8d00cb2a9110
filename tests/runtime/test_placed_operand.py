"""Encode once, multiply many: ``place_operand`` and ``coded_matmul(placed, B)``."""

import re

import galois
import numpy as np
import pytest
from conftest import N_WORKERS, scheduler_keys
from distributed import Client, Event
from runtime_blocking import BlockingCode

from allocation import Allocation
from coded import (
    MDSCode,
    NotEnoughResultsError,
    PlacedOperand,
    PolynomialCode,
    Stragglers,
    coded_matmul,
    place_operand,
    submit_matmul,
)
from coded.runtime import worker_addresses
from theory import WorkerProfile

pytestmark = pytest.mark.runtime

P = 65_537


def _operands(seed, m=24, d=5, repeats=3, integer=False):
    rng = np.random.default_rng(seed)
    A = rng.integers(-9, 10, size=(m, d))
    Bs = [rng.integers(-9, 10, size=d), rng.integers(-9, 10, size=(d, 3))]
    Bs += [rng.integers(-9, 10, size=d) for _ in range(repeats - 2)]
    if integer:
        return A, Bs
    return A.astype(float), [B.astype(float) for B in Bs]


def _assert_no_placement_keys(client, placed):
    assert scheduler_keys(client, placed.placement_id) == []


class BlockingRowCode(BlockingCode):
    """BlockingCode that also reuses an encoded A (a row code)."""

    def encode_right(self, encoded, B):
        return self.inner.encode_right(encoded, B)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"scheme": "mds"}, "mds"),
        ({"scheme": "replication", "r": 2}, "replication"),
        ({"scheme": "uncoded"}, "uncoded"),
        ({"scheme": "speculative"}, "speculative"),
    ],
)
def test_repeated_products_over_the_reals_equal_numpy(client, kwargs, name):
    A, Bs = _operands(1)
    stragglers = Stragglers(
        profile=WorkerProfile.homogeneous(N_WORKERS, a=0.2, mu=1.0), time_unit=0.002
    )
    with place_operand(A, client=client, **kwargs) as placed:
        assert placed.scheme == name
        assert placed.shape == A.shape
        assert f"scheme={name!r}, n={N_WORKERS}, shape=(24, 5)" in repr(placed)
        who_has = client.who_has(list(placed.futures))
        assert [list(who_has[f.key]) for f in placed.futures] == [
            [address] for address in placed.addresses
        ]
        for seed, B in enumerate(Bs):
            result = coded_matmul(placed, B, stragglers=stragglers, rng=seed)
            np.testing.assert_allclose(result.product, A @ B, rtol=1e-9, atol=1e-9)
            assert result.product.shape == (A @ B).shape
            assert result.scheme == name
            assert scheduler_keys(client, result.call_id) == []
            # the shares stay placed between calls
            placement_keys = scheduler_keys(
                client, placed.placement_id, settle_seconds=0
            )
            assert len(placement_keys) == N_WORKERS
    assert placed.is_released
    _assert_no_placement_keys(client, placed)


@pytest.mark.parametrize(
    "kwargs", [{"scheme": "replication", "r": 2}, {"scheme": "uncoded"}]
)
def test_a_sparse_a_placed_by_a_code_that_copies_rows_stays_sparse(client, kwargs):
    import scipy.sparse

    A = scipy.sparse.random_array((60, 7), density=0.2, format="csr", rng=4)
    _, Bs = _operands(2, d=7)
    with place_operand(A, client=client, **kwargs) as placed:
        assert all(scipy.sparse.issparse(left) for left in placed.encoded.lefts)
        for B in Bs:
            result = coded_matmul(placed, B)
            np.testing.assert_allclose(result.product, A @ B, rtol=1e-12, atol=1e-12)
    with pytest.raises(TypeError, match="scheme='mds' gives dense shares"):
        place_operand(A, client=client, scheme="mds")


def test_allocation_row_mds_code_is_reused(client):
    A, Bs = _operands(2, m=12, d=4)
    allocation = Allocation(
        loads=[6, 4, 4, 2, 0, 0],
        batches=[3, 2, 1, 1, 1, 1],
        m=12,
        expected_latency=1.0,
        solver="manual",
    )
    with place_operand(A, client=client, allocation=allocation) as placed:
        for B in Bs:
            result = coded_matmul(placed, B)
            np.testing.assert_allclose(result.product, A @ B, atol=1e-9)
            assert not {4, 5} & set(result.used_workers)
    _assert_no_placement_keys(client, placed)


def test_repeated_products_over_gf_p_are_exact(client):
    A, Bs = _operands(3, integer=True)
    with place_operand(A, client=client, scheme="mds", field=P) as placed:
        for B in Bs:
            result = coded_matmul(placed, B)
            assert np.array_equal(np.asarray(result.product), A @ B)
    GF = galois.GF(P)
    A_field = GF(np.mod(A, P))
    with place_operand(A_field, client=client, field=GF, k=3) as placed:
        for B in Bs:
            result = coded_matmul(placed, GF(np.mod(B, P)))
            assert np.array_equal(result.product, A_field @ GF(np.mod(B, P)))
    _assert_no_placement_keys(client, placed)


def test_stage_table_records_only_b(client):
    A, Bs = _operands(4)
    placed = place_operand(A, client=client)
    try:
        assert set(placed.stage_seconds) == {"encode", "place"}
        result = coded_matmul(placed, Bs[1])
        assert set(result.stage_seconds) == {
            "encode",
            "place",
            "compute",
            "wait",
            "decode",
            "release",
            "total",
        }
        assert result.stage_seconds["total"] >= result.stage_seconds["wait"]
    finally:
        placed.release()
    placed.release()  # idempotent
    _assert_no_placement_keys(client, placed)


def test_decodes_repeatedly_while_a_straggler_is_blocked(client):
    A, Bs = _operands(5)
    addresses = worker_addresses(client, None)
    event = Event("release-placed", client=client)
    code = BlockingRowCode(MDSCode(N_WORKERS, N_WORKERS - 2), event.name, addresses[:1])
    try:
        with place_operand(A, client=client, scheme=code) as placed:
            for B in Bs:
                result = coded_matmul(placed, B)
                np.testing.assert_allclose(result.product, A @ B, atol=1e-9)
                assert 0 not in result.used_workers
                assert np.isnan(result.finish_seconds[0])
                assert scheduler_keys(client, result.call_id) == []
    finally:
        event.set()
    _assert_no_placement_keys(client, placed)


def _other_client(cluster):
    return Client(cluster.client.scheduler.address)


GOOD_A = np.ones((6, 3))


@pytest.mark.parametrize(
    ("place", "call", "error", "message"),
    [
        pytest.param(
            {"scheme": "polynomial"},
            None,
            ValueError,
            "PolynomialCode encodes B together with A (a two-sided code)",
            id="polynomial",
        ),
        pytest.param(
            {"scheme": PolynomialCode(N_WORKERS, 2, 2)},
            None,
            ValueError,
            "PolynomialCode encodes B together with A (a two-sided code)",
            id="polynomial-code",
        ),
        pytest.param(
            {"scheme": "mds", "field": "exact"},
            None,
            ValueError,
            "ExactCode cannot reuse an encoded A",
            id="exact",
        ),
        pytest.param(
            {"client": None},
            None,
            TypeError,
            "`client` must be a distributed.Client, got NoneType.",
            id="no-client",
        ),
        pytest.param(
            {},
            {"B": np.ones(4)},
            ValueError,
            "`B` must have 3 rows to match the encoded A (d=3), got B.shape=(4,).",
            id="b-shape",
        ),
        pytest.param(
            {},
            {"B": np.ones((3, 2)), "k": 2},
            ValueError,
            "`A` is a PlacedOperand: scheme, n, k, r, field, allocation and "
            "address were fixed by place_operand, got {'k': 2}.",
            id="fixed-k",
        ),
        pytest.param(
            {},
            {"released": True},
            ValueError,
            "was released; place it again.",
            id="released",
        ),
        pytest.param(
            {},
            {"other_client": True},
            ValueError,
            "`client` must be the client `A` was placed with (or None)",
            id="other-client",
        ),
        pytest.param(
            {"field": P},
            {"B": np.array([40_000, 0, 0])},
            ValueError,
            "exact integer results need 2 * max|C| < p",
            id="gf-bound",
        ),
    ],
)
def test_input_validation(cluster, place, call, error, message):
    A = GOOD_A.astype(int) if "field" in place else GOOD_A
    place = {"client": cluster.client, **place}
    if call is None:
        with pytest.raises(error, match=re.escape(message)):
            place_operand(A, **place)
        return
    call = dict(call)
    B = call.pop("B", np.ones(3))
    placed = place_operand(A, **place)
    other = None
    try:
        if call.pop("released", False):
            placed.release()
        if call.pop("other_client", False):
            other = call["client"] = _other_client(cluster)
        with pytest.raises(error, match=re.escape(message)):
            coded_matmul(placed, B, **call)
    finally:
        placed.release()
        if other is not None:
            other.close()
    assert isinstance(placed, PlacedOperand)
    _assert_no_placement_keys(cluster.client, placed)


@pytest.mark.parametrize(
    ("kwargs", "lost"),
    [
        ({"scheme": "mds", "k": 4}, (0, 3)),
        ({"scheme": "mds", "k": 4}, (4, 5)),
        ({"scheme": "replication", "r": 2}, (4,)),  # k = n - r + 1 = 5
        ({"scheme": "uncoded"}, ()),
        ({"scheme": "speculative"}, ()),
    ],
)
def test_one_placement_serves_a_x_and_a_t_y_with_n_minus_k_lost(client, kwargs, lost):
    A, _ = _operands(6, m=23, d=5)
    rng = np.random.default_rng(6)
    ys = [rng.standard_normal(23), rng.standard_normal((23, 2))]
    x = rng.standard_normal(5)
    stragglers = Stragglers(failing=lost) if lost else None
    with place_operand(A, client=client, **kwargs) as placed:
        assert placed.T.shape == (5, 23)
        assert placed.T.T.shape == (23, 5)
        assert "transposed=True" in repr(placed.T)
        forward = coded_matmul(placed, x, stragglers=stragglers)
        np.testing.assert_allclose(forward.product, A @ x, atol=1e-9)
        for y in ys:
            result = coded_matmul(placed.T, y, stragglers=stragglers)
            np.testing.assert_allclose(result.product, A.T @ y, atol=1e-9)
            assert result.product.shape == (A.T @ y).shape
            assert not set(lost) & set(result.used_workers)
            assert set(result.failed_workers) <= set(lost)
        np.testing.assert_allclose(placed.T @ ys[0], A.T @ ys[0], atol=1e-9)
        np.testing.assert_allclose(placed @ x, A @ x, atol=1e-9)
        # both views share the shares: releasing one releases the other
        transposed = placed.T
    assert transposed.is_released
    _assert_no_placement_keys(client, placed)


def test_a_t_y_beyond_n_minus_k_lost_raises(client):
    A, _ = _operands(7, m=12, d=4)
    with place_operand(A, client=client, k=4) as placed:
        message = "no decodable set of results can still arrive"
        lost = Stragglers(failing=[0, 1, 2])
        with pytest.raises(NotEnoughResultsError, match=message):
            coded_matmul(placed.T, np.ones(12), stragglers=lost)
    _assert_no_placement_keys(client, placed)


def test_a_t_y_over_gf_p_is_exact(client):
    A, _ = _operands(8, m=21, d=6, integer=True)
    y = np.random.default_rng(8).integers(-9, 10, size=(21, 2))
    with place_operand(A, client=client, field=P, k=4) as placed:
        result = coded_matmul(placed.T, y, stragglers=Stragglers(failing=[1, 5]))
        assert np.array_equal(np.asarray(result.product), A.T @ y)
    GF = galois.GF(P)
    A_field = GF(np.mod(A, P))
    with place_operand(A_field, client=client, field=GF) as placed:
        product = coded_matmul(placed.T, GF(np.mod(y[:, 0], P))).product
        assert np.array_equal(product, A_field.T @ GF(np.mod(y[:, 0], P)))
    _assert_no_placement_keys(client, placed)


def test_transposed_view_bad_input(client):
    allocation = Allocation(
        loads=[2, 2, 2, 2, 2, 2],
        batches=[1] * 6,
        m=6,
        expected_latency=1.0,
        solver="manual",
    )
    message = "`A.T @ y` needs a block code (MDS, replication, uncoded)"
    with (
        place_operand(GOOD_A, client=client, allocation=allocation) as placed,
        pytest.raises(ValueError, match=re.escape(message)),
    ):
        placed.T  # noqa: B018 - the property raises
    with place_operand(GOOD_A, client=client) as placed:
        message = "`y` must have A's m=6 rows for A.T @ y, got shape (3,)."
        with pytest.raises(ValueError, match=re.escape(message)):
            coded_matmul(placed.T, np.ones(3))
    with place_operand(GOOD_A.astype(int), client=client, field=P) as placed:
        with pytest.raises(TypeError, match="`B`"):
            coded_matmul(placed, np.full(3, 0.5))
        with pytest.raises(TypeError, match="`B`"):
            coded_matmul(placed.T, np.full(6, 0.5))
    _assert_no_placement_keys(client, placed)


def test_products_in_flight_equal_the_synchronous_ones(client):
    A, Bs = _operands(9, m=30, d=6)
    ys = [np.random.default_rng(9).standard_normal(30) for _ in range(2)]
    stragglers = Stragglers(
        profile=WorkerProfile.homogeneous(N_WORKERS, a=0.2, mu=1.0), time_unit=0.002
    )
    with place_operand(A, client=client, k=4) as placed:
        handles = [
            submit_matmul(placed, B, stragglers=stragglers, rng=seed)
            for seed, B in enumerate(Bs)
        ]
        handles += [submit_matmul(placed.T, y, stragglers=stragglers) for y in ys]
        assert len({handle.call_id for handle in handles}) == len(handles)
        assert "in flight" in repr(handles[0])
        in_flight = [handle.result() for handle in reversed(handles)][::-1]
        assert handles[0].result() is in_flight[0]  # computed once
        for seed, (B, result) in enumerate(zip(Bs, in_flight, strict=False)):
            synchronous = coded_matmul(placed, B, stragglers=stragglers, rng=seed)
            np.testing.assert_allclose(result.product, synchronous.product, atol=1e-9)
            np.testing.assert_allclose(result.product, A @ B, atol=1e-9)
        for y, result in zip(ys, in_flight[len(Bs) :], strict=True):
            np.testing.assert_allclose(result.product, A.T @ y, atol=1e-9)
        for result in in_flight:
            assert scheduler_keys(client, result.call_id) == []
        with pytest.raises(TypeError, match="`A` must be a PlacedOperand"):
            submit_matmul(A, Bs[0])
        lost = submit_matmul(placed, Bs[0], stragglers=Stragglers(failing=[0, 1, 2]))
        for _ in range(2):  # the error is kept
            with pytest.raises(NotEnoughResultsError):
                lost.result()
    _assert_no_placement_keys(client, placed)
