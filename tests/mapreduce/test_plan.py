import itertools
import re
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mapreduce import (
    Packet,
    PlanVerificationError,
    Segment,
    ShufflePlan,
    place_from_map,
    place_hypercube,
    place_k3,
    place_li,
    plan_shuffle,
    verify_plan,
)
from mapreduce._coding import build_packet, decode_received, packet_payload_bytes
from theory import (
    load_coded,
    load_converse,
    load_hypercube,
    load_uncoded,
    solve_k3_placement,
)

LI_CASES = [(K, r) for K in range(3, 9) for r in range(1, K)]


@pytest.mark.parametrize(("K", "r"), LI_CASES, ids=[f"K{K}-r{r}" for K, r in LI_CASES])
def test_li_plan_loads_are_exact(K, r):
    placement = place_li(K, r)
    coded = verify_plan(plan_shuffle(placement))
    uncoded = verify_plan(plan_shuffle(placement, coded=False))
    assert coded.load == load_coded(r, K) == Fraction(K - r, r * K)
    assert uncoded.load == load_uncoded(r, K)
    # without multicast a coded packet crosses the network once per receiver
    assert coded.unicast_load == uncoded.unicast_load == load_uncoded(r, K)
    assert all(len(p.segments) == (r if r > 1 else 1) for p in coded.packets)


def test_li_load_holds_for_several_files_per_batch():
    for K, r in [(4, 2), (5, 3)]:
        assert plan_shuffle(place_li(K, r, N=3 * 10 if K == 5 else 12)).load == (
            load_coded(r, K)
        )


@pytest.mark.parametrize(
    ("M", "values"),
    [((2, 4, 6), 24), ((3, 6, 9), 15), ((4, 8, 12), 8), ((0, 12, 12), 12)],
)
def test_k3_plan_matches_lp_check_values(M, values):
    plan = verify_plan(plan_shuffle(place_k3(M, 12)))
    assert plan.load_values == values
    assert plan.load == Fraction(values, 36)


def test_k3_plan_matches_lp_on_grid():
    for N in range(1, 5):
        for M in itertools.product(range(N + 1), repeat=3):
            if sum(M) < N:
                continue
            plan = verify_plan(plan_shuffle(place_k3(M, N)))
            assert plan.load_values == solve_k3_placement(M, N).load_values, (M, N)


def _k3_placement(a, b, c):
    pairs = ({0, 1}, {0, 2}, {1, 2})
    storers = [{k} for k in range(3) for _ in range(a[k])]
    storers += [pairs[p] for p in range(3) for _ in range(b[p])]
    storers += [{0, 1, 2}] * c
    return place_from_map(storers, 3)


def test_planner_on_any_k3_placement_equals_lp_objective():
    for a in itertools.product(range(3), repeat=3):
        for b in itertools.product(range(4), repeat=3):
            if sum(a) + sum(b) == 0:
                continue
            plan = verify_plan(plan_shuffle(_k3_placement(a, b, 1)))
            expected = 2 * sum(a) + max(Fraction(sum(b), 2), Fraction(max(b)))
            assert plan.load_values == expected, (a, b)


@pytest.mark.parametrize("sizes", [(2, 2), (3, 3), (2, 3), (2, 2, 2), (2, 3, 4)])
def test_hypercube_plan_verifies_and_beats_uncoded(sizes):
    placement = place_hypercube(sizes)
    coded = verify_plan(plan_shuffle(placement))
    uncoded = verify_plan(plan_shuffle(placement, coded=False))
    K, r = placement.K, len(sizes)
    assert placement.r == r
    assert uncoded.load == Fraction(sum(sizes) - r, K)  # each node lacks N (1 - 1/k_d)
    assert coded.load <= uncoded.load / 2
    assert coded.load >= load_coded(r, K)


def test_hypercube_with_two_classes_reaches_li():
    for k in (2, 3, 4):
        assert plan_shuffle(place_hypercube((k, k))).load == load_coded(2, 2 * k)


HYPERCUBES = [(k,) * r for r in range(2, 6) for k in range(2, 5) if k**r <= 256]


@pytest.mark.parametrize("sizes", HYPERCUBES, ids=str)
def test_hypercube_load_equals_woolsey_formula(sizes):
    r, K = len(sizes), sum(sizes)
    plan = verify_plan(plan_shuffle(place_hypercube(sizes)))
    assert plan.load == load_hypercube(sizes)
    if r >= 3:  # the design's groups: (1/(r - 1))(1 - r/K)
        assert plan.load == Fraction(1, r - 1) * (1 - Fraction(r, K))
    else:  # r = 2: the design's pairs send uncoded; Li's grouping halves it
        assert plan.load == Fraction(1, 2) * (1 - Fraction(r, K)) == load_coded(2, K)
    assert plan.load >= load_converse({r: plan.placement.N}, K)


