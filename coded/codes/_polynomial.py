r"""Polynomial codes for ``A @ B`` (Yu, Maddah-Ali, Avestimehr 2017).

Worker i multiplies ``sum_j a_ij A_j`` by ``sum_k b_ik B_k``; row i of the generator
is ``b_i (x) a_i`` (``G[i, k p_a + j] = b_ik a_ij``, the source blocks ``A_j B_k``).
Over GF(p) the vectors evaluate monomials at ``x_i = 1..n``. Over the reals the
default is the best certified of (``docs/theory/conditioning.md``):

- ``"product"``: vectors found by ``scripts/search_product_codes.py`` for the
  tabulated ``(n, p_a, p_b)`` (``coded/codes/data/product_codes.npz``), with their
  exact worst condition numbers (every survivor set decodes);
- ``"chebyshev"``: Chebyshev polynomials ``a_ij = T_j(x_i)``,
  ``b_ik = T_(k p_a)(x_i)`` at the Chebyshev points (an orthogonal-polynomial code:
  the products span the polynomials of degree ``< p_a p_b``, so any ``p_a p_b``
  distinct points decode);
- ``"monomial"``: ``x_i^j`` and ``x_i^(k p_a)`` at the Chebyshev points (the
  original construction; kept for comparison).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from importlib import resources
from typing import Any

import numpy as np
from numpy.polynomial import chebyshev

from coded.codes import _fields as fields
from coded.codes import _generators as generators
from coded.codes._base import EncodedOperands
from coded.codes._units import UnitCode, UnitContext, split_blocks
from theory.rng import RngLike
from theory.validation import check_int

__all__ = ["REAL_CONSTRUCTIONS", "PolynomialCode", "product_rows"]

REAL_CONSTRUCTIONS = ("product", "chebyshev", "monomial")
"""Real constructions of :class:`PolynomialCode` (see the module docstring)."""


def product_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return the generator rows ``b_i (x) a_i``: ``G[i, k p_a + j] = b_ik a_ij``."""
    return (b[:, :, None] * a[:, None, :]).reshape(a.shape[0], -1)


@functools.cache
def _stored_products() -> dict[tuple[int, int, int], tuple[float, tuple]]:
    """Load the product vectors ``(worst, (a, b))`` keyed by ``(n, p_a, p_b)``."""
    path = resources.files("coded.codes.data").joinpath("product_codes.npz")
    if not path.is_file():
        return {}
    with path.open("rb") as f, np.load(f) as data:
        return {
            tuple(int(v) for v in key): (float(worst), (data[f"a{i}"], data[f"b{i}"]))
            for i, (key, worst) in enumerate(
                zip(data["keys"], data["worst"], strict=True)
            )
        }


def _chebyshev_points(n: int) -> np.ndarray:
    return np.cos((2 * np.arange(n) + 1) * np.pi / (2 * n))


def _real_vectors(n: int, p_a: int, p_b: int, construction: str):
    """Return ``(a, b, points)`` of a real construction (no points: product)."""
    if construction == "product":
        return (*_stored_products()[n, p_a, p_b][1], None)
    x = _chebyshev_points(n)
    if construction == "chebyshev":
        V = chebyshev.chebvander(x, p_a * p_b - 1)
    else:
        V = np.vander(x, p_a * p_b, increasing=True)
    return V[:, :p_a], V[:, ::p_a][:, :p_b], x


def _chebyshev_worst(n: int, p_a: int, p_b: int) -> float:
    a, b, _ = _real_vectors(n, p_a, p_b, "chebyshev")
    return generators.worst_condition_number(product_rows(a, b)).value


@functools.cache
def default_construction(n: int, p_a: int, p_b: int) -> str:
    """Return the real construction with the smaller certified worst case.

    The stored product vectors when tabulated and better than the Chebyshev code
    (certified on the fly), else the Chebyshev code.
    """
    stored = _stored_products().get((n, p_a, p_b))
    if stored is not None and stored[0] <= _chebyshev_worst(n, p_a, p_b):
        return "product"
    return "chebyshev"


def _read_only(parts: np.ndarray) -> tuple[np.ndarray, ...]:
    """Read-only views of the rows of a freshly computed `parts` array."""
    parts.setflags(write=False)
    return tuple(parts)


