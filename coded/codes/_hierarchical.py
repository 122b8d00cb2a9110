r"""Hierarchical (multi-level) MDS codes: an inner code per group, outer codes across.

A layout ``levels = ((n_0, k_0), ..., (n_{L-1}, k_{L-1}))`` (outermost first) splits
``n = n_0 n_1 ... n_{L-1}`` workers into ``n_0`` groups, each into ``n_1`` subgroups,
and so on; worker ``w`` has the mixed-radix digits ``(i_0, ..., i_{L-1})`` of ``w``,
so every group is a range of consecutive workers. The generator is the Kronecker
product ``G = G_0 (x) G_1 (x) ... (x) G_{L-1}`` of MDS generators ``G_l`` of the
levels (those of :class:`~coded.codes.MDSCode`), applied one level at a time: A is
never multiplied by the ``n x k`` matrix ``G`` itself.

Two levels are the codes of Park, Lee, Sohn, Suh and Moon ("Hierarchical coding for
distributed computing", 2018) and Kiani, Ferdinand and Draper (hierarchical coded
matrix multiplication): an ``(n_1, k_1)`` inner code within each group and an
``(n_0, k_0)`` outer code across groups. Decoding is group-local: a group decodes
once ``k_1`` of its workers have answered (one small solve), and the outer code once
``k_0`` groups have decoded. The same generator is the product code of Lee, Suh and
Ramchandran (ISIT 2017), whose decoder also decodes *across* groups (rows and
columns of the grid of workers, iterating): ``decoding="product"``, for two levels
over GF(p) (``docs/theory/hierarchical.md``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

from coded.codes import _fields as fields
from coded.codes import _generators as generators
from coded.codes._base import Code, Decoder, EncodedOperands, Piece
from coded.codes._blas import apply_decoding, one_blas_thread
from coded.codes._mds import MDSCode
from coded.codes._units import split_blocks
from coded.errors import DecodingError, NonFiniteResultError
from theory.validation import check_int, check_levels

__all__ = [
    "DecodedGroup",
    "HierarchicalCode",
    "HierarchicalCondition",
    "HierarchicalContext",
    "HierarchicalDecoder",
]

_ENUMERATION_LIMIT = 200_000
"""Survivor sets enumerated for a level whose generator is not orthonormal."""


@dataclass(frozen=True, slots=True)
class HierarchicalCondition:
    """Certified bound on the condition number of every decode of a real code.

    Parameters
    ----------
    value : float
        ``prod_l kappa_l``: every system a decode solves (as one composite
        matrix ``G_S``) has ``cond_2(G_S) <= value`` when `certified`.
    certified : bool
        True when every level's factor was computed over all its survivor sets.
        False: some level has too many survivor sets to enumerate and its factor
        is a lower bound from adversarial search (the product then bounds
        nothing).
    levels : tuple of float
        ``kappa_l = max_S sigma_max(G_l[S]) / min_S sigma_min(G_l[S])`` per level,
        outermost first (the worst-case condition number of the level's code when
        its generator has orthonormal columns and ``2 k_l > n_l``).
    """

    value: float
    certified: bool
    levels: tuple[float, ...]

    def __float__(self) -> float:
        return self.value


@dataclass(frozen=True, slots=True, kw_only=True)
class HierarchicalContext:
    """What decoding a hierarchical code's product needs (opaque to the runtime).

    Parameters
    ----------
    m, c : int
        Rows and columns of the product (``c = 1`` for a vector).
    rows : int
        Rows of one source block (``ceil(m / K)``, K the source blocks).
    is_vector : bool
        Whether B was a vector.
    output : str
        How decoded residues are returned (``coded.codes._fields.Output``).
    a_bound : int
        ``d max|A|`` for signed integers over GF(p), else 0.
    """

    m: int
    c: int
    rows: int
    is_vector: bool
    output: fields.Output
    a_bound: int = 0


@dataclass(frozen=True, slots=True)
class DecodedGroup:
    """One outer group's decoded value, as its leader sends it onward.

    Parameters
    ----------
    group : int
        The group (a node of depth 1: workers ``group * s ... (group + 1) * s -
        1``, ``s = n / n_0``).
    value : ndarray
        The group's node value: shape ``(ell_0, (prod_{l >= 1} K_l) * R)``, ``R``
        the entries of one source block of the product.
    used : tuple of int
        Workers whose results the decode used.
    extremes : tuple of (float, float)
        Per depth ``1 ... L - 1``: the largest ``sigma_max`` and smallest
        ``sigma_min`` of the systems solved there (reals; empty over GF(p)).
    """

    group: int
    value: np.ndarray
    used: tuple[int, ...]
    extremes: tuple[tuple[float, float], ...] = ()


@dataclass(frozen=True, slots=True)
class _Level:
    """One level: ``(n, k)``, generator ``(ell n, ell k)``, sub-blocks ``ell``."""

    n: int
    k: int
    G: np.ndarray
    ell: int

    @property
    def K(self) -> int:
        return self.ell * self.k

    def rows(self, children: tuple[int, ...]) -> np.ndarray:
        """Rows of ``G`` held by the children (workers or groups) `children`."""
        return (np.asarray(children)[:, None] * self.ell + np.arange(self.ell)).ravel()


def _brief(items: list[int], limit: int = 16) -> str:
    """List at most `limit` items as ``[a, b, ...]`` (and count those left out)."""
    if len(items) <= limit:
        return str(items)
    shown = ", ".join(map(str, items[:limit]))
    return f"[{shown}, ... ({len(items) - limit} more)]"


Decoding = Literal["groups", "product"]


def _check_decoding(decoding: object, depth: int, p: int | None) -> Decoding:
    """Validate `decoding`: product decoding needs two levels over GF(p)."""
    if decoding not in ("groups", "product"):
        raise ValueError(f"`decoding` must be 'groups' or 'product', got {decoding!r}.")
    if decoding == "product" and (depth != 2 or p is None):
        field = "the reals" if p is None else f"GF({p})"
        raise ValueError(
            "`decoding='product'` decodes across the groups of a two-level code "
            f"over GF(p), got {depth} level(s) over {field} (over the reals its "
            "chained solves have no certified bound); use decoding='groups', or "
            "field=p with two levels."
        )
    return decoding  # type: ignore[return-value]


def _bounded(value: object, name: str, low: int, high: int) -> int:
    """``check_int`` with bounds, without its cost for a plain int in range."""
    if type(value) is int and low <= value <= high:
        return value
    return check_int(value, name, min_value=low, max_value=high)


@functools.cache
def _level_bound(n: int, k: int, systematic: bool) -> tuple[float, bool]:
    """``(kappa_l, exact)`` of the real ``MDSCode(n, k)`` generator (see the class)."""
    code = MDSCode(n, k, systematic=systematic)
    G, ell = np.asarray(code.generator), code.subblocks
    N, K = G.shape
    if K == N:  # every worker is needed: one system, G itself
        return float(np.linalg.cond(G)), True
    orthonormal = np.allclose(G.T @ G, np.eye(K), rtol=0, atol=1e-12)
    if orthonormal and 2 * K > N:  # sigma_max(G_S) = 1: kappa_l = max 1/sigma_min
        worst = code.worst_condition_number()
        return worst.value, worst.exact
    if math.comb(n, k) > _ENUMERATION_LIMIT:
        return math.inf, False
    top, bottom = 0.0, math.inf
    for erased in generators._combination_chunks(n, n - k, chunk=4096):
        keep = np.ones((len(erased), n), dtype=bool)
        keep[np.arange(len(erased))[:, None], erased] = False
        survivors = np.nonzero(keep)[1].reshape(len(erased), k)
        rows = (survivors[:, :, None] * ell + np.arange(ell)).reshape(len(erased), -1)
        s = np.linalg.svd(G[rows], compute_uv=False)
        top, bottom = max(top, float(s[:, 0].max())), min(bottom, float(s[:, -1].min()))
    return (top / bottom if bottom > 0 else math.inf), True


@functools.lru_cache(maxsize=8)
def _built(
    n: int,
    levels: tuple[tuple[int, int], ...],
    p: int | None,
    systematic: bool,
    decoding: Decoding,
) -> HierarchicalCode:
    """Return the code of these parameters, built once per process (unpickling)."""
    return HierarchicalCode(n, levels, p, systematic=systematic, decoding=decoding)


class HierarchicalCode(Code):
    r"""Multi-level MDS code: group-local decodes, then the outer code's decode.

    Worker ``w`` (mixed-radix digits ``(i_0, ..., i_{L-1})`` over the level sizes,
    so a group is a range of consecutive workers) holds the coded block
    ``sum_j prod_l G_l[i_l, j_l] A_j`` of the Kronecker code
    ``G_0 (x) ... (x) G_{L-1}``, for the ``K = prod_l ell_l k_l`` row blocks
    ``A_j`` of A, and returns it times B. A two-level layout
    ``((groups, k_outer), (n / groups, k_inner))`` is the code of Park et al.
    and Kiani et al. (:meth:`two_level`).

    Parameters
    ----------
    n : int
        Number of workers.
    levels : sequence of (int, int)
        ``(n_l, k_l)`` per level, outermost first: ``n_0`` groups, each of
        ``n_1`` subgroups, and so on; ``prod_l n_l = n`` and
        ``1 <= k_l <= n_l``. One level is a flat ``MDSCode(n, k)``.
    field : None, int or galois field class, optional
        ``None`` (default): the reals, each level the certified generator of
        ``MDSCode(n_l, k_l)``. A prime p: exact arithmetic over GF(p)
        (``n_l <= p - 1``).
    systematic : bool, optional
        The levels' generators as in :class:`MDSCode` (default: ``False`` over
        the reals, ``True`` over GF(p)).
    decoding : {"groups", "product"}
        ``"groups"`` (default): group-local decoding, the patterns of the Notes.
        ``"product"`` (two levels over GF(p)): the product-code decoder, which
        also decodes across groups (see the Notes).

    Raises
    ------
    ValueError
        If the level sizes do not multiply to n (groups that do not divide the
        workers), a ``k_l`` lies outside ``[1, n_l]``, a level of a multi-level
        layout has ``n_l < 2``, or there are more levels than ``log2(n)``.

    Notes
    -----
    *Decodable patterns.* A worker is decoded when its result arrived; a group
    at level l when at least ``k_l`` of its ``n_l`` members are decoded; the
    product when the root is. These are exactly the patterns the group-local
    decoder resolves (``decoding="groups"``). Hence at least ``prod_l k_l``
    results are needed, and any ``n - prod_l (n_l - k_l + 1) + 1`` always
    suffice (the :attr:`recovery_threshold`).

    *Product decoding* (``decoding="product"``, two levels, GF(p) only: exact).
    The workers form an ``n_0 x n_1`` grid whose rows are the groups; every row
    is a codeword of the inner code and every column one of the outer code (the
    Kronecker structure). The decoder alternates: a row with ``k_1`` known
    cells is decoded and re-encoded whole, then a column with ``k_0`` known
    cells, until nothing changes; the product decodes once ``k_0`` rows are
    known (Lee, Suh, Ramchandran 2017). This resolves every pattern of the
    group rule and more (a group with fewer than ``k_1`` results whose missing
    cells are filled from their columns). Over the reals the chained solves have
    no certified bound, so it is refused there.

    *Conditioning.* For a decodable pattern the decode equals one solve of
    ``G_S Y = R_S`` with ``G_S = D (G_0[T] (x) I)``, D block diagonal with the
    inner systems (two levels), so

    .. math:: \operatorname{cond}_2(G_S) \le \prod_l \kappa_l, \qquad
              \kappa_l = \frac{\max_S \sigma_{\max}(G_l[S])}
                              {\min_S \sigma_{\min}(G_l[S])},

    certified by :meth:`worst_condition_number` from the levels' own survivor
    sets (``docs/theory/hierarchical.md`` has the proof); for the orthonormal
    generators of :class:`MDSCode` with ``2 k_l > n_l``, ``kappa_l`` is the
    level's certified worst-case condition number.

    Examples
    --------
    >>> import numpy as np
    >>> code = HierarchicalCode.two_level(8, groups=2, k_inner=3, k_outer=1)
    >>> code.levels, code.min_results, code.recovery_threshold
    (((2, 1), (4, 3)), 3, 5)
    >>> A, x = np.arange(12.0).reshape(6, 2), np.array([1.0, -1.0])
    >>> enc = code.encode_operands(A, x)
    >>> results = {w: enc.lefts[w] @ x for w in (4, 5, 7)}  # group 1 decodes
    >>> np.allclose(code.decode_results(enc, results), A @ x)
    True
    >>> code.is_decodable([0, 1, 4, 5])  # two of each group: neither decodes
    False
    >>> exact = HierarchicalCode(16, [(4, 3), (4, 3)], field=65537)
    >>> enc = exact.encode_operands(np.arange(18).reshape(9, 2), [1, -1])
    >>> alive = [w for w in range(16) if w % 4 != 0 and w // 4 != 2]
    >>> exact.decode_results(enc, {w: enc.lefts[w] @ enc.right(w) for w in alive})
    array([-1, -1, -1, -1, -1, -1, -1, -1, -1])
    """

    def __init__(
        self,
        n: int,
        levels: Sequence[tuple[int, int]],
        field: fields.FieldLike = None,
        *,
        systematic: bool | None = None,
        decoding: Decoding = "groups",
    ):
        self.n = check_int(n, "n", min_value=1)
        self.levels = check_levels(self.n, levels)
        self._p = fields.resolve_prime(field)
        self.decoding = _check_decoding(decoding, len(self.levels), self._p)
        for size, _ in self.levels:
            fields.check_points(size, self._p, "n_l")
        parts = [
            MDSCode(size, k, field, systematic=systematic) for size, k in self.levels
        ]
        self.systematic = parts[0].systematic
        self._levels = tuple(
            _Level(size, k, np.asarray(code.generator), code.subblocks)
            for (size, k), code in zip(self.levels, parts, strict=True)
        )
        self._sizes = tuple(size for size, _ in self.levels)
        self._factors: dict[tuple[int, tuple[int, ...]], Any] = {}
        self._sigmas: dict[tuple[int, tuple[int, ...]], tuple[float, float]] = {}

    def __reduce__(self) -> tuple[Callable[..., HierarchicalCode], tuple[Any, ...]]:
        # pickled as its parameters (a group leader receives the code with every
        # call: its generators are 0.5 MB at n = 10^4), built once per process
        return _built, (self.n, self.levels, self._p, self.systematic, self.decoding)

    @classmethod
    def two_level(
        cls,
        n: int,
        groups: int,
        k_inner: int,
        k_outer: int,
        field: fields.FieldLike = None,
        *,
        systematic: bool | None = None,
        decoding: Decoding = "groups",
    ) -> HierarchicalCode:
        """Two-level code: `groups` groups of ``n / groups`` workers.

        Parameters
        ----------
        n : int
            Number of workers.
        groups : int
            Number of groups (must divide n); the outer code has ``n_0 = groups``.
        k_inner : int
            Results a group needs, ``1 <= k_inner <= n / groups``.
        k_outer : int
            Decoded groups the product needs, ``1 <= k_outer <= groups``.
        field, systematic, decoding
            As in the class.

        Returns
        -------
        HierarchicalCode
            ``HierarchicalCode(n, [(groups, k_outer), (n // groups, k_inner)])``.

        Examples
        --------
        >>> code = HierarchicalCode.two_level(256, groups=16, k_inner=14, k_outer=14)
        >>> code.levels, code.min_results, code.recovery_threshold
        (((16, 14), (16, 14)), 196, 248)
        """
        n = check_int(n, "n", min_value=1)
        groups = check_int(groups, "groups", min_value=1, max_value=n)
        if n % groups:
            divisors = [g for g in range(2, n) if n % g == 0]
            remedy = (
                "use a divisor of n, e.g. groups="
                f"{min(divisors, key=lambda g: abs(g - groups))}, or change n"
                if divisors
                else f"n={n} is prime, so no two-level layout has n workers: change n"
            )
            raise ValueError(
                f"`groups`={groups} must divide the n={n} workers into equal groups "
                f"(n % groups = {n % groups}); {remedy}."
            )
        size = n // groups
        k_inner = check_int(k_inner, "k_inner", min_value=1)
        k_outer = check_int(k_outer, "k_outer", min_value=1)
        if k_inner > size:
            raise ValueError(
                f"`k_inner` must satisfy 1 <= k_inner <= n / groups = {size} (the "
                f"workers of a group), got k_inner={k_inner}; lower it or use fewer "
                "groups."
            )
        if k_outer > groups:
            raise ValueError(
                f"`k_outer` must satisfy 1 <= k_outer <= groups = {groups}, got "
                f"k_outer={k_outer}; lower it or use more groups."
            )
        if groups == 1 or size == 1:
            raise ValueError(
                f"a two-level layout needs at least 2 groups of at least 2 workers, "
                f"got groups={groups} of n / groups = {size}; use MDSCode(n, k) "
                "for one flat code."
            )
        levels = [(groups, k_outer), (size, k_inner)]
        return cls(n, levels, field, systematic=systematic, decoding=decoding)

    # -- facts -----------------------------------------------------------------------
    @property
    def recovery_threshold(self) -> int:
        """Results that always suffice: ``n - prod_l (n_l - k_l + 1) + 1``.

        Fewer may (see :attr:`min_results`): the least erasure pattern that
        stops the decode loses ``n_l - k_l + 1`` members at every level.
        """
        return self.n - math.prod(size - k + 1 for size, k in self.levels) + 1

    @property
    def min_results(self) -> int:
        """Fewest results that can decode: ``prod_l k_l``."""
        return math.prod(k for _, k in self.levels)

    @property
    def subblocks(self) -> int:
        """Coded blocks each worker holds: ``prod_l ell_l``."""
        return math.prod(level.ell for level in self._levels)

    @property
    def blocks(self) -> int:
        """Source row blocks of A: ``K = prod_l ell_l k_l``."""
        return math.prod(level.K for level in self._levels)

    @property
    def p(self) -> int | None:
        """The prime of GF(p), or ``None`` over the reals."""
        return self._p

    @property
    def field(self) -> Any:
        """The galois field class GF(p), or ``None`` for the real numbers."""
        return None if self._p is None else fields.galois_field(self._p)

    @property
    def multiply(self) -> Callable[[Any, Any], Any]:
        """Picklable worker-side product ``(left, right) -> left @ right``."""
        if self._p is None:
            return fields.multiply_real
        return functools.partial(fields.multiply_mod, p=self._p)

    def group_of(self, worker: int, level: int = 1) -> int:
        """Index of `worker`'s group at depth `level` (1: the outer code's groups).

        Parameters
        ----------
        worker : int
            Worker index.
        level : int
            ``1 <= level <= L``; the group is one of ``n_0 ... n_{level-1}``.

        Returns
        -------
        int
        """
        worker = check_int(worker, "worker", min_value=0, max_value=self.n - 1)
        level = check_int(level, "level", min_value=1, max_value=len(self.levels))
        return worker // math.prod(self._sizes[level:])

    # -- decodability ------------------------------------------------------------------
    def _counts(self, done: np.ndarray) -> list[np.ndarray]:
        """Count decoded members of every node, deepest level first."""
        decoded = done.reshape(self._sizes)
        counts = []
        for _, k in reversed(self.levels):
            count = decoded.sum(axis=-1)
            counts.append(count)
            decoded = count >= k
        return counts

    def _done(self, workers: Iterable[int]) -> np.ndarray:
        done = np.zeros(self.n, dtype=bool)
        for worker in workers:
            done[check_int(worker, "worker", min_value=0, max_value=self.n - 1)] = True
        return done

    def _peel(self, done: np.ndarray) -> np.ndarray:
        """Known cells of the ``(n_0, n_1)`` grid after row/column decoding."""
        (n0, k0), (n1, k1) = self.levels
        known = done.reshape(n0, n1).copy()
        while True:
            rows = known.sum(axis=1) >= k1
            cols = known.sum(axis=0) >= k0
            grown = known | rows[:, None] | cols[None, :]
            if (grown == known).all():
                return known
            known = grown

    def _decodable(self, done: np.ndarray) -> bool:
        if self.decoding == "product":
            done = self._peel(done).ravel()
        return bool(self._counts(done)[-1] >= self.levels[0][1])

    def is_decodable(self, workers: Iterable[int]) -> bool:
        """Whether whole results from `workers` decode (every group rule holds).

        Parameters
        ----------
        workers : iterable of int
            Worker indices ``0 <= i < n``.

        Returns
        -------
        bool
        """
        return self._decodable(self._done(workers))

    def group_decodes(self, group: int, workers: Iterable[int]) -> bool:
        """Whether outer group `group` decodes alone from whole results of `workers`.

        Its levels below the outer code follow the group rule (a group's leader
        decodes them, ``transport="grouped"``); workers outside the group are
        ignored.

        Parameters
        ----------
        group : int
            ``0 <= group < n_0``.
        workers : iterable of int

        Returns
        -------
        bool

        Examples
        --------
        >>> code = HierarchicalCode(6, [(2, 1), (3, 2)])
        >>> code.group_decodes(1, [3, 5]), code.group_decodes(0, [3, 5])
        (True, False)
        """
        if len(self.levels) < 2:
            raise ValueError(
                f"a code of one level has no groups to decode alone, got {self!r}."
            )
        group = check_int(group, "group", min_value=0, max_value=self.levels[0][0] - 1)
        counts = self._counts(self._done(workers))
        return bool(counts[-2][group] >= self.levels[1][1])

    def explain(self, workers: Iterable[int]) -> str:
        """Say which groups decode from `workers` and what the decode lacks.

        Parameters
        ----------
        workers : iterable of int
            Worker indices whose whole results arrived.

        Returns
        -------
        str
            One clause per level, innermost first.
        """
        received = self._done(workers)
        done = received
        if self.decoding == "product":
            done = self._peel(received).ravel()
        clauses = []
        for depth, count in zip(
            range(len(self.levels) - 1, -1, -1), self._counts(done), strict=True
        ):
            size, k = self.levels[depth]
            flat = np.atleast_1d(count).ravel()
            ok = np.flatnonzero(flat >= k).tolist()
            if depth == 0:
                clauses.append(
                    f"the outer code has {int(flat[0])} of the k_0={k} decoded "
                    f"groups it needs (of n_0={size})"
                )
            else:
                clauses.append(
                    f"{len(ok)} of the {flat.size} level-{depth} groups decode "
                    f"(each needs k_{depth}={k} of its {size} members): {_brief(ok)}"
                )
        missing = np.flatnonzero(~received).tolist()
        head = f"{int(received.sum())} of {self.n} results, missing {_brief(missing)}"
        if self.decoding == "product":
            head += f"; {int(done.sum())} known after decoding across groups"
        return head + "; " + "; ".join(clauses) + "."

    # -- encoding ----------------------------------------------------------------------
    def _apply_levels(self, sources: np.ndarray) -> np.ndarray:
        """Apply ``G_0 (x) ... (x) G_{L-1}`` to ``(K, R)`` sources, level by level.

        Returns ``(n, ell_0 ... ell_{L-1}, R)``: each worker's coded blocks.
        """
        R = sources.shape[1]
        X = sources.reshape([level.K for level in self._levels] + [R])
        for axis, level in enumerate(self._levels):
            moved = np.moveaxis(X, axis, 0)
            shape = moved.shape
            coded = fields.matmul(level.G, moved.reshape(level.K, -1), self._p)
            X = np.moveaxis(coded.reshape((level.G.shape[0], *shape[1:])), 0, axis)
        L = len(self._levels)
        split = [d for level in self._levels for d in (level.n, level.ell)] + [R]
        order = list(range(0, 2 * L, 2)) + list(range(1, 2 * L, 2)) + [2 * L]
        return X.reshape(split).transpose(order).reshape(self.n, self.subblocks, R)

    def encode_operands(self, A: Any, B: Any) -> EncodedOperands:
        """Encode ``A @ B``: worker w gets its coded blocks of A and the shared B.

        Parameters
        ----------
        A : array_like, shape (m, d)
            Left operand (real, or integers / field elements over GF(p)); any m,
            padded internally to a multiple of :attr:`blocks`.
        B : array_like, shape (d, c) or (d,)
            Right operand, shared by every worker.

        Returns
        -------
        EncodedOperands
            ``lefts[w]`` has shape ``(subblocks * ceil(m / blocks), d)``.
        """
        ops = fields.prepare_operands(A, B, self._p)
        m, d = ops.A.shape
        rows = -(-m // self.blocks)
        full, tail = split_blocks(ops.A, self.blocks, rows)
        work = np.float64 if self._p is None else np.int64
        sources = np.concatenate([full, tail]).astype(work, copy=False)
        coded = self._apply_levels(sources).astype(ops.A.dtype, copy=False)
        lefts = []
        for w in range(self.n):
            share = coded[w].reshape(-1, d)
            share.setflags(write=False)
            lefts.append(share)
        context = HierarchicalContext(
            m=m,
            c=1 if ops.is_vector else ops.B.shape[1],
            rows=rows,
            is_vector=ops.is_vector,
            output=ops.output,
            a_bound=ops.a_bound,
        )
        right = ops.B.view()
        right.setflags(write=False)
        return EncodedOperands(
            lefts=tuple(lefts), rights=None, shared_right=right, context=context
        )

    def encode_right(self, encoded: EncodedOperands, B: Any) -> EncodedOperands:
        """Encode a new right operand B against the encoded A of `encoded`.

        Parameters
        ----------
        encoded : EncodedOperands
            What :meth:`encode_operands` returned.
        B : array_like, shape (d, c) or (d,)
            The new right operand (same semantics as A's encoding).

        Returns
        -------
        EncodedOperands
        """
        context = self._context(encoded)
        d = int(np.shape(encoded.lefts[0])[1])
        right = fields.prepare_right(B, self._p, context.output, d, context.a_bound)
        right = right.view()
        right.setflags(write=False)
        return replace(
            encoded,
            shared_right=right,
            context=replace(
                context,
                c=1 if right.ndim == 1 else right.shape[1],
                is_vector=right.ndim == 1,
            ),
        )

    def repair(
        self, shares: Mapping[int, Any], workers: Iterable[int]
    ) -> dict[int, np.ndarray]:
        """Recompute the coded shares of `workers` from surviving shares.

        The shares of a decodable set are decoded as results (times the
        identity) into A's blocks, which the levels re-encode; A is never needed.

        Parameters
        ----------
        shares : mapping of int to array
            Surviving shares ``{worker: encoded.lefts[worker]}``; their workers
            must be a decodable set.
        workers : iterable of int
            The workers whose shares to rebuild.

        Returns
        -------
        dict of int to numpy.ndarray
            ``{worker: share}``, equal to ``encode_operands(A, B).lefts[worker]``
            (exactly over GF(p), to rounding over the reals).

        Raises
        ------
        DecodingError
            If the surviving workers are not a decodable set.

        Examples
        --------
        >>> import numpy as np
        >>> code = HierarchicalCode(8, [(2, 1), (4, 3)], field=65537)
        >>> lefts = code.encode_operands(np.arange(12).reshape(6, 2), [1, 1]).lefts
        >>> rebuilt = code.repair({w: lefts[w] for w in (4, 5, 7)}, [0, 6])
        >>> all(np.array_equal(rebuilt[w], lefts[w]) for w in (0, 6))
        True
        """
        arrays = {int(w): np.asarray(v) for w, v in shares.items()}
        targets = [
            check_int(w, "worker", min_value=0, max_value=self.n - 1) for w in workers
        ]
        if not self.is_decodable(arrays):
            raise DecodingError(
                "cannot repair: the shares do not decode; " + self.explain(arrays)
            )
        sample = next(iter(arrays.values()))
        rows, d = sample.shape[0] // self.subblocks, sample.shape[1]
        context = HierarchicalContext(
            m=self.blocks * rows,
            c=d,
            rows=rows,
            is_vector=False,
            output="real" if self._p is None else "residue",
        )
        decoder = HierarchicalDecoder(self, context)
        for w, share in arrays.items():
            decoder.add(Piece(worker=w, start=0, stop=share.shape[0], value=share))
        sources = decoder.decode().reshape(self.blocks, rows * d)
        coded = self._apply_levels(sources).astype(sample.dtype, copy=False)
        return {w: coded[w].reshape(-1, d) for w in targets}

    def _context(self, encoded: object) -> HierarchicalContext:
        if not isinstance(encoded, EncodedOperands) or not isinstance(
            encoded.context, HierarchicalContext
        ):
            raise TypeError(
                "`encoded` must be the EncodedOperands returned by this code's "
                f"encode_operands, got {type(encoded).__name__}."
            )
        return encoded.context

    def decoder(self, encoded: EncodedOperands) -> HierarchicalDecoder:
        """Return a fresh incremental decoder for `encoded`.

        Parameters
        ----------
        encoded : EncodedOperands
            What :meth:`encode_operands` returned.

        Returns
        -------
        HierarchicalDecoder
        """
        return HierarchicalDecoder(self, self._context(encoded))

    # -- conditioning ------------------------------------------------------------------
    def worst_condition_number(self) -> HierarchicalCondition:
        """Certified bound on ``cond_2`` of every decode (real codes).

        Returns
        -------
        HierarchicalCondition
            ``value = prod_l kappa_l``, ``certified`` and the per-level factors.

        Raises
        ------
        ValueError
            For a code over GF(p) (exact: conditioning does not apply).

        Examples
        --------
        >>> bound = HierarchicalCode(256, [(16, 14), (16, 14)]).worst_condition_number()
        >>> bound.certified, round(bound.value, 1), [round(x, 2) for x in bound.levels]
        (True, 76.8, [8.76, 8.76])
        """
        if self._p is not None:
            raise ValueError(
                "`worst_condition_number` is defined for real codes (field=None), "
                f"got a code over GF({self._p})."
            )
        parts = [_level_bound(size, k, self.systematic) for size, k in self.levels]
        values = tuple(value for value, _ in parts)
        return HierarchicalCondition(
            math.prod(values), all(exact for _, exact in parts), values
        )

    def _factor(self, depth: int, children: tuple[int, ...]) -> Any:
        """Invert ``G_depth[children]`` once (reals or GF(p)).

        Over the reals the inverse is applied in one product: LAPACK's solve
        would first copy the wide right side (every row of the results) to
        column order, 3-5x slower; the forward error is the solve's order,
        cond(G) eps (Higham, 14.1).
        """
        key = (depth, children)
        factor = self._factors.get(key)
        if factor is None:
            level = self._levels[depth]
            M = level.G[level.rows(children)]
            factor = (
                np.linalg.inv(M) if self._p is None else fields.inverse_mod(M, self._p)
            )
            self._factors[key] = factor
        return factor

    def _extremes(self, depth: int, children: tuple[int, ...]) -> tuple[float, float]:
        """``(sigma_max, sigma_min)`` of ``G_depth[children]`` (reals), once."""
        key = (depth, children)
        if key not in self._sigmas:
            level = self._levels[depth]
            sigma = np.linalg.svd(level.G[level.rows(children)], compute_uv=False)
            self._sigmas[key] = float(sigma[0]), float(sigma[-1])
        return self._sigmas[key]

    def _solve(self, depth: int, children: tuple[int, ...], rhs: np.ndarray):
        factor = self._factor(depth, children)
        if self._p is None:
            return apply_decoding(factor, rhs)
        return fields.multiply_mod(factor, rhs, p=self._p)

    def __repr__(self) -> str:
        return (
            f"HierarchicalCode(n={self.n}, levels={self.levels}, field={self._p}, "
            f"systematic={self.systematic}, decoding={self.decoding!r})"
        )


class HierarchicalDecoder(Decoder):
    """Incremental decoder of a :class:`HierarchicalCode` (pure, no I/O).

    Pieces may be row ranges (batches) of a worker's result; a worker counts
    once all its rows have arrived. :meth:`decode` decodes, deepest level
    first, only the groups the decode uses (the first ``k_l`` decoded members
    of each, in index order), batching the groups that share an erasure
    pattern into one solve.
    """

    def __init__(self, code: HierarchicalCode, context: HierarchicalContext):
        self._code = code
        self._context = context
        self._total = code.subblocks * context.rows
        self._values: dict[int, np.ndarray] = {}
        self._seen: dict[int, np.ndarray] = {}  # rows received of partial results
        self._done = np.zeros(code.n, dtype=bool)
        self._decodable = False
        # decoded members of every node, per depth (0: the root), kept as results
        # arrive; a node's span is the number of workers under it
        self._spans = [math.prod(code._sizes[d:]) for d in range(len(code.levels))]
        self._members = [np.zeros(code.n // span, np.int64) for span in self._spans]
        self._groups: dict[int, DecodedGroup] = {}  # decoded by their leaders

    def add(self, piece: Piece) -> None:
        """Record one piece (validated: worker, row range, shape, dtype).

        Parameters
        ----------
        piece : Piece
            ``(left_worker @ right_worker)[start:stop]``.

        Raises
        ------
        NonFiniteResultError
            If a real piece holds NaN or inf.
        """
        if not isinstance(piece, Piece):
            raise TypeError(f"`piece` must be a Piece, got {type(piece).__name__}.")
        code = self._code
        worker = _bounded(piece.worker, "piece.worker", 0, code.n - 1)
        start = _bounded(piece.start, "piece.start", 0, self._total)
        stop = _bounded(piece.stop, "piece.stop", start, self._total)
        if self._decodable or stop == start:
            return
        seen = self._seen.get(worker)
        if self._done[worker] or (seen is not None and seen[start:stop].any()):
            raise ValueError(
                f"`piece` repeats rows of worker {worker} that were already added "
                f"(rows {start}..{stop}); add each row of a result once."
            )
        value = self._check_value(piece.value, stop - start, worker)
        dtype = np.float64 if code.p is None else np.int64
        if seen is None and stop - start == self._total:  # a whole result
            self._values[worker] = np.array(value, dtype=dtype)  # decoded in float64
            self._complete(worker)
            return
        if seen is None:
            seen = self._seen[worker] = np.zeros(self._total, dtype=bool)
            self._values[worker] = np.empty((self._total, self._context.c), dtype)
        self._values[worker][start:stop] = value
        seen[start:stop] = True
        if seen.all():
            del self._seen[worker]
            self._complete(worker)

    def _complete(self, worker: int) -> None:
        """Count `worker`'s whole result up the levels while groups become decoded."""
        self._done[worker] = True
        if self._code.decoding == "product":
            self._decodable = self._code._decodable(self._done)
            return
        for depth in range(len(self._spans) - 1, -1, -1):
            node = worker // self._spans[depth]
            self._members[depth][node] += 1
            if self._members[depth][node] != self._code.levels[depth][1]:
                return  # this node was decoded already, or is not yet
        self._decodable = True

    def _check_value(self, value: Any, count: int, worker: int) -> np.ndarray:
        p, width = self._code.p, self._context.c
        array = np.asarray(value)  # a galois FieldArray too: a plain ndarray
        if array.shape not in ((count, width),) + (((count,),) if width == 1 else ()):
            raise ValueError(
                f"`piece.value` must have shape ({count}, {width}), got {array.shape}."
            )
        if array.dtype == np.bool_ or array.dtype.kind not in "iuf":
            raise TypeError(f"`piece.value` must be numeric, got dtype {array.dtype}.")
        if p is None:
            if not np.all(np.isfinite(array)):
                raise NonFiniteResultError(
                    f"worker {worker} returned a result with non-finite entries "
                    "(NaN or inf); refusing to decode a wrong product.",
                    worker=worker,
                )
        elif array.dtype.kind == "f":
            raise TypeError(
                "`piece.value` must hold integer residues over GF(p), got dtype "
                f"{array.dtype}."
            )
        else:
            array = np.mod(np.asarray(array, dtype=np.int64), p)
        return array.reshape(count, width)

    @property
    def is_decodable(self) -> bool:
        """Whether the whole results so far satisfy every group rule."""
        return self._decodable

    @property
    def progress(self) -> tuple[int, int]:
        """``(usable, needed)``: results the decode could use now, of ``prod k_l``."""
        code = self._code
        usable = self._done.reshape(code._sizes).astype(np.int64)
        for _, k in reversed(code.levels):
            usable = -np.sort(-usable, axis=-1)[..., :k].sum(axis=-1)
        return int(usable), code.min_results

    def _plan(
        self, done: np.ndarray | None = None, root: tuple[int, ...] = ()
    ) -> list[dict[tuple[int, ...], tuple[int, ...]]]:
        """Per depth below `root` (outermost first): node -> the members it uses."""
        code = self._code
        done = self._done if done is None else done
        counts = self._code._counts(done)[::-1]  # outermost first
        plan: list[dict[tuple[int, ...], tuple[int, ...]]] = []
        nodes: list[tuple[int, ...]] = [root]
        for depth in range(len(root), len(code.levels)):
            k = code.levels[depth][1]
            decoded = (
                counts[depth + 1] >= code.levels[depth + 1][1]
                if depth + 1 < len(code.levels)
                else done.reshape(code._sizes)
            )
            chosen = {}
            for node in nodes:
                members = np.flatnonzero(decoded[node])[:k]
                chosen[node] = tuple(members.tolist())
            plan.append(chosen)
            nodes = [(*node, i) for node, members in chosen.items() for i in members]
        return plan

    @property
    def condition_number(self) -> float:
        """Bound on ``cond_2`` of the composite system a decode solves now.

        ``prod_l max_S sigma_max(G_l[S]) / min_S sigma_min(G_l[S])`` over the
        patterns S the decode uses at each level, at most the certified
        :meth:`HierarchicalCode.worst_condition_number` (NaN over GF(p) or
        before decodable).
        """
        if not self._decodable or self._code.p is not None:
            return math.nan
        if not self._groups:
            return _bound(self._plan_extremes(self._plan()))
        chosen = self._chosen_groups()
        per_group = [
            self._groups[g].extremes if g in self._groups else self._group_extremes(g)
            for g in chosen
        ]
        outer = self._plan_extremes([{(): chosen}])
        return _bound(
            outer + [_widest(depth) for depth in zip(*per_group, strict=True)]
        )

    def _plan_extremes(
        self, plan: list[dict[tuple[int, ...], tuple[int, ...]]], first: int = 0
    ) -> list[tuple[float, float]]:
        """Per depth of `plan` (from `first`): its systems' extreme singular values."""
        return [
            _widest([self._code._extremes(depth, s) for s in set(chosen.values())])
            for depth, chosen in enumerate(plan, start=first)
        ]

    @property
    def units_used(self) -> int:
        """Worker results a decode uses (0 before decodable)."""
        return self._code.min_results if self._decodable else 0

    def decode(self) -> Any:
        """Return the product; raise `DecodingError` naming the pattern if short.

        Returns
        -------
        array
            As :meth:`coded.codes.MDSCode.decode`.
        """
        code, context = self._code, self._context
        if not self._decodable:
            raise DecodingError(
                "the results do not decode (each group needs k_l decoded members): "
                + code.explain(np.flatnonzero(self._done))
            )
        R = context.rows * context.c
        with one_blas_thread():
            if self._groups:
                chosen = self._chosen_groups()
                groups = {(g,): self._group_value(g, R) for g in chosen}
                values = self._decode_depth(0, {(): chosen}, groups)
            else:
                values = self._decode_levels(self._leaves(self._done, R))
        sources = values[()].reshape(code.blocks * context.rows, context.c)
        product = sources[: context.m]
        if context.is_vector:
            product = product[:, 0]
        return fields.lift(np.ascontiguousarray(product), context.output, code.p)

    def _leaves(self, done: np.ndarray, R: int) -> dict[int, np.ndarray]:
        """Return the whole results of the workers `done`, as ``(E, R)`` blocks."""
        return {w: self._values[w].reshape(-1, R) for w in np.flatnonzero(done)}

    def _decode_levels(
        self, leaves: dict[int, np.ndarray], root: tuple[int, ...] = ()
    ) -> dict[tuple, np.ndarray]:
        """Decode the levels below `root` from the leaves up: ``{root: value}``."""
        code, done = self._code, self._done
        if code.decoding == "product":
            done, leaves = self._fill(leaves)
        plan = self._plan(done, root)
        workers = np.asarray(sorted(leaves), dtype=np.int64)
        digits = np.stack(np.unravel_index(workers, code._sizes), axis=1).tolist()
        values = {  # leaf digits -> (E, R) block values, E = prod ell_l
            tuple(d): leaves[w] for d, w in zip(digits, workers.tolist(), strict=True)
        }
        for depth in range(len(code.levels) - 1, len(root) - 1, -1):
            values = self._decode_depth(depth, plan[depth - len(root)], values)
        return values

    # -- group-local decoding (a leader per outer group) -------------------------------
    def _group_workers(self, group: int) -> np.ndarray:
        """Mask of group `group`'s workers (depth 1)."""
        span = self._spans[1]
        mask = np.zeros(self._code.n, dtype=bool)
        mask[group * span : (group + 1) * span] = True
        return mask

    def _check_group(self, group: object) -> int:
        code = self._code
        if len(code.levels) < 2 or code.decoding == "product":
            raise ValueError(
                "group-local decoding needs a code of two levels or more decoded "
                f"group by group (decoding='groups'), got {code!r}."
            )
        return _bounded(group, "group", 0, code.levels[0][0] - 1)

    def group_is_decodable(self, group: int) -> bool:
        """Whether outer group `group` decodes from the results added here.

        Parameters
        ----------
        group : int
            ``0 <= group < n_0``.

        Returns
        -------
        bool
        """
        group = self._check_group(group)
        return group in self._groups or bool(
            self._members[1][group] >= self._code.levels[1][1]
        )

    def decode_group(self, group: int) -> DecodedGroup:
        """Decode outer group `group` alone, as its leader does (levels ``1 ...``).

        Parameters
        ----------
        group : int
            ``0 <= group < n_0``, decodable from the results added here.

        Returns
        -------
        DecodedGroup
            What :meth:`add_group` of the decoder that decodes the outer code
            takes.

        Raises
        ------
        DecodingError
            If the group's results do not decode yet (the pattern is named).

        Examples
        --------
        >>> import numpy as np
        >>> from coded.codes import HierarchicalCode, Piece
        >>> code = HierarchicalCode(6, [(2, 1), (3, 2)])
        >>> A, x = np.arange(8.0).reshape(4, 2), np.array([1.0, 2.0])
        >>> enc = code.encode_operands(A, x)
        >>> leader = code.decoder(enc)  # group 1's leader: workers 3, 4, 5
        >>> for w in (3, 5):
        ...     leader.add(Piece(worker=w, start=0, stop=2, value=enc.lefts[w] @ x))
        >>> decoded = leader.decode_group(1)
        >>> decoded.used
        (3, 5)
        >>> client = code.decoder(enc)
        >>> client.add_group(decoded)
        >>> np.allclose(client.decode(), A @ x)
        True
        """
        group = self._check_group(group)
        if not self.group_is_decodable(group):
            members = np.flatnonzero(self._done & self._group_workers(group))
            raise DecodingError(
                f"group {group} does not decode from workers {_brief(members.tolist())}"
                ": " + self._code.explain(members)
            )
        if group in self._groups:
            return self._groups[group]
        context = self._context
        R = context.rows * context.c
        plan = self._plan(root=(group,))
        with one_blas_thread():
            value = self._group_value(group, R)
        leaves_used = [(*node, i) for node, chosen in plan[-1].items() for i in chosen]
        used = np.ravel_multi_index(np.array(leaves_used).T, self._code._sizes)
        extremes = () if self._code.p is not None else self._plan_extremes(plan, 1)
        return DecodedGroup(group, value, tuple(used.tolist()), tuple(extremes))

    def add_group(self, decoded: DecodedGroup) -> None:
        """Record a group decoded by its leader (:meth:`decode_group` there).

        Parameters
        ----------
        decoded : DecodedGroup

        Raises
        ------
        ValueError
            If the value's shape is not the group's, or the group was added.
        NonFiniteResultError
            If a real value holds NaN or inf.
        """
        if not isinstance(decoded, DecodedGroup):
            raise TypeError(
                f"`decoded` must be a DecodedGroup, got {type(decoded).__name__}."
            )
        group = self._check_group(decoded.group)
        if self.group_is_decodable(group):
            raise ValueError(f"group {group} was already decoded; add it once.")
        code, context = self._code, self._context
        shape = (
            code._levels[0].ell,
            math.prod(level.K for level in code._levels[1:]) * context.rows * context.c,
        )
        value = np.asarray(decoded.value)
        if value.shape != shape:
            raise ValueError(
                f"`decoded.value` of group {group} must have shape {shape}, got "
                f"{value.shape}."
            )
        if code.p is None and not np.all(np.isfinite(value)):
            raise NonFiniteResultError(
                f"group {group}'s decoded value has non-finite entries (NaN or "
                "inf); refusing to decode a wrong product.",
                worker=decoded.used[0] if decoded.used else group,
            )
        self._groups[group] = decoded
        self._members[0][0] += 1
        self._decodable = bool(self._members[0][0] >= code.levels[0][1])

    def _chosen_groups(self) -> tuple[int, ...]:
        """Return the first ``k_0`` decoded groups, in index order (the root's)."""
        decoded = [
            g for g in range(self._code.levels[0][0]) if self.group_is_decodable(g)
        ]
        return tuple(decoded[: self._code.levels[0][1]])

    def _group_value(self, group: int, R: int) -> np.ndarray:
        """Return group `group`'s node value: its leader's, or decoded here."""
        if group in self._groups:
            return np.asarray(self._groups[group].value)
        leaves = self._leaves(self._done & self._group_workers(group), R)
        return self._decode_levels(leaves, root=(group,))[(group,)]

    def _group_extremes(self, group: int) -> tuple[tuple[float, float], ...]:
        return tuple(self._plan_extremes(self._plan(root=(group,)), 1))

    def _fill(
        self, leaves: dict[int, np.ndarray]
    ) -> tuple[np.ndarray, dict[int, np.ndarray]]:
        """Product decoding: fill the grid's cells by row and column decodes.

        A cell's value is ``(ell_0, ell_1, R)``: rows decode along the inner
        code (level 1) for every outer sub-block, columns along the outer code
        (level 0) for every inner sub-block.
        """
        code, p = self._code, self._code.p
        (n0, k0), (n1, k1) = code.levels
        outer, inner = code._levels
        cells = {w: v.reshape(outer.ell, inner.ell, -1) for w, v in leaves.items()}
        known = self._done.reshape(n0, n1).copy()
        changed = True
        while changed:
            changed = False
            for g in range(n0):
                have = np.flatnonzero(known[g])
                if k1 <= have.size < n1:
                    S = tuple(have[:k1].tolist())
                    rhs = np.concatenate(
                        [cells[g * n1 + i].transpose(1, 0, 2) for i in S]
                    ).reshape(k1 * inner.ell, -1)
                    Z = code._solve(1, S, rhs)  # (K_1, ell_0 R)
                    for i in np.flatnonzero(~known[g]).tolist():
                        cell = fields.matmul(inner.G[inner.rows((i,))], Z, p)
                        cells[g * n1 + i] = cell.reshape(
                            inner.ell, outer.ell, -1
                        ).transpose(1, 0, 2)
                    known[g], changed = True, True
            for i in range(n1):
                have = np.flatnonzero(known[:, i])
                if k0 <= have.size < n0:
                    T = tuple(have[:k0].tolist())
                    rhs = np.concatenate([cells[g * n1 + i] for g in T])
                    W = code._solve(0, T, rhs.reshape(k0 * outer.ell, -1))
                    for g in np.flatnonzero(~known[:, i]).tolist():
                        cell = fields.matmul(outer.G[outer.rows((g,))], W, p)
                        cells[g * n1 + i] = cell.reshape(outer.ell, inner.ell, -1)
                    known[:, i], changed = True, True
        E = outer.ell * inner.ell
        return known.ravel(), {w: v.reshape(E, -1) for w, v in cells.items()}

    def _decode_depth(
        self,
        depth: int,
        chosen: dict[tuple[int, ...], tuple[int, ...]],
        children: dict[tuple[int, ...], np.ndarray],
    ) -> dict[tuple[int, ...], np.ndarray]:
        """Decode every node of `chosen` from its chosen children's values.

        A child's value is ``(E_child, K_below * R)`` with ``E_child`` its outer
        sub-block indices (``prod_{j <= depth} ell_j``); the node's value is
        ``(E_child / ell, K_depth * K_below * R)``.
        """
        code = self._code
        ell = code._levels[depth].ell
        by_pattern: dict[tuple[int, ...], list[tuple[int, ...]]] = {}
        for node, members in chosen.items():
            by_pattern.setdefault(members, []).append(node)
        out = {}
        for members, nodes in by_pattern.items():
            blocks = []
            for node in nodes:
                stacked = np.stack([children[(*node, i)] for i in members])
                E = stacked.shape[1] // ell
                # (k, E * ell, cols) -> rows (member, a) x columns (E, cols)
                part = stacked.reshape(len(members), E, ell, -1).transpose(0, 2, 1, 3)
                blocks.append(part.reshape(len(members) * ell, -1))
            solved = code._solve(depth, members, np.concatenate(blocks, axis=1))
            for node, part in zip(
                nodes, np.split(solved, len(nodes), axis=1), strict=True
            ):
                K = part.shape[0]
                out[node] = part.reshape(K, E, -1).transpose(1, 0, 2).reshape(E, -1)
        return out


def _widest(extremes: Iterable[tuple[float, float]]) -> tuple[float, float]:
    """Return the largest ``sigma_max`` and smallest ``sigma_min`` of systems."""
    tops, bottoms = zip(*extremes, strict=True)
    return max(tops), min(bottoms)


def _bound(extremes: Iterable[tuple[float, float]]) -> float:
    """``prod_l sigma_max / sigma_min`` over the depths' extremes."""
    bound = 1.0
    for top, bottom in extremes:
        bound *= top / bottom if bottom > 0 else math.inf
    return bound
