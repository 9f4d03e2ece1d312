"""What the metrics remember: pod and node lifetimes, kept from the store's changes.

A real Prometheus answers `query_range` over the last day for pods that have finished or
been deleted since; simcluster keeps no samples (values are functions of a pod's identity
and time, see metrics_series.py) but remembers, for 24 hours, each pod's containers and
their runs (running startedAt .. terminated finishedAt, restarts included), its node and
GPUs, and each node's allocatable resources and GPU labels.

At start the store's change history (which covers the scenario's warped past) is replayed,
then every change is followed through `store.subscribe`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from simcluster import quantity
from simcluster.behaviour import Behaviour, behaviour_for
from simcluster.node.workloads import training_started_at

if TYPE_CHECKING:
    from simcluster.apiserver.store import Change
    from simcluster.cluster import Cluster

Obj = dict[str, Any]

RETENTION = 24 * 3600.0
JOB_NAME = "training.kubeflow.org/job-name"
JOB_ROLE = "training.kubeflow.org/job-role"
REPLICA_INDEX = "training.kubeflow.org/replica-index"
REPLICA_TYPE = "training.kubeflow.org/replica-type"
GPU = "nvidia.com/gpu"


def parse_time(ts: str | None) -> float | None:
    """RFC 3339 as clients write it (`Z` or an offset, with or without fractions)."""
    if not ts or not isinstance(ts, str):
        return None
    try:
        t = datetime.fromisoformat(ts)
    except ValueError:
        return None
    return (t if t.tzinfo else t.replace(tzinfo=UTC)).timestamp()


def seed_of(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("/".join(parts).encode()).digest()[:8], "big")


@dataclass
class Run:
    """One run of a container: from its start to its end (None while it runs)."""

    start: float
    end: float | None = None
    reason: str = ""  # the terminated reason, e.g. OOMKilled


@dataclass
class ContainerRecord:
    name: str
    image: str
    requests: dict[str, float]
    limits: dict[str, float]
    gpus: int
    runs: list[Run] = field(default_factory=list)
    gpu_indices: list[int] = field(default_factory=list)

    def run_started(self, start: float) -> Run:
        for run in self.runs:
            if abs(run.start - start) < 1e-6:
                return run
        run = Run(start)
        self.runs.append(run)
        self.runs.sort(key=lambda r: r.start)
        return run


@dataclass
class PodRecord:
    namespace: str
    name: str
    uid: str
    created: float
    labels: dict[str, str]
    node: str = ""
    deleted: float | None = None
    containers: dict[str, ContainerRecord] = field(default_factory=dict)
    behaviour: Behaviour = field(default_factory=Behaviour)
    speed: float = 1.0  # the clock speed when the pod first ran (1 while warping)
    seed: int = 0
    training_start: float | None = None  # as the kubelet's workload reported it

    @property
    def job(self) -> str:
        return self.labels.get(JOB_NAME, "")

    @property
    def role(self) -> str:
        return self.labels.get(JOB_ROLE, "")

    @property
    def replica_index(self) -> int:
        try:
            return int(self.labels.get(REPLICA_INDEX, "0"))
        except ValueError:
            return 0

    @property
    def first_start(self) -> float | None:
        starts = [r.start for c in self.containers.values() for r in c.runs]
        return min(starts) if starts else None

    def last_end(self) -> float | None:
        """When the pod last stopped running or existing; None while it still does."""
        if self.deleted is None and any(r.end is None for c in self.containers.values()
                                        for r in c.runs):
            return None
        ends = [r.end for c in self.containers.values() for r in c.runs if r.end is not None]
        if self.deleted is not None:
            ends.append(self.deleted)
        return max(ends) if ends else None

    def holds_gpus_at(self, t: float) -> bool:
        return any(c.gpu_indices and any(r.start <= t and (r.end is None or r.end > t)
                                         for r in c.runs) for c in self.containers.values())


@dataclass
class NodeRecord:
    name: str
    created: float
    labels: dict[str, str]
    allocatable: dict[str, float]
    deleted: float | None = None
    speed: float = 1.0


def _resources(spec: Obj | None) -> dict[str, float]:
    out: dict[str, float] = {}
    for k, v in (spec or {}).items():
        try:
            out[k] = float(quantity.parse(v))
        except quantity.QuantityError:
            continue
    return out


def _latest_time(pod: Obj) -> float | None:
    """The latest moment a pod's status mentions (for changes replayed after the fact)."""
    times: list[float] = []
    status = pod.get("status") or {}
    for c in status.get("conditions") or []:
        t = parse_time(c.get("lastTransitionTime"))
        if t is not None:
            times.append(t)
    for cs in status.get("containerStatuses") or []:
        for st in (cs.get("state") or {}, cs.get("lastState") or {}):
            for v in st.values():
                for k in ("startedAt", "finishedAt"):
                    t = parse_time((v or {}).get(k))
                    if t is not None:
                        times.append(t)
    return max(times) if times else None


