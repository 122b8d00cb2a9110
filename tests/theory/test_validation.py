"""The shared argument checks (theory.validation) and generators (theory.rng).

Every check is tested at its boundaries (the bound accepted, one step beyond
refused) with its whole message, against oracles written out here.
"""

import dataclasses
import math
import re
import sys
import warnings
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse

from theory.rng import as_generator, spawn_generators
from theory.validation import (
    all_finite,
    check_finite_matrix,
    check_installed,
    check_int,
    check_k_of_n,
    check_levels,
    check_ndim,
    check_prime,
    check_real,
    check_real_vector,
    is_prime,
    is_sparse,
    non_finite_message,
    replace_options,
    warn_renamed,
)


def _raises(error, message):
    return pytest.raises(error, match=f"^{re.escape(message)}$")


# ---- integers and reals -----------------------------------------------------------
def test_check_int_returns_a_python_int_within_inclusive_bounds():
    for value in (3, np.int64(3), np.uint8(3)):
        got = check_int(value, "n", min_value=3, max_value=3)
        assert type(got) is int
        assert got == 3
    assert check_int(-(2**70), "n") == -(2**70)  # no bound: any integer
    with _raises(ValueError, "`n` must be >= 3, got n=2."):
        check_int(2, "n", min_value=3)
    with _raises(ValueError, "`n` must be <= 3, got n=4."):
        check_int(np.int64(4), "n", max_value=3)
    for value, shown in ((True, "bool True"), (3.0, "float 3.0"), ("3", "str '3'")):
        with _raises(TypeError, f"`n` must be an integer, got {shown}."):
            check_int(value, "n")


def test_check_real_returns_a_finite_float_within_its_bounds():
    for value in (2, Fraction(1, 2), np.float32(0.5), 0.25):
        got = check_real(value, "mu")
        assert type(got) is float
        assert got == float(value)
    assert check_real(0, "mu", min_value=0) == 0.0
    assert check_real(1, "mu", max_value=1) == 1.0
    assert check_real(1e-300, "mu", min_value=0, strict_min=True) == 1e-300
    with _raises(ValueError, "`mu` must be > 0, got mu=0.0."):
        check_real(0, "mu", min_value=0, strict_min=True)
    with _raises(ValueError, "`mu` must be >= 0, got mu=-1e-300."):
        check_real(-1e-300, "mu", min_value=0)
    with _raises(ValueError, "`mu` must be <= 1, got mu=1.5."):
        check_real(1.5, "mu", max_value=1)
    for value in (math.inf, -math.inf, math.nan):
        with _raises(ValueError, f"`mu` must be finite, got mu={value}."):
            check_real(value, "mu", min_value=0)
    for value, kind in ((True, "bool"), ("1", "str"), (1j, "complex")):
        with _raises(TypeError, f"`mu` must be a real number, got {kind}."):
            check_real(value, "mu")


def test_check_real_vector_copies_and_checks_every_entry():
    source = np.array([1, 2], dtype=np.int32)
    got = check_real_vector(source, "mu", min_value=1, length=2)
    assert got.dtype == np.float64
    assert not got.flags.writeable
    assert source.flags.writeable  # the caller's array is not frozen
    np.testing.assert_array_equal(got, [1.0, 2.0])
    np.testing.assert_array_equal(check_real_vector(3, "mu"), [3.0])
    single = check_real_vector(np.array([0.5, 2.0], dtype=np.float32), "mu")
    assert single.dtype == np.float64
    np.testing.assert_array_equal(single, [0.5, 2.0])
    with _raises(ValueError, "`mu` entries must be > 1, got [1.0, 2.0]."):
        check_real_vector(source, "mu", min_value=1, strict_min=True)
    with _raises(ValueError, "`mu` entries must be >= 1.5, got [1.0, 2.0]."):
        check_real_vector(source, "mu", min_value=1.5)
    with _raises(ValueError, "`mu` must have length 3, got 2."):
        check_real_vector(source, "mu", length=3)
    with _raises(ValueError, "`mu` must be 1-D, got shape (1, 2)."):
        check_real_vector([[1, 2]], "mu")
    with _raises(ValueError, "`mu` must be finite, got [1.0, inf]."):
        check_real_vector([1, np.inf], "mu")
    for values, dtype in (([True], "bool"), ([1j], "complex128"), (["a"], "<U1")):
        with _raises(TypeError, f"`mu` must hold real numbers, got dtype {dtype}."):
            check_real_vector(values, "mu")


