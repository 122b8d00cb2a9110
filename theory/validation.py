"""Argument checks shared by every package (numpy only).

Public within the project: coded, allocation and mapreduce import their checks from
here, so this module imports nothing but numpy and the standard library.

Every message names the argument, the constraint and the value received, e.g.
"`k` must satisfy 1 <= k <= n, got k=5, n=4." Wrong types raise `TypeError`, wrong
values `ValueError`.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import numbers
import sys
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = [
    "all_finite",
    "check_finite_matrix",
    "check_installed",
    "check_int",
    "check_k_of_n",
    "check_levels",
    "check_ndim",
    "check_prime",
    "check_real",
    "check_real_vector",
    "is_prime",
    "is_sparse",
    "non_finite_message",
    "replace_options",
    "warn_renamed",
]


def check_int(
    value: object,
    name: str,
    *,
    min_value: int | None = None,
    max_value: int | None = None,
) -> int:
    """Return `value` as an int, checking its type and bounds.

    Parameters
    ----------
    value : object
        Candidate integer (`numbers.Integral`, NumPy integers included; not bool).
    name : str
        Argument name used in messages.
    min_value, max_value : int, optional
        Inclusive bounds.

    Returns
    -------
    int

    Examples
    --------
    >>> check_int(np.int64(3), "n", min_value=1)
    3
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(
            f"`{name}` must be an integer, got {type(value).__name__} {value!r}."
        )
    value = int(value)
    if min_value is not None and value < min_value:
        raise ValueError(f"`{name}` must be >= {min_value}, got {name}={value}.")
    if max_value is not None and value > max_value:
        raise ValueError(f"`{name}` must be <= {max_value}, got {name}={value}.")
    return value


