"""Recovery thresholds: how many worker results each code needs to decode."""

from __future__ import annotations

from theory.validation import check_int

__all__ = [
    "recovery_threshold_entangled",
    "recovery_threshold_matdot",
    "recovery_threshold_mds",
    "recovery_threshold_polynomial",
]


def recovery_threshold_mds(k: int) -> int:
    r"""Return the recovery threshold of an (n, k) MDS code: any `k` results.

    Parameters
    ----------
    k : int
        Code dimension (blocks of the data), ``k >= 1``.

    Returns
    -------
    int
        :math:`k`.

    Raises
    ------
    ValueError
        If ``k < 1``.

    Notes
    -----
    Any `k` rows of an MDS generator are invertible, so any `k` of the `n`
    coded results decode ([1]_, docs/theory/codes.md).

    References
    ----------
    .. [1] K. Lee, M. Lam, R. Pedarsani, D. Papailiopoulos, K. Ramchandran,
       "Speeding Up Distributed Machine Learning Using Codes", IEEE Trans. Inf.
       Theory 64(3), 2018.

    Examples
    --------
    >>> recovery_threshold_mds(6)
    6
    """
    return check_int(k, "k", min_value=1)


def recovery_threshold_polynomial(p_a: int, p_b: int) -> int:
    r"""Return the recovery threshold of a polynomial code, ``p_a p_b``.

    Parameters
    ----------
    p_a : int
        Row blocks of `A`, ``p_a >= 1``.
    p_b : int
        Column blocks of `B`, ``p_b >= 1``.

    Returns
    -------
    int
        :math:`p_a p_b`.

    Raises
    ------
    ValueError
        If ``p_a < 1`` or ``p_b < 1``.

    Notes
    -----
    Worker results are evaluations of a matrix polynomial of degree
    :math:`p_a p_b - 1` whose coefficients are the blocks of :math:`AB`, so
    :math:`p_a p_b` distinct evaluations decode by interpolation and fewer do not
    [1]_.

    References
    ----------
    .. [1] Q. Yu, M. A. Maddah-Ali, A. S. Avestimehr, "Polynomial Codes: an Optimal
       Design for High-Dimensional Coded Matrix Multiplication", NeurIPS 2017.

    Examples
    --------
    >>> recovery_threshold_polynomial(2, 3)
    6
    """
    return check_int(p_a, "p_a", min_value=1) * check_int(p_b, "p_b", min_value=1)


def recovery_threshold_matdot(m: int) -> int:
    r"""Return the recovery threshold of a MatDot code, ``2m - 1``.

    Parameters
    ----------
    m : int
        Blocks of the inner dimension (columns of `A`, rows of `B`), ``m >= 1``.

    Returns
    -------
    int
        :math:`2m - 1`.

    Raises
    ------
    ValueError
        If ``m < 1``.

    Notes
    -----
    With :math:`\tilde A(x) = \sum_i A_i x^i`, :math:`\tilde B(x) = \sum_j B_j
    x^{m-1-j}`, the product :math:`AB = \sum_i A_i B_i` is the coefficient of
    :math:`x^{m-1}` in a polynomial of degree :math:`2m - 2` [1]_.

    References
    ----------
    .. [1] S. Dutta, M. Fahim, F. Haddadpour, H. Jeong, V. Cadambe, P. Grover,
       "On the Optimal Recovery Threshold of Coded Matrix Multiplication", IEEE
       Trans. Inf. Theory 66(1), 2020.

    Examples
    --------
    >>> recovery_threshold_matdot(3)
    5
    """
    return 2 * check_int(m, "m", min_value=1) - 1


def recovery_threshold_entangled(p: int, m: int, n: int) -> int:
    r"""Return the recovery threshold of an entangled polynomial code, ``pmn + p - 1``.

    Parameters
    ----------
    p : int
        Blocks of the inner dimension, ``p >= 1``.
    m : int
        Row blocks of `A`, ``m >= 1``.
    n : int
        Column blocks of `B`, ``n >= 1``.

    Returns
    -------
    int
        :math:`pmn + p - 1`.

    Raises
    ------
    ValueError
        If any argument is below 1.

    Notes
    -----
    `A` is split into :math:`p \times m` blocks and `B` into :math:`p \times n`;
    ``p = 1`` gives the polynomial code (:math:`mn`) and ``m = n = 1`` MatDot
    (:math:`2p - 1`) [1]_.

    References
    ----------
    .. [1] Q. Yu, M. A. Maddah-Ali, A. S. Avestimehr, "Straggler Mitigation in
       Distributed Matrix Multiplication: Fundamental Limits and Optimal Coding",
       IEEE Trans. Inf. Theory 66(3), 2020.

    Examples
    --------
    >>> recovery_threshold_entangled(2, 2, 2)
    9
    """
    p = check_int(p, "p", min_value=1)
    m = check_int(m, "m", min_value=1)
    n = check_int(n, "n", min_value=1)
    return p * m * n + p - 1
