"""The run state without a cluster: any order of events, the same decisions.

Events are replayed in orders Hypothesis draws, with the time passed in, over
small codes (MDS over the reals and GF(p), replication, uncoded) whose workers
run one or two batches each.
"""

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from coded import MDSCode, ReplicationCode, UncodedCode
from coded._dispatch import piece_check, prime_of
from coded.codes import Piece
from coded.errors import InconsistentResultsError, NotEnoughResultsError
from coded.runtime._state import (
    Backup,
    BackupPolicy,
    Cancel,
    Cancelled,
    Decode,
    Fail,
    Retry,
    RunState,
    Started,
    Submit,
    TaskFailed,
    TaskFinished,
    Tick,
    WorkersLost,
    tolerance,
)

TIMEOUT = 100.0
CODES = {
    "mds-real": lambda: MDSCode(5, 3),
    "mds-gf": lambda: MDSCode(5, 3, field=65537),
    "replication": lambda: ReplicationCode(4, 2),
    "uncoded": lambda: UncodedCode(3),
}


class Run:
    """A code, its operands and a started state (addresses ``w0``, ``w1``, ...)."""

    def __init__(self, name, batches=1, policy=None, verify=None):
        self.code = CODES[name]()
        rng = np.random.default_rng(0)
        self.A = rng.integers(-5, 6, size=(12, 3))
        self.x = rng.integers(-5, 6, size=3)
        if self.code.field is None:
            self.A, self.x = self.A.astype(float), self.x.astype(float)
        self.encoded = self.code.encode_operands(self.A, self.x)
        self.addresses = [f"w{i}" for i in range(self.code.n)]
        self.batches = [_split(len(left), batches) for left in self.encoded.lefts]
        check = None  # verify: each piece's Freivalds check, as coded_matmul runs it
        if verify is not None:
            check, _ = piece_check(self.code, self.encoded, self.batches, verify)
        self.state = RunState(
            self.code,
            self.code.decoder(self.encoded),
            self.addresses,
            self.batches,
            timeout=TIMEOUT,
            policy=policy,
            check=check,
            verify=verify or "detect",
        )
        self.now = 0.0
        (submit,) = self.state.handle(Started(now=self.now))
        self.tasks = {task.key: task for task in submit.tasks}

    def finished(self, key, copy=0, wrong=False):
        task = self.tasks[key]
        left = self.encoded.lefts[task.worker][task.start : task.stop]
        value = self.code.multiply(left, self.encoded.right(task.worker))
        if wrong:  # one entry off (over GF(p): by one residue)
            value, p = np.array(value), prime_of(self.code)
            value.flat[0] = value.flat[0] + 1 if p is None else (value.flat[0] + 1) % p
        piece = Piece(worker=task.worker, start=task.start, stop=task.stop, value=value)
        return TaskFinished(task=key, copy=copy, now=self.now, piece=piece)

    def handle(self, event):
        self.now = max(self.now, event.now)
        return self.state.handle(event)

    def later(self, seconds=1.0):
        self.now += seconds
        return self.now


def _split(rows, batches):
    edges = np.linspace(0, rows, batches + 1).astype(int)
    return [(int(a), int(b)) for a, b in itertools.pairwise(edges)]


def _decision(actions):
    return next((a for a in actions if isinstance(a, Decode | Fail)), None)


def _done_workers(run):
    """Workers all of whose batches were used."""
    return {
        worker
        for worker, ranges in enumerate(run.batches)
        if all((worker, j) in run.state.used_tasks for j in range(len(ranges)))
    }


runs = st.builds(
    Run, st.sampled_from(sorted(CODES)), batches=st.integers(min_value=1, max_value=2)
)
checked_runs = st.builds(
    Run,
    st.sampled_from(sorted(CODES)),
    batches=st.integers(min_value=1, max_value=2),
    verify=st.sampled_from(["detect", "correct"]),
)


