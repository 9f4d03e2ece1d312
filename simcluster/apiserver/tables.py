"""Server-side printing: the `Table` kubectl asks for (`Accept: application/json;as=Table;
v=v1;g=meta.k8s.io`), so `kubectl get pods` shows READY, STATUS and RESTARTS as it does
against a real cluster. Columns and cell wording follow the API server's printers for the
kinds people list most; other built-in kinds get NAME / CREATED AT and custom resources
their CRD's printer columns (printer_columns.py) or, without, NAME / AGE, as on a real
cluster."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from simcluster.apiserver import printer_columns
from simcluster.apiserver.printer_columns import Column
from simcluster.placement.resources import ResourceType

Obj = dict[str, Any]

NAME: Column = ("Name", "string", 0, "name")
AGE: Column = ("Age", "string", 0, "")


def wants_table(accept: str) -> bool:
    return "as=Table" in accept and "g=meta.k8s.io" in accept


def _parse(ts: Any) -> float | None:
    if not isinstance(ts, str) or not ts:
        return None
    for fmt in ("%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S.%fZ"):
        try:
            return datetime.strptime(ts, fmt).replace(tzinfo=UTC).timestamp()
        except ValueError:
            continue
    return None


def human_duration(seconds: float) -> str:
    """apimachinery's duration.HumanDuration."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m" if s % 60 == 0 else f"{minutes}m{s % 60}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        return f"{hours}h" if minutes % 60 == 0 else f"{hours}h{minutes % 60}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d" if hours % 24 == 0 else f"{hours // 24}d{hours % 24}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    days = hours // 24
    if hours < 24 * 365 * 8:
        return f"{days // 365}y" if days % 365 == 0 else f"{days // 365}y{days % 365}d"
    return f"{days // 365}y"


def _since(ts: Any, now: float) -> str:
    t = _parse(ts)
    return "<unknown>" if t is None else human_duration(now - t)


def _age(o: Obj, now: float) -> str:
    return _since((o.get("metadata") or {}).get("creationTimestamp"), now)


# -- per-kind printers ----------------------------------------------------------------------
def _pod_status(pod: Obj) -> str:
    status = pod.get("status") or {}
    reason = status.get("reason") or status.get("phase") or "Pending"
    running = False
    for cs in reversed(status.get("containerStatuses") or []):
        state = cs.get("state") or {}
        if (state.get("waiting") or {}).get("reason"):
            reason = state["waiting"]["reason"]
        elif (state.get("terminated") or {}).get("reason"):
            reason = state["terminated"]["reason"]
        elif state.get("terminated"):
            term = state["terminated"]
            reason = (f"Signal:{term['signal']}" if term.get("signal")
                      else f"ExitCode:{term.get('exitCode', 0)}")
        elif cs.get("ready") and state.get("running"):
            running = True
    if reason == "Completed" and running:
        reason = "Running"
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        reason = "Unknown" if status.get("reason") == "NodeLost" else "Terminating"
    return reason


def _pod_row(pod: Obj, now: float) -> list:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    total = len((pod.get("spec") or {}).get("containers") or [])
    ready = sum(1 for cs in statuses if cs.get("ready"))
    restarts = sum(int(cs.get("restartCount") or 0) for cs in statuses)
    last = max((_parse(((cs.get("lastState") or {}).get("terminated") or {}).get("finishedAt"))
                or 0 for cs in statuses), default=0)
    restart_text = f"{restarts} ({human_duration(now - last)} ago)" if restarts and last \
        else str(restarts)
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    return [pod["metadata"]["name"], f"{ready}/{total}", _pod_status(pod), restart_text,
            _age(pod, now), status.get("podIP") or "<none>", spec.get("nodeName") or "<none>",
            status.get("nominatedNodeName") or "<none>", "<none>"]


def _job_row(job: Obj, now: float) -> list:
    spec, status = job.get("spec") or {}, job.get("status") or {}
    conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
    if conditions.get("Complete") == "True":
        state = "Complete"
    elif conditions.get("Failed") == "True":
        state = "Failed"
    elif conditions.get("FailureTarget") == "True" or conditions.get("SuccessCriteriaMet") \
            == "True":
        state = "Terminating"
    elif spec.get("suspend"):
        state = "Suspended"
    else:
        state = "Running"
    start, end = _parse(status.get("startTime")), _parse(status.get("completionTime"))
    duration = human_duration((end or now) - start) if start else ""
    return [job["metadata"]["name"], state,
            f"{status.get('succeeded', 0)}/{spec.get('completions', 1)}", duration,
            _age(job, now)]


def _node_row(node: Obj, now: float) -> list:
    conditions = {c.get("type"): c.get("status")
                  for c in (node.get("status") or {}).get("conditions") or []}
    state = {"True": "Ready", "False": "NotReady"}.get(conditions.get("Ready", ""), "Unknown")
    if (node.get("spec") or {}).get("unschedulable"):
        state += ",SchedulingDisabled"
    labels = (node.get("metadata") or {}).get("labels") or {}
    roles = sorted(k.split("/", 1)[1] for k in labels
                   if k.startswith("node-role.kubernetes.io/") and "/" in k)
    info = (node.get("status") or {}).get("nodeInfo") or {}
    return [node["metadata"]["name"], state, ",".join(r for r in roles if r) or "<none>",
            _age(node, now), info.get("kubeletVersion", "")]


