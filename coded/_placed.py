"""Encode once, multiply many: A encoded and placed on the workers for many B.

:func:`place_operand` encodes A with a row code and scatters each worker's coded
rows to it once; ``coded_matmul(placed, B)`` then encodes only B against A's
encoding (``Code.encode_right``) and runs the same plan -> run -> decode path as a
one-shot call, with the placed futures as the workers' left operands.

A placement heals: a share lost with its worker is a straggler that never returns
(calls skip it), and :meth:`PlacedOperand.repair` rebuilds lost shares on live
workers from any decodable set of surviving ones (on the cluster, without A), on
request or automatically before a call once the tolerance left falls below
``repair_margin``.
"""

from __future__ import annotations

import collections
import dataclasses
import time
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from coded._dispatch import (
    CallPlan,
    ExecutionOptions,
    build_code,
    check_operands,
    check_resources,
    given_code,
    is_dask_array,
    prime_of,
    resolve_workers,
    start_encoded,
    stream_batches,
    whole_batches,
)
from coded._result import MatmulResult
from coded.codes import (
    Code,
    EncodedOperands,
    HierarchicalCode,
    LTCode,
    TransposedCode,
)
from coded.codes.interface import FieldLike
from coded.errors import NotEnoughResultsError
from theory.validation import check_finite_matrix, check_int, check_real, is_sparse

if TYPE_CHECKING:
    from distributed import Client

    from allocation import Allocation
    from coded.runtime import MatmulHandle

