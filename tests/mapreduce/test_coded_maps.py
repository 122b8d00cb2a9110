"""Coded map tasks (the unified scheme) on Dask: any q of K mappers suffice."""

import functools
import re
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mapreduce import (
    FRAME_HEADER_BYTES,
    MapReduceTaskError,
    NotEnoughMappersError,
    concatenate_values,
    plan_traffic,
    run_coded_maps,
    straggling_placement,
)
from mapreduce._straggling import plan_finishers
from theory import load_straggling

pytestmark = pytest.mark.runtime


def _plain(files, map_fn, reduce_fn):
    """Single-process map/reduce: function j reduces every file's row j."""
    outputs = [np.asarray(map_fn(f), dtype=float) for f in files]
    return {j: reduce_fn(j, [o[j] for o in outputs]) for j in range(len(outputs[0]))}


def _assert_same(got, expected):
    assert sorted(got) == sorted(expected)
    for j in expected:
        np.testing.assert_allclose(got[j], expected[j], rtol=1e-7, atol=1e-7)


def _times(X, block):
    return (block @ X).T  # row j: the block's rows times column j of X


def _norms(j, values):
    return [float(np.dot(v, v)) for v in values]


@st.composite
def linear_jobs(draw):
    K = draw(st.integers(1, 4))
    r, q = draw(st.integers(1, K)), draw(st.integers(1, K))
    M, rows, Q = (
        draw(st.integers(1, 5)),
        draw(st.integers(1, 3)),
        draw(st.integers(1, 4)),
    )
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    files = list(rng.integers(-5, 6, size=(M, rows, 2)).astype(float))
    X = rng.integers(-3, 4, size=(2, Q)).astype(float)
    return K, r, q, files, X


@settings(max_examples=8)
@given(linear_jobs(), st.sampled_from([concatenate_values, _norms]))
def test_output_equals_a_single_process_run(client, job, reduce_fn):
    K, r, q, files, X = job
    map_fn = functools.partial(_times, X)
    result = run_coded_maps(files, map_fn, reduce_fn, K=K, r=r, q=q, client=client)
    _assert_same(result.output, _plain(files, map_fn, reduce_fn))
    record = result.record
    assert record.load == load_straggling(r, q, K)
    assert record.tolerance == K - q
    _, N = straggling_placement(K, r, q, files=len(files))
    assert record.N == N >= len(files)


def test_matrix_vector_product_and_the_record(client):
    rng = np.random.default_rng(3)
    A, x = rng.standard_normal((36, 5)), rng.standard_normal((5, 4))
    blocks = np.split(A, 18)
    result = run_coded_maps(
        blocks,
        functools.partial(_times, x),
        K=4,
        r=2,
        q=3,
        client=client,
        delivery="forward",
    )
    product = np.stack([result.output[j] for j in range(4)], axis=1)
    np.testing.assert_allclose(product, A @ x, rtol=1e-9, atol=1e-9)
    record = result.record
    assert (record.N, record.load, record.delivery) == (
        18,
        load_straggling(2, 3, 4),
        "forward",
    )
    assert record.packets > 0
    assert record.packet_bytes > 0
    assert sum(record.download_bytes) >= record.packet_bytes


def test_files_the_scheme_allows_are_not_padded(client):
    # K=4, r=2, q=3: the last level is unicast, so 9 files need no zero files
    rng = np.random.default_rng(4)
    A, x = rng.standard_normal((18, 3)), rng.standard_normal((3, 2))
    result = run_coded_maps(
        np.split(A, 9), functools.partial(_times, x), K=4, r=2, q=3, client=client
    )
    product = np.stack([result.output[j] for j in range(2)], axis=1)
    np.testing.assert_allclose(product, A @ x, rtol=1e-9, atol=1e-9)
    assert (result.record.N, result.record.load) == (9, load_straggling(2, 3, 4))


def _slow_at(addresses, seconds, X, block):
    from distributed import get_worker

    if get_worker().address in addresses:
        time.sleep(seconds)
    return _times(X, block)


def _assert_bytes_are_the_plans(record, K, r, q, slow, Q, rows):
    """Frames recorded = the plan's payloads plus 8 bytes per header entry."""
    finishers = sorted(set(range(K)) - set(slow))
    coded, N = straggling_placement(K, r, q, files=6)
    plan, _ = plan_finishers(coded, N, finishers)
    functions = dict(zip(finishers, np.array_split(np.arange(Q), q), strict=True))
    value = [8 * rows * len(functions.get(k, ())) for k in range(K)]
    lengths = dict.fromkeys(range(plan.placement.N), value)
    traffic = plan_traffic(plan, "unicast", lengths)
    segments = sum(len(p.segments) for p in plan.packets)
    frames = len(traffic.transmission_bytes)
    assert record.frame_header_bytes == FRAME_HEADER_BYTES * (frames + segments)
    assert record.packet_bytes + record.frame_header_bytes == sum(
        traffic.transmission_bytes
    )
    # each node downloads at least its frames (a retried fetch counts again)
    assert all(
        d >= t for d, t in zip(record.download_bytes, traffic.download, strict=True)
    )


