"""Helpers of the Kueue tests: queued jobs made as alice, their Workloads read as admin."""

from __future__ import annotations

import uuid
from pathlib import Path

from tests.training_jobs import GROUP, MPI_VERSION, mpijob
from tests.waiting import wait_until

NS = "team-a"
KUEUE = ("kueue.x-k8s.io", "v1beta1")
SCENARIO = str(Path(__file__).with_name("kueue-scenario.yaml"))
GPU = "nvidia.com/gpu"
__all__ = ["GROUP", "MPI_VERSION"]


def _queued_job(api, made, prefix: str, queue: str, workers: int, gpus: int = 8,
                run_seconds: float = 3600, priority: str = "") -> tuple[str, dict]:
    name = f"{prefix}-{uuid.uuid4().hex[:4]}"
    body = mpijob(name, workers=workers, run_seconds=run_seconds,
                  worker_resources={"limits": {GPU: gpus}} if gpus else None)
    labels = {"kueue.x-k8s.io/queue-name": queue}
    if priority:
        labels["kueue.x-k8s.io/priority-class"] = priority
    body["metadata"]["labels"] = labels
    created = api["jobs"].create_namespaced_custom_object(GROUP, MPI_VERSION, NS, "mpijobs",
                                                          body)
    made.append(name)
    return name, created


def workloads(api) -> list[dict]:
    return api["admin"].list_namespaced_custom_object(*KUEUE, NS, "workloads")["items"]


def _workload_of(api, name: str) -> dict | None:
    for w in workloads(api):
        if any(r.get("name") == name for r in w["metadata"].get("ownerReferences") or []):
            return w
    return None


def _condition(obj: dict | None, type_: str) -> dict:
    for c in ((obj or {}).get("status") or {}).get("conditions") or []:
        if c["type"] == type_:
            return c
    return {}


def _reserved(api, name: str) -> bool:
    return _condition(_workload_of(api, name), "QuotaReserved").get("status") == "True"


def _waiting_with(api, name: str) -> dict:
    """The QuotaReserved=False condition of a job's Workload, once it has one."""
    def found():
        c = _condition(_workload_of(api, name), "QuotaReserved")
        return c if c.get("status") == "False" else None
    return wait_until(found, 30, message=f"{name}'s Workload to be told why it waits")


def _job(api, name: str) -> dict:
    return api["jobs"].get_namespaced_custom_object(GROUP, MPI_VERSION, NS, "mpijobs", name)


def _suspended(job: dict) -> bool:
    return bool(((job.get("spec") or {}).get("runPolicy") or {}).get("suspend"))


def _cluster_queue(api, name: str) -> dict:
    return api["admin"].get_cluster_custom_object(*KUEUE, "clusterqueues", name)


