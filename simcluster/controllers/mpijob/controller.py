"""The Kubeflow MPI Operator (kubeflow.org/v2beta1 MPIJob), as v0.8.2's syncHandler runs.

One reconcile is one `syncHandler` call, in the upstream order:

1. read the MPIJob, apply the in-memory defaults;
2. skip it silently when `runPolicy.managedBy` names another controller (the research
   notes are more precise than BEHAVIOR.md here: this happens *before* validation, so
   such a job gets neither a ValidationError nor any status);
3. skip it while it is being deleted;
4. validate; errors give one Warning `ValidationError` event and no requeue;
5. first sync: `Created` condition and `MPIJobCreated` event (in memory, persisted
   with the status at the end of a successful sync);
6. a finished job with a completionTime only gets its worker pods cleaned up
   (cleanPodPolicy All/Running);
7. startTime; 8. the launcher Job (ErrResourceExists if someone else owns the name);
9. unless the launcher finished: Service, ConfigMap, Secret, worker pods (not while
   suspended), then the launcher Job (at once, or when every worker is Ready);
10. the launcher Job's `suspend` follows the MPIJob's; 11. suspended jobs lose their
    worker pods; 12. status, written only when it changed.

A sync that fails part-way (a quota refusal of a worker pod, say) returns before the
status is written, exactly as upstream: it is retried with the workqueue's exponential
back-off (5 ms doubling, at most 1000 s, nominal), and each retry repeats its events, which
the event recorder folds into growing counts.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterable
from typing import Any

from simcluster import behaviour, errors
from simcluster.apiserver.store import Change
from simcluster.backoff import exponential
from simcluster.controllers.base import Controller, Key
from simcluster.controllers.conditions import (
    is_controlled_by,
    new_condition,
    service_account,
    set_condition,
)
from simcluster.controllers.mpijob import objects
from simcluster.controllers.mpijob.status import (
    MPIJobStatus,
    controller_of,
    count_ready,
    finished,
    job_finished,
)
from simcluster.controllers.mpijob.validation import (
    apply_defaults,
    managed_externally,
    validate,
    validation_event_message,
)

log = logging.getLogger("simcluster.mpi-operator")

Obj = dict[str, Any]

COMPONENT = "mpi-job-controller"
MPIJOB_API_VERSION = "kubeflow.org/v2beta1"
RESOURCE_EXISTS = 'Resource "{}" of Kind "" already exists and is not managed by MPIJob'
# Worker pods created per sync at most; a sync that has more to create writes the status
# and comes back after BATCH_REQUEUE nominal seconds, so the event loop serves requests
# in between (the real operator is paced by its API client's rate limit).
WORKER_BATCH = 100
BATCH_REQUEUE = 0.01


class SyncError(Exception):
    """The sync stopped part-way; the key is retried with back-off."""


class MPIJobController(MPIJobStatus, Controller):
    name = "mpi-operator"

    def __init__(self, cluster: Any) -> None:
        super().__init__(cluster)
        self.user = service_account("mpi-operator", "mpi-operator")
        self.mpijobs = cluster.rt("mpijobs", "kubeflow.org")
        self.pods = cluster.rt("pods", "")
        self.jobs = cluster.rt("jobs", "batch")
        self.services = cluster.rt("services", "")
        self.configmaps = cluster.rt("configmaps", "")
        self.secrets = cluster.rt("secrets", "")
        self._retries: dict[Key, int] = {}

    # -- routing ---------------------------------------------------------------------------------
    def watches(self) -> Iterable[tuple[str, Any]]:
        yield "kubeflow.org/mpijobs", self.own_key
        for path in ("/pods", "batch/jobs", "/services", "/configmaps", "/secrets"):
            yield path, self._owning_mpijob

    def _owning_mpijob(self, change: Change) -> Iterable[Key]:
        meta = change.obj["metadata"]
        ns = meta.get("namespace", "")
        ref = controller_of(change.obj)
        if ref and ref.get("kind") == "Job" and str(ref.get("apiVersion", "")).startswith(
                "batch/"):
            owner = self.store.get_raw(self.jobs, ns, ref.get("name", ""))
            ref = controller_of(owner) if owner else None
        if ref and ref.get("kind") == "MPIJob" and ref.get("apiVersion") == MPIJOB_API_VERSION:
            yield (ns, ref["name"])

    # -- the sync ---------------------------------------------------------------------------------
    def reconcile(self, key: Key) -> float | None:
        try:
            requeue = self.sync(key)
        except SyncError as e:
            n = self._retries.get(key, 0) + 1
            self._retries[key] = n
            # the first failure of a run of them is news; its retries (with back-off) are not
            (log.info if n == 1 else log.debug)("error syncing %s/%s: %s", key[0], key[1], e)
            return exponential(0.005, n - 1, 1000.0)
        self._retries.pop(key, None)
        return requeue

    def sync(self, key: Key) -> float | None:
        ns, name = key
        stored = self.store.get_raw(self.mpijobs, ns, name)
        if stored is None:
            self._retries.pop(key, None)
            return
        job = apply_defaults(stored)
        if managed_externally(job) is not None:
            return
        if job["metadata"].get("deletionTimestamp"):
            return
        problems = validate(job)
        if problems:
            self._event(job, "Warning", "ValidationError", validation_event_message(problems))
            return
        status: Obj = copy.deepcopy(job.get("status") or {})
        job["status"] = status
        now = self.clock.timestamp()
        if not status.get("conditions"):
            msg = f"MPIJob {ns}/{name} is created."
            set_condition(status, new_condition("Created", "True", "MPIJobCreated", msg, now))
            self._event(job, "Normal", "MPIJobCreated", msg)
            self.cluster.mpi_operator_metrics.created += 1
            self._simulation_warnings(job)

        policy = job["spec"]["runPolicy"]
        if finished(status) and status.get("completionTime"):
            if policy["cleanPodPolicy"] in ("All", "Running"):
                self._clean_up_workers(job)
                self._write_status(job, status)
            return

        suspended = bool(policy.get("suspend"))
        if not status.get("startTime") and not suspended:
            status["startTime"] = now

        launcher = self._launcher(job)
        workers: list[Obj] = []
        done = launcher is not None and job_finished(launcher)
        if not done:
            labelled = self._worker_pods(job)
            self._get_or_create_service(job)
            self._get_or_create_config_map(job, labelled)
            self._get_or_create_secret(job)
            if not suspended:
                workers, complete = self._get_or_create_workers(job, labelled)
                if not complete:  # more workers to create: persist Created, come back
                    self._write_status(job, status)
                    return BATCH_REQUEUE
            if launcher is None and (job["spec"]["launcherCreationPolicy"] == "AtStartup"
                                     or count_ready(workers) == len(workers)):
                launcher = self._create_launcher(job)

        if launcher is not None and suspended != bool((launcher.get("spec") or {}).get(
                "suspend")):
            launcher = self._align_suspend(job, launcher, suspended)

        if suspended:
            self._clean_up_workers(job)
        self._update_status(job, status, launcher, workers)

        return None

    # -- owned objects ----------------------------------------------------------------------------
    def _event(self, job: Obj, type_: str, reason: str, message: str) -> None:
        self.events.record(job, type_, reason, message, COMPONENT)

    def _simulation_warnings(self, job: Obj) -> None:
        """What the job asks of simcluster that it does not do as written (not upstream)."""
        for reason, message in behaviour.annotation_warnings(job):
            self._event(job, "Warning", reason, message)
        requested = objects.requested_workers(job)
        if requested > behaviour.MAX_REPLICAS:
            self._event(job, "Warning", "SimclusterReplicaLimit",
                        behaviour.replicas_warning("MPIJob", "Worker", requested))

    def _not_ours(self, job: Obj, name: str) -> SyncError:
        msg = RESOURCE_EXISTS.format(name)
        self._event(job, "Warning", "ErrResourceExists", msg)
        return SyncError(msg)

    def _create(self, obj: Obj) -> Obj:
        try:
            return self.cluster.create_as(self.user, obj)
        except errors.ApiError as e:
            raise SyncError(e.message) from None

    def _launcher(self, job: Obj) -> Obj | None:
        name = f"{job['metadata']['name']}-launcher"
        launcher = self.store.get_raw(self.jobs, job["metadata"]["namespace"], name)
        if launcher is not None and not is_controlled_by(launcher, job):
            raise self._not_ours(job, name)
        return launcher

    def _get_or_create_service(self, job: Obj) -> None:
        want = objects.service(job)
        ns, name = job["metadata"]["namespace"], want["metadata"]["name"]
        svc = self.store.get_raw(self.services, ns, name)
        if svc is None:
            self._create(want)
            return
        if not is_controlled_by(svc, job):
            raise self._not_ours(job, name)
        if (svc.get("spec") or {}).get("selector") != want["spec"]["selector"]:
            def fix(s: Obj) -> None:
                s.setdefault("spec", {})["selector"] = want["spec"]["selector"]
            self.store.mutate(self.services, ns, name, fix)

    def _worker_pods(self, job: Obj) -> list[Obj]:
        """Pods carrying the worker labels of this job (the operator's worker selector)."""
        wanted = objects.default_labels(job["metadata"]["name"], "worker")
        out = []
        for rt, ns, name in self.cluster.gc.dependents(job["metadata"]["uid"]):
            if rt is not self.pods:
                continue
            pod = self.store.get_raw(self.pods, ns, name)
            labels = (pod or {}).get("metadata", {}).get("labels") or {}
            if pod is not None and all(labels.get(k) == v for k, v in wanted.items()):
                out.append(pod)
        return out

    def _get_or_create_config_map(self, job: Obj, labelled: list[Obj]) -> None:
        running = [p["metadata"]["name"] for p in labelled
                   if (p.get("status") or {}).get("phase") == "Running"]
        want = objects.config_map(job, running)
        ns, name = job["metadata"]["namespace"], want["metadata"]["name"]
        cm = self.store.get_raw(self.configmaps, ns, name)
        if cm is None:
            self._create(want)
            return
        if not is_controlled_by(cm, job):
            raise self._not_ours(job, name)
        if cm.get("data") != want["data"]:
            def fix(c: Obj) -> None:
                c["data"] = want["data"]
            self.store.mutate(self.configmaps, ns, name, fix)

    def _get_or_create_secret(self, job: Obj) -> None:
        ns, name = job["metadata"]["namespace"], f"{job['metadata']['name']}-ssh"
        secret = self.store.get_raw(self.secrets, ns, name)
        if secret is None:
            self._create(objects.ssh_secret(job))
            return
        if not is_controlled_by(secret, job):
            raise self._not_ours(job, name)
        if sorted(secret.get("data") or {}) != ["ssh-privatekey", "ssh-publickey"]:
            fresh = objects.ssh_secret(job)

            def fix(s: Obj) -> None:
                s["data"] = fresh["data"]
            self.store.mutate(self.secrets, ns, name, fix)

    def _get_or_create_workers(self, job: Obj, labelled: list[Obj]) -> tuple[list[Obj], bool]:
        """The worker pods, creating missing ones (at most WORKER_BATCH); False when some
        are still to be created."""
        if objects.replica_spec(job, "Worker") is None:
            return [], True
        ns = job["metadata"]["namespace"]
        replicas = objects.worker_replicas(job)
        budget = WORKER_BATCH
        if len(labelled) > replicas:  # scaled down
            for pod in labelled:
                index = (pod["metadata"].get("labels") or {}).get(objects.REPLICA_INDEX_LABEL)
                if index is not None and index.isdigit() and int(index) >= replicas:
                    self._delete_pod(ns, pod["metadata"]["name"])
        workers = []
        for i in range(replicas):
            name = objects.worker_name(job, i)
            pod = self.store.get_raw(self.pods, ns, name)
            if pod is None:
                if budget == 0:
                    return workers, False
                budget -= 1
                try:
                    pod = self.cluster.create_as(self.user, objects.worker_pod(job, i))
                except errors.ApiError as e:
                    self._event(job, "Warning", "MPIJobFailed",
                                f"worker pod created failed: {e.message}")
                    raise SyncError(e.message) from None
            if not is_controlled_by(pod, job):
                raise self._not_ours(job, name)
            workers.append(pod)
        return workers, True

    def _create_launcher(self, job: Obj) -> Obj:
        template, restart_in_template = objects.launcher_template(job)
        if restart_in_template:
            self._event(job, "Warning", "SetPodTemplateRestartPolicy",
                        objects.RESTART_POLICY_MESSAGE)
        try:
            return self.cluster.create_as(self.user, objects.launcher_job(job, template))
        except errors.ApiError as e:
            self._event(job, "Warning", "MPIJobFailed", f"launcher pod created failed: {e.message}")
            raise SyncError(e.message) from None

    def _align_suspend(self, job: Obj, launcher: Obj, suspended: bool) -> Obj:
        fresh = None
        if not suspended:  # newLauncherPodTemplate again, with its warning
            fresh, restart_in_template = objects.launcher_template(job)
            if restart_in_template:
                self._event(job, "Warning", "SetPodTemplateRestartPolicy",
                            objects.RESTART_POLICY_MESSAGE)

        def align(j: Obj) -> None:
            spec = j.setdefault("spec", {})
            spec["suspend"] = suspended
            if fresh is not None:
                # v0.8.2 carries scheduling directives into a resumed launcher.
                tmpl = spec.setdefault("template", {})
                tmeta = tmpl.setdefault("metadata", {})
                for k in ("labels", "annotations"):
                    if fresh["metadata"].get(k):
                        tmeta[k] = {**(tmeta.get(k) or {}), **fresh["metadata"][k]}
                tspec = tmpl.setdefault("spec", {})
                for k in ("nodeSelector", "tolerations", "schedulingGates"):
                    if k in fresh["spec"]:
                        tspec[k] = fresh["spec"][k]
                    else:
                        tspec.pop(k, None)
        ns = job["metadata"]["namespace"]
        return self.store.mutate(self.jobs, ns, launcher["metadata"]["name"], align) or launcher

    def _delete_pod(self, ns: str, name: str) -> None:
        try:
            self.cluster.deleter.delete(self.pods, ns, name, None)
        except errors.ApiError as e:
            if e.code != 404:
                raise SyncError(e.message) from None

    def _clean_up_workers(self, job: Obj) -> None:
        ns = job["metadata"]["namespace"]
        if objects.replica_spec(job, "Worker") is not None:
            running_only = job["spec"]["runPolicy"]["cleanPodPolicy"] == "Running"
            for i in range(objects.worker_replicas(job)):
                name = objects.worker_name(job, i)
                pod = self.store.get_raw(self.pods, ns, name)
                if pod is None:
                    continue
                if not is_controlled_by(pod, job):
                    raise self._not_ours(job, name)
                phase = (pod.get("status") or {}).get("phase")
                if running_only and phase not in ("Running", "Pending"):
                    continue
                self._delete_pod(ns, name)
        job["status"].setdefault("replicaStatuses", {})["Worker"] = {}
