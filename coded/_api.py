"""The user API: ``coded_matmul`` and its frozen result.

``coded_matmul`` validates its inputs, builds the code, encodes (pure), hands the
encoded operands to the Dask runtime (``coded.runtime``, imported inside the
functions that run) and wraps what the runtime records in a :class:`MatmulResult`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from coded._injection import Stragglers
from coded._rng import RngLike
from coded._validation import check_finite_matrix, check_int, check_k_of_n, check_real
from coded.codes import Code

if TYPE_CHECKING:
    from distributed import Client

    from allocation import Allocation

__all__ = ["MatmulResult", "coded_matmul", "default_k"]

Scheme = Literal["mds", "polynomial", "replication", "uncoded", "speculative"]
SCHEMES: tuple[str, ...] = (
    "mds",
    "polynomial",
    "replication",
    "uncoded",
    "speculative",
)
_EMBEDDED_WORKERS = 4
STAGES = ("encode", "place", "compute", "wait", "decode", "release", "total")


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class MatmulResult:
    """The product of a distributed coded run and its record.

    Parameters
    ----------
    product : array
        ``A @ B`` (a vector when B is one; integers when computed over GF(p)).
    scheme : str
        The scheme's name (``"mds"``, ..., or the code's class name).
    n, k : int
        Workers used and the code's recovery threshold.
    call_id : str
        Identifier in every Dask key of the run (``coded-<call_id>-...``).
    finish_seconds : tuple of float, length n
        Seconds from submission until each worker's last piece arrived (NaN if
        none arrived before decoding).
    used_workers : tuple of int
        Workers whose pieces reached the decoder.
    failed_workers : tuple of int
        Workers whose tasks raised or whose Dask worker died.
    stage_seconds : mapping of str to float
        Wall-clock seconds per stage: ``encode``, ``place`` (scatter),
        ``compute`` (the longest real multiply inside a used task), ``wait``
        (submission until decodable), ``decode``, ``release`` (wake injected
        waits, cancel and release every key) and ``total`` (the whole call,
        without starting or closing an embedded cluster).
    cancelled_tasks : int
        Tasks (copies included) still pending or running when decoding became
        possible; they were cancelled.
    backup_tasks : int
        Speculative copies launched (``scheme="speculative"``).
    overlap_seconds : float
        How long this call's tasks queued behind still-running tasks of earlier
        calls (Dask cannot interrupt a running task).
    """

    product: Any
    scheme: str
    n: int
    k: int
    call_id: str
    finish_seconds: tuple[float, ...]
    used_workers: tuple[int, ...]
    failed_workers: tuple[int, ...]
    stage_seconds: Mapping[str, float]
    cancelled_tasks: int
    backup_tasks: int
    overlap_seconds: float

    def __post_init__(self) -> None:
        stages = MappingProxyType(dict(self.stage_seconds))
        object.__setattr__(self, "stage_seconds", stages)
        if isinstance(self.product, np.ndarray):
            product = self.product.view()
            product.setflags(write=False)
            object.__setattr__(self, "product", product)

    @property
    def latency_seconds(self) -> float:
        """End-to-end seconds of the call (``stage_seconds["total"]``)."""
        return self.stage_seconds["total"]


def default_k(scheme: str, n: int) -> int:
    """Return the default recovery threshold of `scheme` on `n` workers.

    Parameters
    ----------
    scheme : str
        ``"mds"``, ``"polynomial"``, ``"uncoded"`` or ``"speculative"``
        (replication is set by its number of copies ``r`` instead).
    n : int
        Number of workers, ``>= 1``.

    Returns
    -------
    int
        ``max(1, floor(3 n / 4))`` for MDS and polynomial codes (a quarter of
        the workers may straggle; (8, 6) for n = 8), ``n`` for uncoded and
        speculative.

    Examples
    --------
    >>> default_k("mds", 8), default_k("polynomial", 4), default_k("uncoded", 8)
    (6, 3, 8)
    """
    n = check_int(n, "n", min_value=1)
    if scheme in ("mds", "polynomial"):
        return max(1, 3 * n // 4)
    return n


def _split_threshold(k: int, is_vector: bool) -> tuple[int, int]:
    """Return ``(p_a, p_b)`` with ``p_a p_b = k`` and ``p_b <= p_a`` maximal."""
    if is_vector:
        return k, 1
    p_b = max(d for d in range(1, math.isqrt(k) + 1) if k % d == 0)
    return k // p_b, p_b


def _build_code(
    scheme: str, n: int, k: int | None, r: int | None, field: Any, is_vector: bool
) -> Code:
    from coded import codes

    if isinstance(field, str) and field == "exact":  # one code per CRT prime
        return codes.ExactCode(lambda p: _build_code(scheme, n, k, r, p, is_vector))
    if scheme == "replication":
        if k is not None:
            raise ValueError(
                f"`k` is fixed by `r` for replication (k = n - r + 1), got k={k}; "
                "pass `r` instead."
            )
        r = check_int(2 if r is None else r, "r", min_value=1, max_value=n)
        return codes.ReplicationCode(n, r, field=field)
    if r is not None:
        raise ValueError(f"`r` is only used by scheme='replication', got r={r}.")
    k, n = check_k_of_n(default_k(scheme, n) if k is None else k, n)
    if scheme == "mds":
        return codes.MDSCode(n, k, field=field)
    if scheme == "polynomial":
        p_a, p_b = _split_threshold(k, is_vector)
        return codes.PolynomialCode(n, p_a, p_b, field=field)
    if k != n:
        raise ValueError(f"`k` must equal n for scheme={scheme!r}, got k={k}, n={n}.")
    return codes.UncodedCode(n, field=field)


def _column_share(right: Any, B: Any) -> float:
    """Fraction of B's columns a worker's right operand holds (1 for a vector)."""
    if np.ndim(B) == 1 or np.ndim(right) == 1:
        return 1.0
    return np.shape(right)[1] / np.shape(B)[1]


def _allocation_plan(
    allocation: Any,
    scheme: str,
    n: int | None,
    k: int | None,
    r: int | None,
    A: Any,
    field: Any,
) -> tuple[Code, list[list[tuple[int, int]]]]:
    """Return the row-MDS code and the batch chains of `allocation`."""
    from allocation import Allocation
    from coded.codes import RowMDSCode

    if not isinstance(allocation, Allocation):
        raise TypeError(
            "`allocation` must be an allocation.Allocation or None, got "
            f"{type(allocation).__name__}."
        )
    if scheme != "mds" or k is not None or r is not None:
        raise ValueError(
            "`allocation` fixes the code (a row-MDS code of its loads): leave "
            f"scheme='mds', k=None and r=None, got scheme={scheme!r}, k={k}, r={r}."
        )
    if n is not None and n != allocation.n:
        raise ValueError(f"`n` must equal allocation.n={allocation.n}, got n={n}.")
    m = np.shape(A)[0]
    if m != allocation.m:
        raise ValueError(
            f"`A` must have allocation.m={allocation.m} rows, got A.shape[0]={m}."
        )
    code = RowMDSCode([int(load) for load in allocation.loads], m, field=field)
    batches = [
        [(j * size, (j + 1) * size) for j in range(int(count))] if size else []
        for size, count in zip(
            allocation.batch_rows.tolist(), allocation.batches.tolist(), strict=True
        )
    ]
    return code, batches


def _check_operands(A: Any, B: Any) -> None:
    A = check_finite_matrix(A, "A", ndim=2)
    B = check_finite_matrix(B, "B", ndim=(1, 2))
    if A.shape[1] != B.shape[0]:
        raise ValueError(
            "`A` and `B` must have matching inner dimensions for A @ B, got "
            f"A.shape={A.shape} and B.shape={B.shape}."
        )


def _resolve_scheme(scheme: object, n: int | None, k: int | None) -> str:
    if isinstance(scheme, Code):
        if n is not None and n != scheme.n:
            raise ValueError(f"`n` must equal code.n={scheme.n}, got n={n}.")
        if k is not None and k != scheme.recovery_threshold:
            raise ValueError(
                f"`k` must equal the code's recovery threshold "
                f"{scheme.recovery_threshold}, got k={k}."
            )
        return type(scheme).__name__
    if not isinstance(scheme, str):
        raise TypeError(
            f"`scheme` must be a str or a coded Code, got {type(scheme).__name__}."
        )
    if scheme not in SCHEMES:
        raise ValueError(f"`scheme` must be one of {SCHEMES}, got scheme={scheme!r}.")
    return scheme


def _resolve_workers(scheme: object, n: int | None, k: int | None) -> tuple[str, Any]:
    """Return the scheme's name and the checked `n` (None if not given)."""
    name = _resolve_scheme(scheme, n, k)
    if n is not None:
        n = check_int(n, "n", min_value=1)
        if k is not None:
            check_k_of_n(k, n)
    return name, n


