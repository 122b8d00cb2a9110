"""The user API: ``coded_matmul``.

``coded_matmul`` validates its inputs, builds the code, encodes (pure) and hands
the encoded operands to the Dask runtime through ``coded._dispatch``; a placed A
(``coded._placed``) ships only B.
"""

from __future__ import annotations

import dataclasses
import inspect
import time
from typing import TYPE_CHECKING, Any, Literal, Unpack

import numpy as np
from numpy.typing import ArrayLike

from coded._dispatch import (
    EMBEDDED_WORKERS,
    CallPlan,
    ExecutionOptions,
    Scheme,
    build_code,
    check_operands,
    check_resources,
    execution_options,
    given_code,
    is_dask_array,
    resolve_workers,
    run_encoded,
    run_encoded_async,
    stream_batches,
    whole_batches,
)
from coded._keywords import ExecutionKeywords
from coded._placed import PlacedOperand, matmul_placed, place_operand, start_placed
from coded._result import MatmulResult
from coded._twins import same_parameters
from coded.codes import Code
from coded.codes.interface import FieldLike
from theory.validation import is_sparse

if TYPE_CHECKING:
    from distributed import Client

    from allocation import Allocation
    from coded.runtime import MatmulHandle

__all__ = ["coded_matmul", "coded_matmul_async", "submit_matmul"]


