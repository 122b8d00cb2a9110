r"""Exact matrix arithmetic modulo a prime on int64 residues, at float64 BLAS speed.

Every GF(p) code routes its products through :func:`matmul_mod`, so one kernel
serves encode, the workers' products and decode.

Three paths, chosen from ``p`` alone (:func:`modular_plan`):

``"direct"``
    ``p < 2^23`` (exactly: while the inner blocks below hold at least 512 terms):
    symmetric residues ``|a| <= (p - 1) / 2`` as float64, one BLAS product per
    inner block of at most ``floor((2^53 - 2p) / ((p - 1) / 2)^2)`` terms (8192
    for ``p < 2^21``), each followed by one fused reduction pass.
``"split"``
    ``p < 2^32``: the left operand is cut into signed limbs
    ``a = a_0 + 2^w a_1 (+ 2^{2w} a_2)``, stacked into one BLAS product per inner
    block (2 or 3 times the flops: the fewest limbs that keep inner blocks of at
    least 2048 terms; 3 near ``2^31``), recombined by Horner's rule modulo ``p``.
``"object"``
    larger primes: Python integers (exact, slow: the documented fallback).
"""

from __future__ import annotations

import functools
import importlib
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from theory.validation import check_int, check_prime

__all__ = [
    "ModularPlan",
    "limb_bound",
    "matmul_mod",
    "matmul_mod_into",
    "modular_plan",
]

_FLOAT_EXACT = 2**53
_MIN_DIRECT_BLOCK = 512
_MIN_SPLIT_BLOCK = 2048
_SPLIT_LIMIT = 2**32
_NO_CARRY = np.empty((0, 0))


@dataclass(frozen=True, slots=True, kw_only=True)
class ModularPlan:
    """How :func:`matmul_mod` multiplies modulo one prime.

    Parameters
    ----------
    p : int
        The prime.
    path : {"direct", "split", "object"}
        Kernel used (see the module docstring).
    block : int
        Largest inner dimension multiplied by one float64 product before a
        reduction (0 for the object path).
    limbs : int
        Signed limbs the left operand is cut into (1 on the direct path, 0 on
        the object path).
    w : int
        Limb width in bits of the split path (0 otherwise).
    """

    p: int
    path: Literal["direct", "split", "object"]
    block: int
    limbs: int
    w: int


def limb_bound(half: int, limbs: int, w: int) -> int:
    """Largest ``|limb|`` when ``|c| <= half`` is cut into signed base-``2^w`` limbs.

    Parameters
    ----------
    half : int
        Bound on ``|c|``.
    limbs : int
        Number of limbs, ``>= 2``: the lower ones in ``[-2^(w-1), 2^(w-1))``, the
        top one whatever remains.
    w : int
        Limb width in bits.

    Returns
    -------
    int

    Examples
    --------
    >>> limb_bound(2**30 - 1, 3, 11)
    1024
    """
    top = half
    for _ in range(limbs - 1):  # |(c - lo) / 2^w| <= (|c| + 2^(w-1)) / 2^w
        top = (top + 2 ** (w - 1)) // 2**w
    return max(2 ** (w - 1), top)


@functools.lru_cache(maxsize=256)
def _plan(p: int) -> ModularPlan:
    half = (p - 1) // 2
    direct = (_FLOAT_EXACT - 2 * p) // max(half * half, 1)
    if direct >= _MIN_DIRECT_BLOCK:
        return ModularPlan(p=p, path="direct", block=direct, limbs=1, w=0)
    if p >= _SPLIT_LIMIT:
        return ModularPlan(p=p, path="object", block=0, limbs=0, w=0)
    for limbs in (2, 3):  # fewest limbs whose blocks stay long (efficient BLAS)
        w = min(range(1, 17), key=lambda w: limb_bound(half, limbs, w))
        block = (_FLOAT_EXACT - 2 * p) // (limb_bound(half, limbs, w) * half)
        if block >= _MIN_SPLIT_BLOCK:
            break
    return ModularPlan(p=p, path="split", block=block, limbs=limbs, w=w)


def modular_plan(p: int) -> ModularPlan:
    """Return how residues modulo `p` are multiplied (path, inner block, limbs).

    Parameters
    ----------
    p : int
        Prime modulus.

    Returns
    -------
    ModularPlan

    Raises
    ------
    ValueError
        If `p` is not prime.

    Examples
    --------
    >>> modular_plan(65537).path, modular_plan(2**31 - 1).path
    ('direct', 'split')
    >>> modular_plan(2**21 - 9).block
    8192
    """
    return _checked_plan(check_int(p, "p", min_value=2))


@functools.lru_cache(maxsize=256)
def _checked_plan(p: int) -> ModularPlan:
    return _plan(check_prime(p))


@functools.cache
def _kernels():
    return importlib.import_module("coded.codes._modular_kernels")


def _as_residues(X: object, name: str) -> np.ndarray:
    array = np.asarray(X)
    if array.dtype == np.bool_ or array.dtype.kind not in "iu":
        raise TypeError(
            f"`{name}` must hold integer residues, got dtype {array.dtype}."
        )
    if array.ndim == 0:
        raise ValueError(f"`{name}` must have ndim >= 1, got shape {array.shape}.")
    if array.dtype in (np.int32, np.int64):  # read as they are by the kernels
        return array
    return array.astype(np.int64)


def _outside(name: str, p: int) -> ValueError:
    return ValueError(
        f"`{name}` must hold residues in [0, p), got entries outside [0, {p})."
    )


def _check_range(X: np.ndarray, name: str, p: int) -> None:
    if X.size and (X.min() < 0 or X.max() >= p):
        raise _outside(name, p)


