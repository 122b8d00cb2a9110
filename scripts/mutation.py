"""Mutation testing of the math core with mutmut, one shard (a few modules) at a time.

Usage (from the repository root)::

    python scripts/mutation.py --list               # the shards
    python scripts/mutation.py plan fields          # run two shards, print reports
    python scripts/mutation.py plan --report        # report of the last run only
    python scripts/mutation.py plan --retest        # survivors again, after new tests
    python scripts/mutation.py plan --diff          # ... with each survivor's diff
    python scripts/mutation.py plan --mutants 'mapreduce._plan.x_verify_plan*'


Each shard mutates a few modules and runs only the tests that exercise them, so a
shard fits in a CI job. Its mutmut project lives in ``build/mutation/<shard>/``
(symlinks to the packages and tests, and the repository's pyproject.toml with a
generated ``[tool.mutmut]`` table); a rerun is incremental: mutmut tests only the
mutants of functions whose source changed (``--retest`` reruns the survivors
after new tests).

The report gives, per module, the score ``killed / (killed + survived)``, where a
mutant no selected test runs (mutmut's "no tests") counts as survived and timeouts
(an endless loop, or a loaded machine) are listed apart, outside the score, with
the mutants of `EQUIVALENT` (each with the reason it cannot be killed) excluded;
then it lists the survivors by name (``--diff`` prints each one's diff). It exits
1 while a shard has a survivor that is not listed as equivalent.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "build" / "mutation"
PACKAGES = ("coded", "allocation", "mapreduce", "theory")


@dataclass(frozen=True)
class Shard:
    """Modules to mutate and the test files that exercise them."""

    modules: tuple[str, ...]
    tests: tuple[str, ...]


_ERRORS = "tests/coded/test_code_error_branches.py"
_CODES_EXACT = (
    "tests/coded/test_boundaries.py",
    "tests/coded/test_exact.py",
    "tests/coded/test_modular.py",
    "tests/coded/test_dtypes.py",
)
SHARDS: dict[str, Shard] = {
    "plan": Shard(
        ("mapreduce/_plan.py", "mapreduce/_coding.py"),
        (
            "tests/mapreduce/test_plan.py",
            "tests/mapreduce/test_plan_boundaries.py",
            "tests/mapreduce/test_placement.py",
        ),
    ),
    "placement": Shard(
        ("mapreduce/_placement.py",),
        ("tests/mapreduce/test_placement.py", "tests/mapreduce/test_plan.py"),
    ),
    "fields": Shard(
        ("coded/codes/_fields.py",),
        (
            "tests/coded/test_boundaries.py",
            _ERRORS,
            "tests/coded/test_exact.py",
            "tests/coded/test_modular.py",
            "tests/coded/test_mds.py",  # real operands and encode(X)
        ),
    ),
    "modular": Shard(
        ("coded/codes/_modular.py", "coded/codes/_modular_kernels.py"), _CODES_EXACT
    ),
    "crt": Shard(
        ("coded/codes/_crt.py", "coded/codes/_exact.py"), (*_CODES_EXACT, _ERRORS)
    ),
    "mds": Shard(
        ("coded/codes/_mds.py", "coded/codes/_base.py"),
        (
            "tests/coded/test_mds.py",
            "tests/coded/test_boundaries.py",
            "tests/coded/test_codes_properties.py",
            "tests/coded/test_row_mds_blocks.py",
            "tests/coded/test_guard.py",
            _ERRORS,  # the messages of BlockCode's and RowMDSCode's raises
            "tests/coded/test_verification.py",  # decode_results(verify=...)
            "tests/coded/test_decodable_oracle.py",
        ),
    ),
    "polynomial": Shard(
        ("coded/codes/_polynomial.py", "coded/codes/_lagrange.py"),
        (
            "tests/coded/test_polynomial.py",
            "tests/coded/test_lagrange.py",
            "tests/coded/test_boundaries.py",
            _ERRORS,  # the messages of PolynomialCode's and LagrangeCode's raises
            "tests/coded/test_decodable_oracle.py",
            "tests/coded/test_verification.py",  # verify over GF(p) only
        ),
    ),
    "replication": Shard(
        ("coded/codes/_replication.py", "coded/codes/_transpose.py"),
        (
            "tests/coded/test_replication.py",
            "tests/coded/test_transpose.py",
            _ERRORS,  # the messages of TransposedCode's raises
            "tests/coded/test_decodable_oracle.py",
        ),
    ),
    "generators": Shard(
        ("coded/codes/_generators.py",),
        ("tests/coded/test_mds.py", "tests/coded/test_guard.py"),
    ),
    "units": Shard(
        ("coded/codes/_units.py",),
        (
            "tests/coded/test_mds.py",
            "tests/coded/test_guard.py",
            "tests/coded/test_units.py",
            _ERRORS,  # mark, encode_right and the decoder's messages
            "tests/coded/test_repair.py",  # UnitCode.repair
            "tests/coded/test_verification.py",  # the decoder's verify paths
            # not test_dtypes.py: its float32 strategy is flaky under mutmut's
            # stats run (hypothesis FlakyStrategyDefinition)
        ),
    ),
    "rateless": Shard(
        ("coded/codes/_rateless.py",), ("tests/coded/test_rateless.py", _ERRORS)
    ),
    "gradient-codes": Shard(
        ("coded/codes/_gradient.py", "coded/codes/_gradient_schemes.py"),
        ("tests/coded/test_gradient_codes.py", _ERRORS),
    ),
    "verification": Shard(
        ("coded/codes/_freivalds.py", "coded/codes/_consistency.py"),
        ("tests/coded/test_verification.py",),
    ),
    "hierarchical-codes": Shard(
        ("coded/codes/_hierarchical.py",),
        (
            "tests/coded/test_hierarchical.py",
            "tests/theory/test_hierarchical_latency.py",  # product decoding oracle
        ),
    ),
    "theory-small": Shard(
        (
            "theory/_thresholds.py",
            "theory/_straggling.py",
            "theory/_network.py",
            "theory/_models.py",
            "theory/_simulation_result.py",
        ),
        (
            "tests/theory/test_thresholds.py",
            "tests/theory/test_simulation_result.py",
            "tests/theory/test_theory_error_branches.py",
            "tests/theory/test_model_conversions.py",
            "tests/theory/test_overhead.py",
            "tests/mapreduce/test_straggling.py",
            # the switched model without test_emulator.py's cluster: a forked
            # mutant hangs on the threads of an in-process cluster (timeouts)
            "tests/theory/test_network_rates.py",
        ),
    ),
    "theory-homogeneous": Shard(
        ("theory/_homogeneous.py", "theory/_homogeneous_sim.py"),
        (
            "tests/theory/test_homogeneous.py",
            "tests/theory/test_theory_error_branches.py",
            "tests/theory/test_heterogeneous.py",  # _lambertw_lower_excess
        ),
    ),
    "theory-heterogeneous": Shard(
        ("theory/_heterogeneous.py", "theory/_exact_latency.py"),
        (
            "tests/theory/test_heterogeneous.py",
            "tests/theory/test_theory_error_branches.py",
            "tests/theory/test_simulator.py",  # the exact allocation latencies
            "tests/theory/test_overhead.py",
        ),
    ),
    "theory-cdc": Shard(
        ("theory/_cdc.py",),
        (
            "tests/theory/test_cdc.py",
            "tests/theory/test_theory_error_branches.py",
            "tests/mapreduce/test_placement.py",  # place_k3 solves the K = 3 LP
            "tests/mapreduce/test_plan.py",  # loads against the planner's counts
        ),
    ),
    "theory-gradient": Shard(
        ("theory/_gradient.py", "theory/_physical_limit.py"),
        (
            "tests/theory/test_gradient.py",
            "tests/theory/test_physical_limit.py",
            "tests/theory/test_theory_error_branches.py",
            "tests/theory/test_simulator.py",  # simulate_physical_limit
        ),
    ),
    "theory-simulator": Shard(
        ("theory/_simulator.py",),
        (
            "tests/theory/test_simulator.py",
            "tests/theory/test_theory_error_branches.py",
        ),
    ),
    "theory-hierarchical": Shard(
        ("theory/_hierarchical.py",),
        (
            "tests/theory/test_hierarchical_latency.py",
            "tests/theory/test_theory_error_branches.py",
        ),
    ),
    "theory-validation": Shard(
        ("theory/validation.py", "theory/rng.py"),
        (
            "tests/theory/test_validation.py",
            "tests/theory/test_theory_error_branches.py",
            "tests/test_bad_input.py",
            _ERRORS,
        ),
    ),
    "solvers": Shard(
        ("allocation/_solvers.py",),
        (
            "tests/allocation/test_solvers.py",
            "tests/allocation/test_overhead_and_units.py",
        ),
    ),
}

EQUIVALENT: dict[str, str] = {
    "mapreduce._plan.x_verify_plan__mutmut_54": (
        "'twice' if start <= end: inside `if start != end`, <= and < agree"
    ),
    "mapreduce._plan.x__plan_uncoded__mutmut_3": (
        "sent = [1] * K: every count shifted by one; the minima and the test "
        "sent[s] > sent[t] + 1 only compare counts"
    ),
    "mapreduce._plan.x__plan_uncoded__mutmut_7": (
        "greedy pass by node id (key=None): only the start of the rebalancing "
        "changes; the contract (no value can move to a storer two sends less "
        "busy, tested) holds, which balanced assignment comes out is unspecified"
    ),
    "mapreduce._plan.x__plan_uncoded__mutmut_9": "as mutant 7 (key dropped)",
    "mapreduce._plan.x__plan_uncoded__mutmut_17": (
        "moved = None in the loop: None and False are both false for `while`"
    ),
    "mapreduce._plan.x__plan_uncoded__mutmut_46": (
        "zip(..., strict=None): demands and senders have one entry each, always"
    ),
    "mapreduce._plan.x__plan_uncoded__mutmut_49": "as mutant 46 (strict dropped)",
    "mapreduce._plan.x__plan_uncoded__mutmut_50": "as mutant 46 (strict=False)",
    "mapreduce._plan.x__plan_group__mutmut_20": (
        "P + len(senders) caps the list of senders later; only senders[t], t < P, "
        "are read"
    ),
    "mapreduce._plan.x__plan_group__mutmut_42": (
        "zip(..., strict=None): None is false, as strict=False"
    ),
    "mapreduce._plan.x__plan_group__mutmut_45": "strict dropped: False is its default",
    "mapreduce._plan.x__group_transmissions__mutmut_27": (
        "range(1, g + 2): c = g always reaches the best load, so next() stops first"
    ),
    "mapreduce._plan.x__plan_coded__mutmut_9": (
        "design plan only from 3 classes: with 2 classes every design group has 2 "
        "members (g = 1, plain unicasts), never lighter than Li's plan, which min() "
        "keeps on ties (checked on (q, q') hypercubes)"
    ),
    "mapreduce._plan.x__plan_coded__mutmut_10": "as mutant 9 (>= 3)",
    "mapreduce._plan.x__plan_groups__mutmut_3": (
        "groups in another order: each group is planned alone, so only the order "
        "of the packets changes, which a plan does not specify"
    ),
    "mapreduce._plan.x__plan_groups__mutmut_5": "as mutant 3 (key dropped)",
    "theory._straggling.x_load_straggling__mutmut_47": (
        "the message of an unreachable AssertionError (any q finishers of the MDS "
        "placement hold N coded files; scripts/raise_coverage.py lists it)"
    ),
    "theory._straggling.x_load_straggling__mutmut_48": "as mutant 47",
    "theory._straggling.x_load_straggling__mutmut_49": "as mutant 47",
    "theory._straggling.x_load_straggling__mutmut_50": "as mutant 47",
    "theory._network.x__rates__mutmut_17": (
        "np.array(rates) without dtype=float: the rates only divide float byte "
        "vectors, and numpy divides by int64 or object (Fraction) rates to the "
        "same quotients"
    ),
    "theory._network.x__rates__mutmut_19": "as mutant 17 (dtype dropped)",
    "theory._models.xǁGroupProfileǁ__post_init____mutmut_13": (
        "kind not in 'XXiuXX': no dtype kind is 'X', so the test of integer kinds "
        "'i' and 'u' is unchanged"
    ),
    "theory._models.xǁGroupProfileǁscaled__mutmut_19": (
        "(N * s).astype(None): float64 whole numbers, which GroupProfile converts "
        "back to counts as it does the int64 ones"
    ),
    "theory._simulation_result.xǁSimulationResultǁfrom_samples__mutmut_44": (
        "np.quantile at no probabilities is an empty array, as np.empty(0)"
    ),
    "theory._simulation_result.xǁSimulationResultǁfrom_samples__mutmut_63": (
        "zip(..., strict=None): values come from np.quantile at probs, one each"
    ),
    "theory._simulation_result.xǁSimulationResultǁfrom_samples__mutmut_66": (
        "as mutant 63 (strict dropped)"
    ),
    "theory._simulation_result.xǁSimulationResultǁfrom_samples__mutmut_67": (
        "as mutant 63 (strict=False)"
    ),
    "theory._cdc.x__k3_program__mutmut_3": (
        "integer cost, A_eq or b_ub arrays (dtype dropped): linprog and milp convert "
        "them to float64"
    ),
    "theory._cdc.x__k3_program__mutmut_5": "as mutant 3",
    "theory._cdc.x__k3_program__mutmut_67": "as mutant 3",
    "theory._cdc.x__k3_program__mutmut_69": "as mutant 3",
    "theory._cdc.x__k3_program__mutmut_80": "as mutant 3",
    "theory._cdc.x__k3_program__mutmut_82": "as mutant 3",
    "theory._cdc.x_load_converse__mutmut_40": (
        "sum from int 0: at least one Fraction term (N > 0), so a Fraction still"
    ),
    "theory._cdc.x_solve_k3_placement__mutmut_56": (
        "linprog without method: scipy's default method is 'highs'"
    ),
    "theory._cdc.x_solve_k3_placement__mutmut_58": (
        "method 'HIGHS': linprog lower-cases the method name"
    ),
    "theory._cdc.x_solve_k3_placement__mutmut_70": (
        "milp without bounds: its default bounds are 0 <= x < inf, as Bounds(0, inf)"
    ),
    "theory._cdc.x_solve_k3_placement__mutmut_74": "as mutant 70 (bounds dropped)",
    "theory._cdc.x_solve_k3_placement__mutmut_91": (
        "Bounds(0): its default upper bound is inf"
    ),
    "theory._cdc.x_solve_k3_placement__mutmut_86": (
        "sum(x) >= N instead of = N: dropping a file never raises the objective, so "
        "the optimum is the same; HiGHS returns a vertex with the sum tight (on "
        "every exhaustive grid of the tests), and K3Placement refuses any other"
    ),
    "theory._cdc.x_solve_k3_placement__mutmut_87": "as mutant 86",
    "theory._cdc.x_solve_k3_placement__mutmut_93": (
        "the RuntimeError after HiGHS: unreachable, the checks make both programs "
        "feasible and bounded"
    ),
    "theory._cdc.x_solve_k3_placement__mutmut_98": "as mutant 93 (its message)",
    "theory._cdc.x_solve_k3_placement__mutmut_101": (
        "ip.x[:8]: only x[:7] is read afterwards (t is the 8th variable)"
    ),
    "theory._cdc.x_solve_k3_placement__mutmut_135": (
        "limit_denominator(1001): the LP optimum is a multiple of 1/2 (half-file "
        "placements), recovered by either bound"
    ),
    "theory._gradient.x__at_least__mutmut_6": (
        "one more count column: mass moves up one column per event, so column "
        "n + 1 stays 0 after n events and adds nothing to P[at least k]"
    ),
    "theory._gradient.x__circular_cover__mutmut_3": (
        "a state s + 1: no transition enters it, so it adds no closed walk to the trace"
    ),
    "theory._gradient.x__partial_cover__mutmut_3": (
        "a state s + 1: the next state max(r, c) - 1 is at most s, as mutant 3 of "
        "_circular_cover"
    ),
    "theory._gradient.x__partial_cover__mutmut_13": (
        "a column s + 3 of ones: pmf's column s + 2 is never read (c < s + 2)"
    ),
    "theory._gradient.x__partial_cover__mutmut_20": (
        "column s + 2 filled by the loop, then set to 0 as before"
    ),
    "theory._gradient.x__cover_times__mutmut_1": (
        "default partial=True: the one caller always passes partial"
    ),
    "theory._gradient.x_gradient_loads__mutmut_17": (
        "another placeholder profile: it only carries n to _check, whose checks "
        "read neither a nor mu"
    ),
    "theory._gradient.x_gradient_loads__mutmut_18": "as mutant 17 (mu)",
    "theory._gradient.x_simulate_gradient_step_time__mutmut_55": (
        "np.sort without axis: its default axis is -1, the workers' axis 1"
    ),
    "theory._gradient.x_expected_gradient_step_time__mutmut_32": (
        "the window search's first step doubled: the window ends at most twice "
        "as far, where the survival is below 1e-12, and the adaptive integral "
        "is the same to its tolerance"
    ),
    "theory._physical_limit.x__log_laplace__mutmut_22": (
        "complement <= 0.5: at exactly 0.5 both branches give log(1/2) to an ulp"
    ),
    "theory._physical_limit.x__log_laplace__mutmut_30": (
        "min(complement, 1.5): the clipped value is selected only where the "
        "complement is < 0.5; elsewhere it is <= sum(weights) < 1, so log1p stays "
        "finite (or -inf, divide ignored) and no warning is raised"
    ),
    "theory._physical_limit.x_physical_limit_bound__mutmut_16": (
        "no early return for a = 0: e^0 E_1(0) = inf, so the speed is inf and "
        "m / inf = 0.0, the same value, without a warning"
    ),
    "theory._physical_limit.x_physical_limit_bound__mutmut_27": (
        "min(x, 501): `small` is selected only where x <= 500"
    ),
    "theory._physical_limit.x_physical_limit_bound__mutmut_35": (
        "x < 500: at x = 500 exactly, U(1, 1, x) and e^x E_1(x) agree to 1e-15"
    ),
    "theory._physical_limit.x_expected_physical_limit__mutmut_42": (
        "quad's default epsabs (1.5e-8) instead of 0: on every tested profile the "
        "result moves by < 2e-12 relative, below the documented 10 digits"
    ),
    "theory._physical_limit.x_expected_physical_limit__mutmut_43": (
        "as mutant 42 (default epsrel 1.5e-8)"
    ),
    "theory._physical_limit.x_expected_physical_limit__mutmut_44": (
        "quad's default limit of 50 subintervals: the scaled integrand is smooth "
        "and decreasing, quad never needs 50"
    ),
    "theory._physical_limit.x_expected_physical_limit__mutmut_48": (
        "as mutant 44 (limit 201)"
    ),
    "theory._physical_limit.x_expected_physical_limit__mutmut_22": (
        "2/mu in the scale of t: the integral does not depend on the scale, which "
        "changes by less than 2x, and quad converges to the same digits"
    ),
    "theory._homogeneous.x__lambertw_lower_excess__mutmut_15": (
        "another Newton start for 1e-7 <= s < 1: 8 steps reach the root from it to "
        "4.2e-13 relative (a grid of 6000 s in [1e-7, 1e7]), within the documented "
        "1e-12; the last bits depend on the start"
    ),
    "theory._homogeneous.x__lambertw_lower_excess__mutmut_18": "as mutant 15",
    "theory._homogeneous.x__lambertw_lower_excess__mutmut_19": "as mutant 15",
    "theory._homogeneous.x__lambertw_lower_excess__mutmut_21": "as mutant 15",
    "theory._homogeneous.x__lambertw_lower_excess__mutmut_22": "as mutant 15",
    "theory._homogeneous.x__lambertw_lower_excess__mutmut_13": (
        "s = 1 starts from the series, not the asymptote: the same root, bit "
        "for bit on the grid of mutant 15"
    ),
    "theory._homogeneous.x__lambertw_lower_excess__mutmut_14": (
        "the series start up to s = 2: the same root to an ulp (grid of mutant 15)"
    ),
    "theory._homogeneous.x__lambertw_lower_excess__mutmut_23": (
        "s - log1p(s) as the start for s >= 1: the same root to an ulp (grid of "
        "mutant 15)"
    ),
    "theory._homogeneous.x__lambertw_lower_excess__mutmut_26": (
        "a 9th Newton step: moves the result by at most 3.5e-13 relative (grid of "
        "mutant 15), within the documented 1e-12"
    ),
    "theory._homogeneous.x__lambertw_lower_excess__mutmut_3": (
        "asarray without dtype: s = mu a is a float already"
    ),
    "theory._homogeneous.x__lambertw_lower_excess__mutmut_5": "as mutant 3",
    "theory._homogeneous.x__lambertw_lower_excess__mutmut_36": (
        "the divisor's placeholder where u <= 0: that branch is discarded there"
    ),
    "theory._homogeneous.x__lambertw_lower_excess__mutmut_44": (
        "Newton at u = 0 too: u = 0 only for s = 0, where the step is 0"
    ),
    "theory._homogeneous.x__lambertw_lower_excess__mutmut_54": (
        "u = 1 where u <= 0: only at s = 0, where the series (0) is returned"
    ),
    "theory._homogeneous.x__lambertw_lower_excess__mutmut_86": (
        "the series at s = 1e-7 exactly: it and Newton agree there to 1.1e-13"
    ),
    "theory._homogeneous.x__harmonic_tail__mutmut_7": (
        "integer arange (dtype None or dropped): 1.0 / int64 is float64 alike"
    ),
    "theory._homogeneous.x__harmonic_tail__mutmut_10": "as mutant 7",
    "theory._homogeneous.x_optimal_k_mds__mutmut_23": "as _harmonic_tail's mutant 7",
    "theory._homogeneous.x_optimal_k_mds__mutmut_27": "as _harmonic_tail's mutant 7",
    "theory._homogeneous.x_expected_latency_replication__mutmut_12": (
        "parts = n / r: r divides n, so a whole float, and _harmonic_tail's "
        "arange over it gives the same terms"
    ),
    "theory._homogeneous_sim.x__order_statistic__mutmut_22": (
        "reshape(-2, parts, r): numpy reads any negative size as 'the rest', as -1"
    ),
    "theory._homogeneous_sim.x__order_statistic__mutmut_31": (
        "np.partition without axis: its default axis is -1, the workers' axis 1"
    ),
    "theory._homogeneous_sim.x__sample__mutmut_6": (
        "at least 2 rows a chunk: chunks only split the generator's row-major "
        "stream, the same draws in the same rows"
    ),
    "theory._heterogeneous.x__bisect_tau__mutmut_3": (
        "a first bracket [0, 2]: the doubling and Brent's method find the same "
        "root to rtol 1e-13"
    ),
    "theory._heterogeneous.x__bisect_tau__mutmut_5": (
        "2001 doublings: the checks before make E[S] reach m, so a bracket is "
        "found long before (hi overflows after 1024 doublings)"
    ),
    "theory._heterogeneous.x_expected_rows__mutmut_29": (
        "t kept as integers: the times only divide and compare as float64"
    ),
    "theory._heterogeneous.x_expected_rows__mutmut_31": "as mutant 29",
    "theory._heterogeneous.x__best_over_batches__mutmut_27": (
        "rows > max (1 - 1e-12): differs only where every candidate's rows are 0, "
        "where argmax picks the first candidate either way"
    ),
    "theory._heterogeneous.x__bisect_tau__mutmut_7": (
        "value_at(hi) > m: at equality the next doubling brackets the same root"
    ),
    "theory._heterogeneous.x__bisect_tau__mutmut_11": (
        "tripling instead of doubling: another bracket of the same root"
    ),
    "theory._heterogeneous.x__bisect_tau__mutmut_12": (
        "the message of an unreachable raise (pragma: no cover)"
    ),
    "theory._heterogeneous.x__bisect_tau__mutmut_23": (
        "brentq's default rtol (4 eps) instead of 1e-13: a tighter root"
    ),
    "theory._heterogeneous.x__unique_workers__mutmut_4": (
        "columns without float64: np.column_stack promotes them to float64"
    ),
    "theory._heterogeneous.x__unique_workers__mutmut_6": "as mutant 4",
    "theory._heterogeneous.x__unique_workers__mutmut_19": (
        "inverse.reshape(None) or (-2): numpy >= 2.0.1 returns unique's inverse 1-D "
        "already, and reads any negative size as -1"
    ),
    "theory._heterogeneous.x__unique_workers__mutmut_21": "as mutant 19",
    "theory._heterogeneous.x__best_rows__mutmut_9": (
        "t without float64: t is a float from _check_m already"
    ),
    "theory._heterogeneous.x__best_rows__mutmut_11": "as mutant 9",
    "theory._heterogeneous.x__best_rows__mutmut_15": (
        "integer k or b: every use divides or compares them with floats"
    ),
    "theory._heterogeneous.x__best_rows__mutmut_18": "as mutant 15",
    "theory._heterogeneous.x__best_rows__mutmut_24": "as mutant 15",
    "theory._heterogeneous.x__best_rows__mutmut_22": (
        "one more batch index k = b + 1: `usable` requires k <= b, so its piece "
        "is -inf and never chosen"
    ),
    "theory._heterogeneous.x__best_rows__mutmut_40": (
        "a >= 0 in v_hi: for a = 0 the pieces of batches that cannot end (t/k <= c) "
        "get a -inf or NaN end and drop out; every usable piece stays [0, cap/b] "
        "with the same objective (batch 1's exists whenever anything can end), "
        "and where nothing can the rows are 0 either way"
    ),
    "theory._heterogeneous.x__best_rows__mutmut_54": (
        "a >= 0 in v_lo: for a = 0 some pieces get an infinite or NaN lower end "
        "and drop out; piece b keeps [0, cap/b], every piece's interval for a = 0"
    ),
    "theory._heterogeneous.x__best_rows__mutmut_76": (
        "hi >= lo: a zero-width piece evaluates the objective at its neighbour's "
        "end, which the neighbour's search reaches within its tolerance "
        "(0.618^50 of its width)"
    ),
    "theory._heterogeneous.x__best_rows__mutmut_85": (
        "other ends (1.0) of unusable pieces: their values are -inf after the search"
    ),
    "theory._heterogeneous.x__best_rows__mutmut_92": "as mutant 85",
    "theory._heterogeneous.x__best_rows__mutmut_114": (
        "safe = 2.0 for v <= 0: only v = 0 (an unusable piece) reaches it, where "
        "the objective is 0 * (a finite sum) either way"
    ),
    "theory._heterogeneous.x__best_rows__mutmut_143": (
        "f1 > f2 for >=: on equal probes a concave piece's maximum lies between "
        "them, which either step keeps"
    ),
    "theory._heterogeneous.x__best_rows__mutmut_168": (
        "x2_new recomputed as lo + G (hi - lo) where it reuses x1: the same point "
        "(G^2 = 1 - G), up to rounding"
    ),
    "theory._heterogeneous.x__best_rows__mutmut_200": (
        "x2 always as the result (or on ties, mutant 206): after 50 steps x1 and "
        "x2 are 0.618^50 of the piece apart, within the search's tolerance "
        "(5e-16 relative in the rows over 3200 random workers)"
    ),
    "theory._heterogeneous.x__best_rows__mutmut_206": "as mutant 200",
    "theory._heterogeneous.x__cap_vector__mutmut_10": (
        "integer caps (dtype None or dropped): they only divide and compare with floats"
    ),
    "theory._heterogeneous.x__cap_vector__mutmut_12": "as mutant 10",
    "theory._heterogeneous.x_bpcc_optimum__mutmut_51": (
        "np.full(n, b) of an int b is int64 already"
    ),
    "theory._heterogeneous.x_bpcc_optimum__mutmut_54": "as mutant 51",
    "theory._heterogeneous.x_best_loads_at__mutmut_7": (
        "_cap_vector(None, n, inf) for no cap: np.full(n, inf), as the branch"
    ),
    "theory._heterogeneous.x_best_loads_at__mutmut_16": (
        "_cap_vector's m = None: read only when l_max is None, the other branch"
    ),
    "theory._heterogeneous.x_kim_bound__mutmut_52": (
        "zip(..., strict=None/False/dropped): GroupProfile's columns have one length"
    ),
    "theory._heterogeneous.x_kim_bound__mutmut_56": "as mutant 52",
    "theory._heterogeneous.x_kim_bound__mutmut_58": "as mutant 52",
    "theory._heterogeneous.x_kim_bound__mutmut_57": (
        "float N: whole numbers, the same aranges and k"
    ),
    "theory._heterogeneous.x_kim_bound__mutmut_66": (
        "integer arange (dtype None or dropped): 1.0 / int64 is float64 alike"
    ),
    "theory._heterogeneous.x_kim_bound__mutmut_70": "as mutant 66",
    "theory._heterogeneous.x_waterfill_time__mutmut_31": (
        "argsort without kind 'stable' (or 'STABLE', read case-insensitively): "
        "workers of equal c swap places, the cumulated sums at each c are the same"
    ),
    "theory._heterogeneous.x_waterfill_time__mutmut_33": "as mutant 31",
    "theory._heterogeneous.x_waterfill_time__mutmut_35": "as mutant 31",
    "theory._heterogeneous.x_waterfill_time__mutmut_52": (
        "t < next c: where t equals the next worker's c, adding that worker gives "
        "the same t (the water level is continuous)"
    ),
    "theory._exact_latency.x__add_worker__mutmut_22": (
        "shift > m: at shift = m the general branch adds pmf * tail[:, 0] to "
        "column m too, and nothing below it"
    ),
    "theory._exact_latency.x__capped_convolve__mutmut_3": (
        "a larger FFT (2 << ..., or from 2m + 2 or 3m + 1): the convolution's "
        "support (up to 2m) fits either way"
    ),
    "theory._exact_latency.x__capped_convolve__mutmut_9": "as mutant 3",
    "theory._exact_latency.x__capped_convolve__mutmut_10": "as mutant 3",
    "theory._exact_latency.x__capped_convolve__mutmut_13": (
        "irfft without n: its default 2 (size // 2 + 1 - 1) is size, size even"
    ),
    "theory._exact_latency.x__capped_convolve__mutmut_15": "as mutant 13",
    "theory._exact_latency.x__capped_convolve__mutmut_44": (
        "summing beyond 2m: the convolution is 0 there up to rounding, clipped at 0"
    ),
    "theory._exact_latency.x__capped_convolve__mutmut_45": "as mutant 44",
    "theory._exact_latency.x__group_distribution__mutmut_3": (
        "a larger top: the extra counts carry 0 (up to rounding) and the FFT is "
        "larger, as _capped_convolve's mutant 3"
    ),
    "theory._exact_latency.x__group_distribution__mutmut_8": (
        "a larger FFT: as _capped_convolve's mutant 3"
    ),
    "theory._exact_latency.x__group_distribution__mutmut_13": "as mutant 8",
    "theory._exact_latency.x__group_distribution__mutmut_16": (
        "irfft without n: as _capped_convolve's mutant 13"
    ),
    "theory._exact_latency.x__group_distribution__mutmut_18": "as mutant 16",
    "theory._exact_latency.x__group_distribution__mutmut_25": (
        "one more count column: 0 up to rounding, clipped at 0"
    ),
    "theory._exact_latency.x__group_distribution__mutmut_46": (
        "a zero column m + 1: the capped convolution that follows reads it as 0 "
        "and returns m + 1 columns"
    ),
    "theory._exact_latency.x__group_distribution__mutmut_50": (
        "out[:, m] = ...: column m is still 0 there (the counts below fill columns "
        "< m only)"
    ),
    "theory._exact_latency.x__count_pmf__mutmut_4": (
        "integer batch indices: t / j is float64 alike"
    ),
    "theory._exact_latency.x__count_pmf__mutmut_7": "as mutant 4",
    "theory._exact_latency.x__count_pmf__mutmut_36": (
        "one more zero column: a count b + 1 of probability 0, which adds nothing"
    ),
    "theory._exact_latency.x__deterministic_start__mutmut_20": (
        "an earlier start (r a - c, the first batch time, argsort of nothing): "
        "the survival is 1 before the true start, so start + the integral from "
        "it is the same"
    ),
    "theory._exact_latency.x__deterministic_start__mutmut_23": "as mutant 20",
    "theory._exact_latency.x__deterministic_start__mutmut_24": "as mutant 20",
    "theory._exact_latency.x__deterministic_start__mutmut_28": "as mutant 20",
    "theory._exact_latency.x__deterministic_start__mutmut_9": (
        "astype(None): numpy reads dtype None as float64"
    ),
    "theory._exact_latency.x__rows_distribution__mutmut_2": (
        "astype(None): the stacked columns are float64 already"
    ),
    "theory._exact_latency.x__rows_distribution__mutmut_23": (
        "zip(..., strict=None/False/dropped): np.unique returns one count per type"
    ),
    "theory._exact_latency.x__rows_distribution__mutmut_26": "as mutant 23",
    "theory._exact_latency.x__rows_distribution__mutmut_27": "as mutant 23",
    "theory._exact_latency.x_expected_allocation_latency__mutmut_31": (
        "whole-number float rows: the batch sizes are converted with int() later"
    ),
    "theory._exact_latency.x_expected_allocation_latency__mutmut_55": (
        "r = rows / b: a whole float (rows % b == 0 is checked), read through int()"
    ),
    "theory._exact_latency.x_expected_allocation_latency__mutmut_93": (
        "2/mu in the window search's first step: the window still ends past the "
        "survival's 1e-12 (at most twice as far) and the graded panels resolve "
        "its start"
    ),
    "theory._exact_latency.x_expected_order_statistics__mutmut_38": (
        "2/mu in the window's first step: as expected_allocation_latency's mutant 93"
    ),
    "theory._exact_latency.x_expected_order_statistics__mutmut_24": (
        "0 / ones: zero overheads as float, as 0 * ones"
    ),
    "theory._exact_latency.x_expected_order_statistics__mutmut_6": (
        "float ones as rows and batches: converted with int() per worker type"
    ),
    "theory._exact_latency.x_expected_order_statistics__mutmut_8": "as mutant 6",
    "theory._simulator.x__decode_times__mutmut_32": (
        "argsort without axis: its default axis is -1, the batches' axis 1"
    ),
    "theory._simulator.x__decode_times__mutmut_57": (
        "take_along_axis without axis: its default axis is -1, as argsort's"
    ),
    "theory._simulator.x__decode_times__mutmut_9": (
        "astype(None): numpy reads dtype None as float64"
    ),
    "theory._simulator.x__decode_times__mutmut_45": (
        "received > m (1 - 1e-12): the row sums differ from m (1 - 1e-12) unless "
        "rounding lands on exactly that float, where the tolerance is already met"
    ),
    "theory._simulator.x_simulate_latency__mutmut_49": (
        "idle workers active (loads >= 0): their batches carry 0 rows, so the "
        "cumulated rows and the first time they reach m are unchanged"
    ),
    "theory._simulator.x_simulate_latency__mutmut_56": (
        "at least 2 trials a chunk: as _homogeneous_sim._sample's mutant 6"
    ),
    "theory._simulator.x_simulate_physical_limit__mutmut_26": (
        "at least 2 trials a chunk: as _homogeneous_sim._sample's mutant 6"
    ),
    "theory._hierarchical.x_expected_latency_hierarchical__mutmut_17": (
        "quadrature pieces (0, 1.0001) and (1.0001, 1e-3): they overlap and cancel, "
        "the same J (to 1e-16 on the layouts of the tests)"
    ),
    "theory._hierarchical.x_expected_latency_hierarchical__mutmut_18": (
        "as mutant 17, pieces (1e-4, 1.001) and (1.001, 1e-2)"
    ),
    "theory._hierarchical.x_expected_latency_hierarchical__mutmut_34": (
        "not strictly equivalent: quad's default epsabs; J moves by 2e-13 at most "
        "on the layouts tried (up to (100, 90)^2, (16, 14)^3, (500, 450)), inside "
        "the documented 1e-10"
    ),
    "theory._hierarchical.x_expected_latency_hierarchical__mutmut_35": (
        "as mutant 34 (quad's default epsrel)"
    ),
    "theory._hierarchical.x_expected_latency_hierarchical__mutmut_36": (
        "as mutant 34 (quad's default limit of 50 subintervals: never reached)"
    ),
    "theory._hierarchical.x_expected_latency_hierarchical__mutmut_39": (
        "limit=201 subintervals: 200 are never reached"
    ),
    "theory._hierarchical.x_fit_runtime_costs__mutmut_9": (
        "seconds without float64: scipy's nnls converts its right-hand side to "
        "float64 (int and Fraction times give the same fit)"
    ),
    "theory._hierarchical.x_fit_runtime_costs__mutmut_11": "as mutant 9",
    "theory._hierarchical.x_fit_runtime_costs__mutmut_27": (
        "product_bytes without float64: tolist() then gives Python ints or "
        "Fractions, which call_overhead's check_real turns into the same floats"
    ),
    "theory._hierarchical.x_fit_runtime_costs__mutmut_29": "as mutant 27",
    "theory._hierarchical.x_fit_runtime_costs__mutmut_39": (
        "unit costs of 2: only the counts of call_overhead are read, which do "
        "not depend on the costs"
    ),
    "theory._hierarchical.x_fit_runtime_costs__mutmut_40": "as mutant 39",
    "theory._hierarchical.x_fit_runtime_costs__mutmut_41": "as mutant 39",
    "theory._hierarchical.x_fit_runtime_costs__mutmut_42": "as mutant 39",
    "theory._hierarchical.x_fit_runtime_costs__mutmut_55": (
        "zip(..., strict=None): sizes is broadcast to (len(layouts),)"
    ),
    "theory._hierarchical.x_fit_runtime_costs__mutmut_58": "as mutant 55",
    "theory._hierarchical.x_fit_runtime_costs__mutmut_59": "as mutant 55",
    "theory._hierarchical.x_fit_runtime_costs__mutmut_61": (
        "not strictly equivalent: no column scaling; the scaling only conditions "
        "the NNLS, whose fit agrees to 1e-4 with and without it up to 1000 times "
        "the tests' sizes (checked)"
    ),
    "theory._hierarchical.x_fit_runtime_costs__mutmut_70": (
        "columns whose largest count lies in (0, 1] scaled by 1 instead: a "
        "column scaling, the same NNLS solution (as mutant 61)"
    ),
    "theory._hierarchical.x_fit_runtime_costs__mutmut_71": (
        "every column scaled by the largest count: as mutant 61"
    ),
    "theory._hierarchical.x_fit_runtime_costs__mutmut_73": (
        "an all-zero column divided by 2 instead of 1: still zero"
    ),
    "theory._hierarchical.x__gather__mutmut_8": "np.sort's default axis is -1",
    "theory._hierarchical.x__product_decodable__mutmut_3": (
        "n_0 + n_1 - 1 peeling rounds: each round that changes the grid fills a "
        "row or a column, and once k_0 + k_1 - 1 <= n_0 + n_1 - 1 lines are full "
        "either k_0 rows are full or k_1 columns are (every row then has k_1 "
        "known cells): the final test holds already"
    ),
    "theory._hierarchical.x__product_decodable__mutmut_5": (
        "one round more: the loop stops at the fixed point, reached within "
        "n_0 + n_1 + 1 rounds (as mutant 3)"
    ),
    "theory._hierarchical.x__product_decodable__mutmut_17": (
        "stop when every cell changed: never (a row without a known cell cannot "
        "fill, so an empty grid stays empty); the loop then runs its rounds to "
        "the same fixed point"
    ),
    "theory._hierarchical.x__product_finish__mutmut_6": (
        "np.argsort's default axis is the last, 1 here"
    ),
    "theory._hierarchical.x__product_finish__mutmut_22": (
        "bisection from K - 2: a looser lower end; decodability is monotone in "
        "the prefix, so the smallest decoding prefix is the same"
    ),
    "theory._hierarchical.x__product_finish__mutmut_29": (
        "a larger upper end (n - 1 + d): a prefix beyond n - 1 knows every "
        "cell, so the smallest decoding prefix is the same (as mutant 22)"
    ),
    "theory._hierarchical.x__product_finish__mutmut_30": "as mutant 29 (n + 1 - d)",
    "theory._hierarchical.x__product_finish__mutmut_33": (
        "prod(n_l - k_l - 1) is smaller in magnitude than d: a larger upper end, "
        "as mutant 29"
    ),
    "theory._hierarchical.x__product_finish__mutmut_36": "as mutant 29 (+ 2)",
    "theory._hierarchical.x__product_finish__mutmut_76": (
        "np.take_along_axis's default axis is -1, 1 here"
    ),
    "theory._hierarchical.x__product_finish__mutmut_80": (
        "np.sort's default axis is -1, 1 here"
    ),
    "theory._hierarchical.x_simulate_hierarchical__mutmut_80": (
        "steps' costs without costs: that branch takes np.partition and never "
        "reads them"
    ),
    "theory._hierarchical.x_simulate_hierarchical__mutmut_81": "as mutant 80",
    "theory._hierarchical.x_simulate_hierarchical__mutmut_82": "as mutant 80",
    "theory._hierarchical.x_simulate_hierarchical__mutmut_102": (
        "at least 2 trials per chunk: differs only beyond 2^21 workers, and "
        "drawing two rows at once gives the same stream as one after the other"
    ),
    "theory._hierarchical.x_simulate_hierarchical__mutmut_145": (
        "np.partition's default axis is -1"
    ),
    "allocation._solvers.x_solve_load_balanced__mutmut_48": (
        "share >= cap: a share equal to its cap takes the capped path, whose "
        "equal finish times give the same shares"
    ),
    "allocation._solvers.x_solve_load_balanced__mutmut_59": (
        "floor(share).astype(None): whole-number floats, which Allocation converts "
        "to int64 loads"
    ),
    "allocation._solvers.x_solve_load_balanced__mutmut_73": (
        "argsort kind 'STABLE': numpy reads the kind case-insensitively"
    ),
    "allocation._solvers.x__capped_shares__mutmut_19": (
        "201 halvings instead of 200: the bisection reaches adjacent floats after "
        "about 60, where it stays"
    ),
    "allocation._solvers.x__capped_shares__mutmut_28": (
        "sum <= u: the bisection's end differs only where the sum of shares is flat "
        "at u, where every share is constant (each is nondecreasing in T)"
    ),
    "allocation._solvers.x__capped_shares__mutmut_31": (
        "no final scaling: the bisection ends within an ulp of T, so the shares "
        "exceed u by an ulp at most, which the floor and the largest remainders "
        "absorb (test_load_balanced_cap_bisection_ending_an_ulp_above_m reaches "
        "the branch)"
    ),
    "allocation._solvers.x__capped_shares__mutmut_32": (
        "always scaling: the shares at the bisection's upper end sum to u or "
        "more, so the condition is false only at u, where the factor is 1"
    ),
    "allocation._solvers.x__capped_shares__mutmut_33": (
        "share / (u / sum): as mutant 31, the factor is 1 within an ulp"
    ),
    "allocation._solvers.x__capped_shares__mutmut_35": "sum >= u: as mutant 32",
    "allocation._solvers.x__grouped__mutmut_13": (
        "member.reshape(None): numpy >= 2.0.1 returns unique(axis=0)'s inverse "
        "1-D already; reshape(-1) guards numpy 2.0.0's 2-D one"
    ),
    "allocation._solvers.x__grouped__mutmut_15": (
        "member.reshape(-2): numpy 2.4 reads any negative size as 'the rest', "
        "as -1 (and the inverse is 1-D already, mutant 13)"
    ),
    "allocation._solvers.x__check_batches__mutmut_1": (
        "whether _check_batches passes a scalar or a list through or converts it, "
        "bpcc_optimum converts it again (theory._heterogeneous._batches_vector: "
        "np.asarray, a 0-d array broadcast); only None must stay None (mutant 6 "
        "is killed)"
    ),
    "allocation._solvers.x__check_batches__mutmut_2": "as mutant 1",
    "allocation._solvers.x__check_batches__mutmut_3": "as mutant 1",
    "allocation._solvers.x__check_batches__mutmut_4": "as mutant 1",
    "allocation._solvers.x__check_batches__mutmut_5": "as mutant 1",
    "allocation._solvers.x_solve_uniform__mutmut_100": (
        "-(-n_rows / v) instead of ceil: spreading T + 1/2 blocks over n workers "
        "(floor of T/n + 1/2 each, one more on the first (T mod n) + 1/2) gives "
        "the loads of T + 1, the ceiling"
    ),
    "allocation._solvers.x_solve_uniform__mutmut_122": (
        "loads.astype(None): the loads are int64 already"
    ),
    "allocation._solvers.x_solve_bpcc__mutmut_1": (
        "max_batches = 65: theory.BATCH_CHOICES end at 64, so the same choices"
    ),
    "allocation._solvers.x_solve_bpcc__mutmut_26": (
        "c = None: _round's expected rows and _finish default to the per-block "
        "profile's c, which c is"
    ),
    "allocation._solvers.x_solve_bpcc__mutmut_86": "as mutant 26 (overhead=None)",
    "allocation._solvers.x_solve_bpcc__mutmut_97": (
        "overhead=None in _finish: it defaults to grain.workers.c, which c is"
    ),
    "allocation._solvers.x_solve_bpcc__mutmut_102": "as mutant 97 (overhead dropped)",
    "allocation._solvers.x_solve_hcmm__mutmut_43": (
        "always the general solver (not np.all(None)): bpcc_optimum with one batch "
        "and no binding cap is HCMM's closed form (test_bpcc_with_one_batch_gives_"
        "hcmm_loads checks their loads equal)"
    ),
    "allocation._solvers.x_solve_hcmm__mutmut_45": (
        "a > 1.0: workers with a <= 1 take the general solver, as mutant 43"
    ),
    "allocation._solvers.x_solve_hcmm__mutmut_47": (
        "real >= cap: a closed-form load equal to its cap takes the general solver "
        "with that cap, which gives the same loads (as mutant 43)"
    ),
    "allocation._solvers.x_solve_hcmm__mutmut_63": (
        "bpcc_optimum without batches=1: its default is one batch"
    ),
    "allocation._solvers.x_solve_hcmm__mutmut_71": (
        "overhead=None to _round: as _round's mutant 28"
    ),
    "allocation._solvers.x__round__mutmut_4": (
        "size / (tau / tau_b): every caller passes options whose tau_b is the tau "
        "it rounds at (the factor is 1)"
    ),
    "allocation._solvers.x__round__mutmut_20": (
        "loads = batches = '': both are set in the first of the rounding passes"
    ),
    "allocation._solvers.x__round__mutmut_28": (
        "overhead=None (or dropped, mutants 34 and 55): expected_rows, _top_up and "
        "bpcc_tau then read the profile's c, and every caller passes "
        "grain.workers.c, the c of that profile"
    ),
    "allocation._solvers.x__round__mutmut_34": "as mutant 28",
    "allocation._solvers.x__round__mutmut_55": "as mutant 28",
    "allocation._solvers.x__round__mutmut_69": "as mutant 28 (bpcc_tau's overhead)",
    "allocation._solvers.x__round__mutmut_74": "as mutant 69 (overhead dropped)",
    "allocation._solvers.x__round__mutmut_75": (
        "float64 loads: whole numbers, which Allocation stores as int64"
    ),
    "allocation._solvers.x_solve_kim__mutmut_82": (
        "overhead=None in _round: expected_rows defaults to the profile's c, "
        "grain.workers.c"
    ),
    "coded.codes._fields.x__max_abs__mutmut_2": (
        "`if array.size or True`: _max_abs only sees operands that passed "
        "_check_nonempty, so the empty branch is never taken"
    ),
    "coded.codes._fields.x__max_abs__mutmut_11": "as mutant 2 (empty gives 1)",
    "coded.codes._fields.x__signed_residues__mutmut_13": (
        "astype(copy=None): numpy reads None as False, the original's value"
    ),
    "coded.codes._fields.x__signed_residues__mutmut_15": (
        "astype copies (copy flag dropped): np.mod returns a new array either way; "
        "copy=False only saves memory"
    ),
    "coded.codes._fields.x__signed_residues__mutmut_16": "as mutant 15 (copy=True)",
    "coded.codes._fields.x_as_csr__mutmut_21": (
        "kind not in 'XXiufXX': no dtype kind is 'X', the test of 'i', 'u', 'f' "
        "is unchanged"
    ),
    "coded.codes._fields.x_as_csr__mutmut_26": (
        "astype(float64, copy=None): copies only when needed, as copy=False"
    ),
    "coded.codes._fields.x_as_csr__mutmut_28": (
        "astype copies (copy flag dropped): the CSR copy of A is the code's own "
        "either way; copy=False only saves memory"
    ),
    "coded.codes._fields.x_as_csr__mutmut_29": "as mutant 28 (copy=True)",
    "coded.codes._fields.x__real_array__mutmut_17": (
        "check_finite_matrix returns float64 unless it keeps a float32 array, so "
        "np.asarray(array, np.float64) is a no-op"
    ),
    "coded.codes._fields.x__real_array__mutmut_20": "as mutant 17 (dtype None)",
    "coded.codes._fields.x__real_array__mutmut_22": "as mutant 17 (dtype dropped)",
    "coded.codes._fields.x_as_csr__mutmut_25": (
        "astype(None): numpy reads dtype None as float64"
    ),
    "coded.codes._fields.x_condition_number__mutmut_1": (
        "M.shape[1]: the systems solved are square"
    ),
    "coded.codes._fields.x_condition_number__mutmut_15": (
        "dgecon(norm=None): its default norm is '1'"
    ),
    "coded.codes._fields.x_condition_number__mutmut_18": "as mutant 15 (norm dropped)",
    "coded.codes._fields.x_prepare_single__mutmut_12": (
        "encode(X)'s output label None for real X: its callers pass the label only "
        "to as_output, which tells 'field' from every other label"
    ),
    "coded.codes._fields.x_prepare_single__mutmut_39": "as mutant 12 ('signed' X)",
    "coded.codes._fields.x_prepare_single__mutmut_40": "as mutant 12 ('signed' X)",
    "coded.codes._fields.x_prepare_single__mutmut_41": "as mutant 12 ('signed' X)",
    "coded.codes._transpose.x_multiply_transposed__mutmut_13": (
        "np.concatenate of the one product: an equal copy of it"
    ),
    "coded.codes._transpose.xǁTransposedCodeǁencode_operands__mutmut_9": (
        "a placeholder of length 1 for an A that is not 2-D: the inner code "
        "refuses A's ndim before it reads the placeholder"
    ),
    "coded.codes._transpose.xǁTransposedCodeǁencode_operands__mutmut_15": (
        "an int placeholder over the reals: _real_array converts it to float64 zeros "
        "(the output stays 'real', as float32 needs every operand float32)"
    ),
    "coded.codes._transpose.xǁTransposedCodeǁencode_right__mutmut_26": (
        "a_bound is an int, 0 unless A is signed: 0 // d * m is 0"
    ),
    "coded.codes._transpose.xǁTransposedCodeǁencode_right__mutmut_50": (
        "reshape(m, -2): numpy reads any negative size as 'the rest', as -1"
    ),
    "coded.codes._transpose.xǁTransposedDecoderǁ__init____mutmut_8": (
        "inner m=None: BlockCode._assemble keeps [:m] of the K solved rows, all "
        "of them, as [:None]"
    ),
    "coded.codes._transpose.xǁTransposedDecoderǁ__init____mutmut_9": (
        "inner c=None: UnitDecoder never reads its context's c"
    ),
    "coded.codes._transpose.xǁTransposedDecoderǁ__init____mutmut_12": (
        "inner is_vector=None: read as a truth value only, None is false as False"
    ),
    "coded.codes._transpose.xǁTransposedDecoderǁ__init____mutmut_27": (
        "an unknown inner output over GF(p): fields.lift's last branch returns "
        "signed integers, which decode reduces mod p before its own lift"
    ),
    "coded.codes._transpose.xǁTransposedDecoderǁ__init____mutmut_28": "as mutant 27",
    "coded.codes._transpose.xǁTransposedDecoderǁadd__mutmut_23": (
        "reshape(units, -2): as encode_right's mutant 50"
    ),
    "coded.codes._transpose.xǁTransposedDecoderǁadd__mutmut_30": (
        "start dropped: _units accepts whole results only, start = 0 already"
    ),
    "coded.codes._transpose.xǁTransposedDecoderǁdecode__mutmut_20": (
        "einsum 'JAJC->AC': the same contraction in capital letters"
    ),
    "coded.codes._units.x__row_norms__mutmut_20": (
        "einsum 'IJ,IJ->I': the same contraction in capital letters"
    ),
    "coded.codes._units.x__runs__mutmut_4": (
        "(2, 1, 0) for a worker without units: coded[1:0] and coded[0:0] are both empty"
    ),
    "coded.codes._units.x__runs__mutmut_30": (
        "zip(..., strict=None): starts and stops hold one entry per run, always"
    ),
    "coded.codes._units.x__runs__mutmut_33": ("as mutant 30 (strict dropped)"),
    "coded.codes._units.x__runs__mutmut_34": ("as mutant 30 (strict=False)"),
    "coded.codes._units.x_split_blocks__mutmut_27": (
        "reshape(-2): numpy reads any negative size as 'the rest', as -1"
    ),
    "coded.codes._units.x_split_blocks__mutmut_30": "as mutant 27",
    "coded.codes._units.xǁUnitCodeǁ_encode_workers__mutmut_32": (
        "kinds as float64 (astype(None)): _runs converts each with int(), the "
        "same array index"
    ),
    "coded.codes._units.xǁUnitCodeǁ_encode_workers__mutmut_70": (
        "reshape(-2, d): as split_blocks' mutant 27"
    ),
    "coded.codes._units.xǁUnitCodeǁ_row_context__mutmut_31": (
        "reshape(-2, rows): as split_blocks' mutant 27"
    ),
    "coded.codes._units.xǁUnitCodeǁ_setup__mutmut_18": (
        "cumsum of Python ints without dtype: numpy 2's default integer is int64"
    ),
    "coded.codes._units.xǁUnitCodeǁ_setup__mutmut_20": ("as mutant 18 (dtype dropped)"),
    "coded.codes._units.xǁUnitCodeǁ_setup__mutmut_53": (
        "-2 marks a unit that is no source copy: read only as < 0 or >= 0, as -1"
    ),
    "coded.codes._units.xǁUnitCodeǁ_condition__mutmut_9": (
        "svd(compute_uv=None): None is false, as False"
    ),
    "coded.codes._units.xǁUnitCodeǁ_solve_units__mutmut_16": (
        "the wide test (rows * width >= K) only picks between two decodes of the "
        "same sources, one product with T or an LU solve per pattern: they agree "
        "to rounding (cond(G_m) eps); it decides the cost, not the result"
    ),
    "coded.codes._units.xǁUnitCodeǁ_solve_units__mutmut_17": "as mutant 16 (> K)",
    "coded.codes._units.xǁUnitCodeǁ_solve_pattern__mutmut_15": (
        "as _solve_units' mutant 16 (> K)"
    ),
    "coded.codes._units.xǁUnitCodeǁ_solve_units__mutmut_40": (
        "reshape(size, -2): numpy reads any negative size as 'the rest', as -1"
    ),
    "coded.codes._units.xǁUnitCodeǁ_solve_units__mutmut_62": "as mutant 40",
    "coded.codes._units.xǁUnitCodeǁ_solve_units__mutmut_95": "as mutant 40",
    "coded.codes._units.xǁUnitCodeǁ_solve_units__mutmut_110": "as mutant 40",
    "coded.codes._units.xǁUnitCodeǁ_solve_units__mutmut_47": (
        "float64 sources (astype(None)): a decoder's values are float64 already "
        "(its buffer); only repair passes float32 shares, whose rebuilt shares "
        "are float64 products equal to the lost ones to rounding either way"
    ),
    "coded.codes._units.xǁUnitCodeǁ_solve_units__mutmut_48": (
        "astype(copy=None/True/dropped): the product is a new array, a copy of "
        "it changes nothing"
    ),
    "coded.codes._units.xǁUnitCodeǁ_solve_units__mutmut_50": "as mutant 48",
    "coded.codes._units.xǁUnitCodeǁ_solve_units__mutmut_51": "as mutant 48",
    "coded.codes._units.xǁUnitCodeǁ_solve_units__mutmut_84": (
        "zip(..., strict=None/False/dropped): the plan holds one row count per "
        "pattern, always"
    ),
    "coded.codes._units.xǁUnitCodeǁ_solve_units__mutmut_87": "as mutant 84",
    "coded.codes._units.xǁUnitCodeǁ_solve_units__mutmut_88": "as mutant 84",
    "coded.codes._units.xǁUnitCodeǁ_solve_pattern__mutmut_27": (
        "float64 sources (astype(None)): real patterns are solved one by one only "
        "from a decoder's float64 buffer (repair has one pattern)"
    ),
    "coded.codes._units.xǁUnitCodeǁ_solve_pattern__mutmut_28": (
        "as _solve_units' mutant 48"
    ),
    "coded.codes._units.xǁUnitCodeǁ_solve_pattern__mutmut_30": (
        "as _solve_units' mutant 48"
    ),
    "coded.codes._units.xǁUnitCodeǁ_solve_pattern__mutmut_31": (
        "as _solve_units' mutant 48"
    ),
    "coded.codes._units.xǁUnitCodeǁ_solve_pattern__mutmut_71": (
        "lu_factor(check_finite=None/True/dropped): G and the validated pieces "
        "are finite, the check only costs time"
    ),
    "coded.codes._units.xǁUnitCodeǁ_solve_pattern__mutmut_73": "as mutant 71",
    "coded.codes._units.xǁUnitCodeǁ_solve_pattern__mutmut_74": "as mutant 71",
    "coded.codes._units.xǁUnitCodeǁ_solve_pattern__mutmut_78": (
        "as mutant 71 (lu_solve)"
    ),
    "coded.codes._units.xǁUnitCodeǁ_solve_pattern__mutmut_81": (
        "as mutant 71 (lu_solve)"
    ),
    "coded.codes._units.xǁUnitCodeǁ_solve_pattern__mutmut_82": (
        "as mutant 71 (lu_solve)"
    ),
    "coded.codes._units.xǁUnitCodeǁ_solve_pattern__mutmut_88": (
        "lstsq without rcond: numpy 2's default is rcond=None already"
    ),
    "coded.codes._units.xǁUnitCodeǁ_real_decoding__mutmut_4": (
        "the pseudo-inverse of every system (square None or False): an invertible "
        "square G_m's pseudo-inverse is its inverse, the decode differs by "
        "rounding (cond(G_m) eps) only"
    ),
    "coded.codes._units.xǁUnitCodeǁ_real_decoding__mutmut_8": "as mutant 4",
    "coded.codes._units.xǁUnitCodeǁ_usable__mutmut_8": (
        "covered as float64 zeros: the counts stay whole numbers, compared and "
        "converted with int() alike"
    ),
    "coded.codes._units.xǁUnitCodeǁ_usable__mutmut_10": ("as mutant 8 (dtype dropped)"),
    "coded.codes._units.xǁUnitContextǁwith_right__mutmut_3": (
        "astype(None): numpy reads dtype None as float64"
    ),
    "coded.codes._units.xǁUnitContextǁwith_right__mutmut_4": (
        "astype(copy=None/True/dropped): a copy or not, the same norms"
    ),
    "coded.codes._units.xǁUnitContextǁwith_right__mutmut_6": ("as mutant 4"),
    "coded.codes._units.xǁUnitContextǁwith_right__mutmut_14": ("as mutant 4"),
    "coded.codes._units.xǁUnitContextǁwith_right__mutmut_13": (
        "reshape(d, -2): as split_blocks' mutant 27"
    ),
    "coded.codes._units.xǁUnitDecoderǁ__init____mutmut_41": (
        "_usable as float64 zeros until the first piece replaces it: 0.0 "
        "compares and converts as 0"
    ),
    "coded.codes._units.xǁUnitDecoderǁ__init____mutmut_43": (
        "as mutant 41 (dtype dropped)"
    ),
    "coded.codes._units.xǁUnitDecoderǁ__init____mutmut_50": ("float('NAN') is NaN"),
    "coded.codes._units.xǁUnitDecoderǁ_record__mutmut_12": (
        "reshape(-2): as split_blocks' mutant 27"
    ),
    "coded.codes._units.xǁUnitDecoderǁdecode__mutmut_34": (
        "reshape(-2, rows, width): as split_blocks' mutant 27"
    ),
    "coded.codes._units.xǁUnitDecoderǁ_check_value__mutmut_17": (
        "kind not in 'XXiufXX': no dtype kind is 'X'"
    ),
    "coded.codes._generators.x__batched_cond__mutmut_10": (
        "chunk of at least 2 matrices instead of 1: the batches' size only, the"
        " same values"
    ),
    "coded.codes._generators.x__batched_cond__mutmut_16": (
        "max(size, 2): size is 0 only for an empty matrix; the batches' size only"
    ),
    "coded.codes._generators.x__batched_cond__mutmut_28": (
        "svd(compute_uv=None): None is false, as False"
    ),
    "coded.codes._generators.x__combination_chunks__mutmut_1": (
        "chunks of 65537 sets: the batching only, the same sets in the same order"
    ),
    "coded.codes._generators.x__combination_chunks__mutmut_11": (
        "float64 worker indices: _Conditioning converts them to int64 and "
        "_survivors' set difference treats 1.0 as 1"
    ),
    "coded.codes._generators.x__combination_chunks__mutmut_16": (
        "islice(combos, None): every set in one chunk, the same sets in the same "
        "order (more memory only)"
    ),
    "coded.codes._generators.x__combination_chunks__mutmut_26": (
        "reshape(-2, s): numpy reads any negative size as 'the rest', as -1"
    ),
    "coded.codes._generators.x__ones_complement__mutmut_7": (
        "QR of two ones columns: another orthonormal basis G U (U orthogonal) "
        "of the same complement; cond(G_S U) = cond(G_S) for every S, and "
        "decoding solves for U Y"
    ),
    "coded.codes._generators.x__seeded_frame__mutmut_6": (
        "the conjugate Gaussian: the embedding of conj(Q) is D emb(Q) D (D = "
        "diag(1, -1, ...)), so every G_S has the same singular values"
    ),
    "coded.codes._generators.x__swap_one_ascent__mutmut_6": (
        "survivors without dtype: a non-empty tuple of Python ints is int64 already"
    ),
    "coded.codes._generators.x__swap_one_ascent__mutmut_8": (
        "as mutant 6 (dtype dropped)"
    ),
    "coded.codes._generators.x_block_generator__mutmut_69": (
        "the scalar candidate's figure from the non-systematic entry only: on "
        "the shipped table the choice is unchanged (where the systematic entry "
        "is better, rotation or seeded beats both, or at (14, 3) the scalar "
        "wins either way), and real_generator builds the better entry "
        "regardless"
    ),
    "coded.codes._generators.x_block_generator__mutmut_79": (
        "systematic=None: read as a truth value, None is false as False"
    ),
    "coded.codes._generators.x_block_generator__mutmut_89": (
        "C(n, k) < 20000: C(n, k) = 20000 only for k = 1 or n - 1 (n = 20000), "
        "which return before"
    ),
    "coded.codes._generators.x_block_generator__mutmut_111": (
        "the seeded frame as a candidate for cheap pairs with a stored frame "
        "too: on every such shipped pair (110) its certified worst case is "
        "larger than the best other candidate's; for pairs not cheap it ties at"
        " inf behind the rotation, which min() keeps"
    ),
    "coded.codes._generators.x_block_generator__mutmut_128": (
        "min() over (worst, name, builder) tuples: the candidates' worst cases "
        "never tie (two infinite ones are never both candidates), so the first "
        "fields decide"
    ),
    "coded.codes._generators.x_block_generator__mutmut_130": (
        "as mutant 128 (key dropped)"
    ),
    "coded.codes._generators.x_complex_embedding__mutmut_3": (
        "np.asarray(M) without complex128: .real and .imag of a real or complex"
        " array read the same values"
    ),
    "coded.codes._generators.x_complex_embedding__mutmut_5": (
        "as mutant 3 (dtype dropped)"
    ),
    "coded.codes._generators.x_frame_generator__mutmut_3": (
        "svd(full_matrices=None): None is false, as False"
    ),
    "coded.codes._generators.x_real_generator__mutmut_11": (
        "min() over (worst, G) tuples: the two stored entries of a pair never "
        "tie (checked on the shipped table), so the worst cases decide"
    ),
    "coded.codes._generators.x_real_generator__mutmut_13": (
        "as mutant 11 (key dropped)"
    ),
    "coded.codes._generators.x_real_generator__mutmut_25": (
        "np.concatenate's default axis is 0"
    ),
    "coded.codes._generators.x_survivor_condition_numbers__mutmut_4": (
        "survivors without int64: worker indices are integers (array_like of "
        "int), numpy keeps them int64"
    ),
    "coded.codes._generators.x_survivor_condition_numbers__mutmut_6": (
        "as mutant 4 (dtype dropped)"
    ),
    "coded.codes._generators.x_survivor_condition_numbers__mutmut_16": (
        "reshape(b, -2): numpy reads any negative size as 'the rest', as -1"
    ),
    "coded.codes._generators.x_survivor_condition_numbers__mutmut_19": (
        "unit_top=None: read as a truth value, None is false as False"
    ),
    "coded.codes._generators.x_worst_condition_number__mutmut_75": (
        "K / ell: the check above made ell divide K, so K / ell == K // ell"
    ),
    "coded.codes._generators.x_worst_condition_number__mutmut_78": (
        "N / ell: as mutant 75, ell divides N"
    ),
    "coded.codes._generators.x_worst_condition_number__mutmut_119": (
        "start at -2.0: a condition number is >= 1 (or NaN, which compares "
        "false with both)"
    ),
    "coded.codes._generators.x_worst_condition_number__mutmut_121": (
        "float64 zeros as the first worst set: replaced by the first chunk's "
        "(cond >= 1 > -1) before it is read"
    ),
    "coded.codes._generators.x_worst_condition_number__mutmut_123": (
        "as mutant 121 (dtype dropped)"
    ),
    "coded.codes._generators.x_worst_condition_number__mutmut_133": (
        ">= across chunks of 65536 sets: on a tie the later chunk's set is "
        "reported, which attains the same worst value, all `survivors` promises"
    ),
    "coded.codes._generators.x_worst_condition_number__mutmut_186": (
        "as mutant 133, across the ascents' starts"
    ),
    "coded.codes._generators.x_worst_condition_number__mutmut_155": (
        "np.sort's default axis is the last one, 1 here"
    ),
    "coded.codes._generators.x_worst_condition_number__mutmut_159": (
        "np.argsort's default axis is the last one, 1 here"
    ),
    "coded.codes._generators.x_worst_condition_number__mutmut_167": (
        "start at +1.0: every value is >= 1; when every start is exactly 1 the "
        "first sample's set (a set attaining 1) is reported instead of the "
        "first ascent's"
    ),
    "coded.codes._generators.x_worst_condition_number__mutmut_168": (
        "start at -2.0: as mutant 119"
    ),
    "coded.codes._generators.x_worst_condition_number__mutmut_183": (
        "not strictly equivalent: the step cap of the ascent (51 for 50), a "
        "tuning constant of a heuristic lower bound; only an ascent of more "
        "than 50 strictly improving steps tells them apart"
    ),
    "coded.codes._generators.xǁ_Conditioningǁ__call____mutmut_7": (
        "erased without int64: every caller passes int64 index arrays"
    ),
    "coded.codes._generators.xǁ_Conditioningǁ__call____mutmut_9": (
        "as mutant 7 (dtype dropped)"
    ),
    "coded.codes._generators.xǁ_Conditioningǁ__call____mutmut_11": (
        "reshape(b, -2): numpy reads any negative size as 'the rest', as -1"
    ),
    "coded.codes._generators.xǁ_Conditioningǁ__call____mutmut_17": (
        "keep as float64 ones: the erased are set to 0.0, np.nonzero finds the "
        "same survivors"
    ),
    "coded.codes._generators.xǁ_Conditioningǁ__call____mutmut_19": (
        "as mutant 17 (dtype dropped)"
    ),
    "coded.codes._generators.xǁ_Conditioningǁ__call____mutmut_20": (
        "None stored into a bool array is False"
    ),
    "coded.codes._generators.xǁ_Conditioningǁ__init____mutmut_4": (
        "G without float64: worst_condition_number, the only caller, converted "
        "it already"
    ),
    "coded.codes._generators.xǁ_Conditioningǁ__init____mutmut_6": (
        "as mutant 4 (dtype dropped)"
    ),
    "coded.codes._generators.xǁ_Conditioningǁ__init____mutmut_37": (
        "no dual shortcut when 2K = N: G_S is decomposed instead, the same "
        "condition numbers"
    ),
    "coded.codes._generators.xǁ_Conditioningǁ__init____mutmut_38": (
        "a shortcut for K = N: no erased set exists, worst_condition_number "
        "returns before evaluating one"
    ),
    "coded.codes._generators.xǁ_Conditioningǁ_rows__mutmut_10": (
        "reshape(b, -2): numpy reads any negative size as 'the rest', as -1"
    ),
    "coded.codes._mds.xǁBlockCodeǁ_assemble__mutmut_6": (
        "reshape(-2, width): numpy reads any negative size as 'the rest', as -1"
    ),
    "coded.codes._mds.xǁRowMDSCodeǁ_assemble__mutmut_6": (
        "as BlockCode._assemble's mutant 6"
    ),
    "coded.codes._mds.xǁBlockCodeǁ_encode_sparse__mutmut_32": (
        "a 2-row zero placeholder for A: only B, is_vector and output are read from it"
    ),
    "coded.codes._mds.xǁBlockCodeǁ_encode_sparse__mutmut_52": (
        "K * rows + m zero rows of padding: only the first K * rows rows of the "
        "padded A are cut into blocks"
    ),
    "coded.codes._mds.xǁBlockCodeǁ_encode_sparse__mutmut_57": (
        "scipy.sparse.vstack of CSR blocks returns CSR by default (format=None)"
    ),
    "coded.codes._mds.xǁBlockCodeǁ_encode_sparse__mutmut_59": (
        "as mutant 57 (format dropped)"
    ),
    "coded.codes._mds.xǁBlockCodeǁ_encode_sparse__mutmut_71": (
        "as mutant 57 (each worker's stack of CSR blocks)"
    ),
    "coded.codes._mds.xǁBlockCodeǁ_encode_sparse__mutmut_73": (
        "as mutant 71 (format dropped)"
    ),
    "coded.codes._mds.xǁRowMDSCodeǁ_encode__mutmut_17": (
        "m=None in a RowMDSCode's context: no one reads it (its _assemble keeps"
        " self.m rows, TransposedCode refuses a RowMDSCode)"
    ),
    "coded.codes._mds.xǁRowMDSCodeǁ__init____mutmut_111": (
        "load / v: the loads are multiples of v (checked above), whole floats "
        "that _setup's int64 cumsum takes exactly"
    ),
    # shard verification
    "coded.codes._freivalds.x__expect__mutmut_10": (
        "reshape(d, -2): numpy reads any negative size as 'the rest', as -1"
    ),
    "coded.codes._freivalds.x__expect__mutmut_29": "astype(None) is float64",
    "coded.codes._freivalds.x__group_sums__mutmut_18": (
        "np.add.reduceat's default axis is 0"
    ),
    "coded.codes._freivalds.x__groups__mutmut_16": (
        "csr_array without shape: scipy infers (len(indptr) - 1, max index + 1), "
        "and the indices are arange(rows)"
    ),
    "coded.codes._freivalds.x__groups__mutmut_18": "as mutant 16 (shape dropped)",
    "coded.codes._freivalds.x_draw_vectors__mutmut_11": (
        "integers() without dtype: its default is int64"
    ),
    "coded.codes._freivalds.x_project_piece__mutmut_66": "astype(None) is float64",
    "coded.codes._freivalds.x_project_share__mutmut_22": (
        "np.concatenate of one unit: a copy of it, the same values"
    ),
    "coded.codes._freivalds.x_project_share__mutmut_47": "astype(None) is float64",
    "coded.codes._freivalds.x_project_share__mutmut_48": (
        "astype(copy=None): W is only read afterwards, copied or not"
    ),
    "coded.codes._freivalds.x_project_share__mutmut_50": "as mutant 48",
    "coded.codes._freivalds.x_project_share__mutmut_51": "as mutant 48",
    "coded.codes._freivalds.xǁShareChecksǁverdict__mutmut_79": (
        "np.max(peak) without initial: peak has one entry per column of B, and "
        "every code refuses an empty B"
    ),
    "coded.codes._freivalds.xǁShareChecksǁverdict__mutmut_81": "as mutant 79",
    "coded.codes._consistency.x__pivot_rows__mutmut_11": (
        "the early break once K pivots are found dropped: the rows below K are "
        "empty, every later column is skipped"
    ),
    "coded.codes._consistency.x__pivot_rows__mutmut_36": (
        "the pivot row also eliminated (zeroed): rows above the current one are "
        "never read again for pivots, only rows row: are"
    ),
    "coded.codes._consistency.x__pivot_rows__mutmut_47": (
        "np.array of K >= 1 Python ints (G_U has full column rank) is int64"
    ),
    "coded.codes._consistency.x__pivot_rows__mutmut_49": "as mutant 47",
    "coded.codes._consistency.x_detection_floor__mutmut_2": (
        "|U| = K on the general path: P = I - Q Q^T is 0 to K u while 2 rho >= "
        "8 K u, so every margin is negative and the floor inf, as returned early"
    ),
    "coded.codes._consistency.x_detection_floor__mutmut_17": (
        "einsum subscripts in capitals: the same contraction"
    ),
    "coded.codes._consistency.x_detection_floor__mutmut_20": (
        "svd(compute_uv=None): None is false, as False"
    ),
    "coded.codes._consistency.x_detection_floor__mutmut_62": (
        "margin < 0 instead of <= 0: differs only at P_vv = 2 rho exactly, where "
        "reach / 0 is inf as the early return (reach > 0)"
    ),
    "coded.codes._consistency.x_detection_floor__mutmut_73": (
        "not strictly equivalent: np.divide without out leaves the rows of zero "
        "peak (and zero reach) uninitialized instead of 0; numpy's fresh small "
        "arrays read as 0 here (tested with an all-zero Y), so no test sees it"
    ),
    "coded.codes._consistency.x_detection_floor__mutmut_84": (
        "floors.max() without initial: one floor per unit, |U| > K >= 1"
    ),
    "coded.codes._consistency.x_tolerance__mutmut_11": (
        "svd(compute_uv=None): None is false, as False"
    ),
    # shard polynomial
    "coded.codes._polynomial.x__real_vectors__mutmut_15": (
        "chebvander to degree p_a p_b + 1: two more columns, never read (a takes "
        "columns < p_a, b every p_a-th column below p_a p_b)"
    ),
    "coded.codes._polynomial.x__real_vectors__mutmut_20": (
        "np.vander(x, None): n >= p_a p_b columns, of which only those below "
        "p_a p_b are read, as mutant 15"
    ),
    "coded.codes._polynomial.x__real_vectors__mutmut_23": "as mutant 20 (N dropped)",
    "coded.codes._polynomial.x_product_rows__mutmut_8": (
        "reshape(n, -2): numpy reads any negative size as 'the rest', as -1"
    ),
    "coded.codes._polynomial.xǁPolynomialCodeǁ__init____mutmut_99": (
        "np.array(a) without G's dtype: a and b have it already (float64 from "
        "chebvander, vander or the stored vectors; int64 columns of G over GF(p))"
    ),
    "coded.codes._polynomial.xǁPolynomialCodeǁ__init____mutmut_101": (
        "as mutant 99 (dtype dropped)"
    ),
    "coded.codes._polynomial.xǁPolynomialCodeǁ__init____mutmut_106": (
        "points without G's dtype: float64 Chebyshev points or int64 np.arange, "
        "G's dtype already"
    ),
    "coded.codes._polynomial.xǁPolynomialCodeǁ__init____mutmut_108": (
        "as mutant 106 (dtype dropped)"
    ),
    "coded.codes._polynomial.xǁPolynomialCodeǁ_encode_pair__mutmut_60": (
        "the empty tail of shape (0,) instead of (0, d width): encode_product "
        "reads only tail.shape[0], 0 either way"
    ),
    "coded.codes._polynomial.xǁPolynomialCodeǁ_simple_context__mutmut_1": (
        "m = None: _assemble's full[:m, :c] with m = p_a rows, c = p_b width (the "
        "whole of full) and with None are the same; nothing else reads them"
    ),
    "coded.codes._polynomial.xǁPolynomialCodeǁ_simple_context__mutmut_2": (
        "c = None: as mutant 1"
    ),
    "coded.codes._polynomial.xǁPolynomialCodeǁencode__mutmut_13": (
        "c = 2 for a vector B: c is read only by the check, where p_b = 1 divides "
        "any c and p_b > 1 raises through the vector clause"
    ),
    "coded.codes._polynomial.xǁPolynomialCodeǁencode__mutmut_21": (
        "vector clause at p_b > 2: a vector has c = 1, which no p_b > 1 divides, "
        "so c % p_b raises for p_b = 2 anyway"
    ),
    "coded.codes._polynomial.xǁPolynomialCodeǁencode__mutmut_47": (
        "zip(strict=None): lefts and rights have n entries each"
    ),
    "coded.codes._polynomial.xǁPolynomialCodeǁencode__mutmut_50": (
        "as mutant 47 (strict dropped)"
    ),
    "coded.codes._polynomial.xǁPolynomialCodeǁencode__mutmut_51": (
        "as mutant 47 (strict=False)"
    ),
    "coded.codes._lagrange.x__lagrange_matrix__mutmut_4": (
        "real targets without dtype=float64: every caller passes float64 "
        "Chebyshev points (betas, alphas or a selection of them)"
    ),
    "coded.codes._lagrange.x__lagrange_matrix__mutmut_6": "as mutant 4",
    "coded.codes._lagrange.x__lagrange_matrix__mutmut_9": "as mutant 4 (nodes)",
    "coded.codes._lagrange.x__lagrange_matrix__mutmut_11": "as mutant 4 (nodes)",
    "coded.codes._lagrange.x__lagrange_matrix__mutmut_33": (
        "GF(p) targets without dtype=int64: every caller passes int64 np.arange "
        "points (or a selection of them)"
    ),
    "coded.codes._lagrange.x__lagrange_matrix__mutmut_35": "as mutant 33",
    "coded.codes._lagrange.x__lagrange_matrix__mutmut_39": "as mutant 33 (nodes)",
    "coded.codes._lagrange.x__lagrange_matrix__mutmut_41": "as mutant 33 (nodes)",
    "coded.codes._lagrange.xǁLagrangeCodeǁ_result__mutmut_1": (
        "a FieldArray not viewed first: np.asarray drops the subclass, the same "
        "residues"
    ),
    "coded.codes._lagrange.xǁLagrangeCodeǁ_result__mutmut_8": (
        "not strictly equivalent: real results without the float64 cast; the "
        "decode's product with the float64 weights promotes integer, boolean "
        "and float results to float64 alike (only complex or object results, "
        "which a real f does not return, would differ)"
    ),
    "coded.codes._lagrange.xǁLagrangeCodeǁ_result__mutmut_10": (
        "as mutant 8 (dtype dropped)"
    ),
    "coded.codes._lagrange.xǁLagrangeCodeǁ__repr____mutmut_2": (
        "str(self.p) for p = None too: str(None) is 'None'"
    ),
    "coded.codes._lagrange.xǁLagrangeCodeǁ_stack__mutmut_18": "astype(None) is float64",
    "coded.codes._lagrange.xǁLagrangeCodeǁ_stack__mutmut_29": (
        "kind not in 'XXiuXX': no dtype kind is 'X', so the test of integer kinds "
        "'i' and 'u' is unchanged"
    ),
    "coded.codes._lagrange.xǁLagrangeCodeǁencode__mutmut_8": (
        "integers(p, size=...): with no high, the draws are from [0, p), the same "
        "stream as integers(0, p)"
    ),
    "coded.codes._lagrange.xǁLagrangeCodeǁencode__mutmut_11": (
        "integers without dtype: its default is int64"
    ),
    "coded.codes._lagrange.xǁLagrangeCodeǁencode__mutmut_24": (
        "reshape(T, -2): numpy reads any negative size as 'the rest', as -1"
    ),
    "coded.codes._lagrange.xǁLagrangeCodeǁdecode__mutmut_52": (
        "reshape(count, -2): as encode's mutant 24"
    ),
    # shard gradient-codes
    "coded.codes._gradient.x__conditions__mutmut_20": (
        "svd(compute_uv=None): None is false, as False"
    ),
    "coded.codes._gradient.x__conditions__mutmut_28": (
        "smallest < threshold instead of <=: differs at equality only (a zero "
        "smallest is below it, sv[:, 0] > 0 as no row of B is zero)"
    ),
    "coded.codes._gradient.x__conditions__mutmut_50": (
        "placeholder 2.0 for the deficient sets' divisor: the outer np.where "
        "replaces their quotient by inf"
    ),
    "coded.codes._gradient.x__cyclic_mds_zeros__mutmut_1": (
        "(n - s) / 2 true for even n - s too: then n and s have one parity and "
        "n/2 + step (j - (s - 1)/2) is never whole (step is odd when n is even), "
        "so the real branch falls through to the same zeros"
    ),
    "coded.codes._gradient.x__cyclic_mds_zeros__mutmut_2": (
        "(n + s) % 2 has the parity of (n - s) % 2"
    ),
    "coded.codes._gradient.x__cyclic_mds_zeros__mutmut_13": (
        "n/2 - offsets: the offsets are symmetric about 0, the same zero set in "
        "reverse order (np.poly multiplies the roots in another order: rounding "
        "only)"
    ),
    "coded.codes._gradient.x__cyclic_mds_zeros__mutmut_22": (
        "whole zeros as float64: the roots exp(2 pi i Z / n) are the same"
    ),
    "coded.codes._gradient.x__cyclic_mds_zeros__mutmut_29": "as mutant 22",
    "coded.codes._gradient.x__fractional_matrix__mutmut_6": "astype(None) is float64",
    "coded.codes._gradient.x__survivor_sets__mutmut_30": (
        "another fixed seed of the sampled sets: seeded (reproducible, tested) is "
        "the contract, not which sets"
    ),
    "coded.codes._gradient.x__survivor_sets__mutmut_33": (
        "windows i, i - 1, .. instead of i, i + 1, ..: the same n sets of s "
        "consecutive workers, in another order"
    ),
    "coded.codes._gradient.x__survivor_sets__mutmut_40": (
        "argsort's default axis is -1, the rows' axis 1 here"
    ),
    "coded.codes._gradient.x__survivor_sets__mutmut_49": (
        "a float64 keep mask: np.nonzero finds the same entries"
    ),
    "coded.codes._gradient.x__survivor_sets__mutmut_51": "as mutant 49",
    "coded.codes._gradient.x__survivor_sets__mutmut_52": (
        "None stored in a boolean array is False"
    ),
    "coded.codes._gradient.xǁGradientCodeǁcondition_number__mutmut_3": (
        "worker indices without dtype=int: Python ints give int64; an empty set "
        "(a float (1, 0) array) is inf before any indexing"
    ),
    "coded.codes._gradient.xǁGradientCodeǁcondition_number__mutmut_5": (
        "as mutant 3 (dtype dropped)"
    ),
    "coded.codes._gradient.xǁGradientCodeǁdecode__mutmut_10": (
        "np.real of a real array is the array itself"
    ),
    "coded.codes._gradient.xǁGradientCodeǁdecoding_vector__mutmut_27": (
        "lstsq without rcond: its default is None since numpy 2.0"
    ),
    "coded.codes._gradient.xǁGradientCodeǁis_decodable__mutmut_11": (
        "n / (s + 1): s + 1 divides n for a fractional code, the same whole number"
    ),
    "coded.codes._gradient_schemes.x__partial__mutmut_14": "astype(None) is float64",
    "coded.codes._gradient_schemes.x__partial__mutmut_15": (
        "astype(copy=None): the partial is only read (stacked or combined) before "
        "combine returns, copied or not"
    ),
    "coded.codes._gradient_schemes.x__partial__mutmut_17": (
        "as mutant 15 (copy dropped)"
    ),
    "coded.codes._gradient_schemes.x__partial__mutmut_18": "as mutant 15 (copy=True)",
    # shard hierarchical-codes
    "coded.codes._hierarchical.x__bound__mutmut_6": (
        "no bottom > 0 guard: the bottom is sigma_min of a square MDS generator "
        "block, invertible, so never 0"
    ),
    "coded.codes._hierarchical.x__bound__mutmut_8": "as mutant 6 (bottom >= 0)",
    "coded.codes._hierarchical.x__bounded__mutmut_2": (
        "the fast path off: check_int returns the same int for an int in range"
    ),
    "coded.codes._hierarchical.x__bounded__mutmut_4": (
        "as mutant 2, for value = low only"
    ),
    "coded.codes._hierarchical.x__bounded__mutmut_5": (
        "as mutant 2, for value = high only"
    ),
    "coded.codes._hierarchical.x__widest__mutmut_2": (
        "zip(strict=None): every extreme is a (top, bottom) pair"
    ),
    "coded.codes._hierarchical.x__widest__mutmut_4": "as mutant 2 (strict dropped)",
    "coded.codes._hierarchical.x__widest__mutmut_5": "as mutant 2 (strict=False)",
    "coded.codes._hierarchical.xǁHierarchicalCodeǁ__init____mutmut_6": (
        "n without its lower bound: check_levels checks n >= 1 next, with the same "
        "message"
    ),
    "coded.codes._hierarchical.xǁHierarchicalCodeǁ__init____mutmut_9": (
        "as mutant 6 (min_value dropped)"
    ),
    "coded.codes._hierarchical.xǁHierarchicalCodeǁ__init____mutmut_59": (
        "zip(strict=None): one MDSCode per level, built from the levels"
    ),
    "coded.codes._hierarchical.xǁHierarchicalCodeǁ__init____mutmut_62": (
        "as mutant 59 (strict dropped)"
    ),
    "coded.codes._hierarchical.xǁHierarchicalCodeǁ__init____mutmut_63": (
        "as mutant 59 (strict=False)"
    ),
    "coded.codes._hierarchical.xǁHierarchicalCodeǁ_apply_levels__mutmut_28": (
        "reshape(K, -2): numpy reads any negative size as 'the rest', as -1"
    ),
    "coded.codes._hierarchical.xǁHierarchicalCodeǁ_extremes__mutmut_6": (
        "svd(compute_uv=None): None is false, as False"
    ),
    "coded.codes._hierarchical.xǁHierarchicalCodeǁ_factor__mutmut_2": (
        "the factor cache skipped: the factorisation is recomputed, the same"
    ),
    "coded.codes._hierarchical.xǁHierarchicalCodeǁ_factor__mutmut_3": (
        "as mutant 2 (cache looked up under None)"
    ),
    "coded.codes._hierarchical.xǁHierarchicalCodeǁ_factor__mutmut_17": (
        "as mutant 2 (None cached)"
    ),
    "coded.codes._hierarchical.xǁHierarchicalCodeǁencode_operands__mutmut_26": (
        "astype(copy=None): the sources are only read, copied or not"
    ),
    "coded.codes._hierarchical.xǁHierarchicalCodeǁencode_operands__mutmut_28": (
        "as mutant 26 (copy dropped)"
    ),
    "coded.codes._hierarchical.xǁHierarchicalCodeǁencode_operands__mutmut_30": (
        "as mutant 26 (copy=True)"
    ),
    "coded.codes._hierarchical.xǁHierarchicalCodeǁencode_operands__mutmut_33": (
        "astype(copy=None) of the fresh coded array: a copy or not, the same shares"
    ),
    "coded.codes._hierarchical.xǁHierarchicalCodeǁencode_operands__mutmut_35": (
        "as mutant 33 (copy dropped)"
    ),
    "coded.codes._hierarchical.xǁHierarchicalCodeǁencode_operands__mutmut_37": (
        "as mutant 33 (copy=True)"
    ),
    "coded.codes._hierarchical.xǁHierarchicalCodeǁencode_operands__mutmut_46": (
        "reshape(-2, d): numpy reads any negative size as 'the rest', as -1"
    ),
    "coded.codes._hierarchical.xǁHierarchicalCodeǁexplain__mutmut_12": (
        "zip(strict=None): one count per level, as the range"
    ),
    "coded.codes._hierarchical.xǁHierarchicalCodeǁexplain__mutmut_15": (
        "as mutant 12 (strict dropped)"
    ),
    "coded.codes._hierarchical.xǁHierarchicalCodeǁexplain__mutmut_29": (
        "as mutant 12 (strict=False)"
    ),
    "coded.codes._hierarchical.xǁHierarchicalCodeǁrepair__mutmut_33": (
        "context m=None: decode returns sources[:m], and m = blocks * rows is all "
        "of them"
    ),
    "coded.codes._hierarchical.xǁHierarchicalCodeǁrepair__mutmut_36": (
        "is_vector=None: None is false, as False"
    ),
    "coded.codes._hierarchical.xǁHierarchicalCodeǁrepair__mutmut_76": (
        "astype(copy=None) of a fresh array: the same shares"
    ),
    "coded.codes._hierarchical.xǁHierarchicalCodeǁrepair__mutmut_78": (
        "as mutant 76 (copy dropped)"
    ),
    "coded.codes._hierarchical.xǁHierarchicalCodeǁrepair__mutmut_80": (
        "as mutant 76 (copy=True)"
    ),
    "coded.codes._hierarchical.xǁHierarchicalCodeǁrepair__mutmut_86": (
        "reshape(-2, d): numpy reads any negative size as 'the rest', as -1"
    ),
    "coded.codes._hierarchical.xǁHierarchicalDecoderǁ__init____mutmut_19": (
        "float64 member counts: whole numbers, compared with k_l as the int64 ones"
    ),
    "coded.codes._hierarchical.xǁHierarchicalDecoderǁ__init____mutmut_21": (
        "as mutant 19 (dtype dropped)"
    ),
    "coded.codes._hierarchical.xǁHierarchicalDecoderǁ_check_value__mutmut_14": (
        "kind not in 'XXiufXX': no dtype kind is 'X', so the test of 'i', 'u', 'f' "
        "is unchanged"
    ),
    "coded.codes._hierarchical.xǁHierarchicalDecoderǁ_decode_depth__mutmut_34": (
        "reshape(..., -2): numpy reads any negative size as 'the rest', as -1"
    ),
    "coded.codes._hierarchical.xǁHierarchicalDecoderǁ_decode_depth__mutmut_46": (
        "as mutant 34"
    ),
    "coded.codes._hierarchical.xǁHierarchicalDecoderǁ_decode_depth__mutmut_93": (
        "as mutant 34"
    ),
    "coded.codes._hierarchical.xǁHierarchicalDecoderǁ_decode_depth__mutmut_98": (
        "as mutant 34"
    ),
    "coded.codes._hierarchical.xǁHierarchicalDecoderǁ_decode_depth__mutmut_61": (
        "zip(strict=None): np.split returns one part per node"
    ),
    "coded.codes._hierarchical.xǁHierarchicalDecoderǁ_decode_depth__mutmut_64": (
        "as mutant 61 (strict dropped)"
    ),
    "coded.codes._hierarchical.xǁHierarchicalDecoderǁ_decode_depth__mutmut_72": (
        "as mutant 61 (strict=False)"
    ),
    "coded.codes._hierarchical.xǁHierarchicalDecoderǁ_decode_levels__mutmut_14": (
        "np.asarray's default for a non-empty list of ints is int64 (a decodable "
        "pattern has leaves)"
    ),
    "coded.codes._hierarchical.xǁHierarchicalDecoderǁ_decode_levels__mutmut_16": (
        "as mutant 14 (dtype dropped)"
    ),
    "coded.codes._hierarchical.xǁHierarchicalDecoderǁ_decode_levels__mutmut_32": (
        "zip(strict=None): the digits are those of the workers, one each"
    ),
    "coded.codes._hierarchical.xǁHierarchicalDecoderǁ_decode_levels__mutmut_35": (
        "as mutant 32 (strict dropped)"
    ),
    "coded.codes._hierarchical.xǁHierarchicalDecoderǁ_decode_levels__mutmut_36": (
        "as mutant 32 (strict=False)"
    ),
    "coded.codes._hierarchical.xǁHierarchicalDecoderǁ_fill__mutmut_12": (
        "reshape(..., -2): numpy reads any negative size as 'the rest', as -1"
    ),
    "coded.codes._hierarchical.xǁHierarchicalDecoderǁ_fill__mutmut_48": "as mutant 12",
    "coded.codes._hierarchical.xǁHierarchicalDecoderǁ_fill__mutmut_83": "as mutant 12",
    "coded.codes._hierarchical.xǁHierarchicalDecoderǁ_fill__mutmut_115": "as mutant 12",
    "coded.codes._hierarchical.xǁHierarchicalDecoderǁ_fill__mutmut_136": "as mutant 12",
    "coded.codes._hierarchical.xǁHierarchicalDecoderǁ_fill__mutmut_147": "as mutant 12",
    "coded.codes._hierarchical.xǁHierarchicalDecoderǁ_fill__mutmut_20": (
        "changed = None: None and False are both false for `while`"
    ),
    "coded.codes._hierarchical.xǁHierarchicalDecoderǁ_fill__mutmut_89": (
        "a row decode not marking a change: the column pass of the same sweep "
        "follows it, and a sweep whose column pass fills nothing leaves no row to "
        "decode (each row with k_1 <= known < n_1 was filled)"
    ),
    "coded.codes._hierarchical.xǁHierarchicalDecoderǁ_leaves__mutmut_6": (
        "reshape(-2, R): numpy reads any negative size as 'the rest', as -1"
    ),
    "coded.codes._hierarchical.xǁHierarchicalDecoderǁadd__mutmut_63": (
        "a whole first piece stored through the partial path: the same rows in the "
        "same dtype, then completed"
    ),
    "coded.codes._hierarchical.xǁHierarchicalDecoderǁadd__mutmut_68": (
        "a whole result kept in its dtype (float32, integers): the decoding "
        "product casts it exactly to the float64 of the cached inverse, GF(p) "
        "values are int64 already"
    ),
    "coded.codes._hierarchical.xǁHierarchicalDecoderǁadd__mutmut_70": (
        "as mutant 68 (dtype dropped)"
    ),
    "coded.codes._hierarchical.xǁHierarchicalDecoderǁadd__mutmut_75": (
        "float64 seen-rows mask: 0/1 floats, any() and all() as on booleans"
    ),
    "coded.codes._hierarchical.xǁHierarchicalDecoderǁadd__mutmut_77": (
        "as mutant 75 (dtype dropped)"
    ),
    # shard theory-validation
    "theory.validation.x_check_finite_matrix__mutmut_19": (
        "kind not in 'XXiufXX': no dtype kind is 'X', so the test of 'i', 'u', 'f' "
        "is unchanged"
    ),
    "theory.validation.x_check_finite_matrix__mutmut_35": "astype(None) is float64",
    "theory.validation.x_check_finite_matrix__mutmut_36": (
        "astype(copy=None): copies only if needed, as copy=False"
    ),
    "theory.validation.x_check_ndim__mutmut_6": (
        "ndim >= max(allowed): at equality ndim is allowed and returned before"
    ),
    "theory.validation.x_check_ndim__mutmut_11": "as mutant 6",
    "theory.validation.x_is_prime__mutmut_6": (
        "not strictly equivalent: the witness 4 for the prime 3 (q + 1 is even, so "
        "trial division is unchanged: 2 divides first); the two sets of 13 bases "
        "differ only on a composite that is a strong pseudoprime to one set and not "
        "the other: none is known to us below 3.3e24, none below 3e6 (searched), "
        "and the psi_j table kills none"
    ),
    "theory.validation.x_is_prime__mutmut_7": "as mutant 6 (6 for 5)",
    "theory.validation.x_is_prime__mutmut_8": "as mutant 6 (8 for 7)",
    "theory.validation.x_is_prime__mutmut_9": "as mutant 6 (12 for 11)",
    "theory.validation.x_is_prime__mutmut_10": "as mutant 6 (14 for 13)",
    "theory.validation.x_is_prime__mutmut_11": "as mutant 6 (18 for 17)",
    "theory.validation.x_is_prime__mutmut_12": "as mutant 6 (20 for 19)",
    "theory.validation.x_is_prime__mutmut_13": "as mutant 6 (24 for 23)",
    "theory.validation.x_is_prime__mutmut_14": "as mutant 6 (30 for 29)",
    "theory.validation.x_is_prime__mutmut_15": "as mutant 6 (32 for 31)",
    "theory.validation.x_is_prime__mutmut_16": "as mutant 6 (38 for 37)",
    "theory.validation.x_is_prime__mutmut_17": "as mutant 6 (42 for 41)",
    "theory.validation.x_is_prime__mutmut_25": (
        "not strictly equivalent: one squaring more, up to a^(n - 1); a prime still "
        "passes, and a composite passes only if every witness reaches -1 there, "
        "with a^(n - 1) = -1 (not a Fermat liar): none below 3e6 (searched)"
    ),
    "theory.validation.x_is_prime__mutmut_34": (
        "as mutant 25 (s doubled: more squarings past a^(n - 1))"
    ),
    "theory.validation.x_is_prime__mutmut_48": "as mutant 25 (two squarings more)",
    # shard rateless
    "coded.codes._rateless.xǁLTCodeǁ_right__mutmut_2": "astype(None) is float64",
    "coded.codes._rateless.xǁLTCodeǁ_right__mutmut_3": (
        "astype(copy=None): B is only read, copied or not"
    ),
    "coded.codes._rateless.xǁLTCodeǁ_right__mutmut_5": "as mutant 3 (copy dropped)",
    "coded.codes._rateless.xǁLTCodeǁ_right__mutmut_16": "as mutant 3 (copy=True)",
    "coded.codes._rateless.x__plan__mutmut_1": (
        "plans of fewer than m rows by default: such a plan never has full rank, "
        "so every answer (is_decodable, condition_number, the retry bookkeeping) "
        "is as with None; only its cost differs"
    ),
    "coded.codes._rateless.xǁLTDecoderǁdecode__mutmut_30": (
        "not equivalent: the warning's stacklevel 3 instead of 2; under mutmut its "
        "trampoline adds a frame, so level 2 is the trampoline and 3 the test, "
        "and no test can tell the caller both with and without mutmut"
    ),
    "coded.codes._rateless.x__check_dense__mutmut_13": (
        "check_finite_matrix without ndim: its default is 2"
    ),
    "coded.codes._rateless.xǁ_Patternǁof__mutmut_21": (
        "float index sums: integers below 2^53, stored exactly into the int64 index_sum"
    ),
    "coded.codes._rateless.xǁDegreeDistributionǁrobust_soliton__mutmut_50": (
        "integer degrees d: d - 1.0 and R / (d m) make every term a float, the same"
    ),
    "coded.codes._rateless.xǁDegreeDistributionǁrobust_soliton__mutmut_53": (
        "as mutant 50 (dtype dropped)"
    ),
    "coded.codes._rateless.xǁDegreeDistributionǁwave_soliton__mutmut_14": (
        "integer degrees d: d - 1.0 makes each product d (d - 1.0) a float, the same"
    ),
    "coded.codes._rateless.xǁDegreeDistributionǁwave_soliton__mutmut_17": (
        "as mutant 14 (dtype dropped)"
    ),
    "coded.codes._rateless.xǁDegreeDistributionǁwave_soliton__mutmut_29": (
        "p[1:3] = 1/70: p[2] is overwritten by p[2:] = 1 / (d (d - 1)) next"
    ),
    "coded.codes._rateless.xǁDegreeDistributionǁ__init____mutmut_12": (
        "astype(None) is float64"
    ),
    "coded.codes._rateless.xǁDegreeDistributionǁ__init____mutmut_27": (
        "|sum - 1| >= 1e-12 instead of >: differs only at a sum exactly 1e-12 "
        "(as a float) away from 1"
    ),
    "coded.codes._rateless.xǁDegreeDistributionǁsample__mutmut_14": (
        "not strictly equivalent: draws / cdf[-1] instead of * cdf[-1], "
        "|cdf[-1] - 1| <= 1e-12: a degree changes only for a draw within 2e-12 "
        "of a step of the cdf (the top degree is clamped either way)"
    ),
    "coded.codes._rateless.xǁDegreeDistributionǁsample__mutmut_29": (
        "searchsorted side='left': differs only for a draw exactly equal to a "
        "cdf value (a 2^-53 event per draw)"
    ),
    "coded.codes._rateless.xǁDegreeDistributionǁsample__mutmut_32": (
        "the clamp at cdf.size + 1: random() < 1 keeps draws below cdf[-1], so "
        "searchsorted returns at most cdf.size - 1 unless a draw rounds up to "
        "cdf[-1]"
    ),
    "coded.codes._rateless.x__distinct_columns__mutmut_7": (
        "float column indices: integers below 2^53, cast exactly to scipy's "
        "index dtype by csr_array"
    ),
    "coded.codes._rateless.x__distinct_columns__mutmut_9": (
        "as mutant 7 (dtype dropped)"
    ),
    "coded.codes._rateless.x__distinct_columns__mutmut_15": (
        "the degree threshold between the two samplers (5 d > m): both draw a "
        "uniform set of distinct columns; a seed's generator is not specified"
    ),
    "coded.codes._rateless.x__distinct_columns__mutmut_16": ("as mutant 15 (4 d >= m)"),
    "coded.codes._rateless.x__distinct_columns__mutmut_21": (
        "choice(replace=None): None is false, as False"
    ),
    "coded.codes._rateless.x__redraw_duplicates__mutmut_7": (
        "np.arange's default integer dtype is int64"
    ),
    "coded.codes._rateless.x__redraw_duplicates__mutmut_9": (
        "as mutant 7 (dtype dropped)"
    ),
    "coded.codes._rateless.x__check_dense__mutmut_4": ("astype(None) is float64"),
    "coded.codes._rateless.x__check_dense__mutmut_5": (
        "astype(copy=None): A is only read, copied or not"
    ),
    "coded.codes._rateless.x__check_dense__mutmut_7": ("as mutant 5 (copy dropped)"),
    "coded.codes._rateless.x__check_dense__mutmut_17": ("as mutant 5 (copy=True)"),
    "coded.codes._rateless.xǁ_Patternǁof__mutmut_6": (
        "float index sums: integers below 2^53, assigned exactly into the "
        "peeler's int64 arrays"
    ),
    "coded.codes._rateless.xǁ_Patternǁof__mutmut_8": ("as mutant 6 (dtype dropped)"),
    "coded.codes._rateless.xǁ_Patternǁof__mutmut_11": (
        "degree >= 0: every encoded row has degree >= 1 (sample draws 1..max)"
    ),
    "coded.codes._rateless.xǁ_Solverǁ__init____mutmut_38": (
        "zip(strict=None): the rounds' bounds and blocks come from one list, one each"
    ),
    "coded.codes._rateless.xǁ_Solverǁ__init____mutmut_41": (
        "as mutant 38 (strict dropped)"
    ),
    "coded.codes._rateless.xǁ_Solverǁ__init____mutmut_43": (
        "as mutant 38 (strict=False)"
    ),
    "coded.codes._rateless.xǁ_Solverǁ__init____mutmut_58": (
        "amplification None for a plan without full rank: condition_number and "
        "decode check full_rank before reading it"
    ),
    "coded.codes._rateless.xǁ_Solverǁ__init____mutmut_62": (
        "a probe with a second, zero column: its solve is zero, the norm is the same"
    ),
    "coded.codes._rateless.xǁ_Solverǁ_schur__mutmut_6": (
        "no early return without extra rows: the QR of a (0, k) S has an empty "
        "diagonal, which returns next"
    ),
    "coded.codes._rateless.xǁ_Solverǁ_schur__mutmut_22": (
        "the diagonal is never empty here (S has rows and columns), and with "
        "diagonal[0] = 0 no entry exceeds 0, so the rank gains nothing either "
        "way"
    ),
    "coded.codes._rateless.xǁ_Solverǁ_schur__mutmut_30": (
        "diagonal >= threshold: differs only for an entry exactly at the "
        "threshold (diagonal[0] > 0 here)"
    ),
    "coded.codes._rateless.xǁLTDecoderǁ__init____mutmut_10": (
        "_queried None: the first query's count never equals it, as -1"
    ),
    "coded.codes._rateless.xǁLTDecoderǁ__init____mutmut_12": (
        "_queried -2: as mutant 10"
    ),
    "coded.codes._rateless.xǁLTDecoderǁ__init____mutmut_13": (
        "_idle_queries None: reset to 0 by the first query (whose count differs "
        "from _queried)"
    ),
    "coded.codes._rateless.xǁLTDecoderǁ__init____mutmut_14": (
        "_idle_queries 1: as mutant 13"
    ),
    "coded.codes._rateless.xǁLTDecoderǁadd__mutmut_12": (
        "a piece kept in its dtype: its values are copied into a float64 Y at "
        "decode, the same numbers"
    ),
    "coded.codes._rateless.xǁLTDecoderǁadd__mutmut_14": (
        "as mutant 12 (dtype dropped)"
    ),
    "coded.codes._rateless.xǁLTDecoderǁadd__mutmut_30": (
        "reshape(rows, -2): numpy reads any negative size as 'the rest', as -1"
    ),
    "coded.codes._rateless.xǁLTDecoderǁ_refined__mutmut_22": (
        "the refinement's early exit at < tolerance / 1024 instead of <=: "
        "differs at exact equality only (and a refinement step only lowers the "
        "residual)"
    ),
    "coded.codes._rateless.xǁLTDecoderǁ_refined__mutmut_24": (
        "not strictly equivalent: the refinement's early exit at tolerance / "
        "1025 (a step more in a 0.1% window of residuals; a step only lowers "
        "the residual)"
    ),
    "coded.codes._rateless.xǁLTDecoderǁ_refined__mutmut_38": (
        "norm >= tolerance: differs at a residual exactly equal to the tolerance only"
    ),
}
"""Surviving mutants that compute the same function as the original, with the reason.

