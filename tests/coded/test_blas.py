"""The decoders' solves run on one BLAS thread (coded/codes/_blas.py)."""

import threading

import numpy as np
from threadpoolctl import threadpool_info

import coded
from coded.codes._blas import one_blas_thread


def _blas_threads() -> list[int]:
    return [
        pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"
    ]


def test_the_limit_holds_inside_and_the_original_comes_back():
    original = _blas_threads()
    with one_blas_thread():
        assert set(_blas_threads()) <= {1}
        with one_blas_thread():  # nested: still one, not restored early
            assert set(_blas_threads()) <= {1}
        assert set(_blas_threads()) <= {1}
    assert _blas_threads() == original


def test_another_thread_limits_after_this_one_restored():
    original, seen = _blas_threads(), []

    def other():
        with one_blas_thread():
            seen.append(_blas_threads())

    with one_blas_thread():
        pass
    thread = threading.Thread(target=other)
    thread.start()
    thread.join(10)
    assert seen
    assert set(seen[0]) <= {1}
    assert _blas_threads() == original


def test_a_unit_decode_solves_on_one_thread(monkeypatch):
    seen = []
    invert = np.linalg.inv  # the unit decoders apply the system's inverse

    def recorded(*args, **kwargs):
        seen.append(_blas_threads())
        return invert(*args, **kwargs)

    monkeypatch.setattr(np.linalg, "inv", recorded)
    rng = np.random.default_rng(0)
    A, x = rng.standard_normal((60, 5)), rng.standard_normal(5)
    code = coded.MDSCode(5, 3)
    encoded = code.encode_operands(A, x)
    original = _blas_threads()
    decoded = code.decode({i: encoded.lefts[i] @ x for i in (2, 3, 4)})
    assert _blas_threads() == original
    np.testing.assert_allclose(decoded, A @ x, rtol=1e-10, atol=1e-10)
    assert seen  # the decode solved (workers 2..4 hold no systematic block alone)
    assert all(set(threads) <= {1} for threads in seen)