@pytest.mark.parametrize(("K", "r", "q", "slow"), [(4, 2, 3, [1]), (4, 1, 2, [0, 3])])
def test_up_to_K_minus_q_slow_mappers_are_cut(client, K, r, q, slow):
    rng = np.random.default_rng(K + q)
    files, X = list(rng.standard_normal((6, 2, 3))), rng.standard_normal((3, 4))
    addresses = [sorted(client.nthreads())[k] for k in slow]
    map_fn = functools.partial(_slow_at, addresses, 0.5, X)
    started = time.perf_counter()
    result = run_coded_maps(files, map_fn, K=K, r=r, q=q, client=client)
    _assert_same(
        result.output, _plain(files, functools.partial(_times, X), concatenate_values)
    )
    assert result.record.stragglers == tuple(slow)
    assert result.record.cancelled_maps == len(slow)
    _assert_bytes_are_the_plans(result.record, K, r, q, slow, X.shape[1], rows=2)
    # each slow node sleeps 0.5 s per coded file and has several: cut, not waited
    files_per_node = straggling_placement(K, r, q, files=6)[0].storage_used[0]
    assert files_per_node >= 2
    assert time.perf_counter() - started < 0.5 * files_per_node + 30


def test_more_slow_mappers_than_K_minus_q_hit_the_timeout(client):
    addresses = sorted(client.nthreads())[:2]
    map_fn = functools.partial(_slow_at, addresses, 3.0, np.ones((2, 1)))
    with pytest.raises(MapReduceTaskError, match=r"map: 2 of 4 tasks did not finish"):
        run_coded_maps(
            [np.ones((1, 2))] * 3, map_fn, K=4, r=1, q=3, client=client, timeout=1.0
        )


def _die_at(addresses, X, block):
    from distributed import get_worker

    worker = get_worker()
    if worker.address in addresses:
        worker.loop.add_callback(worker.close, executor_wait=False, nanny=False)
        time.sleep(3.0)
    return _times(X, block)


def test_lost_mappers_up_to_K_minus_q(fresh_client):
    lost = sorted(fresh_client.nthreads())[1]
    rng = np.random.default_rng(0)
    files, X = list(rng.standard_normal((5, 2, 3))), rng.standard_normal((3, 2))
    result = run_coded_maps(
        files,
        functools.partial(_die_at, [lost], X),
        K=4,
        r=2,
        q=3,
        client=fresh_client,
        timeout=30,
    )
    _assert_same(
        result.output, _plain(files, functools.partial(_times, X), concatenate_values)
    )
    assert 1 in result.record.lost_nodes or 1 in result.record.stragglers


def test_lost_mappers_beyond_K_minus_q_raise_before_the_timeout(fresh_client):
    lost = sorted(fresh_client.nthreads())[1:3]
    started = time.perf_counter()
    with pytest.raises(NotEnoughMappersError, match=r"fewer than q=3 of K=4 nodes"):
        run_coded_maps(
            [np.ones((1, 2))] * 3,
            functools.partial(_die_at, lost, np.ones((2, 1))),
            K=4,
            r=1,
            q=3,
            client=fresh_client,
            timeout=60,
        )
    assert time.perf_counter() - started < 30


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"r": 5}, ValueError, "`r` must satisfy 1 <= r <= K, got r=5, K=4."),
        ({"q": 5}, ValueError, "`q` must satisfy 1 <= q <= K, got q=5, K=4."),
        ({"q": 0}, ValueError, "`q` must be >= 1"),
        ({"files": []}, ValueError, "`files` must hold at least one file, got 0."),
        (
            {"files": [np.ones(2), np.ones(3)]},
            ValueError,
            "`files` must all have one shape",
        ),
        ({"files": [b"ab", b"cd"]}, TypeError, "`files` must be real numeric arrays"),
        ({"map_fn": None}, TypeError, "`map_fn` must be callable, got NoneType."),
        ({"delivery": "x"}, ValueError, "`delivery` must be one of"),
        ({"timeout": 0}, ValueError, "`timeout` must be > 0"),
    ],
)
def test_input_validation(kwargs, error, message):
    args = {"files": [np.ones(2)] * 3, "map_fn": np.atleast_2d, "K": 4, "r": 2, "q": 3}
    args |= kwargs
    with pytest.raises(error, match=re.escape(message)):
        run_coded_maps(args.pop("files"), args.pop("map_fn"), **args)


def test_a_map_fn_without_a_function_axis_is_named(client):
    with pytest.raises(
        MapReduceTaskError, match="map_fn failed on the coded files of node"
    ):
        run_coded_maps([np.ones(2)] * 3, np.sum, K=3, r=1, q=2, client=client)