__all__ = ["PlacedOperand", "place_operand"]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class PlacedOperand:
    """A left operand encoded once and held on the workers (see `place_operand`).

    Pass it as ``A`` to :func:`coded.coded_matmul` for every new B (or write
    ``placed @ B``); ``placed.T`` is the same placement seen as ``A.T``: its
    products ``A.T @ y`` tolerate the same stragglers and hold no second copy of
    A. Release it with :meth:`release` (or use it as a context manager) when done;
    releasing either view releases both.

    Parameters
    ----------
    code : Code
        The row code A was encoded with.
    encoded : EncodedOperands
        A's encoding (``lefts`` and the decoding context; its B is a placeholder).
    scheme : str
        The scheme's name, as in :class:`coded.MatmulResult`.
    addresses : tuple of str
        The Dask worker each code worker's coded rows were placed on (see
        :attr:`locations` after a repair).
    batches : tuple of tuple of (int, int)
        Row ranges of each worker's batch chain.
    client : distributed.Client
        The client A was placed with (calls must use it).
    placement_id : str
        Identifier in every Dask key of the placement (``coded-<id>-left-<i>``).
    stage_seconds : mapping of str to float
        Seconds spent once: ``encode`` (A) and ``place`` (scatter of the shares).
    is_transposed : bool
        Whether this view multiplies by ``A.T`` (see :attr:`T`).
    repair_margin : int, optional
        Repair automatically before a call once :attr:`tolerance_left` is below
        this many workers (None: only on request, with :meth:`repair`).
    """

    code: Code
    encoded: EncodedOperands
    scheme: str
    addresses: tuple[str, ...]
    batches: tuple[tuple[tuple[int, int], ...], ...]
    client: Client
    placement_id: str
    stage_seconds: Mapping[str, float]
    _futures: list[Any]
    is_transposed: bool = False
    repair_margin: int | None = None
    _moved: dict[int, str] = field(default_factory=dict)  # shared by both views
    _on_cluster: bool = False  # A was a dask.array: its shares exist only there
    _suspects: dict[int, str] = field(default_factory=dict)  # shared by both views
    # the client's secret Freivalds projections, per view (is_transposed):
    # drawn once, A @ B's at placement and A.T @ y's at its first call
    _checks: dict[bool, Any] = field(default_factory=dict)
    _resident: bool = False  # its workers run resident servers (calls skip Dask)

    def __post_init__(self) -> None:
        stages = MappingProxyType(dict(self.stage_seconds))
        object.__setattr__(self, "stage_seconds", stages)

    @property
    def n(self) -> int:
        """Number of code workers."""
        return len(self.addresses)

    @property
    def shape(self) -> tuple[int, int]:
        """``(m, d)``: the shape of A (``(d, m)`` for the transposed view)."""
        m, d = int(self.encoded.context.m), int(np.shape(self.encoded.lefts[0])[1])
        return (d, m) if self.is_transposed else (m, d)

    @property
    def T(self) -> PlacedOperand:
        r"""The same placement as the left operand ``A.T`` (no new encoding).

        Worker i multiplies its share ``Y_i`` (``rows x d``) by y's K row
        blocks side by side and returns ``Y_i^T [y_0 .. y_{K-1}]`` (``d x K``);
        any set of workers that decodes ``A @ x`` decodes
        ``A.T @ y = sum_j X_j^T y_j`` (see ``coded.codes.TransposedCode``). Memory: none
        beyond A's shares (``(n / k) |A|`` in all for an (n, k) MDS code); per call
        each worker receives all m entries of y and returns d K entries.

        Raises
        ------
        ValueError
            If A was placed with a code that is not a block code (an
            allocation's row-MDS code).
        """
        TransposedCode(self.code)  # a block code? (raises otherwise)
        return dataclasses.replace(self, is_transposed=not self.is_transposed)

    @property
    def product_code(self) -> Code:
        """The code of this view's products (``code``, or its transposed form)."""
        return TransposedCode(self.code) if self.is_transposed else self.code

    def __matmul__(self, B: Any) -> Any:
        """``self @ B`` as a coded product with default options; the product."""
        return matmul_placed(
            self, B, fixed={}, client=None, options=ExecutionOptions()
        ).product

    @property
    def futures(self) -> tuple[Any, ...]:
        """Per-worker share futures (None: never placed; empty once released)."""
        return tuple(self._futures)

    @property
    def locations(self) -> tuple[str, ...]:
        """The Dask worker holding each code worker's share now (after repairs)."""
        return tuple(self._moved.get(i, a) for i, a in enumerate(self.addresses))

    @property
    def live(self) -> tuple[int, ...]:
        """Code workers whose share the cluster still holds (as the client knows).

        A share is dropped when its Dask worker dies; the client learns it from
        the scheduler within moments (calls also check the worker list).
        """
        return tuple(
            i
            for i, share in enumerate(self._futures)
            if share is not None and share.status == "finished"
        )

    @property
    def tolerance_left(self) -> int:
        """How many more Dask workers may be lost, whichever, before calls fail.

        Counts workers, not shares: the code tolerates ``n - k`` lost shares (for
        an (n, k) MDS code), minus those lost so far, and a Dask worker holding
        two shares (a :meth:`repair` without a spare worker stacks them) loses
        both; the count is the largest ``w`` whose ``w`` fullest workers hold no
        more shares than that. Negative: shares lost beyond the code's
        tolerance (calls fail).
        """
        budget = int(self.code.n) - int(self.code.recovery_threshold)
        budget -= self.n - len(self.live)
        held = collections.Counter(self.locations[i] for i in self.live)
        return _workers_tolerated(held.values(), budget)

    @property
    def suspects(self) -> Mapping[int, str]:
        """Code workers whose results failed a check in a call, and why.

        Remembered across calls (of both views) until :meth:`repair` rebuilds
        their shares elsewhere.
        """
        return MappingProxyType(self._suspects)

    def repair(self, *, timeout: float = 60.0) -> tuple[int, ...]:
        """Rebuild the lost and the suspect shares from the others.

        Erasure-code repair on the cluster: each lost share, and each share of
        a worker in :attr:`suspects`, is recomputed by a task from any decodable
        set of surviving honest shares (A is not needed), on a worker holding no
        share of this placement (a replacement worker) if there is one, else on
        the live holder with the fewest shares (never the suspect's): then it
        warns, with the Dask workers the placement now tolerates losing
        (:attr:`tolerance_left`). Both views
        (``placed`` and ``placed.T``) see the repair; the rebuilt shares get new
        secret projections, computed where they now live.

        Parameters
        ----------
        timeout : float
            Seconds to wait for the rebuilt shares.

        Returns
        -------
        tuple of int
            The code workers repaired (empty if nothing was lost or suspect).

        Raises
        ------
        NotEnoughResultsError
            Too few shares survive to decode (place A again), or a rebuild did
            not finish within `timeout`.
        """
        from coded.runtime.interface import repair_shares

        if self.is_released:
            raise ValueError(f"placement {self.placement_id} was released.")
        if isinstance(self.code, LTCode):
            raise ValueError(
                "a rateless placement is not repaired: a lost share's rows are "
                "rows that never arrive, and any others of full rank decode; "
                "place A again if too few remain."
            )
        futures, targets = repair_shares(
            self.client,
            self.code,
            self._futures,
            self.locations,
            key_prefix=f"coded-{self.placement_id}-left",
            timeout=check_real(timeout, "timeout", min_value=0, strict_min=True),
            suspects=self._suspects,
        )
        for i, future in futures.items():
            stale, self._futures[i] = self._futures[i], future
            self._moved[i] = targets[i]
            self._suspects.pop(i, None)
            if stale is not None:
                stale.release()
        for view, checks in self._checks.items() if futures else ():
            renewed = _draw_checks(self._view(view), workers=sorted(futures))
            self._checks[view] = checks.updated(renewed)
        self._warn_if_stacked(set(targets.values()))
        return tuple(sorted(futures))

    def _warn_if_stacked(self, targets: set[str]) -> None:
        """Warn when a repair left a Dask worker of `targets` with several shares."""
        held = collections.Counter(self.locations[i] for i in self.live)
        stacked = {address: held[address] for address in targets if held[address] > 1}
        if stacked:
            warnings.warn(
                f"repair() found no spare Dask worker and stacked shares: "
                f"{stacked} (shares per worker); losing such a worker loses all "
                f"its shares, so the placement now tolerates {self.tolerance_left} "
                f"lost Dask worker(s) of the {len(held)} holding its {len(self.live)} "
                "shares. Add workers and place A again to spread them.",
                UserWarning,
                stacklevel=3,
            )

    def _view(self, transposed: bool) -> PlacedOperand:
        """Return the placement seen as A (False) or as A.T (True)."""
        if transposed == self.is_transposed:
            return self
        return dataclasses.replace(self, is_transposed=transposed)

    @property
    def is_released(self) -> bool:
        """Whether :meth:`release` has run."""
        return not self._futures

    def release(self) -> None:
        """Drop the coded shares from the cluster (idempotent).

        Returns once no worker holds a share (at most 10 s: products still in
        flight on the placement finish first). Products returned as dask.arrays
        (``output="dask"``) stay valid.
        """
        from coded.runtime.interface import drop

        drop(self.client, [share for share in self._futures if share is not None])
        self._futures.clear()

    def __repr__(self) -> str:
        return (
            f"PlacedOperand(scheme={self.scheme!r}, n={self.n}, shape={self.shape}, "
            f"placement_id={self.placement_id!r}, released={self.is_released}"
            + (", transposed=True)" if self.is_transposed else ")")
        )

    def __enter__(self) -> PlacedOperand:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


