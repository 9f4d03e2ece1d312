"""Kueue's visibility API (visibility.kueue.x-k8s.io/v1beta1), as upstream serves it:

    GET /apis/visibility.kueue.x-k8s.io/v1beta1/clusterqueues/<cq>/pendingworkloads
    GET /apis/visibility.kueue.x-k8s.io/v1beta1/namespaces/<ns>/localqueues/<lq>/pendingworkloads

with `limit` (default 1000) and `offset` (default 0). The answer is a
`PendingWorkloadsSummary`: the pending Workloads in the ClusterQueue's order (higher
priority first, then the older: simcluster/placement/kueue.py), each with `priority`,
`localQueueName`, `positionInClusterQueue` and `positionInLocalQueue` (from 0). For a
ClusterQueue, the positions count over the whole queue and offset/limit cut that order;
for a LocalQueue, only its own Workloads are listed, offset counts within it. RBAC asks
`get` on `clusterqueues/pendingworkloads` or `localqueues/pendingworkloads` in that group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aiohttp import web

from simcluster import errors
from simcluster.apiserver.api import json_response
from simcluster.apiserver.virtual import VirtualResource

if TYPE_CHECKING:
    from simcluster.access.auth import UserInfo
    from simcluster.apiserver.api import RequestInfo

Obj = dict[str, Any]
GROUP = "visibility.kueue.x-k8s.io"
API_VERSION = f"{GROUP}/v1beta1"


def _number(request: web.Request, name: str, default: int) -> int:
    raw = request.query.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise errors.bad_request(f"{name}: must be a whole number, not {raw!r}") from None
    if value < 0:
        raise errors.bad_request(f"{name}: must not be negative")
    return value


def _item(w: Obj, cq_position: int, lq_position: int) -> Obj:
    meta = w["metadata"]
    return {"metadata": {"name": meta["name"], "namespace": meta["namespace"],
                         "creationTimestamp": meta.get("creationTimestamp"),
                         "ownerReferences": [{k: r.get(k) for k in ("apiVersion", "kind",
                                                                     "name", "uid")}
                                             for r in meta.get("ownerReferences") or []]},
            "priority": int((w.get("spec") or {}).get("priority") or 0),
            "localQueueName": (w.get("spec") or {}).get("queueName", ""),
            "positionInClusterQueue": cq_position, "positionInLocalQueue": lq_position}


class PendingWorkloads(VirtualResource):
    async def handle(self, request: web.Request, user: UserInfo,
                     info: RequestInfo) -> web.StreamResponse:
        rt = info.rt
        assert rt is not None
        if info.verb != "get" or info.subresource != "pendingworkloads":
            raise errors.method_not_allowed()
        kueue = getattr(self.cluster, "kueue", None)
        if kueue is None:
            raise errors.page_not_found()
        offset, limit = _number(request, "offset", 0), _number(request, "limit", 1000)
        if rt.plural == "clusterqueues":
            if self.cluster.store.get_raw(kueue.cqs, "", info.name) is None:
                raise errors.not_found(rt, info.name)
            ordered = kueue.pending_in(info.name)
            seen: dict[tuple[str, str], int] = {}
            items = []
            for position, w in enumerate(ordered):
                lq = (w["metadata"]["namespace"], (w.get("spec") or {}).get("queueName", ""))
                items.append(_item(w, position, seen.get(lq, 0)))
                seen[lq] = seen.get(lq, 0) + 1
            items = items[offset:offset + limit]
        else:
            lq = self.cluster.store.get_raw(kueue.lqs, info.namespace, info.name)
            if lq is None:
                raise errors.not_found(rt, info.name)
            cq_name = str((lq.get("spec") or {}).get("clusterQueue") or "")
            ordered = list(enumerate(kueue.pending_in(cq_name)))
            mine = [(p, w) for p, w in ordered if w["metadata"]["namespace"] == info.namespace
                    and (w.get("spec") or {}).get("queueName") == info.name]
            items = [_item(w, p, offset + i)
                     for i, (p, w) in enumerate(mine[offset:offset + limit])]
        return json_response({"kind": "PendingWorkloadsSummary", "apiVersion": API_VERSION,
                              "metadata": {"creationTimestamp": None}, "items": items})