def coded_matmul(
    A: ArrayLike | PlacedOperand,
    B: ArrayLike,
    *,
    scheme: Scheme | Code = "mds",
    n: int | None = None,
    k: int | None = None,
    r: int | None = None,
    field: FieldLike | Literal["exact"] = None,
    allocation: Allocation | None = None,
    client: Client | None = None,
    address: str | None = None,
    options: ExecutionOptions | None = None,
    **option_fields: Unpack[ExecutionKeywords],
) -> MatmulResult:
    r"""Compute ``A @ B`` on Dask workers, decoding from whichever finish first.

    Parameters
    ----------
    A : array_like or dask.array.Array, shape (m, d), or PlacedOperand
        Left operand (real, or integers when `field` is given), or A encoded and
        placed once by :func:`coded.place_operand`: then only B is shipped, and
        `scheme`, `n`, `k`, `r`, `field`, `allocation` and `address` must be left
        at their defaults (`client`: None or the handle's). A ``dask.array`` (any
        chunking with known sizes) is encoded by tasks on the workers from its
        chunks and never reaches the client (row block codes: MDS over the
        reals or GF(p), replication, uncoded, speculative; and rateless).
    B : array_like or dask.array.Array, shape (d,) or (d, c)
        Right operand; a vector gives a vector. A dask.array B is computed onto
        the client (it is shipped to every worker anyway).
    scheme : str or Code
        The coding scheme (``"mds"``, ``"polynomial"``, ``"replication"``,
        ``"uncoded"``, ``"speculative"`` or ``"rateless"``), or a code object
        from ``coded`` (then `n` and `k` must be None or agree with it).
        ``"speculative"`` runs the uncoded split with Spark-style backup tasks:
        once 75% of the tasks are done, every task running longer than 1.5x
        their median duration gets a copy on an idle worker and the first copy
        to finish is used.
        ``"rateless"`` (:class:`coded.LTCode`) gives the
        workers 1.3 m encoded rows in batches and decodes from whichever rows
        arrive first; it takes a scipy.sparse A (CSR, CSC or COO), whose
        shares stay sparse, as ``"replication"``, ``"uncoded"`` and
        ``"speculative"`` do (their shares: CSR row blocks of A); the other
        schemes' shares of it would be dense, and they refuse it.
    n : int, optional
        Number of workers to use, ``<=`` the cluster's; defaults to all of them
        (4 for the embedded cluster).
    k : int, optional
        Recovery threshold of the MDS and polynomial schemes, ``1 <= k <= n``;
        defaults to :func:`coded._dispatch.default_k` (``floor(3n/4)``; ``n`` for
        uncoded and speculative). The polynomial code splits it as ``k = p_a p_b``
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
    allocation : allocation.Allocation, optional
        Unequal loads and batches (HCMM, Kim et al., BPCC): A's ``m`` rows
        (``m = allocation.m``) are encoded with
        ``RowMDSCode(allocation.loads, m)`` and worker ``i`` streams its load
        back in ``allocation.batches[i]`` batches, each a task chained after the
        previous one on the same worker; any ``m`` returned rows decode.
        `scheme` must then be ``"mds"`` and `k` None.
    options : ExecutionOptions, optional
        How the product runs, as one object to reuse across calls: its fields
        are the keyword options below (defaults: their defaults).
    **option_fields
        The keyword options `stragglers`, `timeout`, `rng`, `output`, `verify`,
        `check` and `transport` (fields of :class:`ExecutionOptions`, which
        details them); they override those of `options`.
    stragglers : Stragglers, optional
        Keyword option. Delays and failures injected inside the tasks:
        ``Stragglers(delays={2: 1.5})`` makes worker 2 finish 1.5 s late,
        ``Stragglers(failing=[0])`` makes worker 0's task raise, a
        ``profile`` draws shifted-exponential delays (:class:`Stragglers`).
    timeout : float, default 60
        Keyword option. Seconds to wait for a decodable set of results, ``> 0``.
    rng : numpy.random.Generator, SeedSequence, int or None
        Keyword option. Draws the injected delays (a seed repeats them).
    output : {"numpy", "dask"}, default "numpy"
        Keyword option. ``"numpy"``: the client decodes, `product` is a numpy
        array. ``"dask"``: a worker decodes, `product` is a ``dask.array`` that
        never passes through the client (products chain).
    verify : {"detect", "correct", "off"}, default "detect"
        Keyword option. Check every worker's result before it is decoded
        (docs/theory/verification.md). ``"detect"``: checks every result and
        raises :class:`~coded.InconsistentResultsError` naming the worker of a
        wrong one. ``"correct"``: decodes around wrong results (as many as the
        code's spare workers allow) and names their workers in
        ``result.suspect_workers``; it needs a coded scheme (``k < n``).
        ``"off"``: no check. ``result.verification`` says how the results were
        checked, or why they could not be.
    check : {"auto", "freivalds", "redundancy"}, default "auto"
        Keyword option. How `verify` checks: ``"freivalds"``, each result
        against a secret random projection of its coded rows (no extra result
        waited for); ``"redundancy"``, the results against each other (it
        waits for results beyond a decodable set); ``"auto"`` chooses for the
        code and the field (:class:`ExecutionOptions`).
    transport : {"auto", "resident", "grouped", "tasks"}, default "auto"
        Keyword option. How a call on a placed A reaches its workers:
        ``"resident"``, one message per worker to the server holding its share
        (no scheduler); ``"grouped"``, for a :class:`~coded.codes.HierarchicalCode`,
        one message per outer group to a leader that decodes its group;
        ``"tasks"``, pinned tasks through the scheduler, as every fresh call
        runs; ``"auto"``, resident wherever it applies. ``result.transport``
        says which ran.

    Returns
    -------
    MatmulResult
        The product and the run's record: ``used_workers``,
        ``finish_seconds``, ``stage_seconds``, ``suspect_workers``,
        ``verification``, ... (``print(result)`` summarises it).

    Raises
    ------
    NotEnoughResultsError
        Failures left no decodable set (raised as soon as that is certain), or the
        timeout expired first.
    InconsistentResultsError
        ``verify="detect"`` found a wrong result (the message names its worker).
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

    name, n = resolve_workers(scheme, n, k)
    options = execution_options(options, option_fields, "coded_matmul")
    if is_dask_array(A):
        from coded.runtime.interface import check_dask_matrix

        check_dask_matrix(A)  # before a cluster starts
        placement = {"scheme": scheme, "n": n, "k": k, "r": r, "field": field}
        with client_for_call(client, address, n or EMBEDDED_WORKERS) as own:
            return _matmul_dask_array(
                A,
                B,
                client=own,
                placement=placement,
                allocation=allocation,
                options=options,
            )
    if isinstance(A, PlacedOperand):
        fixed = {"scheme": scheme, "n": n, "k": k, "r": r, "field": field}
        return matmul_placed(
            A,
            B,
            fixed={**fixed, "allocation": allocation, "address": address},
            client=client,
            options=options,
        )
    if is_dask_array(B):  # B is small and shipped to every worker: hold it here
        B = B.compute()
    check_operands(A, B, name)
    m = np.shape(A)[0]
    code, batches, name = given_code(scheme, name, allocation, n, k, r, m, field)
    code_n = None if code is None else code.n
    with client_for_call(client, address, n or code_n or EMBEDDED_WORKERS) as own:
        began = time.perf_counter()
        addresses = worker_addresses(own, n or code_n)
        plan = _encode(
            own, A, B, code, batches, (name, k, r, field), addresses, began, options
        )
        result = run_encoded(own, plan)
    return _predicted(result, allocation, np.shape(A)[1])


def _encode(
    client: Client,
    A: Any,
    B: Any,
    code: Code | None,
    batches: Any,
    scheme: tuple[str, Any, Any, Any],
    addresses: list[str],
    began: float,
    options: ExecutionOptions,
) -> CallPlan:
    """Build the code (if not given), check memory, encode: the call's plan."""
    name, k, r, field = scheme
    m = np.shape(A)[0]
    if code is None:
        code = build_code(name, len(addresses), k, r, field, np.ndim(B) == 1, m=m)
    nnz = int(A.nnz) if is_sparse(A) else None
    check_resources(client, code, np.shape(A), np.shape(B), addresses, nnz)
    encoding = time.perf_counter()
    encoded = code.encode_operands(A, B)
    encode_seconds = time.perf_counter() - encoding
    if batches is None and name == "rateless":
        batches = stream_batches(encoded.lefts)
    elif batches is None:
        batches = whole_batches(encoded.lefts)
    return CallPlan(
        code=code,
        encoded=encoded,
        B=B,
        name=name,
        addresses=addresses,
        batches=batches,
        began=began,
        encode_seconds=encode_seconds,
        options=options,
    )


