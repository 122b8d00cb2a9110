import re
import threading

import numpy as np
import pytest
from conftest import N_WORKERS, scheduler_keys
from distributed import Client, Event
from runtime_blocking import BlockingCode

from coded import (
    ExecutionOptions,
    MDSCode,
    NotEnoughResultsError,
    RowMDSCode,
    Stragglers,
    coded_matmul,
)
from coded._dispatch import execution_options
from coded.runtime import BackupPolicy, execute, worker_addresses
from theory import WorkerProfile

pytestmark = pytest.mark.runtime

P = 65_537
SCHEMES = ["mds", "polynomial", "replication", "uncoded", "speculative"]


def _real_operands(seed, m=24, d=5, vector=True):
    rng = np.random.default_rng(seed)
    A = rng.integers(-9, 10, size=(m, d)).astype(float)
    B = rng.integers(-9, 10, size=d if vector else (d, 3)).astype(float)
    return A, B


def _stragglers(n):
    profile = WorkerProfile.homogeneous(n, a=0.2, mu=1.0)
    return Stragglers(profile=profile, time_unit=0.002)


@pytest.mark.parametrize("with_stragglers", [False, True], ids=["plain", "stragglers"])
@pytest.mark.parametrize("scheme", SCHEMES)
def test_product_matches_numpy_over_reals(client, scheme, with_stragglers):
    A, B = _real_operands(1, vector=scheme != "polynomial")
    stragglers = _stragglers(N_WORKERS) if with_stragglers else None
    result = coded_matmul(
        A, B, scheme=scheme, client=client, stragglers=stragglers, rng=3
    )
    np.testing.assert_allclose(result.product, A @ B, rtol=1e-9, atol=1e-9)
    assert result.n == N_WORKERS
    assert len(result.finish_seconds) == N_WORKERS
    assert set(result.stage_seconds) == {
        "encode",
        "place",
        "compute",
        "wait",
        "decode",
        "release",
        "total",
    }
    assert scheduler_keys(client, result.call_id) == []


@pytest.mark.parametrize("scheme", ["mds", "polynomial", "uncoded"])
def test_product_is_exact_over_gf_p(client, scheme):
    rng = np.random.default_rng(2)
    A = rng.integers(-50, 51, size=(12, 4))
    B = rng.integers(-50, 51, size=(4, 2))
    result = coded_matmul(A, B, scheme=scheme, field=P, client=client)
    assert np.array_equal(np.asarray(result.product), A @ B)


def test_n_and_k_select_workers_and_threshold(client):
    A, x = _real_operands(4)
    result = coded_matmul(A, x, scheme="mds", n=4, k=2, client=client)
    assert (result.n, result.k) == (4, 2)
    assert len(result.used_workers) >= 2
    np.testing.assert_allclose(result.product, A @ x, atol=1e-9)


@pytest.mark.parametrize("slow", [1, 2], ids=["one-slow", "n-minus-k-slow"])
def test_decodes_while_stragglers_are_blocked(client, slow):
    A, x = _real_operands(5)
    addresses = worker_addresses(client, None)
    event = Event(f"release-{slow}", client=client)
    code = BlockingCode(MDSCode(N_WORKERS, N_WORKERS - 2), event.name, addresses[:slow])
    try:
        result = coded_matmul(A, x, scheme=code, client=client)
        np.testing.assert_allclose(result.product, A @ x, atol=1e-9)
        assert not set(result.used_workers) & set(range(slow))
        assert result.cancelled_tasks >= slow
        assert np.all(np.isnan(result.finish_seconds[:slow]))
        assert scheduler_keys(client, result.call_id) == []
        executing = client.run(_executing_count, workers=addresses[:slow])
        assert all(count == 1 for count in executing.values())
    finally:
        event.set()


def _executing_count(dask_worker):
    return len(dask_worker.state.executing)


def test_overlap_into_next_call_is_reported(client):
    A, x = _real_operands(6)
    addresses = worker_addresses(client, None)
    event = Event("release-overlap", client=client)
    code = BlockingCode(MDSCode(N_WORKERS, N_WORKERS - 1), event.name, addresses[:1])
    try:
        first = coded_matmul(A, x, scheme=code, client=client)
        assert first.overlap_seconds == 0.0
        # Long enough that a busy machine still submits the second call first.
        timer = threading.Timer(3.0, event.set)
        timer.start()
        second = coded_matmul(A, x, scheme="uncoded", client=client)
        timer.join()
    finally:
        event.set()
    np.testing.assert_allclose(second.product, A @ x, atol=1e-9)
    assert second.overlap_seconds > 0.0


