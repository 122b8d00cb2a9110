r"""Worker profiles ``(c, a, mu)`` from measured task times, with standard errors.

A task of ``l`` rows lasts ``t = c + l (a + X / mu)``, ``X ~ Exp(1)``
(docs/theory/overhead.md#estimating-c-a-and-mu): at a fixed load the times are
shifted exponential with shift ``c + a l`` and scale ``l / mu``. Tasks at two or
more loads separate the per-task cost ``c`` from the per-row cost ``a``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from allocation._types import CallCosts
from theory import WorkerProfile
from theory.validation import check_finite_matrix

__all__ = [
    "ProfileError",
    "ProfileFit",
    "estimate_profile",
    "fit_profile",
]

_FLAG_SIGMAS = 3.0
_KS_LEVEL = 0.01
_IDENTIFIED_SIGMAS = 1.96  # a is identified when its 95% interval excludes 0


class ProfileError(ValueError):
    """A solver cannot use the profile it was given; the message says what to do."""


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ProfileFit:
    """Estimated profile, its standard errors and a poor-fit flag per worker.

    Parameters
    ----------
    profile : theory.WorkerProfile
        The estimates ``(c_i, a_i, mu_i)`` in seconds (negative estimates are
        clipped at 0). Every solver accepts the fit itself in its place.
    c_se, a_se, mu_se : numpy.ndarray, shape (n,)
        Standard errors (``c_se = 0`` where ``c`` was not fitted: one load only).
    poor_fit : numpy.ndarray of bool, shape (n,)
        Workers whose times the model does not describe (see `fit_profile`).
    reasons : tuple of str, length n
        Why each worker is flagged (empty when it is not).
    loads, times : numpy.ndarray, shape (n, s)
        The data the fit was made from (rows and seconds per task).
    a_identified : numpy.ndarray of bool, shape (n,)
        False where the data cannot tell ``a_i`` from 0: its estimate is within
        1.96 standard errors of 0 (the per-task cost or the random part
        dominates the kernels). Such a worker's ``a_i`` may be 0 in `profile`;
        the solvers then cap its load at ``m`` rows unless `l_max` says
        otherwise (`unidentified` lists them).
    costs : CallCosts
        What a whole call costs the client besides its tasks (the fixed cost
        with its standard error, the encoding and checking rates; all 0: not
        measured; `coded.profile_workers` measures them). A solver passes them
        on to its allocation.
    """

    profile: WorkerProfile
    c_se: np.ndarray
    a_se: np.ndarray
    mu_se: np.ndarray
    poor_fit: np.ndarray
    reasons: tuple[str, ...]
    loads: np.ndarray
    times: np.ndarray
    a_identified: np.ndarray | None = None
    costs: CallCosts = field(default_factory=CallCosts)

    def __post_init__(self) -> None:
        identified = (
            np.ones(self.profile.n, dtype=bool)
            if self.a_identified is None
            else np.asarray(self.a_identified, dtype=bool)
        )
        if identified.shape != (self.profile.n,):
            raise ValueError(
                f"`a_identified` must have one entry per worker ({self.profile.n}), "
                f"got shape {identified.shape}."
            )
        object.__setattr__(self, "a_identified", identified)
        if not isinstance(self.costs, CallCosts):
            raise TypeError(
                f"`costs` must be a CallCosts, got {type(self.costs).__name__}."
            )

    @property
    def n(self) -> int:
        """Number of workers."""
        return self.profile.n

    @property
    def unidentified(self) -> tuple[int, ...]:
        """Workers whose per-row cost ``a`` the data cannot tell from 0."""
        return tuple(int(i) for i in np.flatnonzero(~self.a_identified))


def _validated(loads: object, times: object) -> tuple[np.ndarray, np.ndarray]:
    times = check_finite_matrix(times, "times", ndim=2).astype(np.float64)
    loads = check_finite_matrix(loads, "loads", ndim=(1, 2)).astype(np.float64)
    try:
        loads = np.broadcast_to(loads, times.shape)
    except ValueError:
        raise ValueError(
            f"`loads` of shape {loads.shape} does not match `times` of shape "
            f"{times.shape}."
        ) from None
    if np.any(loads <= 0.0):
        raise ValueError("`loads` entries must be > 0.")
    if np.any(times < 0.0):
        raise ValueError("`times` entries must be >= 0.")
    if times.shape[1] < 2:
        raise ValueError(
            f"each worker needs at least 2 timed tasks, got s={times.shape[1]}."
        )
    return loads, times


@dataclass(frozen=True, slots=True)
class _Worker:
    c: float
    a: float
    mu: float
    c_se: float
    a_se: float
    mu_se: float
    reasons: tuple[str, ...]
    a_raw: float  # the estimate before clipping at 0


def _per_row(loads, times, unbiased) -> _Worker | None:
    """One load (or none repeated): per-row times ``t / l``, ``c`` not fitted."""
    y = times / loads
    s = y.size
    shift, scale = y.min(), y.mean() - y.min()
    if scale <= 0.0:
        return None
    if unbiased:
        scale = scale * s / (s - 1)
        shift = shift - scale / s
    mu = 1.0 / scale
    return _Worker(
        0.0, max(shift, 0.0), mu, 0.0, scale / s, mu / np.sqrt(s - 1), (), shift
    )


def _empirical_mu_se(groups, low, levels, mu: float, k: float) -> float:
    """Return the standard error of ``mu`` from the spread the excess times show.

    ``mu / sqrt(K)`` assumes exponential excesses (standard deviation equal to
    the mean); a machine whose delays have heavier tails spreads them more. The
    delta method on the pooled per-row excesses ``(t - min) / L`` gives
    ``SE(mu) = mu^2 sd / sqrt(K)``; the fit reports the larger of the two.
    """
    excess = np.concatenate(
        [(g - m) / L for g, m, L in zip(groups, low, levels, strict=True)]
    )
    return float(mu**2 * excess.std(ddof=1) / np.sqrt(k))


def _two_loads(levels, groups, unbiased) -> _Worker | None:
    """Shifts ``c + a L_j`` and scales ``L_j / mu`` per load; a line through them."""
    sizes = np.array([g.size for g in groups], dtype=np.float64)
    low = np.array([g.min() for g in groups])
    spread = np.array([g.mean() for g in groups]) - low
    if np.any(spread <= 0.0):
        return None
    dof = sizes - 1.0 if unbiased else sizes
    theta_j = spread * sizes / dof / levels  # per-row scale 1/mu at each load
    theta = float(np.sum(dof * theta_j) / dof.sum())
    shift = low - (theta * levels / sizes if unbiased else 0.0)
    variance = (theta * levels / sizes) ** 2
    X = np.column_stack([np.ones_like(levels), levels])
    weights = 1.0 / variance
    cov = np.linalg.inv(X.T @ (weights[:, None] * X))
    c, a = cov @ (X.T @ (weights * shift))
    c_se, a_se = np.sqrt(np.diag(cov))
    k = dof.sum()
    mu = (k - 1.0) / k / theta if unbiased else 1.0 / theta
    mu_se = max(mu / np.sqrt(k), _empirical_mu_se(groups, low, levels, mu, k))
    reasons = []
    off = np.abs(theta_j / theta - 1.0) * np.sqrt(dof)
    if np.any(off > _FLAG_SIGMAS):
        reasons.append(
            "the random part does not grow with the load (per-row scales "
            f"{np.round(theta_j, 9).tolist()} s/row)"
        )
    for name, value, se in (("c", c, c_se), ("a", a, a_se)):
        if value < -_FLAG_SIGMAS * se:
            reasons.append(f"{name} estimated at {value:.3g} s < 0")
    residuals = np.concatenate(
        [(g - s) / (theta * L) for g, s, L in zip(groups, shift, levels, strict=True)]
    )
    if residuals.size >= 8 and stats.kstest(residuals, "expon").pvalue < _KS_LEVEL:
        reasons.append("the times are not shifted exponential (KS p < 0.01)")
    return _Worker(max(c, 0.0), max(a, 0.0), mu, c_se, a_se, mu_se, tuple(reasons), a)


def fit_profile(loads: object, times: object, *, unbiased: bool = True) -> ProfileFit:
    r"""Fit each worker's ``(c_i, a_i, mu_i)`` to timed tasks, with standard errors.

    Parameters
    ----------
    loads : array_like, shape (n, s) or (s,)
        Rows of each timed task (``> 0``); a 1-D array is shared by all workers.
    times : array_like, shape (n, s)
        Measured seconds of each task, one row per worker, ``s >= 2`` tasks each.
    unbiased : bool
        Apply the small-sample corrections (default) instead of the plain MLE.

    Returns
    -------
    ProfileFit
        The profile (seconds), standard errors and poor-fit flags.

    Raises
    ------
    ValueError
        If shapes disagree, a load is not positive, a time is negative, a worker
        has fewer than 2 tasks, or its times show no spread.

    Notes
    -----
    *Two or more loads* (each repeated at least twice): at load :math:`L_j` the
    times are shifted exponential with shift :math:`c + a L_j` and scale
    :math:`L_j/\mu`. The per-row scale is pooled over the loads,
    :math:`1/\hat\mu = \sum_j (s_j - 1)\hat\theta_j / \sum_j (s_j - 1)` with
    :math:`\hat\theta_j = s_j(\bar t_j - \min_k t_{jk})/((s_j - 1) L_j)`; the
    shifts :math:`\min_k t_{jk} - L_j/(s_j\hat\mu)` (the minimum overshoots by
    :math:`L_j/(s_j\mu)` on average) are fitted by the line :math:`c + a L_j` by
    weighted least squares with their variances :math:`(L_j/(s_j\mu))^2`. The
    standard errors are the regression's for ``(c, a)`` and
    :math:`\hat\mu/\sqrt{K}`, :math:`K = \sum_j (s_j - 1)`, for ``mu``; with
    `unbiased`, :math:`\hat\mu` is multiplied by :math:`(K - 1)/K` (the
    pooled scale is Gamma distributed with shape ``K``) [derived]
    (docs/theory/overhead.md#estimating-c-a-and-mu).

    *One load* (or no load repeated): ``c`` cannot be told apart from ``a``; it is
    set to 0 and the per-row times :math:`y = t/l` give the MLE
    :math:`\hat a = \min y`, :math:`1/\hat\mu = \bar y - \hat a`, bias-corrected by
    :math:`s/(s-1)` and :math:`\hat a - 1/(s\hat\mu)` when `unbiased`.

    A worker is flagged (``poor_fit``) when its per-row scales at different loads
    differ by more than 3 standard errors (the random part does not grow with the
    load), when ``c`` or ``a`` is significantly negative, or when the
    standardised residuals fail a Kolmogorov-Smirnov test against Exp(1) at the
    1% level (8 or more tasks).

    ``a_identified[i]`` is False when the unclipped estimate of ``a_i`` is not
    above 1.96 of its standard errors: the kernels cannot tell the per-row
    cost from 0 (the per-task cost or the random part dominates them). The
    profile keeps the clipped estimate (possibly 0), and the solvers cap such
    a worker's load at ``m`` rows by default (more never helps a decoder that
    needs ``m``); time longer kernels (larger `loads`) to identify it.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> loads = np.repeat([100.0, 1000.0], 200)
    >>> times = 0.02 + loads * (1e-4 + rng.exponential(size=(1, 400)) / 5e4)
    >>> fit = fit_profile(loads, times)
    >>> [round(float(v), 3) for v in (fit.profile.c[0], fit.profile.a[0] * 1e4)]
    [0.02, 0.999]
    >>> bool(abs(fit.profile.mu[0] / 5e4 - 1) < 3 * fit.mu_se[0] / 5e4)
    True
    """
    loads, times = _validated(loads, times)
    workers = []
    for i in range(times.shape[0]):
        levels, inverse = np.unique(loads[i], return_inverse=True)
        groups = [times[i][inverse == j] for j in range(levels.size)]
        repeated = [j for j, g in enumerate(groups) if g.size >= 2]
        if len(repeated) >= 2:
            fit = _two_loads(levels[repeated], [groups[j] for j in repeated], unbiased)
        else:
            fit = _per_row(loads[i], times[i], unbiased)
        if fit is None:
            raise ValueError(
                f"the times of worker {i} show no spread at some load, so mu is "
                "unbounded; time more tasks or larger loads."
            )
        workers.append(fit)
    numbers = ("c", "a", "mu", "c_se", "a_se", "mu_se", "a_raw")
    column = {f: np.array([getattr(w, f) for w in workers]) for f in numbers}
    return ProfileFit(
        profile=WorkerProfile(a=column["a"], mu=column["mu"], c=column["c"]),
        c_se=column["c_se"],
        a_se=column["a_se"],
        mu_se=column["mu_se"],
        poor_fit=np.array([bool(w.reasons) for w in workers]),
        reasons=tuple("; ".join(w.reasons) for w in workers),
        loads=np.array(loads),
        times=times,
        a_identified=column["a_raw"] > _IDENTIFIED_SIGMAS * column["a_se"],
    )


def estimate_profile(
    loads: object, times: object, *, unbiased: bool = True
) -> WorkerProfile:
    r"""Estimate each worker's ``(c_i, a_i, mu_i)`` from timed tasks.

    The point estimates of `fit_profile` (see there for the estimator, its
    standard errors and the poor-fit flags).

    Parameters
    ----------
    loads : array_like, shape (n, s) or (s,)
        Rows of each timed task (``> 0``); a 1-D array is shared by all workers.
    times : array_like, shape (n, s)
        Measured time of each task, one row per worker, ``s >= 2`` tasks each.
    unbiased : bool
        Apply the small-sample corrections (default) instead of the plain MLE.

    Returns
    -------
    WorkerProfile
        Estimated ``c_i`` (0 unless two or more loads were timed), shift ``a_i``
        (seconds per row, clipped at 0) and rate ``mu_i``.

    Raises
    ------
    ValueError
        If shapes disagree, a load is not positive, a time is negative, a worker
        has fewer than 2 tasks, or its times show no spread.

    Examples
    --------
    >>> times = [[1.0, 2.0, 3.0], [2.0, 2.5, 3.0]]
    >>> p = estimate_profile([1.0, 1.0, 1.0], times, unbiased=False)
    >>> np.round(p.a, 9).tolist(), np.round(p.mu, 9).tolist()
    ([1.0, 2.0], [1.0, 2.0])
    """
    return fit_profile(loads, times, unbiased=unbiased).profile
