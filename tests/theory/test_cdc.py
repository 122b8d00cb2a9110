import itertools
import re
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import linprog

from theory import (
    K3Placement,
    load_coded,
    load_converse,
    load_envelope,
    load_hypercube,
    load_optimal,
    load_uncoded,
    solve_k3_placement,
)

PAIRS = ((0, 1), (0, 2), (1, 2))


@pytest.mark.parametrize("K", range(3, 9))
def test_coded_and_uncoded_loads_exact(K):
    for r in range(1, K + 1):
        assert load_coded(r, K) == Fraction(K - r, r * K)
        assert load_uncoded(r, K) == Fraction(K - r, K)
        assert isinstance(load_coded(r, K), Fraction)


@given(st.integers(1, 40).flatmap(lambda K: st.tuples(st.just(K), st.integers(1, K))))
def test_coded_load_is_uncoded_over_r(case):
    K, r = case
    assert load_coded(r, K) <= load_uncoded(r, K)
    assert load_coded(r, K) * r == load_uncoded(r, K)


def _direct_count_li(r, s, K):
    """Li's general-s scheme counted over its placement: every (batch A, reduce
    set B) pair with B not inside A is a value multicast in S = A | B, costing
    (l - r) / (l - 1) values for l = |S| (each of the l - r receivers' needs are
    served with gain l - 1)."""
    total = Fraction(0)
    batches = list(itertools.combinations(range(K), r))
    reducers = list(itertools.combinations(range(K), s))
    for A in batches:
        for B in reducers:
            l = len(set(A) | set(B))  # noqa: E741
            if l > r:
                total += Fraction(l - r, l - 1)
    return total / (len(batches) * len(reducers))


@pytest.mark.parametrize("K", range(2, 7))
def test_optimal_load_against_direct_count(K):
    for r in range(1, K + 1):
        for s in range(1, K + 1):
            assert load_optimal(r, s, K) == _direct_count_li(r, s, K), (r, s)


@pytest.mark.parametrize("K", range(2, 9))
def test_optimal_load_special_cases(K):
    assert load_optimal(1, K, K) == 1
    for r in range(1, K + 1):
        assert load_optimal(r, 1, K) == load_coded(r, K)


@pytest.mark.parametrize("K", range(2, 9))
def test_envelope_interpolates_and_is_convex(K):
    for r in range(1, K + 1):
        assert load_envelope(r, K) == load_coded(r, K)
    grid = [Fraction(i, 4) for i in range(4, 4 * K + 1)]
    values = [load_envelope(r, K) for r in grid]
    for left, mid, right in zip(values, values[1:], values[2:], strict=False):
        assert 2 * mid <= left + right
    for r, value in zip(grid, values, strict=True):
        # chords of the convex (1/r)(1 - r/K) lie above it, below uncoded
        assert load_coded(r, K) <= value <= load_uncoded(r, K)


def test_envelope_check_value():
    assert load_envelope(Fraction(3, 2), 3) == Fraction(5, 12)
    assert load_envelope(1.5, 3) == Fraction(5, 12)


@pytest.mark.parametrize(
    ("M", "values"),
    [((2, 4, 6), 24), ((3, 6, 9), 15), ((4, 8, 12), 8), ((0, 12, 12), 12)],
)
def test_k3_check_values(M, values):
    solution = solve_k3_placement(M, 12)
    assert solution.load_values == values
    assert solution.load == Fraction(values, 36)
    assert solution.lp_load_values == values


@pytest.mark.parametrize(
    ("fraction", "load"),
    [
        (Fraction(1, 3), Fraction(2, 3)),
        (Fraction(2, 3), Fraction(1, 6)),
        (Fraction(1), Fraction(0)),
        (Fraction(1, 2), Fraction(5, 12)),
    ],
)
def test_k3_homogeneous_matches_li(fraction, load):
    N = 12
    M = int(fraction * N)
    assert solve_k3_placement((M, M, M), N).load == load


def _k3_values(a, b):
    return 2 * sum(a) + max(Fraction(sum(b), 2), Fraction(max(b)))


def _exhaustive_k3(M, N):
    """Least load over every integer placement (b, c; a fills the rest)."""
    best = None
    for b in itertools.product(range(N + 1), repeat=3):
        for c in range(N + 1 - sum(b)):
            used = [
                c + sum(b[p] for p, pair in enumerate(PAIRS) if k in pair)
                for k in range(3)
            ]
            slack = [M[k] - used[k] for k in range(3)]
            if min(slack) < 0 or sum(slack) < N - sum(b) - c:
                continue
            value = _k3_values((N - sum(b) - c, 0, 0), b)
            best = value if best is None else min(best, value)
    return best


