# ruff: noqa: E501  (a table reads best one case a line)
"""Every error branch of coded/codes that no other test matched, by its message.

``scripts/raise_coverage.py`` lists the raises of the math core that no
``pytest.raises(..., match=...)`` reaches; each row here reaches one of them and
matches its whole message.
"""

import re
import warnings

import galois
import numpy as np
import pytest
import scipy.sparse

from coded.codes import (
    ExactCode,
    LagrangeCode,
    LTCode,
    MDSCode,
    Piece,
    PolynomialCode,
    ReplicationCode,
    TransposedCode,
)
from coded.codes._fields import inverse_mod
from coded.codes._gradient_schemes import GradientScheme, WorkerShare, combine
from coded.errors import (
    DecodingError,
    GradientError,
    InconsistentResultsError,
    NonFiniteResultError,
    NotEnoughResultsError,
)

P = 65537
GF7 = galois.GF(7)
EXACT = ExactCode(lambda p: MDSCode(3, 2, field=p))
EXACT_ENCODED = EXACT.encode_operands(
    np.ones((2, 2), dtype=np.int64), np.ones(2, dtype=np.int64)
)
MDS = MDSCode(3, 2)
MDS_ENCODED = MDS.encode_operands(np.ones((4, 3)), np.ones(3))
LT = LTCode(3, 20, overhead=1.5, rng=0)
LT_ENCODED = LT.encode_operands(np.arange(40.0).reshape(20, 2), np.ones(2))
LT_ROWS = LT.row_ranges[0][1] - LT.row_ranges[0][0]
TRANSPOSED = TransposedCode(MDSCode(3, 2))
TRANSPOSED_ENCODED = TRANSPOSED.encode_operands(np.ones((4, 2)), np.ones(4))


def _gradient_share(grad):
    scheme = GradientScheme("coded", 3, 1, partition_rows=[1, 1, 1])
    support = scheme.supports[0]
    share = WorkerShare(
        worker=0,
        partitions=support,
        data=support,
        coefficients=scheme.coefficients(0),
        grad=grad,
    )
    return scheme, share


def _gradient_failure(grad):
    scheme, share = _gradient_share(grad)
    decoder = scheme.decoder(scheme.encode_operands([share], np.ones(2)))
    decoder.add(Piece(worker=0, start=0, stop=1, value=combine(share, np.ones(2))))


def _decode_after_marks():
    decoder = MDS.decoder(MDS_ENCODED)
    decoder.mark(0, 0, 2)
    decoder.mark(1, 0, 2)
    return decoder.decode()


def _overflowing_decode():
    # every piece is finite (1.7e308), the solve of a non-systematic (4, 2) code is not
    code = MDSCode(4, 2)
    encoded = code.encode_operands(np.ones((2, 2)), np.ones(2))
    decoder = code.decoder(encoded)
    for w in (2, 3):
        rows = encoded.lefts[w].shape[0]
        decoder.add(
            Piece(
                worker=w, start=0, stop=rows, value=np.full(rows, 1.7e308 * (-1) ** w)
            )
        )
    return decoder.decode()


def _detected_disagreement():
    code = MDSCode(4, 2, field=P)
    encoded = code.encode_operands(np.arange(4).reshape(2, 2), np.array([1, 1]))
    results = {i: code.multiply(encoded.lefts[i], encoded.right(i)) for i in range(4)}
    results[1] = (results[1] + 1) % P
    code.decode_results(encoded, results, verify="detect")


def _lagrange_beyond_wrong():
    code = LagrangeCode(7, K=2, degree=1, field=P)
    shares = code.encode([np.arange(4).reshape(2, 2)] * 2, rng=0)
    results = {i: code.evaluate(lambda X: X, shares[i]) for i in range(7)}
    for i in (0, 1, 2):  # three wrong, wrong=1 claimed
        results[i] = (results[i] + i + 1) % P
    code.decode(results, wrong=1)


def _field_piece_outside_the_field():
    code = MDSCode(3, 2, field=7)
    encoded = code.encode_operands(GF7(np.ones((2, 2), dtype=np.int64)), GF7([1, 1]))
    code.decoder(encoded).add(Piece(worker=0, start=0, stop=1, value=np.array([7])))


