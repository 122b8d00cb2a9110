import collections
import dataclasses
import functools
import math
import pickle
import re
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mapreduce import (
    DELIVERIES,
    FRAME_HEADER_BYTES,
    MapReduceOptions,
    MapReduceTaskError,
    NotEnoughMappersError,
    count_words,
    generate_records,
    hash_partition,
    model_prefers_coded,
    place_from_map,
    place_hypercube,
    place_k3,
    place_li,
    plan_shuffle,
    plan_traffic,
    predict_shuffle_seconds,
    run_mapreduce,
    run_terasort,
    split_input,
    sum_counts,
)
from mapreduce._network import frames_of
from theory import load_coded, load_uncoded

pytestmark = pytest.mark.runtime

TEXTS = [" ".join(f"w{(7 * f + 3 * i) % 23}" for i in range(40 + f)) for f in range(12)]


WAIT_ALL = {"options": MapReduceOptions(straggler_slack=math.inf)}  # every map
# one file per input: the tests that count bytes or tasks per input file
EACH_INPUT = MapReduceOptions(straggler_slack=math.inf, group_bytes=None)
WORDS = collections.Counter(" ".join(TEXTS).split())  # the word count of TEXTS


def _count_texts(client, **keywords):
    """The word count of TEXTS on K = 4 nodes (r = 2), with `keywords` added."""
    return run_mapreduce(
        TEXTS, count_words, sum_counts, K=4, r=2, client=client, **keywords
    )


@pytest.mark.parametrize("r", [1, 2, 3])
def test_word_count_equals_counter(client, r):
    result = run_mapreduce(
        TEXTS,
        count_words,
        sum_counts,
        K=4,
        r=r,
        coded=True,
        client=client,
        options=EACH_INPUT,
    )
    assert result.output == collections.Counter(" ".join(TEXTS).split())
    record = result.record
    assert record.load == load_coded(r, 4)
    assert record.unicast_load == load_uncoded(r, 4)
    assert record.wire_bytes > 0
    assert record.packet_bytes > 0
    assert record.tolerance == r - 1
    assert record.stragglers == record.lost_nodes == ()
    # the bytes sent per multicast are about the paper's share of all values
    # (12 files of similar values; grouped into 4, their sizes differ more)
    assert record.measured_load == pytest.approx(float(record.load), rel=0.25)


def test_default_shuffle_is_chosen_by_the_switched_network_model(client):
    # without multicast a coded packet crosses the network once per receiver: no
    # node downloads less than uncoded, so the model keeps the plain shuffle
    result = run_mapreduce(TEXTS, count_words, sum_counts, K=4, r=2, client=client)
    assert not result.record.is_coded
    assert result.output == collections.Counter(" ".join(TEXTS).split())


@given(st.integers(2, 7), st.data(), st.sampled_from(DELIVERIES))
def test_model_prefers_coded_only_when_its_time_is_strictly_less(K, data, delivery):
    placement = place_li(K, data.draw(st.integers(1, K)))
    coded, uncoded = (
        predict_shuffle_seconds(plan_shuffle(placement, coded=c), delivery=delivery)
        for c in (True, False)
    )
    assert model_prefers_coded(placement, delivery=delivery) == (
        coded < uncoded * (1 - 1e-9)
    )
    # on a switched network Li's coded shuffle downloads what the uncoded one does
    assert coded >= uncoded * (1 - 1e-9)


def test_coded_and_uncoded_runs_agree(client):
    coded = run_mapreduce(
        TEXTS, count_words, sum_counts, K=4, r=2, coded=True, client=client, **WAIT_ALL
    )
    uncoded = run_mapreduce(
        TEXTS, count_words, sum_counts, K=4, r=2, coded=False, client=client, **WAIT_ALL
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
        coded=True,
        client=client,
        **WAIT_ALL,
    )
    assert result.output == collections.Counter(" ".join(texts).split())
    if placement.r == placement.K:
        assert result.record.wire_bytes == 0
        assert result.record.packets == 0


@pytest.mark.parametrize("r", [1, 2])
def test_terasort_sorts(client, r):
    records = generate_records(600, rng=20261202 + r)
    result = run_terasort(records, K=4, r=r, client=client, **WAIT_ALL)
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
    time.sleep(5.0)
    return count_words(text)