def _grid(max_N):
    for N in range(1, max_N + 1):
        for M in itertools.product(range(N + 1), repeat=3):
            if sum(M) >= N:
                yield M, N


@pytest.mark.parametrize("N", range(1, 6))
def test_k3_integer_placement_is_exhaustive_optimum(N):
    for M, n in _grid(N):
        if n != N:
            continue
        solution = solve_k3_placement(M, N)
        assert solution.load_values == _exhaustive_k3(M, N), M
        assert solution.load_values == _k3_values(solution.a, solution.b)
        used = solution.storage_used
        assert all(u <= m for u, m in zip(used, M, strict=True))
        assert sum(solution.a) + sum(solution.b) + solution.c == N


def test_k3_lp_equals_half_file_exhaustive_search():
    # the LP relaxation = integer optimum once each file may be split in halves
    for M, N in _grid(3):
        lp = solve_k3_placement(M, N).lp_load_values
        assert lp == _exhaustive_k3(tuple(2 * m for m in M), 2 * N) / 2, (M, N)


def test_k3_lp_value_against_independent_lp():
    rng = np.random.default_rng(20261202)
    for _ in range(20):
        N = int(rng.integers(1, 40))
        M = tuple(int(m) for m in rng.integers(0, N + 1, size=3))
        if sum(M) < N:
            continue
        # variables: a (3), b (3), c, t; independent formulation with t >= each b
        cost = [2, 2, 2, 0, 0, 0, 0, 1]
        A_ub = [[0, 0, 0, 0.5, 0.5, 0.5, 0, -1]]
        A_ub += [
            [0, 0, 0] + [1 if q == p else 0 for q in range(3)] + [0, -1]
            for p in range(3)
        ]
        A_ub += [
            [1 if j == k else 0 for j in range(3)]
            + [1 if k in pair else 0 for pair in PAIRS]
            + [1, 0]
            for k in range(3)
        ]
        result = linprog(
            cost, A_ub=A_ub, b_ub=[0, 0, 0, 0, *M], A_eq=[[1] * 7 + [0]], b_eq=[N]
        )
        assert float(solve_k3_placement(M, N).lp_load_values) == pytest.approx(
            result.fun, abs=1e-9
        )


