"""What ``coded_matmul`` and ``place_operand`` share: choose the code, run, record.

This module sits below both API modules (``coded._api`` and ``coded._placed``) and
imports neither: it resolves the scheme and its workers, builds the code (or takes
it from an allocation), holds the execution options of a call, and hands encoded
operands to the runtime (``coded.runtime``, imported inside the functions that run),
whose :class:`~coded.MatmulHandle` returns the call's :class:`~coded.MatmulResult`.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import sys
import time
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from coded._result import MatmulResult
from coded.codes import Code, EncodedOperands
from coded.injection import Stragglers
from theory.rng import RngLike
from theory.validation import (
    check_finite_matrix,
    check_int,
    check_k_of_n,
    check_real,
    is_sparse,
    replace_options,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from distributed import Client

    from coded.runtime import MatmulHandle

__all__ = [
    "EMBEDDED_WORKERS",
    "SCHEMES",
    "STREAM_BATCHES",
    "CallPlan",
    "ExecutionOptions",
    "Scheme",
    "build_code",
    "check_operands",
    "check_resources",
    "default_k",
    "execution_options",
    "given_code",
    "is_dask_array",
    "piece_check",
    "prime_of",
    "product_layout",
    "resolve_workers",
    "run_encoded",
    "run_encoded_async",
    "start_encoded",
    "start_encoded_async",
    "stream_batches",
    "whole_batches",
]

Scheme = Literal[
    "mds", "polynomial", "replication", "uncoded", "speculative", "rateless"
]
SCHEMES: tuple[str, ...] = (
    "mds",
    "polynomial",
    "replication",
    "uncoded",
    "speculative",
    "rateless",
)
SPARSE_SCHEMES = ("rateless", "replication", "uncoded", "speculative")
"""Schemes that take a scipy.sparse A: their shares are sparse rows of it."""
STREAM_BATCHES = 8
"""Batches per worker of a rateless call: a straggler's finished ones count."""
EMBEDDED_WORKERS = 4
_QUERY_LIMITS_BYTES = 16 * 2**20  # smaller shares fit any worker: skip the query


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecutionOptions:
    """How a coded product runs: everything but the code and the cluster.

    Pass one as ``coded_matmul(..., options=ExecutionOptions(...))``, or give its
    fields as keywords (``coded_matmul(A, B, stragglers=..., rng=1)``).

    Parameters
    ----------
    stragglers : Stragglers, optional
        Injected delays and failures, applied inside the tasks.
    timeout : float
        Seconds to wait for a decodable set of results, ``> 0``.
    rng : Generator, SeedSequence, int or None
        Draws the injected delays.
    output : {"numpy", "dask"}
        ``"numpy"``: the workers' results come to the client, which decodes the
        product. ``"dask"``: the product is decoded by a task on a worker and
        returned as a ``dask.array`` (row chunks, computed on the cluster) that
        never passes through the client, so products chain
        (``coded_matmul(A, coded_matmul(B, x, output="dask").product)``);
        ``int64`` residues or signed integers over GF(p). The record's
        ``compute`` stage is then NaN (the tasks' timings stay on the workers).
        Codes whose decodability depends on the values (``field="exact"``)
        decode on the client only; a rateless call tracks the arrived rows'
        structure on the client and decodes their values on a worker.
    verify : {"detect", "correct", "off"}
        Check every worker's result before it is decoded, with a secret random
        projection of its coded rows (a Freivalds check: exact over GF(p),
        against the rounding bound over the reals; no extra result, no extra
        wait; docs/theory/verification.md). ``"detect"`` (default): a wrong
        result raises :class:`~coded.InconsistentResultsError` naming its
        worker, never a product. ``"correct"``: the wrong worker is dropped like
        a lost one and the product decoded from the others (up to the code's
        tolerance); :attr:`MatmulResult.suspect_workers` names it. Either way a
        call whose results all pass decodes from the fastest ``k``; a spare
        result is waited for only once one has failed.
        :attr:`MatmulResult.detection_floor` states the smallest error the
        checks were certain to catch. With
        ``output="dask"`` each result is projected on the worker that holds it
        (only ``r . Y`` travels). Where no check exists (codes whose results
        are not coded rows times B: ``field="exact"``, gradient codes)
        ``"detect"`` runs unchecked and says so in
        :attr:`MatmulResult.verification`; ``"correct"`` raises.
    check : {"auto", "freivalds", "redundancy"}
        How `verify` checks. ``"freivalds"`` (and ``"auto"``, the default): the
        projections above, each result on its own as it arrives.
        ``"redundancy"``: the results against each other (row codes,
        ``output="numpy"``): the decoder waits for one result beyond a
        decodable set (two to correct) and decodes only if all agree with one
        product; no secret is drawn. Its detection floor over the reals is
        lower (about 3000 unit roundoffs of the result, where a Freivalds check
        of a 400-row batch stops near 2^-36), but it waits for spare results in
        every call; it warns when that means every worker (``n - k`` equal to
        the spares it needs). ``verify="correct"`` needs ``n - k >= 1`` spare
        workers with Freivalds checks, ``>= 2`` with redundancy (a named
        ``ValueError`` otherwise).
    transport : {"auto", "resident", "grouped", "tasks"}
        How a call on a placed A reaches its workers. ``"resident"``: one
        message per worker to the server that holds its share (registered by
        :func:`coded.place_operand`); the results stream back without the
        scheduler (``output="numpy"``, B in memory). ``"grouped"``: for a
        :class:`~coded.codes.HierarchicalCode`, one message per outer group to
        a member's server (its leader), which gathers and decodes its group
        and sends one answer on; the client decodes only the outer code.
        ``"tasks"``: pinned tasks through the scheduler, as every fresh call
        runs. ``"auto"`` (default): resident wherever it applies.
        :attr:`MatmulResult.transport` says which ran (docs/guide/cluster.md).

    Examples
    --------
    >>> from coded import ExecutionOptions
    >>> ExecutionOptions(timeout=5, rng=0)  # doctest: +NORMALIZE_WHITESPACE
    ExecutionOptions(stragglers=None, timeout=5.0, rng=0, output='numpy',
                     verify='detect', check='auto', transport='auto')
    """

    stragglers: Stragglers | None = None
    timeout: float = 60.0
    rng: RngLike = None
    output: Literal["numpy", "dask"] = "numpy"
    verify: Literal["detect", "correct", "off"] = "detect"
    check: Literal["auto", "freivalds", "redundancy"] = "auto"
    transport: Literal["auto", "resident", "grouped", "tasks"] = "auto"

    def __post_init__(self) -> None:
        timeout = check_real(self.timeout, "timeout", min_value=0.0, strict_min=True)
        object.__setattr__(self, "timeout", timeout)
        if self.stragglers is not None and not isinstance(self.stragglers, Stragglers):
            raise TypeError(
                "`stragglers` must be a coded.Stragglers or None, got "
                f"{type(self.stragglers).__name__}."
            )
        if self.output not in ("numpy", "dask"):
            raise ValueError(
                f"`output` must be 'numpy' or 'dask', got output={self.output!r}."
            )
        if self.verify not in ("detect", "correct", "off"):
            raise ValueError(
                "`verify` must be 'detect', 'correct' or 'off', got "
                f"verify={self.verify!r}."
            )
        if self.check not in ("auto", "freivalds", "redundancy"):
            raise ValueError(
                "`check` must be 'auto', 'freivalds' or 'redundancy', got "
                f"check={self.check!r}."
            )
        if self.transport not in ("auto", "resident", "grouped", "tasks"):
            raise ValueError(
                "`transport` must be 'auto', 'resident', 'grouped' or 'tasks', "
                f"got transport={self.transport!r}."
            )
        if self.check == "redundancy" and self.output != "numpy":
            raise ValueError(
                "`check='redundancy'` compares the results on the client; use "
                "output='numpy' (or check='freivalds', which checks "
                "output='dask' on the workers)."
            )


