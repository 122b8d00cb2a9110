r"""An emulated network link: a token bucket on the bytes a node sends or receives.

For benchmarks and tests of the shuffle where the network, not the scheduler,
is the bottleneck (Li et al. throttle EC2 links to a few hundred Mbit/s to show
the coded shuffle's gain). Every node has an uplink and a downlink of ``rate``
bytes per second each (full duplex). A transfer of ``n`` bytes leaves its
sender's uplink ``n / rate`` seconds after the link is free and no earlier than
the frame is ready, and reaches its receiver when the receiver's downlink has
also carried it. The receiver then waits (sleeps) until that time: the real
transfer (through Dask, on one machine much faster) is hidden inside it.

This is a token bucket whose capacity is ``burst`` bytes (default 0: a pure
rate limiter) that carries one transfer at a time and never idles while a
transfer is ready (a transfer booked late fills an earlier idle interval);
virtual times are seconds on one clock shared by the nodes (``time.time`` of
one machine).
"""

from __future__ import annotations

import bisect
import threading
from dataclasses import dataclass, field

from theory.validation import check_real

__all__ = ["Link", "check_bandwidth"]


def check_bandwidth(bandwidth: object, name: str = "emulated_bandwidth") -> float:
    """Return `bandwidth` (bytes/s) as a float, ``> 0``; raise naming `name`.

    Examples
    --------
    >>> check_bandwidth(25e6)
    25000000.0
    """
    return check_real(bandwidth, name, min_value=0.0, strict_min=True)


@dataclass(slots=True, kw_only=True)
class Link:
    r"""One direction of one node's link: when a transfer finishes on it.

    Parameters
    ----------
    rate : float
        Bytes per second, ``> 0``.
    burst : float
        Bucket capacity in bytes, ``>= 0``: a link idle for a while may send
        this many bytes at once.

    Notes
    -----
    The link carries one transfer at a time at `rate`; a transfer of ``n``
    bytes, ready at ``a`` and not done before ``b`` (when the other end's
    link is done with it), takes the earliest idle interval of ``n / rate``
    seconds that starts no earlier than ``max(a - burst / rate, b - n / rate)``.
    The link is work-conserving: a transfer booked later (the tasks that book
    them run in no particular order) still takes an idle interval before the
    ones booked earlier, as a real link sends whatever is ready. So transfers
    that are ready at ``a`` end no earlier than ``a + (sum n_i - burst) /
    rate``. A sender's uplink and a receiver's downlink carry a frame's bytes
    at once (``a`` is when the uplink started it, ``b`` when it finished), as a
    switched network does.

    Examples
    --------
    >>> link = Link(rate=100.0)
    >>> link.reserve(50, ready=0.0), link.reserve(100, ready=0.0)
    (0.5, 1.5)
    >>> round(link.reserve(10, ready=3.0), 3), link.reserve(10, ready=3.0, after=5.0)
    (3.1, 5.0)
    >>> link.reserve(100, ready=1.6)  # idle from 1.5 to 3.0: fits before 3.0
    2.6
    """

    rate: float
    burst: float = 0.0
    busy: list[tuple[float, float]] = field(default_factory=list, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        self.rate = check_bandwidth(self.rate, "rate")
        self.burst = check_real(self.burst, "burst", min_value=0.0)

    def reserve(
        self, nbytes: int, *, ready: float, after: float = -float("inf")
    ) -> float:
        """Book `nbytes` ready at `ready`, done no earlier than `after`.

        Returns when the last byte passes (seconds on the shared clock).
        """
        length = nbytes / self.rate
        with self._lock:
            start = max(ready - self.burst / self.rate, after - length)
            for begin, end in self.busy:  # sorted by start, not overlapping
                if begin >= start + length:
                    break
                start = max(start, end)
            bisect.insort(self.busy, (start, start + length))
            return start + length
