"""Products that stay on the cluster: decode on a worker, B as a dask.array.

With ``output="dask"`` the client never receives a result: it tracks which
pieces arrived (their rows, ``Decoder.mark``), and once they decode it submits
one decode task that gathers those pieces on a worker, fed to a fresh decoder in
the same order (so it uses the same pieces and solves the same system), and
slices the product into row chunks: a ``dask.array`` backed by futures. A
``dask.array`` right operand (e.g. such a product: ``A @ (B @ x)``) is encoded by
a task too, so chained products never round-trip through the client.
"""

from __future__ import annotations

import dataclasses
import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from dask.highlevelgraph import HighLevelGraph
from distributed import Client, Future, futures_of

from coded.codes import Code, Decoder, EncodedOperands

__all__ = [
    "ProductLayout",
    "check_dask_right",
    "decode_outputs",
    "encode_right_remote",
    "evaluate_remote_async",
    "remote_product",
]


@dataclass(frozen=True, slots=True)
class ProductLayout:
    """Shape, dtype and row chunking of a product decoded on the cluster.

    Parameters
    ----------
    shape : tuple of int
        ``(rows,)`` or ``(rows, c)``.
    dtype : numpy.dtype
        float64 over the reals, int64 over GF(p).
    block_rows : int
        Rows per chunk (the last chunk may be shorter).
    """

    shape: tuple[int, ...]
    dtype: np.dtype
    block_rows: int

    @property
    def chunks(self) -> tuple[tuple[int, ...], ...]:
        """The dask.array chunks: row blocks, columns whole."""
        rows, block = self.shape[0], max(1, self.block_rows)
        whole, rest = divmod(rows, block)
        row_chunks = (block,) * whole + ((rest,) if rest else ())
        return (row_chunks, *((size,) for size in self.shape[1:]))


def decode_outputs(decoder: Decoder, dtype: Any, *outputs: Any) -> np.ndarray:
    """Feed `outputs` (``TaskOutput``s, in arrival order) to `decoder`; decode.

    Runs on a Dask worker. A galois FieldArray product is returned as its
    residues (`dtype`, int64).
    """
    for output in outputs:
        decoder.add(output.piece)
    product = decoder.decode()
    return np.asarray(product).view(np.ndarray).astype(dtype, copy=False)


def remote_product(
    client: Client,
    decoder: Decoder,
    arrived: Sequence[Future],
    layout: ProductLayout,
    *,
    name: str,
) -> Any:
    """Submit the decode of `arrived` on the cluster; return it as a dask.array.

    Parameters
    ----------
    client : distributed.Client
        The call's client.
    decoder : Decoder
        A fresh decoder of the product (no piece added).
    arrived : sequence of Future
        The results the client's decoder recorded, in the order it did.
    layout : ProductLayout
        The product's shape, dtype and row chunks.
    name : str
        The Dask name of the array (its chunks' keys are ``(name, i[, 0])``).

    Returns
    -------
    dask.array.Array
        Persisted: its chunks are computed on the workers as the tasks run.
    """
    import dask.array as da

    decode_key = f"{name}-decode"
    graph: dict[Any, Any] = {
        decode_key: (decode_outputs, decoder, layout.dtype, *arrived)
    }
    start = 0
    for i, rows in enumerate(layout.chunks[0]):
        key = (name, i) if len(layout.shape) == 1 else (name, i, 0)
        index = slice(start, start + rows)
        graph[key] = (operator.getitem, decode_key, index)
        start += rows
    hlg = HighLevelGraph.from_collections(name, graph, dependencies=())
    array = da.Array(hlg, name, layout.chunks, dtype=layout.dtype)
    return client.persist(array)


def check_dask_right(B: Any) -> None:
    """Raise a named error if dask.array `B` cannot be a right operand."""
    if B.ndim not in (1, 2):
        raise ValueError(
            f"`B` must be 1-D or 2-D, got a dask.array of shape {B.shape}."
        )
    if any(math.isnan(size) for sizes in B.chunks for size in sizes):
        raise ValueError(
            f"`B` is a dask.array with unknown chunk sizes (shape {B.shape}); call "
            "`B.compute_chunk_sizes()` (or build it with known chunks) before "
            "passing it."
        )
    if B.dtype == np.bool_ or B.dtype.kind not in "iuf":
        raise TypeError(f"`B` must hold real numbers or integers, got dtype {B.dtype}.")


def _encode_shared_right(code: Code, encoded: EncodedOperands, B: Any) -> Any:
    """Worker side: the shared right operand of ``code.encode_right``."""
    return code.encode_right(encoded, B).shared_right


def encode_right_remote(
    client: Client, code: Code, encoded: EncodedOperands, B: Any, *, key: str
) -> tuple[EncodedOperands, Future]:
    """Encode a dask.array B against A's encoding on the cluster.

    The client encodes a zero stand-in of B's shape and dtype (which checks the
    shapes and gives the product's context; B's values are checked by the task).

    Returns
    -------
    encoded : EncodedOperands
        The client's view: the context, and the stand-in as ``shared_right``.
    right : Future
        The encoded right operand, computed by task `key` from B's chunks.
    """
    check_dask_right(B)
    stand_in = np.zeros(B.shape, dtype=B.dtype)
    local = code.encode_right(encoded, stand_in)
    d = int(np.shape(encoded.lefts[0])[1])
    light = dataclasses.replace(encoded, lefts=(np.zeros((0, d)),), shared_right=None)
    (whole,) = futures_of(client.persist(B.rechunk(B.shape)))
    right = client.submit(_encode_shared_right, code, light, whole, key=key)
    return local, right


async def evaluate_remote_async(
    client: Client, function: Callable[..., Any], *args: Any
) -> Any:
    """Return ``function(*args)``, computed by a task (`args` may be futures).

    For small values of data that stays on the cluster (the Freivalds
    expectations ``c . B`` of a dask.array B).
    """
    future = client.submit(function, *args, pure=False)
    try:
        return await client.gather(future, asynchronous=True)
    finally:
        future.release()
