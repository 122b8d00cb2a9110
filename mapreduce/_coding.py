"""Byte-level coding of shuffle packets: split values, XOR segments, decode.

Values are ``bytes``; a value cut into ``count`` segments is split like
``numpy.array_split`` (lengths differ by at most one). A packet XORs its segments
zero-padded to the longest and carries every segment's true length.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

import numpy as np

from mapreduce._plan import Packet, Segment

__all__ = [
    "build_packet",
    "decode_received",
    "decode_segment",
    "encode_packet",
    "join_segments",
    "packet_payload_bytes",
    "split_value",
]

# file -> one value (bytes) per reducer node: what a node's map of that file produced
MapOutputs = Mapping[int, Sequence[bytes]]
EncodedPacket = tuple[tuple[int, ...], np.ndarray]


def split_value(value: bytes, count: int) -> list[np.ndarray]:
    """Cut `value` into `count` uint8 segments (``numpy.array_split``)."""
    return np.array_split(np.frombuffer(value, dtype=np.uint8), count)


def _xor_padded(parts: Sequence[np.ndarray], length: int) -> np.ndarray:
    out = np.zeros(length, dtype=np.uint8)
    for part in parts:
        out[: part.size] ^= part
    return out


def encode_packet(parts: Sequence[np.ndarray]) -> tuple[tuple[int, ...], np.ndarray]:
    """XOR `parts` (zero-padded) and return ``(lengths, payload)``."""
    lengths = tuple(part.size for part in parts)
    return lengths, _xor_padded(parts, max(lengths, default=0))


def decode_segment(
    payload: np.ndarray, known: Sequence[np.ndarray], length: int
) -> np.ndarray:
    """Cancel the `known` segments from `payload`; keep the first `length` bytes."""
    if any(part.size > payload.size for part in known) or length > payload.size:
        raise ValueError(
            f"a segment is longer than the payload ({payload.size} bytes); the "
            "packet and the side information disagree."
        )
    out = payload[:length].copy()  # zero padding beyond `length` is never kept
    for part in known:
        n = min(part.size, length)
        out[:n] ^= part[:n]
    return out


def join_segments(parts: Sequence[np.ndarray]) -> bytes:
    """Concatenate segments (in index order) back into the value's bytes."""
    return b"".join(np.ascontiguousarray(part, dtype=np.uint8) for part in parts)


def _segment_bytes(maps: MapOutputs, segment: Segment) -> np.ndarray:
    value = maps[segment.file][segment.receiver]
    return split_value(value, segment.count)[segment.index]


def build_packet(packet: Packet, maps: MapOutputs) -> EncodedPacket:
    """Encode `packet` at its sender from the sender's map outputs `maps`."""
    return encode_packet([_segment_bytes(maps, s) for s in packet.segments])


def decode_received(
    k: int, received: Sequence[tuple[Packet, EncodedPacket]], maps: MapOutputs
) -> dict[int, bytes]:
    """Decode node `k`'s packets with its own map outputs; join the lacking values.

    Returns ``file -> value for reducer k`` for every file whose segments arrived.
    """
    pieces: dict[int, dict[int, np.ndarray]] = defaultdict(dict)
    for packet, (lengths, payload) in received:
        position = packet.receivers.index(k)
        own = packet.segments[position]
        known = [_segment_bytes(maps, s) for s in packet.segments if s is not own]
        pieces[own.file][own.index] = decode_segment(payload, known, lengths[position])
    return {f: join_segments([p[i] for i in sorted(p)]) for f, p in pieces.items()}


def packet_payload_bytes(
    packet: Packet, value_bytes: Mapping[int, Sequence[int]]
) -> int:
    """Payload length of `packet` given ``value_bytes[file][receiver]`` lengths.

    Equals ``build_packet(packet, maps)[1].size`` without the values themselves.
    """

    def segment_length(s: Segment) -> int:
        length = value_bytes[s.file][s.receiver]
        return length // s.count + (s.index < length % s.count)

    return max((segment_length(s) for s in packet.segments), default=0)
