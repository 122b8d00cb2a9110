"""Replication and uncoded execution as codes (stacked identity generators)."""

from __future__ import annotations

import numpy as np

from coded.codes import _fields as fields
from coded.codes._mds import BlockCode
from theory.validation import check_int

__all__ = ["ReplicationCode", "UncodedCode"]


class ReplicationCode(BlockCode):
    r"""r-replication: A in ``n / r`` row blocks, each computed by r workers.

    Worker i holds block ``i mod (n / r)`` (so workers ``0 .. n/r - 1`` hold the
    plain split). The product is decodable once every block has arrived from at
    least one of its replicas.

    Parameters
    ----------
    n : int
        Number of workers.
    r : int
        Replication factor, ``1 <= r <= n`` and r divides n.
    field : None, int or galois field class, optional
        As in :class:`MDSCode` (replication copies, so it only sets the semantics).

    Notes
    -----
    The generator is ``G[i] = e_{i mod (n/r)}`` (stacked identities). Any
    ``n - r + 1`` results cover every block, so that is the recovery threshold.
    Expected latency under the shifted-exponential model ([1]_):
    :math:`\frac{r}{n}(a + H_{n/r} / (r\mu))`.

    References
    ----------
    .. [1] K. Lee et al., "Speeding Up Distributed Machine Learning Using Codes",
       IEEE Trans. Inf. Theory 64(3), 2018.

    Examples
    --------
    >>> import numpy as np
    >>> code = ReplicationCode(4, 2)
    >>> X = np.arange(8.0).reshape(4, 2)
    >>> shares = code.encode(X)
    >>> code.is_decodable([0, 3]), code.is_decodable([0, 2])
    (True, False)
    >>> np.allclose(code.decode({0: shares[0], 3: shares[3]}), X)
    True
    """

    _threshold_name = "n/r"
    _unit_name = "distinct blocks"

    def __init__(self, n: int, r: int, field: fields.FieldLike = None):
        n = check_int(n, "n", min_value=1)
        r = check_int(r, "r", min_value=1, max_value=n)
        if n % r:
            raise ValueError(f"`r` must divide `n`, got r={r}, n={n}.")
        p = fields.resolve_prime(field)
        self.r = r
        parts = n // r
        G = np.eye(parts)[np.arange(n) % parts]
        self._setup(n, G, p, [1] * n)

    @property
    def recovery_threshold(self) -> int:
        """``n - r + 1``: any that many results cover every block."""
        return self.n - self.r + 1

    def __repr__(self) -> str:
        return f"ReplicationCode(n={self.n}, r={self.r}, field={self._p})"


class UncodedCode(BlockCode):
    """Uncoded execution: A in n row blocks, one per worker; all n must answer.

    Parameters
    ----------
    n : int
        Number of workers.
    field : None, int or galois field class, optional
        As in :class:`MDSCode`.

    Examples
    --------
    >>> import numpy as np
    >>> code = UncodedCode(2)
    >>> shares = code.encode(np.eye(2))
    >>> code.decode({0: shares[0], 1: shares[1]}).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """

    _threshold_name = "n"

    def __init__(self, n: int, field: fields.FieldLike = None):
        n = check_int(n, "n", min_value=1)
        p = fields.resolve_prime(field)
        self._setup(n, np.eye(n), p, [1] * n)

    @property
    def recovery_threshold(self) -> int:
        """``n``: every worker must answer."""
        return self.n

    def __repr__(self) -> str:
        return f"UncodedCode(n={self.n}, field={self._p})"