def check_real(
    value: object,
    name: str,
    *,
    min_value: float | None = None,
    max_value: float | None = None,
    strict_min: bool = False,
) -> float:
    """Return `value` as a finite float, checking its type and bounds.

    Parameters
    ----------
    value : object
        Candidate real number (`numbers.Real`, not bool).
    name : str
        Argument name used in messages.
    min_value, max_value : float, optional
        Bounds; `min_value` is exclusive when `strict_min` is true.
    strict_min : bool
        Require ``value > min_value`` instead of ``>=``.

    Returns
    -------
    float

    Examples
    --------
    >>> check_real(2, "mu", min_value=0, strict_min=True)
    2.0
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a real number, got {type(value).__name__}.")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"`{name}` must be finite, got {name}={value}.")
    if min_value is not None:
        if strict_min and value <= min_value:
            raise ValueError(f"`{name}` must be > {min_value}, got {name}={value}.")
        if not strict_min and value < min_value:
            raise ValueError(f"`{name}` must be >= {min_value}, got {name}={value}.")
    if max_value is not None and value > max_value:
        raise ValueError(f"`{name}` must be <= {max_value}, got {name}={value}.")
    return value


def check_real_vector(
    values: object,
    name: str,
    *,
    min_value: float | None = None,
    strict_min: bool = False,
    length: int | None = None,
) -> np.ndarray:
    """Return `values` as a read-only 1-D float64 array of finite numbers.

    Parameters
    ----------
    values : array_like
        Scalar or sequence of real numbers.
    name : str
        Argument name used in messages.
    min_value : float, optional
        Lower bound on every entry (exclusive when `strict_min`).
    strict_min : bool
        Require entries ``> min_value``.
    length : int, optional
        Required length.

    Returns
    -------
    numpy.ndarray, shape (length,)

    Examples
    --------
    >>> check_real_vector([1, 2], "mu", min_value=0, strict_min=True)
    array([1., 2.])
    """
    array = np.asarray(values)
    if array.dtype == np.bool_ or not (
        np.issubdtype(array.dtype, np.integer)
        or np.issubdtype(array.dtype, np.floating)
    ):
        raise TypeError(f"`{name}` must hold real numbers, got dtype {array.dtype}.")
    array = np.array(np.atleast_1d(array), dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D, got shape {array.shape}.")
    if length is not None and array.shape[0] != length:
        raise ValueError(f"`{name}` must have length {length}, got {array.shape[0]}.")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"`{name}` must be finite, got {array.tolist()}.")
    if min_value is not None:
        bad = array <= min_value if strict_min else array < min_value
        if np.any(bad):
            op = ">" if strict_min else ">="
            raise ValueError(
                f"`{name}` entries must be {op} {min_value}, got {array.tolist()}."
            )
    array.setflags(write=False)
    return array


def check_k_of_n(k: object, n: object) -> tuple[int, int]:
    """Check a recovery threshold `k` against the number of workers `n`.

    Parameters
    ----------
    k, n : int
        Recovery threshold and number of workers, ``1 <= k <= n``.

    Returns
    -------
    tuple of int
        ``(k, n)``.

    Examples
    --------
    >>> check_k_of_n(6, 8)
    (6, 8)
    """
    n = check_int(n, "n", min_value=1)
    k = check_int(k, "k", min_value=1)
    if k > n:
        raise ValueError(f"`k` must satisfy 1 <= k <= n, got k={k}, n={n}.")
    return k, n


def check_levels(n: int, levels: object) -> tuple[tuple[int, int], ...]:
    """Check a multi-level code layout against `n` workers.

    Parameters
    ----------
    n : int
        Number of workers.
    levels : sequence of (int, int)
        ``(n_l, k_l)`` per level, outermost first: ``prod_l n_l = n``,
        ``1 <= k_l <= n_l``, ``n_l >= 2`` when there are several levels (so at
        most ``log2(n)`` levels).

    Returns
    -------
    tuple of (int, int)

    Examples
    --------
    >>> check_levels(64, [(8, 7), [8, 6]])
    ((8, 7), (8, 6))
    """
    n = check_int(n, "n", min_value=1)
    if isinstance(levels, str) or not isinstance(levels, Sequence):
        raise TypeError(
            "`levels` must be a sequence of (n_l, k_l) pairs, outermost first, "
            f"got {type(levels).__name__}."
        )
    if not levels:
        raise ValueError("`levels` must hold at least one (n_l, k_l) pair, got ().")
    depth = max(1, int(math.log2(n)))  # n = 1 allows one level, of n_l = 1
    if len(levels) > depth:
        raise ValueError(
            f"`levels` has {len(levels)} levels but n={n} workers allow at most "
            f"{depth}: every level splits its groups into at least 2, so L levels "
            f"need n >= 2^L workers; use fewer levels (or more workers)."
        )
    pairs = []
    for i, pair in enumerate(levels):
        if isinstance(pair, str) or not isinstance(pair, Sequence) or len(pair) != 2:
            raise TypeError(f"`levels[{i}]` must be an (n_l, k_l) pair, got {pair!r}.")
        size = check_int(pair[0], f"levels[{i}][0] (n_l)", min_value=1)
        k = check_int(pair[1], f"levels[{i}][1] (k_l)", min_value=1)
        if size < 2 and len(levels) > 1:
            raise ValueError(
                f"`levels[{i}]` has n_l={size}: a level of a multi-level layout "
                "splits each group into at least 2; drop that level."
            )
        if k > size:
            raise ValueError(
                f"`levels[{i}]` must satisfy 1 <= k_l <= n_l, got (n_l, k_l) = "
                f"({size}, {k}); lower k_l to at most {size}."
            )
        pairs.append((size, k))
    product = math.prod(size for size, _ in pairs)
    if product != n:
        raise ValueError(
            f"the group sizes of `levels` {[s for s, _ in pairs]} multiply to "
            f"{product}, not the n={n} workers: each level must divide the workers "
            "into equal groups, so the sizes must be a factorisation of n."
        )
    return tuple(pairs)


def is_prime(value: int) -> bool:
    """Return whether `value` is prime (deterministic Miller-Rabin below 3.3e24).

    Parameters
    ----------
    value : int
        Candidate.

    Returns
    -------
    bool

    Examples
    --------
    >>> is_prime(65537), is_prime(65535)
    (True, False)
    """
    if value < 2:
        return False
    small = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)
    for q in small:
        if value % q == 0:
            return value == q
    d, s = value - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for witness in small:
        x = pow(witness, d, value)
        if x in (1, value - 1):
            continue
        for _ in range(s - 1):
            x = x * x % value
            if x == value - 1:
                break
        else:
            return False
    return True


def check_prime(value: object, name: str = "p") -> int:
    """Return `value` as an int after checking that it is prime.

    Parameters
    ----------
    value : int
        Candidate prime.
    name : str
        Argument name used in messages.

    Returns
    -------
    int

    Examples
    --------
    >>> check_prime(65537)
    65537
    """
    value = check_int(value, name, min_value=2)
    if not is_prime(value):
        raise ValueError(f"`{name}` must be prime, got {name}={value}.")
    return value


def check_finite_matrix(
    values: object,
    name: str,
    *,
    ndim: int | Sequence[int] = 2,
    keep_float32: bool = False,
) -> np.ndarray:
    """Return `values` as a numeric array with no NaN or inf, checking `ndim`.

    Parameters
    ----------
    values : array_like
        Real or integer array.
    name : str
        Argument name used in messages.
    ndim : int or sequence of int
        Allowed numbers of dimensions.
    keep_float32 : bool
        Return a float32 array as it is (no float64 copy).

    Returns
    -------
    numpy.ndarray
        The array (integer dtypes are kept, others become float64, float32
        too unless `keep_float32`).

    Examples
    --------
    >>> check_finite_matrix([[1, 2]], "A").dtype.kind
    'i'
    """
    if is_sparse(values):
        raise TypeError(
            f"`{name}` is a sparse matrix ({type(values).__name__}); coded encodes "
            f"dense arrays only: pass `{name}.toarray()` (coded shares of a sparse "
            "matrix are dense in general)."
        )
    try:
        array = np.asarray(values)
    except ValueError as error:  # ragged nested sequences
        raise ValueError(
            f"`{name}` must be a rectangular array, got {type(values).__name__} "
            f"that numpy cannot convert ({error})."
        ) from None
    allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
    if array.dtype == np.bool_ or array.dtype.kind not in "iuf":
        raise TypeError(
            f"`{name}` must be a real or integer array, got dtype {array.dtype}."
        )
    check_ndim(array.shape, name, allowed)
    if array.dtype.kind == "f":
        if not (keep_float32 and array.dtype == np.float32):
            array = array.astype(np.float64, copy=False)
        if not all_finite(array):
            raise ValueError(non_finite_message(array, name))
    return array


def check_ndim(shape: tuple[int, ...], name: str, allowed: Sequence[int]) -> None:
    """Raise a ValueError, with a reshape to suggest, if ``len(shape)`` is not allowed.

    Parameters
    ----------
    shape : tuple of int
        The array's shape.
    name : str
        Argument name used in messages.
    allowed : sequence of int
        Allowed numbers of dimensions.

    Examples
    --------
    >>> check_ndim((4, 5, 10), "A", (2,))
    Traceback (most recent call last):
    ...
    ValueError: `A` must have ndim in (2,), got shape (4, 5, 10). Reshape it to \