@given(run=runs, data=st.data())
def test_results_in_any_order_decode_the_product(run, data):
    order = data.draw(st.permutations(sorted(run.tasks)))
    decision = None
    for key in order:
        actions = run.handle(run.finished(key))
        decision = _decision(actions)
        if decision is not None:
            break
        # a decodable set of whole results always decodes at once
        assert not run.code.is_decodable(_done_workers(run))
    assert isinstance(decision, Decode)
    assert run.state.is_over
    assert list(decision.tasks) == run.state.used_tasks
    np.testing.assert_allclose(run.state.decoder.decode(), run.A @ run.x)


@given(run=runs, data=st.data())
def test_a_burst_of_results_is_recorded_before_one_decision(run, data):
    order = data.draw(st.permutations(sorted(run.tasks)))
    split = data.draw(st.integers(min_value=1, max_value=len(order)))
    decisions = []
    settle = run.state._settle
    run.state._settle = lambda now: decisions.append(now) or settle(now)
    actions = run.state.handle(*(run.finished(key) for key in order[:split]))
    decision = _decision(actions)
    if run.state.decoder.is_decodable:
        assert isinstance(decision, Decode)  # every result of the burst is used
        assert set(decision.tasks) == set(order[:split])
        np.testing.assert_allclose(run.state.decoder.decode(), run.A @ run.x)
    else:
        assert decision is None
    assert len(decisions) == 1  # one decision for the burst


@given(run=runs, data=st.data())
def test_failures_within_tolerance_still_decode(run, data):
    failing = data.draw(
        st.sets(st.sampled_from(range(run.code.n)), max_size=tolerance(run.code))
    )
    events = [
        ("failed", key) if key[0] in failing else ("finished", key)
        for key in sorted(run.tasks)
    ]
    decision = None
    for kind, key in data.draw(st.permutations(events)):
        run.later()
        if kind == "failed":
            why = "its task raised InjectedFailure: injected"
            event = TaskFailed(task=key, copy=0, now=run.now, why=why)
        else:
            event = run.finished(key)
        decision = _decision(run.handle(event))
        if decision is not None:
            break
    assert isinstance(decision, Decode)
    assert not set(run.state.used_workers) & failing
    assert run.state.failed_workers() <= failing
    np.testing.assert_allclose(run.state.decoder.decode(), run.A @ run.x)


@given(run=runs, data=st.data())
def test_losses_beyond_tolerance_fail_before_the_timeout(run, data):
    n = run.code.n
    lost = data.draw(
        st.sets(st.sampled_from(range(n)), min_size=tolerance(run.code) + 1, max_size=n)
    )
    survivors = set(range(n)) - lost
    gone = frozenset(run.addresses[i] for i in lost)
    actions = run.handle(WorkersLost(addresses=gone, now=run.later()))
    if run.code.is_decodable(survivors):  # replication: not every loss is fatal
        assert _decision(actions) is None
        return
    *cancel, fail = actions
    assert isinstance(fail, Fail)
    assert run.now < run.state.deadline
    error = fail.error
    assert isinstance(error, NotEnoughResultsError)
    assert "no decodable set of results can still arrive" in str(error)
    assert f"The code tolerates {tolerance(run.code)} lost of {n} shares" in str(error)
    assert error.tolerance == tolerance(run.code)
    assert set(error.lost_workers) == lost
    assert all("left the cluster" in why for why in error.lost_workers.values())
    running = tuple((key, 0) for key in run.tasks if key[0] in survivors)
    assert cancel == ([Cancel(copies=running)] if running else [])


@given(run=runs, data=st.data())
def test_late_results_after_the_decode_are_ignored(run, data):
    order = data.draw(st.permutations(sorted(run.tasks)))
    for key in order:
        actions = run.handle(run.finished(key))
        if _decision(actions) is not None:
            break
    used, progress = list(run.state.used_tasks), run.state.decoder.progress
    late = order[len(used) :]  # every result before the decision was used
    (cancel,) = actions[:-1] if late else [Cancel(copies=())]
    assert sorted(cancel.copies) == sorted((key, 0) for key in late)
    for key in late:
        assert run.handle(run.finished(key)) == []
        assert run.handle(Tick(now=run.later(TIMEOUT))) == []
    assert run.state.used_tasks == used
    assert run.state.decoder.progress == progress
    statuses = {record[:2]: record[5] for record in run.state.records()}
    assert all(statuses[key] == "unused" for key in late)
    assert all(statuses[key] == "used" for key in used)


