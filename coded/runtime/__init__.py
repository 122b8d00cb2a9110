"""The Dask runtime: the only package of coded that imports ``dask.distributed``.

It places coded operands on their workers, submits pinned tasks, streams pieces back
to an incremental decoder, cancels what is no longer needed, and records the run.
"""

from __future__ import annotations

__all__: list[str] = []