def test_check_k_of_n_at_k_equal_n():
    assert check_k_of_n(np.int64(4), 4) == (4, 4)
    assert check_k_of_n(1, 1) == (1, 1)
    with _raises(ValueError, "`k` must satisfy 1 <= k <= n, got k=5, n=4."):
        check_k_of_n(5, 4)
    with _raises(ValueError, "`k` must be >= 1, got k=0."):
        check_k_of_n(0, 4)
    with _raises(ValueError, "`n` must be >= 1, got n=0."):
        check_k_of_n(0, 0)  # n is checked first


# ---- multi-level layouts ----------------------------------------------------------
def test_check_levels_accepts_its_boundaries():
    assert check_levels(8, [(2, 1), [2, 2], (np.int64(2), 1)]) == (
        (2, 1),
        (2, 2),
        (2, 1),
    )
    assert all(
        type(x) is int for pair in check_levels(4, [(np.int64(4), 4)]) for x in pair
    )
    assert check_levels(1, [(1, 1)]) == ((1, 1),)
    assert check_levels(3, ((3, 3),)) == ((3, 3),)
    assert check_levels(7, [(7, 1)]) == ((7, 1),)
    assert check_levels(2, [(2, 1)]) == ((2, 1),)


def test_check_levels_checks_n_first():
    with _raises(ValueError, "`n` must be >= 1, got n=0."):
        check_levels(0, [(1, 1)])
    with _raises(TypeError, "`n` must be an integer, got float 8.0."):
        check_levels(8.0, [(8, 1)])


@pytest.mark.parametrize(
    ("n", "levels", "error", "message"),
    [
        (
            8,
            "ab",
            TypeError,
            "`levels` must be a sequence of (n_l, k_l) pairs, outermost first, "
            "got str.",
        ),
        (
            8,
            {(8, 1)},
            TypeError,
            "`levels` must be a sequence of (n_l, k_l) pairs, outermost first, "
            "got set.",
        ),
        (8, [], ValueError, "`levels` must hold at least one (n_l, k_l) pair, got ()."),
        (
            8,
            [(2, 1)] * 4,
            ValueError,
            "`levels` has 4 levels but n=8 workers allow at most 3: every level splits "
            "its groups into at least 2, so L levels need n >= 2^L workers; use fewer "
            "levels (or more workers).",
        ),
        (
            1,
            [(1, 1)] * 2,
            ValueError,
            "`levels` has 2 levels but n=1 workers allow at most 1: every level splits "
            "its groups into at least 2, so L levels need n >= 2^L workers; use fewer "
            "levels (or more workers).",
        ),
        (
            3,
            [(3, 1), (1, 1)],
            ValueError,
            "`levels` has 2 levels but n=3 workers allow at most 1: every level splits "
            "its groups into at least 2, so L levels need n >= 2^L workers; use fewer "
            "levels (or more workers).",
        ),
        (
            8,
            [(8, 1), "ab"],
            TypeError,
            "`levels[1]` must be an (n_l, k_l) pair, got 'ab'.",
        ),
        (
            8,
            [(2, 1, 1)],
            TypeError,
            "`levels[0]` must be an (n_l, k_l) pair, got (2, 1, 1).",
        ),
        (8, [8], TypeError, "`levels[0]` must be an (n_l, k_l) pair, got 8."),
        (
            8,
            [(0, 1)],
            ValueError,
            "`levels[0][0] (n_l)` must be >= 1, got levels[0][0] (n_l)=0.",
        ),
        (
            8,
            [(8, 0)],
            ValueError,
            "`levels[0][1] (k_l)` must be >= 1, got levels[0][1] (k_l)=0.",
        ),
        (
            8,
            [(8, 1), (1, 1)],
            ValueError,
            "`levels[1]` has n_l=1: a level of a multi-level layout splits each group "
            "into at least 2; drop that level.",
        ),
        (
            8,
            [(2, 1), (4, 5)],
            ValueError,
            "`levels[1]` must satisfy 1 <= k_l <= n_l, got (n_l, k_l) = (4, 5); lower "
            "k_l to at most 4.",
        ),
        (
            8,
            [(2, 1), (3, 2)],
            ValueError,
            "the group sizes of `levels` [2, 3] multiply to 6, not the n=8 workers: "
            "each level must divide the workers into equal groups, so the sizes must "
            "be a factorisation of n.",
        ),
    ],
)
def test_check_levels_messages_whole(n, levels, error, message):
    with _raises(error, message):
        check_levels(n, levels)


