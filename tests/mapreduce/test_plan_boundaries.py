"""The verifier's and planner's error branches, at the edges of their ranges.

Each case changes one field of a valid plan to the first value outside its range
(file N, receiver K, index count, ...) and expects the verifier's message: an
off-by-one in a bounds check would crash with an IndexError, or accept the plan.
"""

import re

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from mapreduce import (
    Packet,
    PlanVerificationError,
    Segment,
    ShufflePlan,
    place_from_map,
    place_li,
    plan_shuffle,
    verify_plan,
)
from mapreduce._coding import (
    build_packet,
    decode_received,
    decode_segment,
    encode_packet,
    join_segments,
    packet_payload_bytes,
    split_value,
)

LI32 = place_li(3, 2)  # K = 3, N = 3 files: 0:{0,1}, 1:{0,2}, 2:{1,2}


def _plan(*packets, placement=LI32):
    return ShufflePlan(placement=placement, packets=packets, is_coded=True)


def _single(sender, **segment):
    return Packet(sender=sender, segments=(Segment(**segment),))


@pytest.mark.parametrize(
    ("segment", "where"),
    [
        ({"receiver": 2, "file": 3}, "Segment(receiver=2, file=3, index=0, count=1)"),
        ({"receiver": 2, "file": -1}, "Segment(receiver=2, file=-1, index=0, count=1)"),
        ({"receiver": 3, "file": 0}, "Segment(receiver=3, file=0, index=0, count=1)"),
        ({"receiver": -1, "file": 0}, "Segment(receiver=-1, file=0, index=0, count=1)"),
    ],
    ids=["file-N", "file-minus-1", "receiver-K", "receiver-minus-1"],
)
def test_a_segment_outside_the_placement_is_refused(segment, where):
    plan = _plan(_single(0, **segment))
    message = f"packet 0 (sender 0): {where} is outside the placement."
    with pytest.raises(PlanVerificationError, match=f"^{re.escape(message)}$"):
        verify_plan(plan)


@pytest.mark.parametrize(("index", "count"), [(-1, 2), (2, 2), (0, 0)])
def test_a_segment_index_outside_its_count_is_refused(index, count):
    plan = _plan(_single(0, receiver=2, file=0, index=index, count=count))
    with pytest.raises(PlanVerificationError, match=r"has index outside count\.$"):
        verify_plan(plan)


def test_the_last_file_and_node_are_inside_the_placement():
    plan = verify_plan(plan_shuffle(LI32, coded=False))
    segments = {(s.receiver, s.file) for p in plan.packets for s in p.segments}
    assert segments == {(0, 2), (1, 1), (2, 0)}  # file N - 1 and node K - 1 included


def test_a_value_outside_the_demands_is_refused():
    # with explicit demands a lacking value may be unneeded (any N coded files serve)
    placement = place_from_map([{0}, {1}], 2)
    packets = (_single(1, receiver=0, file=1), _single(0, receiver=1, file=0))
    plan = ShufflePlan(
        placement=placement,
        packets=packets,
        is_coded=False,
        demands=frozenset({(0, 1)}),
    )
    message = (
        "value (receiver 1, file 0) is sent but not needed: the receiver stores the "
        "file or is not a reducer."
    )
    with pytest.raises(PlanVerificationError, match=f"^{re.escape(message)}$"):
        verify_plan(plan)


def test_a_value_for_a_node_that_is_not_a_reducer_is_refused():
    plan = plan_shuffle(LI32, reducers=[0, 1])
    assert verify_plan(plan).reducers == (0, 1)
    extra = ShufflePlan(
        placement=LI32,
        packets=(*plan.packets, _single(0, receiver=2, file=0)),
        is_coded=True,
        reducers=(0, 1),
    )
    with pytest.raises(PlanVerificationError, match=r"\(receiver 2, file 0\) is sent"):
        verify_plan(extra)


def test_missing_values_are_counted_and_the_smallest_named():
    plan = _plan(placement=place_from_map([{0}, {1}], 2))
    with pytest.raises(
        PlanVerificationError,
        match=r"^2 missing values are never sent, e\.g\. "
        r"\(receiver, file\) = \(0, 1\)\.$",
    ):
        verify_plan(plan)


def test_explicit_demands_are_what_the_verifier_checks():
    placement = place_from_map([{0}, {1}], 2)
    packet = _single(1, receiver=0, file=1)
    plan = ShufflePlan(
        placement=placement,
        packets=(packet,),
        is_coded=False,
        demands=frozenset({(0, 1)}),
    )
    assert verify_plan(plan) is plan
    with pytest.raises(PlanVerificationError, match=r"\(receiver, file\) = \(1, 0\)"):
        verify_plan(_plan(packet, placement=placement))


