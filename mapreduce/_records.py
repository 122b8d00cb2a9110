"""What a MapReduce job returns: its frozen record and result.

Defined below both the job API (``mapreduce._job``) and its Dask execution
(``mapreduce._runtime``), which import it; it imports neither.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from mapreduce._plan import ShufflePlan

__all__ = ["MapReduceRecord", "MapReduceResult", "plan_record_fields"]


@dataclass(frozen=True, slots=True, kw_only=True)
class MapReduceRecord:
    r"""What a MapReduce job sent and how long each stage took.

    Parameters
    ----------
    K, N : int
        Nodes and files.
    r : Fraction
        Computation load of the placement.
    is_coded : bool
        Whether the shuffle was coded.
    load : Fraction
        Paper-model load of the plan (a multicast counts once), over ``Q N T``.
    unicast_load : Fraction
        The plan's load when every packet goes to each receiver separately.
    packets : int
        Number of packets.
    intermediate_bytes : int
        Bytes of all intermediate values (every file, every reducer): the
        measured ``Q N T``.
    packet_bytes : int
        Bytes of all packet payloads, each counted once (padding included).
    wire_bytes : int
        Bytes moved between Dask workers during the job, from the workers'
        ``transfer_incoming_log`` (Dask's ``sizeof`` of each transferred object;
        Dask has no multicast, so a packet crosses the wire once per receiver).
    map_seconds, shuffle_seconds, reduce_seconds : float
        Wall-clock seconds of each stage, seen from the client.

    Notes
    -----
    The measured paper-model load is ``packet_bytes / intermediate_bytes``; it
    matches `load` up to padding and uneven value sizes.
    """

    K: int
    N: int
    r: Fraction
    is_coded: bool
    load: Fraction
    unicast_load: Fraction
    packets: int
    intermediate_bytes: int
    packet_bytes: int
    wire_bytes: int
    map_seconds: float
    shuffle_seconds: float
    reduce_seconds: float

    @property
    def measured_load(self) -> float:
        """``packet_bytes / intermediate_bytes`` (0 when nothing was produced)."""
        return (
            self.packet_bytes / self.intermediate_bytes
            if self.intermediate_bytes
            else 0.0
        )

    @property
    def total_seconds(self) -> float:
        """Map + shuffle + reduce seconds."""
        return self.map_seconds + self.shuffle_seconds + self.reduce_seconds


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class MapReduceResult:
    """Output of a MapReduce job and its record.

    Parameters
    ----------
    output : dict
        ``key -> reduce_fn(key, values)``, reducer 0's keys first, each reducer's
        keys in sorted order when they are comparable.
    record : MapReduceRecord
        Loads, bytes and stage times.
    """

    output: dict[Hashable, Any]
    record: MapReduceRecord


def plan_record_fields(plan: ShufflePlan) -> dict[str, Any]:
    """Return the record fields that come from the plan alone."""
    return {
        "K": plan.placement.K,
        "N": plan.placement.N,
        "r": plan.placement.r,
        "is_coded": plan.is_coded,
        "load": plan.load,
        "unicast_load": plan.unicast_load,
        "packets": len(plan.packets),
    }
