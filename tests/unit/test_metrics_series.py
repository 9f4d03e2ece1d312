"""simcluster's metric series: values as functions of pod lifetimes (in-process, no network).

Pods are written straight into an in-process cluster's store (no controllers run), with
container states dated in the past, so every expectation is about recorded history.
"""

from __future__ import annotations

import itertools
import math
import time
from typing import Any

import pytest

from simcluster.cluster import SYSTEM_USER, Cluster
from simcluster.monitoring import promql
from simcluster.monitoring.metrics_history import History
from simcluster.monitoring.metrics_model import GIB, SCRAPE_INTERVAL
from simcluster.monitoring.metrics_series import ClusterSource
from simcluster.monitoring.promql_eval import Evaluator

Obj = dict[str, Any]
NS = "team-nlp"


def ts(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


@pytest.fixture
def cluster() -> Cluster:
    return new_cluster()


def new_cluster() -> Cluster:
    """A cluster of one node with 8 A100 GPUs, its project team-nlp."""
    c = Cluster(speed=1.0)
    c.apply_system({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    c.apply_system({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "gpu-0", "labels": {
            "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.memory": "81920",
            "nvidia.com/gpu.count": "8"}},
        "spec": {},
        "status": {"capacity": {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8",
                                "pods": "250"},
                   "allocatable": {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8",
                                   "pods": "250"}}})
    return c


@pytest.fixture
def base() -> float:
    """A whole second ten minutes ago: training starts here in these tests."""
    return float(math.floor(time.time()) - 600)


def make_pod(cluster: Cluster, name: str, *, gpus: int = 1, role: str = "",
             job: str = "", index: int = 0, annotations: dict | None = None,
             memory: str = "16Gi") -> None:
    labels = {}
    if job:
        labels = {"training.kubeflow.org/job-name": job,
                  "training.kubeflow.org/job-role": role,
                  "training.kubeflow.org/replica-index": str(index)}
    limits = {"cpu": "4", "memory": memory}
    if gpus:
        limits["nvidia.com/gpu"] = str(gpus)
    cluster.create_as(SYSTEM_USER, {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "labels": labels,
                     "annotations": annotations or {}},
        "spec": {"nodeName": "gpu-0", "containers": [
            {"name": "main", "image": "quay.io/example/train:1",
             "resources": {"limits": limits}}]}})


def set_state(cluster: Cluster, name: str, state: Obj, phase: str = "Running") -> None:
    def edit(pod: Obj) -> None:
        pod["status"] = {"phase": phase, "containerStatuses": [{
            "name": "main", "image": "quay.io/example/train:1", "imageID": "", "ready": True,
            "restartCount": 0, "state": state}]}

    cluster.store.mutate(cluster.rt("pods"), NS, name, edit)


def running(cluster: Cluster, name: str, start: float) -> None:
    set_state(cluster, name, {"running": {"startedAt": ts(start)}})


def terminated(cluster: Cluster, name: str, start: float, end: float, reason: str,
               code: int) -> None:
    set_state(cluster, name, {"terminated": {"startedAt": ts(start), "finishedAt": ts(end),
                                             "reason": reason, "exitCode": code}},
              "Failed" if code else "Succeeded")


def samples(history: History, metric: str, pod: str, lo: float, hi: float,
            **labels: str) -> list[tuple[float, float | None]]:
    source = ClusterSource(history, time.time())
    matchers = [promql.Matcher("__name__", "=", metric), promql.Matcher("pod", "=", pod)] + [
        promql.Matcher(k, "=", v) for k, v in labels.items()]
    found = list(source.select(matchers, lo, hi))
    assert len(found) == 1, [s.labels for s in found]
    return found[0].samples(lo, hi)


def value_at(points: list[tuple[float, float | None]], t: float) -> float | None:
    before = [v for at, v in points if at <= t]
    return before[-1] if before else None


def test_oom_worker_memory_climbs_to_the_limit_at_the_failure_time(cluster, base):
    make_pod(cluster, "job-launcher", gpus=0, role="launcher", job="job")
    oom = {"simcluster.io/failure": "oom", "simcluster.io/failure-after-seconds": "300",
           "simcluster.io/run-seconds": "900"}
    make_pod(cluster, "job-worker-0", role="worker", job="job", index=0, annotations=oom)
    make_pod(cluster, "job-worker-1", role="worker", job="job", index=1, annotations=oom)
    running(cluster, "job-worker-0", base - 100)
    running(cluster, "job-worker-1", base - 100)
    running(cluster, "job-launcher", base)
    history = History(cluster)
    history.start()
    limit = 16 * GIB
    points = samples(history, "container_memory_working_set_bytes", "job-worker-0",
                     base - 100, base + 500)
    values = [v for _, v in points]
    assert all(v is not None and 0 < v <= limit for v in values)
    assert value_at(points, base - 1) < 0.1 * limit  # waiting for the launcher
    assert value_at(points, base + 30) < 0.7 * limit
    assert 0.85 * limit < value_at(points, base + 300 - 2 * SCRAPE_INTERVAL) < limit
    assert value_at(points, base + 300) == limit  # the last scrape before the kill
    # the healthy worker stays well below its limit
    other = samples(history, "container_memory_working_set_bytes", "job-worker-1",
                    base - 100, base + 500)
    assert max(v for _, v in other) < 0.9 * limit

    # once the kubelet OOMKills it, the climb ends at the real finishedAt
    terminated(cluster, "job-worker-0", base - 100, base + 250, "OOMKilled", 137)
    points = samples(history, "container_memory_working_set_bytes", "job-worker-0",
                     base - 100, base + 500)
    assert points[-1][1] is None  # staleness marker: the series ends with the container
    live = [(t, v) for t, v in points if v is not None]
    assert live[-1][0] <= base + 250
    assert live[-1][1] == limit
    assert all(v < limit for _, v in live[:-1])


def test_gpu_use_is_high_while_the_launcher_runs_and_low_otherwise(cluster, base):
    make_pod(cluster, "j-launcher", gpus=0, role="launcher", job="j")
    make_pod(cluster, "j-worker-0", gpus=2, role="worker", job="j")
    running(cluster, "j-worker-0", base - 120)
    history = History(cluster)
    history.start()
    running(cluster, "j-launcher", base)
    terminated(cluster, "j-launcher", base, base + 300, "Completed", 0)

    for gpu in ("0", "1"):
        points = samples(history, "DCGM_FI_DEV_GPU_UTIL", "j-worker-0", base - 120,
                         base + 500, gpu=gpu)
        waiting = [v for t, v in points if t < base]
        training = [v for t, v in points if base <= t < base + 300]
        after = [v for t, v in points if t >= base + 300]
        assert waiting and all(0 <= v <= 3 for v in waiting)
        assert training and all(80 <= v <= 98 for v in training)
        assert len(set(training)) > 1  # noisy, not flat
        assert after and all(0 <= v <= 3 for v in after)
        used = samples(history, "DCGM_FI_DEV_FB_USED", "j-worker-0", base - 120, base + 500,
                       gpu=gpu)
        free = samples(history, "DCGM_FI_DEV_FB_FREE", "j-worker-0", base - 120, base + 500,
                       gpu=gpu)
        for (t, u), (t2, f) in zip(used, free, strict=True):
            assert t == t2 and u + f == 81920
            assert (u > 0.5 * 81920) == (base <= t < base + 300)


def test_hang_drops_gpu_use_but_keeps_memory(cluster, base):
    make_pod(cluster, "h", gpus=1, annotations={"simcluster.io/failure": "hang",
                                                 "simcluster.io/failure-after-seconds": "120"})
    running(cluster, "h", base)
    history = History(cluster)
    history.start()
    util = samples(history, "DCGM_FI_DEV_GPU_UTIL", "h", base, base + 400)
    assert all(v >= 80 for t, v in util if t < base + 120)
    assert all(v == 0 for t, v in util if t >= base + 120)
    used = samples(history, "DCGM_FI_DEV_FB_USED", "h", base, base + 400)
    assert all(v > 0.5 * 81920 for _, v in used)


def test_a_hung_training_job_never_uses_its_gpus(cluster, base):
    hang = {"simcluster.io/failure": "hang"}
    make_pod(cluster, "hj-launcher", gpus=0, role="launcher", job="hj", annotations=hang)
    make_pod(cluster, "hj-worker-0", gpus=1, role="worker", job="hj", annotations=hang)
    running(cluster, "hj-worker-0", base - 60)
    running(cluster, "hj-launcher", base)
    history = History(cluster)
    history.start()
    util = samples(history, "DCGM_FI_DEV_GPU_UTIL", "hj-worker-0", base - 60, base + 400)
    assert all(v <= 3 for _, v in util)
    assert all(v == 0 for t, v in util if t >= base)
    used = samples(history, "DCGM_FI_DEV_FB_USED", "hj-worker-0", base - 60, base + 400)
    assert all(v > 0.5 * 81920 for t, v in used if t >= base)


def test_cpu_counter_rises_with_the_request_and_rate_reads_it(cluster, base):
    make_pod(cluster, "c", gpus=0)
    running(cluster, "c", base)
    history = History(cluster)
    history.start()
    points = samples(history, "container_cpu_usage_seconds_total", "c", base, base + 600)
    values = [v for _, v in points]
    assert all(b > a for a, b in itertools.pairwise(values))
    source = ClusterSource(history, time.time())
    result = Evaluator(source, [base + 590]).eval(promql.parse(
        'rate(container_cpu_usage_seconds_total{pod="c"}[5m])'))
    [(_, [rate])] = result.series.values()
    assert 0.65 * 4 * 0.8 < rate < 0.9 * 4 * 1.2


def test_gpus_of_pods_on_one_node_are_distinct(cluster, base):
    make_pod(cluster, "a", gpus=4)
    make_pod(cluster, "b", gpus=4)
    running(cluster, "a", base)
    running(cluster, "b", base + 5)
    history = History(cluster)
    history.start()
    source = ClusterSource(history, time.time())
    series = list(source.select([promql.Matcher("__name__", "=", "DCGM_FI_DEV_GPU_UTIL")],
                                base, time.time()))
    by_pod: dict[str, set[str]] = {}
    for s in series:
        by_pod.setdefault(s.labels["pod"], set()).add(s.labels["gpu"])
        assert s.labels["modelName"] == "NVIDIA A100-SXM4-80GB"
        assert s.labels["Hostname"] == "gpu-0"
        assert s.labels["device"] == f"nvidia{s.labels['gpu']}"
        assert s.labels["UUID"].startswith("GPU-")
    assert by_pod == {"a": {"0", "1", "2", "3"}, "b": {"4", "5", "6", "7"}}
    assert len({s.labels["UUID"] for s in series}) == 8


def test_deleted_pods_are_remembered_even_when_deleted_before_the_history_started(
        cluster, base):
    make_pod(cluster, "gone", gpus=1)
    running(cluster, "gone", base)
    terminated(cluster, "gone", base, base + 200, "Completed", 0)
    cluster.store.delete(cluster.rt("pods"), NS, "gone")
    history = History(cluster)  # replays the store's history
    history.start()
    util = samples(history, "DCGM_FI_DEV_GPU_UTIL", "gone", base - 60, base + 400)
    assert [t for t, v in util if v is None] == [base + 210]  # stale after the last scrape
    assert max(t for t, v in util if v is not None) <= base + 200
    # kube-state-metrics saw the pod object for as long as it existed (created just now)
    requests = samples(history, "kube_pod_container_resource_requests", "gone", base,
                       time.time() + 1, resource="nvidia_com_gpu")
    assert {v for _, v in requests if v is not None} == {1.0}


def test_values_are_deterministic(cluster, base):
    make_pod(cluster, "d", gpus=1)
    running(cluster, "d", base)
    first = History(cluster)
    first.start()
    second = History(cluster)
    second.start()
    for metric in ("DCGM_FI_DEV_GPU_UTIL", "container_memory_working_set_bytes",
                   "container_cpu_usage_seconds_total"):
        assert samples(first, metric, "d", base, base + 300) == \
            samples(second, metric, "d", base, base + 300)


def test_node_allocatable_and_request_units(cluster, base):
    make_pod(cluster, "r", gpus=2)
    history = History(cluster)
    history.start()
    source = ClusterSource(history, time.time())
    now = time.time()
    result = Evaluator(source, [now]).eval(promql.parse(
        'kube_node_status_allocatable{node="gpu-0"}'))
    units = {(lbl["resource"], lbl["unit"]): v[0] for lbl, v in result.series.values()}
    assert units[("cpu", "core")] == 64
    assert units[("memory", "byte")] == 512 * GIB
    assert units[("nvidia_com_gpu", "integer")] == 8
    result = Evaluator(source, [now]).eval(promql.parse(
        'kube_pod_container_resource_requests{pod="r"}'))
    units = {(lbl["resource"], lbl["unit"]): v[0] for lbl, v in result.series.values()}
    assert units == {("cpu", "core"): 4, ("memory", "byte"): 16 * GIB,
                     ("nvidia_com_gpu", "integer"): 2}


def test_instant_lookups_agree_with_the_samples(cluster, base):
    make_pod(cluster, "s", gpus=1)
    running(cluster, "s", base)
    terminated(cluster, "s", base, base + 200, "Completed", 0)
    history = History(cluster)
    history.start()
    [series] = ClusterSource(history, time.time()).select(
        [promql.Matcher("__name__", "=", "DCGM_FI_DEV_FB_USED")], base - 400, base + 600)
    for t in range(int(base) - 30, int(base) + 600, 7):
        window = series.samples(t - 300, t)
        expected = window[-1][1] if window else None
        assert series.at(t, 300) == expected, t
        assert series.active(t - 300, t) == any(v is not None for _, v in window)


def test_scrapes_follow_the_clock_speed(base):
    fast = Cluster(speed=50.0)
    fast.apply_system({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    history = History(fast)
    history.start()
    make_pod(fast, "quick", gpus=0)
    running(fast, "quick", base)
    points = samples(history, "container_memory_working_set_bytes", "quick", base, base + 3)
    assert [round(t - base, 3) for t, _ in points] == [
        round(0.3 * k, 3) for k in range(1, 11)]


def test_a_pod_recreated_on_the_same_gpu_continues_one_series(cluster, base):
    make_pod(cluster, "w", gpus=1)
    running(cluster, "w", base)
    terminated(cluster, "w", base, base + 100, "Error", 1)
    cluster.store.delete(cluster.rt("pods"), NS, "w")
    make_pod(cluster, "w", gpus=1)
    running(cluster, "w", base + 101)
    history = History(cluster)
    history.start()
    source = ClusterSource(history, time.time())
    times = [base + s for s in range(0, 300)]
    result = Evaluator(source, times).eval(promql.parse('DCGM_FI_DEV_GPU_UTIL{pod="w"}'))
    [(labels, values)] = result.series.values()
    assert labels["gpu"] == "0"
    assert all(v is not None for v in values[:100]) and all(v is not None for v in values[120:])
