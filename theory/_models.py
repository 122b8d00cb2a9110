"""Straggler model types: per-worker and per-group shifted-exponential profiles.

A task of ``l`` rows on worker ``i`` lasts ``T_i = c_i + l (a_i + X_i / mu_i)``
seconds with ``X_i ~ Exp(1)`` (docs/theory/model.md, docs/theory/overhead.md):
``c_i`` is the fixed cost of a task (scheduling, transfer, deserialisation; 0 in the
papers' model), ``a_i`` seconds per row (the shift), ``mu_i`` rows per second (the
straggling rate). The simulator, the allocators and the runtime's straggler
injection all read these same objects.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from theory.validation import check_int, check_real, check_real_vector

__all__ = ["GroupProfile", "WorkerProfile"]


def _overhead(c: object, n: int) -> np.ndarray:
    """Return the per-task overhead as a read-only length-`n` vector."""
    values = check_real_vector(c, "c", min_value=0.0)
    if values.shape[0] == n:
        return values
    if np.ndim(c) != 0:
        raise ValueError(
            f"`c` must be a scalar or have length {n}, got length {values.shape[0]}."
        )
    values = np.full(n, values[0])
    values.setflags(write=False)
    return values


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class WorkerProfile:
    r"""Per-worker shifted-exponential parameters with a per-task overhead.

    Parameters
    ----------
    a : array_like, shape (n,)
        Deterministic seconds per row, ``a_i >= 0``.
    mu : array_like, shape (n,)
        Straggling rate in rows per second, ``mu_i > 0``.
    c : float or array_like, shape (n,), optional
        Fixed seconds per task (per batch), ``c_i >= 0``; default 0, the model of
        every paper.

    Notes
    -----
    .. math:: T_i = c_i + l_i (a_i + X_i / \mu_i), \quad X_i \sim \mathrm{Exp}(1)

    Examples
    --------
    >>> p = WorkerProfile.homogeneous(3, a=1.0, mu=2.0)
    >>> p.n, p.a.tolist(), p.mu.tolist(), p.c.tolist()
    (3, [1.0, 1.0, 1.0], [2.0, 2.0, 2.0], [0.0, 0.0, 0.0])
    >>> WorkerProfile(a=[1.0], mu=[2.0], c=0.5).in_seconds(1e-3).c.tolist()
    [0.0005]
    """

    a: np.ndarray
    mu: np.ndarray
    c: np.ndarray | float = 0.0

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
        object.__setattr__(self, "c", _overhead(self.c, a.shape[0]))

    @property
    def n(self) -> int:
        """Number of workers."""
        return int(self.a.shape[0])

    @classmethod
    def homogeneous(
        cls, n: int, *, a: float, mu: float, c: float = 0.0
    ) -> WorkerProfile:
        """Return a profile of `n` identical workers.

        Parameters
        ----------
        n : int
            Number of workers, ``n >= 1``.
        a, mu, c : float
            Shift (seconds per row, ``>= 0``), rate (``> 0``) and per-task
            overhead (seconds, ``>= 0``) of every worker.

        Returns
        -------
        WorkerProfile
        """
        n = check_int(n, "n", min_value=1)
        return cls(a=np.full(n, a, dtype=float), mu=np.full(n, mu, dtype=float), c=c)

    def in_seconds(self, seconds_per_unit: float) -> WorkerProfile:
        """Return the profile with its time unit converted to seconds.

        The one conversion between a model time unit and seconds: a profile
        written in units of `seconds_per_unit` seconds (e.g. the papers'
        dimensionless ``a = 1``) becomes ``a_i s``, ``mu_i / s``, ``c_i s``.

        Parameters
        ----------
        seconds_per_unit : float
            Seconds per model time unit ``s > 0``.

        Returns
        -------
        WorkerProfile
        """
        s = check_real(
            seconds_per_unit, "seconds_per_unit", min_value=0.0, strict_min=True
        )
        return WorkerProfile(a=self.a * s, mu=self.mu / s, c=self.c * s)

    def per_block(self, block_rows: int) -> WorkerProfile:
        """Return the profile of blocks of `block_rows` rows (``v a_i``, ``mu_i / v``).

        Parameters
        ----------
        block_rows : int
            Rows per block ``v >= 1``; a task of ``L`` blocks lasts
            ``c_i + L v (a_i + X_i / mu_i)`` seconds, as one of ``L v`` rows.

        Returns
        -------
        WorkerProfile
        """
        v = check_int(block_rows, "block_rows", min_value=1)
        return WorkerProfile(a=self.a * v, mu=self.mu / v, c=self.c)

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
                if (
                    np.isclose(self.a[i], self.a[j], rtol=rtol, atol=0.0)
                    and np.isclose(self.mu[i], self.mu[j], rtol=rtol, atol=0.0)
                    and np.isclose(self.c[i], self.c[j], rtol=rtol, atol=0.0)
                ):
                    group.append(i)
                    break
            else:
                members.append([i])
        return GroupProfile(
            N=[len(g) for g in members],
            a=[float(self.a[g].mean()) for g in members],
            mu=[float(self.mu[g].mean()) for g in members],
            c=[float(self.c[g].mean()) for g in members],
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
    c : float or array_like, shape (G,), optional
        Per-task overhead of each group in seconds, ``c_j >= 0`` (default 0).

    Examples
    --------
    >>> g = GroupProfile(N=[2, 1], a=[1, 2], mu=[4, 1])
    >>> g.to_workers().a.tolist()
    [1.0, 1.0, 2.0]
    """

    N: np.ndarray
    a: np.ndarray
    mu: np.ndarray
    c: np.ndarray | float = 0.0

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
        object.__setattr__(self, "c", _overhead(self.c, N.shape[0]))

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
        return WorkerProfile(
            a=np.repeat(self.a, counts),
            mu=np.repeat(self.mu, counts),
            c=np.repeat(self.c, counts),
        )

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
        return GroupProfile(
            N=(self.N * s).astype(np.int64), a=self.a, mu=self.mu, c=self.c
        )
