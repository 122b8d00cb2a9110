"""The emulated network: a token bucket per node and direction (mapreduce._emulator)."""

import collections
import itertools
import time
import types

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mapreduce import (
    MapReduceOptions,
    count_words,
    place_li,
    plan_shuffle,
    plan_traffic,
    run_mapreduce,
    sum_counts,
)
from mapreduce import _runtime as runtime
from mapreduce._emulator import Link
from mapreduce._network import frames_of
from mapreduce._plan import Packet, Segment
from mapreduce._runtime import _arrive, _close_job, _pack_task, _rotated
from theory import shuffle_seconds_switched

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
    intervals = sorted(
        (end - n / rate, end) for (n, _), end in zip(transfers, ends, strict=True)
    )
    for (_, end), (begin, _) in itertools.pairwise(intervals):
        assert begin >= end - 1e-9 * max(1.0, abs(end))  # one transfer at a time
    first = min(ready for _, ready in transfers)
    total = sum(n for n, _ in transfers)
    assert max(ends) >= first + (total - burst) / rate - 1e-9
    for (n, ready), end in zip(transfers, ends, strict=True):
        assert end >= ready - burst / rate + n / rate - 1e-9


def test_a_link_fills_an_idle_interval_booked_out_of_order():
    link = Link(rate=10.0)
    assert link.reserve(10, ready=5.0) == 6.0
    assert link.reserve(20, ready=0.0) == 2.0  # ready earlier: sent earlier
    assert link.reserve(40, ready=1.0) == 10.0  # no idle 4 s before 6.0


def test_a_link_waits_for_the_other_end():
    assert Link(rate=10.0).reserve(10, ready=0.0, after=4.0) == 4.0


@pytest.mark.parametrize("bad", [0, -1.0, float("nan")])
def test_bad_bandwidth_is_named(bad):
    with pytest.raises(ValueError, match="`rate`"):
        Link(rate=bad)
    with pytest.raises(ValueError, match="`emulated_bandwidth`"):
        MapReduceOptions(emulated_bandwidth=bad)


def _value_frames(count: int, nbytes: int) -> tuple[list, dict]:
    """`count` uncoded one-value frames of `nbytes` from node 0 to node 1."""
    maps = {f: (b"", bytes(nbytes)) for f in range(count)}
    frames = [
        (f, (Packet(sender=0, segments=(Segment(receiver=1, file=f),)),), (1,))
        for f in range(count)
    ]
    return frames, maps


def test_known_bytes_take_bytes_over_rate():
    """Elapsed >= bytes / rate (the bucket guarantees it), <= that + 1 s (busy box)."""
    rate, prefix = 2e6, "emulator-test-"
    started = time.time()
    frames, maps = _value_frames(5, 200_000)
    sent = _pack_task(frames, maps, prefix, 0, rate, 2)
    received = [(packets, sent[i]) for i, packets, _ in frames]
    arrived = _arrive(1, received, prefix, rate)
    elapsed = time.time() - started
    total = sum(frame.nbytes for frame, _, _ in sent.values())
    assert total > 5 * 200_000  # payloads plus frame headers
    assert arrived - started >= total / rate
    assert total / rate <= elapsed <= total / rate + 1.0
    _close_job(prefix)


def test_without_emulation_nothing_waits():
    frames, maps = _value_frames(2, 10)
    sent = _pack_task(frames, maps, "x-", 0, None, 2)
    assert all(s[1:] == ({}, {}) for s in sent.values())
    received = [(packets, sent[i]) for i, packets, _ in frames]
    started = time.time()
    assert _arrive(1, received, "x-", None) >= started


@pytest.mark.parametrize(
    ("node", "order"),
    [(0, [1, 2, 3, 1, 2]), (2, [3, 0, 1, 1]), (3, [0, 1, 2, 1, 2])],
)
def test_senders_take_turns_over_receivers_starting_after_themselves(node, order):
    transfers = [(0, 1), (1, 1), (2, 2), (3, 2), (4, 3), (5, 0)]
    transfers = [(i, t) for i, t in transfers if t != node]
    got = _rotated(transfers, node, 4)
    assert sorted(got) == sorted(transfers)
    assert [t for _, t in got] == order


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


@pytest.mark.parametrize(("r", "coded"), [(1, False), (2, True), (3, True)])
def test_an_emulated_unicast_shuffle_takes_the_switched_model_time(
    monkeypatch, r, coded
):
    """Equal values, every frame ready at 0: the busiest link's bytes over B, exactly.

    Virtual times only (the clock is frozen, waits return at once); with every
    sender sending in plan order (all to node 0 first) uncoded r = 1 took 1.86x.
    """
    clock = types.SimpleNamespace(
        time=lambda: 0.0, sleep=lambda seconds: None, perf_counter=time.perf_counter
    )
    monkeypatch.setattr(runtime, "time", clock)
    K, rate, prefix = 8, 1e4, f"model-test-{r}-"
    plan = plan_shuffle(place_li(K, r), coded=coded)
    frames = frames_of(plan)
    maps = {f: (bytes(1000),) * K for f in range(plan.placement.N)}
    sent = {}
    for s in range(K):
        mine = [
            (i, f.packets, f.receivers) for i, f in enumerate(frames) if f.sender == s
        ]
        sent |= _pack_task(mine, maps, prefix, s, rate, K)
    arrivals = [
        _arrive(
            k,
            [(f.packets, sent[i]) for i, f in enumerate(frames) if k in f.receivers],
            prefix,
            rate,
        )
        for k in range(K)
    ]
    traffic = plan_traffic(plan, "unicast", 1000)
    model = shuffle_seconds_switched(traffic.upload, traffic.download, rate)
    assert max(arrivals) == pytest.approx(model, rel=1e-9)
    _close_job(prefix)
