r"""Lee et al.'s homogeneous latencies: uncoded, replication and (n, k) MDS.

Every function here works in *job units* (docs/theory/stragglers.md#job-units):
a worker given a share ``1/k`` of the job finishes after ``(1/k)(a + X/mu)``,
``X ~ Exp(1)``. In the per-row model of docs/theory/model.md (a job of ``m`` rows,
``l = m/k`` rows per worker, ``a`` seconds per row, ``mu`` rows per second) the
latency in seconds is ``m`` times the value returned.
"""

from __future__ import annotations

import numpy as np

from theory.validation import check_int, check_k_of_n, check_real

__all__ = [
    "expected_kth_completion",
    "expected_latency_mds",
    "expected_latency_mds_asymptotic",
    "expected_latency_replication",
    "expected_latency_uncoded",
    "optimal_k_mds",
    "optimal_rate_asymptotic",
]


def _check_a_mu(a: object, mu: object, *, shift_name: str = "a") -> tuple[float, float]:
    """Validate the shift ``a >= 0`` and the rate ``mu > 0``."""
    return (
        check_real(a, shift_name, min_value=0.0),
        check_real(mu, "mu", min_value=0.0, strict_min=True),
    )


def _harmonic_tail(n: int, k: int) -> float:
    """Return ``H_n - H_{n-k} = sum_{j=n-k+1}^{n} 1/j`` without cancellation."""
    return float(np.sum(1.0 / np.arange(n - k + 1, n + 1, dtype=np.float64)))


def _lambertw_lower_excess(s: np.ndarray | float) -> np.ndarray:
    r"""Return :math:`u = -1 - W_{-1}(-e^{-(1 + s)}) \ge 0` for ``s >= 0``.

    `u` solves :math:`u - \log(1 + u) = s`. For ``s < 1e-7`` it is the
    branch-point series :math:`u = q + q^2/3 + 11 q^3/72 + 43 q^4/540`,
    :math:`q = \sqrt{2(1 - e^{-s})}` (Corless et al., 1996, eq. 4.22; the next
    term is below ``2e-15 u``), where Newton's residual would cancel; otherwise
    Newton's method from that series' first terms (``s < 1``) or the asymptote.
    Relative error below 1e-12 for every ``s``: unlike
    ``scipy.special.lambertw``, accurate next to the branch point, without
    underflow for ``s > 700``; returning `u` rather than
    :math:`W_{-1} = -(1 + u)` keeps it for ``u`` below the float spacing of 1.
    """
    s = np.asarray(s, dtype=np.float64)
    u = np.where(s < 1.0, np.sqrt(2.0 * s) + 2.0 * s / 3.0, s + np.log1p(s))
    for _ in range(8):
        safe = np.where(u > 0.0, u, 1.0)
        u = np.where(u > 0.0, u - (u - np.log1p(u) - s) * (1.0 + u) / safe, 0.0)
    q = np.sqrt(-2.0 * np.expm1(-s))
    series = q * (1.0 + q * (1.0 / 3.0 + q * (11.0 / 72.0 + q * (43.0 / 540.0))))
    return np.where(s < 1e-7, series, u)


def expected_kth_completion(n: int, k: int, *, mu: float, shift: float) -> float:
    r"""Return the expected time until `k` of `n` i.i.d. shifted-exponential finish.

    Parameters
    ----------
    n, k : int
        Number of workers and recovery threshold, ``1 <= k <= n``.
    mu, shift : float
        Rate (``mu > 0``) and minimum time (``shift >= 0``) of each worker.

    Returns
    -------
    float
        :math:`\mathbb{E}[T_{(k:n)}]`.

    Raises
    ------
    ValueError
        If ``k > n``, ``mu <= 0`` or ``shift < 0``.

    Notes
    -----
    For :math:`T_i = \text{shift} + X_i` with :math:`X_i \sim \mathrm{Exp}(\mu)`,

    .. math:: \mathbb{E}[T_{(k:n)}] = \text{shift} + \frac{H_n - H_{n-k}}{\mu},

    where :math:`H_m` is the m-th harmonic number. This is the latency model of [1]_.

    References
    ----------
    .. [1] K. Lee et al., "Speeding Up Distributed Machine Learning Using Codes",
       IEEE Trans. Inf. Theory 64(3), 2018.

    Examples
    --------
    >>> expected_kth_completion(1, 1, mu=2.0, shift=0.5)
    1.0
    """
    k, n = check_k_of_n(k, n)
    shift, mu = _check_a_mu(shift, mu, shift_name="shift")
    return shift + _harmonic_tail(n, k) / mu


