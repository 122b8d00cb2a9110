"""LTCode: degree distributions, sparse encoding, peeling + least-squares decoding."""

import re

import numpy as np
import pytest
import scipy.sparse
from hypothesis import assume, given
from hypothesis import strategies as st

from coded._resources import estimate_memory
from coded.codes import DegreeDistribution, LTCode, Piece
from coded.errors import DecodingError, NonFiniteResultError, NotEnoughResultsError

EPS = np.finfo(np.float64).eps


@st.composite
def received_sets(draw):
    """A small code, dense operands and random row ranges of random workers."""
    m = draw(st.integers(1, 30))
    n = draw(st.integers(1, min(4, m)))
    overhead = draw(st.floats(1.0, 2.5))
    distribution = draw(st.sampled_from(["robust", "wave"]))
    code = LTCode(
        n,
        m,
        overhead=overhead,
        distribution=distribution,
        rng=draw(st.integers(0, 2**16)),
    )
    pieces = []
    for w, (a, b) in enumerate(code.row_ranges):
        start = draw(st.integers(0, b - a))
        stop = draw(st.integers(start, b - a))
        pieces.append((w, start, stop))
    seed = draw(st.integers(0, 2**16))
    return code, pieces, np.random.default_rng(seed)


def _feed(code, encoded, pieces, decoder):
    rows = []
    for w, start, stop in pieces:
        value = code.multiply(encoded.lefts[w][start:stop], encoded.right(w))
        decoder.add(Piece(worker=w, start=start, stop=stop, value=value))
        a = code.row_ranges[w][0]
        rows.extend(range(a + start, a + stop))
    return np.array(rows, dtype=int)


@given(received_sets())
def test_decodes_iff_the_received_rows_have_full_rank(case):
    code, pieces, rng = case
    A = rng.normal(size=(code.m, 3))
    B = rng.normal(size=(3, 2))
    encoded = code.encode_operands(A, B)
    decoder = code.decoder(encoded)
    rows = _feed(code, encoded, pieces, decoder)
    G = code.generator[rows].toarray()
    rank = np.linalg.matrix_rank(G) if rows.size else 0
    assert decoder.is_decodable == (rank == code.m)
    if rank < code.m:
        with pytest.raises(NotEnoughResultsError, match=f"rank {rank} < m={code.m}"):
            decoder.decode()
        return
    product = decoder.decode()
    np.testing.assert_allclose(product, A @ B, rtol=1e-10, atol=1e-10)
    Y = np.vstack([code.multiply(encoded.lefts[w][a:b], B) for w, a, b in pieces])
    reference = np.linalg.lstsq(G, Y, rcond=None)[0]
    np.testing.assert_allclose(product, reference, rtol=1e-10, atol=1e-10)


@given(m=st.integers(1, 30), seed=st.integers(0, 1000), data=st.data())
def test_code_is_decodable_iff_the_workers_rows_have_full_rank(m, seed, data):
    code = LTCode(min(m, 4), m, overhead=1.5, rng=seed)
    workers = data.draw(st.sets(st.integers(0, code.n - 1)))
    rows = [r for w in workers for r in range(*code.row_ranges[w])]
    rank = np.linalg.matrix_rank(code.generator[rows].toarray()) if rows else 0
    assert code.is_decodable(workers) == (rank == m)


def test_whole_workers_decodability_matches_the_decoder():
    code = LTCode(5, 40, overhead=1.5, rng=3)
    A, x = np.random.default_rng(0).normal(size=(40, 2)), np.ones(2)
    encoded = code.encode_operands(A, x)
    for workers in ([0, 1, 2], [0, 1, 2, 3], list(range(5))):
        decoder = code.decoder(encoded)
        _feed(code, encoded, [(w, 0, code.loads[w]) for w in workers], decoder)
        assert code.is_decodable(workers) == decoder.is_decodable


