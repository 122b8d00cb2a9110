"""A cluster of processes at their own addresses whose uploads the kernel shapes.

In a private network namespace (``coded.runtime.run_in_namespace``): a placed
coded product with one worker SIGKILLed mid-call, and a coded word count, both on
worker processes at their own addresses; the link-rate check fails loudly where
no shaping is in effect.
"""

import collections
import os
import re
import signal
import subprocess
import threading

import numpy as np
import pytest

from coded import Stragglers, coded_matmul, place_operand
from coded.runtime import LinkRateError, ShapedCluster, check_links
from mapreduce import run_mapreduce

pytestmark = [pytest.mark.runtime, pytest.mark.chaos]

N, K = 3, 2  # tolerates one lost worker
RATE = 25e6  # bytes/s: 200 Mbit/s per node
A = np.arange(240.0).reshape(40, 6) % 11 - 5
X = np.linspace(-1.0, 1.0, 6)
FILES = [f"a b c {i % 3} {i % 5} x{i}" for i in range(12)]


def _words(text):
    return [(word, 1) for word in text.split()]


def _count(word, values):
    return sum(values)


def _on_shaped_cluster():
    """Word count, then a placed product losing a worker mid-call (in the child)."""
    with ShapedCluster(n_workers=N, links=RATE) as cluster:
        client = cluster.client
        out = {"addresses": sorted(client.nthreads()), "measured": cluster.measured}
        shown = subprocess.run(
            ["tc", "qdisc", "show", "dev", "lo"], capture_output=True, text=True
        )
        out["queues"] = re.findall(
            r"bfifo \S+ parent (1:\w+) limit (\d+)b", shown.stdout
        )
        before = cluster.link_bytes()
        counts = run_mapreduce(
            FILES, _words, _count, K=N, r=2, coded=True, client=client
        )
        out["counts"] = dict(counts.output)
        out["coded"] = counts.record.is_coded
        after = cluster.link_bytes()
        out["link_bytes"] = {a: after[a] - before[a] for a in after}
        with place_operand(A, n=N, k=K, client=client) as placed:
            victim = placed.addresses[1]
            pid = cluster.pids()[victim]
            timer = threading.Timer(0.3, os.kill, (pid, signal.SIGKILL))
            timer.start()
            slow = Stragglers(delays=dict.fromkeys(range(N), 1.0))
            result = coded_matmul(placed, X, stragglers=slow, timeout=60)
            timer.join()
            out["product"] = result.product
            out["used"] = result.used_workers
            out["live"] = set(client.nthreads())
            out["victim"] = victim
    return out


@pytest.fixture(scope="module")
def shaped_run(namespace):
    return namespace(_on_shaped_cluster, timeout=240)


def test_workers_are_processes_at_their_own_addresses(shaped_run):
    hosts = [
        a.removeprefix("tcp://").rsplit(":", 1)[0] for a in shaped_run["addresses"]
    ]
    assert hosts == [f"127.0.0.{100 + k}" for k in range(N)]
    for address in ["127.0.0.2", "127.0.0.3", *hosts]:  # checked before use
        assert shaped_run["measured"][address] == pytest.approx(RATE, rel=0.25)


def test_every_link_queues_50_ms_of_its_rate(shaped_run):
    # not htb's default 1000-packet FIFO (64 MiB of loopback frames), in which a
    # node's ACKs would wait behind its own uploads
    queues = dict(shaped_run["queues"])
    assert len(queues) == N + 2  # scheduler, client, workers
    assert set(queues.values()) == {str(int(0.05 * RATE))}


def test_coded_word_count_is_correct_on_shaped_links(shaped_run):
    expected = collections.Counter(w for f in FILES for w in f.split())
    assert shaped_run["coded"]
    assert shaped_run["counts"] == dict(expected)
    # the shuffle went out through every worker's own shaped link
    for k in range(N):
        assert shaped_run["link_bytes"][f"127.0.0.{100 + k}"] > 0


def test_placed_product_survives_a_worker_killed_mid_call(shaped_run):
    np.testing.assert_allclose(shaped_run["product"], A @ X, atol=1e-9)
    assert shaped_run["victim"] not in shaped_run["live"]  # it did die
    assert set(shaped_run["used"]) <= {0, 2}  # the lost share never decoded


def _check_unshaped_link():
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    check_links({"127.0.0.100": RATE})


def test_the_rate_check_fails_loudly_without_shaping(namespace):
    with pytest.raises(LinkRateError, match=r"not at their set rates.*127\.0\.0\.100"):
        namespace(_check_unshaped_link, timeout=60)


def test_a_shaped_cluster_refuses_to_start_outside_a_private_namespace():
    with (
        pytest.raises(RuntimeError, match="private network namespace"),
        ShapedCluster(n_workers=1, links=RATE),
    ):
        pass
