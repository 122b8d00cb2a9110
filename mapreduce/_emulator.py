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
rate limiter); virtual times are seconds on one clock shared by the nodes
(``time.time`` of one machine).
"""

from __future__ import annotations

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
    Transfer ``i`` of ``n_i`` bytes, ready at ``a_i`` and not done before
    ``b_i`` (when the other end's link is done with it), finishes at
    ``t_i = max(max(a_i - burst / rate, t_{i-1}) + n_i / rate, b_i)``
    (``t_0 = -inf``), so any transfers that start at ``a`` end no earlier than
    ``a + (sum n_i - burst) / rate``. A sender's uplink and a receiver's
    downlink carry a frame's bytes at once (``a`` is when the uplink started
    it, ``b`` when it finished), as a switched network does.

    Examples
    --------
    >>> link = Link(rate=100.0)
    >>> link.reserve(50, ready=0.0), link.reserve(100, ready=0.0)
    (0.5, 1.5)
    >>> round(link.reserve(10, ready=3.0), 3), link.reserve(10, ready=3.0, after=5.0)
    (3.1, 5.0)
    """

    rate: float
    burst: float = 0.0
    free_at: float = -float("inf")
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
        with self._lock:
            start = max(ready - self.burst / self.rate, self.free_at)
            self.free_at = max(start + nbytes / self.rate, after)
            return self.free_at
