"""Gradient schemes as codes of the one executor: shares, worker combine, decoders.

A :class:`GradientScheme` is a :class:`~coded.codes.Code` whose "left operand" on
worker ``i`` is a :class:`WorkerShare` (its data partitions, its coefficients and
the user's ``grad``) and whose "right operand" is the parameter vector: the
executor runs ``combine(share, params)`` on every worker and feeds the returns to
a :class:`GradientDecoder`. Four schemes share this path:

- ``"coded"``: a :class:`GradientCode`; each worker returns one combination;
- ``"uncoded"``: one partition a worker, wait for all ``n``;
- ``"replication"``: the cyclic placement of the code (``s + 1`` partitions a
  worker), each worker returns its partial gradients separately, the first copy
  of each partition is used;
- ``"ignore"``: one partition a worker, the fastest ``n - s`` are summed and
  rescaled to the whole data set (inexact; the missing partitions are reported);
- ``"partial"``: the replication placement, each worker returning each partial
  gradient as soon as it is computed (a chain of one-partition batches), so the
  finished partitions of a partial straggler count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from coded.codes._base import Code, Decoder, EncodedOperands, Piece
from coded.codes._gradient import Construction, GradientCode
from coded.errors import GradientError, NotEnoughResultsError

__all__ = [
    "GRADIENT_SCHEMES",
    "GradientDecoder",
    "GradientFailure",
    "GradientScheme",
    "GradientSchemeName",
    "WorkerShare",
    "combine",
]

GradientSchemeName = Literal["coded", "uncoded", "replication", "ignore", "partial"]
GRADIENT_SCHEMES: tuple[GradientSchemeName, ...] = (
    "coded",
    "uncoded",
    "replication",
    "ignore",
    "partial",
)
_SEPARATE = ("replication", "partial")  # partial gradients returned separately


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class WorkerShare:
    """What one worker holds for the whole run (placed once).

    Parameters
    ----------
    worker : int
        The worker's index.
    partitions : tuple of int
        Indices of the partitions it holds.
    data : tuple
        The partitions' data, in the order of `partitions`.
    coefficients : numpy.ndarray or None
        Its row of ``B`` on `partitions` (``None``: return each partial gradient).
    grad : callable
        ``grad(partition_data, params) -> array`` of the shape of ``params``.
    """

    worker: int
    partitions: tuple[int, ...]
    data: tuple[Any, ...]
    coefficients: np.ndarray | None
    grad: Callable[[Any, np.ndarray], Any]

    @property
    def shape(self) -> tuple[int]:
        """``(number of partitions,)``: a batch covers a range of them."""
        return (len(self.partitions),)

    def __getitem__(self, index: slice) -> WorkerShare:
        """Return the share restricted to partitions ``[start:stop]`` (a batch)."""
        if (index.start or 0) == 0 and index.stop in (None, len(self.partitions)):
            return self
        coefficients = self.coefficients
        return WorkerShare(
            worker=self.worker,
            partitions=self.partitions[index],
            data=self.data[index],
            coefficients=None if coefficients is None else coefficients[index],
            grad=self.grad,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class GradientFailure:
    """A worker's report that ``grad`` misbehaved (the decoder raises it)."""

    worker: int
    partition: int
    message: str


def _partial(share: WorkerShare, position: int, params: np.ndarray) -> np.ndarray:
    partition = share.partitions[position]
    value = np.asarray(share.grad(share.data[position], params))
    if value.shape != params.shape:
        raise ValueError(
            f"returned shape {value.shape}, expected the shape of params {params.shape}"
        )
    if not np.all(np.isfinite(value)):
        raise ValueError(f"returned non-finite values (partition {partition})")
    return value.astype(np.float64, copy=False)


def combine(share: WorkerShare, params: Any) -> Any:
    """Worker side: the share's combination of partial gradients at `params`.

    Returns ``sum_j B_ij grad(D_j, params)`` (one array), the stacked partial
    gradients when the share has no coefficients, or a :class:`GradientFailure`
    naming the partition when ``grad`` raised or returned a wrong shape or a
    non-finite value.
    """
    params = np.asarray(params)
    partials = []
    for position, partition in enumerate(share.partitions):
        try:
            partials.append(_partial(share, position, params))
        except Exception as error:
            return GradientFailure(
                worker=share.worker, partition=partition, message=str(error)
            )
    stacked = np.stack(partials)
    if share.coefficients is None:
        return stacked
    return np.tensordot(share.coefficients, stacked, axes=1)


