"""MDSCode and RowMDSCode: any k of n, exact GF(p), stability, validation."""

import itertools
import json
import math
import re
import warnings

import galois
import numpy as np
import pytest
from _codes_support import (
    assert_close_real,
    assert_worst_condition_search_options,
    feed,
    units_of,
    worker_results,
)
from hypothesis import assume, given
from hypothesis import strategies as st

from coded.codes import DEFAULT_PRIME, MDSCode, Piece, RowMDSCode
from coded.codes import _generators as generators
from coded.codes._modular import matmul_mod
from coded.errors import DecodingError, IllConditionedWarning
from coded.testing import matrices, mds_codes

BIG_PRIME = 2_147_483_647
GF = galois.GF(DEFAULT_PRIME)


def _shares_times(shares, Y, rows):
    return {i: shares[i] @ Y for i in rows}


def _survivor_cond(code, workers):
    return np.linalg.cond(code.generator[units_of(code, sorted(workers))])


# -- any k of n -------------------------------------------------------------------
@pytest.mark.parametrize("field", [None, DEFAULT_PRIME, 257])
@pytest.mark.parametrize("systematic", [False, True])
@pytest.mark.parametrize(("n", "k"), [(1, 1), (3, 1), (3, 2), (4, 4), (5, 3)])
def test_every_k_subset_of_tiny_codes_decodes(n, k, field, systematic):
    code = MDSCode(n, k, field, systematic=systematic)
    rng = np.random.default_rng(20261202)
    dtype = np.float64 if field is None else np.int64
    X = rng.integers(-5, 6, (2 * k, 3)).astype(dtype)
    Y = rng.integers(-5, 6, (3, 2)).astype(dtype)
    shares = code.encode(X)
    for rows in itertools.combinations(range(n), k):
        C = code.decode(_shares_times(shares, Y, rows))
        if field is None:
            assert_close_real(C, X @ Y, _survivor_cond(code, rows))
        else:
            np.testing.assert_array_equal(C, X @ Y)


