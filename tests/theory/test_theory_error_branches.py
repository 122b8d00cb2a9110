# ruff: noqa: E501  (a table reads best one case a line)
"""Every error branch of theory/ and allocation's solvers, at its boundary, by message.

Each row calls a public function with the first bad value past a constraint and
matches the whole message (``scripts/raise_coverage.py`` lists the raises no test
matches). Valid values at the same boundary run in the neighbouring tests.
"""

import re
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pytest

from allocation import solve_hcmm
from theory import (
    GroupProfile,
    K3Placement,
    SimulationResult,
    WorkerProfile,
    best_loads_at,
    bpcc_optimum,
    expected_rows,
    load_converse,
    load_hypercube,
    load_straggling,
    shuffle_seconds_switched,
)
from theory.validation import check_real, check_real_vector, replace_options

PROFILE = WorkerProfile(a=[1.0, 1.0], mu=[1.0, 2.0])


@dataclass(frozen=True)
class Options:
    timeout: float = 1.0


CASES = [
    (
        lambda: load_hypercube((3,)),
        ValueError,
        "`class_sizes` must have at least 2 classes, got 1.",
    ),
    (
        lambda: load_converse({2: 0}, 3),
        ValueError,
        "`files_at` must count at least one file, got 0.",
    ),
    (
        lambda: best_loads_at(PROFILE, 1.0, batches=[1, 2, 3]),
        ValueError,
        "`batches` must have length 2, got shape (3,).",
    ),
    (
        lambda: expected_rows(PROFILE, [1.0, 1.0], 2.0, overhead=[0.1, 0.1, 0.1]),
        ValueError,
        "`overhead` must have length 2, got 3.",
    ),
    (
        lambda: best_loads_at(PROFILE, 1.0, batches=1, l_max=[1.0, 2.0, 3.0]),
        ValueError,
        "`l_max` must be a scalar or length 2, got (3,).",
    ),
    (
        lambda: bpcc_optimum(PROFILE, 10.0, batches=None, batch_choices=()),
        ValueError,
        "`batch_choices` must not be empty, got ().",
    ),
    (
        lambda: WorkerProfile(a=[1.0, 1.0], mu=[1.0]),
        ValueError,
        "`a` and `mu` must have the same length, got 2 and 1.",
    ),
    (
        lambda: GroupProfile(N=[1.5, 1.0], a=[1.0, 1.0], mu=[1.0, 1.0]),
        TypeError,
        "`N` must hold integers, got dtype float64.",
    ),
    (
        lambda: shuffle_seconds_switched([1.0, -1.0], [1.0, 1.0], 1.0),
        ValueError,
        "`upload_bytes` must be a 1-D sequence of bytes >= 0.",
    ),
    (
        lambda: shuffle_seconds_switched([1.0, 1.0], [1.0], 1.0),
        ValueError,
        "`upload_bytes` and `download_bytes` must have one entry per node, got 2 and 1.",
    ),
    (
        lambda: shuffle_seconds_switched([1.0], [1.0], 1.0, messages=[1.0, 1.0]),
        ValueError,
        "`messages` must have one entry per node (1), got 2.",
    ),
    (
        lambda: load_straggling(4, 2, 3),
        ValueError,
        "`r` must satisfy 1 <= r <= K, got r=4, K=3.",
    ),
    (
        lambda: load_straggling(2, 4, 3),
        ValueError,
        "`q` must satisfy 1 <= q <= K, got q=4, K=3.",
    ),
    (
        lambda: check_real(2.5, "x", max_value=2.0),
        ValueError,
        "`x` must be <= 2.0, got x=2.5.",
    ),
    (
        lambda: check_real_vector(np.array([1j]), "v"),
        TypeError,
        "`v` must hold real numbers, got dtype complex128.",
    ),
    (
        lambda: check_real_vector([[1.0, 2.0]], "v"),
        ValueError,
        "`v` must be 1-D, got shape (1, 2).",
    ),
    (
        lambda: replace_options(1.0, Options, {}, caller="f"),
        TypeError,
        "`options` must be a test_theory_error_branches.Options or None, got float.",
    ),
    (
        lambda: replace_options(None, Options, {"timout": 2.0}, caller="f"),
        TypeError,
        "f() got unexpected keyword arguments ['timout']; the execution options are ['timeout'].",
    ),
    (lambda: load_straggling(0, 2, 3), ValueError, "`r` must be >= 1, got r=0."),
    (lambda: load_straggling(1, 2, 0), ValueError, "`K` must be >= 1, got K=0."),
    (
        lambda: SimulationResult(mean=float("nan"), stderr=0.0, quantiles={}, trials=1),
        ValueError,
        "`mean` must be finite, got mean=nan.",
    ),
    (
        lambda: SimulationResult(mean=1.0, stderr=0.0, quantiles={-0.5: 1.0}, trials=1),
        ValueError,
        "`quantiles` entries must be >= 0.0, got [-0.5].",
    ),
    (
        lambda: GroupProfile(N=[0, 1], a=[1.0, 1.0], mu=[1.0, 1.0]),
        ValueError,
        "`N` entries must be >= 1, got [0.0, 1.0].",
    ),
    (
        lambda: GroupProfile(N=[1, 1], a=[-1.0, 1.0], mu=[1.0, 1.0]),
        ValueError,
        "`a` entries must be >= 0.0, got [-1.0, 1.0].",
    ),
    (
        lambda: GroupProfile(N=[1, 1], a=[1.0, 1.0, 1.0], mu=[1.0, 1.0]),
        ValueError,
        "`a` must have length 2, got 3.",
    ),
    (
        lambda: GroupProfile(N=[1, 1], a=[1.0, 1.0], mu=[0.0, 1.0]),
        ValueError,
        "`mu` entries must be > 0.0, got [0.0, 1.0].",
    ),
    (
        lambda: GroupProfile(N=[1, 1], a=[1.0, 1.0], mu=[1.0]),
        ValueError,
        "`mu` must have length 2, got 1.",
    ),
    (
        lambda: WorkerProfile(a=[-1.0], mu=[1.0]),
        ValueError,
        "`a` entries must be >= 0.0, got [-1.0].",
    ),
    (
        lambda: WorkerProfile(a=[1.0], mu=[0.0]),
        ValueError,
        "`mu` entries must be > 0.0, got [0.0].",
    ),
    (
        lambda: WorkerProfile(a=[], mu=[]),
        ValueError,
        "a profile needs at least one worker, got n=0.",
    ),
    (
        lambda: WorkerProfile(a=[1.0, 1.0], mu=[1.0, 1.0], c=[0.1, 0.2, 0.3]),
        ValueError,
        "`c` must be a scalar or have length 2, got length 3.",
    ),
    (
        lambda: WorkerProfile(a=[1.0], mu=[1.0], c=-1.0),
        ValueError,
        "`c` entries must be >= 0.0, got [-1.0].",
    ),
    (
        lambda: SimulationResult(
            mean=1.0, stderr=0.0, quantiles={0.5: float("nan")}, trials=1
        ),
        ValueError,
        "`quantiles` must be finite, got quantiles=nan.",
    ),
    (
        lambda: SimulationResult.from_samples([]),
        ValueError,
        "`samples` must hold at least one latency, got 0.",
    ),
    (
        lambda: SimulationResult.from_samples([1.0], quantiles=[-0.5]),
        ValueError,
        "`quantiles` entries must be >= 0.0, got [-0.5].",
    ),
    (
        lambda: shuffle_seconds_switched([1.0], [-1.0], 1.0),
        ValueError,
        "`download_bytes` must be a 1-D sequence of bytes >= 0.",
    ),
    (
        lambda: shuffle_seconds_switched([1.0], [1.0], 1.0, download_bandwidth=0.0),
        ValueError,
        "`download_bandwidth` must be one rate > 0 (bytes/s) or one per node (1), got 0.0.",
    ),
    (
        lambda: shuffle_seconds_switched([1.0], [1.0], 1.0, latency_seconds=-1.0),
        ValueError,
        "`latency_seconds` must be >= 0.0, got latency_seconds=-1.0.",
    ),
    (
        lambda: shuffle_seconds_switched([1.0], [1.0], 1.0, messages=[-1.0]),
        ValueError,
        "`messages` must be a 1-D sequence of bytes >= 0.",
    ),
    (
        lambda: solve_hcmm(PROFILE, 10, l_max=[5.0, 0.0]),
        ValueError,
        "`l_max` entries must be > 0 rows, got [5.0, 0.0].",
    ),
]


@pytest.mark.parametrize(
    ("call", "error", "message"), CASES, ids=[c[2][:40] for c in CASES]
)
def test_error_branch(call, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        call()


def test_k3_placement_checks_its_files_and_storage():
    # valid: 1 + 1 + 1 files at single nodes, N = 3
    with pytest.raises(
        ValueError,
        match=re.escape("placement must hold every file once, got 1 + 0 + 0 != N=2."),
    ):
        K3Placement(
            M=(1, 1, 1),
            N=2,
            a=(1, 0, 0),
            b=(0, 0, 0),
            c=0,
            load_values=0,
            load=0,
            lp_load_values=0,
        )
    with pytest.raises(
        ValueError, match=re.escape("node 0 stores 2 files, above its storage M[0]=1.")
    ):
        K3Placement(
            M=(1, 1, 1),
            N=2,
            a=(2, 0, 0),
            b=(0, 0, 0),
            c=0,
            load_values=0,
            load=0,
            lp_load_values=0,
        )


def test_the_smallest_valid_straggling_inputs():
    assert load_straggling(1, 1, 1) == 0  # K = r = q = 1: nothing to shuffle
    assert load_straggling(1, 2, 2) == Fraction(1, 2)
