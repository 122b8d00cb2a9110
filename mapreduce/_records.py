"""What a MapReduce job returns: its frozen record and result.

Defined below both the job API (``mapreduce._job``) and its Dask execution
(``mapreduce._runtime``), which import it; it imports neither.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from mapreduce._plan import ShufflePlan

if TYPE_CHECKING:
    from dask.bag import Bag
    from dask.dataframe import DataFrame

__all__ = ["MapReduceRecord", "MapReduceResult", "plan_record_fields"]


@dataclass(frozen=True, slots=True, kw_only=True)
class MapReduceRecord:
    r"""What a MapReduce job sent, to whom, and how long each stage took.

    Parameters
    ----------
    K, N : int
        Nodes and files.
    r : Fraction
        Computation load of the placement.
    is_coded : bool
        Whether the shuffle was coded.
    delivery : str
        ``"unicast"`` or ``"forward"`` (see :func:`mapreduce.plan_traffic`).
    load : Fraction
        Paper-model load of the plan that ran (a multicast counts once), over
        ``Q N T`` with ``Q = K`` (:func:`mapreduce.run_coded_maps`: over the
        ``q`` finishers' ``Q N T``, i.e. ``L(r, q)``; `N` is then the padded
        number of data files).
    unicast_load : Fraction
        The same plan's load when every packet goes to each receiver separately.
    packets : int
        Number of packets.
    tolerance : int
        Slow or lost mappers the placement tolerates (``min_f |storers(f)| - 1``;
        ``K - q`` for coded map tasks).
    stragglers : tuple of int
        Nodes whose unfinished maps were cancelled (their files were mapped by
        other holders; their finished maps still served as side information).
    lost_nodes : tuple of int
        Nodes lost during the map stage; their reduce ran on another node.
    cancelled_maps : int
        Map tasks cancelled because another holder had finished the file.
    intermediate_bytes : int
        Bytes of all intermediate values (every file, every reducer).
    packet_bytes : int
        Bytes of all packet payloads, each counted once (padding included).
    frame_header_bytes : int
        Framing overhead of all frames, each counted once
        (:data:`mapreduce.FRAME_HEADER_BYTES` per header entry).
    upload_bytes, download_bytes : tuple of int
        Bytes each node sent and received in the shuffle: the plan's frames
        (each one ``uint8`` array) sized by the values the maps produced, per
        hop of the delivery, plus values picked for a lost node's reducer.
        Dask has no multicast.
    origin_upload_bytes : tuple of int
        Bytes each node sent of the frames it built itself.
    map_seconds, shuffle_seconds, reduce_seconds : float
        Wall-clock seconds of each stage, seen from the client.
    pack_seconds, unpack_seconds : float
        Worker-side seconds spent encoding and decoding packets, at the busiest
        node (part of `shuffle_seconds`).
    emulated_bandwidth : float or None
        Bytes per second of every node's emulated uplink and downlink during
        the shuffle, or None when the shuffle ran at the cluster's own speed.
        The stage times of an emulated run are emulated, not measured on a real
        network of that speed.
    inputs_per_file : tuple of int or None
        How many input files each of the `N` files grouped (all ones when each
        input was its own file; :class:`mapreduce.MapReduceOptions`
        ``group_bytes``), or None when the files were cut from records
        (``split``) or from a Dask collection's partitions.

    Notes
    -----
    The measured paper-model load is ``packet_bytes / intermediate_bytes``; it
    matches `load` up to padding and uneven value sizes.
    """

    K: int
    N: int
    r: Fraction
    is_coded: bool
    delivery: str
    load: Fraction
    unicast_load: Fraction
    packets: int
    tolerance: int
    stragglers: tuple[int, ...]
    lost_nodes: tuple[int, ...]
    cancelled_maps: int
    intermediate_bytes: int
    packet_bytes: int
    frame_header_bytes: int
    upload_bytes: tuple[int, ...]
    download_bytes: tuple[int, ...]
    origin_upload_bytes: tuple[int, ...]
    map_seconds: float
    shuffle_seconds: float
    reduce_seconds: float
    pack_seconds: float
    unpack_seconds: float
    emulated_bandwidth: float | None = None
    inputs_per_file: tuple[int, ...] | None = None

    @property
    def wire_bytes(self) -> int:
        """Bytes moved between workers in total (``sum(download_bytes)``)."""
        return sum(self.download_bytes)

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
    output : dict, dask.bag.Bag or dask.dataframe.DataFrame
        ``key -> reduce_fn(key, values)``, reducer 0's keys first, each reducer's
        keys in sorted order when they are comparable; as a bag of
        ``(key, value)`` pairs or a dataframe with columns ``key`` and ``value``
        (one partition per reducer) when asked for.
    record : MapReduceRecord
        Loads, bytes and stage times.
    """

    output: dict[Hashable, Any] | Bag | DataFrame
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
