"""Straggler model types: per-worker and per-group shifted-exponential profiles.

Worker ``i`` given ``l_i`` rows finishes at ``T_i = l_i (a_i + X_i / mu_i)`` with
``X_i ~ Exp(1)`` (docs/theory/model.md): ``a_i`` is seconds per row (the shift),
``mu_i`` rows per second (the straggling rate). The simulator, the allocators and the
runtime's straggler injection all read these same objects.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from theory._validation import check_int, check_real_vector

__all__ = ["GroupProfile", "WorkerProfile"]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class WorkerProfile:
    r"""Per-worker shifted-exponential parameters.

    Parameters
    ----------
    a : array_like, shape (n,)
        Deterministic seconds per row, ``a_i >= 0``.
    mu : array_like, shape (n,)
        Straggling rate in rows per second, ``mu_i > 0``.

    Notes
    -----
    .. math:: T_i = l_i (a_i + X_i / \mu_i), \quad X_i \sim \mathrm{Exp}(1)

    Examples
    --------
    >>> p = WorkerProfile.homogeneous(3, a=1.0, mu=2.0)
    >>> p.n, p.a.tolist(), p.mu.tolist()
    (3, [1.0, 1.0, 1.0], [2.0, 2.0, 2.0])
    """

    a: np.ndarray
    mu: np.ndarray

    def __post_init__(self) -> None:
        a = check_real_vector(self.a, "a", min_value=0.0)
        mu = check_real_vector(self.mu, "mu", min_value=0.0, strict_min=True)
        if a.shape != mu.shape:
            raise ValueError(
                f"`a` and `mu` must have the same length, got {a.shape[0]} and "
                f"{mu.shape[0]}."
            )
        if a.shape[0] == 0:
            raise ValueError("a profile needs at least one worker, got n=0.")
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "mu", mu)

    @property
    def n(self) -> int:
        """Number of workers."""
        return int(self.a.shape[0])

    @classmethod
    def homogeneous(cls, n: int, *, a: float, mu: float) -> WorkerProfile:
        """Return a profile of `n` identical workers.

        Parameters
        ----------
        n : int
            Number of workers, ``n >= 1``.
        a, mu : float
            Shift (seconds per row, ``>= 0``) and rate (``> 0``) of every worker.

        Returns
        -------
        WorkerProfile
        """
        n = check_int(n, "n", min_value=1)
        return cls(a=np.full(n, a, dtype=float), mu=np.full(n, mu, dtype=float))

    def to_groups(self, *, rtol: float = 0.0) -> GroupProfile:
        """Group workers whose ``(a, mu)`` agree within relative tolerance `rtol`.

        Parameters
        ----------
        rtol : float
            Relative tolerance; ``0`` groups only exact matches. A group's
            parameters are the means of its members'.

        Returns
        -------
        GroupProfile
            Groups in order of first appearance.

        Examples
        --------
        >>> WorkerProfile(a=[1, 1, 2], mu=[4, 4, 1]).to_groups().N.tolist()
        [2.0, 1.0]
        """
        members: list[list[int]] = []
        for i in range(self.n):
            for group in members:
                j = group[0]
                if np.isclose(self.a[i], self.a[j], rtol=rtol, atol=0.0) and (
                    np.isclose(self.mu[i], self.mu[j], rtol=rtol, atol=0.0)
                ):
                    group.append(i)
                    break
            else:
                members.append([i])
        return GroupProfile(
            N=[len(g) for g in members],
            a=[float(self.a[g].mean()) for g in members],
            mu=[float(self.mu[g].mean()) for g in members],
        )


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class GroupProfile:
    """Groups of identical shifted-exponential workers (Kim et al. 2020).

    Parameters
    ----------
    N : array_like of int, shape (G,)
        Workers per group, ``N_j >= 1``.
    a : array_like, shape (G,)
        Seconds per row of each group, ``a_j >= 0``.
    mu : array_like, shape (G,)
        Straggling rate of each group, ``mu_j > 0``.

    Examples
    --------
    >>> g = GroupProfile(N=[2, 1], a=[1, 2], mu=[4, 1])
    >>> g.to_workers().a.tolist()
    [1.0, 1.0, 2.0]
    """

    N: np.ndarray
    a: np.ndarray
    mu: np.ndarray

    def __post_init__(self) -> None:
        counts = np.asarray(self.N)
        if counts.dtype.kind == "f" and np.all(counts == np.round(counts)):
            counts = counts.astype(np.int64)
        if counts.dtype.kind not in "iu":
            raise TypeError(f"`N` must hold integers, got dtype {counts.dtype}.")
        N = check_real_vector(counts, "N", min_value=1)
        a = check_real_vector(self.a, "a", min_value=0.0, length=N.shape[0])
        mu = check_real_vector(
            self.mu, "mu", min_value=0.0, strict_min=True, length=N.shape[0]
        )
        object.__setattr__(self, "N", N)
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "mu", mu)

    @property
    def n(self) -> int:
        """Total number of workers, ``sum_j N_j``."""
        return int(self.N.sum())

    @property
    def num_groups(self) -> int:
        """Number of groups ``G``."""
        return int(self.N.shape[0])

    def to_workers(self) -> WorkerProfile:
        """Expand to one entry per worker (group order kept).

        Returns
        -------
        WorkerProfile
        """
        counts = self.N.astype(np.int64)
        return WorkerProfile(a=np.repeat(self.a, counts), mu=np.repeat(self.mu, counts))

    def scaled(self, s: int) -> GroupProfile:
        """Return the profile with every group ``s`` times larger.

        Parameters
        ----------
        s : int
            Scale factor, ``s >= 1``.

        Returns
        -------
        GroupProfile
        """
        s = check_int(s, "s", min_value=1)
        return GroupProfile(N=(self.N * s).astype(np.int64), a=self.a, mu=self.mu)