@pytest.mark.parametrize("failing", [[0], [1, 4]], ids=["one", "n-minus-k"])
def test_failed_tasks_up_to_n_minus_k_still_decode(client, failing):
    A, x = _real_operands(7)
    result = coded_matmul(
        A,
        x,
        scheme="mds",
        k=N_WORKERS - 2,
        client=client,
        stragglers=Stragglers(failing=failing),
    )
    np.testing.assert_allclose(result.product, A @ x, atol=1e-9)
    assert set(result.failed_workers) <= set(failing)
    assert not set(result.used_workers) & set(failing)


def test_too_many_failures_raise_before_the_timeout(client):
    A, x = _real_operands(8)
    message = "no decodable set of results can still arrive: received"
    with pytest.raises(NotEnoughResultsError, match=re.escape(message)):
        coded_matmul(
            A,
            x,
            scheme="mds",
            k=N_WORKERS - 2,
            client=client,
            timeout=120.0,
            stragglers=Stragglers(failing=[0, 2, 5]),
        )


def test_timeout_raises_not_enough_results(client):
    A, x = _real_operands(9)
    with pytest.raises(NotEnoughResultsError, match=re.escape("timeout after 0.3 s")):
        coded_matmul(
            A,
            x,
            scheme="uncoded",
            client=client,
            timeout=0.3,
            stragglers=Stragglers(delays={3: 60.0}),
        )


def test_speculative_backs_up_the_straggler(client):
    A, x = _real_operands(10)
    result = coded_matmul(
        A,
        x,
        scheme="speculative",
        client=client,
        stragglers=Stragglers(delays={2: 60.0}),
    )
    np.testing.assert_allclose(result.product, A @ x, atol=1e-9)
    assert result.backup_tasks == 1
    assert result.cancelled_tasks == 1
    assert 2 in result.used_workers


def test_batch_chains_stream_row_pieces(client):
    A, x = _real_operands(11, m=8)
    code = RowMDSCode([4, 4, 4], m=8)
    encoded = code.encode_operands(A, x)
    addresses = worker_addresses(client, 3)
    batches = [[(0, 2), (2, 4)]] * 3
    run = execute(client, code, encoded, addresses=addresses, batches=batches)
    np.testing.assert_allclose(run.product, A @ x, atol=1e-9)
    assert scheduler_keys(client, run.call_id) == []


def test_embedded_cluster_when_no_client():
    A, x = _real_operands(12)
    result = coded_matmul(A, x, scheme="mds", n=2, k=1)
    np.testing.assert_allclose(result.product, A @ x, atol=1e-9)
    assert result.n == 2


def _closed_client(cluster):
    closed = Client(cluster.client.scheduler.address)
    closed.close()
    return closed


