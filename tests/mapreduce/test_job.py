import collections
import re
import time

import pytest

from mapreduce import (
    MapReduceTaskError,
    count_words,
    generate_records,
    place_hypercube,
    place_k3,
    place_li,
    run_mapreduce,
    run_terasort,
    sum_counts,
)
from theory import load_coded, load_uncoded

pytestmark = pytest.mark.runtime

TEXTS = [" ".join(f"w{(7 * f + 3 * i) % 23}" for i in range(40 + f)) for f in range(12)]


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=4, threads_per_worker=1, processes=False, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


@pytest.mark.parametrize("r", [1, 2, 3])
def test_word_count_equals_counter(client, r):
    result = run_mapreduce(TEXTS, count_words, sum_counts, K=4, r=r, client=client)
    assert result.output == collections.Counter(" ".join(TEXTS).split())
    record = result.record
    assert record.load == load_coded(r, 4)
    assert record.unicast_load == load_uncoded(r, 4)
    assert record.wire_bytes > 0
    assert record.packet_bytes > 0
    # the bytes sent per multicast are about the paper's share of all values
    assert record.measured_load == pytest.approx(float(record.load), rel=0.25)


def test_coded_and_uncoded_runs_agree(client):
    coded = run_mapreduce(TEXTS, count_words, sum_counts, K=4, r=2, client=client)
    uncoded = run_mapreduce(
        TEXTS, count_words, sum_counts, K=4, r=2, coded=False, client=client
    )
    assert coded.output == uncoded.output
    assert uncoded.record.load == load_uncoded(2, 4)
    assert coded.record.packet_bytes < uncoded.record.packet_bytes


@pytest.mark.parametrize(
    "placement",
    [place_k3((3, 6, 9), 12), place_hypercube((2, 2)), place_li(4, 4, N=12)],
    ids=["k3", "hypercube", "r=K"],
)
def test_other_placements(client, placement):
    texts = TEXTS[: placement.N]
    result = run_mapreduce(
        texts,
        count_words,
        sum_counts,
        K=placement.K,
        placement=placement,
        client=client,
    )
    assert result.output == collections.Counter(" ".join(texts).split())
    if placement.r == placement.K:
        assert result.record.wire_bytes == 0
        assert result.record.packets == 0


@pytest.mark.parametrize("r", [1, 2])
def test_terasort_sorts(client, r):
    records = generate_records(600, rng=20261202 + r)
    result = run_terasort(records, K=4, r=r, client=client)
    assert result.records == sorted(records)
    assert len(result.records) == len(records)
    assert all(a <= b for a, b in zip(result.records, result.records[1:], strict=False))
    assert result.record.load == load_coded(r, 4)


def _explode(text):
    if "w5" in text.split()[:1]:
        raise ZeroDivisionError("boom")
    return count_words(text)


def test_failing_map_task_raises(client):
    texts = ["w1 w2", "w5 w3", "w4"]
    with pytest.raises(
        MapReduceTaskError, match=r"map_fn failed on file 1 at node \d"
    ) as info:
        run_mapreduce(texts, _explode, sum_counts, K=3, r=2, client=client)
    assert isinstance(info.value.__cause__, ZeroDivisionError)


def _bad_reduce(key, values):
    raise KeyError(key)


def test_failing_reduce_task_raises(client):
    with pytest.raises(MapReduceTaskError, match="reduce_fn failed at node"):
        run_mapreduce(["a b", "c"], count_words, _bad_reduce, K=2, r=1, client=client)


def _slow_words(text):
    time.sleep(1.0)
    return count_words(text)


def test_stage_past_the_timeout_raises_instead_of_hanging(client):
    started = time.perf_counter()
    with pytest.raises(MapReduceTaskError, match=r"map: \d+ of \d+ tasks did not"):
        run_mapreduce(
            ["a b", "c"], _slow_words, sum_counts, K=2, r=1, client=client, timeout=0.2
        )
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"K": 3, "r": 4}, ValueError, "`r` must satisfy 1 <= r <= K, got r=4, K=3."),
        ({"K": 3, "r": 0}, ValueError, "`r` must be >= 1, got r=0."),
        ({"K": 0}, ValueError, "`K` must be >= 1, got K=0."),
        (
            {"K": 3, "r": 1, "placement": place_li(3, 1)},
            ValueError,
            "pass at most one of `r` and `placement`, got both.",
        ),
        (
            {"K": 3, "placement": place_li(3, 1)},
            ValueError,
            "`placement` must have K=3 nodes and N=4 files (one per input file), "
            "got K=3, N=3.",
        ),
        (
            {"K": 3, "placement": {}},
            TypeError,
            "`placement` must be a Placement, got dict.",
        ),
        (
            {"K": 3, "map_fn": None},
            TypeError,
            "`map_fn` must be callable, got NoneType.",
        ),
        (
            {"K": 3, "files": []},
            ValueError,
            "`files` must hold at least one file, got 0.",
        ),
        (
            {"K": 3, "client": "tcp://x"},
            TypeError,
            "`client` must be a distributed.Client",
        ),
    ],
)
def test_input_validation(kwargs, error, message):
    args = {
        "files": ["a", "b", "c", "d"],
        "map_fn": count_words,
        "reduce_fn": sum_counts,
    }
    args |= kwargs
    files, map_fn, reduce_fn = (
        args.pop("files"),
        args.pop("map_fn"),
        args.pop("reduce_fn"),
    )
    with pytest.raises(error, match=re.escape(message)):
        run_mapreduce(files, map_fn, reduce_fn, **args)


def test_too_few_workers(client):
    with pytest.raises(ValueError, match=re.escape("at least K=5 workers, got 4")):
        run_mapreduce(["a"] * 5, count_words, sum_counts, K=5, r=1, client=client)
