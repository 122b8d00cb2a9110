r"""Gradient coding on Dask: exact full gradients from the fastest ``n - s`` workers.

The user gives ``grad(partition_data, params) -> array``, the gradient of one data
partition's share of a loss whose gradient is the sum over partitions.
:func:`place_gradient_data` splits the data into ``n`` row partitions and places
each worker's ``s + 1`` of them on it once; :meth:`GradientPlacement.gradient`
then ships only the parameters, runs one pinned task per worker and decodes the
full gradient from the first ``n - s`` returns (see
``docs/theory/gradient_coding.md``). :func:`gradient_descent` (plain, momentum,
Nesterov, or the user's own update rule) and :func:`coded_gradient_descent` (place,
descend, release) train on top of it.

The baselines run through the same path: ``"uncoded"`` (one partition a worker,
wait for all), ``"replication"`` (the coded placement, partial gradients returned
separately, first copy of each partition used) and ``"ignore"`` (one partition a
worker, the fastest ``n - s`` summed and rescaled: inexact, the record names the
missing partitions). ``"partial"`` handles partial stragglers: the replication
placement with each partial gradient returned as soon as it is computed, so the
partitions a slow worker did finish count.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, Unpack

import numpy as np
from numpy.typing import ArrayLike

from coded._deprecation import data_first, renamed_keyword
from coded._dispatch import ExecutionOptions, execution_options
from coded._keywords import ExecutionKeywords
from coded.codes.interface import (
    GRADIENT_SCHEMES,
    Construction,
    GradientScheme,
    GradientSchemeName,
    WorkerShare,
)
from theory.rng import as_generator
from theory.validation import check_int, check_real

if TYPE_CHECKING:
    from distributed import Client

__all__ = [
    "GradientDescentResult",
    "GradientPlacement",
    "GradientStep",
    "StepRecord",
    "coded_gradient_descent",
    "gradient_descent",
    "place_gradient_data",
]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class GradientStep:
    """One distributed gradient: the vector and what the step recorded.

    Parameters
    ----------
    gradient : numpy.ndarray
        The decoded full gradient ``sum_j grad(D_j, params)`` (the rescaled
        estimate for ``"ignore"``).
    scheme : str
        ``"coded"``, ``"uncoded"``, ``"replication"``, ``"ignore"`` or
        ``"partial"``.
    is_exact : bool
        False only for ``"ignore"`` with partitions missing.
    used_workers, failed_workers : tuple of int
        Workers whose returns were received / whose tasks failed.
    missing_partitions : tuple of int
        Partitions no received return covered (non-empty only for ``"ignore"``).
    finish_seconds : tuple of float
        Each worker's return time after submission (``nan``: not received).
    step_seconds : float
        Wall-clock seconds of the step, from shipping params to the decoded
        gradient.
    stage_seconds : mapping of str to float
        The executor's stages (``place`` of params, ``wait``, ``release``,
        ``decode``, ``compute``).
    cancelled_tasks : int
        Tasks cancelled once the gradient was decodable.
    transport : {"tasks", "resident"}
        How the step reached the workers (docs/guide/cluster.md): one message
        per worker to its resident server, or pinned tasks.
    """

    gradient: np.ndarray
    scheme: str
    is_exact: bool
    used_workers: tuple[int, ...]
    failed_workers: tuple[int, ...]
    missing_partitions: tuple[int, ...]
    finish_seconds: tuple[float, ...]
    step_seconds: float
    stage_seconds: Mapping[str, float]
    cancelled_tasks: int
    transport: Literal["tasks", "resident"] = "tasks"


def _split_rows(data: Any, n: int) -> tuple[list[Any], list[int]]:
    """Split an array (or a tuple of arrays with equal rows) into n row blocks."""
    arrays = list(data) if isinstance(data, tuple | list) else [data]
    if not arrays:
        raise ValueError("`data` must be an array or a non-empty tuple of arrays.")
    arrays = [np.asarray(a) for a in arrays]
    rows = {a.shape[0] if a.ndim else 0 for a in arrays}
    if len(rows) != 1:
        raise ValueError(
            "every array of `data` must have the same number of rows, got "
            f"{[a.shape for a in arrays]}."
        )
    m = rows.pop()
    if m < n:
        raise ValueError(f"`data` must have at least n={n} rows, got {m}.")
    bounds = np.linspace(0, m, n + 1).round().astype(int)
    parts = [
        tuple(a[lo:hi] for a in arrays)
        if isinstance(data, tuple | list)
        else data[lo:hi]
        for lo, hi in itertools.pairwise(bounds)
    ]
    return parts, np.diff(bounds).tolist()


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class GradientPlacement:
    """Data partitions placed on the workers for many gradient steps.

    Made by :func:`place_gradient_data`; call :meth:`gradient` once a step and
    release it (or use it as a context manager) when done.

    Parameters
    ----------
    scheme : GradientScheme
        The scheme (its code, supports and decoder).
    client : distributed.Client
        The client the data was placed with.
    addresses : tuple of str
        Dask worker of each code worker.
    placement_id : str
        In every key of the placement (``coded-<id>-share-<i>``).
    partition_rows : tuple of int
        Rows of each partition.
    stage_seconds : mapping of str to float
        ``split`` and ``place`` seconds, spent once.
    """

    scheme: GradientScheme
    client: Client
    addresses: tuple[str, ...]
    placement_id: str
    partition_rows: tuple[int, ...]
    stage_seconds: Mapping[str, float]
    _futures: list[Any] = field(repr=False)

    def __post_init__(self) -> None:
        stages = MappingProxyType(dict(self.stage_seconds))
        object.__setattr__(self, "stage_seconds", stages)

    @property
    def n(self) -> int:
        """Workers (= partitions)."""
        return self.scheme.n

    @property
    def s(self) -> int:
        """Stragglers tolerated."""
        return self.scheme.s

    @property
    def worker_rows(self) -> tuple[int, ...]:
        """Data rows each worker processes a step."""
        return tuple(
            sum(self.partition_rows[j] for j in support)
            for support in self.scheme.supports
        )

    @property
    def is_released(self) -> bool:
        """Whether :meth:`release` has run."""
        return not self._futures

    def gradient(
        self,
        params: ArrayLike,
        *,
        options: ExecutionOptions | None = None,
        **option_fields: Unpack[ExecutionKeywords],
    ) -> GradientStep:
        """Compute the full gradient at `params` on the cluster (one step).

        Parameters
        ----------
        params : array_like
            The parameters (shipped to every worker).
        options : ExecutionOptions, optional
            ``stragglers`` (injected delays and failures of this step; the load
            of worker ``i`` is :attr:`worker_rows` ``[i]`` rows), ``rng`` (draws
            them) and ``timeout`` (seconds to wait for a decodable set of
            returns). The gradient comes to the client (``output="numpy"``) and
            has no result check (``verify="correct"`` raises).
        **option_fields
            Fields of :class:`coded.ExecutionOptions` as keywords; they override
            those of `options`:
        stragglers, timeout, rng : optional
            Keyword options, as in `options`.
        transport : {"auto", "resident", "tasks"}, optional
            Keyword option: ``"auto"`` (default) runs the step on the workers'
            resident servers where they run, ``"tasks"`` as pinned tasks;
            :attr:`GradientStep.transport` says which ran.
        output, verify, check : optional
            Keyword options: ``output="numpy"`` only, ``verify`` ``"detect"``
            or ``"off"`` (a gradient has no result check to run).

        Returns
        -------
        GradientStep

        Raises
        ------
        NotEnoughResultsError
            More than ``s`` workers failed (``"uncoded"``: any), as soon as no
            decodable set can arrive, at the latest at `timeout`.
        GradientError
            ``grad`` raised or returned a wrong shape or non-finite values on some
            worker (the message names the worker and the partition).
        """
        from coded.runtime import check_client
        from coded.runtime.interface import run_gradient_step

        run_options = _gradient_options(options, option_fields, "gradient")
        if self.is_released:
            raise ValueError(f"placement {self.placement_id} was released.")
        params = np.array(params, dtype=np.float64)
        stragglers = run_options.stragglers
        faults = (
            None
            if stragglers is None
            else stragglers.sample(self.n, rng=run_options.rng)
        )
        began = time.perf_counter()
        run = run_gradient_step(
            check_client(self.client),
            self.scheme,
            params,
            futures=self._futures,
            addresses=self.addresses,
            worker_rows=self.worker_rows,
            faults=faults,
            timeout=run_options.timeout,
            transport=run_options.transport,
        )
        seconds = time.perf_counter() - began
        missing = self.scheme.missing_partitions(run.used_workers)
        return GradientStep(
            gradient=run.product,
            scheme=self.scheme.name,
            is_exact=not missing,
            used_workers=run.used_workers,
            failed_workers=run.failed_workers,
            missing_partitions=missing,
            finish_seconds=run.finish_seconds,
            step_seconds=seconds,
            stage_seconds=MappingProxyType(dict(run.stage_seconds)),
            cancelled_tasks=run.cancelled_tasks,
            transport=run.transport,
        )

    def release(self) -> None:
        """Drop the placed data from the cluster (idempotent)."""
        from coded.runtime.interface import release_shares

        release_shares(self.client, self._futures)
        self._futures.clear()

    def __enter__(self) -> GradientPlacement:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


def place_gradient_data(
    data: ArrayLike | Sequence[ArrayLike],
    grad: Callable[[Any, np.ndarray], ArrayLike],
    *,
    client: Client,
    scheme: GradientSchemeName = "coded",
    n: int | None = None,
    s: int = 1,
    construction: Construction = "stable",
) -> GradientPlacement:
    """Split `data` into ``n`` partitions and place each worker's share once.

    Each partition leaves the client once (to one of its holders); the other
    ``s`` holders fetch it from there, worker to worker.

    Parameters
    ----------
    data : array_like or tuple of array_like
        The data set, split by rows (a tuple, e.g. ``(X, y)``, is split row-wise
        in step; ``grad`` receives the same structure).
    grad : callable
        ``grad(partition_data, params) -> array`` of the shape of ``params``,
        pure and picklable; the full gradient is the sum over partitions.
    client : distributed.Client
        A running client with at least ``n`` workers.
    scheme : {"coded", "uncoded", "replication", "ignore", "partial"}
        See the module docstring.
    n : int, optional
        Workers and partitions (default: every worker of the cluster).
    s : int
        Stragglers tolerated, ``0 <= s < n`` (ignored by ``"uncoded"``).
    construction : {"stable", "cyclic", "fractional"}
        The :class:`~coded.GradientCode` construction of ``"coded"``.

    Returns
    -------
    GradientPlacement

    Raises
    ------
    ValueError
        ``s >= n``, ``n`` not divisible by ``s + 1`` for fractional repetition,
        fewer rows than ``n``, an unknown scheme, too few workers.
    TypeError
        `grad` is not callable, `client` is not a client.

    Examples
    --------
    >>> import numpy as np
    >>> from coded import LocalCodedCluster, place_gradient_data
    >>> X, y = np.arange(12.0).reshape(6, 2), np.ones(6)
    >>> def grad(part, w):  # least squares: sum of (x.w - y) x
    ...     Xp, yp = part
    ...     return Xp.T @ (Xp @ w - yp)
    >>> with LocalCodedCluster(n_workers=3) as cluster:
    ...     with place_gradient_data((X, y), grad, client=cluster.client,
    ...                              s=1) as placed:
    ...         step = placed.gradient(np.zeros(2))
    >>> np.allclose(step.gradient, X.T @ (X @ np.zeros(2) - y)), step.is_exact
    (True, True)
    """
    from coded.runtime import check_client, worker_addresses
    from coded.runtime.interface import place_shares

    client = check_client(client)
    if not callable(grad):
        raise TypeError(f"`grad` must be callable, got {type(grad).__name__}.")
    if scheme not in GRADIENT_SCHEMES:
        raise ValueError(f"`scheme` must be one of {GRADIENT_SCHEMES}, got {scheme!r}.")
    n = None if n is None else check_int(n, "n", min_value=1)
    s = check_int(s, "s", min_value=0)
    addresses = worker_addresses(client, n)
    n = len(addresses)
    began = time.perf_counter()
    parts, rows = _split_rows(data, n)
    gradient_scheme = GradientScheme(
        scheme, n, s, construction=construction, partition_rows=rows
    )
    shares = [
        WorkerShare(
            worker=i,
            partitions=support,
            data=(),
            coefficients=gradient_scheme.coefficients(i),
            grad=grad,
        )
        for i, support in enumerate(gradient_scheme.supports)
    ]
    split_seconds = time.perf_counter() - began
    began = time.perf_counter()
    placement_id, futures = place_shares(client, parts, shares, addresses)
    return GradientPlacement(
        scheme=gradient_scheme,
        client=client,
        addresses=tuple(addresses),
        placement_id=placement_id,
        partition_rows=tuple(rows),
        stage_seconds={
            "split": split_seconds,
            "place": time.perf_counter() - began,
        },
        _futures=futures,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class StepRecord:
    """What one optimiser step recorded.

    Parameters
    ----------
    step : int
        Step index (0-based).
    loss : float
        ``loss(params)`` after the step (``nan`` without a `loss`).
    step_seconds : float
        Wall-clock seconds of the distributed gradient (loss evaluation excluded).
    used_workers : tuple of int
        Workers whose returns were received.
    missing_partitions : tuple of int
        Partitions left out (``"ignore"`` only).
    is_exact : bool
        Whether the gradient was the exact full gradient.
    """

    step: int
    loss: float
    step_seconds: float
    used_workers: tuple[int, ...]
    missing_partitions: tuple[int, ...]
    is_exact: bool


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class GradientDescentResult:
    """The final iterate and the per-step record of an optimiser run.

    Parameters
    ----------
    params : numpy.ndarray
        The final iterate.
    records : tuple of StepRecord
        One per step taken.
    scheme : str
        The scheme's name.
    initial_loss : float
        ``loss(x0)`` (``nan`` without a `loss`).
    """

    params: np.ndarray
    records: tuple[StepRecord, ...]
    scheme: str
    initial_loss: float

    @property
    def losses(self) -> np.ndarray:
        """Loss after each step."""
        return np.array([r.loss for r in self.records])

    @property
    def step_seconds(self) -> np.ndarray:
        """Seconds of each step's gradient."""
        return np.array([r.step_seconds for r in self.records])

    @property
    def elapsed_seconds(self) -> np.ndarray:
        """Cumulative gradient seconds at the end of each step."""
        return np.cumsum(self.step_seconds)


