"""The series simcluster's Prometheus serves, computed from pod lifetimes and time.

No samples are stored: every value is a deterministic function of a pod's identity (seeded
from its uid), its recorded lifetime (metrics_history.py) and the sample time. Samples
fall on a scrape grid that starts when the target appears (each target has its own
offset, as Prometheus spreads scrapes), every 15 nominal seconds: 15 s at speed 1, 0.3 s
at speed 50 (never below 0.2 s), so a short job at a test's speed still draws a curve. A
staleness marker follows the last scrape of a target that went away, so a finished pod's
series ends at once (range functions still read its last samples, as in Prometheus).
Series are kept 24 hours.

Families (labels as the real exporters on OpenShift give them):

- DCGM exporter, one series per GPU held by a running container:
  `DCGM_FI_DEV_GPU_UTIL` (0-100), `DCGM_FI_PROF_GR_ENGINE_ACTIVE` (0-1),
  `DCGM_FI_DEV_FB_USED`, `DCGM_FI_DEV_FB_FREE` (MiB; total from the node label
  `nvidia.com/gpu.memory`, default 81920) with `gpu`, `UUID`, `device`, `pci_bus_id`,
  `modelName`, `Hostname` (the node), `DCGM_FI_DRIVER_VERSION`, `namespace`, `pod`,
  `container`, `instance`, `job`.
- cAdvisor (kubelet): `container_cpu_usage_seconds_total`,
  `container_memory_working_set_bytes`, `container_fs_reads_bytes_total`,
  `container_fs_writes_bytes_total` per container, `container_network_receive_bytes_total`,
  `container_network_transmit_bytes_total` per pod (metrics_cadvisor.py).
- kube-state-metrics: `kube_pod_container_resource_requests` (`resource` cpu / memory /
  nvidia_com_gpu ..., `unit` core / byte / integer) while the pod object exists, and
  `kube_node_status_allocatable` per node.
- whatever training scripts push to the Pushgateway (pushgateway.py).

How the values behave over a pod's life is metrics_model.py's business.
"""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from simcluster.monitoring import metrics_cadvisor
from simcluster.monitoring.metrics_cadvisor import CADVISOR
from simcluster.monitoring.metrics_history import (
    RETENTION,
    ContainerRecord,
    History,
    NodeRecord,
    PodRecord,
    Run,
)
from simcluster.monitoring.metrics_model import (
    SCRAPE_INTERVAL,
    PodModel,
    overlaps,
    scrape_interval,
    spans,
)
from simcluster.monitoring.promql import Matcher, matches_all

DEFAULT_GPU_MEMORY_MIB = 81920
DRIVER_VERSION = "550.127.05"
# PCI bus ids of the eight GPUs of a DGX/HGX A100 board, as nvidia-smi shows them
PCI_BUSES = ("07", "0F", "47", "4E", "87", "90", "B7", "BD")
MODEL_NAMES = {"NVIDIA-H100-80GB-HBM3": "NVIDIA H100 80GB HBM3",
               "NVIDIA-A100-80GB-PCIe": "NVIDIA A100 80GB PCIe",
               "NVIDIA-H200": "NVIDIA H200"}

DCGM = ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_DEV_FB_USED",
        "DCGM_FI_DEV_FB_FREE")
KSM_PODS = "kube_pod_container_resource_requests"
KSM_NODES = "kube_node_status_allocatable"
METRIC_NAMES = DCGM + CADVISOR + (KSM_PODS, KSM_NODES)


def model_name(product: str) -> str:
    """GPU feature discovery's label value back to DCGM's modelName."""
    if product in MODEL_NAMES:
        return MODEL_NAMES[product]
    return product.replace("-", " ", 1)


def resource_unit(resource: str) -> tuple[str, str]:
    name = resource.replace(".", "_").replace("/", "_").replace("-", "_")
    if resource == "cpu":
        return name, "core"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        return name, "byte"
    return name, "integer"


