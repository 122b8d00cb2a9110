"""TeraSort's array path: range partition, whole-partition sort, user parsers."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from mapreduce import (
    MapReduceOptions,
    generate_records,
    range_partition,
    run_terasort,
    terasort_map,
)
from mapreduce._examples import RECORD_BYTES, partition_records, sort_records

WAIT_ALL = {"options": MapReduceOptions(straggler_slack=float("inf"))}

# records over a tiny alphabet, so that keys, 8-byte prefixes and records repeat
record_lists = st.lists(
    st.binary(min_size=RECORD_BYTES, max_size=RECORD_BYTES).map(
        lambda raw: bytes(b % 3 * 127 for b in raw)
    )
    | st.binary(min_size=RECORD_BYTES, max_size=RECORD_BYTES),
    max_size=40,
)


def _pairs(blob):
    return list(terasort_map(blob))


@given(record_lists)
def test_sort_records_equals_sorted_pairs(records):
    blob = b"".join(records)
    assert _pairs(sort_records(blob)) == sorted(_pairs(blob))


@given(record_lists, st.integers(1, 9))
def test_partition_records_equals_range_partition(records, K):
    rows = np.frombuffer(b"".join(records), dtype=np.uint8).reshape(-1, RECORD_BYTES)
    got = dict(partition_records(rows, K))
    expected: dict[int, list] = {}
    for key, value in _pairs(b"".join(records)):
        expected.setdefault(range_partition(key, K), []).append(key + value)
    assert got == {k: b"".join(v) for k, v in expected.items()}


def test_terasort_ties_and_user_parser(client):
    records = generate_records(300, rng=7)
    ties = [(b"\x01" * 8 + k[8:], v) for k, v in records[:100]]
    records = records + ties + records[:20]  # shared 8-byte prefixes, duplicates
    for r, map_fn in ((3, None), (2, terasort_map)):
        result = run_terasort(
            records, K=4, r=r, client=client, map_fn=map_fn, **WAIT_ALL
        )
        assert result.records == sorted(records)
