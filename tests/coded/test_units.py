"""The unit decoder's boundaries (``coded.codes._units``): row patterns, flags, shapes.

Each test checks exact values against numpy's product of the operands, or a
read-only flag, or a whole error message: the survivors of the units mutation
shard (``scripts/mutation.py units``) showed these were unchecked.
"""

import re

import numpy as np
import pytest

from coded.codes import MDSCode, Piece
from coded.codes._units import UnitContext
from coded.errors import IllConditionedWarning

P = 65_537


def _pieces_by_row(code, encoded, parities):
    """Add the rows t of every unit of worker w with ``t % 2 in parities[w]``."""
    decoder = code.decoder(encoded)
    rows = encoded.context.rows
    for worker, kept in parities.items():
        product = code.multiply(encoded.lefts[worker], encoded.right(worker))
        for start in range(product.shape[0]):
            if start % rows % 2 in kept:
                value = product[start : start + 1]
                decoder.add(
                    Piece(worker=worker, start=start, stop=start + 1, value=value)
                )
    return decoder


# the even rows of the units from workers 0 and 1, the odd ones from workers 2
# and 3: two arrival patterns, each decodable alone (an MDS (4, 2) code)
TWO_PATTERNS = {0: [0], 1: [0], 2: [1], 3: [1]}


def test_rows_decoded_from_different_workers_over_the_reals():
    code = MDSCode(4, 2)
    A = np.arange(24.0).reshape(8, 3) - 10.0
    B = np.array([[1.0, -2.0], [0.5, 0.0], [3.0, 1.0]])
    encoded = code.encode_operands(A, B)
    assert encoded.context.rows == 2
    decoder = _pieces_by_row(code, encoded, TWO_PATTERNS)
    assert decoder.is_decodable
    np.testing.assert_allclose(decoder.decode(), A @ B, rtol=1e-10, atol=1e-10)


def test_rows_decoded_from_different_workers_over_gf_p():
    code = MDSCode(4, 2, field=P)
    A = np.array([[3, -1], [0, 7], [-5, 2], [4, 4], [1, 0], [-2, 9], [6, -3], [8, 1]])
    x = np.array([-4, 5])
    encoded = code.encode_operands(A, x)
    decoder = _pieces_by_row(code, encoded, TWO_PATTERNS)
    product = decoder.decode()
    assert product.dtype == np.int64
    np.testing.assert_array_equal(product, A @ x)


def test_one_row_pattern_missing_is_not_decodable():
    code = MDSCode(4, 2)
    encoded = code.encode_operands(np.ones((8, 2)), np.ones(2))
    decoder = _pieces_by_row(code, encoded, {0: [0], 1: [0], 2: [1]})
    assert not decoder.is_decodable  # the odd rows: 2 units of K = 4
    assert decoder.progress == (1, 2)


def test_generator_offsets_and_noise_are_read_only():
    code = MDSCode(4, 2)
    assert not code.generator.flags.writeable
    assert not code.unit_offsets.flags.writeable
    np.testing.assert_array_equal(code.unit_offsets, [0, 2, 4, 6, 8])
    assert code.unit_offsets.dtype == np.int64
    context = code.encode_operands(np.ones((4, 2)), np.ones(2)).context
    assert not context.unit_noise.flags.writeable


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (np.ones((2, 2, 2)), "got shape (2, 2, 2)."),
        (np.ones((0, 2)), "got shape (0, 2)."),
    ],
)
def test_a_result_that_is_not_a_matrix_is_named(value, message):
    text = f"`results[1]` must be a non-empty 1-D or 2-D array, {message}"
    with pytest.raises(ValueError, match=f"^{re.escape(text)}$"):
        MDSCode(3, 2).decode({1: value, 2: value})


