r"""Arithmetic shared by every code: the field, operand semantics, products, solves.

A code works over the reals (``p is None``, float64 arrays) or over GF(p) (int64
residue arrays in ``[0, p)``; every product goes through
:func:`coded.codes._modular.matmul_mod`). galois is imported only inside functions.

Operand semantics over GF(p):

- galois ``FieldArray`` inputs (or integer arrays already in ``[0, p)`` next to one)
  mean field arithmetic; results come back as ``FieldArray``.
- plain integer inputs mean exact signed integers: they map to the field by
  symmetric residues and the result is lifted back to ``(-p/2, p/2]``, which equals
  the true product when ``2 max|C| < p``.
- the residue entry point (``encode_residues`` of the codes, used by the CRT code)
  takes int64 residues in ``[0, p)`` and decodes to them: no galois at all.

Over the reals the working precision is float64, or float32 when both operands are
float32 (``output = "float32"``): shares and worker products stay float32 (half the
memory and bandwidth), decoding is float64 and the product is returned as float32.

Operands are converted with ``np.asarray(..., dtype)`` (no copy when the caller's
array already has the dtype), so coded blocks that equal source blocks are
read-only views of the caller's array.
"""

from __future__ import annotations

import math
import sys
import warnings
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import scipy.linalg

from coded.codes import _modular
from coded.errors import IllConditionedWarning
from theory.validation import (
    all_finite,
    check_finite_matrix,
    check_ndim,
    check_prime,
)

if TYPE_CHECKING:
    from galois import FieldArray

__all__ = [
    "DEFAULT_PRIME",
    "MAX_PRIME",
    "TRUST_LIMIT",
    "Operands",
    "as_output",
    "cauchy_systematic",
    "check_points",
    "condition_number",
    "galois_field",
    "inverse_mod",
    "is_field_array",
    "lift",
    "matmul",
    "multiply_mod",
    "multiply_real",
    "prepare_operands",
    "prepare_residues",
    "prepare_single",
    "resolve_prime",
    "solve",
    "vandermonde",
]

DEFAULT_PRIME = 65_537
"""The recommended prime: exact float64 BLAS products for inner blocks >= 2048."""

MAX_PRIME = 2**31 - 1
"""Largest supported prime: residue products ``(p - 1)^2`` must fit in int64."""

TRUST_LIMIT = 1e-6
"""A real decode warns when ``cond(G[S]) * eps`` exceeds this relative error."""

Output = Literal["real", "float32", "field", "signed", "residue"]
REAL_OUTPUTS = ("real", "float32")

ENCODE_CHUNK = 16_384
"""Columns per chunk of the encoding product (cache-sized blocks of the sources)."""


def is_field_array(value: object) -> bool:
    """Whether `value` is a galois ``FieldArray`` (without importing galois)."""
    galois = sys.modules.get("galois")
    return galois is not None and isinstance(value, galois.FieldArray)


def galois_field(p: int) -> type[FieldArray]:
    """Return the (cached) galois class of GF(p)."""
    import galois  # heavy: loaded on demand only

    return galois.GF(p)


# What a code's `field` argument takes: None (the reals), a prime p, or galois.GF(p).
FieldLike = int | type["FieldArray"] | None


def resolve_prime(field: object) -> int | None:
    """Return the prime of `field` (None, an int prime or a galois class)."""
    if field is None:
        return None
    if isinstance(field, type) and hasattr(field, "characteristic"):
        if int(field.degree) != 1:
            raise ValueError(
                "`field` must be a prime field GF(p), "
                f"got GF({field.characteristic}^{field.degree})."
            )
        p = int(field.characteristic)
    else:
        p = check_prime(field, "field")
    if p > MAX_PRIME:
        raise ValueError(f"`field` must be a prime <= 2^31 - 1, got p={p}.")
    return p


def check_points(count: int, p: int | None, name: str = "n") -> None:
    """Check that GF(p) has `count` distinct nonzero evaluation points."""
    if p is not None and count > p - 1:
        raise ValueError(
            f"`{name}` must be <= p - 1 = {p - 1} (distinct nonzero evaluation "
            f"points of GF({p})), got {name}={count}."
        )


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Operands:
    """Validated operands of ``A @ B`` in the code's representation."""

    A: np.ndarray
    B: np.ndarray
    is_vector: bool
    output: Output
    a_bound: int = 0  # d * max|A| for signed integers over GF(p), else 0


