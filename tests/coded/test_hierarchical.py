"""Hierarchical (multi-level) codes: decodable patterns, exactness, certified bounds."""

import dataclasses
import itertools
import math
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from coded.codes import HierarchicalCode, MDSCode, Piece
from coded.errors import DecodingError, NonFiniteResultError

P = 65537
LAYOUTS = [
    (8, [(2, 1), (4, 3)]),
    (16, [(4, 3), (4, 2)]),
    (18, [(3, 2), (6, 4)]),
    (24, [(2, 1), (3, 2), (4, 3)]),
]


def _expected(code, alive):
    """Independent rule: count decoded members level by level, innermost first."""
    decoded = np.isin(np.arange(code.n), list(alive)).reshape(
        [s for s, _ in code.levels]
    )
    for _, k in reversed(code.levels):
        decoded = decoded.sum(axis=-1) >= k
    return bool(decoded)


def _run(code, A, B, alive, *, halves=False):
    enc = code.encode_operands(A, B)
    dec = code.decoder(enc)
    for w in alive:
        value = code.multiply(enc.lefts[w], enc.right(w))
        cut = value.shape[0] // 2 if halves else value.shape[0]
        for start, stop in ((0, cut), (cut, value.shape[0])):
            if stop > start:
                piece = Piece(worker=w, start=start, stop=stop, value=value[start:stop])
                dec.add(piece)
    return dec


@st.composite
def _patterns(draw):
    n, levels = draw(st.sampled_from(LAYOUTS))
    alive = draw(st.sets(st.integers(0, n - 1)))
    return n, levels, sorted(alive)


@given(_patterns(), st.booleans())
def test_gf_patterns_decode_exactly_or_raise_naming_the_pattern(case, halves):
    n, levels, alive = case
    code = HierarchicalCode(n, levels, field=P)
    rng = np.random.default_rng(len(alive))
    A, B = rng.integers(-50, 50, (11, 3)), rng.integers(-50, 50, (3, 2))
    assert code.is_decodable(alive) == _expected(code, alive)
    dec = _run(code, A, B, alive, halves=halves)
    assert dec.is_decodable == _expected(code, alive)
    if dec.is_decodable:
        np.testing.assert_array_equal(dec.decode(), A @ B)
        assert dec.progress == (code.min_results, code.min_results)
    else:
        with pytest.raises(DecodingError, match="missing") as info:
            dec.decode()
        assert f"k_0={levels[0][1]}" in str(info.value)
        assert dec.progress[0] < code.min_results


@given(_patterns())
def test_real_patterns_decode_within_the_certified_bound(case):
    n, levels, alive = case
    code = HierarchicalCode(n, levels)
    if not code.is_decodable(alive):
        with pytest.raises(DecodingError, match="do not decode"):
            code.decode_results(code.encode_operands(np.ones((4, 2)), np.ones(2)), {})
        return
    rng = np.random.default_rng(len(alive))
    A, x = rng.standard_normal((13, 5)), rng.standard_normal(5)
    dec = _run(code, A, x, alive)
    bound = code.worst_condition_number()
    assert bound.certified
    assert dec.condition_number <= bound.value * (1 + 1e-12)
    exact = A @ x
    error = np.linalg.norm(dec.decode() - exact) / np.linalg.norm(exact)
    assert error <= 50 * bound.value * np.finfo(float).eps


