"""Vectorised Monte Carlo for Lee et al.'s homogeneous schemes.

Draws ``X ~ Exp(1)`` of shape ``(trials, workers)`` in chunks of about 2^18 numbers
and reduces each row to one latency with order statistics (``max``,
``np.partition``, ``min`` over replicas). Results are reproducible for a given seed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np

from theory._homogeneous import _check_a_mu, _check_replication
from theory._simulation_result import SimulationResult
from theory.rng import RngLike, as_generator
from theory.validation import check_int, check_k_of_n

__all__ = ["simulate_homogeneous"]

Scheme = Literal["uncoded", "replication", "mds"]
_SCHEMES = ("uncoded", "replication", "mds")
_CHUNK = 1 << 18


def _sample(
    trials: int,
    workers: int,
    reduce: Callable[[np.ndarray], np.ndarray],
    generator: np.random.Generator,
) -> np.ndarray:
    """Apply `reduce` to ``Exp(1)`` draws of shape ``(rows, workers)``, in chunks."""
    rows = max(1, _CHUNK // workers)
    out = np.empty(trials)
    for start in range(0, trials, rows):
        stop = min(trials, start + rows)
        out[start:stop] = reduce(
            generator.standard_exponential((stop - start, workers))
        )
    return out


def _order_statistic(
    scheme: str, n: int, k: int | None, r: int | None
) -> tuple[Callable[[np.ndarray], np.ndarray], int]:
    """Return the per-trial reduction of ``X`` and the share size ``1/parts``."""
    if scheme == "uncoded":
        return (lambda x: x.max(axis=1)), n
    if scheme == "replication":
        parts = n // r
        return (lambda x: x.reshape(-1, parts, r).min(axis=2).max(axis=1)), parts
    return (lambda x: np.partition(x, k - 1, axis=1)[:, k - 1]), k


def _check_scheme(
    scheme: object, n: object, k: object, r: object
) -> tuple[str, int, int | None, int | None]:
    """Validate the scheme and its parameters; return ``(scheme, n, k, r)``."""
    if scheme not in _SCHEMES:
        raise ValueError(f"`scheme` must be one of {_SCHEMES}, got {scheme!r}.")
    if k is not None and scheme != "mds":
        raise ValueError(f"`k` is only used by scheme='mds', got k={k!r}.")
    if r is not None and scheme != "replication":
        raise ValueError(f"`r` is only used by scheme='replication', got r={r!r}.")
    if scheme == "mds":
        if k is None:
            raise ValueError("scheme='mds' needs the code dimension `k`.")
        k, n = check_k_of_n(k, n)
    elif scheme == "replication":
        if r is None:
            raise ValueError("scheme='replication' needs the replication factor `r`.")
        n, r = _check_replication(n, r)
    else:
        n = check_int(n, "n", min_value=1)
    return scheme, n, k, r


def simulate_homogeneous(
    scheme: Scheme,
    n: int,
    *,
    k: int | None = None,
    r: int | None = None,
    a: float,
    mu: float,
    trials: int,
    rng: RngLike = None,
) -> SimulationResult:
    r"""Simulate Lee et al.'s homogeneous schemes from order statistics.

    Parameters
    ----------
    scheme : {"uncoded", "replication", "mds"}
        Wait for all `n` workers; for the fastest of each of ``n/r`` groups of `r`
        replicas; or for the `k` fastest of an (n, k) MDS code.
    n : int
        Number of workers, ``n >= 1``.
    k : int, optional
        Code dimension, ``1 <= k <= n``; required for (and only for) ``"mds"``.
    r : int, optional
        Replication factor dividing `n`; required for (and only for)
        ``"replication"``.
    a : float
        Shift of a whole job on one worker, ``a >= 0``.
    mu : float
        Straggling rate, ``mu > 0``.
    trials : int
        Number of simulated jobs, ``>= 1``.
    rng : Generator, SeedSequence, int or None
        Randomness, normalised by `theory.rng.as_generator`.

    Returns
    -------
    SimulationResult
        Mean, standard error and quantiles of the latency in job units (multiply by
        ``m`` for seconds in the per-row model).

    Raises
    ------
    ValueError
        If `scheme` is unknown, `k`/`r` is missing or given to the wrong scheme,
        ``k > n``, `r` does not divide `n`, ``a < 0``, ``mu <= 0`` or
        ``trials < 1``.

    See Also
    --------
    expected_latency_uncoded, expected_latency_replication, expected_latency_mds

    Notes
    -----
    Worker ``i`` holding a share ``1/s`` of the job finishes at
    :math:`(a + X_i/\mu)/s` with :math:`X_i \sim \mathrm{Exp}(1)`, so per trial

    .. math::

        T_{unc} = \frac{a + X_{(n:n)}/\mu}{n}, \quad
        T_{rep} = \frac{r}{n}\Big(a + \max_{g} \min_{i \in g} X_i / \mu\Big), \quad
        T_{MDS} = \frac{a + X_{(k:n)}/\mu}{k}.

    Every worker is drawn explicitly (``trials * n`` exponentials), so the
    simulator is independent of the harmonic-number closed forms of [1]_.

    References
    ----------
    .. [1] K. Lee, M. Lam, R. Pedarsani, D. Papailiopoulos, K. Ramchandran,
       "Speeding Up Distributed Machine Learning Using Codes", IEEE Trans. Inf.
       Theory 64(3), 2018.

    Examples
    --------
    >>> from theory import expected_latency_mds
    >>> res = simulate_homogeneous("mds", 10, k=5, a=1.0, mu=1.0, trials=2000, rng=0)
    >>> abs(res.mean - expected_latency_mds(10, 5, a=1.0, mu=1.0)) < 5 * res.stderr
    True
    """
    scheme, n, k, r = _check_scheme(scheme, n, k, r)
    a, mu = _check_a_mu(a, mu)
    trials = check_int(trials, "trials", min_value=1)
    reduce, parts = _order_statistic(scheme, n, k, r)
    x = _sample(trials, n, reduce, as_generator(rng))
    return SimulationResult.from_samples((a + x / mu) / parts)