# -- series -------------------------------------------------------------------------------
@dataclass
class GeneratedSeries:
    """Samples on the scrape grid of each run (from its start), then a staleness marker."""

    labels: dict[str, str]
    runs: list[tuple[float, float | None]]
    value: Callable[[float], float]
    now: float
    interval: float = SCRAPE_INTERVAL

    def _stale_at(self, i: int) -> float | None:
        """When the scrape after run i's end finds the target gone (None: never)."""
        start, end = self.runs[i]
        if end is None:
            return None
        stale = start + (math.floor((end - start) / self.interval) + 1) * self.interval
        following = self.runs[i + 1][0] if i + 1 < len(self.runs) else math.inf
        return stale if stale < following else None

    def samples(self, lo: float, hi: float) -> list[tuple[float, float | None]]:
        lo = max(lo, self.now - RETENTION)
        hi = min(hi, self.now)
        out: list[tuple[float, float | None]] = []
        for i, (start, end) in enumerate(self.runs):
            stop = min(self.now if end is None else end, hi)
            k = 0 if lo < start else math.floor((lo - start) / self.interval) + 1
            t = start + k * self.interval
            while t <= stop:
                out.append((round(t, 3), self.value(t)))
                k += 1
                t = start + k * self.interval
            stale = self._stale_at(i)
            if stale is not None and lo < stale <= hi:
                out.append((round(stale, 3), None))
        return out

    def at(self, t: float, lookback: float) -> float | None:
        """The value an instant selector sees at t: the latest sample within the lookback,
        unless a staleness marker came after it."""
        last = min(t, self.now)
        latest: tuple[float, bool] | None = None  # (time, is a staleness marker)
        for i, (start, end) in enumerate(self.runs):
            if start > last:
                break
            stop = min(last, self.now if end is None else end)
            if stop >= start:
                latest = (start + math.floor((stop - start) / self.interval) * self.interval,
                          False)
            stale = self._stale_at(i)
            if stale is not None and stale <= last:
                latest = (stale, True)
        if latest is None or latest[1] or latest[0] <= t - lookback or \
                latest[0] < self.now - RETENTION:
            return None
        return self.value(latest[0])

    def active(self, lo: float, hi: float) -> bool:
        """Whether any sample falls in (lo, hi]."""
        lo = max(lo, self.now - RETENTION)
        hi = min(hi, self.now)
        for start, end in self.runs:
            first = start if lo < start else \
                start + (math.floor((lo - start) / self.interval) + 1) * self.interval
            if first <= min(hi, self.now if end is None else end):
                return True
        return False


class MergedSeries:
    """One label set written by several targets in turn: each part until the next began."""

    def __init__(self, parts: list[GeneratedSeries]) -> None:
        self.parts = sorted(parts, key=lambda p: p.runs[0][0])
        self.labels = self.parts[0].labels

    def samples(self, lo: float, hi: float) -> list[tuple[float, float | None]]:
        out: list[tuple[float, float | None]] = []
        for i, part in enumerate(self.parts):
            until = self.parts[i + 1].runs[0][0] if i + 1 < len(self.parts) else math.inf
            out += [s for s in part.samples(lo, min(hi, until)) if s[0] < until]
        return out

    def at(self, t: float, lookback: float) -> float | None:
        window = self.samples(t - lookback, t)
        return window[-1][1] if window else None

    def active(self, lo: float, hi: float) -> bool:
        return any(v is not None for _, v in self.samples(lo, hi))


