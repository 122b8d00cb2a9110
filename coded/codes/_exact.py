r"""Exact integer products of any size: one GF(p) code per prime, combined by the CRT.

:class:`ExactCode` wraps a factory ``make_code(p) -> Code`` of GF(p) codes. For
integer ``A`` and ``B`` it bounds ``|C_ij| <= d max|A| max|B|``, takes the fewest
primes below ``2^21`` whose product exceeds twice the bound
(:func:`coded.codes._crt.primes_for_bound`), encodes the residues of A and B with one
code per prime, and stacks the per-prime worker operands on a trailing *prime
axis*, so every shape the runtime looks at (rows, columns) is the per-prime one:

- ``lefts[i]`` has shape ``(l_i, d, P)``, so any row range of it is a valid piece;
  all are int32 residues (the primes are below ``2^21``);
- a right operand has shape ``(d, c, P)`` (or ``(d, P)`` for a vector B);
- worker results have shape ``(rows, c, P)`` (or ``(rows, P)``).

The worker product :func:`multiply_residues` reads the primes from ``P`` (they are
always the first ``P`` of :func:`coded.codes._crt.exact_primes`), so it is a plain
picklable module function. The decoder feeds each prime's slice of a piece to that
prime's decoder and reconstructs the exact integers by Garner's CRT.

The per-prime codes are driven through their residue entry point
(``encode_residues``; their decoders then return int64 residues), so the exact path
never imports galois nor touches its state.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from coded.codes import _crt
from coded.codes import _fields as fields
from coded.codes._base import Code, Decoder, EncodedOperands, Piece
from coded.codes._modular import matmul_mod_into
from coded.codes._units import UnitCode
from coded.errors import DecodingError
from theory.validation import check_finite_matrix

if TYPE_CHECKING:
    from galois import FieldArray

__all__ = ["ExactCode", "ExactContext", "ExactDecoder", "multiply_residues"]


def multiply_residues(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Worker product of an :class:`ExactCode`: one GF(p) product per prime.

    Parameters
    ----------
    left : numpy.ndarray of int32 or int64, shape (rows, d, P)
        Coded residues, ``left[..., j]`` modulo the j-th CRT prime.
    right : numpy.ndarray of int32 or int64, shape (d, c, P) or (d, P)
        Right residues, ``right[..., j]`` modulo the j-th CRT prime.

    Returns
    -------
    numpy.ndarray of int32, shape (rows, c, P) or (rows, P)
        ``out[..., j] = left[..., j] @ right[..., j] mod p_j``.

    Raises
    ------
    ValueError
        If the shapes do not chain or an entry is not a residue.

    Examples
    --------
    >>> p = _crt.exact_primes(1)[0]
    >>> multiply_residues(np.array([[[2], [3]]]), np.array([[p - 1], [1]])).tolist()
    [[1]]
    """
    left, right = np.asarray(left), np.asarray(right)
    if left.ndim != 3 or right.ndim not in (2, 3):
        raise ValueError(
            "`left` must have shape (rows, d, P) and `right` (d, c, P) or (d, P), "
            f"got {left.shape} and {right.shape}."
        )
    rows, d, count = left.shape
    if right.shape[0] != d or right.shape[-1] != count:
        raise ValueError(
            f"`right` must have shape ({d}, ..., {count}) to match `left` "
            f"{left.shape}, got {right.shape}."
        )
    width = right.shape[1] if right.ndim == 3 else 1
    out = np.empty((rows, width, count), dtype=np.int32)
    for j, p in enumerate(_crt.exact_primes(count)):
        R = right[..., j].reshape(d, width)
        matmul_mod_into(left[..., j], R, p, out[..., j])
    return out if right.ndim == 3 else out[:, 0, :]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ExactContext:
    """What an :class:`ExactCode` decode needs (opaque to the runtime).

    Parameters
    ----------
    primes : tuple of int
        The CRT primes, in prime-axis order.
    encoded : tuple of EncodedOperands
        Each prime's encoded operands (left/right arrays are views of the stack).
    bound : int
        ``d max|A| max|B|``; the result is int64 when it is below ``2^63``.
    """

    primes: tuple[int, ...]
    encoded: tuple[EncodedOperands, ...]
    bound: int


def _integer_operand(value: Any, name: str, ndim: tuple[int, ...]) -> np.ndarray:
    if fields.is_field_array(value):
        raise TypeError(
            f"`{name}` must be a plain integer array for an ExactCode, "
            "got a galois FieldArray."
        )
    array = check_finite_matrix(value, name, ndim=ndim)
    if array.dtype.kind not in "iu":
        raise TypeError(
            f"`{name}` must be an integer array for an ExactCode, got dtype "
            f"{array.dtype}."
        )
    if array.size == 0:
        raise ValueError(f"`{name}` must be non-empty, got shape {array.shape}.")
    return array