def _given_code(
    scheme: object,
    name: str,
    allocation: Any,
    n: Any,
    k: Any,
    r: Any,
    A: Any,
    field: Any,
) -> tuple[Code | None, Any, str]:
    """Return the code and batches fixed by `scheme` or `allocation` (else None)."""
    if allocation is None:
        return (scheme if isinstance(scheme, Code) else None), None, name
    code, batches = _allocation_plan(allocation, name, n, k, r, A, field)
    return code, batches, f"allocation ({allocation.solver})"


def _whole_batches(lefts: Any) -> list[list[tuple[int, int]]]:
    """One batch per worker: all of its coded rows."""
    return [[(0, int(np.shape(left)[0]))] for left in lefts]


def coded_matmul(
    A: Any,
    B: Any,
    *,
    scheme: Scheme | Code = "mds",
    n: int | None = None,
    k: int | None = None,
    r: int | None = None,
    field: Any = None,
    client: Client | None = None,
    address: str | None = None,
    stragglers: Stragglers | None = None,
    timeout: float = 60.0,
    rng: RngLike = None,
    allocation: Allocation | None = None,
) -> MatmulResult:
    r"""Compute ``A @ B`` on Dask workers, decoding from whichever finish first.

    Parameters
    ----------
    A : array_like, shape (m, d), or PlacedOperand
        Left operand (real, or integers when `field` is given), or A encoded and
        placed once by :func:`coded.place_operand`: then only B is shipped, and
        `scheme`, `n`, `k`, `r`, `field`, `allocation` and `address` must be left
        at their defaults (`client`: None or the handle's).
    B : array_like, shape (d,) or (d, c)
        Right operand; a vector gives a vector.
    scheme : {"mds", "polynomial", "replication", "uncoded", "speculative"} or Code
        The coding scheme, or a code object from ``coded`` (then `n` and `k`
        must be None or agree with it). ``"speculative"`` runs the uncoded
        split with Spark-style backup tasks: once 75% of the tasks are done,
        every task running longer than 1.5x their median duration gets a copy
        on an idle worker and the first copy to finish is used.
    n : int, optional
        Number of workers to use, ``<=`` the cluster's; defaults to all of them
        (4 for the embedded cluster).
    k : int, optional
        Recovery threshold of the MDS and polynomial schemes, ``1 <= k <= n``;
        defaults to :func:`default_k` (``floor(3n/4)``; ``n`` for uncoded and
        speculative). The polynomial code splits it as ``k = p_a p_b``
        (``p_a >= p_b``, as square as possible; ``p_b = 1`` when B is a vector).
    r : int, optional
        Copies of each block for ``scheme="replication"`` (``r`` divides ``n``;
        default 2). Its recovery threshold is ``n - r + 1``.
    field : int or galois field class, optional
        Prime ``p`` (or ``galois.GF(p)``) for an exact product over GF(p);
        integer operands. ``"exact"``: exact integer product of any size
        (:class:`coded.ExactCode`: the scheme over several primes, combined by
        the CRT; int64 result, or Python ints beyond int64).
    client : distributed.Client, optional
        A running client. Give at most one of `client` and `address`; with
        neither, an embedded ``LocalCluster`` is started and closed for the call
        (use :class:`coded.LocalCodedCluster` to keep one for many calls).
    address : str, optional
        Scheduler address of a running cluster, e.g. ``"tcp://127.0.0.1:8786"``.
    stragglers : Stragglers, optional
        Injected delays and failures, applied inside the tasks.
    timeout : float
        Seconds to wait for a decodable set of results, ``> 0``.
    rng : Generator, SeedSequence, int or None
        Draws the injected delays.
    allocation : allocation.Allocation, optional
        Unequal loads and batches (HCMM, Kim et al., BPCC): A's ``m`` rows
        (``m = allocation.m``) are encoded with
        ``RowMDSCode(allocation.loads, m)`` and worker ``i`` streams its load
        back in ``allocation.batches[i]`` batches, each a task chained after the
        previous one on the same worker; any ``m`` returned rows decode.
        `scheme` must then be ``"mds"`` and `k` None.

    Returns
    -------
    MatmulResult
        The product and the run's record.

    Raises
    ------
    NotEnoughResultsError
        Failures left no decodable set (raised as soon as that is certain), or the
        timeout expired first.
    ValueError, TypeError
        Bad operands (shape mismatch, NaN), ``k > n``, more workers requested
        than the cluster has, a closed client.

    Notes
    -----
    An (n, k) MDS code finishes when the k-th fastest worker does; for i.i.d.
    shifted-exponential workers (Lee et al. [1]_) its expected latency is

    .. math:: \mathbb{E}[T] = \frac{1}{k}\Big(a + \frac{H_n - H_{n-k}}{\mu}\Big)

    in job units, against :math:`\frac{1}{n}(a + H_n / \mu)` uncoded.

    References
    ----------
    .. [1] K. Lee, M. Lam, R. Pedarsani, D. Papailiopoulos, K. Ramchandran,
       "Speeding Up Distributed Machine Learning Using Codes", IEEE Trans. Inf.
       Theory 64(3), 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from coded import coded_matmul
    >>> A = np.arange(12.0).reshape(4, 3)
    >>> result = coded_matmul(A, np.ones(3), scheme="mds", n=3, k=2)
    >>> np.allclose(result.product, A @ np.ones(3)), result.k
    (True, 2)
    """
    from coded.runtime import client_for_call, worker_addresses

    name, n = _resolve_workers(scheme, n, k)
    timeout = check_real(timeout, "timeout", min_value=0.0, strict_min=True)
    if stragglers is not None and not isinstance(stragglers, Stragglers):
        raise TypeError(
            "`stragglers` must be a coded.Stragglers or None, got "
            f"{type(stragglers).__name__}."
        )
    if _is_placed(A):
        fixed = {"scheme": scheme, "n": n, "k": k, "r": r, "field": field}
        return _matmul_placed(
            A,
            B,
            fixed={**fixed, "allocation": allocation, "address": address},
            client=client,
            stragglers=stragglers,
            rng=rng,
            timeout=timeout,
        )
    _check_operands(A, B)
    code, batches, name = _given_code(scheme, name, allocation, n, k, r, A, field)
    code_n = None if code is None else code.n
    with client_for_call(client, address, n or code_n or _EMBEDDED_WORKERS) as own:
        began = time.perf_counter()
        addresses = worker_addresses(own, n or code_n)
        n = len(addresses)
        if code is None:
            code = _build_code(name, n, k, r, field, np.ndim(B) == 1)
        encode_began = time.perf_counter()
        encoded = code.encode_operands(A, B)
        encode_seconds = time.perf_counter() - encode_began
        if batches is None:
            batches = _whole_batches(encoded.lefts)
        return run_encoded(
            own,
            code,
            encoded,
            B,
            name=name,
            addresses=addresses,
            batches=batches,
            began=began,
            encode_seconds=encode_seconds,
            stragglers=stragglers,
            rng=rng,
            timeout=timeout,
        )


