r"""A cluster of hosts on one machine: every node at its own address, links shaped.

Inside a private network namespace (``unshare --user --net``), the scheduler,
every worker and the client get their own address on the namespace's loopback
(``127.0.0.N``), and each node's upload is shaped by the kernel: one ``htb``
class per node, filtered by source address, at the node's rate. The scheduler
and the workers are started with the ``dask scheduler`` / ``dask worker``
commands, as users start them. No traffic leaves the namespace and nothing
binds outside it.

Why the client runs in a child process: a network namespace belongs to a
thread, and ``setns`` into a namespace of another user namespace needs the
whole process single-threaded (a test process with Dask loaded is not), so the
process that talks to the cluster is started inside the namespace
(:func:`run_in_namespace`; a benchmark re-executes itself there). The
namespace is made with a PID namespace of its own: when its first process
exits or is killed, the kernel kills every process in it, so no worker or
scheduler outlives a run, whatever happened to it, and the network namespace
goes with its last process.

Only uploads are shaped (a node's egress, by source address); downloads are
not limited. Every Dask connection a process *opens* is bound to the process's
address (``coded.runtime._source_address``, a Dask preload), so the bytes a node
pushes count on its own link as the bytes it serves do.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from distributed import Client

from coded.runtime._source_address import ENV, bind_source_address
from theory.validation import check_int, check_real

__all__ = [
    "CLIENT_ADDRESS",
    "NAMESPACE_COMMAND",
    "SCHEDULER_ADDRESS",
    "LinkRateError",
    "ShapedCluster",
    "check_links",
    "in_private_namespace",
    "measure_links",
    "run_in_namespace",
    "shaped_links_unavailable",
    "worker_address",
]

T = TypeVar("T")

NAMESPACE_COMMAND: tuple[str, ...] = (
    "unshare",
    "--user",
    "--map-root-user",
    "--net",
    "--pid",
    "--fork",
    "--kill-child",
    "--mount-proc",
)
"""A private user, network, PID and mount namespace for the command that follows.

``--kill-child``: the namespace's first process is killed if ``unshare`` dies;
the kernel then kills every process of the PID namespace.
"""

SCHEDULER_ADDRESS = "127.0.0.2"
CLIENT_ADDRESS = "127.0.0.3"
_PROBE_ADDRESS = "127.0.0.1"  # the rate check's receiver (its ACKs are not shaped)
_QUEUE_SECONDS = 0.05  # each link's queue, as a switch port or a NIC with fq_codel
_FIRST_WORKER = 100  # worker k at 127.0.0.(100 + k): addresses sort as k does
MAX_WORKERS = 100
_SOURCE_PRELOAD = "coded.runtime._source_address"


class LinkRateError(RuntimeError):
    """A link's measured rate is not its setting: no figure may be taken on it."""


def worker_address(k: int) -> str:
    """Return the address of worker `k`: ``127.0.0.(100 + k)`` (sorted as `k` is).

    Examples
    --------
    >>> worker_address(0), worker_address(7)
    ('127.0.0.100', '127.0.0.107')
    """
    k = check_int(k, "k", min_value=0)
    if k >= MAX_WORKERS:
        raise ValueError(f"`k` must be < {MAX_WORKERS}, got {k}.")
    return f"127.0.0.{_FIRST_WORKER + k}"


def in_private_namespace() -> bool:
    """Whether this process's network namespace has no interface but loopback.

    A fresh namespace of ``unshare --net`` has only ``lo``; a host's has more.
    """
    return [name for _, name in socket.if_nameindex()] == ["lo"]


