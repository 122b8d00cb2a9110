"""The per-call floor of a placed ``A @ x``, and how close each transport gets.

For each n (8 and 32 worker processes; ``--quick``: 2), A (1200 k x 200 rows,
(n, k) MDS with k = 3n/4: 7200 x 200 and (8, 6) at n = 8) is placed once and
these are timed side by side, interleaved call by call, in one run:

- ``raw``: the floor. n plain Python processes, each holding its coded block,
  answer one TCP message carrying x (pickle protocol 5, no framework) with
  ``block @ x``; one fan-out and all n answers back;
- ``resident``: ``coded_matmul(placed, x)`` on the resident servers;
- ``tasks``: the same call as pinned tasks through the scheduler
  (``transport="tasks"``);
- ``trivial``: one ``client.submit(f).result()`` round trip;
- ``dask_array``: ``(A @ x).compute()`` on the same row chunks, persisted.

Prints medians, the resident call's stages and the issue's target ratios
(resident <= 3x raw and <= 0.3x trivial at n = 8; <= 3x raw and <= 0.2x
dask.array at n = 32; each added worker costs the resident call at most twice
what it adds to the raw fan-out); writes ``bench/results/floor.json``.

Usage: ``python bench/floor.py [--quick] [--repeats R] [--workers N ...]``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import pickle
import socket
import statistics
import struct
import time

# one BLAS thread per process, as Dask's nanny sets for worker processes
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
from _harness import write_results

_HEADER = struct.Struct("!Q")


def _send(sock, payload):
    sock.sendall(_HEADER.pack(len(payload)) + payload)


def _receive(sock):
    size = _HEADER.unpack(_exactly(sock, _HEADER.size))[0]
    return _exactly(sock, size)


def _exactly(sock, size):
    view = memoryview(bytearray(size))
    got = 0
    while got < size:
        chunk = sock.recv_into(view[got:], size - got)
        if not chunk:
            raise ConnectionError("the peer closed")
        got += chunk
    return view


def _serve_block(block, ports):
    """One raw worker: hold `block`, answer each message x with block @ x."""
    listener = socket.create_server(("127.0.0.1", 0))
    ports.put(listener.getsockname()[1])
    conn, _ = listener.accept()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    while True:
        try:
            x = pickle.loads(_receive(conn))
        except ConnectionError:
            return
        _send(conn, pickle.dumps(block @ x, protocol=5))


class RawFanout:
    """n plain processes holding their blocks; :meth:`call` is one fan-out."""

    def __init__(self, blocks):
        context = multiprocessing.get_context("spawn")
        ports = context.Queue()
        self.processes = [
            context.Process(target=_serve_block, args=(b, ports), daemon=True)
            for b in blocks
        ]
        for process in self.processes:
            process.start()
        self.socks = []
        for _ in blocks:
            sock = socket.create_connection(("127.0.0.1", ports.get(timeout=60)))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.socks.append(sock)

    def call(self, x):
        payload = pickle.dumps(x, protocol=5)
        for sock in self.socks:
            _send(sock, payload)
        return [pickle.loads(_receive(sock)) for sock in self.socks]

    def close(self):
        for sock in self.socks:
            sock.close()
        for process in self.processes:
            process.join(timeout=5)
            if process.is_alive():
                process.kill()


def _noop():
    return None


def measure(n, rows_per_block, d, repeats):
    """Median seconds of each call at n workers (interleaved, 2 warm-up rounds)."""
    import dask.array as da

    import coded

    k = max(1, 3 * n // 4)
    rng = np.random.default_rng(0)
    A, x = rng.standard_normal((rows_per_block * k, d)), rng.standard_normal(d)
    raw = RawFanout(coded.MDSCode(n, k).encode_operands(A, x).lefts)
    try:
        with coded.LocalCodedCluster(n_workers=n, processes=True) as cluster:
            client = cluster.client
            client.wait_for_workers(n, timeout=120)
            placed = coded.place_operand(A, client=client, n=n, k=k)
            chunks = (-(-A.shape[0] // n), -1)
            A_da = client.persist(da.from_array(A, chunks=chunks))
            with placed:
                calls = {
                    "raw": lambda: raw.call(x),
                    "resident": lambda: coded.coded_matmul(placed, x),
                    "tasks": lambda: coded.coded_matmul(placed, x, transport="tasks"),
                    "trivial": lambda: client.submit(_noop, pure=False).result(),
                    "dask_array": lambda: (A_da @ x).compute(),
                }
                times, last = _interleave(calls, repeats)
    finally:
        raw.close()
    resident = last["resident"]
    assert resident.transport == "resident"
    assert np.allclose(resident.product, A @ x)
    row = {"n": n, "k": k, "shape": list(A.shape)}
    row.update({name: statistics.median(values) for name, values in times.items()})
    row["resident_stages"] = dict(resident.stage_seconds)
    row["resident_vs_raw"] = row["resident"] / row["raw"]
    row["resident_vs_trivial"] = row["resident"] / row["trivial"]
    row["resident_vs_dask_array"] = row["resident"] / row["dask_array"]
    row["tasks_vs_raw"] = row["tasks"] / row["raw"]
    row["resident_vs_tasks"] = row["resident"] / row["tasks"]
    return row


def _interleave(calls, repeats):
    times = {name: [] for name in calls}
    last = {}
    for repeat in range(repeats + 2):
        for name, call in calls.items():
            began = time.perf_counter()
            last[name] = call()
            if repeat >= 2:
                times[name].append(time.perf_counter() - began)
    return times, last


TARGETS = {  # (n, ratio) -> the bound
    (8, "resident_vs_raw"): 3.0,
    (8, "resident_vs_trivial"): 0.3,
    (32, "resident_vs_raw"): 3.0,
    (32, "resident_vs_dask_array"): 0.2,
}


def targets(rows):
    """Each target of the issue against its measured ratio."""
    by_n = {row["n"]: row for row in rows}
    report = {
        f"n={n}: {ratio} <= {bound}": [by_n[n][ratio], by_n[n][ratio] <= bound]
        for (n, ratio), bound in TARGETS.items()
        if n in by_n
    }
    if len(by_n) >= 2:
        low, high = min(by_n), max(by_n)
        per = per_worker(rows)
        ratio = per["resident"] / per["raw"] if per["raw"] > 0 else float("inf")
        report[f"added worker ({low}->{high}): resident / raw <= 2"] = [
            ratio,
            ratio <= 2.0,
        ]
    return report


def per_worker(rows):
    """Seconds each added worker costs each call: the slope between the n's."""
    by_n = {row["n"]: row for row in rows}
    low, high = min(by_n), max(by_n)
    return {
        name: (by_n[high][name] - by_n[low][name]) / (high - low)
        for name in ("raw", "resident", "tasks")
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--workers", type=int, nargs="+", default=[8, 32])
    args = parser.parse_args(argv)
    workers, repeats = ([2], 3) if args.quick else (args.workers, args.repeats)
    rows = []
    for n in workers:
        row = measure(n, 1200, 200, repeats)
        rows.append(row)
        print(
            f"n={n} ({row['shape'][0]} x {row['shape'][1]}, k={row['k']}): "
            + " ".join(
                f"{name}={1e3 * row[name]:.2f}ms"
                for name in ("raw", "resident", "tasks", "trivial", "dask_array")
            )
        )
        stages = row["resident_stages"]
        print(
            "  resident stages (last call): "
            + " ".join(f"{s}={1e3 * v:.2f}ms" for s, v in stages.items())
        )
        print(
            f"  resident / raw = {row['resident_vs_raw']:.1f}x, / trivial = "
            f"{row['resident_vs_trivial']:.2f}x, / dask.array = "
            f"{row['resident_vs_dask_array']:.2f}x, / tasks = "
            f"{row['resident_vs_tasks']:.2f}x"
        )
    report = targets(rows)
    per = per_worker(rows) if len(rows) >= 2 else {}
    if per:
        print(
            "per added worker: "
            + ", ".join(f"{name} {1e3 * cost:.3f} ms" for name, cost in per.items())
        )
    for name, (ratio, met) in report.items():
        print(f"target {name}: {ratio:.2f} ({'met' if met else 'NOT met'})")
    load = os.getloadavg()
    print(f"load average at the end: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    write_results(
        "floor",
        {
            "repeats": repeats,
            "rows": rows,
            "per_worker_seconds": per,
            "targets": report,
            "load": load,
        },
        quick=args.quick,
    )
    return rows


if __name__ == "__main__":
    main()
