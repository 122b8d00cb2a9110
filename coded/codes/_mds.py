r"""MDS codes over the reals and GF(p): equal blocks (``MDSCode``) and unequal loads.

Both are row codes on the shared unit machinery of ``_units.py``: ``MDSCode(n, k)``
encodes k row blocks of A into n coded blocks (one per worker); ``RowMDSCode`` encodes
u blocks of ``block_rows`` rows of A into ``N_u`` coded blocks and gives worker i
``loads[i]`` consecutive coded rows (a whole number of blocks).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from coded.codes import _fields as fields
from coded.codes import _generators as generators
from coded.codes._base import EncodedOperands
from coded.codes._units import (
    MAX_CONDITION,
    UnitCode,
    UnitContext,
    check_max_condition,
)
from theory.rng import RngLike
from theory.validation import check_int, check_k_of_n

__all__ = ["BlockCode", "MDSCode", "RowMDSCode"]


def _check_systematic(systematic: object, default: bool) -> bool:
    if systematic is None:
        return default
    if not isinstance(systematic, bool | np.bool_):
        raise TypeError(
            f"`systematic` must be a bool or None, got {type(systematic).__name__}."
        )
    return bool(systematic)


def _read_only(array: np.ndarray) -> np.ndarray:
    """Return a read-only view of `array` (the caller's array stays writable)."""
    view = array.view()
    view.setflags(write=False)
    return view


class BlockCode(UnitCode):
    """Row code with one coded block per worker (MDS, replication, uncoded).

    ``encode_operands`` pads the m rows of A with zero rows up to ``K * ceil(m / K)``
    (``K`` = number of source blocks; only the last blocks are copied to pad them);
    the decoder drops the padding. Blocks that a worker gets uncoded are read-only
    views of A (no copy when A is already a C-contiguous float64 or float32 array,
    or int64 residues over GF(p)). Real operands that are both float32 stay float32
    in the shares and worker products; decoding is float64, the product float32.
    """

    def encode_operands(self, A: Any, B: Any) -> EncodedOperands:
        """Encode ``A @ B``: worker i gets coded block i of A and the shared B.

        Parameters
        ----------
        A : array_like or scipy.sparse matrix, shape (m, d)
            Left operand (any m: padded internally to a multiple of the blocks).
            A sparse A (CSR, CSC or COO, over the reals) is taken by the codes
            whose workers hold source blocks (replication, uncoded): their
            shares are CSR row blocks of it.
        B : array_like, shape (d, c) or (d,)
            Right operand, shared by every worker (vector in, vector out).

        Returns
        -------
        EncodedOperands
            ``lefts[i]`` has shape ``(ceil(m / K), d)``; ``rights`` is None.
        """
        sparse = fields.as_csr(A)
        if sparse is not None:
            return self._encode_sparse(sparse, B)
        return self._encode(fields.prepare_operands(A, B, self._p))

    def _encode_sparse(self, A: Any, B: Any) -> EncodedOperands:
        """Shares of a CSR A: each worker's source blocks, stacked (still CSR)."""
        import scipy.sparse

        if self._p is not None:
            raise TypeError(
                "`A` is a scipy.sparse matrix, taken over the reals only; pass "
                "`A.toarray()` for a code over GF(p)."
            )
        if (self._unit_source < 0).any():
            raise TypeError(
                f"`A` is a scipy.sparse matrix; {type(self).__name__}'s coded blocks "
                "are sums of A's blocks, dense in general: use scheme='rateless' "
                "(LTCode, whose shares stay sparse), replication or uncoded, or "
                "pass `A.toarray()`."
            )
        if 0 in A.shape:
            raise ValueError(f"`A` must be non-empty, got shape {A.shape}.")
        dense = fields.prepare_operands(np.zeros((1, A.shape[1])), B, None)
        ops = fields.Operands(
            A=A, B=dense.B, is_vector=dense.is_vector, output=dense.output
        )
        m, K = A.shape[0], self._G.shape[1]
        rows = -(-m // K)
        padding = scipy.sparse.csr_array((K * rows - m, A.shape[1]))
        padded = scipy.sparse.vstack([A, padding], format="csr")
        blocks = [padded[s * rows : (s + 1) * rows] for s in range(K)]
        lefts = tuple(
            scipy.sparse.vstack(
                [blocks[s] for s in self._unit_source[a:b]], format="csr"
            )
            for a, b in itertools.pairwise(self._offsets)
        )
        return EncodedOperands(
            lefts=lefts,
            rights=None,
            shared_right=_read_only(ops.B),
            context=self._row_context(ops, lefts, m=m, rows=rows),
        )

    def _encode(self, ops: fields.Operands) -> EncodedOperands:
        m = ops.A.shape[0]
        rows = -(-m // self._G.shape[1])
        lefts = self._encode_workers(ops.A, rows)
        return EncodedOperands(
            lefts=lefts,
            rights=None,
            shared_right=_read_only(ops.B),
            context=self._row_context(ops, lefts, m=m, rows=rows),
        )

    def _assemble(self, sources: np.ndarray, context: UnitContext) -> np.ndarray:
        return sources.reshape(-1, context.width)[: context.m]

    def _blocks_name(self) -> str:
        """Name the number of source blocks K for error messages."""
        return f"{self._threshold_name}={self._G.shape[1]}"

    def encode(self, X: Any) -> list[Any]:
        """Split X into K row blocks and return the n coded shares.

        Parameters
        ----------
        X : array_like, shape (m, d)
            Real matrix, or over GF(p) a FieldArray or an integer matrix; ``m`` must
            be divisible by the number of source blocks ``K`` (``ell k`` for an MDS
            code whose workers hold ``ell`` sub-blocks; use ``encode_operands``,
            which pads, otherwise).

        Returns
        -------
        list of array, length n
            Share ``i``, shape ``(load_i m / K, d)`` (``load_i`` = blocks of worker
            i): float64 (float32 for a float32 X), a FieldArray, or int64
            residues in ``[0, p)`` for integer X (``share @ Y`` in int64 is fine
            while ``d (p - 1) max|Y|`` fits; otherwise use :attr:`multiply`).
            Arrays are read-only; an uncoded share of a float X is a view of it.
        """
        array, output = fields.prepare_single(X, self._p)
        m, K = array.shape[0], self._G.shape[1]
        if m % K:
            raise ValueError(
                f"`X` must have a number of rows divisible by {self._blocks_name()}, "
                f"got X.shape={array.shape}."
            )
        units = self._encode_workers(array, m // K)
        return [fields.as_output(unit, output, self._p) for unit in units]

    def decode(self, results: Mapping[int, Any]) -> Any:
        """Return ``X @ Y`` from results ``{i: share_i @ Y}`` of enough workers.

        Parameters
        ----------
        results : mapping of int to array
            Worker index to its share times Y (shape ``(m / K, c)`` or
            ``(m / K,)``). Over GF(p), integer results may be any integers
            congruent to the product modulo p.

        Returns
        -------
        array
            ``X @ Y``: float64 (float32 for float32 results, decoded in float64),
            a FieldArray (FieldArray results), or int64 signed
            integers (integer results; exact when ``2 max|X @ Y| < p``).

        Raises
        ------
        DecodingError
            If the results do not determine the product (e.g. fewer than k).
        """
        return self._decode_mapping(results)


class MDSCode(BlockCode):
    r"""(n, k) MDS code: any k of the n coded shares decode, over the reals or GF(p).

    A (shape ``(m, d)``) is split into ``K = ell k`` row blocks ``A_0..A_{K-1}``;
    worker i gets the ``ell`` coded blocks ``sum_j G[ell i + r, j] A_j``,
    ``r < ell``, stacked, and returns them times B. ``ell`` (``subblocks``) is
    1 except for the complex-frame and rotation constructions over the reals
    (``ell = 2``: the real embedding of a complex code).

    Parameters
    ----------
    n : int
        Number of workers.
    k : int
        Recovery threshold, ``1 <= k <= n``.
    field : None, int or galois field class, optional
        ``None`` (default): real numbers. A prime ``p <= 2^31 - 1`` (e.g.
        ``DEFAULT_PRIME = 65537``) or ``galois.GF(p)``: exact arithmetic over GF(p),
        ``n <= p - 1``.
    systematic : bool, optional
        ``True``: a systematic generator ``[I_k; P]`` (the first k workers hold the
        plain blocks, so no decoding work when they answer). ``False``: the
        stability-optimised generator (over the reals the one with the smallest
        certified worst-case condition number we have). Default: ``False`` over
        the reals, ``True`` over GF(p) (where conditioning does not matter).
    max_condition : float, optional
        The decoder's guard over the reals (default 1e6, ``inf`` turns it off): a
        survivor set whose system has a larger condition number waits for extra
        results and decodes by least squares over all of them; if none arrives,
        it decodes and warns (`IllConditionedWarning`, carrying the value).

    Raises
    ------
    ValueError
        ``k > n``, p not prime or too large, ``n > p - 1``, ``max_condition <= 1``.

    Notes
    -----
    Decoding from the workers S solves

    .. math:: G_S \, Y = R_S, \qquad G_S \in \mathbb{R}^{\ell k \times \ell k},

    rows of ``G_S`` that are unit vectors are copied, and only the remaining
    blocks are solved (over the reals with the inverse of their system, applied
    to the results in one product). Over the reals the error of the decoded product is
    amplified by up to ``cond(G_S)``, so the figure of merit is the worst case
    over all ``C(n, k)`` survivor sets, certified by
    :meth:`worst_condition_number` (exact up to 2e6 survivor sets, otherwise a
    flagged lower bound). Constructions, certified figures and proofs are in
    ``docs/theory/conditioning.md``; in short, with ``s = n - k``:

    - ``s = 1``: the orthonormal complement of the all-ones vector, worst case
      ``sqrt(n)`` (optimal among orthonormal generators);
    - ``s >= 2``: a *complex frame* code (``ell = 2``), the real embedding of a
      complex code whose dual frame (an ``n x s`` complex matrix H) was optimised
      offline (``scripts/search_frames.py``) so that every ``s x s`` submatrix is
      well conditioned: 16.3 at (30, 28), 43.6 at (20, 16) and 89 at (50, 47),
      where the rotation-matrix embedding of [1]_ gives 52, 463 and 1340;
    - where no stored construction exists, the rotation-matrix embedding itself.

    Pick ``systematic=True`` when the first k workers usually answer first and a
    zero-cost decode matters more than the worst case.

    *GF(p) generators* are exact and MDS for every ``(n, k)``: a Vandermonde matrix
    on the points ``1..n`` or, systematic, ``[I_k; C]`` with a Cauchy block
    ``C[i, j] = 1 / (x_i - y_j)`` (identity on top of a Vandermonde block would not
    be MDS in general). Integer (non-FieldArray) inputs are exact signed integers.

    References
    ----------
    .. [1] A. Ramamoorthy, L. Tang, "Numerically Stable Coded Matrix Computations
       via Circulant and Rotation Matrix Embeddings", IEEE Trans. Inf. Theory
       68(4), 2022.
    .. [2] K. Lee, M. Lam, R. Pedarsani, D. Papailiopoulos, K. Ramchandran,
       "Speeding Up Distributed Machine Learning Using Codes", IEEE Trans. Inf.
       Theory 64(3), 2018.

    Examples
    --------
    >>> import numpy as np
    >>> code = MDSCode(5, 3)
    >>> code.subblocks, code.generator.shape
    (2, (10, 6))
    >>> X, Y = np.arange(12.0).reshape(6, 2), np.ones((2, 1))
    >>> shares = code.encode(X)
    >>> C = code.decode({i: shares[i] @ Y for i in (0, 3, 4)})
    >>> np.allclose(C, X @ Y)
    True
    >>> exact = MDSCode(5, 3, field=65537)
    >>> shares = exact.encode(np.array([[1, -2], [3, 4], [-5, 6]]))
    >>> exact.decode({i: shares[i] @ np.array([1, 1]) for i in (1, 2, 4)}).tolist()
    [-1, 7, 1]
    """

    def __init__(
        self,
        n: int,
        k: int,
        field: fields.FieldLike = None,
        *,
        systematic: bool | None = None,
        max_condition: float = MAX_CONDITION,
    ):
        k, n = check_k_of_n(k, n)
        self._max_condition = check_max_condition(max_condition)
        p = fields.resolve_prime(field)
        fields.check_points(n, p)
        self.k = k
        self.systematic = _check_systematic(systematic, default=p is not None)
        if p is None:
            block = generators.block_generator(n, k, systematic=self.systematic)
            G, self.subblocks = block.G, block.ell
            self.construction = block.construction
        else:
            G = generators.gf_generator(n, k, p, systematic=self.systematic)
            self.subblocks = 1
            self.construction = "cauchy" if self.systematic else "vandermonde"
        self._units_per_result = self.subblocks
        self._setup(n, G, p, [self.subblocks] * n)

    @property
    def recovery_threshold(self) -> int:
        """``k``: any k whole results decode."""
        return self.k

    def _blocks_name(self) -> str:
        if self.subblocks == 1:
            return super()._blocks_name()
        return f"{self.subblocks}k={self._G.shape[1]} (k={self.k} workers' blocks)"

    def worst_condition_number(
        self,
        *,
        exact_limit: int = generators.EXACT_LIMIT,
        samples: int = 20_000,
        starts: int = 8,
        rng: RngLike = 0,
    ) -> generators.WorstCondition:
        """Worst ``cond(G_S)`` over the survivor sets S of k workers, certified.

        Exact over all ``C(n, k)`` survivor sets when there are at most
        `exact_limit` of them; otherwise a lower bound found by adversarial search
        (the `starts` worst of `samples` random sets, each improved by swap-one
        local search), flagged ``exact=False`` in the result.

        Parameters
        ----------
        exact_limit : int
            Largest number of survivor sets enumerated (default 2e6).
        samples, starts : int
            Adversarial search when not exact.
        rng : Generator, int or None
            Seed of the sampling.

        Returns
        -------
        WorstCondition
            ``value``, ``exact``, a worst survivor set ``survivors`` and the count
            ``evaluated``; ``float(result)`` is the value.

        Examples
        --------
        >>> w = MDSCode(30, 28).worst_condition_number()
        >>> w.exact, w.value < 26
        (True, True)
        """
        if self._p is not None:
            raise ValueError(
                "`worst_condition_number` is defined for real codes (field=None), "
                f"got a code over GF({self._p})."
            )
        return generators.worst_condition_number(
            self._G,
            ell=self.subblocks,
            exact_limit=exact_limit,
            samples=samples,
            starts=starts,
            rng=rng,
        )

    def __repr__(self) -> str:
        return (
            f"MDSCode(n={self.n}, k={self.k}, field={self._p}, "
            f"systematic={self.systematic})"
        )


class RowMDSCode(UnitCode):
    r"""MDS code over blocks of rows for unequal loads: any ``u`` coded blocks decode.

    The m rows of A are split into ``u = ceil(m / block_rows)`` blocks of
    ``block_rows`` rows (the last one zero-padded) and encoded into
    ``N_u = sum(loads) / block_rows`` coded blocks ``G @ blocks`` (``G`` is
    ``N_u x u`` and any u of its rows are invertible); worker i gets the
    ``loads[i]`` consecutive coded rows ``offsets[i] .. offsets[i + 1] - 1``, i.e.
    ``loads[i] / block_rows`` whole coded blocks. This is the code of heterogeneous
    load allocation (HCMM, Kim et al.) and of BPCC batches; with
    ``block_rows = 1`` it codes single rows (any m coded rows decode).

    Parameters
    ----------
    loads : sequence of int
        Coded rows per worker (``loads[i] >= 0``, multiples of `block_rows`,
        ``sum(loads) >= u * block_rows``).
    m : int
        Rows of A.
    field : None, int or galois field class, optional
        As in :class:`MDSCode`; over GF(p) ``N_u <= p - 1``.
    block_rows : int
        Rows per block, ``>= 1`` (default 1). The generator has ``N_u * u``
        entries, so encoding costs ``O(N_u u)`` coefficients times the block
        arithmetic: an allocation groups rows into at most a few hundred blocks
        (``allocation.Allocation.block_rows``), never one per row of a large A.
    systematic : bool, optional
        Default ``True``: the first u coded blocks are the blocks of A, so
        decoding solves only for the blocks that did not arrive.

    Raises
    ------
    ValueError
        If a load is negative or not a multiple of `block_rows`, the loads hold
        fewer than ``u`` blocks, or the generator would exceed ``2**24``
        entries (then group rows with a larger `block_rows`).

    Notes
    -----
    A :class:`~coded.codes.Piece` ``(worker=i, start, stop)`` holds the rows
    ``[start, stop)`` of ``lefts[i] @ B``, i.e. the global coded rows
    ``offsets[i] + start .. offsets[i] + stop - 1`` (see :attr:`row_ranges`). Row
    ``t`` of every block is decoded once ``u`` coded blocks have delivered their
    row ``t``, from any mix of workers and batches (batches of whole blocks
    decode with one solve). Generators are those of :class:`MDSCode` with
    ``(n, k) = (N_u, u)``, so the conditioning is that of an ``(N_u, u)`` code.

    Examples
    --------
    >>> import numpy as np
    >>> from coded.codes import Piece
    >>> code = RowMDSCode([3, 2, 2], m=4)
    >>> A, x = np.arange(8.0).reshape(4, 2), np.array([1.0, -1.0])
    >>> enc = code.encode_operands(A, x)
    >>> dec = code.decoder(enc)
    >>> for worker, start, stop in [(0, 0, 2), (2, 0, 2)]:
    ...     value = code.multiply(enc.lefts[worker][start:stop], enc.right(worker))
    ...     dec.add(Piece(worker=worker, start=start, stop=stop, value=value))
    >>> dec.is_decodable, np.allclose(dec.decode(), A @ x)
    (True, True)
    >>> blocks = RowMDSCode([400, 300, 300], m=500, block_rows=100)
    >>> blocks.blocks, blocks.generator.shape, blocks.recovery_threshold
    (5, (10, 5), 2)
    """

    _MAX_GENERATOR = 2**24

    def __init__(
        self,
        loads: Sequence[int],
        m: int,
        field: fields.FieldLike = None,
        *,
        block_rows: int = 1,
        systematic: bool | None = None,
    ):
        if isinstance(loads, str) or not isinstance(loads, Sequence | np.ndarray):
            raise TypeError(
                f"`loads` must be a sequence of ints, got {type(loads).__name__}."
            )
        loads = tuple(
            check_int(load, f"loads[{i}]", min_value=0) for i, load in enumerate(loads)
        )
        if not loads:
            raise ValueError("`loads` must be non-empty, got ().")
        m = check_int(m, "m", min_value=1)
        v = check_int(block_rows, "block_rows", min_value=1)
        if any(load % v for load in loads):
            raise ValueError(
                f"`loads` must be multiples of block_rows={v}, got {list(loads)}."
            )
        u, N = -(-m // v), sum(loads) // v
        if u > N:
            raise ValueError(
                f"`loads` must hold at least u={u} blocks of {v} rows "
                f"({u * v} rows for m={m}), got sum(loads)={sum(loads)}."
                if v > 1
                else f"`loads` must sum to at least m={m}, got sum(loads)={N}."
            )
        if N * u > self._MAX_GENERATOR:
            raise ValueError(
                f"the generator would be {N} x {u} coded blocks (> 2**24 entries): "
                f"group rows into larger blocks with `block_rows` (got {v}), e.g. "
                "as the allocation solvers do with `max_blocks`."
            )
        p = fields.resolve_prime(field)
        fields.check_points(N, p, "sum(loads)" if v == 1 else "sum(loads) / block_rows")
        self.loads, self.m, self.block_rows = loads, m, v
        self.systematic = _check_systematic(systematic, default=True)
        if p is None:
            G = generators.real_generator(N, u, systematic=self.systematic)
        else:
            G = generators.gf_generator(N, u, p, systematic=self.systematic)
        self._setup(len(loads), G, p, [load // v for load in loads])

    @property
    def blocks(self) -> int:
        """``u``: source blocks of A, any u coded blocks decode."""
        return int(self._G.shape[1])

    @property
    def recovery_threshold(self) -> int:
        """Smallest j such that any j whole worker results hold at least u blocks."""
        total = 0
        for count, load in enumerate(sorted(self.loads), start=1):
            total += load // self.block_rows
            if total >= self.blocks:
                return count
        raise AssertionError("unreachable: sum(loads) >= u * block_rows")

    @property
    def row_ranges(self) -> tuple[tuple[int, int], ...]:
        """Global coded rows ``(start, stop)`` held by each worker."""
        bounds = (self._offsets * self.block_rows).tolist()
        return tuple(itertools.pairwise(bounds))

    def encode_operands(self, A: Any, B: Any) -> EncodedOperands:
        """Encode ``A @ B``: worker i gets its ``loads[i]`` coded rows of A.

        Parameters
        ----------
        A : array_like, shape (m, d)
            Left operand with exactly ``m`` rows.
        B : array_like, shape (d, c) or (d,)
            Right operand shared by every worker.

        Returns
        -------
        EncodedOperands
            ``lefts[i]`` has shape ``(loads[i], d)``; ``rights`` is None.
        """
        return self._encode(fields.prepare_operands(A, B, self._p))

    def _encode(self, ops: fields.Operands) -> EncodedOperands:
        self._check_rows(ops.A)
        lefts = self._encode_workers(ops.A, self.block_rows)
        return EncodedOperands(
            lefts=lefts,
            rights=None,
            shared_right=_read_only(ops.B),
            context=self._row_context(ops, lefts, m=self.m, rows=self.block_rows),
        )

    def _shortfall(self, got: int) -> str:
        if self.block_rows == 1:
            return f"need m={self.m} coded rows, got {got}."
        return (
            f"need u={self.blocks} coded blocks of {self.block_rows} rows, got {got}."
        )

    def _check_rows(self, A: np.ndarray, name: str = "A") -> None:
        if A.shape[0] != self.m:
            raise ValueError(
                f"`{name}` must have m={self.m} rows, got shape {A.shape}; build "
                f"the code with m={A.shape[0]} for this matrix."
            )

    def _assemble(self, sources: np.ndarray, context: UnitContext) -> np.ndarray:
        return sources.reshape(-1, context.width)[: self.m]

    def encode(self, X: Any) -> list[Any]:
        """Return the per-worker coded rows of X (shares of shape ``(loads[i], d)``).

        Parameters
        ----------
        X : array_like, shape (m, d)
            Real matrix, or over GF(p) a FieldArray or an integer matrix.

        Returns
        -------
        list of array, length n
        """
        array, output = fields.prepare_single(X, self._p)
        self._check_rows(array, "X")
        shares = self._encode_workers(array, self.block_rows)
        return [fields.as_output(share, output, self._p) for share in shares]

    def decode(self, results: Mapping[int, Any]) -> Any:
        """Return ``X @ Y`` from whole results ``{i: share_i @ Y}`` (any u blocks).

        Parameters
        ----------
        results : mapping of int to array
            Worker index to its share times Y.

        Returns
        -------
        array
            ``X @ Y`` (types as in :meth:`MDSCode.decode`).
        """
        return self._decode_mapping(results)

    def __repr__(self) -> str:
        return (
            f"RowMDSCode(loads={list(self.loads)}, m={self.m}, field={self._p}, "
            f"block_rows={self.block_rows}, systematic={self.systematic})"
        )
