import itertools
import math
import re
from fractions import Fraction

import pytest

from mapreduce import plan_straggling, straggling_placement
from mapreduce._straggling import plan_finishers
from theory import load_coded, load_straggling, straggling_levels

GRID = [
    (K, r, q)
    for K in range(2, 7)
    for r in range(1, K + 1)
    for q in range(1, K + 1)
    if r < q  # r >= q: every finisher already holds N coded values
]


def _enumerated_load(K, r, q):
    """L(r, q) by listing every r-subset: an independent count of the levels."""
    finishers = set(range(q))
    level_counts = {}
    for subset in itertools.combinations(range(K), r):
        held = finishers & set(subset)
        if 0 not in subset and held:  # node 0 lacks it, some finisher has it
            level_counts[len(held)] = level_counts.get(len(held), 0) + 1
    per_batch = Fraction(K, q * math.comb(K, r))  # coded files of a batch over N
    need, load = 1 - Fraction(r, q), Fraction(0)
    for j in sorted(level_counts, reverse=True):
        take = min(need, level_counts[j] * per_batch)
        load += take / j
        need -= take
    assert need == 0
    return load


@pytest.mark.parametrize(
    ("K", "r", "q"), GRID, ids=[f"K{K}-r{r}-q{q}" for K, r, q in GRID]
)
def test_planner_load_equals_L_r_q(K, r, q):
    plan, N = plan_straggling(K, r, q)
    assert plan.load_values / (q * N) == load_straggling(r, q, K)
    assert load_straggling(r, q, K) == _enumerated_load(K, r, q)


def test_any_set_of_q_finishers_gives_the_same_load():
    for finished in itertools.combinations(range(5), 3):
        plan, N = plan_straggling(5, 2, 3, finished=finished)
        assert plan.load_values / (3 * N) == load_straggling(2, 3, 5)
        assert plan.reducers == finished


@pytest.mark.parametrize("K", range(2, 8))
def test_L_r_q_special_cases(K):
    for r in range(1, K + 1):
        assert load_straggling(r, K, K) == load_coded(r, K)  # no straggler: Li
        for q in range(1, K + 1):
            if r >= q:
                assert load_straggling(r, q, K) == 0
            levels = straggling_levels(r, q, K)
            # the finishers hold every data file's worth: sum_j B_j + r/q >= 1
            assert sum(levels.values()) + Fraction(r, q) >= 1
    for q in range(1, K + 1):
        assert load_straggling(1, q, K) == 1 - Fraction(1, q)  # MDS only: uncoded


@pytest.mark.parametrize("K", [8, 12])
def test_latency_load_tradeoff_at_fixed_storage(K):
    # storage of half the data per node: r = q / 2 copies of each coded file;
    # waiting for fewer nodes (lower latency) costs more communication
    loads = [load_straggling(q // 2, q, K) for q in range(2, K + 1, 2)]
    assert all(a > b for a, b in itertools.pairwise(loads))
    assert loads[0] == Fraction(1, 2)  # q = 2, r = 1: MDS alone
    assert loads[-1] == load_coded(K // 2, K)  # q = K: Li's scheme


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((2, 5, 4), "`q` must satisfy 1 <= q <= K, got q=5, K=4."),
        ((5, 2, 4), "`r` must satisfy 1 <= r <= K, got r=5, K=4."),
        ((1, 0, 4), "`q` must be >= 1, got q=0."),
    ],
)
def test_bad_r_or_q(args, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        load_straggling(*args)


def test_finished_must_be_q_nodes():
    with pytest.raises(ValueError, match="`finished` must be 3 distinct nodes"):
        plan_straggling(4, 2, 3, finished=[0, 1])


@pytest.mark.parametrize(
    ("K", "r", "q", "N"), [(4, 2, 3, 9), (5, 2, 3, 6), (6, 2, 5, 25), (7, 2, 6, 18)]
)
def test_a_last_unicast_level_needs_no_even_split(K, r, q, N):
    # the unicast level's batches may give unequal counts: a smaller N, the same load
    coded, least = straggling_placement(K, r, q)
    assert least == N
    assert straggling_placement(K, r, q, files=N + 1)[1] == 2 * N
    for finished in itertools.combinations(range(K), q):
        plan, _ = plan_finishers(coded, N, finished)
        assert plan.load_values / (q * N) == load_straggling(r, q, K)


def _enumerated_levels(r, q, K):
    """B_j by listing every r-subset: the share held by exactly j other finishers."""
    counts = {}
    for subset in itertools.combinations(range(K), r):
        held = sum(1 for node in subset if 0 < node < q)
        if 0 not in subset and held:
            counts[held] = counts.get(held, 0) + 1
    per_batch = Fraction(K, q * math.comb(K, r))
    return {j: c * per_batch for j, c in sorted(counts.items())}


@pytest.mark.parametrize(
    ("K", "r", "q"), GRID, ids=[f"K{K}-r{r}-q{q}" for K, r, q in GRID]
)
def test_levels_count_the_files_other_finishers_hold(K, r, q):
    levels = straggling_levels(r, q, K)
    assert set(levels) == set(range(1, min(r, q - 1) + 1))
    assert {j: b for j, b in levels.items() if b} == _enumerated_levels(r, q, K)


def test_levels_when_every_finisher_holds_enough():
    # r >= q: the levels stop at q - 1 other finishers
    for K in range(2, 7):
        for q in range(2, K + 1):
            for r in range(q, K + 1):
                levels = straggling_levels(r, q, K)
                assert set(levels) == set(range(1, q)), (K, r, q)
                expected = _enumerated_levels(r, q, K)
                assert {j: b for j, b in levels.items() if b} == expected