def _as_residues(value: Any, name: str, p: int, ndim: tuple[int, ...]) -> np.ndarray:
    """Return field-semantics operand `value` as int64 residues in ``[0, p)``."""
    if is_field_array(value):
        kind = type(value)
        if int(kind.characteristic) != p or int(kind.degree) != 1:
            raise ValueError(
                f"`{name}` is an array over {kind.name} but the code is over GF({p})."
            )
        array = np.asarray(value.view(np.ndarray), dtype=np.int64)
        check_ndim(array.shape, name, ndim)
        return array
    array = _integer_array(value, name, ndim)  # compared in its own dtype: exact
    if array.size and (array.min() < 0 or array.max() >= p):
        raise ValueError(
            f"`{name}` entries must lie in the field [0, {p}) next to a FieldArray, "
            f"got min={array.min()}, max={array.max()}."
        )
    return array.astype(np.int64, copy=False)


def _integer_array(value: Any, name: str, ndim: tuple[int, ...]) -> np.ndarray:
    """Return `value` as an integer array in its own dtype (no lossy cast)."""
    array = check_finite_matrix(value, name, ndim=ndim)
    if array.dtype.kind not in "iu":
        raise TypeError(
            f"`{name}` must be an integer array or a galois FieldArray for a code "
            f"over GF(p), got dtype {array.dtype}."
        )
    return array


def _max_abs(array: np.ndarray) -> int:
    """``max |x|`` as a Python int, exact at every dtype's limits (int64 min too)."""
    return max(abs(int(array.min())), abs(int(array.max()))) if array.size else 0


def _signed_residues(array: np.ndarray, p: int) -> np.ndarray:
    """Integers of any dtype mod `p` as int64, exact (uint64 above 2^63 included)."""
    if array.dtype == np.uint64:
        return np.mod(array, np.uint64(p)).astype(np.int64)
    return np.mod(array.astype(np.int64, copy=False), p)


def _real_array(value: Any, name: str, ndim: tuple[int, ...]) -> np.ndarray:
    """`value` as float64, or as float32 when it is float32 (no copy then)."""
    if is_field_array(value):
        raise TypeError(
            f"`{name}` is a galois FieldArray but the code is over the reals "
            "(field=None)."
        )
    array = check_finite_matrix(value, name, ndim=ndim, keep_float32=True)
    return array if array.dtype == np.float32 else np.asarray(array, np.float64)


def as_csr(A: Any) -> Any:
    """Return a scipy.sparse A as CSR float64 (CSC and COO converted), else None.

    Raises
    ------
    TypeError
        Another sparse format, or not real.
    ValueError
        NaN or inf among the stored entries.
    """
    import scipy.sparse

    if not scipy.sparse.issparse(A):
        return None
    if A.format not in ("csr", "csc", "coo"):
        raise TypeError(
            f"`A` is a scipy.sparse {A.format.upper()} matrix; the codes that keep "
            "A sparse take CSR, CSC or COO (converted to CSR): pass `A.tocsr()`."
        )
    csr = scipy.sparse.csr_array(A.tocsr())
    if csr.ndim != 2 or csr.dtype.kind not in "iuf":
        raise TypeError(f"`A` must be a real sparse matrix, got dtype {csr.dtype}.")
    csr = csr.astype(np.float64, copy=False)
    if not np.isfinite(csr.data).all():
        raise ValueError("`A` must be finite (no NaN or inf).")
    return csr


def real_output(*arrays: np.ndarray) -> Output:
    """``"float32"`` when every real operand is float32, else ``"real"`` (float64)."""
    return "float32" if all(a.dtype == np.float32 for a in arrays) else "real"


def real_dtype(output: Output) -> type:
    """Working dtype of the shares and worker products of a real `output`."""
    return np.float32 if output == "float32" else np.float64


