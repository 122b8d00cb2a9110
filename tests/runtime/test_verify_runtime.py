"""Wrong results on a real cluster: detected, corrected, never returned silently.

One worker reports wrong numbers (``Stragglers(corrupt=...)``: silent data
corruption, injected inside its tasks); two others are slow, so that the wrong
worker's result is among the first k and must be used or refused.
"""

import numpy as np
import pytest

import coded
from coded import InconsistentResultsError, Stragglers, coded_matmul, place_operand

pytestmark = pytest.mark.runtime

WRONG = 2
SLOW = {4: 0.5, 5: 0.5}  # seconds: workers 4 and 5 answer last


def _operands(field):
    rng = np.random.default_rng(3)
    if field is None:
        return rng.standard_normal((240, 30)), rng.standard_normal(30)
    return rng.integers(-20, 20, (240, 30)), rng.integers(-20, 20, 30)


def _check(product, A, x, field):
    if field is None:
        np.testing.assert_allclose(product, A @ x, rtol=1e-9, atol=1e-9)
    else:
        np.testing.assert_array_equal(product, A @ x)


@pytest.mark.parametrize("field", [None, 65537])
@pytest.mark.parametrize("error", [1e-3, 2.0**-30])
def test_a_wrong_worker_is_detected_then_corrected(client, field, error):
    A, x = _operands(field)
    wrong = Stragglers(corrupt={WRONG: error}, delays=SLOW)
    kwargs = {"scheme": "mds", "k": 4, "n": 6, "field": field, "client": client}
    with pytest.raises(InconsistentResultsError) as info:
        coded_matmul(A, x, stragglers=wrong, **kwargs)
    assert info.value.suspect_workers == (WRONG,)
    result = coded_matmul(A, x, stragglers=wrong, verify="correct", **kwargs)
    _check(result.product, A, x, field)
    assert result.suspect_workers == (WRONG,)
    assert WRONG not in result.used_workers
    assert result.verification == "freivalds"  # "auto": each result on its own
    assert result.detection_floor == 0.0 if field else 0 < result.detection_floor < 1e-9


@pytest.mark.parametrize("field", [None, 65537])
def test_correct_returns_before_a_slow_worker_finishes(client, field):
    """Every result passes its check: the call decodes from the fastest k and
    cancels the slow worker's task while it still runs (no spare waited for)."""
    A, x = _operands(field)
    slow = Stragglers(delays={0: 30.0})  # woken when the call releases its keys
    result = coded_matmul(
        A, x, n=6, k=4, field=field, client=client, stragglers=slow, verify="correct"
    )
    _check(result.product, A, x, field)
    assert 0 not in result.used_workers
    (record,) = [task for task in result.tasks if task.worker == 0]
    assert record.status == "cancelled"  # still running when the call decoded
    assert result.cancelled_tasks >= 1


@pytest.mark.parametrize("field", [None, 65537])
def test_placed_calls_check_with_the_placements_projections(client, field):
    A, x = _operands(field)
    wrong = Stragglers(corrupt={WRONG: 1e-3}, delays=SLOW)
    with place_operand(A, n=6, k=4, field=field, client=client) as placed:
        with pytest.raises(InconsistentResultsError):
            coded_matmul(placed, x, stragglers=wrong)
        result = coded_matmul(placed, x, stragglers=wrong, verify="correct")
        _check(result.product, A, x, field)
        assert result.suspect_workers == (WRONG,)
        honest = coded_matmul(placed, -x)
        _check(honest.product, A, -x, field)
        assert honest.verification == "freivalds"


