"""straggling_levels against a count over Li's placement (every r-subset of nodes)."""

import itertools
from fractions import Fraction

import pytest

from theory import straggling_levels


def _levels_by_enumeration(r, q, K):
    # finisher 0 and the other finishers 1..q-1; a coded file on each r-subset
    # (K/q times N coded files): B_j = (K/q) * share of the files node 0 lacks that
    # exactly j other finishers hold
    subsets = list(itertools.combinations(range(K), r))
    counts = {}
    for S in subsets:
        if 0 in S:
            continue
        j = sum(1 for node in S if node < q)
        if j >= 1:
            counts[j] = counts.get(j, 0) + 1
    return {j: Fraction(K * c, q * len(subsets)) for j, c in sorted(counts.items())}


CASES = [
    (r, q, K) for K in range(2, 7) for q in range(2, K + 1) for r in range(1, K + 1)
]


@pytest.mark.parametrize(("r", "q", "K"), CASES)
def test_levels_count_the_files_other_finishers_hold(r, q, K):
    levels = straggling_levels(r, q, K)
    expected = _levels_by_enumeration(r, q, K)
    assert {j: b for j, b in levels.items() if b} == expected
    assert set(levels) == set(range(1, min(r, q - 1) + 1))


def test_levels_of_li_placement_waiting_for_everyone():
    # q = K: every lacking file is held by r others, a fraction 1 - r/K of the data
    assert straggling_levels(2, 4, 4) == {1: Fraction(0), 2: Fraction(1, 2)}
    assert sum(straggling_levels(3, 6, 6).values()) == 1 - Fraction(3, 6)