def _check_nonempty(array: np.ndarray, name: str) -> None:
    if array.size == 0:
        raise ValueError(f"`{name}` must be non-empty, got shape {array.shape}.")


def prepare_single(X: Any, p: int | None, name: str = "X") -> tuple[np.ndarray, Output]:
    """Validate a single matrix operand; return its representation and semantics."""
    if p is None:
        array = _real_array(X, name, (2,))
        output = real_output(array)
    elif is_field_array(X):
        array, output = _as_residues(X, name, p, (2,)), "field"
    else:
        array = _signed_residues(_integer_array(X, name, (2,)), p)
        output = "signed"
    _check_nonempty(array, name)
    return array, output


def prepare_operands(A: Any, B: Any, p: int | None) -> Operands:
    """Validate ``A @ B`` (A: (m, d), B: (d, c) or (d,)) for a code over `p`."""
    if p is None:
        A_, B_ = _real_array(A, "A", (2,)), _real_array(B, "B", (1, 2))
        output: Output = real_output(A_, B_)
        dtype = real_dtype(output)
        A_, B_ = np.asarray(A_, dtype), np.asarray(B_, dtype)
    elif is_field_array(A) or is_field_array(B):
        A_, B_ = _as_residues(A, "A", p, (2,)), _as_residues(B, "B", p, (1, 2))
        output = "field"
    else:
        A_, B_ = _integer_array(A, "A", (2,)), _integer_array(B, "B", (1, 2))
        output = "signed"
    ops = _chained(A_, B_, output)
    if output == "signed":
        a_bound = A_.shape[1] * _max_abs(A_)
        _check_exact_bound(a_bound, B_, p)
        ops = _chained(_signed_residues(A_, p), _signed_residues(B_, p), output)
        return replace(ops, a_bound=a_bound)
    return ops


def prepare_right(
    B: Any, p: int | None, output: Output, d: int, a_bound: int
) -> np.ndarray:
    """Validate a new right operand ``(d, c)`` or ``(d,)`` against an encoded A.

    `output` and `a_bound` are those of A's encoding: B must have the same
    semantics (reals, field elements, signed integers or residues); over the
    reals B takes A's working precision (float32 when A was encoded in float32).
    """
    if output in REAL_OUTPUTS:
        B_ = np.asarray(_real_array(B, "B", (1, 2)), real_dtype(output))
    elif output == "signed":
        B_ = _integer_array(B, "B", (1, 2))
    else:
        B_ = _as_residues(B, "B", p, (1, 2))
    _check_nonempty(B_, "B")
    if B_.shape[0] != d:
        raise ValueError(
            f"`B` must have {d} rows to match the encoded A (d={d}), got "
            f"B.shape={B_.shape}."
        )
    if output == "signed":
        _check_exact_bound(a_bound, B_, p)
        return _signed_residues(B_, p)
    return B_


def prepare_residues(A: Any, B: Any, p: int) -> Operands:
    """Validate residue operands ``A @ B`` over GF(p) (integers in ``[0, p)``).

    The residue entry point: no galois, and decoding returns int64 residues.
    """
    A_, B_ = _as_residues(A, "A", p, (2,)), _as_residues(B, "B", p, (1, 2))
    return _chained(A_, B_, "residue")


def _chained(A: np.ndarray, B: np.ndarray, output: Output) -> Operands:
    """Operands after checking that A and B are non-empty and chain."""
    _check_nonempty(A, "A")
    _check_nonempty(B, "B")
    if A.shape[1] != B.shape[0]:
        raise ValueError(
            "`A` and `B` must have matching inner dimensions, got "
            f"A.shape={A.shape}, B.shape={B.shape}."
        )
    return Operands(A=A, B=B, is_vector=B.ndim == 1, output=output)


def _check_exact_bound(a_bound: int, B: np.ndarray, p: int) -> None:
    """Raise unless ``2 * a_bound * max|B| < p``, ``a_bound = d max|A|`` (exact)."""
    bound = a_bound * _max_abs(B)
    if 2 * bound >= p:
        raise ValueError(
            "exact integer results need 2 * max|C| < p; the inputs only guarantee "
            f"max|C| <= d * max|A| * max|B| = {bound}, so p must exceed "
            f"{2 * bound}, got p={p}. Use a larger prime or galois FieldArray inputs."
        )


