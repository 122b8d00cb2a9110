"""The one interface every scheme implements: encode, run pieces, decode.

A *Code* turns the operands of ``A @ B`` into per-worker operands
(:class:`EncodedOperands`); worker ``i`` computes ``left_i @ right_i`` (or row ranges
of it, one *batch* at a time) with ``code.multiply``; each result comes back as a
:class:`Piece`. A :class:`Decoder` takes pieces until it can decode and then returns
``A @ B``. The runtime (``coded.runtime``) only moves operands and pieces; it never
looks inside a code.

Row codes (MDS over the reals or GF(p), replication, uncoded, and the row-MDS code of
heterogeneous loads) encode only A; their pieces may be any row range of a worker's
coded rows. Two-sided codes (polynomial) encode A and B; their pieces are whole
worker results.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from galois import FieldArray

__all__ = ["Code", "Decoder", "EncodedOperands", "Piece"]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Piece:
    """One result returned by a worker.

    Parameters
    ----------
    worker : int
        Worker index ``0 <= worker < n``.
    start, stop : int
        The piece is ``(left_worker @ right_worker)[start:stop]``: a row range of the
        worker's product. A whole result has ``start = 0`` and
        ``stop = left_worker.shape[0]``.
    value : array
        The product rows (float64 over the reals, integer residues over GF(p)).
    """

    worker: int
    start: int
    stop: int
    value: Any


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class EncodedOperands:
    """Per-worker operands of one coded product, plus what decoding needs.

    Parameters
    ----------
    lefts : tuple of array, length n
        Worker ``i`` multiplies ``lefts[i]`` (shape ``(l_i, d)``) on the left.
    rights : tuple of array or None
        Per-worker right operands (two-sided codes); ``None`` means every worker
        uses `shared_right`.
    shared_right : array or None
        The right operand common to all workers (row codes).
    context : object
        Code-specific facts needed to decode (original shape, padding, whether B
        was a vector, the integer mapping). Opaque to the runtime.
    """

    lefts: tuple[Any, ...]
    rights: tuple[Any, ...] | None
    shared_right: Any
    context: Any = None

    def right(self, worker: int) -> Any:
        """Return worker `worker`'s right operand."""
        return self.shared_right if self.rights is None else self.rights[worker]


class Decoder(ABC):
    """Incremental decoder: pieces in, decision out (pure, no I/O).

    Feed pieces with :meth:`add`; once :attr:`is_decodable` is true, :meth:`decode`
    returns the product. Pieces a decodable set no longer needs are ignored.
    """

    @abstractmethod
    def add(self, piece: Piece) -> None:
        """Record one piece."""

    @property
    @abstractmethod
    def is_decodable(self) -> bool:
        """Whether the pieces received so far determine the product."""

    @property
    @abstractmethod
    def progress(self) -> tuple[int, int]:
        """``(received, needed)`` in the code's own unit (results or rows)."""

    @abstractmethod
    def decode(self) -> Any:
        """Return the product; raise `DecodingError` if not yet decodable."""

    def mark(self, worker: int, start: int, stop: int) -> None:
        """Record that a piece arrived whose value is decoded elsewhere.

        Tracks decodability from the pieces' rows alone (for a decode on a Dask
        worker, ``output="dask"``); codes whose decodability depends on the
        values do not support it.

        Raises
        ------
        ValueError
            Always here (the decoders of the row-unit codes override this).
        """
        raise ValueError(
            f"{type(self).__name__} needs the pieces' values to track them; "
            "decode on the client (output='numpy')."
        )

    @property
    def needs_more(self) -> bool:
        """Decodable but too ill-conditioned: more pieces would be used (guard)."""
        return False

    @property
    def condition_number(self) -> float:
        """Condition number of the system a decode would solve (NaN: exact)."""
        return float("nan")

    @property
    def units_used(self) -> int:
        """Coded units a decode would use now (0: not reported)."""
        return 0


class Code(ABC):
    """Base class of every coding scheme (n workers, a recovery threshold)."""

    n: int

    @property
    @abstractmethod
    def recovery_threshold(self) -> int:
        """Number of whole worker results that always suffice (``k``)."""

    @property
    def field(self) -> type[FieldArray] | None:
        """The galois field class, or ``None`` for the real numbers."""
        return None

    @abstractmethod
    def encode_operands(self, A: Any, B: Any) -> EncodedOperands:
        """Encode ``A @ B`` into per-worker operands (validated, pure)."""

    def encode_right(self, encoded: EncodedOperands, B: Any) -> EncodedOperands:
        """Encode a new B against the encoded A of `encoded` (row codes only).

        Parameters
        ----------
        encoded : EncodedOperands
            What :meth:`encode_operands` returned.
        B : array_like
            The new right operand.

        Returns
        -------
        EncodedOperands

        Raises
        ------
        ValueError
            Always here: this code cannot reuse an encoded A (row codes of
            ``coded.codes`` override this).
        """
        raise ValueError(
            f"{type(self).__name__} cannot reuse an encoded A: only the row codes "
            "(MDS, replication, uncoded, row-MDS) encode A alone."
        )

    @abstractmethod
    def decoder(self, encoded: EncodedOperands) -> Decoder:
        """Return a fresh incremental decoder for `encoded`."""

    @property
    @abstractmethod
    def multiply(self) -> Callable[[Any, Any], Any]:
        """Picklable worker-side product ``(left, right) -> left @ right``."""

    @abstractmethod
    def is_decodable(self, workers: Iterable[int]) -> bool:
        """Whether whole results from `workers` suffice to decode."""

    supports_verify = False
    """Whether :meth:`decoder` checks results against each other (``verify=``)."""

    def decode_results(
        self,
        encoded: EncodedOperands,
        results: Mapping[int, Any],
        *,
        verify: str = "off",
        wrong: int = 1,
    ) -> Any:
        """Decode ``A @ B`` from whole worker results ``{worker: left @ right}``.

        Parameters
        ----------
        encoded : EncodedOperands
            What :meth:`encode_operands` returned.
        results : mapping of int to array
            Whole results of some workers.
        verify : {"off", "detect", "correct"}
            Check the results against each other first (codes with
            :attr:`supports_verify`): ``"detect"`` raises
            :class:`~coded.errors.InconsistentResultsError` on a disagreement,
            ``"correct"`` decodes without up to `wrong` wrong workers.
        wrong : int
            Wrong workers to detect or correct (``wrong`` or ``2 wrong`` spare
            results beyond a decodable set are needed).

        Returns
        -------
        array
            The product ``A @ B``.

        Examples
        --------
        >>> import numpy as np
        >>> from coded.codes import MDSCode
        >>> code = MDSCode(5, 2, field=65537)
        >>> encoded = code.encode_operands(np.arange(8).reshape(4, 2), [1, 1])
        >>> results = {i: encoded.lefts[i] @ encoded.right(i) % 65537 for i in range(5)}
        >>> results[1] = (results[1] + 1) % 65537  # worker 1 returns a wrong result
        >>> code.decode_results(encoded, results, verify="correct").tolist()
        [1, 5, 9, 13]
        """
        if verify == "off":
            decoder = self.decoder(encoded)
        elif not self.supports_verify:
            raise ValueError(
                f"{type(self).__name__} cannot check its results against each other "
                f"(verify={verify!r}); use verify='off' or an MDS, replication or "
                "row-MDS code."
            )
        else:
            decoder = self.decoder(encoded, verify=verify, wrong=wrong)
        for worker, value in results.items():
            rows = np.shape(encoded.lefts[worker])[0]
            decoder.add(Piece(worker=worker, start=0, stop=rows, value=value))
        return decoder.decode()
