"""theory: closed-form bounds, exact expectations and a Monte Carlo simulator.

The shifted-exponential model and the simulators (docs/theory/model.md), Lee et
al.'s homogeneous latencies (docs/theory/stragglers.md), recovery thresholds of
MDS, polynomial, MatDot and entangled codes (docs/theory/codes.md), heterogeneous
allocations (HCMM, Kim et al., BPCC), exact expected latencies of an allocation and
the physical limit (docs/theory/allocation.md), coded MapReduce loads and the
K = 3 placement (docs/theory/mapreduce.md), the step times of gradient coding
and its baselines (docs/theory/gradient_coding.md), latency and per-call cost of
multi-level codes (docs/theory/hierarchical.md). Needs only numpy and scipy.
"""

from __future__ import annotations

from theory._cdc import (
    K3Placement,
    load_coded,
    load_converse,
    load_envelope,
    load_hypercube,
    load_optimal,
    load_uncoded,
    solve_k3_placement,
)
from theory._exact_latency import (
    expected_allocation_latency,
    expected_order_statistics,
)
from theory._gradient import (
    expected_gradient_step_time,
    gradient_loads,
    simulate_gradient_step_time,
)
from theory._heterogeneous import (
    BATCH_CHOICES,
    BPCCOptimum,
    KimBound,
    best_loads_at,
    bpcc_optimum,
    bpcc_tau,
    expected_rows,
    hcmm_lambda,
    hcmm_latency,
    hcmm_loads,
    kim_bound,
    waterfill_time,
)
from theory._hierarchical import (
    CallOverhead,
    RuntimeCosts,
    call_overhead,
    expected_latency_hierarchical,
    fit_runtime_costs,
    simulate_hierarchical,
)
from theory._homogeneous import (
    expected_kth_completion,
    expected_latency_mds,
    expected_latency_mds_asymptotic,
    expected_latency_replication,
    expected_latency_uncoded,
    optimal_k_mds,
    optimal_rate_asymptotic,
)
from theory._homogeneous_sim import simulate_homogeneous
from theory._models import GroupProfile, WorkerProfile
from theory._network import shuffle_seconds_multicast, shuffle_seconds_switched
from theory._physical_limit import expected_physical_limit, physical_limit_bound
from theory._simulation_result import SimulationResult
from theory._simulator import simulate_latency, simulate_physical_limit
from theory._straggling import load_straggling, straggling_levels
from theory._thresholds import (
    recovery_threshold_entangled,
    recovery_threshold_matdot,
    recovery_threshold_mds,
    recovery_threshold_polynomial,
)

__all__ = [
    "BATCH_CHOICES",
    "BPCCOptimum",
    "CallOverhead",
    "GroupProfile",
    "K3Placement",
    "KimBound",
    "RuntimeCosts",
    "SimulationResult",
    "WorkerProfile",
    "best_loads_at",
    "bpcc_optimum",
    "bpcc_tau",
    "call_overhead",
    "expected_allocation_latency",
    "expected_gradient_step_time",
    "expected_kth_completion",
    "expected_latency_hierarchical",
    "expected_latency_mds",
    "expected_latency_mds_asymptotic",
    "expected_latency_replication",
    "expected_latency_uncoded",
    "expected_order_statistics",
    "expected_physical_limit",
    "expected_rows",
    "fit_runtime_costs",
    "gradient_loads",
    "hcmm_lambda",
    "hcmm_latency",
    "hcmm_loads",
    "kim_bound",
    "load_coded",
    "load_converse",
    "load_envelope",
    "load_hypercube",
    "load_optimal",
    "load_straggling",
    "load_uncoded",
    "optimal_k_mds",
    "optimal_rate_asymptotic",
    "physical_limit_bound",
    "recovery_threshold_entangled",
    "recovery_threshold_matdot",
    "recovery_threshold_mds",
    "recovery_threshold_polynomial",
    "shuffle_seconds_multicast",
    "shuffle_seconds_switched",
    "simulate_gradient_step_time",
    "simulate_hierarchical",
    "simulate_homogeneous",
    "simulate_latency",
    "simulate_physical_limit",
    "solve_k3_placement",
    "straggling_levels",
    "waterfill_time",
]
