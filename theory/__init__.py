"""theory: closed-form bounds, exact expectations and a Monte Carlo simulator.

Models (theory.md section 1), Lee et al.'s homogeneous latencies (section 2),
heterogeneous allocations (HCMM, Kim et al., BPCC; section 4), coded MapReduce loads
(section 5) and the simulator (section 6). Needs only numpy and scipy.
"""

from __future__ import annotations

from theory._models import GroupProfile, WorkerProfile

__all__ = ["GroupProfile", "WorkerProfile"]
