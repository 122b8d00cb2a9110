"""Folding reduces and the default partition, without a cluster."""

import functools
import operator
import pickle

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


def _fnv_polynomial(data: bytes, K: int) -> int:
    """hash_partition's formula in Python integers, byte by byte (the oracle)."""
    h = sum((byte + 1) * pow(0x100000001B3, j, 2**64) for j, byte in enumerate(data))
    h %= 2**64
    for multiplier in (0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53):
        h ^= h >> 33
        h = h * multiplier % 2**64
    return (h ^ h >> 33) % K


@pytest.mark.parametrize(
    ("key", "data"),
    [
        ("word", b"word"),
        ("", b""),
        ("é\ud800", "é\ud800".encode("utf-8", "surrogatepass")),
        (b"\x00\xff", b"\x00\xff"),
        (b"\x00", b"\x00"),
        (("a", 1), pickle.dumps(("a", 1), protocol=4)),
        ("x" * 3000, b"x" * 3000),
    ],
)
@pytest.mark.parametrize("K", [1, 7, 8, 1000])
def test_hash_partition_is_the_fnv_polynomial_of_the_keys_bytes(key, data, K):
    assert hash_partition(key, K) == _fnv_polynomial(data, K)
    assert partition_keys(hash_partition, ["ab", key, "é"], K)[1] == _fnv_polynomial(
        data, K
    )


def test_hash_partition_spreads_similar_keys_evenly():
    keys = [f"w{i}" for i in range(8000)]  # keys that differ in their last bytes
    counts = np.bincount(partition_keys(hash_partition, keys, 8), minlength=8)
    assert counts.min() > 900  # 1000 each; sd 30
    assert counts.max() < 1100


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


def test_reducer_nodes_call_the_partition_once_per_distinct_key():
    from mapreduce._runtime import _reducer_nodes

    partition, calls = _calls_recorded({"a": np.int64(2), "b": 0, "c": 2})
    nodes = _reducer_nodes(partition, ["a", "b", "a", "c"], 3, distinct=False)
    assert nodes == [2, 0, 2, 2]
    assert all(type(n) is int for n in nodes)
    assert calls == ["a", "b", "c"]
    assert _reducer_nodes(partition, ["c", "b"], 3, distinct=True) == [2, 0]
    assert calls == ["a", "b", "c", "c", "b"]


@pytest.mark.parametrize(
    ("node", "shown"), [(3, "3"), (-1, "-1"), (True, "True"), (1.0, "1.0")]
)
def test_a_node_outside_range_k_is_named_with_its_key(node, shown):
    from mapreduce._runtime import _reducer_nodes

    partition, _ = _calls_recorded({"ok": 2, "bad": node})
    message = rf"`partition` returned {shown} for key 'bad'; .* in range\(K\), K=3"
    with pytest.raises(ValueError, match=message):
        _reducer_nodes(partition, ["ok", "bad"], 3, distinct=True)