def execution_options(
    options: ExecutionOptions | None, fields: Mapping[str, Any], caller: str
) -> ExecutionOptions:
    """Return `options` (default: the defaults) updated with keyword `fields`."""
    return replace_options(options, ExecutionOptions, fields, caller)


def is_dask_array(value: object) -> bool:
    """Whether `value` is a ``dask.array.Array`` (without importing dask)."""
    array = sys.modules.get("dask.array")
    return array is not None and isinstance(value, array.Array)


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


def build_code(
    scheme: str,
    n: int,
    k: int | None,
    r: int | None,
    field: Any,
    is_vector: bool,
    *,
    m: int | None = None,
) -> Code:
    """Return the code of scheme `scheme` on `n` workers (defaults filled in).

    `m` (A's rows) is needed by ``scheme="rateless"`` only.
    """
    from coded import codes

    if scheme == "rateless":
        return _rateless_code(n, k, r, field, m)
    if isinstance(field, str) and field == "exact":  # one code per CRT prime
        return codes.ExactCode(lambda p: build_code(scheme, n, k, r, p, is_vector))
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


def _rateless_code(n: int, k: Any, r: Any, field: Any, m: int | None) -> Code:
    from coded.codes import LTCode

    if k is not None or r is not None or field is not None:
        raise ValueError(
            "scheme='rateless' has no `k`, `r` or `field` (an LT code over the "
            f"reals decodes from any rows of full rank), got k={k}, r={r}, "
            f"field={field!r}."
        )
    if m is None:
        raise ValueError("scheme='rateless' needs `m`, the rows of A.")
    return LTCode(n, m)