# ---- primes -----------------------------------------------------------------------
def _sieve(limit):
    prime = np.ones(limit, dtype=bool)
    prime[:2] = False
    for q in range(2, math.isqrt(limit) + 1):
        if prime[q]:
            prime[q * q :: q] = False
    return prime


def test_is_prime_matches_a_sieve_and_rejects_strong_pseudoprimes():
    sieve = _sieve(20_000)
    assert [v for v in range(-3, 20_000) if is_prime(v)] == np.flatnonzero(
        sieve
    ).tolist()
    # psi_j, the least strong pseudoprime to the first j prime bases: each needs
    # the next witness (psi_13 = 3317044064679887385961981 passes all 13 bases:
    # the documented limit, 3.3e24)
    for composite in (
        2047,  # psi_1
        1373653,  # psi_2
        25326001,  # psi_3
        3215031751,  # psi_4
        2152302898747,  # psi_5
        3474749660383,  # psi_6
        341550071728321,  # psi_7 = psi_8
        3825123056546413051,  # psi_9 = psi_10 = psi_11
        318665857834031151167461,  # psi_12: only the witness 41 tells
        561 * 1105,
        (2**31 - 1) * (2**61 - 1),
    ):
        assert not is_prime(composite), composite
    for prime in (41, 43, 65537, 2**31 - 1, 2**61 - 1, 2**89 - 1, 10**18 + 9):
        assert is_prime(prime), prime


def test_check_prime_messages_whole():
    assert check_prime(np.int64(65537)) == 65537
    assert type(check_prime(2)) is int
    with _raises(ValueError, "`p` must be prime, got p=65535."):
        check_prime(65535)
    with _raises(ValueError, "`q` must be prime, got q=4."):
        check_prime(4, "q")
    with _raises(ValueError, "`p` must be >= 2, got p=1."):
        check_prime(1)


# ---- arrays -----------------------------------------------------------------------
def test_check_finite_matrix_dtypes_and_copies():
    ints = np.arange(6, dtype=np.int32).reshape(2, 3)
    assert check_finite_matrix(ints, "A") is ints  # integers kept as they are
    floats = np.ones((2, 3))
    assert check_finite_matrix(floats, "A") is floats  # no float64 copy
    single = np.ones((2, 3), dtype=np.float32)
    assert check_finite_matrix(single, "A").dtype == np.float64
    assert check_finite_matrix(single, "A", keep_float32=True) is single
    half = np.ones(3, dtype=np.float16)
    assert check_finite_matrix(half, "x", ndim=1, keep_float32=True).dtype == np.float64
    assert check_finite_matrix([1.5, 2], "x", ndim=[1, 2]).shape == (2,)
    with _raises(
        ValueError,
        "`x` must have ndim in (2,), got shape (2,). Pass a 2-D "
        "array, e.g. np.atleast_2d(x).",
    ):
        check_finite_matrix([1.5, 2], "x")
    bad = np.array([[1.0, 2.0], [np.nan, 3.0]], dtype=np.float32)
    with _raises(ValueError, non_finite_message(bad.astype(np.float64), "A")):
        check_finite_matrix(bad, "A", keep_float32=True)
    for values, dtype in (([[True]], "bool"), ([[1j]], "complex128"), ([["a"]], "<U1")):
        with _raises(
            TypeError, f"`A` must be a real or integer array, got dtype {dtype}."
        ):
            check_finite_matrix(values, "A")
    with pytest.raises(
        ValueError,
        match=r"^`A` must be a rectangular array, got list that numpy cannot "
        r"convert \(",
    ):
        check_finite_matrix([[1, 2], [3]], "A")
    with _raises(
        TypeError,
        "`A` is a sparse matrix (csr_array); coded encodes dense arrays only: pass "
        "`A.toarray()` (coded shares of a sparse matrix are dense in general).",
    ):
        check_finite_matrix(scipy.sparse.csr_array(np.eye(2)), "A")