def lift(residues: np.ndarray, output: Output, p: int | None) -> Any:
    """Return decoded `residues` in the caller's semantics.

    A real product that is not finite (its pieces were) overflowed float64 while
    decoding, or float32 when returned in float32: that raises, never returns
    infinities for a finite answer.
    """
    if output in REAL_OUTPUTS:
        with np.errstate(over="ignore"):  # raised below
            product = residues.astype(real_dtype(output), copy=False)
        if not all_finite(product):
            raise ValueError(
                f"decoding overflows {product.dtype}: the decoded product is not "
                "finite though every piece was; scale the operands down."
            )
        return product
    if output == "residue":
        return residues
    if output == "field":
        return galois_field(p)(residues)
    return np.where(residues > p // 2, residues - p, residues)


def as_output(array: np.ndarray, output: Output, p: int | None) -> Any:
    """Return encoded residues to the user (FieldArray for field semantics)."""
    return galois_field(p)(array) if output == "field" else array


def multiply_real(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Worker product over the reals: ``left @ right``.

    Parameters
    ----------
    left : numpy.ndarray or scipy.sparse CSR, shape (l, d)
        Coded rows.
    right : numpy.ndarray, shape (d, c) or (d,)
        Right operand.

    Returns
    -------
    numpy.ndarray
        ``left @ right``; an overflow gives inf without a warning (the decoder
        refuses it with `NonFiniteResultError`, naming the worker).
    """
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(left @ right)  # a scipy.sparse left gives a dense product


def multiply_mod(left: np.ndarray, right: np.ndarray, *, p: int) -> np.ndarray:
    """Worker product over GF(p): ``left @ right mod p`` on int64 residues.

    Parameters
    ----------
    left : numpy.ndarray of int64, shape (l, d)
        Coded residues.
    right : numpy.ndarray of int64, shape (d, c) or (d,)
        Right residues.
    p : int
        The prime.

    Returns
    -------
    numpy.ndarray of int64
        Residues in ``[0, p)``.
    """
    return _modular.matmul_mod(left, right, p)


def matmul(left: np.ndarray, right: np.ndarray, p: int | None) -> np.ndarray:
    """``left @ right`` over the reals or modulo `p` (any inner size, 0 included)."""
    if left.shape[-1] == 0:
        dtype = np.float64 if p is None else np.int64
        return np.zeros(left.shape[:-1] + right.shape[1:], dtype=dtype)
    return multiply_real(left, right) if p is None else multiply_mod(left, right, p=p)


def encode_product(
    G: np.ndarray, full: np.ndarray, tail: np.ndarray, p: int | None
) -> np.ndarray:
    """``G @ [full; tail]`` (mod `p`) in cache-sized column chunks, no stacked copy.

    `full` (often a view of the caller's operand) and `tail` (zero-padded blocks)
    are the ``K`` rows of the source matrix, each of length ``L``. Real shares have
    the sources' dtype; float32 shares are accumulated in float64, then rounded.
    """
    L = full.shape[1]
    out = np.empty((G.shape[0], L), dtype=full.dtype if p is None else np.int64)
    if G.shape[0] == 0 or L == 0:
        return out
    buffer = np.empty((G.shape[1], min(L, ENCODE_CHUNK)), dtype=full.dtype)
    for start in range(0, L, ENCODE_CHUNK):
        stop = min(start + ENCODE_CHUNK, L)
        sources = full[:, start:stop]
        if tail.shape[0]:
            sources = buffer[:, : stop - start]
            np.concatenate((full[:, start:stop], tail[:, start:stop]), out=sources)
        if p is None:
            with np.errstate(over="ignore", invalid="ignore"):  # raised below
                if out.dtype == np.float64:
                    np.matmul(G, sources, out=out[:, start:stop])
                else:
                    out[:, start:stop] = G @ sources.astype(np.float64)
        else:
            _modular.matmul_mod_into(G, sources, p, out[:, start:stop])
    if p is None and not all_finite(out):
        raise ValueError(
            f"encoding overflows {out.dtype}: a coded share (a combination of up to "
            f"{G.shape[1]} blocks) is not finite; scale the operand down."
        )
    return out


def inverse_mod(M: np.ndarray, p: int) -> np.ndarray:
    """Inverse of the square residue matrix `M` modulo `p` (Gauss-Jordan, int64).

    Raises ``numpy.linalg.LinAlgError`` if `M` is singular modulo `p`.
    """
    size = M.shape[0]
    work = np.concatenate([np.mod(M, p), np.eye(size, dtype=np.int64)], axis=1)
    for col in range(size):
        candidates = np.flatnonzero(work[col:, col])
        if candidates.size == 0:
            raise np.linalg.LinAlgError(f"matrix is singular modulo {p}.")
        pivot = col + candidates[0]
        work[[col, pivot]] = work[[pivot, col]]
        work[col] = work[col] * pow(int(work[col, col]), -1, p) % p
        factors = work[:, col].copy()
        factors[col] = 0
        work = (work - np.outer(factors, work[col]) % p) % p
    return work[:, size:]


def condition_number(M: np.ndarray) -> float:
    """2-norm condition number (exact up to size 256, LAPACK 1-norm estimate above)."""
    if M.shape[0] <= 256:
        return float(np.linalg.cond(M))
    lu, _ = scipy.linalg.lu_factor(M)
    anorm = np.abs(M).sum(axis=0).max()
    rcond, _ = scipy.linalg.lapack.dgecon(lu, anorm, norm="1")
    return math.inf if rcond == 0 else 1.0 / rcond


def solve(M: np.ndarray, rhs: np.ndarray, p: int | None) -> np.ndarray:
    """Solve ``M X = rhs`` exactly mod `p`, or by LU over the reals with a warning.

    Over the reals an `IllConditionedWarning` names ``cond(M)`` when
    ``cond(M) * eps > TRUST_LIMIT``.
    """
    if p is not None:
        return multiply_mod(inverse_mod(M, p), rhs, p=p)
    cond = condition_number(M)
    if cond * np.finfo(np.float64).eps > TRUST_LIMIT:
        warnings.warn(
            f"decoding solves a system with condition number {cond:.3g}; "
            f"cond * eps = {cond * np.finfo(np.float64).eps:.2g} > {TRUST_LIMIT:g}, "
            "so the decoded product may be inaccurate.",
            IllConditionedWarning,
            stacklevel=4,
        )
    lu = scipy.linalg.lu_factor(M, check_finite=False)  # LU, partial pivoting
    return scipy.linalg.lu_solve(lu, rhs, check_finite=False)


def vandermonde(points: np.ndarray, K: int, p: int | None) -> np.ndarray:
    """Matrix ``V[i, q] = points[i]^q`` for ``q < K`` (modulo `p` if given)."""
    if p is None:
        return np.vander(np.asarray(points, dtype=np.float64), K, increasing=True)
    points = np.mod(np.asarray(points, dtype=np.int64), p)
    V = np.ones((points.size, K), dtype=np.int64)
    for q in range(1, K):
        V[:, q] = V[:, q - 1] * points % p
    return V


def cauchy_systematic(N: int, K: int, p: int) -> np.ndarray:
    r"""Systematic MDS generator ``[I_K; C]`` over GF(p) with a Cauchy parity block.

    ``C[i, j] = 1 / (x_i - y_j)`` with ``y_j = j`` and ``x_i = K + i``; every square
    submatrix of a Cauchy matrix is nonsingular, so every K rows are independent.
    """
    x = np.arange(K, N, dtype=np.int64)[:, None]
    y = np.arange(K, dtype=np.int64)[None, :]
    C = _power_mod(np.mod(x - y, p), p - 2, p)
    return np.concatenate([np.eye(K, dtype=np.int64), C], axis=0)


def _power_mod(base: np.ndarray, exponent: int, p: int) -> np.ndarray:
    result = np.ones_like(base)
    while exponent:
        if exponent & 1:
            result = result * base % p
        base = base * base % p
        exponent >>= 1
    return result
