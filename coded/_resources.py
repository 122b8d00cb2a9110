"""Memory estimates of a coded product, checked before anything is encoded.

Pure: the estimate follows from the code and the operands' shapes; the runtime
supplies the limits (each Dask worker's ``memory_limit``, the client's available
RAM). A call that cannot fit raises :class:`~coded.errors.ResourceError` with the
estimate, instead of letting the operating system kill a process mid-run.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from coded.codes import Code
from coded.errors import ResourceError

__all__ = [
    "WORKER_FRACTION",
    "MemoryEstimate",
    "check_memory",
    "estimate_memory",
    "share_rows",
]

WORKER_FRACTION = 0.8
"""Share of a worker's ``memory_limit`` a call may fill (Dask pauses a worker at
80% of it by default, and kills it at 95%)."""

_ITEMSIZE = 8  # float64 and int64 residues
_SPARSE_ENTRY = 1.5  # a CSR nonzero: 8-byte value and 4-byte column index


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryEstimate:
    """Bytes a coded product needs (upper estimates, 8-byte entries).

    Parameters
    ----------
    client_bytes : int
        On the client: A's conversion, every coded share, the decode buffer and
        the product.
    worker_bytes : tuple of int
        On each code worker: its coded share, the right operand and its result.
    """

    client_bytes: int
    worker_bytes: tuple[int, ...]


def share_rows(code: Code, m: int) -> tuple[int, ...]:
    """Rows of A's coded share on each worker of `code` (A has `m` rows).

    A unit code splits A into K blocks of ``ceil(m / K)`` rows and gives worker
    i its load of coded blocks; other codes give each worker ``ceil(m / p_a)``
    rows (p_a: A's blocks; the recovery threshold if the code has no ``p_a``).
    """
    loads = getattr(code, "loads", None)
    if getattr(code, "sparse_generator", False) and loads is not None:
        return tuple(int(load) for load in loads)
    offsets = getattr(code, "unit_offsets", None)
    generator = getattr(code, "generator", None)
    if not hasattr(code, "p_a") and offsets is not None and generator is not None:
        rows = math.ceil(m / np.shape(generator)[1])
        return tuple(int(b - a) * rows for a, b in itertools.pairwise(offsets))
    blocks = int(getattr(code, "p_a", code.recovery_threshold))
    return (math.ceil(m / blocks),) * int(code.n)


def estimate_memory(
    code: Code, m: int, d: int, c: int, *, nnz: int | None = None
) -> MemoryEstimate:
    """Estimate the memory of ``A @ B`` (A: m x d, B: d x c) coded with `code`.

    Parameters
    ----------
    code : Code
        The scheme.
    m, d, c : int
        Shapes: A is ``(m, d)`` and B ``(d, c)`` (``c = 1`` for a vector).
    nnz : int, optional
        Nonzeros of a sparse (CSR) A: A and its shares are then counted by
        nonzeros (value and column index), a coded row holding the nonzeros of
        the source rows it sums (``code.distribution.mean`` of them for a
        rateless code, else every row of A).

    Returns
    -------
    MemoryEstimate

    Examples
    --------
    >>> from coded.codes import MDSCode
    >>> estimate = estimate_memory(MDSCode(4, 2), m=1000, d=100, c=1)
    >>> estimate.worker_bytes[0], estimate.client_bytes
    (404800, 2424000)
    """
    rows = share_rows(code, m)
    coded = sum(rows)
    row_entries = float(d) if nnz is None else _SPARSE_ENTRY * _sparse_row(code, m, nnz)
    source = m * d if nnz is None else _SPARSE_ENTRY * nnz
    client = (source + coded * row_entries + coded * c + m * c) * _ITEMSIZE
    workers = tuple(int((r * row_entries + d * c + r * c) * _ITEMSIZE) for r in rows)
    return MemoryEstimate(client_bytes=int(client), worker_bytes=workers)


def _sparse_row(code: Code, m: int, nnz: int) -> float:
    """Return the expected nonzeros of a coded row of a sparse A with `nnz` nonzeros.

    A source row (nnz / m) for the codes that copy rows; the sum of about the
    mean degree of them for an LT code.
    """
    distribution = getattr(code, "distribution", None)
    degree = 1 if distribution is None else min(m, distribution.mean)
    return min(degree * nnz / max(m, 1), nnz)


def _mib(count: float) -> str:
    return f"{count / 2**20:,.1f} MiB"


def check_memory(
    estimate: MemoryEstimate,
    *,
    client_available: int | None,
    worker_limits: Sequence[int | None] | Mapping[int, int | None],
) -> None:
    """Raise `ResourceError` if `estimate` exceeds the client's or a worker's memory.

    Parameters
    ----------
    estimate : MemoryEstimate
        From :func:`estimate_memory`.
    client_available : int, optional
        Bytes of RAM available to the client (None: unknown, not checked).
    worker_limits : sequence or mapping of int or None
        Each code worker's Dask ``memory_limit`` in bytes (0 or None: no limit).
        A worker may fill :data:`WORKER_FRACTION` of it.

    Examples
    --------
    >>> check_memory(MemoryEstimate(client_bytes=10, worker_bytes=(2**30,)),
    ...              client_available=None, worker_limits=[2**30])
    Traceback (most recent call last):
    ...
    coded.errors.ResourceError: worker 0 needs about 1,024.0 MiB ...
    """
    if client_available is not None and estimate.client_bytes > client_available:
        raise ResourceError(
            f"the client needs about {_mib(estimate.client_bytes)} to encode and "
            f"decode, but only {_mib(client_available)} of RAM is available; use "
            "fewer rows per call, more workers or place_operand with a smaller A."
        )
    limits = dict(
        worker_limits.items()
        if isinstance(worker_limits, Mapping)
        else enumerate(worker_limits)
    )
    for i, need in enumerate(estimate.worker_bytes):
        limit = limits.get(i)
        if limit and need > WORKER_FRACTION * limit:
            raise ResourceError(
                f"worker {i} needs about {_mib(need)} for its coded share, right "
                f"operand and result, above {WORKER_FRACTION:.0%} of its "
                f"memory_limit of {_mib(limit)} (where Dask pauses it); use more "
                "workers, a smaller A or workers with more memory."
            )