class History:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.clock = cluster.clock
        self.pods: dict[str, PodRecord] = {}
        self.nodes: dict[str, NodeRecord] = {}
        self._pods_rt = cluster.rt("pods")
        self._nodes_rt = cluster.rt("nodes")
        self._replaying = False
        self._changes = 0

    def start(self) -> None:
        """Replay what the store still remembers, take in the present, then follow it."""
        store = self.cluster.store
        self._replaying = True
        try:
            for rt in (self._nodes_rt, self._pods_rt):
                changes = store.changes_since(rt, 0)
                if changes is None:
                    changes = store.changes_since(rt, store.oldest_watchable()) or []
                for change in changes:
                    self.observe(change)
        finally:
            self._replaying = False
        for node in store.iter_raw(self._nodes_rt):
            self._observe_node(node, False)
        for pod in store.iter_raw(self._pods_rt):
            self._observe_pod(pod, False)
        store.subscribe(self.observe)

    # -- changes ---------------------------------------------------------------------------
    def observe(self, change: Change) -> None:
        if change.rt is self._pods_rt:
            self._observe_pod(change.obj, change.type == "DELETED")
        elif change.rt is self._nodes_rt:
            self._observe_node(change.obj, change.type == "DELETED")
        else:
            return
        self._changes += 1
        if self._changes % 500 == 0:
            self.prune()

    def _now(self, obj: Obj) -> float:
        """When a change happened: the clock when live, the object's own times in replay."""
        if not self._replaying:
            return self.clock.now()
        t = _latest_time(obj)
        deletion = parse_time(obj.get("metadata", {}).get("deletionTimestamp"))
        if deletion is not None:
            t = deletion if t is None else max(t, min(deletion, self.clock.now()))
        return t if t is not None else self.clock.now()

    def _observe_node(self, node: Obj, deleted: bool) -> None:
        meta = node.get("metadata", {})
        name = meta.get("name", "")
        rec = self.nodes.get(name)
        if rec is None or (rec.deleted is not None and not deleted):
            rec = NodeRecord(name, parse_time(meta.get("creationTimestamp")) or
                             self.clock.now(), {}, {})
            rec.speed = 1.0 if self._replaying or self.clock.warping else self.clock.speed
            self.nodes[name] = rec
        rec.labels = dict(meta.get("labels") or {})
        rec.allocatable = _resources((node.get("status") or {}).get("allocatable"))
        if deleted:
            rec.deleted = self._now(node)

    def _observe_pod(self, pod: Obj, deleted: bool) -> None:
        meta = pod.get("metadata", {})
        uid = meta.get("uid", "")
        rec = self.pods.get(uid)
        if rec is None:
            if deleted and not any((pod.get("status") or {}).get("containerStatuses") or []):
                return  # gone before it was ever seen: nothing to remember
            rec = PodRecord(meta.get("namespace", ""), meta.get("name", ""), uid,
                            parse_time(meta.get("creationTimestamp")) or self.clock.now(),
                            {}, seed=seed_of(uid or meta.get("name", "")))
            rec.speed = 1.0 if self._replaying or self.clock.warping else self.clock.speed
            self.pods[uid] = rec
        if rec.deleted is not None:
            return
        rec.labels = dict(meta.get("labels") or {})
        spec = pod.get("spec") or {}
        rec.node = spec.get("nodeName") or rec.node
        for c in spec.get("containers") or []:
            if c.get("name") in rec.containers:
                continue
            res = c.get("resources") or {}
            requests = _resources(res.get("requests"))
            limits = _resources(res.get("limits"))
            rec.containers[c.get("name", "")] = ContainerRecord(
                c.get("name", ""), c.get("image", ""), requests, limits,
                int(requests.get(GPU, limits.get(GPU, 0))))
        if not deleted:
            rec.behaviour = behaviour_for(self.cluster, pod)
            self.refresh_training_start(rec, pod)
        status = pod.get("status") or {}
        for cs in status.get("containerStatuses") or []:
            c = rec.containers.get(cs.get("name", ""))
            if c is None:
                continue
            self._apply_state(rec, c, cs.get("lastState") or {}, False)
            self._apply_state(rec, c, cs.get("state") or {}, True)
            if (cs.get("state") or {}).get("waiting"):
                for run in c.runs:  # back to waiting without a word on how it ended
                    if run.end is None:
                        run.end = max(run.start, self._now(pod))
        phase = status.get("phase")
        if deleted or phase in ("Succeeded", "Failed"):
            now = self._now(pod)
            for c in rec.containers.values():
                for run in c.runs:
                    if run.end is None:
                        run.end = max(run.start, now)
            if deleted:
                rec.deleted = max(now, rec.created)

    def _apply_state(self, rec: PodRecord, c: ContainerRecord, state: Obj,
                     current: bool) -> None:
        running = state.get("running") or {}
        terminated = state.get("terminated") or {}
        start = parse_time((running or terminated).get("startedAt"))
        if start is None:
            return
        run = c.run_started(start)
        if current:
            self._supersede(c, run)
        if terminated:
            end = parse_time(terminated.get("finishedAt"))
            if end is None:
                return
            run.end = max(start, end)
            run.reason = terminated.get("reason", "")
        self._assign_gpus(rec, c, start)

    @staticmethod
    def _supersede(c: ContainerRecord, current: Run) -> None:
        """A container runs once at a time: its current run ends an older open one, and
        an open run that started later was written over (a status rewritten with an earlier
        startedAt), so it never happened."""
        for other in list(c.runs):
            if other is current or other.end is not None:
                continue
            if other.start < current.start:
                other.end = current.start
            else:
                c.runs.remove(other)

    def _assign_gpus(self, rec: PodRecord, c: ContainerRecord, start: float) -> None:
        """The lowest free GPU indices on the node, as the device plugin hands them out."""
        if c.gpu_indices or c.gpus <= 0 or not rec.node:
            return
        taken: set[int] = set()
        for other in self.pods.values():
            if other.node == rec.node and other.holds_gpus_at(start):
                for oc in other.containers.values():
                    taken.update(oc.gpu_indices)
        for oc in rec.containers.values():
            taken.update(oc.gpu_indices)
        node = self.nodes.get(rec.node)
        capacity = int(node.allocatable.get(GPU, 0)) if node else 0
        free = [i for i in range(max(capacity, c.gpus)) if i not in taken]
        if len(free) < c.gpus:  # over-committed: share indices rather than invent GPUs
            free = list(range(c.gpus))
        c.gpu_indices = free[:c.gpus]

    def refresh_training_start(self, rec: PodRecord, pod: Obj | None = None) -> None:
        """Remember when the kubelet's workload began training this pod's job."""
        if rec.training_start is not None or not rec.job or rec.deleted is not None:
            return
        if pod is None:
            pod = self.cluster.store.get_raw(self._pods_rt, rec.namespace, rec.name)
        if pod is None or pod.get("metadata", {}).get("uid") != rec.uid:
            return
        t = training_started_at(self.cluster, pod)
        # a job of the same name that ran before this pod existed is not this one
        if t is not None and t >= rec.created - 1:
            rec.training_start = t

    # -- queries ------------------------------------------------------------------------------
    def prune(self) -> None:
        horizon = self.clock.now() - RETENTION
        for uid in [u for u, r in self.pods.items() if (r.last_end() or horizon + 1) < horizon
                    and r.deleted is not None]:
            del self.pods[uid]
        for name in [n for n, r in self.nodes.items()
                     if r.deleted is not None and r.deleted < horizon]:
            del self.nodes[name]