@pytest.mark.parametrize("m", [1000, 5000])
def test_streamed_decode_is_accurate(m):
    rng = np.random.default_rng(1)
    code = LTCode(8, m, rng=2)
    A, x = rng.normal(size=(m, 10)), rng.normal(size=10)
    encoded = code.encode_operands(A, x)
    decoder = code.decoder(encoded)
    batches = [
        (w, s, min(s + m // 50, b - a))
        for w, (a, b) in enumerate(code.row_ranges)
        for s in range(0, b - a, m // 50)
    ]
    for i in rng.permutation(len(batches)):
        _feed(code, encoded, [batches[i]], decoder)
        if decoder.is_decodable and not decoder.needs_more:
            break
    received, needed = decoder.progress
    assert needed == m
    assert m <= received <= 1.3 * m
    product = decoder.decode()
    assert product.shape == (m,)
    assert np.linalg.norm(product - A @ x) <= 1e-12 * np.linalg.norm(A @ x)


def _sparse_nonnegative(m, d, density, seed):
    return scipy.sparse.random_array(
        (m, d),
        density=density,
        format="csr",
        rng=seed,
        data_sampler=lambda size: np.random.default_rng(seed).uniform(1, 2, size),
    )


@given(m=st.integers(3, 40), seed=st.integers(0, 1000))
def test_sparse_shares_stay_sparse_with_degree_weighted_nonzeros(m, seed):
    A = _sparse_nonnegative(m, 6, 0.3, seed)
    code = LTCode(3, m, rng=seed)
    encoded = code.encode_operands(A, np.ones(6))
    assert all(scipy.sparse.issparse(s) and s.format == "csr" for s in encoded.lefts)
    nnz = sum(s.nnz for s in encoded.lefts)
    pattern = (code.generator @ (A != 0).astype(float)).toarray()
    assert nnz == np.count_nonzero(pattern)  # nonnegative data: no cancellation
    assert nnz <= int((code.generator @ np.diff(A.indptr)).sum())
    # source rows with disjoint patterns: exactly the degree-weighted sum
    disjoint = scipy.sparse.csr_array(np.eye(m) * np.arange(1, m + 1))
    shares = code.encode_operands(disjoint, np.ones(m)).lefts
    assert sum(s.nnz for s in shares) == int(np.diff(code.generator.indptr).sum())


def test_sparse_product_within_eps():
    m = 3000
    A = _sparse_nonnegative(m, 200, 0.02, 5)
    x = np.random.default_rng(5).normal(size=(200, 2))
    code = LTCode(4, m, rng=5)
    encoded = code.encode_operands(A, x)
    results = {w: code.multiply(encoded.lefts[w], x) for w in range(4)}
    product = code.decode_results(encoded, results)
    assert isinstance(product, np.ndarray)
    assert np.linalg.norm(product - A @ x) <= 1e3 * EPS * np.linalg.norm(A @ x)


@pytest.mark.parametrize("fmt", ["csc", "coo"])
def test_csc_and_coo_are_converted_to_csr(fmt):
    A = _sparse_nonnegative(20, 5, 0.4, 1)
    code = LTCode(2, 20, rng=0)
    expected = code.encode_operands(A, np.ones(5)).lefts
    got = code.encode_operands(A.asformat(fmt), np.ones(5)).lefts
    for share, ref in zip(got, expected, strict=True):
        assert share.format == "csr"
        np.testing.assert_array_equal(share.toarray(), ref.toarray())


def test_dense_shares_stay_dense():
    code = LTCode(2, 10, rng=0)
    encoded = code.encode_operands(np.ones((10, 3)), np.ones(3))
    assert all(isinstance(s, np.ndarray) for s in encoded.lefts)


@pytest.mark.parametrize(
    ("A", "error", "match"),
    [
        ([[1.0, 2.0]] * 10, TypeError, "`A` must be a numpy array or a scipy.sparse"),
        (scipy.sparse.lil_array(np.ones((10, 2))), TypeError, "LIL.*CSR, CSC or COO"),
        (np.ones((9, 2)), ValueError, "`A` must have m=10 rows"),
        (np.full((10, 2), np.nan), ValueError, "`A` must be finite"),
    ],
)
def test_bad_operands_are_named(A, error, match):
    with pytest.raises(error, match=match):
        LTCode(2, 10).encode_operands(A, np.ones(2))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"overhead": 0.9}, "`overhead`"),
        ({"distribution": "ideal"}, "`distribution` must be 'robust', 'wave'"),
        (
            {"distribution": DegreeDistribution([0, 0, 0, 1])},
            "degrees up to 4, above m=3",
        ),
        ({"n": 5}, "at least n=5"),
    ],
)
def test_bad_code_parameters_are_named(kwargs, match):
    params = {"n": 2, "m": 3} | kwargs
    with pytest.raises(
        ValueError, match=re.escape(match) if "'" not in match else match
    ):
        LTCode(params.pop("n"), params.pop("m"), **params)


@pytest.mark.parametrize(
    ("probabilities", "match"),
    [
        ([0.5, 0.4], "`probabilities` must sum to 1"),
        ([0.5, 0.5 + 1e-9], "`probabilities` must sum to 1"),
        ([1.5, -0.5], "nonnegative"),
        ([], "non-empty"),
    ],
)
def test_degree_distribution_must_sum_to_one(probabilities, match):
    with pytest.raises(ValueError, match=match):
        DegreeDistribution(probabilities)


