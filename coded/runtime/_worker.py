"""What runs on a Dask worker: one batch task, the cancel signal, busy tracking.

Dask cannot interrupt a running task, so injected delays wait on a worker-local
cancel signal (a ``threading.Event`` per call, set by the client with
``Client.run``) instead of sleeping: a cancelled straggler frees its worker at once.
Real compute cannot be interrupted; each task reports how long it queued behind
still-running tasks of earlier calls (the overlap of one call into the next).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from coded.codes import Piece
from coded.injection import InjectedFailure, TaskFault

__all__ = [
    "TaskOutput",
    "cancel_signal",
    "run_batch",
    "signal_cancel",
]

_MAX_SIGNALS = 1024
_lock = threading.Lock()
_signals: OrderedDict[str, threading.Event] = OrderedDict()
# worker address -> (call id, wall-clock end of its last task)
_last_end: dict[str, tuple[str, float]] = {}


def cancel_signal(call_id: str) -> threading.Event:
    """Return the (worker-local) cancel event of call `call_id`, creating it."""
    with _lock:
        event = _signals.get(call_id)
        if event is None:
            event = _signals[call_id] = threading.Event()
            while len(_signals) > _MAX_SIGNALS:
                _signals.popitem(last=False)
        return event


async def signal_cancel(call_id: str) -> None:
    """Wake every injected wait of call `call_id` in this process.

    A coroutine so that ``Client.run(..., wait=False)`` can fire and forget it.
    """
    cancel_signal(call_id).set()


def wake_waits(client: Any, call_id: str, addresses: Iterable[str]) -> None:
    """Fire and forget `signal_cancel` of `call_id` on `addresses`, from any thread.

    It neither blocks nor raises: a worker that died meanwhile is skipped, where
    a blocking ``Client.run`` would wait out the connect timeout (30 s by
    default) on its address and then raise.
    """
    if client.status != "running":
        return
    client.loop.add_callback(
        functools.partial(
            client.run,
            signal_cancel,
            call_id,
            workers=sorted(addresses),
            wait=False,
            on_error="ignore",
            asynchronous=True,
        )
    )


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class TaskOutput:
    """A batch task's result: the piece plus worker-side timings (seconds)."""

    piece: Piece
    compute_seconds: float
    blocked_seconds: float
    is_cancelled: bool


def project_output(output: TaskOutput, projector: Callable[[Any], Any] | None) -> Any:
    """Return `output` with its piece's value seen through `projector` (its check).

    Runs on the worker holding the piece (a product decoded on the cluster): only
    the projection reaches the client. `projector` None (an unchecked piece): the
    value is dropped.
    """
    value = None if projector is None else projector(output.piece.value)
    return dataclasses.replace(
        output, piece=dataclasses.replace(output.piece, value=value)
    )


def _die(call_id: str) -> None:
    """Kill this worker: its process when separate, else the Worker object."""
    from distributed import get_worker

    if os.getpid() != int(call_id.rsplit("-", 1)[1]):
        os._exit(1)
    worker = get_worker()
    worker.loop.add_callback(worker.close, executor_wait=False, nanny=False)
    cancel_signal(call_id).wait(60.0)
    raise InjectedFailure("injected worker death")


def _blocked_seconds(address: str, call_id: str, submitted_at: float) -> float:
    with _lock:
        previous = _last_end.get(address)
    if previous is None or previous[0] == call_id:
        return 0.0
    return max(0.0, previous[1] - submitted_at)


def run_batch(
    left: Any,
    right: Any,
    *,
    multiply: Callable[[Any, Any], Any],
    worker: int,
    start: int,
    stop: int,
    fault: TaskFault,
    call_id: str,
    submitted_at: float,
    previous: TaskOutput | None = None,
    signal: str | None = None,
) -> TaskOutput:
    """Compute rows ``[start, stop)`` of ``left @ right`` and apply `fault`.

    Parameters
    ----------
    left, right : array
        The worker's operands.
    multiply : callable
        The code's picklable product ``(left, right) -> left @ right``.
    worker : int
        Coded worker index stamped on the piece.
    start, stop : int
        Row range of the worker's product.
    fault : TaskFault
        Injected duration, delay, failure, death or wrong result.
    call_id : str
        Identifier of the product (keys its cancel signal); ends in the client's
        process id.
    submitted_at : float
        Wall-clock time the client submitted the call.
    previous : TaskOutput, optional
        The worker's previous batch (a dependency that orders the chain).
    signal : str, optional
        Key of the cancel signal that ends an injected wait (default:
        `call_id`'s; a resident job has its own, so that stopping one job
        wakes no other job of the call in this process).

    Returns
    -------
    TaskOutput
    """
    from distributed import get_worker

    del previous  # only orders the chain
    began = time.perf_counter()
    address = get_worker().address
    blocked = _blocked_seconds(address, call_id, submitted_at)
    try:
        _start_fault(fault, call_id, worker)
        value = fault.corrupted(multiply(left[start:stop], right))
        compute = time.perf_counter() - began
        cancelled = _finish_fault(fault, signal or call_id, compute)
        piece = Piece(worker=worker, start=start, stop=stop, value=value)
        return TaskOutput(
            piece=piece,
            compute_seconds=compute,
            blocked_seconds=blocked,
            is_cancelled=cancelled,
        )
    finally:
        with _lock:
            _last_end[address] = (call_id, time.time())


def _start_fault(fault: TaskFault, call_id: str, worker: int) -> None:
    if fault.dies:
        _die(call_id)
    if fault.raises:
        raise InjectedFailure(f"injected failure of worker {worker}")


def _finish_fault(fault: TaskFault, call_id: str, compute_seconds: float) -> bool:
    """Wait out the injected duration (cooperatively); return whether cancelled."""
    remaining = max(0.0, fault.duration_seconds - compute_seconds)
    remaining += fault.extra_seconds
    return remaining > 0 and cancel_signal(call_id).wait(remaining)
