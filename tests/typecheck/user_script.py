"""A user's first script, checked by mypy from a directory outside the checkout.

tests/test_typing.py copies it to a temporary directory, where only the installed
package is visible, and expects exactly the two errors marked below. Never run (the
test collection imports it: nothing happens at import).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, assert_type

import numpy as np
from dask.array import Array as DaskArray
from dask.bag import Bag
from dask.dataframe import DataFrame
from numpy.typing import NDArray

import coded
import mapreduce


def first_product() -> coded.MatmulResult:
    A = np.arange(12.0).reshape(4, 3)
    slow = coded.Stragglers(delays={2: 1.5})
    result = coded.coded_matmul(A, np.ones(3), k=3, stragglers=slow, verify="correct")
    assert_type(result.product, NDArray[Any] | DaskArray)
    assert_type(result.suspect_workers, tuple[int, ...])
    return result


def counts(job: mapreduce.MapReduceResult) -> dict[Hashable, Any]:
    assert_type(job.output, dict[Hashable, Any] | Bag | DataFrame)
    assert isinstance(job.output, dict)
    return job.output


def misuse(A: NDArray[np.float64]) -> None:
    coded.coded_matmul(A, np.ones(3), verify="yes")  # error: not a verify option
    coded.coded_matmul(A, np.ones(3), scheme="mdss")  # error: not a scheme
