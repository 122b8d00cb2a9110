"""Verification: spare results catch wrong ones (detect) and decode around them.

An (|U|, K) MDS code restricted to the received units has distance |U| - K + 1, so e
spare workers beyond a decodable set detect any e wrong results and correct any
floor(e / 2). Over the reals the check is a least-squares residual against the
workers' rounding bound, which an honest run never exceeds.
"""

import numpy as np
import pytest
from _codes_support import exact_product, worker_results
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from coded.codes import (
    DEFAULT_PRIME,
    MDSCode,
    Piece,
    PolynomialCode,
    _consistency,
)
from coded.codes._consistency import (
    detection_floor,
    is_consistent,
    locate,
    row_noise,
    tolerance,
)
from coded.codes._freivalds import (
    FALSE_ALARM,
    GROUP_ROWS,
    Verdict,
    draw_vectors,
    project_piece,
    share_checks,
    transposed_checks,
)
from coded.codes._transpose import TransposedCode
from coded.errors import DecodingError, InconsistentResultsError
from coded.testing import codes, operands

FIELDS = [None, DEFAULT_PRIME]
ROW_CODES = ("mds", "replication", "row_mds")


def _decoder(code, encoded, results, verify, wrong):
    decoder = code.decoder(encoded, verify=verify, wrong=wrong)
    for worker, value in results.items():
        decoder.add(Piece(worker=worker, start=0, stop=len(value), value=value))
    return decoder


def _corrupt(results, wrong, data, field):
    """Add a nonzero error to one entry of each worker in `wrong`."""
    bad = {i: np.array(v, copy=True) for i, v in results.items()}
    for i in wrong:
        flat = bad[i].reshape(-1)
        entry = data.draw(st.integers(0, flat.size - 1), label=f"entry of {i}")
        if field is None:
            scale = max(1.0, float(np.abs(flat).max()))
            flat[entry] += data.draw(st.sampled_from([1e-6, -1e-3, 1.0])) * scale
        else:
            flat[entry] = (flat[entry] + data.draw(st.integers(1, field - 1))) % field
    return bad


def _spare_code(data, field, min_spare):
    code = data.draw(codes(max_n=8, field=field, kinds=ROW_CODES), label="code")
    A, B = data.draw(operands(field=field, m=getattr(code, "m", None), max_size=5))
    encoded = code.encode_operands(A, B)
    results = worker_results(code, encoded)
    return code, A, B, encoded, results


def _check_product(C, A, B, field):
    exact = exact_product(A, B)
    if field is None:
        np.testing.assert_allclose(C, exact, rtol=1e-9, atol=1e-9 * np.abs(exact).max())
    else:
        np.testing.assert_array_equal(C, exact)


@pytest.mark.parametrize("field", FIELDS)
@given(data=st.data())
def test_up_to_e_wrong_results_are_detected(field, data):
    code, _, _, encoded, results = _spare_code(data, field, 1)
    e = data.draw(st.integers(1, 3), label="e")
    assume(_decoder(code, encoded, results, "detect", e).has_spares)
    contributors = sorted(i for i, value in results.items() if np.size(value))
    wrong = data.draw(
        st.lists(st.sampled_from(contributors), min_size=1, max_size=e, unique=True),
        label="wrong",
    )
    bad = _corrupt(results, wrong, data, field)
    decoder = _decoder(code, encoded, bad, "detect", e)
    received = set(decoder._contributors())
    assume(received & set(wrong))  # a wrong result the decoder never read is harmless
    with pytest.raises(InconsistentResultsError) as info:
        decoder.decode()
    # e spares guarantee detection, not naming: two results wrong in the same
    # way outvote an honest one (naming is the correct test's business)
    assert info.value.suspect_workers
    assert set(info.value.suspect_workers) <= set(results)


@pytest.mark.parametrize("field", FIELDS)
@given(data=st.data())
def test_up_to_half_the_spares_wrong_are_corrected_and_named(field, data):
    code, A, B, encoded, results = _spare_code(data, field, 2)
    t = data.draw(st.integers(1, 2), label="t")
    assume(_decoder(code, encoded, results, "correct", t).has_spares)
    wrong = data.draw(
        st.lists(
            st.sampled_from([i for i, v in results.items() if np.size(v)]),
            max_size=t,
            unique=True,
        ),
        label="wrong",
    )
    decoder = _decoder(
        code, encoded, _corrupt(results, wrong, data, field), "correct", t
    )
    C = decoder.decode()
    _check_product(C, A, B, field)
    read = set(decoder._contributors())
    assert set(decoder.suspect_workers) == set(wrong) & read


def _honest_data(rng, shape, log_range, same_sign, dtype):
    """Adversarial-ish honest operands: every row and column scaled on its own over
    `log_range` decades (large dynamic range), optionally all of one sign (rounding
    errors that add up instead of cancelling)."""
    rows, cols = shape
    X = rng.standard_normal(shape)
    X *= 10.0 ** rng.uniform(-log_range, log_range, (rows, 1))
    X *= 10.0 ** rng.uniform(-log_range, log_range, (1, cols))
    return (np.abs(X) if same_sign else X).astype(dtype)


