"""The frozen Allocation value type."""

import dataclasses
import re

import numpy as np
import pytest

from allocation import Allocation


def make(**overrides):
    fields = {
        "loads": [4, 2, 0],
        "batches": [2, 1, 1],
        "m": 5,
        "expected_latency": 1.5,
        "solver": "manual",
    }
    fields.update(overrides)
    return Allocation(**fields)


def test_fields_are_read_only_int64_arrays():
    alloc = make()
    assert alloc.loads.dtype == np.int64
    assert alloc.batches.dtype == np.int64
    assert alloc.overhead.tolist() == [0.0, 0.0, 0.0]
    assert alloc.batch_rows.tolist() == [2, 2, 0]
    assert (alloc.n, alloc.total_rows) == (3, 6)
    with pytest.raises(ValueError, match="read-only"):
        alloc.loads[0] = 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        alloc.m = 3
    assert dataclasses.replace(alloc, m=6).m == 6


BAD = [
    ({"loads": [4, -2, 0]}, ValueError, "`loads` entries must be >= 0"),
    ({"loads": [4.5, 2, 0]}, TypeError, "`loads` must be a 1-D array of integers"),
    ({"batches": [0, 1, 1]}, ValueError, "`batches` entries must be >= 1"),
    ({"batches": [2, 1]}, ValueError, "`batches` must have length 3 like `loads`"),
    ({"loads": [], "batches": []}, ValueError, "at least one worker, got n=0"),
    ({"batches": [3, 1, 1]}, ValueError, "every load must split into whole batches"),
    ({"m": 7}, ValueError, "`loads` must hold at least m=7 rows, got sum(loads)=6"),
    ({"m": 0}, ValueError, "`m` must be >= 1, got m=0"),
    ({"overhead": [0.1, -1.0, 0.0]}, ValueError, "`overhead` entries must be >= 0.0"),
    ({"expected_latency": -1.0}, ValueError, "`expected_latency` must be >= 0.0"),
    ({"solver": 3}, TypeError, "`solver` must be a str, got int"),
]


@pytest.mark.parametrize(("overrides", "error", "message"), BAD)
def test_input_validation(overrides, error, message):
    with pytest.raises(error, match=re.escape(message)):
        make(**overrides)