def place_operand(
    A: ArrayLike,
    *,
    client: Client,
    scheme: str | Code = "mds",
    n: int | None = None,
    k: int | None = None,
    r: int | None = None,
    field: FieldLike = None,
    allocation: Allocation | None = None,
    repair_margin: int | None = None,
) -> PlacedOperand:
    """Encode A once with a row code and place its coded shares on the workers.

    Parameters
    ----------
    A : array_like or dask.array.Array, shape (m, d)
        Left operand (real, or integers / a galois FieldArray with `field`). A
        ``dask.array`` (any chunking with known sizes; integers over GF(p)) is
        rechunked into the code's row blocks and encoded by tasks on the
        workers, share i computed on worker i from the chunks it combines: A
        never reaches the client. A scipy.sparse A (replication, uncoded,
        speculative) is placed as CSR row blocks.
    client : distributed.Client
        A running client; the handle is valid while it runs.
    scheme : {"mds", "replication", "uncoded", "speculative", "rateless"} or Code
        A row code (as in :func:`coded.coded_matmul`); ``"polynomial"`` and
        ``field="exact"`` encode B with A and are rejected. A ``"rateless"``
        placement streams each call's rows in batches, decodes from any rows
        of full rank, and has no repair and no transposed view.
    n, k, r, field, allocation
        As in :func:`coded.coded_matmul`.
    repair_margin : int, optional
        Repair lost shares automatically before a call once fewer than
        `repair_margin` more losses would be tolerated (see
        :meth:`PlacedOperand.repair`); ``1`` keeps the placement able to lose
        one more worker. None (default): repair only on request.

    Returns
    -------
    PlacedOperand
        Pass it as ``A`` to :func:`coded.coded_matmul`; release it when done.

    Raises
    ------
    NotEnoughResultsError
        Workers died while the shares were shipped and too few shares arrived.
    ResourceError
        The encoding or a worker's share would not fit in memory.
    ValueError
        A two-sided code (polynomial, exact), bad `n`/`k`/`r`, a closed client.
    TypeError
        `client` is not a ``distributed.Client``, A has the wrong type.

    Examples
    --------
    >>> import numpy as np
    >>> from coded import LocalCodedCluster, coded_matmul, place_operand
    >>> A = np.arange(12.0).reshape(4, 3)
    >>> with LocalCodedCluster(n_workers=3) as cluster:
    ...     with place_operand(A, k=2, client=cluster.client) as placed:
    ...         products = [coded_matmul(placed, np.full(3, c)).product
    ...                     for c in (1.0, 2.0)]
    >>> [np.round(p, 9).tolist() for p in products]
    [[3.0, 12.0, 21.0, 30.0], [6.0, 24.0, 42.0, 60.0]]
    """
    from coded.runtime import check_client, worker_addresses
    from coded.runtime.interface import new_call_id, serve_placements

    client = check_client(client)
    if repair_margin is not None:
        repair_margin = check_int(repair_margin, "repair_margin", min_value=0)
    name, n = resolve_workers(scheme, n, k)
    lazy = is_dask_array(A)
    if lazy:
        from coded.runtime.interface import check_dask_matrix

        A_shape = check_dask_matrix(A)
    elif is_sparse(A):  # the schemes whose shares stay sparse (others: named)
        check_operands(A, np.zeros(np.shape(A)[1]), name)
        A_shape = np.shape(A)
    else:
        A_shape = check_finite_matrix(A, "A", ndim=2).shape
    code, batches, name = given_code(
        scheme, name, allocation, n, k, r, A_shape[0], field
    )
    addresses = worker_addresses(client, n or (None if code is None else code.n))
    if code is None:
        code = build_code(name, len(addresses), k, r, field, True, m=A_shape[0])
    if isinstance(code, LTCode) and repair_margin is not None:
        raise ValueError(
            "`repair_margin` repairs an erasure code's lost shares; a rateless "
            "placement needs none (any rows of full rank decode): leave it None."
        )
    nnz = int(A.nnz) if is_sparse(A) else None
    check_resources(client, code, A_shape, A_shape[1:], addresses, nnz)
    placement_id = new_call_id()
    keys = [f"coded-{placement_id}-left-{i}" for i in range(len(addresses))]
    if lazy:
        placed = _place_dask_array(client, code, A, addresses, keys)
    else:
        exact = field is not None or prime_of(code) is not None  # also a code's
        dtype = np.int64 if exact else np.float64
        placed = _place_array(client, code, A, addresses, keys, dtype)
    encoded, futures, stage_seconds = placed
    if batches is None:
        stream = isinstance(code, LTCode)  # a straggler's finished batches count
        batches = (stream_batches if stream else whole_batches)(encoded.lefts)
    placement = PlacedOperand(
        code=code,
        encoded=encoded,
        scheme=name,
        addresses=tuple(addresses),
        batches=tuple(tuple(chain) for chain in batches),
        client=client,
        placement_id=placement_id,
        stage_seconds=stage_seconds,
        _futures=futures,
        repair_margin=repair_margin,
        _on_cluster=lazy,
        _resident=serve_placements(client),
    )
    if not code.is_decodable(placement.live):  # workers died while shipping
        lost = {
            i: f"its share never reached {addresses[i]}"
            for i in range(placement.n)
            if i not in placement.live
        }
        placement.release()
        raise NotEnoughResultsError(
            f"only workers {list(placement.live)} took their shares, which do not "
            f"decode; lost {lost}.",
            lost_workers=lost,
            tolerance=int(code.n) - int(code.recovery_threshold),
        )
    _heal(placement)
    _placement_checks(placement)
    return placement


