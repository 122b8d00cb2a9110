"""Gradient codes: any n - s survivors decode the exact sum of partial gradients."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from coded.codes import GradientCode
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