def test_k3_storage_beyond_N_is_capped():
    assert solve_k3_placement((50, 50, 50), 12).load_values == 0
    assert solve_k3_placement((0, 0, 12), 12).load_values == 24


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda: load_coded(0, 3),
            ValueError,
            "`r` must satisfy 1 <= r <= K, got r=0, K=3.",
        ),
        (
            lambda: load_coded(4, 3),
            ValueError,
            "`r` must satisfy 1 <= r <= K, got r=4, K=3.",
        ),
        (
            lambda: load_uncoded("1", 3),
            TypeError,
            "`r` must be a real number, got str.",
        ),
        (lambda: load_coded(1, 0), ValueError, "`K` must be >= 1, got K=0."),
        (
            lambda: load_envelope(0.5, 3),
            ValueError,
            "`r` must satisfy 1 <= r <= K, got r=0.5, K=3.",
        ),
        (
            lambda: load_optimal(4, 1, 3),
            ValueError,
            "`r` must satisfy 1 <= r <= K, got r=4, K=3.",
        ),
        (
            lambda: load_optimal(1, 4, 3),
            ValueError,
            "`s` must satisfy 1 <= s <= K, got s=4, K=3.",
        ),
        (lambda: load_optimal(1, 0, 3), ValueError, "`s` must be >= 1, got s=0."),
        (
            lambda: solve_k3_placement((1, 2), 3),
            ValueError,
            "`M` must have 3 entries (K = 3), got 2.",
        ),
        (
            lambda: solve_k3_placement((1, -1, 2), 3),
            ValueError,
            "`M[1]` must be >= 0, got M[1]=-1.",
        ),
        (
            lambda: solve_k3_placement((1, 2, 3), 7),
            ValueError,
            "storage must hold the N files, got sum(min(M_k, N))=6 < N=7 for "
            "M=(1, 2, 3).",
        ),
        (
            lambda: solve_k3_placement((1, 2, 3), 0),
            ValueError,
            "`N` must be >= 1, got N=0.",
        ),
        (
            lambda: solve_k3_placement((1, 2, 3.0), 3),
            TypeError,
            "`M[2]` must be an integer, got float 3.0.",
        ),
        (
            lambda: solve_k3_placement("abc", 3),
            ValueError,
            "`M` must have 3 entries (K = 3), got 0.",
        ),
        (lambda: load_uncoded(1, 0), ValueError, "`K` must be >= 1, got K=0."),
        (lambda: load_envelope(1, 0), ValueError, "`K` must be >= 1, got K=0."),
        (lambda: load_optimal(1, 1, 0), ValueError, "`K` must be >= 1, got K=0."),
        (lambda: load_optimal(0, 1, 3), ValueError, "`r` must be >= 1, got r=0."),
        (lambda: load_converse({1: 1}, 0), ValueError, "`K` must be >= 1, got K=0."),
        (
            lambda: load_converse({0: 1}, 3),
            ValueError,
            "`replication` must be >= 1, got replication=0.",
        ),
        (
            lambda: load_converse({4: 1}, 3),
            ValueError,
            "`replication` must be <= 3, got replication=4.",
        ),
        (
            lambda: load_converse({2: -1}, 3),
            ValueError,
            "`files_at[2]` must be >= 0, got files_at[2]=-1.",
        ),
        (
            lambda: load_hypercube((2, 0)),
            ValueError,
            "`class_sizes[1]` must be >= 1, got class_sizes[1]=0.",
        ),
    ],
)
def test_input_validation(call, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        call()


def test_rational_r_stays_exact_and_numpy_floats_convert():
    # 4/3 has no float: a float detour would miss (1 - 4/9) / (4/3) = 5/12
    assert load_coded(Fraction(4, 3), 3) == Fraction(5, 12)
    assert load_uncoded(Fraction(4, 3), 3) == Fraction(5, 9)
    # (2/3) L(1) + (1/3) L(2) = (2/3)(2/3) + (1/3)(1/6)
    assert load_envelope(Fraction(4, 3), 3) == Fraction(1, 2)
    # a NumPy float is Real but not a float: converted through float()
    assert load_coded(np.float32(1.5), 3) == Fraction(1, 3)
    assert load_envelope(np.float32(1.5), 3) == Fraction(5, 12)


def test_one_node_is_valid_and_loads_nothing():
    # K = 1 (r = s = 1): the node holds every file, nothing to shuffle
    assert load_coded(1, 1) == load_uncoded(1, 1) == load_envelope(1, 1) == 0
    assert load_optimal(1, 1, 1) == 0
    assert load_converse({1: 5}, 1) == 0


def test_converse_by_hand():
    # one file at 1 node, three at 2 of K = 4: (1 * 3/4 + 3 * 2/8) / 4
    assert load_converse({1: 1, 2: 3}, 4) == Fraction(3, 8)
    # files at every node cost nothing; files counted 0 times add nothing
    assert load_converse({4: 2, 1: 0}, 4) == 0
    assert load_converse({1: 0, 2: 6}, 4) == Fraction(1, 4)


@pytest.mark.parametrize(
    ("sizes", "load"),
    [
        # r = 2, K = 5: pairs (K - r) / (2K) = 3/10 beat the design's max(2, 3)/5
        ((2, 3), Fraction(3, 10)),
        # r = 3, K = 9: design max(4, 6/2) / 9 = 4/9 vs pairs 6/18 = 1/3
        ((1, 3, 5), Fraction(1, 3)),
        # r = 4, K = 8: design max(1, 4/3) / 8 = 1/6 vs pairs 4/16
        ((2, 2, 2, 2), Fraction(1, 6)),
        # a class of one node: K = 4, r = 3, design max(1, 1/2) / 4 vs pairs 1/8
        ((1, 1, 2), Fraction(1, 8)),
        # r = 5, K = 16: the largest class decides, max(3, 11/4) / 16 < 11/32
        ((3, 3, 3, 3, 4), Fraction(3, 16)),
    ],
)
def test_hypercube_load_by_hand(sizes, load):
    assert load_hypercube(sizes) == load


def _placement(a, b, c, M=(9, 9, 9)):
    return K3Placement(
        M=M,
        N=sum(a) + sum(b) + c,
        a=a,
        b=b,
        c=c,
        load_values=Fraction(0),
        load=Fraction(0),
        lp_load_values=Fraction(0),
    )


def test_k3_storage_used_by_hand():
    # node 0: a_0 + b_01 + b_02 + c; node 1: a_1 + b_01 + b_12 + c; ...
    full = _placement((1, 2, 3), (1, 2, 4), 2, M=(6, 9, 11))
    assert full.storage_used == (6, 9, 11)
    assert _placement((0, 0, 0), (0, 0, 0), 3).storage_used == (3, 3, 3)
    # storage exactly full is valid; one file more at node 2 is not
    assert _placement((0, 0, 1), (0, 1, 1), 1, M=(2, 2, 4)).storage_used == (2, 2, 4)
    with pytest.raises(
        ValueError, match=re.escape("node 2 stores 4 files, above its storage M[2]=3.")
    ):
        _placement((0, 0, 1), (0, 1, 1), 1, M=(2, 2, 3))
