"""allocation: worker profiles and load-allocation solvers.

Uniform, load-balanced uncoded, HCMM, Kim et al. and BPCC; each returns a frozen
allocation of integer rows (and batches) per worker. Needs only numpy, scipy and
``theory``.
"""

from __future__ import annotations

__all__: list[str] = []
