# ruff: noqa: E501  (a table reads best one case a line)
"""Every bad input gets a named error: one table, one row per input.

Each row: the call, the exception type, and a fragment of its message (which
names the argument and the constraint), or several: the argument, what it must be
and the remedy. Only the `verify='correct'` rows start a cluster (the embedded
one): the code they refuse is built for the cluster's workers.
"""

import importlib
import math
import sys

import dask.array as da
import galois
import numpy as np
import pytest
import scipy.sparse

from coded import (
    DecodingError,
    LocalCodedCluster,
    MatmulResult,
    MDSCode,
    PolynomialCode,
    ReplicationCode,
    Stragglers,
    coded_matmul,
    place_operand,
)
from coded.codes import ExactCode, Piece
from mapreduce import MapReduceOptions

A = np.arange(12.0).reshape(4, 3)
X = np.ones(3)
INTS = np.arange(12).reshape(4, 3)
CODE = MDSCode(3, 2)
ENCODED = CODE.encode_operands(A, X)


def _piece(worker):
    left = ENCODED.lefts[worker]
    value = CODE.multiply(left, ENCODED.right(worker))
    return Piece(worker=worker, start=0, stop=len(left), value=value)


def _add_twice():
    decoder = CODE.decoder(ENCODED)
    decoder.add(_piece(0))
    decoder.add(_piece(0))


def _matmul(A_, B_, **kwargs):
    return lambda: coded_matmul(A_, B_, **{"n": 3, "k": 2, **kwargs})


def _with_entry(array, index, value):
    array = np.array(array, dtype=float)
    array[index] = value
    return array


def _without(module, call):
    """`call` run as if `module` were not installed (an optional dependency)."""

    def run():
        loaded = {
            name: sys.modules.pop(name)
            for name in list(sys.modules)
            if name == module or name.startswith(f"{module}.")
        }
        sys.modules[module] = None  # import raises ModuleNotFoundError
        try:
            return call()
        finally:
            del sys.modules[module]
            sys.modules.update(loaded)

    return run


def _import_afresh(name):
    def run():
        loaded = sys.modules.pop(name, None)
        try:
            importlib.import_module(name)
        finally:
            if loaded is not None:
                sys.modules[name] = loaded

    return run


RECORD = MatmulResult(
    product=np.ones(2), scheme="mds", n=2, k=1, call_id="x",
    finish_seconds=(0.1, math.nan), used_workers=(0,), failed_workers=(),
    stage_seconds={"wait": 0.1, "total": 0.2}, cancelled_tasks=1, backup_tasks=0,
    overlap_seconds=0.0,
)  # fmt: skip