def expected_latency_uncoded(n: int, *, a: float, mu: float) -> float:
    r"""Return the expected uncoded latency: `n` equal parts, wait for all.

    Parameters
    ----------
    n : int
        Number of workers, ``n >= 1``.
    a : float
        Shift of a whole job on one worker, ``a >= 0`` (seconds per row in the
        per-row model).
    mu : float
        Straggling rate, ``mu > 0``.

    Returns
    -------
    float
        :math:`\mathbb{E}[T]` in job units; multiply by ``m`` for seconds in the
        per-row model with ``l = m/n`` rows per worker.

    Raises
    ------
    ValueError
        If ``n < 1``, ``a < 0`` or ``mu <= 0``.

    Notes
    -----
    .. math:: \mathbb{E}[T] = \frac{1}{n}\Big(a + \frac{H_n}{\mu}\Big)

    (docs/theory/stragglers.md, after [1]_).

    References
    ----------
    .. [1] K. Lee, M. Lam, R. Pedarsani, D. Papailiopoulos, K. Ramchandran,
       "Speeding Up Distributed Machine Learning Using Codes", IEEE Trans. Inf.
       Theory 64(3), 1514-1529, 2018.

    Examples
    --------
    >>> round(expected_latency_uncoded(100, a=1.0, mu=1.0), 4)
    0.0619
    """
    n = check_int(n, "n", min_value=1)
    a, mu = _check_a_mu(a, mu)
    return (a + _harmonic_tail(n, n) / mu) / n


def expected_latency_replication(n: int, r: int, *, a: float, mu: float) -> float:
    r"""Return the expected `r`-replication latency: ``n/r`` parts, `r` copies each.

    Parameters
    ----------
    n : int
        Number of workers, ``n >= 1``.
    r : int
        Replication factor, ``1 <= r <= n`` and `r` divides `n`.
    a : float
        Shift of a whole job on one worker, ``a >= 0``.
    mu : float
        Straggling rate, ``mu > 0``.

    Returns
    -------
    float
        :math:`\mathbb{E}[T]` in job units (a part is done at the fastest of its
        `r` replicas; the job when every part is done); multiply by ``m`` for
        seconds in the per-row model with ``l = m r / n`` rows per worker.

    Raises
    ------
    ValueError
        If ``a < 0``, ``mu <= 0``, ``r`` is outside ``1..n`` or does not divide `n`.

    Notes
    -----
    .. math:: \mathbb{E}[T] = \frac{r}{n}\Big(a + \frac{H_{n/r}}{r\mu}\Big)

    ``r = 1`` is the uncoded scheme (docs/theory/stragglers.md, after [1]_).

    References
    ----------
    .. [1] K. Lee, M. Lam, R. Pedarsani, D. Papailiopoulos, K. Ramchandran,
       "Speeding Up Distributed Machine Learning Using Codes", IEEE Trans. Inf.
       Theory 64(3), 1514-1529, 2018.

    Examples
    --------
    >>> expected_latency_replication(4, 2, a=1.0, mu=1.0)
    0.875
    """
    n, r = _check_replication(n, r)
    a, mu = _check_a_mu(a, mu)
    parts = n // r
    return r / n * (a + _harmonic_tail(parts, parts) / (r * mu))


def _check_replication(n: object, r: object) -> tuple[int, int]:
    """Validate ``1 <= r <= n`` with ``r | n``; return ``(n, r)``."""
    n = check_int(n, "n", min_value=1)
    r = check_int(r, "r", min_value=1, max_value=n)
    if n % r:
        raise ValueError(f"`r` must divide `n`, got r={r}, n={n}.")
    return n, r


def expected_latency_mds(n: int, k: int, *, a: float, mu: float) -> float:
    r"""Return the expected (n, k) MDS latency: wait for the `k` fastest workers.

    Parameters
    ----------
    n, k : int
        Number of workers and code dimension, ``1 <= k <= n``.
    a : float
        Shift of a whole job on one worker, ``a >= 0``.
    mu : float
        Straggling rate, ``mu > 0``.

    Returns
    -------
    float
        :math:`\mathbb{E}[T]` in job units; multiply by ``m`` for seconds in the
        per-row model with ``l = m/k`` rows per worker.

    Raises
    ------
    ValueError
        If ``k > n``, ``a < 0`` or ``mu <= 0``.

    Notes
    -----
    .. math:: \mathbb{E}[T] = \frac{1}{k}\Big(a + \frac{H_n - H_{n-k}}{\mu}\Big)

    ``k = n`` is the uncoded scheme (docs/theory/stragglers.md, after [1]_).

    References
    ----------
    .. [1] K. Lee, M. Lam, R. Pedarsani, D. Papailiopoulos, K. Ramchandran,
       "Speeding Up Distributed Machine Learning Using Codes", IEEE Trans. Inf.
       Theory 64(3), 1514-1529, 2018.

    Examples
    --------
    >>> round(expected_latency_mds(100, 69, a=1.0, mu=1.0), 4)
    0.0313
    """
    k, n = check_k_of_n(k, n)
    a, mu = _check_a_mu(a, mu)
    return (a + _harmonic_tail(n, k) / mu) / k


