"""TeraSort generated and validated on the workers; TeraValidate's checks."""

import re

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mapreduce import (
    MapReduceOptions,
    ValidationError,
    generate_records,
    run_terasort,
    sort_frame,
    summarize_frame,
    summarize_records,
    teragen_partition,
    terasort,
    validate_sorted,
)
from mapreduce._runtime_terasort import _kept, summarize

WAIT_ALL = {"options": MapReduceOptions(straggler_slack=float("inf"))}


def _sorted_rows(rows):
    return np.sort(rows.view("S100").ravel()).view(np.uint8).reshape(-1, 100)


def _sorted_parts(n, parts, seed=0):
    """`n` generated records sorted and cut into `parts` key ranges."""
    rows = _sorted_rows(teragen_partition(seed, 0, n))
    return np.array_split(rows, parts)


def _summaries(parts):
    return [summarize_records(part) for part in parts]


@pytest.mark.parametrize(
    ("r", "coded", "partitions"), [(1, False, 8), (2, True, None), (3, True, None)]
)
def test_terasort_sorts_the_generated_records_on_the_workers(
    client, r, coded, partitions
):
    run = terasort(
        3001,
        client=client,
        K=4,
        r=r,
        coded=coded,
        partitions=partitions,
        seed=5,
        **WAIT_ALL,
    )
    sizes = [len(x) for x in np.array_split(np.arange(3001), len(run.inputs))]
    generated = np.concatenate(
        [teragen_partition(5, f, n) for f, n in enumerate(sizes)]
    )
    got = np.concatenate(client.gather(run.partitions))
    assert np.array_equal(got, _sorted_rows(generated))
    assert [p.count for p in run.outputs] == [
        len(p) for p in client.gather(run.partitions)
    ]
    assert sum(p.count for p in run.inputs) == 3001
    assert run.record.is_coded == coded
    assert run.record.r == r
    assert not _kept  # the in-process workers keep nothing behind


def test_terasort_of_nothing_is_empty_and_valid(client):
    run = terasort(0, client=client, K=2)
    assert [p.count for p in run.outputs] == [0, 0]
    assert [part.shape for part in client.gather(run.partitions)] == [(0, 100)] * 2


def test_the_checksum_ignores_order_and_sees_a_changed_record():
    rows = teragen_partition(1, 2, 50)
    shuffled = rows[np.random.default_rng(0).permutation(50)]
    assert summarize_records(rows).checksum == summarize_records(shuffled).checksum
    changed = rows.copy()
    changed[7, 99] ^= 1
    assert summarize_records(rows).checksum != summarize_records(changed).checksum


@given(st.integers(0, 60), st.integers(1, 5))
def test_sorted_parts_validate(n, parts):
    inputs = [summarize_records(teragen_partition(0, 0, n))]
    validate_sorted(inputs, _summaries(_sorted_parts(n, parts)))


def test_validation_names_an_unsorted_partition():
    parts = _sorted_parts(400, 4)
    parts[2] = parts[2].copy()
    parts[2][[3, 9]] = parts[2][[9, 3]]  # swap two records
    inputs = [summarize_records(teragen_partition(0, 0, 400))]
    with pytest.raises(ValidationError, match=r"^order: output partition 2 .* 3 "):
        validate_sorted(inputs, _summaries(parts))


def test_validation_names_a_partition_boundary():
    parts = _sorted_parts(400, 4)
    parts[1], parts[2] = parts[2], parts[1]
    inputs = [summarize_records(teragen_partition(0, 0, 400))]
    with pytest.raises(
        ValidationError, match=r"^partition boundary: .* partition 1 .* partition 2"
    ):
        validate_sorted(inputs, _summaries(parts))


def test_validation_sees_a_dropped_and_a_changed_record():
    inputs = [summarize_records(teragen_partition(0, 0, 400))]
    parts = _sorted_parts(400, 4)
    dropped = [*parts[:3], parts[3][:-1]]
    with pytest.raises(
        ValidationError,
        match=re.escape("record count: the output has 399 records, the input 400."),
    ):
        validate_sorted(inputs, _summaries(dropped))
    changed = [part.copy() for part in parts]
    changed[0][5, 50] ^= 0xFF  # a value byte: the order holds
    with pytest.raises(ValidationError, match=r"^checksum: "):
        validate_sorted(inputs, _summaries(changed))


def _corrupt(rows, how):
    rows = rows.copy()
    if how == "swap":
        rows[[0, 1]] = rows[[1, 0]]
        return rows
    return rows[1:]


@pytest.mark.parametrize(
    ("how", "message"),
    [("swap", "^order: output partition 1 "), ("drop", "^record count")],
)
def test_validation_on_the_workers_fails_on_a_corrupted_partition(client, how, message):
    run = terasort(2000, client=client, K=4, r=2, seed=2, **WAIT_ALL)
    parts = list(run.partitions)
    parts[1] = client.submit(_corrupt, parts[1], how)
    with pytest.raises(ValidationError, match=message):
        validate_sorted(run.inputs, summarize(client, parts))


