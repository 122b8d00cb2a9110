r"""``A.T @ y`` from the shares of a row block code: no second encoding of A.

A block code (MDS, replication, uncoded) splits A's rows into K source blocks
``X_j`` (``rows x d``, zero-padded) and gives worker i the unit
``Y_i = sum_j G[i, j] X_j``. Split y the same way into blocks ``y_j``; then

.. math::

    A^T y = \sum_j X_j^T y_j
          = \sum_j \sum_{i \in S} (G_S^{-1})_{j i}\, Y_i^T y_j

for any decodable set S of workers. So worker i computes the ``d x K`` matrix
``W_i = Y_i^T [y_0, ..., y_{K-1}]`` (one pass over its share: the same memory
traffic as ``Y_i x``), and the decoder solves ``sum_i (G_S^{-1})_{j i} W_i`` for
every j with the code's own decoder and keeps column j of the j-th solution.
Any set of workers that decodes ``A @ x`` decodes ``A.T @ y``; the placement
holds nothing more than A's shares (no column-wise copy), each worker receives
all of y (m entries) and returns ``d K`` entries.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from coded.codes import _fields as fields
from coded.codes._base import Code, Decoder, EncodedOperands, Piece
from coded.codes._mds import BlockCode
from coded.codes._units import UnitContext, UnitDecoder

if TYPE_CHECKING:
    from galois import FieldArray

__all__ = [
    "TransposedCode",
    "TransposedContext",
    "multiply_transposed",
    "transposed_units",
]


def multiply_transposed(left: Any, right: Any, p: int | None = None) -> np.ndarray:
    """Worker product of the transposed code: ``left.T @ right`` (mod `p`).

    Parameters
    ----------
    left : numpy.ndarray or scipy.sparse CSR, shape (u rows, d)
        The worker's u coded units of A, stacked (u = 1 but for MDS codes whose
        workers hold sub-blocks; CSR: a sparse A under replication or uncoded).
    right : numpy.ndarray, shape (rows, K c)
        The blocks of y side by side.
    p : int, optional
        The prime over GF(p) (int64 residues), or None over the reals.

    Returns
    -------
    numpy.ndarray, shape (u d, K c)
        The products of the units, stacked.
    """
    # fields.matmul: a sparse share's units (replication, uncoded) are CSC
    products = [
        fields.matmul(unit, right, p) for unit in transposed_units(left, right.shape[0])
    ]
    return products[0] if len(products) == 1 else np.concatenate(products)


def transposed_units(left: Any, rows: int) -> list[Any]:
    """Return a share's units ``Y_u^T`` (``d x rows`` each): its ``A.T`` factors."""
    return [left[u : u + rows].T for u in range(0, left.shape[0], rows)]


@dataclass(frozen=True, slots=True, kw_only=True)
class TransposedContext:
    """What decoding ``A.T @ y`` needs besides the pieces.

    Parameters
    ----------
    forward : UnitContext
        The context of A's encoding (rows per block, output semantics, bounds).
    d : int
        Columns of A (rows of the product).
    c : int
        Columns of y (1 for a vector).
    is_vector : bool
        Whether y was a vector.
    """

    forward: UnitContext
    d: int
    c: int
    is_vector: bool