2-D: A.reshape(-1, 10) stacks the rows of its 4 matrices (reshape the product back \
after), A.reshape(4, -1) merges its trailing axes.
    """
    allowed = tuple(allowed)
    ndim = len(shape)
    if ndim in allowed:
        return
    message = f"`{name}` must have ndim in {allowed}, got shape {shape}."
    if ndim > max(allowed) == 1:
        raise ValueError(f"{message} Flatten it: {name}.reshape(-1).")
    if ndim > max(allowed):
        raise ValueError(
            f"{message} Reshape it to 2-D: {name}.reshape(-1, {shape[-1]}) stacks "
            f"the rows of its {math.prod(shape[:-2])} matrices (reshape the product "
            f"back after), {name}.reshape({shape[0]}, -1) merges its trailing axes."
        )
    target = min(allowed)
    raise ValueError(
        f"{message} Pass a {target}-D array, e.g. "
        f"{'np.atleast_2d' if target == 2 else 'np.atleast_1d'}({name})."
    )


def non_finite_message(array: np.ndarray, name: str) -> str:
    """Return the message for an array with NaN or inf: where the first one is.

    Parameters
    ----------
    array : numpy.ndarray
        A float array holding at least one NaN or infinity.
    name : str
        Argument name used in messages.

    Returns
    -------
    str

    Examples
    --------
    >>> non_finite_message(np.array([[1.0, 2.0], [np.nan, np.inf]]), "A")
    '`A` must be finite (no NaN or inf). A[1, 0] is nan (the first of 2 \
non-finite entries): drop or fill them first, e.g. np.nan_to_num(A) or the rows \
where np.isfinite(A).all(axis=1).'
    """
    bad = ~np.isfinite(array)
    where = tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), array.shape))
    index = ", ".join(map(str, where))
    rows = (
        f"np.isfinite({name}).all(axis=1)"
        if array.ndim == 2
        else f"np.isfinite({name})"
    )
    return (
        f"`{name}` must be finite (no NaN or inf). {name}[{index}] is "
        f"{array[where]} (the first of {int(bad.sum())} non-finite entries): drop "
        f"or fill them first, e.g. np.nan_to_num({name}) or the rows where {rows}."
    )


def check_installed(
    modules: Sequence[str], *, extra: str, needed_by: str, instead: str = ""
) -> None:
    """Raise ModuleNotFoundError naming the extra to install if a module is missing.

    Looks the modules up without importing them (``importlib.util.find_spec``).

    Parameters
    ----------
    modules : sequence of str
        Top-level modules of the optional dependencies.
    extra : str
        The distribution's extra that installs them.
    needed_by : str
        What needs them, as the message's subject (an argument, a method).
    instead : str
        Another remedy, for the message (e.g. "pass output='dict'").

    Raises
    ------
    ModuleNotFoundError
        A module is missing; its ``name`` is the first missing one.

    Examples
    --------
    >>> check_installed(["numpy"], extra="dev", needed_by="`x`")
    >>> check_installed(["no_such_module"], extra="dev", needed_by="`x='y'`")
    Traceback (most recent call last):
    ...
    ModuleNotFoundError: `x='y'` needs no_such_module, which is not installed: \