@pytest.mark.parametrize(
    ("shape", "allowed", "message"),
    [
        (
            (3, 4),
            (1,),
            "`x` must have ndim in (1,), got shape (3, 4). Flatten it: x.reshape(-1).",
        ),
        (
            (2, 3, 4),
            (1, 2),
            "`x` must have ndim in (1, 2), got shape (2, 3, 4). Reshape it to 2-D: "
            "x.reshape(-1, 4) stacks the rows of its 2 matrices (reshape the product "
            "back after), x.reshape(2, -1) merges its trailing axes.",
        ),
        (
            (5, 2, 3, 4),
            (2,),
            "`x` must have ndim in (2,), got shape (5, 2, 3, 4). Reshape it to 2-D: "
            "x.reshape(-1, 4) stacks the rows of its 10 matrices (reshape the product "
            "back after), x.reshape(5, -1) merges its trailing axes.",
        ),
        (
            (),
            (1, 2),
            "`x` must have ndim in (1, 2), got shape (). Pass a 1-D array, e.g. "
            "np.atleast_1d(x).",
        ),
        (
            (3,),
            (2, 3),
            "`x` must have ndim in (2, 3), got shape (3,). Pass a 2-D array, e.g. "
            "np.atleast_2d(x).",
        ),
    ],
)
def test_check_ndim_messages_whole(shape, allowed, message):
    with _raises(ValueError, message):
        check_ndim(shape, "x", allowed)
    check_ndim(shape, "x", (*allowed, len(shape)))  # allowed: returns quietly


def test_non_finite_message_names_the_first_entry_and_the_count():
    assert non_finite_message(np.array([1.0, -np.inf, np.nan]), "x") == (
        "`x` must be finite (no NaN or inf). x[1] is -inf (the first of 2 non-finite "
        "entries): drop or fill them first, e.g. np.nan_to_num(x) or the rows where "
        "np.isfinite(x)."
    )
    assert non_finite_message(np.array([[1.0, 2.0], [3.0, np.nan]]), "A") == (
        "`A` must be finite (no NaN or inf). A[1, 1] is nan (the first of 1 "
        "non-finite entries): drop or fill them first, e.g. np.nan_to_num(A) or the "
        "rows where np.isfinite(A).all(axis=1)."
    )
    cube = np.zeros((2, 2, 3))
    cube[1, 0, 2] = np.inf
    assert non_finite_message(cube, "T") == (
        "`T` must be finite (no NaN or inf). T[1, 0, 2] is inf (the first of 1 "
        "non-finite entries): drop or fill them first, e.g. np.nan_to_num(T) or the "
        "rows where np.isfinite(T)."
    )


def test_all_finite_looks_twice_only_when_the_sum_overflows():
    assert all_finite(np.array([1e308, 1e308]))  # the sum overflows, entries finite
    assert all_finite(np.array([-1e308, -1e308]))
    assert all_finite(np.empty((0, 3)))
    assert all_finite(np.array([[1.0, 2.0]], dtype=np.float32))
    for bad in (
        [1e308, 1e308, np.inf],
        [-1e308, -1e308, np.nan],
        [np.inf, -np.inf],
        [np.nan],
    ):
        assert not all_finite(np.array(bad))
    assert not all_finite(np.array([np.nan, 1e308, 1e308]))


def test_is_sparse():
    assert is_sparse(scipy.sparse.csr_matrix(np.eye(2)))
    assert is_sparse(scipy.sparse.coo_array(np.eye(2)))
    assert not is_sparse(np.eye(2))
    assert not is_sparse([[1.0]])