@pytest.mark.parametrize(
    "sizes", [(2, 3), (2, 2, 3), (2, 3, 4), (2, 2, 5), (1, 3, 3), (2, 2, 2, 3)]
)
def test_hyper_rectangle_load_equals_derived_formula(sizes):
    plan = verify_plan(plan_shuffle(place_hypercube(sizes)))
    assert plan.load == load_hypercube(sizes)
    # no worse than either grouping alone
    li_only = plan_shuffle(place_from_map(plan.placement.storers, sum(sizes)))
    assert plan.load <= li_only.load


@st.composite
def placements(draw, max_K=7, max_N=8):
    K = draw(st.integers(1, max_K))
    N = draw(st.integers(1, max_N))
    nodes = st.sets(st.integers(0, K - 1), min_size=1, max_size=K)
    return place_from_map(draw(st.lists(nodes, min_size=N, max_size=N)), K)


@given(placements())
def test_random_placements_pass_the_verifier(placement):
    coded = verify_plan(plan_shuffle(placement))
    uncoded = verify_plan(plan_shuffle(placement, coded=False))
    demands = sum(placement.K - len(s) for s in placement.storers)
    assert uncoded.load_values == demands
    assert coded.load <= uncoded.load
    assert coded.unicast_load >= uncoded.unicast_load


@given(placements(max_K=6, max_N=6), st.data())
def test_random_segments_xor_decode_to_exact_bytes(placement, data):
    K, N = placement.K, placement.N
    values = data.draw(
        st.lists(
            st.lists(st.binary(max_size=24), min_size=K, max_size=K),
            min_size=N,
            max_size=N,
        ),
        label="values",
    )
    plan = plan_shuffle(placement, coded=data.draw(st.booleans(), label="coded"))

    def maps_of(k):  # what node k's own maps produced
        return {f: values[f] for f in placement.files_of(k)}

    sent = [(p, build_packet(p, maps_of(p.sender))) for p in plan.packets]
    lengths = {f: [len(v) for v in values[f]] for f in range(N)}
    for packet, (_, payload) in sent:
        assert packet_payload_bytes(packet, lengths) == payload.size
    for k in range(K):
        inbox = [(p, e) for p, e in sent if k in p.receivers]
        decoded = decode_received(k, inbox, maps_of(k))
        lacking = [f for f in range(N) if k not in placement.storers[f]]
        assert decoded == {f: values[f][k] for f in lacking}


def _plan(placement, *packets):
    return ShufflePlan(placement=placement, packets=packets, is_coded=True)


LI32 = place_li(3, 2)  # files 0:{0,1}, 1:{0,2}, 2:{1,2}
GOOD = plan_shuffle(LI32).packets
UNCODED = plan_shuffle(LI32, coded=False).packets


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        (_plan(LI32, *UNCODED[1:]), "missing values are never sent"),
        (_plan(LI32, *GOOD, GOOD[0]), "is covered twice at"),
        (
            _plan(LI32, Packet(sender=2, segments=(Segment(receiver=2, file=0),))),
            "packet 0 (sender 2): the sender does not store file 0.",
        ),
        (
            _plan(
                LI32,
                Packet(
                    sender=0,
                    segments=(Segment(receiver=2, file=0), Segment(receiver=1, file=0)),
                ),
            ),
            "packet 0 (sender 0): receiver 2 cannot decode it",
        ),
        (
            _plan(LI32, Packet(sender=0, segments=(Segment(receiver=1, file=0),))),
            "receiver 1 cannot decode it",
        ),
        (
            _plan(
                LI32,
                *GOOD,
                Packet(sender=0, segments=()),
            ),
            "carries no segment.",
        ),
        (
            _plan(
                LI32,
                Packet(
                    sender=0, segments=(Segment(receiver=2, file=0, index=0, count=2),)
                ),
                *GOOD,
            ),
            "is covered twice at 0",
        ),
        (
            _plan(
                LI32,
                Packet(
                    sender=0, segments=(Segment(receiver=2, file=0, index=2, count=2),)
                ),
            ),
            "has index outside count",
        ),
        (
            _plan(
                LI32,
                Packet(
                    sender=0,
                    segments=(Segment(receiver=2, file=0), Segment(receiver=2, file=1)),
                ),
            ),
            "has two segments for one receiver.",
        ),
    ],
)
def test_verifier_rejects_broken_plans(plan, message):
    with pytest.raises(PlanVerificationError, match=re.escape(message)):
        verify_plan(plan)


def test_verifier_reports_gaps():
    half = Packet(sender=0, segments=(Segment(receiver=2, file=0, index=0, count=2),))
    with pytest.raises(PlanVerificationError, match="covered up to 1/2, not 1"):
        verify_plan(_plan(place_from_map([{0, 1}], 3), half))
    quarter = Packet(
        sender=1, segments=(Segment(receiver=2, file=0, index=3, count=4),)
    )
    with pytest.raises(PlanVerificationError, match="covered with a gap at 3/4"):
        verify_plan(_plan(place_from_map([{0, 1}], 3), half, quarter))


def test_input_validation():
    with pytest.raises(
        TypeError, match=re.escape("`placement` must be a Placement, got dict.")
    ):
        plan_shuffle({})
