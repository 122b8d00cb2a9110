"""The emulated network: a token bucket per node and direction (mapreduce._emulator)."""

import collections
import time

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mapreduce import (
    MapReduceOptions,
    count_words,
    place_li,
    plan_shuffle,
    run_mapreduce,
    sum_counts,
)
from mapreduce._emulator import Link
from mapreduce._plan import Packet, Segment
from mapreduce._runtime import _arrive, _frame_task, _pop_seconds

transfers = st.lists(
    st.tuples(st.integers(0, 10_000), st.floats(0, 100, allow_nan=False)),
    min_size=1,
    max_size=20,
)


@given(
    transfers=transfers,
    rate=st.floats(1.0, 1e6),
    burst=st.sampled_from([0.0, 500.0]),
)
def test_a_link_carries_at_most_its_rate(transfers, rate, burst):
    link = Link(rate=rate, burst=burst)
    ends = [link.reserve(n, ready=ready) for n, ready in transfers]
    assert ends == sorted(ends)
    first = min(ready for _, ready in transfers)
    total = sum(n for n, _ in transfers)
    assert ends[-1] >= first + (total - burst) / rate - 1e-9
    if burst == 0:
        for (n, ready), end in zip(transfers, ends, strict=True):
            assert end >= ready + n / rate - 1e-9


def test_a_link_waits_for_the_other_end():
    assert Link(rate=10.0).reserve(10, ready=0.0, after=4.0) == 4.0


@pytest.mark.parametrize("bad", [0, -1.0, float("nan")])
def test_bad_bandwidth_is_named(bad):
    with pytest.raises(ValueError, match="`rate`"):
        Link(rate=bad)
    with pytest.raises(ValueError, match="`emulated_bandwidth`"):
        MapReduceOptions(emulated_bandwidth=bad)


def _value_frames(count: int, nbytes: int) -> list:
    """`count` uncoded one-value frames of `nbytes` from node 0 to node 1."""
    maps = {f: (b"", bytes(nbytes)) for f in range(count)}
    return [
        ((Packet(sender=0, segments=(Segment(receiver=1, file=f),)),), maps)
        for f in range(count)
    ]


def test_known_bytes_take_bytes_over_rate():
    """Elapsed >= bytes / rate (the bucket guarantees it), <= that + 1 s (busy box)."""
    rate, prefix = 2e6, "emulator-test-"
    started = time.time()
    received = []
    for packets, maps in _value_frames(5, 200_000):
        sent = _frame_task(packets, maps, prefix, 0, (1,), rate)
        received.append((packets, sent))
    arrived = _arrive(1, received, prefix, rate)
    elapsed = time.time() - started
    total = sum(sent[0].nbytes for _, sent in received)
    assert total > 5 * 200_000  # payloads plus frame headers
    assert arrived - started >= total / rate
    assert total / rate <= elapsed <= total / rate + 1.0
    _pop_seconds(prefix)


def test_without_emulation_nothing_waits():
    received = [
        (packets, _frame_task(packets, maps, "x-", 0, (1,), None))
        for packets, maps in _value_frames(2, 10)
    ]
    assert all(sent[1:] == ({}, {}) for _, sent in received)
    started = time.time()
    assert _arrive(1, received, "x-", None) >= started


TEXTS = ["a b c a", "b b d", "c a e e e", "a f", "g a b", "d d c"]


@pytest.mark.parametrize(("r", "coded"), [(1, False), (2, True), (2, False)])
@pytest.mark.parametrize("delivery", ["unicast", "forward"])
def test_an_emulated_run_takes_its_bytes_over_the_rate(client, r, coded, delivery):
    rate = 20_000.0  # bytes/s: a few KB of shuffle take a visible time
    started = time.perf_counter()
    result = run_mapreduce(
        TEXTS,
        count_words,
        sum_counts,
        K=3,
        r=r,
        coded=coded,
        client=client,
        options=MapReduceOptions(
            delivery=delivery, emulated_bandwidth=rate, straggler_slack=float("inf")
        ),
    )
    elapsed = time.perf_counter() - started
    record = result.record
    assert result.output == collections.Counter(" ".join(TEXTS).split())
    assert record.emulated_bandwidth == rate
    busiest = max(max(record.download_bytes), max(record.upload_bytes))
    assert busiest > 0
    assert elapsed >= busiest / rate
    assert record.shuffle_seconds + record.map_seconds >= busiest / rate
    assert elapsed <= busiest / rate * 3 + 15.0  # loose: a shared 2-core machine
    plan = plan_shuffle(place_li(3, r, N=len(TEXTS)), coded=coded)
    assert record.load == plan.load


def test_an_emulated_run_is_labelled_and_a_plain_one_is_not(client):
    plain = run_mapreduce(TEXTS, count_words, sum_counts, K=2, client=client)
    assert plain.record.emulated_bandwidth is None
    assert np.isfinite(plain.record.shuffle_seconds)
