"""Gradient codes: any n - s survivors decode the exact sum of partial gradients."""

import itertools
import math
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from coded.codes import GradientCode, Piece
from coded.codes._gradient import _survivor_sets, _worst
from coded.codes._gradient_schemes import GradientScheme, WorkerShare, combine
from coded.errors import DecodingError, NotEnoughResultsError

EPS = np.finfo(float).eps


@st.composite
def gradient_codes(draw, max_n=12):
    construction = draw(st.sampled_from(["stable", "cyclic", "fractional"]))
    if construction == "fractional":
        s = draw(st.integers(0, 4))
        n = (s + 1) * draw(st.integers(1, max(1, max_n // (s + 1))))
    else:
        n = draw(st.integers(1, max_n))
        s = draw(st.integers(0, n - 1))
    return GradientCode(n, s, construction=construction)


def _partials(data, n):
    d = data.draw(st.integers(1, 4), label="d")
    seed = data.draw(st.integers(0, 2**16), label="seed")
    return np.random.default_rng(seed).standard_normal((n, d)) * 10.0


@given(data=st.data())
def test_any_n_minus_s_survivors_decode_the_exact_sum(data):
    code = data.draw(gradient_codes(), label="code")
    G = _partials(data, code.n)
    lost = data.draw(st.sets(st.integers(0, code.n - 1), max_size=code.s), label="lost")
    survivors = [i for i in range(code.n) if i not in lost]
    returns = code.encode(G)
    decoded = code.decode({i: returns[i] for i in survivors})
    kappa = code.condition_number(survivors)
    scale = np.abs(G).sum(axis=0).max() * math.sqrt(code.n)
    assert decoded.dtype == np.float64
    np.testing.assert_allclose(
        decoded, G.sum(axis=0), rtol=0, atol=100 * code.n * kappa * EPS * scale
    )


@given(data=st.data())
def test_decoding_vector_solves_a_B_equals_ones_on_the_survivors(data):
    code = data.draw(gradient_codes(), label="code")
    lost = data.draw(st.sets(st.integers(0, code.n - 1), max_size=code.s))
    survivors = [i for i in range(code.n) if i not in lost]
    a = code.decoding_vector(survivors)
    assert np.all(a[list(lost)] == 0)
    np.testing.assert_allclose(a @ code.B, np.ones(code.n), atol=1e-9 * code.n)


@given(data=st.data())
def test_each_partition_is_held_by_s_plus_1_workers_on_the_support(data):
    code = data.draw(gradient_codes(), label="code")
    for i, support in enumerate(code.supports):
        assert len(support) == code.s + 1
        assert set(np.flatnonzero(code.B[i])) == set(support)
    for j in range(code.n):
        assert len(code.holders(j)) == code.s + 1
        assert all(j in code.supports[i] for i in code.holders(j))


@given(data=st.data())
def test_fewer_than_n_minus_s_cyclic_survivors_raise(data):
    code = data.draw(gradient_codes(), label="code")
    if code.construction == "fractional":
        survivors = [i for i in range(code.n) if i // (code.s + 1) != 0]
    else:
        size = data.draw(st.integers(0, code.n - code.s - 1), label="size")
        survivors = data.draw(st.permutations(range(code.n)))[:size]
    returns = code.encode(np.ones((code.n, 2)))
    assert not code.is_decodable(survivors)
    with pytest.raises(NotEnoughResultsError, match="cannot decode the gradient"):
        code.decode({i: returns[i] for i in survivors})


def test_fractional_repetition_decodes_from_one_worker_per_group():
    code = GradientCode(9, 2, construction="fractional")
    G = np.arange(18.0).reshape(9, 2)
    returns = code.encode(G)
    assert code.is_decodable([1, 5, 6])
    np.testing.assert_allclose(
        code.decode({i: returns[i] for i in (1, 5, 6)}), G.sum(axis=0)
    )
    # [derived] kappa(B_S) = sqrt(max c_g / min c_g), c_g survivors of group g
    assert code.worst_condition().kappa == pytest.approx(math.sqrt(3))


def test_cyclic_codes_are_real_exactly_when_n_minus_s_is_odd():
    for n, s in itertools.product(range(2, 10), range(0, 4)):
        if s < n:
            for construction in ("stable", "cyclic"):
                code = GradientCode(n, s, construction=construction)
                assert code.is_real == ((n - s) % 2 == 1 or s == 0)


def test_stable_construction_worst_kappa_at_30_3_by_exact_enumeration():
    stable = GradientCode(30, 3).worst_condition()
    cyclic = GradientCode(30, 3, construction="cyclic").worst_condition()
    assert stable.exact
    assert stable.sets_checked == math.comb(30, 3)
    assert stable.kappa <= 1e3
    assert stable.kappa < cyclic.kappa
    survivors = stable.survivors
    assert GradientCode(30, 3).condition_number(survivors) == pytest.approx(
        stable.kappa
    )


def test_worst_condition_is_flagged_when_not_enumerated():
    result = GradientCode(40, 4).worst_condition(limit=100)
    assert not result.exact
    assert result.sets_checked == 40 + 2000
    assert np.isfinite(result.kappa)


@pytest.mark.parametrize(
    ("n", "s", "construction", "match"),
    [
        (4, 4, "stable", "0 <= s < n"),
        (4, 5, "cyclic", "0 <= s < n"),
        (8, 2, "fractional", "s \\+ 1 to divide n"),
        (4, 1, "random", "`construction` must be one of"),
        (0, 0, "stable", "`n` must be >= 1"),
    ],
)
def test_bad_parameters_are_named(n, s, construction, match):
    with pytest.raises(ValueError, match=match):
        GradientCode(n, s, construction=construction)


def test_bad_inputs_raise():
    code = GradientCode(4, 1)
    with pytest.raises(TypeError, match="`s` must be an integer"):
        GradientCode(4, 1.5)
    with pytest.raises(ValueError, match="worker indices must lie in"):
        code.decoding_vector([0, 1, 7])
    with pytest.raises(ValueError, match="must have n=4 rows"):
        code.encode(np.ones((3, 2)))
    assert issubclass(NotEnoughResultsError, DecodingError)


@given(data=st.data())
def test_schemes_decode_worker_combines_in_any_arrival_order(data):
    from coded.codes import Piece
    from coded.codes._gradient_schemes import (
        GRADIENT_SCHEMES,
        GradientScheme,
        WorkerShare,
        combine,
    )

    name = data.draw(st.sampled_from(GRADIENT_SCHEMES), label="scheme")
    n = data.draw(st.integers(1, 8), label="n")
    s = data.draw(st.integers(0, n - 1), label="s")
    scheme = GradientScheme(name, n, s, partition_rows=[2] * n)
    G = _partials(data, n)

    def grad(partition, params):
        return G[partition] * params

    shares = [
        WorkerShare(
            worker=i,
            partitions=support,
            data=support,
            coefficients=scheme.coefficients(i),
            grad=grad,
        )
        for i, support in enumerate(scheme.supports)
    ]
    pieces = [(i, start, stop) for i in range(n) for start, stop in scheme.batches[i]]
    order = data.draw(st.permutations(pieces), label="arrivals")
    params = np.ones(G.shape[1])
    decoder = scheme.decoder(scheme.encode_operands(shares, params))
    for i, start, stop in order:
        if decoder.is_decodable:
            break
        value = combine(shares[i][start:stop], params)
        decoder.add(Piece(worker=i, start=start, stop=stop, value=value))
    received = list(decoder.returns)
    if name != "partial":  # partial returns may come from more workers
        assert len(received) <= scheme.recovery_threshold
    if name == "ignore":
        kept = list(received)
        expected = G[kept].sum(axis=0) * n / len(kept)
    else:
        expected = G.sum(axis=0)
    kappa = 1.0 if name != "coded" else scheme.code.condition_number(received)
    scale = np.abs(G).sum() * n
    np.testing.assert_allclose(
        decoder.decode(), expected, atol=100 * n * kappa * EPS * scale
    )
    assert scheme.missing_partitions(received) == (
        tuple(j for j in range(n) if j not in received) if name == "ignore" else ()
    )


def _whole(message):
    return f"^{re.escape(message)}$"


def test_cyclic_rows_are_shifts_of_the_monic_generator_vanishing_on_z():
    # (6, 2): n - s even, complex, Z = {1, 2}: g(x) = (x - w)(x - w^2)
    w = np.exp(2j * np.pi / 6)
    g = [w**3, -(w + w**2), 1]
    B = GradientCode(6, 2, construction="cyclic").B
    np.testing.assert_allclose(B[0], [*g, 0, 0, 0], atol=1e-12)
    np.testing.assert_allclose(B[4], [g[2], 0, 0, 0, g[0], g[1]], atol=1e-12)
    # (7, 2): n - s odd, real, Z = {3, 4} centred on 7/2: g = x^2 - 2 cos(6 pi/7) x + 1
    B = GradientCode(7, 2, construction="cyclic").B
    assert not np.iscomplexobj(B)
    np.testing.assert_allclose(B[0], [1, -2 * np.cos(6 * np.pi / 7), 1, 0, 0, 0, 0])


def test_fractional_step_read_only_matrices_and_cached_vectors():
    code = GradientCode(6, 2, construction="fractional")
    assert code.step == 0
    a = code.decoding_vector([0, 3])
    for array in (code.B, a):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 1.0
    assert code.decoding_vector([3, 0]) is a  # one solve per survivor set


def test_condition_number_is_numpys_on_decodable_sets_and_inf_below_the_rank():
    code = GradientCode(5, 1)  # rank n - s = 4
    for survivors in ([0, 1, 2, 3], [0, 2, 3, 4], [1, 2, 3, 4]):
        assert code.condition_number(survivors) == pytest.approx(
            np.linalg.cond(code.B[survivors]), rel=1e-9
        )
    assert code.condition_number([0, 1]) == np.inf  # fewer rows than the rank
    assert code.condition_number([]) == np.inf
    fractional = GradientCode(6, 2, construction="fractional")  # rank 2
    assert fractional.condition_number([0, 1, 3]) == pytest.approx(math.sqrt(2))
    assert fractional.condition_number([0, 1, 2]) == np.inf  # one group only
    # B_S = [[1, 1, 0, 0], [1, 1, 0, 0]]: a singular value exactly 0
    assert GradientCode(4, 1, "fractional").condition_number([0, 1]) == np.inf


@pytest.mark.parametrize(
    ("n", "s", "construction"),
    [(5, 2, "stable"), (7, 2, "cyclic")],  # (5, 2): the first set is not the worst
)
def test_worst_condition_is_the_brute_force_worst(n, s, construction):
    code = GradientCode(n, s, construction=construction)
    brute = max(
        np.linalg.cond(code.B[list(rows)])
        for rows in itertools.combinations(range(n), n - s)
    )
    worst = code.worst_condition()
    assert worst.exact is True
    assert worst.sets_checked == math.comb(n, s)
    assert worst.kappa == pytest.approx(brute, rel=1e-9)
    assert np.linalg.cond(code.B[list(worst.survivors)]) == pytest.approx(brute)


def test_worst_condition_enumerates_up_to_the_limit_then_samples():
    code = GradientCode(6, 2)
    at = code.worst_condition(limit=15)  # C(6, 2) = 15
    assert (at.exact, at.sets_checked) == (True, 15)
    below = code.worst_condition(limit=14)
    assert (below.exact, below.sets_checked) == (False, 6 + 2000)
    assert below.kappa <= at.kappa * (1 + 1e-12)
    one = GradientCode(4, 0).worst_condition(limit=1)  # one set: all workers
    assert (one.exact, one.sets_checked, one.survivors) == (True, 1, (0, 1, 2, 3))
    assert one.kappa == pytest.approx(1.0)


def test_sampled_survivor_sets_are_seeded_windows_then_random_sets():
    survivors, exact = _survivor_sets(9, 3, 1)
    again, _ = _survivor_sets(9, 3, 1)
    np.testing.assert_array_equal(survivors, again)
    assert not exact
    assert survivors.shape == (9 + 2000, 6)
    lost = [frozenset(range(9)) - set(row.tolist()) for row in survivors]
    assert set(lost[:9]) == {frozenset({i, (i + 1) % 9, (i + 2) % 9}) for i in range(9)}
    assert all(len(set(row.tolist())) == 6 for row in survivors[9:])
    code = GradientCode(9, 3)
    assert _worst(code.B, 9, 3, 6, 1, samples=10).sets_checked == 9 + 10


def test_scalar_partial_gradients_encode_and_decode():
    code = GradientCode(5, 2)
    returns = code.encode(np.arange(1.0, 6.0))
    assert returns.shape == (5,)
    assert code.decode({i: returns[i] for i in (0, 2, 4)}) == pytest.approx(15.0)


WHOLE_MESSAGES = [
    (lambda: GradientCode(4, -1), "`s` must be >= 0, got s=-1."),
    (
        lambda: GradientCode(8, 2, construction="fractional"),
        "fractional repetition needs s + 1 to divide n, got n=8, s=2 (s + 1 = 3); "
        "use construction='stable'.",
    ),
    (
        lambda: GradientCode(4, 1).decoding_vector([0, 1, 4]),
        "worker indices must lie in [0, 4), got [0, 1, 4].",
    ),
    (
        lambda: GradientCode(4, 1).decoding_vector([-1, 0, 1]),
        "worker indices must lie in [0, 4), got [-1, 0, 1].",
    ),
    (
        lambda: GradientCode(4, 1).encode(np.float64(1.0)),
        "`partial_gradients` must have n=4 rows, got shape ().",
    ),
    (
        lambda: GradientCode(4, 1).holders(4),
        "`partition` must be <= 3, got partition=4.",
    ),
    (
        lambda: GradientCode(4, 1).holders(-1),
        "`partition` must be >= 0, got partition=-1.",
    ),
    (
        lambda: GradientCode(4, 1).worst_condition(limit=0),
        "`limit` must be >= 1, got limit=0.",
    ),
    (
        lambda: GradientCode(6, 2, "fractional").decoding_vector([0, 1]),
        "2 worker results cannot decode the gradient: the (6, 2) fractional code "
        "needs one worker of each of the 2 groups, got workers [0, 1].",
        NotEnoughResultsError,
    ),
    (
        lambda: GradientCode(5, 2, "cyclic").decoding_vector([0, 1]),
        "2 worker results cannot decode the gradient: the (5, 2) cyclic code needs "
        "3 workers, got workers [0, 1].",
        NotEnoughResultsError,
    ),
]


@pytest.mark.parametrize("case", WHOLE_MESSAGES)
def test_whole_messages(case):
    call, message, *error = case  # ValueError unless named
    with pytest.raises(error[0] if error else ValueError, match=_whole(message)):
        call()


def _grad(partition, params):
    return (partition + 1.0) * params


def test_a_batch_of_a_share_keeps_its_worker_and_coefficients():
    share = WorkerShare(
        worker=3,
        partitions=(3, 4, 5),
        data=(3, 4, 5),
        coefficients=np.array([1.0, 2.0, 3.0]),
        grad=_grad,
    )
    assert share[0:3] is share
    assert share[:] is share
    batch = share[1:3]
    assert (batch.worker, batch.partitions, batch.data) == (3, (4, 5), (4, 5))
    assert batch.grad is _grad
    np.testing.assert_array_equal(batch.coefficients, [2.0, 3.0])
    # 2 g_4 + 3 g_5 at params (1, -1): 2 * 5 + 3 * 6 = 28
    np.testing.assert_array_equal(combine(batch, np.array([1.0, -1.0])), [28.0, -28.0])


def test_schemes_build_their_codes_and_operands():
    rows = [1] * 6
    coded = GradientScheme(
        "coded", 6, 2, construction="fractional", partition_rows=rows
    )
    assert coded.code.construction == "fractional"
    for name in ("uncoded", "replication", "ignore", "partial"):
        scheme = GradientScheme(
            name, 6, 2, construction="fractional", partition_rows=rows
        )
        assert scheme.code.construction == "cyclic"
    scheme = GradientScheme("replication", 4, 1, partition_rows=[1] * 4)
    assert scheme.is_decodable([0, 2])  # partitions {0, 1} and {2, 3}
    assert not scheme.is_decodable([0, 1])  # partition 3 missing
    params = np.ones(2)
    shares = [
        WorkerShare(worker=i, partitions=p, data=p, coefficients=None, grad=_grad)
        for i, p in enumerate(scheme.supports)
    ]
    encoded = scheme.encode_operands(shares, params)
    assert encoded.lefts == tuple(shares)
    assert encoded.shared_right is params


def test_a_piece_must_carry_one_partial_per_partition_of_its_range():
    scheme = GradientScheme("replication", 4, 1, partition_rows=[1] * 4)
    decoder = scheme.decoder(None)
    piece = Piece(worker=0, start=0, stop=2, value=np.ones((1, 2)))  # 2 partitions
    with pytest.raises(ValueError, match=re.escape("zip() argument 2 is shorter")):
        decoder.add(piece)
