"""One call's settings, from the entry point to its driver: a frozen `CallSpec`.

Both transports (pinned tasks through the scheduler, ``_executor.py``; resident
servers on the workers, ``_resident.py``) read the same spec, build the same
:class:`~coded.runtime._state.RunState` from it and draw their injected faults
from it the same way, so they differ only in how they carry the state's actions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from coded.codes import Code, EncodedOperands, Piece
from coded.injection import FaultPlan, TaskFault
from coded.runtime._remote import ProductLayout
from coded.runtime._state import BackupPolicy, BatchTask, RunState

__all__ = ["TRANSPORTS", "CallSpec", "Transport", "new_state", "task_fault"]

Transport = Literal["tasks", "resident", "grouped"]
TRANSPORTS: tuple[str, ...] = ("tasks", "resident", "grouped")


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class CallSpec:
    """Everything one coded product runs with, but the client.

    The fields are the keywords of
    :func:`coded.runtime.interface.submit_execution_async` (see its docstring),
    plus `transport`: ``"tasks"`` submits pinned batch chains through the
    scheduler; ``"resident"`` sends one message per worker to the servers of a
    placement (``placed_lefts`` required, ``layout`` None: results come to the
    client).
    """

    code: Code
    encoded: EncodedOperands
    addresses: Sequence[str]
    batches: Sequence[Sequence[tuple[int, int]]]
    faults: FaultPlan | None = None
    timeout: float = 60.0
    policy: BackupPolicy | None = None
    row_weights: Sequence[float] | None = None
    placed_lefts: Sequence[Any] | None = None
    label: str | None = None
    layout: ProductLayout | None = None
    check: Callable[[Piece], bool] | None = None
    verify: str = "detect"
    redundancy: str = "off"
    suspects: dict[int, str] | None = None
    scheme: str | None = None
    verification: str = "off"
    began: float | None = None
    encode_seconds: float = 0.0
    transport: Transport = "tasks"

    def __post_init__(self) -> None:
        if self.transport not in TRANSPORTS:
            raise ValueError(
                f"`transport` must be one of {TRANSPORTS}, got {self.transport!r}."
            )
        if self.transport != "tasks" and (
            self.placed_lefts is None or self.layout is not None
        ):
            raise ValueError(
                f"the {self.transport} transport serves placed shares and returns "
                "their results to the client: it needs `placed_lefts` and no "
                "`layout`."
            )

    @property
    def label_or_default(self) -> str:
        """The run's name in its keys (default: the code's class, n and k)."""
        if self.label:
            return self.label
        name = type(self.code).__name__.removesuffix("Code").lower() or "code"
        return f"{name}-{self.code.n}-{self.code.recovery_threshold}"

    def weight(self, worker: int) -> float:
        """Work of one row of `worker`'s left operand, in rows of the product."""
        return 1.0 if self.row_weights is None else float(self.row_weights[worker])


def new_state(spec: CallSpec) -> RunState:
    """Return a fresh run state (and decoder) of `spec`."""
    code, encoded = spec.code, spec.encoded
    decoder = (
        code.decoder(encoded)
        if spec.redundancy == "off"
        else code.decoder(encoded, verify=spec.redundancy, wrong=1)
    )
    return RunState(
        code,
        decoder,
        spec.addresses,
        spec.batches,
        timeout=spec.timeout,
        policy=spec.policy,
        check=spec.check,
        verify=spec.verify,
    )


def task_fault(spec: CallSpec, task: BatchTask, host: int) -> TaskFault:
    """Return the injected fault of one copy of `task` on `host`'s worker."""
    if spec.faults is None:
        return TaskFault()
    rows = (task.stop - task.start) * spec.weight(task.worker)
    return spec.faults.task_fault(host, rows=rows, backup=host != task.worker)