def test_a_backup_is_launched_on_an_idle_worker_and_cancelled_at_the_decode():
    run = Run("uncoded", policy=BackupPolicy(quantile=0.5, slowdown=1.5))
    *fast, slow = sorted(run.tasks)
    for key in fast:
        run.now = 1.0
        assert run.handle(run.finished(key)) == []
    assert run.handle(Tick(now=1.4)) == []  # not yet 1.5 median durations
    actions = run.handle(Tick(now=2.0))
    assert actions == [Backup(task=run.tasks[slow], host=0)]
    assert run.state.backups == 1
    assert run.handle(Tick(now=3.0)) == []  # one backup per task
    actions = run.handle(run.finished(slow, copy=1))
    assert actions == [Cancel(copies=((slow, 0),)), Decode(tasks=(*fast, slow))]
    np.testing.assert_allclose(run.state.decoder.decode(), run.A @ run.x)
    assert run.state.records()[-1][5:] == ("used", 2)


@given(run=runs, data=st.data())
def test_backups_go_to_idle_workers_and_every_copy_is_cancelled(run, data):
    run.state.policy = BackupPolicy(quantile=0.25, slowdown=1.0)
    decision = None
    for key in data.draw(st.permutations(sorted(run.tasks))):
        actions = run.handle(run.finished(key)) + run.handle(Tick(now=run.later()))
        for backup in (a for a in actions if isinstance(a, Backup)):
            others = [
                task
                for key, task in run.state.tasks.items()
                if task.is_outstanding and key != backup.task.key
            ]
            assert backup.host != backup.task.worker
            assert all(backup.host not in task.hosts for task in others)
        decision = _decision(actions)
        if decision is not None:
            break
    assert isinstance(decision, Decode)
    running = {
        (key, copy)
        for key, task in run.state.tasks.items()
        for copy in range(len(task.hosts))
        if copy not in task.finished
    }
    cancels = [a for a in actions if isinstance(a, Cancel)]
    assert {c for cancel in cancels for c in cancel.copies} == running
    assert run.state.backups == sum(len(t.hosts) - 1 for t in run.state.tasks.values())
    np.testing.assert_allclose(run.state.decoder.decode(), run.A @ run.x)


@pytest.mark.parametrize("name", sorted(CODES))
def test_the_timeout_fails_an_undecodable_run(name):
    run = Run(name)
    assert run.handle(Tick(now=TIMEOUT - 1e-9)) == []
    *_, fail = run.handle(Tick(now=TIMEOUT))
    assert isinstance(fail, Fail)
    assert f"timeout after {TIMEOUT} s: received 0 of the" in str(fail.error)
    assert run.handle(Tick(now=2 * TIMEOUT)) == []


def test_workers_lost_before_submission_fail_at_the_first_tick():
    code = MDSCode(4, 3)
    encoded = code.encode_operands(np.ones((6, 2)), np.ones(2))
    state = RunState(
        code, code.decoder(encoded), ["a", "b", "c", "d"], [[(0, 2)]] * 4, timeout=1
    )
    lost = {0: "its placed share on a was lost", 1: "shipping failed"}
    (submit,) = state.handle(Started(now=0.0, lost=lost))
    assert isinstance(submit, Submit)
    assert [t.worker for t in submit.tasks] == [2, 3]
    *_, fail = state.handle(Tick(now=0.0))
    assert isinstance(fail, Fail)
    assert fail.error.lost_workers == lost
    assert "worker 0: its placed share on a was lost" in str(fail.error)


