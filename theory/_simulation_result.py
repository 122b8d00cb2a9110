"""The summary every Monte Carlo simulator in `theory` returns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from theory.validation import check_int, check_real, check_real_vector

__all__ = ["SimulationResult"]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class SimulationResult:
    r"""Mean, standard error and quantiles of simulated latencies.

    Parameters
    ----------
    mean : float
        Sample mean of the latencies.
    stderr : float
        Standard error of the mean, ``std(ddof=1) / sqrt(trials)`` (0 for one
        trial).
    quantiles : Mapping[float, float]
        Empirical quantile of the latency for each probability in ``[0, 1]``
        (stored as a read-only mapping).
    trials : int
        Number of simulated jobs, ``>= 1``.

    Notes
    -----
    A closed form :math:`\mu` agrees with a simulation when
    :math:`|\text{mean} - \mu| \le 5\,\text{stderr}` (the test-suite criterion).

    Examples
    --------
    >>> r = SimulationResult.from_samples([1.0, 2.0, 3.0])
    >>> r.mean, r.trials, r.quantiles[0.5]
    (2.0, 3, 2.0)
    """

    mean: float
    stderr: float
    quantiles: Mapping[float, float]
    trials: int

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "trials", check_int(self.trials, "trials", min_value=1)
        )
        object.__setattr__(self, "mean", check_real(self.mean, "mean"))
        object.__setattr__(
            self, "stderr", check_real(self.stderr, "stderr", min_value=0.0)
        )
        probs = check_real_vector(list(self.quantiles), "quantiles", min_value=0.0)
        if np.any(probs > 1.0):
            raise ValueError(
                f"`quantiles` keys must lie in [0, 1], got {probs.tolist()}."
            )
        values = {
            float(q): check_real(v, "quantiles") for q, v in self.quantiles.items()
        }
        object.__setattr__(self, "quantiles", MappingProxyType(values))

    @classmethod
    def from_samples(
        cls,
        samples: np.ndarray | Sequence[float],
        quantiles: Sequence[float] = (0.5, 0.9, 0.99),
    ) -> SimulationResult:
        """Summarise a 1-D array of simulated latencies.

        Parameters
        ----------
        samples : array_like, shape (trials,)
            One latency per simulated job, finite.
        quantiles : sequence of float
            Probabilities in ``[0, 1]`` at which to report empirical quantiles.

        Returns
        -------
        SimulationResult

        Raises
        ------
        ValueError
            If `samples` is empty or not finite, or a probability is outside
            ``[0, 1]``.

        Examples
        --------
        >>> SimulationResult.from_samples([2.0, 4.0]).stderr
        1.0
        """
        x = check_real_vector(samples, "samples")
        if x.shape[0] == 0:
            raise ValueError("`samples` must hold at least one latency, got 0.")
        probs = check_real_vector(list(quantiles), "quantiles", min_value=0.0)
        if np.any(probs > 1.0):
            raise ValueError(f"`quantiles` must lie in [0, 1], got {probs.tolist()}.")
        trials = x.shape[0]
        stderr = float(x.std(ddof=1) / np.sqrt(trials)) if trials > 1 else 0.0
        values = np.quantile(x, probs) if probs.size else np.empty(0)
        return cls(
            mean=float(x.mean()),
            stderr=stderr,
            quantiles=dict(zip(probs.tolist(), values.tolist(), strict=True)),
            trials=trials,
        )
