"""mapreduce: coded MapReduce (Li et al.) with coded shuffles.

Placements (Li's r-subsets, the K = 3 heterogeneous optimum, Woolsey et al.'s
hypercube, any user map), shuffle plans with their verifier, ``run_mapreduce``
(how it runs: ``MapReduceOptions``) and two example jobs (word count and TeraSort),
TeraSort generated, sorted and validated on the workers (``terasort``;
``sort_frame`` for a dask.dataframe). Placements, plans, the verifier and the
job's state machine (``_state``) are pure; execution on Dask lives in
``mapreduce._runtime``, ``mapreduce._runtime_linear`` (coded map tasks) and
``mapreduce._runtime_terasort`` (records made and kept on the workers), the
package's only Dask modules, imported only when a job runs. Many small inputs
are grouped into files of about ``MapReduceOptions.group_bytes`` (``_groups``,
pure). Import order: ``_plan`` < ``_records`` < ``_options`` < ``_state`` <
``_runtime`` < ``_job``.
"""

from __future__ import annotations

from mapreduce._errors import (
    MapReduceTaskError,
    NotEnoughMappersError,
    PlanVerificationError,
    ValidationError,
)
from mapreduce._examples import (
    TeraSortResult,
    count_words,
    generate_records,
    range_partition,
    run_terasort,
    sum_counts,
    terasort_map,
)
from mapreduce._fold import fold_of, fold_with
from mapreduce._job import (
    concatenate_values,
    run_coded_maps,
    run_mapreduce,
    split_input,
)
from mapreduce._network import (
    DELIVERIES,
    FRAME_HEADER_BYTES,
    Traffic,
    model_prefers_coded,
    plan_traffic,
    predict_shuffle_seconds,
)
from mapreduce._options import MapReduceOptions
from mapreduce._partition import hash_partition
from mapreduce._placement import (
    Placement,
    place_from_map,
    place_hypercube,
    place_k3,
    place_li,
)
from mapreduce._plan import Packet, Segment, ShufflePlan, plan_shuffle, verify_plan
from mapreduce._records import MapReduceRecord, MapReduceResult
from mapreduce._straggling import plan_straggling, straggling_placement
from mapreduce._terasort import TeraSortRun, sort_frame, terasort
from mapreduce._teravalidate import (
    RecordSummary,
    summarize_frame,
    summarize_records,
    teragen_partition,
    validate_sorted,
)

__all__ = [
    "DELIVERIES",
    "FRAME_HEADER_BYTES",
    "MapReduceOptions",
    "MapReduceRecord",
    "MapReduceResult",
    "MapReduceTaskError",
    "NotEnoughMappersError",
    "Packet",
    "Placement",
    "PlanVerificationError",
    "RecordSummary",
    "Segment",
    "ShufflePlan",
    "TeraSortResult",
    "TeraSortRun",
    "Traffic",
    "ValidationError",
    "concatenate_values",
    "count_words",
    "fold_of",
    "fold_with",
    "generate_records",
    "hash_partition",
    "model_prefers_coded",
    "place_from_map",
    "place_hypercube",
    "place_k3",
    "place_li",
    "plan_shuffle",
    "plan_straggling",
    "plan_traffic",
    "predict_shuffle_seconds",
    "range_partition",
    "run_coded_maps",
    "run_mapreduce",
    "run_terasort",
    "sort_frame",
    "split_input",
    "straggling_placement",
    "sum_counts",
    "summarize_frame",
    "summarize_records",
    "teragen_partition",
    "terasort",
    "terasort_map",
    "validate_sorted",
    "verify_plan",
]
