r"""Multi-modular (CRT) integers: primes, bounds, residues and exact reconstruction.

An integer product ``C = A @ B`` satisfies ``|C_ij| <= d max|A| max|B|``; with
primes whose product ``M`` exceeds twice that bound, ``C`` is the unique balanced
representative in ``[-(M - 1)/2, (M - 1)/2]`` of its residues, recovered by
Garner's mixed-radix algorithm. The primes are the largest primes below ``2^21``,
so every residue product runs on the direct path of
:func:`coded.codes._modular.matmul_mod`.
"""

from __future__ import annotations

import functools
import importlib
import math
from collections.abc import Sequence

import numpy as np

from theory.validation import check_int, is_prime

__all__ = [
    "MAX_PRIMES",
    "PRIME_LIMIT",
    "crt_reconstruct",
    "exact_primes",
    "max_abs",
    "primes_for_bound",
    "product_bound",
    "to_residues",
]

PRIME_LIMIT = 2**21
"""Every CRT prime is below this (direct fast path, inner blocks of 8192)."""

MAX_PRIMES = 64
"""Most primes used (their product exceeds ``2^1343``)."""

_INT64_MAX = 2**63 - 1
_FLOAT_EXACT = 2**53
_CRT_PRIME_LIMIT = 2**26


@functools.cache
def _kernels():
    return importlib.import_module("coded.codes._modular_kernels")


@functools.cache
def exact_primes(count: int = MAX_PRIMES) -> tuple[int, ...]:
    """Return the `count` largest primes below ``2^21``, in decreasing order.

    Parameters
    ----------
    count : int
        How many, ``1 <= count <= MAX_PRIMES``.

    Returns
    -------
    tuple of int

    Examples
    --------
    >>> exact_primes(2)
    (2097143, 2097133)
    """
    count = check_int(count, "count", min_value=1, max_value=MAX_PRIMES)
    primes: list[int] = []
    candidate = PRIME_LIMIT - 1
    while len(primes) < count:
        if is_prime(candidate):
            primes.append(candidate)
        candidate -= 2
    return tuple(primes)


def max_abs(X: np.ndarray) -> int:
    """Return ``max |X|`` as a Python int (0 for an empty array; no overflow).

    Parameters
    ----------
    X : numpy.ndarray of int
        Integer array.

    Returns
    -------
    int

    Examples
    --------
    >>> max_abs(np.array([3, -2**63]))
    9223372036854775808
    """
    if X.size == 0:
        return 0
    return max(abs(int(X.min())), abs(int(X.max())))


def product_bound(A: np.ndarray, B: np.ndarray) -> int:
    """Return ``d * max|A| * max|B|``, a bound on every entry of ``A @ B``.

    Parameters
    ----------
    A : numpy.ndarray of int, shape (m, d)
        Left factor.
    B : numpy.ndarray of int, shape (d, c) or (d,)
        Right factor.

    Returns
    -------
    int

    Examples
    --------
    >>> product_bound(np.array([[1, -3]]), np.array([2, 5]))
    30
    """
    return A.shape[-1] * max_abs(A) * max_abs(B)


def primes_for_bound(bound: int) -> tuple[int, ...]:
    """Return the fewest CRT primes whose product exceeds ``2 bound``.

    Parameters
    ----------
    bound : int
        Bound on ``|C_ij|``, ``>= 0``.

    Returns
    -------
    tuple of int

    Raises
    ------
    ValueError
        If even ``MAX_PRIMES`` primes do not cover the bound.

    Examples
    --------
    >>> len(primes_for_bound(2**40)), len(primes_for_bound(2**41))
    (2, 3)
    """
    bound = check_int(bound, "bound", min_value=0)
    primes = exact_primes()
    modulus = 1
    for count, p in enumerate(primes, start=1):
        modulus *= p
        if modulus > 2 * bound:
            return primes[:count]
    raise ValueError(
        f"`bound` must be < {modulus // 2} (half the product of the {MAX_PRIMES} "
        f"CRT primes), got bound={bound}."
    )