install the 'dev' extra, pip install "coded-computing[dev]" (in a checkout: \
pip install -e ".[dev]").
    """
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        remedy = (
            f"install the '{extra}' extra, pip install \"coded-computing[{extra}]\" "
            f'(in a checkout: pip install -e ".[{extra}]")'
        )
        raise ModuleNotFoundError(
            f"{needed_by} needs {' and '.join(missing)}, which "
            f"{'is' if len(missing) == 1 else 'are'} not installed: {remedy}"
            f"{f', or {instead}' if instead else ''}.",
            name=missing[0],
        )


def all_finite(array: np.ndarray) -> bool:
    """Whether a float array holds no NaN or inf: one pass, no temporary array.

    A NaN or an infinity makes the sum NaN or infinite; a finite sum therefore
    settles it. Only a sum that overflows needs the second look: min and max
    (which propagate NaN and reach +-inf).

    Parameters
    ----------
    array : numpy.ndarray
        Floating-point array of any shape.

    Returns
    -------
    bool

    Examples
    --------
    >>> all_finite(np.array([1e308, 1e308])), all_finite(np.array([1.0, np.nan]))
    (True, False)
    """
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(array.sum()):
            return True
    return bool(np.isfinite(array.min()) and np.isfinite(array.max()))


def is_sparse(values: object) -> bool:
    """Return whether `values` is a scipy.sparse matrix or array.

    Does not import scipy (a value can only be sparse once it is loaded).

    Parameters
    ----------
    values : object
        Anything.

    Examples
    --------
    >>> import numpy as np
    >>> is_sparse(np.eye(2))
    False
    """
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and bool(sparse.issparse(values))


Options = TypeVar("Options", bound="DataclassInstance")


def replace_options(
    options: Options | None, kind: type[Options], fields: Mapping[str, Any], caller: str
) -> Options:
    """Return `options` (default: ``kind()``) with the keyword `fields` replaced.

    Parameters
    ----------
    options : dataclass instance or None
        The caller's `options` argument, an instance of `kind`.
    kind : type
        A dataclass of options whose fields all have defaults (validated in its
        ``__post_init__``, which runs again on the replaced copy).
    fields : mapping
        The caller's ``**keywords``: fields of `kind` to replace.
    caller : str
        The public function's name, for the messages.

    Returns
    -------
    object
        `options`, or a copy of it (of the defaults) with `fields` replaced.

    Raises
    ------
    TypeError
        `options` is not a `kind` or None, or a keyword is not a field of `kind`.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Options:
    ...     timeout: float = 1.0
    >>> replace_options(None, Options, {"timeout": 2.0}, caller="f")
    Options(timeout=2.0)
    """
    label = f"{kind.__module__.split('.')[0]}.{kind.__name__}"
    if options is not None and not isinstance(options, kind):
        raise TypeError(
            f"`options` must be a {label} or None, got {type(options).__name__}."
        )
    names = [field.name for field in dataclasses.fields(kind)]
    unknown = sorted(set(fields) - set(names))
    if unknown:
        raise TypeError(
            f"{caller}() got unexpected keyword arguments {unknown}; the execution "
            f"options are {names}."
        )
    base = kind() if options is None else options
    return dataclasses.replace(base, **fields) if fields else base


def warn_renamed(old: str, new: str, caller: str, *, stacklevel: int = 3) -> None:
    """Warn that `caller`'s spelling `old` is deprecated in favour of `new`.

    Old spellings of public arguments are accepted for one release with this
    :class:`DeprecationWarning`.

    Parameters
    ----------
    old, new : str
        The deprecated spelling and the one that replaced it, as the message
        shows them.
    caller : str
        The public function's name.
    stacklevel : int
        As in :func:`warnings.warn`: 3 points at the caller of the function
        that calls this one.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_renamed("`w0`", "`x0`", "f")
    >>> str(caught[0].message)
    'f(): `w0` is deprecated and will be removed in the next release; use `x0`.'
    """
    warnings.warn(
        f"{caller}(): {old} is deprecated and will be removed in the next release; "
        f"use {new}.",
        DeprecationWarning,
        stacklevel=stacklevel,
    )