def optimal_k_mds(n: int, *, a: float, mu: float) -> int:
    r"""Return the code dimension `k` minimising the expected MDS latency, exactly.

    Parameters
    ----------
    n : int
        Number of workers, ``n >= 1``.
    a : float
        Shift of a whole job on one worker, ``a >= 0``.
    mu : float
        Straggling rate, ``mu > 0``.

    Returns
    -------
    int
        :math:`k^* = \arg\min_{1 \le k \le n} \mathbb{E}[T_{MDS}(n, k)]` (the
        smallest minimiser on ties), found by evaluating every `k` in
        :math:`O(n)`.

    Raises
    ------
    ValueError
        If ``n < 1``, ``a < 0`` or ``mu <= 0``.

    Notes
    -----
    .. math:: k^* = \arg\min_{k} \frac{1}{k}\Big(a + \frac{H_n - H_{n-k}}{\mu}\Big)

    See `optimal_rate_asymptotic` for the limit of :math:`k^*/n` ([1]_).

    References
    ----------
    .. [1] K. Lee, M. Lam, R. Pedarsani, D. Papailiopoulos, K. Ramchandran,
       "Speeding Up Distributed Machine Learning Using Codes", IEEE Trans. Inf.
       Theory 64(3), 1514-1529, 2018.

    Examples
    --------
    >>> optimal_k_mds(100, a=1.0, mu=1.0)
    69
    """
    n = check_int(n, "n", min_value=1)
    a, mu = _check_a_mu(a, mu)
    tails = np.cumsum(1.0 / np.arange(n, 0, -1, dtype=np.float64))
    latency = (a + tails / mu) / np.arange(1, n + 1)
    return int(np.argmin(latency)) + 1


def optimal_rate_asymptotic(*, a: float, mu: float) -> float:
    r"""Large-`n` limit of the optimal MDS code rate :math:`k^*/n`.

    Parameters
    ----------
    a : float
        Shift of a whole job on one worker, ``a >= 0``.
    mu : float
        Straggling rate, ``mu > 0``.

    Returns
    -------
    float
        :math:`\lim_{n\to\infty} k^*/n` in ``[0, 1)``.

    Raises
    ------
    ValueError
        If ``a < 0`` or ``mu <= 0``.

    Notes
    -----
    With :math:`W_{-1}` the lower real branch of Lambert W,

    .. math:: \frac{k^*}{n} \to 1 + \frac{1}{W_{-1}\big(-e^{-(1 + \mu a)}\big)}.

    :math:`W_{-1}` is computed by Newton's method on
    :math:`u - \log(1 + u) = \mu a`, :math:`W_{-1} = -(1 + u)`, which stays accurate
    at the branch point (``a = 0`` gives rate 0) and for large :math:`\mu a` ([1]_).

    References
    ----------
    .. [1] K. Lee, M. Lam, R. Pedarsani, D. Papailiopoulos, K. Ramchandran,
       "Speeding Up Distributed Machine Learning Using Codes", IEEE Trans. Inf.
       Theory 64(3), 1514-1529, 2018.

    Examples
    --------
    >>> round(100 * optimal_rate_asymptotic(a=1.0, mu=1.0), 1)
    68.2
    """
    a, mu = _check_a_mu(a, mu)
    u = _lambertw_lower_excess(mu * a)
    return float(u / (1.0 + u))


def expected_latency_mds_asymptotic(n: int, *, a: float, mu: float) -> float:
    r"""Large-`n` approximation of the optimal MDS latency :math:`\mathbb{E}[T^*]`.

    Parameters
    ----------
    n : int
        Number of workers, ``n >= 1``.
    a : float
        Shift of a whole job on one worker, ``a >= 0``.
    mu : float
        Straggling rate, ``mu > 0``.

    Returns
    -------
    float
        The approximation, in job units; its ratio to
        ``expected_latency_mds(n, optimal_k_mds(n, ...), ...)`` tends to 1.

    Raises
    ------
    ValueError
        If ``n < 1``, ``a < 0`` or ``mu <= 0``.

    Notes
    -----
    .. math:: \mathbb{E}[T^*] \sim \frac{-W_{-1}\big(-e^{-(1 + \mu a)}\big)}{n\mu}

    (docs/theory/stragglers.md, after [1]_).

    References
    ----------
    .. [1] K. Lee, M. Lam, R. Pedarsani, D. Papailiopoulos, K. Ramchandran,
       "Speeding Up Distributed Machine Learning Using Codes", IEEE Trans. Inf.
       Theory 64(3), 1514-1529, 2018.

    Examples
    --------
    >>> round(expected_latency_mds_asymptotic(100, a=1.0, mu=1.0), 4)
    0.0315
    """
    n = check_int(n, "n", min_value=1)
    a, mu = _check_a_mu(a, mu)
    return float((1.0 + _lambertw_lower_excess(mu * a)) / (n * mu))
