"""The JobSet controller (kubernetes-sigs/jobset, `jobset.x-k8s.io/v1alpha2`).

One reconcile is one upstream `Reconcile`, in its order:

1. read the JobSet, apply the webhook's defaults in memory (jobset_objects); skip it while
   it is being deleted or when `spec.managedBy` names another controller;
2. list its Jobs and sort them (jobset_status.classify): those labelled with an earlier
   `restart-attempt` belong to a previous run; compute `replicatedJobsStatus`;
3. a finished JobSet (Completed or Failed) only deletes its active Jobs and, with
   `ttlSecondsAfterFinished`, deletes itself that long after it finished;
4. delete the previous run's Jobs; a failed Job runs the failure policy (Failed, or a
   restart: `status.restarts` + 1, and the next sync recreates every Job); enough
   successful Jobs (successPolicy All/Any over targetReplicatedJobs) make it Completed;
5. the headless Service (network.enableDNSHostnames), the missing Jobs, then the Jobs'
   `suspend` follows the JobSet's (`Suspended` condition, SuspendedJobs / ResumeJobs);
6. the status is written once, when it changed, and the queued events recorded.

Not modelled: startupPolicy InOrder (Jobs start in any order), dependsOn, the RecreateJob
failure action (it restarts the whole JobSet), in-place restarts, volumeClaimPolicies,
coordinator pods' readiness, exclusive placement.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterable
from typing import Any

from simcluster import behaviour, errors, timestamps
from simcluster.apiserver.store import Change
from simcluster.controllers.base import Controller, Key
from simcluster.controllers.conditions import int_or, is_controlled_by, service_account
from simcluster.controllers.jobset import objects
from simcluster.controllers.jobset import status as jstatus

log = logging.getLogger("simcluster.jobset-controller")

Obj = dict[str, Any]

COMPONENT = "jobset"
JOB_CREATION_FAILED = "JobCreationFailed"
SERVICE_CREATION_FAILED = "HeadlessServiceCreationFailed"
RETRY_SECONDS = 5.0


class JobSetController(Controller):
    name = "jobset-controller"

    def __init__(self, cluster: Any) -> None:
        super().__init__(cluster)
        self.user = service_account("jobset-system", "jobset-controller-manager")
        self.jobsets = cluster.rt("jobsets", "jobset.x-k8s.io")
        self.jobs = cluster.rt("jobs", "batch")
        self.services = cluster.rt("services", "")
        self._finished_at: dict[str, float] = {}  # precise clock reading per JobSet uid

    def watches(self) -> Iterable[tuple[str, Any]]:
        yield "jobset.x-k8s.io/jobsets", self._jobset
        yield "batch/jobs", self.owner_key("JobSet")
        yield "/services", self.owner_key("JobSet")

    def _jobset(self, change: Change) -> Iterable[Key]:
        if change.type == "DELETED":
            self._finished_at.pop(change.obj["metadata"].get("uid", ""), None)
            return
        yield from self.own_key(change)

    def _event(self, js: Obj, type_: str, reason: str, message: str) -> None:
        self.events.record(js, type_, reason, message, COMPONENT)

    # -- the sync ---------------------------------------------------------------------------------
    def reconcile(self, key: Key) -> float | None:
        stored = self.store.get_raw(self.jobsets, *key)
        if stored is None or stored["metadata"].get("deletionTimestamp"):
            return None
        js = objects.apply_defaults(stored)
        if objects.managed_externally(js) is not None:
            return None
        status: Obj = copy.deepcopy(js.get("status") or {})
        old = copy.deepcopy(status)
        js["status"] = status
        events: list[jstatus.Event] = []
        if not old:
            for reason, message in behaviour.annotation_warnings(js):
                events.append(("Warning", reason, message))
        now = self.clock.timestamp()
        children = jstatus.classify(js, self._child_jobs(js))
        status["replicatedJobsStatus"] = jstatus.replicated_jobs_status(js, children)
        requeue: float | None = None

        if jstatus.finished(status):
            self._delete_jobs(children.active)
            requeue = self._ttl(js, status)
        else:
            self._delete_jobs(children.previous)
            if children.failed:
                events += jstatus.execute_failure_policy(js, status, children, now)
            elif children.successful and jstatus.success_reached(js, children):
                events += jstatus.complete(status, now)
            else:
                requeue = self._run(js, status, children, now, events)
            if jstatus.finished(status):
                self._finished_at[js["metadata"]["uid"]] = self.clock.now()
                self._delete_jobs(children.active)
                requeue = self._ttl(js, status)

        if status != old:
            self.write_status(self.jobsets, js, status)
        for type_, reason, message in events:
            self._event(js, type_, reason, message)
        return requeue

    def _run(self, js: Obj, status: Obj, children: jstatus.ChildJobs, now: str,
             events: list[jstatus.Event]) -> float | None:
        """Headless Service, missing Jobs, and suspension; a nominal retry delay when a
        create failed."""
        failed = False
        if objects.dns_hostnames(js):
            failed |= not self._ensure_service(js)
        failed |= not self._create_jobs(js, children)
        if js["spec"].get("suspend"):
            for job in children.active:
                if not (job.get("spec") or {}).get("suspend"):
                    self._set_suspend(job, None)
            events += jstatus.set_condition(status, "Suspended", "True", *jstatus.SUSPENDED,
                                            now, "Normal")
        else:
            rjobs = {r["name"]: r for r in js["spec"]["replicatedJobs"]}
            for job in children.active:
                rjob = rjobs.get((job["metadata"].get("labels") or {}).get(
                    objects.REPLICATED_JOB_NAME, ""))
                if (job.get("spec") or {}).get("suspend") and rjob is not None:
                    self._set_suspend(job, rjob)
            events += jstatus.set_condition(status, "Suspended", "False", *jstatus.RESUMED,
                                            now, "Normal")
        return RETRY_SECONDS if failed else None

    # -- child objects -----------------------------------------------------------------------------
    def _child_jobs(self, js: Obj) -> list[Obj]:
        out = []
        for rt, ns, name in self.cluster.gc.dependents(js["metadata"]["uid"]):
            job = self.store.get_raw(self.jobs, ns, name) if rt is self.jobs else None
            if job is not None and is_controlled_by(job, js):
                out.append(job)
        return out

    def _ensure_service(self, js: Obj) -> bool:
        want = objects.headless_service(js)
        if self.store.get_raw(self.services, js["metadata"]["namespace"],
                              want["metadata"]["name"]) is not None:
            return True
        try:
            self.cluster.create_as(self.user, want)
        except errors.ApiError as e:
            self._event(js, "Warning", SERVICE_CREATION_FAILED, e.message)
            return False
        return True

    def _create_jobs(self, js: Obj, children: jstatus.ChildJobs) -> bool:
        existing = children.names()
        ns = js["metadata"]["namespace"]
        ok = True
        for rjob in js["spec"]["replicatedJobs"]:
            for index in range(min(rjob["replicas"], behaviour.MAX_REPLICAS)):
                name = objects.job_name(js, rjob["name"], index)
                if name in existing:
                    continue
                if self.store.get_raw(self.jobs, ns, name) is not None:
                    # someone else's Job of that name (upstream leaves it so too): the create
                    # would fail with AlreadyExists
                    self._event(js, "Warning", JOB_CREATION_FAILED,
                                f'job "{name}" creation failed with error: jobs.batch '
                                f'"{name}" already exists')
                    ok = False
                    continue
                try:
                    self.cluster.create_as(self.user, objects.job(js, rjob, index))
                except errors.ApiError as e:
                    self._event(js, "Warning", JOB_CREATION_FAILED,
                                f'job "{name}" creation failed with error: {e.message}')
                    ok = False
        return ok

    def _set_suspend(self, job: Obj, resume_from: Obj | None) -> None:
        """Suspend a Job (resume_from None) or resume it with the replicatedJob's template
        merged in (resumeJob)."""
        def change(j: Obj) -> None:
            if resume_from is None:
                j.setdefault("spec", {})["suspend"] = True
            else:
                objects.merge_template_on_resume(j, resume_from)
        meta = job["metadata"]
        self.store.mutate(self.jobs, meta["namespace"], meta["name"], change)

    def _delete_jobs(self, jobs: list[Obj]) -> None:
        for job in jobs:
            meta = job["metadata"]
            if meta.get("deletionTimestamp"):
                continue
            try:
                self.cluster.deleter.delete(self.jobs, meta["namespace"], meta["name"], None,
                                            "Foreground")
            except errors.ApiError as e:
                if e.code != 404:
                    log.info("deleting job %s/%s: %s", meta["namespace"], meta["name"],
                             e.message)

    # -- ttlSecondsAfterFinished ------------------------------------------------------------------
    def _ttl(self, js: Obj, status: Obj) -> float | None:
        ttl = int_or(js["spec"].get("ttlSecondsAfterFinished"), None)
        if ttl is None:
            return None
        meta = js["metadata"]
        finished = self._finished_at.get(meta["uid"]) or timestamps.seconds(
            (jstatus.finished(status) or {}).get("lastTransitionTime"))
        if finished is None:
            return None
        left = self.expire(self.jobsets, js, finished, ttl, "Foreground")
        if left is None:
            self._finished_at.pop(meta["uid"], None)
        return left
