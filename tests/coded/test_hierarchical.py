"""Hierarchical (multi-level) codes: decodable patterns, exactness, certified bounds."""

import dataclasses
import itertools
import math
import pickle
import re

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


# ---- boundaries and whole messages (issue 43: mutation testing) -------------------
@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((0, 1, 1, 1), "`n` must be >= 1, got n=0."),
        ((8, 0, 1, 1), "`groups` must be >= 1, got groups=0."),
        ((8, 9, 1, 1), "`groups` must be <= 8, got groups=9."),
        (
            (10, 3, 1, 1),
            "`groups`=3 must divide the n=10 workers into equal groups "
            "(n % groups = 1); use a divisor of n, e.g. groups=2, or change n.",
        ),
        (
            (12, 5, 1, 1),  # 4 and 6 tie: the first
            "`groups`=5 must divide the n=12 workers into equal groups "
            "(n % groups = 2); use a divisor of n, e.g. groups=4, or change n.",
        ),
        (
            (7, 3, 1, 1),
            "`groups`=3 must divide the n=7 workers into equal groups "
            "(n % groups = 1); n=7 is prime, so no two-level layout has n workers: "
            "change n.",
        ),
        ((8, 2, 0, 1), "`k_inner` must be >= 1, got k_inner=0."),
        (
            (8, 2, 5, 1),
            "`k_inner` must satisfy 1 <= k_inner <= n / groups = 4 (the workers of "
            "a group), got k_inner=5; lower it or use fewer groups.",
        ),
        ((8, 2, 1, 0), "`k_outer` must be >= 1, got k_outer=0."),
        (
            (8, 2, 1, 3),
            "`k_outer` must satisfy 1 <= k_outer <= groups = 2, got k_outer=3; "
            "lower it or use more groups.",
        ),
        (
            (8, 1, 1, 1),
            "a two-level layout needs at least 2 groups of at least 2 workers, got "
            "groups=1 of n / groups = 8; use MDSCode(n, k) for one flat code.",
        ),
        (
            (1, 1, 1, 1),
            "a two-level layout needs at least 2 groups of at least 2 workers, got "
            "groups=1 of n / groups = 1; use MDSCode(n, k) for one flat code.",
        ),
        (
            (8, 8, 1, 1),
            "a two-level layout needs at least 2 groups of at least 2 workers, got "
            "groups=8 of n / groups = 1; use MDSCode(n, k) for one flat code.",
        ),
    ],
)
def test_two_level_messages_whole(args, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        HierarchicalCode.two_level(*args)


@pytest.mark.parametrize(
    ("args", "levels"),
    [
        ((8, 2, 4, 2), ((2, 2), (4, 4))),  # k_inner = n / groups, k_outer = groups
        ((8, 4, 1, 1), ((4, 1), (2, 1))),  # groups of 2, k_inner = 1
        ((4, 2, 2, 1), ((2, 1), (2, 2))),
    ],
)
def test_two_level_accepts_its_boundaries(args, levels):
    code = HierarchicalCode.two_level(*args)
    assert code.levels == levels
    assert code.n == args[0]
    assert code.min_results == math.prod(k for _, k in levels)


def test_two_level_passes_field_systematic_and_decoding_on():
    code = HierarchicalCode.two_level(8, 2, 3, 1, P, systematic=False)
    assert (code.p, code.systematic, code.decoding) == (P, False, "groups")
    real = HierarchicalCode.two_level(8, 2, 3, 1, systematic=True)
    assert (real.p, real.systematic) == (None, True)
    product = HierarchicalCode.two_level(9, 3, 2, 2, P, decoding="product")
    assert product.decoding == "product"
    assert product.is_decodable([0, 1, 3, 7])  # not a group-rule pattern


def test_repr_names_every_parameter():
    assert repr(HierarchicalCode(8, [(2, 1), (4, 3)])) == (
        "HierarchicalCode(n=8, levels=((2, 1), (4, 3)), field=None, "
        "systematic=False, decoding='groups')"
    )
    assert repr(HierarchicalCode(9, [(3, 2), (3, 2)], P, decoding="product")) == (
        "HierarchicalCode(n=9, levels=((3, 2), (3, 2)), field=65537, "
        "systematic=True, decoding='product')"
    )


def test_group_of_every_level_by_mixed_radix_digits():
    code = HierarchicalCode(24, [(2, 1), (3, 2), (4, 3)])
    for w in range(24):
        digits = np.unravel_index(w, (2, 3, 4))
        for level in (1, 2, 3):
            expected = int(np.ravel_multi_index(digits[:level], (2, 3, 4)[:level]))
            got = code.group_of(w, level)
            assert type(got) is int
            assert got == expected
        assert code.group_of(w) == digits[0]
    assert code.group_of(23, 3) == 23
    assert code.group_of(0, 3) == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((-1,), "`worker` must be >= 0, got worker=-1."),
        ((24,), "`worker` must be <= 23, got worker=24."),
        ((3, 0), "`level` must be >= 1, got level=0."),
        ((3, 4), "`level` must be <= 3, got level=4."),
    ],
)
def test_group_of_messages_whole(args, message):
    code = HierarchicalCode(24, [(2, 1), (3, 2), (4, 3)])
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        code.group_of(*args)


