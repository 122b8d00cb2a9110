"""The fields of :class:`coded.ExecutionOptions` as typed keyword arguments.

Entry points take them as ``**option_fields: Unpack[ExecutionKeywords]`` (PEP 692),
so a type checker checks ``coded_matmul(A, B, verify="yes")`` against the same
``Literal`` values as ``ExecutionOptions(verify="yes")``. tests/test_typing.py checks
that the two declare the same fields with the same types.
"""

from __future__ import annotations

from typing import Literal, TypedDict

from coded.injection import Stragglers
from theory.rng import RngLike

__all__ = ["ExecutionKeywords"]


class ExecutionKeywords(TypedDict, total=False):
    """Keyword arguments that override fields of :class:`coded.ExecutionOptions`.

    Every key is optional and means what the field of that name means.
    """

    stragglers: Stragglers | None
    timeout: float
    rng: RngLike
    output: Literal["numpy", "dask"]
    verify: Literal["detect", "correct", "off"]
    check: Literal["auto", "freivalds", "redundancy"]
    transport: Literal["auto", "resident", "grouped", "tasks"]
