"""coded: coded distributed computing on Dask.

Codes (MDS over the reals and GF(p), row MDS, polynomial, replication, uncoded,
exact over CRT primes), their decoders, exact ``matmul_mod``, and ``coded_matmul``,
which runs a coded product on Dask workers and decodes from whichever finish first
(``place_operand`` encodes and places A once for many B; ``Stragglers`` injects
delays and failures; ``LocalCodedCluster`` and ``profile_workers`` manage and
measure the cluster).

Public names are resolved lazily (PEP 562), so ``import coded`` loads neither galois
nor distributed until a name that needs them is used.
"""

from __future__ import annotations

import importlib
from typing import Any

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    "Code": "coded.codes",
    "DEFAULT_PRIME": "coded.codes",
    "ExactCode": "coded.codes",
    "GradientCode": "coded.codes",
    "HierarchicalCode": "coded.codes",
    "GradientError": "coded.errors",
    "GradientPlacement": "coded.gradient",
    "coded_gradient_descent": "coded.gradient",
    "gradient_descent": "coded.gradient",
    "place_gradient_data": "coded.gradient",
    "LagrangeCode": "coded.codes",
    "LTCode": "coded.codes",
    "DegreeDistribution": "coded.codes",
    "LagrangeResult": "coded._lagrange_run",
    "lagrange_map": "coded._lagrange_run",
    "MDSCode": "coded.codes",
    "PolynomialCode": "coded.codes",
    "ReplicationCode": "coded.codes",
    "RowMDSCode": "coded.codes",
    "UncodedCode": "coded.codes",
    "DecodingError": "coded.errors",
    "IllConditionedWarning": "coded.errors",
    "InconsistentResultsError": "coded.errors",
    "NonFiniteResultError": "coded.errors",
    "NotEnoughResultsError": "coded.errors",
    "ResourceError": "coded.errors",
    "SchedulerLostError": "coded.errors",
    "Piece": "coded.codes",
    "LocalCodedCluster": "coded.runtime",
    "ExecutionOptions": "coded._dispatch",
    "MatmulHandle": "coded.runtime",
    "MatmulResult": "coded._result",
    "TaskRecord": "coded._result",
    "PlacedOperand": "coded._placed",
    "place_operand": "coded._placed",
    "Stragglers": "coded.injection",
    "coded_matmul": "coded._api",
    "coded_matmul_async": "coded._api",
    "submit_matmul": "coded._api",
    "profile_workers": "coded.runtime",
    "matmul_mod": "coded.codes",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'coded' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
