"""Test helpers: exact products, worker results, conditioning-scaled tolerances."""

import numpy as np

from coded.codes import Piece
from coded.codes import _generators as generators


def exact_product(A, B):
    """A @ B computed exactly (int64 or float64 of integer values)."""
    return np.asarray(A) @ np.asarray(B)


def worker_results(code, encoded, workers=None):
    workers = range(code.n) if workers is None else workers
    return {i: code.multiply(encoded.lefts[i], encoded.right(i)) for i in workers}


def feed(decoder, code, encoded, batches):
    """Add pieces ``(worker, start, stop)`` computed with ``code.multiply``."""
    for worker, start, stop in batches:
        value = code.multiply(encoded.lefts[worker][start:stop], encoded.right(worker))
        decoder.add(Piece(worker=worker, start=start, stop=stop, value=value))


def decoding_cond(code, units):
    """Condition number of the square system the decoder uses for `units`.

    Mirrors the documented rule: the first copy of each identity row, then the
    first non-identity rows up to K.
    """
    G = np.asarray(code.generator, dtype=np.float64)
    K = G.shape[1]
    seen, copies, others = set(), [], []
    for u in sorted(units):
        row = G[u]
        if np.count_nonzero(row) == 1 and row.max() == 1:
            j = int(np.argmax(row))
            if j not in seen:
                seen.add(j)
                copies.append(u)
        else:
            others.append(u)
    rows = copies + others[: K - len(copies)]
    s = np.linalg.svd(G[rows], compute_uv=False)
    return s[0] / s[-1]


def units_of(code, workers):
    bounds = code._offsets
    return [u for i in workers for u in range(bounds[i], bounds[i + 1])]


def assert_close_real(C, exact, cond):
    tol = 1e3 * np.finfo(np.float64).eps * max(cond, 1.0)
    scale = max(np.abs(exact).max(), 1.0)
    np.testing.assert_allclose(C, exact, rtol=tol, atol=tol * scale)


def assert_worst_condition_search_options(code):
    """`worst_condition_number` runs the generators' search with its options.

    For a code of 200 workers whose every condition number is 1 (the reported
    set is then the first draw): the same result as the search on its generator,
    the default budget (20000 samples, 8 starts of 199 steps), the seed used.
    """
    G = code.generator
    for options in (
        {"exact_limit": 1},  # the defaults: 20000 samples, 8 starts, seed 0
        {"exact_limit": 1, "samples": 4, "starts": 1, "rng": 3},
    ):
        assert code.worst_condition_number(
            **options
        ) == generators.worst_condition_number(G, **options)
    assert code.worst_condition_number(exact_limit=1).evaluated == 20_000 + 8 * 199
    seeded = code.worst_condition_number(exact_limit=1, samples=1, starts=1, rng=3)
    assert (
        seeded.survivors
        != code.worst_condition_number(exact_limit=1, samples=1, starts=1).survivors
    )