@functools.cache
def shaped_links_unavailable(timeout: float = 30.0) -> str | None:
    """Why a shaped cluster cannot run here, or None if it can.

    Probes once per process: ``unshare`` makes the namespaces
    (:data:`NAMESPACE_COMMAND`) and ``tc`` adds an ``htb`` qdisc inside them.

    Parameters
    ----------
    timeout : float
        Seconds the probe may take.

    Returns
    -------
    str or None
        The reason, for a skip message; None where it works.

    Examples
    --------
    >>> reason = shaped_links_unavailable()
    >>> reason is None or isinstance(reason, str)
    True
    """
    for tool in ("unshare", "ip", "tc"):
        if shutil.which(tool) is None:
            return f"`{tool}` is not installed (util-linux / iproute2)"
    probe = "ip link set lo up && tc qdisc add dev lo root handle 1: htb"
    try:
        done = subprocess.run(
            [*NAMESPACE_COMMAND, "sh", "-c", probe],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return f"`unshare` did not make a namespace within {timeout} s"
    if done.returncode:
        return (
            "no private network namespace with tc htb here (unprivileged user "
            f"namespaces or the htb qdisc are unavailable): {done.stderr.strip()}"
        )
    return None


def _run(*command: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"`{' '.join(command)}` failed: {done.stderr.strip()}")


def _require_namespace() -> None:
    if not in_private_namespace():
        raise RuntimeError(
            "a shaped cluster runs only inside a private network namespace (this "
            "one has interfaces other than lo); run the code that uses it with "
            "coded.runtime.run_in_namespace(...), or start the program under "
            f"`{' '.join(NAMESPACE_COMMAND)}`."
        )


def _queue_bytes(rate: float) -> int:
    """Bytes a link's queue holds: `_QUEUE_SECONDS` of its rate (>= 4 loopback frames).

    Without a limit, htb's leaf is a FIFO of 1000 packets, up to 64 KiB each on
    loopback: seconds of queue at 100 Mbit/s, in which a node's ACKs wait behind
    its own uploads and slow every transfer it receives.
    """
    return max(4 * 65536, int(rate * _QUEUE_SECONDS))


def _shape(rates: dict[str, float]) -> None:
    """One htb class per source address at its rate (bytes/s); others unshaped."""
    _run("ip", "link", "set", "lo", "up")
    _run("tc", "qdisc", "replace", "dev", "lo", "root", "handle", "1:", "htb")
    for minor, (address, rate) in enumerate(rates.items(), 1):
        bits = f"{int(rate * 8)}bit"
        classid = f"1:{minor:x}"
        _run(
            *("tc", "class", "add", "dev", "lo", "parent", "1:", "classid", classid),
            *("htb", "rate", bits, "ceil", bits, "quantum", "65536"),
        )
        _run(
            *("tc", "qdisc", "add", "dev", "lo", "parent", classid),
            *("handle", f"{minor + 1:x}:", "bfifo", "limit", str(_queue_bytes(rate))),
        )
        _run(
            *("tc", "filter", "add", "dev", "lo", "parent", "1:", "protocol", "ip"),
            *("prio", "1", "u32", "match", "ip", "src", f"{address}/32"),
            *("flowid", classid),
        )


def _unshape() -> None:
    subprocess.run(
        ["tc", "qdisc", "del", "dev", "lo", "root"], capture_output=True, check=False
    )


def _send(source: str, port: int, nbytes: int) -> None:
    chunk = b"\0" * (1 << 20)
    with socket.socket() as sender:
        sender.bind((source, 0))
        sender.connect((_PROBE_ADDRESS, port))
        left = nbytes
        while left > 0:
            left -= sender.send(chunk[: min(left, len(chunk))])


def _receive(listener: socket.socket, out: dict) -> None:
    connection, (source, _) = listener.accept()
    buffer = bytearray(1 << 20)
    first = last = None
    total = first_bytes = 0
    with connection:
        while count := connection.recv_into(buffer):
            last = time.perf_counter()
            if first is None:
                first, first_bytes = last, count
            total += count
    out[source] = (total - first_bytes) / max(last - first, 1e-9) if first else 0.0


def measure_links(rates: dict[str, float], seconds: float = 0.3) -> dict[str, float]:
    """Each source address's upload rate in bytes/s, all links at once.

    Every address sends ``rates[address] * seconds`` bytes to a receiver on
    ``127.0.0.1`` at the same time (so a class shared by two nodes shows);
    the rate is the bytes after the first read over the time to the last.
    """
    with socket.socket() as listener:
        listener.bind((_PROBE_ADDRESS, 0))
        listener.listen(len(rates))
        port = listener.getsockname()[1]
        measured: dict[str, float] = {}
        receivers = [
            threading.Thread(target=_receive, args=(listener, measured)) for _ in rates
        ]
        senders = [
            threading.Thread(
                target=_send, args=(a, port, max(1 << 18, int(rate * seconds)))
            )
            for a, rate in rates.items()
        ]
        for thread in [*receivers, *senders]:
            thread.start()
        for thread in [*senders, *receivers]:
            thread.join(timeout=60 + 10 * seconds)
    return measured


def check_links(
    rates: dict[str, float], *, tolerance: float = 0.25, seconds: float = 0.3
) -> dict[str, float]:
    """Measure every link (``measure_links``); raise if one is off its setting.

    Parameters
    ----------
    rates : dict of str to float
        Each source address's set upload rate, bytes/s.
    tolerance : float
        Largest relative error allowed, either way.
    seconds : float
        How long each link sends at its set rate.

    Returns
    -------
    dict of str to float
        The measured rates, bytes/s.

    Raises
    ------
    LinkRateError
        Naming every link whose measured rate is more than `tolerance` off its
        setting: faster means the kernel is not shaping it (no figure from
        this cluster would be about its links), slower that the machine cannot
        drive it.
    """
    tolerance = check_real(tolerance, "tolerance", min_value=0.0)
    measured = measure_links(rates, seconds)
    wrong = {
        address: measured.get(address, 0.0)
        for address, rate in rates.items()
        if abs(measured.get(address, 0.0) / rate - 1.0) > tolerance
    }
    if wrong:
        lines = [
            f"{address}: set {rates[address] * 8e-6:.1f} Mbit/s, measured "
            f"{value * 8e-6:.1f} Mbit/s"
            for address, value in wrong.items()
        ]
        raise LinkRateError(
            f"links not at their set rates (tolerance {tolerance:.0%}); shaping "
            "is not in effect or the machine cannot drive them, so nothing may be "
            "measured on them: " + "; ".join(lines)
        )
    return measured


def _rates(value: float | Sequence[float], count: int, name: str) -> list[float]:
    values = [value] * count if isinstance(value, (int, float)) else list(value)
    if len(values) != count:
        raise ValueError(
            f"`{name}` must be one rate or one per worker ({count}), got {len(values)}."
        )
    return [check_real(v, name, min_value=0.0, strict_min=True) for v in values]


class ShapedCluster:
    """A Dask cluster of processes at their own addresses, each upload shaped.

    Runs only inside a private network namespace (see
    :func:`run_in_namespace`). On entry it shapes the links, checks every
    link's measured rate against its setting (:func:`check_links`), starts
    ``dask scheduler`` and `n_workers` ``dask worker`` processes (one thread,
    no nanny: a killed worker stays dead) and connects a client from its own
    address. On exit it closes the client, terminates the processes and
    removes the shaping.

    Parameters
    ----------
    n_workers : int
        Workers, ``1 <= n_workers <= 100``; worker ``k`` is at
        :func:`worker_address` ``(k)``, so sorted addresses are in node order.
    links : float, sequence of float or None
        Upload rate of each worker in bytes/s: one for all, or one per worker.
        None: no shaping (the processes still have their own addresses).
    scheduler_link, client_link : float, optional
        The scheduler's and the client's upload rates (default: the fastest
        worker's).
    tolerance : float
        How far a measured rate may be from its setting (:func:`check_links`).
    start_timeout : float
        Seconds for the processes to start and register.
    worker_options : sequence of str
        More ``dask worker`` options, e.g. ``("--memory-limit", "4GiB")``.

    Attributes
    ----------
    client : distributed.Client
        The running client.
    rates : dict of str to float
        Each node's address and set upload rate (bytes/s).
    measured : dict of str to float
        Each node's rate as measured before use.

    Examples
    --------
    >>> from coded.runtime import ShapedCluster, run_in_namespace
    >>> def workers_at_their_addresses():
    ...     with ShapedCluster(n_workers=2, links=12.5e6) as cluster:
    ...         return sorted(cluster.client.nthreads())
    >>> run_in_namespace(workers_at_their_addresses)  # doctest: +SKIP
    ['tcp://127.0.0.100:...', 'tcp://127.0.0.101:...']
    """

    def __init__(
        self,
        n_workers: int = 4,
        links: float | Sequence[float] | None = None,
        *,
        scheduler_link: float | None = None,
        client_link: float | None = None,
        tolerance: float = 0.25,
        start_timeout: float = 120.0,
        worker_options: Sequence[str] = (),
    ) -> None:
        self.n_workers = check_int(n_workers, "n_workers", min_value=1)
        if n_workers > MAX_WORKERS:
            raise ValueError(f"`n_workers` must be <= {MAX_WORKERS}, got {n_workers}.")
        self.addresses = [worker_address(k) for k in range(n_workers)]
        self.rates: dict[str, float] = {}
        if links is not None:
            worker_rates = _rates(links, n_workers, "links")
            top = max(worker_rates)
            self.rates = {
                SCHEDULER_ADDRESS: top if scheduler_link is None else scheduler_link,
                CLIENT_ADDRESS: top if client_link is None else client_link,
                **dict(zip(self.addresses, worker_rates, strict=True)),
            }
        self.tolerance = tolerance
        self.start_timeout = start_timeout
        self.worker_options = tuple(worker_options)
        self.measured: dict[str, float] = {}
        self._processes: list[subprocess.Popen] = []
        self._client: Client | None = None
        self._dir: tempfile.TemporaryDirectory | None = None

    @property
    def client(self) -> Client:
        """The running client (raises ``RuntimeError`` outside the ``with``)."""
        if self._client is None:
            raise RuntimeError("ShapedCluster is not running; use it in `with`.")
        return self._client

    @property
    def worker_rates(self) -> list[float] | None:
        """Each worker's set upload rate in node order (None: unshaped)."""
        return [self.rates[a] for a in self.addresses] if self.rates else None

    def __enter__(self) -> ShapedCluster:
        _require_namespace()
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _start(self) -> None:
        _run("ip", "link", "set", "lo", "up")
        if self.rates:
            _shape(self.rates)
            self.measured = check_links(self.rates, tolerance=self.tolerance)
        self._dir = tempfile.TemporaryDirectory(prefix="coded-shaped-")
        folder = Path(self._dir.name)
        file = str(folder / "scheduler.json")
        self._launch(
            SCHEDULER_ADDRESS,
            ["scheduler", "--host", SCHEDULER_ADDRESS, "--port", "8786"],
            ["--no-dashboard", "--scheduler-file", file],
        )
        for k, address in enumerate(self.addresses):
            self._launch(
                address,
                ["worker", "--scheduler-file", file, "--host", address],
                ["--name", f"worker-{k}", "--nthreads", "1", "--no-nanny"],
                ["--no-dashboard", "--death-timeout", "60", *self.worker_options],
            )
        deadline = time.monotonic() + self.start_timeout
        while not Path(file).exists():
            self._check_alive()
            if time.monotonic() > deadline:
                raise TimeoutError("the scheduler did not start in time")
            time.sleep(0.1)
        bind_source_address(CLIENT_ADDRESS)
        try:
            self._client = Client(scheduler_file=file, timeout=self.start_timeout)
            self._client.wait_for_workers(self.n_workers, timeout=self.start_timeout)
        except (OSError, TimeoutError) as error:
            self._check_alive()
            raise TimeoutError(f"the cluster did not start:\n{self._logs()}") from error

    def _launch(self, address: str, *arguments: list[str]) -> None:
        assert self._dir is not None
        log = Path(self._dir.name) / f"{address}-{len(self._processes)}.log"
        command = [
            sys.executable,
            "-m",
            "dask",
            *(a for part in arguments for a in part),
        ]
        command += ["--preload", _SOURCE_PRELOAD]
        with open(log, "wb") as out:
            self._processes.append(
                subprocess.Popen(
                    command,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    env={**os.environ, ENV: address},
                )
            )

    def _check_alive(self) -> None:
        for process in self._processes:
            if process.poll() is not None:
                raise RuntimeError(
                    f"`{' '.join(process.args)}` exited with {process.returncode}:\n"
                    + self._logs()
                )

    def _logs(self) -> str:
        if self._dir is None:
            return ""
        return "\n".join(
            f"--- {log.name}\n{log.read_text(errors='replace')[-2000:]}"
            for log in sorted(Path(self._dir.name).glob("*.log"))
        )

    def link_bytes(self) -> dict[str, int]:
        """Bytes each node has sent through its shaped link so far (``tc`` counters).

        Empty when unshaped.
        """
        if not self.rates:
            return {}
        shown = subprocess.run(
            ["tc", "-s", "class", "show", "dev", "lo"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        sent = dict(
            re.findall(r"class htb 1:([0-9a-f]+) .*?\n\s*Sent (\d+) bytes", shown)
        )
        return {
            address: int(sent.get(f"{minor:x}", 0))
            for minor, address in enumerate(self.rates, 1)
        }

    def pids(self) -> dict[str, int]:
        """Each worker's address (as Dask names it) and process id."""
        return self.client.run(os.getpid)

    def close(self) -> None:
        """Close the client, end every process, remove the shaping."""
        if self._client is not None:
            with contextlib.suppress(Exception):
                self._client.close(timeout=10)
            self._client = None
        bind_source_address(None)
        for process in self._processes:  # throwaway processes: nothing to save
            process.kill()
            process.wait()
        self._processes = []
        if self.rates:
            _unshape()
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None


def run_in_namespace(
    func: Callable[..., T], *args: Any, timeout: float = 600.0, **kwargs: Any
) -> T:
    """Call ``func(*args, **kwargs)`` in a child process inside private namespaces.

    The child (``sys.executable``, this process's ``sys.path``) runs under
    :data:`NAMESPACE_COMMAND`: its own user, network, PID and mount namespaces,
    where a :class:`ShapedCluster` can run. `func`, its arguments and its
    return value travel by ``cloudpickle``; an exception in the child is raised
    here. When the child is done, fails or runs past `timeout` seconds (then
    ``TimeoutError``), every process it started is killed with it and the
    namespaces are gone.

    Parameters
    ----------
    func : callable
        What to call in the child (a :class:`ShapedCluster` is used inside it).
    *args, **kwargs
        Its arguments.
    timeout : float
        Seconds the child may run.

    Returns
    -------
    object
        What `func` returned.

    Examples
    --------
    The child is the first process of its own PID namespace:

    >>> import os
    >>> from coded.runtime import run_in_namespace
    >>> run_in_namespace(os.getpid)  # doctest: +SKIP
    1
    """
    import cloudpickle

    reason = shaped_links_unavailable()
    if reason is not None:
        raise RuntimeError(f"cannot make a private namespace here: {reason}")
    with tempfile.TemporaryDirectory(prefix="coded-namespace-") as folder:
        payload, result = Path(folder) / "payload", Path(folder) / "result"
        payload.write_bytes(cloudpickle.dumps((func, args, kwargs)))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        child = (
            "from coded.runtime._shaped import _child_main; "
            f"_child_main({str(payload)!r}, {str(result)!r})"
        )
        try:
            subprocess.run(
                [*NAMESPACE_COMMAND, sys.executable, "-c", child],
                env=env,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise TimeoutError(
                f"the namespace's child ran past {timeout} s; it and every process "
                "it started were killed"
            ) from None
        if not result.exists():
            raise RuntimeError("the namespace's child died before it returned")
        status, value, trace = cloudpickle.loads(result.read_bytes())
    if status == "error":
        if isinstance(value, BaseException):
            value.add_note(f"in the namespace's child:\n{trace}")
            raise value
        raise RuntimeError(f"the namespace's child failed:\n{trace}")
    return value


def _child_main(payload: str, result: str) -> None:
    import cloudpickle

    try:
        func, args, kwargs = cloudpickle.loads(Path(payload).read_bytes())
        outcome = ("ok", func(*args, **kwargs), "")
    except BaseException as error:  # sent back whole, raised in the parent
        outcome = ("error", error, traceback.format_exc())
    try:
        data = cloudpickle.dumps(outcome)
    except Exception:
        data = cloudpickle.dumps(("error", None, outcome[2] or repr(outcome[1])))
    Path(result).write_bytes(data)
