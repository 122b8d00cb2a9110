r"""Coded MapReduce with straggling servers: the communication load L(r, q).

The unified scheme of Li, Maddah-Ali and Avestimehr
(docs/theory/mapreduce_straggling.md): linear map functions, the N files
MDS-coded into ``N K / q`` coded files placed by Li's r-subset placement, and a
coded shuffle among the first ``q`` nodes to finish mapping.
"""

from __future__ import annotations

import math
from fractions import Fraction

from theory.validation import check_int

__all__ = ["load_straggling", "straggling_levels"]


def _check(r: object, q: object, K: object) -> tuple[int, int, int]:
    K = check_int(K, "K", min_value=1)
    r = check_int(r, "r", min_value=1)
    q = check_int(q, "q", min_value=1)
    if r > K:
        raise ValueError(f"`r` must satisfy 1 <= r <= K, got r={r}, K={K}.")
    if q > K:
        raise ValueError(f"`q` must satisfy 1 <= q <= K, got q={q}, K={K}.")
    return r, q, K


def straggling_levels(r: int, q: int, K: int) -> dict[int, Fraction]:
    r"""Coded values a finishing node can receive, by how many finishers hold them.

    Parameters
    ----------
    r : int
        Nodes storing each coded file, ``1 <= r <= K``.
    q : int
        Nodes waited for, ``1 <= q <= K``.
    K : int
        Nodes.

    Returns
    -------
    dict of int to Fraction
        ``B_j`` for ``j = 1 .. min(r, q - 1)``: coded files stored at exactly
        ``j`` of the ``q`` finishers and not at a given one of them, over ``N``.

    Notes
    -----
    With ``N K / q`` coded files in ``C(K, r)`` equal batches,

    .. math:: B_j = \frac{K}{q}\,
        \frac{\binom{q-1}{j}\binom{K-q}{r-j}}{\binom{K}{r}}.

    Examples
    --------
    >>> straggling_levels(2, 3, 4)
    {1: Fraction(4, 9), 2: Fraction(2, 9)}
    """
    r, q, K = _check(r, q, K)
    return {
        j: Fraction(
            K * math.comb(q - 1, j) * math.comb(K - q, r - j), q * math.comb(K, r)
        )
        for j in range(1, min(r, q - 1) + 1)
    }


def load_straggling(r: int, q: int, K: int) -> Fraction:
    r"""Communication load of the unified coded scheme waiting for `q` of `K` nodes.

    Parameters
    ----------
    r : int
        Nodes storing each coded file (storage ``r / q`` of the data per node),
        ``1 <= r <= K``.
    q : int
        Nodes waited for (the map phase tolerates ``K - q`` stragglers),
        ``1 <= q <= K``.
    K : int
        Nodes.

    Returns
    -------
    Fraction
        :math:`L(r, q)`: bits shuffled over ``Q N T``, the ``Q`` reduce functions
        spread over the ``q`` finishers.

    Notes
    -----
    Each finisher holds ``r N / q`` coded values and needs ``N`` independent
    ones, so it lacks :math:`1 - r/q` (times ``N``). A coded value held by ``j``
    other finishers costs ``1/j`` by Li's multicast in the group of those
    ``j + 1`` nodes, so the cheapest levels go first [derived]:

    .. math:: L(r, q) = \sum_{j=s}^{r'} \frac{B_j}{j}
        + \frac{1}{s - 1}\Big(1 - \frac{r}{q} - \sum_{j=s}^{r'} B_j\Big),

    with :math:`r' = \min(r, q - 1)`, ``B_j`` from :func:`straggling_levels`, and
    ``s`` the least level with :math:`\sum_{j \ge s} B_j \le 1 - r/q` (the last
    term is absent when the sum is exact). ``q = K`` gives Li's
    :math:`\frac1r(1 - \frac rK)`; ``r = 1`` gives the uncoded
    :math:`1 - 1/q`; ``r >= q`` gives 0.

    References
    ----------
    .. [1] S. Li, M. A. Maddah-Ali, A. S. Avestimehr, "A Unified Coding Framework
       for Distributed Computing with Straggling Servers", IEEE Globecom
       Workshops, 2016.

    Examples
    --------
    >>> load_straggling(2, 4, 4), load_straggling(2, 3, 4), load_straggling(1, 3, 4)
    (Fraction(1, 4), Fraction(2, 9), Fraction(2, 3))
    """
    r, q, K = _check(r, q, K)
    need = 1 - Fraction(r, q)
    if need <= 0:
        return Fraction(0)
    load, taken = Fraction(0), Fraction(0)
    for j, available in sorted(straggling_levels(r, q, K).items(), reverse=True):
        share = min(available, need - taken)
        load += share / j
        taken += share
        if taken == need:
            return load
    raise AssertionError("the q finishers hold fewer than N coded files")  # MDS