@settings(deadline=None)
@given(
    n=st.integers(2, 10),
    spare=st.integers(1, 3),
    d=st.sampled_from([1, 2, 7, 100, 300, 2000]),
    log_scale=st.integers(-30, 30),
    log_range=st.integers(0, 6),
    same_sign=st.booleans(),
    dtype=st.sampled_from([np.float64, np.float32]),
    seed=st.integers(0, 2**32 - 1),
)
def test_honest_real_results_are_never_flagged(
    n, spare, d, log_scale, log_range, same_sign, dtype, seed
):
    """Any scale, dynamic range, sign pattern, inner dimension and precision: every
    entry's residual stays within its tolerance, with every worker heard from (the
    most spares: the tightest test) and `correct` naming nobody."""
    k = max(1, n - spare)
    code = MDSCode(n, k, max_condition=np.inf)
    rng = np.random.default_rng(seed)
    scale = 10.0 ** (log_scale if dtype == np.float64 else log_scale // 4)
    A = _honest_data(rng, (3 * k, d), log_range, same_sign, dtype) * dtype(scale)
    B = _honest_data(rng, (d, 3), log_range, same_sign, dtype)
    B[:, 1] = 0.0  # an all-zero column: any error there is a wrong result
    encoded = code.encode_operands(A, B)
    results = worker_results(code, encoded)
    C = code.decode_results(encoded, results, verify="detect", wrong=n - k)
    if n - k >= 2:
        decoder = _decoder(code, encoded, results, "correct", (n - k) // 2)
        np.testing.assert_array_equal(decoder.decode(), C)
        assert decoder.suspect_workers == ()
    exact = A.astype(np.float64) @ B.astype(np.float64)
    rtol = 1e-8 if dtype == np.float64 else 1e-3
    np.testing.assert_allclose(C, exact, rtol=rtol, atol=rtol * np.abs(exact).max())


@settings(deadline=None)
@given(
    condition=st.floats(1e2, 1e6),
    d=st.sampled_from([1, 50, 1000]),
    log_range=st.integers(0, 6),
    same_sign=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_tolerance_holds_at_the_guards_condition_number(
    condition, d, log_range, same_sign, seed
):
    """Generators up to the decoder's guard (max_condition = 1e6), results computed
    as workers do (coded rows in floating point, then a product): no entry is
    flagged, while one entry wrong by 10 times its tolerance is."""
    rng = np.random.default_rng(seed)
    K, N, rows = 4, 7, 20
    G = _generator_of_condition(K, N, condition)
    A = _honest_data(rng, (K * rows, d), log_range, same_sign, np.float64)
    b = _honest_data(rng, (d, 1), log_range, same_sign, np.float64)
    coded = (G @ A.reshape(K, -1)).reshape(N * rows, d)
    Y = (coded @ b).reshape(N, rows)
    norms = np.linalg.norm(coded, axis=1).reshape(N, rows)
    noise = row_noise(G, np.linalg.norm(A, axis=1), norms, d, np.float64)
    noise = noise * np.linalg.norm(b)
    assert is_consistent(G, Y, None, noise)
    Y[2, 7] += 10 * tolerance(G, Y, noise)[2, 7]
    assert not is_consistent(G, Y, None, noise)


def _generator_of_condition(K, N, condition):
    """An (N, K) generator of 2-norm condition number `condition`."""
    rng = np.random.default_rng(0)
    U, _ = np.linalg.qr(rng.standard_normal((N, K)))
    V, _ = np.linalg.qr(rng.standard_normal((K, K)))
    return U @ np.diag(np.geomspace(1.0, 1.0 / condition, K)) @ V.T


def test_honest_results_pass_at_the_guards_condition_number():
    """A generator near max_condition = 1e6: honest least-squares residuals pass."""
    rng = np.random.default_rng(0)
    G = np.vander(np.linspace(1.0, 1.05, 6), 4, increasing=True)
    assert 1e5 < np.linalg.cond(G) < 1e7
    sources = rng.standard_normal((4, 50))
    Y = G @ sources
    assert is_consistent(G, Y, None, noise=np.zeros(50))
    Y[2, 7] += 1e-3 * np.abs(Y).max()
    assert not is_consistent(G, Y, None, noise=np.zeros(50))


@pytest.mark.parametrize("placed", [False, True], ids=["fresh", "placed"])
@pytest.mark.parametrize("seed", range(4))
def test_a_relative_error_of_1e_12_is_detected_corrected_and_named(seed, placed):
    """(8, 6) MDS over the reals, as ``bench/verify.py`` corrupts a worker: its
    largest entry off by 1e-12 of its magnitude. `detect` with one spare worker
    refuses the product; `correct` with two decodes without the worker, naming it.
    Placed: A encoded once, the right operand given later (``encode_right``)."""
    rng = np.random.default_rng(seed)
    code = MDSCode(8, 6)
    A, x = rng.standard_normal((2400, 100)), rng.standard_normal(100)
    if placed:
        encoded = code.encode_right(code.encode_operands(A, np.ones(100)), x)
    else:
        encoded = code.encode_operands(A, x)
    wrong = int(rng.integers(0, 7))
    results = worker_results(code, encoded)
    entry = int(np.argmax(np.abs(results[wrong])))
    results[wrong][entry] *= 1 + 1e-12
    detect = {i: v for i, v in results.items() if i < 7}
    with pytest.raises(InconsistentResultsError) as info:
        _decoder(code, encoded, detect, "detect", 1).decode()
    assert wrong in info.value.suspect_workers
    decoder = _decoder(code, encoded, results, "correct", 1)
    np.testing.assert_allclose(decoder.decode(), A @ x, rtol=1e-12, atol=1e-12)
    assert decoder.suspect_workers == (wrong,)


def test_tolerance_grows_with_the_noise_bound_and_conditioning():
    G = np.vstack([np.eye(2), np.ones((1, 2))])
    Y = np.ones((3, 1))
    assert tolerance(G, Y, np.array([1.0]))[0] > tolerance(G, Y, np.array([0.0]))[0]
    assert tolerance(G, Y)[0] > 0


def test_a_wrong_systematic_block_is_located_over_gf_p():
    code = MDSCode(6, 3, field=DEFAULT_PRIME)
    A, x = np.arange(18).reshape(6, 3), np.array([1, -1, 2])
    encoded = code.encode_operands(A, x)
    results = worker_results(code, encoded)
    results[0] = (results[0] + 5) % DEFAULT_PRIME
    C = code.decode_results(encoded, results, verify="correct")
    np.testing.assert_array_equal(C, A @ x)
    decoder = _decoder(code, encoded, results, "correct", 1)
    decoder.decode()
    assert decoder.suspect_workers == (0,)


def test_locate_refuses_when_two_sets_explain_the_results():
    G = np.vstack([np.eye(2), np.ones((1, 2))])  # (3, 2): one spare
    Y = G @ np.ones((2, 1))
    Y[0] += 1.0
    assert locate(G, Y, [0, 1, 2], None, wrong=1) is None


def test_detect_without_spares_refuses_to_decode():
    code = MDSCode(4, 3, field=DEFAULT_PRIME)
    A, x = np.arange(6).reshape(3, 2), np.array([1, 1])
    encoded = code.encode_operands(A, x)
    results = worker_results(code, encoded, [0, 1, 2])
    with pytest.raises(DecodingError, match="decodable without any 1 of the workers"):
        code.decode_results(encoded, results, verify="detect")


def test_bad_verify_arguments_are_named():
    code = MDSCode(4, 2)
    encoded = code.encode_operands(np.ones((2, 2)), np.ones(2))
    with pytest.raises(ValueError, match="`verify` must be one of"):
        code.decoder(encoded, verify="maybe")
    with pytest.raises(ValueError, match="`wrong` must be >= 1"):
        code.decoder(encoded, verify="detect", wrong=0)
    with pytest.raises(TypeError, match="`wrong` must be an int"):
        code.decoder(encoded, verify="detect", wrong=1.5)


def test_polynomial_codes_verify_over_gf_p_only():
    A, B = np.arange(8).reshape(4, 2), np.arange(6).reshape(2, 3)
    exact = PolynomialCode(6, 2, 1, field=DEFAULT_PRIME)
    encoded = exact.encode_operands(A, B)
    results = worker_results(exact, encoded)
    results[4] = (results[4] + 1) % DEFAULT_PRIME
    C = exact.decode_results(encoded, results, verify="correct")
    np.testing.assert_array_equal(C, A @ B)
    real = PolynomialCode(6, 2, 1)
    with pytest.raises(ValueError, match="needs the operands' rounding bound"):
        real.decoder(real.encode_operands(A * 1.0, B * 1.0), verify="detect")


@pytest.mark.parametrize("field", FIELDS)
@given(data=st.data())
def test_freivalds_checks_pass_honest_pieces_and_catch_wrong_ones(field, data):
    code = data.draw(codes(max_n=6, field=field, kinds=ROW_CODES), label="code")
    A, B = data.draw(operands(field=field, m=getattr(code, "m", None), max_size=5))
    encoded = code.encode_operands(A, B)
    batches = [
        [(0, len(left) // 2), (len(left) // 2, len(left))] if len(left) else []
        for left in encoded.lefts
    ]
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    checks = share_checks(encoded.lefts, batches, code.p, rng=seed)
    for worker, ranges in enumerate(batches):
        for start, stop in ranges:
            if start == stop:
                continue
            right = encoded.right(worker)
            value = code.multiply(encoded.lefts[worker][start:stop], right)
            piece = Piece(worker=worker, start=start, stop=stop, value=value)
            assert checks.passes(piece, right, encoded.context.noise)
            wrong = _corrupt({0: value}, [0], data, field)[0]
            bad = Piece(worker=worker, start=start, stop=stop, value=wrong)
            assert not checks.passes(bad, right, encoded.context.noise)


@given(
    d=st.integers(1, 400),
    rows=st.integers(1, 300),
    log_scale=st.integers(-30, 30),
    seed=st.integers(0, 2**32 - 1),
)
def test_freivalds_never_flags_honest_real_pieces(d, rows, log_scale, seed):
    code = MDSCode(4, 3)
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((3 * rows, d)) * 10.0**log_scale
    B = rng.standard_normal((d, 3))
    encoded = code.encode_operands(A, B)
    batches = [[(0, len(left))] for left in encoded.lefts]
    checks = share_checks(encoded.lefts, batches, None, rng=seed)
    for worker, left in enumerate(encoded.lefts):
        value = code.multiply(left, encoded.right(worker))
        piece = Piece(worker=worker, start=0, stop=len(left), value=value)
        assert checks.passes(piece, encoded.right(worker), encoded.context.noise)


@given(
    d=st.integers(1, 200),
    rows=st.integers(1, 200),
    log_scale=st.integers(-30, 30),
    seed=st.integers(0, 2**32 - 1),
    data=st.data(),
)
def test_an_entry_off_by_more_than_the_floor_always_fails(
    d, rows, log_scale, seed, data
):
    """The floor a check reports is sound: one entry of the piece moved by
    more than floor times its largest entry (either sign) fails the check."""
    code = MDSCode(4, 3)
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((3 * rows, d)) * 10.0**log_scale
    B = rng.standard_normal((d, 2))
    encoded = code.encode_operands(A, B)
    checks = share_checks(encoded.lefts, [[(0, rows)]] * 4, None, rng=seed)
    worker = data.draw(st.integers(0, 3), label="worker")
    right, noise = encoded.right(worker), encoded.context.noise
    value = code.multiply(encoded.lefts[worker], right)
    verdict = checks.verdict(
        Piece(worker=worker, start=0, stop=rows, value=value), right, noise
    )
    assert verdict.passed
    assert 0 < verdict.floor < 1e-6
    wrong = np.array(value, copy=True)
    entry = data.draw(st.integers(0, wrong.size - 1), label="entry")
    sign = data.draw(st.sampled_from([-1.0, 1.0]), label="sign")
    wrong.flat[entry] += sign * 1.5 * verdict.floor * np.abs(value).max()
    off = abs(wrong.flat[entry] - value.flat[entry])  # after rounding
    assume(off > verdict.floor * np.abs(value).max())
    bad = Piece(worker=worker, start=0, stop=rows, value=wrong)
    assert not checks.verdict(bad, right, noise)


@given(
    spares=st.integers(1, 3),
    K=st.integers(1, 4),
    log_scale=st.integers(-30, 30),
    seed=st.integers(0, 2**32 - 1),
    data=st.data(),
)
def test_the_residual_catches_an_entry_off_by_more_than_its_floor(
    spares, K, log_scale, seed, data
):
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((K + spares, K))
    Y = G @ rng.standard_normal((K, 3)) * 10.0**log_scale
    noise = np.full(3, 1e-15 * 10.0**log_scale)
    floor = detection_floor(G, Y, None, noise)
    assume(np.isfinite(floor))
    assert is_consistent(G, Y, None, noise)
    unit = data.draw(st.integers(0, K + spares - 1), label="unit")
    column = data.draw(st.integers(0, 2), label="column")
    sign = data.draw(st.sampled_from([-1.0, 1.0]), label="sign")
    wrong = Y.copy()
    wrong[unit, column] += sign * 1.5 * floor * np.abs(Y[unit]).max()
    assume(abs(wrong[unit, column] - Y[unit, column]) > floor * np.abs(Y[unit]).max())
    assert not is_consistent(G, wrong, None, noise)


@given(data=st.data())
def test_checks_over_gf_p_report_a_floor_of_zero(data):
    code = MDSCode(4, 2, field=DEFAULT_PRIME)
    A, B = data.draw(operands(field=DEFAULT_PRIME, m=None, max_size=5))
    encoded = code.encode_operands(A, B)
    batches = [[(0, len(left))] for left in encoded.lefts]
    checks = share_checks(encoded.lefts, batches, code.p, rng=0)
    for worker, left in enumerate(encoded.lefts):
        value = code.multiply(left, encoded.right(worker))
        piece = Piece(worker=worker, start=0, stop=len(left), value=value)
        verdict = checks.verdict(piece, encoded.right(worker), None)
        assert (verdict.passed, verdict.floor) == (True, 0.0)


BLOCK_CODES = ("mds", "replication")


@pytest.mark.parametrize("field", FIELDS)
@given(data=st.data())
def test_transposed_checks_pass_honest_pieces_and_catch_wrong_ones(field, data):
    inner = data.draw(codes(max_n=6, field=field, kinds=BLOCK_CODES), label="code")
    code = TransposedCode(inner)
    A, _ = data.draw(operands(field=field, max_size=5))
    y = data.draw(operands(field=field, m=A.shape[0], max_size=5))[0][:, 0]
    encoded = code.encode_operands(A, y)
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    rows = encoded.context.forward.rows
    checks = transposed_checks(encoded.lefts, rows, inner.p, rng=seed)
    for worker, left in enumerate(encoded.lefts):
        right = encoded.right(worker)
        value = code.multiply(left, right)
        piece = Piece(worker=worker, start=0, stop=len(left), value=value)
        assert checks.passes(piece, right, None)
        wrong = _corrupt({0: value}, [0], data, field)[0]
        assert not checks.passes(
            Piece(worker=worker, start=0, stop=len(left), value=wrong), right, None
        )


@pytest.mark.parametrize("field", FIELDS)
@given(data=st.data())
def test_a_projected_piece_and_expectation_give_the_same_verdict(field, data):
    """Checked where the piece and B live (output="dask", a dask.array B)."""
    code = data.draw(codes(max_n=6, field=field, kinds=ROW_CODES), label="code")
    A, B = data.draw(operands(field=field, m=getattr(code, "m", None), max_size=5))
    encoded = code.encode_operands(A, B)
    batches = [[(0, len(left))] for left in encoded.lefts]
    checks = share_checks(encoded.lefts, batches, code.p, rng=0)
    worker = next(i for i, left in enumerate(encoded.lefts) if len(left))
    batch = (worker, 0, len(encoded.lefts[worker]))
    right = encoded.right(worker)
    expected = checks.expected(right)[batch]
    value = code.multiply(encoded.lefts[worker], right)
    for claimed in (value, _corrupt({0: value}, [0], data, field)[0]):
        piece = Piece(worker=worker, start=0, stop=batch[2], value=claimed)
        seen = project_piece(claimed, checks.vector(*batch), code.p)
        projected = Piece(worker=worker, start=0, stop=batch[2], value=seen)
        verdicts = {
            checks.passes(p, r, encoded.context.noise)
            for p in (piece, projected)
            for r in (right, expected)
        }
        assert verdicts == {claimed is value}


@given(
    d=st.integers(1, 300),
    rows=st.integers(1, 200),
    log_scale=st.integers(-30, 30),
    seed=st.integers(0, 2**32 - 1),
    float32=st.booleans(),
)
def test_transposed_checks_never_flag_honest_real_pieces(
    d, rows, log_scale, seed, float32
):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((3 * rows, d)) * 10.0**log_scale
    y = rng.standard_normal(3 * rows)
    if float32:
        A, y = A.astype(np.float32), y.astype(np.float32)
    code = TransposedCode(MDSCode(4, 3))
    encoded = code.encode_operands(A, y)
    checks = transposed_checks(encoded.lefts, rows, None, rng=seed)
    for worker, left in enumerate(encoded.lefts):
        value = code.multiply(left, encoded.right(worker))
        piece = Piece(worker=worker, start=0, stop=len(left), value=value)
        assert checks.passes(piece, encoded.right(worker), None)


# Boundaries of the checks, each against an oracle written out here (issue 43)

U64 = 2.0**-53  # float64's unit roundoff


def _gamma_by_hand(n, u=U64):
    return n * u / (1 - n * u)


def test_gamma_is_highams_n_u_over_one_minus_n_u():
    assert _consistency.gamma(2, 0.25) == 1.0  # 0.5 / 0.5
    assert _consistency.gamma(3) == 3 * U64 / (1 - 3 * U64)
    np.testing.assert_array_equal(
        _consistency.gamma(np.array([1, 3]), 0.25), [1 / 3, 3]
    )


def test_row_noise_follows_its_formula():
    """(1 + gamma_(d+2)) gamma_d ||a~|| + gamma_K sum_j |G_uj| ||a_j||, in float32
    with d = 1000 (gamma_d near 6e-5: each term visible)."""
    G = np.array([[1.0, 0.0], [1.0, -2.0]])  # N = 2 units, K = 2 blocks of 1 row
    coded_norms = np.array([[3.0], [5.0]])
    u, d = 2.0**-24, 1000
    by_hand = (1 + _gamma_by_hand(d + 2, u)) * _gamma_by_hand(d, u) * coded_norms
    by_hand += _gamma_by_hand(2, u) * np.array([[3.0], [3.0 + 2 * 4.0]])
    got = row_noise(G, np.array([3.0, 4.0]), coded_norms, d, np.float32)
    np.testing.assert_allclose(got, by_hand, rtol=1e-14)


def test_spare_workers_are_none_wrong_or_twice_wrong():
    modes = ("off", "detect", "correct")
    assert [_consistency.spare_workers(mode, 3) for mode in modes] == [0, 3, 6]
    assert _consistency.check_verify("detect") == ("detect", 1)
    with pytest.raises(TypeError, match=r"^`wrong` must be an int, got float\.$"):
        _consistency.check_verify("detect", 1.5)


@pytest.mark.parametrize("rows", [1, 64, 65, 130])
def test_a_projected_piece_sums_each_group_of_64_rows(rows):
    rng = np.random.default_rng(rows)
    r = rng.choice([-1.0, 1.0], size=rows)
    Y = rng.standard_normal((rows, 3)) * np.array([1.0, 1e3, 1e-3])
    seen = project_piece(Y, r, None)
    starts = range(0, rows, GROUP_ROWS)
    ry = [r[s : s + GROUP_ROWS] @ Y[s : s + GROUP_ROWS] for s in starts]
    size = [np.abs(Y[s : s + GROUP_ROWS]).sum(axis=0) for s in starts]
    assert seen.ry.shape == seen.size.shape == (len(ry), 3)
    np.testing.assert_allclose(seen.ry, np.reshape(ry, (-1, 3)), rtol=1e-13)
    np.testing.assert_allclose(seen.size, np.reshape(size, (-1, 3)), rtol=1e-13)
    np.testing.assert_array_equal(seen.peak, np.abs(Y).max(axis=0))
    assert (seen.u, seen.finite) == (U64, True)


def test_an_empty_batch_is_projected_to_no_group():
    W = np.ones((4, 3))
    projection = share_checks([W], [[(2, 2)]], None, rng=0).projections[(0, 2, 2)]
    assert projection.c.shape == projection.s.shape == (0, 3)


@pytest.mark.parametrize(
    ("dtype", "u"), [(np.float32, 2.0**-24), (np.float64, U64), (np.int64, U64)]
)
def test_a_projected_piece_carries_its_dtypes_unit_roundoff(dtype, u):
    seen = project_piece(np.ones((3, 2), dtype=dtype), np.ones(3), None)
    assert seen.u == u
    np.testing.assert_array_equal(seen.ry, [[3.0, 3.0]])


def test_a_projected_piece_over_gf_p_holds_only_its_residues():
    p = 7
    Y, r = np.array([[6, 5], [3, 0], [1, 1]]), np.array([1, 2, 6])
    seen = project_piece(Y, r, p)
    by_hand = [sum(int(r[i]) * int(Y[i, j]) for i in range(3)) % p for j in range(2)]
    assert seen.ry.tolist() == [by_hand]
    assert (seen.size.size, seen.peak.size, seen.u, seen.finite) == (0, 0, 0.0, True)


def test_a_non_finite_piece_passes_the_check_for_the_decoder_to_refuse():
    W = np.ones((3, 2))
    checks = share_checks([W], [[(0, 3)]], None, rng=0)
    value = W @ np.ones((2, 2))
    value[1, 0] = np.nan
    seen = project_piece(value, checks.vector(0, 0, 3), None)
    assert (seen.ry.size, seen.size.size, seen.peak.size) == (0, 0, 0)
    assert (seen.u, seen.finite) == (0.0, False)
    piece = Piece(worker=0, start=0, stop=3, value=value)
    assert checks.verdict(piece, np.ones((2, 2)), None) == Verdict(
        passed=True, floor=np.inf
    )


def _floor_by_hand(W, r, B, Y, noise, u_worker):
    """The detection floor of the module doc, one group of 64 rows at a time."""
    d, tolerances = B.shape[0], []
    for s in range(0, len(r), GROUP_ROWS):
        W_g, r_g, Y_g = W[s : s + GROUP_ROWS], r[s : s + GROUP_ROWS], Y[s : s + 64]
        n = len(r_g)
        c, s_g = W_g.T @ r_g, np.abs(W_g).T @ np.abs(r_g)
        cb_abs, sb_abs = np.abs(c) @ np.abs(B), s_g @ np.abs(B)
        if noise is None:
            worker = _gamma_by_hand(d, u_worker) * sb_abs
        else:
            z = np.sqrt(2 * np.log(2 / FALSE_ALARM))
            worker = z * np.sqrt(n) * np.asarray(noise)
        size = np.abs(Y_g).sum(axis=0)
        tolerances.append(
            worker
            + _gamma_by_hand(n) * (sb_abs + size)
            + _gamma_by_hand(d) * (cb_abs + sb_abs)
        )
    reach = 2 * np.max(tolerances) / (1 - _gamma_by_hand(GROUP_ROWS))
    return reach / np.abs(Y).max()


@pytest.mark.parametrize(
    ("noise", "dtype"),
    [(None, np.float64), (None, np.float32), ([1e-9, 2e-9], np.float64)],
    ids=["rounding", "float32-rounding", "bound"],
)
def test_the_floor_of_a_real_check_follows_its_groups_of_64_rows(noise, dtype):
    """130 rows: groups of 64, 64 and 2, the last two rows the largest (so the
    last group's size decides the floor), B with 5 rows and 2 columns. Small
    integers: every sum is exact, so the check and the oracle round alike."""
    rng = np.random.default_rng(1)
    W = rng.integers(-3, 4, (130, 5)).astype(np.float64)
    W[128:] *= 1024
    B = rng.integers(-3, 4, (5, 2)).astype(np.float64)
    checks = share_checks([W], [[(0, 130)]], None, rng=2)
    r = checks.vector(0, 0, 130)
    Y = (W @ B).astype(dtype)
    u_worker = 2.0**-24 if dtype == np.float32 else U64
    verdict = checks.verdict(Piece(worker=0, start=0, stop=130, value=Y), B, noise)
    assert verdict.passed
    by_hand = _floor_by_hand(W, r, B, Y.astype(np.float64), noise, u_worker)
    np.testing.assert_allclose(verdict.floor, by_hand, rtol=1e-15)


@pytest.mark.parametrize("p", [None, 7])
def test_an_empty_piece_passes_with_a_floor_of_zero(p):
    W = np.ones((4, 3), dtype=np.int64)
    checks = share_checks([W], [[(2, 2)]], p, rng=0)
    piece = Piece(worker=0, start=2, stop=2, value=np.zeros((0, 2), dtype=np.int64))
    right = np.ones((3, 2), dtype=np.int64)
    assert checks.verdict(piece, right, None) == Verdict(passed=True, floor=0.0)


def test_an_all_zero_piece_has_an_infinite_floor_unless_nothing_is_tolerated():
    """No entry to be relative to: any tolerance makes the floor infinite; none
    (a zero share and no noise bound) makes it 0."""
    B = np.zeros((2, 1))
    piece = Piece(worker=0, start=0, stop=3, value=np.zeros((3, 1)))
    checks = share_checks([np.ones((3, 2))], [[(0, 3)]], None, rng=0)
    assert checks.verdict(piece, B, [1e-3]) == Verdict(passed=True, floor=np.inf)
    zero = share_checks([np.zeros((3, 2))], [[(0, 3)]], None, rng=0)
    assert zero.verdict(piece, B, None) == Verdict(passed=True, floor=0.0)


def test_the_noise_bound_not_the_workers_rounding_sets_a_bounded_check():
    W = np.arange(12.0).reshape(4, 3)
    B = np.ones((3, 1))
    checks = share_checks([W], [[(0, 4)]], None, rng=0)
    Y = W @ B
    Y[2, 0] += 1e-6  # far above rounding, far below a bound of 1 per entry
    piece = Piece(worker=0, start=0, stop=4, value=Y)
    assert checks.passes(piece, B, [1.0])
    assert not checks.passes(piece, B, None)


def test_share_checks_draw_one_vector_per_batch_in_order_and_skip_absent_workers():
    rng = np.random.default_rng(3)
    W1, W2 = rng.integers(0, 7, (5, 2)), rng.integers(0, 7, (4, 2))
    for p in (None, 7):
        lefts = [None, W1, W2]
        batches = [[], [(0, 2), (2, 5)], [(0, 4)]]
        checks = share_checks(lefts, batches, p, rng=11)
        expected = draw_vectors([2, 3, 4], p, np.random.default_rng(11))
        keys = [(1, 0, 2), (1, 2, 5), (2, 0, 4)]
        assert list(checks.projections) == keys
        for key, r in zip(keys, expected, strict=True):
            np.testing.assert_array_equal(checks.vector(*key), r)
            assert checks.covers(*key)
        assert checks.projections[keys[0]].s.size == (0 if p else 2 * 1)
        assert not checks.covers(0, 0, 2)
        assert not checks.covers(1, 0, 5)
        assert checks.p == p
    with pytest.raises(ValueError, match="zip"):
        share_checks([W1], [[(0, 5)], []], None)


def test_transposed_checks_draw_one_vector_per_worker_and_skip_absent_workers():
    Y = np.arange(12).reshape(6, 2) % 7  # two units of 3 rows
    checks = transposed_checks([None, Y, Y], 3, 7, rng=5)
    assert list(checks.projections) == [(1, 0, 6), (2, 0, 6)]
    expected = draw_vectors([4, 4], 7, np.random.default_rng(5))
    for worker, r in zip((1, 2), expected, strict=True):
        np.testing.assert_array_equal(checks.vector(worker, 0, 6), r)


def test_updated_checks_replace_every_projection_of_the_renewed_workers():
    rng = np.random.default_rng(4)
    lefts = [rng.standard_normal((4, 2)) for _ in range(3)]
    old = share_checks(lefts, [[(0, 2), (2, 4)], [(0, 4)], [(0, 4)]], None, rng=0)
    renewed = share_checks([None, lefts[1], None], [[], [(0, 1), (1, 4)], []], None)
    checks = old.updated(renewed)
    assert checks.p is None
    kept, new = [(0, 0, 2), (0, 2, 4), (2, 0, 4)], [(1, 0, 1), (1, 1, 4)]
    assert list(checks.projections) == kept + new
    for key in kept:
        assert checks.projections[key] is old.projections[key]
    for key in new:
        assert checks.projections[key] is renewed.projections[key]
    exact = share_checks([np.ones((2, 2), dtype=np.int64)], [[(0, 2)]], 7, rng=0)
    assert exact.updated(exact).p == 7


def test_a_sparse_share_is_projected_as_its_dense_rows():
    import scipy.sparse

    rng = np.random.default_rng(6)
    W = rng.standard_normal((130, 4)) * (rng.random((130, 4)) < 0.3)
    sparse = share_checks([scipy.sparse.csr_array(W)], [[(0, 130)]], None, rng=8)
    dense = share_checks([W], [[(0, 130)]], None, rng=8)
    key = (0, 0, 130)
    np.testing.assert_array_equal(sparse.vector(*key), dense.vector(*key))
    for field in ("c", "s"):
        got = getattr(sparse.projections[key], field)
        want = getattr(dense.projections[key], field)
        assert isinstance(got, np.ndarray)
        assert got.shape == (3, 4)
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def test_pivot_rows_skip_a_unit_dependent_only_modulo_p():
    """Unit 1 is unit 0 times 2^-1 modulo p, not over the integers: only exact
    elimination modulo p finds units 0 and 2 independent and unit 1 not."""
    p = DEFAULT_PRIME
    half = (p + 1) // 2
    G_U = np.array([[2, 1], [1, half], [0, 1]], dtype=np.int64)
    assert G_U[1].tolist() == [(2 * half) % p, half]  # 2^-1 * (2, 1)
    basis = _consistency._pivot_rows(G_U, p)
    assert basis.dtype == np.int64
    assert basis.tolist() == [0, 2]
    S = np.array([[5, 1], [p - 1, 7]], dtype=np.int64)
    Y = (G_U @ S) % p
    assert is_consistent(G_U, Y, p)
    assert _consistency.discrepancy(G_U, Y, p) == 0.0
    Y[1, 0] = (Y[1, 0] + 1) % p
    assert not is_consistent(G_U, Y, p)
    assert _consistency.discrepancy(G_U, Y, p) == np.inf


def test_consistency_reads_the_noise_bound():
    G = np.vstack([np.eye(2), np.ones((1, 2))])
    Y = G @ np.array([[1.0], [2.0]])
    Y[2, 0] += 1e-6
    assert is_consistent(G, Y, None, np.array([1.0]))
    assert not is_consistent(G, Y, None, np.array([1e-15]))


def test_a_discrepancy_of_exactly_one_is_consistent(monkeypatch):
    """The boundary: units agree when their discrepancy is at most 1."""
    G, Y = np.vstack([np.eye(2), np.ones((1, 2))]), np.zeros((3, 1))
    monkeypatch.setattr(_consistency, "discrepancy", lambda *args: 1.0)
    assert is_consistent(G, Y, None)
    monkeypatch.setattr(_consistency, "discrepancy", lambda *args: np.nextafter(1, 2))
    assert not is_consistent(G, Y, None)


def _spare_generator():
    """(4, 2) generator U diag(2, 2^-19): U's columns (1, 1, 1, 1) / 2 and
    (1, -1, 1, -1) / 2 are orthonormal in binary, so P = I - U U^T is exact:
    P_vv = 1/2 and |P| averages rows 0 and 2, and rows 1 and 3; kappa = 2^20."""
    s = np.array([1.0, -1.0, 1.0, -1.0])
    U = np.column_stack([np.ones(4), s]) / 2
    return U * np.array([2.0, 2.0**-19]), np.abs(np.eye(4) - U @ U.T)


@pytest.mark.parametrize("noisy", [False, True], ids=["rounding", "noise"])
def test_the_residuals_floor_follows_its_formula_row_by_row(noisy):
    """floor = max_v 2 max_j tol_vj / ((P_vv - 2 rho) max_j |Y_vj|), tol = |P| eta
    + rho ||Y_j||, rho = 4 |U| u kappa: with rounding only, the rows of the
    smaller peak decide; with a noisy entry in row 0, rows 0 and 2 do."""
    G, P = _spare_generator()
    Y = G @ np.array([[0.5, 1.0], [3.0 * 2**19, -(2.0**19)]])  # rows (2, .5), (-1, 1.5)
    eta = np.zeros((4, 2))
    if noisy:
        eta[0, 1] = 1e-6
    rho = 4 * 4 * U64 * 2.0**20
    tol = P @ eta + rho * np.linalg.norm(Y, axis=0)
    reach = 2 * tol.max(axis=1)
    floors = reach / (0.5 - 2 * rho) / np.abs(Y).max(axis=1)
    assert floors.argmax() in ((0, 2) if noisy else (1, 3))
    got = detection_floor(G, Y, None, eta if noisy else None)
    np.testing.assert_allclose(got, floors.max(), rtol=1e-12)


def test_the_residuals_floor_is_infinite_where_an_entry_cannot_be_measured():
    G, _ = _spare_generator()
    Y = G @ np.ones((2, 2))
    assert detection_floor(G, Y, DEFAULT_PRIME) == 0.0  # exact: one spare suffices
    assert detection_floor(G, np.zeros((4, 0)), None) == 0.0  # no entry at all
    assert detection_floor(G, np.zeros((4, 2)), None) == 0.0  # no error to tolerate
    no_spare = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])  # row 0: P_00 = 0
    assert detection_floor(no_spare, no_spare @ np.ones((2, 1)), None) == np.inf
    zero_row = np.vstack([G, np.zeros((1, 2))])  # row 4 is 0: no peak to scale
    assert detection_floor(zero_row, zero_row @ np.ones((2, 1)), None) == np.inf
    finite = detection_floor(zero_row[:4], zero_row[:4] @ np.ones((2, 1)), None)
    assert 0 < finite < 1e-6


def test_an_expectation_over_gf_p_holds_only_its_residues():
    W = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.int64)
    B = np.array([[1, 0, 2], [6, 1, 1]], dtype=np.int64)  # d = 2 rows, 3 columns
    checks = share_checks([W], [[(0, 3)]], 7, rng=0)
    r = checks.vector(0, 0, 3)
    expected = checks.expected(B)[(0, 0, 3)]
    by_hand = [
        sum(int(r[i]) * int(W[i, k]) * int(B[k, j]) for i in range(3) for k in range(2))
        % 7
        for j in range(3)
    ]
    assert expected.cb.tolist() == [by_hand]
    assert (expected.cb_abs.size, expected.sb_abs.size, expected.d) == (0, 0, 2)


def test_discrepancy_is_zero_without_spares_and_below_one_for_agreeing_units():
    square = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert _consistency.discrepancy(square, np.array([[0.3], [-1.7]]), None) == 0.0
    G = np.vstack([np.eye(2), np.ones((1, 2))])
    assert _consistency.discrepancy(G, np.zeros((3, 0)), None) == 0.0  # no entry
    Y = np.column_stack([np.zeros(3), G @ np.array([0.1, 0.7])])  # a zero column
    assert _consistency.discrepancy(G, Y, None) < 0.5


def test_a_residual_whose_tolerance_underflows_is_inconsistent():
    """Subnormal results: the tolerance 4 |U| u kappa ||Y_j|| rounds to 0, while
    the residual of (0, 0, 1e-320), not in G's span, does not."""
    G = np.vstack([np.eye(2), np.ones((1, 2))])
    Y = np.array([[0.0], [0.0], [1e-320]])
    assert np.all(tolerance(G, Y) == 0)
    assert _consistency.discrepancy(G, Y, None) == np.inf


def test_locate_tries_sets_of_at_most_wrong_workers_that_leave_a_spare():
    ones = np.ones((5, 1))  # replication: every unit holds the one source
    Y = np.array([[1.0], [1.0], [1.0], [5.0], [7.0]])
    assert locate(ones, Y, range(5), None, wrong=1) is None  # two are wrong
    assert locate(ones, Y, range(5), None, wrong=2) == (3, 4)
    # per-column noise (one bound per column, 2 columns != 5 units) passes whole
    Y2 = np.hstack([Y, Y])
    assert locate(ones, Y2, range(5), None, wrong=2, noise=np.full(2, 1e-15)) == (3, 4)
    # dropping worker 1 would leave K = 2 units and no spare: nothing is found
    G = np.vstack([np.eye(2), np.ones((1, 2))])
    wrong = G @ np.ones((2, 1))
    wrong[2] += 1.0
    assert locate(G, wrong, [0, 0, 1], None, wrong=1) is None


def test_locate_refuses_a_tie_over_gf_p():
    """Units 0, 1 say 0 and units 2, 3 say 1: dropping either pair leaves exact
    agreement, so the wrong workers cannot be told apart."""
    ones = np.ones((4, 1), dtype=np.int64)
    Y = np.array([[0], [0], [1], [1]], dtype=np.int64)
    assert locate(ones, Y, range(4), 7, wrong=2) is None
    assert locate(ones[:3], Y[:3], range(3), 7, wrong=1) == (2,)


def test_locate_accepts_a_discrepancy_of_exactly_one(monkeypatch):
    monkeypatch.setattr(_consistency, "discrepancy", lambda *args: 1.0)
    G = np.vstack([np.eye(2), np.ones((1, 2))])
    assert locate(G, np.zeros((3, 1)), range(3), None, wrong=1) == ()


def test_secret_vectors_are_nonzero_residues_or_signs():
    exact = np.concatenate(draw_vectors([100, 100], 5, np.random.default_rng(0)))
    assert exact.dtype == np.int64
    assert set(exact.tolist()) == {1, 2, 3, 4}
    signs = np.concatenate(draw_vectors([100], None, np.random.default_rng(0)))
    assert set(signs.tolist()) == {-1.0, 1.0}