def test_encode_right_takes_a_matrix_after_a_vector():
    code = MDSCode(3, 2)
    A = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])
    first = code.encode_operands(A, np.ones(2))
    B = np.array([[3.0, 0.0], [4.0, -1.0]])
    encoded = code.encode_right(first, B)
    context = encoded.context
    assert (context.c, context.width, context.is_vector) == (2, 2, False)
    assert not encoded.shared_right.flags.writeable
    # the rounding bound follows the new B: its column norms 5 and 1
    np.testing.assert_allclose(context.right_norms, [5.0, 1.0], rtol=1e-15)
    np.testing.assert_allclose(
        context.noise, [5.0 * context.left_noise, context.left_noise], rtol=1e-15
    )
    results = {i: encoded.lefts[i] @ encoded.right(i) for i in (0, 2)}
    np.testing.assert_allclose(code.decode_results(encoded, results), A @ B, atol=1e-12)


def test_encode_right_of_signed_integers_at_the_exactness_bound():
    # 2 d max|A| max|B| < p: d = 2, max|A| = 8, so max|B| = 2048 is the largest
    code = MDSCode(1, 1, field=P)  # one worker: lefts[0] is the only share
    A = np.array([[8, 8], [-8, 8]])
    encoded = code.encode_right(code.encode_operands(A, np.zeros(2, int)), [2048, 2048])
    product = code.decode_results(
        encoded, {0: code.multiply(encoded.lefts[0], encoded.right(0))}
    )
    assert product.dtype == np.int64
    np.testing.assert_array_equal(product, [32768, 0])  # (p - 1) / 2 = 32768
    message = (
        "exact integer results need 2 * max|C| < p; the inputs only guarantee "
        "max|C| <= d * max|A| * max|B| = 32784, so p must exceed 65568, got p=65537."
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
        code.encode_right(encoded, [2049, 0])


def test_entry_noise_per_unit_row_and_column():
    unit_noise = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    base = {"m": 6, "c": 2, "rows": 3, "width": 2, "is_vector": False}
    context = UnitContext(
        **base,
        output="real",
        noise=(10.0, 20.0),
        unit_noise=unit_noise,
        right_norms=(1.0, 0.5),
    )
    # units [1, 0], rows [0, 2]: unit_noise[u, t] * norm[col], columns inner
    np.testing.assert_array_equal(
        context.entry_noise(np.array([1, 0]), np.array([0, 2])),
        [[4.0, 2.0, 6.0, 3.0], [1.0, 0.5, 3.0, 1.5]],
    )
    # without the per-unit bound: the per-column noise repeated for each row
    only_noise = UnitContext(**base, output="real", noise=(10.0, 20.0))
    np.testing.assert_array_equal(
        only_noise.entry_noise(np.array([0]), np.array([0, 1, 2])),
        [10.0, 20.0, 10.0, 20.0, 10.0, 20.0],
    )
    partial = UnitContext(
        **base, output="real", noise=(1.0, 2.0), unit_noise=unit_noise
    )
    np.testing.assert_array_equal(
        partial.entry_noise(np.array([0]), np.array([1])), [1.0, 2.0]
    )
    assert (
        UnitContext(**base, output="real").entry_noise(np.array([0]), np.array([0]))
        is None
    )


def _whole(code, encoded, worker):
    return code.multiply(encoded.lefts[worker], encoded.right(worker))


def test_least_squares_decode_is_numpys_lstsq_of_inconsistent_results():
    # a systematic (6, 3) code: worker 0 is source 0, workers 3, 4, 5 are parity;
    # the guard (any square system is above 1 + 1e-9) takes all three parities and
    # solves sources 1 and 2 by least squares: perturbed results make the least
    # squares solution differ from any square solve, so only that one matches
    code = MDSCode(6, 3, systematic=True, max_condition=1.0 + 1e-9)
    rng = np.random.default_rng(7)
    A, B = rng.standard_normal((6, 4)), rng.standard_normal((4, 3))
    encoded = code.encode_operands(A, B)
    results = {w: _whole(code, encoded, w) for w in (0, 3, 4, 5)}
    for w in (3, 4, 5):
        results[w] = results[w] + 1e-3 * rng.standard_normal(results[w].shape)
    decoder = code.decoder(encoded)
    for w, value in results.items():
        decoder.add(Piece(worker=w, start=0, stop=value.shape[0], value=value))
    assert decoder.units_used == 4
    with pytest.warns(IllConditionedWarning):
        C = decoder.decode()
    G = np.asarray(code.generator)[[3, 4, 5]]
    right = np.concatenate([results[w] for w in (3, 4, 5)]).reshape(3, -1)
    right = right - np.outer(G[:, 0], results[0].ravel())
    missing = np.linalg.lstsq(G[:, 1:], right, rcond=None)[0].reshape(2, 2, 3)
    np.testing.assert_allclose(C, np.vstack([results[0], *missing]), rtol=1e-12)
    assert np.abs(C[2:] - A[2:] @ B).max() > 1e-5  # the perturbation is there


@pytest.mark.parametrize("field", [None, P])
def test_a_unit_beyond_the_square_system_is_not_read(field):
    # rows of a systematic (5, 2) code: worker 4 sends its even rows, with wrong
    # values, then workers 3 and 0 all their rows; the even rows' square system
    # (source 0 copied, source 1 from the first parity, worker 3) leaves worker 4
    # unread
    code = MDSCode(5, 2, field=field, systematic=True)
    A = np.arange(24).reshape(6, 4) - 9
    A = A if field else A.astype(float)
    x = np.array([2, -1, 3, 1])
    encoded = code.encode_operands(A, x if field else x.astype(float))
    rows = encoded.context.rows
    decoder = code.decoder(encoded)
    wrong = _whole(code, encoded, 4)
    wrong = np.mod(wrong + 1, field) if field else wrong + 1.0
    for t in range(0, rows, 2):
        decoder.add(Piece(worker=4, start=t, stop=t + 1, value=wrong[t : t + 1]))
    for worker in (3, 0):
        value = _whole(code, encoded, worker)
        decoder.add(Piece(worker=worker, start=0, stop=rows, value=value))
    assert decoder.is_decodable
    assert decoder.units_used == 2
    np.testing.assert_allclose(decoder.decode(), A @ x, rtol=0, atol=1e-12)


@pytest.mark.parametrize("field", [None, P])
def test_repair_reads_only_the_square_systems_shares(field):
    # shares of workers 0 (source 0), 2, 3, 4: worker 2 alone completes the
    # system for source 1 (a 1 x 1 system, condition 1); wrong shares 3 and 4
    # are not read, so worker 1's share (source 1) comes back exact
    code = MDSCode(5, 2, field=field, systematic=True)
    A = np.arange(12).reshape(6, 2) - 4
    A = A if field else A.astype(float)
    lefts = code.encode_operands(A, np.zeros(2, dtype=A.dtype)).lefts
    shares = {0: lefts[0], 2: lefts[2]}
    for j in (3, 4):
        shares[j] = np.mod(lefts[j] + 1, field) if field else lefts[j] + 1.0
    rebuilt = code.repair(shares, [1])
    np.testing.assert_allclose(rebuilt[1], lefts[1], rtol=0, atol=1e-12)


def test_a_decode_over_a_31_bit_prime_reduces_the_known_sources_exactly():
    # nine known sources near +-p/2 (p = 2^31 - 1) times parity entries up to p:
    # G[:, known] @ S_known overflows int64 unless it is taken mod p
    p = 2_147_483_647
    code = MDSCode(12, 10, field=p, systematic=True)
    edge = p // 2 - 1
    A = np.array([[edge], [-edge]] * 5, dtype=np.int64)
    x = np.ones(1, dtype=np.int64)
    encoded = code.encode_operands(A, x)
    survivors = (0, 1, 2, 4, 5, 6, 7, 8, 9, 10)  # systematic worker 3 lost
    results = {i: code.multiply(encoded.lefts[i], encoded.right(i)) for i in survivors}
    np.testing.assert_array_equal(code.decode(results), A @ x)