def _predicted(result: MatmulResult, allocation: Any, columns: int) -> MatmulResult:
    """Attach the allocation's prediction of the whole call (A has `columns`)."""
    if allocation is None:
        return result
    checked = result.verification == "freivalds"
    predicted = allocation.predicted_call_seconds(columns, checked=checked)
    return dataclasses.replace(result, predicted_seconds=predicted)


@same_parameters(coded_matmul)
async def coded_matmul_async(A: Any, B: Any, **keywords: Any) -> MatmulResult:
    """``await``-able :func:`coded_matmul` for an asynchronous Dask client.

    Runs on the client's event loop: shipping the operands, waiting for a
    decodable set of results and releasing never block it, so several products
    may be in flight at once (``asyncio.gather``), with no thread per product.
    Returns the same :class:`MatmulResult` as :func:`coded_matmul`.

    Parameters
    ----------
    A : array_like, shape (m, d)
        Left operand, in memory (placements and dask.array A are prepared with a
        blocking client: :func:`coded.place_operand`, :func:`coded.submit_matmul`).
    B : array_like or dask.array.Array, shape (d,) or (d, c)
        Right operand.
    client : distributed.Client
        Required: a running client created with ``asynchronous=True``.
    address : None
        Not accepted (a TypeError): connect an asynchronous client instead.
    scheme, n, k, r, field, allocation : optional
        The code, as in :func:`coded_matmul`.
    options : ExecutionOptions, optional
        As in :func:`coded_matmul`.
    **option_fields
        The keyword options below (fields of :class:`ExecutionOptions`).
    stragglers, timeout, rng, output, verify, check, transport : optional
        Keyword options, as in :func:`coded_matmul` (``output="dask"``
        included).

    Returns
    -------
    MatmulResult

    Raises
    ------
    NotEnoughResultsError, ValueError, TypeError
        As :func:`coded_matmul`; TypeError for a blocking client or a placed or
        dask.array A.

    Examples
    --------
    >>> import asyncio
    >>> import numpy as np
    >>> from distributed import Client, LocalCluster
    >>> from coded import coded_matmul_async
    >>> async def main():
    ...     async with LocalCluster(n_workers=3, processes=False, asynchronous=True,
    ...                             dashboard_address=":0") as cluster:
    ...         async with Client(cluster, asynchronous=True) as client:
    ...             A = np.arange(12.0).reshape(4, 3)
    ...             products = await asyncio.gather(
    ...                 *(coded_matmul_async(A, np.full(3, c), k=2, client=client)
    ...                   for c in (1.0, 2.0))
    ...             )
    ...     return [np.round(p.product, 9).tolist() for p in products]
    >>> asyncio.run(main())
    [[3.0, 12.0, 21.0, 30.0], [6.0, 24.0, 42.0, 60.0]]
    """
    from coded.runtime import check_client
    from coded.runtime.interface import worker_addresses_async

    call = inspect.signature(coded_matmul).bind(A, B, **keywords)
    call.apply_defaults()
    given = call.arguments
    scheme, n, k, r, field = (given[p] for p in ("scheme", "n", "k", "r", "field"))
    allocation, client, address = given["allocation"], given["client"], given["address"]
    options, option_fields = given["options"], given["option_fields"]
    if address is not None:
        raise TypeError(
            "coded_matmul_async takes a running asynchronous `client`, not an "
            f"`address`; got address={address!r}."
        )
    name, n = resolve_workers(scheme, n, k)
    options = execution_options(options, option_fields, "coded_matmul_async")
    client = check_client(client)
    if not client.asynchronous:
        raise TypeError(
            "`client` must be asynchronous (distributed.Client(..., "
            "asynchronous=True)); with a blocking client call coded.coded_matmul."
        )
    if isinstance(A, PlacedOperand) or is_dask_array(A):
        raise TypeError(
            "coded_matmul_async takes an in-memory `A`; placements and dask.array "
            "A need a blocking client (coded.coded_matmul, coded.submit_matmul "
            f"for products in flight), got {type(A).__name__}."
        )
    if is_dask_array(B):
        B = await client.compute(B)
    check_operands(A, B, name)
    code, batches, name = given_code(
        scheme, name, allocation, n, k, r, np.shape(A)[0], field
    )
    began = time.perf_counter()
    addresses = await worker_addresses_async(client, n or getattr(code, "n", None))
    plan = _encode(
        client, A, B, code, batches, (name, k, r, field), addresses, began, options
    )
    result = await run_encoded_async(client, plan)
    return _predicted(result, allocation, np.shape(A)[1])