def test_check_installed_names_the_missing_modules_and_the_extra():
    assert check_installed(["numpy", "math"], extra="dev", needed_by="`x`") is None
    with pytest.raises(ModuleNotFoundError) as info:
        check_installed(
            ["numpy", "no_such_module_a", "no_such_module_b"],
            extra="cluster",
            needed_by="`output='frame'`",
            instead="pass output='dict'",
        )
    assert str(info.value) == (
        "`output='frame'` needs no_such_module_a and no_such_module_b, which are not "
        "installed: install the 'cluster' extra, pip install "
        '"coded-computing[cluster]" (in a checkout: pip install -e ".[cluster]"), or '
        "pass output='dict'."
    )
    assert info.value.name == "no_such_module_a"
    with pytest.raises(ModuleNotFoundError) as info:
        check_installed(["no_such_module_b"], extra="dev", needed_by="f()")
    assert str(info.value) == (
        "f() needs no_such_module_b, which is not installed: install the 'dev' extra, "
        'pip install "coded-computing[dev]" (in a checkout: pip install -e ".[dev]").'
    )
    assert info.value.name == "no_such_module_b"


# ---- options and deprecations -----------------------------------------------------
@dataclasses.dataclass(frozen=True)
class _Options:
    timeout: float = 1.0
    retries: int = 2


_Options.__module__ = "pkg.options"


def test_replace_options_defaults_copies_and_messages():
    assert replace_options(None, _Options, {}, caller="f") == _Options()
    given = _Options(timeout=3.0)
    assert replace_options(given, _Options, {}, caller="f") is given
    assert replace_options(given, _Options, {"retries": 5}, caller="f") == _Options(
        3.0, 5
    )
    assert replace_options(None, _Options, {"retries": 0}, caller="f") == _Options(
        1.0, 0
    )
    with _raises(TypeError, "`options` must be a pkg._Options or None, got dict."):
        replace_options({}, _Options, {}, caller="f")
    with _raises(
        TypeError,
        "f() got unexpected keyword arguments ['retry', 'timout']; the execution "
        "options are ['timeout', 'retries'].",
    ):
        replace_options(
            None, _Options, {"timout": 1, "retry": 2, "timeout": 3}, caller="f"
        )


def _renamed_call(**keywords):
    warn_renamed("`w0`", "`x0`", "solve", **keywords)


def test_warn_renamed_points_at_the_callers_caller():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for keywords in ({}, {"stacklevel": 3}, {"stacklevel": 2}):
            _renamed_call(**keywords)
    default, three, two = caught
    assert default.category is DeprecationWarning
    assert str(default.message) == (
        "solve(): `w0` is deprecated and will be removed in the next release; use `x0`."
    )
    assert (default.filename, default.lineno) == (three.filename, three.lineno)
    assert (default.filename, default.lineno) != (two.filename, two.lineno)


# ---- random generators ------------------------------------------------------------
def test_as_generator_passes_generators_and_seeds_the_rest():
    generator = np.random.default_rng(1)
    assert as_generator(generator) is generator
    for seed in (7, np.int64(7), np.random.SeedSequence(7)):
        assert as_generator(seed).random() == np.random.default_rng(7).random()
    assert isinstance(as_generator(), np.random.Generator)
    assert isinstance(as_generator(None), np.random.Generator)
    for value, kind in ((True, "bool"), (7.0, "float"), ("7", "str")):
        with _raises(
            TypeError,
            f"`rng` must be a numpy Generator, SeedSequence, int or None, got {kind}.",
        ):
            as_generator(value)


def test_spawn_generators_are_the_seed_sequences_children():
    def draws(generators):
        return [g.integers(2**62) for g in generators]

    expected = draws(
        np.random.default_rng(s) for s in np.random.SeedSequence(3).spawn(3)
    )
    assert draws(spawn_generators(3, 3)) == expected
    assert draws(spawn_generators(np.random.SeedSequence(3), 3)) == expected
    assert len(set(expected)) == 3
    assert spawn_generators(3, 0) == []


def test_is_sparse_does_not_import_scipy(monkeypatch):
    monkeypatch.delitem(sys.modules, "scipy.sparse")
    assert not is_sparse(np.eye(2))
