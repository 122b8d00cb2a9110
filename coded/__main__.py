"""``python -m coded demo`` (or ``coded demo``): coded vs uncoded under stragglers.

Starts an embedded Dask cluster of 8 single-threaded workers, injects
shifted-exponential stragglers (docs/theory/model.md) inside the tasks, runs ``A @ x``
uncoded, with 2-replication and with an (8, 6) MDS code, and ``A @ B`` with an (8, 6)
polynomial code, repeats each R times and prints one table: median latency, speedup
vs uncoded, the latency Lee et al.'s formulas predict for the injected model, and the
largest error vs numpy. ``--plot FILE`` saves the per-worker timeline of the last
run (a Gantt chart of its tasks, see ``MatmulResult.plot_timeline``).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["main"]

N_WORKERS = 8


@dataclass(frozen=True, slots=True, kw_only=True)
class _Row:
    label: str
    scheme: str
    options: dict
    uses_matrix: bool
    theory_job_units: float


def _rows(a: float, mu: float) -> list[_Row]:
    import theory

    mds = theory.expected_latency_mds(N_WORKERS, 6, a=a, mu=mu)
    return [
        _Row(
            label="uncoded (A @ x)",
            scheme="uncoded",
            options={},
            uses_matrix=False,
            theory_job_units=theory.expected_latency_uncoded(N_WORKERS, a=a, mu=mu),
        ),
        _Row(
            label="2-replication (A @ x)",
            scheme="replication",
            options={"r": 2},
            uses_matrix=False,
            theory_job_units=theory.expected_latency_replication(
                N_WORKERS, 2, a=a, mu=mu
            ),
        ),
        _Row(
            label="(8, 6) MDS (A @ x)",
            scheme="mds",
            options={"k": 6},
            uses_matrix=False,
            theory_job_units=mds,
        ),
        _Row(
            label="(8, 6) polynomial (A @ B)",
            scheme="polynomial",
            options={"k": 6},
            uses_matrix=True,
            theory_job_units=mds,
        ),
    ]


def run_demo(
    *,
    repeats: int,
    m: int,
    d: int,
    seed: int,
    a: float,
    mu: float,
    time_unit: float,
    plot: str | None = None,
) -> str:
    """Run the demo and return the table (see the module docstring).

    With `plot`, the timeline of the last run is saved to that file.
    """
    from tqdm import tqdm

    from coded import LocalCodedCluster, Stragglers, coded_matmul
    from theory import WorkerProfile

    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, d))
    x = rng.standard_normal(d)
    B = rng.standard_normal((d, 2))
    stragglers = Stragglers(
        profile=WorkerProfile.homogeneous(N_WORKERS, a=a, mu=mu), time_unit=time_unit
    )
    rows = _rows(a, mu)
    latencies: dict[str, list[float]] = {row.label: [] for row in rows}
    errors = dict.fromkeys(latencies, 0.0)
    with (
        LocalCodedCluster(n_workers=N_WORKERS) as cluster,
        tqdm(total=repeats * len(rows), desc="coded demo", unit="run") as progress,
    ):
        for _ in range(repeats):
            draws = int(rng.integers(2**32))  # every scheme sees the same speeds
            for row in rows:
                right = B if row.uses_matrix else x
                result = coded_matmul(
                    A,
                    right,
                    scheme=row.scheme,
                    client=cluster.client,
                    stragglers=stragglers,
                    rng=draws,
                    **row.options,
                )
                latencies[row.label].append(result.latency_seconds)
                last = (row.label, result)
                error = float(np.max(np.abs(result.product - A @ right)))
                errors[row.label] = max(errors[row.label], error)
                progress.update()
    uncoded = float(np.median(latencies[rows[0].label]))
    lines = [
        f"coded demo: n = {N_WORKERS} workers, A is {m} x {d}, x has {d} entries, "
        f"B is {d} x 2, seed = {seed}, {repeats} repeats",
        f"injected stragglers: T_i = l_i (a + X_i / mu) * {time_unit * 1e3:g} ms, "
        f"a = {a:g}, mu = {mu:g}, X_i ~ Exp(1)",
        "",
        f"{'scheme':<28}{'median s':>10}{'speedup':>9}{'mean s':>8}"
        f"{'theory s':>10}{'max |err|':>11}",
    ]
    for row in rows:
        median = float(np.median(latencies[row.label]))
        predicted = row.theory_job_units * m * time_unit
        lines.append(
            f"{row.label:<28}{median:>10.3f}{uncoded / median:>8.2f}x"
            f"{np.mean(latencies[row.label]):>8.3f}{predicted:>10.3f}"
            f"{errors[row.label]:>11.1e}"
        )
    lines.append("")
    lines.append(
        "theory: E[T] of Lee et al. 2018 (docs/theory/stragglers.md) for the injected "
        "model; compare it with the mean. Every scheme sees the same worker speeds "
        "in a repeat; measured latency also includes Dask scheduling, encoding and "
        "decoding."
    )
    if plot is not None:
        lines.append(_save_timeline(*last, plot))
    return "\n".join(lines)


def _save_timeline(label: str, result: Any, path: str) -> str:
    import matplotlib.pyplot as plt

    ax = result.plot_timeline(path=path)
    plt.close(ax.figure)
    return f"timeline of the last run ({label}) saved to {path}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``coded`` command line.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments (default ``sys.argv[1:]``); the one command is ``demo``.

    Returns
    -------
    int
        Exit status.
    """
    parser = argparse.ArgumentParser(prog="coded", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="coded vs uncoded matmul under stragglers")
    demo.add_argument("--repeats", type=int, default=15, help="runs per scheme")
    demo.add_argument("--seed", type=int, default=2018)
    demo.add_argument("--quick", action="store_true", help="3 repeats, small sizes")
    demo.add_argument(
        "--plot", metavar="FILE", help="save the last run's timeline (png, pdf, svg)"
    )
    args = parser.parse_args(argv)
    if args.plot is not None:
        folder = Path(args.plot).resolve().parent
        if not folder.is_dir():
            parser.error(f"--plot: folder {folder} does not exist")
        if importlib.util.find_spec("matplotlib") is None:
            parser.error(
                "--plot needs matplotlib (pip install 'coded-computing[notebooks]')"
            )
    repeats = 3 if args.quick else args.repeats
    if repeats < 1:
        parser.error(f"--repeats must be >= 1, got {repeats}")
    m, d = (480, 40) if args.quick else (2400, 100)
    table = run_demo(
        repeats=repeats,
        m=m,
        d=d,
        seed=args.seed,
        a=0.2,
        mu=1.0,
        time_unit=0.5e-3 * 2400 / m,
        plot=args.plot,
    )
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