A name is ``<module>.x_<function>__mutmut_<n>`` (``mutmut show <name>`` in the
shard's directory prints its diff); the numbering is stable while the function's
source is unchanged.
"""


def _mutmut_table(shard: Shard) -> str:
    tests = [test for test in shard.tests if (ROOT / test).exists()]

    def toml_list(items: tuple[str, ...] | list[str]) -> str:
        return "[" + ", ".join(json.dumps(item) for item in items) + "]"

    return (
        "\n[tool.mutmut]  # generated by scripts/mutation.py\n"
        f"source_paths = {toml_list(PACKAGES)}\n"
        f"only_mutate = {toml_list(shard.modules)}\n"
        f"pytest_add_cli_args_test_selection = {toml_list(tests)}\n"
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-p", "_mutation_order"]\n'
        # a mutant running 5 x (15 s + its tests' time) is a timeout (wall clock:
        # on a loaded machine a forked pytest alone can take 20 s; mutmut's
        # x 15 waits long on each endless loop); timeouts are not in the score
        "timeout_multiplier = 5.0\ntimeout_constant = 15.0\n"
    )


def prepare(name: str) -> Path:
    """Create (or refresh) the shard's mutmut project; return its directory."""
    shard, directory = SHARDS[name], WORK / name
    directory.mkdir(parents=True, exist_ok=True)
    for entry in (*PACKAGES, "tests"):
        link = directory / entry
        if not link.is_symlink():
            link.symlink_to(ROOT / entry, target_is_directory=True)
    pyproject = (ROOT / "pyproject.toml").read_text()
    (directory / "pyproject.toml").write_text(pyproject + _mutmut_table(shard))
    return directory


def run(name: str, max_children: int, mutants: list[str]) -> int:
    """Run mutmut on the shard (incremental after the first run).

    `mutants` (glob patterns of mutant names) restricts the run to them; mutmut
    then retests them even when it has a result.
    """
    directory = prepare(name)
    env = dict(os.environ, HYPOTHESIS_PROFILE="mutation", MPLBACKEND="Agg")
    env["PYTHONPATH"] = str(ROOT / "scripts")  # _mutation_order.py, a pytest plugin
    command = [sys.executable, "-m", "mutmut", "run", "--max-children"]
    command += [str(max_children), *mutants]
    return subprocess.call(command, cwd=directory, env=env)


def results(name: str) -> dict[str, dict[str, int]]:
    """Exit code of every mutant of the shard's last run, by module path."""
    mutants = WORK / name / "mutants"
    codes: dict[str, dict[str, int]] = {}
    for module in SHARDS[name].modules:
        meta = mutants / f"{module}.meta"
        if meta.exists():
            codes[module] = json.loads(meta.read_text())["exit_code_by_key"]
    return codes


def unexplained_survivors(name: str) -> list[str]:
    """Survived or untested mutants of the shard's last run, equivalents aside."""
    return [
        mutant
        for codes in results(name).values()
        for mutant, code in sorted(codes.items())
        if status(code) in ("survived", "no tests") and mutant not in EQUIVALENT
    ]


def status(code: int | None) -> str:
    """mutmut's name for an exit code (killed, survived, timeout, no tests...)."""
    from mutmut.stats import status_by_exit_code

    return status_by_exit_code[code]


def report(name: str, *, diff: bool) -> list[str]:
    """Print the shard's scores per module; return its unexplained survivors."""
    print(f"## shard {name}")
    survivors: list[str] = []
    for module, codes in results(name).items():
        counts: dict[str, int] = {}
        equivalent = 0
        for mutant, code in sorted(codes.items()):
            state = status(code)
            if state == "survived" and mutant in EQUIVALENT:
                equivalent += 1
                continue
            counts[state] = counts.get(state, 0) + 1
            if state in ("survived", "no tests"):
                survivors.append(mutant)
        killed = counts.get("killed", 0)
        survived = counts.get("survived", 0) + counts.get("no tests", 0)
        score = killed / (killed + survived) if killed + survived else float("nan")
        others = ", ".join(
            f"{k} {v}"
            for k, v in sorted(counts.items())
            if k not in ("killed", "survived", "no tests")
        )
        print(
            f"{module}: {len(codes)} mutants, killed {killed}, "
            f"survived {survived} (untested included), equivalent {equivalent}"
            f"{'; ' + others if others else ''}; score {score:.1%}"
        )
    for mutant in survivors:
        print(f"  survived: {mutant}")
        if diff:
            subprocess.call(
                [sys.executable, "-m", "mutmut", "show", mutant], cwd=WORK / name
            )
    return survivors


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shards", nargs="*", help="shard names (see --list)")
    parser.add_argument("--list", action="store_true", help="list the shards")
    parser.add_argument("--report", action="store_true", help="report only, no run")
    parser.add_argument("--diff", action="store_true", help="print survivors' diffs")
    parser.add_argument("--max-children", type=int, default=1, help="parallel tests")
    parser.add_argument(
        "--retest",
        action="store_true",
        help="rerun the last run's survivors (mutmut keeps results: new tests only "
        "reach a cached survivor this way)",
    )
    parser.add_argument(
        "--mutants",
        nargs="+",
        default=[],
        help="only these mutants (globs, e.g. 'mapreduce._plan.x_verify_plan*')",
    )
    args = parser.parse_args(argv)
    if args.list or not args.shards:
        for name, shard in SHARDS.items():
            print(f"{name}: {' '.join(shard.modules)}  <-  {' '.join(shard.tests)}")
        return 0
    unknown = sorted(set(args.shards) - set(SHARDS))
    if unknown:
        parser.error(f"unknown shards {unknown}; --list shows them")
    unexplained = 0
    for name in args.shards:
        mutants = args.mutants or (unexplained_survivors(name) if args.retest else [])
        if args.retest and not mutants:
            print(f"shard {name}: no survivor to retest")
        elif not args.report and run(name, args.max_children, mutants) != 0:
            print(f"mutmut failed on shard {name}", file=sys.stderr)
            return 2
        unexplained += len(report(name, diff=args.diff))
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
