"""Exact matrix arithmetic modulo a prime on int64 residues (numpy only).

Every GF(p) code routes its products through :func:`matmul_mod`, so one kernel
serves encode, the workers' products and decode.
"""

from __future__ import annotations

import numpy as np

__all__ = ["matmul_mod"]

_FLOAT_EXACT = 2**53


def matmul_mod(A: np.ndarray, B: np.ndarray, p: int) -> np.ndarray:
    """Return ``(A @ B) mod p`` exactly for residues ``0 <= A, B < p``.

    Parameters
    ----------
    A : numpy.ndarray of int, shape (m, d)
        Left residues.
    B : numpy.ndarray of int, shape (d, c) or (d,)
        Right residues.
    p : int
        Prime modulus.

    Returns
    -------
    numpy.ndarray of int64
        Residues in ``[0, p)``.

    Notes
    -----
    A float64 product is exact while every partial sum stays below ``2^53``, so
    the inner dimension is cut into blocks of ``floor(2^53 / (p - 1)^2)`` and each
    block product is reduced before summing (delayed reduction, as in
    FFLAS-FFPACK). Primes with ``(p - 1)^2 >= 2^53`` use Python integers.

    Examples
    --------
    >>> matmul_mod(np.array([[3, 4]]), np.array([[5], [6]]), 7).tolist()
    [[4]]
    """
    A = np.asarray(A, dtype=np.int64)
    B = np.asarray(B, dtype=np.int64)
    block = _FLOAT_EXACT // max((p - 1) ** 2, 1)
    if block < 1:
        product = A.astype(object) @ B.astype(object)
        return np.asarray(product % p, dtype=np.int64)
    inner = A.shape[-1]
    out_shape = A.shape[:-1] + B.shape[1:]
    total = np.zeros(out_shape, dtype=np.int64)
    Af, Bf = A.astype(np.float64), B.astype(np.float64)
    for start in range(0, inner, block):
        stop = min(start + block, inner)
        part = Af[..., start:stop] @ Bf[start:stop]
        total = (total + np.fmod(part, p).astype(np.int64)) % p
    return total