def stream_batches(lefts: Any) -> list[list[tuple[int, int]]]:
    """Up to :data:`STREAM_BATCHES` consecutive row batches per worker."""
    chains = []
    for left in lefts:
        bounds = np.linspace(0, np.shape(left)[0], STREAM_BATCHES + 1).astype(int)
        chains.append(
            [(int(a), int(b)) for a, b in itertools.pairwise(bounds) if b > a]
        )
    return chains


def _column_shares(encoded: EncodedOperands, B: Any, n: int) -> list[float]:
    """Per worker, the fraction of B's columns its right operand holds."""
    if encoded.rights is None:  # a row code: every worker multiplies one B
        return [_column_share(encoded.shared_right, B)] * n
    return [_column_share(encoded.right(i), B) for i in range(n)]


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
    m: int,
    field: Any,
) -> tuple[Code, list[list[tuple[int, int]]]]:
    """Return the row-MDS code and the batch chains of `allocation` (A has m rows)."""
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
    if m != allocation.m:
        raise ValueError(
            f"`A` must have allocation.m={allocation.m} rows, got A.shape[0]={m}."
        )
    code = RowMDSCode(
        [int(load) for load in allocation.loads],
        m,
        field=field,
        block_rows=allocation.block_rows,
    )
    batches = [
        [(j * size, (j + 1) * size) for j in range(int(count))] if size else []
        for size, count in zip(
            allocation.batch_rows.tolist(), allocation.batches.tolist(), strict=True
        )
    ]
    return code, batches


