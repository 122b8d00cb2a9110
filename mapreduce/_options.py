"""How a MapReduce job runs: the frozen, validated options of ``run_mapreduce``.

Pure (no Dask): the job API builds one, the runtime reads its fields.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from mapreduce._emulator import check_bandwidth
from mapreduce._network import DELIVERIES
from theory.validation import (
    check_installed,
    check_real,
    replace_options,
    warn_renamed,
)

__all__ = [
    "OUTPUTS",
    "MapReduceOptions",
    "check_flag",
    "mapreduce_options",
    "worker_addresses",
]

OUTPUTS: tuple[str, ...] = ("dict", "bag", "dataframe")
# a map unit's default size: Dask's few milliseconds per task are under 1% of
# mapping it (count_words maps 16 MiB in about 1.5 s on one core), and it stays
# small next to a worker's memory
GROUP_BYTES = 16 * 2**20


@dataclass(frozen=True, slots=True, kw_only=True)
class MapReduceOptions:
    """How a MapReduce job runs: everything but the data, functions and placement.

    Pass one as ``run_mapreduce(..., options=MapReduceOptions(...))``.

    Parameters
    ----------
    delivery : {"unicast", "forward"}
        Unicast: a packet goes from its sender to each receiver. Forward: the
        sender uploads it once and each receiver passes it to the next.
    output : {"dict", "bag", "dataframe"}
        Return the output as a dict, a ``dask.bag`` of ``(key, value)`` pairs, or
        a ``dask.dataframe`` with columns ``key`` and ``value``, one partition per
        reducer.
    timeout : float
        Seconds each stage (map, shuffle, reduce) may take, ``> 0``; a stage
        still running then raises :class:`MapReduceTaskError`.
    straggler_slack : float
        Once ``K - tolerance`` nodes have mapped all their files (they hold every
        file, at time ``t_q``), a node still mapping is waited for only while
        its pace predicts it done by ``(1 + straggler_slack) t_q`` (and at least
        half a second after ``t_q``); then the unfinished maps are cancelled and
        the shuffle is planned on the maps that finished (``>= 0``; ``inf``
        waits for every map).
    progress : bool
        Show a progress bar per stage (tqdm).
    emulated_bandwidth : float, optional
        Emulate a network of this many bytes per second (``> 0``; 200 Mbit/s is
        ``25e6``) on every node's uplink and downlink in the shuffle, a token
        bucket per node and direction (docs/theory/network.md); the record says
        so (``record.emulated_bandwidth``). Default: the cluster's own network.
    group_bytes : int or None
        Group consecutive input files into files (map units) of about this many
        bytes (pickled), ``>= 1``; default 16 MiB. Many small inputs then run
        as a few map tasks per node instead of one per input and node, each
        calling ``map_fn`` on its inputs one by one. The number of files is
        ``C(K, r)`` times the least count that keeps them at most `group_bytes`
        on average (equal batches); inputs of about `group_bytes` or more stay
        one file each. The placement and the shuffle plan are over the grouped
        files (``record.N``, ``record.inputs_per_file``). It applies to a
        sequence of files without `split` or an explicit `placement`. ``None``:
        one file per input.
    speculate : bool
        With ``r >= 2``, submit the planned shuffle with the maps, so that each
        node packs and sends as soon as its own maps are done; the shuffle is
        cancelled and planned again when a straggler is cut or a node lost.
        ``False`` submits it once the map stage ends: the shuffle then does not
        overlap the maps, as a model of the shuffle alone assumes (the record's
        `shuffle_seconds` is that shuffle). An emulated network
        (`emulated_bandwidth`) never speculates: its links would keep a
        cancelled shuffle's bookings.

    Raises
    ------
    ValueError
        For an unknown `delivery` or `output`, ``timeout <= 0``,
        ``straggler_slack < 0``, ``emulated_bandwidth <= 0`` or
        ``group_bytes < 1``.
    TypeError
        If `speculate` or `progress` is not a bool.

    Examples
    --------
    >>> MapReduceOptions(timeout=30, straggler_slack=float("inf"))
    ... # doctest: +NORMALIZE_WHITESPACE
    MapReduceOptions(delivery='unicast', output='dict', timeout=30.0,
                     straggler_slack=inf, progress=False, emulated_bandwidth=None,
                     group_bytes=16777216, speculate=True)
    """

    delivery: Literal["unicast", "forward"] = "unicast"
    output: Literal["dict", "bag", "dataframe"] = "dict"
    timeout: float = 600.0
    straggler_slack: float = 0.5
    progress: bool = False
    emulated_bandwidth: float | None = None
    group_bytes: int | None = GROUP_BYTES
    speculate: bool = True

    def __post_init__(self) -> None:
        if self.delivery not in DELIVERIES:
            raise ValueError(
                f"`delivery` must be one of {DELIVERIES}, got {self.delivery!r}."
            )
        if self.output not in OUTPUTS:
            raise ValueError(f"`output` must be one of {OUTPUTS}, got {self.output!r}.")
        if self.output == "dataframe":  # a dask.dataframe: pandas and pyarrow
            check_installed(
                ["pandas", "pyarrow"],
                extra="dataframe",
                needed_by="`output='dataframe'`",
                instead="pass output='dict' or 'bag'",
            )
        fields = {
            "timeout": check_real(
                self.timeout, "timeout", min_value=0.0, strict_min=True
            ),
            "straggler_slack": _check_slack(self.straggler_slack),
            "progress": check_flag(self.progress, "progress"),
            "emulated_bandwidth": None
            if self.emulated_bandwidth is None
            else check_bandwidth(self.emulated_bandwidth),
            "group_bytes": _check_group_bytes(self.group_bytes),
            "speculate": check_flag(self.speculate, "speculate"),
        }
        for name, value in fields.items():
            object.__setattr__(self, name, value)


def check_flag(value: object, name: str, none: str | None = None) -> bool | None:
    """Return `value` as a bool; None stays None when `none` says what it means.

    Raises
    ------
    TypeError
        Anything but a bool (numpy's too), or None when `none` is None.
    """
    if value is None and none is not None:
        return None
    if isinstance(value, bool | np.bool_):
        return bool(value)
    allowed = "True or False" if none is None else f"True, False or None ({none})"
    raise TypeError(
        f"`{name}` must be {allowed}, got {type(value).__name__} {value!r}."
    )


def _check_slack(slack: object) -> float:
    if isinstance(slack, float) and slack == math.inf:
        return math.inf
    return check_real(slack, "straggler_slack", min_value=0.0)


def _check_group_bytes(group_bytes: object) -> int | None:
    if group_bytes is None:
        return None
    remedy = "bytes per grouped file, or None for one file per input"
    if isinstance(group_bytes, bool) or not isinstance(group_bytes, numbers.Integral):
        raise TypeError(
            f"`group_bytes` must be an int ({remedy}), got "
            f"{type(group_bytes).__name__} {group_bytes!r}."
        )
    if group_bytes < 1:
        raise ValueError(
            f"`group_bytes` must be >= 1 ({remedy}), got group_bytes={group_bytes}."
        )
    return int(group_bytes)


def mapreduce_options(
    options: MapReduceOptions | None, fields: dict[str, Any], caller: str
) -> MapReduceOptions:
    """Return `options` (default: the defaults) updated with deprecated keywords.

    The fields given as loose keywords (`fields`, the caller's old spellings)
    still work for one release, with a :class:`DeprecationWarning`.
    """
    options = replace_options(options, MapReduceOptions, fields, caller)
    if fields:
        names = ", ".join(f"{name}=..." for name in sorted(fields))
        warn_renamed(
            f"passing `{names}` as keywords",
            f"`options=MapReduceOptions({names})`",
            caller,
            stacklevel=4,
        )
    return options


def worker_addresses(client: Any, K: int) -> list[str]:
    """Return the addresses of the first `K` workers of `client` (sorted).

    Raises
    ------
    TypeError
        `client` is not a ``distributed.Client``.
    ValueError
        `client` has fewer than `K` workers.
    """
    if not callable(getattr(client, "nthreads", None)):
        raise TypeError(
            f"`client` must be a distributed.Client, got {type(client).__name__}."
        )
    addresses = sorted(client.nthreads())
    if len(addresses) < K:
        raise ValueError(
            f"the client must have at least K={K} workers, got {len(addresses)}."
        )
    return addresses[:K]