def test_repair_boundaries_dtypes_and_messages():
    code = HierarchicalCode(16, [(4, 3), (4, 2)], field=P)
    A = np.arange(60).reshape(20, 3) - 30
    lefts = code.encode_operands(A, np.ones(3, int)).lefts
    survivors = [w for w in range(16) if w % 4 in (1, 3) and w // 4 != 2]
    rebuilt = code.repair({w: lefts[w] for w in survivors}, [15, 0])
    assert list(rebuilt) == [15, 0]
    for w in (0, 15):
        assert rebuilt[w].dtype == lefts[w].dtype == np.int64
        np.testing.assert_array_equal(rebuilt[w], lefts[w])
    for bad, message in (
        (-1, "`worker` must be >= 0, got worker=-1."),
        (16, "`worker` must be <= 15, got worker=16."),
    ):
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            code.repair({w: lefts[w] for w in survivors}, [bad])
    with pytest.raises(
        DecodingError,
        match=r"^cannot repair: the shares do not decode; 3 of 16 results, missing ",
    ):
        code.repair({w: lefts[w] for w in survivors[:3]}, [0])
    real = HierarchicalCode(8, [(2, 1), (4, 3)])
    A32 = np.arange(24, dtype=np.float32).reshape(12, 2)
    shares = real.encode_operands(A32, np.ones(2, np.float32)).lefts
    again = real.repair({w: shares[w] for w in (4, 5, 6)}, [0, 7])
    for w in (0, 7):
        assert again[w].dtype == np.float32
        np.testing.assert_allclose(again[w], shares[w], rtol=1e-5, atol=1e-4)


def test_repair_refuses_a_decode_that_overflows():
    """Finite shares whose decode overflows float64 raise, never return inf."""
    code = HierarchicalCode(8, [(2, 1), (4, 3)])
    huge = {w: np.full((3, 2), (-1.0) ** w * 1.5e308) for w in (0, 1, 2)}
    with pytest.raises(ValueError, match=r"^decoding overflows float64"):
        code.repair(huge, [3])


def test_encode_right_keeps_semantics_bounds_and_vectors():
    code = HierarchicalCode(8, [(2, 1), (4, 3)], field=P)
    A = np.arange(-6, 6).reshape(6, 2)
    enc = code.encode_operands(A, np.ones((2, 3), int))
    vec = code.encode_right(enc, [-5, 7])
    assert not vec.shared_right.flags.writeable
    assert vec.context.is_vector
    assert vec.context.c == 1
    results = {w: code.multiply(vec.lefts[w], vec.right(w)) for w in (4, 5, 7)}
    product = code.decode_results(vec, results)
    assert product.shape == (6,)
    np.testing.assert_array_equal(product, A @ [-5, 7])  # signed, reduced mod p
    # the exactness bound of A's encoding: d max|A| = 12, so max|B| <= 2730
    code.encode_right(enc, [2730, -2730])
    with pytest.raises(ValueError, match=r"^exact integer results need 2 \* max\|C\|"):
        code.encode_right(enc, [2731, 0])


def test_product_decoding_fills_rows_to_fill_columns():
    """A row with exactly k_1 cells must be re-encoded whole: its new cells
    complete two columns, which complete two more rows (found by enumeration)."""
    n0, k0, n1, k1 = 4, 3, 3, 2
    alive = [0, 1, 3, 5, 7, 11]  # rows {0, 1}, {0, 2}, {1}, {2}
    code = HierarchicalCode(12, [(n0, k0), (n1, k1)], P, decoding="product")
    assert code.is_decodable(alive)
    assert not HierarchicalCode(12, [(n0, k0), (n1, k1)], P).is_decodable(alive)
    A, B = np.arange(-18, 18).reshape(12, 3), np.array([[1, -2], [3, 0], [-1, 5]])
    dec = _run(code, A, B, alive, halves=True)
    np.testing.assert_array_equal(dec.decode(), A @ B)


def test_condition_number_of_leader_and_local_groups_by_svd():
    """A client holding one group from its leader and another group's results."""
    code = HierarchicalCode(12, [(3, 2), (4, 3)])
    A, x = np.arange(24.0).reshape(12, 2) - 7, np.array([1.0, -2.0])
    leader = _run(code, A, x, [0, 1, 3])
    client = _run(code, A, x, [5, 6, 7])  # group 1 decodes here
    client.add_group(leader.decode_group(0))
    outer, inner = MDSCode(3, 2), MDSCode(4, 3)

    def sigmas(G, members, ell):
        rows = [i * ell + b for i in members for b in range(ell)]
        s = np.linalg.svd(np.asarray(G)[rows], compute_uv=False)
        return s[0], s[-1]

    o_top, o_bottom = sigmas(outer.generator, (0, 1), outer.subblocks)
    inner_systems = [
        sigmas(inner.generator, m, inner.subblocks) for m in ((0, 1, 3), (1, 2, 3))
    ]
    expected = (o_top / o_bottom) * (
        max(t for t, _ in inner_systems) / min(b for _, b in inner_systems)
    )
    assert client.condition_number == pytest.approx(expected, rel=1e-12)
    np.testing.assert_allclose(client.decode(), A @ x, rtol=1e-10, atol=1e-10)


def test_group_decodes_and_decode_group_messages_whole():
    code = HierarchicalCode(8, [(2, 1), (4, 3)])
    for group, message in (
        (-1, "`group` must be >= 0, got group=-1."),
        (2, "`group` must be <= 1, got group=2."),
    ):
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            code.group_decodes(group, [0, 1, 2])
    assert code.group_decodes(1, [4, 5, 7])
    assert not code.group_decodes(0, [4, 5, 7])
    A, x = np.arange(12.0).reshape(6, 2), np.array([1.0, -1.0])
    dec = _run(code, A, x, [0, 4, 5, 6])  # group 0 short, group 1 whole
    with pytest.raises(
        DecodingError,
        match=r"^group 0 does not decode from workers \[0\]: 1 of 8 results, "
        r"missing \[1, 2, 3, 4, 5, 6, 7\]; 0 of the 2 level-1 groups decode",
    ):
        dec.decode_group(0)
    product = HierarchicalCode(9, [(3, 2), (3, 2)], P, decoding="product")
    decoder = product.decoder(product.encode_operands(np.ones((4, 2), int), [1, 1]))
    message = (
        "group-local decoding needs a code of two levels or more decoded group by "
        f"group (decoding='groups'), got {product!r}."
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        decoder.decode_group(0)


def test_decoded_group_extremes_by_svd_and_none_over_gf_p():
    code = HierarchicalCode(12, [(3, 2), (4, 3)])
    A, x = np.arange(24.0).reshape(12, 2) - 7, np.array([1.0, -2.0])
    answer = _run(code, A, x, [4, 6, 7, 5]).decode_group(1)
    assert answer.used == (4, 5, 6)
    inner = MDSCode(4, 3)
    rows = [i * inner.subblocks + b for i in (0, 1, 2) for b in range(inner.subblocks)]
    s = np.linalg.svd(np.asarray(inner.generator)[rows], compute_uv=False)
    ((top, bottom),) = answer.extremes
    assert top == pytest.approx(s[0], rel=1e-12)
    assert bottom == pytest.approx(s[-1], rel=1e-12)
    exact = HierarchicalCode(12, [(3, 2), (4, 3)], P)
    B = np.array([[1, -1], [2, 0]])
    assert _run(exact, A.astype(int), B, [4, 5, 6]).decode_group(1).extremes == ()


def test_product_decoding_goes_on_after_a_pass_of_column_decodes_only():
    """No row decodes at first; column 3 does, then rows and columns in turn
    (found by enumeration: stopping after the first pass leaves one row)."""
    code = HierarchicalCode(20, [(5, 3), (4, 3)], P, decoding="product")
    alive = [1, 3, 6, 7, 8, 11, 13, 14, 16]  # at most 2 cells a row, column 3 has 3
    assert code.is_decodable(alive)
    A, B = np.arange(-30, 30).reshape(20, 3), np.array([[2, -1], [0, 3], [1, 1]])
    np.testing.assert_array_equal(_run(code, A, B, alive).decode(), A @ B)


def test_explain_whole_sentences():
    code = HierarchicalCode(24, [(2, 1), (3, 2), (4, 3)])
    assert code.explain([0, 1, 2, 4, 5, 6]) == (
        "6 of 24 results, missing [3, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, "
        "19, 20, 21, ... (2 more)]; 2 of the 6 level-2 groups decode (each needs "
        "k_2=3 of its 4 members): [0, 1]; 1 of the 2 level-1 groups decode (each "
        "needs k_1=2 of its 3 members): [0]; the outer code has 1 of the k_0=1 "
        "decoded groups it needs (of n_0=2)."
    )
    product = HierarchicalCode(9, [(3, 2), (3, 2)], P, decoding="product")
    assert product.explain([0, 1, 3, 7]) == (
        "4 of 9 results, missing [2, 4, 5, 6, 8]; 9 known after decoding across "
        "groups; 3 of the 3 level-1 groups decode (each needs k_1=2 of its 3 "
        "members): [0, 1, 2]; the outer code has 3 of the k_0=2 decoded groups it "
        "needs (of n_0=3)."
    )
    # lists of 16 items are written out whole, longer ones cut after 16
    wide = HierarchicalCode(32, [(2, 1), (16, 3)])
    assert wide.explain(range(16, 32)).startswith(
        f"16 of 32 results, missing {list(range(16))}; 1 of the 2"
    )
    assert wide.explain(range(17, 32)).startswith(
        f"15 of 32 results, missing [{', '.join(map(str, range(16)))}, ... (1 more)]; "
    )


def test_decoder_rejects_foreign_encodings_and_bad_indices_whole():
    code = HierarchicalCode(8, [(2, 1), (4, 3)])
    message = (
        "`encoded` must be the EncodedOperands returned by this code's "
        "encode_operands, got {}."
    )
    with pytest.raises(TypeError, match=f"^{re.escape(message.format('str'))}$"):
        code.decoder("encoded")
    flat = MDSCode(8, 4).encode_operands(np.ones((4, 2)), np.ones(2))
    with pytest.raises(
        TypeError, match=f"^{re.escape(message.format('EncodedOperands'))}$"
    ):
        code.decoder(flat)
    dec = code.decoder(code.encode_operands(np.ones((6, 2)), np.ones(2)))
    with pytest.raises(
        ValueError, match=r"^`piece.worker` must be >= 0, got piece.worker=-1\.$"
    ):
        dec.add(Piece(worker=-1, start=0, stop=2, value=np.zeros(2)))
    with pytest.raises(
        TypeError, match=r"^`piece.worker` must be an integer, got float 1.5\.$"
    ):
        dec.add(Piece(worker=1.5, start=0, stop=2, value=np.zeros(2)))
    with pytest.raises(
        ValueError, match=r"^`piece.start` must be >= 0, got piece.start=-1\.$"
    ):
        dec.add(Piece(worker=0, start=-1, stop=2, value=np.zeros(3)))
    assert dec.progress == (0, 3)
    with pytest.raises(
        DecodingError,
        match=r"^the results do not decode \(each group needs k_l decoded members\): "
        r"0 of 8 results, missing \[0, 1, 2, 3, 4, 5, 6, 7\]; ",
    ):
        dec.decode()
    dec.add(Piece(worker=5, start=0, stop=2, value=np.zeros(2)))
    with pytest.raises(DecodingError, match=r"^the results .*: 1 of 8 results, miss"):
        dec.decode()


def test_worst_condition_number_of_systematic_levels_by_enumeration():
    def kappa(n, k):
        code = MDSCode(n, k, systematic=True)
        G, ell = np.asarray(code.generator), code.subblocks
        tops, bottoms = [], []
        for S in itertools.combinations(range(n), k):
            rows = [i * ell + b for i in S for b in range(ell)]
            s = np.linalg.svd(G[rows], compute_uv=False)
            tops.append(s[0])
            bottoms.append(s[-1])
        return max(tops) / min(bottoms)

    bound = HierarchicalCode(12, [(3, 2), (4, 3)], systematic=True)
    bound = bound.worst_condition_number()
    expected = (kappa(3, 2), kappa(4, 3))
    assert bound.certified
    np.testing.assert_allclose(bound.levels, expected, rtol=1e-12)
    assert bound.value == pytest.approx(math.prod(expected), rel=1e-12)
    message = (
        "`worst_condition_number` is defined for real codes (field=None), got a "
        "code over GF(65537)."
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        HierarchicalCode(8, [(2, 1), (4, 3)], P).worst_condition_number()


def test_a_leaders_value_is_checked_with_whole_messages():
    code = HierarchicalCode(8, [(2, 1), (4, 3)])
    A, x = np.arange(12.0).reshape(6, 2), np.array([1.0, -1.0])
    answer = _run(code, A, x, [1, 2, 3]).decode_group(0)
    assert answer.used == (1, 2, 3)
    client = code.decoder(code.encode_operands(A, x))
    with pytest.raises(
        TypeError, match=r"^`decoded` must be a DecodedGroup, got ndarray\.$"
    ):
        client.add_group(answer.value)
    message = (
        "group 0's decoded value has non-finite entries (NaN or inf); refusing to "
        "decode a wrong product."
    )
    for used, worker in (((1, 2, 3), 1), ((), 0)):
        bad = dataclasses.replace(answer, value=answer.value * np.inf, used=used)
        with pytest.raises(
            NonFiniteResultError, match=f"^{re.escape(message)}$"
        ) as info:
            client.add_group(bad)
        assert info.value.worker == worker


def test_shares_and_shared_operand_are_read_only():
    code = HierarchicalCode(8, [(2, 1), (4, 3)], P)
    enc = code.encode_operands(np.arange(12).reshape(6, 2), [1, -1])
    assert not any(share.flags.writeable for share in enc.lefts)
    assert not enc.shared_right.flags.writeable
    assert not code.encode_right(enc, [[1, 2], [3, 4]]).shared_right.flags.writeable


def test_decoder_add_validates_and_counts_each_result_once():
    code = HierarchicalCode(8, [(2, 1), (4, 3)])
    A, x = np.arange(24.0).reshape(12, 2), np.array([1.0, -1.0])
    enc = code.encode_operands(A, x)
    results = {w: enc.lefts[w] @ x for w in range(8)}  # 4 rows each
    dec = code.decoder(enc)
    with pytest.raises(TypeError, match=r"^`piece` must be a Piece, got str\.$"):
        dec.add("piece")
    for piece, message in (
        (
            Piece(worker=8, start=0, stop=4, value=results[0]),
            "`piece.worker` must be <= 7, got piece.worker=8.",
        ),
        (
            Piece(worker=0, start=5, stop=5, value=results[0][:0]),
            "`piece.start` must be <= 4, got piece.start=5.",
        ),
        (
            Piece(worker=0, start=3, stop=2, value=results[0][:0]),
            "`piece.stop` must be >= 3, got piece.stop=2.",
        ),
        (
            Piece(worker=0, start=0, stop=5, value=results[0]),
            "`piece.stop` must be <= 4, got piece.stop=5.",
        ),
    ):
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            dec.add(piece)
    dec.add(Piece(worker=0, start=0, stop=4, value=results[0]))
    repeat = (
        "`piece` repeats rows of worker 0 that were already added (rows 0..4); add "
        "each row of a result once."
    )
    with pytest.raises(ValueError, match=f"^{re.escape(repeat)}$"):
        dec.add(Piece(worker=0, start=0, stop=4, value=results[0]))
    # a first piece from the middle of a result (start + stop = the rows)
    dec.add(Piece(worker=1, start=1, stop=3, value=results[1][1:3]))
    assert dec.progress == (1, 3)
    dec.add(Piece(worker=1, start=0, stop=1, value=results[1][:1]))
    dec.add(Piece(worker=1, start=3, stop=4, value=results[1][3:]))
    assert dec.progress == (2, 3)
    nan = results[2].copy()
    nan[1] = np.nan
    with pytest.raises(
        NonFiniteResultError, match=r"^worker 2 returned a result with non-finite"
    ) as info:
        dec.add(Piece(worker=2, start=0, stop=4, value=nan))
    assert info.value.worker == 2
    dec.add(Piece(worker=2, start=0, stop=4, value=results[2]))
    assert dec.is_decodable
    dec.add(
        Piece(worker=0, start=0, stop=4, value=results[0])
    )  # after the decode is possible: ignored
    assert dec.progress == (3, 3)
    np.testing.assert_allclose(dec.decode(), A @ x, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: HierarchicalCode(0, [(1, 1)]), "`n` must be >= 1, got n=0."),
        (
            lambda: HierarchicalCode(16, [(2, 1), (8, 3)], 7),
            "`n_l` must be <= p - 1 = 6 (distinct nonzero evaluation points of "
            "GF(7)), got n_l=8.",
        ),
        (
            lambda: HierarchicalCode(8, [(2, 1), (4, 3)], decoding="prod"),
            "`decoding` must be 'groups' or 'product', got 'prod'.",
        ),
        (
            lambda: HierarchicalCode(9, [(3, 2), (3, 2)], decoding="product"),
            "`decoding='product'` decodes across the groups of a two-level code over "
            "GF(p), got 2 level(s) over the reals (over the reals its chained solves "
            "have no certified bound); use decoding='groups', or field=p with two "
            "levels.",
        ),
        (
            lambda: HierarchicalCode(8, [(2, 1)] * 3, 5, decoding="product"),
            "`decoding='product'` decodes across the groups of a two-level code over "
            "GF(p), got 3 level(s) over GF(5) (over the reals its chained solves "
            "have no certified bound); use decoding='groups', or field=p with two "
            "levels.",
        ),
    ],
)
def test_constructor_messages_whole(call, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        call()


def test_one_worker_and_systematic_levels():
    one = HierarchicalCode(1, [(1, 1)])
    enc = one.encode_operands(np.arange(6.0).reshape(3, 2), np.ones(2))
    np.testing.assert_array_equal(
        one.decode_results(enc, {0: enc.lefts[0] @ np.ones(2)}), [1, 5, 9]
    )
    A = np.arange(12.0).reshape(6, 2)
    for field, systematic in ((None, True), (P, None), (P, False), (None, None)):
        code = HierarchicalCode(8, [(2, 1), (4, 3)], field, systematic=systematic)
        lefts = code.encode_operands(A.astype(int) if field else A, [1, 1]).lefts
        expected = field is not None if systematic is None else systematic
        assert code.systematic is expected
        # systematic: worker (0, i), i < k_1, holds the source block i of A
        blocks = [np.array_equal(lefts[i], A[2 * i : 2 * i + 2]) for i in range(3)]
        assert all(blocks) if expected else not any(blocks)


def test_a_one_worker_code_encodes_a_new_right_operand():
    one = HierarchicalCode(1, [(1, 1)])
    enc = one.encode_operands(np.arange(6.0).reshape(3, 2), np.ones(2))
    again = one.encode_right(enc, [1.0, -1.0])
    np.testing.assert_array_equal(
        one.decode_results(again, {0: again.lefts[0] @ again.right(0)}), [-1, -1, -1]
    )


def test_is_decodable_names_bad_workers_whole():
    code = HierarchicalCode(8, [(2, 1), (4, 3)])
    for bad, message in (
        (-1, "`worker` must be >= 0, got worker=-1."),
        (8, "`worker` must be <= 7, got worker=8."),
    ):
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            code.is_decodable([0, bad])
    assert code.is_decodable([5, 6, 7])
    assert not code.is_decodable([0, 1, 7])


def test_piece_values_checked_whole_and_field_arrays_accepted():
    galois = pytest.importorskip("galois")
    GF = galois.GF(P)
    code = HierarchicalCode(8, [(2, 1), (4, 3)], P)
    A, B = np.arange(-6, 6).reshape(6, 2), np.array([[1, 2, -3], [4, 0, 1]])
    enc = code.encode_operands(A, B)
    dec = code.decoder(enc)
    value = code.multiply(enc.lefts[0], enc.right(0))  # (2, 3)
    for bad, error, message in (
        (value[:, 0], ValueError, "`piece.value` must have shape (2, 3), got (2,)."),
        (value + 0j, TypeError, "`piece.value` must be numeric, got dtype complex128."),
        (
            value.astype(float),
            TypeError,
            "`piece.value` must hold integer residues over GF(p), got dtype float64.",
        ),
    ):
        with pytest.raises(error, match=f"^{re.escape(message)}$"):
            dec.add(Piece(worker=0, start=0, stop=2, value=bad))
    # worker 0's product as a galois FieldArray, 1's as signed int8 (systematic:
    # workers 0, 1, 2 hold A's blocks), 2's as signed int64: all residues mod p
    dec.add(Piece(worker=0, start=0, stop=2, value=GF(value)))
    signed = {w: A[2 * w : 2 * w + 2] @ B for w in (1, 2)}
    dec.add(Piece(worker=1, start=0, stop=2, value=signed[1].astype(np.int8)))
    dec.add(Piece(worker=2, start=0, stop=2, value=signed[2]))
    np.testing.assert_array_equal(dec.decode(), A @ B)
    real = HierarchicalCode(8, [(2, 1), (4, 3)])
    x = np.ones(2)
    renc = real.encode_operands(A.astype(float), x)
    rdec = real.decoder(renc)
    nan = renc.lefts[3] @ x
    nan[0] = np.inf
    message = (
        "worker 3 returned a result with non-finite entries (NaN or inf); refusing "
        "to decode a wrong product."
    )
    with pytest.raises(NonFiniteResultError, match=f"^{re.escape(message)}$") as info:
        rdec.add(Piece(worker=3, start=0, stop=2, value=nan))
    assert info.value.worker == 3
