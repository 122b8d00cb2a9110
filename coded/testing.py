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
"""

from __future__ import annotations

import itertools
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
    "codes",
    "decodable_subsets",
    "matrices",
    "mds_codes",
    "operands",
    "polynomial_codes",
    "undecodable_subsets",
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
