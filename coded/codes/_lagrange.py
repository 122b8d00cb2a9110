r"""Lagrange coded computing: any polynomial over a dataset, private and verifiable.

Yu, Li, Raviv, Kalan, Soltanolkotabi, Avestimehr (AISTATS 2019). The dataset is
split in ``K`` parts ``X_1..X_K``; ``T`` uniformly random parts ``Z_1..Z_T`` pad it.
With distinct points ``beta_1..beta_{K+T}`` (data) and ``alpha_1..alpha_n``
(workers), the encoding polynomial

.. math:: u(z) = \sum_{j \le K} X_j \ell_j(z) + \sum_{t \le T} Z_t \ell_{K+t}(z)

(``ell_j``: the Lagrange basis on the betas) gives worker ``i`` the part
``u(alpha_i)``. Worker ``i`` returns ``f(u(alpha_i))`` for a polynomial ``f`` of
degree ``deg f``; ``f(u(z))`` has degree ``(K + T - 1) deg f``, so any
``R = (K + T - 1) deg f + 1`` results interpolate it and ``f(X_j) = f(u(beta_j))``.
``S`` stragglers and ``A`` wrong results cost ``S + 2 A`` workers more (the results
are a Reed-Solomon codeword of length ``n`` and dimension ``R``). Over GF(p), any
``T`` workers' parts are uniformly distributed whatever the data (the ``T x T``
matrix ``ell_{K+t}(alpha_i)`` of any ``T`` workers is invertible because the
alphas differ from the betas); over the reals the padding gives no such guarantee.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from coded.codes import _consistency as consistency
from coded.codes import _fields as fields
from coded.errors import DecodingError, InconsistentResultsError
from theory.rng import as_generator
from theory.validation import check_int

__all__ = ["LagrangeCode"]


class LagrangeCode:
    r"""Lagrange coded computing of a polynomial ``f`` of ``K`` parts on ``n`` workers.

    Parameters
    ----------
    n : int
        Workers.
    K : int
        Parts of the dataset.
    degree : int
        Degree of the polynomial ``f`` the workers evaluate (``>= 1``).
    T : int, optional
        Colluding workers who must learn nothing about the data (default 0).
        Over GF(p) only: over the reals random padding hides nothing
        information-theoretically, so ``T > 0`` raises there.
    field : None or int, optional
        A prime ``p`` (exact, private: the default `DEFAULT_PRIME`) or None
        (the reals, with Chebyshev points).

    Raises
    ------
    ValueError
        If ``n`` is below the recovery threshold ``(K + T - 1) degree + 1``,
        ``T > 0`` over the reals, or GF(p) has fewer than ``n + K + T``
        nonzero points.

    Notes
    -----
    ``n >= (K + T - 1) deg f + S + 2 A + 1`` tolerates ``S`` stragglers and
    ``A`` wrong results at once [1]_.

    References
    ----------
    .. [1] Q. Yu, S. Li, N. Raviv, S. M. M. Kalan, M. Soltanolkotabi,
       S. Avestimehr, "Lagrange Coded Computing: Optimal Design for Resiliency,
       Security and Privacy", AISTATS 2019.

    Examples
    --------
    >>> import numpy as np
    >>> code = LagrangeCode(8, K=2, degree=2, T=1, field=65537)
    >>> parts = [np.array([[1, 2], [3, 4]]), np.array([[0, 1], [1, 0]])]
    >>> shares = code.encode(parts, rng=0)
    >>> f = lambda X: X.T @ X  # degree 2
    >>> results = {i: code.evaluate(f, shares[i]) for i in (0, 1, 2, 3, 5, 6, 7)}
    >>> results[3] = (results[3] + 1) % 65537  # worker 4 straggles, worker 3 is wrong
    >>> [part.tolist() for part in code.decode(results, wrong=1)]
    [[[10, 14], [14, 20]], [[1, 0], [0, 1]]]
    """

    def __init__(
        self,
        n: int,
        K: int,
        degree: int,
        *,
        T: int = 0,
        field: fields.FieldLike = fields.DEFAULT_PRIME,
    ) -> None:
        self.n = check_int(n, "n", min_value=1)
        self.K = check_int(K, "K", min_value=1)
        self.degree = check_int(degree, "degree", min_value=1)
        self.T = check_int(T, "T", min_value=0)
        self.p = fields.resolve_prime(field)
        if self.p is None and self.T > 0:
            raise ValueError(
                f"`T` must be 0 over the reals, got T={self.T}: random real padding "
                "does not hide the data information-theoretically; use a prime "
                "`field` for privacy."
            )
        if self.recovery_threshold > self.n:
            raise ValueError(
                f"`n` must be at least the recovery threshold (K + T - 1) degree + 1 "
                f"= {self.recovery_threshold}, got n={self.n}."
            )
        self.betas, self.alphas = self._points()
        self._encoder = _lagrange_matrix(self.alphas, self.betas, self.p)

    @property
    def recovery_threshold(self) -> int:
        """Results that always suffice: ``(K + T - 1) degree + 1``."""
        return (self.K + self.T - 1) * self.degree + 1

    def tolerance(self, wrong: int = 0) -> int:
        """Stragglers tolerated while `wrong` results are corrected: ``n - R - 2 A``."""
        return self.n - self.recovery_threshold - 2 * wrong

    def _points(self) -> tuple[np.ndarray, np.ndarray]:
        count = self.K + self.T
        if self.p is None:
            betas = np.cos(np.pi * (np.arange(count) + 0.5) / count)
            alphas = np.cos(np.pi * np.arange(self.n) / max(self.n - 1, 1))
            return betas, alphas
        fields.check_points(self.n + count, self.p, "n + K + T")
        return np.arange(1, count + 1), np.arange(count + 1, count + self.n + 1)

    def encode(self, parts: Sequence[Any], *, rng: Any = None) -> list[np.ndarray]:
        """Return the ``n`` coded parts ``u(alpha_i)``.

        Parameters
        ----------
        parts : sequence of K arrays of one shape
            The dataset's parts: real, or integers (reduced modulo p) over GF(p).
        rng : None, int or numpy.random.Generator
            Draws the ``T`` padding parts (uniform over GF(p)).

        Returns
        -------
        list of array
            float64, or int64 residues in ``[0, p)``.
        """
        stacked = self._stack(parts)
        if self.T:
            padding = as_generator(rng).integers(
                0, self.p, size=(self.T, *stacked.shape[1:]), dtype=np.int64
            )
            stacked = np.concatenate([stacked, padding])
        flat = stacked.reshape(stacked.shape[0], -1)
        coded = fields.matmul(self._encoder, flat, self.p)
        return [row.reshape(stacked.shape[1:]) for row in coded]

    def _stack(self, parts: Sequence[Any]) -> np.ndarray:
        if isinstance(parts, np.ndarray) or len(parts) != self.K:
            raise ValueError(
                f"`parts` must be a sequence of K={self.K} arrays, got "
                f"{type(parts).__name__} of length {len(parts)}."
            )
        arrays = [np.asarray(part) for part in parts]
        if len({a.shape for a in arrays}) != 1 or arrays[0].size == 0:
            raise ValueError(
                "`parts` must be non-empty arrays of one shape, got shapes "
                f"{[a.shape for a in arrays]}."
            )
        if self.p is None:
            stacked = np.stack(arrays).astype(np.float64)
            if not np.all(np.isfinite(stacked)):
                raise ValueError("`parts` must hold finite numbers (no NaN or inf).")
            return stacked
        if any(a.dtype.kind not in "iu" for a in arrays):
            raise TypeError("`parts` must be integer arrays over GF(p).")
        return np.mod(np.stack(arrays).astype(np.int64), self.p)

    def evaluate(self, f: Callable[[Any], Any], share: np.ndarray) -> np.ndarray:
        """``f(share)`` as a worker computes it: exactly over GF(p), residues out.

        Over GF(p) `f` receives a galois ``FieldArray``, so ``+``, ``*`` and ``@``
        are exact in the field.
        """
        if self.p is None:
            return np.asarray(f(share), dtype=np.float64)
        value = f(fields.galois_field(self.p)(share))
        return np.asarray(value.view(np.ndarray), dtype=np.int64)

    def decode(self, results: Mapping[int, Any], *, wrong: int = 0) -> list[np.ndarray]:
        """Return ``[f(X_1), ..., f(X_K)]`` from the workers' results.

        Parameters
        ----------
        results : mapping of int to array
            Worker -> ``f(u(alpha_i))``; at least ``R + 2 wrong`` of them.
        wrong : int
            Wrong results to correct (GF(p) only): the unique smallest set of at
            most `wrong` workers whose removal makes the rest consistent is left
            out.

        Returns
        -------
        list of array

        Raises
        ------
        DecodingError
            Fewer than ``R + 2 wrong`` results.
        InconsistentResultsError
            More than `wrong` results are wrong (the suspects are named).
        """
        wrong = check_int(wrong, "wrong", min_value=0)
        if wrong and self.p is None:
            raise ValueError(
                "`wrong` > 0 needs a code over GF(p): over the reals the rounding "
                "of a user's f has no bound to check against."
            )
        workers = sorted(
            check_int(w, "worker", min_value=0, max_value=self.n - 1) for w in results
        )
        needed = self.recovery_threshold + 2 * wrong
        if len(workers) < needed:
            raise DecodingError(
                f"need (K + T - 1) degree + 1 + 2 wrong = {needed} results, got "
                f"{len(workers)} (from workers {workers})."
            )
        values = np.stack([self._result(results[w]) for w in workers])
        shape = values.shape[1:]
        flat = values.reshape(len(workers), -1)
        if wrong:
            workers, flat = self._drop_wrong(workers, flat, wrong)
        chosen = workers[: self.recovery_threshold]
        weights = _lagrange_matrix(self.betas[: self.K], self.alphas[chosen], self.p)
        decoded = fields.matmul(weights, flat[: self.recovery_threshold], self.p)
        return [row.reshape(shape) for row in decoded]

    def _result(self, value: Any) -> np.ndarray:
        if fields.is_field_array(value):
            value = value.view(np.ndarray)
        array = np.asarray(value)
        if self.p is None:
            return np.asarray(array, dtype=np.float64)
        return np.mod(array.astype(np.int64), self.p)

    def _drop_wrong(
        self, workers: list[int], flat: np.ndarray, wrong: int
    ) -> tuple[list[int], np.ndarray]:
        generator = fields.vandermonde(
            self.alphas[workers], self.recovery_threshold, self.p
        )
        dropped = consistency.locate(generator, flat, workers, self.p, wrong=wrong)
        if dropped is None:
            raise InconsistentResultsError(
                f"the results of workers {workers} disagree beyond wrong={wrong}: "
                "no polynomial of degree (K + T - 1) degree explains them all.",
                suspect_workers=workers,
            )
        keep = [i for i, w in enumerate(workers) if w not in dropped]
        return [workers[i] for i in keep], flat[keep]

    def __repr__(self) -> str:
        field = "None" if self.p is None else str(self.p)
        return (
            f"LagrangeCode(n={self.n}, K={self.K}, degree={self.degree}, T={self.T}, "
            f"field={field})"
        )


def _lagrange_matrix(
    targets: np.ndarray, nodes: np.ndarray, p: int | None
) -> np.ndarray:
    """``L[i, j] = ell_j(targets[i])``, the Lagrange basis on `nodes` (mod `p`)."""
    if p is None:
        targets = np.asarray(targets, dtype=np.float64)[:, None]
        nodes = np.asarray(nodes, dtype=np.float64)
        out = np.ones((targets.shape[0], nodes.size))
        for j, node in enumerate(nodes):
            others = np.delete(nodes, j)
            out[:, j] = np.prod((targets - others) / (node - others), axis=1)
        return out
    targets = np.asarray(targets, dtype=np.int64) % p
    nodes = np.asarray(nodes, dtype=np.int64) % p
    out = np.ones((targets.size, nodes.size), dtype=np.int64)
    for j, node in enumerate(nodes.tolist()):
        for other in nodes.tolist():
            if other == node:
                continue
            factor = (targets - other) % p * pow(node - other, -1, p) % p
            out[:, j] = out[:, j] * factor % p
    return out
