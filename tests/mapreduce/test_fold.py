"""Folding reduces and the default partition, without a cluster."""

import functools
import operator
import pickle
import zlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mapreduce import fold_of, fold_with, hash_partition, sum_counts
from mapreduce._fold import reduce_pairs
from mapreduce._partition import partition_keys

keys = st.sampled_from(["a", "b", "c", "é", "\ud800"]) | st.integers(-3, 3)
runs = st.lists(st.lists(st.tuples(keys, st.integers(-100, 100)), max_size=8))


def _by_key(runs):
    """Key -> its values in order: the reduce's input, computed independently."""
    values = {}
    for run in runs:
        for key, value in run:
            values.setdefault(key, []).append(value)
    return values


@given(runs)
def test_a_folding_reduce_equals_the_reduce_of_the_listed_values(runs):
    expected = {key: sum(values) for key, values in _by_key(runs).items()}
    assert reduce_pairs(runs, sum_counts) == expected
    assert list(reduce_pairs(runs, sum_counts)) == list(_by_key(runs))  # key order


@given(runs)
def test_an_unmarked_reduce_gets_each_keys_values_in_order(runs):
    assert reduce_pairs(runs, lambda key, values: values) == _by_key(runs)


@given(runs)
def test_fold_with_any_associative_operation(runs):
    @fold_with(max)
    def largest(key, values):
        return max(values)

    assert fold_of(largest) is max
    expected = {key: functools.reduce(max, v) for key, v in _by_key(runs).items()}
    assert reduce_pairs(runs, largest) == expected


def test_sum_counts_folds_with_plus():
    assert fold_of(sum_counts) is operator.add
    assert fold_of(lambda key, values: sum(values)) is None


def test_fold_with_rejects_what_it_cannot_use():
    with pytest.raises(
        TypeError, match=r"`op` must be callable: a binary operation such as "
    ):
        fold_with(3)
    with pytest.raises(TypeError, match=r"marks a reduce function.*got int"):
        fold_with(operator.add)(3)
    with pytest.raises(TypeError, match=r"cannot mark <built-in function sum>.*def"):
        fold_with(operator.add)(sum)


@given(st.lists(keys | st.binary(max_size=4) | st.tuples(keys)), st.integers(1, 9))
def test_partition_keys_equals_the_partition_of_each_key(keys, K):
    nodes = partition_keys(hash_partition, keys, K)
    assert nodes == [hash_partition(key, K) for key in keys]
    assert all(0 <= node < K for node in nodes)


@pytest.mark.parametrize(
    ("key", "data"),
    [
        ("word", b"word"),
        ("é\ud800", "é\ud800".encode("utf-8", "surrogatepass")),
        (b"\x00\xff", b"\x00\xff"),
        (("a", 1), pickle.dumps(("a", 1), protocol=4)),
    ],
)
def test_hash_partition_is_the_crc32_of_the_keys_bytes(key, data):
    assert hash_partition(key, 7) == zlib.crc32(data) % 7


def test_partition_keys_calls_any_other_partition_once_per_key():
    calls = []

    def first_letter(key, K):
        calls.append(key)
        return ord(key[0]) % K

    assert partition_keys(first_letter, ["ab", "b", "ab"], 2) == [1, 0, 1]
    assert calls == ["ab", "b", "ab"]


# -- the reducer node of each key in a map task (mapreduce._runtime) ----------


def _calls_recorded(nodes):
    calls = []

    def partition(key, K):
        calls.append(key)
        return nodes[key]

    return partition, calls


def test_reducer_nodes_are_checked_once_per_key_and_kept_for_the_job():
    from mapreduce._runtime import _close_job, _reducer_nodes

    partition, calls = _calls_recorded({"a": np.int64(2), "b": 0, "c": 2})
    signal = "test-job-0"
    try:
        assert _reducer_nodes(partition, ["a", "b", "a"], 3, signal) == [2, 0, 2]
        assert all(type(n) is int for n in _reducer_nodes(partition, ["a"], 3, signal))
        assert _reducer_nodes(partition, ["c", "b"], 3, signal) == [2, 0]
        assert calls == ["a", "b", "c"]  # each key once for the job and node
        assert _reducer_nodes(partition, ["a"], 3, "test-job-1") == [2]  # another job
        assert calls == ["a", "b", "c", "a"]
    finally:
        _close_job("test-job-")
    from mapreduce._runtime import _known

    assert not any(signal.startswith("test-job-") for signal in _known)


@pytest.mark.parametrize(
    ("node", "shown"), [(3, "3"), (-1, "-1"), (True, "True"), (1.0, "1.0")]
)
def test_a_node_outside_range_k_is_named_with_its_key(node, shown):
    from mapreduce._runtime import _close_job, _reducer_nodes

    partition, _ = _calls_recorded({"ok": 2, "bad": node})
    message = rf"`partition` returned {shown} for key 'bad'; .* in range\(K\), K=3"
    try:
        with pytest.raises(ValueError, match=message):
            _reducer_nodes(partition, ["ok", "bad"], 3, "test-job-2")
    finally:
        _close_job("test-job-")


def test_a_full_cache_still_gives_every_node(monkeypatch):
    import mapreduce._runtime as runtime

    monkeypatch.setattr(runtime, "_MAX_CACHED_KEYS", 2)
    partition, calls = _calls_recorded({key: i % 3 for i, key in enumerate("abcde")})
    try:
        assert runtime._reducer_nodes(partition, list("abc"), 3, "test-job-3") == [
            0,
            1,
            2,
        ]
        assert runtime._reducer_nodes(partition, list("cde"), 3, "test-job-3") == [
            2,
            0,
            1,
        ]
        assert calls == list("abccde")  # full after the first file: nothing kept
    finally:
        runtime._close_job("test-job-")