class TransposedCode(Code):
    """``A.T @ y`` on the shares of a row block code (see the module docstring).

    Parameters
    ----------
    inner : BlockCode
        The code A was encoded with: :class:`~coded.MDSCode` (reals or GF(p)),
        :class:`~coded.ReplicationCode` or :class:`~coded.UncodedCode`.

    Examples
    --------
    >>> import numpy as np
    >>> from coded import MDSCode
    >>> code = TransposedCode(MDSCode(4, 3))
    >>> A, y = np.arange(18.0).reshape(6, 3), np.array([1.0, 0, -1, 2, 1, 3])
    >>> encoded = code.encode_operands(A, y)
    >>> results = {i: encoded.lefts[i].T @ encoded.right(i) for i in (1, 2, 3)}
    >>> np.allclose(code.decode_results(encoded, results), A.T @ y)
    True
    """

    def __init__(self, inner: Code):
        if not isinstance(inner, BlockCode):
            raise ValueError(
                "`A.T @ y` needs a block code (MDS, replication, uncoded) that "
                f"encodes A alone, got {type(inner).__name__}; place A with one "
                "of those schemes (allocations' row-MDS codes are not supported)."
            )
        self.inner = inner
        self.n = inner.n

    @property
    def recovery_threshold(self) -> int:
        """The inner code's recovery threshold."""
        return self.inner.recovery_threshold

    @property
    def field(self) -> type[FieldArray] | None:
        """The inner code's field (None over the reals)."""
        return self.inner.field

    @property
    def multiply(self) -> Callable[[Any, Any], Any]:
        """Picklable ``(left, right) -> left.T @ right`` (mod p over GF(p))."""
        return functools.partial(multiply_transposed, p=self.inner.p)

    def is_decodable(self, workers: Iterable[int]) -> bool:
        """Whether whole results from `workers` suffice (as for ``A @ x``)."""
        return self.inner.is_decodable(workers)

    def encode_operands(self, A: Any, B: Any) -> EncodedOperands:
        """Encode ``A.T @ B``: A's shares under the inner code, B's blocks.

        Parameters
        ----------
        A : array_like, shape (m, d)
            As for the inner code's ``encode_operands``.
        B : array_like, shape (m,) or (m, c)
            The right operand y.

        Returns
        -------
        EncodedOperands
        """
        d = np.shape(A)[1] if np.ndim(A) == 2 else 0
        placeholder = np.zeros(d, dtype=np.float64 if self.inner.p is None else int)
        return self.encode_right(self.inner.encode_operands(A, placeholder), B)

    def encode_right(self, encoded: EncodedOperands, B: Any) -> EncodedOperands:
        """Encode y against A's encoding by the inner code (A itself is reused).

        Parameters
        ----------
        encoded : EncodedOperands
            What the inner code's ``encode_operands`` (or this method) returned.
        B : array_like, shape (m,) or (m, c)
            The right operand y, with the semantics of A's encoding.

        Returns
        -------
        EncodedOperands
            ``lefts`` unchanged; every worker shares the ``(rows, K c)`` matrix
            of y's blocks side by side.

        Raises
        ------
        ValueError
            If y does not have A's m rows, or breaks the exactness bound.
        """
        forward = encoded.context
        if isinstance(forward, TransposedContext):
            forward = forward.forward
        if not isinstance(forward, UnitContext):
            raise TypeError(
                "`encoded` must come from the inner code's encode_operands, got "
                f"{type(encoded.context).__name__}."
            )
        m, rows, p = forward.m, forward.rows, self.inner.p
        d = int(np.shape(encoded.lefts[0])[1])
        if np.ndim(B) not in (1, 2) or np.shape(B)[0] != m:
            raise ValueError(
                f"`y` must have A's m={m} rows for A.T @ y, got shape {np.shape(B)}."
            )
        # a signed-integer y is exact while 2 m max|A| max|y| < p
        a_bound = forward.a_bound // d * m if forward.a_bound else 0
        y = fields.prepare_right(B, p, forward.output, m, a_bound)
        is_vector = y.ndim == 1
        y = y.reshape(m, -1)
        c, K = y.shape[1], self.inner.generator.shape[1]
        padded = np.zeros((K * rows, c), dtype=y.dtype)
        padded[:m] = y
        blocks = padded.reshape(K, rows, c).transpose(1, 0, 2).reshape(rows, K * c)
        blocks.setflags(write=False)
        context = TransposedContext(forward=forward, d=d, c=c, is_vector=is_vector)
        return EncodedOperands(
            lefts=encoded.lefts, rights=None, shared_right=blocks, context=context
        )

    def decoder(self, encoded: EncodedOperands) -> Decoder:
        """Return a fresh incremental decoder of ``A.T @ y``."""
        if not isinstance(encoded.context, TransposedContext):
            raise TypeError(
                "`encoded` must come from TransposedCode.encode_right, got "
                f"{type(encoded.context).__name__}."
            )
        return TransposedDecoder(self, encoded.context)