def test_stage_past_the_timeout_raises_instead_of_hanging(client):
    started = time.perf_counter()
    with pytest.raises(MapReduceTaskError, match=r"map: \d+ of \d+ tasks did not"):
        run_mapreduce(
            ["a b", "c"],
            _slow_words,
            sum_counts,
            K=2,
            r=1,
            client=client,
            options=MapReduceOptions(timeout=0.2),
        )
    # Well before the 5 s maps end, with room for a busy machine.
    assert time.perf_counter() - started < 4.0


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
        (
            {"K": 3, "options": {"timeout": 1.0}},
            TypeError,
            "`options` must be a mapreduce.MapReduceOptions or None, got dict.",
        ),
        (
            {"K": 3, "timeout_s": 1.0},
            TypeError,
            "run_mapreduce() got unexpected keyword arguments ['timeout_s']",
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


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"delivery": "broadcast"},
            "`delivery` must be one of ('unicast', 'forward'), got 'broadcast'.",
        ),
        (
            {"output": "list"},
            "`output` must be one of ('dict', 'bag', 'dataframe'), got 'list'.",
        ),
        ({"straggler_slack": -1}, "`straggler_slack` must be >= 0"),
        ({"timeout": 0}, "`timeout` must be > 0"),
        ({"emulated_bandwidth": 0}, "`emulated_bandwidth` must be > 0"),
    ],
)
def test_bad_options_are_named(fields, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        MapReduceOptions(**fields)


def test_old_option_keywords_still_work_with_a_warning(client):
    with pytest.warns(DeprecationWarning, match=r"use `options=MapReduceOptions\("):
        result = run_mapreduce(
            TEXTS[:3], count_words, sum_counts, K=3, r=2, client=client, timeout=60.0
        )
    assert result.output == collections.Counter(" ".join(TEXTS[:3]).split())


def test_too_few_workers(client):
    with pytest.raises(ValueError, match=re.escape("at least K=5 workers, got 4")):
        run_mapreduce(["a"] * 5, count_words, sum_counts, K=5, r=1, client=client)


# -- honest bytes ---------------------------------------------------------------


def _value_lengths(texts, K, combine=False):
    """Byte length of every intermediate value, computed the way a node does."""
    lengths = {}
    for f, text in enumerate(texts):
        buckets = [([], []) for _ in range(K)]  # a reducer's keys and values
        for key, value in count_words(text):
            keys, values = buckets[hash_partition(key, K)]
            keys.append(key)
            values.append(value)
        lengths[f] = [len(pickle.dumps(b, protocol=5)) for b in buckets]
    return lengths


@pytest.mark.parametrize("delivery", ["unicast", "forward"])
@pytest.mark.parametrize("coded", [True, False])
def test_wire_bytes_per_node_equal_the_plans_frames(client, delivery, coded):
    result = _count_texts(
        client,
        coded=coded,
        options=dataclasses.replace(EACH_INPUT, delivery=delivery),
    )
    record = result.record
    plan = plan_shuffle(place_li(4, 2, N=len(TEXTS)), coded=coded)
    traffic = plan_traffic(plan, delivery, _value_lengths(TEXTS, 4))
    # every frame is one uint8 array: payloads plus 8 bytes per header entry
    segments = sum(len(p.segments) for p in plan.packets)
    frames = len(traffic.transmission_bytes)
    assert record.frame_header_bytes == FRAME_HEADER_BYTES * (frames + segments)
    assert sum(traffic.transmission_bytes) == (
        record.packet_bytes + record.frame_header_bytes
    )
    assert sum(record.upload_bytes) == sum(record.download_bytes)
    # what the plan's frames need, per node; Dask rarely fetches a frame twice
    # (a retried transfer), which the record counts as the wire carried it
    refetched = [
        d - e for d, e in zip(record.download_bytes, traffic.download, strict=True)
    ]
    assert min(refetched) >= 0
    assert sum(refetched) <= max(traffic.transmission_bytes)
    if delivery == "forward" and not any(refetched):  # only one holder per frame
        assert record.upload_bytes == traffic.upload
        assert record.origin_upload_bytes == traffic.origin_upload
    if delivery == "forward" and coded:  # each sender uploads a packet once
        unicast = plan_traffic(plan, "unicast", _value_lengths(TEXTS, 4))
        for forward, each in zip(
            record.origin_upload_bytes, unicast.origin_upload, strict=True
        ):
            assert forward * 2 == each


# -- stragglers and lost nodes ----------------------------------------------------


def _slow_at(address, seconds_per_word, text):
    """count_words, but slow (cooperatively, word by word) on one worker."""
    from distributed import get_worker

    slow = get_worker().address == address
    for pair in count_words(text):
        if slow:
            time.sleep(seconds_per_word)
        yield pair


def test_one_slow_mapper_is_cut_when_r_allows_it(client):
    slow = sorted(client.nthreads())[0]
    started = time.perf_counter()
    result = run_mapreduce(
        TEXTS,
        functools.partial(_slow_at, slow, 0.05),  # >= 2 s per file at node 0
        sum_counts,
        K=4,
        r=2,
        coded=True,
        client=client,
    )
    elapsed = time.perf_counter() - started
    assert result.output == collections.Counter(" ".join(TEXTS).split())
    record = result.record
    assert record.stragglers == (0,)
    assert record.cancelled_maps >= 1
    assert record.tolerance == 1
    assert elapsed < 6 * 2.0  # node 0 alone needs 6 files x >= 2 s


def test_a_slow_mapper_is_waited_for_when_r_is_1(client):
    slow = sorted(client.nthreads())[1]
    result = run_mapreduce(
        TEXTS[:4],
        functools.partial(_slow_at, slow, 0.005),
        sum_counts,
        K=4,
        r=1,
        client=client,
    )
    assert result.output == collections.Counter(" ".join(TEXTS[:4]).split())
    assert result.record.stragglers == ()
    assert result.record.tolerance == 0


def _die_at(address, text):
    """count_words, but the worker at `address` closes itself mid-map."""
    from distributed import get_worker

    worker = get_worker()
    if worker.address == address:
        worker.loop.add_callback(worker.close, executor_wait=False, nanny=False)
        time.sleep(3.0)
    return count_words(text)


def _close_self(dask_worker):
    dask_worker.loop.add_callback(dask_worker.close, executor_wait=False, nanny=False)


def _scatter_killing(client, address):
    """Client.scatter, but the worker at `address` dies as its files are sent."""
    original = client.scatter

    def scatter(data, workers=None, **kwargs):
        if workers == [address]:
            client.run(_close_self, workers=[address])
            deadline = time.perf_counter() + 10
            while address in client.nthreads() and time.perf_counter() < deadline:
                time.sleep(0.05)
        return original(data, workers=workers, **kwargs)

    return scatter


def _who_has_killing(client, address):
    """Client.who_has, but the worker at `address` dies once it has answered."""
    original = client.who_has

    def who_has(*args, **kwargs):
        held = original(*args, **kwargs)
        if address in client.nthreads():
            client.run(_close_self, workers=[address])
            deadline = time.perf_counter() + 10
            while address in client.nthreads() and time.perf_counter() < deadline:
                time.sleep(0.05)
        return held

    return who_has


def _dying_job(client, monkeypatch, when, texts):
    """A job's input and map function; node 2's worker dies `when`.

    "map": mid-map; "scatter": as its files are sent; "copy": the input is a
    dask.bag, and the worker dies as the bag's files are copied to their nodes
    (partitions held only there are computed again elsewhere).
    """
    address = sorted(client.nthreads())[2]
    if when == "map":
        return texts, functools.partial(_die_at, address)
    if when == "scatter":
        monkeypatch.setattr(client, "scatter", _scatter_killing(client, address))
        return texts, count_words
    db = pytest.importorskip("dask.bag")
    monkeypatch.setattr(client, "who_has", _who_has_killing(client, address))
    return db.from_sequence(texts, npartitions=len(texts)), _count_partition


DYING = pytest.mark.parametrize("when", ["map", "scatter", "copy"])


@DYING
def test_a_lost_mapper_within_tolerance_gives_the_full_output(
    fresh_client, monkeypatch, when
):
    result = run_mapreduce(
        *_dying_job(fresh_client, monkeypatch, when, TEXTS),
        sum_counts,
        K=4,
        r=2,
        coded=True,
        client=fresh_client,
        options=MapReduceOptions(timeout=30),
    )
    assert result.output == collections.Counter(" ".join(TEXTS).split())
    assert result.record.lost_nodes == (2,)


@DYING
def test_a_lost_mapper_beyond_tolerance_raises_before_the_timeout(
    fresh_client, monkeypatch, when
):
    started = time.perf_counter()
    with pytest.raises(NotEnoughMappersError, match=r"nodes \[2\] were lost; file"):
        run_mapreduce(
            *_dying_job(fresh_client, monkeypatch, when, TEXTS[:4]),
            sum_counts,
            K=4,
            r=1,
            client=fresh_client,
            options=MapReduceOptions(timeout=60),
        )
    assert time.perf_counter() - started < 30


# -- what users expect -------------------------------------------------------------


def test_combiner_gives_the_same_counts_with_fewer_bytes(client):
    plain = run_mapreduce(
        TEXTS, count_words, sum_counts, K=4, r=2, combine=False, client=client
    )
    combined = run_mapreduce(
        TEXTS, count_words, sum_counts, K=4, r=2, combine=True, client=client
    )
    assert combined.output == plain.output
    assert combined.record.intermediate_bytes < 0.7 * plain.record.intermediate_bytes


def test_a_folding_reduce_combines_by_default_and_an_unmarked_one_does_not(client):
    def total(key, counts):  # sum_counts without its fold_with mark
        return sum(counts)

    default = run_mapreduce(TEXTS, count_words, sum_counts, K=4, r=2, client=client)
    combined = run_mapreduce(
        TEXTS, count_words, total, K=4, r=2, combine=True, client=client
    )
    plain = run_mapreduce(TEXTS, count_words, total, K=4, r=2, client=client)
    expected = collections.Counter(" ".join(TEXTS).split())
    assert default.output == combined.output == plain.output == expected
    assert default.record.intermediate_bytes == combined.record.intermediate_bytes
    assert plain.record.intermediate_bytes > default.record.intermediate_bytes


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"combine": 1}, r"`combine` must be True, False or None \(combine when"),
        ({"coded": "yes"}, r"`coded` must be True, False or None \(the network"),
    ],
)
def test_flags_must_be_bools(client, keywords, message):
    with pytest.raises(TypeError, match=message):
        run_mapreduce(TEXTS, count_words, sum_counts, K=4, client=client, **keywords)