def _matmul_dask_array(
    A: Any,
    B: Any,
    *,
    client: Client,
    placement: dict[str, Any],
    allocation: Any,
    options: ExecutionOptions,
) -> MatmulResult:
    """One product of a dask.array A: encode on the cluster, multiply, release."""
    began = time.perf_counter()
    placed = place_operand(A, client=client, allocation=allocation, **placement)
    try:
        result = matmul_placed(placed, B, fixed={}, client=None, options=options)
    finally:
        placed.release()
    stages = dict(result.stage_seconds)
    for stage, seconds in placed.stage_seconds.items():
        stages[stage] += seconds
    stages["total"] = time.perf_counter() - began
    return dataclasses.replace(result, stage_seconds=stages)


def submit_matmul(
    A: PlacedOperand,
    B: ArrayLike,
    *,
    options: ExecutionOptions | None = None,
    **option_fields: Unpack[ExecutionKeywords],
) -> MatmulHandle:
    """Submit ``A @ B`` for a placed A and return at once: a product in flight.

    Several products may be in flight together (on one placement or several);
    each handle's :meth:`~coded.MatmulHandle.result` waits for that product
    only and returns the same :class:`MatmulResult` as :func:`coded_matmul`.
    No thread is started per product; the timeout counts from submission.

    Parameters
    ----------
    A : PlacedOperand
        A placement (or its transposed view ``placed.T``).
    B : array_like, shape (d,) or (d, c)
        Right operand.
    options : ExecutionOptions, optional
        How the product runs, as in :func:`coded_matmul`.
    **option_fields
        Fields of :class:`ExecutionOptions` as keywords; they override those of
        `options`:
    stragglers, timeout, rng, output, verify, check, transport : optional
        Keyword options, as in :func:`coded_matmul` (the timeout counts from
        submission).

    Returns
    -------
    MatmulHandle

    Examples
    --------
    >>> import numpy as np
    >>> from coded import LocalCodedCluster, place_operand, submit_matmul
    >>> A = np.arange(12.0).reshape(4, 3)
    >>> with LocalCodedCluster(n_workers=3) as cluster:
    ...     with place_operand(A, k=2, client=cluster.client) as placed:
    ...         handles = [submit_matmul(placed, np.full(3, c)) for c in (1.0, 2.0)]
    ...         handles.append(submit_matmul(placed.T, np.ones(4)))
    ...         products = [h.result().product for h in handles]
    >>> [np.round(p, 9).tolist() for p in products]
    [[3.0, 12.0, 21.0, 30.0], [6.0, 24.0, 42.0, 60.0], [18.0, 22.0, 26.0]]
    """
    if not isinstance(A, PlacedOperand):
        raise TypeError(
            "`A` must be a PlacedOperand (coded.place_operand(A, client=...)) to "
            f"submit products in flight, got {type(A).__name__}."
        )
    options = execution_options(options, option_fields, "submit_matmul")
    return start_placed(A, B, fixed={}, client=None, options=options)
