"""Random number generators: one normalisation for every stochastic function."""

from __future__ import annotations

import numpy as np

__all__ = ["RngLike", "as_generator", "spawn_generators"]

RngLike = np.random.Generator | np.random.SeedSequence | int | None


def as_generator(rng: RngLike = None) -> np.random.Generator:
    """Return a `numpy.random.Generator` for `rng`.

    Parameters
    ----------
    rng : Generator, SeedSequence, int or None
        A generator is passed through unchanged; anything else seeds a new one.

    Returns
    -------
    numpy.random.Generator

    Examples
    --------
    >>> g = as_generator(7)
    >>> as_generator(g) is g
    True
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, bool) or not (
        rng is None or isinstance(rng, int | np.integer | np.random.SeedSequence)
    ):
        raise TypeError(
            "`rng` must be a numpy Generator, SeedSequence, int or None, "
            f"got {type(rng).__name__}."
        )
    return np.random.default_rng(rng)


def spawn_generators(seed: int | np.random.SeedSequence, count: int) -> list:
    """Return `count` independent generators spawned from one seed.

    Parameters
    ----------
    seed : int or SeedSequence
        Root seed.
    count : int
        Number of independent streams.

    Returns
    -------
    list of numpy.random.Generator

    Examples
    --------
    >>> [g.integers(10) for g in spawn_generators(3, 2)] == [
    ...     g.integers(10) for g in spawn_generators(3, 2)]
    True
    """
    root = (
        seed
        if isinstance(seed, np.random.SeedSequence)
        else np.random.SeedSequence(seed)
    )
    return [np.random.default_rng(s) for s in root.spawn(count)]