def _stack(arrays: list[Any]) -> np.ndarray:
    """Residues (all below ``2^21``) stacked on a trailing axis, as int32."""
    first = np.shape(arrays[0])
    stacked = np.empty((*first, len(arrays)), dtype=np.int32)
    for j, array in enumerate(arrays):
        stacked[..., j] = array
    stacked.setflags(write=False)
    return stacked


class ExactCode(Code):
    r"""Exact integer ``A @ B`` through GF(p) codes modulo several primes (CRT).

    Parameters
    ----------
    make_code : callable
        ``make_code(p)`` returns one of the codes of :mod:`coded.codes` over
        ``GF(p)`` (``MDSCode``, ``RowMDSCode``, ``PolynomialCode``,
        ``ReplicationCode`` or ``UncodedCode``, e.g.
        ``lambda p: MDSCode(8, 6, field=p)``); its structure (``n``, which workers
        suffice) must not depend on ``p``. The codes are built once per prime and
        kept.

    Raises
    ------
    TypeError
        If `make_code` is not callable or does not return such a code over GF(p).

    Notes
    -----
    With ``|C_ij| <= \beta = d \max|A| \max|B|``, the primes
    ``p_1 > p_2 > ... > p_P`` are the largest primes below ``2^21`` with

    .. math:: \prod_{j \le P} p_j > 2 \beta ,

    so about ``(\log_2 \beta + 1) / 21`` primes (two for 16-bit inputs and
    ``d <= 1024``). Each prime costs one coded GF(p) product on the fast direct
    path of :func:`coded.codes._modular.matmul_mod`; Garner's CRT
    (:func:`coded.codes._crt.crt_reconstruct`) returns int64 when ``\beta < 2^63`` and
    an object array of Python ints otherwise (exact, slower).

    Per-prime operands go to the wrapped codes as int64 residues through their
    ``encode_residues`` entry point, and their decoders return residues: the
    exact path neither imports galois nor creates (or alters) galois fields.

    References
    ----------
    Q. Yu, M. Maddah-Ali, S. Avestimehr, "Polynomial Codes: an Optimal Design
    for High-Dimensional Coded Matrix Multiplication", NeurIPS 2017.

    Examples
    --------
    >>> from coded.codes import MDSCode
    >>> code = ExactCode(lambda p: MDSCode(3, 2, field=p))
    >>> A = np.array([[2**40, -1], [3, 4]])
    >>> B = np.array([[2**20], [5]])
    >>> encoded = code.encode_operands(A, B)
    >>> results = {i: code.multiply(encoded.lefts[i], encoded.right(i))
    ...            for i in (1, 2)}
    >>> code.decode_results(encoded, results).tolist()
    [[1152921504606846971], [3145748]]
    """

    def __init__(self, make_code: Callable[[int], Code]):
        if not callable(make_code):
            raise TypeError(
                f"`make_code` must be callable (p -> Code), got "
                f"{type(make_code).__name__}."
            )
        self._make_code = make_code
        self._codes: dict[int, Code] = {}
        probe = self._code(_crt.exact_primes(1)[0])
        self.n = probe.n

    def _code(self, p: int) -> Code:
        code = self._codes.get(p)
        if code is None:
            code = self._make_code(p)
            if not isinstance(code, Code):
                raise TypeError(
                    f"`make_code({p})` must return a Code, got {type(code).__name__}."
                )
            if not isinstance(code, UnitCode) or code.p != p:
                raise TypeError(
                    f"`make_code({p})` must return a coded.codes code over GF({p}) "
                    "(MDSCode, RowMDSCode, PolynomialCode, ReplicationCode or "
                    f"UncodedCode), got {code!r}."
                )
            self._codes[p] = code
        return code

    @property
    def recovery_threshold(self) -> int:
        """Number of whole worker results that always suffice (the wrapped code's)."""
        return self._code(_crt.exact_primes(1)[0]).recovery_threshold

    @property
    def field(self) -> type[FieldArray] | None:
        """``None``: the product is over the integers (each prime's code is GF(p))."""
        return None

    @property
    def multiply(self) -> Callable[[Any, Any], Any]:
        """Picklable worker-side product: :func:`multiply_residues`."""
        return multiply_residues

    def is_decodable(self, workers: Iterable[int]) -> bool:
        """Whether whole results from `workers` suffice to decode.

        Parameters
        ----------
        workers : iterable of int
            Worker indices ``0 <= i < n``.

        Returns
        -------
        bool
        """
        return self._code(_crt.exact_primes(1)[0]).is_decodable(workers)

    def encode_operands(self, A: Any, B: Any) -> EncodedOperands:
        """Encode integer ``A @ B`` modulo the primes its bound needs.

        Parameters
        ----------
        A : array_like of int, shape (m, d)
            Left operand (any integer dtype, negative values allowed).
        B : array_like of int, shape (d, c) or (d,)
            Right operand.

        Returns
        -------
        EncodedOperands
            Per-worker operands stacked on the prime axis (see the module
            docstring); ``context`` is an :class:`ExactContext`.

        Raises
        ------
        TypeError
            If an operand is not an integer array.
        ValueError
            If the shapes do not chain, an operand is empty, or the bound needs
            more than ``MAX_PRIMES`` primes.
        """
        A = _integer_operand(A, "A", (2,))
        B = _integer_operand(B, "B", (1, 2))
        if A.shape[1] != B.shape[0]:
            raise ValueError(
                "`A` and `B` must have matching inner dimensions, got "
                f"A.shape={A.shape}, B.shape={B.shape}."
            )
        max_A, max_B = _crt.max_abs(A), _crt.max_abs(B)
        bound = A.shape[1] * max_A * max_B
        primes = _crt.primes_for_bound(bound)
        encoded = [
            self._code(p).encode_residues(
                _crt.to_residues(A, p, magnitude=max_A),
                _crt.to_residues(B, p, magnitude=max_B),
            )
            for p in primes
        ]
        return _stacked(encoded, primes, bound)

    def decoder(self, encoded: EncodedOperands) -> ExactDecoder:
        """Return a fresh incremental decoder for `encoded`.

        Parameters
        ----------
        encoded : EncodedOperands
            What :meth:`encode_operands` of this code returned.

        Returns
        -------
        ExactDecoder
        """
        context = encoded.context if isinstance(encoded, EncodedOperands) else None
        if not isinstance(context, ExactContext):
            raise TypeError(
                "`encoded` must be the EncodedOperands returned by "
                f"ExactCode.encode_operands, got {type(encoded).__name__}."
            )
        decoders = tuple(
            self._code(p).decoder(e)
            for p, e in zip(context.primes, context.encoded, strict=True)
        )
        return ExactDecoder(decoders=decoders, context=context)