def test_the_bound_holds_for_every_pattern_by_enumeration():
    """cond(G_S) of the composite system, all minimal decodable patterns."""
    code = HierarchicalCode(12, [(3, 2), (4, 2)])  # the inner code has ell = 2
    bound = code.worst_condition_number()
    outer, inner = (MDSCode(s, k) for s, k in code.levels)
    G = np.kron(outer.generator, inner.generator)
    ell_in = inner.subblocks
    assert ell_in == 2
    # row of G for (group g, sub-block a of the outer, member i, sub-block b)
    worst = 0.0
    for groups in itertools.combinations(range(3), 2):
        for members in itertools.product(itertools.combinations(range(4), 2), repeat=2):
            rows = [
                (g * outer.subblocks + a) * inner.generator.shape[0] + i * ell_in + b
                for g, chosen in zip(groups, members, strict=True)
                for a in range(outer.subblocks)
                for i in chosen
                for b in range(ell_in)
            ]
            assert len(rows) == code.blocks
            worst = max(worst, np.linalg.cond(G[rows]))
    assert worst <= bound.value * (1 + 1e-12)
    assert bound.value == pytest.approx(math.prod(bound.levels))


def test_certified_targets_at_256_and_4096_workers():
    two = HierarchicalCode.two_level(256, groups=16, k_inner=14, k_outer=14)
    three = HierarchicalCode(4096, [(16, 14)] * 3)
    for code, target in ((two, 1e4), (three, 1e6)):
        bound = code.worst_condition_number()
        assert bound.certified
        assert bound.value <= target
        assert code.n / code.min_results >= 1.25
    assert three.recovery_threshold == 4096 - 27 + 1


def test_large_code_decodes_with_group_losses():
    code = HierarchicalCode(256, [(16, 14), (16, 14)])
    rng = np.random.default_rng(3)
    A, x = rng.standard_normal((code.blocks, 4)), rng.standard_normal(4)
    lost_groups = {3, 9}
    alive = [
        w
        for w in range(256)
        if code.group_of(w) not in lost_groups and w % 16 not in (0, 7)
    ]
    dec = _run(code, A, x, alive)
    np.testing.assert_allclose(dec.decode(), A @ x, rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize(("field", "decoding"), [(None, "groups"), (P, "product")])
def test_a_code_pickles_as_its_parameters_and_decodes_as_the_original(field, decoding):
    code = HierarchicalCode(64, [(8, 6), (8, 6)], field, decoding=decoding)
    data = pickle.dumps(code)
    assert len(data) < 200  # not its generators
    copy = pickle.loads(data)
    assert pickle.loads(data) is copy  # built once per process
    assert (copy.n, copy.levels, copy.p) == (64, ((8, 6), (8, 6)), field)
    assert (copy.decoding, copy.systematic) == (decoding, code.systematic)
    rng = np.random.default_rng(5)
    A = rng.integers(-9, 10, (code.blocks, 3))
    x = rng.integers(-9, 10, 3)
    enc = code.encode_operands(A, x)
    dec = copy.decoder(enc)
    for w in [w for w in range(64) if w % 8 not in (1, 4)]:  # two lost per group
        value = code.multiply(enc.lefts[w], enc.right(w))
        dec.add(Piece(worker=w, start=0, stop=value.shape[0], value=value))
    np.testing.assert_allclose(dec.decode(), A @ x, rtol=1e-9, atol=1e-9)


def test_encode_right_and_float32():
    code = HierarchicalCode(8, [(2, 1), (4, 3)])
    A = np.arange(12, dtype=np.float32).reshape(6, 2)
    B = np.ones((2, 3), dtype=np.float32)
    enc = code.encode_right(code.encode_operands(A, B[:, 0]), B)
    results = {w: enc.lefts[w] @ enc.right(w) for w in (0, 1, 2)}
    product = code.decode_results(enc, results)
    assert product.dtype == np.float32
    np.testing.assert_allclose(product, A @ B, rtol=1e-5)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: HierarchicalCode.two_level(64, 3, 2, 2), r"`groups`=3 must divide"),
        (lambda: HierarchicalCode.two_level(64, 8, 9, 2), r"k_inner <= n / groups"),
        (lambda: HierarchicalCode.two_level(64, 8, 2, 0), r"`k_outer` must be >= 1"),
        (lambda: HierarchicalCode.two_level(64, 8, 2, 9), r"k_outer <= groups = 8"),
        (lambda: HierarchicalCode(64, [(8, 6), (4, 3)]), r"multiply to 32, not"),
        (lambda: HierarchicalCode(8, [(2, 1)] * 4), r"4 levels but n=8"),
        (lambda: HierarchicalCode(8, [(8, 9)]), r"1 <= k_l <= n_l"),
        (lambda: HierarchicalCode(8, [(1, 1), (8, 2)]), r"n_l=1"),
    ],
)
def test_bad_layouts_name_argument_constraint_and_remedy(call, match):
    with pytest.raises(ValueError, match=match) as info:
        call()
    message = str(info.value)
    assert any(word in message for word in ("use", "lower", "drop", "must be"))


