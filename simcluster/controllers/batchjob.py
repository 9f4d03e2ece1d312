"""The Kubernetes batch/v1 Job controller (as in 1.31), enough for the MPI launcher Job
and a JobSet's Jobs (Indexed ones: batchjob_indexed).

Pods are created from the template as `<job>-<random5>` with the job-tracking finalizer
`batch.kubernetes.io/job-tracking`. As upstream, the controller removes that finalizer once
it has counted the finished pod. simcluster's API machinery does not hold objects back for
finalizers, so a pod deleted before it was counted (the kubelet finishing a deletion, an
eviction) is counted from its last state when the deletion is seen, which gives the same
numbers. `status.uncountedTerminatedPods` is therefore always `{}`: pods are counted in
the same sync that sees them finish.

Terminal conditions follow 1.31: first the interim `SuccessCriteriaMet` / `FailureTarget`,
then, once no pod is terminating, `Complete` (with completionTime and a `Completed` event)
or `Failed` (no completionTime, a Warning event with the condition's reason).
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterable
from typing import Any

from simcluster import errors, timestamps
from simcluster.apiserver.store import Change
from simcluster.backoff import exponential
from simcluster.controllers import batchjob_indexed as indexes
from simcluster.controllers.base import Controller, Key
from simcluster.controllers.conditions import (
    controller_ref,
    int_or,
    is_controlled_by,
    service_account,
)

log = logging.getLogger("simcluster.job-controller")

Obj = dict[str, Any]

COMPONENT = "job-controller"
TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
BACKOFF_BASE = 10.0
BACKOFF_MAX = 600.0
BACKOFF_LIMIT_REASON = "BackoffLimitExceeded"
BACKOFF_LIMIT_MESSAGE = "Job has reached the specified backoff limit"
DEADLINE_REASON = "DeadlineExceeded"
DEADLINE_MESSAGE = "Job was active longer than specified deadline"


def _phase(pod: Obj) -> str:
    return (pod.get("status") or {}).get("phase") or ""


def _terminal(pod: Obj) -> bool:
    return _phase(pod) in ("Succeeded", "Failed")


def _condition(job_status: Obj, ctype: str) -> Obj | None:
    for c in job_status.get("conditions") or []:
        if c.get("type") == ctype and c.get("status") == "True":
            return c
    return None


class JobController(Controller):
    name = "job-controller"

    def __init__(self, cluster: Any) -> None:
        super().__init__(cluster)
        self.user = service_account("kube-system", "job-controller")
        self.jobs = cluster.rt("jobs", "batch")
        self.pods = cluster.rt("pods", "")
        # per Job uid: pods seen deleted while still uncounted, pods deleted without counting
        # (suspension), and the failure back-off record.
        self._tombstones: dict[str, list[Obj]] = {}
        self._not_counted: set[str] = set()
        self._failures: dict[str, tuple[int, float]] = {}
        # precise clock readings (timestamps keep whole seconds only, coarse at high speed)
        self._started: dict[str, float] = {}
        self._finished: dict[str, float] = {}

    def watches(self) -> Iterable[tuple[str, Any]]:
        yield "batch/jobs", self._job
        yield "/pods", self._pod_owner

    def _job(self, change: Change) -> Iterable[Key]:
        meta = change.obj["metadata"]
        if change.type == "DELETED":
            for memo in (self._failures, self._started, self._finished, self._tombstones):
                memo.pop(meta.get("uid", ""), None)
            return
        yield (meta.get("namespace", ""), meta["name"])

    def _pod_owner(self, change: Change) -> Iterable[Key]:
        meta = change.obj["metadata"]
        for ref in meta.get("ownerReferences") or []:
            if ref.get("controller") and ref.get("kind") == "Job" and \
                    str(ref.get("apiVersion", "")).startswith("batch/"):
                if change.type == "DELETED" and \
                        TRACKING_FINALIZER in (meta.get("finalizers") or []):
                    self._tombstones.setdefault(ref.get("uid", ""), []).append(change.obj)
                yield (meta.get("namespace", ""), ref.get("name", ""))

    # -- helpers ---------------------------------------------------------------------------------
    def _event(self, job: Obj, type_: str, reason: str, message: str) -> None:
        self.events.record(job, type_, reason, message, COMPONENT)

    def _pods_of(self, job: Obj) -> list[Obj]:
        out = []
        for rt, ns, name in self.cluster.gc.dependents(job["metadata"]["uid"]):
            pod = self.store.get_raw(self.pods, ns, name) if rt is self.pods else None
            if pod is not None and is_controlled_by(pod, job):
                out.append(pod)
        return out

    def _condition(self, ctype: str, reason: str, message: str) -> Obj:
        now = self.clock.timestamp()
        c: Obj = {"type": ctype, "status": "True", "lastProbeTime": now,
                  "lastTransitionTime": now}
        if reason:
            c["reason"] = reason
        if message:
            c["message"] = message
        return c

    def _delete(self, job: Obj, pod: Obj, count: bool) -> None:
        meta = pod["metadata"]
        if meta.get("deletionTimestamp"):
            return
        if not count:
            self._not_counted.add(meta["uid"])
        try:
            self.cluster.deleter.delete(self.pods, meta["namespace"], meta["name"], None)
        except errors.ApiError:
            return
        self._event(job, "Normal", "SuccessfulDelete", f"Deleted pod: {meta['name']}")

    # -- the sync ---------------------------------------------------------------------------------
    def reconcile(self, key: Key) -> float | None:
        job = self.store.get_raw(self.jobs, *key)
        if job is None:
            return None
        uid = job["metadata"]["uid"]
        if job["metadata"].get("deletionTimestamp"):
            return None
        status: Obj = copy.deepcopy(job.get("status") or {})
        old = copy.deepcopy(status)
        requeue: list[float] = []
        if _condition(status, "Complete") or _condition(status, "Failed"):
            self._remove_finalizers(job, self._pods_of(job))
            self._tombstones.pop(uid, None)
            return self._ttl(job, status)

        spec = job.get("spec") or {}
        pods = self._pods_of(job)
        self._count_finished(job, status, pods)
        pods = [p for p in pods if not _terminal(p)]
        now = self.clock.now()
        suspended = bool(spec.get("suspend"))
        self._suspension(job, status, suspended)
        if not suspended and not status.get("startTime"):
            status["startTime"] = self.clock.timestamp()
            self._started[uid] = self.clock.now()

        active = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
        failure_target = _condition(status, "FailureTarget")
        success = _condition(status, "SuccessCriteriaMet")
        completions = int_or(spec.get("completions"), 1) or 1
        if not failure_target and not success and not suspended:
            failure_target = self._check_failure(job, status, active, now, requeue)
        if not failure_target and not success and \
                int(status.get("succeeded") or 0) >= completions:
            success = self._condition("SuccessCriteriaMet", "", "")
            status.setdefault("conditions", []).append(success)

        if failure_target or success or suspended:
            # pods removed by a failure count as failed; by success or suspension they do not
            for pod in active:
                self._delete(job, pod, count=bool(failure_target) and not suspended)
            active = []
            self._count_finished(job, status, [])  # pods that were deleted at once
        else:
            active = self._manage(job, status, active, completions, now, requeue)

        terminating_now = [p for p in self._pods_of(job)
                           if p["metadata"].get("deletionTimestamp") and not _terminal(p)]
        if not terminating_now:
            if failure_target:
                reason = failure_target.get("reason", "")
                message = failure_target.get("message", "")
                status.setdefault("conditions", []).append(
                    self._condition("Failed", reason, message))
                self._event(job, "Warning", reason, message)
                self._finished[uid] = self.clock.now()
            elif success:
                status.setdefault("conditions", []).append(self._condition("Complete", "", ""))
                status["completionTime"] = self.clock.timestamp()
                self._event(job, "Normal", "Completed", "Job completed")
                self._finished[uid] = self.clock.now()

        status["active"] = len(active)
        status["ready"] = sum(1 for p in active if _ready(p))
        status["terminating"] = len(terminating_now)
        status["uncountedTerminatedPods"] = {}
        for k in ("active", "succeeded", "failed"):
            if not status.get(k):
                status.pop(k, None)
        if status != old:
            self.write_status(self.jobs, job, status)
        if _condition(status, "Complete") or _condition(status, "Failed"):
            ttl = self._ttl(job, status)
            if ttl is not None:
                requeue.append(ttl)
        return min(requeue) if requeue else None

    def _remove_finalizers(self, job: Obj, pods: list[Obj]) -> None:
        for pod in pods:
            if TRACKING_FINALIZER in (pod["metadata"].get("finalizers") or []) and \
                    (_terminal(pod) or pod["metadata"].get("deletionTimestamp")):
                self._drop_finalizer(pod)

    def _drop_finalizer(self, pod: Obj) -> None:
        def drop(p: Obj) -> None:
            rest = [f for f in p["metadata"].get("finalizers") or [] if f != TRACKING_FINALIZER]
            if rest:
                p["metadata"]["finalizers"] = rest
            else:
                p["metadata"].pop("finalizers", None)
        self.store.mutate(self.pods, pod["metadata"]["namespace"], pod["metadata"]["name"], drop)

    def _count_finished(self, job: Obj, status: Obj, pods: list[Obj]) -> None:
        uid = job["metadata"]["uid"]
        finished = [p for p in pods if _terminal(p)
                    and TRACKING_FINALIZER in (p["metadata"].get("finalizers") or [])]
        gone = self._tombstones.pop(uid, [])
        for pod in finished + gone:
            pod_uid = pod["metadata"].get("uid", "")
            if pod_uid in self._not_counted:  # removed by suspension: not a failure
                self._not_counted.discard(pod_uid)
                if pod in finished:
                    self._drop_finalizer(pod)
                continue
            if _phase(pod) == "Succeeded":
                if indexes.mark_completed(job, status, pod):
                    status["succeeded"] = int(status.get("succeeded") or 0) + 1
                self._failures.pop(uid, None)
            else:
                status["failed"] = int(status.get("failed") or 0) + 1
                count, _ = self._failures.get(uid, (0, 0.0))
                self._failures[uid] = (count + 1, self.clock.now())
            if pod in finished:
                self._drop_finalizer(pod)

    def _suspension(self, job: Obj, status: Obj, suspended: bool) -> None:
        conditions = status.setdefault("conditions", [])
        current = next((c for c in conditions if c.get("type") == "Suspended"), None)
        now = self.clock.timestamp()
        if suspended and (current is None or current.get("status") != "True"):
            if current is None:
                conditions.append(self._condition("Suspended", "JobSuspended", "Job suspended"))
            else:
                current.update(status="True", reason="JobSuspended", message="Job suspended",
                               lastProbeTime=now, lastTransitionTime=now)
            self._event(job, "Normal", "Suspended", "Job suspended")
        elif not suspended and current is not None and current.get("status") == "True":
            current.update(status="False", reason="JobResumed", message="Job resumed",
                           lastProbeTime=now, lastTransitionTime=now)
            status["startTime"] = now
            self._started[job["metadata"]["uid"]] = self.clock.now()
            self._event(job, "Normal", "Resumed", "Job resumed")
        if not conditions:
            status.pop("conditions")

    def _check_failure(self, job: Obj, status: Obj, active: list[Obj], now: float,
                       requeue: list[float]) -> Obj | None:
        spec = job.get("spec") or {}
        limit = int_or(spec.get("backoffLimit"), 6)
        assert limit is not None
        failed = int(status.get("failed") or 0)
        restart = ((spec.get("template") or {}).get("spec") or {}).get("restartPolicy")
        past_on_failure = False
        if restart == "OnFailure":
            restarts = sum(int(cs.get("restartCount") or 0)
                           for p in active if _phase(p) in ("Running", "Pending")
                           for cs in ((p.get("status") or {}).get("containerStatuses") or [])
                           + ((p.get("status") or {}).get("initContainerStatuses") or []))
            past_on_failure = restarts > 0 if limit == 0 else restarts >= limit
        target = None
        if failed > limit or past_on_failure:
            target = self._condition("FailureTarget", BACKOFF_LIMIT_REASON, BACKOFF_LIMIT_MESSAGE)
        else:
            deadline = int_or(spec.get("activeDeadlineSeconds"), None)
            uid = job["metadata"]["uid"]
            started = self._started.get(uid) or timestamps.seconds(status.get("startTime"))
            if deadline is not None and started is not None:
                remaining = started + self.clock.real_delay(deadline) - now
                if remaining <= 0:
                    target = self._condition("FailureTarget", DEADLINE_REASON, DEADLINE_MESSAGE)
                else:
                    requeue.append(remaining * self.clock.speed)
        if target is not None:
            status.setdefault("conditions", []).append(target)
        return target

    def _manage(self, job: Obj, status: Obj, active: list[Obj], completions: int, now: float,
                requeue: list[float]) -> list[Obj]:
        spec = job.get("spec") or {}
        parallelism = int_or(spec.get("parallelism"), 1)
        assert parallelism is not None
        wanted = max(0, min(parallelism, completions - int(status.get("succeeded") or 0)))
        if len(active) > wanted:
            for pod in sorted(active, key=lambda p: p["metadata"].get("creationTimestamp", ""),
                              reverse=True)[:len(active) - wanted]:
                self._delete(job, pod, count=False)
            return active[:wanted]
        if len(active) == wanted:
            return active
        failures, last = self._failures.get(job["metadata"]["uid"], (0, 0.0))
        if failures:
            delay = exponential(BACKOFF_BASE, failures - 1, BACKOFF_MAX)
            # delays are nominal seconds; clock.now() runs at the speed factor
            remaining = last + self.clock.real_delay(delay) - now
            if remaining > 0:
                requeue.append(remaining * self.clock.speed)
                return active
        created = list(active)
        for index in indexes.free_indexes(job, status, active, completions,
                                          wanted - len(active)):
            pod = self._create_pod(job, index)
            if pod is None:
                requeue.append(BACKOFF_BASE)
                break
            created.append(pod)
        return created

    def _create_pod(self, job: Obj, index: int | None = None) -> Obj | None:
        template = copy.deepcopy((job.get("spec") or {}).get("template") or {})
        tmeta = template.get("metadata") or {}
        meta: Obj = {"generateName": f"{job['metadata']['name']}-",
                     "namespace": job["metadata"]["namespace"],
                     "labels": dict(tmeta.get("labels") or {}),
                     "finalizers": [TRACKING_FINALIZER],
                     "ownerReferences": [controller_ref(job)]}
        if tmeta.get("annotations"):
            meta["annotations"] = dict(tmeta["annotations"])
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
               "spec": template.get("spec") or {}}
        if index is not None:
            indexes.apply_index(meta, pod["spec"], job["metadata"]["name"], index)
        try:
            created = self.cluster.create_as(self.user, pod)
        except errors.ApiError as e:
            self._event(job, "Warning", "FailedCreate", f"Error creating: {e.message}")
            return None
        self._event(job, "Normal", "SuccessfulCreate",
                    f"Created pod: {created['metadata']['name']}")
        return created

    def _ttl(self, job: Obj, status: Obj) -> float | None:
        ttl = int_or((job.get("spec") or {}).get("ttlSecondsAfterFinished"), None)
        if ttl is None:
            return None
        meta = job["metadata"]
        cond = _condition(status, "Complete") or _condition(status, "Failed") or {}
        finished = self._finished.get(meta["uid"]) or timestamps.seconds(
            cond.get("lastTransitionTime"))
        if finished is None:
            return None
        left = self.expire(self.jobs, job, finished, ttl, "Background")
        if left is None:
            for memo in (self._failures, self._started, self._finished):
                memo.pop(meta["uid"], None)
        return left


def _ready(pod: Obj) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])