GF7 = galois.GF(7)
LAZY = da.from_array(A, chunks=2)
UNKNOWN_ROWS = LAZY[LAZY[:, 0] >= 0]  # a boolean mask: row chunk sizes unknown
CASES = {
    # operands: types
    "sparse A": (_matmul(scipy.sparse.csr_matrix(A), X), TypeError, "toarray()"),
    "sparse B": (_matmul(A, scipy.sparse.csc_array(np.ones((3, 2)))), TypeError, "`B` is a sparse"),
    "sparse A, code alone": (lambda: CODE.encode(scipy.sparse.coo_matrix(A)), TypeError, "dense arrays only"),
    "ragged list": (_matmul([[1.0, 2.0], [3.0]], X), ValueError, "`A` must be a rectangular array"),
    "list of strings": (_matmul([["a", "b", "c"]], X), TypeError, "`A` must be a real or integer array, got dtype <U1"),
    "object dtype": (_matmul(A.astype(object), X), TypeError, "got dtype object"),
    "bool": (_matmul(A > 1, X), TypeError, "got dtype bool"),
    "complex": (_matmul(A + 1j, X), TypeError, "got dtype complex128"),
    # operands: values and shapes
    "NaN": (_matmul(_with_entry(A, (1, 2), np.nan), X), ValueError, ("`A` must be finite (no NaN or inf)", "A[1, 2] is nan (the first of 1", "np.nan_to_num(A)")),
    "inf in B": (_matmul(A, X * np.inf), ValueError, ("`B` must be finite (no NaN or inf)", "B[0] is inf (the first of 3", "np.nan_to_num(B)")),
    "0-d A": (_matmul(np.float64(1.0), X), ValueError, ("`A` must have ndim in (2,)", "got shape ()", "np.atleast_2d(A)")),
    "3-d A": (_matmul(np.ones((4, 5, 3)), X), ValueError, ("`A` must have ndim in (2,)", "got shape (4, 5, 3)", "A.reshape(-1, 3) stacks the rows of its 4 matrices")),
    "3-d B": (_matmul(A, np.ones((3, 2, 2))), ValueError, ("`B` must have ndim in (1, 2)", "got shape (3, 2, 2)", "B.reshape(3, -1) merges")),
    "mismatched shapes": (_matmul(A, np.ones(4)), ValueError, "matching inner dimensions"),
    "list operands, mismatched": (_matmul([[1.0, 2.0]], [1.0, 2.0, 3.0]), ValueError, "matching inner dimensions"),
    "empty A": (lambda: CODE.encode_operands(np.ones((0, 3)), X), ValueError, "`A` must be non-empty"),
    "dask.array, unknown chunk sizes": (_matmul(UNKNOWN_ROWS, X), ValueError, "unknown chunk sizes (shape (nan, 3)); call `A.compute_chunk_sizes()`"),
    "dask.array of strings": (_matmul(da.from_array(A.astype(str)), X), TypeError, "`A` must hold real numbers or integers"),
    # codes and fields
    "k > n": (lambda: MDSCode(3, 4), ValueError, "1 <= k <= n"),
    "replication r not dividing n": (lambda: ReplicationCode(4, 3), ValueError, "`r` must divide `n`"),
    "polynomial p_a p_b > n": (lambda: PolynomialCode(3, 2, 2), ValueError, "`p_a * p_b` must be <= n"),
    "non-prime field": (lambda: MDSCode(3, 2, field=65536), ValueError, "`field` must be prime"),
    "float field": (lambda: MDSCode(3, 2, field=7.0), TypeError, "`field` must be an integer"),
    "field above 2^31 - 1": (lambda: MDSCode(3, 2, field=2**61 - 1), ValueError, "prime <= 2^31 - 1"),
    "extension field": (lambda: MDSCode(3, 2, field=galois.GF(2**4)), ValueError, "prime field GF(p)"),
    "wrong field": (lambda: MDSCode(3, 2, field=65537).encode_operands(GF7(INTS % 7), INTS[0] % 7), ValueError, "array over GF(7) but the code is over GF(65537)"),
    "floats over GF(p)": (lambda: MDSCode(3, 2, field=65537).encode_operands(A, X), TypeError, "integer array or a galois FieldArray"),
    "floats, exact": (lambda: ExactCode(lambda p: MDSCode(3, 2, field=p)).encode_operands(A, X), TypeError, "integer array for an ExactCode"),
    "value >= p next to a FieldArray": (lambda: MDSCode(3, 2, field=65537).encode_operands(galois.GF(65537)(INTS), np.full(3, 70_000)), ValueError, "must lie in the field [0, 65537)"),
    "product beyond p/2": (lambda: MDSCode(3, 2, field=65537).encode_operands(INTS * 1000, INTS[0] * 1000), ValueError, "p must exceed"),
    "uint64 above 2^63 over GF(p)": (lambda: MDSCode(3, 2, field=65537).encode_operands(np.full((4, 3), 2**63, np.uint64), np.ones(3, np.uint64)), ValueError, "p must exceed"),
    "float64 overflow in encoding": (lambda: CODE.encode_operands(np.full((4, 3), np.finfo(float).max), X), ValueError, "encoding overflows float64"),
    # shares and pieces
    "duplicated piece": (_add_twice, ValueError, "repeats rows of worker 0"),
    "foreign worker": (lambda: CODE.decode({0: np.ones(2), 7: np.ones(2)}), ValueError, "`worker` must be <= 2"),
    "foreign share shape": (lambda: CODE.decode({0: np.ones(2), 1: np.ones(3)}), ValueError, "`piece.value` must have shape (2, 1)"),
    "piece beyond the worker's rows": (lambda: CODE.decoder(ENCODED).add(Piece(worker=0, start=0, stop=9, value=np.ones(9))), ValueError, "`piece.stop` must be <= 2"),
    "not a piece": (lambda: CODE.decoder(ENCODED).add((0, np.ones(2))), TypeError, "`piece` must be a Piece"),
    "too few shares": (lambda: CODE.decode({0: np.ones(2)}), DecodingError, "need k=2 results, got 1"),
    "non-numeric share": (lambda: CODE.decode({0: None, 1: None}), ValueError, "`results[0]` must be a non-empty"),
    # the call
    "n not an int": (lambda: coded_matmul(A, X, n="3"), TypeError, "`n` must be an integer"),
    "timeout <= 0": (_matmul(A, X, timeout=-1), ValueError, "`timeout` must be > 0.0"),
    "unknown output": (_matmul(A, X, output="arrow"), ValueError, "`output` must be 'numpy' or 'dask'"),
    "unknown check": (_matmul(A, X, check="twice"), ValueError, "`check` must be 'auto', 'freivalds' or 'redundancy'"),
    "redundancy on a worker": (_matmul(A, X, check="redundancy", output="dask"), ValueError, "compares the results on the client"),
    "correct without a spare": (_matmul(A, X, k=3, verify="correct"), ValueError, ("`verify='correct'`", "MDSCode(n=3) has none", "k < n", "verify='detect'")),
    "correct, uncoded": (lambda: coded_matmul(A, X, scheme="uncoded", n=3, verify="correct"), ValueError, ("`verify='correct'` decodes around a wrong result with a spare worker's, and UncodedCode(n=3) has none", "Use a coded scheme with k < n (scheme='mds'", "or verify='detect'")),
    "correct by redundancy, one spare": (_matmul(A, X, check="redundancy", verify="correct"), ValueError, ("`check='redundancy'`", "needs n - k >= 2 spare workers, got n=3, k=2", "Use check='freivalds'")),
    "unknown scheme": (_matmul(A, X, scheme="ldpc"), ValueError, "`scheme` must be one of"),
    "code and n disagree": (lambda: coded_matmul(A, X, scheme=CODE, n=4), ValueError, "`n` must equal code.n=3"),
    "client not a Client": (_matmul(A, X, client="tcp://127.0.0.1:1"), TypeError, "`client` must be a distributed.Client"),
    "client and address": (lambda: coded_matmul(A, X, client=object(), address="x"), ValueError, "pass at most one of `client` and `address`"),
    "stragglers not Stragglers": (_matmul(A, X, stragglers=3), TypeError, "`stragglers` must be a coded.Stragglers"),
    "replication with k": (_matmul(A, X, scheme="replication", n=4, k=3), ValueError, "pass `r` instead"),
    "dying worker out of range": (lambda: Stragglers(dying=[9]).sample(3), ValueError, "`stragglers` names worker 9, but n=3"),
    "place without a client": (lambda: place_operand(A, client=None), TypeError, "`client` must be a distributed.Client"),
    # optional dependencies: the extra that installs them
    "timeline without matplotlib": (_without("matplotlib", RECORD.plot_timeline), ModuleNotFoundError, ("`result.plot_timeline()` needs matplotlib", 'pip install "coded-computing[notebooks]"', "or print(result)")),
    "dataframe output without pandas": (_without("pandas", lambda: MapReduceOptions(output="dataframe")), ModuleNotFoundError, ("`output='dataframe'` needs pandas", 'pip install "coded-computing[dataframe]"', "or pass output='dict'")),
    "strategies without hypothesis": (_without("hypothesis", _import_afresh("coded.testing")), ModuleNotFoundError, ("`coded.testing` needs hypothesis", 'pip install "coded-computing[dev]"')),
    "TLS without cryptography": (_without("cryptography", lambda: LocalCodedCluster(security=True)), ImportError, ("LocalCodedCluster(security=True)", "`cryptography`", 'pip install "coded-computing[tls]"')),
}  # fmt: skip


@pytest.mark.parametrize(("call", "error", "message"), CASES.values(), ids=CASES)
def test_bad_input_gets_a_named_error(call, error, message):
    with pytest.raises(error) as raised:
        call()
    for fragment in (message,) if isinstance(message, str) else message:
        assert fragment in str(raised.value)


def test_correct_on_uncoded_asks_for_nothing_that_cannot_help():
    with pytest.raises(ValueError, match="has none") as raised:
        CASES["correct, uncoded"][0]()
    assert "n >= " not in str(raised.value)  # more workers: still k = n
    assert "check=" not in str(raised.value)  # never set by the caller