def _workers_tolerated(shares_per_worker: Iterable[int], budget: int) -> int:
    """Dask workers that may be lost, whichever they are, within `budget` shares.

    A lost Dask worker loses every share it holds, so the worst losses are the
    workers holding the most: the count is the largest ``w`` whose ``w``
    fullest workers hold at most `budget` shares together (`budget` itself when
    negative: shares already lost beyond the code's tolerance).

    Examples
    --------
    >>> _workers_tolerated([1, 1, 2, 1, 1, 2], budget=2)  # (8, 6), two stacked
    1
    >>> _workers_tolerated([1] * 8, budget=2)
    2
    """
    if budget < 0:
        return budget
    counts = sorted(shares_per_worker, reverse=True)
    held = 0
    for lost, shares in enumerate(counts):
        held += shares
        if held > budget:
            return lost
    return len(counts)


def _draw_checks(placement: PlacedOperand, workers: Any = None) -> Any:
    """Draw the secret projections of the view's batches (of `workers`: all).

    Shares the client holds (A in memory, never repaired) are projected here;
    others (a dask.array A, rebuilt shares) where they live: only the secret
    vectors travel there.
    """
    from coded.codes.interface import (
        RatelessContext,
        ShareChecks,
        TransposedContext,
        UnitContext,
        draw_vectors,
        share_checks,
        transposed_checks,
    )
    from coded.runtime.interface import project_shares

    code, encoded = placement.code, placement.encoded
    context = encoded.context
    if not isinstance(context, UnitContext | TransposedContext | RatelessContext):
        return None  # results that are not coded rows times B: not checked
    p, rows = prime_of(code), getattr(context, "rows", None)
    transposed = placement.is_transposed
    if workers is None and not placement._on_cluster:
        if transposed:
            return transposed_checks(encoded.lefts, rows, p, rng=None)
        return share_checks(encoded.lefts, placement.batches, p, rng=None)
    d = int(np.shape(encoded.lefts[0])[1])
    batches = {
        i: [(0, int(np.shape(encoded.lefts[i])[0]))] if transposed else ranges
        for i, ranges in enumerate(placement.batches)
        if (workers is None or i in workers) and placement.futures[i] is not None
    }
    keys = [(i, start, stop) for i, ranges in batches.items() for start, stop in ranges]
    lengths = [
        (stop - start) // rows * d if transposed else stop - start
        for _, start, stop in keys
    ]
    jobs = [
        (placement.futures[i], start, stop, r)
        for (i, start, stop), r in zip(keys, draw_vectors(lengths, p), strict=True)
    ]
    projected = project_shares(
        placement.client, jobs, p, unit_rows=rows if transposed else None
    )
    return ShareChecks(p=p, projections=dict(zip(keys, projected, strict=True)))


