"""default-scheduler: binds pending pods to nodes (decisions in scheduling.py).

One reconcile key stands for "the scheduling queue": every pass looks at all pending pods
in priority, then creation order (which pods are pending, and what the pods bound to each
node request, are kept up to date from every pod change, not read from the store again).
A pod that did not fit is tried again, like the real
scheduler's unschedulable queue does it, when the cluster changed in a way that may make
room (a bound pod finished or went away, a node was added or changed) once its back-off
(1 s doubling to 10 s) has passed, and otherwise every RETRY_SECONDS. Each failed attempt
records the FailedScheduling event again; identical events aggregate (count grows).
A pass makes at most BATCH attempts and leaves the rest to a pass right after it, so a
thousand pending pods never hold the event loop. A pod whose PersistentVolumeClaim does not
exist is unschedulable until the claim is created (which wakes the queue).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from simcluster.apiserver.store import Change
from simcluster.backoff import exponential
from simcluster.controllers.base import Controller, Key
from simcluster.placement import scheduling

if TYPE_CHECKING:
    from simcluster.cluster import Cluster

Obj = dict[str, Any]

SCHEDULER_NAME = "default-scheduler"
QUEUE_KEY: Key = ("", "scheduling-queue")
RETRY_SECONDS = 30.0
BACKOFF_INITIAL = 1.0
BACKOFF_MAX = 10.0
BATCH = 100  # scheduling attempts per pass; more pending pods are tried in the next pass
BATCH_REQUEUE = 0.01  # nominal seconds before that next pass


@dataclass
class Attempt:
    count: int
    at: float  # clock time of the last attempt
    epoch: int  # capacity epoch seen by that attempt


def _is_pending(pod: Obj) -> bool:
    spec = pod.get("spec") or {}
    return not spec.get("nodeName") and \
        (spec.get("schedulerName") or SCHEDULER_NAME) == SCHEDULER_NAME and \
        not pod["metadata"].get("deletionTimestamp") and \
        (pod.get("status") or {}).get("phase") not in scheduling.TERMINAL


def _node_shape(node: Obj) -> tuple:
    return (node["metadata"].get("labels"), node.get("spec"),
            (node.get("status") or {}).get("allocatable"))


def set_condition(pod: Obj, condition: Obj, now: str) -> bool:
    """Put `condition` into pod.status.conditions; keep lastTransitionTime when the status
    did not change. False when nothing changed."""
    conditions = pod.setdefault("status", {}).setdefault("conditions", [])
    for i, c in enumerate(conditions):
        if c.get("type") == condition["type"]:
            merged = dict(condition)
            merged["lastProbeTime"] = None
            merged["lastTransitionTime"] = c.get("lastTransitionTime") \
                if c.get("status") == condition["status"] else now
            if merged == c:
                return False
            conditions[i] = merged
            return True
    conditions.append({**condition, "lastProbeTime": None, "lastTransitionTime": now})
    return True


class Scheduler(Controller):
    name = SCHEDULER_NAME

    def __init__(self, cluster: Cluster) -> None:
        super().__init__(cluster)
        self._epoch = 0
        self._attempts: dict[str, Attempt] = {}  # pod uid -> last failed attempt
        self._wake_at: float | None = None
        self._requests: dict[str, scheduling.Resources] = {}  # by uid; pod specs are immutable
        # kept up to date from every pod change, so that a pass costs the pending pods and
        # the nodes, not every pod of the cluster (50,000 pods: one pass per new pod)
        self._occupying: dict[str, tuple[str, scheduling.Resources]] = {}  # uid -> node
        self._used: dict[str, scheduling.Resources] = {}  # node -> requests of its pods
        self._count: dict[str, int] = {}  # node -> pods on it
        self._pending: dict[str, tuple[str, str]] = {}  # uid -> (namespace, name)

    # -- what wakes the queue ---------------------------------------------------------------
    def watches(self) -> Iterable[tuple[str, Any]]:
        yield "/pods", self._on_pod
        yield "/nodes", self._on_node
        yield "/persistentvolumeclaims", self._on_claim

    def _track(self, change: Change) -> None:
        pod = change.obj
        meta = pod["metadata"]
        uid = meta["uid"]
        before = self._occupying.pop(uid, None)
        if before is not None:
            node, requests = before
            used = self._used[node]
            for k, v in requests.items():
                used[k] -= v
            self._count[node] -= 1
        self._pending.pop(uid, None)
        if change.type == "DELETED":
            self._requests.pop(uid, None)
            return
        requests = self._requests.get(uid)
        if requests is None:
            requests = self._requests[uid] = scheduling.pod_requests(pod)
        if scheduling.occupies_node(pod):
            node = pod["spec"]["nodeName"]
            self._occupying[uid] = (node, requests)
            used = self._used.setdefault(node, {})
            for k, v in requests.items():
                used[k] = used.get(k, 0) + v
            self._count[node] = self._count.get(node, 0) + 1
        elif _is_pending(pod):
            self._pending[uid] = (meta.get("namespace", ""), meta["name"])

    def _on_pod(self, change: Change) -> Iterable[Key]:
        self._track(change)
        old, new = change.old, change.obj
        if change.type == "DELETED":
            if scheduling.occupies_node(old or new):
                self._epoch += 1
                yield QUEUE_KEY
            return
        if old is not None and scheduling.occupies_node(old) and \
                not scheduling.occupies_node(new):
            self._epoch += 1
            yield QUEUE_KEY
        elif _is_pending(new) and (old is None or old.get("spec") != new.get("spec")):
            yield QUEUE_KEY

    def _on_node(self, change: Change) -> Iterable[Key]:
        if change.type != "MODIFIED" or change.old is None or \
                _node_shape(change.old) != _node_shape(change.obj):
            self._epoch += 1
            yield QUEUE_KEY

    def _on_claim(self, change: Change) -> Iterable[Key]:
        if change.type == "ADDED":
            self._epoch += 1
            yield QUEUE_KEY

    def _missing_claim(self, pod: Obj) -> str | None:
        ns = pod["metadata"].get("namespace", "")
        claims = self.rt("persistentvolumeclaims")
        for name in scheduling.claim_names(pod):
            if self.store.get_raw(claims, ns, name) is None:
                return name
        return None

    def _wake(self) -> None:
        self._wake_at = None
        self.enqueue(QUEUE_KEY)

    def _schedule_wake(self, due: float) -> None:
        if self._wake_at is not None and self._wake_at <= due:
            return
        self._wake_at = due
        real = max(0.0, due - self.clock.now())
        self.clock.call_later(real * self.clock.speed, self._wake)

    # -- a pass over the queue -----------------------------------------------------------------
    def reconcile(self, key: Key) -> float | None:
        if key != QUEUE_KEY:
            return None
        nodes = {}
        for n in self.store.iter_raw(self.rt("nodes")):
            info = scheduling.NodeInfo.of(n)
            info.requested = dict(self._used.get(info.name) or {})
            info.pods = self._count.get(info.name, 0)
            nodes[info.name] = info
        pods_rt = self.rt("pods")
        pending: list[Obj] = []
        for uid, (ns, name) in self._pending.items():
            pod = self.store.get_raw(pods_rt, ns, name)
            if pod is not None and pod["metadata"]["uid"] == uid and _is_pending(pod):
                pending.append(pod)
        requests = self._requests
        for uid in [u for u in self._attempts if u not in self._pending]:
            del self._attempts[uid]
        pending.sort(key=lambda p: (-int((p.get("spec") or {}).get("priority") or 0),
                                    p["metadata"].get("creationTimestamp", ""),
                                    p["metadata"].get("namespace", ""), p["metadata"]["name"]))
        now = self.clock.now()
        next_due: float | None = None
        attempts = 0
        for pod in pending:
            due = self._due(pod["metadata"]["uid"])
            if due > now:
                next_due = due if next_due is None else min(next_due, due)
                continue
            if attempts == BATCH:
                return BATCH_REQUEUE  # next_due is found again by the next pass
            attempts += 1
            needs = requests[pod["metadata"]["uid"]]
            claim = self._missing_claim(pod)
            if claim is not None:
                self._unschedulable(pod, scheduling.missing_claim_message(pod, len(nodes),
                                                                          claim))
                retry = now + self.clock.real_delay(RETRY_SECONDS)
                next_due = retry if next_due is None else min(next_due, retry)
                continue
            chosen, rejected = scheduling.choose(pod, needs, nodes.values())
            if chosen is not None:
                chosen.add(needs)
                self._bind(pod, chosen.name)
                continue
            self._unschedulable(pod, scheduling.failure_message(pod, len(nodes), rejected))
            retry = now + self.clock.real_delay(RETRY_SECONDS)
            next_due = retry if next_due is None else min(next_due, retry)
        if next_due is not None:
            self._schedule_wake(next_due)
        return None

    def _due(self, uid: str) -> float:
        attempt = self._attempts.get(uid)
        if attempt is None:
            return 0.0
        if attempt.epoch < self._epoch:
            backoff = exponential(BACKOFF_INITIAL, attempt.count - 1, BACKOFF_MAX)
            return attempt.at + self.clock.real_delay(backoff)
        return attempt.at + self.clock.real_delay(RETRY_SECONDS)

    def _bind(self, pod: Obj, node: str) -> None:
        meta = pod["metadata"]
        ns, name = meta.get("namespace", ""), meta["name"]
        self._attempts.pop(meta["uid"], None)
        now = self.clock.timestamp()

        def bind(p: Obj) -> None:
            p["spec"]["nodeName"] = node
            set_condition(p, {"type": "PodScheduled", "status": "True"}, now)

        bound = self.store.mutate(self.rt("pods"), ns, name, bind)
        if bound is not None:
            self.events.record(bound, "Normal", "Scheduled",
                               f"Successfully assigned {ns}/{name} to {node}", SCHEDULER_NAME)

    def _unschedulable(self, pod: Obj, message: str) -> None:
        meta = pod["metadata"]
        uid = meta["uid"]
        previous = self._attempts.get(uid)
        self._attempts[uid] = Attempt((previous.count if previous else 0) + 1,
                                      self.clock.now(), self._epoch)
        now = self.clock.timestamp()
        condition = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                     "message": message}
        current = next((c for c in (pod.get("status") or {}).get("conditions") or []
                        if c.get("type") == "PodScheduled"), {})
        if all(current.get(k) == v for k, v in condition.items()):
            updated: Obj | None = pod  # unchanged: only the event's count grows
        else:
            updated = self.store.mutate(self.rt("pods"), meta.get("namespace", ""),
                                        meta["name"], lambda p: set_condition(p, condition, now))
        if updated is not None:
            self.events.record(updated, "Warning", "FailedScheduling", message, SCHEDULER_NAME)