def _to_float(
    X: np.ndarray, name: str, p: int, *, limbs: int = 1, w: int = 0
) -> np.ndarray:
    kernels = _kernels()
    if limbs > 1:
        out = np.empty((limbs, *X.shape))
        ok = kernels.split_center(X, out, p, w)
        out = out.reshape(limbs * X.shape[0], X.shape[1])
    else:
        out = np.empty(X.shape)
        ok = kernels.center(X, out, p)
    if not ok:
        raise _outside(name, p)
    return out


def _blocked(L: np.ndarray, R: np.ndarray, plan: ModularPlan, out: np.ndarray) -> None:
    """``out = (L @ R) mod p`` with one fused reduction pass per inner block."""
    kernels = _kernels()
    d = R.shape[0]
    size = -(-d // -(-d // plan.block))  # equal blocks of at most plan.block
    starts = range(0, d, size)
    carry = _NO_CARRY
    for start in starts[:-1]:
        x = L[:, start : start + size] @ R[start : start + size]
        kernels.finish(x, carry, x, plan.p)
        carry = x
    x = L[:, starts[-1] :] @ R[starts[-1] :]
    if plan.limbs > 1:
        kernels.finish_split(x, carry, out, plan.p, plan.w)
    else:
        kernels.finish(x, carry, out, plan.p)


def matmul_mod_into(A: np.ndarray, B: np.ndarray, p: int, out: np.ndarray) -> None:
    """Write ``(A @ B) mod p`` for 2-D residues into `out` (may be a strided view).

    Parameters
    ----------
    A : numpy.ndarray of int, shape (m, d)
        Left residues.
    B : numpy.ndarray of int, shape (d, c)
        Right residues.
    p : int
        Prime modulus (not re-checked: callers pass validated primes).
    out : numpy.ndarray of int64 (or int32 when ``p <= 2^31``), shape (m, c)
        Destination.

    Raises
    ------
    ValueError
        If an entry of `A` or `B` is outside ``[0, p)``.

    Examples
    --------
    >>> out = np.empty((1, 1), dtype=np.int64)
    >>> matmul_mod_into(np.array([[3, 4]]), np.array([[5], [6]]), 7, out)
    >>> out.tolist()
    [[4]]
    """
    plan = _plan(p)
    if plan.path == "object":
        _check_range(A, "A", p)
        _check_range(B, "B", p)
        out[...] = (A.astype(object) @ B.astype(object)) % p
        return
    L = _to_float(A, "A", p, limbs=plan.limbs, w=plan.w)
    R = _to_float(B, "B", p)
    if min(out.shape) == 0:
        return
    if R.shape[0] == 0:
        out[...] = 0
        return
    _blocked(L, R, plan, out)


def matmul_mod(A: object, B: object, p: int) -> np.ndarray:
    r"""Return ``(A @ B) mod p`` exactly for residues ``0 <= A, B < p``.

    Parameters
    ----------
    A : array_like of int, shape (..., d)
        Left residues (any number of leading dimensions).
    B : array_like of int, shape (d, c) or (d,)
        Right residues.
    p : int
        Prime modulus (any prime; see Notes for speed).

    Returns
    -------
    numpy.ndarray of int64, shape (..., c) or (...)
        Residues in ``[0, p)``, shaped as ``A @ B``.

    Raises
    ------
    TypeError
        If `A` or `B` does not hold integers.
    ValueError
        If `p` is not prime, the shapes do not chain, or an entry is outside
        ``[0, p)``.

    Notes
    -----
    Residues are lifted to symmetric representatives ``|a| <= h = (p - 1) / 2``,
    so a float64 product over an inner block of ``b`` terms is exact while

    .. math::

        b\, h^2 + 2p \le 2^{53},

    which allows ``b >= 8192`` for ``p < 2^21`` (delayed reduction, as in
    FFLAS-FFPACK). Each block product is reduced in one fused pass
    ``r = x - p \lfloor x \cdot \mathrm{fl}(1/p) \rfloor`` plus one correction
    (the floor is off by at most one, and every intermediate is an exact integer
    below ``2^{53}``). Primes ``2^{23} < p < 2^{32}`` split `A` into 2 or 3
    signed limbs (2-3 times the BLAS work, inner blocks of at least 2048 terms);
    larger primes use Python integers. :func:`modular_plan` reports the path.

    References
    ----------
    J.-G. Dumas, P. Giorgi, C. Pernet, "Dense linear algebra over word-size
    prime fields: the FFLAS and FFPACK packages", ACM Trans. Math. Softw. 35(3),
    2008.

    Examples
    --------
    >>> matmul_mod(np.array([[3, 4]]), np.array([[5], [6]]), 7).tolist()
    [[4]]
    >>> int(matmul_mod([2**31 - 2], [2**31 - 2], 2**31 - 1))
    1
    """
    p = modular_plan(p).p
    A = _as_residues(A, "A")
    B = _as_residues(B, "B")
    if B.ndim > 2:
        raise ValueError(f"`B` must have ndim 1 or 2, got shape {B.shape}.")
    d = A.shape[-1]
    if B.shape[0] != d:
        raise ValueError(
            "`A` and `B` must have matching inner dimensions, "
            f"got shapes {A.shape} and {B.shape}."
        )
    lead, tail = A.shape[:-1], B.shape[1:]
    m, c = math.prod(lead), math.prod(tail)
    out = np.empty((m, c), dtype=np.int64)
    matmul_mod_into(A.reshape(m, d), B.reshape(d, c), p, out)
    return out.reshape(lead + tail)
