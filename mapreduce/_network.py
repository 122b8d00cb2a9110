r"""Who sends and receives how many bytes in a shuffle, and what that costs.

Packets with the same sender and receivers travel together in one *frame*: an
``int64`` header (the number of packets, then every segment's true length)
followed by the packets' XOR payloads. Delivery is ``"unicast"`` (the sender sends
the frame to each receiver) or ``"forward"`` (the sender sends it once, to the
first receiver, and each receiver passes it to the next). The network models are
:func:`theory.shuffle_seconds_multicast` and :func:`theory.shuffle_seconds_switched`
(docs/theory/network.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from mapreduce._coding import packet_payload_bytes
from mapreduce._placement import Placement
from mapreduce._plan import Packet, ShufflePlan, plan_shuffle
from theory import shuffle_seconds_multicast, shuffle_seconds_switched

__all__ = [
    "DELIVERIES",
    "FRAME_HEADER_BYTES",
    "NETWORKS",
    "Frame",
    "Traffic",
    "frames_of",
    "plan_traffic",
    "predict_shuffle_seconds",
]

Delivery = Literal["unicast", "forward"]
Network = Literal["switched", "multicast"]
DELIVERIES: tuple[str, ...] = ("unicast", "forward")
NETWORKS: tuple[str, ...] = ("switched", "multicast")
FRAME_HEADER_BYTES = 8  # per int64 of a frame's header
Lengths = Mapping[int, Sequence[int]]  # file -> byte length of its value per reducer


@dataclass(frozen=True, slots=True, kw_only=True)
class Frame:
    """The packets one sender sends to one tuple of receivers, sent together."""

    sender: int
    receivers: tuple[int, ...]
    packets: tuple[Packet, ...]

    @property
    def header_bytes(self) -> int:
        """Header: one ``int64`` for the count and one per segment length."""
        segments = sum(len(p.segments) for p in self.packets)
        return FRAME_HEADER_BYTES * (1 + segments)

    @property
    def chain(self) -> tuple[int, ...]:
        """Forwarding order: the receivers cyclically after the sender's index.

        Rotating the start spreads the forwarding uploads over the receivers.
        """
        later = [k for k in self.receivers if k > self.sender]
        return (*later, *(k for k in self.receivers if k < self.sender))

    def hops(self, delivery: str) -> tuple[tuple[int, int], ...]:
        """(source, target) of every transfer of the frame under `delivery`."""
        if delivery == "unicast":
            return tuple((self.sender, k) for k in self.receivers)
        chain = self.chain
        return tuple(zip((self.sender, *chain[:-1]), chain, strict=True))

    def nbytes(self, lengths: Lengths) -> int:
        """Header plus payloads, given ``lengths[file][receiver]`` in bytes."""
        payload = sum(packet_payload_bytes(p, lengths) for p in self.packets)
        return self.header_bytes + payload


def frames_of(plan: ShufflePlan) -> tuple[Frame, ...]:
    """Group the plan's packets by (sender, receivers), in plan order."""
    grouped: dict[tuple[int, tuple[int, ...]], list[Packet]] = {}
    for packet in plan.packets:
        grouped.setdefault((packet.sender, packet.receivers), []).append(packet)
    return tuple(
        Frame(sender=s, receivers=rs, packets=tuple(ps))
        for (s, rs), ps in grouped.items()
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Traffic:
    """Bytes of a shuffle per node (index = node) under one delivery mode.

    Parameters
    ----------
    upload, download : tuple of int
        Bytes each node sends and receives.
    origin_upload : tuple of int
        Bytes each node sends of the frames it built (forwarding excluded).
    messages : tuple of int
        Frames each node sends or receives.
    transmission_bytes : tuple of int
        Bytes of each frame counted once (what a multicast link carries).
    """

    upload: tuple[int, ...]
    download: tuple[int, ...]
    origin_upload: tuple[int, ...]
    messages: tuple[int, ...]
    transmission_bytes: tuple[int, ...]


def _as_lengths(plan: ShufflePlan, value_bytes: int | Lengths) -> Lengths:
    if isinstance(value_bytes, Mapping):
        return value_bytes
    if isinstance(value_bytes, bool) or not isinstance(value_bytes, int):
        raise TypeError(
            "`value_bytes` must be an int or a mapping file -> lengths, got "
            f"{type(value_bytes).__name__}."
        )
    if value_bytes < 0:
        raise ValueError(f"`value_bytes` must be >= 0, got {value_bytes}.")
    K = plan.placement.K
    return dict.fromkeys(range(plan.placement.N), (value_bytes,) * K)


def _check_choice(value: object, name: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"`{name}` must be one of {allowed}, got {value!r}.")
    return str(value)


def plan_traffic(
    plan: ShufflePlan, delivery: Delivery = "unicast", value_bytes: int | Lengths = 1
) -> Traffic:
    r"""Bytes each node uploads and downloads when `plan` runs with `delivery`.

    Parameters
    ----------
    plan : ShufflePlan
        The shuffle.
    delivery : {"unicast", "forward"}
        Unicast: the sender uploads a frame once per receiver. Forward: the
        sender uploads it once, receiver ``i`` passes it to receiver ``i + 1``.
    value_bytes : int or mapping
        Bytes of every intermediate value, or ``lengths[file][receiver]``.

    Returns
    -------
    Traffic

    Notes
    -----
    A frame of ``b`` bytes for ``g`` receivers costs ``g b`` of download in both
    modes; unicast puts ``g b`` of upload on the sender, forwarding ``b`` on the
    sender and ``b`` on each of the first ``g - 1`` receivers.

    Examples
    --------
    >>> from mapreduce import place_li, plan_shuffle
    >>> plan = plan_shuffle(place_li(3, 2))
    >>> plan_traffic(plan, "unicast", 90).upload
    (138, 138, 138)
    >>> plan_traffic(plan, "forward", 90).origin_upload
    (69, 69, 69)
    """
    delivery = _check_choice(delivery, "delivery", DELIVERIES)
    lengths = _as_lengths(plan, value_bytes)
    K = plan.placement.K
    up, down, origin, messages = [0] * K, [0] * K, [0] * K, [0] * K
    sizes = []
    for frame in frames_of(plan):
        size = frame.nbytes(lengths)
        sizes.append(size)
        hops = frame.hops(delivery)
        for source, target in hops:
            up[source] += size
            down[target] += size
            messages[source] += 1
            messages[target] += 1
        origin[frame.sender] += size * (len(hops) if delivery == "unicast" else 1)
    return Traffic(
        upload=tuple(up),
        download=tuple(down),
        origin_upload=tuple(origin),
        messages=tuple(messages),
        transmission_bytes=tuple(sizes),
    )


def predict_shuffle_seconds(
    plan: ShufflePlan,
    *,
    network: Network = "switched",
    delivery: Delivery = "unicast",
    bandwidth: float | Sequence[float] = 1e8,
    download_bandwidth: float | Sequence[float] | None = None,
    value_bytes: int | Lengths = 1_000_000,
    latency_seconds: float = 0.0,
) -> float:
    """Model time of `plan`'s shuffle: shared multicast link or switched network.

    Parameters
    ----------
    plan : ShufflePlan
        The shuffle.
    network : {"switched", "multicast"}
        Switched: every node has its own link of `bandwidth` bytes/s each way;
        multicast: one shared link on which a frame reaches all its receivers.
    delivery : {"unicast", "forward"}
        Delivery mode on the switched network (ignored for multicast).
    bandwidth : float or sequence of float
        Bytes per second of a link; on the switched network one per node may
        be given (the node's upload).
    download_bandwidth : float or sequence of float, optional
        Switched network: each node's download rate (default `bandwidth`;
        ``math.inf`` where only uploads are limited, as on links shaped by
        ``coded.runtime.ShapedCluster``).
    value_bytes : int or mapping
        See :func:`plan_traffic`.
    latency_seconds : float
        Fixed cost per frame (multicast) or per frame at a node (switched).

    Returns
    -------
    float
        Seconds.

    Examples
    --------
    >>> from mapreduce import place_li, plan_shuffle
    >>> placement = place_li(4, 2)
    >>> coded, uncoded = plan_shuffle(placement), plan_shuffle(placement, coded=False)
    >>> [round(predict_shuffle_seconds(p, network="multicast"), 4)
    ...  for p in (coded, uncoded)]
    [0.06, 0.12]
    >>> [round(predict_shuffle_seconds(p), 4) for p in (coded, uncoded)]
    [0.03, 0.03]
    """
    network = _check_choice(network, "network", NETWORKS)
    traffic = plan_traffic(plan, delivery, value_bytes)
    if network == "multicast":
        if not isinstance(bandwidth, (int, float)):
            raise ValueError("`bandwidth` of a multicast link must be one rate.")
        return shuffle_seconds_multicast(
            traffic.transmission_bytes, bandwidth, latency_seconds=latency_seconds
        )
    return shuffle_seconds_switched(
        traffic.upload,
        traffic.download,
        bandwidth,
        download_bandwidth=download_bandwidth,
        messages=traffic.messages,
        latency_seconds=latency_seconds,
    )


def model_prefers_coded(
    placement: Placement,
    *,
    delivery: Delivery = "unicast",
    bandwidth: float | Sequence[float] = 1e8,
    download_bandwidth: float | Sequence[float] | None = None,
) -> bool:
    """Whether the switched-network model says the coded shuffle is faster.

    The choice ``run_mapreduce(coded=None)`` makes: coded only if
    :func:`predict_shuffle_seconds` (switched network, `delivery`) of the coded
    plan is strictly below the uncoded plan's (ties go to uncoded).

    Parameters
    ----------
    placement : Placement
        Where the files are mapped.
    delivery : {"unicast", "forward"}
        How a coded packet reaches its receivers.
    bandwidth, download_bandwidth : float or sequence of float
        The links (see :func:`predict_shuffle_seconds`). With equal links
        the choice does not depend on their rate; ``run_mapreduce`` passes
        none, so it assumes equal links.

    Returns
    -------
    bool

    Examples
    --------
    On a switched network Li's coded shuffle moves the bytes the uncoded one
    does, so the tie keeps the uncoded shuffle:

    >>> from mapreduce import place_li
    >>> placement = place_li(8, 3)
    >>> [model_prefers_coded(placement, delivery=d) for d in ("unicast", "forward")]
    [False, False]
    """
    times = [
        predict_shuffle_seconds(
            plan_shuffle(placement, coded=coded),
            network="switched",
            delivery=delivery,
            bandwidth=bandwidth,
            download_bandwidth=download_bandwidth,
        )
        for coded in (True, False)
    ]
    return times[0] < times[1] * (1 - 1e-9)