@pytest.mark.parametrize("m", [1, 2, 3, 10, 1000, 100_000])
def test_soliton_distributions_sum_to_one(m):
    for dist in (
        DegreeDistribution.robust_soliton(m),
        DegreeDistribution.wave_soliton(m),
    ):
        assert abs(dist.probabilities.sum() - 1) <= 1e-12
        assert 1 <= dist.max_degree <= m


def test_wave_soliton_matches_its_definition():
    p = DegreeDistribution.wave_soliton(100).probabilities
    tau = 35 / 18
    np.testing.assert_allclose(
        p[[0, 1, 2, 9]], tau * np.array([1 / 100, 1 / 70, 1 / 6, 1 / 90])
    )


def test_robust_soliton_parameters_are_checked():
    with pytest.raises(ValueError, match="`delta`"):
        DegreeDistribution.robust_soliton(10, delta=1.0)
    with pytest.raises(ValueError, match="`c`"):
        DegreeDistribution.robust_soliton(10, c=0.0)


def test_sampling_and_generator_are_seeded():
    dist = DegreeDistribution.robust_soliton(500)
    np.testing.assert_array_equal(dist.sample(100, 3), dist.sample(100, 3))
    a, b = LTCode(3, 50, rng=4).generator, LTCode(3, 50, rng=4).generator
    assert (a != b).nnz == 0
    degrees = np.diff(a.indptr)
    assert degrees.min() >= 1
    assert a.max() == 1  # distinct columns per row


