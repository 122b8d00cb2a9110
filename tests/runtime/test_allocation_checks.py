"""Issue 6's runtime checks: partial batches, blocked workers, timeouts, profiling.

Complements test_allocation_runs.py: decoding from *partial* BPCC batch chains
while slow workers stay blocked on a ``distributed.Event``, solver allocations run
on workers injecting their own profile, ``NotEnoughResultsError`` when too few
rows arrive before the timeout. Profiling accuracy on a real cluster is measured by
bench/bench_allocation.py, not asserted here (it depends on the machine's load).
"""

import re
import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from conftest import N_WORKERS, scheduler_keys
from distributed import Event
from runtime_blocking import BlockingCode

from allocation import Allocation, solve_bpcc, solve_hcmm, solve_kim
from coded import NotEnoughResultsError, RowMDSCode, Stragglers, coded_matmul
from coded.runtime import execute, worker_addresses
from theory import WorkerProfile

pytestmark = pytest.mark.runtime

P = 65_537
# worker i of the 6: loads, batches; m = 12 rows are needed
LOADS, BATCHES, M = [6, 6, 4, 4, 2, 2], [3, 3, 2, 2, 1, 1], 12

# the workers are threads of this process: products count here, per (event, worker)
_calls: Counter = Counter()
_calls_lock = threading.Lock()


@dataclass(frozen=True)
class BlockAfter:
    """A product that blocks on a distributed.Event after `allowed` calls per worker.

    `allowed` maps worker addresses to the batches they complete before blocking;
    other workers never block.
    """

    multiply: Any
    event_name: str
    allowed: tuple

    def __call__(self, left, right):
        from distributed import get_worker

        address = get_worker().address
        limit = dict(self.allowed).get(address)
        if limit is not None:
            with _calls_lock:
                _calls[self.event_name, address] += 1
                count = _calls[self.event_name, address]
            if count > limit:
                Event(self.event_name).wait(timeout=60)
        return self.multiply(left, right)


class PartialCode(BlockingCode):
    """`inner` whose workers block after the given numbers of batches."""

    def __init__(self, inner, event_name, allowed):
        super().__init__(inner, event_name, ())
        self._multiply = BlockAfter(inner.multiply, event_name, tuple(allowed.items()))


def _batch_ranges(allocation):
    return [
        [(j * size, (j + 1) * size) for j in range(count)]
        for size, count in zip(
            allocation.batch_rows.tolist(), allocation.batches.tolist(), strict=True
        )
    ]


def _run_partial(client, name, allowed_batches, field, timeout=30.0):
    """Run the 6-worker allocation with workers blocking after some batches."""
    rng = np.random.default_rng(60)
    A = rng.integers(-20, 21, size=(M, 5))
    x = rng.integers(-20, 21, size=5)
    if field is None:
        A, x = A.astype(float), x.astype(float)
    allocation = Allocation(
        loads=LOADS, batches=BATCHES, m=M, expected_latency=1.0, solver="manual"
    )
    addresses = worker_addresses(client, N_WORKERS)
    allowed = {addresses[i]: count for i, count in allowed_batches.items()}
    event = Event(name, client=client)
    code = PartialCode(RowMDSCode(LOADS, M, field=field), event.name, allowed)
    encoded = code.encode_operands(A, x)
    return (
        A,
        x,
        addresses,
        event,
        lambda: execute(
            client,
            code,
            encoded,
            addresses=addresses,
            batches=_batch_ranges(allocation),
            timeout=timeout,
        ),
    )


def _executing_count(dask_worker):
    return len(dask_worker.state.executing)


@pytest.mark.parametrize("field", [None, P], ids=["reals", "gf_p"])
def test_decodes_from_partial_batches_while_slow_workers_block(client, field):
    # workers 2, 3 finish (8 rows); 0 and 1 block after 1 and 2 of their 3
    # batches (2 + 4 rows); 4 and 5 block at once: only 14 rows can arrive, and
    # the m = 12 needed include partial chains of both half-blocked workers
    allowed = {0: 1, 1: 2, 4: 0, 5: 0}
    A, x, addresses, event, run = _run_partial(
        client, f"partial-{field}", allowed, field
    )
    try:
        result = run()
        if field is None:
            np.testing.assert_allclose(result.product, A @ x, atol=1e-9)
        else:
            assert np.array_equal(np.asarray(result.product), A @ x)
        assert {0, 1} <= set(result.used_workers)
        assert not {4, 5} & set(result.used_workers)
        assert np.all(np.isnan(result.finish_seconds[4:]))
        # batches never started (0: two, 1: one) and the four blocked tasks
        assert result.cancelled_tasks >= 5
        assert scheduler_keys(client, result.call_id) == []
        # 4 and 5 block in their only batch, which started with the call; the
        # next batch of 0 or 1 may have been cancelled before it started
        executing = client.run(
            _executing_count, workers=[addresses[i] for i in allowed]
        )
        assert all(count <= 1 for count in executing.values())
        assert executing[addresses[4]] == executing[addresses[5]] == 1
    finally:
        event.set()


def test_too_few_rows_before_the_timeout_raise(client):
    # 0 delivers one batch (2 rows), 2 and 3 finish (8 rows): 10 < m = 12
    allowed = {0: 1, 1: 0, 4: 0, 5: 0}
    *_, event, run = _run_partial(client, "too-few", allowed, None, timeout=0.5)
    message = "timeout after 0.5 s: received 10 of the 12 results needed"
    try:
        with pytest.raises(NotEnoughResultsError, match=re.escape(message)):
            run()
    finally:
        event.set()


def test_coded_matmul_times_out_when_allocated_rows_are_late(client):
    allocation = Allocation(
        loads=LOADS, batches=BATCHES, m=M, expected_latency=1.0, solver="manual"
    )
    message = "timeout after 0.3 s: received 8 of the 12 results needed"
    with pytest.raises(NotEnoughResultsError, match=re.escape(message)):
        coded_matmul(
            np.ones((M, 3)),
            np.ones(3),
            allocation=allocation,
            client=client,
            timeout=0.3,
            stragglers=Stragglers(delays={0: 60.0, 1: 60.0, 4: 60.0, 5: 60.0}),
        )


PROFILE = WorkerProfile(a=[0.1, 0.1, 0.2, 0.2, 0.5, 0.5], mu=[8.0, 8.0, 4, 4, 1, 1])
SOLVERS = {
    "hcmm": lambda: solve_hcmm(PROFILE, 30),
    "kim": lambda: solve_kim(PROFILE.to_groups(), 30),
    "bpcc": lambda: solve_bpcc(PROFILE, 30, batches=3),
}


@pytest.mark.parametrize("field", [None, P], ids=["reals", "gf_p"])
@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_solver_allocations_run_on_their_profile(client, solver, field):
    allocation = SOLVERS[solver]()
    rng = np.random.default_rng(61)
    A = rng.integers(-20, 21, size=(30, 4))
    x = rng.integers(-20, 21, size=4)
    if field is None:
        A, x = A.astype(float), x.astype(float)
    result = coded_matmul(
        A,
        x,
        allocation=allocation,
        field=field,
        client=client,
        stragglers=Stragglers(profile=PROFILE, time_unit=0.002),
        rng=7,
    )
    if field is None:
        np.testing.assert_allclose(result.product, A @ x, atol=1e-8)
    else:
        assert np.array_equal(np.asarray(result.product), A @ x)
    assert result.n == PROFILE.n
    assert set(result.used_workers) <= set(np.flatnonzero(allocation.loads).tolist())
    assert scheduler_keys(client, result.call_id) == []