def check_operands(A: Any, B: Any, scheme: str = "mds") -> None:
    """Check that A (2-D) and B (1-D or 2-D) are finite and conform for A @ B.

    A scipy.sparse A is accepted by the schemes whose shares stay sparse
    (:data:`SPARSE_SCHEMES`; its format and values are checked by the encoding).
    """
    if is_sparse(A):
        if scheme not in SPARSE_SCHEMES:
            raise TypeError(
                f"`A` is a scipy.sparse matrix ({type(A).__name__}); scheme="
                f"{scheme!r} gives dense shares of it: use scheme='rateless' "
                "(whose shares of a CSR A stay sparse; 'replication' and "
                "'uncoded' keep it sparse too) or pass `A.toarray()`."
            )
        shape = A.shape
    else:
        shape = check_finite_matrix(A, "A", ndim=2).shape
    B = check_finite_matrix(B, "B", ndim=(1, 2))
    if shape[1] != B.shape[0]:
        raise ValueError(
            "`A` and `B` must have matching inner dimensions for A @ B, got "
            f"A.shape={shape} and B.shape={B.shape}."
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


def resolve_workers(scheme: object, n: int | None, k: int | None) -> tuple[str, Any]:
    """Return the scheme's name and the checked `n` (None if not given)."""
    name = _resolve_scheme(scheme, n, k)
    if n is not None:
        n = check_int(n, "n", min_value=1)
        if k is not None:
            check_k_of_n(k, n)
    return name, n


def given_code(
    scheme: object,
    name: str,
    allocation: Any,
    n: Any,
    k: Any,
    r: Any,
    m: int,
    field: Any,
) -> tuple[Code | None, Any, str]:
    """Return the code and batches fixed by `scheme` or `allocation` (else None)."""
    if allocation is None:
        return (scheme if isinstance(scheme, Code) else None), None, name
    code, batches = _allocation_plan(allocation, name, n, k, r, m, field)
    return code, batches, f"allocation ({allocation.solver})"


def check_resources(
    client: Client,
    code: Code,
    A_shape: tuple[int, ...],
    B_shape: tuple[int, ...],
    addresses: list[str],
    nnz: int | None = None,
) -> None:
    """Raise `ResourceError` before encoding if the call cannot fit in memory.

    The client's estimate is checked against its available RAM; the workers'
    against their Dask ``memory_limit`` (queried only when a share is large).
    `nnz`: the nonzeros of a sparse A (counted instead of its shape).
    """
    import psutil

    from coded._resources import check_memory, estimate_memory
    from coded.runtime import memory_limits

    m, d = A_shape
    c = B_shape[1] if len(B_shape) == 2 else 1
    estimate = estimate_memory(code, m, d, c, nnz=nnz)
    worth_asking = max(estimate.worker_bytes, default=0) > _QUERY_LIMITS_BYTES
    check_memory(
        estimate,
        client_available=psutil.virtual_memory().available,
        worker_limits=memory_limits(client, addresses) if worth_asking else [],
    )


def whole_batches(lefts: Any) -> list[list[tuple[int, int]]]:
    """One batch per worker: all of its coded rows."""
    return [[(0, int(np.shape(left)[0]))] for left in lefts]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class CallPlan:
    """One call, encoded and ready to run: what its entry point hands the runtime.

    Built once by the entry point (``coded_matmul``, a placement's call) and
    carried whole to :func:`start_encoded_async`, which adds the call's checks
    and faults and starts it on its transport.

    Parameters
    ----------
    code : Code
        The code that encoded the operands.
    encoded : EncodedOperands
        Its encoding (a placement's: A's shares and this call's B).
    B : array
        The right operand as given (its columns weigh the injected durations).
    name : str
        The scheme's name in the record and the Dask keys.
    addresses : list of str
        The Dask worker of each code worker.
    batches : sequence of sequences of (int, int)
        Row ranges of each worker's batch chain.
    began : float
        ``time.perf_counter()`` at the start of the call.
    encode_seconds : float
        Seconds spent encoding before the run.
    options : ExecutionOptions
        How the call runs.
    placed_lefts : sequence of Future, optional
        A placement's shares (None: a fresh call ships its own).
    remote_right : Future, optional
        The shared right operand, encoded on the cluster (``encoded`` then
        holds a stand-in of it).
    checks : ShareChecks, optional
        The placement's secret Freivalds projections (fresh calls draw their
        own from ``encoded.lefts``).
    suspects : dict of int to str, optional
        Where a placement records the workers whose pieces fail their checks.
    transport : {"tasks", "resident"}
        How the call reaches its workers (resident: a placement's servers).
    """

    code: Code
    encoded: Any
    B: Any
    name: str
    addresses: list[str]
    batches: Any
    began: float
    encode_seconds: float
    options: ExecutionOptions
    placed_lefts: Any = None
    remote_right: Any = None
    checks: Any = None
    suspects: dict[int, str] | None = None
    transport: str = "tasks"


def start_encoded(
    client: Client, plan: CallPlan, *, decide: bool = False
) -> MatmulHandle:
    """Start `plan` (:func:`start_encoded_async`, blocking client); its handle."""
    return client.sync(start_encoded_async, client, plan, decide=decide)


async def start_encoded_async(
    client: Client, plan: CallPlan, *, decide: bool = False
) -> MatmulHandle:
    """Start `plan` on its transport; return the product's handle.

    `decide`: on the resident transport, also wait here until the run decided
    (one hop to the event loop for a blocking call; the handle's ``result()``
    then only decodes).
    """
    from coded.runtime import BackupPolicy
    from coded.runtime.interface import CallSpec, submit_call_async

    code, encoded, options = plan.code, plan.encoded, plan.options
    addresses, batches, name = plan.addresses, plan.batches, plan.name
    placed_lefts, remote_right = plan.placed_lefts, plan.remote_right
    encode_seconds = plan.encode_seconds
    if options.transport in ("resident", "grouped") and placed_lefts is None:
        raise ValueError(
            f"`transport={options.transport!r}` serves the shares of a placed A "
            "(coded.place_operand); a fresh call runs as tasks: use "
            "transport='auto' or 'tasks'."
        )
    n = len(addresses)
    stragglers = options.stragglers
    faults = None if stragglers is None else stragglers.sample(n, rng=options.rng)
    weights = _column_shares(encoded, plan.B, n)
    layout = None if options.output == "numpy" else product_layout(code, encoded)
    drawn = time.perf_counter()
    redundancy = "off"
    check_name = resolved_check(code, encoded, options)
    _check_correctable(code, check_name, options.verify)
    if check_name == "redundancy":
        redundancy = _redundancy(code, options.verify)
        check, verification = None, "off" if redundancy == "off" else "redundancy"
    else:
        check, verification = piece_check(
            code,
            encoded,
            batches,
            options.verify,
            checks=plan.checks,
            fresh=placed_lefts is None,
            suspects=plan.suspects,
        )
    if check is not None and remote_right is not None:  # B is on the cluster
        from coded.runtime.interface import evaluate_remote_async

        expected = await evaluate_remote_async(
            client, check.checks.expected, remote_right
        )
        check = dataclasses.replace(check, expected=expected)
    encode_seconds += time.perf_counter() - drawn  # a fresh call's checks
    if remote_right is not None:
        encoded = dataclasses.replace(encoded, shared_right=remote_right)
    spec = CallSpec(
        code=code,
        encoded=encoded,
        addresses=addresses,
        batches=batches,
        faults=faults,
        timeout=options.timeout,
        policy=BackupPolicy() if name == "speculative" else None,
        row_weights=weights,
        placed_lefts=placed_lefts,
        label=f"{name}-{n}-{code.recovery_threshold}",
        layout=layout,
        check=check,
        verify=options.verify,
        redundancy=redundancy,
        suspects=plan.suspects,
        scheme=name,
        verification=verification,
        began=plan.began,
        encode_seconds=encode_seconds,
        transport=plan.transport,
    )
    handle = await submit_call_async(client, spec)
    if decide and plan.transport != "tasks":  # the task path waits in its thread
        await handle.decide_async()
    return handle


def resolved_check(code: Code, encoded: Any, options: ExecutionOptions) -> str:
    """Return the check a call runs: `options.check`, with ``"auto"`` resolved.

    ``"auto"`` is ``"freivalds"``: each result is checked on its own as it
    arrives, so a call whose results all pass decodes from the fastest ``k``
    (``verify="correct"`` waits for a spare result only once one fails).
    Redundancy, asked for by name, waits for one or two results beyond a
    decodable set (docs/theory/verification.md).
    """
    return "freivalds" if options.check == "auto" else options.check


def _check_correctable(code: Code, check: str, verify: str) -> None:
    """Refuse ``verify="correct"`` when the code has no spare worker to correct with.

    A wrong result is corrected by decoding without it: a Freivalds check finds
    it alone, so one spare worker (``n - k >= 1``) suffices; comparing results
    locates one wrong worker among ``k + 2`` (``n - k >= 2``). A rateless code's
    threshold is the rows that arrive, not a count of workers: not checked here.
    """
    from coded.codes import LTCode

    if verify != "correct" or isinstance(code, LTCode):
        return
    n, k = int(code.n), int(code.recovery_threshold)
    if n <= k:
        raise ValueError(
            "`verify='correct'` decodes around a wrong result with a spare "
            f"worker's, and {type(code).__name__}(n={n}) has none: every one of "
            f"its n = k = {k} results is needed. Use a coded scheme with k < n "
            "(scheme='mds', whose default is k = floor(3n/4), or "
            "scheme='replication'), or verify='detect', which checks every result "
            "and raises InconsistentResultsError naming a wrong one."
        )
    if check == "redundancy" and n - k < 2:
        raise ValueError(
            "`check='redundancy'` locates a wrong result among k + 2 results, so "
            f"verify='correct' with it needs n - k >= 2 spare workers, got n={n}, "
            f"k={k} ({type(code).__name__}). Use check='freivalds' (one spare "
            f"suffices), {f'a smaller k (k <= {n - 2}), ' if n > 2 else ''}or more "
            "workers."
        )


def _redundancy(code: Code, verify: str) -> str:
    """Return the decoder's `verify` for ``check="redundancy"`` (named errors).

    Warns when the spare results it needs are all of the code's: the call then
    waits for every worker, its slowest included.
    """
    if verify != "off" and not code.supports_verify:
        raise ValueError(
            f"`check='redundancy'` needs a code that checks its results against "
            f"each other (MDS, replication, row-MDS), got {type(code).__name__}; "
            "use check='freivalds'."
        )
    spares = {"off": 0, "detect": 1, "correct": 2}[verify]
    n, k = int(code.n), int(code.recovery_threshold)
    if spares and n - k <= spares:
        warnings.warn(
            f"`check='redundancy'` with verify={verify!r} waits for {spares} "
            f"result(s) beyond the k={k} that decode, so with n={n} workers every "
            "call waits for all of them, its slowest worker included; "
            "check='freivalds' (the default) checks each result as it arrives "
            "and keeps the fastest-k latency.",
            UserWarning,
            stacklevel=2,
        )
    return verify


def piece_check(
    code: Code,
    encoded: Any,
    batches: Any,
    verify: str,
    *,
    checks: Any = None,
    fresh: bool = True,
    suspects: dict[int, str] | None = None,
) -> tuple[Any, str]:
    """Return the check of every piece a call decodes, and the record's word on it.

    Returns ``(check, verification)``: ``check(piece) -> bool`` (None when
    nothing is checked; ``check.projector`` projects a piece where it lives,
    for products decoded on a worker) and ``"freivalds"``, ``"off"`` or
    ``"unchecked: why"``. A fresh call (`fresh`) draws its secret vectors from
    ``encoded.lefts``; a placed one uses its placement's `checks`, and a piece
    of a batch they do not cover passes unchecked. A piece that fails is
    recorded in `suspects` (a placement's memory), if given.

    Raises
    ------
    ValueError
        ``verify="correct"`` where no check exists.
    """
    from coded.codes.interface import RatelessContext, TransposedContext, UnitContext

    if verify == "off":
        return None, "off"
    context = encoded.context
    why = ""
    if not isinstance(context, UnitContext | TransposedContext | RatelessContext):
        why = f"{type(code).__name__}'s results are not coded rows times B"
    elif checks is None and not fresh:
        why = "the placement holds no checks"
    if why:
        if verify == "correct":
            raise ValueError(
                f"`verify='correct'` needs a check of every result, and {why}; "
                "use verify='detect' (which then runs unchecked) or 'off'."
            )
        return None, f"unchecked: {why}"
    if checks is None:  # fresh secret vectors (OS entropy, never the call's rng)
        checks = _fresh_checks(code, encoded, batches)
    noise = context.noise if isinstance(context, UnitContext) else None
    return _FreivaldsCheck(checks, encoded, noise, suspects), "freivalds"


def _fresh_checks(code: Code, encoded: Any, batches: Any) -> Any:
    """Draw the secret projections of a fresh call's shares."""
    from coded.codes.interface import (
        TransposedContext,
        share_checks,
        transposed_checks,
    )

    context = encoded.context
    if isinstance(context, TransposedContext):
        return transposed_checks(encoded.lefts, context.forward.rows, prime_of(code))
    return share_checks(encoded.lefts, batches, prime_of(code), rng=None)


@dataclass(frozen=True, slots=True, eq=False)
class _FreivaldsCheck:
    """``check(piece)``: a piece's Freivalds check (see :func:`piece_check`)."""

    checks: Any
    encoded: Any
    noise: Any
    suspects: dict[int, str] | None = None  # filled with the workers that fail
    expected: Any = None  # per batch: c . B, for a B held by the cluster

    def __call__(self, piece: Any) -> Any:
        from coded.codes.interface import Verdict

        batch = (piece.worker, piece.start, piece.stop)
        if not self.checks.covers(*batch):
            return Verdict(passed=True, floor=float("inf"))
        right = self.encoded.right(piece.worker)
        if self.expected is not None:
            right = self.expected[batch]
        verdict = self.checks.verdict(piece, right, self.noise)
        if not verdict and self.suspects is not None:
            why = f"its result for rows {piece.start}..{piece.stop} failed its check"
            self.suspects[piece.worker] = why
        return verdict

    def projector(self, worker: int, start: int, stop: int) -> Any:
        """Return ``value -> Projected`` for a piece (None: it is not checked)."""
        from coded.codes.interface import project_piece

        if not self.checks.covers(worker, start, stop):
            return None
        r = self.checks.vector(worker, start, stop)
        return functools.partial(project_piece, r=r, p=self.checks.p)


def prime_of(code: Code) -> int | None:
    """Return the prime of `code`'s field (None: the reals) without loading galois."""
    p = getattr(code, "p", None)
    if p is None and code.field is not None:
        p = int(code.field.characteristic)
    return p


def product_layout(code: Code, encoded: Any) -> Any:
    """Shape, dtype and row chunks of the product, for ``output="dask"``.

    Raises
    ------
    ValueError
        For a code whose decoder needs the results' values to track them (the
        CRT code of ``field="exact"``).
    """
    from coded.codes.interface import RatelessContext, TransposedContext, UnitContext
    from coded.runtime.interface import ProductLayout

    context = encoded.context
    if isinstance(context, UnitContext):
        rows, block = context.m, context.rows
    elif isinstance(context, TransposedContext):
        rows, block = context.d, context.d
    elif isinstance(context, RatelessContext):  # decoded from the rows' values
        rows, block = context.m, -(-context.m // code.n)
    else:
        raise ValueError(
            "output='dask' decodes on a worker from the rows that arrived; "
            f"{type(code).__name__} needs their values on the client: use "
            "output='numpy'."
        )
    shape = (rows,) if context.is_vector else (rows, context.c)
    dtype = np.dtype(np.float64 if code.field is None else np.int64)
    if getattr(context, "output", None) == "float32":  # float32 operands
        dtype = np.dtype(np.float32)
    return ProductLayout(shape, dtype, block)


def run_encoded(client: Client, plan: CallPlan) -> MatmulResult:
    """Run `plan` (as :func:`start_encoded`) and wait for the result."""
    return start_encoded(client, plan, decide=True).result()


async def run_encoded_async(client: Client, plan: CallPlan) -> MatmulResult:
    """:func:`run_encoded` with an asynchronous client."""
    handle = await start_encoded_async(client, plan)
    return await handle.result_async()
