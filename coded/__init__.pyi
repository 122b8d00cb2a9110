"""Types of the names :mod:`coded` resolves lazily (``coded/__init__.py``).

Type checkers read this stub instead of the module's ``__getattr__``, which would
make every public name ``Any``. tests/test_typing.py checks that it exports
exactly ``coded.__all__``, each from the module ``coded`` loads it from.
"""

from coded._api import (
    coded_matmul,
    coded_matmul_async,
    submit_matmul,
)
from coded._dispatch import (
    ExecutionOptions,
)
from coded._lagrange_run import (
    LagrangeResult,
    lagrange_map,
)
from coded._placed import (
    PlacedOperand,
    place_operand,
)
from coded._result import (
    MatmulResult,
    TaskRecord,
)
from coded.codes import (
    DEFAULT_PRIME,
    Code,
    DegreeDistribution,
    ExactCode,
    GradientCode,
    HierarchicalCode,
    LagrangeCode,
    LTCode,
    MDSCode,
    Piece,
    PolynomialCode,
    ReplicationCode,
    RowMDSCode,
    UncodedCode,
    matmul_mod,
)
from coded.errors import (
    DecodingError,
    GradientError,
    IllConditionedWarning,
    InconsistentResultsError,
    NonFiniteResultError,
    NotEnoughResultsError,
    ResourceError,
    SchedulerLostError,
)
from coded.gradient import (
    GradientPlacement,
    coded_gradient_descent,
    gradient_descent,
    place_gradient_data,
)
from coded.injection import (
    Stragglers,
)
from coded.runtime import (
    LocalCodedCluster,
    MatmulHandle,
    profile_workers,
)

__all__ = [
    "DEFAULT_PRIME",
    "Code",
    "DecodingError",
    "DegreeDistribution",
    "ExactCode",
    "ExecutionOptions",
    "GradientCode",
    "GradientError",
    "GradientPlacement",
    "HierarchicalCode",
    "IllConditionedWarning",
    "InconsistentResultsError",
    "LTCode",
    "LagrangeCode",
    "LagrangeResult",
    "LocalCodedCluster",
    "MDSCode",
    "MatmulHandle",
    "MatmulResult",
    "NonFiniteResultError",
    "NotEnoughResultsError",
    "Piece",
    "PlacedOperand",
    "PolynomialCode",
    "ReplicationCode",
    "ResourceError",
    "RowMDSCode",
    "SchedulerLostError",
    "Stragglers",
    "TaskRecord",
    "UncodedCode",
    "coded_gradient_descent",
    "coded_matmul",
    "coded_matmul_async",
    "gradient_descent",
    "lagrange_map",
    "matmul_mod",
    "place_gradient_data",
    "place_operand",
    "profile_workers",
    "submit_matmul",
]