def _stacked(
    encoded: list[EncodedOperands], primes: tuple[int, ...], bound: int
) -> EncodedOperands:
    """Stack per-prime operands on a trailing prime axis; keep per-prime views."""
    n = len(encoded[0].lefts)
    lefts = tuple(_stack([e.lefts[i] for e in encoded]) for i in range(n))
    if encoded[0].rights is None:
        shared = _stack([e.shared_right for e in encoded])
        rights = None
    else:
        shared = None
        rights = tuple(_stack([e.rights[i] for e in encoded]) for i in range(n))
    views = tuple(
        dataclasses.replace(
            e,
            lefts=tuple(left[..., j] for left in lefts),
            rights=None if rights is None else tuple(r[..., j] for r in rights),
            shared_right=None if shared is None else shared[..., j],
        )
        for j, e in enumerate(encoded)
    )
    context = ExactContext(primes=primes, encoded=views, bound=bound)
    return EncodedOperands(
        lefts=lefts, rights=rights, shared_right=shared, context=context
    )


class ExactDecoder(Decoder):
    """Incremental decoder of an :class:`ExactCode`: one decoder per prime, then CRT.

    Parameters
    ----------
    decoders : tuple of Decoder
        One per prime, in prime-axis order.
    context : ExactContext
        From :meth:`ExactCode.encode_operands`.
    """

    def __init__(self, *, decoders: tuple[Decoder, ...], context: ExactContext):
        self._decoders = decoders
        self._context = context

    def add(self, piece: Piece) -> None:
        """Record one piece (its value has a trailing prime axis).

        Parameters
        ----------
        piece : Piece
            ``(left_worker @ right_worker)[start:stop]``, shape
            ``(stop - start, ..., P)``.
        """
        if not isinstance(piece, Piece):
            raise TypeError(f"`piece` must be a Piece, got {type(piece).__name__}.")
        value = np.asarray(piece.value)
        count = len(self._decoders)
        if value.ndim < 2 or value.shape[-1] != count:
            raise ValueError(
                f"`piece.value` must have shape (rows, ..., {count}) with a trailing "
                f"prime axis, got {value.shape}."
            )
        for j, decoder in enumerate(self._decoders):
            decoder.add(dataclasses.replace(piece, value=value[..., j]))

    @property
    def is_decodable(self) -> bool:
        """Whether the pieces so far determine the product (for every prime)."""
        return all(decoder.is_decodable for decoder in self._decoders)

    @property
    def progress(self) -> tuple[int, int]:
        """``(received, needed)`` in the wrapped code's unit."""
        return self._decoders[0].progress

    def decode(self) -> np.ndarray:
        """Return the exact integer product.

        Returns
        -------
        numpy.ndarray
            int64 when the bound ``d max|A| max|B|`` is below ``2^63``, else an
            object array of Python ints.

        Raises
        ------
        DecodingError
            If the pieces do not yet determine the product.
        """
        if not self.is_decodable:
            raise DecodingError(
                "not decodable yet: received {}, need {}.".format(*self.progress)
            )
        residues = [decoder.decode() for decoder in self._decoders]
        context = self._context
        return _crt.crt_reconstruct(residues, context.primes, bound=context.bound)
