"""A TrainJob's status as Kubeflow Trainer v2 writes it: metav1.Conditions `Created`,
`Suspended`, `Complete` and `Failed` (the last two copied from the JobSet's `Completed` and
`Failed`, reason and message included) and `jobsStatus` from the JobSet's
`replicatedJobsStatus`."""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]

CREATED = "Created"
SUSPENDED = "Suspended"
COMPLETE = "Complete"
FAILED = "Failed"

CREATION_SUCCEEDED = ("JobsCreationSucceeded", "Succeeded to create Jobs")
BUILD_FAILED = ("JobsBuildFailed", "Failed to build Jobs")
CREATION_FAILED = ("JobsCreationFailed", "Failed to create Jobs")
SUSPENDED_REASON = ("Suspended", "TrainJob is suspended")
RESUMED_REASON = ("Resumed", "TrainJob is resumed")

JOB_STATUS_FIELDS = ("ready", "succeeded", "failed", "active", "suspended")


def find(conditions: list[Obj], ctype: str) -> Obj | None:
    return next((c for c in conditions if c.get("type") == ctype), None)


def set_status_condition(status: Obj, ctype: str, value: str, reason: str, message: str,
                         now: str) -> None:
    """meta.SetStatusCondition: the transition time moves only when the status does."""
    conditions = status.setdefault("conditions", [])
    current = find(conditions, ctype)
    if current is None:
        conditions.append({"type": ctype, "status": value, "reason": reason,
                           "message": message, "lastTransitionTime": now})
        return
    if current.get("status") != value:
        current["status"] = value
        current["lastTransitionTime"] = now
    current["reason"] = reason
    current["message"] = message


def finished(status: Obj) -> bool:
    return any(c.get("status") == "True" and c.get("type") in (COMPLETE, FAILED)
               for c in status.get("conditions") or [])


def set_suspended(status: Obj, suspend: bool, now: str) -> None:
    current = find(status.get("conditions") or [], SUSPENDED)
    if suspend:
        set_status_condition(status, SUSPENDED, "True", *SUSPENDED_REASON, now)
    elif current is not None and current.get("status") == "True":
        set_status_condition(status, SUSPENDED, "False", *RESUMED_REASON, now)


def from_jobset(status: Obj, jobset: Obj, now: str) -> None:
    js = jobset.get("status") or {}
    conditions = js.get("conditions") or []
    for source, target in (("Completed", COMPLETE), ("Failed", FAILED)):
        c = find(conditions, source)
        if c is not None and c.get("status") == "True":
            set_status_condition(status, target, "True", c.get("reason") or source,
                                 c.get("message") or "", c.get("lastTransitionTime") or now)
    jobs = [{"name": r.get("name", ""), **{f: int(r.get(f) or 0) for f in JOB_STATUS_FIELDS}}
            for r in js.get("replicatedJobsStatus") or []]
    if jobs:
        status["jobsStatus"] = jobs
    else:
        status.pop("jobsStatus", None)
