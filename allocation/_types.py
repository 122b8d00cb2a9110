"""The frozen result every allocation solver returns."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

from theory.validation import check_int, check_real, check_real_vector

__all__ = ["Allocation", "CallCosts"]


def _int_vector(values: object, name: str, *, min_value: int) -> np.ndarray:
    array = np.array(values)
    if array.dtype.kind == "f" and np.all(array == np.round(array)):
        array = array.astype(np.int64)
    if array.dtype.kind not in "iu" or array.ndim != 1:
        raise TypeError(
            f"`{name}` must be a 1-D array of integers, got dtype {array.dtype} "
            f"and shape {array.shape}."
        )
    if np.any(array < min_value):
        raise ValueError(
            f"`{name}` entries must be >= {min_value}, got {array.tolist()}."
        )
    array = array.astype(np.int64)
    array.setflags(write=False)
    return array


@dataclass(frozen=True, slots=True, kw_only=True)
class CallCosts:
    r"""What a one-shot call costs besides its tasks' expected latency.

    A fresh ``coded_matmul(A, x, allocation=...)`` of an ``m x d`` A with ``N``
    coded rows takes, besides ``E[T]``
    (docs/theory/overhead.md#the-whole-call),

    .. math:: C + \frac{F}{R} + \frac{N d}{W}
              + [\text{checked}] \frac{N d}{Q}

    with ``F`` the flops of the parity product; a term whose rate is 0
    (unknown) is left out. `coded.profile_workers` measures all four.

    Parameters
    ----------
    call_seconds : float
        ``C``: the fixed seconds of a call besides its tasks (graph submission,
        dispatch, gather, decode, release), ``>= 0`` (default 0: unknown).
    call_se : float
        Standard error of `call_seconds`, ``>= 0``.
    encode_flops_per_second : float
        ``R``: the client's rate at the parity product (flops per second).
    encode_entries_per_second : float
        ``W``: the client's rate at the rest of encoding, in coded entries per
        second: the systematic ones are A's own rows, validated and read; the
        parity ones are allocated, written and checked.
    check_entries_per_second : float
        ``Q``: the client's rate at drawing the Freivalds checks of the coded
        shares (entries of the shares per second).

    Examples
    --------
    >>> costs = CallCosts(call_seconds=0.5, encode_flops_per_second=10.0)
    >>> costs.seconds(flops=30.0, coded_entries=100, checked=False)
    3.5
    """

    call_seconds: float = 0.0
    call_se: float = 0.0
    encode_flops_per_second: float = 0.0
    encode_entries_per_second: float = 0.0
    check_entries_per_second: float = 0.0

    def __post_init__(self) -> None:
        for cost in fields(self):
            value = check_real(getattr(self, cost.name), cost.name, min_value=0.0)
            object.__setattr__(self, cost.name, value)

    def seconds(self, *, flops: float, coded_entries: int, checked: bool) -> float:
        """Seconds of a call's client work: ``C + F / R + N d / W [+ N d / Q]``.

        Parameters
        ----------
        flops : float
            ``F``, the flops of the parity product.
        coded_entries : int
            Entries of the coded shares, ``N d``.
        checked : bool
            The call draws the Freivalds checks of its shares.

        Returns
        -------
        float
        """
        seconds = self.call_seconds
        for work, rate in (
            (flops, self.encode_flops_per_second),
            (coded_entries, self.encode_entries_per_second),
            (coded_entries if checked else 0, self.check_entries_per_second),
        ):
            if rate > 0.0:
                seconds += work / rate
        return seconds


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Allocation:
    """Integer coded rows (and batches) per worker, chosen by a solver.

    The code is one row-MDS code over blocks of ``block_rows`` rows
    (`coded.RowMDSCode`): A's ``m`` rows form ``u = ceil(m / block_rows)``
    source blocks, worker ``i`` computes ``loads[i]`` coded rows (whole blocks)
    in ``batches[i]`` equal batches of ``loads[i] // batches[i]`` rows (whole
    blocks too) and returns each batch as soon as it is done; any ``u`` returned
    blocks decode (``block_rows = 1``: any ``m`` rows).

    Parameters
    ----------
    loads : array_like of int, shape (n,)
        Coded rows per worker, ``>= 0`` (0: worker unused), ``sum >= m``.
    batches : array_like of int, shape (n,)
        Batches per worker, ``>= 1`` (1: no batching); ``loads % batches == 0``.
    m : int
        Rows of A, ``>= 1``.
    expected_latency : float
        Predicted ``E[T]`` in seconds (the profile's unit; see each solver).
    solver : str
        Name of the solver that produced it.
    overhead : array_like of float, shape (n,), optional
        Per-task (per-batch) overhead ``c_i >= 0`` in seconds assumed by the
        prediction (default zeros).
    block_rows : int
        Rows per coded block, ``>= 1`` (default 1); loads and batch sizes are
        multiples of it.
    costs : CallCosts
        What a whole call costs the client besides ``E[T]`` (default: all
        unknown, 0); a solver takes them from a `ProfileFit`
        (docs/theory/overhead.md#the-whole-call).

    Raises
    ------
    ValueError
        If the shapes disagree, a load does not split into whole batches of
        whole blocks, or the loads hold fewer than ``u`` blocks.

    Examples
    --------
    >>> alloc = Allocation(loads=[4, 2], batches=[2, 1], m=5,
    ...                    expected_latency=1.0, solver="manual")
    >>> alloc.n, alloc.total_rows, alloc.batch_rows.tolist()
    (2, 6, [2, 2])
    >>> big = Allocation(loads=[600, 300], batches=[2, 1], m=500, block_rows=100,
    ...                  expected_latency=1.0, solver="manual")
    >>> big.blocks, big.batch_rows.tolist()
    (5, [300, 300])
    """

    loads: np.ndarray
    batches: np.ndarray
    m: int
    expected_latency: float
    solver: str
    overhead: np.ndarray | None = None
    block_rows: int = 1
    costs: CallCosts = field(default_factory=CallCosts)

    def __post_init__(self) -> None:
        loads = _int_vector(self.loads, "loads", min_value=0)
        batches = _int_vector(self.batches, "batches", min_value=1)
        n = loads.shape[0]
        if batches.shape != (n,):
            raise ValueError(
                f"`batches` must have length {n} like `loads`, got {batches.shape[0]}."
            )
        if n == 0:
            raise ValueError("an allocation needs at least one worker, got n=0.")
        v = check_int(self.block_rows, "block_rows", min_value=1)
        if np.any(loads % v):
            raise ValueError(
                f"every load must be whole blocks of block_rows={v} rows, got "
                f"loads={loads.tolist()}."
            )
        if np.any((loads // v) % batches):
            raise ValueError(
                "every load must split into whole batches (loads % batches == 0)"
                + (f" of whole blocks of {v} rows" if v > 1 else "")
                + f", got loads={loads.tolist()}, batches={batches.tolist()}."
            )
        m = check_int(self.m, "m", min_value=1)
        u = -(-m // v)
        if loads.sum() < u * v:
            raise ValueError(
                f"`loads` must hold at least m={m} rows"
                + (f" (u={u} blocks of {v} rows)" if v > 1 else "")
                + f", got sum(loads)={int(loads.sum())}."
            )
        overhead = (
            np.zeros(n)
            if self.overhead is None
            else check_real_vector(self.overhead, "overhead", min_value=0.0, length=n)
        )
        overhead = np.array(overhead)
        overhead.setflags(write=False)
        if not isinstance(self.solver, str):
            raise TypeError(
                f"`solver` must be a str, got {type(self.solver).__name__}."
            )
        latency = check_real(self.expected_latency, "expected_latency", min_value=0.0)
        if not isinstance(self.costs, CallCosts):
            raise TypeError(
                f"`costs` must be a CallCosts, got {type(self.costs).__name__}."
            )
        object.__setattr__(self, "loads", loads)
        object.__setattr__(self, "batches", batches)
        object.__setattr__(self, "m", m)
        object.__setattr__(self, "block_rows", v)
        object.__setattr__(self, "overhead", overhead)
        object.__setattr__(self, "expected_latency", latency)

    @property
    def n(self) -> int:
        """Number of workers."""
        return int(self.loads.shape[0])

    @property
    def total_rows(self) -> int:
        """Coded rows in total, ``sum(loads)`` (the code length)."""
        return int(self.loads.sum())

    @property
    def blocks(self) -> int:
        """``u = ceil(m / block_rows)``: source blocks, any u coded blocks decode."""
        return -(-self.m // self.block_rows)

    @property
    def batch_rows(self) -> np.ndarray:
        """Rows per batch of each worker, ``loads // batches``."""
        return self.loads // self.batches

    def encode_flops(self, columns: int) -> float:
        """Flops of encoding an ``m x columns`` A: ``2 (N_u - u) u v columns``.

        ``N_u`` coded blocks of ``v = block_rows`` rows, ``u`` source blocks;
        the systematic blocks are A's own (docs/theory/overhead.md).

        Parameters
        ----------
        columns : int
            Columns of A, ``>= 1``.

        Returns
        -------
        float
        """
        columns = check_int(columns, "columns", min_value=1)
        u, v = self.blocks, self.block_rows
        parity = max(self.total_rows // v - u, 0)
        return 2.0 * parity * u * v * columns

    def predicted_call_seconds(self, columns: int, *, checked: bool = False) -> float:
        """Predicted seconds of a whole one-shot call on an ``m x columns`` A.

        ``expected_latency`` plus `costs` (:meth:`CallCosts.seconds`) of the
        encoding flops and the ``total_rows columns`` coded entries, checked
        or not (``verify`` on or off)
        (docs/theory/overhead.md#the-whole-call).

        Parameters
        ----------
        columns : int
            Columns of A, ``>= 1``.
        checked : bool
            The call draws Freivalds checks of its shares (``verify`` on).

        Returns
        -------
        float

        Examples
        --------
        >>> costs = CallCosts(call_seconds=0.5, encode_flops_per_second=10.0)
        >>> alloc = Allocation(loads=[4, 2], batches=[2, 1], m=5,
        ...                    expected_latency=1.0, solver="manual", costs=costs)
        >>> alloc.encode_flops(3), alloc.predicted_call_seconds(3)
        (30.0, 4.5)
        """
        return self.expected_latency + self.costs.seconds(
            flops=self.encode_flops(columns),
            coded_entries=self.total_rows * columns,
            checked=checked,
        )