def test_a_chain_cancelled_with_another_share_is_retried_once():
    run = Run("mds-real", batches=2)
    why = "its task ended cancelled"
    first = TaskFailed(task=(1, 0), copy=0, now=1.0, why=why, collateral=True)
    assert run.handle(first) == [Retry(tasks=(run.tasks[1, 0], run.tasks[1, 1]))]
    second = TaskFailed(task=(1, 1), copy=0, now=1.0, why=why, collateral=True)
    assert run.handle(second) == []  # its retry copy is still outstanding
    again = TaskFailed(task=(1, 0), copy=1, now=2.0, why=why, collateral=True)
    assert run.handle(again) == []
    assert run.state.lost == {1: why}


def test_rows_marked_without_values_decode_elsewhere():
    run = Run("mds-real")
    for key in sorted(run.tasks)[:3]:
        actions = run.handle(TaskFinished(task=key, copy=0, now=1.0))
    assert isinstance(actions[-1], Decode)
    assert actions[-1].tasks == ((0, 0), (1, 0), (2, 0))


def test_cancelling_a_run_cancels_its_copies_and_ends_it():
    run = Run("uncoded")
    actions = run.handle(Cancelled(now=1.0))
    assert actions == [Cancel(copies=tuple((key, 0) for key in run.tasks))]
    assert run.state.is_over
    assert run.handle(Tick(now=TIMEOUT)) == []
    assert {record[5] for record in run.state.records()} == {"cancelled"}


@given(run=checked_runs, data=st.data())
def test_checked_pieces_decode_from_the_first_passing_set(run, data):
    """Each piece is checked as it arrives: no spare result is waited for until
    one fails; a wrong piece is never decoded ("detect": the run fails naming
    its worker; "correct": its worker is dropped like a lost one)."""
    wrong = data.draw(st.sets(st.sampled_from(range(run.code.n))), label="wrong")
    order = data.draw(st.permutations(sorted(run.tasks)), label="order")
    decision, seen = None, set()
    for key in order:
        seen.add(key[0])
        actions = run.handle(run.finished(key, wrong=key[0] in wrong))
        decision = _decision(actions)
        if decision is not None:
            break
        honest = _done_workers(run) - wrong  # a decodable set of right results
        assert not run.code.is_decodable(honest)  # ... always decodes at once
    assert set(run.state.suspects) == wrong & seen
    if isinstance(decision, Fail):
        assert isinstance(decision.error, InconsistentResultsError)
        assert decision.error.suspect_workers == tuple(sorted(wrong & seen))
        if run.state.verify == "correct":  # only once the rest cannot decode
            assert not run.code.is_decodable(set(range(run.code.n)) - wrong)
        return
    assert isinstance(decision, Decode)
    assert not {worker for worker, _ in decision.tasks} & wrong
    if run.state.verify == "detect":
        assert not wrong & seen
    np.testing.assert_allclose(run.state.decoder.decode(), run.A @ run.x)
    floor = run.state.detection_floor
    assert floor == 0.0 if prime_of(run.code) else 0.0 < floor < 1e-9


def test_a_slow_worker_is_not_waited_for_until_a_check_fails():
    slow, fast = (0, 0), [(1, 0), (2, 0), (3, 0), (4, 0)]  # MDS (5, 3)
    run = Run("mds-real", verify="correct")
    assert run.handle(run.finished(fast[0])) == []
    assert run.handle(run.finished(fast[1])) == []
    assert run.handle(run.finished(fast[2])) == [
        Cancel(copies=((slow, 0), (fast[3], 0))),
        Decode(tasks=tuple(fast[:3])),
    ]
    run = Run("mds-real", verify="correct")
    assert run.handle(run.finished(fast[0])) == []
    assert run.handle(run.finished(fast[1], wrong=True)) == []  # wait for a spare
    assert run.handle(run.finished(fast[2])) == []
    assert run.handle(run.finished(fast[3])) == [
        Cancel(copies=((slow, 0),)),
        Decode(tasks=(fast[0], fast[2], fast[3])),
    ]
    assert set(run.state.suspects) == {2}