def _gradient_options(
    options: ExecutionOptions | None, fields: dict[str, Any], caller: str
) -> ExecutionOptions:
    """Return the execution options of a gradient step (client-side, unchecked)."""
    options = execution_options(options, fields, caller)
    if options.output != "numpy":
        raise ValueError(
            f"`output` must be 'numpy' for a gradient, got output={options.output!r}."
        )
    if options.verify == "correct":
        raise ValueError(
            "`verify='correct'` needs a result check, and gradient steps have none; "
            "pass verify='detect' or 'off'."
        )
    return options


def _check_optimiser(
    steps: int, step_size: float, momentum: float, nesterov: bool, update: Any
) -> tuple[int, float, float]:
    steps = check_int(steps, "steps", min_value=0)
    rate = check_real(step_size, "step_size", min_value=0.0, strict_min=True)
    momentum = check_real(momentum, "momentum", min_value=0.0)
    if momentum >= 1:
        raise ValueError(f"`momentum` must be < 1, got momentum={momentum}.")
    if nesterov and momentum == 0:
        raise ValueError("`nesterov=True` needs `momentum` > 0, got momentum=0.")
    if update is not None and (momentum or not callable(update)):
        raise ValueError(
            "`update` must be a callable (params, gradient, step) -> params and "
            "replaces the momentum rule: pass momentum=0 with it."
        )
    return steps, rate, momentum