CASES = [
    (
        lambda: MDSCode(3, 2, field=P).encode(np.zeros((0, 2), dtype=np.int64)),
        ValueError,
        "`X` must be non-empty, got shape (0, 2).",
    ),
    (
        lambda: EXACT.decoder(EXACT_ENCODED).mark(0, 0, 1),
        ValueError,
        "ExactDecoder needs the pieces' values to track them; decode on the client (output='numpy').",
    ),
    (
        lambda: EXACT.encode_right(EXACT_ENCODED, np.ones(2)),
        ValueError,
        "ExactCode cannot reuse an encoded A: only the row codes (MDS, replication, uncoded, row-MDS) encode A alone.",
    ),
    (
        lambda: LT.decode_results(LT_ENCODED, {}, verify="detect"),
        ValueError,
        "LTCode cannot check its results against each other (verify='detect'); use verify='off' or an MDS, replication or row-MDS code.",
    ),
    (
        lambda: EXACT.encode_operands(GF7([[1]]), np.array([1])),
        TypeError,
        "`A` must be a plain integer array for an ExactCode, got a galois FieldArray.",
    ),
    (
        lambda: MDSCode(3, 2, field=7).encode_operands(
            GF7(np.ones((1, 1, 1), dtype=np.int64)), GF7([1])
        ),
        ValueError,
        "`A` must have ndim in (2,), got shape (1, 1, 1). Reshape it to 2-D: "
        "A.reshape(-1, 1) stacks the rows of its 1 matrices (reshape the product "
        "back after), A.reshape(1, -1) merges its trailing axes.",
    ),
    (
        lambda: MDSCode(3, 2).encode_operands(np.ones((2, 2)), np.ones((2, 1, 1))),
        ValueError,
        "`B` must have ndim in (1, 2), got shape (2, 1, 1). Reshape it to 2-D: "
        "B.reshape(-1, 1) stacks the rows of its 2 matrices (reshape the product "
        "back after), B.reshape(2, -1) merges its trailing axes.",
    ),
    (
        lambda: MDSCode(3, 2).encode_operands(np.ones(2), np.ones(2)),
        ValueError,
        "`A` must have ndim in (2,), got shape (2,). Pass a 2-D array, e.g. "
        "np.atleast_2d(A).",
    ),
    (
        lambda: MDSCode(3, 2, field=7).encode_operands(
            np.ones((1, 1, 1), np.int64), np.ones(1, np.int64)
        ),
        ValueError,
        "`A` must have ndim in (2,), got shape (1, 1, 1). Reshape it to 2-D: "
        "A.reshape(-1, 1) stacks the rows of its 1 matrices (reshape the product "
        "back after), A.reshape(1, -1) merges its trailing axes.",
    ),
    (
        lambda: MDSCode(3, 2, field=7).encode_operands(
            GF7(np.ones((2, 2), np.int64)), GF7(np.ones((2, 1, 1), np.int64))
        ),
        ValueError,
        "`B` must have ndim in (1, 2), got shape (2, 1, 1). Reshape it to 2-D: "
        "B.reshape(-1, 1) stacks the rows of its 2 matrices (reshape the product "
        "back after), B.reshape(2, -1) merges its trailing axes.",
    ),
    (
        lambda: MDSCode(3, 2, field=7).encode_operands(
            np.ones((2, 2), np.int64), np.ones((2, 1, 1), np.int64)
        ),
        ValueError,
        "`B` must have ndim in (1, 2), got shape (2, 1, 1). Reshape it to 2-D: "
        "B.reshape(-1, 1) stacks the rows of its 2 matrices (reshape the product "
        "back after), B.reshape(2, -1) merges its trailing axes.",
    ),
    (
        lambda: MDSCode(2, 2).encode_operands(
            scipy.sparse.dia_array(np.eye(2)), np.ones(2)
        ),
        TypeError,
        "`A` is a scipy.sparse DIA matrix; the codes that keep A sparse take CSR, "
        "CSC or COO (converted to CSR): pass `A.tocsr()`.",
    ),
    (
        lambda: ReplicationCode(2, 2).encode_operands(
            scipy.sparse.csr_array(np.array([[1j]])), np.ones(1)
        ),
        TypeError,
        "`A` must be a real sparse matrix, got dtype complex128.",
    ),
    (
        lambda: ReplicationCode(2, 2).encode_operands(
            scipy.sparse.csr_array(np.array([[np.nan]])), np.ones(1)
        ),
        ValueError,
        "`A` must be finite (no NaN or inf).",
    ),
    (
        lambda: MDS.encode_right(MDS_ENCODED, np.ones(2)),
        ValueError,
        "`B` must have 3 rows to match the encoded A (d=3), got B.shape=(2,).",
    ),
    (
        _overflowing_decode,
        ValueError,
        "decoding overflows float64: the decoded product is not finite though every piece was; scale the operands down.",
    ),
    (
        lambda: inverse_mod(np.array([[1, 2], [2, 4]]), 7),
        np.linalg.LinAlgError,
        "matrix is singular modulo 7.",
    ),
    (
        lambda: GradientScheme("bogus", 3, 1, partition_rows=[1, 1, 1]),
        ValueError,
        "`scheme` must be one of ('coded', 'uncoded', 'replication', 'ignore', 'partial'), got 'bogus'.",
    ),
    (
        lambda: GradientScheme("ignore", 3, 3, partition_rows=[1, 1, 1]),
        ValueError,
        "`s` must satisfy 0 <= s < n, got s=3, n=3.",
    ),
    (
        lambda: _gradient_failure(lambda data, params: np.ones(3)),
        GradientError,
        "`grad` failed on worker 0, partition 0: returned shape (3,), expected the shape of params (2,).",
    ),
    (
        lambda: _gradient_failure(lambda data, params: np.full(2, np.nan)),
        GradientError,
        "`grad` failed on worker 0, partition 0: returned non-finite values (partition 0).",
    ),
    (
        lambda: _gradient_share(None)[0].decoder(None).decode(),
        NotEnoughResultsError,
        "received 0 of the 2 results needed for the coded gradient (from workers []).",
    ),
    (
        lambda: LagrangeCode(6, K=2, degree=1, field=None).encode(
            [np.array([np.nan]), np.array([1.0])]
        ),
        ValueError,
        "`parts` must hold finite numbers (no NaN or inf).",
    ),
    (
        _lagrange_beyond_wrong,
        InconsistentResultsError,
        "the results of workers [0, 1, 2, 3, 4, 5, 6] disagree beyond wrong=1: no polynomial of degree (K + T - 1) degree explains them all.",
    ),
    (
        lambda: LT.encode_right(LT_ENCODED, np.ones(3)),
        ValueError,
        "`A` and `B` do not chain: A.shape=(20, 2), B.shape=(3,).",
    ),
    (
        lambda: LT.decoder(LT_ENCODED).mark(0, 0, LT_ROWS + 1),
        ValueError,
        f"piece rows [0, {LT_ROWS + 1}) are outside worker 0's {LT_ROWS} rows.",
    ),
    (
        lambda: LT.decoder(LT_ENCODED).add(
            Piece(worker=0, start=0, stop=2, value=np.ones(3))
        ),
        ValueError,
        "piece of worker 0 must have 2 rows, got shape (3,).",
    ),
    (
        lambda: LT.decoder(LT_ENCODED).add(
            Piece(worker=0, start=0, stop=1, value=np.array([np.nan]))
        ),
        NonFiniteResultError,
        "worker 0 returned NaN or inf.",
    ),
    (
        lambda: TRANSPOSED.encode_right(EXACT_ENCODED, np.ones(4)),
        TypeError,
        "`encoded` must come from the inner code's encode_operands, got ExactContext.",
    ),
    (
        lambda: TRANSPOSED.decoder(MDS_ENCODED),
        TypeError,
        "`encoded` must come from TransposedCode.encode_right, got UnitContext.",
    ),
    (
        lambda: TRANSPOSED.decoder(TRANSPOSED_ENCODED).add((0, 0, 1)),
        TypeError,
        "`piece` must be a Piece, got tuple.",
    ),
    (
        lambda: TRANSPOSED.decoder(TRANSPOSED_ENCODED).add(
            Piece(worker=0, start=0, stop=2, value=np.ones(7))
        ),
        ValueError,
        "`piece.value` must have 4 entries (1 x d x K c), got shape (7,).",
    ),
    (
        lambda: PolynomialCode(4, 2, 1).encode_right(
            PolynomialCode(4, 2, 1).encode_operands(np.ones((4, 2)), np.ones(2)),
            np.ones(2),
        ),
        ValueError,
        "PolynomialCode encodes B together with A (a two-sided code): it cannot reuse an encoded A; use a row code (MDS, replication, uncoded, row-MDS).",
    ),
    (
        lambda: MDSCode(5, 3).decode(
            {0: np.ones((3, 1)), 1: np.ones((2, 1)), 2: np.ones((2, 1))}
        ),
        ValueError,
        "`results[0]` must have a multiple of 2 rows, got shape (3, 1).",
    ),
    (
        _field_piece_outside_the_field,
        ValueError,
        "`piece.value` entries must lie in the field [0, 7), got min=7, max=7.",
    ),
    (
        _detected_disagreement,
        InconsistentResultsError,
        "the results of workers [0, 1, 2] disagree: no product explains them all (suspect workers [0, 1, 2]); verify='correct' with 2 spare workers decodes without the wrong ones.",
    ),
    (
        _decode_after_marks,
        DecodingError,
        "pieces were marked without their values (mark); decode with a decoder that was given the pieces themselves.",
    ),
]


@pytest.mark.parametrize(
    ("call", "error", "message"), CASES, ids=[c[2][:48] for c in CASES]
)
def test_error_branch(call, error, message):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the overflow's own warnings
        with pytest.raises(error, match=f"^{re.escape(message)}$"):
            call()