@pytest.mark.parametrize(
    "rows", [np.zeros((3, 99), np.uint8), np.zeros((3, 100), np.int64), np.zeros(100)]
)
def test_records_of_the_wrong_width_are_named(rows):
    with pytest.raises(ValueError, match=r"`records` must be a uint8 array of shape"):
        summarize_records(rows)


def test_run_terasort_names_records_of_the_wrong_length():
    with pytest.raises(
        ValueError, match="10-byte keys and 90-byte values, got 10 and 89"
    ):
        run_terasort([(b"k" * 10, b"v" * 89)], K=2)
    records = generate_records(2, rng=0)
    with pytest.raises(ValueError, match="got 9 and 90"):
        run_terasort([(records[0][0][:9], records[0][1])], K=2)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_records": -1}, "`n_records`"),
        ({"seed": -1}, "`seed`"),
        ({"r": 5}, "`r` must satisfy 1 <= r <= K"),
        (
            {"partitions": 5, "r": 2},
            r"`partitions` must be a positive multiple of C\(K, r\) = 6",
        ),
    ],
)
def test_terasort_names_bad_input(client, kwargs, message):
    arguments = {"n_records": 100, "client": client, "K": 4} | kwargs
    with pytest.raises(ValueError, match=message):
        terasort(**arguments)


def test_terasort_names_a_bad_client_or_options_before_any_work(client):
    with pytest.raises(ValueError, match="at least K=5 workers, got 4"):
        terasort(100, client=client, K=5)
    with pytest.raises(TypeError, match="`options` must be a MapReduceOptions"):
        terasort(100, client=client, K=2, options={"delivery": "forward"})
    with pytest.raises(TypeError, match=r"`client` must be a distributed\.Client"):
        terasort(100, client=None, K=2)


@pytest.mark.parametrize("bandwidth", [0.0, -25e6])
def test_an_emulated_bandwidth_of_at_most_0_is_named(bandwidth):
    with pytest.raises(ValueError, match="`emulated_bandwidth`"):
        MapReduceOptions(emulated_bandwidth=bandwidth)


def test_an_emulated_terasort_is_labelled_and_valid(client):
    options = MapReduceOptions(emulated_bandwidth=50e6, delivery="forward")
    run = terasort(1000, client=client, K=3, r=2, coded=True, options=options)
    assert run.record.emulated_bandwidth == 50e6
    assert run.record.delivery == "forward"
    assert sum(p.count for p in run.outputs) == 1000


# -- a dask.dataframe sorted by a column ------------------------------------------


def _frame(n, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "x": rng.integers(0, 50, n),  # ties: the sort is stable per reducer
            "y": rng.random(n),
            "s": rng.choice(list("abcd"), n),
        }
    )


@pytest.mark.parametrize(("r", "coded"), [(1, False), (2, True), (3, True)])
@pytest.mark.parametrize("by", ["x", "s"])
def test_sort_frame_sorts_every_row_by_the_column(client, r, coded, by):
    rows = _frame(700)
    frame = dd.from_pandas(rows, npartitions=5)
    result = sort_frame(frame, by, client=client, K=4, r=r, coded=coded, **WAIT_ALL)
    assert result.output.npartitions == 4
    got = result.output.compute()
    assert got[by].is_monotonic_increasing
    expected = rows.sort_values(by, kind="stable")
    assert sorted(map(tuple, got.to_numpy().tolist())) == sorted(
        map(tuple, expected.to_numpy().tolist())
    )
    assert got[by].tolist() == expected[by].tolist()
    assert result.record.is_coded == coded
    assert not _kept


def test_sort_frame_of_one_distinct_value_puts_it_on_one_reducer(client):
    rows = pd.DataFrame({"x": [3] * 20, "y": range(20)})
    result = sort_frame(dd.from_pandas(rows, npartitions=2), "x", client=client, K=3)
    parts = client.compute(result.output.to_delayed(), sync=True)
    assert sorted(len(part) for part in parts) == [0, 0, 20]


def test_summarize_frame_sees_a_swap_and_a_dropped_row():
    rows = _frame(100).sort_values("x", kind="stable")
    rows = rows.drop_duplicates("x")  # distinct keys: a swap breaks the order
    inputs = [summarize_frame(rows, "x")]
    swapped = rows.iloc[[1, 0, *range(2, len(rows))]]
    with pytest.raises(ValidationError, match=r"^order: output partition 0 .* 0 "):
        validate_sorted(inputs, [summarize_frame(swapped, "x")])
    with pytest.raises(ValidationError, match=r"^record count: "):
        validate_sorted(inputs, [summarize_frame(rows.iloc[1:], "x")])
    changed = rows.copy()
    changed.iloc[3, 1] += 1.0
    with pytest.raises(ValidationError, match=r"^checksum: "):
        validate_sorted(inputs, [summarize_frame(changed, "x")])


@pytest.mark.parametrize("by", ["z", 0, None])
def test_a_dataframe_without_the_sort_column_is_named(client, by):
    frame = dd.from_pandas(_frame(10), npartitions=2)
    with pytest.raises(ValueError, match=r"`by` must name a column of the dataframe"):
        sort_frame(frame, by, client=client, K=2)
    with pytest.raises(ValueError, match=r"`by` must name a column of the dataframe"):
        summarize_frame(_frame(3), by)