def _heal(placement: PlacedOperand) -> None:
    """Repair `placement` below its repair margin, or when a worker is suspect."""
    margin = placement.repair_margin
    if margin is not None and (placement.tolerance_left < margin or placement.suspects):
        placement.repair()


def _place_array(
    client: Client,
    code: Code,
    A: Any,
    addresses: list[str],
    keys: list[str],
    dtype: Any,
) -> tuple[EncodedOperands, list[Any], dict[str, float]]:
    """Encode A (in memory) on the client and scatter share i to worker i."""
    from coded.runtime.interface import scatter_to_workers

    began = time.perf_counter()
    placeholder = np.zeros(np.shape(A)[1], dtype=dtype)
    encoded = code.encode_operands(A, placeholder)
    code.encode_right(encoded, placeholder)  # a row code? (raises otherwise)
    encode_seconds = time.perf_counter() - began
    began = time.perf_counter()
    placed, _ = scatter_to_workers(  # a share that failed is lost (None)
        client,
        [{key: left} for key, left in zip(keys, encoded.lefts, strict=True)],
        addresses,
    )
    stages = {"encode": encode_seconds, "place": time.perf_counter() - began}
    return encoded, [placed.get(key) for key in keys], stages


def _place_dask_array(
    client: Client, code: Code, A: Any, addresses: list[str], keys: list[str]
) -> tuple[EncodedOperands, list[Any], dict[str, float]]:
    """Encode a dask.array A by tasks on the workers (A never reaches the client)."""
    from coded.codes import BlockCode
    from coded.runtime.interface import place_dask_lt, place_dask_rows

    began = time.perf_counter()
    if isinstance(code, LTCode):
        encoded, futures = place_dask_lt(client, code, A, addresses, keys)
        return encoded, futures, {"encode": time.perf_counter() - began, "place": 0.0}
    if not isinstance(code, BlockCode):
        raise ValueError(
            "a dask.array `A` is encoded on the cluster by a row block code (MDS "
            "over the reals or GF(p), replication, uncoded, speculative) or an LT "
            "code (rateless), got "
            f"{type(code).__name__}; compute A first (np.asarray(A)) for "
            "polynomial, exact or allocation codes."
        )
    encoded, futures = place_dask_rows(client, code, A, addresses, keys)
    return encoded, futures, {"encode": time.perf_counter() - began, "place": 0.0}


