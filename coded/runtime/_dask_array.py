r"""Encode a ``dask.array`` A where its chunks live: A never reaches the client.

A block code splits A's m rows into K source blocks ``X_j`` of
``rows = ceil(m / K)`` rows (the last ones zero-padded) and gives worker i its
coded units ``Y_u = sum_j G[u, j] X_j`` (one unit, or several sub-blocks),
stacked. Here A is rechunked on the cluster into those row blocks (columns
whole). A share of plain blocks (``G[u] = e_j``: systematic or replicated) is
one task on worker i gathering them; a parity share is built by a chain of
tasks, one per block it combines: step t runs on the worker holding block
``j_t`` and adds its terms to the partial sum it receives, the last step on
worker i. A parity share thus never gathers all of A on one worker; each step
holds one block and the partial sum. The client sends graphs and receives
nothing of A: its memory stays O(B + result).

An LT (rateless) code's encoded row sums source rows from anywhere in A, so each
worker's share ``G_i A`` is built by a chain over all of A's row chunks, the
same way: step t multiplies chunk t by the columns of ``G_i`` it meets and adds
the product to the partial sum.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
from distributed import Client, Future, futures_of, wait

from coded.codes import BlockCode, EncodedOperands, LTCode
from coded.codes.interface import RatelessContext, UnitContext, project_share

__all__ = [
    "check_dask_matrix",
    "encode_share",
    "place_dask_lt",
    "place_dask_rows",
    "project_shares",
]


def check_dask_matrix(A: Any, name: str = "A") -> tuple[int, int]:
    """Return ``(m, d)`` of a 2-D dask.array with known chunk sizes."""
    if A.ndim != 2:
        raise ValueError(f"`{name}` must be 2-D, got a dask.array of shape {A.shape}.")
    if any(math.isnan(size) for sizes in A.chunks for size in sizes):
        raise ValueError(
            f"`{name}` is a dask.array with unknown chunk sizes (shape {A.shape}); "
            f"call `{name}.compute_chunk_sizes()` (or build it with known chunks) "
            "before passing it."
        )
    if A.dtype == np.bool_ or A.dtype.kind not in "iuf":
        raise TypeError(
            f"`{name}` must hold real numbers or integers, got dtype {A.dtype}."
        )
    return int(A.shape[0]), int(A.shape[1])


def encode_share(
    *blocks: np.ndarray,
    coefficients: Sequence[Sequence[int | float]],
    rows: int,
    p: int | None,
    partial: np.ndarray | None = None,
) -> np.ndarray:
    """Return a worker's coded units ``sum_j coefficients[u][j] blocks[j]``, stacked.

    Runs on a worker; each unit is zero-padded to `rows` rows; over the reals
    the blocks must be finite, over GF(p) integers (signed ones are taken
    modulo p).

    Parameters
    ----------
    *blocks : numpy.ndarray, shape (<= rows, d)
        The source blocks the units combine.
    coefficients : sequence of sequences of int or float
        ``coefficients[u][j]``: generator coefficient of block j in unit u
        (residues over GF(p)).
    rows : int
        Rows of a source block (and of a unit).
    p : int, optional
        The prime over GF(p), or None over the reals.
    partial : numpy.ndarray, optional
        Units of other blocks already summed (a step of a chain); added to.

    Returns
    -------
    numpy.ndarray, shape (units * rows, d)
        float64, or int64 residues in ``[0, p)``.
    """
    d = blocks[0].shape[1]
    sources = [_source(block, p) for block in blocks]
    dtype = np.float64 if p is None else np.int64
    if partial is None:
        share = np.zeros((len(coefficients) * rows, d), dtype=dtype)
    else:  # an intermediate of the chain, needed by this step alone
        share = partial if partial.flags.writeable else partial.copy()
    for u, row in enumerate(coefficients):
        unit = share[u * rows : (u + 1) * rows]
        for coefficient, source in zip(row, sources, strict=True):
            if coefficient == 0:
                continue
            part = unit[: source.shape[0]]
            if p is None:
                part += coefficient * source
            else:
                part[:] = np.mod(part + int(coefficient) * source, p)
    return share


def _source(block: np.ndarray, p: int | None) -> np.ndarray:
    """Return a block as float64 (checked finite) or as residues modulo `p`."""
    block = np.asarray(block)
    if p is None:
        block = np.asarray(block, dtype=np.float64)
        if not np.all(np.isfinite(block)):
            raise ValueError("`A` must be finite (no NaN or inf).")
        return block
    if block.dtype.kind not in "iu":
        raise TypeError(
            f"`A` must hold integers over GF({p}), got dtype {block.dtype}."
        )
    return np.mod(np.asarray(block, dtype=np.int64), p)


def _abs_max(A: Any) -> int:
    import dask.array as da

    return int(da.absolute(A).max().compute())


@contextlib.contextmanager
def _persisted_rows(
    client: Client, A: Any
) -> Iterator[tuple[Any, list[Future], dict[str, Any]]]:
    """Persist dask.array A (chunked by rows, columns whole); release it after.

    Yields the persisted array, the future of each row chunk in order, and
    where each is held.
    """
    persisted = client.persist(A)
    by_key = {future.key: future for future in futures_of(persisted)}
    chunks = [by_key[row[0]] for row in persisted.__dask_keys__()]
    try:
        yield persisted, chunks, client.who_has(chunks)
    finally:
        for future in chunks:
            future.release()


def _chain(
    client: Client,
    step: Callable[..., np.ndarray],
    steps: Sequence[tuple[Future, dict[str, Any]]],
    holders: dict[str, Any],
    address: str,
    key: str,
) -> Future:
    """Submit ``step(chunk, partial=..., **arguments)`` over `steps`, as a chain.

    Each step runs where its chunk is held (one chunk and the partial sum in
    memory) and adds to the previous step's partial sum; the last runs on
    `address` under `key`, so the share stays there.
    """
    partial = None
    for t, (chunk, arguments) in enumerate(steps):
        last = t == len(steps) - 1
        where = [address] if last else list(holders.get(chunk.key, ())) or [address]
        partial = client.submit(
            step,
            chunk,
            partial=partial,
            **arguments,
            key=key if last else f"{key}-part-{t}",
            workers=where,
            allow_other_workers=False,
        )
    return partial


def _settled(futures: list[Future]) -> list[Future]:
    """Wait for the shares; on an error (a bad entry of A) release all, raise it."""
    try:
        wait(futures)
        for future in futures:
            if future.status == "error":
                future.result()
    except BaseException:
        for future in futures:
            future.release()
        raise
    return futures


def place_dask_rows(
    client: Client,
    code: BlockCode,
    A: Any,
    addresses: Sequence[str],
    keys: Sequence[str],
) -> tuple[EncodedOperands, list[Future]]:
    """Encode dask.array A with `code` on the cluster; share i stays on worker i.

    Parameters
    ----------
    client : distributed.Client
        The cluster's client.
    code : BlockCode
        An MDS (reals or GF(p)), replication or uncoded code.
    A : dask.array.Array, shape (m, d)
        Any row and column chunking with known sizes.
    addresses : sequence of str, length n
        The worker that keeps each share.
    keys : sequence of str, length n
        The Dask key of each share.

    Returns
    -------
    encoded : EncodedOperands
        The decoding context, with read-only zero-stride stand-ins of the shares'
        shape as ``lefts`` (the shares themselves are on the workers).
    futures : list of Future
        The shares, ``futures[i]`` held by ``addresses[i]``.
    """
    m, d = check_dask_matrix(A)
    p, G = code.p, code.generator
    offsets = code.unit_offsets
    K = G.shape[1]
    rows = -(-m // K)
    whole, rest = divmod(m, rows)
    blocks = A.rechunk({0: (rows,) * whole + ((rest,) if rest else ()), 1: -1})
    with _persisted_rows(client, blocks) as (blocks, block_futures, holders):
        output, a_bound = ("real", 0) if p is None else ("signed", d * _abs_max(blocks))
        futures = []
        chain_step = functools.partial(encode_share, rows=rows, p=p)
        for i, (address, key) in enumerate(zip(addresses, keys, strict=True)):
            units = G[offsets[i] : offsets[i + 1]]
            used = [j for j in range(len(block_futures)) if units[:, j].any()]
            if len(used) <= len(units):  # plain blocks: gather them
                futures.append(
                    client.submit(
                        chain_step,
                        *(block_futures[j] for j in used),
                        coefficients=units[:, used].tolist(),
                        key=key,
                        workers=[address],
                        allow_other_workers=False,
                    )
                )
                continue
            steps = [
                (block_futures[j], {"coefficients": units[:, [j]].tolist()})
                for j in used
            ]
            futures.append(_chain(client, chain_step, steps, holders, address, key))
        _settled(futures)
    dtype = np.float64 if p is None else np.int64
    stand_ins = tuple(
        np.broadcast_to(np.zeros((), dtype=dtype), ((stop - start) * rows, d))
        for start, stop in itertools.pairwise(offsets)
    )
    context = UnitContext(
        m=m,
        c=1,
        rows=rows,
        width=1,
        is_vector=True,
        output=output,
        a_bound=a_bound,
    )
    encoded = EncodedOperands(
        lefts=stand_ins,
        rights=None,
        shared_right=np.zeros(d, dtype=dtype),
        context=context,
    )
    return encoded, futures


def encode_lt_step(
    chunk: np.ndarray, columns: Any, partial: np.ndarray | None = None
) -> np.ndarray:
    """One step of an LT share's chain: ``partial + columns @ chunk`` (a worker).

    `columns` are the share's generator columns of the chunk's rows (CSR); the
    chunk was checked finite before the chains started.
    """
    product = np.asarray(columns @ np.asarray(chunk, dtype=np.float64))
    return product if partial is None else partial + product


def place_dask_lt(
    client: Client,
    code: LTCode,
    A: Any,
    addresses: Sequence[str],
    keys: Sequence[str],
) -> tuple[EncodedOperands, list[Future]]:
    """Encode dask.array A with an LT code on the cluster; share i stays on worker i.

    As :func:`place_dask_rows`, for `code` an :class:`coded.LTCode` (``code.m``
    rows of A) and A of real entries in any chunking with known sizes; the
    decoding context also holds ``||A||_F``.
    """
    import dask
    import dask.array as da

    m, d = check_dask_matrix(A)
    if m != code.m:
        raise ValueError(f"`A` must have m={code.m} rows, got shape {A.shape}.")
    G = code.generator
    with _persisted_rows(client, A.rechunk({1: -1})) as (chunks, futures, holders):
        # one graph checks every entry once (not in each of the n chains)
        finite, squares = dask.compute(
            da.isfinite(chunks).all(), (chunks.astype(np.float64) ** 2).sum()
        )
        if not finite:
            raise ValueError("`A` must be finite (no NaN or inf).")
        a_norm = math.sqrt(float(squares))
        bounds = np.concatenate(([0], np.cumsum(chunks.chunks[0])))
        shares = []
        for i, (a, b) in enumerate(code.row_ranges):
            steps = [
                (future, {"columns": G[a:b, bounds[j] : bounds[j + 1]]})
                for j, future in enumerate(futures)
            ]
            shares.append(
                _chain(client, encode_lt_step, steps, holders, addresses[i], keys[i])
            )
        _settled(shares)
    stand_ins = tuple(
        np.broadcast_to(np.zeros(()), (b - a, d)) for a, b in code.row_ranges
    )
    context = RatelessContext(m=m, is_vector=True, c=1, scale=0.0, a_norm=a_norm)
    encoded = EncodedOperands(
        lefts=stand_ins, rights=None, shared_right=np.zeros(d), context=context
    )
    return encoded, shares


def _project_rows(
    share: np.ndarray,
    start: int,
    stop: int,
    r: np.ndarray,
    p: int | None,
    unit_rows: int | None,
) -> Any:
    """Worker side: the projection of rows ``[start, stop)`` of a share."""
    return project_share(share[start:stop], r, p, unit_rows=unit_rows)


def project_shares(
    client: Client,
    jobs: Sequence[tuple[Future, int, int, np.ndarray]],
    p: int | None,
    *,
    unit_rows: int | None = None,
) -> list[Any]:
    """Project placed shares where they live: ``c = W^T r`` for each secret `r`.

    The Freivalds checks of shares the client does not hold (a dask.array A,
    shares rebuilt by a repair): only `r` goes to the share's worker and only
    ``c`` and ``|W|^T |r|`` come back (``coded.codes.interface.project_share``;
    `unit_rows`: for ``A.T @ y``).

    Parameters
    ----------
    client : distributed.Client
        The placement's client.
    jobs : sequence of (Future, int, int, numpy.ndarray)
        A share, the rows ``[start, stop)`` of one of its batches, and the
        batch's secret vector.
    p : int or None
        The field's prime, or None over the reals.
    unit_rows : int, optional
        Rows of one unit, to project for ``A.T @ y``.

    Returns
    -------
    list
        The projection of each job, in order.
    """
    futures = [
        client.submit(_project_rows, share, start, stop, r, p, unit_rows, pure=False)
        for share, start, stop, r in jobs
    ]
    try:
        return client.gather(futures)
    finally:
        for future in futures:
            future.release()
