"""Deletion: graceful pod termination, namespace teardown and ownerReference cascade."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from simcluster import errors
from simcluster.apiserver.store import Change
from simcluster.controllers.base import Controller, Key
from simcluster.placement.resources import ResourceType

if TYPE_CHECKING:
    from simcluster.cluster import Cluster

Obj = dict[str, Any]


class Deleter:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.store = cluster.store

    def delete(self, rt: ResourceType, namespace: str, name: str, grace: int | None,
               policy: str = "Background") -> Obj:
        current = self.store.get_raw(rt, namespace, name)
        if current is None:
            raise errors.not_found(rt, name)
        if rt.plural == "pods" and not rt.group:
            phase = (current.get("status") or {}).get("phase")
            bound = bool((current.get("spec") or {}).get("nodeName"))
            if grace is None:
                grace = int((current.get("spec") or {}).get("terminationGracePeriodSeconds", 30))
            if bound and phase not in ("Succeeded", "Failed") and grace > 0:
                # The kubelet stops the containers and removes the pod.
                return self.store.mark_deleting(rt, namespace, name, grace)
        if rt.plural == "namespaces" and not rt.group:
            def terminate(ns: Obj) -> None:
                ns.setdefault("status", {})["phase"] = "Terminating"
            self.store.mutate(rt, "", name, terminate)
            obj = self.store.mark_deleting(rt, "", name, 0)
            self.cluster.manager.enqueue(self.cluster.namespace_controller, ("", name))
            return obj
        if policy == "Orphan":
            self._orphan(current["metadata"]["uid"])
        return self.store.delete(rt, namespace, name)

    def _orphan(self, uid: str) -> None:
        for rt, ns, name in self.cluster.gc.dependents(uid):
            def strip(o: Obj) -> None:
                refs = [r for r in o["metadata"].get("ownerReferences") or []
                        if r.get("uid") != uid]
                if refs:
                    o["metadata"]["ownerReferences"] = refs
                else:
                    o["metadata"].pop("ownerReferences", None)
            self.store.mutate(rt, ns, name, strip)


class GarbageCollector(Controller):
    """Deletes objects whose every owner is gone (background cascading deletion)."""

    name = "garbage-collector"

    def __init__(self, cluster: Cluster) -> None:
        super().__init__(cluster)
        self._dependents: dict[str, set[tuple[str, str, str]]] = {}
        self._types = {f"{rt.group}/{rt.plural}": rt for rt in cluster.registry.types}
        cluster.store.subscribe(self._index)

    def _index(self, change: Change) -> None:
        m = change.obj["metadata"]
        ref = (f"{change.rt.group}/{change.rt.plural}", m.get("namespace", ""), m["name"])
        old_refs = {r.get("uid") for r in ((change.old or {}).get("metadata") or {}).get(
            "ownerReferences") or []}
        new_refs = set() if change.type == "DELETED" else {
            r.get("uid") for r in m.get("ownerReferences") or []}
        for uid in old_refs - new_refs:
            self._dependents.get(uid, set()).discard(ref)
        for uid in new_refs:
            self._dependents.setdefault(uid, set()).add(ref)

    def dependents(self, uid: str) -> list[tuple[ResourceType, str, str]]:
        return [(self._types[t], ns, name) for t, ns, name in sorted(self._dependents.get(uid, ()))]

    def watches(self) -> Iterable[tuple[str, Any]]:
        for path in self._types:
            yield path, self._on_delete

    @staticmethod
    def _on_delete(change: Change) -> Iterable[Key]:
        if change.type == "DELETED":
            yield ("", change.obj["metadata"]["uid"])

    def reconcile(self, key: Key) -> float | None:
        uid = key[1]
        for rt, ns, name in self.dependents(uid):
            obj = self.store.get_raw(rt, ns, name)
            if obj is None:
                continue
            refs = obj["metadata"].get("ownerReferences") or []
            alive = [r for r in refs if r.get("uid") != uid and self._owner_exists(r, ns)]
            if alive:
                continue
            try:
                self.cluster.deleter.delete(rt, ns, name, None)
            except errors.ApiError:
                pass
        self._dependents.pop(uid, None)
        return None

    def _owner_exists(self, ref: Obj, namespace: str) -> bool:
        api_version, kind = ref.get("apiVersion", ""), ref.get("kind", "")
        rt = self.cluster.registry.by_kind(api_version, kind)
        if rt is None:
            return False
        owner = self.store.get_raw(rt, namespace, ref.get("name", ""))
        return owner is not None and owner["metadata"].get("uid") == ref.get("uid")


class NamespaceController(Controller):
    """Empties a Terminating namespace, then removes it."""

    name = "namespace-controller"

    def watches(self) -> Iterable[tuple[str, Any]]:
        yield "/namespaces", self.own_key

    def reconcile(self, key: Key) -> float | None:
        ns_rt = self.rt("namespaces")
        ns = self.store.get_raw(ns_rt, "", key[1])
        if ns is None or (ns.get("status") or {}).get("phase") != "Terminating":
            return None
        name = key[1]
        remaining = 0
        for rt in self.cluster.registry.types:
            if not rt.namespaced or rt.virtual:
                continue
            for obj in list(self.store.iter_raw(rt, name)):
                remaining += 1
                if obj["metadata"].get("deletionTimestamp"):
                    continue
                try:
                    self.cluster.deleter.delete(rt, name, obj["metadata"]["name"], None)
                except errors.ApiError:
                    pass
        if remaining:
            return 1.0
        self.store.delete(ns_rt, "", name)
        return None
