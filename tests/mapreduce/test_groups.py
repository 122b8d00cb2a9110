"""Small inputs grouped into the placement's files, and the stages' progress bars."""

import collections
import itertools
import math
import pickle
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mapreduce import (
    MapReduceOptions,
    MapReduceTaskError,
    count_words,
    run_mapreduce,
    sum_counts,
)
from mapreduce._groups import group_bounds, group_count, group_inputs, map_inputs

sizes_and_batches = st.tuples(
    st.lists(st.integers(1, 10_000), min_size=1, max_size=300),
    st.integers(1, 40),
    st.integers(1, 50_000),
)


@given(sizes_and_batches)
def test_grouping_covers_every_input_once_in_order(case):
    sizes, batches, group_bytes = case
    N = group_count(sizes, batches, group_bytes)
    bounds = group_bounds(sizes, N)
    # N runs, each non-empty, consecutive, from the first input to the last
    assert len(bounds) == N + 1
    assert bounds[0] == 0
    assert bounds[-1] == len(sizes)
    assert all(a < b for a, b in itertools.pairwise(bounds))
    total = sum(sizes)
    if N % batches or total / N > group_bytes:  # not grouped:
        # one file per input, as there are too few inputs, or big ones
        assert len(sizes) == N
        assert len(sizes) < batches or (
            total / (batches * (len(sizes) // batches)) > group_bytes
        )
        return
    # grouped: equal batches, files of at most group_bytes on average, and no
    # more files than that asks for
    assert batches <= N <= len(sizes)
    assert batches == N or total / (N - batches) > group_bytes


@given(st.lists(st.integers(1, 1000), min_size=2, max_size=200), st.data())
def test_each_run_ends_where_the_bytes_reach_its_share(sizes, data):
    N = data.draw(st.integers(1, len(sizes)))
    bounds = group_bounds(sizes, N)
    running = [0, *itertools.accumulate(sizes)]
    for f in range(1, N):
        share, cut = sum(sizes) * f / N, bounds[f]
        # unless kept one input long or leaving one input per later run
        if cut not in (bounds[f - 1] + 1, len(sizes) - (N - f)):
            assert running[cut - 1] < share <= running[cut]


@given(st.lists(st.text(max_size=30), min_size=1, max_size=60), st.integers(1, 12))
def test_group_inputs_gives_every_input_back_once(texts, batches):
    groups, counts = group_inputs(texts, batches, group_bytes=100)
    assert counts == tuple(len(blobs) for _, blobs in groups)
    assert [pickle.loads(b) for _, blobs in groups for b in blobs] == texts
    assert [first for first, _ in groups] == [
        sum(counts[:f]) for f in range(len(counts))
    ]
    for group in groups:
        first, blobs = group
        assert [pair for run in map_inputs(count_words, group) for pair in run] == [
            pair
            for text in texts[first : first + len(blobs)]
            for pair in count_words(text)
        ]


words = st.sampled_from([f"w{i}" for i in range(30)])
corpora = st.lists(
    st.lists(words, min_size=0, max_size=40).map(" ".join), min_size=1, max_size=40
)


@pytest.mark.runtime
@pytest.mark.parametrize("coded", [True, False], ids=["coded", "uncoded"])
@pytest.mark.parametrize("group_bytes", [200, None], ids=["grouped", "each input"])
@pytest.mark.parametrize("r", [1, 2])
@settings(max_examples=3)
@given(texts=corpora, combine=st.booleans())
def test_word_count_equals_counter_on_the_whole_corpus(
    client, r, group_bytes, coded, texts, combine
):
    result = run_mapreduce(
        texts,
        count_words,
        sum_counts,
        K=4,
        r=r,
        coded=coded,
        combine=combine,
        client=client,
        options=MapReduceOptions(group_bytes=group_bytes),
    )
    assert result.output == collections.Counter(" ".join(texts).split())
    record = result.record
    assert sum(record.inputs_per_file) == len(texts)
    assert len(record.inputs_per_file) == record.N
    if group_bytes is None or len(texts) < math.comb(4, r):
        assert record.inputs_per_file == (1,) * len(texts)
    else:
        assert record.N % math.comb(4, r) == 0


def _fails_on_w5(text):
    if "w5" in text.split():
        raise ZeroDivisionError("boom")
    return count_words(text)


def _yields_until_w5(text):  # raises only while its pairs are taken
    for word in text.split():
        if word == "w5":
            raise ZeroDivisionError("boom")
        yield word, 1


@pytest.mark.runtime
@pytest.mark.parametrize("map_fn", [_fails_on_w5, _yields_until_w5])
def test_a_failing_input_is_named_inside_its_group(client, map_fn):
    texts = ["w1 w2", "w3", "w4", "w5 w1", "w2"]  # grouped as inputs 0-2, 3-4
    with pytest.raises(
        MapReduceTaskError, match=r"map_fn failed on file 1 at node"
    ) as info:
        run_mapreduce(texts, map_fn, sum_counts, K=2, r=1, client=client)
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    assert "(map_fn raised on input file 3)" in info.value.__cause__.__notes__


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        (0, ValueError, "`group_bytes` must be >= 1 (bytes per grouped file, or None"),
        (2.5, TypeError, "`group_bytes` must be an int (bytes per grouped file, or"),
    ],
)
def test_bad_group_bytes_is_named_with_a_remedy(value, error, message):
    with pytest.raises(error, match=re.escape(message)):
        MapReduceOptions(group_bytes=value)


# -- progress bars ----------------------------------------------------------------


class _Bar:
    """What a stage's bar is given: when it was made, and each update."""

    def __init__(self, stage, clock):
        self.stage, self.clock = stage, clock
        self.created = clock()
        self.updates = []

    def update(self, n):
        self.updates.extend([self.clock()] * n)

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.mark.runtime
@pytest.mark.parametrize("r", [1, 2])
def test_the_reduce_bar_starts_when_the_map_stage_ends(client, monkeypatch, r):
    from mapreduce import _runtime

    ticks = iter(range(10**6))  # a clock of the order of calls
    bars = []

    def progress(self, stage, total):
        bars.append(_Bar(stage, lambda: next(ticks)))
        return bars[-1]

    monkeypatch.setattr(_runtime._Job, "progress", progress)
    texts = [f"w{i} w{i % 3}" for i in range(12)]
    options = MapReduceOptions(straggler_slack=math.inf)  # no map cut
    run_mapreduce(
        texts, count_words, sum_counts, K=4, r=r, client=client, options=options
    )
    (maps,) = [bar for bar in bars if bar.stage == "map"]
    (reduces,) = [bar for bar in bars if bar.stage == "reduce_fn"]
    assert len(maps.updates) == math.comb(4, r) * r  # a file per batch, r copies
    assert len(reduces.updates) == 4
    # the reduce clock starts after the last map, before the first reducer
    # reports (a reducer done with the last map starts its bar at 1)
    assert maps.created < reduces.created
    assert max(maps.updates) < reduces.created <= min(reduces.updates)