@pytest.mark.parametrize("name", ["speculate", "progress"])
@pytest.mark.parametrize("value", ["no", "False", 0, None])
def test_option_flags_must_be_bools(name, value):
    with pytest.raises(TypeError, match=rf"`{name}` must be True or False, got"):
        MapReduceOptions(**{name: value})
    assert getattr(MapReduceOptions(**{name: np.False_}), name) is False


def test_split_cuts_records_into_the_placements_files(client):
    words = " ".join(TEXTS).split()
    result = run_mapreduce(
        words, _count_records, _count_joined, K=4, r=2, split=True, client=client
    )
    assert result.record.N == 6
    assert result.output == {"words": len(words)}
    assert split_input(words, 6)[0] == words[: -(-len(words) // 6)]


def _count_records(records):
    yield "words", len(records)


def _count_joined(key, values):
    return sum(values)


def _reverse_partition(key, K):
    return K - 1 - hash_partition(key, K)


def test_any_hashable_keys_with_a_user_partitioner(client):
    files = [[(1, "a"), ((2, 3), "b")], [(frozenset({4}), "c"), (1, "d")]]
    result = run_mapreduce(
        files,
        iter,
        lambda key, values: "".join(values),
        K=3,
        r=2,
        partition=_reverse_partition,
        client=client,
    )
    assert result.output == {1: "ad", (2, 3): "b", frozenset({4}): "c"}


def test_dask_bag_in_and_out(client):
    db = pytest.importorskip("dask.bag")
    bag = db.from_sequence(TEXTS, npartitions=5)
    result = run_mapreduce(
        bag,
        _count_partition,
        sum_counts,
        K=4,
        r=2,
        client=client,
        options=MapReduceOptions(output="bag"),
    )
    assert result.record.N == 6  # 5 partitions -> one per pair of nodes
    assert dict(result.output.compute()) == collections.Counter(" ".join(TEXTS).split())
    assert result.output.npartitions == 4


def _count_partition(texts):
    return (pair for text in texts for pair in count_words(text))


def _count_frame(frame):
    return ((word, 1) for text in frame["text"] for word in text.split())


def test_dask_dataframe_in_and_out(client):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    frame = dd.from_pandas(pd.DataFrame({"text": TEXTS}), npartitions=3)
    result = run_mapreduce(
        frame,
        _count_frame,
        sum_counts,
        K=3,
        r=2,
        client=client,
        options=MapReduceOptions(output="dataframe"),
    )
    out = result.output.compute()
    assert list(out.columns) == ["key", "value"]
    assert dict(zip(out["key"], out["value"], strict=True)) == collections.Counter(
        " ".join(TEXTS).split()
    )


@pytest.mark.parametrize("kind", ["bag", "dataframe"])
@pytest.mark.parametrize(("npartitions", "N"), [(8, 6), (10, 12)])
def test_partitions_are_grouped_or_split_into_files(client, kind, npartitions, N):
    # K = 4, r = 2: files come in multiples of 6 pairs of nodes; 8 one-line
    # partitions become 6 runs of 1 or 2, concatenated on the node that maps
    # them (a list, or a pandas frame); 10 are split into 12 files
    texts = TEXTS[:npartitions]
    if kind == "bag":
        db = pytest.importorskip("dask.bag")
        data, map_fn = db.from_sequence(texts, partition_size=1), _count_partition
    else:
        dd = pytest.importorskip("dask.dataframe")
        pd = pytest.importorskip("pandas")
        frame = pd.DataFrame({"text": texts})
        data, map_fn = dd.from_pandas(frame, chunksize=1), _count_frame
    assert data.npartitions == npartitions
    for coded in (True, False):
        result = run_mapreduce(
            data, map_fn, sum_counts, K=4, r=2, coded=coded, client=client
        )
        assert result.record.N == N
        assert result.output == collections.Counter(" ".join(texts).split())


def test_progress_bars_go_to_stderr(client, capsys):
    run_mapreduce(
        TEXTS[:3],
        count_words,
        sum_counts,
        K=3,
        client=client,
        options=MapReduceOptions(progress=True),
    )
    err = capsys.readouterr().err
    assert "map" in err
    assert "reduce_fn" in err


def _out_of_range(key, K):
    return K


def test_partitioner_out_of_range_is_named(client):
    with pytest.raises(MapReduceTaskError, match="map_fn failed") as info:
        run_mapreduce(
            ["a b"],
            count_words,
            sum_counts,
            K=2,
            partition=_out_of_range,
            client=client,
        )
    assert "`partition` returned 2 for key 'a'" in str(info.value.__cause__)


def test_terasort_needs_bytes():
    with pytest.raises(
        TypeError, match=re.escape("must be (bytes, bytes) pairs, got (str")
    ):
        run_terasort([("k" * 10, b"v" * 90)], K=2)


# -- every output equals a plain single-process map/reduce -------------------------


def _plain_mapreduce(files, map_fn, reduce_fn):
    groups = collections.defaultdict(list)
    for file in files:
        for key, value in map_fn(file):
            groups[key].append(value)
    return {key: reduce_fn(key, values) for key, values in groups.items()}


def _pairs(file):
    return iter(file)


def _joined(key, values):
    return tuple(values)


@st.composite
def jobs(draw):
    K = draw(st.integers(1, 4))
    N = draw(st.integers(1, 6))
    keys = st.one_of(st.integers(-3, 3), st.text(max_size=2), st.tuples(st.booleans()))
    files = draw(
        st.lists(
            st.lists(st.tuples(keys, st.integers()), max_size=6),
            min_size=N,
            max_size=N,
        )
    )
    nodes = st.sets(st.integers(0, K - 1), min_size=1, max_size=K)
    storers = draw(st.lists(nodes, min_size=N, max_size=N))
    return files, place_from_map(storers, K)


@settings(max_examples=12)
@given(
    jobs(),
    st.booleans(),
    st.sampled_from(["unicast", "forward"]),
    st.booleans(),
    st.sampled_from([None, 1e6]),
)
def test_output_equals_a_single_process_run(
    client, job, coded, delivery, combine, bandwidth
):
    files, placement = job
    reduce_fn = _sum_values if combine else _joined
    result = run_mapreduce(
        files,
        _pairs,
        reduce_fn,
        K=placement.K,
        placement=placement,
        coded=coded,
        combine=combine,
        client=client,
        options=MapReduceOptions(delivery=delivery, emulated_bandwidth=bandwidth),
    )
    assert result.output == _plain_mapreduce(files, _pairs, reduce_fn)
    assert result.record.emulated_bandwidth == bandwidth


def _sum_values(key, values):
    return sum(values)


def _pairs_slow_at(address, file):
    from distributed import get_worker

    slow = get_worker().address == address
    for pair in file:
        if slow:
            time.sleep(0.05)
        yield pair


@st.composite
def tolerant_jobs(draw):
    K = draw(st.integers(2, 4))
    files, _ = draw(jobs())
    nodes = st.sets(st.integers(0, K - 1), min_size=2, max_size=K)
    storers = draw(st.lists(nodes, min_size=len(files), max_size=len(files)))
    return files, place_from_map(storers, K), draw(st.integers(0, K - 1))


@settings(max_examples=3)
@given(tolerant_jobs(), st.booleans())
def test_output_with_a_slow_mapper_within_tolerance(client, job, coded):
    files, placement, slow = job
    address = sorted(client.nthreads())[slow]
    result = run_mapreduce(
        files,
        functools.partial(_pairs_slow_at, address),
        _joined,
        K=placement.K,
        placement=placement,
        coded=coded,
        client=client,
    )
    assert placement.tolerance >= 1
    assert result.output == _plain_mapreduce(files, _pairs, _joined)
    assert set(result.record.stragglers) <= {slow}


# -- the task graph ------------------------------------------------------------


@pytest.mark.parametrize(("r", "coded"), [(1, False), (2, True)])
def test_tasks_are_a_map_per_copy_a_pack_per_sender_a_bundle_per_pair_a_reduce_each(
    client, r, coded
):
    from distributed import get_task_stream

    with get_task_stream(client) as stream:
        result = run_mapreduce(
            TEXTS,
            count_words,
            sum_counts,
            K=4,
            r=r,
            coded=coded,
            client=client,
            **WAIT_ALL,
        )
    kinds = collections.Counter(
        str(task["key"]).split("-")[2]
        for task in stream.data
        if str(task["key"]).startswith("mr-")
    )
    # 12 small inputs grouped into one file per batch of the placement
    assert math.comb(4, r) == result.record.N
    assert sum(result.record.inputs_per_file) == len(TEXTS)
    placement = place_li(4, r, N=result.record.N)
    frames = frames_of(plan_shuffle(placement, coded=coded))
    pairs = {(f.sender, k) for f in frames for k in f.receivers}
    senders = {f.sender for f in frames}
    assert kinds == {
        "map": placement.N * r,
        "pack": len(senders),
        "bundle": len(pairs),
        "reduce": 4,
    }
    assert result.output == collections.Counter(" ".join(TEXTS).split())


# -- the reducer node of each key, found once per node and job ---------------


_PARTITIONED = collections.Counter()  # the workers are threads of this process


def _counted_partition(key, K):
    _PARTITIONED[key] += 1
    return hash_partition(key, K)


def test_partition_runs_once_per_distinct_key_of_each_map(client):
    _PARTITIONED.clear()
    result = _count_texts(client, partition=_counted_partition)
    placement = place_li(4, 2, N=result.record.N)
    expected = collections.Counter()
    for k in range(4):  # the distinct keys of each file, once per copy mapped
        for f in placement.files_of(k):
            expected.update(set(TEXTS[f].split()))
    assert result.output == WORDS
    assert expected == _PARTITIONED


@pytest.mark.parametrize("coded", [True, False])
def test_a_shuffle_after_the_map_stage_gives_what_a_speculative_one_does(client, coded):
    runs = [
        _count_texts(client, coded=coded, options=MapReduceOptions(speculate=speculate))
        for speculate in (True, False)
    ]
    assert runs[0].output == runs[1].output == WORDS
    assert runs[0].record.upload_bytes == runs[1].record.upload_bytes
