r"""File placements: which of the K nodes store (and map) each of the N files.

Li et al.'s r-subset placement, the K = 3 heterogeneous optimum
(docs/theory/mapreduce.md), Woolsey et al.'s hypercube / hyper-rectangle design,
and any user-given map.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from theory import solve_k3_placement
from theory.validation import check_int

__all__ = [
    "Placement",
    "place_from_map",
    "place_hypercube",
    "place_k3",
    "place_li",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Placement:
    r"""Which nodes store (and map) each file.

    Parameters
    ----------
    K : int
        Number of nodes, ``K >= 1``.
    storers : tuple of frozenset of int
        ``storers[f]`` is the non-empty set of nodes in ``range(K)`` that store
        file ``f``; ``N = len(storers) >= 1``.
    storage : tuple of int, optional
        Storage caps ``M_k`` (files per node); checked when given.
    name : str
        Short description (which construction built it).
    classes : tuple of tuple of int, optional
        Node classes of a combinatorial design (e.g. the hypercube): disjoint,
        covering ``range(K)``, and every file stored at exactly one node of each
        class. The planner then also tries the design's own multicast groups.

    Raises
    ------
    ValueError
        If a file is placed nowhere or at a node outside ``range(K)``, a node
        stores more files than its cap, or `classes` is not a design of the
        placement.

    Examples
    --------
    >>> p = Placement(K=3, storers=(frozenset({0, 1}), frozenset({2})))
    >>> p.N, p.r, p.storage_used
    (2, Fraction(3, 2), (1, 1, 1))
    """

    K: int
    storers: tuple[frozenset[int], ...]
    storage: tuple[int, ...] | None = None
    name: str = "user"
    classes: tuple[tuple[int, ...], ...] | None = None

    def __post_init__(self) -> None:
        K = check_int(self.K, "K", min_value=1)
        storers = tuple(frozenset(int(k) for k in nodes) for nodes in self.storers)
        if not storers:
            raise ValueError("a placement needs at least one file, got N=0.")
        for f, nodes in enumerate(storers):
            if not nodes:
                raise ValueError(f"file {f} is placed nowhere: storers[{f}] is empty.")
            bad = sorted(k for k in nodes if not 0 <= k < K)
            if bad:
                raise ValueError(
                    f"file {f} is placed at nodes {bad} outside range(K), K={K}."
                )
        object.__setattr__(self, "K", K)
        object.__setattr__(self, "storers", storers)
        if self.storage is not None:
            caps = tuple(self.storage)
            if len(caps) != K:
                raise ValueError(f"`storage` must have K={K} entries, got {len(caps)}.")
            caps = tuple(
                check_int(m, f"storage[{k}]", min_value=0) for k, m in enumerate(caps)
            )
            for k, used in enumerate(self.storage_used):
                if used > caps[k]:
                    raise ValueError(
                        f"node {k} stores {used} files, above its storage "
                        f"M[{k}]={caps[k]}."
                    )
            object.__setattr__(self, "storage", caps)
        if self.classes is not None:
            object.__setattr__(self, "classes", _check_classes(self.classes, self))

    @property
    def tolerance(self) -> int:
        """Nodes whose map outputs the job can do without: ``min_f |storers(f)| - 1``.

        Any ``K - tolerance`` nodes together store every file; some
        ``tolerance + 1`` nodes hold every copy of some file.
        """
        return min(len(nodes) for nodes in self.storers) - 1

    @property
    def N(self) -> int:
        """Number of files."""
        return len(self.storers)

    @property
    def r(self) -> Fraction:
        """Computation load: average number of nodes storing a file."""
        return Fraction(sum(len(nodes) for nodes in self.storers), self.N)

    @property
    def storage_used(self) -> tuple[int, ...]:
        """Files stored at each node."""
        counts = [0] * self.K
        for nodes in self.storers:
            for k in nodes:
                counts[k] += 1
        return tuple(counts)

    def files_of(self, k: int) -> tuple[int, ...]:
        """Files stored at node `k`, in increasing order.

        Parameters
        ----------
        k : int
            Node index in ``range(K)``.

        Returns
        -------
        tuple of int
        """
        k = check_int(k, "k", min_value=0, max_value=self.K - 1)
        return tuple(f for f, nodes in enumerate(self.storers) if k in nodes)


def _check_classes(
    classes: Sequence[Iterable[int]], placement: Placement
) -> tuple[tuple[int, ...], ...]:
    groups = tuple(tuple(sorted(int(k) for k in nodes)) for nodes in classes)
    flat = sorted(k for nodes in groups for k in nodes)
    if flat != list(range(placement.K)) or not all(groups):
        raise ValueError(
            f"`classes` must split range(K), K={placement.K}, into non-empty "
            f"disjoint classes, got {groups}."
        )
    for f, nodes in enumerate(placement.storers):
        counts = [len(nodes.intersection(group)) for group in groups]
        if counts != [1] * len(groups):
            raise ValueError(
                f"file {f} must be stored at one node of each class, got "
                f"{counts} nodes per class."
            )
    return groups


def place_li(K: int, r: int, *, N: int | None = None) -> Placement:
    r"""Li et al.'s placement: one batch of files per r-subset of the K nodes.

    Parameters
    ----------
    K : int
        Number of nodes, ``K >= 1``.
    r : int
        Computation load, ``1 <= r <= K``.
    N : int, optional
        Number of files (default ``C(K, r)``). Files go to the r-subsets in
        lexicographic order, round robin, so the batches are equal exactly when
        ``C(K, r)`` divides `N`.

    Returns
    -------
    Placement
        Every file at exactly `r` nodes.

    Raises
    ------
    ValueError
        If ``r < 1``, ``r > K`` or ``N < 1``.

    Notes
    -----
    With equal batches the coded shuffle of :func:`mapreduce.plan_shuffle` has
    load

    .. math:: L = \frac{1}{r}\left(1 - \frac{r}{K}\right).

    References
    ----------
    .. [1] S. Li, M. A. Maddah-Ali, Q. Yu, A. S. Avestimehr, "A Fundamental
       Tradeoff Between Computation and Communication in Distributed Computing",
       IEEE Trans. Inf. Theory 64(1), 2018.

    Examples
    --------
    >>> p = place_li(3, 2)
    >>> [sorted(s) for s in p.storers]
    [[0, 1], [0, 2], [1, 2]]
    """
    K = check_int(K, "K", min_value=1)
    r = check_int(r, "r", min_value=1)
    if r > K:
        raise ValueError(f"`r` must satisfy 1 <= r <= K, got r={r}, K={K}.")
    subsets = [frozenset(s) for s in itertools.combinations(range(K), r)]
    N = len(subsets) if N is None else check_int(N, "N", min_value=1)
    storers = tuple(subsets[f % len(subsets)] for f in range(N))
    return Placement(K=K, storers=storers, name=f"li(K={K}, r={r})")


def place_k3(M: Sequence[int], N: int) -> Placement:
    r"""Place files optimally on ``K = 3`` nodes of storages ``(M_1, M_2, M_3)``.

    Parameters
    ----------
    M : sequence of 3 int
        Files each node can store, ``sum(min(M_k, N)) >= N``.
    N : int
        Number of files, ``N >= 1``.

    Returns
    -------
    Placement
        ``a_k`` files only at node ``k``, ``b_ij`` at the pair ``{i, j}``, ``c`` at
        all three, as chosen by :func:`theory.solve_k3_placement`; the caps `M`
        are recorded and checked.

    Raises
    ------
    ValueError
        If the storage cannot hold `N` files (see
        :func:`theory.solve_k3_placement`).

    Notes
    -----
    The coded shuffle of this placement sends
    :math:`2\sum_k a_k + \max(\tfrac12\sum b_{ij}, \max b_{ij})` values.

    References
    ----------
    .. [1] M. Kiamari, C. Wang, A. S. Avestimehr, "On Heterogeneous Coded
       Distributed Computing", IEEE GLOBECOM, 2017.

    Examples
    --------
    >>> from mapreduce import plan_shuffle
    >>> plan_shuffle(place_k3((3, 6, 9), 12)).load_values
    Fraction(15, 1)
    """
    solution = solve_k3_placement(M, N)
    groups = [(frozenset({k}), n) for k, n in enumerate(solution.a)]
    pairs = (frozenset({0, 1}), frozenset({0, 2}), frozenset({1, 2}))
    groups += list(zip(pairs, solution.b, strict=True))
    groups.append((frozenset({0, 1, 2}), solution.c))
    storers = tuple(nodes for nodes, count in groups for _ in range(count))
    return Placement(
        K=3, storers=storers, storage=solution.M, name=f"k3(M={solution.M})"
    )


def place_hypercube(class_sizes: Sequence[int]) -> Placement:
    r"""Woolsey et al.'s hypercube (hyper-rectangle) placement.

    Parameters
    ----------
    class_sizes : sequence of int
        Sizes ``k_d >= 1`` of the ``r = len(class_sizes)`` node classes; the
        ``K = sum(k_d)`` nodes are numbered class by class.

    Returns
    -------
    Placement
        The ``N = prod(k_d)`` files are the points of the grid
        ``[k_1] x ... x [k_r]``; the node at position ``q`` of class ``d`` stores
        every file whose ``d``-th coordinate is ``q``. Each file is at exactly
        ``r`` nodes (one per class); a node of class ``d`` stores ``N / k_d``.
        Its `classes` are recorded for the planner.

    Raises
    ------
    ValueError
        If `class_sizes` is empty or has an entry below 1.

    Notes
    -----
    Equal classes (``k_d = K/r``) give the homogeneous hypercube with
    :math:`N = (K/r)^r` files instead of Li's :math:`\binom{K}{r}`. Its coded
    shuffle (:func:`mapreduce.plan_shuffle`) has load
    :math:`\min\big(\frac{1}{r-1}, \frac12\big)\left(1 - \frac{r}{K}\right)`
    (:func:`theory.load_hypercube`): the design's groups of ``r`` nodes for
    ``r >= 3``, pairs of nodes of one class for ``r = 2``.

    References
    ----------
    .. [1] N. Woolsey, R.-R. Chen, M. Ji, "A Combinatorial Design for Cascaded
       Coded Distributed Computing on General Networks" and "A New Combinatorial
       Coded Design for Heterogeneous Distributed Computing", IEEE Trans. Commun.,
       2020/2021.

    Examples
    --------
    >>> p = place_hypercube((2, 2))
    >>> p.K, p.N, p.storage_used
    (4, 4, (2, 2, 2, 2))
    """
    sizes = tuple(
        check_int(k, f"class_sizes[{d}]", min_value=1)
        for d, k in enumerate(class_sizes)
    )
    if not sizes:
        raise ValueError("`class_sizes` must have at least one class, got ().")
    offsets = [sum(sizes[:d]) for d in range(len(sizes))]
    storers = tuple(
        frozenset(offsets[d] + q for d, q in enumerate(point))
        for point in itertools.product(*(range(k) for k in sizes))
    )
    classes = tuple(
        tuple(range(offsets[d], offsets[d] + k)) for d, k in enumerate(sizes)
    )
    return Placement(
        K=sum(sizes), storers=storers, name=f"hypercube{sizes}", classes=classes
    )


def place_from_map(
    storers: Mapping[int, Iterable[int]] | Sequence[Iterable[int]],
    K: int,
    *,
    storage: Sequence[int] | None = None,
) -> Placement:
    """Build a user-given placement from a file -> nodes map.

    Parameters
    ----------
    storers : mapping or sequence
        ``storers[f]`` is an iterable of the nodes that store file ``f``. A mapping
        must have keys exactly ``0 .. N-1``.
    K : int
        Number of nodes, ``K >= 1``.
    storage : sequence of int, optional
        Storage caps ``M_k``, checked.

    Returns
    -------
    Placement

    Raises
    ------
    ValueError
        If a file is placed nowhere, a node is outside ``range(K)``, the mapping's
        keys are not ``0 .. N-1``, or a cap is exceeded.

    Examples
    --------
    >>> place_from_map({0: [0, 1], 1: [2]}, 3).r
    Fraction(3, 2)
    """
    if isinstance(storers, Mapping):
        keys = sorted(storers)
        if keys != list(range(len(keys))):
            raise ValueError(
                f"`storers` keys must be the files 0 .. N-1, got {keys[:10]}."
            )
        storers = [storers[f] for f in keys]
    return Placement(
        K=K,
        storers=tuple(frozenset(nodes) for nodes in storers),
        storage=None if storage is None else tuple(storage),
    )