@pytest.mark.parametrize("p", [DEFAULT_PRIME, BIG_PRIME])
@given(data=st.data())
def test_any_k_of_n_decode_exact_over_gf(p, data):
    code = data.draw(mds_codes(max_n=12 if p == DEFAULT_PRIME else 6, field=p))
    rows = data.draw(
        st.lists(
            st.integers(0, code.n - 1), min_size=code.k, max_size=code.k, unique=True
        )
    )
    field = galois.GF(p)
    blocks = data.draw(st.integers(1, 2))
    X = field(data.draw(matrices((code.k * blocks, 3), field=p, max_abs=p // 2)) % p)
    Y = field(data.draw(matrices((3, 2), field=p, max_abs=p // 2)) % p)
    shares = code.encode(X)
    assert all(type(s) is field for s in shares)
    C = code.decode(_shares_times(shares, Y, rows))
    assert type(C) is field
    assert np.array_equal(C, X @ Y)


@given(code=mds_codes(max_n=12), data=st.data())
def test_any_k_of_n_decode_over_reals_within_conditioning(code, data):
    rows = data.draw(
        st.lists(
            st.integers(0, code.n - 1), min_size=code.k, max_size=code.k, unique=True
        )
    )
    X = data.draw(matrices((code.k * code.subblocks, 4)))
    Y = data.draw(matrices((4,)))
    C = code.decode(_shares_times(code.encode(X), Y, rows))
    assert C.shape == (code.k * code.subblocks,)
    assert_close_real(C, X @ Y, _survivor_cond(code, rows))


@pytest.mark.parametrize("field", [None, DEFAULT_PRIME])
@given(data=st.data())
def test_fewer_than_k_results_raise(field, data):
    code = data.draw(mds_codes(max_n=12, field=field))
    rows = data.draw(
        st.lists(st.integers(0, code.n - 1), max_size=code.k - 1, unique=True)
    )
    shares = code.encode(np.zeros((code.k * code.subblocks, 1), dtype=np.int64))
    assert not code.is_decodable(rows)
    with pytest.raises(
        DecodingError, match=f"need k={code.k} results, got {len(rows)}"
    ):
        code.decode({i: shares[i] for i in rows})


def test_signed_integers_round_trip_through_symmetric_residues():
    code = MDSCode(6, 4, field=DEFAULT_PRIME)
    rng = np.random.default_rng(7)
    X, Y = rng.integers(-100, 101, (8, 5)), rng.integers(-60, 61, (5, 3))
    shares = code.encode(X)
    assert all(s.dtype == np.int64 and s.min() >= 0 for s in shares)
    C = code.decode({i: shares[i] @ Y for i in (5, 1, 3, 4)})
    assert C.dtype == np.int64
    np.testing.assert_array_equal(C, X @ Y)


# -- independent oracle: galois' own linear algebra -----------------------------------
@pytest.mark.parametrize("systematic", [False, True])
@given(data=st.data())
def test_gf_encode_decode_agree_with_galois_linear_algebra(systematic, data):
    code = data.draw(mds_codes(max_n=10, field=GF, systematic=systematic))
    rows = sorted(data.draw(st.permutations(range(code.n)))[: code.k])
    X = GF(data.draw(matrices((code.k, 3), field=DEFAULT_PRIME)) % DEFAULT_PRIME)
    Y = GF(data.draw(matrices((3, 2), field=DEFAULT_PRIME)) % DEFAULT_PRIME)
    G = GF(code.generator)
    shares = code.encode(X)
    oracle_shares = G @ X  # one row per worker: block height 1
    for i, share in enumerate(shares):
        assert np.array_equal(share, oracle_shares[i : i + 1])
    results = _shares_times(shares, Y, rows)
    R = GF(np.concatenate([np.asarray(results[i]) for i in rows]))
    assert np.array_equal(code.decode(results), np.linalg.solve(G[rows], R))


@pytest.mark.parametrize("systematic", [False, True])
@pytest.mark.parametrize(("n", "k"), [(6, 3), (7, 4), (8, 5)])
def test_gf_generators_are_mds_every_minor_nonzero(n, k, systematic):
    G = GF(MDSCode(n, k, DEFAULT_PRIME, systematic=systematic).generator)
    for rows in itertools.combinations(range(n), k):
        assert np.linalg.det(G[list(rows)]) != 0
    if systematic:
        assert np.array_equal(G[:k], GF.Identity(k))


# -- real numerical stability ------------------------------------------------------
def _brute_worst(G, ell, n, k):
    """Reference: cond of every survivor set, one np.linalg.cond at a time."""
    worst = max(
        (np.linalg.cond(G[[ell * i + r for i in rows for r in range(ell)]]), rows)
        for rows in itertools.combinations(range(n), k)
    )
    return worst


@pytest.mark.parametrize(
    ("n", "k", "systematic"),
    [(7, 4, False), (7, 5, False), (8, 6, True), (6, 3, False), (9, 8, False)],
)
def test_worst_condition_number_is_exact_against_brute_force(n, k, systematic):
    code = MDSCode(n, k, systematic=systematic)
    value, _ = _brute_worst(code.generator, code.subblocks, n, k)
    worst = code.worst_condition_number()
    assert worst.exact
    assert worst.evaluated == math.comb(n, k)
    assert worst.value == pytest.approx(value, rel=1e-9)
    assert float(worst) == worst.value
    assert _survivor_cond(code, worst.survivors) == pytest.approx(value, rel=1e-9)


@pytest.mark.parametrize(
    ("n", "k", "ell"),
    [(7, 5, 2), (6, 3, 1)],  # more survivor rows than erased ones, or as many
)
def test_dual_shortcut_agrees_with_decomposing_every_survivor_matrix(n, k, ell):
    rng = np.random.default_rng(5)
    G, _ = np.linalg.qr(rng.standard_normal((ell * n, ell * k)))  # orthonormal
    fast = generators.worst_condition_number(G, ell=ell)
    value, _ = _brute_worst(G, ell, n, k)
    assert fast.value == pytest.approx(value, rel=1e-9)
    erased = np.array(list(itertools.combinations(range(n), n - k)))
    survivors = np.array([sorted(set(range(n)) - set(e)) for e in erased])
    np.testing.assert_allclose(
        generators._Conditioning(G, ell)(erased),
        generators.survivor_condition_numbers(G, survivors, ell=ell),
        rtol=1e-9,
    )


@pytest.mark.parametrize(
    ("n", "k", "systematic"),
    [(8, 5, False), (7, 3, True), (6, 3, False)],  # (6, 3): 2k = n, dual path
)
def test_extra_survivors_give_the_least_squares_worst_case(n, k, systematic):
    code = MDSCode(n, k, systematic=systematic)
    ell = code.subblocks
    G = code.generator
    brute = max(
        np.linalg.cond(G[[ell * i + r for i in rows for r in range(ell)]])
        for rows in itertools.combinations(range(n), k + 1)
    )
    one_more = generators.worst_condition_number(G, ell=ell, extra=1)
    assert one_more.exact
    assert one_more.value == pytest.approx(brute, rel=1e-9)
    assert one_more.value < code.worst_condition_number().value


@pytest.mark.parametrize(("n", "k"), [(9, 6), (10, 7), (8, 4)])
def test_lower_bound_flag_is_set_exactly_when_enumeration_is_skipped(n, k):
    code = MDSCode(n, k)
    count = math.comb(n, k)
    exact = code.worst_condition_number(exact_limit=count)
    searched = code.worst_condition_number(exact_limit=count - 1, samples=30)
    assert exact.exact
    assert not searched.exact
    assert searched.value <= exact.value * (1 + 1e-12)
    # swap-one search from the worst sampled sets finds the true worst case here
    assert searched.value == pytest.approx(exact.value, rel=1e-9)
    assert _survivor_cond(code, searched.survivors) == pytest.approx(
        searched.value, rel=1e-9
    )


def test_sampled_lower_bound_grows_with_the_search_effort():
    code = MDSCode(24, 12)
    few = code.worst_condition_number(samples=5, starts=1, rng=1)
    many = code.worst_condition_number(samples=2000, rng=1)
    assert not few.exact
    assert 1 <= few.value <= many.value < math.inf


@pytest.mark.parametrize(
    ("n", "k", "rotation"),
    [(20, 16, 463), (30, 28, 52), (30, 26, 1.95e3), (50, 47, 1.34e3), (60, 57, 2.1e3)],
)
def test_targets_default_is_at_most_half_the_rotation_embedding(n, k, rotation):
    baseline = generators.worst_condition_number(
        generators.rotation_generator(n, k), ell=2
    )
    assert baseline.exact
    assert baseline.value == pytest.approx(rotation, rel=0.02)
    ours = MDSCode(n, k).worst_condition_number()
    assert ours.exact
    assert ours.value <= baseline.value / 2


def test_ones_complement_reaches_sqrt_n_for_one_erasure():
    for n in (5, 16, 64):
        worst = MDSCode(n, n - 1).worst_condition_number()
        assert worst.exact
        assert worst.value == pytest.approx(math.sqrt(n), rel=1e-9)


def test_default_real_variant_is_at_least_as_well_conditioned_as_systematic():
    for n, k in [(8, 6), (12, 9), (15, 13), (20, 17)]:
        stable = MDSCode(n, k).worst_condition_number()
        systematic = MDSCode(n, k, systematic=True).worst_condition_number()
        assert stable.value <= systematic.value


def test_systematic_real_decode_copies_the_systematic_blocks():
    code = MDSCode(6, 4, systematic=True)
    rng = np.random.default_rng(3)
    X, Y = rng.standard_normal((8, 5)), rng.standard_normal((5, 2))
    shares = code.encode(X)
    np.testing.assert_array_equal(
        code.decode(_shares_times(shares, Y, range(4))),
        np.concatenate([shares[i] @ Y for i in range(4)]),
    )


def test_ill_conditioned_decode_warns_with_the_condition_number():
    from coded.codes import PolynomialCode

    code = PolynomialCode(40, 40, 1, construction="monomial")
    A, B = np.ones((40, 2)), np.ones((2, 1))
    pairs = code.encode(A, B)
    with pytest.warns(IllConditionedWarning, match=r"condition number \d"):
        code.decode({i: a @ b for i, (a, b) in enumerate(pairs)})


def test_well_conditioned_decode_does_not_warn():
    code = MDSCode(15, 13)
    shares = code.encode(np.ones((13 * code.subblocks, 2)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        code.decode(
            {i: s @ np.ones(2) for i, s in enumerate(shares) if i not in (3, 9)}
        )


# -- RowMDSCode --------------------------------------------------------------------
@pytest.mark.parametrize("field", [None, DEFAULT_PRIME])
@given(data=st.data())
def test_row_mds_any_m_coded_rows_decode(field, data):
    loads = data.draw(st.lists(st.integers(0, 4), min_size=1, max_size=5))
    total = sum(loads)
    assume(total > 0)
    m = data.draw(st.integers(1, total))
    code = RowMDSCode(loads, m, field, systematic=data.draw(st.booleans()))
    chosen = set(data.draw(st.permutations(range(total)))[:m])
    A = data.draw(matrices((m, 3), field=field))
    x = data.draw(matrices((3,), field=field))
    enc = code.encode_operands(A, x)
    decoder = code.decoder(enc)
    batches = []
    for i, (lo, hi) in enumerate(code.row_ranges):
        batches += [(i, g - lo, g - lo + 1) for g in range(lo, hi) if g in chosen]
    feed(decoder, code, enc, batches)
    assert decoder.progress == (m, m)
    C = decoder.decode()
    if field is None:
        assert_close_real(C, A @ x, np.linalg.cond(code.generator[sorted(chosen)]))
    else:
        np.testing.assert_array_equal(C, A @ x)


def test_row_mds_recovery_threshold_and_row_ranges():
    code = RowMDSCode([5, 1, 3, 2], m=6)
    assert code.row_ranges == ((0, 5), (5, 6), (6, 9), (9, 11))
    assert code.recovery_threshold == 3  # 1 + 2 + 3 = 6
    assert code.is_decodable([1, 2, 3])
    assert not code.is_decodable([1, 3])


def test_row_mds_shortfall_message_counts_rows():
    code = RowMDSCode([2, 2], m=3)
    enc = code.encode_operands(np.ones((3, 2)), np.ones(2))
    decoder = code.decoder(enc)
    feed(decoder, code, enc, [(0, 0, 2)])
    with pytest.raises(DecodingError, match=re.escape("need m=3 coded rows, got 2.")):
        decoder.decode()


@pytest.mark.parametrize("field", [None, 257])
def test_row_mds_encode_and_decode_the_product(field):
    code = RowMDSCode([3, 2, 2], m=4, field=field)  # systematic by default
    X = np.arange(8).reshape(4, 2) - 3
    Y = np.array([[1, 2], [-1, 1]])
    shares = code.encode(X if field else X.astype(float))
    assert [share.shape for share in shares] == [(3, 2), (2, 2), (2, 2)]
    systematic_rows = X if field is None else np.mod(X, field)  # residues over GF(p)
    np.testing.assert_array_equal(np.concatenate(shares)[:4], systematic_rows)
    C = code.decode({0: shares[0] @ Y, 2: shares[2] @ Y})  # 5 coded rows >= m
    np.testing.assert_allclose(C, X @ Y, rtol=0, atol=1e-9)
    message = "`X` must have m=4 rows, got shape (3, 2); build the code with m=3"
    with pytest.raises(ValueError, match=re.escape(message)):
        code.encode(X[:3])


def test_row_mds_encode_of_a_field_array_gives_field_arrays():
    code = RowMDSCode([3, 2, 2], m=4, field=GF)
    X = GF(np.arange(8).reshape(4, 2))
    shares = code.encode(X)
    assert [type(share) for share in shares] == [GF] * 3
    np.testing.assert_array_equal(np.concatenate(shares)[:4], X)  # systematic


def test_systematic_by_default_over_gf_and_for_row_codes_only():
    assert MDSCode(5, 3).systematic is False
    exact = MDSCode(5, 3, field=257)
    assert (exact.systematic, exact.construction) == (True, "cauchy")
    assert (MDSCode(5, 3, 257, systematic=False).construction) == "vandermonde"
    for code in (exact, RowMDSCode([2, 2, 2], 4), RowMDSCode([2, 2, 2], 4, 257)):
        assert code.systematic is True
        k = code.generator.shape[1]
        np.testing.assert_array_equal(code.generator[:k], np.eye(k))
    code = RowMDSCode([2, 2, 2], 4, systematic=False)
    assert code.systematic is False
    assert not np.allclose(code.generator[:4], np.eye(4))


def test_reprs_name_the_parameters():
    assert repr(MDSCode(5, 3)) == "MDSCode(n=5, k=3, field=None, systematic=False)"
    assert repr(MDSCode(5, 3, 257)) == "MDSCode(n=5, k=3, field=257, systematic=True)"
    assert repr(RowMDSCode([4, 2], 3, block_rows=2, systematic=False)) == (
        "RowMDSCode(loads=[4, 2], m=3, field=None, block_rows=2, systematic=False)"
    )
    assert repr(RowMDSCode([2, 2], 3, 7)) == (
        "RowMDSCode(loads=[2, 2], m=3, field=7, block_rows=1, systematic=True)"
    )


@pytest.mark.parametrize("code", [MDSCode(3, 2), RowMDSCode([2, 2], 3)])
def test_the_shared_b_is_read_only_and_the_callers_stays_writable(code):
    B = np.ones((2, 1))
    encoded = code.encode_operands(np.ones((3, 2)), B)
    assert not encoded.right(0).flags.writeable
    assert B.flags.writeable


# -- validation ---------------------------------------------------------------------
def _bad_piece(worker=0, start=0, stop=1, value=None):
    return Piece(
        worker=worker,
        start=start,
        stop=stop,
        value=np.zeros((stop - start, 1)) if value is None else value,
    )


VALIDATION = [
    (lambda: MDSCode(3, 4), ValueError, "`k` must satisfy 1 <= k <= n, got k=4, n=3."),
    (lambda: MDSCode(3, 0), ValueError, "`k` must be >= 1, got k=0."),
    (lambda: MDSCode(3.0, 2), TypeError, "`n` must be an integer, got float 3.0."),
    (
        lambda: MDSCode(3, 2, 65535),
        ValueError,
        "`field` must be prime, got field=65535.",
    ),
    (lambda: MDSCode(3, 2, True), TypeError, "`field` must be an integer, got bool"),
    (
        lambda: MDSCode(3, 2, 2**61 - 1),
        ValueError,
        "`field` must be a prime <= 2^31 - 1",
    ),
    (
        lambda: MDSCode(3, 2, galois.GF(2**3)),
        ValueError,
        "`field` must be a prime field GF(p), got GF(2^3).",
    ),
    (
        lambda: MDSCode(7, 2, 7),
        ValueError,
        "`n` must be <= p - 1 = 6 (distinct nonzero evaluation points of GF(7)), "
        "got n=7.",
    ),
    (
        lambda: MDSCode(3, 2, systematic=1),
        TypeError,
        "`systematic` must be a bool or None, got int.",
    ),
    (
        lambda: MDSCode(3, 2).encode(np.ones((3, 2))),
        ValueError,
        "`X` must have a number of rows divisible by k=2, got X.shape=(3, 2).",
    ),
    (
        lambda: MDSCode(3, 2).encode(np.ones(4)),
        ValueError,
        "`X` must have ndim in (2,), got shape (4,).",
    ),
    (
        lambda: MDSCode(3, 2).encode(np.array([[np.nan, 1.0]] * 2)),
        ValueError,
        "`X` must be finite (no NaN or inf).",
    ),
    (
        lambda: MDSCode(3, 2).encode(np.ones((2, 2), dtype=complex)),
        TypeError,
        "`X` must be a real or integer array, got dtype complex128.",
    ),
    (
        lambda: MDSCode(3, 2).encode(GF([[1, 2], [3, 4]])),
        TypeError,
        "`X` is a galois FieldArray but the code is over the reals (field=None).",
    ),
    (
        lambda: MDSCode(3, 2, 65537).encode(np.ones((2, 2))),
        TypeError,
        "`X` must be an integer array or a galois FieldArray for a code over GF(p), "
        "got dtype float64.",
    ),
    (
        lambda: MDSCode(3, 2, 7).encode(GF([[1], [2]])),
        ValueError,
        "`X` is an array over GF(65537) but the code is over GF(7).",
    ),
    (
        lambda: MDSCode(3, 2).encode_operands(np.ones((3, 2)), np.ones((3, 2))),
        ValueError,
        "`A` and `B` must have matching inner dimensions, got "
        "A.shape=(3, 2), B.shape=(3, 2).",
    ),
    (
        lambda: MDSCode(3, 2).encode_operands(np.ones((0, 2)), np.ones(2)),
        ValueError,
        "`A` must be non-empty, got shape (0, 2).",
    ),
    (
        lambda: MDSCode(3, 2, 65537).encode_operands(
            np.full((2, 4), 100), np.full(4, 100)
        ),
        ValueError,
        "exact integer results need 2 * max|C| < p; the inputs only "
        "guarantee max|C| <= d * max|A| * max|B| = 40000, so p must exceed 80000, "
        "got p=65537.",
    ),
    (
        lambda: MDSCode(3, 2, 65537).encode_operands(GF([[1, 2]]), np.array([-1, 0])),
        ValueError,
        "`B` entries must lie in the field [0, 65537) next to a FieldArray",
    ),
    (lambda: MDSCode(3, 2).decode({}), DecodingError, "need k=2 results, got 0."),
    (
        lambda: MDSCode(3, 2).decode([np.ones(2)]),
        TypeError,
        "`results` must be a mapping {worker: result}, got list.",
    ),
    (
        lambda: MDSCode(3, 2).decode({3: np.ones(2)}),
        ValueError,
        "`worker` must be <= 2, got worker=3.",
    ),
    (
        lambda: MDSCode(3, 2).decode({0: np.ones((1, 2)), 1: np.ones((2, 2))}),
        ValueError,
        "`piece.value` must have shape (1, 2), got (2, 2).",
    ),
    (
        lambda: MDSCode(3, 2).decode({0: np.ones(1), 1: np.array([np.inf])}),
        ValueError,
        "worker 1 returned a result with 1 non-finite entries (NaN or inf;",
    ),
    (
        lambda: MDSCode(3, 2, 7).decode({0: np.ones(1), 1: np.ones(1) / 2}),
        TypeError,
        "`piece.value` must hold integer residues over GF(p), got dtype",
    ),
    (
        lambda: MDSCode(3, 2).decoder(None),
        TypeError,
        "`encoded` must be the EncodedOperands returned by this code's "
        "encode_operands, got NoneType.",
    ),
    (
        lambda: MDSCode(3, 2, 7).worst_condition_number(),
        ValueError,
        "`worst_condition_number` is defined for real codes (field=None), "
        "got a code over GF(7).",
    ),
    (
        lambda: MDSCode(3, 2).worst_condition_number(samples=0),
        ValueError,
        "`samples` must be >= 1, got samples=0.",
    ),
    (
        lambda: MDSCode(3, 2).is_decodable([0, -1]),
        ValueError,
        "`worker` must be >= 0, got worker=-1.",
    ),
    (
        lambda: RowMDSCode([2, 1], 4),
        ValueError,
        "`loads` must sum to at least m=4, got sum(loads)=3.",
    ),
    (
        lambda: RowMDSCode([2, -1], 1),
        ValueError,
        "`loads[1]` must be >= 0, got loads[1]=-1.",
    ),
    (
        lambda: RowMDSCode(3, 1),
        TypeError,
        "`loads` must be a sequence of ints, got int.",
    ),
    (lambda: RowMDSCode([4, 4], 2, 7), ValueError, "`sum(loads)` must be <= p - 1 = 6"),
    (
        lambda: RowMDSCode([2, 2], 3).encode_operands(np.ones((4, 2)), np.ones(2)),
        ValueError,
        "`A` must have m=3 rows, got shape (4, 2); build the code with m=4 for this "
        "matrix.",
    ),
    (
        lambda: MDSCode(3, 2).encode_residues([[1]], [[1]]),
        ValueError,
        "`encode_residues` needs a code over GF(p), got a code over the reals "
        "(field=None).",
    ),
    (
        lambda: MDSCode(3, 2, field=7).encode_residues([[7]], [[1]]),
        ValueError,
        "`A` entries must lie in the field [0, 7) next to a FieldArray, "
        "got min=7, max=7.",
    ),
    (
        lambda: MDSCode(3, 2, field=7).encode_residues([[1.0]], [[1]]),
        TypeError,
        "`A` must be an integer array or a galois FieldArray for a code over GF(p), "
        "got dtype float64.",
    ),
    (
        lambda: MDSCode(3, 2, field=7).encode_residues([[1, 2]], [[1]]),
        ValueError,
        "`A` and `B` must have matching inner dimensions, "
        "got A.shape=(1, 2), B.shape=(1, 1).",
    ),
]


@pytest.mark.parametrize(("call", "error", "message"), VALIDATION)
def test_input_validation(call, error, message):
    with pytest.raises(error, match=re.escape(message)):
        call()


@pytest.mark.parametrize(
    ("piece", "message"),
    [
        (_bad_piece(worker=5), "`worker` must be <= 2, got worker=5."),
        (
            _bad_piece(start=-1, stop=1, value=np.zeros((2, 1))),
            "`piece.start` must be >= 0, got piece.start=-1.",
        ),
        (_bad_piece(start=0, stop=3), "`piece.stop` must be <= 2, got piece.stop=3."),
        (
            _bad_piece(value=np.zeros((1, 2))),
            "`piece.value` must have shape (1, 1), got (1, 2).",
        ),
        (_bad_piece(value=np.array([[True]])), "`piece.value` must be numeric"),
        ("not a piece", "`piece` must be a Piece, got str."),
    ],
)
def test_decoder_add_validation(piece, message):
    code = MDSCode(3, 2)
    decoder = code.decoder(code.encode_operands(np.ones((4, 2)), np.ones((2, 1))))
    with pytest.raises((ValueError, TypeError), match=re.escape(message)):
        decoder.add(piece)


@pytest.mark.parametrize(
    ("field", "systematic", "m"),
    [(None, False, 300), (None, True, 300), (DEFAULT_PRIME, True, 120)],
)
def test_row_mds_decodes_hundreds_of_rows_from_batches(field, systematic, m):
    loads = [m // 2, m // 2, m // 2]
    code = RowMDSCode(loads, m, field, systematic=systematic)
    rng = np.random.default_rng(17)
    dtype = np.float64 if field is None else np.int64
    A = rng.integers(-9, 10, (m, 6)).astype(dtype)
    x = rng.integers(-9, 10, 6).astype(dtype)
    enc = code.encode_operands(A, x)
    decoder = code.decoder(enc)
    half = m // 2
    # worker 0 (systematic rows) straggles after 1/3 of its rows
    feed(decoder, code, enc, [(0, 0, half // 3), (1, 0, half), (2, 0, half)])
    assert decoder.is_decodable
    C = decoder.decode()
    if field is None:
        np.testing.assert_allclose(C, A @ x, rtol=1e-8, atol=1e-8 * np.abs(A @ x).max())
    else:
        np.testing.assert_array_equal(C, A @ x)


def _table_entries():
    from importlib import resources

    text = resources.files("coded.codes.data").joinpath("real_mds.json").read_text()
    return json.loads(text)["generators"]


def test_shipped_scalar_generators_match_their_recorded_worst_case():
    entries = [e for e in _table_entries() if e["n"] <= 9]
    assert {(e["n"], e["k"]) for e in entries} == {
        (n, k) for n in range(3, 10) for k in range(2, n)
    }
    for e in entries:
        n, k = e["n"], e["k"]
        G = generators.real_generator(n, k, systematic=e["systematic"])
        if e["systematic"]:
            np.testing.assert_array_equal(G[:k], np.eye(k))
            np.testing.assert_array_equal(MDSCode(n, k, systematic=True).generator, G)
        worst = generators.worst_condition_number(G).value
        assert worst <= e["worst_condition_number"] * (1 + 1e-9)
        assert MDSCode(n, k).worst_condition_number().value <= worst * (1 + 1e-9)


def test_stored_frames_match_their_recorded_certified_worst_case():
    frames = generators._frames()
    small = sorted(key for key in frames if key[0] <= 12 and 2 * key[1] > key[0])[:6]
    assert small
    for n, k in small:
        recorded, H = frames[n, k]
        G = generators.frame_generator(H)
        assert G.shape == (2 * n, 2 * k)
        worst = generators.worst_condition_number(G, ell=2)
        assert worst.exact
        assert worst.value == pytest.approx(recorded, rel=1e-9)


def _stored_figures():
    from importlib import resources

    path = resources.files("coded.codes.data").joinpath("complex_frames.npz")
    with path.open("rb") as f, np.load(f) as data:
        return {(int(r[0]), int(r[1])): r[2:] for r in data["figures"]}


def test_default_is_never_worse_than_systematic_for_n_up_to_64_and_s_up_to_3():
    figures = _stored_figures()  # certified by scripts/search_frames.py --figures
    expected = {(n, n - s) for s in (1, 2, 3) for n in range(s + 2, 65)}
    assert expected <= set(figures)
    for default, rotation, systematic in figures.values():
        assert default <= systematic
        assert default <= rotation * (1 + 1e-9)
    for n, k in [(6, 4), (9, 6), (13, 12), (24, 22)]:  # exact recomputation
        default, _, systematic = figures[n, k]
        assert MDSCode(n, k).worst_condition_number().value == pytest.approx(
            default, rel=1e-9
        )
        recomputed = MDSCode(n, k, systematic=True).worst_condition_number()
        assert recomputed.value == pytest.approx(systematic, rel=1e-9)


def test_a_stored_four_erasure_frame_beats_the_rotation_embedding():
    # the rotation embedding: 2454 (exact; scripts/search_frames.py --add 32,28)
    code = MDSCode(32, 28)
    worst = code.worst_condition_number()
    assert code.construction == "complex-frame"
    assert worst.exact
    assert worst.value <= 150


def test_conditioning_beyond_the_tables_is_a_flagged_lower_bound():
    worst = MDSCode(64, 48).worst_condition_number(samples=200, starts=1, rng=3)
    assert not worst.exact
    assert 1 < worst.value < 1e5  # the rotation embedding: 9e11 here


# -- worst_condition_number's search and the default constructions, by hand --------
def _diagonal_workers(c):
    """(2n, 2) generator: worker i holds diag(1, c_i), so cond(G_S) = c_i, S = {i}."""
    return np.concatenate([np.diag([1.0, ci]) for ci in c])


def test_survivor_condition_numbers_are_numpys_cond_in_float64():
    G = np.vander(np.arange(1.0, 6.0), 3, increasing=True)  # one row per worker
    sets = np.array(list(itertools.combinations(range(5), 3)))
    expected = [np.linalg.cond(G[rows]) for rows in sets]
    np.testing.assert_allclose(
        generators.survivor_condition_numbers(G, sets), expected, rtol=1e-12
    )
    # a float32 generator is conditioned in float64 (float32 is off by ~1e-8)
    G32 = np.random.default_rng(5).standard_normal((6, 6)).astype(np.float32)
    cond = generators.survivor_condition_numbers(G32, [[0, 1, 2]], ell=2)
    assert cond[0] == pytest.approx(np.linalg.cond(G32.astype(np.float64)), rel=1e-12)


def test_a_singular_survivor_set_is_infinite_without_a_warning():
    G = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]])  # worker 1 holds zeros
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no divide-by-zero RuntimeWarning
        cond = generators.survivor_condition_numbers(G, [[0, 1], [0, 2]])
    assert cond.tolist() == [math.inf, 1.0]


@pytest.mark.parametrize(
    ("G", "ell"),
    [
        (np.random.default_rng(1).standard_normal((6, 6)), 2),  # square: k = n
        # extra = n - k: every worker, least squares; float32 conditioned in float64
        (np.random.default_rng(2).standard_normal((4, 3)).astype(np.float32), 1),
    ],
)
def test_no_erasure_is_the_condition_number_of_the_whole_generator(G, ell):
    n, k = G.shape[0] // ell, G.shape[1] // ell
    worst = generators.worst_condition_number(G, ell=ell, extra=n - k)
    assert worst.value == pytest.approx(np.linalg.cond(G.astype(np.float64)), rel=1e-12)
    assert worst.exact is True
    assert worst.survivors == tuple(range(n))
    assert worst.evaluated == 1


def test_a_generator_off_orthonormal_by_2e_9_is_decomposed_exactly():
    # orthogonal columns, one 1 + 2e-9 long: G^T G is within 1e-8 of I but not
    # within the 1e-12 of the dual shortcut, which would be off by ~1e-9 here
    Q, _ = np.linalg.qr(np.random.default_rng(5).standard_normal((14, 10)))
    G = Q * np.r_[1 + 2e-9, np.ones(9)]
    value, _ = _brute_worst(G, 2, 7, 5)
    assert generators.worst_condition_number(G, ell=2).value == pytest.approx(
        value, rel=1e-12
    )


def test_equal_condition_numbers_report_a_real_survivor_set():
    worst = generators.worst_condition_number(np.ones((4, 1)))  # every cond is 1
    assert (worst.value, worst.exact, worst.evaluated) == (1.0, True, 4)
    assert len(worst.survivors) == 1


def test_swap_one_ascent_climbs_to_the_best_neighbour_and_stops():
    # worker i alone survives (k = 1): cond is c_i; every other worker's set is a
    # neighbour (n - 1 = 4 evaluated per step)
    cond = generators._Conditioning(_diagonal_workers([1.0, 2.0, 3.0, 4.0, 5.0]), 2)
    erased, value, evaluated = generators._swap_one_ascent(
        cond, np.array([1, 2, 3, 4]), 1.0, 50
    )
    assert (erased.tolist(), value, evaluated) == ([0, 1, 2, 3], 5.0, 8)
    # a tie is no ascent: from worker 2, one step to worker 0 (cond 5), whose
    # neighbour worker 1 (cond 5 too) is not taken
    cond = generators._Conditioning(_diagonal_workers([5.0, 5.0, 1.0, 1.0, 1.0]), 2)
    erased, value, evaluated = generators._swap_one_ascent(
        cond, np.array([0, 1, 3, 4]), 1.0, 50
    )
    assert (erased.tolist(), value, evaluated) == ([1, 2, 3, 4], 5.0, 8)


def test_search_counts_its_samples_and_every_ascent_step():
    G = _diagonal_workers([1.0, 2.0, 3.0, 4.0, 5.0])  # 5 survivor sets of 1 worker
    # defaults: 20000 samples; the 8 worst are worker 4's (cond 5), each ascent
    # evaluates its 4 neighbours once
    worst = generators.worst_condition_number(G, ell=2, exact_limit=4)
    assert worst == generators.WorstCondition(5.0, False, (4,), 20_000 + 8 * 4)
    # one start, from the worst sample (worker 4), not from the best (2 steps)
    worst = generators.worst_condition_number(
        G, ell=2, exact_limit=1, samples=200, starts=1
    )
    assert worst == generators.WorstCondition(5.0, False, (4,), 200 + 4)
    # all equal (cond 1): each of the 4 starts stops after its first 4 neighbours
    equal = np.tile(np.eye(2), (5, 1))
    worst = generators.worst_condition_number(
        equal, ell=2, exact_limit=1, samples=4, starts=4
    )
    assert (worst.value, worst.exact, worst.evaluated) == (1.0, False, 4 + 4 * 4)
    assert len(worst.survivors) == 1


def test_search_is_reproducible_from_its_seed():
    # 200 workers of equal cond: the reported set is the one sample drawn
    G = np.tile(np.eye(2), (200, 1))

    def search(**rng):
        return generators.worst_condition_number(
            G, ell=2, exact_limit=1, samples=1, starts=1, **rng
        )

    assert search(rng=0).survivors != search(rng=1).survivors
    assert search() == search(rng=0)  # the default seed is 0
    assert search(rng=7) == search(rng=np.random.default_rng(7))
    assert search(rng=7).evaluated == 1 + 199


def _shape_message(ell, shape):
    return (
        f"`G` must be a 2-D (ell n, ell k) matrix with k <= n and ell={ell} "
        f"dividing both sides, got shape {shape}."
    )


@pytest.mark.parametrize(
    ("G", "options", "message"),
    [
        (np.eye(2), {"ell": 0}, "`ell` must be >= 1, got ell=0."),
        (np.eye(2), {"extra": -1}, "`extra` must be >= 0, got extra=-1."),
        (
            np.eye(2),
            {"exact_limit": 0},
            "`exact_limit` must be >= 1, got exact_limit=0.",
        ),
        (np.eye(2), {"starts": 0}, "`starts` must be >= 1, got starts=0."),
        (np.ones(4), {}, _shape_message(1, (4,))),
        (np.ones((3, 4)), {}, _shape_message(1, (3, 4))),  # k > n
        (np.ones((3, 2)), {"ell": 2}, _shape_message(2, (3, 2))),  # 3 rows
        (np.ones((3, 2)), {"extra": 2}, "`extra` must be <= n - k = 1, got extra=2."),
    ],
)
def test_worst_condition_number_validation(G, options, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        generators.worst_condition_number(G, **options)


@pytest.mark.parametrize(
    ("n", "k", "systematic", "name", "holds"),
    [
        (5, 3, True, "systematic", lambda G: np.array_equal(G[:3], np.eye(3))),
        (4, 4, False, "identity", lambda G: np.array_equal(G, np.eye(4))),
        (4, 1, False, "repetition", lambda G: np.array_equal(G, np.ones((4, 1)))),
        (
            5,
            4,
            False,
            "ones-complement",
            lambda G: np.allclose(G.T @ G, np.eye(4)) and np.allclose(G.sum(0), 0),
        ),
    ],
)
def test_the_closed_form_constructions_by_name(n, k, systematic, name, holds):
    block = generators.block_generator(n, k, systematic=systematic)
    assert (block.construction, block.ell, block.G.shape) == (name, 1, (n, k))
    assert holds(block.G)


@pytest.mark.parametrize(
    ("n", "k", "name"), [(17, 2, "rotation"), (15, 9, "seeded-complex")]
)
def test_cheap_pairs_take_the_better_certified_of_rotation_and_seeded(n, k, name):
    # (15, 9) also has scalar generators (worst case 2629): both beat them
    rotation = generators.worst_condition_number(
        generators.rotation_generator(n, k), ell=2
    )
    seeded = generators.worst_condition_number(generators._seeded_frame(n, k), ell=2)
    code = MDSCode(n, k)
    assert (code.construction, code.subblocks) == (name, 2)
    assert code.worst_condition_number().value == pytest.approx(
        min(rotation.value, seeded.value), rel=1e-12
    )


def test_beyond_the_tables_rotation_up_to_four_erasures_then_seeded_complex():
    code = MDSCode(70, 66)  # C(70, 4) = 916895 survivor sets: nothing certified
    assert (code.construction, code.subblocks) == ("rotation", 2)
    i, j = 3, 5  # worker i's block j: the rotation by 2 pi i j / n, over sqrt(n)
    c, s = math.cos(2 * math.pi * i * j / 70), math.sin(2 * math.pi * i * j / 70)
    np.testing.assert_allclose(
        code.generator[2 * i : 2 * i + 2, 2 * j : 2 * j + 2],
        np.array([[c, -s], [s, c]]) / math.sqrt(70),
        rtol=0,
        atol=1e-15,
    )
    code = MDSCode(70, 65)  # five erasures: the seeded complex orthonormal code
    assert (code.construction, code.subblocks) == ("seeded-complex", 2)
    G = code.generator
    np.testing.assert_allclose(G.T @ G, np.eye(130), rtol=0, atol=1e-12)


@pytest.mark.parametrize(("n", "k"), [(11, 4), (14, 3), (16, 2)])
def test_the_non_systematic_scalar_generator_is_the_better_stored_one(n, k):
    worst = {
        e["systematic"]: e["worst_condition_number"]
        for e in _table_entries()
        if (e["n"], e["k"]) == (n, k)
    }
    assert worst[True] < worst[False]  # here the systematic search did better
    G = generators.real_generator(n, k, systematic=False)
    np.testing.assert_array_equal(G[:k], np.eye(k))
    value, _ = _brute_worst(G, 1, n, k)
    assert value <= worst[True] * (1 + 1e-9)


def test_the_gf_non_systematic_generator_is_vandermonde_on_1_to_n():
    code = MDSCode(6, 3, field=257, systematic=False)
    assert code.construction == "vandermonde"
    expected = [[pow(x, j, 257) for j in range(3)] for x in range(1, 7)]
    assert np.asarray(code.generator).tolist() == expected


@pytest.mark.parametrize("systematic", [False, True])
@given(data=st.data())
def test_encode_residues_decodes_to_residues_without_field_arrays(systematic, data):
    p = 65_537
    code = data.draw(mds_codes(max_n=6, field=p, systematic=systematic))
    m = data.draw(st.integers(1, 7))
    A = np.mod(data.draw(matrices((m, 3), field=p, max_abs=p)), p)
    B = np.mod(data.draw(matrices((3, 2), field=p, max_abs=p)), p)
    encoded = code.encode_residues(A, B)
    survivors = data.draw(st.permutations(range(code.n)))[: code.k]
    results = {i: code.multiply(encoded.lefts[i], encoded.right(i)) for i in survivors}
    C = code.decode_results(encoded, results)
    assert type(C) is np.ndarray
    assert C.dtype == np.int64
    np.testing.assert_array_equal(C, matmul_mod(A, B, p))


def test_systematic_encode_gives_views_of_a_and_one_parity_product():
    rng = np.random.default_rng(3)
    A, B = rng.standard_normal((12, 5)), rng.standard_normal((5, 2))
    code = MDSCode(5, 3, systematic=True)
    encoded = code.encode_operands(A, B)
    G = code.generator
    for i, left in enumerate(encoded.lefts):
        assert not left.flags.writeable
        assert np.shares_memory(left, A) == (i < 3)
        expected = np.einsum("j,jrd->rd", G[i], A.reshape(3, 4, 5))
        np.testing.assert_allclose(left, expected, rtol=1e-12, atol=1e-12)
    assert A.flags.writeable  # the caller's array is left alone


def test_non_contiguous_and_integer_real_operands_encode_correctly():
    rng = np.random.default_rng(4)
    A = rng.standard_normal((5, 14))[:, ::2]  # strided: must be copied, not viewed
    B = rng.integers(-3, 4, (7, 3))  # integer B over the reals: converted
    code = MDSCode(4, 3)
    encoded = code.encode_operands(A, B)
    results = {i: code.multiply(encoded.lefts[i], encoded.right(i)) for i in (0, 2, 3)}
    np.testing.assert_allclose(code.decode_results(encoded, results), A @ B)


@pytest.mark.parametrize("sparse_format", ["csr", "csc", "coo"])
def test_an_uncoded_code_keeps_a_sparse_a_as_float_csr_blocks(sparse_format):
    import scipy.sparse

    code = MDSCode(2, 2)  # workers hold source blocks: A stays sparse
    A = np.array([[1, 0], [0, 2], [3, 0], [0, 4]], dtype=np.int64)
    sparse = getattr(scipy.sparse, f"{sparse_format}_array")(A)
    encoded = code.encode_operands(sparse, np.array([1.0, 1.0]))
    assert [(left.format, left.dtype) for left in encoded.lefts] == [
        ("csr", np.float64)
    ] * 2
    C = code.decode_results(encoded, worker_results(code, encoded))
    assert C.tolist() == [1.0, 2.0, 3.0, 4.0]


def test_a_sparse_a_is_padded_to_whole_blocks_and_the_padding_dropped():
    import scipy.sparse

    code = MDSCode(2, 2)  # K = 2 blocks of 2 rows: one zero row pads A's 3
    A = scipy.sparse.csr_array(np.array([[1.0], [2.0], [3.0]]))  # one column
    encoded = code.encode_operands(A, np.array([[1.0, -1.0]]))
    assert [left.shape for left in encoded.lefts] == [(2, 1), (2, 1)]
    C = code.decode_results(encoded, worker_results(code, encoded))
    assert C.tolist() == [[1.0, -1.0], [2.0, -2.0], [3.0, -3.0]]


@pytest.mark.parametrize(
    ("code", "A", "error", "message"),
    [
        (
            MDSCode(3, 2, field=7),
            np.eye(2),
            TypeError,
            "`A` is a scipy.sparse matrix, taken over the reals only; pass "
            "`A.toarray()` for a code over GF(p).",
        ),
        (
            MDSCode(3, 2),
            np.eye(2),
            TypeError,
            "`A` is a scipy.sparse matrix; MDSCode's coded blocks are sums of A's "
            "blocks, dense in general: use scheme='rateless' (LTCode, whose shares "
            "stay sparse), replication or uncoded, or pass `A.toarray()`.",
        ),
        (
            MDSCode(2, 2),
            np.zeros((0, 2)),
            ValueError,
            "`A` must be non-empty, got shape (0, 2).",
        ),
    ],
)
def test_sparse_a_refusals_in_full(code, A, error, message):
    import scipy.sparse

    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        code.encode_operands(scipy.sparse.csr_array(A), np.ones(2))


def test_encode_names_the_blocks_of_a_code_with_sub_blocks():
    message = (
        "`X` must have a number of rows divisible by 2k=6 (k=3 workers' blocks), "
        "got X.shape=(4, 2)."
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        MDSCode(5, 3).encode(np.ones((4, 2)))  # ell = 2: K = 6 blocks


def test_worst_condition_number_runs_the_generators_search_with_its_options():
    code = MDSCode(200, 1)  # every cond is 1: the reported set is the first draw
    assert_worst_condition_search_options(code)


def test_decode_results_corrects_as_many_wrong_workers_as_asked():
    p = DEFAULT_PRIME
    code = MDSCode(7, 3, field=p)  # 4 spares: 2 wrong workers corrected
    A, B = np.arange(12).reshape(6, 2), np.array([1, -1])
    encoded = code.encode_operands(A, B)
    results = worker_results(code, encoded)
    for worker in (1, 4):
        results[worker] = (results[worker] + 1) % p
    C = code.decode_results(encoded, results, verify="correct", wrong=2)
    np.testing.assert_array_equal(C, A @ B)
