"""allocation: load-allocation solvers and worker-profile estimation.

Uniform, load-balanced uncoded, HCMM, Kim et al. and BPCC; each returns a frozen
allocation of integer rows (and batches) per worker. ``estimate_profile`` fits
shifted-exponential profiles to measured task times. Needs only numpy, scipy and
``theory``.
"""

from __future__ import annotations

from allocation._estimate import (
    ProfileError,
    ProfileFit,
    estimate_profile,
    fit_profile,
)
from allocation._solvers import (
    solve_bpcc,
    solve_hcmm,
    solve_kim,
    solve_load_balanced,
    solve_uniform,
)
from allocation._types import Allocation, CallCosts

__all__ = [
    "Allocation",
    "CallCosts",
    "ProfileError",
    "ProfileFit",
    "estimate_profile",
    "fit_profile",
    "solve_bpcc",
    "solve_hcmm",
    "solve_kim",
    "solve_load_balanced",
    "solve_uniform",
]
