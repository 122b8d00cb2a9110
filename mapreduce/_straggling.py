r"""The shuffle of the unified scheme for straggling servers (coded map tasks).

Li, Maddah-Ali and Avestimehr's scheme for linear map functions: the ``N`` files
are MDS-coded into ``N K / q`` coded files placed by Li's r-subset placement;
once ``q`` nodes have mapped theirs, each needs ``N`` independent coded values
and gets the ones it lacks by Li's multicast among the finishers, most-shared
coded files first (docs/theory/mapreduce_straggling.md).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction

import numpy as np

from mapreduce._placement import Placement, place_li
from mapreduce._plan import ShufflePlan, _plan_coded, verify_plan
from theory import straggling_levels
from theory.validation import check_int

__all__ = ["plan_finishers", "plan_straggling", "straggling_placement"]


def _batch_size(r: int, q: int, K: int) -> int:
    """Coded files per r-subset: whole files at the partial level, whole ``N``.

    A partial level 1 (unicast) need not take the same count from each batch,
    so it asks for no more than whole ``N``.
    """
    need, partial, share = 1 - Fraction(r, q), Fraction(0), Fraction(0)
    levels = straggling_levels(r, q, K) if need > 0 else {}  # r >= q: no shuffle
    for level, available in sorted(levels.items(), reverse=True):
        partial = min(available, need)
        need -= partial
        if need == 0:
            share = partial / available if level > 1 else Fraction(0)
            break
    # the C(q-1, j) C(K-q, r-j) batches of the partial level each give `share`
    return math.lcm(share.denominator, K // math.gcd(K, math.comb(K, r) * q))


def straggling_placement(
    K: int, r: int, q: int, *, files: int = 1
) -> tuple[Placement, int]:
    r"""Li's placement of the unified scheme's ``N K / q`` coded files, and ``N``.

    Parameters
    ----------
    K, r, q : int
        Nodes, copies of each coded file, nodes waited for (``1 <= r, q <= K``).
    files : int
        Data files to hold: ``N`` is the least multiple of the scheme's smallest
        ``N`` that is at least `files` (pad with zero files up to ``N``).

    Returns
    -------
    (Placement, int)
        The placement of the coded files (``C(K, r)`` equal batches, so any
        ``q`` nodes store at least ``N`` distinct ones) and ``N``.

    Examples
    --------
    >>> coded, N = straggling_placement(4, 2, 3, files=20)
    >>> coded.N, N, coded.storage_used
    (36, 27, (18, 18, 18, 18))
    """
    K = check_int(K, "K", min_value=1)
    straggling_levels(r, q, K)  # checks r and q
    files = check_int(files, "files", min_value=1)
    b = _batch_size(r, q, K)
    least = math.comb(K, r) * b * q // K
    coded = place_li(K, r, N=math.comb(K, r) * b * -(-files // least))
    return coded, coded.N * q // K


def encode_files(
    files: list[np.ndarray], K: int, r: int, q: int
) -> tuple[Placement, int, np.ndarray, list[np.ndarray]]:
    r"""Pad `files` to ``N`` and encode them into the scheme's ``N K / q`` coded files.

    Coded file ``c`` is :math:`\sum_f G_{cf} W_f` for the real ``(N K / q, N)`` MDS
    generator ``G`` (seeded; the best-conditioned one ``MDSCode`` has), so any
    ``N`` of them determine the data files.

    Returns
    -------
    (Placement, int, numpy.ndarray, list of numpy.ndarray)
        The placement of the coded files and ``N`` (:func:`straggling_placement`),
        ``G`` and the coded files.

    Examples
    --------
    >>> coded, N, G, coded_files = encode_files([np.ones(2)] * 5, 4, 2, 3)
    >>> G.shape, len(coded_files), np.allclose(coded_files[0], G[0, :5].sum())
    ((12, 9), 12, True)
    """
    from coded.codes.interface import real_generator

    coded, N = straggling_placement(K, r, q, files=len(files))
    generator = real_generator(coded.N, N, systematic=False)
    data = np.stack([*files, *[np.zeros_like(files[0])] * (N - len(files))])
    return coded, N, generator, list(np.tensordot(generator, data, axes=1))


def plan_finishers(
    coded: Placement, N: int, finished: Iterable[int]
) -> tuple[ShufflePlan, tuple[int, ...]]:
    """Plan the unified shuffle among `finished` on the coded placement `coded`.

    Parameters
    ----------
    coded : Placement
        From :func:`straggling_placement`, with its ``N``.
    N : int
        Data files.
    finished : iterable of int
        The ``q`` nodes that finished mapping.

    Returns
    -------
    (ShufflePlan, tuple of int)
        The verified plan over the coded files some finisher holds, and the
        coded file of each of the plan's files.
    """
    F = {int(k) for k in finished}
    q = len(F)
    if not F or not set(range(coded.K)) >= F:
        raise ValueError(f"`finished` must be distinct nodes of range(K), got {F}.")
    kept = tuple(f for f, nodes in enumerate(coded.storers) if nodes & F)
    storers = tuple(coded.storers[f] & F for f in kept)
    r = min(len(nodes) for nodes in coded.storers)
    placement = Placement(
        K=coded.K, storers=storers, name=f"unified(K={coded.K}, r={r}, q={q})"
    )
    demands = _greedy_demands(placement, F, max(0, N - r * N // q))
    packets = _plan_coded(placement, sorted(demands))
    plan = ShufflePlan(
        placement=placement,
        packets=tuple(packets),
        is_coded=True,
        reducers=tuple(sorted(F)),
        demands=frozenset(demands),
    )
    return verify_plan(plan), kept


def plan_straggling(
    K: int, r: int, q: int, *, finished: Iterable[int] | None = None
) -> tuple[ShufflePlan, int]:
    r"""Plan the shuffle of the unified scheme after `q` nodes finished mapping.

    Parameters
    ----------
    K : int
        Nodes.
    r : int
        Nodes storing each coded file, ``1 <= r <= K``.
    q : int
        Nodes waited for, ``1 <= q <= K``.
    finished : iterable of int, optional
        The ``q`` nodes that finished (default: ``0 .. q - 1``).

    Returns
    -------
    (ShufflePlan, int)
        The verified plan over the coded files the finishers hold (reducers: the
        finishers; demands: each lacks ``N (1 - r/q)`` coded values, taken from
        the coded files held by the most other finishers first), and the number
        ``N`` of data files. Its load over ``Q N T`` with ``Q = q`` is
        ``plan.load_values / (q N)``, which equals :func:`theory.load_straggling`.

    Raises
    ------
    ValueError
        If ``r > K``, ``q > K``, or `finished` is not ``q`` distinct nodes.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from theory import load_straggling
    >>> plan, N = plan_straggling(4, 2, 3)
    >>> plan.load_values / (3 * N) == load_straggling(2, 3, 4) == Fraction(2, 9)
    True
    """
    coded, N = straggling_placement(K, r, q)
    F = set(range(q)) if finished is None else {int(k) for k in finished}
    if len(F) != q or not set(range(coded.K)) >= F:
        raise ValueError(f"`finished` must be {q} distinct nodes of range(K), got {F}.")
    return plan_finishers(coded, N, F)[0], N


def _greedy_demands(
    placement: Placement, finished: set[int], need: int
) -> set[tuple[int, int]]:
    """Each finisher takes `need` coded files it lacks, most-shared first.

    Within a level every batch (the same finisher set) gives the same count, so
    Li's multicast groups stay symmetric; at level 1 (unicasts) the first
    batches give one more when the count does not divide evenly.
    """
    demands = set()
    for k in sorted(finished):
        by_level: dict[int, dict[frozenset, list[int]]] = {}
        for f, nodes in enumerate(placement.storers):
            if k not in nodes:
                by_level.setdefault(len(nodes), {}).setdefault(nodes, []).append(f)
        left = need
        for j in sorted(by_level, reverse=True):
            batches = by_level[j]
            total = sum(len(files) for files in batches.values())
            take = min(left, total)
            each, extra = divmod(take, len(batches))
            extra = extra if j == 1 else 0
            for i, files in enumerate(batches.values()):
                demands |= {(k, f) for f in files[: each + (i < extra)]}
            left -= each * len(batches) + extra
            if left == 0:
                break
        if left:
            raise AssertionError(f"node {k} cannot gather {need} coded values")
    return demands
