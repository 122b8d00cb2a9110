"""Hypothesis strategies for property tests of codes (requires ``hypothesis``).

Reuse them in your own suites::

    from hypothesis import given, strategies as st
    from coded.testing import codes, decodable_subsets, operands

    @given(data=st.data())
    def test_any_decodable_set_decodes(data):
        code = data.draw(codes(field=65537))
        A, B = data.draw(operands(field=code.p))
        workers = data.draw(decodable_subsets(code))
        ...

Entries are small integers (cast to float64 over the reals), so exact answers are
known and GF(p) signed results stay below ``p / 2``. Row-MDS codes need
``operands(m=code.m)``.

Random small integers rarely reach the edges where exact arithmetic breaks, so the
edge-heavy strategies draw them on purpose: :func:`field_boundaries` and
:func:`boundary_operands` (the signed range ``[-(p - 1)/2, (p - 1)/2]`` of a GF(p)
decode, with products that reach it exactly), :func:`exact_operands` and
:func:`crt_boundary_operands` (int64 extremes and products at the edge of each
prime count of an :class:`coded.ExactCode`); for real codes,
:func:`worst_erasure_patterns` (the worst-conditioned survivor sets of an MDS code)
and :func:`dynamic_range_matrices` (entries spread over many binary orders of
magnitude).
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any

import numpy as np

from coded.codes import (
    Code,
    MDSCode,
    PolynomialCode,
    ReplicationCode,
    RowMDSCode,
    UncodedCode,
)
from coded.codes._crt import exact_primes
from coded.codes.interface import FieldLike
from theory.validation import check_installed

try:
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as nps
except ImportError:
    check_installed(["hypothesis"], extra="dev", needed_by="`coded.testing`")
    raise

__all__ = [
    "batch_splits",
    "boundary_operands",
    "codes",
    "crt_boundary_operands",
    "decodable_subsets",
    "dynamic_range_matrices",
    "exact_operands",
    "field_boundaries",
    "matrices",
    "mds_codes",
    "operands",
    "polynomial_codes",
    "undecodable_subsets",
    "worst_erasure_patterns",
]

_KINDS = ("mds", "replication", "uncoded", "row_mds", "polynomial")


@st.composite
def mds_codes(
    draw: Any,
    *,
    max_n: int = 12,
    field: FieldLike = None,
    systematic: bool | None = None,
) -> MDSCode:
    """Strategy for ``MDSCode(n, k, field)`` with ``1 <= k <= n <= max_n``.

    Parameters
    ----------
    max_n : int
        Largest n.
    field : None, int or galois field class
        Field of the codes.
    systematic : bool, optional
        Fix the variant; ``None`` draws both.
    """
    n = draw(st.integers(1, max_n))
    k = draw(st.integers(1, n))
    if systematic is None:
        systematic = draw(st.booleans())
    return MDSCode(n, k, field, systematic=systematic)


@st.composite
def polynomial_codes(
    draw: Any, *, max_n: int = 12, field: FieldLike = None
) -> PolynomialCode:
    """Strategy for ``PolynomialCode(n, p_a, p_b, field)`` with ``p_a p_b <= n``.

    Parameters
    ----------
    max_n : int
        Largest n.
    field : None, int or galois field class
        Field of the codes.
    """
    n = draw(st.integers(1, max_n))
    p_a = draw(st.integers(1, n))
    p_b = draw(st.integers(1, n // p_a))
    return PolynomialCode(n, p_a, p_b, field)


@st.composite
def codes(
    draw: Any,
    *,
    max_n: int = 12,
    field: FieldLike = None,
    kinds: tuple[str, ...] = _KINDS,
) -> Any:
    """Strategy for any code of the package with valid parameters.

    Parameters
    ----------
    max_n : int
        Largest number of workers.
    field : None, int or galois field class
        Field of the codes.
    kinds : tuple of str
        Among ``"mds", "replication", "uncoded", "row_mds", "polynomial"``.
    """
    kind = draw(st.sampled_from(kinds))
    if kind == "mds":
        return draw(mds_codes(max_n=max_n, field=field))
    if kind == "polynomial":
        return draw(polynomial_codes(max_n=max_n, field=field))
    n = draw(st.integers(1, max_n))
    if kind == "replication":
        r = draw(st.sampled_from([r for r in range(1, n + 1) if n % r == 0]))
        return ReplicationCode(n, r, field)
    if kind == "uncoded":
        return UncodedCode(n, field)
    loads = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    total = max(sum(loads), 1)
    if sum(loads) == 0:
        loads[0] = 1
    m = draw(st.integers(1, total))
    return RowMDSCode(loads, m, field, systematic=draw(st.booleans()))


def _minimal_prefix(code: Any, order: list[int]) -> int:
    for size in range(1, len(order) + 1):
        if code.is_decodable(order[:size]):
            return size
    raise AssertionError("the set of all workers must be decodable")


@st.composite
def decodable_subsets(draw: Any, code: Code, *, minimal: bool = True) -> list[int]:
    """Strategy for sets of workers whose whole results decode `code`.

    Draws a random order of the workers and keeps the shortest decodable prefix
    (``minimal=True``: exactly k workers for an MDS code) or that prefix plus a
    random number of further workers.

    Parameters
    ----------
    code : Code
        The code.
    minimal : bool
        Keep only the shortest decodable prefix.
    """
    order = draw(st.permutations(range(code.n)))
    size = _minimal_prefix(code, order)
    if not minimal:
        size = draw(st.integers(size, code.n))
    return sorted(order[:size])


@st.composite
def undecodable_subsets(draw: Any, code: Code) -> list[int]:
    """Strategy for the largest non-decodable prefix of a random worker order.

    Parameters
    ----------
    code : Code
        The code.
    """
    order = draw(st.permutations(range(code.n)))
    return sorted(order[: _minimal_prefix(code, order) - 1])


def matrices(
    shape: tuple[int, ...], *, field: FieldLike = None, max_abs: int = 9
) -> st.SearchStrategy:
    """Strategy for integer-valued matrices of `shape`.

    float64 over the reals (``field=None``), int64 signed entries otherwise.

    Parameters
    ----------
    shape : tuple of int
        Array shape.
    field : None, int or galois field class
        The field the matrix is meant for.
    max_abs : int
        Entries lie in ``[-max_abs, max_abs]``.
    """
    dtype = np.float64 if field is None else np.int64
    return nps.arrays(dtype, shape, elements=st.integers(-max_abs, max_abs))


@st.composite
def operands(
    draw: Any,
    *,
    field: FieldLike = None,
    m: int | None = None,
    max_size: int = 6,
    vector: bool | None = None,
    max_abs: int = 9,
) -> tuple[np.ndarray, np.ndarray]:
    """Strategy for ``(A, B)`` of matching shapes ``(m, d)`` and ``(d, c)`` or ``(d,)``.

    Parameters
    ----------
    field : None, int or galois field class
        As in :func:`matrices`.
    m : int, optional
        Fix the rows of A.
    max_size : int
        Largest m (if not fixed), d and c.
    vector : bool, optional
        Force B to be a vector (True) or a matrix (False); None draws.
    max_abs : int
        Entry bound.
    """
    rows = m if m is not None else draw(st.integers(1, max_size))
    d = draw(st.integers(1, max_size))
    if vector is None:
        vector = draw(st.booleans())
    B_shape = (d,) if vector else (d, draw(st.integers(1, max_size)))
    A = draw(matrices((rows, d), field=field, max_abs=max_abs))
    return A, draw(matrices(B_shape, field=field, max_abs=max_abs))


@st.composite
def batch_splits(
    draw: Any, rows: int, *, max_batches: int = 4
) -> list[tuple[int, int]]:
    """Strategy for a split of ``range(rows)`` into consecutive ``(start, stop)``.

    Parameters
    ----------
    rows : int
        Rows to split (0 gives no batches).
    max_batches : int
        Largest number of batches.
    """
    if rows == 0:
        return []
    cuts = draw(
        st.lists(
            st.integers(1, rows - 1) if rows > 1 else st.nothing(),
            max_size=min(max_batches - 1, rows - 1),
            unique=True,
        )
    )
    bounds = [0, *sorted(cuts), rows]
    return list(itertools.pairwise(bounds))


# -- edge-heavy strategies ------------------------------------------------------------

_INT64 = np.iinfo(np.int64)


def field_boundaries(p: int) -> st.SearchStrategy[int]:
    """Strategy for the signed integers a GF(p) decode returns, edges first.

    A code over GF(p) given plain integers returns them in ``[-h, h]``,
    ``h = (p - 1) / 2`` (the exact product when ``2 max|C| < p``). This draws the
    edges ``0, +-1, +-(h - 1), +-h`` about half the time, else any value of the
    range.

    Parameters
    ----------
    p : int
        An odd prime.

    Examples
    --------
    >>> from hypothesis import given
    >>> @given(x=field_boundaries(65537))
    ... def check(x):
    ...     assert -32768 <= x <= 32768
    >>> check()
    """
    h = (p - 1) // 2
    edges = sorted({0, 1, -1, h - 1, -(h - 1), h, -h})
    return st.one_of(st.sampled_from(edges), st.integers(-h, h))


@functools.cache
def _divisors(value: int) -> tuple[int, ...]:
    small = [q for q in range(1, math.isqrt(value) + 1) if value % q == 0]
    return tuple(sorted({*small, *(value // q for q in small)}))


def _edge_entries(bound: int) -> st.SearchStrategy[int]:
    return st.one_of(
        st.sampled_from(sorted({0, 1, -1, bound, -bound})), st.integers(-bound, bound)
    )


@st.composite
def boundary_operands(
    draw: Any,
    p: int,
    *,
    m: int | None = None,
    max_size: int = 4,
    vector: bool | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Strategy for signed int64 ``(A, B)`` whose product reaches the GF(p) limit.

    Draws the inner size d and magnitudes ``a = max|A|``, ``b = max|B|`` with
    ``d a b = (p - 1)/2``: the largest bound ``2 d max|A| max|B| < p`` that the
    codes accept for exact signed results. Row 0 of A and column 0 of B have full
    magnitude with matching signs, so ``C[0, 0] = +-(p - 1)/2``; the other entries
    are drawn edge-first in ``[-a, a]`` and ``[-b, b]``.

    Parameters
    ----------
    p : int
        An odd prime.
    m : int, optional
        Fix the rows of A.
    max_size : int
        Largest m (if not fixed), d and c.
    vector : bool, optional
        Force B to be a vector (True) or a matrix (False); None draws.

    Examples
    --------
    >>> from hypothesis import given
    >>> @given(pair=boundary_operands(65537))
    ... def check(pair):
    ...     A, B = pair
    ...     C = A @ B
    ...     assert abs(C.flat[0]) == 32768 and 2 * abs(C).max() < 65537
    >>> check()
    """
    h = (p - 1) // 2
    d = draw(st.sampled_from([q for q in _divisors(h) if q <= max_size]))
    a = draw(st.sampled_from(_divisors(h // d)))
    b = h // d // a
    rows = m if m is not None else draw(st.integers(1, max_size))
    if vector is None:
        vector = draw(st.booleans())
    cols = 1 if vector else draw(st.integers(1, max_size))
    A = draw(nps.arrays(np.int64, (rows, d), elements=_edge_entries(a)))
    B = draw(nps.arrays(np.int64, (d, cols), elements=_edge_entries(b)))
    signs = np.array(draw(st.lists(st.sampled_from([-1, 1]), min_size=d, max_size=d)))
    A[0] = a * signs
    B[:, 0] = b * signs * draw(st.sampled_from([-1, 1]))
    return A, B[:, 0] if vector else B


def _int64_edges() -> st.SearchStrategy[int]:
    powers = [
        sign * (2**k + delta)
        for k in range(63)
        for delta in (-1, 0)
        for sign in (1, -1)
    ]
    edges = sorted({*powers, int(_INT64.min), int(_INT64.min) + 1, int(_INT64.max)})
    return st.one_of(
        st.sampled_from(edges), st.integers(int(_INT64.min), int(_INT64.max))
    )


@st.composite
def exact_operands(
    draw: Any, *, m: int | None = None, max_size: int = 4, vector: bool | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Strategy for int64 ``(A, B)`` of an :class:`coded.ExactCode`, edges first.

    Entries are drawn from the int64 extremes (``-2^63``, ``-2^63 + 1``,
    ``2^63 - 1``) and ``+-2^k``, ``+-(2^k - 1)``, or anywhere in int64; the product
    bound ``d max|A| max|B|`` then needs from 1 to 7 CRT primes and the product
    may exceed int64 (returned as Python ints).

    Parameters
    ----------
    m : int, optional
        Fix the rows of A.
    max_size : int
        Largest m (if not fixed), d and c.
    vector : bool, optional
        Force B to be a vector (True) or a matrix (False); None draws.

    Examples
    --------
    >>> from hypothesis import given
    >>> @given(pair=exact_operands(m=2))
    ... def check(pair):
    ...     A, B = pair
    ...     assert A.dtype == B.dtype == np.int64 and A.shape[0] == 2
    >>> check()
    """
    rows = m if m is not None else draw(st.integers(1, max_size))
    d = draw(st.integers(1, max_size))
    if vector is None:
        vector = draw(st.booleans())
    B_shape = (d,) if vector else (d, draw(st.integers(1, max_size)))
    A = draw(nps.arrays(np.int64, (rows, d), elements=_int64_edges()))
    return A, draw(nps.arrays(np.int64, B_shape, elements=_int64_edges()))


@st.composite
def crt_boundary_operands(
    draw: Any, *, max_primes: int = 6
) -> tuple[np.ndarray, np.ndarray]:
    """Strategy for 1 x 1 int64 ``(A, B)`` at the edge of a CRT prime count.

    With ``M_j`` the product of the j largest primes below ``2^21`` (those of
    :class:`coded.ExactCode`), a bound ``|a b| <= (M_j - 1)/2`` decodes with
    j primes and ``(M_j + 1)/2`` needs ``j + 1``. For ``M_j`` below ``2^63``
    (``j <= 3``) the product is ``+-(M_j - 1)/2`` itself, the end of the balanced
    range, or one beyond it; above, ``|a| ~ sqrt((M_j - 1)/2)`` and
    ``|b| = floor((M_j - 1)/2 / |a|)`` or one more, which straddle it.

    Parameters
    ----------
    max_primes : int
        Largest j, at most 6 (``(M_6 - 1)/2 < (2^63 - 1)^2``).

    Examples
    --------
    >>> from hypothesis import given
    >>> @given(pair=crt_boundary_operands(max_primes=2))
    ... def check(pair):
    ...     A, B = pair
    ...     assert A.shape == (1, 1) and B.shape == (1,)
    >>> check()
    """
    j = draw(st.integers(1, min(max_primes, 6)))
    half = (math.prod(exact_primes(j)) - 1) // 2
    beyond = draw(st.booleans())
    if half + 1 <= _INT64.max:
        a, b = half + beyond, 1
    else:
        a = math.isqrt(half)
        b = half // a + beyond
    sign_a, sign_b = draw(st.sampled_from([-1, 1])), draw(st.sampled_from([-1, 1]))
    if draw(st.booleans()):
        a, b = b, a
    return np.array([[sign_a * a]]), np.array([sign_b * b])


@st.composite
def worst_erasure_patterns(draw: Any, code: MDSCode, *, top: int = 3) -> list[int]:
    """Strategy for the k surviving workers whose decode is worst conditioned.

    Ranks the survivor sets S of a real :class:`coded.MDSCode` by the
    condition number of the decoding system ``G_S`` and draws one of the `top`
    worst; above 5000 sets it draws the worst set found by
    :meth:`coded.MDSCode.worst_condition_number`.

    Parameters
    ----------
    code : MDSCode
        A code over the reals.
    top : int
        How many of the worst sets to draw from.

    Examples
    --------
    >>> from hypothesis import given
    >>> code = MDSCode(5, 3)
    >>> worst = code.worst_condition_number()
    >>> @given(survivors=worst_erasure_patterns(code, top=1))
    ... def check(survivors):
    ...     assert tuple(survivors) == tuple(worst.survivors)
    >>> check()
    """
    return list(draw(st.sampled_from(_worst_sets(code, top))))


@functools.cache
def _worst_sets(code: MDSCode, top: int) -> tuple[tuple[int, ...], ...]:
    if math.comb(code.n, code.k) > 5000:
        return (tuple(int(i) for i in code.worst_condition_number().survivors),)
    G, ell = np.asarray(code.generator, dtype=np.float64), code.subblocks
    sets = list(itertools.combinations(range(code.n), code.k))
    conds = [
        np.linalg.cond(G[[ell * i + r for i in S for r in range(ell)]]) for S in sets
    ]
    ranked = sorted(zip(conds, sets, strict=True), key=lambda pair: -pair[0])
    return tuple(S for _, S in ranked[:top])


def dynamic_range_matrices(
    shape: tuple[int, ...], *, max_exponent: int = 60
) -> st.SearchStrategy:
    """Strategy for float64 matrices with entries ``+-2^e`` over many magnitudes.

    Entries are 0 or ``+-2^e`` with ``|e| <= max_exponent`` (exact in float64), so a
    matrix mixes values ``2^(2 max_exponent)`` apart: a decoder that loses small
    entries next to large ones, overflows or underflows shows it.

    Parameters
    ----------
    shape : tuple of int
        Array shape.
    max_exponent : int
        Largest ``|e|`` (at most 300, so products stay finite).

    Examples
    --------
    >>> from hypothesis import given
    >>> @given(X=dynamic_range_matrices((2, 2), max_exponent=10))
    ... def check(X):
    ...     nonzero = np.abs(X[X != 0])
    ...     assert np.all((nonzero >= 2.0**-10) & (nonzero <= 2.0**10))
    >>> check()
    """
    exponent = min(max_exponent, 300)
    entries = st.one_of(
        st.just(0.0),
        st.builds(
            lambda sign, e: sign * 2.0**e,
            st.sampled_from([-1.0, 1.0]),
            st.integers(-exponent, exponent),
        ),
    )
    return nps.arrays(np.float64, shape, elements=entries)
