r"""Worker profiles from measured task times.

The estimator is derived in docs/theory/model.md#estimating-a-profile.
"""

from __future__ import annotations

import numpy as np

from theory import WorkerProfile
from theory._validation import check_finite_matrix

__all__ = ["estimate_profile"]


def estimate_profile(
    loads: object, times: object, *, unbiased: bool = True
) -> WorkerProfile:
    r"""Estimate each worker's ``(a_i, mu_i)`` from timed tasks by maximum likelihood.

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
        Estimated shift ``a_i`` (seconds per row, clipped at 0) and rate ``mu_i``.

    Raises
    ------
    ValueError
        If shapes disagree, a load is not positive, a time is negative, a worker
        has fewer than 2 tasks, or its per-row times show no spread.

    Notes
    -----
    The per-row times :math:`y = t/l` of a worker are shifted exponential with
    shift :math:`a` and scale :math:`1/\mu`, whose MLE is

    .. math:: \hat a = \min_k y_k, \qquad 1/\hat\mu = \bar y - \hat a.

    With ``unbiased`` the scale is multiplied by :math:`s/(s-1)` and the shift
    becomes :math:`\hat a - (1/\hat\mu)/s` (the unbiased estimators, as
    :math:`E[\min_k y_k] = a + 1/(s\mu)`). Group workers whose estimates agree with
    ``estimate_profile(...).to_groups(rtol=...)``.

    Examples
    --------
    >>> times = [[1.0, 2.0, 3.0], [2.0, 2.5, 3.0]]
    >>> p = estimate_profile([1.0, 1.0, 1.0], times, unbiased=False)
    >>> p.a.tolist(), p.mu.tolist()
    ([1.0, 2.0], [1.0, 2.0])
    """
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
    s = times.shape[1]
    if s < 2:
        raise ValueError(f"each worker needs at least 2 timed tasks, got s={s}.")
    y = times / loads
    shift = y.min(axis=1)
    scale = y.mean(axis=1) - shift
    if np.any(scale <= 0.0):
        raise ValueError(
            "the per-row times of workers "
            f"{np.flatnonzero(scale <= 0.0).tolist()} show no spread, so mu is "
            "unbounded."
        )
    if unbiased:
        scale = scale * s / (s - 1)
        shift = np.maximum(shift - scale / s, 0.0)
    return WorkerProfile(a=shift, mu=1.0 / scale)