def gradient_descent(
    placement: GradientPlacement,
    x0: ArrayLike,
    *,
    steps: int = 100,
    step_size: float = 0.1,
    momentum: float = 0.0,
    nesterov: bool = False,
    loss: Callable[[np.ndarray], float] | None = None,
    callback: Callable[[StepRecord, np.ndarray], bool | None] | None = None,
    update: Callable[[np.ndarray, np.ndarray, int], Any] | None = None,
    options: ExecutionOptions | None = None,
    **option_fields: Unpack[ExecutionKeywords],
) -> GradientDescentResult:
    r"""Gradient descent with distributed (coded) gradients on a placement.

    Parameters
    ----------
    placement : GradientPlacement
        From :func:`place_gradient_data`.
    x0 : array_like
        Initial parameters.
    steps : int
        Steps to take.
    step_size : float
        :math:`\eta > 0` (the old spelling ``learning_rate`` is deprecated).
    momentum : float
        :math:`\beta \in [0, 1)`: heavy ball
        :math:`v \leftarrow \beta v - \eta \nabla F(x),\ x \leftarrow x + v`.
    nesterov : bool
        Evaluate the gradient at :math:`x + \beta v` (Nesterov's momentum).
    loss : callable, optional
        ``loss(params) -> float``, evaluated on the client after each step (not
        timed).
    callback : callable, optional
        ``callback(record, params)`` after each step; returning True stops.
    update : callable, optional
        The user's own rule ``update(params, gradient, step) -> params``,
        replacing the built-in one (``momentum`` must be 0).
    options : ExecutionOptions, optional
        ``stragglers`` (injected delays and failures, drawn afresh every step),
        ``rng`` (the source of the per-step draws) and ``timeout`` (seconds each
        step may wait for a decodable set of returns), as in
        :meth:`GradientPlacement.gradient`.
    **option_fields
        Fields of :class:`coded.ExecutionOptions` as keywords; they override
        those of `options`:
    stragglers, timeout, rng, output, verify, check, transport : optional
        Keyword options, as in :meth:`GradientPlacement.gradient`.

    Returns
    -------
    GradientDescentResult

    Raises
    ------
    NotEnoughResultsError, GradientError
        As :meth:`GradientPlacement.gradient`.
    """
    step_size = renamed_keyword(
        option_fields,
        "learning_rate",
        "step_size",
        step_size,
        default=0.1,
        caller="gradient_descent",
    )
    steps, rate, beta = _check_optimiser(steps, step_size, momentum, nesterov, update)
    run_options = _gradient_options(options, option_fields, "gradient_descent")
    run_options = dataclasses.replace(run_options, rng=as_generator(run_options.rng))
    x = np.array(x0, dtype=np.float64)
    velocity = np.zeros_like(x)
    records: list[StepRecord] = []
    initial = float(loss(x)) if loss is not None else float("nan")
    for t in range(steps):
        at = x + beta * velocity if nesterov else x
        step = placement.gradient(at, options=run_options)
        if update is not None:
            x = np.array(update(x, step.gradient, t), dtype=np.float64)
        else:
            velocity = beta * velocity - rate * step.gradient
            x = x + velocity
        record = StepRecord(
            step=t,
            loss=float(loss(x)) if loss is not None else float("nan"),
            step_seconds=step.step_seconds,
            used_workers=step.used_workers,
            missing_partitions=step.missing_partitions,
            is_exact=step.is_exact,
        )
        records.append(record)
        if callback is not None and callback(record, x):
            break
    return GradientDescentResult(
        params=x,
        records=tuple(records),
        scheme=placement.scheme.name,
        initial_loss=initial,
    )


