r"""Network models of a shuffle: a shared multicast link and a switched network.

A shuffle is described by bytes alone: the bytes of each transmission for the
shared link, and per-node upload and download bytes for the switched network.
See docs/theory/network.md.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np

from theory.validation import check_real

__all__ = ["shuffle_seconds_multicast", "shuffle_seconds_switched"]


def _bytes_vector(values: Sequence[float], name: str) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim != 1 or not np.all(np.isfinite(array)) or np.any(array < 0):
        raise ValueError(f"`{name}` must be a 1-D sequence of bytes >= 0.")
    return array


def shuffle_seconds_multicast(
    transmission_bytes: Sequence[float],
    bandwidth: float,
    *,
    latency_seconds: float = 0.0,
) -> float:
    r"""Shuffle time on a shared link where one transmission reaches every node.

    Parameters
    ----------
    transmission_bytes : sequence of float
        Bytes of each transmission (a multicast counted once).
    bandwidth : float
        Bytes per second of the shared link, ``> 0``.
    latency_seconds : float
        Fixed cost of each transmission, ``>= 0``.

    Returns
    -------
    float
        :math:`\sum_t (b_t / B + \alpha)`: transmissions take turns on the link
        (the papers' model, in which the load ``L`` is the time over ``Q N T / B``).

    Examples
    --------
    >>> shuffle_seconds_multicast([1e6, 1e6], 1e7)
    0.2
    """
    sizes = _bytes_vector(transmission_bytes, "transmission_bytes")
    bandwidth = check_real(bandwidth, "bandwidth", min_value=0.0, strict_min=True)
    latency = check_real(latency_seconds, "latency_seconds", min_value=0.0)
    return float(sizes.sum() / bandwidth + latency * sizes.size)


def shuffle_seconds_switched(
    upload_bytes: Sequence[float],
    download_bytes: Sequence[float],
    bandwidth: float | Sequence[float],
    *,
    download_bandwidth: float | Sequence[float] | None = None,
    messages: Sequence[float] | None = None,
    latency_seconds: float = 0.0,
) -> float:
    r"""Shuffle time on a switched network with a full-duplex link per node.

    Parameters
    ----------
    upload_bytes, download_bytes : sequence of float
        Bytes each node sends and receives.
    bandwidth : float or sequence of float
        Bytes per second of each node's upload, ``> 0``: one for all nodes or
        one per node (links may differ).
    download_bandwidth : float or sequence of float, optional
        Bytes per second of each node's download (default: `bandwidth`);
        ``math.inf`` for links limited on upload only (a node's egress shaped,
        as ``coded.runtime.ShapedCluster`` shapes it).
    messages : sequence of float, optional
        Messages each node sends or receives, for the latency term.
    latency_seconds : float
        Fixed cost of each message at a node, ``>= 0``.

    Returns
    -------
    float
        :math:`\max_k \big(\max(u_k / B_k, d_k / D_k) + \alpha m_k\big)`: the
        busiest link, assuming the transfers are scheduled so that no link idles
        while it has bytes left (the switch fabric itself never limits).

    Notes
    -----
    A packet for ``g`` receivers crosses ``g`` download links whatever the
    delivery, so no coded shuffle brings a node's download below the bytes it
    lacks; coding can only move upload work between nodes (see
    docs/theory/network.md).

    Examples
    --------
    >>> shuffle_seconds_switched([3e6, 1e6], [1e6, 2e6], 1e7)
    0.3
    >>> shuffle_seconds_switched([3e6, 1e6], [1e6, 2e6], [1e7, 2.5e6],
    ...                          download_bandwidth=float("inf"))
    0.4
    """
    up = _bytes_vector(upload_bytes, "upload_bytes")
    down = _bytes_vector(download_bytes, "download_bytes")
    if up.shape != down.shape:
        raise ValueError(
            "`upload_bytes` and `download_bytes` must have one entry per node, got "
            f"{up.size} and {down.size}."
        )
    rate_up = _rates(bandwidth, up.size, "bandwidth")
    rate_down = (
        rate_up
        if download_bandwidth is None
        else _rates(download_bandwidth, up.size, "download_bandwidth")
    )
    latency = check_real(latency_seconds, "latency_seconds", min_value=0.0)
    count = (
        np.zeros_like(up) if messages is None else _bytes_vector(messages, "messages")
    )
    if count.shape != up.shape:
        raise ValueError(
            f"`messages` must have one entry per node ({up.size}), got {count.size}."
        )
    if up.size == 0:
        return 0.0
    busiest = np.maximum(up / rate_up, down / rate_down)
    return float(np.max(busiest + latency * count))


def _rates(values: float | Sequence[float], nodes: int, name: str) -> np.ndarray:
    """Bytes/s per node, ``> 0`` (``inf``: unlimited), from one or one per node."""
    items = [values] * nodes if isinstance(values, numbers.Real) else list(values)
    if len(items) != nodes or not all(
        isinstance(v, numbers.Real) and not isinstance(v, bool) and v > 0 for v in items
    ):
        raise ValueError(
            f"`{name}` must be one rate > 0 (bytes/s) or one per node ({nodes}), "
            f"got {values!r}."
        )
    return np.array(items, dtype=float)
