"""Helpers shared by the training-job controllers: Kubeflow job conditions, owner
references and the service-account identities the operators act as.

Kubeflow's `setCondition` is subtle and the dashboard depends on its results: a
condition whose type, status and reason are unchanged is left alone (even if the message
differs), a changed condition moves to the end of the list, and setting Succeeded or
Failed flips Running (and, in the MPI Operator, an earlier Failed) to status False
without touching its reason, message or times.
"""

from __future__ import annotations

from typing import Any

from simcluster.access.auth import UserInfo

Obj = dict[str, Any]

SUCCEEDED = "Succeeded"
FAILED = "Failed"
RUNNING = "Running"
RESTARTING = "Restarting"


def service_account(namespace: str, name: str) -> UserInfo:
    """A controller's identity: a service account bound to cluster-admin-like rights.

    Writes still go through admission, so ResourceQuota and LimitRange apply to the
    objects controllers create, as on a real cluster.
    """
    return UserInfo(f"system:serviceaccount:{namespace}:{name}",
                    ("system:serviceaccounts", f"system:serviceaccounts:{namespace}",
                     "system:masters", "system:authenticated"))


def controller_ref(owner: Obj) -> Obj:
    """metav1.NewControllerRef: controller and blockOwnerDeletion both true."""
    meta = owner["metadata"]
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": meta["name"],
            "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}


def is_controlled_by(obj: Obj, owner: Obj) -> bool:
    uid = owner["metadata"].get("uid")
    return any(r.get("controller") and r.get("uid") == uid
               for r in obj.get("metadata", {}).get("ownerReferences") or [])


def get_condition(status: Obj, ctype: str) -> Obj | None:
    for c in status.get("conditions") or []:
        if c.get("type") == ctype:
            return c
    return None


def is_true(status: Obj, ctype: str) -> bool:
    c = get_condition(status, ctype)
    return c is not None and c.get("status") == "True"


def new_condition(ctype: str, status: str, reason: str, message: str, now: str) -> Obj:
    return {"type": ctype, "status": status, "reason": reason, "message": message,
            "lastUpdateTime": now, "lastTransitionTime": now}


def set_condition(status: Obj, condition: Obj, *, mpi: bool = True) -> bool:
    """Kubeflow's setCondition; returns whether anything changed.

    `mpi=True` is the MPI Operator's variant (Succeeded/Failed also turn an earlier
    Failed to False); `mpi=False` is the training-operator's, which additionally ignores
    every change once the job has a Failed=True condition.
    """
    if not mpi and is_true(status, FAILED):
        return False
    current = get_condition(status, condition["type"])
    if current is not None and current.get("status") == condition["status"] and \
            current.get("reason") == condition["reason"]:
        return False
    if current is not None and current.get("status") == condition["status"]:
        condition["lastTransitionTime"] = current.get("lastTransitionTime",
                                                      condition["lastTransitionTime"])
    status["conditions"] = _filter_out(status.get("conditions") or [], condition["type"], mpi)
    status["conditions"].append(condition)
    return True


def _filter_out(conditions: list[Obj], ctype: str, mpi: bool) -> list[Obj]:
    out: list[Obj] = []
    flipped = (RUNNING, FAILED) if mpi else (RUNNING,)
    for c in conditions:
        if ctype == RESTARTING and c.get("type") == RUNNING:
            continue
        if ctype == RUNNING and c.get("type") == RESTARTING:
            continue
        if c.get("type") == ctype:
            continue
        if ctype in (FAILED, SUCCEEDED) and c.get("type") in flipped:
            c = {**c, "status": "False"}
        out.append(c)
    return out


def int_or(value: Any, default: int | None) -> int | None:
    """An integer field of user input, or `default` when unset or not an integer."""
    if isinstance(value, bool) or not isinstance(value, int):
        return default
    return value
