"""Numba kernels of :mod:`coded.codes._modular`: conversion and fused reduction passes.

Imported lazily (the first GF(p) product loads numba, which galois loads anyway).
Every kernel is one pass over its arrays and releases the GIL, so Dask threads
run them in parallel. Float arguments hold exact integers below ``2^53``.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = [
    "center",
    "finish",
    "finish_split",
    "garner_digits",
    "mixed_radix_sum",
    "residues",
    "split_center",
]

_JIT = {"cache": True, "nogil": True}


@numba.njit(**_JIT)
def _mod(x, p, inv_p):  # pragma: no cover - compiled
    # floor(x / p) is off by at most one when |x| + p <= 2^53 and p >= 3, and
    # x - q p is then an exact integer in [-p, 2p); one correction lands in [0, p).
    r = x - np.floor(x * inv_p) * p
    if r < 0.0:
        r += p
    elif r >= p:
        r -= p
    return r


@numba.njit(**_JIT)
def center(src, out, p):  # pragma: no cover - compiled
    """Write the symmetric residues of `src` to `out`; return whether all in [0, p)."""
    half = (p - 1) // 2
    ok = True
    for i in range(src.shape[0]):
        for j in range(src.shape[1]):
            a = src[i, j]
            ok &= (a >= 0) & (a < p)
            out[i, j] = a - p * (a > half)
    return ok


@numba.njit(**_JIT)
def split_center(src, out, p, w):  # pragma: no cover - compiled
    """Write symmetric residues of `src` as limbs ``sum_l 2^(w l) out[l]``."""
    half = (p - 1) // 2
    offset = 1 << (w - 1)
    mask = (1 << w) - 1
    top = out.shape[0] - 1
    ok = True
    for i in range(src.shape[0]):
        for j in range(src.shape[1]):
            a = src[i, j]
            ok &= (a >= 0) & (a < p)
            c = a - p * (a > half)
            for limb in range(top):
                lo = ((c + offset) & mask) - offset
                out[limb, i, j] = lo
                c = (c - lo) >> w
            out[top, i, j] = c
    return ok


@numba.njit(**_JIT)
def finish(x, acc, out, p):  # pragma: no cover - compiled
    """``out = (x + acc) mod p`` (``acc`` may be empty: no carry)."""
    fp = float(p)
    inv_p = 1.0 / fp
    carry = acc.size > 0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            v = x[i, j] + acc[i, j] if carry else x[i, j]
            out[i, j] = _mod(v, fp, inv_p)


@numba.njit(**_JIT)
def finish_split(x, acc, out, p, w):  # pragma: no cover - compiled
    """``out = sum_l 2^(w l) (x_l + acc_l) mod p``; limb l is rows ``l M:(l + 1) M``."""
    fp = float(p)
    inv_p = 1.0 / fp
    radix = float(1 << w)
    rows = out.shape[0]
    top = x.shape[0] // rows - 1
    carry = acc.size > 0
    for i in range(rows):
        for j in range(x.shape[1]):
            r = top * rows + i
            v = _mod(x[r, j] + acc[r, j] if carry else x[r, j], fp, inv_p)
            for limb in range(top - 1, -1, -1):
                r = limb * rows + i
                lo = _mod(x[r, j] + acc[r, j] if carry else x[r, j], fp, inv_p)
                v = _mod(v * radix + lo, fp, inv_p)
            out[i, j] = v


@numba.njit(**_JIT)
def residues(src, p, out, wide):  # pragma: no cover - compiled
    """``out = src mod p`` for 1-D int64 `src` (float pass unless `wide`)."""
    if wide:  # some |x| >= 2^53: exact integer division
        for i in range(src.size):
            out[i] = src[i] % p
        return
    fp = float(p)
    inv_p = 1.0 / fp
    for i in range(src.size):
        out[i] = np.int64(_mod(float(src[i]), fp, inv_p))


@numba.njit(**_JIT)
def garner_digits(digits, primes, radix_mods, inverses):  # pragma: no cover
    """Replace residues ``digits[j]`` (mod ``primes[j]``) by balanced CRT digits.

    Primes below 2^26, so every float product below is an exact integer.
    """
    count, size = digits.shape
    acc = np.empty(size)
    for j in range(count):
        fp = float(primes[j])
        inv_p = 1.0 / fp
        half = (fp - 1.0) / 2.0
        acc[:] = 0.0
        for i in range(j):
            radix = radix_mods[j, i]
            for t in range(size):
                acc[t] = _mod(acc[t] + digits[i, t] * radix, fp, inv_p)
        inverse = inverses[j]
        for t in range(size):
            v = _mod(float(digits[j, t]) - acc[t], fp, inv_p)
            v = _mod(v * inverse, fp, inv_p)
            digits[j, t] = np.int64(v - fp if v > half else v)


@numba.njit(**_JIT)
def mixed_radix_sum(digits, radix64, out):  # pragma: no cover - compiled
    """``out = sum_j digits[j] * radix_j`` in wrapping int64 arithmetic."""
    count, size = digits.shape
    for t in range(size):
        total = np.int64(0)
        for j in range(count):
            total += digits[j, t] * radix64[j]
        out[t] = total