def _is_placed(A: Any) -> bool:
    from coded._placed import PlacedOperand

    return isinstance(A, PlacedOperand)


def _matmul_placed(A: Any, B: Any, **kwargs: Any) -> MatmulResult:
    from coded._placed import matmul_placed

    return matmul_placed(A, B, **kwargs)


def run_encoded(
    client: Client,
    code: Code,
    encoded: Any,
    B: Any,
    *,
    name: str,
    addresses: list[str],
    batches: Any,
    began: float,
    encode_seconds: float,
    stragglers: Stragglers | None,
    rng: RngLike,
    timeout: float,
    placed_lefts: Any = None,
) -> MatmulResult:
    """Run encoded operands on `addresses`, decode, and record the call."""
    from coded.runtime import BackupPolicy, execute

    n = len(addresses)
    faults = None if stragglers is None else stragglers.sample(n, rng=rng)
    weights = [_column_share(encoded.right(i), B) for i in range(n)]
    run = execute(
        client,
        code,
        encoded,
        addresses=addresses,
        batches=batches,
        faults=faults,
        timeout=timeout,
        policy=BackupPolicy() if name == "speculative" else None,
        row_weights=weights,
        placed_lefts=placed_lefts,
    )
    total = time.perf_counter() - began
    stages = {"encode": encode_seconds, **run.stage_seconds, "total": total}
    return MatmulResult(
        product=run.product,
        scheme=name,
        n=n,
        k=int(code.recovery_threshold),
        call_id=run.call_id,
        finish_seconds=run.finish_seconds,
        used_workers=run.used_workers,
        failed_workers=run.failed_workers,
        stage_seconds={s: stages[s] for s in STAGES},
        cancelled_tasks=run.cancelled_tasks,
        backup_tasks=run.backup_tasks,
        overlap_seconds=run.overlap_seconds,
    )
