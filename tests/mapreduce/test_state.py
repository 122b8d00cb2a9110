"""The job state without a cluster: events in, actions out (mapreduce._state)."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mapreduce import (
    MapReduceTaskError,
    NotEnoughMappersError,
    place_li,
    plan_shuffle,
    verify_plan,
)
from mapreduce._state import (
    CancelMaps,
    CancelShuffle,
    Fail,
    Finish,
    JobState,
    MapDone,
    MapLost,
    NodeMapped,
    NodesLost,
    Quorum,
    QuorumState,
    ReduceDone,
    SubmitShuffle,
    TaskFailed,
    Tick,
    follow_data,
)


def _state(K=4, r=2, N=None, slack=0.5, timeout=60.0, coded=True, speculate=False):
    plan = verify_plan(plan_shuffle(place_li(K, r, N=N), coded=coded))
    return JobState(plan, slack=slack, timeout=timeout, start=0.0, speculate=speculate)


def _maps(state):
    placement = state.placement
    return [(f, k) for k in range(placement.K) for f in placement.files_of(k)]


def _reduce_all(state, now):
    actions = []
    for k in range(state.placement.K):
        actions += state.handle(ReduceDone(reducer=k, now=now))
    return actions


@given(
    K=st.integers(2, 5),
    data=st.data(),
)
def test_any_order_of_maps_submits_the_planned_shuffle_once(K, data):
    r = data.draw(st.integers(1, K), label="r")
    state = _state(K, r, slack=math.inf)
    actions = state.begin()
    maps = data.draw(st.permutations(_maps(state)), label="order")
    for i, (f, k) in enumerate(maps):
        actions += state.handle(MapDone(file=f, node=k, now=float(i)))
    shuffles = [a for a in actions if isinstance(a, SubmitShuffle)]
    assert len(shuffles) == 1
    assert shuffles[0].plan is state.plan
    assert shuffles[0].hosts == tuple(range(K))
    assert state.map_end == len(maps) - 1
    assert _reduce_all(state, float(len(maps))) == [Finish()]
    assert state.handle(MapDone(file=0, node=0, now=float(len(maps)))) == []


def test_with_no_tolerance_the_shuffle_goes_with_the_maps():
    state = _state(K=3, r=1)
    assert state.is_eager
    (action,) = state.begin()
    assert isinstance(action, SubmitShuffle)
    assert action.plan is state.plan
    for f, k in _maps(state):
        assert state.handle(MapDone(file=f, node=k, now=1.0)) == []
    assert _reduce_all(state, 2.0) == [Finish()]


def test_a_straggler_is_cut_after_the_slack_and_the_shuffle_is_replanned():
    state = _state(K=4, r=2, slack=0.5)
    assert state.begin() == []
    for f, k in _maps(state):
        if k != 0:
            assert state.handle(MapDone(file=f, node=k, now=2.0)) == []
    assert state.quorum_at == 2.0
    assert state.handle(Tick(now=2.9)) == []  # limit: 2 + 0.5 * 2 = 3 s
    cancel, shuffle = state.handle(Tick(now=3.1))
    assert isinstance(cancel, CancelMaps)
    assert cancel.nodes == (0,)
    assert sorted(cancel.maps) == sorted(m for m in _maps(state) if m[1] == 0)
    assert isinstance(shuffle, SubmitShuffle)
    assert all(0 not in nodes for nodes in shuffle.plan.placement.storers)
    assert shuffle.plan.receivers == (0, 1, 2, 3)
    assert state.stragglers == (0,)
    assert state.cancelled_maps == 3


def test_a_node_that_keeps_its_pace_is_waited_for():
    state = _state(K=4, r=2, slack=0.5)
    state.begin()
    for f, k in _maps(state):
        if k != 0:
            state.handle(MapDone(file=f, node=k, now=2.0))
    first = state.placement.files_of(0)[0]
    # node 0 mapped 1 of 3 files in 1 s: predicted done at 1.5 s <= the 3 s limit
    assert state.handle(MapDone(file=first, node=0, now=1.0)) == []


def test_a_lost_node_within_tolerance_moves_its_reducer():
    state = _state(K=4, r=2)
    state.begin()
    assert state.handle(NodesLost(nodes=frozenset({1}), now=1.0)) == []
    actions = []
    for f, k in _maps(state):
        if k != 1:
            actions += state.handle(MapDone(file=f, node=k, now=2.0))
    (shuffle,) = actions
    assert shuffle.hosts[1] != 1
    assert shuffle.hosts[0] == 0
    assert shuffle.plan.receivers == (0, 2, 3)
    assert state.lost == {1}


def test_a_loss_beyond_tolerance_fails_at_once():
    state = _state(K=4, r=2)
    state.begin()
    state.handle(MapLost(file=0, node=0, now=1.0))
    (fail,) = state.handle(NodesLost(nodes=frozenset({1}), now=1.0))
    assert isinstance(fail, Fail)
    assert isinstance(fail.error, NotEnoughMappersError)
    assert "nodes [0, 1] were lost; file 0" in str(fail.error)


def test_a_loss_after_the_shuffle_was_submitted_fails():
    state = _state(K=4, r=2, slack=math.inf)
    state.begin()
    for f, k in _maps(state):
        state.handle(MapDone(file=f, node=k, now=1.0))
    (fail,) = state.handle(NodesLost(nodes=frozenset({2}), now=2.0))
    assert "were lost after the shuffle was submitted" in str(fail.error)


@pytest.mark.parametrize(("r", "stage"), [(1, "map: 3 of 3"), (2, "map: 6 of 6")])
def test_the_timeout_fails_the_stage(r, stage):
    state = _state(K=3, r=r, timeout=5.0)
    state.begin()
    assert state.handle(Tick(now=4.9)) == []
    (fail,) = state.handle(Tick(now=5.0))
    assert str(fail.error).startswith(stage)


def test_the_reduce_stage_has_its_own_timeout():
    state = _state(K=2, r=2, slack=math.inf, timeout=5.0)
    state.begin()
    for f, k in _maps(state):
        state.handle(MapDone(file=f, node=k, now=4.0))
    state.handle(ReduceDone(reducer=0, now=8.0))
    (fail,) = state.handle(Tick(now=9.0))
    assert str(fail.error).startswith("reduce_fn: 1 of 2 tasks did not finish")


def test_a_task_error_is_chained():
    state = _state()
    state.begin()
    cause = ZeroDivisionError("boom")
    (fail,) = state.handle(
        TaskFailed(stage="map_fn", where="on file 1 at node 2", error=cause, now=1.0)
    )
    assert isinstance(fail.error, MapReduceTaskError)
    assert str(fail.error).startswith("map_fn failed on file 1 at node 2")
    assert fail.error.__cause__ is cause
    assert state.handle(Tick(now=2.0)) == []


@given(K=st.integers(1, 6), N=st.integers(1, 4), data=st.data(), coded=st.booleans())
def test_follow_data_moves_files_to_their_holders(K, N, data, coded):
    plan = verify_plan(plan_shuffle(place_li(K, 1, N=K * N), coded=coded))
    holders = data.draw(
        st.lists(st.none() | st.integers(0, K - 1), min_size=K * N, max_size=K * N)
    )
    moved = follow_data(plan, holders)
    for f, k in enumerate(holders):
        expected = plan.placement.storers[f] if k is None else frozenset({k})
        assert moved.placement.storers[f] == expected
    assert moved.placement.K == K


def test_follow_data_keeps_a_replicated_placement():
    plan = plan_shuffle(place_li(3, 2))
    assert follow_data(plan, [0, 0, 0]) is plan


# ---- QuorumState: run_coded_maps's map stage (the first q of K nodes win)


@given(
    K=st.integers(1, 7),
    data=st.data(),
)
def test_the_first_q_nodes_to_map_are_the_finishers(K, data):
    q = data.draw(st.integers(1, K))
    order = data.draw(st.permutations(range(K)))
    lost = data.draw(st.sets(st.sampled_from(order), max_size=K - q))
    state = QuorumState(K, q, timeout=60.0, start=0.0)
    assert state.begin() == []
    actions, events = [], [NodesLost(nodes=frozenset({k}), now=1.0) for k in lost]
    events += [NodeMapped(node=k, now=2.0 + i) for i, k in enumerate(order)]
    for event in events:
        actions += state.handle(event)
    winners = [k for k in order if k not in lost][:q]
    stragglers = tuple(sorted(set(range(K)) - set(winners) - lost))
    assert actions == [
        CancelMaps(maps=(), nodes=stragglers),
        Quorum(finishers=tuple(sorted(winners))),
    ]
    assert state.handle(NodeMapped(node=order[-1], now=99.0)) == []  # late: ignored


def test_losing_more_than_k_minus_q_nodes_fails_before_the_timeout():
    state = QuorumState(5, 3, timeout=60.0, start=0.0)
    assert state.handle(NodesLost(nodes=frozenset({0, 1}), now=1.0)) == []
    (action,) = state.handle(NodesLost(nodes=frozenset({4}), now=2.0))
    assert isinstance(action, Fail)
    assert isinstance(action.error, NotEnoughMappersError)
    assert "q=3 of K=5" in str(action.error)


def test_a_finished_node_lost_later_still_counts():
    state = QuorumState(3, 2, timeout=60.0, start=0.0)
    state.handle(NodeMapped(node=1, now=1.0))
    assert state.handle(NodesLost(nodes=frozenset({1, 2}), now=2.0)) == []
    actions = state.handle(NodeMapped(node=0, now=3.0))
    assert actions[-1] == Quorum(finishers=(0, 1))


def test_the_quorum_stage_times_out_and_a_task_error_is_chained():
    state = QuorumState(4, 2, timeout=5.0, start=0.0)
    state.handle(NodeMapped(node=3, now=1.0))
    assert state.handle(Tick(now=4.9)) == []
    (action,) = state.handle(Tick(now=5.0))
    assert isinstance(action.error, MapReduceTaskError)
    assert "map: 3 of 4 tasks did not finish" in str(action.error)
    failing = QuorumState(4, 2, timeout=5.0, start=0.0)
    cause = ZeroDivisionError("boom")
    (action,) = failing.handle(
        TaskFailed(stage="map_fn", where="at 0", error=cause, now=1)
    )
    assert action.error.__cause__ is cause
    assert failing.handle(NodeMapped(node=0, now=2.0)) == []


# -- the speculative shuffle (r >= 2) ----------------------------------------


def _speculating(K=4, r=2, slack=0.5):
    state = _state(K=K, r=r, slack=slack, speculate=True)
    (shuffle,) = state.begin()
    assert shuffle == SubmitShuffle(
        plan=state.plan, hosts=tuple(range(K)), speculative=True
    )
    return state, shuffle


@given(K=st.integers(2, 5), data=st.data())
def test_a_speculative_shuffle_is_kept_when_every_map_finishes(K, data):
    r = data.draw(st.integers(2, K), label="r")
    state, speculative = _speculating(K, r, slack=math.inf)
    for f, k in data.draw(st.permutations(_maps(state)), label="order"):
        assert state.handle(MapDone(file=f, node=k, now=1.0)) == []
    assert state.shuffle is speculative
    assert state.map_end == 1.0
    assert _reduce_all(state, 2.0) == [Finish()]


def test_a_cut_straggler_cancels_the_speculative_shuffle_before_the_replanned_one():
    state, _ = _speculating(slack=0.5)
    for f, k in _maps(state):
        if k != 0:
            assert state.handle(MapDone(file=f, node=k, now=2.0)) == []
    cancel_shuffle, cancel_maps, shuffle = state.handle(Tick(now=3.1))
    assert cancel_shuffle == CancelShuffle()
    assert cancel_maps.nodes == (0,)
    assert not shuffle.speculative
    assert all(0 not in nodes for nodes in shuffle.plan.placement.storers)


@pytest.mark.parametrize(
    "loss",
    [NodesLost(nodes=frozenset({1}), now=1.0), MapLost(file=0, node=1, now=1.0)],
    ids=["node", "map"],
)
def test_a_lost_node_cancels_the_speculative_shuffle_and_the_end_replans(loss):
    state, _ = _speculating()
    assert state.handle(loss) == [CancelShuffle()]
    actions = []
    for f, k in _maps(state):
        if k != 1:
            actions += state.handle(MapDone(file=f, node=k, now=2.0))
    (shuffle,) = actions
    assert shuffle.plan.receivers == (0, 2, 3)
    assert shuffle.hosts[1] != 1
    assert not shuffle.speculative


def test_a_failed_speculative_task_voids_the_speculation_only():
    state, _ = _speculating()
    error = TaskFailed(stage="shuffle", where="x", error=ValueError("lost"), now=1.0)
    assert state.handle(error) == [CancelShuffle()]
    assert state.handle(error) == []  # its siblings' reports change nothing
    actions = []
    for f, k in _maps(state):
        actions += state.handle(MapDone(file=f, node=k, now=2.0))
    (shuffle,) = actions
    assert shuffle.plan is state.plan
    assert not shuffle.speculative
    (fail,) = state.handle(error)  # a task of the shuffle that runs: a real error
    assert isinstance(fail, Fail)


def test_no_speculation_when_no_map_can_be_cut_or_a_node_is_already_lost():
    state = _state(K=3, r=1, speculate=True)
    (shuffle,) = state.begin()
    assert not shuffle.speculative  # r = 1: the shuffle goes with the maps anyway
    state = _state(K=4, r=2, speculate=True)
    state.handle(NodesLost(nodes=frozenset({2}), now=0.0))
    assert state.begin() == []