@pytest.mark.parametrize("field", [None, P])
def test_repair_rebuilds_lost_shares(field):
    code = HierarchicalCode(16, [(4, 3), (4, 2)], field=field)
    A = np.arange(60).reshape(20, 3) - 30
    lefts = code.encode_operands(A if field else A.astype(float), np.ones(3, int)).lefts
    survivors = [w for w in range(16) if w % 4 in (1, 3) and w // 4 != 2]
    rebuilt = code.repair({w: lefts[w] for w in survivors}, [0, 10])
    for w in (0, 10):
        np.testing.assert_allclose(rebuilt[w], lefts[w], rtol=0, atol=1e-11)
    with pytest.raises(DecodingError, match="cannot repair"):
        code.repair({w: lefts[w] for w in survivors[:3]}, [0])


def _peeled(n0, k0, n1, k1, alive):
    """Independent product-code rule: fill rows and columns until stable."""
    known = np.zeros((n0, n1), dtype=bool)
    known.flat[list(alive)] = True
    while True:
        before = known.copy()
        for g in range(n0):
            if known[g].sum() >= k1:
                known[g] = True
        for i in range(n1):
            if known[:, i].sum() >= k0:
                known[:, i] = True
        if (known == before).all():
            return (known.sum(axis=1) >= k1).sum() >= k0


@given(
    st.sampled_from([(3, 2, 3, 2), (4, 2, 3, 2), (4, 3, 4, 2), (5, 3, 2, 1)]),
    st.data(),
)
def test_product_decoding_resolves_its_patterns_exactly(shape, data):
    n0, k0, n1, k1 = shape
    alive = sorted(data.draw(st.sets(st.integers(0, n0 * n1 - 1))))
    code = HierarchicalCode(n0 * n1, [(n0, k0), (n1, k1)], P, decoding="product")
    groups = HierarchicalCode(n0 * n1, [(n0, k0), (n1, k1)], P)
    expected = _peeled(n0, k0, n1, k1, alive)
    assert code.is_decodable(alive) == expected
    assert expected or not groups.is_decodable(alive)  # it resolves more
    rng = np.random.default_rng(len(alive))
    A, B = rng.integers(-40, 40, (9, 2)), rng.integers(-40, 40, (2, 3))
    dec = _run(code, A, B, alive)
    if expected:
        np.testing.assert_array_equal(dec.decode(), A @ B)
    else:
        with pytest.raises(DecodingError, match="known after decoding across"):
            dec.decode()


def test_product_decoding_beats_the_group_rule():
    code = HierarchicalCode(9, [(3, 2), (3, 2)], P, decoding="product")
    alive = [0, 1, 3, 7]  # row 0 full; rows 1 and 2 fill from the columns
    assert code.is_decodable(alive)
    assert not HierarchicalCode(9, [(3, 2), (3, 2)], P).is_decodable(alive)
    A = np.arange(8).reshape(4, 2)
    enc = code.encode_operands(A, [1, 2])
    results = {w: code.multiply(enc.lefts[w], enc.right(w)) for w in alive}
    np.testing.assert_array_equal(code.decode_results(enc, results), A @ [1, 2])


@pytest.mark.parametrize(
    ("levels", "field"), [([(3, 2), (3, 2)], None), ([(2, 1), (2, 1), (2, 1)], P)]
)
def test_product_decoding_needs_two_levels_over_gf_p(levels, field):
    n = math.prod(s for s, _ in levels)
    with pytest.raises(ValueError, match=r"decoding='product'.*use decoding='groups'"):
        HierarchicalCode(n, levels, field, decoding="product")


# ---- group-local decoding: a leader decodes its group, the client the outer code
def _group_decodes(code, group, alive):
    """Independent rule for one outer group: its subtree counted on its own."""
    span = code.n // code.levels[0][0]
    mine = [w - group * span for w in alive if w // span == group]
    decoded = np.isin(np.arange(span), mine).reshape([s for s, _ in code.levels[1:]])
    for _, k in reversed(code.levels[1:]):
        decoded = decoded.sum(axis=-1) >= k
    return bool(decoded)


@given(_patterns(), st.sampled_from([None, P]))
def test_leaders_decode_their_groups_and_the_client_the_outer_code(case, field):
    n, levels, alive = case
    code = HierarchicalCode(n, levels, field=field)
    rng = np.random.default_rng(len(alive))
    A, B = rng.integers(-50, 50, (11, 3)), rng.integers(-50, 50, (3, 2))
    if field is None:
        A, B = A.astype(float), B.astype(float)
    enc = code.encode_operands(A, B)
    client = code.decoder(enc)
    decoded = []
    for group in range(levels[0][0]):
        expected = _group_decodes(code, group, alive)
        assert code.group_decodes(group, alive) == expected
        span = n // levels[0][0]
        leader = _run(code, A, B, [w for w in alive if w // span == group])
        assert leader.group_is_decodable(group) == expected
        if not expected:
            with pytest.raises(DecodingError, match=f"group {group} does not decode"):
                leader.decode_group(group)
            continue
        answer = leader.decode_group(group)
        assert {w // span for w in answer.used} == {group}
        assert set(answer.used) <= set(alive)
        client.add_group(answer)
        decoded.append(group)
    assert client.is_decodable == (len(decoded) >= levels[0][1])
    if not client.is_decodable:
        with pytest.raises(DecodingError):
            client.decode()
        return
    product = client.decode()
    if field is None:
        np.testing.assert_allclose(product, A @ B, rtol=1e-9, atol=1e-9)
        assert client.condition_number <= code.worst_condition_number().value * (
            1 + 1e-9
        )
    else:
        np.testing.assert_array_equal(product, A @ B)


def test_a_group_value_is_checked_before_it_is_decoded():
    code = HierarchicalCode(8, [(2, 1), (4, 3)])
    A, x = np.arange(12.0).reshape(6, 2), np.array([1.0, -1.0])
    enc = code.encode_operands(A, x)
    leader = _run(code, A, x, [0, 1, 2])
    answer = leader.decode_group(0)
    client = code.decoder(enc)
    with pytest.raises(TypeError, match="`decoded` must be a DecodedGroup"):
        client.add_group(answer.value)
    with pytest.raises(ValueError, match=r"`decoded.value` of group 0 must have shape"):
        client.add_group(dataclasses.replace(answer, value=answer.value[:, :1]))
    nan = np.full_like(answer.value, np.nan)
    with pytest.raises(NonFiniteResultError, match="group 0's decoded value"):
        client.add_group(dataclasses.replace(answer, value=nan))
    client.add_group(answer)
    with pytest.raises(ValueError, match="group 0 was already decoded"):
        client.add_group(answer)
    with pytest.raises(ValueError, match="`group` must be"):
        leader.decode_group(2)
    flat = HierarchicalCode(4, [(4, 3)])
    with pytest.raises(ValueError, match="two levels or more"):
        flat.decoder(flat.encode_operands(A, x)).decode_group(0)
    with pytest.raises(ValueError, match="one level has no groups"):
        flat.group_decodes(0, [0, 1, 2])