def _event_row(ev: Obj, now: float) -> list:
    last = ev.get("lastTimestamp") or ev.get("eventTime") or \
        (ev.get("metadata") or {}).get("creationTimestamp")
    involved = ev.get("involvedObject") or {}
    source = ev.get("source") or {}
    return [_since(last, now), ev.get("type", ""), ev.get("reason", ""),
            f"{str(involved.get('kind', '')).lower()}/{involved.get('name', '')}",
            involved.get("fieldPath", ""),
            ", ".join(x for x in (source.get("component"), source.get("host")) if x)
            or ev.get("reportingComponent", ""),
            ev.get("message", ""), _since(ev.get("firstTimestamp") or last, now),
            int(ev.get("count") or 1), ev["metadata"]["name"]]


def _service_row(svc: Obj, now: float) -> list:
    spec = svc.get("spec") or {}
    ports = ",".join(f"{p.get('port')}/{p.get('protocol', 'TCP')}"
                     for p in spec.get("ports") or []) or "<none>"
    return [svc["metadata"]["name"], spec.get("type", "ClusterIP"),
            spec.get("clusterIP") or "<none>",
            ",".join(spec.get("externalIPs") or []) or "<none>", ports, _age(svc, now)]


PRINTERS: dict[str, tuple[list[Column], Callable[[Obj, float], list]]] = {
    "/pods": ([NAME, ("Ready", "string", 0, ""), ("Status", "string", 0, ""),
               ("Restarts", "string", 0, ""), AGE, ("IP", "string", 1, ""),
               ("Node", "string", 1, ""), ("Nominated Node", "string", 1, ""),
               ("Readiness Gates", "string", 1, "")], _pod_row),
    "batch/jobs": ([NAME, ("Status", "string", 0, ""), ("Completions", "string", 0, ""),
                    ("Duration", "string", 0, ""), AGE], _job_row),
    "/nodes": ([NAME, ("Status", "string", 0, ""), ("Roles", "string", 0, ""), AGE,
                ("Version", "string", 0, "")], _node_row),
    "/namespaces": ([NAME, ("Status", "string", 0, ""), AGE],
                    lambda o, now: [o["metadata"]["name"],
                                    (o.get("status") or {}).get("phase", ""), _age(o, now)]),
    "/events": ([("Last Seen", "string", 0, ""), ("Type", "string", 0, ""),
                 ("Reason", "string", 0, ""), ("Object", "string", 0, ""),
                 ("Subobject", "string", 1, ""), ("Source", "string", 1, ""),
                 ("Message", "string", 0, ""), ("First Seen", "string", 1, ""),
                 ("Count", "integer", 1, ""), ("Name", "string", 1, "")], _event_row),
    "/configmaps": ([NAME, ("Data", "integer", 0, ""), AGE],
                    lambda o, now: [o["metadata"]["name"],
                                    len(o.get("data") or {}) + len(o.get("binaryData") or {}),
                                    _age(o, now)]),
    "/secrets": ([NAME, ("Type", "string", 0, ""), ("Data", "integer", 0, ""), AGE],
                 lambda o, now: [o["metadata"]["name"], o.get("type", "Opaque"),
                                 len(o.get("data") or {}), _age(o, now)]),
    "/services": ([NAME, ("Type", "string", 0, ""), ("Cluster-IP", "string", 0, ""),
                   ("External-IP", "string", 0, ""), ("Port(s)", "string", 0, ""), AGE],
                  _service_row),
}


def _printer(rt: ResourceType) -> tuple[list[Column], Callable[[Obj, float], list]]:
    found = PRINTERS.get(f"{rt.group}/{rt.plural}")
    if found:
        return found
    declared = printer_columns.printer(f"{rt.group}/{rt.plural}", _since) if rt.custom \
        else None
    if declared is not None:  # a CRD's additionalPrinterColumns
        return declared
    if rt.custom:  # a CRD's default columns: a "date" column whose cell is already an age
        return ([NAME, ("Age", "date", 0, "")],
                lambda o, now: [o["metadata"]["name"], _age(o, now)])
    return ([NAME, ("Created At", "date", 0, "")],
            lambda o, now: [o["metadata"]["name"], o["metadata"].get("creationTimestamp")])


def partial_metadata(o: Obj) -> Obj:
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
            "metadata": o.get("metadata") or {}}


def table(rt: ResourceType, objects: list[Obj], now: float, list_meta: Obj,
          headers: bool = True) -> Obj:
    columns, row = _printer(rt)
    out: Obj = {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list_meta,
                "columnDefinitions": [
                    {"name": n, "type": t, "format": f, "description": "", "priority": p}
                    for n, t, p, f in columns] if headers else None,
                "rows": [{"cells": row(o, now), "object": partial_metadata(o)}
                         for o in objects]}
    return out
