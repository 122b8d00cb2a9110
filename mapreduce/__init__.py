"""mapreduce: coded MapReduce (Li et al.) with coded shuffles.

Placements, shuffle plans and their verifier are pure; execution on Dask lives in
``coded.runtime``.
"""

from __future__ import annotations

__all__: list[str] = []