class PolynomialCode(UnitCode):
    r"""Polynomial code: ``A @ B`` from any ``p_a * p_b`` of n worker products.

    A is split into ``p_a`` row blocks ``A_j`` and B into ``p_b`` column blocks
    ``B_k``; worker i with evaluation point ``x_i`` multiplies

    .. math::

        \tilde A_i = \sum_{j < p_a} A_j x_i^{j}, \qquad
        \tilde B_i = \sum_{k < p_b} B_k x_i^{k p_a},

    whose product :math:`\tilde A_i \tilde B_i = \sum_{j,k} A_j B_k x_i^{j + k p_a}`
    is a polynomial of degree ``p_a p_b - 1`` with the output blocks as
    coefficients. Any ``p_a p_b`` distinct points decode by interpolation (a
    Vandermonde solve); fewer do not. Over the reals the monomials are replaced
    by better conditioned vectors ``a_ij``, ``b_ik`` (module docstring): worker i
    multiplies :math:`\sum_j a_{ij} A_j` by :math:`\sum_k b_{ik} B_k`, with the
    same recovery threshold.

    Parameters
    ----------
    n : int
        Number of workers.
    p_a, p_b : int
        Row blocks of A and column blocks of B, ``p_a * p_b <= n``.
    field : None, int or galois field class, optional
        ``None``: reals; a prime p or ``galois.GF(p)``: exact, monomials at the
        points ``1..n`` (``n <= p - 1``).
    construction : {None, "product", "chebyshev", "monomial"}, optional
        Real codes only. ``None`` (default): the stored product vectors when
        ``(n, p_a, p_b)`` is tabulated and better, else ``"chebyshev"``
        (Chebyshev polynomials at the Chebyshev points
        :math:`x_i = \cos((2i + 1)\pi / (2n))`). ``"monomial"`` is the
        monomial basis at the same points (far worse conditioned).

    Notes
    -----
    Pieces may be any row range of ``Ã_i @ B̃_i`` (row t of every product
    involves only row t of the blocks of A). Over the reals a decode amplifies
    relative errors by the condition number of the survivors' rows of the
    generator; :meth:`worst_condition_number` certifies the worst case (e.g.
    (9; 2, 2): monomial 710, Chebyshev 588, product vectors 28;
    ``docs/theory/conditioning.md``), and the decoder's guard waits for extra
    results above ``max_condition``. Integer inputs over GF(p) are exact signed
    integers when ``2 d max|A| max|B| < p`` (checked).

    References
    ----------
    .. [1] Q. Yu, M. A. Maddah-Ali, A. S. Avestimehr, "Polynomial Codes: an Optimal
       Design for High-Dimensional Coded Matrix Multiplication", NeurIPS 2017.

    Examples
    --------
    >>> import numpy as np
    >>> code = PolynomialCode(5, 2, 2, field=65537)
    >>> A = np.arange(8).reshape(4, 2)
    >>> B = np.array([[1, 0, 2, -1], [3, 1, 0, 1]])
    >>> pairs = code.encode(A, B)
    >>> C = code.decode({i: pairs[i][0] @ pairs[i][1] for i in (0, 2, 3, 4)})
    >>> np.array_equal(C, A @ B)
    True
    """

    _threshold_name = "p_a*p_b"

    def __init__(
        self,
        n: int,
        p_a: int,
        p_b: int,
        field: fields.FieldLike = None,
        construction: str | None = None,
    ):
        n = check_int(n, "n", min_value=1)
        p_a = check_int(p_a, "p_a", min_value=1)
        p_b = check_int(p_b, "p_b", min_value=1)
        if p_a * p_b > n:
            raise ValueError(
                f"`p_a * p_b` must be <= n, got p_a={p_a}, p_b={p_b}, n={n}."
            )
        p = fields.resolve_prime(field)
        fields.check_points(n, p)
        self.p_a, self.p_b = p_a, p_b
        if p is None:
            construction = self._check_construction(construction, n)
            a, b, points = _real_vectors(n, p_a, p_b, construction)
            G = product_rows(a, b)
        else:
            if construction is not None:
                raise ValueError(
                    "`construction` applies to real codes (field=None); a code over "
                    f"GF({p}) uses monomials at 1..n, got "
                    f"construction={construction!r}."
                )
            points = np.arange(1, n + 1)
            G = fields.vandermonde(points, p_a * p_b, p)
            a, b = G[:, :p_a], G[:, ::p_a][:, :p_b]
            construction = "vandermonde"
        self.construction = construction
        self._setup(n, G, p, [1] * n)
        self._a, self._b = (np.array(v, dtype=self._G.dtype) for v in (a, b))
        self._points = None
        if points is not None:
            self._points = np.array(points, dtype=self._G.dtype)
            self._points.setflags(write=False)

    def _check_construction(self, construction: object, n: int) -> str:
        p_a, p_b = self.p_a, self.p_b
        if construction is None:
            return default_construction(n, p_a, p_b)
        if construction not in REAL_CONSTRUCTIONS:
            raise ValueError(
                f"`construction` must be one of {REAL_CONSTRUCTIONS} or None, "
                f"got {construction!r}."
            )
        if construction == "product" and (n, p_a, p_b) not in _stored_products():
            raise ValueError(
                f'`construction="product"` has no stored vectors for (n, p_a, p_b) '
                f"= ({n}, {p_a}, {p_b}); tabulated: {sorted(_stored_products())}."
            )
        return construction

    @property
    def recovery_threshold(self) -> int:
        """``p_a * p_b``."""
        return self.p_a * self.p_b

    def worst_condition_number(
        self,
        *,
        exact_limit: int = generators.EXACT_LIMIT,
        samples: int = 20_000,
        starts: int = 8,
        rng: RngLike = 0,
    ) -> generators.WorstCondition:
        """Worst condition number of the interpolation over ``p_a p_b`` workers.

        Exact over all survivor sets when there are at most `exact_limit`,
        otherwise a lower bound by adversarial search, flagged ``exact=False``
        (as :meth:`coded.MDSCode.worst_condition_number`).

        Parameters
        ----------
        exact_limit : int
            Largest number of survivor sets enumerated (default 2e6).
        samples, starts : int
            Adversarial search when not exact.
        rng : Generator, int or None
            Seed of the sampling.

        Returns
        -------
        WorstCondition

        Examples
        --------
        >>> code = PolynomialCode(9, 2, 2, construction="monomial")
        >>> w = code.worst_condition_number()
        >>> w.exact, round(w.value)
        (True, 710)
        """
        if self._p is not None:
            raise ValueError(
                "`worst_condition_number` is defined for real codes (field=None), "
                f"got a code over GF({self._p})."
            )
        return generators.worst_condition_number(
            self._G, exact_limit=exact_limit, samples=samples, starts=starts, rng=rng
        )

    @property
    def points(self) -> np.ndarray | None:
        """The evaluation points ``x_i`` (residues over GF(p); None: product)."""
        return self._points

    def _encode_pair(self, A: np.ndarray, B: np.ndarray, vector: bool):
        """Coded factors from A ``(m, d)`` and B ``(d, c)``, zero-padded to blocks.

        A's row blocks are read in place (only a padded last block is copied); B's
        column blocks are gathered (B is the small operand of a row split).
        """
        p_a, p_b, p = self.p_a, self.p_b, self._p
        (m, d), c = A.shape, B.shape[1]
        rows, width = -(-m // p_a), -(-c // p_b)
        Va, Vb = self._a, self._b
        left = fields.encode_product(Va, *split_blocks(A, p_a, rows), p)
        blocks = np.zeros((p_b, d, width), dtype=B.dtype)
        for k in range(p_b):
            part = B[:, k * width : (k + 1) * width]
            blocks[k, :, : part.shape[1]] = part
        right = fields.encode_product(
            Vb, blocks.reshape(p_b, d * width), blocks[:0].reshape(0, d * width), p
        ).reshape(self.n, d, width)
        if vector:
            right = right[:, :, 0]
        return left.reshape(self.n, rows, d), right

    def encode_operands(self, A: Any, B: Any) -> EncodedOperands:
        """Encode ``A @ B`` into per-worker ``(Ã_i, B̃_i)`` (both operands coded).

        Parameters
        ----------
        A : array_like, shape (m, d)
            Left operand (rows padded internally to a multiple of ``p_a``).
        B : array_like, shape (d, c) or (d,)
            Right operand (columns padded to a multiple of ``p_b``).

        Returns
        -------
        EncodedOperands
            ``lefts[i] = Ã_i`` ``(ceil(m / p_a), d)``, ``rights[i] = B̃_i``
            ``(d, ceil(c / p_b))`` (1-D when B is a vector and ``p_b = 1``).
        """
        return self._encode(fields.prepare_operands(A, B, self._p))

    def _encode(self, ops: fields.Operands) -> EncodedOperands:
        m = ops.A.shape[0]
        B2 = ops.B[:, None] if ops.is_vector else ops.B
        c = B2.shape[1]
        vector = ops.is_vector and self.p_b == 1
        lefts, rights = self._encode_pair(ops.A, B2, vector)
        context = UnitContext(
            m=m,
            c=c,
            rows=lefts.shape[1],
            width=-(-c // self.p_b),
            is_vector=ops.is_vector,
            output=ops.output,
        )
        return EncodedOperands(
            lefts=_read_only(lefts),
            rights=_read_only(rights),
            shared_right=None,
            context=context,
        )

    def _assemble(self, sources: np.ndarray, context: UnitContext) -> np.ndarray:
        rows, width = context.rows, context.width
        blocks = sources.reshape(self.p_b, self.p_a, rows, width)
        full = blocks.transpose(1, 2, 0, 3).reshape(self.p_a * rows, self.p_b * width)
        return full[: context.m, : context.c]

    def _simple_context(
        self, *, rows: int, width: int, is_vector: bool, output: fields.Output
    ) -> UnitContext:
        return UnitContext(
            m=self.p_a * rows,
            c=self.p_b * width,
            rows=rows,
            width=width,
            is_vector=is_vector,
            output=output,
        )

    def encode(self, A: Any, B: Any) -> list[tuple[Any, Any]]:
        """Return the n pairs of coded factors ``(Ã_i, B̃_i)``.

        Parameters
        ----------
        A : array_like, shape (m, d)
            m divisible by ``p_a``.
        B : array_like, shape (d, c) or (d,)
            c divisible by ``p_b`` (a vector needs ``p_b = 1``).

        Returns
        -------
        list of tuple
            ``(Ã_i, B̃_i)``: float64 (float32 when A and B are), FieldArrays, or
            int64 residues in
            ``[0, p)`` (integer inputs; multiply them with :attr:`multiply`, which
            reduces modulo p, when ``d (p - 1)^2`` could overflow int64).
        """
        ops = fields.prepare_operands(A, B, self._p)
        m = ops.A.shape[0]
        c = 1 if ops.is_vector else ops.B.shape[1]
        if m % self.p_a or c % self.p_b or (ops.is_vector and self.p_b > 1):
            raise ValueError(
                f"`A` rows must be divisible by p_a={self.p_a} and `B` columns by "
                f"p_b={self.p_b} (a vector B needs p_b=1), got A.shape={ops.A.shape}, "
                f"B.shape={ops.B.shape}."
            )
        B2 = ops.B[:, None] if ops.is_vector else ops.B
        lefts, rights = self._encode_pair(ops.A, B2, ops.is_vector)
        return [
            (
                fields.as_output(a, ops.output, self._p),
                fields.as_output(b, ops.output, self._p),
            )
            for a, b in zip(lefts, rights, strict=True)
        ]

    def decode(self, results: Mapping[int, Any]) -> Any:
        """Return ``A @ B`` from ``{i: Ã_i @ B̃_i}`` of any ``p_a * p_b`` workers.

        Parameters
        ----------
        results : mapping of int to array
            Worker index to its product (shape ``(m / p_a, c / p_b)``).

        Returns
        -------
        array
            ``A @ B`` (float64, float32 for float32 results (decoded in float64),
            FieldArray, or exact signed int64).

        Raises
        ------
        DecodingError
            With fewer than ``p_a * p_b`` results.
        """
        return self._decode_mapping(results)

    def __repr__(self) -> str:
        if self._p is None:
            field = f"None, construction={self.construction!r}"
        else:
            field = str(self._p)
        return (
            f"PolynomialCode(n={self.n}, p_a={self.p_a}, p_b={self.p_b}, field={field})"
        )
