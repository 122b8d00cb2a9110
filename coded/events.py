"""What the runtime's pure state machines share: timed events and the clock tick.

Public within the project: ``coded.runtime``'s run state and ``mapreduce``'s job
state (events in, actions out, no Dask, no clock) build their events on
:class:`TimedEvent` and are woken by the same :class:`Tick`. This module imports
only the standard library, so a pure state machine that uses it loads no Dask
(``coded.runtime``, whose package loads ``distributed``, is not imported).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Tick", "TimedEvent"]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class TimedEvent:
    """An event for a state machine, stamped with the driver's clock.

    Subclasses are frozen keyword-only dataclasses built the same way
    (``@dataclass(frozen=True, slots=True, kw_only=True)``) that add their
    fields after `now` (and compare by value unless they say ``eq=False``).

    Parameters
    ----------
    now : float
        When the driver saw the event, in seconds on its monotonic clock
        (``time.perf_counter``); the state reads time only from events, so any
        order of events can be replayed in a test.
    """

    now: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Tick(TimedEvent):
    """Time passed: timeouts, backups and straggler cuts are decided on it.

    Parameters
    ----------
    now : float
        As in :class:`TimedEvent`.

    Examples
    --------
    >>> Tick(now=1.5)
    Tick(now=1.5)
    """
