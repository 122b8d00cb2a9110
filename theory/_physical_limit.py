r"""The physical limit: a job ends no earlier than ``m / sum_i speed_i``.

See docs/theory/model.md#the-physical-limit.

Worker ``i`` computes rows at speed :math:`V_i = 1/(a_i + X_i/\mu_i)`, so a job of
``m`` rows under any scheme that wastes no finished work cannot end before
:math:`T_{ideal} = m / \sum_i V_i`.
"""

from __future__ import annotations

import numpy as np
from scipy import integrate, special

from theory._models import GroupProfile, WorkerProfile
from theory.validation import check_real

__all__ = ["expected_physical_limit", "physical_limit_bound"]


def _as_groups(profile: object) -> GroupProfile:
    """Return `profile` as groups of workers with identical ``(a, mu)``."""
    if isinstance(profile, GroupProfile):
        return profile
    if isinstance(profile, WorkerProfile):
        pairs, counts = np.unique(
            np.stack([profile.a, profile.mu], axis=1), axis=0, return_counts=True
        )
        return GroupProfile(N=counts, a=pairs[:, 0], mu=pairs[:, 1])
    raise TypeError(
        "`profile` must be a WorkerProfile or GroupProfile, "
        f"got {type(profile).__name__}."
    )


def _speed_quadrature() -> tuple[np.ndarray, np.ndarray]:
    """Return nodes ``x`` and weights ``w e^{-x}`` for integrals over ``x >= 0``.

    Composite 16-point Gauss-Legendre on ``[0, 1e-14]`` and 63 geometrically graded
    panels up to ``x = 60`` (``e^{-60}`` is negligible): each panel is narrower than
    0.8 times its distance from 0, so ``exp(-c/(b + x))`` is resolved to
    near machine precision at every scale of ``c`` and ``b``.
    """
    nodes, weights = np.polynomial.legendre.leggauss(16)
    edges = np.concatenate([[0.0], np.geomspace(1e-14, 60.0, 64)])
    half = (edges[1:] - edges[:-1])[:, None] / 2.0
    middle = (edges[1:] + edges[:-1])[:, None] / 2.0
    x = (half * nodes + middle).ravel()
    return x, (half * weights).ravel() * np.exp(-x)


_NODES, _WEIGHTS = _speed_quadrature()


def _log_laplace(t: float, groups: GroupProfile) -> np.ndarray:
    r"""Return :math:`\log \mathbb{E}[e^{-t V_j}]` for every group ``j``.

    Integrates :math:`e^{-x} e^{-t\mu/(\mu a + x)}` and its complement
    :math:`e^{-x}(1 - e^{-t\mu/(\mu a + x)})` over ``x >= 0``; the log uses
    ``log1p(-complement)`` while the transform is near 1 (large groups, small `t`)
    and the transform itself otherwise.
    """
    ratio = (t * groups.mu)[:, None] / ((groups.mu * groups.a)[:, None] + _NODES)
    transform = np.exp(-ratio) @ _WEIGHTS
    complement = -np.expm1(-ratio) @ _WEIGHTS
    with np.errstate(divide="ignore"):
        return np.where(
            complement < 0.5,
            np.log1p(-np.minimum(complement, 0.5)),
            np.log(transform),
        )


