"""What the runtime, coded's entry points and mapreduce use from the codes.

Public within the project, beside the codes themselves (:mod:`coded.codes`): the
decoding contexts the runtime passes through unread, the gradient schemes it places
and runs, the real worker product and the real MDS generators. Modules outside
:mod:`coded.codes` import these names from here, never from its private modules.
"""

from __future__ import annotations

from coded.codes._fields import FieldLike, encode_product, multiply_real
from coded.codes._freivalds import (
    ShareChecks,
    Verdict,
    draw_vectors,
    project_piece,
    project_share,
    share_checks,
    transposed_checks,
)
from coded.codes._generators import real_generator
from coded.codes._gradient import Construction as Construction  # a Literal
from coded.codes._gradient_schemes import (
    GRADIENT_SCHEMES,
    GradientScheme,
    WorkerShare,
)
from coded.codes._gradient_schemes import (
    GradientSchemeName as GradientSchemeName,  # a Literal
)
from coded.codes._hierarchical import HierarchicalContext
from coded.codes._rateless import RatelessContext
from coded.codes._transpose import TransposedContext
from coded.codes._units import UnitContext

__all__ = [
    "GRADIENT_SCHEMES",
    "FieldLike",
    "GradientScheme",
    "HierarchicalContext",
    "RatelessContext",
    "ShareChecks",
    "TransposedContext",
    "UnitContext",
    "Verdict",
    "WorkerShare",
    "draw_vectors",
    "encode_product",
    "multiply_real",
    "project_piece",
    "project_share",
    "real_generator",
    "share_checks",
    "transposed_checks",
]
