"""simcluster's network and disk I/O series (cAdvisor's container_network_* per pod,
container_fs_* per container): counters whose rates follow training, read through PromQL
as the Metrics tab reads them (in-process, no network)."""

from __future__ import annotations

import itertools
import math
import time

import pytest

from simcluster.cluster import Cluster
from simcluster.monitoring import promql
from simcluster.monitoring.metrics_history import History
from simcluster.monitoring.metrics_series import ClusterSource
from simcluster.monitoring.promql_eval import Evaluator
from tests.unit.test_metrics_series import make_pod, new_cluster, running, samples, terminated

MB = 1e6
RECEIVE, TRANSMIT = ("container_network_receive_bytes_total",
                     "container_network_transmit_bytes_total")
READS, WRITES = "container_fs_reads_bytes_total", "container_fs_writes_bytes_total"


@pytest.fixture
def cluster() -> Cluster:
    return new_cluster()


@pytest.fixture
def base() -> float:
    return float(math.floor(time.time()) - 600)


def rate(history: History, metric: str, pod: str, at: float) -> float:
    """`sum by (pod) (rate(metric{pod=...}[2m]))` at `at`, as the Metrics tab asks it."""
    source = ClusterSource(history, time.time())
    result = Evaluator(source, [at]).eval(promql.parse(
        f'sum by (pod) (rate({metric}{{pod="{pod}"}}[2m]))'))
    [(_, [value])] = result.series.values()
    return value


def mpijob(cluster: Cluster, base: float, annotations: dict | None = None) -> History:
    """j's Worker waits from base-120, its Launcher trains from base to base+300."""
    make_pod(cluster, "j-launcher", gpus=0, role="launcher", job="j", annotations=annotations)
    make_pod(cluster, "j-worker-0", gpus=1, role="worker", job="j", annotations=annotations)
    running(cluster, "j-worker-0", base - 120)
    history = History(cluster)
    history.start()
    running(cluster, "j-launcher", base)
    terminated(cluster, "j-launcher", base, base + 300, "Completed", 0)
    return history


def test_a_training_worker_exchanges_hundreds_of_mb_per_second_and_idles_otherwise(
        cluster, base):
    history = mpijob(cluster, base)
    for metric in (RECEIVE, TRANSMIT):
        points = samples(history, metric, "j-worker-0", base - 120, base + 500)
        values = [v for _, v in points if v is not None]
        assert all(b >= a for a, b in itertools.pairwise(values))  # a counter
        assert 200 * MB * 0.8 < rate(history, metric, "j-worker-0", base + 200) < 900 * MB * 1.25
        assert rate(history, metric, "j-worker-0", base - 10) < 10_000  # waiting: kB/s
        assert rate(history, metric, "j-worker-0", base + 480) < 10_000  # done
    assert 10_000 < rate(history, RECEIVE, "j-launcher", base + 200) < 100_000


def test_network_is_one_series_per_pod_on_its_own_cgroup(cluster, base):
    history = mpijob(cluster, base)
    source = ClusterSource(history, time.time())
    found = list(source.select([promql.Matcher("__name__", "=", RECEIVE)], base, time.time()))
    assert sorted(s.labels["pod"] for s in found) == ["j-launcher", "j-worker-0"]
    for s in found:
        assert s.labels["container"] == "" and s.labels["image"] == ""
        assert s.labels["interface"] == "eth0" and s.labels["namespace"] == "team-nlp"
        assert s.labels["id"].endswith(".slice")


def test_disk_reads_and_writes_are_per_container_and_follow_training(cluster, base):
    history = mpijob(cluster, base)
    reads = samples(history, READS, "j-worker-0", base - 120, base + 500,
                    container="main", device="/dev/nvme0n1")
    values = [v for _, v in reads if v is not None]
    assert all(b >= a for a, b in itertools.pairwise(values))
    assert 40 * MB * 0.8 < rate(history, READS, "j-worker-0", base + 200) < 160 * MB * 1.25
    assert 1 * MB * 0.8 < rate(history, WRITES, "j-worker-0", base + 200) < 6 * MB * 1.25
    assert rate(history, READS, "j-worker-0", base - 10) < 10_000


def test_a_hung_job_sends_nothing(cluster, base):
    history = mpijob(cluster, base, {"simcluster.io/failure": "hang"})
    assert rate(history, TRANSMIT, "j-worker-0", base + 200) < 10_000
    assert rate(history, READS, "j-worker-0", base + 200) < 10_000
