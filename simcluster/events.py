"""Event recording with the client-go correlator's aggregation.

Identical events (same object, type, reason, message and source) are folded into one
Event whose `count` grows and `lastTimestamp` moves, as a real cluster shows them.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from simcluster import errors
from simcluster.apiserver.store import Store, random_hex

Obj = dict[str, Any]


class EventRecorder:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.rt = store.registry.get("", "v1", "events")
        self._index: dict[tuple, str] = {}
        # Events last `ttl` seconds after their last update, as with the API server's
        # --event-ttl (an hour by default there); 0 keeps them (`serve --event-ttl`)
        self.ttl = 0.0
        self._touched: OrderedDict[tuple[str, str], tuple[float, tuple]] = OrderedDict()

    def record(self, obj: Obj, type_: str, reason: str, message: str, component: str,
               field_path: str = "", host: str = "") -> None:
        meta = obj.get("metadata", {})
        namespace = meta.get("namespace") or "default"
        involved = {
            "kind": obj.get("kind", ""),
            "namespace": meta.get("namespace", ""),
            "name": meta.get("name", ""),
            "uid": meta.get("uid", ""),
            "apiVersion": obj.get("apiVersion", ""),
            "resourceVersion": meta.get("resourceVersion", ""),
        }
        if not involved["namespace"]:
            involved.pop("namespace")
        if field_path:
            involved["fieldPath"] = field_path
        key = (involved["uid"], involved.get("fieldPath", ""), type_, reason, message, component)
        now = self.store.clock.timestamp()
        existing_name = self._index.get(key)
        if existing_name:
            def bump(ev: Obj) -> None:
                ev["count"] = int(ev.get("count") or 1) + 1
                ev["lastTimestamp"] = now
                ev["involvedObject"]["resourceVersion"] = involved["resourceVersion"]

            if self.store.mutate(self.rt, namespace, existing_name, bump) is not None:
                self._touch(namespace, existing_name, key)
                return
        name = f"{meta.get('name', 'unknown')}.{random_hex(16)}"
        source: dict[str, str] = {"component": component}
        if host:
            source["host"] = host
        event = {
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": involved,
            "reason": reason,
            "message": message,
            "source": source,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
            "type": type_,
            "eventTime": None,
            "reportingComponent": component,
            "reportingInstance": host,
        }
        self.store.create(self.rt, event)
        self._index[key] = name
        self._touch(namespace, name, key)

    def _touch(self, namespace: str, name: str, key: tuple) -> None:
        if not self.ttl:
            return
        self._touched[(namespace, name)] = (self.store.clock.now(), key)
        self._touched.move_to_end((namespace, name))
        self._expire()

    def _expire(self) -> None:
        """Delete the events not updated for `ttl` seconds (oldest first)."""
        now = self.store.clock.now()
        while self._touched:
            (namespace, name), (at, key) = next(iter(self._touched.items()))
            if now - at < self.ttl:
                break
            del self._touched[(namespace, name)]
            if self._index.get(key) == name:
                del self._index[key]
            try:
                self.store.delete(self.rt, namespace, name)
            except errors.ApiError:  # gone already (its namespace was deleted)
                pass