def expected_physical_limit(profile: WorkerProfile | GroupProfile, m: float) -> float:
    r"""Return the expected physical limit :math:`\mathbb{E}[m / \sum_i V_i]`.

    Parameters
    ----------
    profile : WorkerProfile or GroupProfile
        Per-worker (or per-group) shifts ``a`` and rates ``mu``.
    m : float
        Rows the job needs, ``m > 0``.

    Returns
    -------
    float
        The expected physical limit in seconds, to about 10 significant digits.

    Raises
    ------
    TypeError
        If `profile` is not a profile.
    ValueError
        If ``m <= 0``.

    See Also
    --------
    physical_limit_bound : its large-`n` value and lower bound.

    Notes
    -----
    With :math:`S = \sum_i V_i`, :math:`V_i = 1/(a_i + X_i/\mu_i)` and the identity
    :math:`1/S = \int_0^\infty e^{-tS}\,dt`, independence gives

    .. math::

        \mathbb{E}[T_{ideal}] = m \int_0^\infty \prod_j \phi_j(t)^{N_j}\,dt, \qquad
        \phi_j(t) = \mathbb{E}[e^{-t V_j}]
                  = \int_0^\infty e^{-x - t\mu_j/(\mu_j a_j + x)}\,dx,

    over groups ``j`` of :math:`N_j` identical workers. The outer integral is
    adaptive (QUADPACK, relative tolerance 1e-10, `t` scaled by
    :math:`\sum_j N_j/(a_j + 1/\mu_j)`); :math:`\phi_j` uses a fixed composite
    Gauss-Legendre rule of 1024 nodes on geometrically graded panels (agrees with
    nested adaptive quadrature to about 1e-13). The cost grows with the number of
    distinct groups, not workers (milliseconds for a few groups). This is the
    lower bound of docs/theory/model.md#the-physical-limit for any allocation
    that wastes no finished work, e.g. BPCC with many batches [1]_ or a perfect
    rateless code.

    References
    ----------
    .. [1] B. Wang, J. Xie, K. Lu, Y. Wan, S. Fu, "On Batch-Processing Based Coded
       Computing for Heterogeneous Distributed Computing Systems", IEEE Trans.
       Netw. Sci. Eng. 8(3), 2021.

    Examples
    --------
    >>> from theory import WorkerProfile
    >>> round(expected_physical_limit(WorkerProfile(a=[0.0], mu=[2.0]), 1.0), 8)
    0.5
    """
    groups = _as_groups(profile)
    m = check_real(m, "m", min_value=0.0, strict_min=True)
    scale = float(np.sum(groups.N / (groups.a + 1.0 / groups.mu)))

    def integrand(u: float) -> float:
        return float(np.exp(np.sum(groups.N * _log_laplace(u / scale, groups))))

    value, _ = integrate.quad(
        integrand, 0.0, np.inf, epsabs=0.0, epsrel=1e-10, limit=200
    )
    return m * value / scale


def physical_limit_bound(profile: WorkerProfile | GroupProfile, m: float) -> float:
    r"""Return :math:`m / \mathbb{E}[\sum_i V_i]`, the large-`n` physical limit.

    Parameters
    ----------
    profile : WorkerProfile or GroupProfile
        Per-worker (or per-group) shifts ``a`` and rates ``mu``.
    m : float
        Rows the job needs, ``m > 0``.

    Returns
    -------
    float
        A lower bound on `expected_physical_limit` (Jensen), tight as the number of
        workers grows; ``0.0`` if some ``a_i = 0`` (that worker's expected speed is
        infinite).

    Raises
    ------
    TypeError
        If `profile` is not a profile.
    ValueError
        If ``m <= 0``.

    Notes
    -----
    With :math:`E_1` the exponential integral,

    .. math::

        \mathbb{E}\Big[\frac{1}{a + X/\mu}\Big] = \mu e^{\mu a} E_1(\mu a), \qquad
        \frac{m}{\sum_i \mu_i e^{\mu_i a_i} E_1(\mu_i a_i)}
        \le \mathbb{E}[T_{ideal}],

    evaluated for :math:`\mu a > 500` as :math:`e^x E_1(x) = U(1, 1, x)` (Tricomi's
    function) so that it does not overflow. It is also the limit of BPCC's latency
    as the number of batches grows ([1]_; docs/theory/allocation.md#bpcc).

    References
    ----------
    .. [1] B. Wang, J. Xie, K. Lu, Y. Wan, S. Fu, "On Batch-Processing Based Coded
       Computing for Heterogeneous Distributed Computing Systems", IEEE Trans.
       Netw. Sci. Eng. 8(3), 2021.

    Examples
    --------
    >>> from theory import GroupProfile
    >>> g = GroupProfile(N=[20, 30, 50], a=[1, 1, 1], mu=[4, 2, 1])
    >>> round(physical_limit_bound(g, 1000.0), 3)
    14.705
    """
    groups = _as_groups(profile)
    m = check_real(m, "m", min_value=0.0, strict_min=True)
    if np.any(groups.a == 0.0):
        return 0.0
    x = groups.mu * groups.a
    small = np.minimum(x, 500.0)
    scaled_e1 = np.where(
        x <= 500.0, np.exp(small) * special.exp1(small), special.hyperu(1.0, 1.0, x)
    )
    speed = groups.mu * scaled_e1
    return m / float(np.sum(groups.N * speed))