@given(
    m=st.integers(2, 30),
    overhead=st.floats(1.5, 2.5),
    distribution=st.sampled_from(["robust", "wave"]),
    seed=st.integers(0, 2**16),
    data=st.data(),
)
def test_a_wrong_row_raises_exactly_when_the_received_rows_contradict(
    m, overhead, distribution, seed, data
):
    """The check finds every inconsistency a least-squares fit of all rows finds.

    (With no inactive column it multiplies out only the rows peeling left unused.)
    """
    code = LTCode(2, m, overhead=overhead, distribution=distribution, rng=seed)
    pieces = [
        (w, 0, data.draw(st.integers((b - a) * 3 // 4, b - a)))
        for w, (a, b) in enumerate(code.row_ranges)
    ]
    rng = np.random.default_rng(seed)
    A, B = rng.normal(size=(code.m, 3)), rng.normal(size=(3, 2))
    encoded = code.encode_operands(A, B)
    rows = _feed(code, encoded, pieces, code.decoder(encoded))
    G = code.generator[rows].toarray()
    assume(rows.size and np.linalg.matrix_rank(G) == code.m)
    Y = np.vstack([code.multiply(encoded.lefts[w][a:b], B) for w, a, b in pieces])
    wrong = data.draw(st.integers(0, rows.size - 1))
    Y[wrong] += 1.0
    fit = np.linalg.lstsq(G, Y, rcond=None)[0]
    contradict = np.linalg.norm(Y - G @ fit) > 1e-6
    decoder, offset = code.decoder(encoded), 0
    for w, a, b in pieces:
        value = Y[offset : offset + b - a]
        decoder.add(Piece(worker=w, start=a, stop=b, value=value))
        offset += b - a
    if contradict:
        with pytest.raises(DecodingError, match="does not satisfy"):
            decoder.decode()
    else:
        np.testing.assert_allclose(decoder.decode(), fit, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize(
    ("code", "worker", "row"),
    [
        (LTCode(4, 200, rng=1), 2, 5),
        (LTCode(4, 600, overhead=1.1, distribution="wave", rng=0), 1, 3),
    ],
    ids=["peeled", "inactivated-columns"],
)
def test_a_wrong_result_raises_instead_of_returning_a_product(code, worker, row):
    A, x = np.random.default_rng(0).normal(size=(code.m, 3)), np.ones(3)
    encoded = code.encode_operands(A, x)
    results = {w: code.multiply(encoded.lefts[w], x) for w in range(4)}
    results[worker] = results[worker].copy()
    results[worker][row] += 1.0
    with pytest.raises(DecodingError, match="does not satisfy"):
        code.decode_results(encoded, results)


def test_non_finite_result_names_the_worker():
    code = LTCode(2, 10, rng=0)
    encoded = code.encode_operands(np.ones((10, 2)), np.ones(2))
    decoder = code.decoder(encoded)
    with pytest.raises(NonFiniteResultError) as info:
        decoder.add(Piece(worker=1, start=0, stop=2, value=np.array([np.inf, 1.0])))
    assert info.value.worker == 1


def test_mark_tracks_decodability_without_values():
    code = LTCode(3, 30, overhead=2.0, rng=0)
    encoded = code.encode_operands(np.ones((30, 2)), np.ones(2))
    decoder = code.decoder(encoded)
    for w in range(3):
        decoder.mark(w, 0, code.loads[w])
    assert decoder.is_decodable == code.is_decodable(range(3))


def test_memory_estimate_counts_nonzeros():
    code = LTCode(4, 10_000, rng=0)
    dense = estimate_memory(code, 10_000, 1000, 1)
    sparse = estimate_memory(code, 10_000, 1000, 1, nnz=10_000)
    assert sparse.client_bytes < dense.client_bytes / 50
    assert max(sparse.worker_bytes) < max(dense.worker_bytes) / 20


@pytest.mark.parametrize("seed", [0, 1])
def test_wave_soliton_decodes_beyond_the_old_residual_limit_by_inactivation(seed):
    m = 3000
    code = LTCode(4, m, overhead=1.05, distribution="wave", rng=seed)
    rng = np.random.default_rng(seed)
    A, B = rng.normal(size=(m, 3)), rng.normal(size=(3, 2))
    encoded = code.encode_operands(A, B)
    decoder = code.decoder(encoded)
    _feed(code, encoded, [(w, 0, code.loads[w]) for w in range(4)], decoder)
    assert decoder.is_decodable
    assert decoder._current_solver().inactive.size > 0  # peeling alone stalls
    product = decoder.decode()
    error = np.linalg.norm(product - A @ B) / np.linalg.norm(A @ B)
    assert error <= decoder.condition_number * 1e3 * EPS


def test_generators_of_a_seed_and_a_named_distribution_are_cached():
    assert LTCode(3, 500, rng=4).generator is LTCode(5, 500, rng=4).generator
    assert LTCode(3, 500, rng=4).generator is not LTCode(3, 500, rng=5).generator
    fresh = [LTCode(3, 500, rng=np.random.default_rng(4)).generator for _ in "ab"]
    assert fresh[0] is not fresh[1]
    assert (fresh[0] != fresh[1]).nnz == 0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_near_m_the_test_is_exact_once_no_rows_arrive_and_on_decode(seed):
    m = 1000  # a failed or first plan waits for 1.02 m rows while rows arrive
    code = LTCode(4, m, rng=seed)
    rng = np.random.default_rng(seed)
    A, x = rng.normal(size=(m, 3)), rng.normal(size=3)
    encoded = code.encode_operands(A, x)
    pieces = [(w, 0, 252) for w in range(4)] + [(0, 252, 252 + 5 * seed)]
    decoder = code.decoder(encoded)
    rows = _feed(code, encoded, pieces, decoder)
    assert m <= rows.size < 1.02 * m
    assert np.linalg.matrix_rank(code.generator[rows].toarray()) == m
    answers = [decoder.is_decodable for _ in range(3)]  # a waiting run's polls
    assert answers == [False, False, True]
    fresh = code.decoder(encoded)
    _feed(code, encoded, pieces, fresh)
    np.testing.assert_allclose(fresh.decode(), A @ x, rtol=1e-8, atol=1e-8)


def _feed_rounds(code, decoder, start, until):
    """Mark 10 rows of every worker per round from `start` until `until` rows."""
    while decoder.progress[0] < until:
        for w in range(code.n):
            decoder.mark(w, start, min(start + 10, code.loads[w]))
        start += 10
    return start


@pytest.mark.parametrize("seed", [0, 1])
def test_plans_take_over_from_arrival_order_peeling_at_m_plus_m_over_50(seed):
    m = 2000
    code = LTCode(4, m, rng=seed)
    decoder = code.decoder(code.encode_operands(np.ones((m, 2)), np.ones(2)))
    start = _feed_rounds(code, decoder, 0, m + m // 50)
    unknown = decoder._peel.unknown
    assert unknown  # peeling in arrival order had not resolved every row, and stops
    decoder._solver, decoder._tried = None, decoder.progress[0]  # a plan just failed
    assert not decoder.is_decodable  # the next plan comes with m / 50 more rows
    _feed_rounds(code, decoder, start, decoder.progress[0] + m // 50)
    assert decoder._peel.unknown == unknown
    assert decoder.is_decodable
    assert np.isfinite(decoder.condition_number)  # needs_more is not a NaN test


# Boundaries and messages, each against an oracle written out here (issue 43)


def test_wave_solitons_m_and_the_workers_of_is_decodable_are_checked():
    with pytest.raises(ValueError, match=r"^`m` must be >= 1, got m=0\.$"):
        DegreeDistribution.wave_soliton(0)
    code = LTCode(3, 12, rng=0)
    with pytest.raises(ValueError, match=r"^`workers\[i\]` must be <= 2, got "):
        code.is_decodable([0, 3])
    with pytest.raises(ValueError, match=r"^`workers\[i\]` must be >= 0, got "):
        code.is_decodable([-1])


@pytest.mark.parametrize("n", [1, 3])
def test_encode_right_keeps_a_shares_and_norm_and_decodes_the_new_product(n):
    rng = np.random.default_rng(n)
    code = LTCode(n, 40, overhead=2.0, rng=0)
    A = rng.normal(size=(40, 3))
    first = code.encode_operands(A, np.ones(3))
    B = rng.normal(size=(3, 2))
    encoded = code.encode_right(first, B)
    assert encoded.lefts is first.lefts
    np.testing.assert_array_equal(encoded.right(0), B)
    context = encoded.context
    assert context.a_norm == first.context.a_norm == np.linalg.norm(A)
    assert context.scale == pytest.approx(np.linalg.norm(A) * np.linalg.norm(B))
    assert (context.m, context.is_vector, context.c) == (40, False, 2)
    results = {w: code.multiply(encoded.lefts[w], B) for w in range(n)}
    np.testing.assert_allclose(code.decode_results(encoded, results), A @ B, atol=1e-9)


def test_too_few_rows_name_their_rank():
    """The rank the message gives is numpy's rank of the received generator rows."""
    code = LTCode(2, 20, overhead=2.0, rng=3)
    encoded = code.encode_operands(np.ones((20, 2)), np.ones(2))
    decoder = code.decoder(encoded)
    _feed(code, encoded, [(0, 0, 12)], decoder)
    rank = np.linalg.matrix_rank(code.generator[:12].toarray())
    message = (
        f"the 12 received rows have rank {rank} < m=20: need more encoded rows "
        "(any rows, from any worker)."
    )
    with pytest.raises(NotEnoughResultsError, match=f"^{re.escape(message)}$"):
        decoder.decode()


def test_peeling_beyond_the_inactivation_limit_names_the_rank_reached():
    """m = 5000: at most 2048 columns are inactivated; 300 rows leave more
    unknown, so the message gives the peeled count."""
    m = 5000
    code = LTCode(4, m, rng=0)
    decoder = code.decoder(code.encode_operands(np.ones((m, 1)), np.ones(1)))
    decoder.mark(0, 0, 300)
    with pytest.raises(NotEnoughResultsError) as info:
        decoder.decode()
    found = re.fullmatch(
        r"peeling stopped with (\d+) of m=5000 source rows unknown \(more than the "
        r"2048 the decoder inactivates\) after 300 received rows: rank at least "
        r"(\d+) reached; wait for more rows\.",
        str(info.value),
    )
    assert found
    unknown, rank = int(found[1]), int(found[2])
    assert unknown + rank == m
    assert 0 < rank <= 300
    assert rank <= np.linalg.matrix_rank(code.generator[:300].toarray())


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"m": 0}, "`m` must be >= 1, got m=0."),
        ({"m": 10, "delta": 0.0}, "`delta` must be > 0.0, got delta=0.0."),
        ({"m": 10, "delta": -0.5}, "`delta` must be > 0.0, got delta=-0.5."),
        ({"m": 10, "delta": 1.5}, "`delta` must be <= 1.0, got delta=1.5."),
        ({"m": 10, "delta": 1.0}, "`delta` must be < 1, got 1.0."),
        ({"m": 10, "c": 0.0}, "`c` must be > 0.0, got c=0.0."),
    ],
)
def test_robust_solitons_parameters_are_named_whole(kwargs, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        DegreeDistribution.robust_soliton(**kwargs)


def test_sample_draws_every_degree_up_to_the_largest_and_checks_its_size():
    assert DegreeDistribution([0.0, 0.0, 1.0]).sample(5, 0).tolist() == [3] * 5
    draws = DegreeDistribution([0.25, 0.0, 0.75]).sample(400, 1)
    assert set(draws.tolist()) == {1, 3}
    empty = DegreeDistribution([1.0]).sample(0, 0)
    assert (empty.shape, empty.dtype) == ((0,), np.int64)
    with pytest.raises(ValueError, match=r"^`size` must be >= 0, got size=-1\.$"):
        DegreeDistribution([1.0]).sample(-1)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda: DegreeDistribution([]),
            "`probabilities` must be a non-empty sequence of nonnegative numbers, "
            "got [].",
        ),
        (
            lambda: DegreeDistribution([0.1] * 9 + [-0.1]),  # the first 8 shown
            "`probabilities` must be a non-empty sequence of nonnegative numbers, "
            "got [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1].",
        ),
        (
            lambda: DegreeDistribution([0.5, 0.4]),
            "`probabilities` must sum to 1 (within 1e-12), got sum 0.9.",
        ),
        (
            lambda: LTCode(2, 3, overhead=0.9),
            "`overhead` must be >= 1.0, got overhead=0.9.",
        ),
        (lambda: LTCode(5, 3), "`overhead` * m = 4 encoded rows must be at least n=5."),
        (
            lambda: LTCode(2, 3, max_amplification=0.5),
            "`max_amplification` must be >= 1.0, got max_amplification=0.5.",
        ),
        (lambda: LTCode(0, 3), "`n` must be >= 1, got n=0."),
        (lambda: LTCode(2, 0), "`m` must be >= 1, got m=0."),
        (
            lambda: LTCode(2, 3, distribution=DegreeDistribution([0, 0, 0, 1])),
            "`distribution` has degrees up to 4, above m=3 source rows.",
        ),
        (
            lambda: LTCode(2, 3, distribution="ideal"),
            "`distribution` must be 'robust', 'wave' or a DegreeDistribution, got "
            "'ideal'.",
        ),
        (
            lambda: LTCode(2, 10).encode_operands(np.ones((9, 2)), np.ones(2)),
            "`A` must have m=10 rows, got shape (9, 2).",
        ),
        (
            lambda: LTCode(2, 10).encode_operands(np.ones(10), np.ones(1)),
            "`A` must have ndim in (2,), got shape (10,). Pass a 2-D array, e.g. "
            "np.atleast_2d(A).",
        ),
        (
            lambda: LTCode(2, 10).encode_operands(np.ones((10, 2)), np.ones((2, 2, 2))),
            "`B` must have ndim in (1, 2), got shape (2, 2, 2). Reshape it to 2-D: "
            "B.reshape(-1, 2) stacks the rows of its 2 matrices (reshape the product "
            "back after), B.reshape(2, -1) merges its trailing axes.",
        ),
        (
            lambda: LTCode(2, 10).encode_operands(np.ones((10, 2)), np.ones(3)),
            "`A` and `B` do not chain: A.shape=(10, 2), B.shape=(3,).",
        ),
        (
            lambda: (
                LTCode(2, 10)
                .decoder(LTCode(2, 10).encode_operands(np.ones((10, 2)), np.ones(2)))
                .mark(2, 0, 1)
            ),
            "`piece.worker` must be <= 1, got piece.worker=2.",
        ),
    ],
)
def test_bad_parameters_are_named_whole(build, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        build()


def test_a_list_a_is_refused_with_a_remedy():
    message = (
        "`A` must be a numpy array or a scipy.sparse CSR/CSC/COO matrix, got list "
        "(convert it with np.asarray)."
    )
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        LTCode(2, 10).encode_operands([[1.0, 2.0]] * 10, np.ones(2))


def test_worker_products_overflow_to_non_finite_values_quietly():
    """The decoder names a worker whose product overflowed; the product itself
    warns of nothing (warnings are errors in this suite)."""
    code = LTCode(2, 10)
    huge = np.full((1, 2), 1e308)
    assert code.multiply(huge, np.full(2, 1e308)).tolist() == [np.inf]  # overflow
    nan = code.multiply(np.array([[np.inf, 1.0]]), np.array([0.0, 1.0]))  # inf * 0
    assert np.isnan(nan).all()


@pytest.mark.parametrize(
    ("m", "overhead", "distribution", "inactive"),
    [(200, 1.3, "robust", False), (600, 1.1, "wave", True)],
)
def test_the_plan_inverts_the_received_rows_and_measures_its_amplification(
    m, overhead, distribution, inactive
):
    """The planned map is a left inverse of the received generator rows (a
    consistent system decodes in one solve, before any refinement), and the
    condition number is ||solve(e)|| / ||e|| for its fixed e (seed 0)."""
    code = LTCode(4, m, overhead=overhead, distribution=distribution, rng=1)
    decoder = code.decoder(code.encode_operands(np.ones((m, 1)), np.ones(1)))
    for w in range(4):
        decoder.mark(w, 0, code.loads[w])
    solver = decoder._current_solver(exact=True)
    assert solver.full_rank
    assert (solver.inactive.size > 0) == inactive
    G = code.generator
    X = np.random.default_rng(1).normal(size=(m, 2))
    Y = np.zeros((G.shape[0], 2))
    Y[solver.rows] = (G @ X)[solver.rows]
    np.testing.assert_allclose(solver(Y), X, rtol=0, atol=1e-9)
    e = np.zeros((G.shape[0], 1))
    e[solver.rows, 0] = np.random.default_rng(0).standard_normal(solver.rows.size)
    expected = np.linalg.norm(solver(e)) / np.linalg.norm(e)
    assert decoder.condition_number == pytest.approx(expected, rel=1e-12)
    assert 1 <= expected < code.max_amplification


def test_the_received_systems_tolerance_follows_its_formula():
    """1024 eps sqrt(rows) (sqrt(nnz) ||X|| + ||Y|| + ||A||_F ||B||_F)."""
    code = LTCode(2, 30, overhead=2.0, rng=0)
    rng = np.random.default_rng(2)
    A, B = rng.normal(size=(30, 4)), rng.normal(size=(4, 2))
    encoded = code.encode_operands(A, B)
    decoder = code.decoder(encoded)
    _feed(code, encoded, [(w, 0, code.loads[w]) for w in range(2)], decoder)
    solver = decoder._current_solver(exact=True)
    X, Y = rng.normal(size=(30, 2)), rng.normal(size=(solver.rows.size, 2))
    nnz = code.generator[solver.rows].nnz
    scale = np.sqrt(nnz) * np.linalg.norm(X) + np.linalg.norm(Y)
    scale += np.linalg.norm(A) * np.linalg.norm(B)
    expected = 1024 * EPS * np.sqrt(solver.rows.size) * scale
    assert decoder._tolerance(solver, X, Y) == pytest.approx(expected, rel=1e-13, abs=0)


def test_a_wrong_result_is_named_in_a_whole_message():
    code = LTCode(2, 30, overhead=2.0, rng=0)
    encoded = code.encode_operands(np.ones((30, 2)), np.ones(2))
    results = {w: code.multiply(encoded.lefts[w], np.ones(2)) for w in range(2)}
    results[1] = results[1] + 1.0
    pattern = (
        r"the decoded product does not satisfy the 60 received rows \(residual "
        r"\S+ > tolerance \S+\): a worker returned a wrong result or the system "
        r"is too ill-conditioned\."
    )
    with pytest.raises(DecodingError, match=f"^{pattern}$"):
        code.decode_results(encoded, results)


def test_a_distribution_is_read_only_flat_and_may_reach_degree_m():
    dist = DegreeDistribution([0.0, 0.0, 1.0])
    assert not dist.probabilities.flags.writeable
    assert LTCode(2, 3, distribution=dist).distribution is dist  # max degree = m
    message = (
        "`probabilities` must have ndim in (1,), got shape (1, 2). Flatten it: "
        "probabilities.reshape(-1)."
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        DegreeDistribution([[0.5, 0.5]])
    assert LTCode(3, 50).generator is LTCode(3, 50, rng=0).generator  # default seed


def test_a_decode_warns_exactly_above_the_trusted_amplification():
    """The warning's boundary, amplification * eps > TRUST_LIMIT, reached by
    setting the plan's amplification (no small LT system amplifies 1e10)."""
    from coded.codes import _rateless
    from coded.codes._fields import TRUST_LIMIT
    from coded.errors import IllConditionedWarning

    code = LTCode(2, 30, overhead=2.0, rng=0)
    A = np.random.default_rng(0).normal(size=(30, 2))
    encoded = code.encode_operands(A, np.ones(2))
    results = {w: code.multiply(encoded.lefts[w], np.ones(2)) for w in range(2)}
    for amplification, warns in ((TRUST_LIMIT / EPS, False), (2e10, True)):
        decoder = code.decoder(encoded)
        for w, value in results.items():
            decoder.add(Piece(worker=w, start=0, stop=len(value), value=value))
        decoder._current_solver(exact=True).amplification = amplification
        if warns:
            message = (
                "the rateless decode amplifies rounding errors by about 2e+10; the "
                "product may be inaccurate."
            )
            with pytest.warns(
                IllConditionedWarning, match=f"^{re.escape(message)}$"
            ) as record:
                C = decoder.decode()
            assert record[0].message.condition_number == 2e10
            assert record[0].filename != _rateless.__file__  # decode's caller
        else:
            C = decoder.decode()
        np.testing.assert_allclose(C, A @ np.ones(2), atol=1e-9)


def _mark_rows(code, decoder, rows):
    """Mark single global rows as received."""
    for row in rows:
        w = int(np.searchsorted(code._offsets, row, side="right")) - 1
        a = code.row_ranges[w][0]
        decoder.mark(w, row - a, row - a + 1)


@pytest.mark.parametrize(("m", "rows_until_replan"), [(1000, 10), (150, 1)])
def test_a_full_rank_plan_is_kept_until_m_over_100_more_rows(m, rows_until_replan):
    code = LTCode(4, m, overhead=2.0, rng=0)
    decoder = code.decoder(code.encode_operands(np.ones((m, 1)), np.ones(1)))
    _mark_rows(code, decoder, range(int(1.5 * m)))
    first = decoder._current_solver(exact=True)
    assert first.full_rank
    more = int(1.5 * m) + np.arange(rows_until_replan)
    _mark_rows(code, decoder, more[:-1])
    assert decoder._current_solver() is first
    _mark_rows(code, decoder, more[-1:])
    replanned = decoder._current_solver()
    assert replanned is not first
    assert replanned.count == first.count + rows_until_replan


def test_a_failed_plan_waits_for_m_over_50_more_rows():
    """Rows without column 0 never reach full rank; the plan that failed at
    1.02 m rows is not redone 5 rows later (the next one is due at 1.04 m)."""
    m = 1000
    code = LTCode(4, m, rng=0)
    G = code.generator
    blind = np.flatnonzero(G[:, [0]].toarray()[:, 0] == 0).tolist()
    decoder = code.decoder(code.encode_operands(np.ones((m, 1)), np.ones(1)))
    _mark_rows(code, decoder, blind[:1020])
    assert not decoder.is_decodable
    failed = decoder._solver
    assert failed is not None
    assert not failed.full_rank
    _mark_rows(code, decoder, blind[1020:1025])
    assert not decoder.is_decodable
    assert decoder._solver is failed


def test_a_piece_of_another_worker_is_checked_against_its_own_rows():
    code = LTCode(3, 20, overhead=1.5, rng=0)  # 30 rows: 10 a worker
    decoder = code.decoder(code.encode_operands(np.ones((20, 2)), np.ones(2)))
    message = "piece rows [0, 11) are outside worker 2's 10 rows."
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        decoder.mark(2, 0, 11)
    message = "`piece.worker` must be >= 0, got piece.worker=-1."
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        decoder.mark(-1, 0, 1)


@pytest.mark.parametrize("seed", [0, 1])
def test_idle_queries_count_from_the_first_row(seed):
    """Two polls after one row are not idle enough to plan (and fail) early: the
    failed-plan wait still runs from m, so near m the answer stays False until
    polled again, as without the early polls."""
    m = 1000
    code = LTCode(4, m, rng=seed)
    decoder = code.decoder(code.encode_operands(np.ones((m, 1)), np.ones(1)))
    decoder.mark(0, 0, 1)
    assert [decoder.is_decodable for _ in range(2)] == [False, False]
    for w, start, stop in [(0, 1, 252), (1, 0, 252), (2, 0, 252), (3, 0, 252)]:
        decoder.mark(w, start, stop)
    decoder.mark(0, 252, 252 + 5 * seed)
    assert [decoder.is_decodable for _ in range(3)] == [False, False, True]


@pytest.mark.parametrize(("m", "c"), [(100, 0.1), (10, 3.0)])
def test_robust_soliton_matches_its_definition(m, c):
    """Luby's rho + tau, normalised, term by term in Python floats; at m = 10,
    c = 3 the spike m / R rounds to 0 and sits at degree 1."""
    import math

    delta = 0.5
    R = c * math.log(m / delta) * math.sqrt(m)
    spike = min(max(round(m / R), 1), m)
    assert (spike > 1) == (m == 100)
    mu = []
    for d in range(1, m + 1):
        rho = 1 / m if d == 1 else 1 / (d * (d - 1))
        tau = R / (d * m) if d < spike else 0.0
        if d == spike:
            tau = R * math.log(R / delta) / m
        mu.append(rho + tau)
    expected = np.array(mu) / sum(mu)
    got = DegreeDistribution.robust_soliton(m, c=c, delta=delta).probabilities
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)


def test_small_helpers_by_hand():
    from coded.codes import _rateless

    assert _rateless._distinct(np.array([3, 1, 3, 2, 2])).tolist() == [1, 2, 3]
    limits = [_rateless._inactivation_limit(m) for m in (1000, 20_000, 2**25)]
    assert limits == [2048, 2**25 // 20_000, 1]  # 2048 cap, 256 MiB, at least 1
    assert all(type(limit) is int for limit in limits)
    vector = LTCode(2, 10).encode_operands(np.ones((10, 2)), np.ones(2))
    assert (vector.context.c, vector.context.is_vector) == (1, True)