class TransposedDecoder(Decoder):
    """Decoder of ``A.T @ y``: the inner decoder on the flattened ``W_i``.

    Each whole worker result ``W_i`` (``d x K c``) is one unit of one row; the
    inner decoder solves the K combinations ``sum_i (G_S^{-1})_{j i} W_i`` and
    block j of the j-th one is ``X_j^T y_j``; their sum is ``A.T @ y``.
    """

    def __init__(self, code: TransposedCode, context: TransposedContext):
        self._code, self._context = code, context
        K = code.inner.generator.shape[1]
        self._width = context.d * K * context.c
        inner_context = UnitContext(
            m=K,
            c=self._width,
            rows=1,
            width=self._width,
            is_vector=False,
            output="real" if code.inner.p is None else "residue",
        )
        self._inner = UnitDecoder(code.inner, inner_context)

    def add(self, piece: Piece) -> None:
        """Record one whole worker result ``W_i`` (row ranges are not supported)."""
        if not isinstance(piece, Piece):
            raise TypeError(f"`piece` must be a Piece, got {type(piece).__name__}.")
        units = self._units(piece.worker, piece.start, piece.stop)
        value = np.asarray(piece.value)  # a FieldArray's residues, as ndarray
        if value.size != units * self._width:
            raise ValueError(
                f"`piece.value` must have {units * self._width} entries "
                f"({units} x d x K c), got shape {value.shape}."
            )
        flat = value.reshape(units, -1)
        self._inner.add(dataclasses.replace(piece, start=0, stop=units, value=flat))

    def mark(self, worker: int, start: int, stop: int) -> None:
        """Record that worker `worker`'s whole result arrived (decoded elsewhere)."""
        self._inner.mark(worker, 0, self._units(worker, start, stop))

    def _units(self, worker: int, start: int, stop: int) -> int:
        """Units of a whole result of `worker` (raises for a row range)."""
        inner = self._code.inner
        worker = inner._check_worker(worker)
        units = int(inner.unit_offsets[worker + 1] - inner.unit_offsets[worker])
        rows = self._context.forward.rows * units
        if (start, stop) != (0, rows):
            raise ValueError(
                f"A.T @ y needs whole worker results (rows 0..{rows}), got the row "
                f"range [{start}, {stop}) of worker {worker}."
            )
        return units

    @property
    def is_decodable(self) -> bool:
        """Whether enough whole results have arrived."""
        return self._inner.is_decodable

    @property
    def progress(self) -> tuple[int, int]:
        """``(received, needed)`` whole results."""
        return self._inner.progress

    @property
    def needs_more(self) -> bool:
        """As the inner decoder (the same system is solved)."""
        return self._inner.needs_more

    @property
    def condition_number(self) -> float:
        """Condition number of the inner decoder's system."""
        return self._inner.condition_number

    @property
    def units_used(self) -> int:
        """Coded units the inner decoder would use."""
        return self._inner.units_used

    def decode(self) -> Any:
        """Return ``A.T @ y`` (shape ``(d,)`` or ``(d, c)``)."""
        context, p = self._context, self._code.inner.p
        K = self._code.inner.generator.shape[1]
        solved = np.asarray(self._inner.decode()).reshape(K, context.d, K, context.c)
        product = np.einsum("jajc->ac", solved)
        if p is not None:
            product = fields.lift(np.mod(product, p), context.forward.output, p)
        return product[:, 0] if context.is_vector else product