@pytest.mark.parametrize("reducers", [[3], [-1], [0, 3]])
def test_reducers_outside_the_nodes_are_refused(reducers):
    chosen = tuple(sorted(set(reducers)))
    message = f"`reducers` must be nodes in range(K), K=3, got {chosen}."
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        plan_shuffle(LI32, reducers=reducers)


def test_the_last_node_is_a_valid_reducer():
    plan = verify_plan(plan_shuffle(LI32, reducers=[2]))
    assert {s.receiver for p in plan.packets for s in p.segments} == {2}
    assert plan.reducers == (2,)


def test_decoding_a_segment_longer_than_its_payload_is_refused():
    parts = split_value(b"abcdef", 2)
    assert [bytes(part) for part in parts] == [b"abc", b"def"]
    lengths, payload = encode_packet(parts)
    assert lengths == (3, 3)
    assert bytes(payload) == bytes(a ^ b for a, b in zip(b"abc", b"def", strict=True))
    assert bytes(decode_segment(payload, [parts[1]], 3)) == b"abc"  # at the limit
    message = (
        "a segment is longer than the payload (3 bytes); the packet and the side "
        "information disagree."
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        decode_segment(payload, [parts[1]], 4)
    with pytest.raises(
        ValueError, match=re.escape("longer than the payload (3 bytes)")
    ):
        decode_segment(payload, [np.zeros(4, dtype=np.uint8)], 3)


def test_segments_join_back_into_the_value():
    assert join_segments(split_value(b"abcdefg", 3)) == b"abcdefg"
    assert join_segments([[104, 105], np.array([33], dtype=np.int64)]) == b"hi!"
    assert join_segments([]) == b""


def test_uncoded_uploads_are_rebalanced_after_the_greedy_pass():
    # greedy least-busy first sends all three values from node 1 (ties go to the
    # lower node); the rebalancing moves file 0's value to node 2, its other storer
    placement = place_from_map([{1, 2}, {1}], 3)
    plan = verify_plan(plan_shuffle(placement, coded=False))
    sent = [
        (p.sender, p.segments[0].receiver, p.segments[0].file) for p in plan.packets
    ]
    assert sent == [(2, 0, 0), (1, 0, 1), (1, 2, 1)]


@st.composite
def _placements(draw):
    K, N = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    nodes = st.sets(st.integers(0, K - 1), min_size=1, max_size=K)
    return place_from_map(draw(st.lists(nodes, min_size=N, max_size=N)), K)


@given(_placements())
@example(place_from_map([{1, 2}, {0, 1}, {0}], 3))  # one rebalancing pass is not enough
def test_no_uncoded_value_can_move_to_a_less_busy_storer(placement):
    plan = verify_plan(plan_shuffle(placement, coded=False))
    sent = [0] * placement.K
    for packet in plan.packets:
        sent[packet.sender] += 1
    for packet in plan.packets:
        for t in placement.storers[packet.segments[0].file]:
            assert sent[packet.sender] <= sent[t] + 1


def test_payload_bytes_of_unequal_segments():
    # 7 bytes in 3 segments: 3, 2, 2 (numpy.array_split)
    lengths = {0: [7, 7]}
    sizes = [len(part) for part in split_value(b"abcdefg", 3)]
    assert sizes == [3, 2, 2]
    for index, size in enumerate(sizes):
        packet = _single(1, receiver=0, file=0, index=index, count=3)
        assert packet_payload_bytes(packet, lengths) == size
    empty = Packet(sender=0, segments=())
    assert packet_payload_bytes(empty, lengths) == 0
    lengths_of_empty, payload = encode_packet([])
    assert lengths_of_empty == ()
    assert payload.shape == (0,)


def test_plans_say_whether_they_are_coded():
    assert plan_shuffle(LI32).is_coded is True
    assert plan_shuffle(LI32, coded=False).is_coded is False


def test_every_node_decodes_its_values_from_a_coded_plan():
    # K = 3, r = 2: each packet XORs two half-values of unequal lengths
    values = {f: [bytes([65 + f]) * (3 + f + k) for k in range(3)] for f in range(3)}
    plan = verify_plan(plan_shuffle(LI32))
    assert all(len(p.segments) == 2 for p in plan.packets)

    def maps_of(node):
        return {f: values[f] for f in LI32.files_of(node)}

    sent = [(p, build_packet(p, maps_of(p.sender))) for p in plan.packets]
    for k in range(3):
        inbox = [(p, encoded) for p, encoded in sent if k in p.receivers]
        lacking = [f for f in range(3) if k not in LI32.storers[f]]
        assert decode_received(k, inbox, maps_of(k)) == {
            f: values[f][k] for f in lacking
        }