def coded_gradient_descent(
    data: ArrayLike | Sequence[ArrayLike],
    grad: Callable[[Any, np.ndarray], ArrayLike],
    x0: ArrayLike,
    *,
    client: Client,
    scheme: GradientSchemeName = "coded",
    n: int | None = None,
    s: int = 1,
    construction: Construction = "stable",
    **descent: Any,
) -> GradientDescentResult:
    """Place `data`, run :func:`gradient_descent`, release the placement.

    The arguments come data first, as in :func:`place_gradient_data`; the old
    order ``coded_gradient_descent(grad, data, x0)`` is deprecated (recognised by
    a callable first argument).

    Parameters
    ----------
    data, grad, client, scheme, n, s, construction
        As in :func:`place_gradient_data`.
    x0 : array_like
        Initial parameters.
    **descent
        Keywords of :func:`gradient_descent` (``steps``, ``step_size``,
        ``momentum``, ``nesterov``, ``loss``, ``callback``, ``update``,
        ``options`` and the fields of :class:`coded.ExecutionOptions`).

    Returns
    -------
    GradientDescentResult

    Examples
    --------
    >>> import numpy as np
    >>> from coded import LocalCodedCluster, coded_gradient_descent
    >>> X = np.random.default_rng(0).standard_normal((40, 3))
    >>> y = X @ np.array([1.0, -2.0, 0.5])
    >>> def grad(part, w):
    ...     Xp, yp = part
    ...     return Xp.T @ (Xp @ w - yp) / 40
    >>> with LocalCodedCluster(n_workers=4) as cluster:
    ...     result = coded_gradient_descent((X, y), grad, np.zeros(3), s=1,
    ...                                     client=cluster.client, steps=30,
    ...                                     step_size=1.0)
    >>> np.round(result.params, 6).tolist()
    [1.0, -2.0, 0.5]
    """
    data, grad = data_first(
        data,
        grad,
        old="(grad, data, x0)",
        new="(data, grad, x0)",
        caller="coded_gradient_descent",
    )
    with place_gradient_data(
        data,
        grad,
        client=client,
        scheme=scheme,
        n=n,
        s=s,
        construction=construction,
    ) as placement:
        return gradient_descent(placement, x0, **descent)
