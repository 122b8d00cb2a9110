"""Iterative solvers on one placement (``coded.linalg``)."""

import numpy as np
import pytest

from coded import Stragglers, place_operand
from coded.linalg import lstsq_gd, power_method

pytestmark = pytest.mark.runtime


def _matrix(seed, m=40, d=5, singular_values=(1.2, 1.15, 1.1, 1.05, 1.0)):
    """A with known singular values (well conditioned: fast convergence)."""
    rng = np.random.default_rng(seed)
    U, _ = np.linalg.qr(rng.standard_normal((m, d)))
    V, _ = np.linalg.qr(rng.standard_normal((d, d)))
    return U @ np.diag(singular_values) @ V.T


def test_lstsq_gd_reaches_numpys_solution_with_n_minus_k_workers_lost(client):
    A = _matrix(1)
    b = np.random.default_rng(1).standard_normal(40)
    expected = np.linalg.lstsq(A, b, rcond=None)[0]
    lost = Stragglers(failing=[2, 4])
    with place_operand(A, k=4, client=client) as placed:
        result = lstsq_gd(placed, b, steps=25, stragglers=lost, rng=0)
    np.testing.assert_allclose(result.solution, expected, atol=1e-8)
    optimum = np.linalg.norm(A @ expected - b) / np.linalg.norm(b)
    assert result.value == pytest.approx(optimum, rel=1e-9)
    assert len(result.records) == 25
    assert np.all(np.diff(result.elapsed_seconds) > 0)
    assert np.all(np.diff(result.objectives) <= 1e-12)  # GD never increases it
    for record in result.records:
        assert not {2, 4} & set(record.forward_workers + record.backward_workers)


def test_power_method_finds_the_top_singular_pair(client):
    A = _matrix(2, singular_values=(3.0, 1.5, 1.0, 0.5, 0.2))
    _, s, Vt = np.linalg.svd(A)
    with place_operand(A, scheme="replication", r=2, client=client) as placed:
        result = power_method(
            placed, iterations=30, stragglers=Stragglers(failing=[1]), rng=3
        )
    assert result.value == pytest.approx(s[0], rel=1e-9)
    np.testing.assert_allclose(np.abs(result.solution), np.abs(Vt[0]), atol=1e-8)
    assert result.objectives[-1] == pytest.approx(s[0], rel=1e-9)


def test_bad_input_is_named(client):
    A = _matrix(3)
    with pytest.raises(TypeError, match="`A` must be a PlacedOperand"):
        lstsq_gd(A, np.ones(40))
    with place_operand(A, client=client) as placed:
        with pytest.raises(ValueError, match=r"`b` must have shape \(40,\)"):
            lstsq_gd(placed, np.ones(5))
        with pytest.raises(ValueError, match="transposed view"):
            power_method(placed.T)
        with pytest.raises(ValueError, match=r"`step_size` must be > 0\.0"):
            lstsq_gd(placed, np.ones(40), step_size=-1.0)
    integer = np.arange(40 * 5).reshape(40, 5) % 7
    with (
        place_operand(integer, field=65_537, client=client) as placed,
        pytest.raises(ValueError, match="placement over the reals"),
    ):
        power_method(placed)


def test_old_start_point_spellings_warn(client):
    A = _matrix(4)
    b = np.random.default_rng(4).standard_normal(40)
    start = np.full(5, 0.1)
    with place_operand(A, k=4, client=client) as placed:
        new = lstsq_gd(placed, b, steps=2, step_size=0.5, x0=start)
        with pytest.warns(DeprecationWarning, match="`w0` is deprecated.*`x0`"):
            old = lstsq_gd(placed, b, steps=2, step_size=0.5, w0=start)
        np.testing.assert_allclose(old.solution, new.solution, rtol=1e-12)
        top = power_method(placed, iterations=2, x0=start)
        with pytest.warns(DeprecationWarning, match="`v0` is deprecated.*`x0`"):
            again = power_method(placed, iterations=2, v0=start)
        np.testing.assert_allclose(again.solution, top.solution, rtol=1e-12)
        with pytest.raises(TypeError, match="both `x0` and its old spelling `w0`"):
            lstsq_gd(placed, b, x0=start, w0=start)