def matmul_placed(
    A: PlacedOperand,
    B: Any,
    *,
    fixed: Mapping[str, Any],
    client: Client | None,
    options: ExecutionOptions,
) -> MatmulResult:
    """``coded_matmul(A, B)`` for a placed A: encode B alone, run, decode."""
    handle = start_placed(
        A, B, fixed=fixed, client=client, options=options, decide=True
    )
    return handle.result()


def start_placed(
    A: PlacedOperand,
    B: Any,
    *,
    fixed: Mapping[str, Any],
    client: Client | None,
    options: ExecutionOptions,
    decide: bool = False,
) -> MatmulHandle:
    """Submit ``A @ B`` for a placed A (B encoded alone); return its handle.

    `decide`: return once the run decided (see ``start_encoded_async``).
    """
    from coded.runtime import check_client
    from coded.runtime.interface import new_call_id

    if A.is_released:
        raise ValueError(
            f"`A` (placement {A.placement_id}) was released; place it again."
        )
    given = {
        name: value
        for name, value in fixed.items()
        if value is not None and not (name == "scheme" and value in ("mds", A.scheme))
    }
    if given:
        raise ValueError(
            "`A` is a PlacedOperand: scheme, n, k, r, field, allocation and "
            f"address were fixed by place_operand, got {given}."
        )
    if client is not None and client is not A.client:
        raise ValueError(
            "`client` must be the client `A` was placed with (or None), got "
            f"{client!r}."
        )
    own = check_client(A.client)
    _heal(A)
    began = time.perf_counter()
    code = A.product_code
    remote_right = None
    try:
        if is_dask_array(B):  # encoded by a task from B's chunks: B stays there
            from coded.runtime.interface import encode_right_remote

            key = f"coded-{A.placement_id}-right-{new_call_id()}"
            encoded, remote_right = encode_right_remote(
                own, code, A.encoded, B, key=key
            )
        else:
            encoded = code.encode_right(A.encoded, B)
    except TypeError as error:  # B's dtype does not fit the placement's field
        over = "the reals" if code.field is None else f"GF({code.field.characteristic})"
        raise TypeError(
            f"{error} The placement {A.placement_id} was encoded over {over}: "
            "give `B` of that kind, or place A again with a matching `field`."
        ) from error
    encode_seconds = time.perf_counter() - began
    plan = CallPlan(
        code=code,
        encoded=encoded,
        B=encoded.shared_right,
        name=A.scheme,
        addresses=list(A.locations),
        batches=A.batches,
        began=began,
        encode_seconds=encode_seconds,
        options=options,
        placed_lefts=A.futures,
        remote_right=remote_right,
        checks=_placement_checks(A),
        suspects=A._suspects,
        transport=_transport(A, options, remote=remote_right is not None),
    )
    return start_encoded(own, plan, decide=decide)


def _transport(A: PlacedOperand, options: ExecutionOptions, *, remote: bool) -> str:
    """Return the transport of a call on `A`: resident wherever it applies."""
    why = ""
    if not A._resident:
        why = "the workers run no resident server"
    elif options.output != "numpy":
        why = "output='dask' decodes on a worker from results that stay there"
    elif remote:
        why = "B is a dask.array, encoded where its chunks live"
    elif options.transport == "grouped":
        why = _ungroupable(A.product_code, options)
    if options.transport == "tasks" or (why and options.transport == "auto"):
        return "tasks"
    if why:
        raise ValueError(
            f"`transport={options.transport!r}` cannot serve this call: {why}; "
            "use transport='auto' (which runs it as tasks) or 'tasks'."
        )
    return "resident" if options.transport == "auto" else options.transport


def _ungroupable(code: Code, options: ExecutionOptions) -> str:
    """Why group leaders cannot decode `code`'s calls ("" when they can)."""
    if not isinstance(code, HierarchicalCode) or len(code.levels) < 2:
        return (
            "group leaders decode the groups of a HierarchicalCode of two levels "
            f"or more, not {type(code).__name__}"
        )
    if code.decoding != "groups":
        return "group leaders decode group by group (decoding='groups')"
    if options.check == "redundancy":
        return "check='redundancy' compares every result on the client"
    return ""


def _placement_checks(A: PlacedOperand) -> Any:
    """Return the view's Freivalds checks, drawn at its first use."""
    if A.is_transposed not in A._checks:
        A._checks[A.is_transposed] = _draw_checks(A)
    return A._checks[A.is_transposed]