class ClusterSource:
    """A promql_eval.Source over the history of a cluster."""

    def __init__(self, history: History, now: float, drop: re.Pattern | None = None,
                 pushed: Callable[[float], list[GeneratedSeries]] | None = None) -> None:
        self.history = history
        self.now = now
        self.drop = drop  # metric names never collected (a scrape's relabelling drops them)
        self.pushed = pushed  # what a Pushgateway holds, as scraped (pushgateway.py)
        self._launchers: dict[tuple[str, str], list[Run]] | None = None
        self._models: dict[str, PodModel] = {}

    def launcher_runs(self) -> dict[tuple[str, str], list[Run]]:
        if self._launchers is None:
            index: dict[tuple[str, str], list[Run]] = {}
            for p in self.history.pods.values():
                if p.role == "launcher" and p.job:
                    runs = next((c.runs for c in p.containers.values() if c.runs), [])
                    index.setdefault((p.namespace, p.job), []).extend(runs)
            for runs in index.values():
                runs.sort(key=lambda r: r.start)
            self._launchers = index
        return self._launchers

    def model(self, pod: PodRecord) -> PodModel:
        if pod.uid not in self._models:
            self.history.refresh_training_start(pod)
            runs = self.launcher_runs().get((pod.namespace, pod.job))
            self._models[pod.uid] = PodModel(pod, runs)
        return self._models[pod.uid]

    def select(self, matchers: list[Matcher], lo: float,
               hi: float) -> Iterator[GeneratedSeries | MergedSeries]:
        """Matching series; pods of one name whose series share every label (a worker
        re-created on the same GPU) are one series, as Prometheus identifies series."""
        found: dict[tuple, list[GeneratedSeries]] = {}
        for series in self._select(matchers, lo, hi):
            found.setdefault(tuple(sorted(series.labels.items())), []).append(series)
        for parts in found.values():
            yield parts[0] if len(parts) == 1 else MergedSeries(parts)

    def _select(self, matchers: list[Matcher], lo: float,
                hi: float) -> Iterator[GeneratedSeries]:
        lo = max(lo, self.now - RETENTION)
        names = [n for n in METRIC_NAMES if not (self.drop and self.drop.fullmatch(n))
                 and all(m.matches(n) for m in matchers if m.name == "__name__")]
        quick = [m for m in matchers if m.name in ("namespace", "pod")]
        pods = [p for p in self.history.pods.values()
                if all(m.matches(p.namespace if m.name == "namespace" else p.name)
                       for m in quick)]
        for name in names:
            if name in DCGM:
                candidates = self._dcgm(name, pods, lo, hi)
            elif name in CADVISOR:
                candidates = self._cadvisor(name, pods, lo, hi)
            elif name == KSM_PODS:
                candidates = self._requests(pods, lo, hi)
            else:
                candidates = self._allocatable(lo, hi)
            for series in candidates:
                if matches_all(matchers, series.labels):
                    yield series
        for series in self.pushed(self.now) if self.pushed else ():
            name = series.labels["__name__"]
            if not (self.drop and self.drop.fullmatch(name)) and \
                    matches_all(matchers, series.labels) and series.active(lo, hi):
                yield series

    # -- families -------------------------------------------------------------------------
    def _dcgm(self, name: str, pods: list[PodRecord], lo: float,
              hi: float) -> Iterator[GeneratedSeries]:
        for pod in pods:
            node = self.history.nodes.get(pod.node)
            for c in pod.containers.values():
                runs = spans(c.runs)
                if not c.gpu_indices or not overlaps(runs, lo, hi):
                    continue
                model = self.model(pod)
                for idx in c.gpu_indices:
                    yield GeneratedSeries(self._gpu_labels(name, pod, c, idx, node), runs,
                                          self._gpu_value(name, model, pod, idx, node),
                                          self.now, scrape_interval(pod.speed))

    @staticmethod
    def _gpu_labels(name: str, pod: PodRecord, c: ContainerRecord, idx: int,
                    node: NodeRecord | None) -> dict[str, str]:
        product = (node.labels if node else {}).get("nvidia.com/gpu.product",
                                                    "NVIDIA-A100-SXM4-80GB")
        return {"__name__": name, "DCGM_FI_DRIVER_VERSION": DRIVER_VERSION,
                "Hostname": pod.node,
                "UUID": f"GPU-{uuid.uuid5(uuid.NAMESPACE_DNS, f'{pod.node}.gpu{idx}')}",
                "container": c.name, "device": f"nvidia{idx}", "gpu": str(idx),
                "instance": f"{pod.node}:9400", "job": "nvidia-dcgm-exporter",
                "modelName": model_name(product), "namespace": pod.namespace,
                "pci_bus_id": f"00000000:{PCI_BUSES[idx % len(PCI_BUSES)]}:00.0",
                "pod": pod.name}

    @staticmethod
    def _gpu_value(name: str, model: PodModel, pod: PodRecord, idx: int,
                   node: NodeRecord | None) -> Callable[[float], float]:
        seed = pod.seed ^ (idx + 1) * 0x1000193
        try:
            total = float((node.labels if node else {}).get("nvidia.com/gpu.memory",
                                                            DEFAULT_GPU_MEMORY_MIB))
        except ValueError:
            total = float(DEFAULT_GPU_MEMORY_MIB)
        if name == "DCGM_FI_DEV_GPU_UTIL":
            return lambda t: model.gpu_util(seed, t)
        if name == "DCGM_FI_PROF_GR_ENGINE_ACTIVE":
            return lambda t: model.engine_active(seed, t)
        if name == "DCGM_FI_DEV_FB_USED":
            return lambda t: model.fb_used(seed, total, t)
        return lambda t: total - model.fb_used(seed, total, t)

    def _cadvisor(self, name: str, pods: list[PodRecord], lo: float,
                  hi: float) -> Iterator[GeneratedSeries]:
        for labels, runs, value, interval in metrics_cadvisor.targets(name, pods, lo, hi,
                                                                      self.model):
            yield GeneratedSeries(labels, runs, value, self.now, interval)

    def _requests(self, pods: list[PodRecord], lo: float,
                  hi: float) -> Iterator[GeneratedSeries]:
        for pod in pods:
            span = [(pod.created, pod.deleted)]
            if not overlaps(span, lo, hi):
                continue
            for c in pod.containers.values():
                for resource, amount in sorted(c.requests.items()):
                    rname, unit_name = resource_unit(resource)
                    labels = {"__name__": KSM_PODS, "container": c.name,
                              "job": "kube-state-metrics", "namespace": pod.namespace,
                              "node": pod.node, "pod": pod.name, "resource": rname,
                              "uid": pod.uid, "unit": unit_name}
                    yield GeneratedSeries(labels, span, lambda _t, v=amount: v, self.now,
                                          scrape_interval(pod.speed))

    def _allocatable(self, lo: float, hi: float) -> Iterator[GeneratedSeries]:
        for node in self.history.nodes.values():
            span = [(node.created, node.deleted)]
            if not overlaps(span, lo, hi):
                continue
            for resource, amount in sorted(node.allocatable.items()):
                rname, unit_name = resource_unit(resource)
                labels = {"__name__": KSM_NODES, "job": "kube-state-metrics",
                          "node": node.name, "resource": rname, "unit": unit_name}
                yield GeneratedSeries(labels, span, lambda _t, v=amount: v, self.now,
                                      scrape_interval(node.speed))

