"""ResourceQuota accounting: what an object costs, what a namespace uses, and the
controller that keeps `status.used` current."""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from simcluster import quantity
from simcluster.apiserver.store import Change
from simcluster.controllers.base import Controller, Key
from simcluster.placement.resources import ResourceType

if TYPE_CHECKING:
    from simcluster.cluster import Cluster

Obj = dict[str, Any]

TERMINAL_PHASES = ("Succeeded", "Failed")


def pod_usage(pod: Obj) -> dict[str, Fraction]:
    """Quota resources a pod counts for (terminal pods count for nothing)."""
    if (pod.get("status") or {}).get("phase") in TERMINAL_PHASES:
        return {}
    spec = pod.get("spec") or {}
    totals: dict[str, Fraction] = {}
    for kind in ("requests", "limits"):
        sums: dict[str, Fraction] = {}
        for c in spec.get("containers") or []:
            for r, v in ((c.get("resources") or {}).get(kind) or {}).items():
                try:
                    sums[r] = sums.get(r, Fraction(0)) + quantity.parse(v)
                except quantity.QuantityError:
                    continue
        # an init container's need counts when it is larger than the containers' sum
        for c in spec.get("initContainers") or []:
            for r, v in ((c.get("resources") or {}).get(kind) or {}).items():
                try:
                    sums[r] = max(sums.get(r, Fraction(0)), quantity.parse(v))
                except quantity.QuantityError:
                    continue
        for r, v in sums.items():
            totals[f"{kind}.{r}"] = v
            if kind == "requests" and r in ("cpu", "memory"):
                totals[r] = v
    totals["pods"] = Fraction(1)
    totals["count/pods"] = Fraction(1)
    return totals


def claim_usage(claim: Obj) -> dict[str, Fraction]:
    """What a PersistentVolumeClaim counts against a quota: its requested storage, in all
    and under its storage class (`<class>.storageclass.storage.k8s.io/requests.storage`
    and `.../persistentvolumeclaims`), as kube's PVC evaluator counts it."""
    spec = claim.get("spec") or {}
    usage: dict[str, Fraction] = {}
    storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    size = Fraction(0)
    if storage is not None:
        try:
            size = quantity.parse(storage)
        except quantity.QuantityError:
            size = Fraction(0)
    usage["requests.storage"] = size
    klass = spec.get("storageClassName")
    if klass:
        prefix = f"{klass}.storageclass.storage.k8s.io/"
        usage[prefix + "requests.storage"] = size
        usage[prefix + "persistentvolumeclaims"] = Fraction(1)
    return usage


class QuotaUsage:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster

    def object_usage(self, rt: ResourceType, obj: Obj) -> dict[str, Fraction]:
        usage: dict[str, Fraction] = {}
        if rt.plural == "pods" and not rt.group:
            usage = pod_usage(obj)
        count_key = f"count/{rt.qualified}"
        usage[count_key] = Fraction(1)
        if rt.plural in ("services", "configmaps", "secrets", "persistentvolumeclaims") \
                and not rt.group:
            usage[rt.plural] = Fraction(1)
        if rt.plural == "persistentvolumeclaims" and not rt.group:
            usage.update(claim_usage(obj))
        return usage

    def namespace_usage(self, namespace: str) -> dict[str, Fraction]:
        store = self.cluster.store
        used: dict[str, Fraction] = {}
        tracked = self._tracked_types(namespace)
        for rt in tracked:
            for obj in store.iter_raw(rt, namespace):
                for r, v in self.object_usage(rt, obj).items():
                    used[r] = used.get(r, Fraction(0)) + v
        return used

    def _tracked_types(self, namespace: str) -> list[ResourceType]:
        hard_keys: set[str] = set()
        for q in self.cluster.store.iter_raw(self.cluster.rt("resourcequotas"), namespace):
            hard_keys.update(((q.get("spec") or {}).get("hard") or {}).keys())
        types = [self.cluster.rt("pods")]
        for rt in self.cluster.registry.types:
            if rt.namespaced and rt.plural != "pods" and (
                    f"count/{rt.qualified}" in hard_keys or
                    (not rt.group and rt.plural in hard_keys) or
                    (not rt.group and rt.plural == "persistentvolumeclaims"
                     and any(k.endswith("requests.storage")
                             or k.endswith("/persistentvolumeclaims") for k in hard_keys))):
                types.append(rt)
        return types

    def used_for(self, quota: Obj) -> dict[str, str]:
        ns = quota["metadata"].get("namespace", "")
        hard = (quota.get("spec") or {}).get("hard") or {}
        used = self.namespace_usage(ns)
        return {r: quantity.format_for(r, used.get(r, Fraction(0))) for r in sorted(hard)}


class QuotaController(Controller):
    """Keeps each ResourceQuota's status.hard and status.used current."""

    name = "resourcequota-controller"

    def watches(self) -> Iterable[tuple[str, Any]]:
        yield "/resourcequotas", self.own_key
        for rt in self.cluster.registry.types:
            if rt.namespaced and rt.plural not in ("resourcequotas", "events"):
                yield f"{rt.group}/{rt.plural}", self._quotas_in_namespace

    def _quotas_in_namespace(self, change: Change) -> Iterable[Key]:
        ns = change.obj["metadata"].get("namespace", "")
        for q in self.store.iter_raw(self.rt("resourcequotas"), ns):
            yield (ns, q["metadata"]["name"])

    def reconcile(self, key: Key) -> float | None:
        rt = self.rt("resourcequotas")
        quota = self.store.get_raw(rt, *key)
        if quota is None:
            return None
        hard = dict((quota.get("spec") or {}).get("hard") or {})
        used = self.cluster.quota_usage.used_for(quota)

        def write(q: Obj) -> bool | None:
            status = {"hard": hard, "used": used}
            if q.get("status") == status:
                return False
            q["status"] = status
            return None

        self.store.mutate(rt, key[0], key[1], write)
        return None
