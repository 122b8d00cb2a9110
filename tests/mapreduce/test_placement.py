import itertools
import math
import re
from fractions import Fraction

import pytest

from mapreduce import Placement, place_from_map, place_hypercube, place_k3, place_li
from theory import solve_k3_placement


@pytest.mark.parametrize(
    ("K", "r"), [(K, r) for K in range(1, 7) for r in range(1, K + 1)]
)
def test_li_placement_uses_every_r_subset_once(K, r):
    placement = place_li(K, r)
    assert math.comb(K, r) == placement.N
    assert placement.r == r
    assert sorted(tuple(sorted(s)) for s in placement.storers) == list(
        itertools.combinations(range(K), r)
    )
    assert placement.storage_used == (math.comb(K - 1, r - 1),) * K


def test_li_placement_round_robin_for_other_N():
    placement = place_li(4, 2, N=13)
    counts = {}
    for nodes in placement.storers:
        counts[nodes] = counts.get(nodes, 0) + 1
    assert sorted(counts.values()) == [2, 2, 2, 2, 2, 3]


@pytest.mark.parametrize(
    "M", [(2, 4, 6), (3, 6, 9), (4, 8, 12), (0, 12, 12), (5, 5, 5)]
)
def test_k3_placement_follows_the_lp_solution(M):
    placement = place_k3(M, 12)
    solution = solve_k3_placement(M, 12)
    assert placement.K == 3
    assert placement.N == 12
    assert placement.storage == M
    assert all(u <= m for u, m in zip(placement.storage_used, M, strict=True))
    sizes = [len(s) for s in placement.storers]
    assert sizes.count(1) == sum(solution.a)
    assert sizes.count(2) == sum(solution.b)
    assert sizes.count(3) == solution.c


@pytest.mark.parametrize("sizes", [(2,), (2, 2), (3, 3), (2, 3), (2, 3, 4), (1, 2)])
def test_hypercube_structure(sizes):
    placement = place_hypercube(sizes)
    N = math.prod(sizes)
    assert sum(sizes) == placement.K
    assert placement.N == N
    assert all(len(s) == len(sizes) for s in placement.storers)
    expected = tuple(N // k for k in sizes for _ in range(k))
    assert placement.storage_used == expected
    # two nodes of one class never share a file
    offsets = [sum(sizes[:d]) for d in range(len(sizes))]
    for nodes in placement.storers:
        classes = [max(d for d, o in enumerate(offsets) if o <= k) for k in nodes]
        assert sorted(classes) == list(range(len(sizes)))


def test_hypercube_needs_fewer_files_than_li():
    for K, r in [(6, 2), (6, 3), (8, 2), (8, 4), (12, 3)]:
        assert place_hypercube((K // r,) * r).N < place_li(K, r).N


def test_from_map_accepts_mapping_and_sequence():
    by_map = place_from_map({1: [2], 0: (0, 1)}, 3, storage=[1, 1, 1])
    by_seq = place_from_map([[0, 1], [2]], 3)
    assert by_map.storers == by_seq.storers
    assert by_map.r == Fraction(3, 2)
    assert by_map.files_of(0) == (0,)
    assert by_map.files_of(2) == (1,)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda: place_li(3, 4),
            ValueError,
            "`r` must satisfy 1 <= r <= K, got r=4, K=3.",
        ),
        (lambda: place_li(3, 0), ValueError, "`r` must be >= 1, got r=0."),
        (lambda: place_li(0, 1), ValueError, "`K` must be >= 1, got K=0."),
        (lambda: place_li(3, 1, N=0), ValueError, "`N` must be >= 1, got N=0."),
        (lambda: place_li(3, 1.5), TypeError, "`r` must be an integer, got float 1.5."),
        (
            lambda: place_from_map([[0], []], 2),
            ValueError,
            "file 1 is placed nowhere: storers[1] is empty.",
        ),
        (
            lambda: place_from_map([[0, 3]], 2),
            ValueError,
            "file 0 is placed at nodes [3] outside range(K), K=2.",
        ),
        (
            lambda: place_from_map([], 2),
            ValueError,
            "a placement needs at least one file",
        ),
        (
            lambda: place_from_map({0: [0], 2: [1]}, 2),
            ValueError,
            "`storers` keys must be the files 0 .. N-1, got [0, 2].",
        ),
        (
            lambda: place_from_map([[0], [0]], 2, storage=[1, 1]),
            ValueError,
            "node 0 stores 2 files, above its storage M[0]=1.",
        ),
        (
            lambda: place_from_map([[0]], 2, storage=[1]),
            ValueError,
            "`storage` must have K=2 entries, got 1.",
        ),
        (
            lambda: place_k3((1, 2, 3), 7),
            ValueError,
            "storage must hold the N files, got sum(min(M_k, N))=6 < N=7",
        ),
        (
            lambda: place_hypercube(()),
            ValueError,
            "`class_sizes` must have at least one class",
        ),
        (
            lambda: place_hypercube((2, 0)),
            ValueError,
            "`class_sizes[1]` must be >= 1, got class_sizes[1]=0.",
        ),
        (
            lambda: Placement(K=2, storers=(frozenset({0}),)).files_of(2),
            ValueError,
            "`k` must be <= 1",
        ),
    ],
)
def test_input_validation(call, error, message):
    with pytest.raises(error, match=re.escape(message)):
        call()


def test_hypercube_records_its_classes_and_tolerance():
    p = place_hypercube((2, 3))
    assert p.classes == ((0, 1), (2, 3, 4))
    assert p.tolerance == 1
    assert place_li(5, 3).tolerance == 2
    assert place_from_map([{0}, {0, 1}], 2).tolerance == 0


@pytest.mark.parametrize(
    ("classes", "message"),
    [
        (((0,), (1,)), "`classes` must split range(K), K=3"),
        (((0, 1), (1, 2)), "`classes` must split range(K), K=3"),
        (((0, 1), (2,)), "file 0 must be stored at one node of each class"),
    ],
)
def test_classes_must_be_a_design(classes, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        Placement(K=3, storers=(frozenset({0, 1}), frozenset({1, 2})), classes=classes)