GOOD_A = np.ones((6, 3))
GOOD_X = np.ones(3)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        pytest.param(
            {"B": np.ones(4)},
            ValueError,
            "`A` and `B` must have matching inner dimensions for A @ B, got "
            "A.shape=(6, 3) and B.shape=(4,).",
            id="shape-mismatch",
        ),
        pytest.param(
            {"A": np.full((6, 3), np.nan)},
            ValueError,
            "`A` must be finite (no NaN or inf).",
            id="nan",
        ),
        pytest.param(
            {"k": 7, "n": 4},
            ValueError,
            "`k` must satisfy 1 <= k <= n, got k=7, n=4.",
            id="k-above-n",
        ),
        pytest.param(
            {"n": N_WORKERS + 1},
            ValueError,
            f"`n` must be <= the number of workers of the cluster ({N_WORKERS}), "
            f"got n={N_WORKERS + 1} (from `n`, the code or the allocation): add "
            "workers",
            id="too-many-workers",
        ),
        pytest.param(
            {"scheme": "lt"},
            ValueError,
            "`scheme` must be one of ('mds', 'polynomial', 'replication', "
            "'uncoded', 'speculative', 'rateless'), got scheme='lt'.",
            id="unknown-scheme",
        ),
        pytest.param(
            {"scheme": 3},
            TypeError,
            "`scheme` must be a str or a coded Code, got int.",
            id="scheme-type",
        ),
        pytest.param(
            {"timeout": 0},
            ValueError,
            "`timeout` must be > 0.0, got timeout=0.0.",
            id="timeout",
        ),
        pytest.param(
            {"stragglers": {"delays": {}}},
            TypeError,
            "`stragglers` must be a coded.Stragglers or None, got dict.",
            id="stragglers-type",
        ),
        pytest.param(
            {"scheme": "uncoded", "k": 2},
            ValueError,
            f"`k` must equal n for scheme='uncoded', got k=2, n={N_WORKERS}.",
            id="uncoded-k",
        ),
        pytest.param(
            {"scheme": "replication", "r": 4},
            ValueError,
            f"`r` must divide `n`, got r=4, n={N_WORKERS}.",
            id="replication-r",
        ),
        pytest.param(
            {"scheme": MDSCode(4, 2), "n": 5},
            ValueError,
            "`n` must equal code.n=4, got n=5.",
            id="code-n",
        ),
        pytest.param(
            {"address": "tcp://127.0.0.1:1"},
            ValueError,
            "pass at most one of `client` and `address`, got both.",
            id="both",
        ),
        pytest.param(
            {"stragglers": Stragglers(failing=[9])},
            ValueError,
            f"`stragglers` names worker 9, but n={N_WORKERS}.",
            id="stragglers-n",
        ),
        pytest.param(
            {"timout": 1.0},
            TypeError,
            "coded_matmul() got unexpected keyword arguments ['timout']; the "
            "execution options are ['stragglers', 'timeout', 'rng', 'output', "
            "'verify', 'check', 'transport'].",
            id="unknown-option",
        ),
        pytest.param(
            {"options": {"timeout": 1.0}},
            TypeError,
            "`options` must be a coded.ExecutionOptions or None, got dict.",
            id="options-type",
        ),
        pytest.param(
            {"client": "closed"},
            ValueError,
            "`client` must be running, got a client with status='closed'.",
            id="closed-client",
        ),
    ],
)
def test_input_validation(cluster, kwargs, error, message):
    kwargs = {"A": GOOD_A, "B": GOOD_X, "client": cluster.client, **kwargs}
    if kwargs["client"] == "closed":
        kwargs["client"] = _closed_client(cluster)
    A, B = kwargs.pop("A"), kwargs.pop("B")
    with pytest.raises(error, match=re.escape(message)):
        coded_matmul(A, B, **kwargs)


def test_profile_delays_are_applied_inside_the_tasks(client):
    A, x = _real_operands(13)
    profile = WorkerProfile(a=[100.0] + [0.0] * 5, mu=[1e9] * 6)
    result = coded_matmul(
        A,
        x,
        scheme="mds",
        k=5,
        client=client,
        rng=0,
        stragglers=Stragglers(profile=profile, time_unit=1e-3),
    )
    np.testing.assert_allclose(result.product, A @ x, atol=1e-9)
    assert result.used_workers == (1, 2, 3, 4, 5)
    assert result.cancelled_tasks == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"quantile": 0}, "`quantile` must be > 0.0, got quantile=0.0."),
        ({"quantile": 1.5}, "`quantile` must be <= 1, got quantile=1.5."),
        ({"slowdown": 0.5}, "`slowdown` must be >= 1.0, got slowdown=0.5."),
    ],
)
def test_backup_policy_validation(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        BackupPolicy(**kwargs)


def test_execution_options_object_equals_keywords(client):
    A, x = _real_operands(14)
    profile = WorkerProfile(a=[100.0] + [0.0] * 5, mu=[1e9] * 6)
    stragglers = Stragglers(profile=profile, time_unit=1e-3)
    options = ExecutionOptions(stragglers=stragglers, rng=0, timeout=30)
    by_object = coded_matmul(A, x, k=5, client=client, options=options)
    by_keywords = coded_matmul(A, x, k=5, client=client, stragglers=stragglers, rng=0)
    for result in (by_object, by_keywords):
        np.testing.assert_allclose(result.product, A @ x, atol=1e-9)
        assert result.used_workers == (1, 2, 3, 4, 5)
    # keywords override the object's fields
    merged = execution_options(options, {"stragglers": None}, "coded_matmul")
    assert merged == ExecutionOptions(rng=0, timeout=30.0)