def to_residues(X: np.ndarray, p: int, *, magnitude: int | None = None) -> np.ndarray:
    """Return the residues of integer array `X` modulo `p`, as int64 in ``[0, p)``.

    Parameters
    ----------
    X : numpy.ndarray of int
        Signed or unsigned integers (any magnitude of their dtype).
    p : int
        Modulus, ``2 <= p < 2^52``.
    magnitude : int, optional
        ``max |X|`` if already known (saves a pass).

    Returns
    -------
    numpy.ndarray of int64

    Examples
    --------
    >>> to_residues(np.array([-1, 7, -2**63]), 7).tolist()
    [6, 0, 6]
    """
    if X.dtype == np.uint64:
        return np.remainder(X, np.uint64(p)).astype(np.int64)
    flat = np.ascontiguousarray(X, dtype=np.int64).reshape(-1)
    out = np.empty_like(flat)
    magnitude = max_abs(flat) if magnitude is None else magnitude
    _kernels().residues(flat, p, out, magnitude + p > _FLOAT_EXACT)
    return out.reshape(X.shape)


def crt_reconstruct(
    residues: Sequence[np.ndarray], primes: Sequence[int], *, bound: int
) -> np.ndarray:
    r"""Return the integers with the given residues and ``|x| <= bound``.

    Parameters
    ----------
    residues : sequence of numpy.ndarray of int
        ``residues[j]`` holds ``x mod primes[j]`` (any representative below
        ``2^52`` in magnitude), all the same shape.
    primes : sequence of int
        Distinct odd primes below ``2^26`` whose product exceeds ``2 bound``.
    bound : int
        Known bound on ``|x|``; it picks the output type.

    Returns
    -------
    numpy.ndarray
        int64 when ``bound < 2^63``, else an object array of Python ints.

    Raises
    ------
    ValueError
        If the primes do not cover ``2 bound``, a prime is out of range, or the
        lengths or shapes differ.

    Notes
    -----
    Garner's algorithm with balanced digits ``|v_j| <= (p_j - 1)/2``:

    .. math::

        x = \sum_j v_j \prod_{i<j} p_i, \qquad
        v_j \equiv \Big(x - \sum_{i<j} v_i \prod_{l<i} p_l\Big)
                  \Big(\prod_{i<j} p_i\Big)^{-1} \pmod{p_j},

    whose sums cover exactly ``[-(M - 1)/2, (M - 1)/2]``. Digit arithmetic is one
    fused float64 pass (every product is below ``2^52``); for int64 output the
    final sum is taken modulo ``2^64`` (wrapping), which is exact because
    ``|x| < 2^63``.

    References
    ----------
    H. L. Garner, "The residue number system", IRE Trans. Electronic Computers
    EC-8(2), 1959.

    Examples
    --------
    >>> primes = (2097143, 2097133)
    >>> x = np.array([-(2**40), 12345])
    >>> crt_reconstruct([x % p for p in primes], primes, bound=2**40).tolist()
    [-1099511627776, 12345]
    """
    bound = check_int(bound, "bound", min_value=0)
    primes = tuple(int(p) for p in primes)
    if len(residues) != len(primes) or not primes:
        raise ValueError(
            "`residues` and `primes` must have the same nonzero length, got "
            f"{len(residues)} and {len(primes)}."
        )
    if not all(2 < p < _CRT_PRIME_LIMIT for p in primes):
        raise ValueError(f"`primes` must be odd primes below 2^26, got {primes}.")
    if math.prod(primes) <= 2 * bound:
        raise ValueError(
            f"`primes` must have a product > 2 * bound = {2 * bound}, "
            f"got {math.prod(primes)}."
        )
    shape = np.shape(residues[0])
    if any(np.shape(r) != shape for r in residues):
        raise ValueError(
            "`residues` must all have the same shape, got "
            f"{[np.shape(r) for r in residues]}."
        )
    stacked = np.stack([np.asarray(r, dtype=np.int64).reshape(-1) for r in residues])
    radixes = [math.prod(primes[:j]) for j in range(len(primes))]
    radix_mods = np.array([[r % p for r in radixes] for p in primes], dtype=float)
    inverses = np.array(
        [pow(r % p, -1, p) for r, p in zip(radixes, primes, strict=True)], dtype=float
    )
    kernels = _kernels()
    kernels.garner_digits(stacked, np.array(primes), radix_mods, inverses)
    digits = stacked
    if bound > _INT64_MAX:
        total = np.zeros(stacked.shape[1], dtype=object)
        for digit, radix in zip(digits, radixes, strict=True):
            total += digit.astype(object) * radix
        return total.reshape(shape)
    wrapped = np.array([(r + 2**63) % 2**64 - 2**63 for r in radixes], np.int64)
    out = np.empty(stacked.shape[1], dtype=np.int64)
    kernels.mixed_radix_sum(digits, wrapped, out)
    return out.reshape(shape)
