"""A user's script, checked by mypy in tests/test_typing.py (never run).

Each ``assert_type`` fails the check if a public name's type is lost (e.g. to the
``Any`` of a lazy ``__getattr__``).
"""

from __future__ import annotations

from typing import assert_type

import numpy as np
from distributed import Client

import allocation
import coded
from coded.gradient import GradientDescentResult, StepRecord
from coded.linalg import IterativeResult, lstsq_gd


def matmul(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    options = coded.ExecutionOptions(stragglers=coded.Stragglers(failing=[0]), rng=1)
    result = coded.coded_matmul(A, x, scheme="mds", n=4, k=3, options=options)
    assert_type(result, coded.MatmulResult)
    assert_type(result.used_workers, tuple[int, ...])
    assert_type(result.cancelled_tasks, int)
    return np.asarray(result.product)


def on_a_cluster(A: np.ndarray, b: np.ndarray) -> float:
    with coded.LocalCodedCluster(n_workers=4) as cluster:
        fit = coded.profile_workers(cluster.client, loads=(100, 1_000))
        assert_type(fit, allocation.ProfileFit)
        code = coded.MDSCode(4, 3)
        assert_type(code.k, int)
        handle = coded.submit_matmul(
            coded.place_operand(A, scheme=code, client=cluster.client), b
        )
        assert_type(handle, coded.MatmulHandle)
        assert_type(handle.result(), coded.MatmulResult)
        with coded.place_operand(A, k=3, client=cluster.client) as placed:
            assert_type(placed, coded.PlacedOperand)
            solved = lstsq_gd(placed, b, steps=5, step_size=0.1)
            assert_type(solved, IterativeResult)
        return solved.value


def descend(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    def grad(part: tuple[np.ndarray, np.ndarray], w: np.ndarray) -> np.ndarray:
        Xp, yp = part
        return np.asarray(Xp.T @ (Xp @ w - yp))

    with coded.LocalCodedCluster(n_workers=4) as cluster:
        result = coded.coded_gradient_descent(
            (X, y), grad, np.zeros(X.shape[1]), client=cluster.client, s=1
        )
    assert_type(result, GradientDescentResult)
    assert_type(result.records[0], StepRecord)
    return result.params


async def matmul_async(A: np.ndarray, x: np.ndarray, client: Client) -> np.ndarray:
    result = await coded.coded_matmul_async(A, x, k=3, client=client, timeout=5.0)
    assert_type(result, coded.MatmulResult)
    return np.asarray(result.product)


def codes() -> list[coded.Code]:
    import galois

    return [
        coded.MDSCode(6, 4),
        coded.MDSCode(6, 4, field=65_537),
        coded.PolynomialCode(9, p_a=2, p_b=2, field=galois.GF(65_537)),
        coded.ReplicationCode(6, 2),
    ]