def test_verify_off_returns_what_the_workers_said(client):
    A, x = _operands(None)
    wrong = Stragglers(corrupt={WRONG: 1e-3}, delays=SLOW)
    result = coded_matmul(
        A, x, scheme="mds", n=6, k=4, client=client, stragglers=wrong, verify="off"
    )
    assert result.verification == "off"
    assert not np.allclose(result.product, A @ x, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("check", ["freivalds", "auto"])
def test_too_many_wrong_workers_raise_with_every_suspect(client, check):
    A, x = _operands(None)
    wrong = Stragglers(corrupt={1: 1e-3, WRONG: 1e-3, 3: 1e-3})
    with pytest.raises(InconsistentResultsError) as info:
        coded_matmul(
            A,
            x,
            scheme="mds",
            n=6,
            k=4,
            client=client,
            stragglers=wrong,
            verify="correct",
            check=check,
        )
    suspects = set(info.value.suspect_workers)
    if check == "freivalds":  # each result against its own projection
        assert suspects == {1, WRONG, 3}
    else:  # 3 wrong of 6 results: no consistent subset locates them
        assert {1, WRONG, 3} <= suspects


@pytest.mark.parametrize("scale", [1e-200, 1.0, 1e150])
def test_honest_runs_pass_at_any_scale(client, scale):
    rng = np.random.default_rng(0)
    A, x = rng.standard_normal((300, 200)) * scale, rng.standard_normal(200)
    for scheme in ("mds", "uncoded", "replication"):
        result = coded_matmul(A, x, scheme=scheme, client=client)
        assert result.verification == "freivalds"
        np.testing.assert_allclose(result.product, A @ x, rtol=1e-9)


def test_where_no_check_applies_detect_says_so_and_correct_refuses(client):
    A, x = _operands(65537)
    result = coded_matmul(A, x, n=6, field="exact", client=client)
    assert result.verification.startswith("unchecked: ExactCode")
    with pytest.raises(ValueError, match="verify='correct'` needs a check"):
        coded_matmul(A, x, n=6, field="exact", client=client, verify="correct")
    with pytest.raises(ValueError, match="`verify` must be 'detect'"):
        coded.ExecutionOptions(verify="sometimes")


def test_rateless_rows_are_checked_and_a_wrong_one_names_its_worker(client):
    A, x = _operands(None)
    # the others answer late, so the decoder always needs (and checks) WRONG's rows
    late = {i: 0.1 for i in range(6) if i != WRONG}  # per batch
    wrong = Stragglers(corrupt={WRONG: 1e-3}, delays=late)
    fresh = {"scheme": "rateless", "n": 6, "client": client}
    with pytest.raises(InconsistentResultsError) as info:
        coded_matmul(A, x, stragglers=wrong, **fresh)
    assert info.value.suspect_workers == (WRONG,)
    with place_operand(A, scheme="rateless", n=6, client=client) as placed:
        for target, kwargs in ((A, fresh), (placed, {})):
            fixed = coded_matmul(
                target, x, stragglers=wrong, verify="correct", **kwargs
            )
            _check(fixed.product, A, x, None)
            assert fixed.verification == "freivalds"
            assert fixed.suspect_workers == (WRONG,)
            assert WRONG not in fixed.used_workers
            assert 0 < fixed.detection_floor < 1e-9


def _lazy(A):
    import dask.array as da

    return da.from_array(A, chunks=(50, 30))


def _views(placed, A, x, y):
    """(call target, right operand, exact product) of each view of a placement."""
    return [(placed, x, A @ x), (placed.T, y, A.T @ y)]


@pytest.mark.parametrize("field", [None, 65537])
@pytest.mark.parametrize("lazy", [False, True], ids=["numpy-A", "dask-A"])
def test_every_view_and_output_of_a_placement_is_checked(client, field, lazy):
    A, x = _operands(field)
    y = np.arange(240) % 7 - 3
    wrong = Stragglers(corrupt={WRONG: 1e-3}, delays=SLOW)
    with place_operand(
        _lazy(A) if lazy else A, n=6, k=4, field=field, client=client
    ) as placed:
        for target, right, exact in _views(placed, A, x, y):
            for output in ("numpy", "dask"):
                honest = coded_matmul(target, right, output=output)
                assert honest.verification == "freivalds"
                np.testing.assert_allclose(np.asarray(honest.product), exact)
                with pytest.raises(InconsistentResultsError) as info:
                    coded_matmul(target, right, stragglers=wrong, output=output)
                assert info.value.suspect_workers == (WRONG,)
                fixed = coded_matmul(
                    target, right, stragglers=wrong, output=output, verify="correct"
                )
                assert fixed.suspect_workers == (WRONG,)
                np.testing.assert_allclose(np.asarray(fixed.product), exact, rtol=1e-9)


def test_a_dask_array_right_operand_is_checked_on_the_cluster(client):
    import dask.array as da

    A, x = _operands(None)
    wrong = Stragglers(corrupt={WRONG: 1e-3}, delays=SLOW)
    with place_operand(A, n=6, k=4, client=client) as placed:
        lazy_x = da.from_array(x, chunks=10)
        result = coded_matmul(placed, lazy_x)
        assert result.verification == "freivalds"
        _check(result.product, A, x, None)
        with pytest.raises(InconsistentResultsError):
            coded_matmul(placed, lazy_x, stragglers=wrong)


def test_a_fresh_product_decoded_on_the_cluster_is_checked(client):
    A, x = _operands(65537)
    wrong = Stragglers(corrupt={WRONG: 1e-3}, delays=SLOW)
    kwargs = {"n": 6, "k": 4, "field": 65537, "client": client, "output": "dask"}
    with pytest.raises(InconsistentResultsError):
        coded_matmul(A, x, stragglers=wrong, **kwargs)
    fixed = coded_matmul(A, x, stragglers=wrong, verify="correct", **kwargs)
    np.testing.assert_array_equal(fixed.product.compute(), A @ x)
    assert fixed.suspect_workers == (WRONG,)


@pytest.mark.chaos
def test_wrong_results_from_worker_processes_are_caught():
    A, x = _operands(None)
    # processes on a busy machine: the slow ones must stay last by a wide margin
    wrong = Stragglers(corrupt={WRONG: 1e-6}, delays={4: 5.0, 5: 5.0})
    y = np.arange(240) % 7 - 3
    with coded.LocalCodedCluster(n_workers=6, processes=True) as cluster:
        for output in ("numpy", "dask"):
            with pytest.raises(InconsistentResultsError):
                coded_matmul(
                    A,
                    x,
                    scheme="mds",
                    k=4,
                    client=cluster.client,
                    stragglers=wrong,
                    output=output,
                )
        with place_operand(A, k=4, client=cluster.client) as placed:
            for target, right in ((placed, x), (placed.T, y)):
                for output in ("numpy", "dask"):
                    with pytest.raises(InconsistentResultsError) as info:
                        coded_matmul(target, right, stragglers=wrong, output=output)
                    assert WRONG in info.value.suspect_workers
            result = coded_matmul(placed, x, stragglers=wrong, verify="correct")
    np.testing.assert_allclose(result.product, A @ x, rtol=1e-9, atol=1e-9)
    assert result.suspect_workers == (WRONG,)


@pytest.mark.parametrize(
    ("field", "lazy"), [(None, False), (65537, True)], ids=["real", "gf-dask-A"]
)
def test_a_placement_remembers_suspects_and_repair_replaces_their_shares(
    client, field, lazy
):
    A, x = _operands(field)
    y = np.arange(240) % 7 - 3
    wrong = Stragglers(corrupt={WRONG: 1e-3}, delays=SLOW)
    with place_operand(
        _lazy(A) if lazy else A, n=6, k=4, field=field, client=client
    ) as placed:
        assert placed.suspects == {}
        assert placed.repair() == ()
        with pytest.raises(InconsistentResultsError):
            coded_matmul(placed, x, stragglers=wrong)
        assert set(placed.suspects) == {WRONG}
        assert set(placed.T.suspects) == {WRONG}  # both views remember
        before = placed.locations[WRONG]
        with pytest.warns(UserWarning, match="now tolerates 1 lost Dask worker"):
            assert placed.repair() == (WRONG,)  # n = 6 workers: stacked on one
        assert placed.tolerance_left == 1
        assert placed.suspects == {}
        assert placed.locations[WRONG] != before
        for target, right, exact in _views(placed, A, x, y):
            honest = coded_matmul(target, right, stragglers=Stragglers(delays=SLOW))
            assert honest.verification == "freivalds"
            assert WRONG in honest.used_workers  # the rebuilt share is used
            np.testing.assert_allclose(honest.product, exact, rtol=1e-9)
            # the rebuilt share has checks of its own: still caught
            with pytest.raises(InconsistentResultsError):
                coded_matmul(target, right, stragglers=wrong)


def test_a_repair_margin_repairs_suspects_before_the_next_call(client):
    A, x = _operands(None)
    wrong = Stragglers(corrupt={WRONG: 1e-3}, delays=SLOW)
    with place_operand(A, n=6, k=4, client=client, repair_margin=0) as placed:
        fixed = coded_matmul(placed, x, stragglers=wrong, verify="correct")
        assert fixed.suspect_workers == (WRONG,)
        assert set(placed.suspects) == {WRONG}
        before = placed.locations[WRONG]
        with pytest.warns(UserWarning, match="stacked shares"):
            honest = coded_matmul(placed, -x)
        assert placed.suspects == {}
        assert placed.locations[WRONG] != before
        _check(honest.product, A, -x, None)


@pytest.mark.parametrize("field", [None, 65537])
def test_redundancy_checks_results_against_each_other(client, field):
    A, x = _operands(field)
    wrong = Stragglers(corrupt={WRONG: 1e-3}, delays=SLOW)
    kwargs = {"n": 6, "k": 4, "field": field, "client": client, "check": "redundancy"}
    honest = coded_matmul(A, x, **kwargs)
    _check(honest.product, A, x, field)
    assert honest.verification == "redundancy"
    assert honest.detection_floor == 0.0 if field else 0 < honest.detection_floor < 1e-9
    # at least one result beyond k = 4 (results that arrive together are all used)
    assert len(honest.used_workers) >= 5
    with pytest.raises(InconsistentResultsError) as info:
        coded_matmul(A, x, stragglers=wrong, **kwargs)
    assert WRONG in info.value.suspect_workers
    # k + 2 = n: every worker is waited for, and the call says so
    with (
        place_operand(A, n=6, k=4, field=field, client=client) as placed,
        pytest.warns(UserWarning, match="waits for all of them"),
    ):
        fixed = coded_matmul(
            placed, x, stragglers=wrong, verify="correct", check="redundancy"
        )
    _check(fixed.product, A, x, field)
    assert fixed.suspect_workers == (WRONG,)


@pytest.mark.parametrize(
    ("scheme", "k", "check", "remedy"),
    [
        ("uncoded", None, "freivalds", "UncodedCode.n=6. has none.*verify='detect'"),
        ("mds", 6, "freivalds", "MDSCode.n=6. has none.*scheme='mds'"),
        ("mds", 5, "redundancy", "n - k >= 2 spare workers.*k <= 4"),
        ("uncoded", None, "auto", "every one of its n = k = 6 results is needed"),
    ],
)
def test_correct_without_spare_workers_says_what_would_help(
    client, scheme, k, check, remedy
):
    A, x = _operands(None)
    with pytest.raises(ValueError, match=f"verify='correct'.*{remedy}"):
        coded_matmul(
            A, x, scheme=scheme, n=6, k=k, client=client, verify="correct", check=check
        )
    # one spare: "auto" corrects with Freivalds checks rather than refuse
    result = coded_matmul(A, x, scheme="mds", n=6, k=5, client=client, verify="correct")
    assert result.verification == "freivalds"
    _check(result.product, A, x, None)


def test_redundancy_needs_a_row_code_and_the_client(client):
    A, x = _operands(None)
    with pytest.raises(ValueError, match="check='redundancy'` compares"):
        coded.ExecutionOptions(check="redundancy", output="dask")
    with pytest.raises(ValueError, match="`check` must be 'auto', 'freivalds'"):
        coded.ExecutionOptions(check="twice")
    with place_operand(A, n=6, k=4, client=client) as placed:
        with pytest.raises(ValueError, match="needs a code that checks"):
            coded_matmul(placed.T, A @ x, check="redundancy")
        off = coded_matmul(placed.T, A @ x, check="redundancy", verify="off")
        assert off.verification == "off"


def _patch_task_function():
    """In one worker process: its batch tasks report a wrong first entry."""
    import dataclasses

    from coded.runtime import _worker

    original = _worker.run_batch

    def wrong(*args, **kwargs):
        output = original(*args, **kwargs)
        value = np.array(output.piece.value, copy=True)
        value.flat[0] += 1
        piece = dataclasses.replace(output.piece, value=value)
        return dataclasses.replace(output, piece=piece)

    _worker.run_batch = wrong


@pytest.mark.chaos
@pytest.mark.parametrize("field", [None, 65537])
def test_a_worker_process_with_a_patched_task_function_is_caught(field):
    A, x = _operands(field)
    y = np.arange(240) % 7 - 3
    # k = n: every call uses the patched worker's result, whatever the timing
    with coded.LocalCodedCluster(n_workers=6, processes=True) as cluster:
        client = cluster.client
        with place_operand(A, n=6, k=6, field=field, client=client) as placed:
            client.run(_patch_task_function, workers=[placed.addresses[WRONG]])
            fresh = {"n": 6, "k": 6, "field": field, "client": client}
            calls = [
                lambda output: coded_matmul(A, x, output=output, **fresh),
                lambda output: coded_matmul(placed, x, output=output),
                lambda output: coded_matmul(placed.T, y, output=output),
            ]
            for call in calls:
                for output in ("numpy", "dask"):
                    with pytest.raises(InconsistentResultsError) as info:
                        call(output)
                    assert info.value.suspect_workers == (WRONG,)
