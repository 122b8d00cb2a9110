"""``lagrange_map``: Lagrange coded computing on Dask, through the common executor.

A :class:`~coded.codes.LagrangeCode` runs as any other code: worker ``i`` holds its
coded part ``u(alpha_i)`` (one "row" of its own) and returns ``f(u(alpha_i))``; the
run decodes as soon as ``(K + T - 1) deg f + 1 + 2 wrong`` results arrived, so
stragglers, lost workers and injected faults (``Stragglers``) behave as they do for
``coded_matmul``, and ``wrong`` wrong results are corrected by the decode.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Unpack

import numpy as np

from coded._deprecation import data_first
from coded._dispatch import ExecutionOptions, execution_options
from coded._keywords import ExecutionKeywords
from coded.codes import Code, Decoder, EncodedOperands, LagrangeCode, Piece
from coded.codes.interface import FieldLike
from coded.errors import DecodingError
from theory.validation import check_int

if TYPE_CHECKING:
    from distributed import Client

__all__ = ["LagrangeResult", "lagrange_map"]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class LagrangeResult:
    """``f`` on every part, and the record of the run (seconds).

    Attributes
    ----------
    values : list of array
        ``[f(X_1), ..., f(X_K)]``.
    used_workers, failed_workers : tuple of int
        Workers whose results were decoded / that never returned one.
    recovery_threshold : int
        ``(K + T - 1) deg f + 1``.
    seconds : float
        The whole call (encoding, placing, waiting, decoding).
    """

    values: list[np.ndarray]
    used_workers: tuple[int, ...]
    failed_workers: tuple[int, ...]
    recovery_threshold: int
    seconds: float


def _evaluate(left: np.ndarray, right: Any, *, code: LagrangeCode, f: Callable) -> Any:
    """Worker side: ``f`` of the coded part (``left`` holds it as its one row)."""
    del right
    return code.evaluate(f, left[0])[None]


class _Decoder(Decoder):
    """Collect whole results; decode (correcting `wrong`) once enough arrived."""

    def __init__(self, code: LagrangeCode, wrong: int) -> None:
        self._code, self._wrong = code, wrong
        self._results: dict[int, np.ndarray] = {}

    @property
    def _needed(self) -> int:
        return self._code.recovery_threshold + 2 * self._wrong

    def add(self, piece: Piece) -> None:
        if not self.is_decodable:
            self._results[piece.worker] = np.asarray(piece.value)[0]

    @property
    def is_decodable(self) -> bool:
        return len(self._results) >= self._needed

    @property
    def progress(self) -> tuple[int, int]:
        return len(self._results), self._needed

    def decode(self) -> list[np.ndarray]:
        if not self.is_decodable:
            raise DecodingError(
                f"need {self._needed} results, got {len(self._results)}."
            )
        return self._code.decode(self._results, wrong=self._wrong)


class _LagrangeRunCode(Code):
    """A :class:`LagrangeCode` and its ``f`` as the executor sees a code."""

    def __init__(self, code: LagrangeCode, f: Callable, wrong: int) -> None:
        self.code, self.f, self.wrong = code, f, wrong
        self.n = code.n

    @property
    def recovery_threshold(self) -> int:
        return self.code.recovery_threshold + 2 * self.wrong

    def encode_operands(self, A: Any, B: Any) -> EncodedOperands:
        parts, rng = A, B
        shares = self.code.encode(parts, rng=rng)
        return EncodedOperands(
            lefts=tuple(share[None] for share in shares), rights=None, shared_right=0
        )

    def decoder(self, encoded: EncodedOperands) -> Decoder:
        return _Decoder(self.code, self.wrong)

    @property
    def multiply(self) -> Callable[[Any, Any], Any]:
        return functools.partial(_evaluate, code=self.code, f=self.f)

    def is_decodable(self, workers: Iterable[int]) -> bool:
        return len(set(workers)) >= self.recovery_threshold


def lagrange_map(
    parts: Sequence[Any],
    f: Callable[[Any], Any],
    *,
    degree: int,
    T: int = 0,
    wrong: int = 0,
    n: int | None = None,
    field: FieldLike = 65537,
    client: Client | None = None,
    address: str | None = None,
    options: ExecutionOptions | None = None,
    **option_fields: Unpack[ExecutionKeywords],
) -> LagrangeResult:
    r"""Evaluate a polynomial `f` on every part of a dataset, coded (Yu et al.).

    The arguments come data first, like every entry point of ``coded``; the old
    order ``lagrange_map(f, parts)`` is deprecated (recognised by a callable first
    argument).

    Parameters
    ----------
    parts : sequence of K arrays of one shape
        The dataset, split in ``K`` parts (integers over GF(p)).
    f : callable
        A polynomial of degree `degree` in its array argument (``+``, ``*``,
        ``@`` and integer constants; over GF(p) it receives a galois
        ``FieldArray``), e.g. ``lambda X: X.T @ X``.
    degree : int
        ``deg f``.
    T : int
        Colluding workers who learn nothing about the data (GF(p) only).
    wrong : int
        Wrong results to correct (GF(p) only); the run waits for ``2 wrong``
        results beyond the recovery threshold.
    n : int, optional
        Workers (default: every worker of the cluster).
    field : int or None
        The prime (default 65537), or None for the reals.
    client, address : optional
        As in :func:`coded.coded_matmul` (default: an embedded cluster).
    options : ExecutionOptions, optional
        Stragglers, timeout, rng (also as keywords); ``verify`` does not apply:
        wrong results are corrected by the decode itself, with `wrong`.
    **option_fields
        Fields of :class:`ExecutionOptions` as keywords; they override those of
        `options`.
    stragglers, timeout, rng : optional
        Keyword options, as in :func:`coded.coded_matmul`.
    output, verify, check, transport : optional
        Keyword options that do not apply here (the values always come back to
        the client as tasks, and the decode corrects up to `wrong` wrong results
        itself).

    Returns
    -------
    LagrangeResult

    Raises
    ------
    ValueError
        Too few workers for ``(K + T - 1) degree + 1 + 2 wrong``, ``T > 0`` or
        ``wrong > 0`` over the reals.
    NotEnoughResultsError
        Stragglers and lost workers left fewer results than needed in time.
    InconsistentResultsError
        More results were wrong than `wrong` allows.

    Examples
    --------
    >>> import numpy as np
    >>> from coded import LocalCodedCluster, Stragglers, lagrange_map
    >>> parts = [np.array([[1, 2], [3, 4]]), np.eye(2, dtype=int)]
    >>> with LocalCodedCluster(n_workers=8) as cluster:
    ...     result = lagrange_map(parts, lambda X: X.T @ X, degree=2, T=1, wrong=1,
    ...                           client=cluster.client,
    ...                           stragglers=Stragglers(corrupt={3: 1e-3}))
    >>> [value.tolist() for value in result.values]
    [[[10, 14], [14, 20]], [[1, 0], [0, 1]]]
    """
    from coded.runtime import client_for_call, execute, worker_addresses

    parts, f = data_first(
        parts, f, old="(f, parts)", new="(parts, f)", caller="lagrange_map"
    )
    began = time.perf_counter()
    options = execution_options(options, option_fields, "lagrange_map")
    wrong = check_int(wrong, "wrong", min_value=0)
    with client_for_call(client, address, 8) as own:
        addresses = worker_addresses(own, None if n is None else check_int(n, "n"))
        code = LagrangeCode(
            len(addresses), K=len(parts), degree=degree, T=T, field=field
        )
        if code.tolerance(wrong) < 0:
            raise ValueError(
                f"`wrong={wrong}` needs n >= (K + T - 1) degree + 1 + 2 wrong = "
                f"{code.recovery_threshold + 2 * wrong} workers, got n={code.n}."
            )
        if wrong and code.p is None:
            raise ValueError("`wrong` > 0 needs a prime `field`, got field=None.")
        run_code = _LagrangeRunCode(code, f, wrong)
        encoded = run_code.encode_operands(parts, None)
        stragglers = options.stragglers
        execution = execute(
            own,
            run_code,
            encoded,
            addresses=addresses,
            batches=[[(0, 1)]] * code.n,
            faults=None
            if stragglers is None
            else stragglers.sample(code.n, rng=options.rng),
            timeout=options.timeout,
            label=f"lagrange-{code.n}-{code.recovery_threshold}",
        )
    return LagrangeResult(
        values=execution.product,
        used_workers=execution.used_workers,
        failed_workers=execution.failed_workers,
        recovery_threshold=code.recovery_threshold,
        seconds=time.perf_counter() - began,
    )
