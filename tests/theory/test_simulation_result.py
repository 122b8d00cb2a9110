"""SimulationResult: the summary every theory simulator returns."""

import dataclasses
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from theory import SimulationResult


@given(samples=st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=50))
def test_from_samples_matches_numpy(samples):
    x = np.array(samples)
    result = SimulationResult.from_samples(x)
    assert result.trials == x.size
    assert result.mean == pytest.approx(x.mean(), abs=1e-9)
    assert result.stderr == pytest.approx(x.std(ddof=1) / np.sqrt(x.size), abs=1e-9)
    assert set(result.quantiles) == {0.5, 0.9, 0.99}
    for q, value in result.quantiles.items():
        assert value == pytest.approx(np.quantile(x, q), abs=1e-9)


def test_single_sample_and_custom_quantiles():
    result = SimulationResult.from_samples([3.0], quantiles=(0.0, 1.0))
    assert (result.mean, result.stderr, result.trials) == (3.0, 0.0, 1)
    assert dict(result.quantiles) == {0.0: 3.0, 1.0: 3.0}


def test_no_quantiles_asked_gives_none():
    assert dict(SimulationResult.from_samples([1.0, 2.0], quantiles=()).quantiles) == {}


def test_is_immutable():
    result = SimulationResult.from_samples([1.0, 2.0])
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.mean = 0.0
    with pytest.raises(TypeError):
        result.quantiles[0.5] = 0.0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: SimulationResult.from_samples([]),
            "`samples` must hold at least one latency, got 0.",
        ),
        (
            lambda: SimulationResult.from_samples([1.0, np.nan]),
            "`samples` must be finite, got [1.0, nan].",
        ),
        (
            lambda: SimulationResult.from_samples([1.0], quantiles=(0.5, 1.5)),
            "`quantiles` must lie in [0, 1], got [0.5, 1.5].",
        ),
        (
            lambda: SimulationResult(mean=1.0, stderr=-1.0, quantiles={}, trials=1),
            "`stderr` must be >= 0.0, got stderr=-1.0.",
        ),
        (
            lambda: SimulationResult(mean=1.0, stderr=0.0, quantiles={}, trials=0),
            "`trials` must be >= 1, got trials=0.",
        ),
        (
            lambda: SimulationResult(
                mean=1.0, stderr=0.0, quantiles={2.0: 1.0}, trials=1
            ),
            "`quantiles` keys must lie in [0, 1], got [2.0].",
        ),
    ],
)
def test_input_validation(call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call()
