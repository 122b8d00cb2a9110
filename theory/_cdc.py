r"""Coded distributed computing (MapReduce) loads (docs/theory/mapreduce.md).

Closed forms of Li et al. (homogeneous computation load ``r``, general ``s``), their
lower convex envelope for non-integer ``r``, and Kiamari et al.'s ``K = 3``
heterogeneous optimum as a linear program. Loads are exact `fractions.Fraction`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from theory.validation import check_int

__all__ = [
    "K3Placement",
    "load_coded",
    "load_converse",
    "load_envelope",
    "load_hypercube",
    "load_optimal",
    "load_uncoded",
    "solve_k3_placement",
]


def _check_load_r(r: object, K: int) -> Fraction:
    """Return `r` as an exact Fraction in ``[1, K]``."""
    if isinstance(r, bool) or not isinstance(r, numbers.Real):
        raise TypeError(f"`r` must be a real number, got {type(r).__name__}.")
    value = Fraction(r) if isinstance(r, numbers.Rational) else Fraction(float(r))
    if not 1 <= value <= K:
        raise ValueError(f"`r` must satisfy 1 <= r <= K, got r={r}, K={K}.")
    return value


def load_coded(r: numbers.Real, K: int) -> Fraction:
    r"""Communication load of Li et al.'s coded shuffle at computation load `r`.

    Parameters
    ----------
    r : int or Fraction
        Computation load (average number of nodes mapping each file),
        ``1 <= r <= K``.
    K : int
        Number of nodes, ``K >= 1``.

    Returns
    -------
    Fraction
        :math:`L_\mathrm{coded}(r)`, bits shuffled over :math:`QNT`.

    Notes
    -----
    .. math:: L_\mathrm{coded}(r) = \frac{1}{r}\left(1 - \frac{r}{K}\right)

    Optimal for integer `r` [1]_; for non-integer `r` the optimum is
    :func:`load_envelope`.

    References
    ----------
    .. [1] S. Li, M. A. Maddah-Ali, Q. Yu, A. S. Avestimehr, "A Fundamental
       Tradeoff Between Computation and Communication in Distributed Computing",
       IEEE Trans. Inf. Theory 64(1), 2018.

    Examples
    --------
    >>> load_coded(2, 4)
    Fraction(1, 4)
    """
    K = check_int(K, "K", min_value=1)
    r = _check_load_r(r, K)
    return (1 - r / K) / r


def load_uncoded(r: numbers.Real, K: int) -> Fraction:
    r"""Communication load of an uncoded shuffle at computation load `r`.

    Parameters
    ----------
    r : int or Fraction
        Computation load, ``1 <= r <= K``.
    K : int
        Number of nodes, ``K >= 1``.

    Returns
    -------
    Fraction
        :math:`L_\mathrm{uncoded}(r) = 1 - r/K`: every node fetches, by unicast,
        the values of the files it did not map.

    Notes
    -----
    .. math:: L_\mathrm{uncoded}(r) = 1 - \frac{r}{K}

    References
    ----------
    .. [1] S. Li et al., IEEE Trans. Inf. Theory 64(1), 2018 (see
       :func:`load_coded`).

    Examples
    --------
    >>> load_uncoded(2, 4)
    Fraction(1, 2)
    """
    K = check_int(K, "K", min_value=1)
    r = _check_load_r(r, K)
    return 1 - r / K


def load_optimal(r: int, s: int, K: int) -> Fraction:
    r"""Optimal load :math:`L^*(r, s)` when each reduce function runs at `s` nodes.

    Parameters
    ----------
    r : int
        Computation load, ``1 <= r <= K``.
    s : int
        Replication of each reduce function, ``1 <= s <= K``.
    K : int
        Number of nodes, ``K >= 1``.

    Returns
    -------
    Fraction
        :math:`L^*(r, s)`.

    Notes
    -----
    .. math::

        L^*(r, s) = \sum_{l=\max(r+1, s)}^{\min(r+s, K)}
            \frac{\binom{K-r}{K-l}\binom{r}{l-s}}{\binom{K}{s}}
            \frac{l - r}{l - 1}

    It reduces to :func:`load_coded` for ``s = 1``, and ``L*(1, K) = 1``.

    References
    ----------
    .. [1] S. Li et al., IEEE Trans. Inf. Theory 64(1), 2018, Theorem 2.

    Examples
    --------
    >>> load_optimal(2, 1, 4), load_optimal(1, 4, 4)
    (Fraction(1, 4), Fraction(1, 1))
    """
    K = check_int(K, "K", min_value=1)
    r = check_int(r, "r", min_value=1)
    s = check_int(s, "s", min_value=1)
    if r > K:
        raise ValueError(f"`r` must satisfy 1 <= r <= K, got r={r}, K={K}.")
    if s > K:
        raise ValueError(f"`s` must satisfy 1 <= s <= K, got s={s}, K={K}.")
    total = Fraction(0)
    for l in range(max(r + 1, s), min(r + s, K) + 1):  # noqa: E741 (paper notation)
        count = math.comb(K - r, K - l) * math.comb(r, l - s)
        total += Fraction(count, math.comb(K, s)) * Fraction(l - r, l - 1)
    return total


def load_envelope(r: numbers.Real, K: int) -> Fraction:
    r"""Lower convex envelope of :func:`load_coded` for non-integer `r`.

    Parameters
    ----------
    r : int, Fraction or float
        Computation load, ``1 <= r <= K`` (floats are converted exactly).
    K : int
        Number of nodes, ``K >= 1``.

    Returns
    -------
    Fraction
        The envelope at `r`: linear interpolation of :math:`L_\mathrm{coded}`
        between :math:`\lfloor r \rfloor` and :math:`\lceil r \rceil` (memory
        sharing between the two integer schemes).

    Notes
    -----
    With :math:`r = \lfloor r \rfloor + \theta`,

    .. math:: L(r) = (1 - \theta) L_\mathrm{coded}(\lfloor r \rfloor)
        + \theta L_\mathrm{coded}(\lceil r \rceil).

    References
    ----------
    .. [1] S. Li et al., IEEE Trans. Inf. Theory 64(1), 2018.

    Examples
    --------
    >>> load_envelope(Fraction(3, 2), 3)
    Fraction(5, 12)
    """
    K = check_int(K, "K", min_value=1)
    r = _check_load_r(r, K)
    low = math.floor(r)
    theta = r - low
    if theta == 0:
        return load_coded(low, K)
    return (1 - theta) * load_coded(low, K) + theta * load_coded(low + 1, K)


def load_hypercube(class_sizes: tuple[int, ...]) -> Fraction:
    r"""Load of Woolsey et al.'s hypercube (hyper-rectangle) shuffle.

    Parameters
    ----------
    class_sizes : sequence of int
        Node classes ``k_1, ..., k_r``, each ``>= 1``, with ``r >= 2``;
        ``K = sum(k_d)``, ``N = prod(k_d)`` files, every file at one node per class.

    Returns
    -------
    Fraction
        The least of the design's multicast (groups of one node per class) and
        Li's grouping (pairs of nodes of one class), over ``Q N T`` with
        ``Q = K``.

    Notes
    -----
    For a grid point ``p``, the ``r`` nodes at the coordinates of ``p`` form a
    group in which the class-``d`` member lacks the ``k_d - 1`` files that
    differ from ``p`` in coordinate ``d`` only, all stored by the other
    ``r - 1`` members. Li's multicast with unequal demands sends
    :math:`\max(\max_d n_d, \sum_d n_d / (r - 1))` values per point
    ([derived] for unequal classes):

    .. math:: L_\mathrm{design} = \frac{1}{K}
        \max\Big(\max_d (k_d - 1), \frac{K - r}{r - 1}\Big),

    which is :math:`\frac{1}{r-1}(1 - \frac{r}{K})` for equal classes [1]_.
    Grouping by ``storers(f) | {k}`` instead pairs the two nodes of one class
    that lack each other's files, halving the uncoded load:
    :math:`L_\mathrm{pairs} = \frac{K - r}{2K}`. The returned load is
    :math:`\min(L_\mathrm{design}, L_\mathrm{pairs})`; the pairs win only at
    ``r = 2`` (or with one dominant class).

    References
    ----------
    .. [1] N. Woolsey, R.-R. Chen, M. Ji, "A New Combinatorial Design of Coded
       Distributed Computing", IEEE ISIT, 2018.

    Examples
    --------
    >>> load_hypercube((2, 2, 2, 2)), load_hypercube((2, 2)), load_hypercube((2, 2, 5))
    (Fraction(1, 6), Fraction(1, 4), Fraction(1, 3))
    """
    sizes = tuple(
        check_int(k, f"class_sizes[{d}]", min_value=1)
        for d, k in enumerate(class_sizes)
    )
    if len(sizes) < 2:
        raise ValueError(
            f"`class_sizes` must have at least 2 classes, got {len(sizes)}."
        )
    K, r = sum(sizes), len(sizes)
    design = max(Fraction(max(sizes) - 1), Fraction(K - r, r - 1)) / K
    return min(design, Fraction(K - r, 2 * K))


def load_converse(files_at: dict[int, int], K: int) -> Fraction:
    r"""Li et al.'s lower bound on the load of any shuffle of a given placement.

    Parameters
    ----------
    files_at : mapping int -> int
        ``files_at[j]`` files are stored (mapped) at exactly ``j`` nodes,
        ``1 <= j <= K``.
    K : int
        Number of nodes.

    Returns
    -------
    Fraction
        :math:`\sum_j \frac{a_j}{N} \frac{K - j}{K j}`, ``N = sum(a_j)``.

    Notes
    -----
    The converse of [1]_ (its Lemma 1) holds for every placement; with every
    file at ``r`` nodes it is :func:`load_coded`.

    References
    ----------
    .. [1] S. Li et al., IEEE Trans. Inf. Theory 64(1), 2018.

    Examples
    --------
    >>> load_converse({2: 6}, 4), load_converse({1: 1, 3: 1}, 3)
    (Fraction(1, 4), Fraction(1, 3))
    """
    K = check_int(K, "K", min_value=1)
    counts = {
        check_int(j, "replication", min_value=1, max_value=K): check_int(
            a, f"files_at[{j}]", min_value=0
        )
        for j, a in files_at.items()
    }
    N = sum(counts.values())
    if N == 0:
        raise ValueError("`files_at` must count at least one file, got 0.")
    return sum(
        (Fraction(a * (K - j), N * K * j) for j, a in counts.items()), Fraction(0)
    )


_PAIRS = ((0, 1), (0, 2), (1, 2))


@dataclass(frozen=True, slots=True, kw_only=True)
class K3Placement:
    r"""An optimal ``K = 3`` heterogeneous placement and its shuffle load.

    Parameters
    ----------
    M : tuple of int
        Storage of each node (files), as given.
    N : int
        Number of files.
    a : tuple of int
        ``a[k]`` files stored only at node ``k``.
    b : tuple of int
        Files stored at exactly the pairs ``{0, 1}``, ``{0, 2}``, ``{1, 2}``.
    c : int
        Files stored at all three nodes.
    load_values : Fraction
        Shuffle load in intermediate values (``T`` bits each).
    load : Fraction
        ``load_values / (Q N)`` with ``Q = 3``.
    lp_load_values : Fraction
        Optimum of the LP relaxation (continuous placement), in values.
    """

    M: tuple[int, int, int]
    N: int
    a: tuple[int, int, int]
    b: tuple[int, int, int]
    c: int
    load_values: Fraction
    load: Fraction
    lp_load_values: Fraction

    def __post_init__(self) -> None:
        if sum(self.a) + sum(self.b) + self.c != self.N:
            raise ValueError(
                f"placement must hold every file once, got {sum(self.a)} + "
                f"{sum(self.b)} + {self.c} != N={self.N}."
            )
        for k, used in enumerate(_storage_used(self.a, self.b, self.c)):
            if used > self.M[k]:
                raise ValueError(
                    f"node {k} stores {used} files, above its storage M[{k}]="
                    f"{self.M[k]}."
                )

    @property
    def storage_used(self) -> tuple[int, int, int]:
        """Files stored at each node."""
        return _storage_used(self.a, self.b, self.c)


def _storage_used(a, b, c) -> tuple[int, int, int]:
    return tuple(
        a[k] + sum(b[p] for p, pair in enumerate(_PAIRS) if k in pair) + c
        for k in range(3)
    )


def _k3_load_values(a, b) -> Fraction:
    """Load (in values) of the K = 3 scheme: ``2 sum(a) + max(sum(b) / 2, max b)``."""
    return 2 * sum(a) + max(Fraction(sum(b), 2), Fraction(max(b)))


def _k3_program(M: tuple[int, ...], N: int):
    """Objective, inequality and equality data of the K = 3 program.

    Variables ``x = (a_0, a_1, a_2, b_01, b_02, b_12, c, t)``.
    """
    cost = np.array([2, 2, 2, 0, 0, 0, 0, 1], dtype=float)
    rows, rhs = [], []
    rows.append([0, 0, 0, 0.5, 0.5, 0.5, 0, -1])
    rhs.append(0)
    for p in range(3):
        row = [0.0] * 8
        row[3 + p], row[7] = 1, -1
        rows.append(row)
        rhs.append(0)
    for k in range(3):
        row = [0.0] * 8
        row[k] = 1
        for p, pair in enumerate(_PAIRS):
            row[3 + p] = 1 if k in pair else 0
        row[6] = 1
        rows.append(row)
        rhs.append(M[k])
    A_eq = np.array([[1, 1, 1, 1, 1, 1, 1, 0]], dtype=float)
    return cost, np.array(rows), np.array(rhs, dtype=float), A_eq, np.array([N])


def solve_k3_placement(M: tuple[int, int, int], N: int) -> K3Placement:
    r"""Optimal ``K = 3`` placement for heterogeneous storage and its load.

    Parameters
    ----------
    M : sequence of 3 int
        Files each node can store, ``M_k >= 0`` and ``sum(min(M_k, N)) >= N``.
    N : int
        Number of files, ``N >= 1``.

    Returns
    -------
    K3Placement
        An integer placement attaining the least load of the scheme family, with
        its load in values and normalised, and the LP relaxation's optimum.

    Raises
    ------
    ValueError
        If `M` does not have three entries, an entry is negative, or the total
        storage cannot hold the `N` files.

    Notes
    -----
    Files only at node ``k`` (``a_k``) cost two unicasts; files at a pair
    (``b_ij``) are XOR-coded; files at all nodes (``c``) cost nothing:

    .. math::

        \min\ 2(a_1 + a_2 + a_3) + t \quad\text{s.t.}\quad
        t \ge \tfrac{1}{2}\textstyle\sum b_{ij},\ t \ge b_{ij},\
        a_k + \textstyle\sum_{ij \ni k} b_{ij} + c \le M_k,\
        \textstyle\sum a + \sum b + c = N.

    The LP relaxation is solved with HiGHS; the placement is the integer optimum
    (``scipy.optimize.milp``), and `load_values` is recounted exactly from it.
    The load is normalised by :math:`QN` with :math:`Q = 3`.

    References
    ----------
    .. [1] M. Kiamari, C. Wang, A. S. Avestimehr, "On Heterogeneous Coded
       Distributed Computing", IEEE GLOBECOM, 2017.

    Examples
    --------
    >>> sol = solve_k3_placement((3, 6, 9), 12)
    >>> sol.load_values, sol.load
    (Fraction(15, 1), Fraction(5, 12))
    """
    from scipy.optimize import Bounds, LinearConstraint, linprog, milp

    N = check_int(N, "N", min_value=1)
    M_in = tuple(M) if not isinstance(M, str) else ()
    if len(M_in) != 3:
        raise ValueError(f"`M` must have 3 entries (K = 3), got {len(M_in)}.")
    M_in = tuple(check_int(m, f"M[{k}]", min_value=0) for k, m in enumerate(M_in))
    capped = tuple(min(m, N) for m in M_in)
    if sum(capped) < N:
        raise ValueError(
            f"storage must hold the N files, got sum(min(M_k, N))={sum(capped)} "
            f"< N={N} for M={M_in}."
        )
    cost, A_ub, b_ub, A_eq, b_eq = _k3_program(capped, N)
    lp = linprog(cost, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, method="highs")
    integrality = np.array([1] * 7 + [0])
    ip = milp(
        cost,
        constraints=[
            LinearConstraint(A_ub, -np.inf, b_ub),
            LinearConstraint(A_eq, b_eq, b_eq),
        ],
        integrality=integrality,
        bounds=Bounds(0, np.inf),
    )
    if lp.status != 0 or ip.status != 0:  # pragma: no cover - feasible by checks
        raise RuntimeError(f"HiGHS failed: {lp.message}; {ip.message}")
    x = [round(v) for v in ip.x[:7]]
    a, b, c = tuple(x[:3]), tuple(x[3:6]), x[6]
    load_values = _k3_load_values(a, b)
    return K3Placement(
        M=M_in,
        N=N,
        a=a,
        b=b,
        c=c,
        load_values=load_values,
        load=load_values / (3 * N),
        lp_load_values=Fraction(lp.fun).limit_denominator(1_000),
    )
