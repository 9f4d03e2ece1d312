"""The MPI Operator's updateMPIJobStatus and updateMPIJobFailedStatus (v0.8.2).

In upstream order: the Suspended/Resumed condition, the launcher Job's outcome
(Succeeded, or Failed with the Job's reason, `BackoffLimitExceeded/<pod reason>` when a
failed launcher pod is left), worker counts and eviction, then Running. The status is
written only when it differs from what it was when this step began.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from simcluster.controllers.conditions import (
    get_condition,
    is_controlled_by,
    is_true,
    new_condition,
    set_condition,
)
from simcluster.controllers.mpijob.validation import truncate

Obj = dict[str, Any]


class MPIJobStatus:
    """Mixed into MPIJobController (which provides store, clock, cluster, pods, ...)."""

    store: Any
    clock: Any
    cluster: Any
    pods: Any
    mpijobs: Any
    _event: Callable[[Obj, str, str, str], None]

    def _launcher_pods(self, launcher: Obj) -> list[Obj]:
        out = []
        for rt, ns, name in self.cluster.gc.dependents(launcher["metadata"]["uid"]):
            pod = self.store.get_raw(self.pods, ns, name) if rt is self.pods else None
            if pod is not None and is_controlled_by(pod, launcher):
                out.append(pod)
        return out

    def _update_status(self, job: Obj, status: Obj, launcher: Obj | None,
                       workers: list[Obj]) -> None:
        old = copy.deepcopy(status)
        ns, name = job["metadata"]["namespace"], job["metadata"]["name"]
        now = self.clock.timestamp()
        suspended = bool(job["spec"]["runPolicy"].get("suspend"))
        if suspended:
            if set_condition(status, new_condition("Suspended", "True", "MPIJobSuspended",
                                                   "MPIJob suspended", now)):
                self._event(job, "Normal", "MPIJobSuspended", "MPIJob suspended")
        elif get_condition(status, "Suspended") is not None:
            if set_condition(status, new_condition("Suspended", "False", "MPIJobResumed",
                                                   "MPIJob resumed", now)):
                self._event(job, "Normal", "MPIJobResumed", "MPIJob resumed")
                status["startTime"] = now

        replica_statuses = status.setdefault("replicaStatuses", {})
        launcher_running = 0
        if launcher is not None:
            pods = self._launcher_pods(launcher)
            launcher_running = sum(1 for p in pods if pod_phase(p) == "Running")
            counts: Obj = {}
            failed = int((launcher.get("status") or {}).get("failed") or 0)
            if failed:
                counts["failed"] = failed
            replica_statuses["Launcher"] = counts
            if job_condition_true(launcher, "Complete"):
                counts["succeeded"] = 1
                msg = f"MPIJob {ns}/{name} successfully completed."
                self._event(job, "Normal", "MPIJobSucceeded", msg)
                if not status.get("completionTime"):
                    completion = (launcher.get("status") or {}).get("completionTime")
                    if completion:
                        status["completionTime"] = completion
                set_condition(status, new_condition("Succeeded", "True", "MPIJobSucceeded",
                                                    msg, now))
                self.cluster.mpi_operator_metrics.successful += 1
            elif job_condition_true(launcher, "Failed"):
                self._failed(job, status, launcher, pods, now)
            elif launcher_running:
                counts["active"] = launcher_running
            self.cluster.mpi_operator_metrics.job_info.add(
                (launcher["metadata"]["name"], ns))

        worker_counts: Obj = {}
        running = evicted = 0
        for pod in workers:
            phase = pod_phase(pod)
            if phase == "Failed":
                worker_counts["failed"] = worker_counts.get("failed", 0) + 1
                if (pod.get("status") or {}).get("reason") == "Evicted":
                    evicted += 1
            elif phase == "Succeeded":
                worker_counts["succeeded"] = worker_counts.get("succeeded", 0) + 1
            elif phase == "Running":
                running += 1
                worker_counts["active"] = worker_counts.get("active", 0) + 1
        replica_statuses["Worker"] = worker_counts
        if evicted:
            msg = f"{evicted}/{len(workers)} workers are evicted"
            set_condition(status, new_condition("Failed", "True", "MPIJobEvicted", msg, now))
            self._event(job, "Warning", "MPIJobEvicted", msg)

        if suspended:
            set_condition(status, new_condition("Running", "False", "MPIJobSuspended",
                                                f"MPIJob {ns}/{name} is suspended.", now))
        elif launcher is not None and launcher_running >= 1 and running == len(workers):
            set_condition(status, new_condition("Running", "True", "MPIJobRunning",
                                                f"MPIJob {ns}/{name} is running.", now))
            self._event(job, "Normal", "MPIJobRunning", f"MPIJob {ns}/{name} is running")

        if status != old:
            self._write_status(job, status)

    def _failed(self, job: Obj, status: Obj, launcher: Obj, pods: list[Obj], now: str) -> None:
        ns, name = job["metadata"]["namespace"], job["metadata"]["name"]
        cond = next((c for c in (launcher.get("status") or {}).get("conditions") or []
                     if c.get("type") == "Failed"), {})
        reason = cond.get("reason") or "MPIJobFailed"
        msg = cond.get("message") or f"MPIJob {ns}/{name} has failed"
        if reason == "BackoffLimitExceeded":
            failed = [p for p in pods if pod_phase(p) == "Failed"]
            if failed:
                last = max(failed, key=lambda p: p["metadata"].get("creationTimestamp", ""))
                last_status = last.get("status") or {}
                reason += "/" + str(last_status.get("reason") or "")
                msg = truncate(msg + ": " + str(last_status.get("message") or ""))
        self._event(job, "Warning", reason, msg)
        if not status.get("completionTime"):
            status["completionTime"] = now
        set_condition(status, new_condition("Failed", "True", reason, msg, now))
        self.cluster.mpi_operator_metrics.failed += 1

    def _write_status(self, job: Obj, status: Obj) -> None:
        def write(obj: Obj) -> bool | None:
            if obj.get("status") == status:
                return False
            obj["status"] = copy.deepcopy(status)
            return None
        self.store.mutate(self.mpijobs, job["metadata"]["namespace"], job["metadata"]["name"],
                          write)


def controller_of(obj: Obj | None) -> Obj | None:
    for ref in (obj or {}).get("metadata", {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def pod_phase(pod: Obj) -> str:
    return (pod.get("status") or {}).get("phase") or ""


def finished(status: Obj) -> bool:
    return is_true(status, "Succeeded") or is_true(status, "Failed")


def job_condition_true(job: Obj, ctype: str) -> bool:
    return any(c.get("type") == ctype and c.get("status") == "True"
               for c in (job.get("status") or {}).get("conditions") or [])


def job_finished(job: Obj) -> bool:
    return job_condition_true(job, "Complete") or job_condition_true(job, "Failed")


def count_ready(pods: list[Obj]) -> int:
    return sum(1 for p in pods if any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (p.get("status") or {}).get("conditions") or []))