class GradientScheme(Code):
    """A gradient scheme on ``n`` workers (see the module docstring).

    Parameters
    ----------
    name : {"coded", "uncoded", "replication", "ignore", "partial"}
        The scheme.
    n : int
        Workers (= data partitions).
    s : int
        Stragglers tolerated (``"uncoded"`` ignores it).
    construction : str
        The :class:`GradientCode` construction of ``"coded"``.
    partition_rows : sequence of int
        Rows of each partition (for the rescaling of ``"ignore"``).
    """

    def __init__(
        self,
        name: GradientSchemeName,
        n: int,
        s: int,
        *,
        construction: Construction = "stable",
        partition_rows: Sequence[int],
    ) -> None:
        if name not in GRADIENT_SCHEMES:
            raise ValueError(
                f"`scheme` must be one of {GRADIENT_SCHEMES}, got {name!r}."
            )
        self.name = name
        code_s = s if name in ("coded", *_SEPARATE) else 0
        self.code = GradientCode(
            n, code_s, construction if name == "coded" else "cyclic"
        )
        self.n, self.s = n, (0 if name == "uncoded" else s)
        if self.s >= n:
            raise ValueError(f"`s` must satisfy 0 <= s < n, got s={s}, n={n}.")
        self.partition_rows = tuple(int(r) for r in partition_rows)

    def __repr__(self) -> str:
        return f"GradientScheme({self.name!r}, code={self.code!r})"

    @property
    def supports(self) -> tuple[tuple[int, ...], ...]:
        """Partitions of each worker."""
        return self.code.supports

    def coefficients(self, worker: int) -> np.ndarray | None:
        """Worker `worker`'s row of ``B`` on its partitions (None: separately)."""
        if self.name in _SEPARATE:
            return None
        return np.array(self.code.B[worker, list(self.supports[worker])])

    @property
    def recovery_threshold(self) -> int:
        """Workers that always suffice: ``n - s`` (``n`` uncoded)."""
        return self.n - self.s

    @property
    def is_exact(self) -> bool:
        """False for ignore-stragglers."""
        return self.name != "ignore"

    def encode_operands(self, A: Any, B: Any) -> EncodedOperands:
        """Per-worker shares `A` (sequence of :class:`WorkerShare`), params `B`."""
        return EncodedOperands(lefts=tuple(A), rights=None, shared_right=B)

    def decoder(self, encoded: EncodedOperands) -> GradientDecoder:
        """Return a fresh decoder for one step."""
        return GradientDecoder(self)

    @property
    def multiply(self) -> Callable[[Any, Any], Any]:
        """The worker-side :func:`combine`."""
        return combine

    def is_decodable(self, workers: Iterable[int]) -> bool:
        """Whether whole returns of `workers` give the gradient (or its estimate)."""
        chosen = set(workers)
        if self.name == "ignore":
            return len(chosen) >= self.n - self.s
        if self.name in _SEPARATE:
            covered = {j for i in chosen for j in self.supports[i]}
            return len(covered) == self.n
        return self.code.is_decodable(chosen)

    @property
    def batches(self) -> list[list[tuple[int, int]]]:
        """Each worker's chain of partition ranges (one batch unless partial)."""
        if self.name == "partial":
            return [[(k, k + 1) for k in range(len(p))] for p in self.supports]
        return [[(0, len(p))] for p in self.supports]

    def missing_partitions(self, workers: Iterable[int]) -> tuple[int, ...]:
        """Partitions held by none of `workers`."""
        covered = {j for i in workers for j in self.supports[i]}
        return tuple(j for j in range(self.n) if j not in covered)


class GradientDecoder(Decoder):
    """Returns in, (full) gradient out, for one step of a :class:`GradientScheme`."""

    def __init__(self, scheme: GradientScheme) -> None:
        self.scheme = scheme
        self.returns: dict[int, Any] = {}
        self.partials: dict[int, np.ndarray] = {}  # first copy of each partition

    def add(self, piece: Piece) -> None:
        """Record one return; raise :class:`GradientError` on a failure."""
        value = piece.value
        if isinstance(value, GradientFailure):
            raise GradientError(
                f"`grad` failed on worker {value.worker}, partition "
                f"{value.partition}: {value.message}."
            )
        if self.scheme.name in _SEPARATE:
            support = self.scheme.supports[piece.worker][piece.start : piece.stop]
            for j, partial in zip(support, value, strict=True):
                self.partials.setdefault(j, partial)
        self.returns.setdefault(piece.worker, value)

    @property
    def is_decodable(self) -> bool:
        """Whether the returns so far suffice."""
        if self.scheme.name in _SEPARATE:
            return len(self.partials) == self.scheme.n
        return self.scheme.is_decodable(self.returns)

    @property
    def progress(self) -> tuple[int, int]:
        """``(received, needed)``: partitions (replication, partial) or returns."""
        if self.scheme.name in _SEPARATE:
            return len(self.partials), self.scheme.n
        return len(self.returns), self.scheme.recovery_threshold

    def decode(self) -> np.ndarray:
        """Return the full gradient (the rescaled estimate for ``"ignore"``)."""
        scheme = self.scheme
        if not self.is_decodable:
            received, needed = self.progress
            raise NotEnoughResultsError(
                f"received {received} of the {needed} results needed for the "
                f"{scheme.name} gradient (from workers {sorted(self.returns)})."
            )
        if scheme.name in _SEPARATE:
            return np.sum([self.partials[j] for j in range(scheme.n)], axis=0)
        if scheme.name == "ignore":
            total = np.sum([self.returns[i] for i in sorted(self.returns)], axis=0)
            rows = sum(scheme.partition_rows[i] for i in self.returns)
            return total * (sum(scheme.partition_rows) / rows)
        return scheme.code.decode(self.returns)
